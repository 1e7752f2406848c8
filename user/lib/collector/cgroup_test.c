// SPDX-License-Identifier: GPL-2.0
/* Host test of the cgroup collector (cgroup.c). */
#include "kselftest_harness.h"
#include "collector_test.h"

#define CTR_LABELS                                                      \
	"cgroup=\"" CTR "\",kind=\"container\",runtime=\"containerd\"," \
	"container_id=\"" ID "\",pod_uid=\"" UID "\",qos=\"burstable\""

TEST(render)
{
	struct jm_snapshot snap;
	struct jm_state s;
	char *t;

	base_state(&s, 0);
	full_snapshot(&snap);
	t = ct_render_one(&s, &snap, JM_C_CGROUP);
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(
		ct_only(t, "joules_cgroup_", "joules_exporter_cgroups_seen"));
	EXPECT_TRUE(has(t, "joules_exporter_cgroups_seen 40\n"));
	EXPECT_TRUE(has(
		t,
		"joules_cgroup_energy_joules_total{cgroup=\"/\",kind=\"root\"} 100000\n"));
	EXPECT_TRUE(has(t, "joules_cgroup_energy_joules_total{" CTR_LABELS
			   "} 2.5\n"));
	EXPECT_TRUE(has(t, "joules_cgroup_cpu_seconds_total{" CTR_LABELS
			   "} 1.5\n"));
	EXPECT_TRUE(has(t,
			"joules_cgroup_network_receive_bytes_total{" CTR_LABELS
			"} 9000\n"));
	/* Absent is not zero: only the container counted socket bytes. */
	EXPECT_FALSE(strstr(
		t, "joules_cgroup_network_transmit_bytes_total{cgroup=\"/\""));
	EXPECT_FALSE(strstr(t, "joules_cgroup_pagecache_read_bytes_total{"));
	/* Nothing charged it: no energy, its CPU time still shown. */
	EXPECT_FALSE(strstr(
		t,
		"energy_joules_total{cgroup=\"/system.slice/quiet.service\""));
	EXPECT_TRUE(has(
		t,
		"joules_cgroup_cpu_seconds_total{cgroup=\"/system.slice/quiet.service\",kind=\"service\"} 0.000000005\n"));
	free(t);

	/* Idle not shared out: only the cgroups that have a share. */
	snap.idle_split = false;
	t = ct_render_one(&s, &snap, JM_C_CGROUP);
	ASSERT_NE(NULL, t);
	EXPECT_FALSE(strstr(
		t, "joules_cgroup_idle_energy_joules_total{cgroup=\"/odd"));
	EXPECT_TRUE(has(
		t,
		"joules_cgroup_idle_energy_joules_total{cgroup=\"/\",kind=\"root\"} 20000\n"));
	free(t);
}

TEST(wanted_depth_and_match)
{
	struct jm_state s;
	char why[128];
	int depth;

	jm_init(&s, 0, "/nonexistent", NULL);
	EXPECT_TRUE(jm_cgroup_wanted(&s, "/a/b/c/d/e/f"));
	ASSERT_EQ(0, jm_parse_cgroups("depth=1", &depth));
	ASSERT_EQ(0, jm_set_cgroups(&s, depth, "^/kubepods", why, sizeof(why)));
	EXPECT_TRUE(jm_cgroup_wanted(&s, "/kubepods.slice"));
	EXPECT_FALSE(jm_cgroup_wanted(&s, "/kubepods.slice/pod"));
	EXPECT_FALSE(jm_cgroup_wanted(&s, "/system.slice"));
	EXPECT_EQ(-EINVAL, jm_set_cgroups(&s, depth, "(", why, sizeof(why)));
	TH_LOG("'(': %s", why);
	/* A refused expression leaves the one before in place. */
	EXPECT_TRUE(jm_cgroup_wanted(&s, "/kubepods.slice"));
	EXPECT_FALSE(jm_cgroup_wanted(&s, "/system.slice"));
	jm_close(&s);
}

TEST(gather_not_loaded)
{
	struct jm_snapshot snap;
	struct jm_state s;

	jm_init(&s, 0, "/nonexistent/joules", NULL);
	memset(&snap, 0, sizeof(snap));
	jm_collectors[JM_C_CGROUP]->gather(&s, &snap);
	EXPECT_EQ(JM_NOT_LOADED, snap.st[JM_C_CGROUP].reason);
	EXPECT_EQ(0, snap.ncgroups);
	jm_close(&s);
}

/* --cgroups=off: the collector is not run; on by default. */
TEST(off)
{
	struct jm_snapshot snap;
	struct jm_state s;
	char why[128];

	jm_init(&s, 0, "/nonexistent/joules", NULL);
	jm_gather(&s, &snap);
	EXPECT_TRUE(snap.st[JM_C_CGROUP].enabled);
	jm_snapshot_free(&snap);
	ASSERT_EQ(0, jm_set_cgroups(&s, JM_CG_OFF, NULL, why, sizeof(why)));
	jm_gather(&s, &snap);
	EXPECT_FALSE(snap.st[JM_C_CGROUP].enabled);
	jm_snapshot_free(&snap);
	jm_close(&s);
}

TEST_HARNESS_MAIN
