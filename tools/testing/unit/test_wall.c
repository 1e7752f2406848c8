// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of the wall meter's arithmetic (kmod/core.c: jl_wall_*). The
 * oracle is this file's own bookkeeping: the meter's energy integrated in
 * 128-bit femtojoules from the readings it was given, the node's charge
 * summed tick by tick, and the node at a reading's instant interpolated
 * with exact 128-bit arithmetic. Randomized: WALL_SEED=N replays a run.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "check.h"

typedef unsigned __int128 u128;
typedef __int128 s128;

#define MS 1000000ULL
#define S 1000000000ULL

static uint64_t rng_state;

static jl_u64 rnd(void)
{
	return ck_splitmix64(&rng_state);
}

static jl_u64 rnd_below(jl_u64 n)
{
	return n ? rnd() % n : 0;
}

/* A meter fed energy at a steady 100 W, the shape saying 80 W. */
TEST(wall_hand)
{
	struct jl_wall w = { 0 };
	jl_u64 t = 0, n, node = 0;
	int i;

	/* The first reading is the baseline: nothing counted. */
	CHECK(jl_wall_reading(&w, 0, 5000000, 0, 1000000000) == 0, "baseline");
	/* Ticks of 100 ms at 80 W: 8 J each; a reading every second at 100 W. */
	for (i = 1; i <= 30; i++) {
		t += 100 * MS;
		if (i % 10 == 0)
			CHECK(jl_wall_reading(&w, t,
					      5000000 + (t / MS) * 100000, 0,
					      1000000000) == 0,
			      "reading at %d", i);
		n = jl_wall_tick(&w, t - 100 * MS, t, 8000000, 1, 0);
		node += n;
		if (i < 10)
			CHECK(n == 8000000,
			      "tick %d before any reading: the shape (%llu)", i,
			      n);
		else if (i < 20)
			/* +20 J found at 1 s, given 2 J a tick from the tick that found it. */
			CHECK(n == 10000000, "tick %d: shape and 2 J (%llu)", i,
			      n);
	}
	/*
	 * At 1 s the node had 80 J, the meter 100 J: +20 J spread over the
	 * next ten ticks (2 J each). At 2 s the node had 100 J over the
	 * window, the meter 100 J more again: residual of the window = 100 - 80.
	 */
	CHECK(w.residual_uj == 20000000, "residual %lld uJ", w.residual_uj);
	CHECK(w.window_uj == 100000000 && w.window_ns == S,
	      "window %llu uJ over %llu ns", w.window_uj, w.window_ns);
	CHECK(node == w.node_uj, "node %llu vs %llu", node, w.node_uj);
	/* The last reading (3 s) was at the end of tick 30: node + pending = meter. */
	CHECK((jl_s64)w.node_uj + w.pending_uj == (jl_s64)w.meter_uj,
	      "node %llu + pending %lld != meter %llu", w.node_uj, w.pending_uj,
	      w.meter_uj);
	CHECK(w.meter_uj == 300000000, "meter %llu uJ since the baseline",
	      w.meter_uj);

	/* Refusals change nothing. */
	CHECK(jl_wall_reading(&w, t + 1, 1, 0, 1000000000) == -JL_ERANGE,
	      "went back");
	CHECK(jl_wall_reading(&w, t - 1, 5000000 + 300000000, 0, 1000000000) ==
		      -JL_EINVAL,
	      "stamp before the last");
	/* 1 MJ within 1 s is above 1 kW. */
	CHECK(jl_wall_reading(&w, t + S, 5000000 + 300000000 + 1000000000000ULL,
			      0, 1000000000) == -JL_ERANGE,
	      "absurd jump");
	CHECK(!w.fresh, "a refused reading is not compared");
	/* A reset: new baseline, whatever the value. */
	CHECK(jl_wall_reading(&w, t + S, 7, JL_WALL_RESET, 1000000000) == 0,
	      "reset");
	CHECK(w.rebase && !w.fresh, "a baseline, not a window");
}

