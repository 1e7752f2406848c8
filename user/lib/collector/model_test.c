// SPDX-License-Identifier: GPL-2.0
/* Host test of the model collector (model.c), on a made-up sysfs. */
#include "kselftest_harness.h"
#include "collector_test.h"

TEST(render)
{
	struct jm_snapshot snap;
	struct jm_state s;
	char *t;

	base_state(&s, 0);
	full_snapshot(&snap);
	t = ct_render_one(&s, &snap, JM_C_MODEL);
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(ct_only(t, "joules_model_", NULL));
	EXPECT_TRUE(has(t, "joules_model_generation 2\n"));
	EXPECT_TRUE(has(t, "joules_model_power_watts{term=\"cpu_time\"} 7\n"));
	EXPECT_TRUE(has(t, "joules_model_power_watts{term=\"idle\"} 15\n"));
	/* pJ per event as J: 2000 pJ. */
	EXPECT_TRUE(has(
		t,
		"joules_model_event_energy_joules{event=\"cache_miss\"} 0.000000002\n"));
	free(t);

	/* Generation 0: no model is set, its zeros are not coefficients. */
	snap.model_generation = 0;
	t = ct_render_one(&s, &snap, JM_C_MODEL);
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(has(t, "joules_model_generation 0\n"));
	EXPECT_FALSE(strstr(t, "joules_model_power_watts"));
	EXPECT_FALSE(strstr(t, "joules_model_event"));
	free(t);
}

CT_SYSFS_FIXTURE();

/* The nine-field line of Documentation/sysfs.rst, each field its own value. */
TEST_F(sysfs, nine_coefficients)
{
	ASSERT_EQ(0, ct_write(self->dir, "model/generation", "4\n"));
	ASSERT_EQ(0, ct_write(self->dir, "model/coefficients",
			      "1 2 3 4 5 6 7 8 9\n"));
	jm_collectors[JM_C_MODEL]->gather(&self->s, &self->snap);
	ASSERT_EQ(JM_OK, self->snap.st[JM_C_MODEL].reason);
	EXPECT_EQ(4, self->snap.model_generation);
	EXPECT_EQ(1, self->snap.coef.cpu_time_uw);
	EXPECT_EQ(4, self->snap.coef.cache_miss_pj);
	EXPECT_EQ(8, self->snap.coef.pagecache_byte_pj);
	EXPECT_EQ(9, self->snap.coef.idle_uw);
}

/* The earlier six-field form: five features and idle. */
TEST_F(sysfs, six_coefficients)
{
	ASSERT_EQ(0, ct_write(self->dir, "model/generation", "1\n"));
	ASSERT_EQ(0, ct_write(self->dir, "model/coefficients",
			      "7000000 0 0 2000 0 15000000\n"));
	jm_collectors[JM_C_MODEL]->gather(&self->s, &self->snap);
	ASSERT_EQ(JM_OK, self->snap.st[JM_C_MODEL].reason);
	EXPECT_EQ(2000, self->snap.coef.cache_miss_pj);
	EXPECT_EQ(0, self->snap.coef.net_tx_byte_pj);
	EXPECT_EQ(15000000, self->snap.coef.idle_uw);
}

TEST_F(sysfs, unparsable)
{
	ASSERT_EQ(0, ct_write(self->dir, "model/generation", "1\n"));
	ASSERT_EQ(0, ct_write(self->dir, "model/coefficients", "1 2 x\n"));
	jm_collectors[JM_C_MODEL]->gather(&self->s, &self->snap);
	EXPECT_EQ(JM_FAILED, self->snap.st[JM_C_MODEL].reason);
	EXPECT_TRUE(strstr(self->snap.st[JM_C_MODEL].msg,
			   "model/coefficients: cannot parse '1 2 x'") != NULL);
	TH_LOG("%s", self->snap.st[JM_C_MODEL].msg);
}

/* The directory without model/: a file missing, said with its path. */
TEST_F(sysfs, missing_file)
{
	jm_collectors[JM_C_MODEL]->gather(&self->s, &self->snap);
	EXPECT_NE(JM_OK, self->snap.st[JM_C_MODEL].reason);
	EXPECT_TRUE(strstr(self->snap.st[JM_C_MODEL].msg,
			   "/model/generation: No such file") != NULL);
	TH_LOG("%s", self->snap.st[JM_C_MODEL].msg);
}

TEST(not_loaded)
{
	struct jm_snapshot snap;
	struct jm_state s;

	jm_init(&s, 0, "/nonexistent/joules", NULL);
	memset(&snap, 0, sizeof(snap));
	jm_collectors[JM_C_MODEL]->gather(&s, &snap);
	EXPECT_EQ(JM_NOT_LOADED, snap.st[JM_C_MODEL].reason);
	EXPECT_STREQ("joules module not loaded (no /nonexistent/joules)",
		     snap.st[JM_C_MODEL].msg);
	jm_close(&s);
}

TEST_HARNESS_MAIN
