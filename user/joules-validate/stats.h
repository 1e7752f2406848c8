/* SPDX-License-Identifier: GPL-2.0 */
/*
 * joules-validate's arithmetic and its report: mean and sample standard
 * deviation over repetitions, ratios, and the table printed at the end.
 * Pure (no netlink, no cgroups), so the host test
 * (tools/testing/unit/test_validate_stats.c) drives it directly.
 */
#ifndef JOULES_VALIDATE_STATS_H
#define JOULES_VALIDATE_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Running mean and sum of squared deviations (Welford): one pass, and no
 * cancellation when the values are large and close together (joules of a
 * node that draws the same every repetition).
 */
struct vstat {
	size_t n;
	double mean;
	double m2;
};

void vstat_add(struct vstat *s, double x);
/* NaN without values. */
double vstat_mean(const struct vstat *s);
/* Sample standard deviation (n - 1); NaN with fewer than two values. */
double vstat_sd(const struct vstat *s);
/* num / den; NaN when either is NaN or den is 0 (no ratio, not infinity). */
double vstat_ratio(double num, double den);

/*
 * "MEAN ± SD" with `prec` decimals into buf; "MEAN ± -" with one value,
 * "-" with none. Returns what snprintf() returns.
 */
int vstat_fmt(char *buf, size_t len, const struct vstat *s, int prec);

/* One workload's line of the report, in joules. */
struct vreport_row {
	const char *name;
	struct vstat measured; /* marginal measured alone */
	struct vstat alone; /* attributed alone */
	struct vstat together; /* attributed together */
};

/*
 * The together runs summed over the repetitions, in microjoules, as read
 * from the module: the workloads' attributed energy, the other tasks'
 * (the root cgroup's minus the workloads'), the node's idle energy, and
 * the node's energy. workloads + others + idle = node when the module
 * conserves energy; the difference is printed, not hidden.
 */
struct vreport_cons {
	uint64_t runs;
	int64_t workloads_uj;
	int64_t others_uj;
	int64_t idle_uj;
	int64_t node_uj;
};

struct vreport {
	unsigned int repeat;
	unsigned int duration_s;
	const char *source; /* "meter", "rapl", "rapl,meter" */
	struct vstat idle_w; /* idle power per repetition, W */
	const struct vreport_row *rows;
	size_t nrows;
	struct vreport_cons cons;
	const char *hypervisor; /* non-NULL: the note, naming it */
};

/* The report as a table on fp. */
void vreport_print(FILE *fp, const struct vreport *r);

#endif /* JOULES_VALIDATE_STATS_H */