/*
 * The power that shapes the node between readings (with neither RAPL nor a
 * model) from an energy meter: its mean over a window of twice its longest
 * interval, at least 2 s. Readings are stamped on receipt, so a reading
 * delivered d late moves it by at most d / window: stamped at its interval's
 * end, the last interval alone made 500 ms of energy look like 100 ms
 * (500 W from a 100 W meter), the last two still 166 W one reading later,
 * and three readings delivered together made it 10 kW.
 */
#define PW_MAX 20000000000ULL /* 20 kW, the module's default */

static int feed_at(struct jl_wall *w, jl_u64 t_ms, jl_u64 uj)
{
	return jl_wall_reading(w, t_ms * MS, uj, 0, PW_MAX);
}

/* A 100 W meter read every 500 ms up to t_ms: uJ at t. */
static void meter_100w(struct jl_wall *w, jl_u64 t_ms)
{
	jl_u64 t;

	jl_wall_reading(w, 0, 0, 0, PW_MAX);
	for (t = 500; t <= t_ms; t += 500)
		feed_at(w, t, t * 100000);
}

TEST(wall_power_late_reading)
{
	struct jl_wall w = { 0 };

	meter_100w(&w, 2500);
	CHECK(w.power_uw == 100000000, "on time: %llu uW", w.power_uw);
	/* Read at 3.0 s, delivered at 3.4 s: at most 0.4 s / 2 s off. */
	CHECK(feed_at(&w, 3400, 300000000) == 0, "3.4 s");
	CHECK(w.power_uw >= 80000000, "late: %llu uW", w.power_uw);
	CHECK(feed_at(&w, 3500, 350000000) == 0, "3.5 s");
	CHECK(w.power_uw <= 120000000, "after it: %llu uW", w.power_uw);
	CHECK(feed_at(&w, 4000, 400000000) == 0, "4.0 s");
	CHECK(w.power_uw >= 80000000 && w.power_uw <= 120000000,
	      "next period: %llu uW", w.power_uw);
}

TEST(wall_power_burst)
{
	struct jl_wall w = { 0 };

	meter_100w(&w, 2500);
	/*
	 * Read at 3.0, 3.5 and 4.0 s, delivered together at 4.0 s: a 1.5 s
	 * interval makes the window 3 s, the first is 1 s late: 1 / 3 off.
	 */
	CHECK(feed_at(&w, 4000, 300000000) == 0, "4.000 s");
	CHECK(feed_at(&w, 4005, 350000000) == 0, "4.005 s");
	CHECK(feed_at(&w, 4010, 400000000) == 0, "4.010 s");
	CHECK(w.power_uw >= 66666666 && w.power_uw <= 133333334,
	      "after a burst of three: %llu uW", w.power_uw);
}

/*
 * The window follows a step from 100 W to 200 W: each 500 ms reading
 * leaks a quarter of the 2 s window, so after eight of them the old power
 * weighs 0.75^8 = 10% (190.0 W; the mean since the baseline: 161 W).
 */
TEST(wall_power_step)
{
	struct jl_wall w = { 0 };
	jl_u64 t;

	meter_100w(&w, 2500);
	for (t = 3000; t <= 6500; t += 500)
		feed_at(&w, t, 250000000 + (t - 2500) * 200000);
	CHECK(w.power_uw >= 189900000 && w.power_uw <= 190100000,
	      "4 s after the step: %llu uW", w.power_uw);
}

/*
 * The same burst with each reading's age (METER_AGE_NS): stamped on
 * receipt for the books, but the rates go by when the readings were taken,
 * so the power is the meter's exactly; an age that would put a reading
 * before the last one counts from the last one.
 */
