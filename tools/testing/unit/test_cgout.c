// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of the cgroup records' output (user/lib/out.c): the
 * key: value layout of energy.stat with the recognized names, JSON, event
 * lines, and the `top --cgroups` table's power, matching, depth and order.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "out.h"
#include "check.h"

#define ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define POD                                                               \
	"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" \
	"1a2b3c4d_5e6f_7a8b_9c0d_1e2f3a4b5c6d.slice"
#define CTR POD "/cri-containerd-" ID ".scope"

/* What a function printed, as a malloc()ed string. */
#define CAPTURE(buf, call)                                 \
	do {                                               \
		size_t _len;                               \
		FILE *_fp = open_memstream(&(buf), &_len); \
		if (_fp) {                                 \
			call;                              \
			fclose(_fp);                       \
		}                                          \
	} while (0)
#define fp _fp

static bool starts(const char *s, const char *p)
{
	return s && !strncmp(s, p, strlen(p));
}

static void rec(struct cgroup_rec *c, uint64_t id, const char *path,
		uint64_t uj, uint64_t cpu_ns)
{
	memset(c, 0, sizeof(*c));
	c->id = id;
	snprintf(c->path, sizeof(c->path), "%s", path);
	c->nr_tasks = 2;
	c->source = REC_SRC_MODEL;
	c->energy_uj = uj;
	c->idle_uj = uj / 10;
	c->model_generation = 1;
	c->present = REC_F(JL_F_CPU_NS);
	c->feat[JL_F_CPU_NS] = cpu_ns;
	c->read_bytes = 4096;
	c->write_bytes = 8192;
}

/* text: energy.stat's lines, then the names that are known */
TEST(text)
{
	struct cgroup_rec c;
	char *t = NULL;

	rec(&c, 42, CTR, 1500000, 300000000);
	/* Socket bytes counted (6.3+), page-cache reads not: as the kernel's file. */
	c.present |= REC_F(JL_F_NET_TX) | REC_F(JL_F_NET_RX);
	c.feat[JL_F_NET_TX] = 1234;
	c.feat[JL_F_NET_RX] = 5678;
	CAPTURE(t, out_cgroup_text(fp, &c));
	/* energy.stat's keys in its order, then the names. */
	CHECK(t && !strcmp(t, "path: " CTR "\n"
			      "id: 42\n"
			      "tasks: 2\n"
			      "source: model\n"
			      "energy_uj: 1500000\n"
			      "idle_uj: 150000\n"
			      "model_generation: 1\n"
			      "cpu_time_ns: 300000000\n"
			      "cycles: absent\n"
			      "instructions: absent\n"
			      "cache_misses: absent\n"
			      "read_bytes: 4096\n"
			      "write_bytes: 8192\n"
			      "net_tx_bytes: 1234\n"
			      "net_rx_bytes: 5678\n"
			      "pagecache_bytes: absent\n"
			      "kind: container\n"
			      "runtime: containerd\n"
			      "container_id: " ID "\n"
			      "pod_uid: 1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d\n"
			      "qos: burstable\n"
			      "unit: cri-containerd-" ID ".scope\n"),
	      "got:\n%s", t);
	free(t);
	/* Nothing charged it, a removed one, no names. */
	rec(&c, 7, "/misc", 0, 0);
	c.source = 0;
	c.exited = true;
	t = NULL;
	CAPTURE(t, out_cgroup_text(fp, &c));
	CHECK(t && strstr(t, "state: removed\nsource: none\nenergy_uj: absent\n") &&
		      strstr(t, "kind: other\n") &&
		      !strstr(t, "container_id") && !strstr(t, "pod_uid") &&
		      !strstr(t, "unit:"),
	      "got:\n%s", t);
	free(t);
}

