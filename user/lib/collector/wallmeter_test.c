// SPDX-License-Identifier: GPL-2.0
/* Host test of the wall meter collector (wallmeter.c), on a made-up sysfs. */
#include "kselftest_harness.h"
#include "collector_test.h"

TEST(render_in_force)
{
	struct jm_snapshot snap;
	struct jm_state s;
	char *t;

	base_state(&s, 0);
	full_snapshot(&snap);
	t = ct_render_one(&s, &snap, JM_C_WALLMETER);
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(ct_only(t, "joules_wall_meter_", NULL));
	EXPECT_TRUE(has(
		t,
		"joules_wall_meter_present{meter=\"pdu-rack4-outlet7\",state=\"in_force\"} 1\n"));
	EXPECT_TRUE(has(t, "joules_wall_meter_readings_total 3600\n"));
	EXPECT_TRUE(has(t, "joules_wall_meter_refused_total 2\n"));
	EXPECT_TRUE(has(
		t, "joules_wall_meter_energy_joules_total 123456.539012\n"));
	EXPECT_TRUE(has(t, "joules_wall_meter_pending_joules -0.25\n"));
	EXPECT_TRUE(has(t, "joules_wall_meter_residual_joules -1.234567\n"));
	EXPECT_TRUE(has(t, "joules_wall_meter_window_seconds 1\n"));
	EXPECT_TRUE(has(t, "joules_wall_meter_power_watts 412.345678\n"));
	EXPECT_TRUE(has(
		t, "# TYPE joules_wall_meter_energy_joules_total counter\n"));
	EXPECT_TRUE(has(t, "# TYPE joules_wall_meter_residual_joules gauge\n"));
	free(t);
}

/* Never fed: 0 with the reason, the counters, no figures (not zeros). */
TEST(render_absent)
{
	struct jm_snapshot snap;
	struct jm_state s;
	char *t;

	base_state(&s, 0);
	memset(&snap, 0, sizeof(snap));
	snap.wall.state = JM_WALL_ABSENT;
	strcpy(snap.wall.reason, "never fed");
	snap.wall.have_readings = snap.wall.have_refused = true;
	t = ct_render_one(&s, &snap, JM_C_WALLMETER);
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(
		has(t, "joules_wall_meter_present{reason=\"never fed\"} 0\n"));
	EXPECT_TRUE(has(t, "joules_wall_meter_readings_total 0\n"));
	EXPECT_FALSE(strstr(t, "_energy_joules"));
	EXPECT_FALSE(strstr(t, "_pending_joules"));
	EXPECT_FALSE(strstr(t, "_residual_joules"));
	EXPECT_FALSE(strstr(t, "_window_seconds"));
	EXPECT_FALSE(strstr(t, "_power_watts"));
	free(t);
}

/* Nothing read (the module is not loaded): no family at all. */
TEST(render_unread)
{
	struct jm_snapshot snap;
	struct jm_state s;
	char *t;

	base_state(&s, 0);
	memset(&snap, 0, sizeof(snap));
	t = ct_render_one(&s, &snap, JM_C_WALLMETER);
	ASSERT_NE(NULL, t);
	EXPECT_STREQ("", t);
	free(t);
}

CT_SYSFS_FIXTURE();

/* The files as the module prints them: counters, then the figures. */
static int wall_files(const char *dir, const char *status, const char *energy,
		      const char *pending, const char *residual,
		      const char *window, const char *power)
{
	return ct_write(dir, "wallmeter/status", status) ||
	       ct_write(dir, "wallmeter/readings", "17\n") ||
	       ct_write(dir, "wallmeter/refused", "1\n") ||
	       ct_write(dir, "wallmeter/energy_uj", energy) ||
	       ct_write(dir, "wallmeter/pending_uj", pending) ||
	       ct_write(dir, "wallmeter/residual_uj", residual) ||
	       ct_write(dir, "wallmeter/window_ms", window) ||
	       ct_write(dir, "wallmeter/power_uw", power) ||
	       ct_write(dir, "wallmeter/timeout_ms", "10000\n") ||
	       ct_write(dir, "wallmeter/max_power_w", "20000\n");
}

