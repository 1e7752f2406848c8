// SPDX-License-Identifier: GPL-2.0
/*
 * The wall meter (METER_FEED): only CAP_SYS_ADMIN feeds it; readings that
 * go back or are implausible are refused and counted; with the synthetic
 * RAPL meter shaping the node at 10 W and the wall meter fed at about
 * 30 W, the node's energy follows the wall meter: its total counts exactly
 * the energy fed, the difference found at the readings is spread until
 * nothing is pending, and tasks and samples say "meter". A silent meter
 * goes out of force and says so; its next reading is a new baseline.
 */
#include "selftest.h"
#include "nl.h"

#define NOBODY 65534
#define WALL JOULES_SYSFS "/wallmeter"

static unsigned long long wall_value(const char *file)
{
	char b[64];

	if (st_read(file, b, sizeof(b)) <= 0)
		return ~0ULL;
	return strtoull(b, NULL, 10);
}

/* A node record whose meter books were read within one interval. */
static int node_now(struct jnl *nl, struct node_rec *n)
{
	struct node_rec again;
	int tries;

	for (tries = 0; tries < 10; tries++) {
		if (jnl_get_node(nl, n) || jnl_get_node(nl, &again))
			return -1;
		if (n->intervals == again.intervals)
			return 0;
	}
	return -1;
}

/* Out of force before the next test: a short timeout, then the default back. */
static void wall_silence(void)
{
	st_write(WALL "/timeout_ms", "100", 3);
	usleep(4 * st_interval_ms() * 1000 + 300000);
	st_write(WALL "/timeout_ms", "30000", 5);
}

/* only CAP_SYS_ADMIN feeds; bad readings are refused with the reason */
TEST(refusals)
{
	unsigned long long refused = wall_value(WALL "/refused");
	struct jnl *nl;
	int status, err;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct jnl *unl;

		if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
			_exit(2);
		if (jnl_open(&unl))
			_exit(3);
		_exit(jnl_meter_feed_power(unl, "nobody", 1000000, false) ==
				      -EPERM ?
			      0 :
			      1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "an unprivileged feed was not refused with EPERM (status %#x)",
	      status);

	ASSERT_EQ(0, jnl_open(&nl));
	ASSERT_EQ(0, jnl_meter_feed(nl, "refusals", 5000000, true));
	err = jnl_meter_feed(nl, "refusals", 4000000, false);
	CHECK(err == -ERANGE, "energy going back: %d", err);
	CHECK(jnl_kernel_msg(nl) && strstr(jnl_kernel_msg(nl), "went back"),
	      "reason: %s", jnl_kernel_msg(nl) ? jnl_kernel_msg(nl) : "(none)");
	/* 1 MJ within a second is above the default 20 kW. */
	err = jnl_meter_feed(nl, "refusals", 5000000 + 1000000000000ULL, false);
	CHECK(err == -ERANGE, "absurd energy: %d", err);
	err = jnl_meter_feed_power(nl, "refusals", 30000000000ULL, false);
	CHECK(err == -ERANGE, "30 kW: %d", err);
	CHECK(wall_value(WALL "/refused") == refused + 3,
	      "refused %llu, was %llu", wall_value(WALL "/refused"), refused);
	err = jnl_meter_feed_power(nl, "", 1, false);
	CHECK(err == -EINVAL, "no name: %d", err);
	/* The name goes to the kernel log: no line breaks or escapes in it. */
	err = jnl_meter_feed_power(nl, "pdu\nBUG: fake", 1, false);
	CHECK(err == -EINVAL, "a newline in the name: %d", err);
	jnl_close(nl);
	wall_silence();
}

/*
 * No shape (source rapl without RAPL: nothing charges but the meter): a
 * task that mostly sleeps gets its CPU time's share of the node's CPU
 * time, not the whole node's energy of the ticks it ran in; the rest is
 * idle. Its share of 100 W is at most 100 W x its CPU time / CPUs, plus a
 * microjoule of rounding a tick; checked with room for the spread of the
 * difference found at a reading (a factor 2).
 */
