// SPDX-License-Identifier: GPL-2.0
/*
 * joules BPF collector: the module's per-task counters (kmod/hooks.c,
 * kmod/tasks.c) where an unsigned module may not be loaded, compiled once
 * and relocated to the running kernel with CO-RE.
 *
 * At each context switch the outgoing task is charged the growth of its
 * se.sum_exec_runtime (the scheduler's own runtime, the value the module
 * uses), of its I/O accounting bytes and, where user space opened PMU
 * events, of this CPU's hardware counters. A per-CPU tick (a cpu-clock
 * perf event) charges a task that stays on the CPU for long, the way the
 * module's interval IPI does. At a thread's final switch-out its totals are
 * folded into its thread group's `procs` entry and its own entry goes, so a
 * process keeps the counts of its exited threads until it is released.
 *
 * No handler sleeps, and maps are preallocated. sched_switch runs with the
 * runqueue lock held and interrupts off, the perf tick in its interrupt;
 * only they use the per-CPU map. The fork, exec and free handlers touch
 * hash maps and atomics only: after 6.12 tracepoint programs may be
 * preempted (they run with migration off, under RCU).
 * A task's entry is written only where the task runs (or, at fork and
 * release, where it cannot run), so plain stores suffice; procs entries take
 * atomic adds because threads of one group exit on several CPUs at once.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "joules_bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* include/linux/sched.h; a state bit, stable since 2.6. */
#define TASK_DEAD 0x0080
#define E2BIG 7
#define ENOMEM 12

/* Possible CPUs, for the index into hw_events (set by the loader). */
const volatile __u32 nr_cpus = 1;
/* Mixed into jb_task.ident (random, set by the loader). */
const volatile __u64 ident_salt = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, JB_DEFAULT_MAX_TASKS); /* --max-tasks */
	__type(key, __u32);
	__type(value, struct jb_task);
} tasks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, JB_DEFAULT_MAX_TASKS); /* --max-tasks */
	__type(key, __u32);
	__type(value, struct jb_proc);
} procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct jb_cpu);
} cpus SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, JB_NR_STATS);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct jb_meta);
} meta SEC(".maps");

/* Counter i of CPU c at index i * nr_cpus + c (sized by the loader). */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} hw_events SEC(".maps");

/* task_struct.state became __state in 5.14: CO-RE picks whichever exists. */
struct task_struct___new {
	unsigned int __state;
} __attribute__((preserve_access_index));

struct task_struct___old {
	long state;
} __attribute__((preserve_access_index));

static __always_inline void stat_inc(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &which);

	if (v)
		__sync_fetch_and_add(v, 1);
}

static __always_inline bool task_dead(struct task_struct *t)
{
	struct task_struct___new *tn = (void *)t;
	struct task_struct___old *to = (void *)t;

	if (bpf_core_field_exists(tn->__state))
		return BPF_CORE_READ(tn, __state) & TASK_DEAD;
	return BPF_CORE_READ(to, state) & TASK_DEAD;
}

static __always_inline void task_io(struct task_struct *t, __u64 *rd, __u64 *wr)
{
	*rd = 0;
	*wr = 0;
	if (bpf_core_field_exists(t->ioac)) {
		*rd = BPF_CORE_READ(t, ioac.read_bytes);
		*wr = BPF_CORE_READ(t, ioac.write_bytes);
	}
}

/*
 * The address of the task's kernel stack: unique among living tasks, and a
 * plain number to the verifier (no arithmetic on a task pointer).
 */
static __always_inline __u64 task_ident(struct task_struct *t)
{
	return (__u64)BPF_CORE_READ(t, stack) ^ ident_salt;
}

/* t's entry, if the one under its tid is t's (see jb_task.ident). */
static __always_inline struct jb_task *task_get(struct task_struct *t,
						__u32 tid)
{
	struct jb_task *e = bpf_map_lookup_elem(&tasks, &tid);

	return e && e->ident == task_ident(t) ? e : NULL;
}

/*
 * A new entry counts from now: the task's runtime and I/O so far happened
 * before the collector saw it (0 for a task caught at fork).
 */
static __always_inline struct jb_task *task_create(struct task_struct *t,
						   __u32 tid)
{
	struct jb_task e = {};
	int err; /* the helper's int, zero-extended in r0: compare as int */

	e.last_exec = BPF_CORE_READ(t, se.sum_exec_runtime);
	task_io(t, &e.last_read, &e.last_write);
	e.start_ns = BPF_CORE_READ(t, start_time);
	e.ident = task_ident(t);
	e.tgid = BPF_CORE_READ(t, tgid);
	e.uid = BPF_CORE_READ(t, real_cred, uid.val);
	BPF_CORE_READ_STR_INTO(&e.comm, t, comm);
	err = bpf_map_update_elem(&tasks, &tid, &e, BPF_ANY);
	if (err) {
		/* -EBUSY: the tick interrupted an update here; not a full map. */
		if (err == -E2BIG || err == -ENOMEM)
			stat_inc(JB_ST_TASKS_FULL);
		return NULL;
	}
	return bpf_map_lookup_elem(&tasks, &tid);
}

