/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Record types shared by the files of joules.ko: what a reader gets for a
 * task, a cgroup and the node. Types only; each file's functions are
 * declared in that file's own header (kmod/<file>.h).
 */
#ifndef JOULES_H
#define JOULES_H

#include <linux/types.h>
#include <linux/sched.h>
#include "core.h"

#define JOULES_NAME "joules"

/* Who charged a task's energy (bits; a task may have seen both). */
#define JOULES_SRC_MODEL 0x1
#define JOULES_SRC_RAPL 0x2
#define JOULES_SRC_METER 0x4	/* a wall meter's energy (wallmeter.c) */

/* Operator's choice in sysfs `source`. */
enum joules_source_mode {
	JOULES_MODE_AUTO,	/* RAPL where a meter is registered, model otherwise */
	JOULES_MODE_RAPL,	/* measured only; without a meter nothing is charged */
	JOULES_MODE_MODEL,	/* model even where a meter exists */
};

/*
 * A snapshot of one task's (or, with process = true, one thread group's)
 * totals, taken for a reader: the per-pid file, netlink, exit records.
 */
struct joules_stats {
	pid_t pid;		/* tid, or tgid for a process; in the reader's pid ns */
	pid_t tgid;
	uid_t uid;		/* real uid, in the reader's user ns */
	char comm[TASK_COMM_LEN];
	u64 energy_uj;		/* everything charged: pkg + dram (rapl) or model */
	u64 domain_uj[JL_NR_DOMAINS];	/* measured per RAPL domain */
	u64 idle_uj;		/* idle share, when sysfs idle_split is on */
	/* Both settled per epoch (totals.h); shown when lag_ms > 0. */
	u64 lag_energy_uj;
	u64 lag_domain_uj[JL_NR_DOMAINS];
	u64 lag_idle_uj;
	u32 lag_ms;		/* 0: live figures; else the epoch of the rates */
	u64 cpu_ns;
	u64 cycles;
	u64 instructions;
	u64 cache_misses;
	u64 net_tx_bytes;
	u64 net_rx_bytes;
	u64 pagecache_bytes;
	u64 read_bytes;
	u64 write_bytes;
	/* JL_F_* bits of optional counters: PMU, socket bytes (6.3+), page cache */
	u32 opt_present;
	u32 domains;		/* JL_D_* bits this task was charged from */
	u32 source_mask;	/* JOULES_SRC_* */
	u32 nr_threads;		/* threads summed (1 for a task) */
	u64 model_generation;	/* coefficient set in force at the last charge */
	bool exited;		/* final totals: the task has exited */
};

/* One attribution interval of the whole node (the trainer's record). */
struct joules_node_sample {
	u64 seq;
	u64 realtime_ns;	/* CLOCK_REALTIME at the end of the interval */
	u64 monotonic_ns;	/* CLOCK_MONOTONIC at the end of the interval */
	u64 interval_ns;
	u32 source;		/* JOULES_SRC_* that charged this interval */
	u32 domains;		/* JL_D_* bits measured (rapl) */
	u64 model_generation;
	u64 energy_uj;		/* node energy this interval (idle + tasks) */
	u64 idle_uj;		/* of which idle */
	/* Both settled per epoch (worker.c): the lagged view. */
	u64 lag_uj;
	u64 lag_idle_uj;
	u64 domain_uj[JL_NR_DOMAINS];
	struct jl_feat feat;	/* feature deltas summed over all tasks */
	u32 nr_tasks;		/* tasks charged this interval */
	u32 freq_mhz;		/* node's effective frequency; 0: unknown */
	u32 band;		/* the model's band used this interval */
};

/* A cgroup's totals (its own tasks' and its descendants'), for a reader. */
struct joules_cg_stats {
	u64 id;			/* cgroup id (the cgroupfs inode number) */
	const char *path;	/* relative to a cgroup namespace's root */
	u32 nr_tasks;		/* live tasks in it and below */
	struct joules_stats st;	/* energy and counters; no pid, tgid, uid, comm */
};

/* Cumulative node totals since load (netlink GET_NODE, sysfs). */
struct joules_node_totals {
	u64 intervals;
	u64 energy_uj;
	u64 idle_uj;
	u64 task_uj;
	u64 lag_uj, lag_idle_uj;	/* the lagged view (worker.c) */
	u64 domain_uj[JL_NR_DOMAINS];
	struct jl_feat feat;
	u32 source;		/* source of the latest interval */
	u32 domains;
	u64 model_generation;
	u64 tasks_tracked;	/* live task entries */
	u64 uptime_ns;		/* since the module loaded */
};

#endif /* JOULES_H */