TEST(wall_power_aged)
{
	struct jl_wall w = { 0 };

	meter_100w(&w, 2500);
	CHECK(jl_wall_reading_aged(&w, 4000 * MS, 1000 * MS, 300000000, 0,
				   PW_MAX) == 0,
	      "taken at 3.0 s");
	CHECK(jl_wall_reading_aged(&w, 4005 * MS, 505 * MS, 350000000, 0,
				   PW_MAX) == 0,
	      "taken at 3.5 s");
	CHECK(jl_wall_reading_aged(&w, 4010 * MS, 10 * MS, 400000000, 0,
				   PW_MAX) == 0,
	      "taken at 4.0 s");
	CHECK(w.power_uw == 100000000, "aged burst: %llu uW", w.power_uw);
	CHECK(w.read_ns == 4010 * MS, "stamped on receipt: %llu", w.read_ns);
	/* 2 s old: before the last reading, so no time at all for 1 J. */
	CHECK(jl_wall_reading_aged(&w, 4100 * MS, 2 * S, 401000000, 0,
				   PW_MAX) == 0,
	      "older than the last");
	CHECK(w.period_ns == 0, "interval %llu ns", w.period_ns);
}

/*
 * An age no meter has is refused and changes nothing: on a baseline it
 * would have put the reading at boot, and the next one's interval (a power
 * meter's energy, an energy meter's plausibility) would span the uptime.
 */
TEST(wall_age_bounded)
{
	struct jl_wall w = { 0 };
	jl_u64 day = 86400 * S;

	CHECK(jl_wall_reading_aged(&w, day, ~0ULL, 500000000,
				   JL_WALL_POWER | JL_WALL_RESET,
				   PW_MAX) == -JL_ERANGE,
	      "an age of 2^64 ns");
	CHECK(jl_wall_reading_aged(&w, day, JL_WALL_MAX_AGE_NS + 1, 500000000,
				   JL_WALL_POWER | JL_WALL_RESET,
				   PW_MAX) == -JL_ERANGE,
	      "an age above the bound");
	CHECK(!w.primed, "a refused baseline is no baseline");
	CHECK(jl_wall_reading_aged(&w, day, JL_WALL_MAX_AGE_NS, 500000000,
				   JL_WALL_POWER | JL_WALL_RESET, PW_MAX) == 0,
	      "an age at the bound");
	CHECK(jl_wall_reading_aged(&w, day + S, 0, 500000000, JL_WALL_POWER,
				   PW_MAX) == 0,
	      "a second later");
	CHECK(w.unseen_uj == 61 * 500000000ULL,
	      "500 W over the 61 s since it was taken: %llu uJ", w.unseen_uj);
}

/*
 * After a 30 s stall the window is 60 s; it narrows again as the stall
 * passes out of it: a 500 ms meter's window is back at 2 s 60 s later.
 */
TEST(wall_power_window_narrows)
{
	struct jl_wall w = { 0 };
	jl_u64 t, uj = 200000000;

	meter_100w(&w, 2000);
	CHECK(feed_at(&w, 32000, uj += 3000000000ULL) == 0, "after 30 s");
	CHECK(w.pw_win_ns == 60 * S, "window %llu ns", w.pw_win_ns);
	for (t = 32500; t <= 92000; t += 500)
		feed_at(&w, t, uj += 50000000);
	CHECK(w.pw_win_ns == 2 * S, "window %llu ns 60 s later", w.pw_win_ns);
	CHECK(w.power_uw == 100000000, "%llu uW", w.power_uw);
}

/*
 * A 1 kW node read every 10 s, one reading 9.6 s late: the next one,
 * 400 ms after it, carries 10 s of energy (25 kW over its own interval,
 * above the 20 kW bound). Judged over the window, it is taken.
 */
