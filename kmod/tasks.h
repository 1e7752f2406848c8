/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The task table's data structures, shared by the scheduler hooks (which
 * count into them), the attribution worker (which charges energy) and the
 * readers (procfs, netlink).
 *
 * Concurrency in one paragraph: a task's switch-side counters are written
 * only by the CPU that switches the task out (the scheduler never runs a
 * task on two CPUs, and the probe for prev finishes before prev can run
 * elsewhere), so the hot path takes no lock and uses no atomic op but one
 * llist_add per task per interval. The worker reads them with READ_ONCE and
 * keeps its own "charged" snapshot. Each CPU has a generation number that
 * only that CPU changes, from the worker's IPI, so a probe and the IPI on a
 * CPU never overlap (both run with interrupts off). Readers hold RCU and the
 * thread group's spinlock.
 */
#ifndef JOULES_TASKS_H
#define JOULES_TASKS_H

#include <linux/llist.h>
#include <linux/list.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>

#include "joules.h"

/* Hardware counters read per CPU at each switch (a subset of features). */
#define JOULES_NR_HW 3	/* JL_F_CYCLES, JL_F_INSTR, JL_F_MISSES */

/* Per package and task: what the task did on that package. */
struct joules_slot {
	struct llist_node lnode[2];	/* on joules_pkg.list[gen & 1] */
	unsigned long qg[2];		/* generation each lnode was queued in */
	u64 cum[JL_NR_FEATURES];	/* switch side: cumulative counts */
	u64 charged[JL_NR_FEATURES];	/* worker side: already charged */
};

/* Energy charged so far (worker side, under the group lock). */
struct joules_sums {
	u64 energy_uj;
	u64 domain_uj[JL_NR_DOMAINS];
	u64 idle_uj;
	u64 model_rem_fj;	/* model energy below 1 uJ, carried */
	u64 model_generation;
	u32 source_mask;
	u32 domains;
};

/* Everything a reader reports, summed over threads when needed. */
struct joules_totals {
	struct joules_sums s;
	u64 feat[JL_NR_FEATURES];
	u64 read_bytes;
	u64 write_bytes;
	u32 hw_present;
};

struct joules_group {
	spinlock_t lock;
	struct list_head members;	/* unfolded joules_entry.gnode */
	unsigned int nr_members;	/* group freed when it reaches 0 */
	struct joules_totals dead;	/* folded totals of reaped threads */
	u32 nr_dead;
	struct rcu_head rcu;
};

enum {
	JE_DEAD,	/* final switch-out seen (or task found dead at load) */
	JE_FINAL,	/* exit record emitted, totals final */
	JE_REAPED,	/* released by the kernel; unhashed */
	JE_FOLDED,	/* totals moved to the group; entry about to be freed */
};

struct joules_entry {
	struct hlist_node hnode;	/* table bucket, keyed by task pointer */
	struct task_struct *task;	/* holds a reference until folded */
	struct joules_group *group;
	struct list_head gnode;		/* group->members, under group->lock */
	unsigned long flags;		/* JE_* bits */
	pid_t pid;			/* global (init ns) ids, for exit records */
	pid_t tgid;
	kuid_t uid;
	char comm[TASK_COMM_LEN];

	/* Switch side: written only by the CPU switching the task out. */
	u64 last_exec;			/* se.sum_exec_runtime last accounted */
	u64 last_read;			/* ioac.read_bytes last accounted */
	u64 last_write;
	u64 io_read;			/* since tracked */
	u64 io_write;
	u32 hw_seen;			/* JL_F_* bits a PMU counted */

	/* Worker side. */
	struct joules_sums sums;	/* under group->lock */
	struct llist_node rnode;	/* joules_reaped */
	struct llist_node dnode;	/* joules_dying */
	struct list_head wnode;		/* worker: dying_wait, ready */
	struct list_head rwait;		/* worker: reaped_wait */
	u64 split_w;			/* scratch: this interval's weight */
	u64 scratch[JL_NR_FEATURES];	/* scratch: this interval's deltas */
	u32 scratch_present;
	struct rcu_head rcu;
	struct joules_slot slot[];	/* one per package */
};

/* Per CPU: the hooks' state. */
struct joules_cpu {
	struct joules_entry *cur;	/* entry of the task running here */
	unsigned long gen;		/* this CPU's interval generation */
	unsigned int pkg;		/* logical package of this CPU */
	struct perf_event *hw[JOULES_NR_HW];
	u64 hw_last[JOULES_NR_HW];
};

/* Per package: tasks that ran there this interval. */
struct joules_pkg {
	struct llist_head list[2];
};

DECLARE_PER_CPU(struct joules_cpu, joules_cpus);
extern struct joules_pkg *joules_pkgs;
extern unsigned int joules_nr_pkgs;
extern struct llist_head joules_reaped;	/* entries released by the kernel */
extern struct llist_head joules_dying;	/* entries whose task switched out dead */
extern atomic64_t joules_lookup_misses;
extern atomic64_t joules_alloc_failures;
extern atomic64_t joules_objects;	/* entries + groups allocated */

struct joules_entry *joules_lookup(struct task_struct *t);
int joules_track(struct task_struct *t, gfp_t gfp);
void joules_untrack(struct task_struct *t);
void joules_tasks_start(void);
void joules_account(struct joules_entry *e, struct joules_cpu *jc,
		    struct task_struct *t, const u64 *hw, u32 hwmask);
/* Worker: fold a finalised, reaped entry into its group and free it. */
void joules_fold(struct joules_entry *e);
/* Worker: totals of one entry (caller holds e->group->lock). */
void joules_entry_totals(struct joules_entry *e, struct joules_totals *t);
/* Visit every live entry (worker, for idle splitting); cb under RCU. */
void joules_for_each_entry(void (*cb)(struct joules_entry *e, void *arg),
			   void *arg);
void joules_fill_stats(struct joules_entry *e, const struct joules_totals *t,
		       struct joules_stats *st);

/* pmu.c: per-CPU kernel counters for cycles, instructions, cache misses. */
int joules_pmu_init(void);
void joules_pmu_exit(void);
/* Deltas since the last call on this CPU (irqs off); returns JL_F_* bits. */
u32 joules_pmu_read(struct joules_cpu *jc, u64 *hw);
u32 joules_pmu_present(void);

/* attr.c: settings the sysfs file changes. */
extern unsigned int joules_interval_ms;
extern enum joules_source_mode joules_source_mode;
extern bool joules_idle_split;
extern unsigned int joules_gamma_milli;
extern unsigned int joules_delta_milli;
extern u64 joules_meter_idle_uw[JL_NR_DOMAINS];

#endif /* JOULES_TASKS_H */
