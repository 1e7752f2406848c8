// SPDX-License-Identifier: GPL-2.0
/*
 * Hardware counters: one pinned kernel perf event per CPU for cycles,
 * instructions and cache misses, read at every context switch. Where the
 * CPU has no PMU (QEMU's software emulation among them) the events cannot
 * be created and the counters are reported absent, never as zero.
 *
 * perf_event_read_local() is not exported, so the read is done the way it
 * does it: for an event active on this CPU, ask the PMU driver to fold the
 * hardware count into event->count (interrupts are off here).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/perf_event.h>

#include "tasks.h"

static const u64 hw_config[JOULES_NR_HW] = {
	PERF_COUNT_HW_CPU_CYCLES,
	PERF_COUNT_HW_INSTRUCTIONS,
	PERF_COUNT_HW_CACHE_MISSES,
};
static const u32 hw_feature[JOULES_NR_HW] = { JL_F_CYCLES, JL_F_INSTR, JL_F_MISSES };
static u32 present;	/* JL_F_* bits with an event on every online CPU */
DEFINE_STATIC_KEY_FALSE(joules_hw_on);

/* Three counter reads per switch-out: likely most of the hook's cost where a PMU exists. */
static bool hw_counters = true;
module_param(hw_counters, bool, 0444);
MODULE_PARM_DESC(hw_counters,
		 "Count cycles, instructions and cache misses per task where a PMU exists (default 1); 0: absent, and a cheaper context switch");

u32 joules_pmu_present(void)
{
	return present;
}

static bool read_event(struct perf_event *ev, u64 *val)
{
	if (!ev || READ_ONCE(ev->state) != PERF_EVENT_STATE_ACTIVE ||
	    ev->oncpu != smp_processor_id())
		return false;
	ev->pmu->read(ev);
	*val = local64_read(&ev->count);
	return true;
}

u32 joules_pmu_read(struct joules_cpu *jc, u64 *hw)
{
	u32 mask = 0;
	unsigned int i;
	u64 v;

	if (!present)
		return 0;
	for (i = 0; i < JOULES_NR_HW; i++) {
		hw[i] = 0;
		if (!read_event(jc->hw[i], &v))
			continue;
		hw[i] = v - jc->hw_last[i];
		jc->hw_last[i] = v;
		mask |= 1U << hw_feature[i];
	}
	return mask;
}

int joules_pmu_init(void)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_HARDWARE,
		.size = sizeof(attr),
		.pinned = 1,
	};
	unsigned int cpu, i;
	u32 ok = (1U << hw_feature[0]) | (1U << hw_feature[1]) | (1U << hw_feature[2]);

	if (!hw_counters) {
		pr_info("hardware counters off (hw_counters=0): cycles, instructions and cache misses are absent\n");
		return 0;
	}
	cpus_read_lock();
	for_each_online_cpu(cpu) {
		struct joules_cpu *jc = per_cpu_ptr(&joules_cpus, cpu);

		for (i = 0; i < JOULES_NR_HW; i++) {
			struct perf_event *ev;

			if (!(ok & (1U << hw_feature[i])))
				continue;
			attr.config = hw_config[i];
			ev = perf_event_create_kernel_counter(&attr, cpu, NULL, NULL, NULL);
			if (IS_ERR(ev)) {
				ok &= ~(1U << hw_feature[i]);
				continue;
			}
			jc->hw[i] = ev;
		}
	}
	cpus_read_unlock();
	/* A counter missing on any CPU is absent everywhere: no partial sums. */
	for_each_possible_cpu(cpu) {
		struct joules_cpu *jc = per_cpu_ptr(&joules_cpus, cpu);

		for (i = 0; i < JOULES_NR_HW; i++) {
			if (jc->hw[i] && !(ok & (1U << hw_feature[i]))) {
				perf_event_release_kernel(jc->hw[i]);
				jc->hw[i] = NULL;
			}
		}
	}
	present = ok;
	/* Before the hooks exist: nothing runs the code being patched. */
	if (present)
		static_branch_enable(&joules_hw_on);
	if (!present)
		pr_info("no hardware counters (no PMU): cycles, instructions and cache misses are absent\n");
	return 0;
}

void joules_pmu_exit(void)
{
	unsigned int cpu, i;

	/* The hooks are gone: no probe reads the events any more. */
	if (present)
		static_branch_disable(&joules_hw_on);
	present = 0;
	for_each_possible_cpu(cpu) {
		struct joules_cpu *jc = per_cpu_ptr(&joules_cpus, cpu);

		for (i = 0; i < JOULES_NR_HW; i++) {
			if (jc->hw[i])
				perf_event_release_kernel(jc->hw[i]);
			jc->hw[i] = NULL;
		}
	}
}
