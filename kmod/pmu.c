// SPDX-License-Identifier: GPL-2.0
/*
 * Hardware counters: one pinned kernel perf event per CPU for cycles,
 * instructions and cache misses, read at every context switch. Where the
 * CPU has no PMU (QEMU's software emulation among them) the events cannot
 * be created and the counters are reported absent, never as zero. A CPU
 * hotplug state creates them as CPUs come online and releases them as
 * CPUs go.
 *
 * A counter some CPUs have and others lack (a failed creation, a pinned
 * event pushed into error by another pinned user) stays in use where it
 * counts: a task whose slice on a CPU went uncounted has that counter
 * absent from then on (joules_count_hw()), the others keep it; in an
 * interval where any CPU missed one, nothing uses it (weights, the model,
 * node samples: joules_pmu_take_missed()). A delayed work tries the
 * missing events again.
 *
 * perf_event_read_local() is not exported, so the read is done the way it
 * does it: for an event active on this CPU, ask the PMU driver to fold the
 * hardware count into event->count (interrupts are off here).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/perf_event.h>
#include <linux/workqueue.h>

#include "core.h"
#include "pmu.h"

static const u64 hw_config[JOULES_NR_HW] = {
	PERF_COUNT_HW_CPU_CYCLES,
	PERF_COUNT_HW_INSTRUCTIONS,
	PERF_COUNT_HW_CACHE_MISSES,
};
static const u32 hw_feature[JOULES_NR_HW] = { JL_F_CYCLES, JL_F_INSTR, JL_F_MISSES };
#define HW_ALL ((1U << JL_F_CYCLES) | (1U << JL_F_INSTR) | (1U << JL_F_MISSES))
static u32 present;	/* JL_F_* bits with an event on some CPU at the load */
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

/* How often CPUs missing a counter are tried again. */
#define RETRY_JIFFIES (10 * HZ)

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
	/*
	 * Events set up while tasks ran here uncounted: their first read only
	 * sets hw_last, and the slice it ends counts as missed.
	 */
	u32 fresh;
	/*
	 * Counters this CPU should count, from its online callback to its
	 * offline one: a slice without them then is missed. Outside that
	 * window (hotplug's own threads) nothing is expected.
	 */
	u32 expect;
	u32 logged;	/* JL_F_* bits whose failure here was logged */
	bool test_failed;
};
static DEFINE_PER_CPU(struct pmu_cpu, pmu_cpus);

/* Counters some CPU missed a slice of since the worker last asked. */
static atomic_t iv_missed = ATOMIC_INIT(0);

u32 joules_pmu_read(u64 *hw, u32 *missed)
{
	struct pmu_cpu *jc = this_cpu_ptr(&pmu_cpus);
	u32 mask = 0, have = READ_ONCE(present);
	unsigned int i;
	u64 v;

	*missed = 0;
	if (!have)
		return 0;
	for (i = 0; i < JOULES_NR_HW; i++) {
		u32 bit = 1U << hw_feature[i];

		hw[i] = 0;
		if (!(have & bit) || !read_event(jc->hw[i], &v))
			continue;
		if (unlikely(jc->fresh & bit)) {
			jc->fresh &= ~bit;
			jc->hw_last[i] = v;
			continue;
		}
		hw[i] = v - jc->hw_last[i];
		jc->hw_last[i] = v;
		mask |= bit;
	}
	*missed = jc->expect & have & ~mask;
	if (unlikely(*missed) && (atomic_read(&iv_missed) & *missed) != *missed)
		atomic_or(*missed, &iv_missed);
	return mask;
}

/*
 * Worker, once a tick: the counters a slice went uncounted of, since the
 * last call and the one before (a slice ends at a switch that may fall
 * either side of the tick's flush).
 */
u32 joules_pmu_take_missed(void)
{
	static u32 last;
	u32 m = atomic_xchg(&iv_missed, 0), both = m | last;

	last = m;
	return both;
}

static struct perf_event *create(unsigned int i, unsigned int cpu)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_HARDWARE,
		.size = sizeof(attr),
		.config = hw_config[i],
		.pinned = 1,
	};
	struct pmu_cpu *jc = per_cpu_ptr(&pmu_cpus, cpu);

	if ((int)cpu == test_fail_cpu && !jc->test_failed) {
		if (i == JOULES_NR_HW - 1)
			jc->test_failed = true;
		return ERR_PTR(-ENODEV);
	}
	if (test_sw_counters) {
		attr.type = PERF_TYPE_SOFTWARE;
		attr.config = PERF_COUNT_SW_CPU_CLOCK;
	}
	return perf_event_create_kernel_counter(&attr, cpu, NULL, NULL, NULL);
}

