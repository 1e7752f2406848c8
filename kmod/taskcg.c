// SPDX-License-Identifier: GPL-2.0
/*
 * A task entry's cgroup. A task is charged to the cgroup it is in when the
 * worker closes the interval (at interval granularity for a task that
 * moves); a task that exited is charged to its last cgroup, also when the
 * kernel released it before the worker ever saw it. A task moved while it
 * sleeps is charged nothing meanwhile, but counts as a task of its cgroup
 * and pins it, and with idle_split takes idle shares there: the worker's
 * scan (joules_taskcg_scan()) moves it within a pass over the task table
 * (see TASKCG_SCAN_BUDGET).
 */
#include <linux/cgroup.h>

#include "cgroup.h"
#include "taskcg.h"

/*
 * Entries the scan for moved sleepers visits per tick, in turn, and the
 * most buckets of the task table it walks for them (a node with few tasks
 * has mostly empty buckets: 100 tasks in 8,192 would take 2,600 a tick).
 * A move is seen within tasks / TASKCG_SCAN_BUDGET or buckets /
 * TASKCG_SCAN_BUCKETS ticks, whichever is more: 6.4 s with the default
 * table (8,192 buckets) up to 2,000 tasks, 3 s per 1,000 tasks beyond, at
 * the default interval. A visit costs an irqsave lock and a few loads,
 * about 140 instructions, a bucket about 30: 1,024 visits a 100 ms tick
 * among 4,000 sleepers cost the worker 1.5 ms of CPU a second, 18.6 times
 * its cost without the scan, and 512 buckets a tick among 100 sleepers
 * 3 times (bench-idle, 6.12, icount). A sleeper's move changes no charge,
 * only where it counts and its idle shares, so the scan goes slowly.
 */
#define TASKCG_SCAN_BUDGET 32
#define TASKCG_SCAN_BUCKETS 128

/*
 * The worker's last cgroup entry found, with a reference, until the end of
 * the tick (joules_taskcg_tick_end()): the tasks that ran in an interval
 * are mostly in a few cgroups (a fork+exit's children all in their
 * parent's), and each would otherwise pay a css tryget and put and a
 * table lookup. It pins nothing between ticks.
 */
static struct joules_cg *memo;
static u64 memo_id;

/*
 * Which cgroup is e's task in now, or, once the kernel released it, the
 * one it was in then (a task that lived and died between two ticks is
 * charged there too)? Its id, 0 to stay where it is (cur_id: the id it
 * counts in now; or its cgroup is being freed). A reference to the
 * cgroup in *cgrp unless it is the memo's (*cgrp NULL).
 */
static u64 entry_cgroup(struct joules_entry *e, u64 cur_id, struct cgroup **cgrp)
{
	struct cgroup *c, *last = NULL;
	unsigned long flags;
	bool hit;
	u64 id = 0;

	*cgrp = NULL;
	raw_spin_lock_irqsave(&e->acct_lock, flags);
	if (e->task) {
		rcu_read_lock();
		c = task_dfl_cgroup(e->task);
		id = cgroup_id(c);
		hit = memo && id == memo_id;
		/* Where it was, or its cgroup being freed: it stays. */
		if (id == cur_id || (!hit && !cgroup_tryget(c)))
			id = 0;
		else if (!hit)
			*cgrp = c;
		rcu_read_unlock();
	} else {
		last = e->last_cgrp;	/* its reference moves here */
		e->last_cgrp = NULL;
	}
	raw_spin_unlock_irqrestore(&e->acct_lock, flags);
	if (last) {
		id = cgroup_id(last);
		if (id == cur_id || (memo && id == memo_id))
			cgroup_put(last);
		else
			*cgrp = last;
		if (id == cur_id)
			id = 0;
	}
	return id;
}

/* Moves e's reference (and its place in the task counts) when it moved. */
void joules_taskcg_update(struct joules_entry *e)
{
	struct joules_cg *cur = e->cg, *cg;
	struct cgroup *cgrp;
	u64 id = entry_cgroup(e, cur ? joules_cg_id(cur) : 0, &cgrp);

	if (!id)
		return;
	if (!cgrp) {
		cg = memo;
		joules_cg_hold(cg);
	} else {
		cg = joules_cg_get(cgrp);
		cgroup_put(cgrp);
		if (!cg)
			return;		/* no memory: charged where it was */
		joules_cg_put(memo);
		joules_cg_hold(cg);
		memo = cg;
		memo_id = id;
	}
	if (test_bit(JE_DEAD, &e->flags)) {
		/*
		 * It died before the worker saw it here: uncounted where it
		 * was counted, and never counted in cg (nor uncounted later).
		 */
		joules_taskcg_gone(e);
		set_bit(JE_CG_GONE, &e->flags);
	} else {
		if (cur && !test_bit(JE_CG_GONE, &e->flags))
			joules_cg_count(cur, -1);
		joules_cg_count(cg, 1);
	}
	e->cg = cg;
	joules_cg_put(cur);
}

