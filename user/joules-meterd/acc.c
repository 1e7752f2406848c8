// SPDX-License-Identifier: GPL-2.0
/*
 * The accumulator: one interval's samples of every input into the node's
 * cumulative energy. Power samples are summed and integrated (trapezoid);
 * energy counters are followed one by one (matched by input and label)
 * through wraps and resets. Nothing implausible is ever counted.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "jmd.h"

void jmd_acc_init(struct jmd_acc *a, size_t nin, double max_power,
		  uint64_t max_gap_ns)
{
	memset(a, 0, sizeof(*a));
	a->nin = nin < JMD_MAX_INPUTS ? nin : JMD_MAX_INPUTS;
	a->max_power = max_power;
	a->max_gap_ns = max_gap_ns;
}

static void acc_log(struct jmd_acc *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void acc_log(struct jmd_acc *a, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	if (!a->log)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	a->log(a->log_ctx, buf);
}

void jmd_acc_gap(struct jmd_acc *a)
{
	a->have_prev = false;
	memset(a->nctr, 0, sizeof(a->nctr));
}

static struct jmd_counter *acc_counter(struct jmd_acc *a, size_t in,
				       const char *label)
{
	for (size_t k = 0; k < a->nctr[in]; k++)
		if (!strcmp(a->ctr[in][k].label, label))
			return &a->ctr[in][k];
	return NULL;
}

/* A sample that can never be right, whatever came before: its reason. */
static const char *acc_bad_sample(const struct jmd_acc *a,
				  const struct jmd_sample *s)
{
	if (!isfinite(s->value))
		return "not a number";
	if (s->kind == JMD_POWER) {
		if (s->value < 0)
			return "negative power";
		if (s->value > a->max_power)
			return "above max_power";
		return NULL;
	}
	if (s->kind != JMD_ENERGY)
		return "unknown kind of sample";
	if (s->value < 0)
		return "negative energy counter";
	if (!isfinite(s->wrap_j) || s->wrap_j < 0)
		return "bad counter modulus";
	return NULL;
}

/* One reading on its way through jmd_acc_step: what its passes find. */
struct acc_reading {
	const struct jmd_sample *const *s;
	const size_t *n;
	bool base; /* a new baseline: nothing to count from */
	double dt; /* s since the previous reading (not on a new baseline) */
	double power; /* the power samples' sum, W */
	double energy_j; /* the energy counters' increases, J */
	bool have_energy; /* an energy counter among the samples */
	int resets; /* energy counters that start again */
};

/* Timing: a first reading, or one after too long, is a new baseline. */
static void acc_timing(struct jmd_acc *a, uint64_t t_ns, struct acc_reading *r)
{
	r->base = !a->have_prev || t_ns <= a->prev_ns ||
		  (a->max_gap_ns && t_ns - a->prev_ns > a->max_gap_ns);
	if (!r->base)
		r->dt = (double)(t_ns - a->prev_ns) / 1e9;
	else if (a->have_prev)
		acc_log(a, "%.1f s since the last reading: a new baseline",
			t_ns > a->prev_ns ? (double)(t_ns - a->prev_ns) / 1e9 :
					    0.0);
}

/* Pass 1: every sample on its own, and the power sum. -1: refused. */
static int acc_check_samples(struct jmd_acc *a, struct acc_reading *r,
			     struct jmd_step *out)
{
	for (size_t i = 0; i < a->nin; i++)
		for (size_t k = 0; k < r->n[i]; k++) {
			const struct jmd_sample *x = &r->s[i][k];
			const char *why = acc_bad_sample(a, x);

			if (why) {
				snprintf(out->why, sizeof(out->why),
					 "input %zu '%s': %s %g refused: %s",
					 i + 1, x->label,
					 jmd_kind_name(x->kind), x->value, why);
				return -1;
			}
			if (x->kind == JMD_POWER)
				r->power += x->value;
			else
				r->have_energy = true;
		}
	if (r->power > a->max_power) {
		snprintf(out->why, sizeof(out->why),
			 "power sum %.3f W refused: above max_power %g W",
			 r->power, a->max_power);
		return -1;
	}
	return 0;
}

