// SPDX-License-Identifier: GPL-2.0
/*
 * A module that registered an energy meter or a frequency source with
 * joules and is then unloaded. joules calls into it every interval, so
 * it must stop doing so once the module starts to go (its exit may be
 * tearing down what the callbacks use), and must not keep a pointer into
 * a module that is gone, even one whose exit forgot to unregister. Its
 * rmmod must still work: a reference held for as long as the source is
 * registered would make it fail.
 *
 * The test meter counts the reads it gets once unloading has begun and
 * says how many in its last line of dmesg.
 */
#include "selftest.h"

#define MODEL JOULES_SYSFS "/model"
#define TM_PARAM "/sys/module/joules_testmeter/parameters"

/* The count in the test meter's newest "N read(s) while unloading" line. */
static int late_reads(void)
{
	char b[64];
	int n = -1;
	FILE *f;

	f = popen(
		"dmesg | grep 'joules_testmeter: .* read(s) while unloading' | tail -n 1 | "
		"sed 's/.*joules_testmeter: \\([0-9]*\\) .*/\\1/'",
		"r");
	if (!f)
		return -1;
	if (fgets(b, sizeof(b), f))
		n = atoi(b);
	pclose(f);
	return n;
}

static void first_line(const char *path, char *b, size_t size)
{
	if (st_read(path, b, size) <= 0)
		snprintf(b, size, "(unreadable)");
	b[strcspn(b, "\n")] = 0;
}

FIXTURE(owner)
{
	struct st_settings saved;
};

FIXTURE_SETUP(owner)
{
	st_settings_save(&self->saved);
	st_sh("rmmod joules_testmeter 2>/dev/null");
	ASSERT_EQ(0, st_sh("insmod " ST_METER " freq_mhz=1800"));
}

FIXTURE_TEARDOWN_PARENT(owner)
{
	st_sh("rmmod joules_testmeter 2>/dev/null");
	EXPECT_EQ(0, st_settings_restore(&self->saved));
}

/*
 * Its exit sleeps half a second before it unregisters: joules makes no
 * read of it meanwhile (tens of intervals and meter samples), and the
 * rmmod itself succeeds.
 */
TEST_F(owner, no_read_once_the_module_is_going)
{
	char b[128];

	ASSERT_EQ(0, st_write(TM_PARAM "/exit_delay_ms", "500", 3));
	usleep(3 * st_interval_ms() * 1000);
	first_line(MODEL "/frequency_source", b, sizeof(b));
	ASSERT_STREQ("joules_testmeter", b);
	ASSERT_EQ(0, st_sh("rmmod joules_testmeter"));
	EXPECT_EQ(0, late_reads());
	first_line(MODEL "/frequency_source", b, sizeof(b));
	EXPECT_STRNE("joules_testmeter", b);
}

/*
 * Its exit never unregisters: joules drops both registrations as the
 * module goes, says so, and carries on without them.
 */
TEST_F(owner, a_source_left_registered_is_dropped)
{
	char b[256], e[256];

	ASSERT_EQ(0, st_write(TM_PARAM "/forget_on_exit", "1", 1));
	usleep(3 * st_interval_ms() * 1000);
	ASSERT_EQ(0, st_sh("rmmod joules_testmeter"));
	EXPECT_EQ(0, late_reads());
	/* A few intervals and meter samples that would call into it. */
	usleep(10 * st_interval_ms() * 1000 + 200000);
	first_line(MODEL "/frequency_source", b, sizeof(b));
	EXPECT_STRNE("joules_testmeter", b);
	first_line(JOULES_SYSFS "/rapl/status", b, sizeof(b));
	EXPECT_EQ(0, strncmp(b, "absent", 6)) TH_LOG("rapl/status '%s'", b);
	EXPECT_EQ(
		0,
		st_sh("dmesg | grep -q 'joules: energy source joules_testmeter of "
		      "module joules_testmeter left registered; dropped'"));
	EXPECT_EQ(
		0,
		st_sh("dmesg | grep -q 'joules: frequency source joules_testmeter of "
		      "module joules_testmeter left registered; dropped'"));
	/* The module still answers. */
	EXPECT_GT(st_read("/proc/energy/self", e, sizeof(e)), 0);
}

TEST_HARNESS_MAIN
