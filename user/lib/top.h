/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The state of the `top` and `top --cgroups` tables: successive snapshots
 * in, rows with power and CPU share out. No output here: out.h prints the
 * tables (top_print(), cgtop_print()).
 */
#ifndef JOULES_TOP_H
#define JOULES_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <regex.h>

#include "cgname.h"
#include "rec.h"

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

#endif /* JOULES_TOP_H */
