/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Records the joules tools show: plain C, independent of where the
 * numbers came from. user/lib/nl.c fills them from the module's netlink
 * messages and joules-bpf fills them from its BPF maps; out.h prints them
 * and top.h keeps the `top` tables of them.
 *
 * Absent is not zero: a counter the hardware or kernel did not count
 * (cycles, instructions, cache misses without a PMU; socket bytes before
 * 6.3; page-cache reads without CONFIG_TASK_XACCT) has its REC_F() bit
 * clear in `present`; a RAPL domain is there only when its bit is set in
 * `domains`.
 */
#ifndef JOULES_REC_H
#define JOULES_REC_H

#include <stdbool.h>
#include <stdint.h>

#include "core.h"

/*
 * Features and RAPL domains are the attribution core's (kmod/core.h: enum
 * jl_feature, JL_F_*, and enum jl_domain, JL_D_*), with their names
 * (jl_feature_names[], jl_domain_names[]): feat[] and domain_uj[] are
 * indexed by them. REC_F(f) is feature f's bit in `present`.
 */
#define REC_F(f) (1u << (f))

/* Source bits (who charged the energy). */
#define REC_SRC_MODEL 0x1
#define REC_SRC_RAPL 0x2
#define REC_SRC_METER 0x4 /* a wall meter's energy (joules-meterd) */

/* One task's or one process's totals (GET_TASK, DUMP_TASKS, exit records). */
struct task_rec {
	uint32_t pid; /* tid, or tgid for a process record */
	uint32_t tgid;
	uint32_t uid;
	uint32_t nr_threads;
	char comm[32];
	bool process; /* sums a whole thread group */
	bool exited; /* final totals */
	uint32_t source; /* REC_SRC_* */
	uint32_t domains; /* bits of domain_uj[] that are present */
	uint32_t present; /* REC_F_* bits of feat[] that are present */
	uint64_t energy_uj;
	uint64_t idle_uj;
	uint64_t domain_uj[JL_NR_DOMAINS];
	uint64_t model_generation;
	uint64_t feat[JL_NR_FEATURES]; /* JL_F_DISK unused: see below */
	uint64_t read_bytes;
	uint64_t write_bytes;
	uint32_t lag_ms; /* 0: live; else the lagged view's epoch, ms */
};

/* One attribution interval of the node (the trainer's row). */
struct sample_rec {
	uint64_t seq;
	uint64_t realtime_ns;
	uint64_t monotonic_ns;
	uint64_t interval_ns;
	uint32_t source;
	uint32_t domains;
	uint32_t present;
	uint32_t nr_tasks;
	uint64_t model_generation;
	uint64_t energy_uj;
	uint64_t idle_uj;
	uint64_t domain_uj[JL_NR_DOMAINS];
	uint64_t feat[JL_NR_FEATURES];
	/*
	 * The node's effective clock frequency this interval (MHz; 0:
	 * unknown, no frequency source) and the model's frequency band the
	 * module used (0 with a one-band model).
	 */
	uint32_t freq_mhz;
	uint32_t band;
};

/*
 * One cgroup's totals, its descendants' included (GET_CGROUP,
 * DUMP_CGROUPS, cgroup exit records). Energy and feature fields as in
 * task_rec.
 */
struct cgroup_rec {
	uint64_t id;
	char path[4096]; /* "/" is the root of the reader's cgroup namespace */
	uint32_t nr_tasks; /* live tasks in it and below */
	bool exited; /* final totals of a removed cgroup */
	uint32_t source;
	uint32_t domains;
	uint32_t present;
	uint64_t energy_uj;
	uint64_t idle_uj;
	uint64_t domain_uj[JL_NR_DOMAINS];
	uint64_t model_generation;
	uint64_t feat[JL_NR_FEATURES];
	uint64_t read_bytes;
	uint64_t write_bytes;
	uint32_t lag_ms; /* as in task_rec */
};

/* Cumulative node totals since the module loaded. */
struct node_rec {
	uint32_t version; /* netlink family version, 0 if unknown */
	uint32_t source;
	uint32_t domains;
	uint32_t present;
	uint64_t intervals;
	uint64_t energy_uj;
	uint64_t idle_uj;
	uint64_t task_uj;
	uint64_t domain_uj[JL_NR_DOMAINS];
	uint64_t feat[JL_NR_FEATURES];
	uint64_t model_generation;
	uint64_t tasks_tracked;
	uint64_t uptime_ns;
	char meter_name[32]; /* "" until a wall meter has fed the node */
	uint64_t meter_uj; /* the meter's total, on the node's scale */
	int64_t meter_pending_uj; /* found, not yet spread (+) or held back (-) */
	uint32_t lag_ms; /* as in task_rec (no domains, no meter then) */
};

#endif /* JOULES_REC_H */
