// SPDX-License-Identifier: GPL-2.0
/*
 * Permissions, as an unprivileged user and as root of a user namespace
 * (which is not root for joules): no reading other users' tasks (file and
 * netlink), no sysfs writes, no raw RAPL counters, no multicast groups.
 */
#include <grp.h>
#include <sched.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "selftest.h"

#define NOBODY 65534

struct result {
	int read_file; /* st_read of /proc/energy/1 */
	int read_thread;
	int read_self;
	int write_errs; /* writable attributes that did not fail */
	int write_last; /* errno of the last refused write */
	int raw_rapl; /* st_read of rapl/energy_uj */
	int static_power; /* st_read of static_power */
	int nl_show; /* exit status of joulesctl show 1 */
	int nl_watch; /* exit status of joulesctl watch -n 1 */
	int nl_self; /* exit status of joulesctl show <self> */
	uid_t euid;
};

static int write_map(const char *path, const char *s)
{
	return st_write(path, s, strlen(s));
}

static int become_userns_root(uid_t outer_uid, gid_t outer_gid)
{
	char map[64];

	if (unshare(CLONE_NEWUSER))
		return -errno;
	if (write_map("/proc/self/setgroups", "deny"))
		return -EPERM;
	snprintf(map, sizeof(map), "0 %u 1", outer_uid);
	if (write_map("/proc/self/uid_map", map))
		return -EPERM;
	snprintf(map, sizeof(map), "0 %u 1", outer_gid);
	if (write_map("/proc/self/gid_map", map))
		return -EPERM;
	return 0;
}

static int run(const char *cmd)
{
	int r = system(cmd);

	return r == -1 || !WIFEXITED(r) ? -1 : WEXITSTATUS(r);
}

static void probe(struct result *r)
{
	FILE *p = popen("find " JOULES_SYSFS " -type f -perm -u+w", "r");
	char line[256], b[1024], cmd[128];

	memset(r, 0, sizeof(*r));
	r->euid = geteuid();
	r->read_file = st_read("/proc/energy/1", b, sizeof(b));
	r->read_thread = st_read("/proc/energy/threads/1/1", b, sizeof(b));
	r->read_self = st_read("/proc/energy/self", b, sizeof(b));
	while (p && fgets(line, sizeof(line), p)) {
		int e;

		line[strcspn(line, "\n")] = 0;
		/* A valid value for most files: must still be refused. */
		e = st_write(line, "100\n", 4);
		if (e == 0)
			r->write_errs++;
		else
			r->write_last = -e;
	}
	if (p)
		pclose(p);
	r->raw_rapl = st_read(JOULES_SYSFS "/rapl/energy_uj", b, sizeof(b));
	r->static_power = st_read(JOULES_SYSFS "/static_power", b, sizeof(b));
	r->nl_show = run("joulesctl show 1 >/dev/null 2>&1");
	r->nl_watch = run("timeout 5 joulesctl watch -n 1 >/dev/null 2>&1");
	snprintf(cmd, sizeof(cmd), "exec joulesctl show $$ >/dev/null 2>&1");
	r->nl_self = run(cmd);
}

static int in_child(int mode, struct result *res)
{
	int p[2];
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		struct result r;

		close(p[0]);
		if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
			_exit(3);
		/*
		 * Changing uid made us non-dumpable, which hands our /proc files
		 * to root; an ordinary user's process is dumpable.
		 */
		prctl(PR_SET_DUMPABLE, 1);
		if (mode == 1 && become_userns_root(NOBODY, NOBODY))
			_exit(4);
		probe(&r);
		if (write(p[1], &r, sizeof(r)) != sizeof(r))
			_exit(5);
		_exit(0);
	}
	close(p[1]);
	memset(res, 0xff, sizeof(*res));
	if (read(p[0], res, sizeof(*res)) != sizeof(*res))
		res->euid = (uid_t)-2;
	close(p[0]);
	{
		int status;

		waitpid(pid, &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			DIAG("probe child (mode %d) failed: status 0x%x", mode,
			     status);
	}
	return 0;
}

static void check(struct __test_metadata *_metadata, const char *who,
		  const struct result *r, bool nl)
{
	CHECK(r->euid != (uid_t)-2, "%s: child ran", who);
	CHECK(r->read_file == -EACCES, "%s: /proc/energy/1 refused (%d)", who,
	      r->read_file);
	CHECK(r->read_thread == -EACCES,
	      "%s: /proc/energy/threads/1/1 refused (%d)", who, r->read_thread);
	CHECK(r->read_self > 0, "%s: own /proc/energy/self readable (%d)", who,
	      r->read_self);
	CHECK(r->write_errs == 0,
	      "%s: %d sysfs writes accepted (last refusal %s)", who,
	      r->write_errs, strerror(r->write_last));
	CHECK(r->raw_rapl == -EPERM,
	      "%s: raw RAPL counters need CAP_PERFMON (%d)", who, r->raw_rapl);
	CHECK(r->static_power == -EPERM,
	      "%s: measured static power needs CAP_PERFMON (%d)", who,
	      r->static_power);
	if (nl) {
		CHECK(r->nl_show == 1,
		      "%s: netlink GET_TASK of root's task fails (%d)", who,
		      r->nl_show);
		CHECK(r->nl_watch == 1,
		      "%s: cannot join the multicast groups (%d)", who,
		      r->nl_watch);
		CHECK(r->nl_self == 0,
		      "%s: netlink GET_TASK of itself works (%d)", who,
		      r->nl_self);
	}
}

static bool nl;

/* Real root's settings put back afterwards (a sysfs write is part of the test). */
FIXTURE(perm)
{
	struct st_settings saved;
};

FIXTURE_SETUP(perm)
{
	st_settings_save(&self->saved);
}

FIXTURE_TEARDOWN_PARENT(perm)
{
	EXPECT_EQ(0, st_settings_restore(&self->saved));
}

/* unprivileged user: no other users' tasks, no sysfs writes, no raw RAPL */
TEST_F(perm, unprivileged_user)
{
	struct result r;

	in_child(0, &r);
	check(_metadata, "uid 65534", &r, nl);
}

/* root of a user namespace is not root for joules */
TEST_F(perm, userns_root)
{
	struct result r;

	in_child(1, &r);
	CHECK(r.euid == 0, "root inside the user namespace (euid %d)",
	      (int)r.euid);
	check(_metadata, "userns root", &r, nl);
}

/* real root reads every task and writes sysfs */
TEST_F(perm, real_root)
{
	char b[64];

	CHECK(st_read("/proc/energy/1", b, sizeof(b)) > 0, "root reads pid 1");
	CHECK(st_write(JOULES_SYSFS "/interval_ms", "100\n", 4) == 0,
	      "root writes sysfs");
}

int main(int argc, char **argv)
{
	char b[64];

	if (st_read(JOULES_SYSFS "/version", b, sizeof(b)) <= 0) {
		printf("1..0 # SKIP joules not loaded\n");
		return KSFT_SKIP;
	}
	nl = access("/usr/bin/joulesctl", X_OK) == 0;
	return test_harness_run(argc, argv);
}
