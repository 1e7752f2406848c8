// SPDX-License-Identifier: GPL-2.0
/*
 * How tasks enter the task table.
 *
 * New tasks: the task_newtask tracepoint, which copy_process() fires for
 * every task it creates (fork, clone, kernel threads, and the io_uring,
 * io-wq and vhost workers that never pass sched_process_fork). It runs
 * with preemption off (the tracepoint's up to 6.12, the probe's own
 * after: jl_probe_enter()), where PREEMPT_RT forbids
 * allocating (the slab allocator's locks sleep there) and every spinlock_t
 * sleeps. So the hook takes ready entries and groups from a pool under a
 * raw spinlock, and a work item refills the pool in process context.
 *
 * A new task that finds the pool empty is not lost: it is counted
 * (fork_deferred in sysfs) and the work item sweeps the task list for
 * untracked tasks. So does the worker when a task ran that joules did not
 * know. A task found by the sweep that started after the module loaded is
 * charged from its start (its runtime and I/O counters start at zero), so
 * a late entry loses only the hardware counts of the switches before it.
 * Tasks that existed before the load are charged from the load on.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/workqueue.h>

#include "compat.h"
#include "tasks.h"
#include "track.h"

static unsigned int fork_pool = 64;
module_param(fork_pool, uint, 0444);
MODULE_PARM_DESC(fork_pool,
		 "Entries kept ready for new tasks (0..4096, default 64); 0 defers every new task to the sweep (for tests)");

/* Test only: deferred tasks stay untracked, for the exit and exec paths. */
static bool test_no_sweep;
module_param(test_no_sweep, bool, 0444);
MODULE_PARM_DESC(test_no_sweep,
		 "Test only: no sweep of the task list after the load's (deferred tasks are tracked at their exit or not at all)");

u64 joules_load_ns;
atomic64_t joules_fork_deferred;
atomic64_t joules_exits_untracked;

/*
 * The arrays hold fork_pool objects plus one per CPU: a hook that took an
 * object it could not use gives it back, and the pool may have been filled
 * up meanwhile (one hook at a time per CPU: preemption is off in it).
 */
static struct {
	raw_spinlock_t lock;
	unsigned int ne, ng, cap;
	struct joules_entry **e;
	struct joules_group **g;
} pool;

static struct work_struct refill_work;
static atomic_t sweep_wanted;
static bool track_up;
/* A sweep since the load tracked every task it found: older ones all are. */
static bool walked;

/*
 * 0 until the free hook is registered (joules_track_loaded()): a task born
 * since is either tracked or counted lost when it is released.
 */
static bool started_since_load(struct task_struct *t)
{
	u64 load = READ_ONCE(joules_load_ns);

	return load && t->start_time >= load;
}

/* Process context: fill the pool up, outside its lock. */
static void pool_fill(void)
{
	struct joules_entry *e;
	struct joules_group *g;
	unsigned long flags;
	bool need;

	for (;;) {
		raw_spin_lock_irqsave(&pool.lock, flags);
		need = pool.ne < fork_pool || pool.ng < fork_pool;
		raw_spin_unlock_irqrestore(&pool.lock, flags);
		if (!need)
			return;
		e = joules_entry_alloc(GFP_KERNEL);
		g = joules_group_alloc(GFP_KERNEL);
		if (!e || !g) {
			atomic64_inc(&joules_alloc_failures);
			break;
		}
		raw_spin_lock_irqsave(&pool.lock, flags);
		if (pool.ne < fork_pool) {
			pool.e[pool.ne++] = e;
			e = NULL;
		}
		if (pool.ng < fork_pool) {
			pool.g[pool.ng++] = g;
			g = NULL;
		}
		raw_spin_unlock_irqrestore(&pool.lock, flags);
		if (e)
			joules_entry_free(e);
		kfree(g);
	}
	if (e)
		joules_entry_free(e);
	kfree(g);
}

static void refill_fn(struct work_struct *work)
{
	pool_fill();
	if (atomic_xchg(&sweep_wanted, 0) && !test_no_sweep)
		joules_sweep();
}

/* Not from sched_switch: queueing work may wake a kworker (rq lock). */
void joules_sweep_request(void)
{
	atomic_set(&sweep_wanted, 1);
	if (READ_ONCE(track_up))
		queue_work(jl_unbound_wq, &refill_work);
}

