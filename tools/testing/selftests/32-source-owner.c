// SPDX-License-Identifier: GPL-2.0
/*
 * A module that registered an energy meter or a frequency source with
 * joules and is then unloaded. joules calls into it every interval, so
 * it must stop doing so once the module starts to go (its exit may be
 * tearing down what the callbacks use), and must not keep a pointer into
 * a module that is gone, even one whose exit forgot to unregister. Its
 * rmmod must always work: rmmod refuses a module anyone holds a reference
 * on, so joules holds none, not even for the length of a call.
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
	return st_sh_number(
		"dmesg | grep 'joules_testmeter: .* read(s) while unloading' | tail -n 1 | "
		"sed 's/.*joules_testmeter: \\([0-9]*\\) .*/\\1/'");
}

/* rmmod, tried again for up to a second while it is refused. */
static int rmmod_retrying(void)
{
	for (int t = 0; t < 100; t++) {
		if (!st_sh("rmmod joules_testmeter 2>/dev/null"))
			return 0;
		usleep(10000);
	}
	return -1;
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

/*
 * joules holds no reference on the provider's module, not even during a
 * read: rmmod refuses a module with references (EAGAIN), so a reference
 * held across reads would make an admin's rmmod fail at random. Reads of
 * 2 ms every few ms make the window wide.
 */
TEST_F(owner, rmmod_is_never_refused)
{
	int i, refused = 0;

	ASSERT_EQ(0, st_sh("rmmod joules_testmeter"));
	for (i = 0; i < 20; i++) {
		ASSERT_EQ(0, st_sh("insmod " ST_METER
				   " freq_mhz=1800 read_delay_us=2000"));
		usleep(3 * st_interval_ms() * 1000);
		if (st_sh("rmmod joules_testmeter 2>/dev/null")) {
			refused++;
			/* Unloaded in the end, so the next round can load it. */
			ASSERT_EQ(0, rmmod_retrying());
		}
	}
	EXPECT_EQ(0, refused) TH_LOG("%d of 20 rmmods refused", refused);
	EXPECT_EQ(0, late_reads());
}

TEST_HARNESS_MAIN
