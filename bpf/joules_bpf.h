/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Map layouts shared by the BPF collector (bpf/joules.bpf.c) and its loader
 * (user/joules-bpf). Plain fixed-width fields, no pointers, 8-byte aligned,
 * so both sides agree without packing attributes. Documentation/bpf.rst
 * describes the maps; JB_ABI changes whenever a layout does, so a reader
 * never misreads maps pinned by a different build.
 */
#ifndef JOULES_BPF_H
#define JOULES_BPF_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#define JB_ABI 2
#define JB_COMM_LEN 16

/* Default and largest --max-tasks (the largest pid_max). */
#define JB_DEFAULT_MAX_TASKS 16384
#define JB_MAX_TASKS_LIMIT 4194304

/* Period of the per-CPU tick that charges a task still on the CPU. */
#define JB_TICK_NS 100000000ULL

/* Hardware counters, in kmod/core.h feature order (JL_F_CYCLES + i). */
enum jb_hw { JB_HW_CYCLES, JB_HW_INSTR, JB_HW_MISSES, JB_NR_HW };

/* Counters of the `stats` array map (u64 each). */
enum jb_stat {
	JB_ST_TASKS_FULL, /* a task went uncounted: task map full */
	JB_ST_PROCS_FULL, /* an exited thread's totals lost: proc map full */
	JB_ST_EXITS, /* threads folded at their final switch-out */
	JB_ST_UNTRACKED, /* switch-outs of tasks without an entry */
	JB_ST_TICKS, /* tick programs that ran */
	JB_NR_STATS
};

/* What a task (or a thread group's exited threads) used. */
struct jb_counts {
	__u64 cpu_ns; /* on-CPU time: se.sum_exec_runtime deltas */
	__u64 hw[JB_NR_HW]; /* valid for bits set in hw_seen */
	__u64 read_bytes; /* storage I/O (task I/O accounting) */
	__u64 write_bytes;
};

/* `tasks` hash map: key __u32 tid (initial pid namespace). */
struct jb_task {
	struct jb_counts c;
	__u64 last_exec; /* se.sum_exec_runtime already counted */
	__u64 last_read; /* ioac.read_bytes already counted */
	__u64 last_write;
	__u64 start_ns; /* task->start_time */
	/*
	 * Which task the entry belongs to (its kernel stack's address mixed
	 * with a per-load salt, so the map does not hand out kernel
	 * addresses): an exec in a non-leader thread swaps two threads' pids,
	 * so a tid alone can name another task's entry for a moment.
	 */
	__u64 ident;
	__u32 tgid;
	__u32 uid; /* real uid */
	__u32 hw_seen; /* bit i: hw[i] was counted by a PMU */
	__u32 epoch; /* jb_meta.epoch of the last charge */
	char comm[JB_COMM_LEN];
};

/*
 * `procs` hash map: key __u32 tgid. Folded totals of a thread group's
 * threads that have exited; deleted when the group leader is released.
 * Several threads may fold at once, hence counts of threads that had each
 * counter instead of a bit mask (BPF has no atomic OR before v3).
 */
struct jb_proc {
	struct jb_counts c;
	__u64 hw_threads[JB_NR_HW]; /* folded threads that had hw[i] */
	__u64 leader_start_ns; /* group leader's start_time */
	__u64 nr_dead; /* threads folded */
	__u32 uid;
	__u32 leader_dead; /* the leader itself has exited */
	char comm[JB_COMM_LEN]; /* the leader's, once it has exited */
};

/* `cpus` per-CPU array (one element): node totals and counter state. */
struct jb_cpu {
	struct jb_counts c; /* everything charged to tasks on this CPU */
	__u64 hw_last[JB_NR_HW]; /* last raw counter value read here */
	__u64 ran; /* first charges of a task in an epoch */
	__u64 switches;
	__u32 hw_valid; /* bit i: hw_last[i] is a real reading */
	__u32 hw_seen; /* bit i: a delta of hw[i] was counted here */
};

/* `meta` array (one element): written by the loader, read by everyone. */
struct jb_meta {
	__u32 abi; /* JB_ABI */
	__u32 loader_pid; /* the process that holds the collector */
	__u32 max_tasks;
	__u32 hw_present; /* bit i: an event for hw[i] on every online CPU */
	__u32 nr_cpus; /* possible CPUs */
	__u32 epoch; /* bumped by `record` once per sample */
	__u64 tick_ns; /* 0: no tick (its events could not be opened) */
	__u64 start_ns; /* CLOCK_MONOTONIC when attached */
};

#endif /* JOULES_BPF_H */
