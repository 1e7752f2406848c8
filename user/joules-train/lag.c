// SPDX-License-Identifier: GPL-2.0
/*
 * Alignment measured, not assumed (issue 27): the meter's lag behind the
 * node's activity by cross-correlation, and steps of the samples' wall
 * clock found from the monotonic one.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "train.h"

/* Grid points at most: of a longer recording, its middle part. */
#define LAG_GRID_MAX 200000

/* Busy CPUs at time t (sample clock): the row that holds t, -1: none. */
static double activity_at(const struct jt_samples *s, size_t *i, int64_t t)
{
	while (*i < s->n && s->s[*i].end_ns < t)
		(*i)++;
	if (*i == s->n || s->s[*i].end_ns - (int64_t)s->s[*i].interval_ns > t)
		return -1;
	return s->s[*i].f[JL_F_CPU_NS] / s->s[*i].interval_ns;
}

/*
 * Meter power at time t (meter clock), NAN: none. Instant readings: linear
 * between them; average ones: the reading whose period holds t.
 */
static double power_at(const struct jt_meter *m, size_t *j, int64_t t)
{
	while (*j + 1 < m->n && m->t[*j + 1] < t)
		(*j)++;
	if (*j + 1 >= m->n || m->t[*j] > t)
		return NAN;
	if (m->sem == JT_METER_AVERAGE)
		return m->w[*j + 1];
	return m->w[*j] + (m->w[*j + 1] - m->w[*j]) * (double)(t - m->t[*j]) /
				  (double)(m->t[*j + 1] - m->t[*j]);
}

/* Pearson correlation of a[i] and b[i + k] over the pairs both have. */
FIT_HOT
static double corr_at(const double *a, const double *b, size_t n, long k)
{
	double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0, c = 0, va, vb;
	size_t i;

	for (i = 0; i < n; i++) {
		long j = (long)i + k;

		if (j < 0 || j >= (long)n || isnan(a[i]) || isnan(b[j]))
			continue;
		sa += a[i];
		sb += b[j];
		saa += a[i] * a[i];
		sbb += b[j] * b[j];
		sab += a[i] * b[j];
		c++;
	}
	/* A lag that leaves less than half the grid overlapping says little. */
	if (c < 10 || c < (double)n / 2)
		return NAN;
	va = saa - sa * sa / c;
	vb = sbb - sb * sb / c;
	return va > 0 && vb > 0 ? (sab - sa * sb / c) / sqrt(va * vb) : NAN;
}

void jt_estimate_lag(const struct jt_samples *s, const struct jt_meter *m,
		     int64_t offset_ns, struct jt_lag *out)
{
	int64_t t0, t1, dt, t;
	double *a = NULL, *b = NULL, best = -2, cm, c0, cp, row;
	size_t n, k, i = 0, j = 0;
	long lag, maxlag, bestk = 0;

	memset(out, 0, sizeof(*out));
	if (s->n < 20 || m->n < 20)
		return;
	t0 = s->s[0].end_ns - (int64_t)s->s[0].interval_ns;
	t1 = s->s[s->n - 1].end_ns;
	/* A grid of a fifth of a row: a lag to about 0.1 row, before refining. */
	row = (double)(t1 - t0) / (double)s->n;
	dt = (int64_t)(row / 5);
	if (dt < 1000000)
		dt = 1000000;
	/* A long recording: its middle LAG_GRID_MAX points, at full grid. */
	if ((t1 - t0) / dt > LAG_GRID_MAX) {
		t0 += ((t1 - t0) - (int64_t)LAG_GRID_MAX * dt) / 2;
		t1 = t0 + (int64_t)LAG_GRID_MAX * dt;
		while (i < s->n && s->s[i].end_ns < t0)
			i++;
		while (j + 1 < m->n && m->t[j + 1] < t0 - offset_ns)
			j++;
	}
	n = (size_t)((t1 - t0) / dt);
	maxlag = (long)(JT_LAG_SEARCH_S * 1e9 / (double)dt);
	a = fit_alloc(n * sizeof(*a));
	b = fit_alloc(n * sizeof(*b));
	if (!a || !b || n < 20)
		goto out;
	for (k = 0; k < n; k++) {
		t = t0 + (int64_t)k * dt + dt / 2;
		a[k] = activity_at(s, &i, t);
		if (a[k] < 0)
			a[k] = NAN;
		/* Sample time t is meter time t - offset. */
		b[k] = power_at(m, &j, t - offset_ns);
	}
	/* The meter's value at t + lag against the activity at t. */
	for (lag = -maxlag; lag <= maxlag; lag++) {
		double c = corr_at(a, b, n, lag);

		if (c > best) {
			best = c;
			bestk = lag;
		}
	}
	if (!(best > 0.3))
		goto out; /* no load pattern to align by */
	cm = corr_at(a, b, n, bestk - 1);
	c0 = best;
	cp = corr_at(a, b, n, bestk + 1);
	out->lag_s = (double)bestk;
	if (isfinite(cm) && isfinite(cp) && cm - 2 * c0 + cp < 0)
		out->lag_s += 0.5 * (cm - cp) / (cm - 2 * c0 + cp);
	out->lag_s *= (double)dt * 1e-9;
	out->r = best;
	out->step_s = (double)dt * 1e-9;
	out->ok = 1;
out:
	free(a);
	free(b);
}

unsigned int jt_unstep(struct jt_samples *s, unsigned long *first_line,
		       double *step_s)
{
	int64_t d0 = 0, prev = 0;
	unsigned int steps = 0;
	size_t i;
	int have = 0;

	for (i = 0; i < s->n; i++) {
		struct jt_sample *x = &s->s[i];
		int64_t d;

		if (x->mono_ns < 0)
			continue;
		d = x->end_ns - x->mono_ns;
		if (!have) {
			d0 = prev = d;
			have = 1;
			continue;
		}
		if (llabs(d - prev) > JT_STEP_NS) {
			if (!steps++) {
				*first_line = x->line;
				*step_s = (double)(d - prev) * 1e-9;
			}
		}
		prev = d;
		/* On the first rows' timeline: monotonic plus their offset. */
		if (steps)
			x->end_ns = x->mono_ns + d0;
	}
	return steps;
}
