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
#include <sys/syscall.h>

#include "kselftest_harness.h"
#include "selftest.h"

#define CG "/sys/fs/cgroup"
#define ID "5eed0000000000000000000000000000000000000000000000000000000000cc"
#define ID2 "5eed0000000000000000000000000000000000000000000000000000000000dd"
#define UID "59a0b1c2-d3e4-f5a6-b7c8-d9e0f1a2b3c4"
#define UID_ "59a0b1c2_d3e4_f5a6_b7c8_d9e0f1a2b3c4"
#define QOS "kubepods.slice/kubepods-besteffort.slice"
#define POD QOS "/kubepods-besteffort-pod" UID_ ".slice"
#define CTR POD "/cri-containerd-" ID ".scope"
#define GONE "tools59.slice/docker-" ID2 ".scope"
#define NOBODY 65534
#define OUT "/tmp/cgt.out"
#define ERR "/tmp/cgt.err"

static const char *jc = "/usr/bin/joulesctl";
static char out[1 << 17], err[4096];
static char coef_saved[128];

/* cgroup2 mounted, the model set: 10 W per busy CPU, 5 W idle. */
static int setup(void)
{
	static const char model[] = "10000000 0 0 0 0 5000000";

	if (st_sh("grep -q ' " CG " cgroup2 ' /proc/mounts || mount -t cgroup2 none " CG))
		return -1;
	st_read(JOULES_SYSFS "/model/coefficients", coef_saved, sizeof(coef_saved));
	return st_write(JOULES_SYSFS "/model/coefficients", model, strlen(model));
}

static int mkcg(const char *rel)
{
	return st_sh("mkdir -p " CG "/%s", rel);
}

/*
 * Start joulesctl with args as uid (0 or NOBODY), stdout to OUT, stderr to
 * ERR; its pid.
 */
static pid_t start(uid_t uid, const char *const *args)
{
	const char *argv[32];
	int n = 0;
	pid_t pid;

	argv[n++] = jc;
	while (*args && n < 31)
		argv[n++] = *args++;
	argv[n] = NULL;
	unlink(OUT);
	unlink(ERR);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int o = open(OUT, O_WRONLY | O_CREAT | O_TRUNC, 0666);
		int e = open(ERR, O_WRONLY | O_CREAT | O_TRUNC, 0666);

		if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(126);
		close(0);
		open("/dev/null", O_RDONLY);
		if (uid && (setgroups(0, NULL) || setgid(uid) || setuid(uid)))
			_exit(126);
		execv(jc, (char *const *)argv);
		_exit(127);
	}
	return pid;
}

