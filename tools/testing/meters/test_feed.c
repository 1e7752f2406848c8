// SPDX-License-Identifier: GPL-2.0
/*
 * Host test of joules-meterd's feeder (user/joules-meterd/feed.c) on a
 * scripted stand-in for user/lib/nl.c's client: the module absent at
 * start, loaded, refusing, unloaded and loaded again under the running
 * daemon. Each step checks what the feeder sends (cumulative uJ, the
 * METER_RESET flag, the reading's age), how often it resolves the family,
 * and what it logs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cli.h"
#include "jmd.h"
#include "nl.h"

/* ---- the stand-in: a module that is loaded or not ---- */

static bool loaded; /* the family exists */
static int feed_err; /* what the next METER_FEED answers */
static int opens, closes, feeds;
static uint64_t last_uj, last_age;
static bool last_reset, refuse_age; /* a module from before METER_AGE_NS */
static char last_name[64];
static struct jnl *fake = (struct jnl *)&opens; /* any non-NULL pointer */

int jnl_open(struct jnl **out)
{
	opens++;
	if (!loaded) {
		*out = NULL;
		return -ENOENT;
	}
	*out = fake;
	return 0;
}

void jnl_close(struct jnl *nl)
{
	if (nl)
		closes++;
}

int jnl_meter_feed(struct jnl *nl, const char *name, uint64_t uj, bool reset)
{
	if (nl != fake)
		return -EBADF;
	if (!loaded)
		return -ENOENT; /* a family that went away under the socket */
	if (feed_err)
		return feed_err;
	feeds++;
	last_uj = uj;
	last_reset = reset;
	last_age = 0;
	snprintf(last_name, sizeof(last_name), "%s", name);
	return 0;
}

int jnl_meter_feed_aged(struct jnl *nl, const char *name, uint64_t uj,
			uint64_t age_ns, bool reset)
{
	int err;

	if (refuse_age)
		return -EINVAL;
	err = jnl_meter_feed(nl, name, uj, reset);
	if (!err)
		last_age = age_ns;
	return err;
}

const char *jnl_strerror(enum jnl_op op, int err)
{
	if (op == JNL_OP_OPEN && err == -ENOENT)
		return "joules module not loaded";
	if (op == JNL_OP_METER_FEED && err == -EPERM)
		return "permission denied";
	return "error";
}

const char *jnl_kernel_msg(const struct jnl *nl)
{
	(void)nl;
	return NULL;
}

static char logbuf[4096];
static int nlog;

static void logger(void *ctx, const char *msg)
{
	(void)ctx;
	nlog++;
	strncat(logbuf, msg, sizeof(logbuf) - strlen(logbuf) - 2);
	strcat(logbuf, "\n");
}

TEST(reconnect)
{
	struct jmd_feeder f;

	jmd_feeder_init(&f, "rack4-node7");
	f.log = logger;

	/* Module absent: said once, tried at every reading. */
	EXPECT_EQ(-ENOENT, jmd_feed(&f, 100, 0, true, false));
	EXPECT_EQ(-ENOENT, jmd_feed(&f, 200, 0, false, false));
	EXPECT_EQ(-ENOENT, jmd_feed(&f, 300, 0, false, false));
	EXPECT_EQ(3, opens);
	EXPECT_EQ(0, feeds);
	EXPECT_EQ(1, nlog);
	CHECK(strstr(logbuf,
		     "joules module not loaded; retrying every interval"),
	      "log: %s", logbuf);

	/* Loaded: the first reading is a new baseline, even if the core's is not. */
	loaded = true;
	EXPECT_EQ(0, jmd_feed(&f, 400, 0, false, false));
	EXPECT_EQ(1, feeds);
	EXPECT_EQ(400, last_uj);
	EXPECT_TRUE(last_reset);
	EXPECT_STREQ("rack4-node7", last_name);
	EXPECT_EQ(2, nlog);
	CHECK(strstr(logbuf, "takes readings again"), "log: %s", logbuf);
	EXPECT_EQ(0, jmd_feed(&f, 500, 0, false, false));
	EXPECT_FALSE(last_reset);
	EXPECT_EQ(0, jmd_feed(&f, 600, 0, true, false)); /* the core's reset */
	EXPECT_TRUE(last_reset);
	EXPECT_EQ(4, opens); /* one socket for all of them */

	/* Reloaded under us: the feed fails, the family is resolved again. */
	loaded = false;
	EXPECT_EQ(-ENOENT, jmd_feed(&f, 700, 0, false, false));
	EXPECT_EQ(1, closes);
	loaded = true;
	EXPECT_EQ(0, jmd_feed(&f, 800, 0, false, false));
	EXPECT_EQ(5, opens);
	EXPECT_EQ(800, last_uj);
	EXPECT_TRUE(last_reset);

	/* Refused (not root): said once, not at every reading. */
	feed_err = -EPERM;
	nlog = 0;
	EXPECT_EQ(-EPERM, jmd_feed(&f, 900, 0, false, false));
	EXPECT_EQ(-EPERM, jmd_feed(&f, 1000, 0, false, false));
	EXPECT_EQ(1, nlog);
	feed_err = 0;
	EXPECT_EQ(0, jmd_feed(&f, 1100, 0, false, false));
	EXPECT_TRUE(last_reset);
	EXPECT_EQ(1100, last_uj);
	jmd_feeder_close(&f);
}

/*
 * A reading's age goes with it (the module's rates go by when it was
 * read); a module that refuses the attribute gets the reading without it,
 * from then on, said once.
 */
TEST(age)
{
	struct jmd_feeder f;
	uint64_t t = cli_now_ns() - 300000000ULL;

	jmd_feeder_init(&f, "rack4-node7");
	f.log = logger;
	loaded = true;
	feed_err = 0;
	nlog = 0;
	logbuf[0] = 0;
	EXPECT_EQ(0, jmd_feed(&f, 100, t, true, false));
	CHECK(last_age >= 300000000ULL && last_age < 1300000000ULL,
	      "age %llu ns of a reading 300 ms old",
	      (unsigned long long)last_age);
	refuse_age = true;
	EXPECT_EQ(0, jmd_feed(&f, 200, cli_now_ns() - 1000, false, false));
	EXPECT_EQ(200, last_uj);
	EXPECT_EQ(0, last_age);
	EXPECT_EQ(0, jmd_feed(&f, 300, cli_now_ns() - 1000, false, false));
	EXPECT_EQ(300, last_uj);
	CHECK(nlog == 1 && strstr(logbuf, "takes no METER_AGE_NS"), "log: %s",
	      logbuf);
	/* Another module loaded under the daemon: the age again. */
	refuse_age = false;
	loaded = false;
	EXPECT_EQ(-ENOENT, jmd_feed(&f, 400, t, false, false));
	loaded = true;
	EXPECT_EQ(0, jmd_feed(&f, 500, cli_now_ns() - 1000, false, false));
	CHECK(last_age >= 1000, "after a reload: age %llu ns",
	      (unsigned long long)last_age);
	jmd_feeder_close(&f);
}

TEST_HARNESS_MAIN
