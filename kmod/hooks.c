// SPDX-License-Identifier: GPL-2.0
/*
 * Scheduler hooks. The tracepoints' __tracepoint_* symbols are not exported
 * to modules, so look them up by name with for_each_kernel_tracepoint() and
 * attach with tracepoint_probe_register(), the way out-of-tree tracers do.
 *
 * sched_switch runs with the runqueue lock held and interrupts off: nothing
 * here allocates, sleeps, wakes a task or takes a lock (but an entry's own
 * raw lock when its task changed packages). It runs on every context
 * switch, so it does the least it can (see tasks.h): remember the incoming
 * task's entry and queue it once per interval; the worker counts CPU time
 * and I/O from the task itself. notrace: no ftrace call sites on this path.
 *
 * Socket bytes come from the sock_send_length/sock_recv_length tracepoints
 * (added in 6.3, called from sock_sendmsg()/sock_recvmsg()): optional
 * hooks, whose absence makes those features absent, not zero.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/hash.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <net/sock.h>

#include "compat.h"
#include "hooks.h"
#include "pmu.h"
#include "tasks.h"
#include "track.h"

/* Cache miss: the table, then queue for this interval and cache. */
static noinline notrace void switch_in_slow(struct joules_cpu *jc,
					    struct task_struct *next,
					    struct joules_cache_line *c,
					    unsigned long gen)
{
	struct joules_entry *e = joules_lookup(next);

	jc->cur = e;
	if (!e) {
		/* Not tracked (allocation failed, or not walked yet at load). */
		atomic64_inc(&joules_lookup_misses);
		return;
	}
	joules_enter(e, jc, gen);
	c->e = e;
	c->gen = gen;
}

static __always_inline void switch_in(struct joules_cpu *jc,
				      struct task_struct *next)
{
	struct joules_cache_line *c;
	unsigned long gen;

	if (is_idle_task(next)) {
		jc->cur = NULL;	/* idle time belongs to idle energy */
		WRITE_ONCE(jc->awake, false);
		return;
	}
	if (unlikely(!jc->awake)) {
		/*
		 * Leaving idle. The worker interrupts only awake CPUs when it
		 * closes an interval; say so before reading the generation
		 * (pairs with the barrier after its flip): either it flushes
		 * this CPU or this CPU sees the new generation.
		 */
		WRITE_ONCE(jc->awake, true);
		smp_mb(); /* awake before the generation; see above */
	}
	gen = READ_ONCE(joules_gen);
	/*
	 * A hit means next was queued on this package in this interval
	 * already; with several packages it must also not have run elsewhere
	 * since (its uncounted runtime would be on the other package).
	 */
	c = &jc->cache[hash_ptr(next, JOULES_CACHE_BITS)];
	if (likely(c->gen == gen && READ_ONCE(c->e->task) == next) &&
	    (!static_branch_unlikely(&joules_multi_pkg) ||
	     READ_ONCE(c->e->acct_pkg) == jc->pkg)) {
		jc->cur = c->e;
		return;
	}
	switch_in_slow(jc, next, c, gen);
}

/* Work at switch-out: PMU counts of prev, or prev's final switch. */
static noinline notrace void switch_task_out(struct task_struct *prev,
					     struct task_struct *next,
					     bool dead)
{
	struct joules_cpu *jc = this_cpu_ptr(&joules_cpus);
	struct joules_entry *e = jc->cur;

	if (e && e->task != prev)
		e = NULL;
	if (static_branch_unlikely(&joules_hw_on))
		joules_count_hw(e, jc);
	if (dead) {
		if (!e)
			e = joules_lookup(prev);
		if (e && !test_and_set_bit(JE_DEAD, &e->flags))
			llist_add(&e->dnode, &joules_dying);
	}
	switch_in(jc, next);
}

/*
 * Without a PMU nothing is done at switch-out but for a dying task: the
 * common path is a leaf that only looks at next.
 */
static __always_inline void switch_task(struct task_struct *prev,
					struct task_struct *next, bool dead)
{
	if (static_branch_unlikely(&joules_hw_on) || unlikely(dead)) {
		switch_task_out(prev, next, dead);
		return;
	}
	switch_in(this_cpu_ptr(&joules_cpus), next);
}

/* The probe's arguments depend on the kernel (compat.h). */
static notrace void probe_sched_switch(JL_TP_SWITCH_PROTO)
{
	switch_task(prev, next, jl_prev_state(prev) & TASK_DEAD);
}

/* Every task copy_process() creates, io_uring and vhost workers too. */
static void probe_newtask(JL_TP_NEWTASK_PROTO(t))
{
	jl_probe_enter();
	joules_track_new(t);
	jl_probe_exit();
}

/* The last thing of a task's life: the kernel released it (RCU callback). */
static void probe_free(void *data, struct task_struct *t)
{
	jl_probe_enter();
	if (!joules_untrack(t))
		joules_track_lost(t);
	jl_probe_exit();
}

/*
 * Identity as of exit: exit records are built after the task is gone. A
 * task still waiting for the sweep is tracked first.
 */