TEST_F(sysfs, never_fed)
{
	char *t;

	ASSERT_EQ(0,
		  wall_files(self->dir, "absent: never fed\n", "absent\n",
			     "absent\n", "absent\n", "absent\n", "absent\n"));
	ASSERT_EQ(0, ct_write(self->dir, "wallmeter/readings", "0\n"));
	ASSERT_EQ(0, ct_write(self->dir, "wallmeter/refused", "0\n"));
	t = ct_gather_render(_metadata, &self->s, &self->snap, JM_C_WALLMETER);
	EXPECT_EQ(JM_OK, self->snap.st[JM_C_WALLMETER].reason);
	EXPECT_EQ(JM_WALL_ABSENT, self->snap.wall.state);
	EXPECT_STREQ("never fed", self->snap.wall.reason);
	EXPECT_TRUE(
		has(t, "joules_wall_meter_present{reason=\"never fed\"} 0\n"));
	EXPECT_TRUE(has(t, "joules_wall_meter_readings_total 0\n"));
	EXPECT_TRUE(has(t, "joules_wall_meter_refused_total 0\n"));
	/* "absent" is not 0: no figure at all. */
	EXPECT_TRUE(ct_only(t, "joules_wall_meter_present",
			    "joules_wall_meter_re"));
	EXPECT_FALSE(strstr(t, "residual"));
	free(t);
}

TEST_F(sysfs, in_force)
{
	char *t;

	ASSERT_EQ(0, wall_files(self->dir, "pdu-a.example:161/7\n",
				"98765432101\n", "1500\n", "2000001\n",
				"2000\n", "345678901\n"));
	t = ct_gather_render(_metadata, &self->s, &self->snap, JM_C_WALLMETER);
	EXPECT_EQ(JM_OK, self->snap.st[JM_C_WALLMETER].reason);
	EXPECT_EQ(JM_WALL_IN_FORCE, self->snap.wall.state);
	EXPECT_TRUE(has(
		t,
		"joules_wall_meter_present{meter=\"pdu-a.example:161/7\",state=\"in_force\"} 1\n"));
	EXPECT_TRUE(has(t, "joules_wall_meter_readings_total 17\n"));
	EXPECT_TRUE(has(t, "joules_wall_meter_refused_total 1\n"));
	EXPECT_TRUE(
		has(t, "joules_wall_meter_energy_joules_total 98765.432101\n"));
	EXPECT_TRUE(has(t, "joules_wall_meter_pending_joules 0.0015\n"));
	EXPECT_TRUE(has(t, "joules_wall_meter_residual_joules 2.000001\n"));
	EXPECT_TRUE(has(t, "joules_wall_meter_window_seconds 2\n"));
	EXPECT_TRUE(has(t, "joules_wall_meter_power_watts 345.678901\n"));
	free(t);
}

/* Out of force: still present, with its state; the last figures stay. */
TEST_F(sysfs, silent)
{
	char *t;

	ASSERT_EQ(0, wall_files(self->dir,
				"silent: bmc, no reading for 12345 ms\n",
				"5000000\n", "0\n", "-3\n", "1500\n",
				"250000000\n"));
	t = ct_gather_render(_metadata, &self->s, &self->snap, JM_C_WALLMETER);
	EXPECT_EQ(JM_OK, self->snap.st[JM_C_WALLMETER].reason);
	EXPECT_EQ(JM_WALL_SILENT, self->snap.wall.state);
	EXPECT_STREQ("bmc", self->snap.wall.meter);
	EXPECT_TRUE(has(
		t,
		"joules_wall_meter_present{meter=\"bmc\",state=\"silent\"} 1\n"));
	EXPECT_TRUE(has(t, "joules_wall_meter_energy_joules_total 5\n"));
	EXPECT_TRUE(has(t, "joules_wall_meter_pending_joules 0\n"));
	EXPECT_TRUE(has(t, "joules_wall_meter_residual_joules -0.000003\n"));
	EXPECT_TRUE(has(t, "joules_wall_meter_window_seconds 1.5\n"));
	free(t);
}