/*
 * Track t from the pool: preemption off, t seen alive in this section.
 * from_start: its counters start at zero. at_exit: the pool empty, a
 * kernel without PREEMPT_RT may allocate without sleeping (its slab takes
 * no sleeping locks); an exiting task has no later chance. Returns t's
 * entry, or NULL when none was free, t's leader is not tracked (a thread
 * must join its leader's group; the sweep tracks leaders first) or t is
 * tracked already.
 */
static struct joules_entry *track_pooled(struct task_struct *t, bool from_start,
					 bool at_exit)
{
	struct joules_entry *e = NULL, *leader = NULL;
	struct joules_group *g = NULL;
	bool low, pooled = true;
	unsigned long flags;
	int err;

	if (!thread_group_leader(t)) {
		leader = joules_lookup(t->group_leader);
		if (!leader)
			return NULL;
	}
	raw_spin_lock_irqsave(&pool.lock, flags);
	if (pool.ne && (leader || pool.ng)) {
		e = pool.e[--pool.ne];
		if (!leader)
			g = pool.g[--pool.ng];
	}
	low = pool.ne <= fork_pool / 2 || pool.ng <= fork_pool / 2;
	raw_spin_unlock_irqrestore(&pool.lock, flags);
	if (!e && at_exit && !IS_ENABLED(CONFIG_PREEMPT_RT)) {
		/* No reserves (GFP_ATOMIC's): a user's fork bursts could drain them. */
		pooled = false;
		e = joules_entry_alloc(GFP_NOWAIT);
		if (e && !leader) {
			g = joules_group_alloc(GFP_NOWAIT);
			if (!g) {
				joules_entry_free(e);
				e = NULL;
			}
		}
	}
	if (!e) {
		err = -ENOMEM;
		goto out;
	}
	joules_entry_init(e, t, from_start);
	err = joules_attach(e, leader, &g);
	if (!pooled) {
		if (err)
			joules_entry_free(e);
		kfree(g);
	} else if (err || g) {
		/*
		 * Unused objects go back: the arrays have room while one hook
		 * at a time runs per CPU (see pool). Were that ever broken, an
		 * object is dropped, with a warning, rather than written past
		 * the array.
		 */
		raw_spin_lock_irqsave(&pool.lock, flags);
		if (err && !WARN_ON_ONCE(pool.ne >= pool.cap)) {
			memset(e, 0, sizeof(*e));
			pool.e[pool.ne++] = e;
		}
		if (g && !WARN_ON_ONCE(pool.ng >= pool.cap))
			pool.g[pool.ng++] = g;
		raw_spin_unlock_irqrestore(&pool.lock, flags);
	}
out:
	/* -ENOMEM: the pool was empty, or the leader's group was going. */
	if ((low || err == -ENOMEM) && READ_ONCE(track_up))
		queue_work(jl_unbound_wq, &refill_work);
	return err ? NULL : e;
}

/*
 * The new-task hook (preemption off). The entry's counters start at zero,
 * as the new task's do. A task not tracked here is the sweep's.
 */
void joules_track_new(struct task_struct *t)
{
	/* The pool is sized by CPUs: one hook per CPU at a time. */
	lockdep_assert_preemption_disabled();
	if (track_pooled(t, true, false))
		return;
	atomic64_inc(&joules_fork_deferred);
	joules_sweep_request();
}

/*
 * Queued with its work so far; a task that died meanwhile (TASK_DEAD is set
 * just before its final switch, after which it never runs) is marked dead
 * here for its exit record, since the switch-out hook had no entry to mark.
 * The barrier pairs with __schedule()'s after the rq lock.
 */
static void track_late_done(struct joules_entry *e, struct task_struct *t)
{
	joules_queue_now(e);
	smp_mb(); /* the entry published before the state is read */
	if ((jl_task_state(t) & TASK_DEAD) && !test_and_set_bit(JE_DEAD, &e->flags))
		llist_add(&e->dnode, &joules_dying);
}

/*
 * t (current, exiting) is killed by an exec in another thread of its
 * process, x. Once the old leader is a zombie, de_thread() gives x its pid
 * and start_time: an untracked x born since the load, in a process from
 * before it, would then look older than the load, and without x's entry
 * the exec could not hand it the process (joules_exec_swap()): the old
 * leader's exit record would read as the end of the process. So x is
 * tracked now, from its own start, in its leader's group, by whichever of
 * the threads it kills exits first. Only with the leader tracked: tracking
 * it here could take the pool's last entry and leave x without one (the
 * very false end), and a leader born since the load gives x a start_time
 * that is still since the load.
 */
