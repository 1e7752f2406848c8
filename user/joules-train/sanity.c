// SPDX-License-Identifier: GPL-2.0
/*
 * Models that cannot be absurd: the bounds every written model is held
 * to, and what the meter's readings are (issue 27). A model that fails is
 * never written or installed.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "train.h"

/* What a ratio of meter to recorded energy says about the meter's unit. */
static const char *unit_hint(double ratio)
{
	if (ratio > 300 && ratio < 3000)
		return " (the meter reads about 1000x the recorded energy: "
		       "its readings are mW, not W?)";
	if (ratio > 1.0 / 3000 && ratio < 1.0 / 300)
		return " (the meter reads about 1/1000 of the recorded energy: "
		       "its readings are kW, not W?)";
	return " (is the meter in mW, or a cumulative energy read as power?)";
}

/* One coefficient set against the limits. */
static int check_set(const struct jl_coef *c, const char *band,
		     const struct jt_limits *lim, const char *hint, char *why,
		     size_t len)
{
	double idle_w = (double)c->idle_uw * 1e-6,
	       cpu_w = (double)c->cpu_time_uw * 1e-6;

	if (idle_w > lim->idle_w) {
		snprintf(
			why, len,
			"%sidle power %.4g W is above %g W (--max-idle-watts)%s",
			band, idle_w, lim->idle_w, hint);
		return -1;
	}
	if (cpu_w > lim->cpu_w) {
		snprintf(
			why, len,
			"%s%.4g W per busy CPU is above %g W (--max-cpu-watts)%s",
			band, cpu_w, lim->cpu_w, hint);
		return -1;
	}
	return 0;
}

/* The collinear coefficients, by name, into buf. */
static void names(unsigned int mask, char *buf, size_t len)
{
	size_t o = 0;
	unsigned int i;

	buf[0] = '\0';
	for (i = 0; i < JL_NR_COEF && o < len; i++)
		if (mask & (1u << i))
			o += (size_t)snprintf(buf + o, len - o, "%s%s",
					      o ? ", " : "", jl_coef_names[i]);
}

/*
 * Collinear coefficients the data do not pin down: one of them 0 or with
 * a bootstrap standard error above JT_COLLINEAR_SE of its value (without
 * standard errors, any collinear set). Exact data separate even nearly
 * collinear features; noisy ones do not.
 */
static int collinear_unresolved(const struct jt_model *m)
{
	unsigned int i;

	if (!m->collinear)
		return 0;
	if (!m->have_se)
		return 1;
	for (i = 0; i < JL_NR_COEF; i++)
		if ((m->collinear & (1u << i)) &&
		    !(m->raw[i] > 0 && m->se[i] <= JT_COLLINEAR_SE * m->raw[i]))
			return 1;
	return 0;
}

/* About 1000x apart from the module's own energy: another unit. */
static int refuse_unit(const struct jt_report *rep, char *why, size_t len)
{
	if ((rep->meter_over_module > 300 && rep->meter_over_module < 3000) ||
	    (rep->meter_over_module > 1.0 / 3000 &&
	     rep->meter_over_module < 1.0 / 300)) {
		snprintf(why, len,
			 "the meter's energy is %.4gx the energy_uj the module "
			 "recorded: its readings are %s, not W; convert them",
			 rep->meter_over_module,
			 rep->meter_over_module > 1 ? "mW" : "kW");
		return -1;
	}
	return 0;
}

/* Every set's coefficients within the bounds, each band named. */
static int refuse_sets(const struct jl_bands *m, const struct jt_limits *lim,
		       const char *hint, char *why, size_t len)
{
	unsigned int b;
	char buf[32];

	for (b = 0; b < m->nr; b++) {
		if (m->nr > 1)
			snprintf(buf, sizeof(buf), "band %u: ", b + 1);
		else
			buf[0] = '\0';
		if (check_set(&m->set[b], buf, lim, hint, why, len))
			return -1;
	}
	return 0;
}

/* The worst row: for the largest prediction, and for the busiest CPUs. */
struct refuse_max {
	double over_max, pred_max;
	size_t busy_line, pred_line;
};

static void refuse_scan(const struct jl_bands *m, const struct jt_row *rows,
			size_t n, unsigned int present, unsigned int cpus,
			struct refuse_max *x)
{
	double *mhz = fit_alloc(n * sizeof(*mhz));
	struct jt_bands_k bk;
	size_t i;

