/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Records the joules tools show, and their output as text, JSON and CSV.
 *
 * The record structs are plain C, independent of where the numbers came
 * from: user/lib/nl.c fills them from the module's netlink messages and
 * joules-bpf fills them from its BPF maps, so `show`, `top`, `watch` and
 * `record` print the same way whatever the source.
 *
 * Absent is not zero: a counter the hardware or kernel did not count
 * (cycles, instructions, cache misses without a PMU; socket bytes before
 * 6.3; page-cache reads without CONFIG_TASK_XACCT) has its REC_F_* bit clear in
 * `present` and is printed as absent (no text line, JSON null, empty CSV
 * field); a RAPL domain is printed only when its bit is set in `domains`.
 */
#ifndef JOULES_OUT_H
#define JOULES_OUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <regex.h>

#include "cgname.h"
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
};

/* "rapl", "model", "rapl+model" or "none". */
const char *out_source_name(uint32_t source);

/* Task record as "key: value" lines, the per-pid file's layout. */
void out_task_text(FILE *fp, const struct task_rec *t);
/* Task record as one JSON object and a newline. */
void out_task_json(FILE *fp, const struct task_rec *t);
/* The same with a leading "type":"exit" member, for event streams. */
void out_exit_json(FILE *fp, const struct task_rec *t);
/* One line: "exit pid=... comm=... energy_uj=..." for event streams. */
void out_task_line(FILE *fp, const struct task_rec *t);

void out_sample_line(FILE *fp, const struct sample_rec *s);
void out_sample_json(FILE *fp, const struct sample_rec *s);

void out_node_text(FILE *fp, const struct node_rec *n);
void out_node_json(FILE *fp, const struct node_rec *n);

/*
 * Cgroup record as energy.stat's "key: value" lines (path, id, tasks, then
 * the per-pid file's energy lines), followed by what cgname recognizes in
 * the path: kind always; runtime, container_id, pod_uid, qos and unit when
 * known. A removed cgroup's final record adds "state: removed".
 */
void out_cgroup_text(FILE *fp, const struct cgroup_rec *c);
/* The same as one JSON object (unknown names are null) and a newline. */
void out_cgroup_json(FILE *fp, const struct cgroup_rec *c);
/* The same with a leading "type":"cgroup_exit" member, for event streams. */
void out_cgroup_exit_json(FILE *fp, const struct cgroup_rec *c);
/* One line: "cgroup-exit path=... id=... container_id=... energy_uj=...". */
void out_cgroup_line(FILE *fp, const struct cgroup_rec *c);

/* Write a JSON string literal (quotes and escapes included). */
void out_json_string(FILE *fp, const char *s);

/*
 * The trainer's CSV (`joulesctl record`): header, then one row per sample.
 * Absent features are empty fields. Columns added after the first layout
 * are appended (the trainer finds columns by name). Both return 0 or -errno (EIO and the
 * like: the row is flushed so a crash loses at most the current line).
 */
#define OUT_RECORD_HEADER                                               \
	"realtime_ns,monotonic_ns,interval_ns,source,model_generation," \
	"energy_uj,idle_uj,cpu_ns,cycles,instructions,cache_misses,"    \
	"disk_bytes,tasks,net_tx_bytes,net_rx_bytes,pagecache_bytes,"  \
	"freq_mhz,band"
int out_record_header(FILE *fp);
int out_record_row(FILE *fp, const struct sample_rec *s);

/*
 * The `top` table: feed successive snapshots of all tasks; each update
 * computes every task's power over the time since the previous snapshot
 * (energy delta / elapsed time) and sorts by it.
 */
struct top_row {
	struct task_rec rec;
	double power_w; /* < 0: no previous snapshot of this task */
	double cpu_pct; /* of one CPU */
};

struct top_state {
	struct top_row *rows; /* sorted, power descending */
	size_t nrows;
	struct task_rec *prev; /* previous snapshot, sorted by pid */
	size_t nprev;
	uint64_t prev_ns; /* CLOCK_MONOTONIC of the previous snapshot */
	uint64_t now_ns;
	unsigned int frames;
};

void top_init(struct top_state *ts);
void top_free(struct top_state *ts);
/* recs[0..n) is a full snapshot taken at now_ns; returns 0 or -ENOMEM. */
int top_update(struct top_state *ts, const struct task_rec *recs, size_t n,
	       uint64_t now_ns);
/*
 * Print the table: the caller's summary line (may be NULL), a totals line,
 * a header and at most max_rows rows (0: all). Tasks first seen in this
 * snapshot show "-" for power and CPU.
 */
void top_print(const struct top_state *ts, FILE *fp, size_t max_rows,
	       const char *summary);

/*
 * The `top --cgroups` table: one row per cgroup (its descendants included),
 * power over the time since the previous snapshot, matched by cgroup id.
 * Cgroup totals are hierarchical, so rows are not to be summed: a parent's
 * row holds its children's.
 */
struct cgtop_row {
	const struct cgroup_rec *rec; /* in cgtop_state.snap */
	struct cgname name;
	double power_w; /* < 0: no previous snapshot of this cgroup */
	double cpu_pct; /* of one CPU */
};

struct cgtop_state {
	unsigned int max_depth; /* rows: cgroups at most this deep ("/" is 0) */
	char *match_src; /* the match's text, for the count line; NULL: none */
	regex_t match; /* rows: only paths that match, if match_src */
	struct cgroup_rec *snap; /* this snapshot's rows' records, by id */
	size_t nsnap;
	struct cgtop_row *rows; /* power descending */
	size_t nrows;
	size_t seen; /* cgroups in the snapshot, at any depth */
	uint64_t prev_ns, now_ns;
	unsigned int frames;
};

void cgtop_init(struct cgtop_state *ts, unsigned int max_depth);
void cgtop_free(struct cgtop_state *ts);
/*
 * Rows only for cgroups whose path matches re, a POSIX extended regular
 * expression, unanchored (as joules-exporter's --cgroups.match), on top of
 * the depth. 0, -EINVAL with the reason in why[size], or -ENOMEM.
 */
int cgtop_set_match(struct cgtop_state *ts, const char *re, char *why,
		    size_t size);
/* Does the cgroup at path get a row (depth and match)? */
bool cgtop_wanted(const struct cgtop_state *ts, const char *path);
/* recs[0..n) is a full snapshot taken at now_ns; returns 0 or -ENOMEM. */
int cgtop_update(struct cgtop_state *ts, const struct cgroup_rec *recs,
		 size_t n, uint64_t now_ns);
/*
 * Print the summary line (may be NULL), a count line, a header and at most
 * max_rows rows (0: all). Unknown names and power not yet measured are "-";
 * container ids are shown by their first 12 digits.
 */
void cgtop_print(const struct cgtop_state *ts, FILE *fp, size_t max_rows,
		 const char *summary);

#endif /* JOULES_OUT_H */