TEST(wall_power_late_not_refused)
{
	struct jl_wall w = { 0 };

	jl_wall_reading(&w, 0, 0, 0, PW_MAX);
	CHECK(feed_at(&w, 10000, 10000000000ULL) == 0, "10 s");
	CHECK(feed_at(&w, 29600, 20000000000ULL) == 0, "29.6 s");
	CHECK(feed_at(&w, 30000, 30000000000ULL) == 0, "30 s");
	CHECK(w.power_uw == 1000000000, "%llu uW", w.power_uw);
	/* A new baseline starts the window again. */
	CHECK(jl_wall_reading(&w, 31 * S, 7, JL_WALL_RESET, PW_MAX) == 0,
	      "reset");
	CHECK(feed_at(&w, 31100, 20000007) == 0, "after the reset");
	CHECK(w.power_uw == 200000000, "one interval after a reset: %llu uW",
	      w.power_uw);
}

/*
 * A meter at 200 W against an 80 W shape, read once a second: +120 J found
 * at 1 s. What was found is owed whatever comes next: a silence (ticks out
 * of force) or a new baseline (meterd restarted, another meter) neither
 * drops it nor moves the meter's total back.
 */
static void found_120j(struct jl_wall *w, jl_u64 *t)
{
	int i;

	jl_wall_reading(w, 0, 0, 0, 20000000000ULL);
	for (i = 1; i <= 10; i++) {
		*t += 100 * MS;
		if (i == 10)
			jl_wall_reading(w, *t, 200000000, 0, 20000000000ULL);
		jl_wall_tick(w, *t - 100 * MS, *t, 8000000, 1, 0);
	}
}

/* Ticks in force after t until nothing is pending; what they gave above the shape. */
static jl_s64 drain(struct jl_wall *w, jl_u64 *t, int max)
{
	jl_s64 given = 0;

	while (max-- > 0 && w->pending_uj) {
		given += (jl_s64)jl_wall_tick(w, *t, *t + 100 * MS, 8000000, 1,
					      0) -
			 8000000;
		*t += 100 * MS;
	}
	return given;
}

TEST(wall_owed_across_silence)
{
	struct jl_wall w = { 0 };
	jl_u64 t = 0, meter;
	jl_s64 owed, given;

	found_120j(&w, &t);
	/* 120 J found, 12 J of it given by the tick that found it. */
	owed = w.pending_uj;
	meter = w.meter_uj;
	CHECK(owed == 108000000, "pending %lld", owed);
	jl_wall_tick(&w, t, t + 100 * MS, 8000000, 0, 0); /* silent */
	t += 100 * MS;
	CHECK(w.meter_uj >= meter, "meter went back %llu -> %llu", meter,
	      w.meter_uj);
	CHECK(w.pending_uj == owed,
	      "pending %lld after a silent tick, was %lld", w.pending_uj, owed);
	/* Back: a baseline, then the owed energy is given. */
	CHECK(!jl_wall_reading(&w, t + 50 * MS, 1, JL_WALL_RESET,
			       20000000000ULL),
	      "reset");
	meter = w.meter_uj;
	given = drain(&w, &t, 100);
	CHECK(w.meter_uj >= meter, "meter went back %llu -> %llu", meter,
	      w.meter_uj);
	CHECK(given == owed, "gave %lld of %lld owed", given, owed);
}

TEST(wall_owed_across_reset)
{
	struct jl_wall w = { 0 };
	jl_u64 t = 0, meter;
	jl_s64 owed, given;

	found_120j(&w, &t);
	owed = w.pending_uj;
	meter = w.meter_uj;
	CHECK(!jl_wall_reading(&w, t + 50 * MS, 5, JL_WALL_RESET,
			       20000000000ULL),
	      "reset");
	given = drain(&w, &t, 100);
	CHECK(w.meter_uj >= meter, "meter went back %llu -> %llu", meter,
	      w.meter_uj);
	CHECK(given == owed, "gave %lld of %lld owed", given, owed);
}

