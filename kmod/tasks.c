// SPDX-License-Identifier: GPL-2.0
/*
 * The task table: one entry per tracked task, in an RCU hash table keyed by
 * the task_struct pointer, and one group per thread group that keeps the
 * folded totals of threads that are gone. See tasks.h for the concurrency
 * rules.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cgroup.h>
#include <linux/cpuhotplug.h>
#include <linux/cred.h>
#include <linux/hash.h>
#include <linux/module.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/topology.h>
#include <linux/uidgid.h>
#include <linux/user_namespace.h>
#include <linux/pid_namespace.h>

#include "compat.h"
#include "pmu.h"
#include "tasks.h"

static unsigned int table_bits = 13;
module_param(table_bits, uint, 0444);
MODULE_PARM_DESC(table_bits, "log2 of the task table's bucket count (8..20)");

#define NR_LOCKS 256	/* bucket locks are striped */

static struct hlist_head *table;
static raw_spinlock_t table_locks[NR_LOCKS];
static struct kmem_cache *entry_cache;
static atomic64_t nr_tracked;

DEFINE_PER_CPU(struct joules_cpu, joules_cpus);
unsigned long joules_gen = 1;	/* slots' qg[] start at 0: first entry queues */
DEFINE_STATIC_KEY_FALSE(joules_multi_pkg);
/* rchar is there: CONFIG_TASK_IO_ACCOUNTING (required, compat.h) needs TASK_XACCT. */
u32 joules_opt_avail = 1U << JL_F_PAGECACHE;
struct joules_pkg *joules_pkgs;
unsigned int joules_nr_pkgs;
LLIST_HEAD(joules_reaped);
LLIST_HEAD(joules_dying);
atomic64_t joules_lookup_misses;
atomic64_t joules_alloc_failures;
atomic64_t joules_objects;

static inline u32 bucket_of(const struct task_struct *t)
{
	return hash_ptr(t, table_bits);
}

static inline raw_spinlock_t *lock_of(u32 b)
{
	return &table_locks[b & (NR_LOCKS - 1)];
}

/* Growth of a task's counter; its counters only grow, less is a bogus read. */
static inline u64 grown(u64 now, u64 last)
{
	return now > last ? now - last : 0;
}

/* Bytes the read(2) family delivered (ioac.rchar). */
static inline u64 task_rchar(struct task_struct *t)
{
	return READ_ONCE(t->ioac.rchar);
}

/*
 * Page-cache reads: bytes read(2) returned minus bytes read from storage,
 * per count. Storage reads of mmap faults and readahead are not in rchar,
 * so the difference can be negative over a short span: clamped, not
 * carried (Documentation/admin-guide.rst, "The model's features").
 */
static inline u64 pagecache_of(u64 d_rchar, u64 d_read)
{
	return d_rchar > d_read ? d_rchar - d_read : 0;
}

/* Move what e's task did since it was last counted into s (acct_lock held). */
static void count_into(struct joules_entry *e, struct joules_slot *s)
{
	struct task_struct *t = e->task;
	u64 rt = READ_ONCE(t->se.sum_exec_runtime);
	u64 rd = READ_ONCE(t->ioac.read_bytes);
	u64 wr = READ_ONCE(t->ioac.write_bytes);
	u64 rc = task_rchar(t);
	u64 d_rt = grown(rt, e->last_exec);
	u64 d_rd = grown(rd, e->last_read);
	u64 d_wr = grown(wr, e->last_write);
	u64 d_pc = pagecache_of(grown(rc, e->last_rchar), d_rd);

	if (d_rt) {
		WRITE_ONCE(s->cum[JL_F_CPU_NS], s->cum[JL_F_CPU_NS] + d_rt);
		e->last_exec = rt;
	}
	if (d_rd | d_wr) {
		WRITE_ONCE(s->cum[JL_F_DISK], s->cum[JL_F_DISK] + d_rd + d_wr);
		WRITE_ONCE(e->io_read, e->io_read + d_rd);
		WRITE_ONCE(e->io_write, e->io_write + d_wr);
		if (d_rd)
			e->last_read = rd;
		if (d_wr)
			e->last_write = wr;
	}
	if (d_pc)
		WRITE_ONCE(s->cum[JL_F_PAGECACHE], s->cum[JL_F_PAGECACHE] + d_pc);
	e->last_rchar = rc;
}

