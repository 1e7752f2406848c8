// SPDX-License-Identifier: GPL-2.0
/* Host test of the process collector (process.c). */
#include "kselftest_harness.h"
#include "collector_test.h"

TEST(render)
{
	struct jm_snapshot snap;
	struct jm_state s;
	char *t;

	base_state(&s, 3);
	full_snapshot(&snap);
	t = ct_render_one(&s, &snap, JM_C_PROCESS);
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(ct_only(t, "joules_process_",
			    "joules_exporter_processes_seen"));
	EXPECT_TRUE(has(t, "joules_exporter_processes_seen 10000\n"));
	EXPECT_TRUE(has(
		t,
		"joules_process_energy_joules_total{pid=\"4242\",comm=\"burner\"} 9\n"));
	EXPECT_TRUE(has(
		t,
		"joules_process_cpu_seconds_total{pid=\"4242\",comm=\"burner\"} 1.5\n"));
	/* A comm is any bytes: escaped, and made valid UTF-8. */
	EXPECT_TRUE(has(
		t,
		"joules_process_energy_joules_total{pid=\"17\",comm=\"we\\\"ird\\\\\\n\xef\xbf\xbd\"} 0.0001\n"));
	/* Charged by no source: no energy series, CPU time still shown. */
	EXPECT_FALSE(
		strstr(t, "joules_process_energy_joules_total{pid=\"18\""));
	EXPECT_TRUE(has(
		t,
		"joules_process_cpu_seconds_total{pid=\"18\",comm=\"quiet\"} 0.000000005\n"));
	free(t);
}

TEST(parse_processes)
{
	unsigned int top = 7;

	EXPECT_EQ(0, jm_parse_processes("top=5", &top));
	EXPECT_EQ(5, top);
	EXPECT_EQ(0, jm_parse_processes("off", &top));
	EXPECT_EQ(0, top);
	EXPECT_EQ(-ERANGE, jm_parse_processes("top=1001", &top));
	EXPECT_EQ(-EINVAL, jm_parse_processes("top=0", &top));
}

TEST(gather_not_loaded)
{
	struct jm_snapshot snap;
	struct jm_state s;

	jm_init(&s, 5, "/nonexistent/joules", NULL);
	memset(&snap, 0, sizeof(snap));
	jm_collectors[JM_C_PROCESS]->gather(&s, &snap);
	EXPECT_EQ(JM_NOT_LOADED, snap.st[JM_C_PROCESS].reason);
	EXPECT_EQ(0, snap.nprocs);
	EXPECT_TRUE(strstr(snap.st[JM_C_PROCESS].msg, "not loaded") != NULL);
	jm_close(&s);
}

/* Off by default: without --processes no process is gathered. */
TEST(off_without_top)
{
	struct jm_snapshot snap;
	struct jm_state s;

	jm_init(&s, 0, "/nonexistent/joules", NULL);
	jm_gather(&s, &snap);
	EXPECT_FALSE(snap.st[JM_C_PROCESS].enabled);
	EXPECT_TRUE(snap.st[JM_C_NODE].enabled);
	jm_snapshot_free(&snap);
	jm_close(&s);
}

TEST_HARNESS_MAIN