static enum cpuhp_state hp_state;	/* 0 while registering */

struct install {
	struct pmu_cpu *jc;
	struct perf_event *ev[JOULES_NR_HW];
	struct perf_event *old[JOULES_NR_HW];	/* replaced: released after */
	u32 fresh, expect;
};

/* On the event's CPU with interrupts off: the probe cannot interleave. */
static void install_fn(void *arg)
{
	struct install *in = arg;
	unsigned int i;

	for (i = 0; i < JOULES_NR_HW; i++) {
		if (!in->ev[i])
			continue;
		in->old[i] = in->jc->hw[i];
		in->jc->hw[i] = in->ev[i];
		in->jc->hw_last[i] = 0;
	}
	in->jc->fresh |= in->fresh;
	in->jc->expect |= in->expect;
}

/* Said once per CPU and counter while it lacks one, and when it is back. */
static void say(struct pmu_cpu *jc, unsigned int i, unsigned int cpu,
		const char *why)
{
	u32 bit = 1U << hw_feature[i];

	if (why && !(jc->logged & bit))
		pr_info("%s counter %s on CPU %u: absent for the tasks that run there, tried again every %u s\n",
			jl_feature_names[hw_feature[i]], why, cpu, RETRY_JIFFIES / HZ);
	else if (!why && (jc->logged & bit))
		pr_info("%s counter on CPU %u counts again\n",
			jl_feature_names[hw_feature[i]], cpu);
	if (why)
		jc->logged |= bit;
	else
		jc->logged &= ~bit;
}

/*
 * Create the counters of want that cpu lacks, and replace those another
 * pinned user pushed into error: a new event comes after the older
 * users' (perf schedules pinned groups in creation order), where enabling
 * the old one would take the counter back from them. Hotplug held off
 * (cpus_read_lock() or the hotplug callback); the events are swapped in on
 * cpu itself, which is then expected to count want. Returns the bits cpu
 * still lacks.
 */
static u32 fill_cpu(unsigned int cpu, u32 want, bool fresh)
{
	struct pmu_cpu *jc = per_cpu_ptr(&pmu_cpus, cpu);
	struct install in = { .jc = jc, .expect = want };
	u32 lacking = 0, bit;
	struct perf_event *ev;
	unsigned int i;
	int state;

	for (i = 0; i < JOULES_NR_HW; i++) {
		bit = 1U << hw_feature[i];
		if (!(want & bit))
			continue;
		ev = READ_ONCE(jc->hw[i]);
		state = ev ? READ_ONCE(ev->state) : PERF_EVENT_STATE_ERROR;
		if (state == PERF_EVENT_STATE_ACTIVE && hp_state)
			say(jc, i, cpu, NULL);
		if (state != PERF_EVENT_STATE_ERROR)
			continue;
		/* At registration: said by say_lacking() if some CPU has it. */
		if (hp_state)
			say(jc, i, cpu, ev ? "taken by another pinned perf user" :
					     "unavailable");
		ev = create(i, cpu);
		if (IS_ERR(ev)) {
			lacking |= bit;
			continue;
		}
		in.ev[i] = ev;
		if (fresh)
			in.fresh |= bit;
	}
	/* Only when there is something to do: an IPI wakes an idle CPU. */
	if (in.ev[0] || in.ev[1] || in.ev[2] || (jc->expect & want) != want)
		smp_call_function_single(cpu, install_fn, &in, 1);
	for (i = 0; i < JOULES_NR_HW; i++) {
		if (in.old[i])
			perf_event_release_kernel(in.old[i]);
		if (in.ev[i] && hp_state &&
		    READ_ONCE(in.ev[i]->state) == PERF_EVENT_STATE_ACTIVE)
			say(jc, i, cpu, NULL);
	}
	return lacking;
}

static void say_lacking(unsigned int cpu)
{
	struct pmu_cpu *jc = per_cpu_ptr(&pmu_cpus, cpu);
	unsigned int i;

	for (i = 0; i < JOULES_NR_HW; i++) {
		if (!(present & (1U << hw_feature[i])) || jc->hw[i])
			continue;
		say(jc, i, cpu, "unavailable");
	}
}

