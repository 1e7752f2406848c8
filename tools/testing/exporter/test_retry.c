// SPDX-License-Identifier: GPL-2.0
/*
 * A netlink request that fails is retried on a new handle (jm_retry() in
 * user/lib/metrics.c). The retry must reopen the handle only: it once
 * called jm_close(), which freed the --cgroups.match expression and the
 * --compat kepler state, so the scrape after a module reload exported
 * every cgroup and read freed memory. Linked with fake-nl.c for
 * user/lib/nl.c; fake_nl_fail() makes GET_NODE fail with the family id
 * bumped, as a reload does.
 *
 * Also the exporter's lagged view: with the module's unpriv_interval_ms
 * on, task and cgroup requests ask for it and node-wide measured figures
 * are read at most once an epoch; not with it 0, --energy live, or a
 * node whose energy is a model's alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "metrics.h"
#include "collector/collector.h"

void fake_nl_fail(int n, int err);
extern bool fake_nl_lagged;
extern int fake_nl_cg_root_fd;

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
	/* --cgroups.root's descriptor (any will do: fake-nl only keeps it). */
	s.cg_root_fd = open("/", O_RDONLY | O_DIRECTORY);
	ASSERT_EQ(1, s.cg_root_fd >= 0);
	ASSERT_EQ(0, jm_open(&s));
	CHECK(fake_nl_cg_root_fd == s.cg_root_fd, "root fd %d, not %d",
	      fake_nl_cg_root_fd, s.cg_root_fd);

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
	CHECK(fake_nl_cg_root_fd == s.cg_root_fd,
	      "--cgroups.root lost by the retry (fd %d, not %d)",
	      fake_nl_cg_root_fd, s.cg_root_fd);
	jm_snapshot_free(&snap);
	jm_close(&s);
	CHECK(s.cg_root_fd == -1, "root fd left open");
}

/* --cgroups.root takes a cgroup v2 directory, and says why not. */
TEST(cgroup_root_is_cgroup2)
{
	struct jm_state s;
	char why[128] = "";

	jm_init(&s, 0, "/nonexistent", NULL);
	CHECK(jm_set_cgroup_root(&s, "/nonexistent-dir", why, sizeof(why)) ==
		      -ENOENT,
	      "a missing directory");
	CHECK(jm_set_cgroup_root(&s, "/", why, sizeof(why)) == -EINVAL &&
		      !strcmp(why, "not a cgroup v2 directory"),
	      "/ taken: '%s'", why);
	CHECK(s.cg_root_fd == -1, "fd %d kept", s.cg_root_fd);
	jm_close(&s);
}

static void put(const char *dir, const char *name, const char *v)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (f) {
		fputs(v, f);
		fclose(f);
	}
}

/* Node energy of two gathers 20 ms apart: the fake node's grows 20 W. */
static void two(struct jm_state *s, uint64_t *a, uint64_t *b)
{
	struct jm_snapshot snap;

	jm_gather(s, &snap);
	*a = snap.node.energy_uj;
	jm_snapshot_free(&snap);
	usleep(20000);
	jm_gather(s, &snap);
	*b = snap.node.energy_uj;
	jm_snapshot_free(&snap);
}

TEST(lagged_holds_node_wide)
{
	char dir[] = "/tmp/jm-lagged.XXXXXX";
	struct jm_state s;
	uint64_t a, b;

	ASSERT_NE(NULL, mkdtemp(dir));
	put(dir, "unpriv_interval_ms", "1000\n");
	put(dir, "interval_ms", "100\n");
	jm_init(&s, 0, dir, NULL);
	ASSERT_EQ(0, jm_open(&s));
	two(&s, &a, &b);
	CHECK(fake_nl_lagged, "task and cgroup requests not lagged");
	CHECK(a > 0 && b == a,
	      "measured node energy read twice in an epoch: %llu, %llu",
	      (unsigned long long)a, (unsigned long long)b);

	put(dir, "unpriv_interval_ms", "0\n");
	two(&s, &a, &b);
	CHECK(!fake_nl_lagged, "policy off, yet lagged");
	CHECK(b > a, "policy off: node energy held (%llu, %llu)",
	      (unsigned long long)a, (unsigned long long)b);

	put(dir, "unpriv_interval_ms", "1000\n");
	jm_set_live(&s, true);
	two(&s, &a, &b);
	CHECK(!fake_nl_lagged && b > a, "--energy live: lagged or held");
	jm_close(&s);

	/* A model's figures alone are no measurement: nothing held. */
	setenv("JOULES_FAKE_NL", "model", 1);
	jm_init(&s, 0, dir, NULL);
	ASSERT_EQ(0, jm_open(&s));
	two(&s, &a, &b);
	CHECK(fake_nl_lagged && b > a, "model node held (%llu, %llu)",
	      (unsigned long long)a, (unsigned long long)b);
	jm_close(&s);
	unsetenv("JOULES_FAKE_NL");
	for (int i = 0; i < 2; i++) {
		char path[256];

		snprintf(path, sizeof(path), "%s/%s", dir,
			 i ? "interval_ms" : "unpriv_interval_ms");
		unlink(path);
	}
	rmdir(dir);
}

TEST_HARNESS_MAIN