/*
 * Read this CPU's hardware counters: d[i] is the growth since the previous
 * read on this CPU, valid for the bits returned. A failed read (no event
 * here) forgets the last value, so the next success starts afresh instead
 * of charging a gap.
 */
static __always_inline __u32 hw_read(struct jb_cpu *c, __u32 present, __u64 *d)
{
	__u32 cpu = bpf_get_smp_processor_id(), ok = 0;

#pragma unroll
	for (int i = 0; i < JB_NR_HW; i++) {
		struct bpf_perf_event_value v = {};
		__u32 bit = 1U << i;

		d[i] = 0;
		if (!(present & bit))
			continue;
		/* running == 0: never scheduled (no room on the PMU). */
		if (bpf_perf_event_read_value(&hw_events,
					      (__u64)i * nr_cpus + cpu, &v,
					      sizeof(v)) ||
		    !v.running) {
			c->hw_valid &= ~bit;
			continue;
		}
		if (c->hw_valid & bit) {
			d[i] = v.counter - c->hw_last[i];
			ok |= bit;
		}
		c->hw_last[i] = v.counter;
		c->hw_valid |= bit;
	}
	return ok;
}

/* Charge task t (entry e) what it used since its last charge. */
static __always_inline void charge(struct task_struct *t, struct jb_task *e,
				   struct jb_cpu *c, const __u64 *hw,
				   __u32 hw_ok, __u32 epoch)
{
	__u64 rt = BPF_CORE_READ(t, se.sum_exec_runtime);
	__u64 rd, wr, d;

	/* The runtime only grows; anything else is not a real delta. */
	d = rt > e->last_exec ? rt - e->last_exec : 0;
	e->last_exec = rt;
	e->c.cpu_ns += d;
	c->c.cpu_ns += d;

	task_io(t, &rd, &wr);
	d = rd > e->last_read ? rd - e->last_read : 0;
	e->last_read = rd;
	e->c.read_bytes += d;
	c->c.read_bytes += d;
	d = wr > e->last_write ? wr - e->last_write : 0;
	e->last_write = wr;
	e->c.write_bytes += d;
	c->c.write_bytes += d;

#pragma unroll
	for (int i = 0; i < JB_NR_HW; i++) {
		e->c.hw[i] += hw[i];
		c->c.hw[i] += hw[i];
	}
	e->hw_seen |= hw_ok;
	c->hw_seen |= hw_ok;

	if (e->epoch != epoch) {
		e->epoch = epoch;
		c->ran++;
	}
}

/*
 * Add an entry's totals to its thread group's `procs` entry (created with
 * leader_start if missing) and delete the entry: at a thread's final
 * switch-out, or for an entry whose task can no longer be looked up by its
 * tid (see jb_exec). Readers see the counts in one place or the other (for
 * an instant in both, or neither: documented).
 */
static __always_inline void fold(__u32 tid, struct jb_task *e,
				 __u64 leader_start)
{
	__u32 tgid = e->tgid;
	struct jb_proc *p = bpf_map_lookup_elem(&procs, &tgid);

	if (!p) {
		struct jb_proc init = {};

		init.leader_start_ns = leader_start;
		init.uid = e->uid;
		/* EEXIST: another thread of the group created it just now. */
		bpf_map_update_elem(&procs, &tgid, &init, BPF_NOEXIST);
		p = bpf_map_lookup_elem(&procs, &tgid);
	}
	if (p) {
		__sync_fetch_and_add(&p->c.cpu_ns, e->c.cpu_ns);
		__sync_fetch_and_add(&p->c.read_bytes, e->c.read_bytes);
		__sync_fetch_and_add(&p->c.write_bytes, e->c.write_bytes);
#pragma unroll
		for (int i = 0; i < JB_NR_HW; i++) {
			if (!(e->hw_seen & (1U << i)))
				continue;
			__sync_fetch_and_add(&p->c.hw[i], e->c.hw[i]);
			__sync_fetch_and_add(&p->hw_threads[i], 1);
		}
		__sync_fetch_and_add(&p->nr_dead, 1);
		if (tid == tgid) {
			__builtin_memcpy(p->comm, e->comm, sizeof(p->comm));
			p->leader_dead = 1;
		}
		stat_inc(JB_ST_EXITS);
	} else {
		stat_inc(JB_ST_PROCS_FULL);
	}
	bpf_map_delete_elem(&tasks, &tid);
}

static __always_inline struct jb_meta *get_meta(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&meta, &zero);
}