/*
 * Called from the scheduler hooks with preemption off (the probes take
 * it off themselves where the tracepoint does not: jl_probe_enter()), and
 * from readers under rcu_read_lock(): both are RCU read sides since the
 * flavours were consolidated.
 */
struct joules_entry *joules_lookup(struct task_struct *t)
{
	struct joules_entry *e;

	hlist_for_each_entry_rcu(e, &table[bucket_of(t)], hnode,
				 rcu_read_lock_any_held())
		if (READ_ONCE(e->task) == t)
			return e;
	return NULL;
}

u64 joules_tasks_tracked(void)
{
	return atomic64_read(&nr_tracked);
}

/* An entry, and its group when it was the last member folded. */
static void entry_free_rcu(struct rcu_head *rcu)
{
	struct joules_entry *e = container_of(rcu, struct joules_entry, rcu);

	if (test_bit(JE_LAST, &e->flags)) {
		kfree(e->group);
		atomic64_dec(&joules_objects);
	}
	kmem_cache_free(entry_cache, e);
	atomic64_dec(&joules_objects);
}

struct joules_entry *joules_entry_alloc(gfp_t gfp)
{
	return kmem_cache_zalloc(entry_cache, gfp | __GFP_NOWARN);
}

/* An entry that was never attached (no reader has seen it). */
void joules_entry_free(struct joules_entry *e)
{
	kmem_cache_free(entry_cache, e);
}

struct joules_group *joules_group_alloc(gfp_t gfp)
{
	struct joules_group *g = kzalloc(sizeof(*g), gfp | __GFP_NOWARN);

	if (!g)
		return NULL;
	raw_spin_lock_init(&g->lock);
	INIT_LIST_HEAD(&g->members);
	seqcount_raw_spinlock_init(&g->folds, &g->lock);
	return g;
}

/*
 * Hash e and join group g, unless t is already tracked (-EEXIST) or g has
 * no members left (-EAGAIN: it is being freed; only a fresh group may be
 * empty). Objects count from here on, not from their allocation: the pool
 * of the fork hook holds some that are not in use.
 */
static int attach(struct joules_entry *e, struct joules_group *g, bool fresh)
{
	u32 b = bucket_of(e->task);
	unsigned long flags;
	int err = 0;

	raw_spin_lock(&g->lock);
	if (!fresh && !g->nr_members) {
		err = -EAGAIN;
		goto out;
	}
	raw_spin_lock_irqsave(lock_of(b), flags);
	if (joules_lookup(e->task)) {
		err = -EEXIST;
	} else {
		e->group = g;
		hlist_add_head_rcu(&e->hnode, &table[b]);
		list_add_tail_rcu(&e->gnode, &g->members);
		/* Leaders come first (track.c); not so a thread whose leader's group was going. */
		if (fresh && e->pid == e->tgid)
			g->leader = e;
		g->nr_members++;
		atomic64_inc(&nr_tracked);
		atomic64_add(fresh ? 2 : 1, &joules_objects);
	}
	raw_spin_unlock_irqrestore(lock_of(b), flags);
out:
	raw_spin_unlock(&g->lock);
	return err;
}

/*
 * Set up e for t. from_start: charge t from its start (a task born while
 * joules is loaded); otherwise from now (the work of a task that existed
 * before the load is not joules' to charge).
 */
