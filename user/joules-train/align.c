// SPDX-License-Identifier: GPL-2.0
/*
 * Aligning meter readings with sample intervals: the meter's power is
 * taken as linear between readings, and integrated exactly (trapezoids are
 * exact for a linear function) over each interval.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "train.h"

/* Largest i with t[i] <= x; the caller guarantees t[0] <= x. */
static size_t floor_index(const int64_t *t, size_t n, int64_t x)
{
	size_t lo = 0, hi = n;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (t[mid] <= x)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/*
 * floor_index() searched out from t[from] (from < n) by doubling steps,
 * then by halving: the same index, found in a few steps when it is near
 * (the next reading after an interval's start, the previous row's).
 */
static size_t floor_near(const int64_t *t, size_t n, int64_t x, size_t from)
{
	size_t lo, hi, step = 1;

	if (t[from] <= x) {
		lo = from; /* t[lo] <= x; t[hi] > x or hi == n */
		while (n - lo > step && t[lo + step] <= x) {
			lo += step;
			step *= 2;
		}
		hi = n - lo > step ? lo + step : n;
	} else {
		hi = from; /* t[hi] > x >= t[0], so hi > 0 */
		while (hi > step && t[hi - step] > x) {
			hi -= step;
			step *= 2;
		}
		lo = hi > step ? hi - step : 0;
	}
	/* Then halving between them: the same steps as from the whole range's. */
	return lo + floor_index(t + lo, hi - lo, x);
}

static double interp(const struct jt_meter *m, size_t j, int64_t x)
{
	double f = (double)(x - m->t[j]) / (double)(m->t[j + 1] - m->t[j]);

	return m->w[j] + (m->w[j + 1] - m->w[j]) * f;
}

int jt_meter_energy(const struct jt_meter *m, int64_t a, int64_t b,
		    int64_t max_gap_ns, double *uj)
{
	double e = 0; /* W * ns */
	size_t j;

	if (m->n < 2 || a < m->t[0] || b > m->t[m->n - 1] || b <= a)
		return JT_ALIGN_UNCOVERED;
	for (j = floor_index(m->t, m->n, a); j + 1 < m->n && m->t[j] < b; j++) {
		int64_t x0 = a > m->t[j] ? a : m->t[j];
		int64_t x1 = b < m->t[j + 1] ? b : m->t[j + 1];

		if (max_gap_ns > 0 && m->t[j + 1] - m->t[j] > max_gap_ns)
			return JT_ALIGN_GAP;
		if (x1 > x0)
			e += (double)(x1 - x0) *
			     (interp(m, j, x0) + interp(m, j, x1)) / 2;
	}
	*uj = e * 1e-3; /* 1 W * 1 ns = 1 nJ = 1e-3 uJ */
	return JT_ALIGN_OK;
}

static int row_cmp(const void *pa, const void *pb)
{
	const struct jt_row *a = pa, *b = pb;

	if (a->end_ns != b->end_ns)
		return a->end_ns < b->end_ns ? -1 : 1;
	return (a->interval_ns > b->interval_ns) -
	       (a->interval_ns < b->interval_ns);
}

/* Median of a sample of at most 65536 evenly spaced values of f(i). */
static double median_of(size_t n, double (*f)(const void *, size_t),
			const void *ctx)
{
	size_t k = n > 65536 ? 65536 : n, i;
	double *v, med;

	if (!n)
		return 0;
	v = malloc(k * sizeof(*v));
	if (!v)
		return f(ctx, n / 2);
	for (i = 0; i < k; i++)
		v[i] = f(ctx, (size_t)((unsigned __int128)i * n / k));
	med = jt_median(v, k);
	free(v);
	return med;
}

static double spacing(const void *ctx, size_t i)
{
	const struct jt_meter *m = ctx;

	return (double)(m->t[i + 1] - m->t[i]);
}

static double row_len(const void *ctx, size_t i)
{
	return ((const struct jt_samples *)ctx)->s[i].interval_ns;
}

/* Does a span between readings that touches (a, b) exceed max_gap_ns? */
static int touches_gap(const struct jt_meter *m, size_t j, int64_t b,
		       int64_t max_gap_ns)
{
	if (max_gap_ns <= 0)
		return 0;
	for (; j + 1 < m->n && m->t[j] < b; j++)
		if (m->t[j + 1] - m->t[j] > max_gap_ns)
			return 1;
	return 0;
}

/*
 * Instant readings: the mean power of the readings inside (a, b]. Half
 * open: a reading exactly on a boundary belongs to the row it ends, not
 * to both rows.
 */
static int row_instant(const struct jt_meter *m, int64_t a, int64_t b,
		       int64_t max_gap_ns, size_t *near, struct jt_row *r)
{
	size_t j0, lo, hi, j;
	double e = 0;

	if (m->n < 2 || a < m->t[0] || b > m->t[m->n - 1] || b <= a)
		return JT_ALIGN_UNCOVERED;
	j0 = *near = floor_near(m->t, m->n, a, *near);
	if (touches_gap(m, j0, b, max_gap_ns))
		return JT_ALIGN_GAP;
	lo = j0 + 1; /* t[j0] <= a: the first reading after a */
	hi = floor_near(m->t, m->n, b, j0);
	if (lo > hi)
		return JT_ALIGN_BETWEEN;
	if (lo == hi) {
		e = m->w[lo];
	} else {
		for (j = lo; j < hi; j++)
			e += (double)(m->t[j + 1] - m->t[j]) *
			     (m->w[j] + m->w[j + 1]) / 2;
		e /= (double)(m->t[hi] - m->t[lo]);
	}
	r->meter_uj = e * (double)(b - a) * 1e-3; /* W ns = 1e-3 uJ */
	r->mlo = lo;
	r->mhi = hi;
	return JT_ALIGN_OK;
}

/* Average readings: the exact integral of the step function over [a, b]. */
static int row_average(const struct jt_meter *m, int64_t a, int64_t b,
		       int64_t max_gap_ns, size_t *near, struct jt_row *r)
{
	size_t j0, j;
	double e = 0;

	if (m->n < 2 || a < m->t[0] || b > m->t[m->n - 1] || b <= a)
		return JT_ALIGN_UNCOVERED;
	j0 = *near = floor_near(m->t, m->n, a, *near);
	if (touches_gap(m, j0, b, max_gap_ns))
		return JT_ALIGN_GAP;
	r->mlo = j0 + 1;
	for (j = j0; j + 1 < m->n && m->t[j] < b; j++) {
		int64_t x0 = a > m->t[j] ? a : m->t[j];
		int64_t x1 = b < m->t[j + 1] ? b : m->t[j + 1];

		if (x1 > x0)
			e += m->w[j + 1] * (double)(x1 - x0);
		r->mhi = j + 1;
	}
	r->meter_uj = e * 1e-3;
	return JT_ALIGN_OK;
}

/*
 * One sample row as one interval (instant, or average finer than rows)
 * into *r: 1 if it is used, else 0 with the reason counted in st. *near
 * (< m->n): where the search for its readings starts, the reading before
 * the previous row's start (0 at first).
 */
static int align_one(const struct jt_sample *x, const struct jt_meter *m,
		     int64_t offset_ns, int64_t max_gap_ns, size_t *near,
		     struct jt_row *r, struct jt_align_stats *st)
{
	int64_t a, b;
	int rc;

	/*
	 * meter clock + offset = sample clock, so query at sample - offset.
	 * A huge --clock-offset moves the interval out of any meter's range
	 * rather than wrapping around.
	 */
	if (__builtin_sub_overflow(x->end_ns, offset_ns, &b) ||
	    __builtin_sub_overflow(b, (int64_t)x->interval_ns, &a)) {
		st->uncovered++;
		return 0;
	}
	rc = m->sem == JT_METER_AVERAGE ?
		     row_average(m, a, b, max_gap_ns, near, r) :
		     row_instant(m, a, b, max_gap_ns, near, r);
	if (rc != JT_ALIGN_OK) {
		st->uncovered += rc == JT_ALIGN_UNCOVERED;
		st->gap += rc == JT_ALIGN_GAP;
		st->between += rc == JT_ALIGN_BETWEEN;
		return 0;
	}
	r->end_ns = x->end_ns;
	r->interval_ns = x->interval_ns;
	memcpy(r->f, x->f, sizeof(r->f));
	r->module_uj = x->energy_uj;
	r->freq_mhz = x->freq_mhz;
	r->line = r->last_line = x->line;
	return 1;
}

/* Each sample row is one interval: instant, or average finer than rows. */
static size_t align_rows(const struct jt_samples *s, const struct jt_meter *m,
			 int64_t offset_ns, int64_t max_gap_ns,
			 struct jt_row *out, struct jt_align_stats *st)
{
	size_t i, n = 0, near = 0;

	for (i = 0; i < s->n; i++)
		n += align_one(&s->s[i], m, offset_ns, max_gap_ns, &near,
			       &out[n], st);
	st->rows_in = n;
	return n;
}

static int sample_cmp(const void *pa, const void *pb)
{
	const struct jt_sample *a = pa, *b = pb;

	return (a->end_ns > b->end_ns) - (a->end_ns < b->end_ns);
}

/*
 * Average readings at least as coarse as the rows: sum the rows into each
 * reading's period. Power within a row is taken as even (as the module
 * itself attributes it), so a straddling row counts pro rata.
 */
static size_t align_periods(const struct jt_sample *x, size_t ns,
			    const struct jt_meter *m, int64_t offset_ns,
			    int64_t max_gap_ns, struct jt_row *out, size_t cap,
			    struct jt_align_stats *st)
{
	size_t k, i0 = 0, n = 0, counted = 0;
	int any_counted = 0;

	for (k = 1; k < m->n && n < cap; k++) {
		struct jt_row r = { .module_uj = 0 };
		double covered = 0, tol, fsum = 0, fcpu = 0;
		int64_t a, b;
		size_t j;
		int first = 1;

		if (__builtin_add_overflow(m->t[k - 1], offset_ns, &a) ||
		    __builtin_add_overflow(m->t[k], offset_ns, &b))
			continue;
		while (i0 < ns && x[i0].end_ns <= a)
			i0++;
		if (i0 == ns)
			break;
		if (x[i0].end_ns - (int64_t)x[i0].interval_ns >= b)
			continue; /* no row here: not an interval of ours */
		for (j = i0; j < ns; j++) {
			int64_t s0 = x[j].end_ns - (int64_t)x[j].interval_ns;
			int64_t lo = s0 > a ? s0 : a;
			int64_t hi = x[j].end_ns < b ? x[j].end_ns : b;
			double frac;
			unsigned int f;

			if (s0 >= b)
				break;
			if (hi <= lo)
				continue;
			frac = (double)(hi - lo) / x[j].interval_ns;
			covered += (double)(hi - lo);
			for (f = 0; f < JT_NF; f++)
				r.f[f] += frac * x[j].f[f];
			if (x[j].freq_mhz > 0) {
				fsum += frac * x[j].f[JL_F_CPU_NS] *
					x[j].freq_mhz;
				fcpu += frac * x[j].f[JL_F_CPU_NS];
			}
			if (x[j].energy_uj < 0 || r.module_uj < 0)
				r.module_uj = -1;
			else
				r.module_uj += frac * x[j].energy_uj;
			if (first)
				r.line = x[j].line;
			r.last_line = x[j].line;
			first = 0;
		}
		if (max_gap_ns > 0 && b - a > max_gap_ns) {
			st->gap++;
			continue;
		}
		/* Rows meet within clock slew; a missing row leaves a hole. */
		tol = (double)JT_OVERLAP_TOL_NS + 1e-3 * (double)(b - a);
		if (covered < (double)(b - a) - tol) {
			st->uncovered++;
			continue;
		}
		r.end_ns = b;
		r.interval_ns = (double)(b - a);
		r.freq_mhz = fcpu > 0 ? floor(fsum / fcpu) : 0;
		r.meter_uj = m->w[k] * (double)(b - a) * 1e-3;
		r.mlo = r.mhi = k;
		out[n++] = r;
		/* Count each row once, though a straddling one is in two periods. */
		for (j = i0;
		     j < ns && x[j].end_ns - (int64_t)x[j].interval_ns < b; j++)
			if (!any_counted || j > counted) {
				st->rows_in++;
				counted = j;
				any_counted = 1;
			}
	}
	return n;
}

/* The meter's period and the rows': are the rows summed into periods? */
static void align_setup(const struct jt_samples *s, const struct jt_meter *m,
			struct jt_row **rows, size_t *nrows,
			struct jt_align_stats *st)
{
	memset(st, 0, sizeof(*st));
	*rows = NULL;
	*nrows = 0;
	st->sem = m->sem;
	if (m->n >= 2)
		st->meter_period_ns = median_of(m->n - 1, spacing, m);
	st->row_ns = median_of(s->n, row_len, s);
	st->aggregated = m->sem == JT_METER_AVERAGE && m->n >= 2 &&
			 st->meter_period_ns >= st->row_ns / 2;
}

/* Folds are contiguous in time, so the rows must be in time order. */
static void rows_sort(struct jt_row *out, size_t n)
{
	size_t i;

	for (i = 1; i < n; i++)
		if (row_cmp(&out[i - 1], &out[i]) > 0) {
			qsort(out, n, sizeof(*out), row_cmp);
			return;
		}
}

int jt_align(const struct jt_samples *s, const struct jt_meter *m,
	     int64_t offset_ns, int64_t max_gap_ns, struct jt_row **rows,
	     size_t *nrows, struct jt_align_stats *st)
{
	struct jt_row *out;
	size_t i, n, cap;
	int sorted = 1;

	align_setup(s, m, rows, nrows, st);
	cap = s->n;
	if (st->aggregated && m->n - 1 < cap)
		cap = m->n - 1;
	out = fit_alloc(cap * sizeof(*out));
	if (!out)
		return -ENOMEM;
	if (st->aggregated) {
		const struct jt_sample *x = s->s;
		struct jt_sample *copy = NULL;

		for (i = 1; i < s->n; i++)
			if (s->s[i].end_ns < s->s[i - 1].end_ns)
				sorted = 0;
		if (!sorted) {
			copy = malloc(s->n * sizeof(*copy));
			if (!copy) {
				free(out);
				return -ENOMEM;
			}
			memcpy(copy, s->s, s->n * sizeof(*copy));
			qsort(copy, s->n, sizeof(*copy), sample_cmp);
			x = copy;
		}
		n = align_periods(x, s->n, m, offset_ns, max_gap_ns, out, cap,
				  st);
		free(copy);
	} else {
		n = align_rows(s, m, offset_ns, max_gap_ns, out, st);
		rows_sort(out, n);
	}
	st->used = n;
	*rows = out;
	*nrows = n;
	return 0;
}

/* Samples given back at a time while aligning (a realloc each). */
#define ALIGN_GIVE_BACK 65536

int jt_align_consume(struct jt_samples *s, const struct jt_meter *m,
		     int64_t offset_ns, int64_t max_gap_ns,
		     struct jt_row **rows, size_t *nrows,
		     struct jt_align_stats *st)
{
	struct jt_row *out, *tmp;
	size_t i, n = 0, cap = s->n, near = 0;
	int ret;

	align_setup(s, m, rows, nrows, st);
	if (st->aggregated) {
		ret = jt_align(s, m, offset_ns, max_gap_ns, rows, nrows, st);
		goto out;
	}
	/*
	 * Rows are written from the end of out[] backwards, from the last
	 * sample to the first: pages of out[] become resident as the
	 * samples behind them are given back (realloc shrinks in place).
	 */
	ret = -ENOMEM;
	out = fit_alloc(cap * sizeof(*out));
	if (!out)
		goto out;
	for (i = s->n; i-- > 0;) {
		n += align_one(&s->s[i], m, offset_ns, max_gap_ns, &near,
			       &out[cap - 1 - n], st);
		if (i % ALIGN_GIVE_BACK == 0 && i) {
			struct jt_sample *x = realloc(s->s, i * sizeof(*x));

			s->s = x ? x : s->s;
		}
	}
	memmove(out, out + cap - n, n * sizeof(*out));
	tmp = realloc(out, (n ? n : 1) * sizeof(*out));
	out = tmp ? tmp : out;
	rows_sort(out, n);
	st->rows_in = st->used = n;
	*rows = out;
	*nrows = n;
	ret = 0;
out:
	free(s->s);
	s->s = NULL;
	s->n = s->cap = 0;
	return ret;
}