/* Wait for a started joulesctl (killed after sec); its exit status, OUT and ERR read. */
static int finish(pid_t pid, double sec)
{
	double end = st_now() + sec;
	int st = 0;
	pid_t r;

	while ((r = waitpid(pid, &st, WNOHANG)) == 0 && st_now() < end)
		usleep(20000);
	if (r == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	out[0] = err[0] = 0;
	st_read(OUT, out, sizeof(out));
	st_read(ERR, err, sizeof(err));
	return r == pid && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

#define RUN(uid, ...) finish(start(uid, (const char *const[]){ __VA_ARGS__, NULL }), 60)

/* A burner of sec CPU seconds in rel, reaped; or (sec < 0) one that runs until killed. */
static pid_t burn_in(const char *rel, double sec)
{
	pid_t p = st_spawn_in(CG, rel);

	if (p == 0) {
		if (sec < 0)
			for (volatile unsigned long x = 0;; x++)
				;
		st_burn_cpu(sec);
		_exit(0);
	}
	if (p > 0 && sec >= 0)
		waitpid(p, NULL, 0);
	return p;
}

static void settle(void)
{
	usleep(3 * st_interval_ms() * 1000 + 100000);
}

static unsigned long long file_energy(const char *rel)
{
	char path[512], b[4096];
	unsigned long long v = ~0ULL;

	snprintf(path, sizeof(path), "/proc/energy/cgroup/%s/energy.stat", rel);
	if (st_read(path, b, sizeof(b)) > 0)
		st_kv(b, "energy_uj", &v);
	return v;
}

static int cg_get(const char *rel, struct cgroup_rec *r)
{
	struct jnl *nl;
	int e = jnl_open(&nl);

	if (!e) {
		e = jnl_get_cgroup(nl, rel, 0, r);
		jnl_close(nl);
	}
	return e;
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

TEST(show_is_the_file_plus_the_names)
{
	unsigned long long v = 0, fe;
	struct cgroup_rec r;
	char s[128];
	int rc;

	ASSERT_EQ(0, mkcg(CTR));
	burn_in(CTR, 0.2);
	settle();
	fe = file_energy(CTR);
	ASSERT_NE(~0ULL, fe);
	rc = RUN(0, "show", "--cgroup", "/" CTR);
	ASSERT_EQ(0, rc) TH_LOG("stderr: %s", err);
	/* Nothing runs there any more: the same numbers as the file. */
	EXPECT_EQ(0, st_kv(out, "energy_uj", &v));
	EXPECT_EQ(fe, v);
	EXPECT_EQ(0, st_kv(out, "tasks", &v));
	EXPECT_EQ(0, v);
	EXPECT_EQ(0, strncmp(out, "path: /" CTR "\nid: ", strlen("path: /" CTR "\nid: ")))
		TH_LOG("%.300s", out);
	EXPECT_EQ(0, cg_get(CTR, &r));
	EXPECT_EQ(0, st_kv(out, "id", &v));
	EXPECT_EQ(r.id, v);
	EXPECT_NE(NULL, strstr(out, "\nsource: model\n"));
	EXPECT_NE(NULL, strstr(out, "\nkind: container\nruntime: containerd\ncontainer_id: " ID
				    "\npod_uid: " UID "\nqos: besteffort\nunit: cri-containerd-" ID
				    ".scope\n"))
		TH_LOG("%s", out);
	/* The leading slash is optional; JSON carries the same. */
	rc = RUN(0, "show", "--json", "--cgroup", CTR);
	ASSERT_EQ(0, rc) TH_LOG("stderr: %s", err);
	snprintf(s, sizeof(s), "\"energy_uj\":%llu,", fe);
	EXPECT_NE(NULL, strstr(out, s)) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"container_id\":\"" ID "\",\"pod_uid\":\"" UID
				    "\",\"qos\":\"besteffort\""))
		TH_LOG("%s", out);
	/* A parent: kind pod, no container. */
	rc = RUN(0, "show", "--cgroup", POD);
	EXPECT_EQ(0, rc);
	EXPECT_NE(NULL, strstr(out, "\nkind: pod\npod_uid: " UID "\nqos: besteffort\n"))
		TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, "container_id"));
	/* A bad path: the reason, exit 1; the good one is still shown. */
	rc = RUN(0, "show", "--cgroup", "/no/such", POD);
	EXPECT_EQ(1, rc);
	EXPECT_NE(NULL, strstr(err, "cgroup /no/such: no such cgroup")) TH_LOG("%s", err);
	EXPECT_NE(NULL, strstr(out, "kind: pod"));
	/* PIDs are not paths. */
	EXPECT_EQ(2, RUN(0, "show", "/" CTR));
}

