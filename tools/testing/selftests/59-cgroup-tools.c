// SPDX-License-Identifier: GPL-2.0
/*
 * The user tools on the module's per-cgroup totals, in the booted kernel
 * with cgroup2 mounted: joulesctl show --cgroup against the cgroup's
 * energy.stat and the names in its path, top --cgroups with a burner's
 * power, container id, pod UID and QoS class, the depth limit, watch
 * --cgroups printing the exit record of a removed cgroup, joulesctl
 * export's cgroup series against netlink (and gone once the cgroup is),
 * and an unprivileged user who sees only the cgroup it owns.
 */
#include <grp.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/syscall.h>

#include "kselftest_harness.h"
#include "selftest.h"

#define CG ST_CG
#define ID "5eed0000000000000000000000000000000000000000000000000000000000cc"
#define ID2 "5eed0000000000000000000000000000000000000000000000000000000000dd"
#define UID "59a0b1c2-d3e4-f5a6-b7c8-d9e0f1a2b3c4"
#define UID_ "59a0b1c2_d3e4_f5a6_b7c8_d9e0f1a2b3c4"
#define QOS "kubepods.slice/kubepods-besteffort.slice"
#define POD QOS "/kubepods-besteffort-pod" UID_ ".slice"
#define CTR POD "/cri-containerd-" ID ".scope"
#define GONE "tools59.slice/docker-" ID2 ".scope"
#define NOBODY 65534

/*
 * Each test: the model set (10 W per busy CPU, 5 W idle); afterwards the
 * model put back and the cgroups it made removed, even when it crashed.
 */
FIXTURE(tools)
{
	struct st_model model;
};

FIXTURE_SETUP(tools)
{
	ASSERT_EQ(0, st_model_set(&self->model, "10000000 0 0 0 0 5000000"));
}

FIXTURE_TEARDOWN_PARENT(tools)
{
	EXPECT_EQ(0, st_model_restore(&self->model));
	EXPECT_EQ(0, st_rmcg("kubepods.slice"));
	EXPECT_EQ(0, st_rmcg("tools59.slice"));
	EXPECT_EQ(0, st_rmcg("mine59.scope"));
}

static void settle(void)
{
	usleep(3 * st_interval_ms() * 1000 + 100000);
}

/* The last frame of top's output (from its last summary line). */
static const char *last_frame(const char *s)
{
	const char *p = s, *last = NULL;

	while ((p = strstr(p, "joulesctl top - "))) {
		last = p;
		p++;
	}
	return last;
}

/* The row (line) of a frame whose CGROUP column is exactly path, copied into row. */
static int find_row(const char *frame, const char *path, char *row, size_t size)
{
	size_t n = strlen(path);
	const char *p = frame;

	while ((p = strstr(p, path))) {
		const char *b = p, *e = p + n;

		if (p > frame && p[-1] == ' ' && (*e == '\n' || !*e)) {
			while (b > frame && b[-1] != '\n')
				b--;
			if ((size_t)(e - b) >= size)
				return -1;
			memcpy(row, b, e - b);
			row[e - b] = 0;
			return 0;
		}
		p = e;
	}
	return -1;
}