void joules_entry_init(struct joules_entry *e, struct task_struct *t,
		       bool from_start)
{
	e->task = t;
	e->pid = t->pid;
	e->tgid = t->tgid;
	e->uid = task_uid(t);
	memcpy(e->comm, t->comm, TASK_COMM_LEN);
	e->comm[TASK_COMM_LEN - 1] = 0;
	raw_spin_lock_init(&e->acct_lock);
	e->acct_pkg = per_cpu(joules_cpus, task_cpu(t)).pkg;
	if (!from_start) {
		e->last_exec = READ_ONCE(t->se.sum_exec_runtime);
		e->last_read = READ_ONCE(t->ioac.read_bytes);
		e->last_write = READ_ONCE(t->ioac.write_bytes);
		e->last_rchar = task_rchar(t);
	}
	INIT_LIST_HEAD(&e->wnode);
}

/*
 * Hash e (set up for its task) into leader's group, or into *spare when t
 * leads its own group or the leader is untracked or going; *spare is set
 * to NULL when used. Caller is in an RCU read side (a probe with preemption
 * off, or rcu_read_lock()) in which t has been seen alive, so the free hook cannot
 * have run for it. Returns 0, -EEXIST if t is tracked already, or -ENOMEM
 * if a group was needed and *spare is NULL.
 */
int joules_attach(struct joules_entry *e, struct joules_entry *leader,
		  struct joules_group **spare)
{
	int err = leader ? attach(e, leader->group, false) : -EAGAIN;

	if (err != -EAGAIN)
		return err;
	if (!*spare)
		return -ENOMEM;
	err = attach(e, *spare, true);
	if (!err)
		*spare = NULL;
	return err;
}

/*
 * The kernel releases t (sched_process_free, RCU callback context; t has
 * switched out for the last time and been reaped): unhash its entry so no
 * new reader finds it, take its final counts while t is still there, let
 * go of t, and hand the entry to the worker, which folds it once charged.
 * Holding no reference means a dead task's memory is not kept for the
 * worker's next interval.
 */
bool joules_untrack(struct task_struct *t)
{
	struct cgroup *cgrp;
	struct joules_entry *e;
	unsigned long flags;
	u32 b = bucket_of(t);

	raw_spin_lock_irqsave(lock_of(b), flags);
	e = joules_lookup(t);
	if (e) {
		hlist_del_rcu(&e->hnode);
		atomic64_dec(&nr_tracked);
	}
	raw_spin_unlock_irqrestore(lock_of(b), flags);
	if (!e)
		return false;
	/* The task's cgroup is valid until after this hook (cgroup_free()). */
	rcu_read_lock();
	cgrp = task_dfl_cgroup(t);
	cgroup_get(cgrp);
	rcu_read_unlock();
	raw_spin_lock_irqsave(&e->acct_lock, flags);
	count_into(e, &e->slot[e->acct_pkg]);
	WRITE_ONCE(e->task, NULL);
	e->last_cgrp = cgrp;
	raw_spin_unlock_irqrestore(&e->acct_lock, flags);
	set_bit(JE_REAPED, &e->flags);
	llist_add(&e->rnode, &joules_reaped);
	return true;
}

void joules_count(struct joules_entry *e)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&e->acct_lock, flags);
	if (e->task)
		count_into(e, &e->slot[e->acct_pkg]);
	raw_spin_unlock_irqrestore(&e->acct_lock, flags);
}

bool joules_off_cpu(struct joules_entry *e)
{
	unsigned long flags;
	bool off;

	raw_spin_lock_irqsave(&e->acct_lock, flags);
	/* Acquire: the final switch's stores precede on_cpu's clearing. */
	off = !e->task || !smp_load_acquire(&e->task->on_cpu);
	raw_spin_unlock_irqrestore(&e->acct_lock, flags);
	return off;
}

/*
 * A task's uncounted runtime must all be on one package: when it starts
 * running on another, count what it did so far into the old one first.
 * The queueing is one llist_add per task, package and interval.
 */