/* A name holding the status's own words: the last ", no reading for" ends it. */
TEST_F(sysfs, silent_odd_name)
{
	ASSERT_EQ(
		0,
		ct_write(self->dir, "wallmeter/status",
			 "silent: a, no reading for b, no reading for 7 ms\n"));
	jm_collectors[JM_C_WALLMETER]->gather(&self->s, &self->snap);
	EXPECT_EQ(JM_WALL_SILENT, self->snap.wall.state);
	EXPECT_STREQ("a, no reading for b", self->snap.wall.meter);
}

TEST_F(sysfs, negative)
{
	char *t;

	ASSERT_EQ(0, wall_files(self->dir, "pdu\n", "1000000\n",
				"-9223372036854775808\n", "-2500000\n",
				"1000\n", "100000000\n"));
	t = ct_gather_render(_metadata, &self->s, &self->snap, JM_C_WALLMETER);
	EXPECT_EQ(JM_OK, self->snap.st[JM_C_WALLMETER].reason);
	EXPECT_TRUE(has(
		t, "joules_wall_meter_pending_joules -9223372036854.775808\n"));
	EXPECT_TRUE(has(t, "joules_wall_meter_residual_joules -2.5\n"));
	free(t);
}

/*
 * Without CAP_PERFMON the module refuses the figures (EPERM): they are left
 * out, the rest is shown, and the status says which capability. sysfs
 * gives EPERM on read; a file without read permission stands in for it
 * (EACCES, the same reason), unless the test runs as root.
 */
TEST_F(sysfs, figures_refused)
{
	static const char *const fig[] = { "energy_uj", "pending_uj",
					   "residual_uj", "window_ms",
					   "power_uw" };
	char path[600], *t;

	ASSERT_EQ(0, ct_drop_dac());
	ASSERT_EQ(0, wall_files(self->dir, "pdu\n", "1\n", "2\n", "3\n", "4\n",
				"5\n"));
	for (size_t i = 0; i < sizeof(fig) / sizeof(fig[0]); i++) {
		snprintf(path, sizeof(path), "%s/wallmeter/%s", self->dir,
			 fig[i]);
		ASSERT_EQ(0, chmod(path, 0));
	}
	t = ct_gather_render(_metadata, &self->s, &self->snap, JM_C_WALLMETER);
	EXPECT_EQ(JM_PERMISSION, self->snap.st[JM_C_WALLMETER].reason);
	EXPECT_TRUE(strstr(self->snap.st[JM_C_WALLMETER].msg,
			   "CAP_PERFMON or CAP_SYS_ADMIN"));
	EXPECT_TRUE(has(
		t,
		"joules_wall_meter_present{meter=\"pdu\",state=\"in_force\"} 1\n"));
	EXPECT_TRUE(has(t, "joules_wall_meter_readings_total 17\n"));
	EXPECT_TRUE(ct_only(t, "joules_wall_meter_present",
			    "joules_wall_meter_re"));
	EXPECT_FALSE(strstr(t, "residual"));
	EXPECT_FALSE(strstr(t, "energy"));
	free(t);
}

/* Garbage in a file: that family is left out, the collector fails, the rest stays. */
TEST_F(sysfs, garbage_figure)
{
	char *t;

	ASSERT_EQ(0, wall_files(self->dir, "pdu\n", "12x\n", "2\n", "--3\n",
				"4\n", "5\n"));
	t = ct_gather_render(_metadata, &self->s, &self->snap, JM_C_WALLMETER);
	EXPECT_EQ(JM_FAILED, self->snap.st[JM_C_WALLMETER].reason);
	EXPECT_EQ(-EINVAL, self->snap.st[JM_C_WALLMETER].err);
	/* The first one is said. */
	EXPECT_TRUE(strstr(self->snap.st[JM_C_WALLMETER].msg,
			   "wallmeter/energy_uj: cannot parse '12x'"));
	EXPECT_FALSE(strstr(t, "joules_wall_meter_energy"));
	EXPECT_FALSE(strstr(t, "joules_wall_meter_residual"));
	EXPECT_TRUE(has(t, "joules_wall_meter_pending_joules 0.000002\n"));
	EXPECT_TRUE(has(t, "joules_wall_meter_power_watts 0.000005\n"));
	EXPECT_TRUE(has(t, "joules_wall_meter_present{meter=\"pdu\""));
	free(t);
}