/* JSON and event lines carry the names; odd paths escaped */
TEST(json_and_line)
{
	struct cgroup_rec c;
	char *j = NULL, *l = NULL, *x = NULL;

	rec(&c, 42, CTR, 1500000, 300000000);
	CAPTURE(j, out_cgroup_json(fp, &c));
	CHECK(starts(j,
		     "{\"path\":\"" CTR
		     "\",\"id\":42,\"tasks\":2,\"removed\":false,\"source\":\"model\",\"energy_uj\":1500000,"),
	      "%s", j);
	CHECK(j && strstr(j, ",\"cpu_ns\":300000000,\"cycles\":null,") &&
		      strstr(j,
			     ",\"write_bytes\":8192,\"net_tx_bytes\":null,\"net_rx_bytes\":null,\"pagecache_bytes\":null,") &&
		      strstr(j,
			     ",\"kind\":\"container\",\"runtime\":\"containerd\",\"container_id\":\"" ID
			     "\",\"pod_uid\":\"1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d\",\"qos\":\"burstable\",\"unit\":\"cri-containerd-" ID
			     ".scope\"}\n"),
	      "%s", j);
	c.exited = true;
	CAPTURE(x, out_cgroup_exit_json(fp, &c));
	CHECK(x && starts(x, "{\"type\":\"cgroup_exit\",\"path\":") &&
		      strstr(x, "\"removed\":true"),
	      "%s", x);
	CAPTURE(l, out_cgroup_line(fp, &c));
	CHECK(starts(l,
		     "cgroup-exit path=" CTR
		     " id=42 kind=container runtime=containerd container_id=" ID
		     " pod_uid=1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d qos=burstable tasks=2 source=model energy_uj=1500000 idle_uj=150000") &&
		      strstr(l,
			     " write_bytes=8192 net_tx_bytes=- net_rx_bytes=- pagecache_bytes=-\n"),
	      "%s", l);
	free(j);
	free(x);
	free(l);
	/* Odd bytes in a path: quoted on the line, escaped in JSON. */
	rec(&c, 9, "/a b\n\"c", 1, 1);
	j = l = NULL;
	CAPTURE(j, out_cgroup_json(fp, &c));
	CAPTURE(l, out_cgroup_line(fp, &c));
	CHECK(j && strstr(j, "\"path\":\"/a b\\u000a\\\"c\""), "%s", j);
	CHECK(starts(l,
		     "cgroup path=\"/a b\\u000a\\\"c\" id=9 kind=other tasks=2"),
	      "%s", l);
	free(j);
	free(l);
}

/* The row of path in the table's text, or NULL. */
static const char *row(const char *t, const char *path)
{
	const char *p = t;
	size_t n = strlen(path);

	while ((p = strstr(p, path))) {
		if (p[n] == '\n' && p[-1] == ' ')
			break;
		p += n;
	}
	if (!p)
		return NULL;
	while (p > t && p[-1] != '\n')
		p--;
	return p;
}

/* top --cgroups: power by id over the interval, new and reset cgroups '-', depth */
TEST(top)
{
	struct cgroup_rec s0[4], s1[5];
	struct cgtop_state ts;
	char *t = NULL;
	const char *r;

	rec(&s0[0], 1, "/", 10000000, 0);
	rec(&s0[1], 2, "/kubepods.slice", 5000000, 0);
	rec(&s0[2], 3, CTR, 2000000, 1000000000);
	rec(&s0[3], 4, "/system.slice/gone.service", 1000000, 0);
	s1[0] = s0[0];
	s1[0].energy_uj += 25000000; /* 25 J in 2 s: 12.5 W */
	s1[1] = s0[1];
	s1[1].energy_uj += 20000000;
	s1[2] = s0[2];
	s1[2].energy_uj += 20000000; /* 10 W */
	s1[2].feat[JL_F_CPU_NS] += 2000000000; /* one CPU for 2 s */
	/* New since the last frame; and one that went backwards (another cgroup, same id). */
	rec(&s1[3], 5, "/system.slice/new.service", 3000000, 0);
	rec(&s1[4], 4, "/system.slice/gone.service", 10, 0);

	cgtop_init(&ts, 9);
	CHECK(!cgtop_update(&ts, s0, 4, 1000000000), "update 0");
	CHECK(!cgtop_update(&ts, s1, 5, 3000000000), "update 1");
	CAPTURE(t, cgtop_print(&ts, fp, 0, "summary"));
	CHECK(starts(t,
		     "summary\ncgroups: 5 shown of 5 (depth <= 9); a row includes the rows below it; root 12.500 W\n"),
	      "%s", t);
	r = t ? row(t, CTR) : NULL;
	CHECK(starts(r,
		     "   10.000  100.0       22.000     2 0123456789ab 1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d burstable  " CTR
		     "\n"),
	      "container row: %.120s", r);
	r = t ? row(t, "/system.slice/new.service") : NULL;
	CHECK(starts(r,
		     "        -      -        3.000     2 -            -                                    -          /system.slice/new.service\n"),
	      "new row: %.120s", r);
	r = t ? row(t, "/system.slice/gone.service") : NULL;
	CHECK(starts(r, "        -      -        0.000"), "reset row: %.60s",
	      r);
	/* Power descending: the root first, the unmeasured last. */
	CHECK(t && strstr(t, " /\n") < strstr(t, " " CTR "\n") &&
		      strstr(t, " " CTR "\n") < strstr(t, "new.service"),
	      "order:\n%s", t);
	free(t);
	cgtop_free(&ts);

	/* Depth 1: the root and the first level only; max_rows cuts. */
	cgtop_init(&ts, 1);
	cgtop_update(&ts, s0, 4, 1000000000);
	t = NULL;
	CAPTURE(t, cgtop_print(&ts, fp, 1, NULL));
	CHECK(ts.nrows == 2 && ts.seen == 4, "rows %zu seen %zu", ts.nrows,
	      ts.seen);
	/* All unmeasured yet: by energy, the root (10 J) before kubepods (5 J). */
	CHECK(t && strstr(t, "cgroups: 2 shown of 4 (depth <= 1)") &&
		      strstr(t, " /\n") && !strstr(t, "kubepods.slice\n"),
	      "%s", t);
	free(t);
	cgtop_free(&ts);

	/* No source: energy absent, no power. */
	cgtop_init(&ts, 3);
	s0[0].source = 0;
	s1[0].source = 0;
	cgtop_update(&ts, s0, 1, 1000000000);
	cgtop_update(&ts, s1, 1, 2000000000);
	CHECK(ts.nrows == 1 && ts.rows[0].power_w < 0 &&
		      ts.rows[0].cpu_pct == 0,
	      "power %f", ts.nrows ? ts.rows[0].power_w : 0);
	cgtop_free(&ts);
}

