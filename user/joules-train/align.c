// SPDX-License-Identifier: GPL-2.0
/*
 * Aligning meter readings with sample intervals: the meter's power is
 * taken as linear between readings, and integrated exactly (trapezoids are
 * exact for a linear function) over each interval.
 */
#include <errno.h>
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

int jt_align(const struct jt_samples *s, const struct jt_meter *m,
	     int64_t offset_ns, int64_t max_gap_ns, struct jt_row **rows,
	     size_t *nrows, struct jt_align_stats *st)
{
	struct jt_row *out = malloc((s->n ? s->n : 1) * sizeof(*out));
	size_t i, n = 0;
	int sorted = 1;

	memset(st, 0, sizeof(*st));
	if (!out)
		return -ENOMEM;
	for (i = 0; i < s->n; i++) {
		const struct jt_sample *x = &s->s[i];
		struct jt_row *r = &out[n];
		int64_t a, b;
		int rc;

		/*
		 * meter clock + offset = sample clock, so query at sample -
		 * offset. A huge --clock-offset moves the interval out of any
		 * meter's range rather than wrapping around.
		 */
		if (__builtin_sub_overflow(x->end_ns, offset_ns, &b) ||
		    __builtin_sub_overflow(b, (int64_t)x->interval_ns, &a)) {
			st->uncovered++;
			continue;
		}
		rc = jt_meter_energy(m, a, b, max_gap_ns, &r->meter_uj);

		if (rc == JT_ALIGN_UNCOVERED) {
			st->uncovered++;
			continue;
		}
		if (rc == JT_ALIGN_GAP) {
			st->gap++;
			continue;
		}
		r->end_ns = x->end_ns;
		r->interval_ns = x->interval_ns;
		memcpy(r->f, x->f, sizeof(r->f));
		r->module_uj = x->energy_uj;
		if (n && row_cmp(&out[n - 1], r) > 0)
			sorted = 0;
		n++;
	}
	/* Folds are contiguous in time, so the rows must be in time order. */
	if (!sorted)
		qsort(out, n, sizeof(*out), row_cmp);
	st->used = n;
	*rows = out;
	*nrows = n;
	return 0;
}