/*
 * Pass 2: the counters' increases (checked before anything is kept).
 * -1: refused.
 */
static int acc_check_counters(struct jmd_acc *a, struct acc_reading *r,
			      struct jmd_step *out)
{
	for (size_t i = 0; i < a->nin && !r->base; i++)
		for (size_t k = 0; k < r->n[i]; k++) {
			const struct jmd_sample *x = &r->s[i][k];
			struct jmd_counter *c;
			double d;

			if (x->kind != JMD_ENERGY)
				continue;
			c = acc_counter(a, i, x->label);
			if (!c)
				continue; /* new counter: its baseline, below */
			d = x->value - c->last;
			if (d < 0 && x->wrap_j > 0)
				d += x->wrap_j;
			if (d < 0)
				continue; /* a reset: below */
			if (d / r->dt > a->max_power) {
				snprintf(
					out->why, sizeof(out->why),
					"input %zu '%s': energy jump of %.6g J in "
					"%.3f s (%.6g W) refused: above max_power",
					i + 1, x->label, d, r->dt, d / r->dt);
				return -1;
			}
			r->energy_j += d;
		}
	return 0;
}

/* The reading is good: its counters are the next baselines. */
static void acc_keep_counters(struct jmd_acc *a, struct acc_reading *r)
{
	for (size_t i = 0; i < a->nin; i++) {
		size_t m = 0;
		struct jmd_counter next[JMD_MAX_SAMPLES];

		for (size_t k = 0; k < r->n[i] && m < JMD_MAX_SAMPLES; k++) {
			const struct jmd_sample *x = &r->s[i][k];
			struct jmd_counter *c;

			if (x->kind != JMD_ENERGY)
				continue;
			c = r->base ? NULL : acc_counter(a, i, x->label);
			if (!r->base && !c) {
				acc_log(a,
					"input %zu '%s': new energy counter at %.6g J",
					i + 1, x->label, x->value);
				r->resets++;
			} else if (c && x->value < c->last &&
				   !(x->wrap_j > 0)) {
				acc_log(a,
					"input %zu '%s': energy counter went back from "
					"%.6g J to %.6g J: a reset, new baseline",
					i + 1, x->label, c->last, x->value);
				r->resets++;
			} else if (c && x->value < c->last) {
				acc_log(a,
					"input %zu '%s': energy counter wrapped at "
					"%.6g J",
					i + 1, x->label, x->wrap_j);
			}
			memset(&next[m], 0, sizeof(next[m]));
			snprintf(next[m].label, sizeof(next[m].label), "%s",
				 x->label);
			next[m].last = x->value;
			m++;
		}
		memcpy(a->ctr[i], next, m * sizeof(next[0]));
		a->nctr[i] = m;
	}
}

void jmd_acc_step(struct jmd_acc *a, uint64_t t_ns,
		  const struct jmd_sample *const *s, const size_t *n,
		  struct jmd_step *out)
{
	struct acc_reading r = { .s = s, .n = n };

	memset(out, 0, sizeof(*out));
	acc_timing(a, t_ns, &r);
	if (acc_check_samples(a, &r, out) || acc_check_counters(a, &r, out)) {
		jmd_acc_gap(a);
		return;
	}
	acc_keep_counters(a, &r);
	if (!r.base) {
		a->total_uj +=
			((long double)r.energy_j +
			 ((long double)a->prev_power + r.power) / 2 * r.dt) *
			1e6L;
		if (!r.resets && r.dt > 0) {
			out->have_watts = true;
			out->watts = r.power + r.energy_j / r.dt;
		}
	} else if (!r.have_energy) {
		out->have_watts = true;
		out->watts = r.power;
	}
	a->have_prev = true;
	a->prev_ns = t_ns;
	a->prev_power = r.power;
	out->feed = true;
	out->t_ns = t_ns;
	out->reset = r.base || r.resets;
	out->uj = (uint64_t)a->total_uj;
}