void joules_taskcg_tick_end(void)
{
	joules_cg_put(memo);
	memo = NULL;
}

void joules_taskcg_gone(struct joules_entry *e)
{
	if (e->cg && !test_and_set_bit(JE_CG_GONE, &e->flags))
		joules_cg_count(e->cg, -1);
}

void joules_taskcg_release(struct joules_entry *e)
{
	joules_taskcg_gone(e);
	joules_cg_put(e->cg);
	e->cg = NULL;
	if (e->last_cgrp)
		cgroup_put(e->last_cgrp);
	e->last_cgrp = NULL;
}

void joules_taskcg_charge(struct joules_entry *e, const struct jl_feat *d,
			  u32 missed, u64 uj, u64 lag, const u64 *part,
			  u32 domains, u32 source, u64 generation)
{
	struct joules_totals c = { 0 };
	u64 rd = READ_ONCE(e->io_read), wr = READ_ONCE(e->io_write);
	unsigned int i;

	if (!e->cg)
		return;
	c.s.energy_uj = uj;
	c.s.lag_uj = lag;
	for (i = 0; i < JL_NR_DOMAINS; i++)
		c.s.domain_uj[i] = part[i];
	c.s.domains = domains;
	c.s.source_mask = source;
	if (source)
		c.s.model_generation = generation;
	memcpy(c.feat, d->v, sizeof(c.feat));
	/*
	 * The counters this task's sums have, not only those the tick used:
	 * one another CPU missed is left out of every weight, but this
	 * task's counts are whole. Those its own deltas missed: the cgroup's
	 * sum is partial.
	 */
	c.opt_present = (d->present | READ_ONCE(e->hw_seen)) &
			~((1U << JL_F_CPU_NS) | (1U << JL_F_DISK));
	c.opt_missed = missed;
	c.read_bytes = rd - e->cg_read;
	c.write_bytes = wr - e->cg_write;
	e->cg_read = rd;
	e->cg_write = wr;
	joules_cg_charge(e->cg, &c);
}

void joules_taskcg_charge_idle(struct joules_entry *e, u64 uj, u64 lag)
{
	struct joules_totals c = {
		.s = { .energy_uj = uj, .idle_uj = uj, .lag_uj = lag, .lag_idle_uj = lag }
	};

	if (e->cg)
		joules_cg_charge(e->cg, &c);
}

void joules_taskcg_charge_lag(struct joules_entry *e, u64 lag, const u64 *lpart)
{
	struct joules_totals c = { .s = { .lag_uj = lag } };
	unsigned int i;

	if (!e->cg)
		return;
	for (i = 0; i < JL_NR_DOMAINS; i++)
		c.s.lag_domain_uj[i] = lpart[i];
	joules_cg_charge(e->cg, &c);
}

struct moved_batch {
	struct joules_entry *e[TASKCG_SCAN_BUDGET];
	unsigned int n;
};

/*
 * Is e's task alive and in another cgroup than the one it counts in?
 * False (stop) at the first move beyond a full batch (a bucket can hold
 * more than the budget): the next tick starts with it.
 */
static bool note_moved(struct joules_entry *e, void *arg)
{
	struct moved_batch *mb = arg;
	struct joules_cg *cur = e->cg;	/* the worker's own field */
	unsigned long flags;
	bool moved = false;

	if (test_bit(JE_DEAD, &e->flags))
		return true;	/* the exit paths' to settle */
	raw_spin_lock_irqsave(&e->acct_lock, flags);
	if (e->task)	/* under RCU (joules_visit_share()) */
		moved = !cur || joules_cg_id(cur) != cgroup_id(task_dfl_cgroup(e->task));
	raw_spin_unlock_irqrestore(&e->acct_lock, flags);
	if (!moved)
		return true;
	if (mb->n == TASKCG_SCAN_BUDGET)
		return false;
	mb->e[mb->n++] = e;
	return true;
}

/*
 * Worker: tasks moved while they slept (take_pkg() moves the ones that
 * ran) to the cgroup they are in, outside the RCU section: cgroup.c may
 * allocate and sleep on RT. A task that cannot be moved now (no memory,
 * its cgroup being freed) is seen again on the scan's next pass.
 */
void joules_taskcg_scan(void)
{
	static struct moved_batch mb;	/* the worker's only */
	unsigned int i;

	mb.n = 0;
	joules_visit_share(note_moved, &mb, TASKCG_SCAN_BUDGET,
			   TASKCG_SCAN_BUCKETS);
	for (i = 0; i < mb.n; i++)
		joules_taskcg_update(mb.e[i]);
}