/* A counter that is not a number, or that is signed. */
TEST_F(sysfs, garbage_counter)
{
	char *t;

	ASSERT_EQ(0, wall_files(self->dir, "pdu\n", "1\n", "2\n", "3\n", "4\n",
				"5\n"));
	ASSERT_EQ(0, ct_write(self->dir, "wallmeter/refused", "-1\n"));
	t = ct_gather_render(_metadata, &self->s, &self->snap, JM_C_WALLMETER);
	EXPECT_EQ(JM_FAILED, self->snap.st[JM_C_WALLMETER].reason);
	EXPECT_FALSE(strstr(t, "refused"));
	EXPECT_TRUE(has(t, "joules_wall_meter_readings_total 17\n"));
	free(t);
}

/* A status that is none of the three forms: no present series, a failure. */
TEST_F(sysfs, garbage_status)
{
	static const char *const bad[] = {
		"\n",
		"silent: pdu\n",
		"silent: pdu, no reading for many ms\n",
		"silent: , no reading for 5 ms\n",
		"pdu\tnumber\n",
		"a-meter-name-longer-than-the-kernel-holds\n",
	};
	char *t;

	ASSERT_EQ(0, wall_files(self->dir, "pdu\n", "1\n", "2\n", "3\n", "4\n",
				"5\n"));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&self->snap, 0, sizeof(self->snap));
		ASSERT_EQ(0, ct_write(self->dir, "wallmeter/status", bad[i]));
		t = ct_gather_render(_metadata, &self->s, &self->snap,
				     JM_C_WALLMETER);
		EXPECT_EQ(JM_FAILED, self->snap.st[JM_C_WALLMETER].reason)
		TH_LOG("status '%s'", bad[i]);
		EXPECT_TRUE(strstr(self->snap.st[JM_C_WALLMETER].msg,
				   "wallmeter/status: cannot parse"));
		EXPECT_FALSE(strstr(t, "joules_wall_meter_present"))
		TH_LOG("status '%s'", bad[i]);
		EXPECT_TRUE(has(
			t, "joules_wall_meter_energy_joules_total 0.000001\n"));
		free(t);
	}
}

/* An error is said even where the figures are refused as well. */
TEST_F(sysfs, error_over_permission)
{
	char path[600];

	ASSERT_EQ(0, ct_drop_dac());
	ASSERT_EQ(0, wall_files(self->dir, "pdu\n", "1\n", "2\n", "3\n", "4\n",
				"5\n"));
	snprintf(path, sizeof(path), "%s/wallmeter/energy_uj", self->dir);
	ASSERT_EQ(0, chmod(path, 0));
	ASSERT_EQ(0, ct_write(self->dir, "wallmeter/power_uw", "lots\n"));
	jm_collectors[JM_C_WALLMETER]->gather(&self->s, &self->snap);
	EXPECT_EQ(JM_FAILED, self->snap.st[JM_C_WALLMETER].reason);
	EXPECT_TRUE(strstr(self->snap.st[JM_C_WALLMETER].msg, "power_uw"));
}

/* A loaded module from before the wall meter: unsupported, nothing shown. */
TEST_F(sysfs, older_module)
{
	char *t;

	ASSERT_EQ(0, ct_write(self->dir, "version", "0.1.0\n"));
	t = ct_gather_render(_metadata, &self->s, &self->snap, JM_C_WALLMETER);
	EXPECT_EQ(JM_UNSUPPORTED, self->snap.st[JM_C_WALLMETER].reason);
	EXPECT_TRUE(strstr(self->snap.st[JM_C_WALLMETER].msg,
			   "the module has no wall meter"));
	EXPECT_STREQ("", t);
	free(t);
}

TEST(not_loaded)
{
	struct jm_snapshot snap;
	struct jm_state s;

	jm_init(&s, 0, "/nonexistent/joules", NULL);
	memset(&snap, 0, sizeof(snap));
	jm_collectors[JM_C_WALLMETER]->gather(&s, &snap);
	EXPECT_EQ(JM_NOT_LOADED, snap.st[JM_C_WALLMETER].reason);
	jm_close(&s);
}

TEST_HARNESS_MAIN