TEST_F(tools, show_is_the_file_plus_the_names)
{
	unsigned long long v = 0, fe;
	struct cgroup_rec r;
	char s[128];
	int rc;

	ASSERT_EQ(0, st_mkcg(CTR));
	st_burn_in(CTR, 0.2);
	settle();
	fe = st_cg_file_energy(CTR);
	ASSERT_NE(~0ULL, fe);
	rc = ST_JC(0, "show", "--cgroup", "/" CTR);
	ASSERT_EQ(0, rc) TH_LOG("stderr: %s", st_err);
	/* Nothing runs there any more: the same numbers as the file. */
	EXPECT_EQ(0, st_kv(st_out, "energy_uj", &v));
	EXPECT_EQ(fe, v);
	EXPECT_EQ(0, st_kv(st_out, "tasks", &v));
	EXPECT_EQ(0, v);
	EXPECT_EQ(0, strncmp(st_out, "path: /" CTR "\nid: ",
			     strlen("path: /" CTR "\nid: ")))
	TH_LOG("%.300s", st_out);
	EXPECT_EQ(0, st_cg_get(CTR, &r));
	EXPECT_EQ(0, st_kv(st_out, "id", &v));
	EXPECT_EQ(r.id, v);
	EXPECT_NE(NULL, strstr(st_out, "\nsource: model\n"));
	EXPECT_NE(
		NULL,
		strstr(st_out,
		       "\nkind: container\nruntime: containerd\ncontainer_id: " ID
		       "\npod_uid: " UID
		       "\nqos: besteffort\nunit: cri-containerd-" ID
		       ".scope\n"))
	TH_LOG("%s", st_out);
	/* The leading slash is optional; JSON carries the same. */
	rc = ST_JC(0, "show", "--json", "--cgroup", CTR);
	ASSERT_EQ(0, rc) TH_LOG("stderr: %s", st_err);
	snprintf(s, sizeof(s), "\"energy_uj\":%llu,", fe);
	EXPECT_NE(NULL, strstr(st_out, s)) TH_LOG("%s", st_out);
	EXPECT_NE(NULL, strstr(st_out,
			       "\"container_id\":\"" ID "\",\"pod_uid\":\"" UID
			       "\",\"qos\":\"besteffort\""))
	TH_LOG("%s", st_out);
	/* A parent: kind pod, no container. */
	rc = ST_JC(0, "show", "--cgroup", POD);
	EXPECT_EQ(0, rc);
	EXPECT_NE(NULL, strstr(st_out, "\nkind: pod\npod_uid: " UID
				       "\nqos: besteffort\n"))
	TH_LOG("%s", st_out);
	EXPECT_EQ(NULL, strstr(st_out, "container_id"));
	/* A bad path: the reason, exit 1; the good one is still shown. */
	rc = ST_JC(0, "show", "--cgroup", "/no/such", POD);
	EXPECT_EQ(1, rc);
	EXPECT_NE(NULL, strstr(st_err, "cgroup /no/such: no such cgroup"))
	TH_LOG("%s", st_err);
	EXPECT_NE(NULL, strstr(st_out, "kind: pod"));
	/* PIDs are not paths. */
	EXPECT_EQ(2, ST_JC(0, "show", "/" CTR));
}

static unsigned long long cg_usage(const void *rel)
{
	return st_cg_usage_usec(rel);
}

TEST_F(tools, top_shows_a_burners_power_and_names)
{
	char row[1024], cpu[16], cid[16], uid[64], qos[16], path[512];
	const char *frame;
	double power, pct, lo, hi, f_lo, f_hi;
	struct st_frame_mark m[2];
	pid_t b;
	int rc;

	ASSERT_EQ(0, st_mkcg(CTR));
	b = st_burn_in(CTR, -1);
	ASSERT_LT(0, b);
	rc = st_jc_frames((const char *const[]){ "top", "--cgroups", "--depth",
						 "4", "-b", "-n", "2", "-d",
						 "1", NULL },
			  cg_usage, CTR, m, 2);
	kill(b, SIGKILL);
	waitpid(b, NULL, 0);
	ASSERT_EQ(0, rc) TH_LOG("stderr: %s", st_err);
	frame = last_frame(st_out);
	ASSERT_NE(NULL, frame) TH_LOG("%s", st_out);
	EXPECT_NE(NULL, strstr(frame, "(depth <= 4)"));
	ASSERT_EQ(0, find_row(frame, "/" CTR, row, sizeof(row)))
	TH_LOG("%s", frame);
	TH_LOG("%s", row);
	ASSERT_EQ(6, sscanf(row, "%lf %15s %*s %*u %15s %63s %15s %511s",
			    &power, cpu, cid, uid, qos, path));
	pct = atof(cpu);
	/*
	 * The last frame spans top's snapshots behind frames 1 and 2. The
	 * burner's CPU time in it, by the kernel's cpu.stat, lies between
	 * what the cgroup surely used inside (post of 1 to pre of 2) and what
	 * it may have (pre of 1 to post of 2); the frame's length likewise.
	 * Emulation gives the burner what it gives, not a whole CPU: that
	 * share is the oracle, not a nominal 100%. The module charges per
	 * interval: a frame holds its intervals give or take one, which also
	 * covers the moment between top's snapshot and its print.
	 */
	st_frame_share(&m[0], &m[1], &lo, &hi, &f_lo, &f_hi);
	TH_LOG("cpu.stat: %.3f..%.3f of a CPU in a frame of %.3f..%.3f s; top: %.1f%% %.3f W",
	       lo, hi, f_lo, f_hi, pct, power);
	ASSERT_LT(0, f_lo);
	EXPECT_LE(100 * lo, pct);
	EXPECT_GE(100 * hi, pct);
	/* One thread: never above one CPU, give or take an interval. */
	EXPECT_GT(115, pct);
	/* 10 W per busy CPU for its share, and a share of the 5 W idle power. */
	EXPECT_LE(10 * lo, power);
	EXPECT_GE(10 * hi + 5, power);
	EXPECT_STREQ("5eed00000000", cid);
	EXPECT_STREQ(UID, uid);
	EXPECT_STREQ("besteffort", qos);
	/* The parents hold it: the pod's row is at least as high, so is the root's. */
	ASSERT_EQ(0, find_row(frame, "/" POD, row, sizeof(row)));
	EXPECT_LE(power * 0.95, atof(row));
	ASSERT_EQ(0, find_row(frame, "/", row, sizeof(row)));
	EXPECT_LE(power * 0.95, atof(row));
	/* The default depth, 3, stops at the pod. */
	rc = ST_JC(0, "top", "--cgroups", "-b", "-n", "1", "-d", "0.5");
	EXPECT_EQ(0, rc);
	EXPECT_EQ(0, find_row(st_out, "/" POD, row, sizeof(row)));
	EXPECT_EQ(-1, find_row(st_out, "/" CTR, row, sizeof(row)));
	/* --cgroups-match: the pod's subtree alone, the depth still applying. */
	rc = ST_JC(0, "top", "--cgroups", "--depth", "4", "--cgroups-match",
		   "besteffort-pod" UID_, "-b", "-n", "1", "-d", "0.5");
	EXPECT_EQ(0, rc) TH_LOG("stderr: %s", st_err);
	EXPECT_NE(NULL, strstr(st_out, "matching 'besteffort-pod" UID_ "'"))
	TH_LOG("%s", st_out);
	EXPECT_EQ(0, find_row(st_out, "/" POD, row, sizeof(row)))
	TH_LOG("%s", st_out);
	EXPECT_EQ(0, find_row(st_out, "/" CTR, row, sizeof(row)));
	EXPECT_EQ(-1, find_row(st_out, "/", row, sizeof(row)));
	EXPECT_EQ(-1, find_row(st_out, "/" QOS, row, sizeof(row)));
	EXPECT_EQ(2, ST_JC(0, "top", "--cgroups", "--threads"));
	EXPECT_EQ(2, ST_JC(0, "top", "--cgroups", "--depth", "x"));
	EXPECT_EQ(2, ST_JC(0, "top", "--cgroups", "--cgroups-match", "("));
	EXPECT_NE(NULL, strstr(st_err, "bad --cgroups-match '('"))
	TH_LOG("%s", st_err);
	EXPECT_EQ(2, ST_JC(0, "top", "--cgroups-match", "x"));
}