void notrace joules_enter(struct joules_entry *e, struct joules_cpu *jc,
			  unsigned long gen)
{
	unsigned int par = gen & 1, pkg = jc->pkg;
	struct joules_slot *s = &e->slot[pkg];
	unsigned long old;

	if (static_branch_unlikely(&joules_multi_pkg) &&
	    READ_ONCE(e->acct_pkg) != pkg) {
		raw_spin_lock(&e->acct_lock);
		count_into(e, &e->slot[e->acct_pkg]);
		WRITE_ONCE(e->acct_pkg, pkg);
		raw_spin_unlock(&e->acct_lock);
	}
	/*
	 * Once per interval and package. The CPU running the task is not the
	 * only one that queues it: a task tracked late is queued by the sweep
	 * (joules_queue_now()), so the claim is a cmpxchg.
	 */
	old = READ_ONCE(s->qg[par]);
	if (old != gen && try_cmpxchg(&s->qg[par], &old, gen))
		llist_add(&s->lnode[par], &joules_pkgs[pkg].list[par]);
}

/*
 * Queue e for the current interval from process context: a task tracked
 * late, whose work so far must be charged even if it never runs again (a
 * zombie, a sleeper). With interrupts off this is what a probe does: the
 * worker's flush IPI waits for it.
 */
void joules_queue_now(struct joules_entry *e)
{
	unsigned long flags;

	local_irq_save(flags);
	joules_enter(e, this_cpu_ptr(&joules_cpus), READ_ONCE(joules_gen));
	local_irq_restore(flags);
}

/* Always read, so the next task's deltas start here; e may be NULL. */
void notrace joules_count_hw(struct joules_entry *e, struct joules_cpu *jc)
{
	struct joules_slot *s;
	u64 hw[JOULES_NR_HW];
	u32 missed, mask = joules_pmu_read(hw, &missed);

	if (!e)
		return;
	s = &e->slot[jc->pkg];
	/*
	 * A slice a counter did not count: the task's sums are partial from
	 * now on, and this interval's (the worker takes iv_missed).
	 */
	if (unlikely(missed)) {
		u32 old = READ_ONCE(s->iv_missed);

		if ((e->hw_missed & missed) != missed)
			WRITE_ONCE(e->hw_missed, e->hw_missed | missed);
		/* Atomic against the worker's xchg(): no bit it took comes back. */
		while ((old & missed) != missed &&
		       !try_cmpxchg(&s->iv_missed, &old, old | missed))
			;
	}
	if (!mask)
		return;
	WRITE_ONCE(s->cum[JL_F_CYCLES], s->cum[JL_F_CYCLES] + hw[0]);
	WRITE_ONCE(s->cum[JL_F_INSTR], s->cum[JL_F_INSTR] + hw[1]);
	WRITE_ONCE(s->cum[JL_F_MISSES], s->cum[JL_F_MISSES] + hw[2]);
	if ((e->hw_seen & mask) != mask)
		WRITE_ONCE(e->hw_seen, e->hw_seen | mask);
}

/*
 * Socket bytes of current, from its own syscall (task context, preemption
 * off): current runs here, so jc->cur is its entry, queued on this package
 * for this interval (switch_in(), or the flush IPI after a flip). Only the
 * CPU current runs on writes these counts.
 */
void notrace joules_count_net(unsigned int feature, u64 bytes)
{
	struct joules_cpu *jc;
	struct joules_entry *e;
	struct joules_slot *s;

	lockdep_assert_preemption_disabled();
	jc = this_cpu_ptr(&joules_cpus);
	e = jc->cur;

	if (!e || e->task != current)
		return;	/* untracked: counted as a lookup miss already */
	s = &e->slot[jc->pkg];
	WRITE_ONCE(s->cum[feature], s->cum[feature] + bytes);
}

/*
 * Caller holds e->group->lock. CPU time and I/O bytes are as of now: what
 * the worker has not counted yet is read from the task while it exists, so
 * a reader need not wait for an interval.
 */