TEST(unshaped)
{
	static struct st_settings saved;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned long long e = 0, cpu = 0;
	char body[4096], path[64];
	struct node_rec a, b;
	struct jnl *nl;
	int i, status;
	pid_t pid;

	st_settings_save(&saved);
	ASSERT_EQ(0, st_write(JOULES_SYSFS "/source", "rapl", 4));
	/* The share of the CPU time the node had, before a static power is known. */
	ASSERT_EQ(0, st_static_none());
	ASSERT_EQ(0, jnl_open(&nl));
	ASSERT_EQ(0, jnl_meter_feed_power(nl, "pdu-unshaped", 100000000, true));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/* A sleeper that wakes every 20 ms for a moment. */
		for (i = 0; i < 150; i++)
			usleep(20000);
		_exit(0);
	}
	ASSERT_EQ(0, node_now(nl, &a));
	for (i = 0; i < 12; i++) {
		usleep(200000);
		ASSERT_EQ(0, jnl_meter_feed_power(nl, "pdu-unshaped", 100000000,
						  false));
	}
	snprintf(path, sizeof(path), "/proc/energy/%d", pid);
	ASSERT_LT(0, st_read(path, body, sizeof(body)));
	EXPECT_EQ(0, st_kv(body, "energy_uj", &e));
	EXPECT_EQ(0, st_kv(body, "cpu_time_ns", &cpu));
	CHECK(e <= 2 * (100 * cpu / 1000 / (unsigned long long)ncpu) + 1000,
	      "a sleeper with %llu ns of CPU time got %llu uJ of 100 W on %ld CPUs",
	      cpu, e, ncpu);
	DIAG("sleeper: %llu ns of CPU, %llu uJ", cpu, e);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, node_now(nl, &b));
	CHECK(b.idle_uj > a.idle_uj,
	      "no idle energy under the meter (%llu -> %llu)",
	      (unsigned long long)a.idle_uj, (unsigned long long)b.idle_uj);
	jnl_close(nl);
	EXPECT_EQ(0, st_settings_restore(&saved));
	wall_silence();
}

/* Reading i of a 100 W meter read every 500 ms from t0, with its age. */
static int feed_aged(struct jnl *nl, double t0, int i)
{
	double age = st_now() - (t0 + i * 0.5);

	return jnl_meter_feed_aged(nl, "pdu-aged", i * 50000000ULL,
				   age > 0 ? (uint64_t)(age * 1e9) : 0, false);
}

/*
 * Readings with their age (METER_AGE_NS, as joules-meterd sends them): a
 * 100 W meter read every 500 ms whose last three readings arrive together
 * has its readings' power, not their arrival's: right after the first of
 * them (1.5 s after the one before, for 0.5 s of energy) 66.7 W stamped on
 * receipt alone. A vCPU stall between taking an age and its receipt moves
 * one interval by as much: 100 ms over the 2 s window is 5%.
 */
TEST(aged_readings)
{
	unsigned long long uw;
	struct jnl *nl;
	double t0;
	int i;

	ASSERT_EQ(0, jnl_open(&nl));
	t0 = st_now();
	ASSERT_EQ(0, jnl_meter_feed(nl, "pdu-aged", 0, true));
	for (i = 1; i <= 5; i++) {
		double wait = t0 + i * 0.5 - st_now();

		if (wait > 0)
			usleep(wait * 1e6);
		ASSERT_EQ(0, feed_aged(nl, t0, i));
	}
	usleep(1500000);
	for (i = 6; i <= 8; i++) {
		ASSERT_EQ(0, feed_aged(nl, t0, i));
		uw = wall_value(WALL "/power_uw");
		CHECK(uw >= 95000000 && uw <= 105000000,
		      "a 100 W meter, reading %d of three together: %llu uW", i,
		      uw);
	}
	jnl_close(nl);
	wall_silence();
}

FIXTURE(shaped)
{
	struct jnl *nl;
};

