/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Generic netlink family "joules": the ABI between joules.ko and the tools.
 * Documentation/netlink.rst describes it in prose; this header is the
 * authority for numbers.
 *
 * Compatibility rules (JOULES_GENL_VERSION is the family version that the
 * controller reports):
 *  - attribute and command numbers are never reused or renumbered; new
 *    ones are appended before the __*_MAX sentinels;
 *  - replies may grow new attributes at any time: readers must ignore
 *    attributes they do not know;
 *  - requests are validated strictly: an attribute the module does not know
 *    or a wrong type or length is rejected with -EINVAL, a value out of its
 *    range (a pid, a name or path too long, a flag with a payload, a
 *    meter's age or power) with -ERANGE, each with an extack message, so a
 *    newer tool learns what an older module cannot do;
 *  - the version is bumped only when the meaning of an existing command or
 *    attribute changes.
 */
#ifndef _UAPI_JOULES_NETLINK_H
#define _UAPI_JOULES_NETLINK_H

#include <linux/types.h>

#define JOULES_GENL_NAME "joules"
#define JOULES_GENL_VERSION 1

/* Multicast groups (joining either needs CAP_NET_ADMIN). */
#define JOULES_GENL_MCGRP_SAMPLES "samples"
#define JOULES_GENL_MCGRP_EXITS "exits"

enum joules_cmd {
	JOULES_CMD_UNSPEC,
	/* Requests (userspace -> module). */
	JOULES_CMD_GET_TASK, /* do: JOULES_A_PID or JOULES_A_TID -> one TASK */
	JOULES_CMD_DUMP_TASKS, /* dump: each readable process (thread) -> TASK */
	JOULES_CMD_GET_NODE, /* do: node totals -> NODE */
	/* Messages from the module. */
	JOULES_CMD_TASK, /* one task's or process's totals */
	JOULES_CMD_NODE, /* cumulative node totals */
	JOULES_CMD_SAMPLE, /* "samples" group: one attribution interval */
	JOULES_CMD_EXIT, /* "exits" group: final totals of an exited task */
	/* cgroups (v2), their totals including their descendants'. */
	JOULES_CMD_GET_CGROUP, /* do: CGROUP_ID or CGROUP_PATH -> one CGROUP */
	JOULES_CMD_DUMP_CGROUPS, /* dump: each readable cgroup -> CGROUP */
	JOULES_CMD_CGROUP, /* one cgroup's totals */
	JOULES_CMD_CGROUP_EXIT, /* "exits" group: final totals of a removed cgroup */
	/*
	 * do (CAP_SYS_ADMIN): one reading of the node's wall meter, stamped by
	 * the module on receipt: METER_NAME and exactly one of METER_UJ or
	 * METER_POWER_UW; METER_RESET when the reading starts a new baseline;
	 * METER_AGE_NS when the feeder knows when it took it.
	 */
	JOULES_CMD_METER_FEED,
	__JOULES_CMD_MAX,
};
#define JOULES_CMD_MAX (__JOULES_CMD_MAX - 1)

/*
 * One attribute space for every command. Energy in microjoules, time in
 * nanoseconds, counters as plain counts, all u64 (padded with JOULES_A_PAD)
 * unless marked otherwise.
 *
 * Counters a PMU may lack (CYCLES, INSTRUCTIONS, CACHE_MISSES) are absent,
 * not zero, when they were not counted; PRESENT says the same as a bitmask.
 * A per-domain energy attribute (PKG_UJ..PSYS_UJ) is present only when its
 * bit is set in DOMAINS.
 */
enum joules_attr {
	JOULES_A_UNSPEC,
	JOULES_A_PAD, /* alignment padding for u64 attributes */

	/* Requests, and identity in TASK/EXIT records. */
	/*
	 * u32. GET_TASK: a process (thread group) id. In records: the task id
	 * (tid), or the tgid in a process record. Caller's pid namespace.
	 */
	JOULES_A_PID,
	JOULES_A_TID, /* u32: GET_TASK: one thread's id */
	JOULES_A_THREADS, /* flag: DUMP_TASKS: one record per thread */

	/* TASK / EXIT records (struct joules_stats). */
	JOULES_A_TGID, /* u32 */
	JOULES_A_UID, /* u32: real uid, caller's user ns */
	JOULES_A_COMM, /* string, NUL-terminated */
	JOULES_A_NR_THREADS, /* u32: threads summed (1 for a thread) */
	JOULES_A_PROCESS, /* flag: the record sums a whole thread group */
	JOULES_A_EXITED, /* flag: final totals */
	JOULES_A_READ_BYTES, /* storage bytes read */
	JOULES_A_WRITE_BYTES, /* storage bytes written */

	/* Energy, in every record that has it. */
	JOULES_A_ENERGY_UJ, /* everything charged (idle + tasks for node) */
	JOULES_A_IDLE_UJ, /* idle share */
	JOULES_A_PKG_UJ, /* per RAPL domain, present when measured */
	JOULES_A_CORE_UJ,
	JOULES_A_DRAM_UJ,
	JOULES_A_PSYS_UJ,
	JOULES_A_DOMAINS, /* u32: JOULES_DOMAIN_* bits */
	JOULES_A_SOURCE, /* u32: JOULES_SOURCE_* bits */
	JOULES_A_MODEL_GEN, /* coefficient set generation */

	/* Model features (task totals, interval deltas, node totals). */
	JOULES_A_CPU_NS,
	JOULES_A_CYCLES, /* absent when not counted */
	JOULES_A_INSTRUCTIONS, /* absent when not counted */
	JOULES_A_CACHE_MISSES, /* absent when not counted */
	JOULES_A_DISK_BYTES, /* storage bytes read + written (SAMPLE, NODE) */
	JOULES_A_PRESENT, /* u32: JOULES_FEAT_* bits of counted features */

	/* SAMPLE records (struct joules_node_sample). */
	JOULES_A_SEQ, /* interval sequence number */
	JOULES_A_REALTIME_NS, /* CLOCK_REALTIME at the end of the interval */
	JOULES_A_MONOTONIC_NS, /* CLOCK_MONOTONIC at the end of the interval */
	JOULES_A_INTERVAL_NS, /* length of the interval */
	JOULES_A_NR_TASKS, /* u32: tasks charged this interval */

	/* NODE records (struct joules_node_totals). */
	JOULES_A_INTERVALS, /* intervals since load */
	JOULES_A_TASK_UJ, /* energy charged to tasks */
	JOULES_A_TASKS_TRACKED, /* live task entries */
	JOULES_A_UPTIME_NS, /* since the module loaded */

	/*
	 * CGROUP / CGROUP_EXIT records, and GET_CGROUP requests. A cgroup
	 * record also carries NR_TASKS (live tasks in it and below), EXITED
	 * (final totals), and the energy and feature attributes of a task
	 * record (READ_BYTES, WRITE_BYTES too).
	 */
	JOULES_A_CGROUP_ID, /* u64: the cgroup's id (its cgroupfs inode number) */
	/*
	 * string: the cgroup's path, "/" being the root of the sender's
	 * cgroup namespace (of the hierarchy's root in CGROUP_EXIT records)
	 */
	JOULES_A_CGROUP_PATH,

	/*
	 * Model features added later (in every record with features):
	 * socket bytes (kernels with the sock_*_length tracepoints, 6.3+;
	 * absent before) and bytes read(2) from files without storage I/O.
	 */
	JOULES_A_NET_TX_BYTES,
	JOULES_A_NET_RX_BYTES,
	JOULES_A_PAGECACHE_BYTES,

	/* SAMPLE: the model's frequency band this interval (bands in sysfs). */
	JOULES_A_BAND, /* u32: index of the coefficient set used */
	JOULES_A_FREQ_MHZ, /* u32: effective frequency; absent: no source */

	/* METER_FEED requests; NODE records of a node with a meter. */
	JOULES_A_METER_NAME, /* string: the meter ("pdu1/outlet4"), <= 31 bytes */
	/*
	 * METER_FEED: the meter's cumulative energy, uJ, in the feeder's own
	 * origin (wraps and several PSUs are the feeder's to resolve); it
	 * must not decrease unless METER_RESET is set. NODE: the meter's
	 * energy counted since the module loaded.
	 */
	JOULES_A_METER_UJ,
	JOULES_A_METER_POWER_UW, /* METER_FEED: power now, uW (meters without energy) */
	JOULES_A_METER_RESET, /* flag: METER_FEED: a new baseline, nothing charged */
	/*
	 * s64 (NODE): the meter's energy minus the node's, uJ, over the
	 * meter's readings so far: what is still to be spread (+) or held back (-)
	 */
	JOULES_A_METER_PENDING_UJ,
	/*
	 * u64 (METER_FEED): how long before the request the feeder took the
	 * reading, ns. The reading is still stamped on receipt, but its
	 * energy and power are over the time between when the readings were
	 * taken (never before the last one), so that one delivered late
	 * neither stretches its own interval nor squeezes the next.
	 */
	JOULES_A_METER_AGE_NS,

	/*
	 * flag (GET_TASK, DUMP_TASKS, GET_CGROUP, DUMP_CGROUPS, GET_NODE):
	 * the lagged view, as readers without CAP_PERFMON always get it:
	 * measured energy at the rates of the last epoch (sysfs
	 * unpriv_interval_ms); NODE then has no per-domain figures and no
	 * meter's books.
	 */
	JOULES_A_LAGGED,
	/* u32 (TASK, CGROUP, NODE): the record is the lagged view, epochs of this many ms */
	JOULES_A_LAG_MS,
	/*
	 * u32 (DUMP_CGROUPS): a file descriptor of the sender's, open on a
	 * cgroup v2 directory: the dump holds that cgroup and those below it,
	 * with paths relative to it, instead of the sender's cgroup
	 * namespace. Reading each cgroup needs what it always needs. For an
	 * agent in a container (its own cgroup namespace) given the host's
	 * cgroup2 mount read-only.
	 */
	JOULES_A_CGROUP_ROOT_FD,

	__JOULES_A_MAX,
};
#define JOULES_A_MAX (__JOULES_A_MAX - 1)

/* JOULES_A_SOURCE bits (same values as the module's JOULES_SRC_*). */
#define JOULES_SOURCE_MODEL 0x1
#define JOULES_SOURCE_RAPL 0x2
#define JOULES_SOURCE_METER 0x4 /* scaled to a wall meter's readings */

/* JOULES_A_DOMAINS bits: 1 << (JOULES_A_<domain>_UJ - JOULES_A_PKG_UJ). */
#define JOULES_DOMAIN_PKG 0x1
#define JOULES_DOMAIN_CORE 0x2
#define JOULES_DOMAIN_DRAM 0x4
#define JOULES_DOMAIN_PSYS 0x8
#define JOULES_NR_DOMAINS 4

/* JOULES_A_PRESENT bits, in the order of the model's features. */
#define JOULES_FEAT_CPU_NS 0x1
#define JOULES_FEAT_CYCLES 0x2
#define JOULES_FEAT_INSTRUCTIONS 0x4
#define JOULES_FEAT_CACHE_MISSES 0x8
#define JOULES_FEAT_DISK_BYTES 0x10
#define JOULES_FEAT_NET_TX_BYTES 0x20
#define JOULES_FEAT_NET_RX_BYTES 0x40
#define JOULES_FEAT_PAGECACHE_BYTES 0x80

#endif /* _UAPI_JOULES_NETLINK_H */