static void probe_exit(JL_TP_EXIT_PROTO(t))
{
	jl_probe_enter();
	joules_track_exiting(t);
	joules_exit_identity(t);
	jl_probe_exit();
}

/* exec in a non-leader thread swaps pids with the old leader. */
static void probe_exec(void *data, struct task_struct *t, pid_t old_pid,
		       struct linux_binprm *bprm)
{
	jl_probe_enter();
	if (old_pid != t->pid) {
		joules_track_exec(t);
		joules_exec_swap(t, old_pid);
	}
	jl_probe_exit();
}

/*
 * Network bytes: IPv4/IPv6 sockets only (a Unix socket is IPC, not the
 * network), bytes actually moved (ret > 0), not a peek that leaves them
 * queued. Task context only: the task asked for them.
 */
static bool net_bytes(struct sock *sk, int ret, int flags)
{
	unsigned short family;

	if (ret <= 0 || (flags & MSG_PEEK) || !sk || !in_task())
		return false;
	family = READ_ONCE(sk->sk_family);
	return family == AF_INET || family == AF_INET6;
}

static notrace void probe_send(JL_TP_SOCK_LEN_PROTO(sk, ret, flags))
{
	if (net_bytes(sk, ret, flags)) {
		jl_probe_enter_notrace();
		joules_count_net(JL_F_NET_TX, ret);
		jl_probe_exit_notrace();
	}
}

static notrace void probe_recv(JL_TP_SOCK_LEN_PROTO(sk, ret, flags))
{
	if (net_bytes(sk, ret, flags)) {
		jl_probe_enter_notrace();
		joules_count_net(JL_F_NET_RX, ret);
		jl_probe_exit_notrace();
	}
}

struct hook {
	const char *name;
	void *probe;
	u32 feature;	/* 0: required; else the JL_F_* bit it makes present */
	struct tracepoint *tp;
	bool registered;
};

static struct hook hooks[] = {
	{ "sock_send_length", probe_send, 1U << JL_F_NET_TX },
	{ "sock_recv_length", probe_recv, 1U << JL_F_NET_RX },
	/*
	 * The free hook before any hook that makes entries (new task, exit,
	 * the sweep): an entry made for a task released before it attached
	 * would point at freed memory. Unregistered in reverse: it goes last.
	 */
	{ "sched_process_free", probe_free },
	{ "task_newtask", probe_newtask },
	{ "sched_process_exit", probe_exit },
	{ "sched_process_exec", probe_exec },
	{ "sched_switch", probe_sched_switch },
};

/* Widens the windows between registrations for 90-hook-order; 0 in use. */
static unsigned int hook_gap_ms;
module_param(hook_gap_ms, uint, 0444);
MODULE_PARM_DESC(hook_gap_ms, "Test only: pause between tracepoint registrations at load (ms, at most 1000)");

static void find_tp(struct tracepoint *tp, void *priv)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(hooks); i++)
		if (!strcmp(tp->name, hooks[i].name))
			hooks[i].tp = tp;
}

void joules_hooks_exit(void)
{
	int i;

	for (i = ARRAY_SIZE(hooks) - 1; i >= 0; i--) {
		if (!hooks[i].registered)
			continue;
		tracepoint_probe_unregister(hooks[i].tp, hooks[i].probe, NULL);
		hooks[i].registered = false;
		joules_opt_avail &= ~hooks[i].feature;
	}
	/* No probe is running or will run once this returns. */
	tracepoint_synchronize_unregister();
}

/*
 * Registration order matters (hooks[]): the free hook first, then the
 * hooks that make entries, so that no task is born or released unseen
 * while the sweep walks the existing ones; sched_switch last.
 */
int joules_hooks_init(void)
{
	unsigned int i;
	int err;

	for_each_kernel_tracepoint(find_tp, NULL);
	for (i = 0; i < ARRAY_SIZE(hooks); i++) {
		if (!hooks[i].tp && hooks[i].feature) {
			pr_info("no tracepoint %s: %s absent\n", hooks[i].name,
				jl_feature_names[__ffs(hooks[i].feature)]);
		} else if (!hooks[i].tp) {
			pr_err("tracepoint %s not found\n", hooks[i].name);
			err = -ENOENT;
			goto fail;
		}
	}
	for (i = 0; i < ARRAY_SIZE(hooks); i++) {
		if (!hooks[i].tp)
			continue;
		if (i == ARRAY_SIZE(hooks) - 1)
			joules_sweep();
		else if (i && hook_gap_ms)
			msleep(min(hook_gap_ms, 1000U));
		err = tracepoint_probe_register(hooks[i].tp, hooks[i].probe, NULL);
		if (err) {
			pr_err("cannot attach to %s: %d\n", hooks[i].name, err);
			goto fail;
		}
		hooks[i].registered = true;
		joules_opt_avail |= hooks[i].feature;
		/* The load, for "born since": from here no task goes unseen. */
		if (hooks[i].probe == probe_free)
			joules_track_loaded();
	}
	return 0;
fail:
	joules_hooks_exit();
	return err;
}