/* The synthetic RAPL meter: pkg 8 W + dram 2 W shape the node. */
FIXTURE_SETUP(shaped)
{
	ASSERT_EQ(0, st_meter_subscribe("nr_domains=2", &self->nl));
}

FIXTURE_TEARDOWN_PARENT(shaped)
{
	wall_silence();
	EXPECT_EQ(0, st_meter_unload());
}

/* the node follows the wall meter, not RAPL; nothing is left pending */
TEST_F(shaped, follows)
{
	const unsigned long long step_uj = 6000000; /* 6 J each 200 ms: 30 W */
	unsigned long long raw = 123456789, fed = 0, span;
	struct node_rec a, b, c;
	struct sample_rec s[3];
	char body[4096], status[64];
	double t_last, t_c;
	int i, n;

	/* The baseline, and one reading counted, seen by a tick. */
	ASSERT_EQ(0, jnl_meter_feed(self->nl, "pdu-test", raw, true));
	usleep(200000);
	raw += step_uj;
	ASSERT_EQ(0, jnl_meter_feed(self->nl, "pdu-test", raw, false));
	usleep(3 * st_interval_ms() * 1000);
	ASSERT_EQ(0, node_now(self->nl, &a));
	CHECK(!strcmp(a.meter_name, "pdu-test"), "meter name '%s'",
	      a.meter_name);

	/* A CPU burner while the meter is in force: it is charged "meter". */
	for (i = 0; i < 15; i++) {
		st_burn_cpu(0.2);
		raw += step_uj;
		fed += step_uj;
		ASSERT_EQ(0, jnl_meter_feed(self->nl, "pdu-test", raw, false));
	}
	t_last = st_now();
	n = st_fresh_samples(self->nl, s, 3);
	CHECK(n == 3, "%d samples", n);
	for (i = 0; i < n; i++)
		CHECK(s[i].source & REC_SRC_METER, "sample %d source %#x", i,
		      s[i].source);
	usleep(3 * st_interval_ms() * 1000);
	ASSERT_EQ(0, node_now(self->nl, &b));
	/* Readings are whole uJ of energy: the count is exact. */
	CHECK(b.meter_uj - a.meter_uj == fed, "meter counted %llu uJ, fed %llu",
	      (unsigned long long)(b.meter_uj - a.meter_uj), fed);

	ASSERT_LT(0, st_read("/proc/energy/self", body, sizeof(body)));
	CHECK(!st_kvs(body, "source", status, sizeof(status)) &&
		      strstr(status, "meter"),
	      "own source '%s'", status);

	/*
	 * One meter period (200 ms) and a few ticks later, the difference
	 * found at the last reading is spread: nothing pending, and the node
	 * is the meter's total plus what the shape (RAPL, 10 W) gave since.
	 */
	usleep(200000 + 3 * st_interval_ms() * 1000);
	ASSERT_EQ(0, node_now(self->nl, &c));
	t_c = st_now();
	CHECK(c.meter_pending_uj == 0, "pending %lld uJ",
	      (long long)c.meter_pending_uj);
	span = c.energy_uj - c.meter_uj;
	/* The shape's 10 W since the last reading, a tick's worth either way. */
	CHECK(c.energy_uj >= c.meter_uj &&
		      span <= (unsigned long long)((t_c - t_last) * 10e6 +
						   st_interval_ms() * 10e3),
	      "node %llu, meter %llu: %llu uJ apart in %.3f s at 10 W",
	      (unsigned long long)c.energy_uj, (unsigned long long)c.meter_uj,
	      span, t_c - t_last);
	DIAG("fed %llu uJ; node %llu, meter %llu, %.3f s after the last reading",
	     fed, (unsigned long long)c.energy_uj,
	     (unsigned long long)c.meter_uj, t_c - t_last);

	/* Silent: out of force, said in status; samples are RAPL's again. */
	st_write(WALL "/timeout_ms", "300", 3);
	usleep(300000 + 3 * st_interval_ms() * 1000);
	CHECK(st_read(WALL "/status", status, sizeof(status)) > 0 &&
		      !strncmp(status, "silent: pdu-test", 16),
	      "status '%s'", status);
	n = st_fresh_samples(self->nl, s, 2);
	for (i = 0; i < n; i++)
		CHECK(!(s[i].source & REC_SRC_METER) &&
			      (s[i].source & REC_SRC_RAPL),
		      "silent meter, sample source %#x", s[i].source);
	CHECK(!st_sh("dmesg | grep -q 'wall meter pdu-test silent'"),
	      "no log line");
	/* Back: a new baseline, whatever its value. */
	ASSERT_EQ(0, jnl_meter_feed(self->nl, "pdu-test", 7, false));
	CHECK(st_read(WALL "/status", status, sizeof(status)) > 0 &&
		      !strcmp(status, "pdu-test\n"),
	      "status '%s'", status);
}

