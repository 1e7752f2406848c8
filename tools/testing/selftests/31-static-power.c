// SPDX-License-Identifier: GPL-2.0
/*
 * Static power, measured (meter_idle_uw "auto", the default): the energy
 * of intervals in which almost nothing ran, over their length. The
 * synthetic meter plays hardware whose static power the test knows: 5 W
 * (pkg) + 2 W (dram) while the node idles, 15 W + 4 W with every CPU
 * busy. Under that load the idle energy must be the 7 W of static power
 * times the time, within 2%, and the tasks get the rest. The same for the
 * wall meter, fed 40 W idle and 90 W busy.
 *
 * The 2%: the estimate is the energy of about 60 idle intervals over their
 * length; each interval's energy is taken a little after its end, and a
 * stalled vCPU makes one take late by a few ms (of 100 ms) now and then.
 */
#include <sys/mman.h>

#include "selftest.h"
#include "nl.h"

#define TM_KO ST_METER
#define TM_PARAM "/sys/module/joules_testmeter/parameters"
#define STATIC JOULES_SYSFS "/static_power"
#define WALL JOULES_SYSFS "/wallmeter"
#define IDLE_S 6
#define NR_SAMPLES 20

/* "SCOPE DOMAIN power_uw N age_ms N ..." of static_power: 0 or -1 (absent, "-"). */
static int static_line(const char *scope, const char *dom,
		       unsigned long long *uw, unsigned long long *age_ms,
		       char *in_force, size_t size)
{
	char body[1024], head[64], *p;

	if (st_read(STATIC, body, sizeof(body)) <= 0)
		return -1;
	snprintf(head, sizeof(head), "%s %s power_uw ", scope, dom);
	for (p = body; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		char force[32];

		if (strncmp(p, head, strlen(head)))
			continue;
		if (sscanf(p + strlen(head),
			   "%llu age_ms %llu idle_ms %*u in_force %31s", uw,
			   age_ms, force) != 3)
			return -1;
		snprintf(in_force, size, "%s", force);
		return 0;
	}
	return -1;
}

static int set_power(const char *dom, unsigned long long uw)
{
	char path[128], v[32];

	snprintf(path, sizeof(path), TM_PARAM "/%s_uw", dom);
	snprintf(v, sizeof(v), "%llu", uw);
	return st_write(path, v, strlen(v));
}

/* One busy loop per online CPU; their pids in pids[], how many returned. */
static int burn_all(pid_t *pids, int max)
{
	int n = sysconf(_SC_NPROCESSORS_ONLN), i;

	/* The fixture is shared with the parent: only the parent writes a pid. */
	for (i = 0; i < n && i < max; i++) {
		pid_t p = fork();

		if (!p) {
			volatile unsigned long x = 0;

			for (;;)
				x++;
		}
		pids[i] = p;
	}
	return i;
}

static void reap_all(pid_t *pids, int n)
{
	for (int i = 0; i < n; i++) {
		if (pids[i] > 0) {
			kill(pids[i], SIGKILL);
			waitpid(pids[i], NULL, 0);
			pids[i] = -1;
		}
	}
}

/* Σ idle, energy and time of NR_SAMPLES fresh samples. */
static int sum_samples(struct jnl *nl, unsigned long long *idle,
		       unsigned long long *energy, unsigned long long *ns)
{
	static struct sample_rec s[NR_SAMPLES];
	int i, n = st_fresh_samples(nl, s, NR_SAMPLES);

	*idle = *energy = *ns = 0;
	for (i = 0; i < n; i++) {
		*idle += s[i].idle_uj;
		*energy += s[i].energy_uj;
		*ns += s[i].interval_ns;
	}
	return n == NR_SAMPLES ? 0 : -1;
}

/* Within pct percent of want: the tolerance each check states. */
static bool near(unsigned long long got, unsigned long long want,
		 unsigned int pct)
{
	return got * 100 >= want * (100 - pct) &&
	       got * 100 <= want * (100 + pct);
}

FIXTURE(base)
{
	struct st_settings saved;
	pid_t burners[64];
	int nr;
	pid_t feeder;
};

FIXTURE_SETUP(base)
{
	self->nr = 0;
	self->feeder = -1;
	st_settings_save(&self->saved);
	ASSERT_EQ(0, st_write(JOULES_SYSFS "/meter_idle_uw", "auto", 4));
}

FIXTURE_TEARDOWN_PARENT(base)
{
	reap_all(self->burners, self->nr);
	if (self->feeder > 0) {
		kill(self->feeder, SIGKILL);
		waitpid(self->feeder, NULL, 0);
	}
	st_sh("rmmod joules_testmeter 2>/dev/null");
	/* The wall meter out of force before the next test. */
	st_write(WALL "/timeout_ms", "100", 3);
	usleep(4 * st_interval_ms() * 1000 + 300000);
	st_write(WALL "/timeout_ms", "30000", 5);
	EXPECT_EQ(0, st_settings_restore(&self->saved));
}

