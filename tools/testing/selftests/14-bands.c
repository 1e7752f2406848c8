// SPDX-License-Identifier: GPL-2.0
/*
 * Frequency bands of the model (issue 18). QEMU has no PMU and no cpufreq,
 * so the node has no frequency here: a banded model is refused, a one-band
 * one is the old model. The test meter, loaded with freq_mhz=, is a
 * frequency source whose value the test sets; with it the worker must
 * charge every interval with the set of the band its frequency falls in,
 * say which in the sample, and keep the band in force while the frequency
 * is unknown.
 */
#include "kselftest_harness.h"
#include "selftest.h"

#define MODEL JOULES_SYSFS "/model"
#define FREQ_PARAM "/sys/module/joules_testmeter/parameters/freq_mhz"

/* Band 0 up to 2000 MHz: 10 W per CPU-second, 2 W idle; above: 30 W, 5 W. */
#define BANDS_AB                                \
	"2000 10000000 0 0 0 0 0 0 0 2000000\n" \
	"max 30000000 0 0 0 0 0 0 0 5000000\n"
#define ONE_SET "20000000 0 0 0 0 0 0 0 3000000\n"

static unsigned long long generation(void)
{
	char b[32];

	if (st_read(MODEL "/generation", b, sizeof(b)) <= 0)
		return ~0ull;
	return strtoull(b, NULL, 10);
}

static int wr(const char *path, const char *s)
{
	return st_write(path, s, strlen(s));
}

static void rd_line(const char *path, char *b, size_t size)
{
	ssize_t n = st_read(path, b, size);

	if (n <= 0)
		b[0] = 0;
	else if (b[n - 1] == '\n')
		b[n - 1] = 0;
}

/* |a - b| within tol (the worker carries sub-microjoule rests). */
static bool near(unsigned long long a, unsigned long long b,
		 unsigned long long tol)
{
	return a > b ? a - b <= tol : b - a <= tol;
}

/* The model's energy of a sample: idle_uw over the interval and cpu_uw per CPU-ns. */
static void check_sample(struct __test_metadata *_metadata,
			 const struct sample_rec *s, unsigned long long cpu_uw,
			 unsigned long long idle_uw)
{
	unsigned long long idle = idle_uw * s->interval_ns / 1000000000ull;
	unsigned long long busy = cpu_uw * s->feat[JL_F_CPU_NS] / 1000000000ull;

	EXPECT_TRUE(near(s->idle_uj, idle, 1))
	TH_LOG("idle %llu uJ over %llu ns, want %llu",
	       (unsigned long long)s->idle_uj,
	       (unsigned long long)s->interval_ns, idle);
	/* Each task's rest is carried on its own: one uJ per task at most. */
	EXPECT_TRUE(near(s->energy_uj - s->idle_uj, busy, s->nr_tasks + 1))
	TH_LOG("busy %llu uJ for %llu CPU-ns, want %llu",
	       (unsigned long long)(s->energy_uj - s->idle_uj),
	       (unsigned long long)s->feat[JL_F_CPU_NS], busy);
}

/* Samples of intervals after this call, with the CPU busy meanwhile. */
static int busy_samples(struct jnl *nl, struct sample_rec *s, int n)
{
	struct jnl_event ev;

	while (jnl_next_event(nl, &ev, 0) == 1)
		jnl_event_free(&ev);
	st_burn_cpu(n * st_interval_ms() / 1000.0);
	return st_samples(nl, s, n);
}

FIXTURE(model)
{
	struct st_settings saved;
};

FIXTURE_SETUP(model)
{
	st_settings_save(&self->saved);
}

/*
 * Everything the test changed, the synthetic meter's static power
 * included; from the parent, so also after a timeout.
 */
FIXTURE_TEARDOWN_PARENT(model)
{
	st_sh("rmmod joules_testmeter 2>/dev/null");
	EXPECT_EQ(0, st_settings_restore(&self->saved));
}

/* No frequency source: one band only, and it is the old model. */
TEST_F(model, without_a_frequency_one_band)
{
	char b[64], bands[512];
	unsigned long long g;

	rd_line(MODEL "/frequency_source", b, sizeof(b));
	if (strcmp(b, "none"))
		SKIP(return, "this machine has a frequency source (%s)", b);
	rd_line(MODEL "/frequency_mhz", b, sizeof(b));
	EXPECT_STREQ("unknown", b);

	g = generation();
	EXPECT_EQ(-EOPNOTSUPP, wr(MODEL "/bands", BANDS_AB));
	EXPECT_EQ(g, generation());

	ASSERT_EQ(0, wr(MODEL "/bands", "max " ONE_SET));
	EXPECT_EQ(g + 1, generation());
	rd_line(MODEL "/coefficients", b, sizeof(b));
	EXPECT_EQ(0, strncmp(b, ONE_SET, strlen(ONE_SET) - 1))
	TH_LOG("coefficients '%s'", b);
	st_read(MODEL "/bands", bands, sizeof(bands));
	EXPECT_STREQ("max " ONE_SET, bands);
	rd_line(MODEL "/band", b, sizeof(b));
	EXPECT_STREQ("0", b);
	/* A per-coefficient file edits the one set. */
	EXPECT_EQ(0, wr(MODEL "/idle_uw", "4000000"));
	EXPECT_EQ(g + 2, generation());
}