void joules_entry_totals(struct joules_entry *e, struct joules_totals *t)
{
	struct task_struct *task;
	u64 d_rt = 0, d_rd = 0, d_wr = 0, d_pc = 0;
	unsigned long flags;
	unsigned int p, f;

	/* Every field assigned, no memset: dumps call this once per task. */
	t->s = e->sums;
	raw_spin_lock_irqsave(&e->acct_lock, flags);
	for (f = 0; f < JL_NR_FEATURES; f++)
		t->feat[f] = READ_ONCE(e->slot[0].cum[f]);
	for (p = 1; p < joules_nr_pkgs; p++)
		for (f = 0; f < JL_NR_FEATURES; f++)
			t->feat[f] += READ_ONCE(e->slot[p].cum[f]);
	task = e->task;
	if (task) {
		d_rt = grown(READ_ONCE(task->se.sum_exec_runtime), e->last_exec);
		d_rd = grown(READ_ONCE(task->ioac.read_bytes), e->last_read);
		d_wr = grown(READ_ONCE(task->ioac.write_bytes), e->last_write);
		d_pc = pagecache_of(grown(task_rchar(task), e->last_rchar), d_rd);
	}
	t->read_bytes = e->io_read + d_rd;
	t->write_bytes = e->io_write + d_wr;
	raw_spin_unlock_irqrestore(&e->acct_lock, flags);
	t->feat[JL_F_CPU_NS] += d_rt;
	t->feat[JL_F_DISK] += d_rd + d_wr;
	t->feat[JL_F_PAGECACHE] += d_pc;
	t->opt_present = READ_ONCE(e->hw_seen) | joules_opt_avail;
	t->opt_missed = READ_ONCE(e->hw_missed);
}

atomic64_t joules_walk_retries;

/* Would joules_fold(e) wait? A reader walks e's group with folds held off. */
bool joules_fold_held(struct joules_entry *e)
{
	return READ_ONCE(e->group->walkers);
}

/*
 * Fold e into its group's dead totals and free it; false (nothing done)
 * while a reader walks the group with folds held off, for the worker to
 * try again at its next tick. Process context.
 */
bool joules_fold(struct joules_entry *e)
{
	struct joules_group *g = e->group;
	struct joules_totals t;

	raw_spin_lock(&g->lock);
	if (g->walkers) {
		raw_spin_unlock(&g->lock);
		return false;
	}
	write_seqcount_begin(&g->folds);
	joules_entry_totals(e, &t);
	joules_totals_add(&g->dead, &t);
	g->nr_dead++;
	set_bit(JE_FOLDED, &e->flags);
	list_del_rcu(&e->gnode);
	if (g->leader == e)
		g->leader = NULL;
	if (--g->nr_members == 0)
		set_bit(JE_LAST, &e->flags);
	write_seqcount_end(&g->folds);
	raw_spin_unlock(&g->lock);
	/* One callback for both: most processes have one thread. */
	call_rcu(&e->rcu, entry_free_rcu);
	return true;
}

/*
 * A group leader's exit record waits until every other thread of its group
 * has died: pid == tgid in a record reads as "the process ended", which a
 * leader that exits first (pthread_exit() in main) or is replaced by exec
 * in another thread is not. Worker (which alone folds: the members stay);
 * e is dead and off its CPU. A thread created meanwhile may be missed on a
 * weakly ordered CPU: its creator, alive, keeps the leader waiting anyway.
 */
bool joules_leader_waits(struct joules_entry *e)
{
	struct joules_group *g = e->group;
	struct joules_entry *m;
	bool wait = false;

	if (READ_ONCE(e->pid) != READ_ONCE(e->tgid))
		return false;
	rcu_read_lock();
	list_for_each_entry_rcu(m, &g->members, gnode) {
		if (m != e && !test_bit(JE_DEAD, &m->flags)) {
			wait = true;
			break;
		}
	}
	rcu_read_unlock();
	return wait;
}

/*
 * exec in a non-leader thread (de_thread()): the exec'ing thread t took
 * the tgid as its pid and the old leader its old tid. Rename both entries
 * so that the old leader's exit record is a thread's. exec hook.
 */
void joules_exec_swap(struct task_struct *t, pid_t old_pid)
{
	struct joules_entry *e = joules_lookup(t), *m;
	struct joules_group *g;

	if (!e)
		return;
	g = e->group;
	raw_spin_lock(&g->lock);
	m = g->leader;
	if (m && m != e && READ_ONCE(m->pid) == t->tgid)
		WRITE_ONCE(m->pid, old_pid);
	WRITE_ONCE(e->pid, t->pid);
	g->leader = e;
	raw_spin_unlock(&g->lock);
}