TEST(top_shows_a_burners_power_and_names)
{
	char row[1024], cpu[16], cid[16], uid[64], qos[16], path[512];
	const char *frame;
	double power, pct;
	pid_t b;
	int rc;

	ASSERT_EQ(0, mkcg(CTR));
	b = burn_in(CTR, -1);
	ASSERT_LT(0, b);
	rc = RUN(0, "top", "--cgroups", "--depth", "4", "-b", "-n", "2", "-d", "1");
	kill(b, SIGKILL);
	waitpid(b, NULL, 0);
	ASSERT_EQ(0, rc) TH_LOG("stderr: %s", err);
	frame = last_frame(out);
	ASSERT_NE(NULL, frame) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(frame, "(depth <= 4)"));
	ASSERT_EQ(0, find_row(frame, "/" CTR, row, sizeof(row))) TH_LOG("%s", frame);
	TH_LOG("%s", row);
	ASSERT_EQ(6, sscanf(row, "%lf %15s %*s %*u %15s %63s %15s %511s", &power, cpu, cid,
			    uid, qos, path));
	pct = atof(cpu);
	/*
	 * One busy CPU at 10 W, and a share of the 5 W idle power; a 1 s
	 * frame holds 10 intervals, give or take one.
	 */
	EXPECT_LT(8.5, power);
	EXPECT_GT(15.5, power);
	EXPECT_LT(85, pct);
	EXPECT_GT(115, pct);
	EXPECT_STREQ("5eed00000000", cid);
	EXPECT_STREQ(UID, uid);
	EXPECT_STREQ("besteffort", qos);
	/* The parents hold it: the pod's row is at least as high, so is the root's. */
	ASSERT_EQ(0, find_row(frame, "/" POD, row, sizeof(row)));
	EXPECT_LE(power * 0.95, atof(row));
	ASSERT_EQ(0, find_row(frame, "/", row, sizeof(row)));
	EXPECT_LE(power * 0.95, atof(row));
	/* The default depth, 3, stops at the pod. */
	rc = RUN(0, "top", "--cgroups", "-b", "-n", "1", "-d", "0.5");
	EXPECT_EQ(0, rc);
	EXPECT_EQ(0, find_row(out, "/" POD, row, sizeof(row)));
	EXPECT_EQ(-1, find_row(out, "/" CTR, row, sizeof(row)));
	/* --cgroups-match: the pod's subtree alone, the depth still applying. */
	rc = RUN(0, "top", "--cgroups", "--depth", "4", "--cgroups-match", "besteffort-pod" UID_,
		 "-b", "-n", "1", "-d", "0.5");
	EXPECT_EQ(0, rc) TH_LOG("stderr: %s", err);
	EXPECT_NE(NULL, strstr(out, "matching 'besteffort-pod" UID_ "'")) TH_LOG("%s", out);
	EXPECT_EQ(0, find_row(out, "/" POD, row, sizeof(row))) TH_LOG("%s", out);
	EXPECT_EQ(0, find_row(out, "/" CTR, row, sizeof(row)));
	EXPECT_EQ(-1, find_row(out, "/", row, sizeof(row)));
	EXPECT_EQ(-1, find_row(out, "/" QOS, row, sizeof(row)));
	EXPECT_EQ(2, RUN(0, "top", "--cgroups", "--threads"));
	EXPECT_EQ(2, RUN(0, "top", "--cgroups", "--depth", "x"));
	EXPECT_EQ(2, RUN(0, "top", "--cgroups", "--cgroups-match", "("));
	EXPECT_NE(NULL, strstr(err, "bad --cgroups-match '('")) TH_LOG("%s", err);
	EXPECT_EQ(2, RUN(0, "top", "--cgroups-match", "x"));
}

TEST(watch_prints_a_removed_cgroups_exit_record)
{
	struct cgroup_rec last;
	char want[512];
	pid_t w;
	int rc;

	ASSERT_EQ(0, mkcg(GONE));
	burn_in(GONE, 0.1);
	settle();
	ASSERT_EQ(0, cg_get(GONE, &last));
	w = start(0, (const char *const[]){ "watch", "--cgroups", "-n", "1", NULL });
	ASSERT_LT(0, w);
	usleep(500000);	/* subscribed */
	ASSERT_EQ(0, rmdir(CG "/" GONE));
	rc = finish(w, 10);
	ASSERT_EQ(0, rc) TH_LOG("stderr: %s, out: %s", err, out);
	/* One line: its path from the hierarchy's root, its names, its final totals. */
	snprintf(want, sizeof(want),
		 "cgroup-exit path=/" GONE " id=%llu kind=container runtime=docker "
		 "container_id=" ID2 " tasks=0 source=model energy_uj=%llu ",
		 (unsigned long long)last.id, (unsigned long long)last.energy_uj);
	EXPECT_EQ(0, strncmp(out, want, strlen(want))) TH_LOG("got  %s\nwant %s", out, want);
	EXPECT_EQ(out + strlen(out) - 1, strchr(out, '\n')) TH_LOG("one line: %s", out);
	rmdir(CG "/tools59.slice");
}

/* The value of a series (name and labels exactly) in an exposition, or -1. */
static double series(const char *text, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : p)
		if (!strncmp(p, name, n) && p[n] == ' ')
			return atof(p + n + 1);
	return -1;
}

