/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The task table's data structures, shared by the scheduler hooks (which
 * note who runs), the attribution worker (which counts and charges) and the
 * readers (procfs, netlink).
 *
 * Concurrency in one paragraph: the sched_switch probe does as little as
 * it can: it finds the incoming task's entry (a per-CPU cache in front of
 * the hash table) and queues it once per interval on its package's list
 * (one llist_add per task per interval and package). CPU time and I/O bytes
 * are not counted per switch: the worker takes them from the task itself
 * (se.sum_exec_runtime, ioac) for every queued entry, under the entry's
 * acct_lock, which the probe takes only when a task changed packages. PMU
 * counts are per CPU, so with a PMU the probe adds them at switch-out; only
 * the CPU switching a task out writes them. The interval generation is one
 * global number; the worker advances it and then sends every awake CPU an
 * IPI, which waits out probes that still saw the old number (they run with
 * interrupts off) and queues each CPU's running task for the new interval.
 * A CPU idle at the flip is left asleep: leaving idle, it marks itself awake
 * before reading the generation (a barrier on each side), so it either got
 * the IPI or sees the new number. Readers hold RCU, and the thread group's
 * spinlock for one entry at a time.
 */
#ifndef JOULES_TASKS_H
#define JOULES_TASKS_H

#include <linux/jump_label.h>
#include <linux/llist.h>
#include <linux/list.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/seqlock.h>
#include <linux/spinlock.h>

#include "totals.h"

/* Per-CPU cache of task entries in front of the hash table (8 lines). */
#define JOULES_CACHE_BITS 3

/*
 * The lagged view's weights of a slot come in two kinds: the CPU-side
 * domains' (PKG, CORE, PSYS: CPU time or the model's) and DRAM's (memory).
 */
#define JOULES_LAG_SIDES 2
static inline unsigned int joules_lag_side(unsigned int domain)
{
	return domain == JL_D_DRAM;
}

/* Per package and task: what the task did on that package. */
struct joules_slot {
	struct llist_node lnode[2];	/* on joules_pkg.list[gen & 1] */
	unsigned long qg[2];		/* generation each lnode was queued in */
	u64 cum[JL_NR_FEATURES];	/* cumulative counts on this package */
	u64 charged[JL_NR_FEATURES];	/* worker side: already charged */
	/*
	 * Worker scratch between a tick's two passes: this package's deltas.
	 * Per slot, since a task that ran on two packages is on both lists.
	 */
	u64 delta[JL_NR_FEATURES];
	u32 delta_present;
	u32 delta_missed;		/* counters this interval's deltas missed */
	/* Counters a slice here missed since the worker took them (probe). */
	u32 iv_missed;
	/*
	 * Worker: its weights in the lagged view's epoch, settled when the
	 * epoch ends (worker.c, lag_roll()); on its package's lag_pending
	 * from its first charge of the epoch.
	 */
	struct hlist_node lag_node;
	u64 lag_w[JOULES_LAG_SIDES];	/* by joules_lag_side() */
	u64 lag_wall_w;
};

struct joules_group {
	raw_spinlock_t lock;	/* taken in the fork hook: raw on PREEMPT_RT */
	/*
	 * Unfolded joules_entry.gnode: changed under lock, walked under RCU
	 * by readers, who take lock for one member at a time (a process may
	 * have thousands of threads, and lock is raw).
	 */
	struct list_head members;
	unsigned int nr_members;	/* group freed when it reaches 0 */
	struct joules_totals dead;	/* folded totals of reaped threads */
	u32 nr_dead;
	seqcount_raw_spinlock_t folds;	/* a walk that raced a fold retries */
	unsigned int walkers;		/* walks that hold folds off, under lock */
	struct joules_entry *leader;	/* the member whose pid is the tgid, or NULL */
	/* Freed by the RCU callback of the member folded last (JE_LAST). */
};