static void retry_fn(struct work_struct *work);
/* Deferrable: it never wakes an idle CPU on its own. */
static DECLARE_DEFERRABLE_WORK(retry, retry_fn);

/*
 * CPUs lacking a counter in use, or with one another pinned user pushed
 * into error (which nothing tells us of): tried again, while any CPU
 * has one.
 */
static void retry_fn(struct work_struct *work)
{
	u32 want = READ_ONCE(present);
	unsigned int cpu;

	cpus_read_lock();
	for_each_online_cpu(cpu)
		fill_cpu(cpu, want, true);
	cpus_read_unlock();
	schedule_delayed_work(&retry, RETRY_JIFFIES);
}

/*
 * Online CPUs that lack a counter in use or have it in error (not those
 * briefly inactive while perf reschedules).
 */
ssize_t joules_pmu_missing(char *buf, size_t size)
{
	u32 want = READ_ONCE(present);
	cpumask_var_t m;
	unsigned int cpu, i;
	ssize_t n;

	if (!zalloc_cpumask_var(&m, GFP_KERNEL))
		return -ENOMEM;
	cpus_read_lock();
	/* A replaced event is released meanwhile; perf frees it after RCU. */
	rcu_read_lock();
	for_each_online_cpu(cpu) {
		struct pmu_cpu *jc = per_cpu_ptr(&pmu_cpus, cpu);

		for (i = 0; i < JOULES_NR_HW; i++) {
			struct perf_event *ev = READ_ONCE(jc->hw[i]);

			if ((want & (1U << hw_feature[i])) &&
			    (!ev || READ_ONCE(ev->state) == PERF_EVENT_STATE_ERROR))
				cpumask_set_cpu(cpu, m);
		}
	}
	rcu_read_unlock();
	cpus_read_unlock();
	n = scnprintf(buf, size, "%*pbl\n", cpumask_pr_args(m));
	free_cpumask_var(m);
	return n;
}

/*
 * A CPU comes online (at registration: every online CPU), on that CPU.
 * Nothing has run there uncounted, so the new events count from here.
 * At registration a counter no CPU can have (no PMU) is absent; later a
 * CPU that lacks one is tried again by the delayed work.
 */
static int pmu_cpu_online(unsigned int cpu)
{
	u32 want = hp_state ? READ_ONCE(present) : (hw_counters ? HW_ALL : 0);
	u32 lacking;

	/* A later CPU that lacks one is tried again by retry_fn(). */
	if (!want)
		return 0;
	lacking = fill_cpu(cpu, want, false);
	if (!hp_state)
		WRITE_ONCE(present, present | (want & ~lacking));
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
	jc->fresh = 0;
	jc->expect = 0;	/* hotplug's own threads run here on, uncounted */
	local_irq_enable();
	for (i = 0; i < JOULES_NR_HW; i++)
		if (ev[i])
			perf_event_release_kernel(ev[i]);
	return 0;
}

int joules_pmu_init(void)
{
	unsigned int cpu;
	int ret;

	if (!hw_counters)
		pr_info("hardware counters off (hw_counters=0): cycles, instructions and cache misses are absent\n");
	if (test_sw_counters)
		pr_warn("test_sw_counters: cycles, instructions and cache misses are CPU nanoseconds (test only)\n");
	present = 0;
	/* Brings every online CPU's counters up; present: those some CPU has. */
	ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "joules:pmu",
				pmu_cpu_online, pmu_cpu_offline);
	if (ret < 0)
		return ret;
	hp_state = ret;
	if (present) {
		/* Before the hooks exist: nothing runs the code being patched. */
		static_branch_enable(&joules_hw_on);
		/* CPUs that lack one: said now, tried again later. */
		cpus_read_lock();
		for_each_online_cpu(cpu)
			say_lacking(cpu);
		cpus_read_unlock();
		schedule_delayed_work(&retry, RETRY_JIFFIES);
	} else if (hw_counters) {
		pr_info("no hardware counters (no PMU): cycles, instructions and cache misses are absent\n");
	}
	return 0;
}

void joules_pmu_exit(void)
{
	/* Waits for a retry in flight and keeps it from coming back. */
	cancel_delayed_work_sync(&retry);
	/* The hooks are gone: no probe reads the events any more. */
	if (static_key_enabled(&joules_hw_on))
		static_branch_disable(&joules_hw_on);
	if (hp_state > 0)
		cpuhp_remove_state(hp_state);
	hp_state = 0;
	present = 0;
}