static __always_inline struct jb_cpu *get_cpu(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&cpus, &zero);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(jb_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	struct jb_meta *m = get_meta();
	struct jb_cpu *c = get_cpu();
	__u64 hw[JB_NR_HW];
	__u32 tid, ok;
	struct jb_task *e;

	if (!m || !c)
		return 0;
	/* Read at every switch: the idle task's counts belong to nobody. */
	ok = hw_read(c, m->hw_present, hw);
	c->switches++;

	tid = BPF_CORE_READ(prev, pid);
	if (tid) { /* pid 0: this CPU's idle task */
		e = task_get(prev, tid);
		if (e) {
			charge(prev, e, c, hw, ok, m->epoch);
			/* exec may have renamed it since the last switch */
			BPF_CORE_READ_STR_INTO(&e->comm, prev, comm);
			if (task_dead(prev))
				fold(tid, e,
				     BPF_CORE_READ(prev, group_leader,
						   start_time));
		} else if (!task_dead(prev)) {
			stat_inc(JB_ST_UNTRACKED);
		}
	}

	/*
	 * Running since before we attached: count from now. Not over another
	 * task's entry under this tid (an exec in progress, see jb_exec).
	 */
	tid = BPF_CORE_READ(next, pid);
	if (tid && !bpf_map_lookup_elem(&tasks, &tid))
		task_create(next, tid);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(jb_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 tid = BPF_CORE_READ(child, pid),
	      tgid = BPF_CORE_READ(child, tgid);
	struct jb_task *old;

	/*
	 * A new process reuses a tgid: whatever an earlier process of that
	 * tgid left behind (a fold that lost the race with its release) goes.
	 */
	if (tid == tgid)
		bpf_map_delete_elem(&procs, &tgid);
	/* A new tid: an entry under it is a gone task's, not yet folded. */
	old = bpf_map_lookup_elem(&tasks, &tid);
	if (old)
		fold(tid, old, 0);
	task_create(child, tid);
	return 0;
}

/*
 * exec in a thread that is not the group leader (de_thread()): the kernel
 * swaps its pid with the leader's (5.12+; before, both keep the tgid) and
 * releases the old leader, whose final switch-out may come before or after
 * the swap. Move the execing thread's entry to its new tid; an entry still
 * there is the old leader's, not folded because its final switch-out came
 * after the swap (under the other tid, which then matched nothing): fold it
 * now. The group has a living leader again.
 */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(jb_exec, struct task_struct *p, pid_t old_pid,
	     struct linux_binprm *bprm)
{
	__u32 tid = BPF_CORE_READ(p, pid), old = old_pid, tgid;
	struct jb_task copy, *e, *there;
	struct jb_proc *g;

	if (old == tid) {
		e = task_get(p, tid);
		if (e)
			BPF_CORE_READ_STR_INTO(&e->comm, p, comm);
		return 0;
	}
	e = task_get(p, old);
	if (!e)
		return 0;
	copy = *e;
	BPF_CORE_READ_STR_INTO(&copy.comm, p, comm);
	there = bpf_map_lookup_elem(&tasks, &tid);
	if (there && there->ident != copy.ident)
		fold(tid, there, BPF_CORE_READ(p, start_time));
	if (bpf_map_update_elem(&tasks, &tid, &copy, BPF_ANY))
		stat_inc(JB_ST_TASKS_FULL);
	bpf_map_delete_elem(&tasks, &old);
	tgid = copy.tgid;
	g = bpf_map_lookup_elem(&procs, &tgid);
	if (g && tid == tgid)
		g->leader_dead = 0;
	return 0;
}

/* The kernel releases a task (after its final switch-out). */
SEC("tp_btf/sched_process_free")
int BPF_PROG(jb_free, struct task_struct *p)
{
	__u32 tid = BPF_CORE_READ(p, pid), tgid = BPF_CORE_READ(p, tgid);
	struct jb_proc *g;

	/* Normally gone at the final switch-out; this catches the rest. */
	if (task_get(p, tid))
		bpf_map_delete_elem(&tasks, &tid);
	/*
	 * The process is gone with its leader; not with an old leader that
	 * an exec replaced (before 5.12 it keeps the tgid as its pid).
	 */
	if (tid == tgid && BPF_CORE_READ(p, group_leader) == p) {
		g = bpf_map_lookup_elem(&procs, &tgid);
		if (g && g->leader_start_ns == BPF_CORE_READ(p, start_time))
			bpf_map_delete_elem(&procs, &tgid);
	}
	return 0;
}

/*
 * Per-CPU tick (cpu-clock perf event, hardirq): charge the task on this
 * CPU, so a busy loop that is never switched out still shows its time.
 */
SEC("perf_event")
int jb_tick(struct bpf_perf_event_data *ctx)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	struct jb_meta *m = get_meta();
	struct jb_cpu *c = get_cpu();
	__u64 hw[JB_NR_HW];
	struct jb_task *e;
	__u32 tid, ok;

	if (!m || !c)
		return 0;
	stat_inc(JB_ST_TICKS);
	ok = hw_read(c, m->hw_present, hw);
	tid = BPF_CORE_READ(t, pid);
	if (!tid)
		return 0;
	e = task_get(t, tid);
	if (e)
		charge(t, e, c, hw, ok, m->epoch);
	else if (!bpf_map_lookup_elem(&tasks, &tid))
		task_create(t, tid);
	return 0;
}