/*
 * A meter at 1 W below the shape's 10 W holds charges back: over a span of
 * readings the node's energy is the meter's, within what the shape gives
 * between two readings and two ticks (10 W over the longest gap, as
 * measured here: usleep() stretches under emulation); nothing goes back.
 */
TEST_F(shaped, below)
{
	unsigned long long last = 0;
	double t0, gap = 0, bound;
	long long dn, dm;
	struct sample_rec s[4];
	struct node_rec a, b;
	int i, n;

	ASSERT_EQ(0, jnl_meter_feed_power(self->nl, "pdu-low", 1000000, true));
	for (i = 0; i < 3; i++) {
		usleep(200000);
		ASSERT_EQ(0, jnl_meter_feed_power(self->nl, "pdu-low", 1000000,
						  false));
	}
	usleep(200000 + 3 * st_interval_ms() * 1000);
	ASSERT_EQ(0, jnl_meter_feed_power(self->nl, "pdu-low", 1000000, false));
	usleep(3 * st_interval_ms() * 1000);
	ASSERT_EQ(0, node_now(self->nl, &a));
	t0 = st_now();
	for (i = 0; i < 12; i++) {
		struct node_rec x;
		double t;

		usleep(200000);
		t = st_now();
		gap = t - t0 > gap ? t - t0 : gap;
		t0 = t;
		ASSERT_EQ(0, jnl_meter_feed_power(self->nl, "pdu-low", 1000000,
						  false));
		ASSERT_EQ(0, jnl_get_node(self->nl, &x));
		CHECK(x.energy_uj >= last, "node went back: %llu < %llu",
		      (unsigned long long)x.energy_uj, last);
		last = x.energy_uj;
	}
	usleep(3 * st_interval_ms() * 1000);
	ASSERT_EQ(0, node_now(self->nl, &b));
	dn = (long long)(b.energy_uj - a.energy_uj);
	dm = (long long)(b.meter_uj - a.meter_uj);
	bound = 10e6 * (gap + 2 * st_interval_ms() / 1e3);
	CHECK(llabs(dn - dm) <= (long long)bound,
	      "node %lld uJ, meter %lld uJ over the span: more apart than %.0f uJ",
	      dn, dm, bound);
	/* The shape alone would have given about 10 times the meter's. */
	DIAG("node %lld uJ, meter %lld uJ, longest gap %.3f s", dn, dm, gap);
	n = st_fresh_samples(self->nl, s, 4);
	for (i = 0; i < n; i++) {
		CHECK(s[i].energy_uj >= s[i].idle_uj,
		      "sample %d: idle above energy", i);
		CHECK(s[i].source & REC_SRC_METER, "sample %d source %#x", i,
		      s[i].source);
	}
}

int main(int argc, char **argv)
{
	if (access(WALL, F_OK)) {
		printf("1..0 # SKIP joules module not loaded, or without a wall meter\n");
		return KSFT_SKIP;
	}
	if (access(ST_METER, F_OK)) {
		printf("1..0 # SKIP no %s\n", ST_METER);
		return KSFT_SKIP;
	}
	return test_harness_run(argc, argv);
}