/* --cgroups-match: rows only where the path matches, on top of the depth. */
TEST(top_match)
{
	struct cgroup_rec s[5];
	struct cgtop_state ts;
	char why[128] = "", *t = NULL;

	rec(&s[0], 1, "/", 10000000, 0);
	rec(&s[1], 2, "/kubepods.slice", 5000000, 0);
	rec(&s[2], 3, CTR, 2000000, 0);
	rec(&s[3], 4, "/system.slice/nginx.service", 1000000, 0);
	rec(&s[4], 5, "/user.slice/kubepods.slice", 1000000, 0);

	cgtop_init(&ts, 9);
	CHECK(cgtop_wanted(&ts, "/anything") && cgtop_wanted(&ts, "/"),
	      "no match: every path within the depth");
	CHECK(!cgtop_set_match(&ts, "^/kubepods", why, sizeof(why)), "set: %s",
	      why);
	CHECK(cgtop_wanted(&ts, CTR) && !cgtop_wanted(&ts, "/") &&
		      !cgtop_wanted(&ts, "/user.slice/kubepods.slice"),
	      "anchored match");
	CHECK(!cgtop_update(&ts, s, 5, 1000000000), "update");
	CHECK(ts.nrows == 2 && ts.seen == 5, "rows %zu seen %zu", ts.nrows,
	      ts.seen);
	CAPTURE(t, cgtop_print(&ts, fp, 0, NULL));
	CHECK(starts(t,
		     "cgroups: 2 shown of 5 (depth <= 9, matching '^/kubepods'); a row includes"),
	      "%s", t);
	CHECK(t && strstr(t, " /kubepods.slice\n") && strstr(t, " " CTR "\n") &&
		      !strstr(t, "nginx") && !strstr(t, " /\n"),
	      "%s", t);
	free(t);

	/* Unanchored; a second match replaces the first; depth still applies. */
	ts.max_depth = 2;
	CHECK(!cgtop_set_match(&ts, "kubepods|nginx", why, sizeof(why)),
	      "reset: %s", why);
	cgtop_update(&ts, s, 5, 2000000000);
	CHECK(ts.nrows == 3, "unanchored, depth 2: rows %zu", ts.nrows);

	/* A bad expression: the reason, and the previous match stays. */
	why[0] = 0;
	CHECK(cgtop_set_match(&ts, "(", why, sizeof(why)) == -EINVAL && why[0],
	      "bad: %s", why);
	CHECK(ts.match_src && !strcmp(ts.match_src, "kubepods|nginx"),
	      "previous match kept");
	/* Nothing matches: no rows, the count line still says why. */
	CHECK(!cgtop_set_match(&ts, "^/nothing$", why, sizeof(why)), "none");
	cgtop_update(&ts, s, 5, 3000000000);
	t = NULL;
	CAPTURE(t, cgtop_print(&ts, fp, 0, NULL));
	CHECK(ts.nrows == 0 &&
		      starts(t,
			     "cgroups: 0 shown of 5 (depth <= 2, matching '^/nothing$')"),
	      "%s", t);
	free(t);
	cgtop_free(&ts);
}

TEST_HARNESS_MAIN