/* With a frequency: every interval charged by its band's set. */
TEST_F(model, bands_follow_the_frequency)
{
	struct sample_rec s[4];
	struct jnl *nl = NULL;
	char b[512];
	unsigned long long g;
	int n, i;

	ASSERT_EQ(0, st_meter_subscribe("freq_mhz=1500", &nl));
	rd_line(MODEL "/frequency_source", b, sizeof(b));
	EXPECT_STREQ("joules_testmeter", b);
	ASSERT_EQ(0, wr(JOULES_SYSFS "/source", "model"));

	g = generation();
	ASSERT_EQ(0, wr(MODEL "/bands", BANDS_AB));
	EXPECT_EQ(g + 1, generation());
	st_read(MODEL "/bands", b, sizeof(b));
	EXPECT_STREQ(BANDS_AB, b);

	n = busy_samples(nl, s, 4);
	ASSERT_EQ(4, n);
	for (i = 1; i < n; i++) {
		EXPECT_EQ(1500, s[i].freq_mhz);
		EXPECT_EQ(0, s[i].band);
		EXPECT_EQ(g + 1, s[i].model_generation);
		check_sample(_metadata, &s[i], 10000000, 2000000);
	}
	rd_line(MODEL "/band", b, sizeof(b));
	EXPECT_STREQ("0", b);

	ASSERT_EQ(0, wr(FREQ_PARAM, "2500"));
	n = busy_samples(nl, s, 4);
	ASSERT_EQ(4, n);
	for (i = 1; i < n; i++) {
		EXPECT_EQ(2500, s[i].freq_mhz);
		EXPECT_EQ(1, s[i].band);
		check_sample(_metadata, &s[i], 30000000, 5000000);
	}
	rd_line(MODEL "/band", b, sizeof(b));
	EXPECT_STREQ("1", b);
	rd_line(MODEL "/frequency_mhz", b, sizeof(b));
	EXPECT_STREQ("2500", b);

	/* Unknown frequency: the band in force stays, and is said to. */
	ASSERT_EQ(0, wr(FREQ_PARAM, "0"));
	n = busy_samples(nl, s, 3);
	ASSERT_EQ(3, n);
	for (i = 1; i < n; i++) {
		EXPECT_EQ(0, s[i].freq_mhz);
		EXPECT_EQ(1, s[i].band);
		check_sample(_metadata, &s[i], 30000000, 5000000);
	}
	rd_line(MODEL "/frequency_mhz", b, sizeof(b));
	EXPECT_STREQ("unknown", b);

	/* One coefficient of several sets is ambiguous; bad text changes nothing. */
	g = generation();
	EXPECT_EQ(-EBUSY, wr(MODEL "/cpu_time_uw", "1"));
	/* joulesctl set refuses too, rather than make it a one-band model. */
	EXPECT_NE(0, st_sh("joulesctl set cpu_time_uw=1 2>/dev/null"));
	EXPECT_EQ(-EINVAL, wr(MODEL "/bands", "3000 1 0 0 0 0 0 0 0 1\n"
					      "2000 1 0 0 0 0 0 0 0 1\n"
					      "max 1 0 0 0 0 0 0 0 1\n"));
	EXPECT_EQ(-EINVAL, wr(MODEL "/bands", "2000 1 0 0 0 0 0 0 0 1\n"));
	EXPECT_EQ(g, generation());
	st_read(MODEL "/bands", b, sizeof(b));
	EXPECT_STREQ(BANDS_AB, b);

	/* `coefficients` still takes one set, for every frequency. */
	ASSERT_EQ(0, wr(MODEL "/coefficients", ONE_SET));
	EXPECT_EQ(g + 1, generation());
	st_read(MODEL "/bands", b, sizeof(b));
	EXPECT_STREQ("max " ONE_SET, b);
	ASSERT_EQ(0, wr(FREQ_PARAM, "2500"));
	n = busy_samples(nl, s, 3);
	ASSERT_EQ(3, n);
	for (i = 1; i < n; i++) {
		EXPECT_EQ(0, s[i].band);
		check_sample(_metadata, &s[i], 20000000, 3000000);
	}
	jnl_close(nl);
}

TEST_HARNESS_MAIN
