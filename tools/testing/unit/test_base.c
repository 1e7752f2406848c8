// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of static-power estimation (kmod/core.c: jl_base_*). The
 * oracle is the same leaky window computed here in long double from the
 * rule's text; the core's integer result may differ by its floors only,
 * at most one microjoule per interval kept, which bounds each comparison.
 * Randomized: BASE_SEED=N replays a run.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core.h"
#include "check.h"

#define MS 1000000ULL
#define S 1000000000ULL
#define W JL_BASE_WINDOW_NS

static uint64_t rng_state;

static jl_u64 rnd(void)
{
	return ck_splitmix64(&rng_state);
}

/* As the worker does: an interval counts only if it was idle. */
static int add_if_idle(struct jl_base *b, jl_u64 t1, jl_u64 dt, jl_u64 uj,
		       jl_u64 busy)
{
	if (!jl_base_idle(dt, busy))
		return 0;
	jl_base_add(b, t1, dt, uj);
	return 1;
}

/* Nothing seen: no estimate, and the output is left alone. */
TEST(base_empty)
{
	struct jl_base b = { 0 };
	jl_u64 uw = 77;

	CHECK(!jl_base_uw(&b, &uw) && uw == 77, "an estimate from nothing");
	CHECK(!jl_base_idle(0, 0), "an empty interval is idle");
	jl_base_add(&b, S, 0, 100);
	CHECK(!jl_base_uw(&b, &uw), "an estimate from an empty interval");
}

/* 5 W in idle intervals of 100 ms: 5 W, whatever busy ones said. */
TEST(base_steady)
{
	struct jl_base b = { 0 };
	jl_u64 t = 0, uw = 0;
	int i;

	for (i = 0; i < 50; i++) {
		t += 100 * MS;
		CHECK(add_if_idle(&b, t, 100 * MS, 500000, i % 3 * MS),
		      "idle interval %d not counted", i);
	}
	CHECK(jl_base_uw(&b, &uw) && uw == 5000000, "5 W came out as %llu uW",
	      uw);
	/* Busy intervals at 40 W change nothing, age included. */
	for (i = 0; i < 50; i++)
		CHECK(!add_if_idle(&b, t + (i + 1) * 100 * MS, 100 * MS,
				   4000000, 150 * MS),
		      "busy interval %d counted", i);
	CHECK(jl_base_uw(&b, &uw) && uw == 5000000 && b.last_ns == t,
	      "busy intervals moved it: %llu uW, last %llu", uw, b.last_ns);
}

/*
 * The threshold: 2% of one CPU counts as idle, a nanosecond more does not,
 * however many CPUs the node has: on a 64-CPU node one CPU busy the whole
 * interval is 1.6% of the node's CPU time, and not idle.
 */
TEST(base_threshold)
{
	jl_u64 dt = 100 * MS, lim = dt * JL_BASE_BUSY_PERMILLE / 1000;

	CHECK(JL_BASE_BUSY_PERMILLE == 20 && lim == 2 * MS,
	      "the documented threshold is 2%%");
	CHECK(jl_base_idle(dt, 0) && jl_base_idle(dt, lim), "at the threshold");
	CHECK(!jl_base_idle(dt, lim + 1), "above it");
	CHECK(!jl_base_idle(dt, dt), "one CPU busy throughout");
}

/* An interval longer than the window is the estimate on its own. */
TEST(base_long_interval)
{
	struct jl_base b = { 0 };
	jl_u64 uw = 0;

	jl_base_add(&b, S, 100 * MS, 100000000); /* 1 kW, briefly */
	jl_base_add(&b, 200 * S, 2 * W, 2 * W / 1000 * 3);
	CHECK(jl_base_uw(&b, &uw) && uw == 3000000 && b.ns == W,
	      "%llu uW over %llu ns", uw, b.ns);
}

/*
 * A step from 10 W to 4 W: the old power leaks out as (1 - dt/W)^k once the
 * window is full. After five windows it is within e^-5 of the new power.
 */
TEST(base_step)
{
	struct jl_base b = { 0 };
	jl_u64 t = 0, uw = 0, dt = 500 * MS;
	long double exp_uw;
	unsigned int k, n1 = W / dt, n2 = 5 * W / dt;

	for (k = 0; k < n1; k++)
		jl_base_add(&b, t += dt, dt, 10 * dt / 1000);
	for (k = 0; k < n2; k++)
		jl_base_add(&b, t += dt, dt, 4 * dt / 1000);
	jl_base_uw(&b, &uw);
	exp_uw = 4e6L;
	{
		long double f = 1;

		for (k = 0; k < n2; k++)
			f *= 1 - (long double)dt / W;
		exp_uw += 6e6L * f;
	}
	/* Floors: under 1 uJ per interval over a 60 s window, plus the last floor. */
	CHECK((long double)uw > exp_uw - (n1 + n2) * 1e9L / W - 1 &&
		      (long double)uw <= exp_uw + 1,
	      "%llu uW, the rule gives %.3Lf", uw, exp_uw);
	CHECK(uw < 4000000 * 1.01, "five windows after the step: %llu uW", uw);
}

/* Random intervals, energies and loads against the rule in long double. */
TEST(base_random)
{
	const char *env = getenv("BASE_SEED");
	jl_u64 seed = env ? strtoull(env, NULL, 0) : (jl_u64)time(NULL);
	unsigned int run, i, bad = 0;

	DIAG("seed %#llx (BASE_SEED=%#llx replays)", seed, seed);
	rng_state = seed;
	for (run = 0; run < 200 && !bad; run++) {
		struct jl_base b = { 0 };
		long double e = 0, ns = 0;
		jl_u64 t = 0, uw = 0, kept = 0;
		unsigned int n = 1 + rnd() % 2000;

		for (i = 0; i < n; i++) {
			jl_u64 dt = 1 + rnd() % (rnd() % 8 ? 2 * S : 90 * S);
			jl_u64 cap = dt * (1 + rnd() % 64);
			jl_u64 busy = rnd() % 3 ? rnd() % (dt / 25 + 1) :
						  rnd() % (cap + 1);
			/* Up to 2 kW. */
			jl_u64 uj = (jl_u64)((long double)(rnd() % 2000000000) *
					     dt / S);
			int idle = busy * 1000 <= (unsigned __int128)dt *
							  JL_BASE_BUSY_PERMILLE;

			t += dt;
			if (add_if_idle(&b, t, dt, uj, busy) != idle) {
				bad++;
				DIAG("run %u interval %u: busy %llu of %llu taken as %s",
				     run, i, busy, dt, idle ? "busy" : "idle");
				break;
			}
			if (!idle)
				continue;
			if (dt >= W) {
				e = (long double)uj * W / dt;
				ns = W;
				kept = 1;
				continue;
			}
			if (ns + dt > W) {
				e *= (W - dt) / ns;
				ns = W - dt;
			}
			e += uj;
			ns += dt;
			kept++;
		}
		if (bad || !kept)
			continue;
		{
			long double want = e * 1e9L / ns;
			long double tol = kept * 1e9L / ns + 1 + want * 1e-15L;

			if (!jl_base_uw(&b, &uw) ||
			    (long double)uw < want - tol ||
			    (long double)uw > want + 1) {
				bad++;
				DIAG("run %u: %llu uW, the rule gives %.3Lf (tolerance %.3Lf)",
				     run, uw, want, tol);
			}
		}
	}
	CHECK(!bad, "%u mismatches (seed %#llx)", bad, seed);
}

TEST_HARNESS_MAIN