enum {
	JE_DEAD,	/* final switch-out seen (or task found dead at load) */
	JE_FINAL,	/* exit record emitted, totals final */
	JE_REAPED,	/* released by the kernel; unhashed */
	JE_FOLDED,	/* totals moved to the group; entry about to be freed */
	JE_CG_GONE,	/* no longer counted as a task of its cgroup */
	JE_LAST,	/* folded last of its group: its RCU callback frees both */
};

struct joules_entry {
	struct hlist_node hnode;	/* table bucket, keyed by task pointer */
	/*
	 * No reference is held: the task is valid until the kernel releases
	 * it (sched_process_free), which counts its last and clears this
	 * under acct_lock. The worker and readers look only under that lock.
	 */
	struct task_struct *task;
	struct joules_group *group;
	struct list_head gnode;		/* group->members: RCU, changed under group->lock */
	unsigned long flags;		/* JE_* bits */
	pid_t pid;			/* global (init ns) ids, for exit records */
	pid_t tgid;
	kuid_t uid;
	char comm[TASK_COMM_LEN];

	/*
	 * Counted from the task under acct_lock (worker; the probe when the
	 * task moved to another package), into slot[acct_pkg].
	 */
	raw_spinlock_t acct_lock;
	unsigned int acct_pkg;		/* package the uncounted runtime is on */
	u64 last_exec;			/* se.sum_exec_runtime last counted */
	u64 last_read;			/* ioac.read_bytes last counted */
	u64 last_write;
	u64 last_rchar;			/* ioac.rchar last counted */
	u64 io_read;			/* since tracked */
	u64 io_write;
	/* Written only by the CPU switching the task out. */
	u32 hw_seen;			/* JL_F_* bits a PMU counted */
	u32 hw_missed;			/* ... and those it missed a slice of */

	/* Worker side. */
	struct joules_sums sums;	/* under group->lock */
	struct joules_cg *cg;		/* its cgroup (a reference), from its first charge */
	/*
	 * Its cgroup when the kernel released it (a reference, under
	 * acct_lock): where a task that lived and died between two ticks ran.
	 */
	struct cgroup *last_cgrp;
	u64 cg_read, cg_write;		/* io_read/io_write already charged to cg */
	struct llist_node rnode;	/* joules_reaped */
	struct llist_node dnode;	/* joules_dying */
	struct list_head wnode;		/* worker: dying_wait, ready */
	struct list_head rwait;		/* worker: reaped_wait */
	u64 split_w;			/* scratch: this package's weight */
	struct rcu_head rcu;
	struct joules_slot slot[];	/* one per package */
};

/*
 * A cached entry is known to be queued on this CPU's package in generation
 * gen. Entries are freed only after every CPU has left the generation they
 * died in, so a tag equal to the current generation also proves the entry
 * is still allocated; its task pointer (cleared when the task is released)
 * says whose it is.
 */
struct joules_cache_line {
	struct joules_entry *e;
	unsigned long gen;
};

/* Per CPU: the hooks' state. */
struct joules_cpu {
	struct joules_entry *cur;	/* entry of the task running here */
	bool awake;			/* has left idle: the worker flushes it */
	unsigned int pkg;		/* logical package of this CPU */
	struct joules_cache_line cache[1 << JOULES_CACHE_BITS];
};

/* Per package: tasks that ran there this interval. */
struct joules_pkg {
	struct llist_head list[2];
};

DECLARE_PER_CPU(struct joules_cpu, joules_cpus);
/* The interval generation: written by the worker, read by the probes. */
extern unsigned long joules_gen;
/* More than one package: tasks may take uncounted runtime across. */
DECLARE_STATIC_KEY_FALSE(joules_multi_pkg);
/*
 * JL_F_* bits of optional features this kernel lets joules count for every
 * task (socket bytes where the hooks attached, page-cache reads where the
 * kernel keeps read(2) totals); the PMU's are per task (hw_seen).
 */
