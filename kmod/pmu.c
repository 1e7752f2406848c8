// SPDX-License-Identifier: GPL-2.0
/*
 * Hardware counters: one pinned kernel perf event per CPU for cycles,
 * instructions and cache misses, read at every context switch. Where the
 * CPU has no PMU (QEMU's software emulation among them) the events cannot
 * be created and the counters are reported absent, never as zero. A CPU
 * hotplug state creates them (and notes the CPU's package) as CPUs come
 * online and releases them as CPUs go.
 *
 * perf_event_read_local() is not exported, so the read is done the way it
 * does it: for an event active on this CPU, ask the PMU driver to fold the
 * hardware count into event->count (interrupts are off here).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/perf_event.h>

#include "core.h"
#include "pmu.h"

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

/* QEMU has no PMU: these let the counting path run there (92-pmu-partial). */
static bool test_sw_counters;
module_param(test_sw_counters, bool, 0444);
MODULE_PARM_DESC(test_sw_counters,
		 "Test only: software cpu-clock events stand in for the three hardware counters");
static int test_fail_cpu = -1;
module_param(test_fail_cpu, int, 0444);
MODULE_PARM_DESC(test_fail_cpu,
		 "Test only: the first creation of the counters on this CPU fails");
static bool test_failed;

u32 joules_pmu_present(void)
{
	return READ_ONCE(present);
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

/* Per CPU: its events, and their counts at the last read. */
struct pmu_cpu {
	struct perf_event *hw[JOULES_NR_HW];
	u64 hw_last[JOULES_NR_HW];
};
static DEFINE_PER_CPU(struct pmu_cpu, pmu_cpus);

u32 joules_pmu_read(u64 *hw)
{
	struct pmu_cpu *jc = this_cpu_ptr(&pmu_cpus);
	u32 mask = 0, have = READ_ONCE(present);
	unsigned int i;
	u64 v;

	if (!have)
		return 0;
	for (i = 0; i < JOULES_NR_HW; i++) {
		hw[i] = 0;
		if (!(have & (1U << hw_feature[i])) || !read_event(jc->hw[i], &v))
			continue;
		hw[i] = v - jc->hw_last[i];
		jc->hw_last[i] = v;
		mask |= 1U << hw_feature[i];
	}
	return mask;
}

static enum cpuhp_state hp_state;	/* 0 while registering */

/*
 * A CPU comes online (at registration: every online CPU). Runs on that
 * CPU, so its events are swapped in with interrupts off, which the
 * sched_switch probe (interrupts off too) cannot interleave with.
 */
static int pmu_cpu_online(unsigned int cpu)
{
	struct pmu_cpu *jc = per_cpu_ptr(&pmu_cpus, cpu);
	struct perf_event *ev[JOULES_NR_HW] = { NULL };
	struct perf_event_attr attr = {
		.type = PERF_TYPE_HARDWARE,
		.size = sizeof(attr),
		.pinned = 1,
	};
	u32 want = READ_ONCE(present);
	unsigned int i;

	for (i = 0; i < JOULES_NR_HW; i++) {
		if (!(want & (1U << hw_feature[i])))
			continue;
		attr.config = hw_config[i];
		if (test_sw_counters) {
			attr.type = PERF_TYPE_SOFTWARE;
			attr.config = PERF_COUNT_SW_CPU_CLOCK;
		}
		if ((int)cpu == test_fail_cpu && !test_failed)
			ev[i] = ERR_PTR(-ENODEV);
		else
			ev[i] = perf_event_create_kernel_counter(&attr, cpu, NULL, NULL, NULL);
		if (IS_ERR(ev[i])) {
			ev[i] = NULL;
			/* Missing on one CPU is absent everywhere: no partial sums. */
			want &= ~(1U << hw_feature[i]);
			if (hp_state)	/* a CPU that came later; at load: below */
				pr_info("%s counter unavailable on CPU %u: absent from now on\n",
					jl_feature_names[hw_feature[i]], cpu);
		}
	}
	if ((int)cpu == test_fail_cpu)
		test_failed = true;
	WRITE_ONCE(present, want);
	local_irq_disable();
	for (i = 0; i < JOULES_NR_HW; i++) {
		jc->hw[i] = ev[i];
		jc->hw_last[i] = 0;
	}
	local_irq_enable();
	return 0;
}

/* A CPU goes down (and, at unregistration, every CPU): on that CPU. */
static int pmu_cpu_offline(unsigned int cpu)
{
	struct pmu_cpu *jc = per_cpu_ptr(&pmu_cpus, cpu);
	struct perf_event *ev[JOULES_NR_HW];
	unsigned int i;

	local_irq_disable();
	for (i = 0; i < JOULES_NR_HW; i++) {
		ev[i] = jc->hw[i];
		jc->hw[i] = NULL;
	}
	local_irq_enable();
	for (i = 0; i < JOULES_NR_HW; i++)
		if (ev[i])
			perf_event_release_kernel(ev[i]);
	return 0;
}

int joules_pmu_init(void)
{
	int ret;

	if (!hw_counters)
		pr_info("hardware counters off (hw_counters=0): cycles, instructions and cache misses are absent\n");
	present = hw_counters ? (1U << hw_feature[0]) | (1U << hw_feature[1]) |
				(1U << hw_feature[2]) : 0;
	/* Brings every online CPU's counters up. */
	ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "joules:pmu",
				pmu_cpu_online, pmu_cpu_offline);
	if (ret < 0)
		return ret;
	hp_state = ret;
	/* Before the hooks exist: nothing runs the code being patched. */
	if (present)
		static_branch_enable(&joules_hw_on);
	else if (hw_counters)
		pr_info("no hardware counters (no PMU): cycles, instructions and cache misses are absent\n");
	return 0;
}

void joules_pmu_exit(void)
{
	/* The hooks are gone: no probe reads the events any more. */
	if (static_key_enabled(&joules_hw_on))
		static_branch_disable(&joules_hw_on);
	if (hp_state > 0)
		cpuhp_remove_state(hp_state);
	hp_state = 0;
	present = 0;
}