TEST_F(tools, watch_prints_a_removed_cgroups_exit_record)
{
	struct cgroup_rec last;
	char want[512];
	pid_t w;
	int rc;

	ASSERT_EQ(0, st_mkcg(GONE));
	st_burn_in(GONE, 0.1);
	settle();
	ASSERT_EQ(0, st_cg_get(GONE, &last));
	w = st_jc_start(0, (const char *const[]){ "watch", "--cgroups", "-n",
						  "1", NULL });
	ASSERT_LT(0, w);
	usleep(500000); /* subscribed */
	ASSERT_EQ(0, rmdir(CG "/" GONE));
	rc = st_jc_finish(w, 10);
	ASSERT_EQ(0, rc) TH_LOG("stderr: %s, st_out: %s", st_err, st_out);
	/* One line: its path from the hierarchy's root, its names, its final totals. */
	snprintf(want, sizeof(want),
		 "cgroup-exit path=/" GONE
		 " id=%llu kind=container runtime=docker "
		 "container_id=" ID2 " tasks=0 source=model energy_uj=%llu ",
		 (unsigned long long)last.id,
		 (unsigned long long)last.energy_uj);
	EXPECT_EQ(0, strncmp(st_out, want, strlen(want)))
	TH_LOG("got  %s\nwant %s", st_out, want);
	EXPECT_EQ(st_out + strlen(st_out) - 1, strchr(st_out, '\n'))
	TH_LOG("one line: %s", st_out);
	rmdir(CG "/tools59.slice");
}

/* The value of a series (name and labels exactly) in an exposition, or -1. */
static double series(const char *text, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = text; p && *p;
	     p = strchr(p, '\n'), p = p ? p + 1 : p)
		if (!strncmp(p, name, n) && p[n] == ' ')
			return atof(p + n + 1);
	return -1;
}