	if (mhz)
		jt_rows_freq(rows, n, present, mhz);
	jt_bands_doubles(m, &bk);
	for (i = 0; i < n; i++) {
		double p = mhz ? jt_predict_bands_k(&bk, &rows[i], mhz[i]) : 0;
		/*
		 * A running task's runtime advances at scheduler ticks, so an
		 * interval may count up to one tick per CPU past its length:
		 * the excess over that, relative to the CPU count.
		 */
		double over =
			cpus ? (rows[i].f[JL_F_CPU_NS] -
				cpus * (rows[i].interval_ns + JT_TICK_NS_MAX)) /
					(cpus * rows[i].interval_ns) :
			       0;

		if (over > x->over_max)
			x->over_max = over, x->busy_line = i;
		if (p > x->pred_max)
			x->pred_max = p, x->pred_line = i;
	}
	free(mhz);
}

int jt_refuse(const struct jt_report *rep, const struct jt_band_result *br,
	      const struct jt_row *rows, size_t n, unsigned int cpus,
	      const struct jt_limits *lim, char *why, size_t len)
{
	const struct jl_bands *m = &br->model;
	const char *hint = unit_hint(rep->meter_over_module);
	struct refuse_max x = { 0 };
	char list[256];

	if (refuse_unit(rep, why, len) || refuse_sets(m, lim, hint, why, len))
		return -1;
	if (rep->median_w > lim->node_w) {
		snprintf(
			why, len,
			"the median measured power %.4g W is above %g W for one "
			"node (--max-node-watts)%s",
			rep->median_w, lim->node_w, hint);
		return -1;
	}
	refuse_scan(m, rows, n, rep->present, cpus, &x);
	if (x.pred_max > lim->node_w) {
		snprintf(
			why, len,
			"it predicts %.4g W for the interval of line %lu, above %g "
			"W for one node (--max-node-watts)%s",
			x.pred_max, rows[x.pred_line].line, lim->node_w, hint);
		return -1;
	}
	/* 2% more for the clocks of the interval and of the CPU time. */
	if (cpus && x.over_max > 0.02) {
		snprintf(
			why, len,
			"line %lu has %.4g busy CPUs but the recording says the "
			"node has %u: cpu_ns is not this node's CPU time",
			rows[x.busy_line].line,
			rows[x.busy_line].f[JL_F_CPU_NS] /
				rows[x.busy_line].interval_ns,
			cpus);
		return -1;
	}
	if (collinear_unresolved(&rep->model) && !lim->ridge) {
		names(rep->model.collinear, list, sizeof(list));
		snprintf(why, len,
			 "%s cannot be separated by these data (they vary "
			 "together): any split of their sum fits as well, so "
			 "per-process energy would be arbitrary; record a more "
			 "varied load, or give --ridge to accept an even split",
			 list);
		return -1;
	}
	return 0;
}

static int dbl_cmp(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return (a > b) - (a < b);
}

/* Readings at most this many are looked at for the resolution. */
#define KIND_SUB 65536

int jt_meter_kind(const struct jt_meter *m, double *res_w, char *why,
		  size_t len)
{
	size_t i, up = 0, flat = 0, step, k = 0;
	double *v, res = INFINITY;

	*res_w = 0;
	if (m->n < 10)
		return 0;
	for (i = 1; i < m->n; i++) {
		up += m->w[i] > m->w[i - 1];
		flat += m->w[i] == m->w[i - 1];
	}
	/*
	 * A power reading goes down about as often as up; an energy counter
	 * never goes down and rises in most steps (flat only while idle
	 * between its increments).
	 */
	if (up + flat >= m->n - 1 - (m->n - 1) / 100 && 2 * up >= m->n - 1) {
		snprintf(
			why, len,
			"the meter's readings rise in %zu of %zu steps and never "
			"fall%s: a cumulative energy counter, not power; give its "
			"rate in W (differences over time)",
			up, m->n - 1,
			up + flat == m->n - 1 ? "" : " (but rarely)");
		return -1;
	}
	step = m->n > KIND_SUB ? (m->n + KIND_SUB - 1) / KIND_SUB : 1;
	v = malloc((m->n / step + 1) * sizeof(*v));
	if (!v)
		return 0;
	for (i = 0; i < m->n; i += step)
		v[k++] = m->w[i];
	qsort(v, k, sizeof(*v), dbl_cmp);
	for (i = 1; i < k; i++)
		if (v[i] > v[i - 1] && v[i] - v[i - 1] < res)
			res = v[i] - v[i - 1];
	free(v);
	*res_w = isfinite(res) ? res : 0;
	return 0;
}