/* A negative difference is held back after a silence too. */
TEST(wall_held_back_across_silence)
{
	struct jl_wall w = { 0 };
	jl_u64 t = 0;
	jl_s64 held;
	int i;

	/* 10 W meter, 80 W shape: -70 J found at 1 s. */
	jl_wall_reading(&w, 0, 0, 0, 20000000000ULL);
	for (i = 1; i <= 10; i++) {
		t += 100 * MS;
		if (i == 10)
			jl_wall_reading(&w, t, 10000000, 0, 20000000000ULL);
		jl_wall_tick(&w, t - 100 * MS, t, 8000000, 1, 0);
	}
	held = w.pending_uj;
	CHECK(held < 0, "pending %lld", held);
	jl_wall_tick(&w, t, t + 100 * MS, 8000000, 0, 0);
	t += 100 * MS;
	CHECK(w.pending_uj == held,
	      "pending %lld after a silent tick, was %lld", w.pending_uj, held);
	CHECK(!jl_wall_reading(&w, t + 50 * MS, 1, JL_WALL_RESET,
			       20000000000ULL),
	      "reset");
	CHECK(drain(&w, &t, 1000) == held, "not all held back");
}

/* Negative differences hold back later charges; never below zero. */
TEST(wall_negative)
{
	struct jl_wall w = { 0 };
	jl_u64 t = 0, n;
	int i;

	CHECK(jl_wall_reading(&w, 0, 50000000, JL_WALL_POWER, 1000000000) == 0,
	      "baseline 50 W");
	for (i = 1; i <= 40; i++) {
		t += 100 * MS;
		/* The meter says 10 W; the shape 50 W. */
		if (i % 10 == 0)
			CHECK(jl_wall_reading(&w, t, 10000000, JL_WALL_POWER,
					      1000000000) == 0,
			      "reading %d", i);
		n = jl_wall_tick(&w, t - 100 * MS, t, i > 30 ? 0 : 5000000, 1,
				 0);
		CHECK(n <= 5000000, "tick %d charged %llu, more than its shape",
		      i, n);
		if (i > 30)
			CHECK(n == 0,
			      "tick %d: no shape, nothing to hold back from",
			      i);
	}
	/* What could not be held back stays pending (negative). */
	CHECK(w.pending_uj < 0, "pending %lld", w.pending_uj);
}

/*
 * Random ticks, shapes and readings (energy and power, resets, refusals,
 * ticks out of force after which the next reading is a baseline, as the
 * module makes it). After every tick that saw a reading, the module's view
 * must equal this test's: meter total on the node's scale minus the node
 * at the reading's instant is what is pending before the tick's spread;
 * the meter's total never goes back.
 */
