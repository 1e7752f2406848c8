// SPDX-License-Identifier: GPL-2.0
/* Host test of the node collector (node.c). */
#include "kselftest_harness.h"
#include "collector_test.h"

TEST(render_everything)
{
	struct jm_snapshot snap;
	struct jm_state s;
	char *t;

	base_state(&s, 0);
	full_snapshot(&snap);
	t = ct_render_one(&s, &snap, JM_C_NODE);
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(ct_only(t, "joules_node_", "joules_module_load_time_"));
	EXPECT_TRUE(has(t, "joules_module_load_time_seconds 1799996400.123\n"));
	EXPECT_TRUE(has(
		t,
		"joules_node_energy_joules_total{source=\"rapl\"} 123456.789012\n"));
	EXPECT_TRUE(has(
		t,
		"joules_node_idle_energy_joules_total{source=\"rapl\"} 23456.789012\n"));
	EXPECT_TRUE(has(
		t,
		"joules_node_rapl_energy_joules_total{domain=\"pkg\"} 1.000001\n"));
	EXPECT_TRUE(has(
		t,
		"joules_node_rapl_energy_joules_total{domain=\"psys\"} 4.000001\n"));
	EXPECT_TRUE(has(t, "joules_node_cpu_seconds_total 1\n"));
	EXPECT_TRUE(has(t, "joules_node_cpu_cycles_total 2000000000\n"));
	EXPECT_TRUE(has(t, "joules_node_storage_bytes_total 5000000000\n"));
	EXPECT_TRUE(has(t, "joules_node_attribution_intervals_total 4242\n"));
	EXPECT_TRUE(has(t, "joules_node_tasks_tracked 321\n"));
	/* present = 0x1f: the socket and page-cache features were not counted. */
	EXPECT_FALSE(strstr(t, "network_"));
	EXPECT_FALSE(strstr(t, "pagecache"));
	free(t);
}

/* QEMU-like: the model source, no domains, no PMU. */
TEST(render_absent)
{
	struct jm_snapshot snap;
	struct jm_state s;
	char *t;

	base_state(&s, 0);
	full_snapshot(&snap);
	snap.node.source = REC_SRC_MODEL;
	snap.node.domains = 0;
	snap.node.present = REC_F(JL_F_CPU_NS) | REC_F(JL_F_DISK);
	snap.load_time_ms = 0;
	t = ct_render_one(&s, &snap, JM_C_NODE);
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(
		has(t, "joules_node_energy_joules_total{source=\"model\"}"));
	EXPECT_FALSE(strstr(t, "joules_node_rapl_energy_joules_total{"));
	EXPECT_FALSE(strstr(t, "cycles"));
	EXPECT_FALSE(strstr(t, "instructions"));
	EXPECT_FALSE(strstr(t, "cache_misses"));
	EXPECT_FALSE(strstr(t, "load_time"));
	free(t);

	/* No source has charged anything: no energy, counters still there. */
	snap.node.source = 0;
	t = ct_render_one(&s, &snap, JM_C_NODE);
	ASSERT_NE(NULL, t);
	EXPECT_FALSE(strstr(t, "joules_node_energy_joules_total"));
	EXPECT_TRUE(has(t, "joules_node_cpu_seconds_total 1\n"));
	free(t);
}

TEST(gather_not_loaded)
{
	struct jm_snapshot snap;
	struct jm_state s;

	jm_init(&s, 0, "/nonexistent/joules", NULL);
	memset(&snap, 0, sizeof(snap));
	jm_collectors[JM_C_NODE]->gather(&s, &snap);
	EXPECT_EQ(JM_NOT_LOADED, snap.st[JM_C_NODE].reason);
	EXPECT_EQ(-ENOENT, snap.st[JM_C_NODE].err);
	EXPECT_TRUE(strstr(snap.st[JM_C_NODE].msg, "not loaded") != NULL);
	TH_LOG("%s", snap.st[JM_C_NODE].msg);
	jm_close(&s);
}

TEST_HARNESS_MAIN