/* Identity at exit, for the exit record: a setuid() since fork shows. */
void joules_exit_identity(struct task_struct *t)
{
	struct joules_entry *e = joules_lookup(t);

	if (!e)
		return;
	WRITE_ONCE(e->pid, t->pid);
	WRITE_ONCE(e->tgid, t->tgid);
	WRITE_ONCE(e->uid, task_uid(t));
	memcpy(e->comm, t->comm, TASK_COMM_LEN - 1);
}

void joules_visit_entries(void (*cb)(struct joules_entry *e, void *arg),
			  void *arg)
{
	struct joules_entry *e;
	u32 b;

	rcu_read_lock();
	for (b = 0; b < (1U << table_bits); b++)
		hlist_for_each_entry_rcu(e, &table[b], hnode)
			cb(e, arg);
	rcu_read_unlock();
}

/*
 * A share of the table, resuming where the last call stopped, whole
 * buckets at a time until about budget entries or max_buckets buckets
 * were seen (a sparse table is mostly empty buckets); returns the entries
 * seen. cb returning false stops the visit: its bucket is where the next
 * call starts. Worker only: what cb keeps stays allocated after the RCU
 * section because the worker alone frees entries (joules_fold()).
 */
u64 joules_visit_share(bool (*cb)(struct joules_entry *e, void *arg),
		       void *arg, u64 budget, u32 max_buckets)
{
	static u32 next;
	u32 nb = min(1U << table_bits, max_buckets), n;
	struct joules_entry *e;
	u64 seen = 0, mark = 0;
	bool stop = false;

	rcu_read_lock();
	for (n = 0; n < nb && seen < budget && !stop; n++) {
		hlist_for_each_entry_rcu(e, &table[next], hnode) {
			seen++;
			stop = !cb(e, arg);
			if (stop)
				break;
		}
		if (stop)
			break;
		next = (next + 1) & ((1U << table_bits) - 1);
		/* A break every 64 buckets or 256 entries. */
		if (n % 64 == 63 || seen - mark >= 256) {
			mark = seen;
			rcu_read_unlock();
			cond_resched();
			rcu_read_lock();
		}
	}
	rcu_read_unlock();
	return seen;
}

void joules_fill_stats(struct joules_entry *e, const struct joules_totals *t,
		       struct joules_stats *st)
{
	joules_totals_stats(t, st);
	if (e) {
		st->exited = test_bit(JE_DEAD, &e->flags);
		memcpy(st->comm, e->comm, TASK_COMM_LEN);
	}
}

/*
 * g's totals: its folded threads and each member's, the group's lock held
 * for one member at a time (a raw lock; a process may have thousands of
 * threads). False when a fold ran meanwhile: a member folded before the
 * walk reached it would be missing, one folded after counted twice. With
 * hold, folds wait (joules_fold() declines) and the walk cannot fail.
 */
static bool group_totals(struct joules_group *g, bool hold,
			 struct joules_totals *sum, struct joules_stats *st)
{
	struct joules_totals one;
	struct joules_entry *m;
	unsigned int seq;
	bool raced;

	raw_spin_lock(&g->lock);
	seq = raw_read_seqcount(&g->folds);
	g->walkers += hold;
	*sum = g->dead;
	raw_spin_unlock(&g->lock);
	st->nr_threads = 0;
	st->exited = true;
	list_for_each_entry_rcu(m, &g->members, gnode) {
		raw_spin_lock(&g->lock);
		joules_entry_totals(m, &one);
		raw_spin_unlock(&g->lock);
		joules_totals_add(sum, &one);
		st->nr_threads++;
		if (!test_bit(JE_DEAD, &m->flags))
			st->exited = false;
	}
	/*
	 * Checked before the hold ends: a fold may run as soon as it has,
	 * and must not make a walk that it did not race look raced.
	 */
	raw_spin_lock(&g->lock);
	raced = read_seqcount_retry(&g->folds, seq);
	g->walkers -= hold;
	raw_spin_unlock(&g->lock);
	return !raced;
}