TEST(wall_random)
{
	const char *env = getenv("WALL_SEED");
	jl_u64 seed = env && *env ? strtoull(env, NULL, 0) : 0x77616c6c;
	unsigned int run, bad = 0;

	DIAG("seed %#llx (WALL_SEED=%#llx replays)", seed, seed);
	rng_state = seed;
	for (run = 0; run < 200; run++) {
		struct jl_wall w = { 0 };
		jl_u64 t = 0, tick_ns = (10 + rnd_below(1000)) * MS;
		jl_u64 max_uw = 2000000000ULL; /* 2 kW */
		jl_u64 node = 0, meter_raw = rnd_below(1ULL << 40);
		jl_u64 last_read = 0, last_power = 0;
		/* the test's own meter total, since its base */
		u128 meter_fj = 0;
		jl_u64 base_node = 0; /* node at the baseline's instant */
		int power = rnd() & 1, primed = 0, based = 0, fresh = 0, i;
		int silent = 0; /* a silence: the next reading is a baseline */
		jl_u64 read_at = 0, reset_at = 0, meter_seen = 0;

		for (i = 0; i < 300 && !bad; i++) {
			jl_u64 t0 = t, shape = rnd_below(tick_ns / 1000 *
							 500); /* < 500 W */
			int k, nread = rnd_below(4) == 0 ?
					       (int)rnd_below(3) + 1 :
					       0;
			/* Now and then a tick out of force, without readings. */
			int in_force = !primed || rnd_below(40) != 0;

			if (!in_force) {
				nread = 0;
				silent = 1;
			}

			t += tick_ns;
			/* Readings inside (t0, t], in order. */
			for (k = 0; k < nread; k++) {
				jl_u64 at = t0 + 1 +
					    (tick_ns - 1) * (k + 1) / nread;
				jl_u64 p = rnd_below(max_uw / 2);
				int reset =
					!primed || silent || rnd_below(50) == 0;
				int rc;

				if (at <= last_read)
					continue;
				if (power) {
					rc = jl_wall_reading(
						&w, at, p,
						JL_WALL_POWER |
							(reset ? JL_WALL_RESET :
								 0),
						max_uw);
					if (rc) {
						bad++;
						DIAG("run %u: power %llu refused (%d)",
						     run, p, rc);
						break;
					}
					if (!reset)
						meter_fj +=
							(u128)(last_power / 2 +
							       p / 2 +
							       (last_power & p &
								1)) *
							(at - last_read);
					last_power = p;
				} else {
					jl_u64 uj =
						(jl_u64)((u128)p *
							 (at - last_read) / S);

					if (rnd_below(20) == 0) {
						/* Backwards without a reset: refused. */
						if (primed && !reset &&
						    jl_wall_reading(
							    &w, at,
							    meter_raw - 1, 0,
							    max_uw) !=
							    -JL_ERANGE) {
							bad++;
							DIAG("run %u: backwards accepted",
							     run);
						}
						continue;
					}
					meter_raw +=
						reset ? rnd_below(1000) : uj;
					rc = jl_wall_reading(
						&w, at, meter_raw,
						reset ? JL_WALL_RESET : 0,
						max_uw);
					if (rc) {
						bad++;
						DIAG("run %u: energy refused (%d)",
						     run, rc);
						break;
					}
					if (!reset)
						meter_fj += (u128)uj *
							    1000000000ULL;
				}
				if (reset) {
					meter_fj = 0;
					based = 0;
					reset_at = at;
					fresh = 0;
				} else {
					fresh = 1;
					read_at = at;
				}
				primed = 1;
				silent = 0;
				last_read = at;
			}
			if (!based && primed) {
				/* The baseline's instant, in this tick or an earlier one. */
				/* The node at the baseline, and what is still owed. */
				base_node = node +
					    (reset_at > t0 ?
						     (jl_u64)((u128)shape *
							      (reset_at - t0) /
							      tick_ns) :
						     0) +
					    (jl_u64)w.pending_uj;
				based = 1;
			}
			{
				jl_u64 at_read =
					node +
					(jl_u64)((u128)shape * (read_at - t0) /
						 tick_ns);
				jl_u64 n = jl_wall_tick(&w, t0, t, shape,
							in_force, 0);
				/* What the tick gave (+) or held back (-) of the pending. */
				jl_s64 c = (jl_s64)(n - shape);

				if (fresh) {
					/* Power integrates to whole uJ, the rest carried. */
					jl_u64 m = base_node +
						   (jl_u64)(meter_fj /
							    1000000000ULL);

					if (w.meter_uj != m) {
						bad++;
						DIAG("run %u tick %d: meter %llu, expected %llu",
						     run, i, w.meter_uj, m);
					}
					if (w.pending_uj + c !=
					    (jl_s64)(m - at_read)) {
						bad++;
						DIAG("run %u tick %d: found %lld, expected %lld",
						     run, i, w.pending_uj + c,
						     (jl_s64)(m - at_read));
					}
					fresh = 0;
				}
				/* Never below zero, never more than the shape and the pending. */
				if (c < -(jl_s64)shape ||
				    (c > 0 && c > w.pending_uj + c)) {
					bad++;
					DIAG("run %u tick %d: charge %llu of shape %llu",
					     run, i, n, shape);
				}
				node += n;
				if (!in_force && n != shape) {
					bad++;
					DIAG("run %u tick %d: out of force, %llu of shape %llu",
					     run, i, n, shape);
				}
				if (w.meter_uj < meter_seen) {
					bad++;
					DIAG("run %u tick %d: meter went back %llu -> %llu",
					     run, i, meter_seen, w.meter_uj);
				}
				meter_seen = w.meter_uj;
				if (node != w.node_uj) {
					bad++;
					DIAG("run %u tick %d: node %llu vs %llu",
					     run, i, node, w.node_uj);
				}
			}
		}
		/* The meter goes quiet but stays in force: a positive pending is all given. */
		if (!bad && w.pending_uj > 0) {
			jl_u64 left = w.ticks_left, given = 0;
			jl_s64 p = w.pending_uj;

			for (i = 0; i < (int)left; i++) {
				given += jl_wall_tick(&w, t, t + tick_ns, 1000,
						      1, 0) -
					 1000;
				t += tick_ns;
			}
			if (w.pending_uj != 0 || given != (jl_u64)p) {
				bad++;
				DIAG("run %u: %lld pending, %llu given over %llu ticks, %lld left",
				     run, p, given, left, w.pending_uj);
			}
		}
	}
	CHECK(!bad, "%u mismatches (seed %#llx)", bad, seed);
}