TEST_F(tools, export_has_the_cgroup_series_until_it_goes)
{
	struct cgroup_rec before, after;
	double e, cpu;
	int rc;

	ASSERT_EQ(0, st_mkcg("tools59.slice/export.scope"));
	st_burn_in("tools59.slice/export.scope", 0.1);
	settle();
	ASSERT_EQ(0, st_cg_get("tools59.slice/export.scope", &before));
	rc = ST_JC(0, "export", "--cgroups-match", "^/tools59", "--cgroups",
		   "depth=2");
	ASSERT_EQ(0, st_cg_get("tools59.slice/export.scope", &after));
	EXPECT_EQ(0, rc) TH_LOG("stderr: %s", st_err);
	e = series(
		st_out,
		"joules_cgroup_energy_joules_total{cgroup=\"/tools59.slice/export.scope\",kind=\"scope\"}");
	cpu = series(
		st_out,
		"joules_cgroup_cpu_seconds_total{cgroup=\"/tools59.slice/export.scope\",kind=\"scope\"}");
	TH_LOG("exported %.6f J, netlink %llu..%llu uJ; %.9f s", e,
	       (unsigned long long)before.energy_uj,
	       (unsigned long long)after.energy_uj, cpu);
	EXPECT_LE(before.energy_uj / 1e6 - 1e-7, e);
	EXPECT_GE(after.energy_uj / 1e6 + 1e-7, e);
	EXPECT_LT(0.09, cpu);
	/* The match and depth leave the rest st_out. */
	EXPECT_NE(
		-1,
		series(st_out,
		       "joules_cgroup_energy_joules_total{cgroup=\"/tools59.slice\",kind=\"slice\"}"));
	EXPECT_EQ(NULL, strstr(st_out, "cgroup=\"/\""));
	EXPECT_EQ(NULL, strstr(st_out, "kubepods"));
	/* Gone: no series any more. */
	ASSERT_EQ(0, rmdir(CG "/tools59.slice/export.scope"));
	rc = ST_JC(0, "export", "--cgroups-match", "^/tools59");
	EXPECT_EQ(0, rc);
	EXPECT_EQ(NULL, strstr(st_out, "export.scope"));
	EXPECT_NE(
		-1,
		series(st_out,
		       "joules_cgroup_energy_joules_total{cgroup=\"/tools59.slice\",kind=\"slice\"}"));
	/* ...and its energy stays in its parent. */
	EXPECT_LE(
		after.energy_uj / 1e6 - 1e-7,
		series(st_out,
		       "joules_cgroup_energy_joules_total{cgroup=\"/tools59.slice\",kind=\"slice\"}"));
	rmdir(CG "/tools59.slice");
}

TEST_F(tools, an_unprivileged_user_sees_only_its_own)
{
	char row[1024];
	int rc;

	ASSERT_EQ(0, st_mkcg("mine59.scope"));
	ASSERT_EQ(0, st_mkcg(CTR));
	ASSERT_EQ(0, st_sh("chown %d " CG "/mine59.scope", NOBODY));
	rc = ST_JC(NOBODY, "top", "--cgroups", "-b", "-n", "1", "-d", "0.3");
	EXPECT_EQ(0, rc) TH_LOG("%s", st_err);
	EXPECT_EQ(0, find_row(st_out, "/mine59.scope", row, sizeof(row)))
	TH_LOG("%s", st_out);
	EXPECT_NE(NULL, strstr(st_out, "cgroups: 1 shown of 1"))
	TH_LOG("%s", st_out);
	rc = ST_JC(NOBODY, "show", "--cgroup", CTR);
	EXPECT_EQ(1, rc);
	EXPECT_NE(NULL, strstr(st_err, "permission denied"))
	TH_LOG("%s", st_err);
	rc = ST_JC(NOBODY, "show", "--cgroup", "mine59.scope");
	EXPECT_EQ(0, rc) TH_LOG("%s", st_err);
	EXPECT_NE(NULL, strstr(st_out, "path: /mine59.scope\n"));
	rmdir(CG "/mine59.scope");
}

static int mounted;

static void unmount_cg(void)
{
	if (mounted)
		umount(CG);
}

int main(int argc, char **argv)
{
	if (access(JOULES_SYSFS "/cgroups", R_OK)) {
		printf("1..0 # SKIP joules without cgroups\n");
		return KSFT_SKIP;
	}
	if (access(ST_JOULESCTL, X_OK)) {
		printf("1..0 # SKIP %s not installed\n", ST_JOULESCTL);
		return KSFT_SKIP;
	}
	if (st_cgroup2(&mounted)) {
		printf("1..0 # SKIP no cgroup2 here\n");
		return KSFT_SKIP;
	}
	ck_at_exit(unmount_cg);
	return test_harness_run(argc, argv);
}