extern u32 joules_opt_avail;
extern struct joules_pkg *joules_pkgs;
extern unsigned int joules_nr_pkgs;
extern struct llist_head joules_reaped;	/* entries released by the kernel */
extern struct llist_head joules_dying;	/* entries whose task switched out dead */
extern atomic64_t joules_lookup_misses;
extern atomic64_t joules_alloc_failures;
extern atomic64_t joules_objects;	/* entries + groups allocated */

struct joules_entry *joules_lookup(struct task_struct *t);
/* The free hook: t's entry out of the table; false if it had none. */
bool joules_untrack(struct task_struct *t);
/* Building entries (track.c brings tasks in with these). */
struct joules_entry *joules_entry_alloc(gfp_t gfp);
void joules_entry_free(struct joules_entry *e);
struct joules_group *joules_group_alloc(gfp_t gfp);
void joules_entry_init(struct joules_entry *e, struct task_struct *t,
		       bool from_start);
int joules_attach(struct joules_entry *e, struct joules_entry *leader,
		  struct joules_group **spare);
void joules_queue_now(struct joules_entry *e);

/*
 * Irqs off, t running or about to run on this CPU: queue e on this CPU's
 * package for generation gen (moving uncounted runtime to the package it
 * was spent on first, where the task changed packages).
 */
void joules_enter(struct joules_entry *e, struct joules_cpu *jc,
		  unsigned long gen);
/* Socket hooks: bytes current sent or received (task context). */
void joules_count_net(unsigned int feature, u64 bytes);
/* Worker: count CPU time and I/O of e's task since last counted. */
void joules_count(struct joules_entry *e);
/* Worker: has e's task left its CPU for good (or been released)? */
bool joules_off_cpu(struct joules_entry *e);
/* Irqs off: add this CPU's PMU deltas to e (the task that ran here). */
void joules_count_hw(struct joules_entry *e, struct joules_cpu *jc);
/* Exit records: identity at exit, exec's pid swap, leaders last. */
void joules_exit_identity(struct task_struct *t);
void joules_exec_swap(struct task_struct *t, pid_t old_pid);
bool joules_leader_waits(struct joules_entry *e);
/*
 * Worker: fold a finalised, reaped entry into its group and free it; false
 * (nothing done) while a reader holds the group's folds off: try again.
 */
bool joules_fold(struct joules_entry *e);
bool joules_fold_held(struct joules_entry *e);
/* Process reads walked again because the worker folded a thread meanwhile. */
extern atomic64_t joules_walk_retries;
/* Totals of one entry (caller holds e->group->lock: the worker charges under it). */
void joules_entry_totals(struct joules_entry *e, struct joules_totals *t);
/* Visit every live entry (worker, for idle splitting); cb under RCU. */
void joules_visit_entries(void (*cb)(struct joules_entry *e, void *arg),
			  void *arg);
/* About budget entries from where the last call stopped (worker); see tasks.c. */
u64 joules_visit_share(bool (*cb)(struct joules_entry *e, void *arg),
		       void *arg, u64 budget, u32 max_buckets);
void joules_fill_stats(struct joules_entry *e, const struct joules_totals *t,
		       struct joules_stats *st);

int joules_tasks_init(void);
/* release(e) is called for every entry left, before it is folded. */
void joules_tasks_exit(void (*release)(struct joules_entry *e));
u64 joules_tasks_tracked(void);
/*
 * Fill *st for task t (process = false) or t's whole thread group
 * (process = true, t may be any thread of it), with pids as seen in ns and
 * the uid as seen in uns. Returns 0, or -ENOENT when joules has no record
 * of t.
 */
struct pid_namespace;
struct user_namespace;
int joules_task_stats(struct task_struct *t, bool process,
		      struct pid_namespace *ns, struct user_namespace *uns,
		      struct joules_stats *st);

#endif /* JOULES_TASKS_H */