/*
 * Idle windows: a reading every second, ticks of 100 ms; tick i covers
 * (i x 100 - 50, i x 100 + 50] ms, so the reading at k s falls in tick
 * 10k, and each side of it gets half of that tick's CPU time. A window is
 * idle when its CPU time is at most 2% of its length (jl_base_idle()),
 * whatever one tick of it held: window 1 (900 ms, 18 ms allowed) has one
 * tick of 15 ms, 15% of that tick; window 2 has two ticks of 12 ms, 24 ms
 * in all; the reading at 3 s holds 30 ms, 15 ms for each of windows 3 and
 * 4, and window 4 has a tick of 10 ms too; window 5 has 20 ms, the limit.
 */
static jl_u64 tick_busy_ms(int tick)
{
	switch (tick) {
	case 5:
		return 15;
	case 13:
	case 17:
		return 12;
	case 30:
		return 30;
	case 35:
		return 10;
	case 45:
		return 20;
	}
	return 0;
}

TEST(wall_window_idle)
{
	static const int want[5] = { 1, 0, 1, 0, 1 };
	struct jl_wall w = { 0 };
	jl_u64 v0 = 1000000000, seen = 0;
	int i, got[5] = { -1, -1, -1, -1, -1 };

	CHECK(jl_wall_reading(&w, 100 * MS, v0, 0, 1000000000) == 0,
	      "baseline");
	for (i = 1; i <= 50; i++) {
		jl_u64 t1 = i * 100 * MS + 50 * MS;

		/* 40 W since the baseline at 100 ms. */
		if (i % 10 == 0)
			CHECK(jl_wall_reading(&w, i / 10 * S,
					      v0 + (i * 100 - 100) * 40000, 0,
					      1000000000) == 0,
			      "reading at %d s", i / 10);
		jl_wall_tick(&w, t1 - 100 * MS, t1, 4000000, 1,
			     tick_busy_ms(i) * MS);
		if (w.windows == seen)
			continue;
		seen = w.windows;
		CHECK(i % 10 == 0, "window %llu closed at tick %d", seen, i);
		if (seen > 5)
			continue;
		got[seen - 1] = w.window_idle;
		CHECK(w.window_uj == (seen == 1 ? 36000000 : 40000000) &&
			      w.window_ns == (seen == 1 ? 900 * MS : S),
		      "window %llu: %llu uJ over %llu ns", seen, w.window_uj,
		      w.window_ns);
	}
	CHECK(seen == 5, "%llu windows closed", seen);
	for (i = 0; i < 5; i++)
		CHECK(got[i] == want[i], "window %d idle: %d, want %d", i + 1,
		      got[i], want[i]);
}

TEST_HARNESS_MAIN