TEST(export_has_the_cgroup_series_until_it_goes)
{
	struct cgroup_rec before, after;
	double e, cpu;
	int rc;

	ASSERT_EQ(0, mkcg("tools59.slice/export.scope"));
	burn_in("tools59.slice/export.scope", 0.1);
	settle();
	ASSERT_EQ(0, cg_get("tools59.slice/export.scope", &before));
	rc = RUN(0, "export", "--cgroups-match", "^/tools59", "--cgroups", "depth=2");
	ASSERT_EQ(0, cg_get("tools59.slice/export.scope", &after));
	EXPECT_EQ(0, rc) TH_LOG("stderr: %s", err);
	e = series(out, "joules_cgroup_energy_joules_total{cgroup=\"/tools59.slice/export.scope\",kind=\"scope\"}");
	cpu = series(out, "joules_cgroup_cpu_seconds_total{cgroup=\"/tools59.slice/export.scope\",kind=\"scope\"}");
	TH_LOG("exported %.6f J, netlink %llu..%llu uJ; %.9f s", e,
	       (unsigned long long)before.energy_uj, (unsigned long long)after.energy_uj, cpu);
	EXPECT_LE(before.energy_uj / 1e6 - 1e-7, e);
	EXPECT_GE(after.energy_uj / 1e6 + 1e-7, e);
	EXPECT_LT(0.09, cpu);
	/* The match and depth leave the rest out. */
	EXPECT_NE(-1, series(out, "joules_cgroup_energy_joules_total{cgroup=\"/tools59.slice\",kind=\"slice\"}"));
	EXPECT_EQ(NULL, strstr(out, "cgroup=\"/\""));
	EXPECT_EQ(NULL, strstr(out, "kubepods"));
	/* Gone: no series any more. */
	ASSERT_EQ(0, rmdir(CG "/tools59.slice/export.scope"));
	rc = RUN(0, "export", "--cgroups-match", "^/tools59");
	EXPECT_EQ(0, rc);
	EXPECT_EQ(NULL, strstr(out, "export.scope"));
	EXPECT_NE(-1, series(out, "joules_cgroup_energy_joules_total{cgroup=\"/tools59.slice\",kind=\"slice\"}"));
	/* ...and its energy stays in its parent. */
	EXPECT_LE(after.energy_uj / 1e6 - 1e-7,
		  series(out, "joules_cgroup_energy_joules_total{cgroup=\"/tools59.slice\",kind=\"slice\"}"));
	rmdir(CG "/tools59.slice");
}

TEST(an_unprivileged_user_sees_only_its_own)
{
	char row[1024];
	int rc;

	ASSERT_EQ(0, mkcg("mine59.scope"));
	ASSERT_EQ(0, mkcg(CTR));
	ASSERT_EQ(0, st_sh("chown %d " CG "/mine59.scope", NOBODY));
	rc = RUN(NOBODY, "top", "--cgroups", "-b", "-n", "1", "-d", "0.3");
	EXPECT_EQ(0, rc) TH_LOG("%s", err);
	EXPECT_EQ(0, find_row(out, "/mine59.scope", row, sizeof(row))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "cgroups: 1 shown of 1")) TH_LOG("%s", out);
	rc = RUN(NOBODY, "show", "--cgroup", CTR);
	EXPECT_EQ(1, rc);
	EXPECT_NE(NULL, strstr(err, "permission denied")) TH_LOG("%s", err);
	rc = RUN(NOBODY, "show", "--cgroup", "mine59.scope");
	EXPECT_EQ(0, rc) TH_LOG("%s", err);
	EXPECT_NE(NULL, strstr(out, "path: /mine59.scope\n"));
	rmdir(CG "/mine59.scope");
}

int main(int argc, char **argv)
{
	int rc;

	if (access(JOULES_SYSFS "/cgroups", R_OK)) {
		printf("1..0 # SKIP joules without cgroups\n");
		return KSFT_SKIP;
	}
	if (access(jc, X_OK)) {
		printf("1..0 # SKIP %s not installed\n", jc);
		return KSFT_SKIP;
	}
	if (setup()) {
		printf("1..0 # SKIP no cgroup2 here, or no model\n");
		return KSFT_SKIP;
	}
	rc = test_harness_run(argc, argv);
	if (coef_saved[0])
		st_write(JOULES_SYSFS "/model/coefficients", coef_saved, strlen(coef_saved));
	return rc;
}
