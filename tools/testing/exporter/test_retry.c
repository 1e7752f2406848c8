// SPDX-License-Identifier: GPL-2.0
/*
 * A netlink request that fails is retried on a new handle (jm_retry() in
 * user/lib/metrics.c). The retry must reopen the handle only: it once
 * called jm_close(), which freed the --cgroups.match expression and the
 * --compat kepler state, so the scrape after a module reload exported
 * every cgroup and read freed memory. Linked with fake-nl.c for
 * user/lib/nl.c; fake_nl_fail() makes GET_NODE fail with the family id
 * bumped, as a reload does.
 */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "metrics.h"
#include "collector/collector.h"

void fake_nl_fail(int n, int err);

/* The fake node's cgroups under /kubepods: the slice, its child, a pod, a container. */
#define KUBEPODS 4

static bool all_kubepods(const struct jm_snapshot *snap)
{
	for (size_t i = 0; i < snap->ncgroups; i++)
		if (strncmp(snap->cgroups[i].path, "/kubepods", 9))
			return false;
	return true;
}

TEST(retry_keeps_settings)
{
	struct jm_state s;
	struct jm_snapshot snap;
	char why[128];

	jm_init(&s, 0, "/nonexistent", NULL);
	ASSERT_EQ(0, jm_set_cgroups(&s, JM_CG_ALL, "^/kubepods", why,
				    sizeof(why)));
	ASSERT_EQ(0, jm_set_compat_kepler(&s, "n", 1000000000ull));
	ASSERT_EQ(0, jm_open(&s));

	jm_gather(&s, &snap);
	CHECK(snap.ncgroups == KUBEPODS, "%zu cgroups", snap.ncgroups);
	jm_snapshot_free(&snap);

	/* One failed GET_NODE and a new family id: a module reload. */
	fake_nl_fail(1, -ENOENT);
	jm_gather(&s, &snap);
	CHECK(snap.st[JM_C_NODE].reason == JM_OK, "node: %s",
	      snap.st[JM_C_NODE].msg);
	CHECK(s.reloads == 1, "%llu reloads", (unsigned long long)s.reloads);
	CHECK(snap.ncgroups == KUBEPODS, "%zu cgroups after the retry",
	      snap.ncgroups);
	CHECK(all_kubepods(&snap),
	      "a cgroup outside ^/kubepods after the retry");
	CHECK(s.kepler != NULL, "--compat kepler's state freed by the retry");
	jm_snapshot_free(&snap);
	jm_close(&s);
}

TEST_HARNESS_MAIN
