// SPDX-License-Identifier: GPL-2.0
/* Host test of the meter collector (meter.c), on a made-up sysfs. */
#include "kselftest_harness.h"
#include "collector_test.h"

TEST(render_present)
{
	struct jm_snapshot snap;
	struct jm_state s;
	char *t;

	base_state(&s, 0);
	full_snapshot(&snap);
	t = ct_render_one(&s, &snap, JM_C_METER);
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(ct_only(t, "joules_meter_", NULL));
	EXPECT_TRUE(
		has(t, "joules_meter_present{meter=\"intel-rapl-msr\"} 1\n"));
	EXPECT_TRUE(has(t, "joules_meter_wraps_total 3\n"));
	EXPECT_TRUE(has(t, "joules_meter_bogus_reads_total 1\n"));
	free(t);
}

/* Absent hardware: 0 with the reason, no counters (not zeros). */
TEST(render_absent)
{
	struct jm_snapshot snap;
	struct jm_state s;
	char *t;

	base_state(&s, 0);
	memset(&snap, 0, sizeof(snap));
	strcpy(snap.meter_reason, "no RAPL: CPU vendor/model not supported");
	t = ct_render_one(&s, &snap, JM_C_METER);
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(has(
		t,
		"joules_meter_present{reason=\"no RAPL: CPU vendor/model not supported\"} 0\n"));
	EXPECT_FALSE(strstr(t, "wraps"));
	EXPECT_FALSE(strstr(t, "bogus"));
	free(t);
}

CT_SYSFS_FIXTURE();

TEST_F(sysfs, present)
{
	ASSERT_EQ(0, ct_write(self->dir, "rapl/status", "intel-rapl-msr\n"));
	ASSERT_EQ(0, ct_write(self->dir, "rapl/wraps", "12\n"));
	jm_collectors[JM_C_METER]->gather(&self->s, &self->snap);
	ASSERT_EQ(JM_OK, self->snap.st[JM_C_METER].reason);
	EXPECT_TRUE(self->snap.meter_present);
	EXPECT_STREQ("intel-rapl-msr", self->snap.meter);
	EXPECT_TRUE(self->snap.have_wraps);
	EXPECT_EQ(12, self->snap.wraps);
	/* A module without the file: no series, not a zero. */
	EXPECT_FALSE(self->snap.have_bogus);
}

TEST_F(sysfs, absent_with_reason)
{
	ASSERT_EQ(0, ct_write(self->dir, "rapl/status",
			      "absent: no RAPL: running under a hypervisor\n"));
	jm_collectors[JM_C_METER]->gather(&self->s, &self->snap);
	ASSERT_EQ(JM_OK, self->snap.st[JM_C_METER].reason);
	EXPECT_FALSE(self->snap.meter_present);
	EXPECT_STREQ("no RAPL: running under a hypervisor",
		     self->snap.meter_reason);
}

TEST_F(sysfs, absent_without_reason)
{
	ASSERT_EQ(0, ct_write(self->dir, "rapl/status", "absent\n"));
	jm_collectors[JM_C_METER]->gather(&self->s, &self->snap);
	EXPECT_FALSE(self->snap.meter_present);
	EXPECT_STREQ("unknown", self->snap.meter_reason);
}

/* A label, not a log: a long reason is cut to the snapshot's field. */
TEST_F(sysfs, long_reason_cut)
{
	char line[300];

	memset(line, 'r', sizeof(line));
	memcpy(line, "absent: ", 8);
	line[sizeof(line) - 2] = '\n';
	line[sizeof(line) - 1] = 0;
	ASSERT_EQ(0, ct_write(self->dir, "rapl/status", line));
	jm_collectors[JM_C_METER]->gather(&self->s, &self->snap);
	EXPECT_EQ(sizeof(self->snap.meter_reason) - 1,
		  strlen(self->snap.meter_reason));
}

TEST(not_loaded)
{
	struct jm_snapshot snap;
	struct jm_state s;

	jm_init(&s, 0, "/nonexistent/joules", NULL);
	memset(&snap, 0, sizeof(snap));
	jm_collectors[JM_C_METER]->gather(&s, &snap);
	EXPECT_EQ(JM_NOT_LOADED, snap.st[JM_C_METER].reason);
	jm_close(&s);
}

TEST_HARNESS_MAIN