/* RAPL's static power comes out as idle energy under 100% load */
TEST_F(base, rapl)
{
	unsigned long long uw = 0, dram = 0, age = 0, idle, energy, ns, want;
	char force[32] = "";
	struct jnl *nl;

	ASSERT_EQ(0, st_sh("insmod " TM_KO
			   " nr_domains=2 pkg_uw=5000000 dram_uw=2000000"));
	ASSERT_EQ(0, jnl_open(&nl));
	ASSERT_EQ(0, jnl_subscribe(nl, JNL_GRP_SAMPLES));
	/* Nothing was measured before the meter. */
	sleep(IDLE_S);
	ASSERT_EQ(0,
		  static_line("pkg0", "pkg", &uw, &age, force, sizeof(force)))
	TH_LOG("no pkg estimate after %d s of idle", IDLE_S);
	ASSERT_EQ(0, static_line("pkg0", "dram", &dram, &age, force,
				 sizeof(force)));
	DIAG("idle: pkg %llu uW, dram %llu uW, %s, %llu ms old", uw, dram,
	     force, age);
	CHECK(near(uw, 5000000, 2) && near(dram, 2000000, 2),
	      "static power %llu + %llu uW, the meter drew 5 W + 2 W", uw,
	      dram);
	CHECK(!strcmp(force, "measured"), "in force: %s", force);

	/* The load, then the power it draws. */
	self->nr = burn_all(self->burners, 64);
	usleep(500000);
	ASSERT_EQ(0, set_power("pkg", 15000000));
	ASSERT_EQ(0, set_power("dram", 4000000));
	usleep(300000);
	ASSERT_EQ(0, sum_samples(nl, &idle, &energy, &ns));
	want = 7000000ULL * (ns / 1000) / 1000000;
	DIAG("busy: %llu uJ over %llu ns, idle %llu uJ (7 W: %llu)", energy, ns,
	     idle, want);
	CHECK(near(idle, want, 2),
	      "idle %llu uJ under load, static power gives %llu", idle, want);
	/* As 30-rapl: a window's ends lag their stamps by a few ms of 19 W. */
	CHECK(near(energy - idle, 12000000ULL * (ns / 1000) / 1000000, 3),
	      "tasks got %llu uJ of %llu over %llu ns: not 12 W", energy - idle,
	      energy, ns);
	/* No idle interval under load: the estimate stays, and ages. */
	ASSERT_EQ(0,
		  static_line("pkg0", "pkg", &uw, &age, force, sizeof(force)));
	CHECK(near(uw, 5000000, 2) && age >= ns / 1000000,
	      "under load: %llu uW, %llu ms old after %llu ms busy", uw, age,
	      ns / 1000000);

	/* Set, it is what is charged (still under load), and says so. */
	ASSERT_EQ(0, st_write(JOULES_SYSFS "/meter_idle_uw",
			      "1000000 0 500000 0", 18));
	ASSERT_EQ(0,
		  static_line("pkg0", "pkg", &uw, &age, force, sizeof(force)));
	CHECK(!strcmp(force, "set"), "in force: %s", force);
	ASSERT_EQ(0, sum_samples(nl, &idle, &energy, &ns));
	want = 1500000ULL * (ns / 1000) / 1000000;
	CHECK(near(idle, want, 2), "idle %llu uJ with 1.5 W set, want %llu",
	      idle, want);
	reap_all(self->burners, self->nr);
	jnl_close(nl);
}

/* the wall meter's static power likewise */
TEST_F(base, wall)
{
	unsigned long long uw = 0, age = 0, idle, energy, ns, want;
	volatile unsigned long long *power;
	char force[32] = "";
	struct jnl *nl;
	pid_t feeder;
	int i;

	power = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, power);
	*power = 40000000;
	/* No other shape: the meter's power shapes the node. */
	ASSERT_EQ(0, st_write(JOULES_SYSFS "/source", "rapl", 4));
	feeder = fork();
	ASSERT_LE(0, feeder);
	if (!feeder) {
		struct jnl *f;

		if (jnl_open(&f))
			_exit(1);
		for (i = 0; i < 600; i++) {
			if (jnl_meter_feed_power(f, "pdu-static", *power,
						 i == 0))
				_exit(2);
			usleep(200000);
		}
		_exit(0);
	}
	self->feeder = feeder;
	ASSERT_EQ(0, jnl_open(&nl));
	ASSERT_EQ(0, jnl_subscribe(nl, JNL_GRP_SAMPLES));
	sleep(IDLE_S);
	ASSERT_EQ(0,
		  static_line("wall", "meter", &uw, &age, force, sizeof(force)))
	TH_LOG("no wall estimate after %d s of idle", IDLE_S);
	DIAG("idle: wall %llu uW, %llu ms old", uw, age);
	CHECK(near(uw, 40000000, 2), "wall static power %llu uW, fed 40 W", uw);

	self->nr = burn_all(self->burners, 64);
	usleep(500000);
	*power = 90000000;
	usleep(600000);
	ASSERT_EQ(0, sum_samples(nl, &idle, &energy, &ns));
	want = 40000000ULL * (ns / 1000) / 1000000;
	DIAG("busy: %llu uJ over %llu ns, idle %llu uJ (40 W: %llu)", energy,
	     ns, idle, want);
	CHECK(near(idle, want, 2),
	      "idle %llu uJ under load, static power gives %llu", idle, want);
	CHECK(energy > idle, "the tasks got nothing of %llu uJ", energy);
	jnl_close(nl);
	munmap((void *)power, 4096);
}

TEST_HARNESS_MAIN
