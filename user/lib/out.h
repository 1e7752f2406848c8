/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The output of the joules records (rec.h) as text, JSON and CSV, and of
 * the `top` tables (top.h): `show`, `top`, `watch` and `record` print the
 * same way whatever the source of the records.
 *
 * Absent is not zero: a counter the hardware or kernel did not count
 * (cycles, instructions, cache misses without a PMU; socket bytes before
 * 6.3; page-cache reads without CONFIG_TASK_XACCT) has its REC_F() bit
 * clear in `present` and is printed as absent (no text line, JSON null,
 * empty CSV field); a RAPL domain is printed only when its bit is set in
 * `domains`.
 */
#ifndef JOULES_OUT_H
#define JOULES_OUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cgname.h"
#include "rec.h"
#include "top.h"

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
	"disk_bytes,tasks,net_tx_bytes,net_rx_bytes,pagecache_bytes,"   \
	"freq_mhz,band"
/*
 * "# node: cpus=N packages=P energy=STATUS:DOMAINS", before the header:
 * what joules-train checks a model against (a comment to older readers).
 */
int out_node_facts(FILE *fp);
int out_record_header(FILE *fp);
int out_record_row(FILE *fp, const struct sample_rec *s);

/*
 * The `top` table (top.h): the caller's summary line (may be NULL), a
 * totals line, a header and at most max_rows rows (0: all). Tasks first
 * seen in this snapshot show "-" for power and CPU.
 */
void top_print(const struct top_state *ts, FILE *fp, size_t max_rows,
	       const char *summary);

/*
 * The `top --cgroups` table (top.h): the summary line (may be NULL), a
 * count line, a header and at most max_rows rows (0: all). Unknown names
 * and power not yet measured are "-"; container ids are shown by their
 * first 12 digits.
 */
void cgtop_print(const struct cgtop_state *ts, FILE *fp, size_t max_rows,
		 const char *summary);

#endif /* JOULES_OUT_H */