/* Under RCU: t's or its process' totals into st, or -ENOENT; -EAGAIN to retry. */
static int stats_of(struct task_struct *t, bool process, bool hold,
		    struct joules_stats *st)
{
	struct joules_entry *e = joules_lookup(t);
	struct joules_totals sum;

	if (!e || test_bit(JE_FOLDED, &e->flags))
		return -ENOENT;
	if (!process) {
		raw_spin_lock(&e->group->lock);
		joules_entry_totals(e, &sum);
		raw_spin_unlock(&e->group->lock);
		joules_fill_stats(e, &sum, st);
		st->nr_threads = 1;
		return 0;
	}
	if (!group_totals(e->group, hold, &sum, st))
		return -EAGAIN;
	joules_fill_stats(NULL, &sum, st);
	memcpy(st->comm, t->group_leader->comm, TASK_COMM_LEN);
	if (!st->nr_threads)
		st->exited = true;
	return 0;
}

int joules_task_stats(struct task_struct *t, bool process,
		      struct pid_namespace *ns, struct user_namespace *uns,
		      struct joules_stats *st)
{
	int err, tries;

	/*
	 * Folds come in a burst once a tick: two walks that raced one, then
	 * a third with the group's folds held off (the worker folds them at
	 * its next tick). Only that group waits, and a walk that holds them
	 * off races none, so readers cannot keep each other holding them.
	 */
	for (tries = 0; tries < 3; tries++) {
		memset(st, 0, sizeof(*st));
		rcu_read_lock();
		err = stats_of(t, process, tries == 2, st);
		rcu_read_unlock();
		if (err != -EAGAIN)
			break;
		atomic64_inc(&joules_walk_retries);
	}
	if (WARN_ON_ONCE(err == -EAGAIN))	/* the third walk cannot race a fold */
		err = -EIO;
	if (err)
		return err;
	st->pid = process ? task_tgid_nr_ns(t, ns) : task_pid_nr_ns(t, ns);
	st->tgid = task_tgid_nr_ns(t, ns);
	st->uid = from_kuid_munged(uns, task_uid(t));
	if (!process)
		memcpy(st->comm, t->comm, TASK_COMM_LEN);
	st->comm[TASK_COMM_LEN - 1] = 0;
	return 0;
}

static enum cpuhp_state hp_state;

/* 86-cpu-hotplug: this CPU's package looks unknown when it comes back. */
static int test_pkg_beyond_cpu = -1;
module_param(test_pkg_beyond_cpu, int, 0444);
MODULE_PARM_DESC(test_pkg_beyond_cpu,
		 "Test only: this CPU, brought online after the load, is in a package beyond those known at the load");

/*
 * A CPU comes online (at registration: every online CPU), on that CPU with
 * interrupts off, which the sched_switch probe cannot interleave with. Its
 * package is looked up now: CPUs come and go.
 *
 * Per-package state is sized at the load by topology_max_packages(). On
 * x86 since 6.9 that counts the packages of every APIC enumerated at boot,
 * and a CPU not enumerated then cannot be added, so this does not happen
 * there; 6.1 does not bring up a CPU beyond the firmware's package count
 * either. A CPU beyond it anyway has nowhere its work and energy could be
 * counted without being charged to another package's energy: it is
 * refused with the reason rather than counted wrong.
 */
