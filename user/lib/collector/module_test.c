// SPDX-License-Identifier: GPL-2.0
/* Host test of the module collector (module.c). */
#include "kselftest_harness.h"
#include "collector_test.h"

TEST(render_loaded)
{
	struct jm_snapshot snap;
	struct jm_state s;
	char *t;

	base_state(&s, 0);
	full_snapshot(&snap);
	s.reloads = 2;
	t = ct_render_one(&s, &snap, JM_C_MODULE);
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(has(t, "joules_module_loaded 1\n"));
	EXPECT_TRUE(has(
		t,
		"joules_module_info{version=\"0.1.0\",abi_version=\"1\",netlink_version=\"1\"} 1\n"));
	EXPECT_TRUE(has(t, "joules_exporter_module_reloads_total 2\n"));
	EXPECT_TRUE(ct_only(t, "joules_module_", "joules_exporter_module_"));
	free(t);
}

TEST(render_not_loaded)
{
	struct jm_snapshot snap;
	struct jm_state s;
	char *t;

	base_state(&s, 0);
	memset(&snap, 0, sizeof(snap));
	t = ct_render_one(&s, &snap, JM_C_MODULE);
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(has(t, "joules_module_loaded 0\n"));
	EXPECT_FALSE(strstr(t, "joules_module_info"));
	EXPECT_TRUE(has(t, "joules_exporter_module_reloads_total 0\n"));
	free(t);
}

/* Version and ABI come from sysfs; a module that is not loaded is no failure. */
TEST(gather_sysfs_without_netlink)
{
	struct jm_snapshot snap;
	struct jm_state s;
	char *dir = ct_sysfs();

	ASSERT_NE(NULL, dir);
	ASSERT_EQ(0, ct_write(dir, "version", "0.1.0\n"));
	ASSERT_EQ(0, ct_write(dir, "abi_version", "2\n"));
	jm_init(&s, 0, dir, NULL);
	memset(&snap, 0, sizeof(snap));
	jm_collectors[JM_C_MODULE]->gather(&s, &snap);
	EXPECT_STREQ("0.1.0", snap.version);
	EXPECT_STREQ("2", snap.abi);
	/* The host never has the module loaded (tests load nothing here). */
	EXPECT_EQ(JM_OK, snap.st[JM_C_MODULE].reason);
	jm_close(&s);
	ct_sysfs_remove(dir);
}

TEST_HARNESS_MAIN