static void track_exec_thread(struct task_struct *t, struct task_struct *x)
{
	struct joules_entry *e;

	/* Alive in this section (preemption off): its free hook comes later. */
	if (x == t || !pid_alive(x) || joules_lookup(x) ||
	    !started_since_load(x) || !joules_lookup(t->group_leader))
		return;
	e = track_pooled(x, true, true);
	if (e)
		track_late_done(e, x);
}

/*
 * The exit hook (t is current, preemption off): a task whose tracking was
 * deferred and that no sweep has found yet. A thread is released as soon
 * as it exits (so is a process whose parent ignores SIGCHLD) and the sweep
 * would never see it: its runtime would reach neither its process nor its
 * cgroup. It is tracked here, its leader first, from the pool or, without
 * PREEMPT_RT, a non-sleeping allocation. A task with nothing to be had
 * is left to the sweep; released untracked, it is counted as lost
 * (exits_untracked, joules_track_lost()).
 *
 * Threads killed by an exec in a thread still untracked are left alone:
 * the exec takes the leader's pid, and an entry for the old leader would
 * read as the end of the process (joules_exec_swap() needs both tracked).
 * Each of them tries to track the exec'ing thread first
 * (track_exec_thread()); the exec hook tries once more
 * (joules_track_exec()).
 */
void joules_track_exiting(struct task_struct *t)
{
	struct task_struct *l = t->group_leader, *x;
	struct joules_entry *e;

	lockdep_assert_preemption_disabled();

	x = READ_ONCE(t->signal->group_exec_task);
	if (unlikely(x))
		track_exec_thread(t, x);
	if (likely(joules_lookup(t)) || !started_since_load(t))
		return;
	if (x && x != t && !joules_lookup(x))
		return;	/* released untracked: joules_track_lost() */
	if (l != t && !joules_lookup(l) && started_since_load(l)) {
		e = track_pooled(l, true, true);
		if (e)
			track_late_done(e, l);
	}
	e = track_pooled(t, true, true);
	if (e)
		joules_queue_now(e);
	/*
	 * Else left to the sweep, which finds a leader's zombie until it is
	 * reaped; what is released untracked is counted by the free hook.
	 */
}

/*
 * The free hook, for a task released without an entry. One that started
 * since the load was left to the sweep and never found: deferred at its
 * fork, no entry to be had at its exit (PREEMPT_RT, an empty pool), and a
 * leader reaped before a sweep saw its zombie. Its counts are lost: say
 * so, once, here rather than at its exit, where a leader may still be
 * found.
 */
void joules_track_lost(struct task_struct *t)
{
	if (started_since_load(t))
		atomic64_inc(&joules_exits_untracked);
}

/*
 * The exec hook, t current, made its process' leader by de_thread(), with
 * the old leader's start_time. Untracked and now looking older than the
 * load, once a sweep has tracked every task it found (walked), t is a
 * thread born since that no killed thread could track
 * (track_exec_thread(): nothing to be had, or the old leader had exited
 * before). Its own counters still start at its birth: it is tracked
 * from its start, in a group of its own (the old leader's entry, already
 * gone from the thread group, cannot be found). Where
 * nothing can be had (PREEMPT_RT, the pool empty), its life so far is lost
 * and counted here, once: it looks older than the load from now on, so
 * neither a sweep (which charges it from then on) nor its release counts
 * it.
 */
void joules_track_exec(struct task_struct *t)
{
	struct joules_entry *e;

	lockdep_assert_preemption_disabled();

	if (!READ_ONCE(walked) || joules_lookup(t) || started_since_load(t))
		return;
	e = track_pooled(t, true, true);
	if (e)
		joules_queue_now(e);
	else
		atomic64_inc(&joules_exits_untracked);
}

/* The free hook is registered: tasks born from now on are accounted for. */
void joules_track_loaded(void)
{
	WRITE_ONCE(joules_load_ns, ktime_get_ns());
}

/*
 * Track t, found alive by the sweep and held by it; process context.
 * Returns 0, -ESRCH (gone meanwhile), -EEXIST (tracked meanwhile), -ENOMEM
 * or -EAGAIN (its leader untracked).
 */