static int tasks_cpu_online(unsigned int cpu)
{
	struct joules_cpu *jc = per_cpu_ptr(&joules_cpus, cpu);
	unsigned int pkg = topology_logical_package_id(cpu);

	if (hp_state && (int)cpu == test_pkg_beyond_cpu)
		pkg = joules_nr_pkgs;
	if (pkg >= joules_nr_pkgs) {
		if (hp_state)
			pr_err("CPU %u is in package %u, beyond the %u topology_max_packages() reports: not brought online while joules is loaded (unload it to bring the CPU up)\n",
			       cpu, pkg, joules_nr_pkgs);
		else
			pr_err("CPU %u is in package %u, beyond the %u topology_max_packages() reports: joules cannot count it and does not load\n",
			       cpu, pkg, joules_nr_pkgs);
		return -ERANGE;
	}
	local_irq_disable();
	jc->pkg = pkg;
	jc->cur = NULL;
	jc->awake = true;	/* the next flush finds what runs here */
	local_irq_enable();
	return 0;
}

static int tasks_cpu_offline(unsigned int cpu)
{
	struct joules_cpu *jc = per_cpu_ptr(&joules_cpus, cpu);

	local_irq_disable();
	jc->cur = NULL;
	local_irq_enable();
	return 0;
}

int joules_tasks_init(void)
{
	unsigned int cpu, i;
	int ret;

	if (table_bits < 8 || table_bits > 20)
		return -EINVAL;
	joules_nr_pkgs = topology_max_packages();
	if (!joules_nr_pkgs)
		joules_nr_pkgs = 1;
	joules_pkgs = kcalloc(joules_nr_pkgs, sizeof(*joules_pkgs), GFP_KERNEL);
	if (!joules_pkgs)
		return -ENOMEM;
	table = kvcalloc(1U << table_bits, sizeof(*table), GFP_KERNEL);
	if (!table)
		goto nomem;
	for (i = 0; i < NR_LOCKS; i++)
		raw_spin_lock_init(&table_locks[i]);
	entry_cache = kmem_cache_create("joules_entry",
					sizeof(struct joules_entry) +
					joules_nr_pkgs * sizeof(struct joules_slot),
					0, SLAB_ACCOUNT, NULL);
	if (!entry_cache)
		goto nomem;
	for_each_possible_cpu(cpu) {
		struct joules_cpu *jc = per_cpu_ptr(&joules_cpus, cpu);

		memset(jc, 0, sizeof(*jc));
	}
	joules_gen = 1;
	/* Each online CPU's package, now and as CPUs come. */
	ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "joules:online",
				tasks_cpu_online, tasks_cpu_offline);
	if (ret < 0) {
		kmem_cache_destroy(entry_cache);
		kvfree(table);
		kfree(joules_pkgs);
		return ret;
	}
	hp_state = ret;
	/* Before the hooks exist: nothing runs the code being patched. */
	if (joules_nr_pkgs > 1)
		static_branch_enable(&joules_multi_pkg);
	return 0;
nomem:
	kvfree(table);
	kfree(joules_pkgs);
	return -ENOMEM;
}

/*
 * Hooks and worker are stopped: nothing else touches the table now. Each
 * entry left is handed to release() (its cgroup) before it is folded.
 */
void joules_tasks_exit(void (*release)(struct joules_entry *e))
{
	struct joules_entry *e;
	struct hlist_node *tmp;
	struct llist_node *n;
	u32 b;

	/* Entries the kernel released but the worker never folded. */
	llist_del_all(&joules_dying);
	n = llist_del_all(&joules_reaped);
	while (n) {
		struct llist_node *next = n->next;

		e = container_of(n, struct joules_entry, rnode);
		release(e);
		WARN_ON_ONCE(!joules_fold(e));	/* no reader is left */
		n = next;
	}
	for (b = 0; b < (1U << table_bits); b++) {
		hlist_for_each_entry_safe(e, tmp, &table[b], hnode) {
			hlist_del_rcu(&e->hnode);
			atomic64_dec(&nr_tracked);
			/* Without the free hook the task may be gone already. */
			e->task = NULL;
			release(e);
			WARN_ON_ONCE(!joules_fold(e));
		}
	}
	if (hp_state > 0)
		cpuhp_remove_state(hp_state);
	hp_state = 0;
	/* Wait for the RCU callbacks that free into entry_cache. */
	rcu_barrier();
	kmem_cache_destroy(entry_cache);
	kvfree(table);
	kfree(joules_pkgs);
}