static int track_found(struct task_struct *t)
{
	struct joules_entry *e = joules_entry_alloc(GFP_KERNEL), *leader = NULL;
	struct joules_group *g = joules_group_alloc(GFP_KERNEL);
	bool from_start;
	int err = -ESRCH;

	if (!e || !g) {
		atomic64_inc(&joules_alloc_failures);
		err = -ENOMEM;
		goto out;
	}
	rcu_read_lock();
	/*
	 * Alive now, inside this RCU section: the free hook runs a grace
	 * period after the task is unhashed, so it will find the entry.
	 */
	if (pid_alive(t)) {
		from_start = started_since_load(t);
		joules_entry_init(e, t, from_start);
		/*
		 * A zombie from before the load: its life went unseen, there
		 * is nothing to charge and no exit record to send.
		 */
		if (t->exit_state && !from_start) {
			set_bit(JE_DEAD, &e->flags);
			set_bit(JE_FINAL, &e->flags);
		}
		if (!thread_group_leader(t))
			leader = joules_lookup(t->group_leader);
		/* A thread whose leader is not tracked waits for it. */
		err = leader || thread_group_leader(t) ? joules_attach(e, leader, &g) : -EAGAIN;
		/*
		 * Its work so far belongs in this interval; a task from before
		 * the load is queued too, so the worker places it in its
		 * cgroup (its tasks: count) even if it never runs again.
		 */
		if (!err && !test_bit(JE_FINAL, &e->flags))
			joules_queue_now(e);
		/*
		 * Born and dead since the load, found only now (its tracking
		 * was deferred): the switch-out hook had no entry to mark, so
		 * it is marked here, for its exit record and its cgroup's
		 * count. TASK_DEAD is set just before the final switch, after
		 * which the task never runs again; a final switch-out still to
		 * come sees the bit and adds nothing. The barrier pairs with
		 * __schedule()'s after the rq lock.
		 */
		smp_mb(); /* the entry published before the state is read */
		if (!err && from_start && (jl_task_state(t) & TASK_DEAD) &&
		    !test_and_set_bit(JE_DEAD, &e->flags))
			llist_add(&e->dnode, &joules_dying);
	}
	rcu_read_unlock();
out:
	if (err && e)
		joules_entry_free(e);
	kfree(g);
	return err;
}

#define SWEEP_BATCH 64

/*
 * Track every task that is not: walk the task list under RCU, take up to
 * SWEEP_BATCH untracked tasks with a reference, and allocate for them
 * outside the RCU section. Leaders come before their threads in the walk,
 * so threads find their group.
 */
void joules_sweep(void)
{
	struct task_struct *batch[SWEEP_BATCH], *p, *t;
	unsigned int n, i, tracked;
	bool complete = true;
	int err;

	do {
		n = 0;
		rcu_read_lock();
		for_each_process_thread(p, t) {
			if (!pid_alive(t) || joules_lookup(t))
				continue;
			get_task_struct(t);
			batch[n++] = t;
			if (n == SWEEP_BATCH)
				goto full;
		}
full:
		rcu_read_unlock();
		tracked = 0;
		for (i = 0; i < n; i++) {
			err = track_found(batch[i]);
			tracked += !err;
			if (err && err != -ESRCH && err != -EEXIST)
				complete = false;
			put_task_struct(batch[i]);
		}
		cond_resched();
		/* A full batch of which none could be tracked: out of memory. */
		if (n == SWEEP_BATCH && !tracked)
			complete = false;
	} while (n == SWEEP_BATCH && tracked);
	/*
	 * Every task found is tracked: every task older than the load has
	 * an entry from now on (none is born later). Said once.
	 */
	if (complete && !READ_ONCE(walked))
		WRITE_ONCE(walked, true);
}

int joules_track_init(void)
{
	if (fork_pool > 4096)
		return -EINVAL;
	raw_spin_lock_init(&pool.lock);
	pool.ne = pool.ng = 0;
	pool.cap = fork_pool + nr_cpu_ids;
	pool.e = kcalloc(pool.cap, sizeof(*pool.e), GFP_KERNEL);
	pool.g = kcalloc(pool.cap, sizeof(*pool.g), GFP_KERNEL);
	if (!pool.e || !pool.g) {
		kfree(pool.e);
		kfree(pool.g);
		pool.e = NULL;
		pool.g = NULL;
		return -ENOMEM;
	}
	INIT_WORK(&refill_work, refill_fn);
	atomic_set(&sweep_wanted, 0);
	pool_fill();
	WRITE_ONCE(track_up, true);
	return 0;
}

/* The hooks are gone: nothing takes from the pool any more. Idempotent. */
void joules_track_exit(void)
{
	if (!pool.e)
		return;
	WRITE_ONCE(track_up, false);
	cancel_work_sync(&refill_work);
	while (pool.ne)
		joules_entry_free(pool.e[--pool.ne]);
	while (pool.ng)
		kfree(pool.g[--pool.ng]);
	kfree(pool.e);
	kfree(pool.g);
	pool.e = NULL;
	pool.g = NULL;
}
