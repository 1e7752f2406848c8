// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/<pid>/energy, on kernels patched with packaging/kernel-patches/:
 * joules provides it (sysfs proc_pid_energy says "served"), it reads the
 * same as /proc/energy/<pid> for processes and threads, the kernel's
 * /proc/<pid>/io rule decides who reads it, and without joules it fails
 * with ENODATA. On stock kernels the file does not exist and sysfs says
 * why.
 */
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "kselftest_harness.h"
#include "selftest.h"

#define NOBODY 65534

static bool served(void)
{
	char b[256];

	return st_read(JOULES_SYSFS "/proc_pid_energy", b, sizeof(b)) > 0 &&
	       !strcmp(b, "served\n");
}

TEST(status_matches_the_file)
{
	char b[256], e[2048];
	ssize_t r;

	ASSERT_LT(0, st_read(JOULES_SYSFS "/proc_pid_energy", b, sizeof(b)));
	TH_LOG("proc_pid_energy: %s", b);
	r = st_read("/proc/self/energy", e, sizeof(e));
	if (served()) {
		ASSERT_LT(0, r);
		ASSERT_NE(NULL, strstr(e, "energy_uj: "));
	} else {
		ASSERT_EQ(0, strncmp(b, "absent: ", 8));
		ASSERT_EQ(-ENOENT, r);
	}
}

/* A child with a second thread, both blocked: their counters hold still. */
struct brood {
	pid_t pid, tid;
	int go[2], tidpipe[2];
};

static void *idle_thread(void *arg)
{
	struct brood *b = arg;
	pid_t tid = syscall(SYS_gettid);
	char c;

	st_burn_cpu(0.05);
	if (write(b->tidpipe[1], &tid, sizeof(tid)) != sizeof(tid))
		return NULL;
	if (read(b->go[0], &c, 1) < 0)
		return NULL;
	return NULL;
}

static int brood_start(struct brood *b)
{
	if (pipe(b->go) || pipe(b->tidpipe))
		return -1;
	b->pid = fork();
	if (b->pid == 0) {
		pthread_t th;
		char c;

		close(b->go[1]);
		st_burn_cpu(0.1);
		pthread_create(&th, NULL, idle_thread, b);
		if (read(b->go[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	if (read(b->tidpipe[0], &b->tid, sizeof(b->tid)) != sizeof(b->tid))
		return -1;
	/* Two intervals: whatever the worker still had to charge is charged. */
	usleep(3 * st_interval_ms() * 1000);
	return 0;
}

static void brood_end(struct brood *b)
{
	close(b->go[1]);
	waitpid(b->pid, NULL, 0);
}

TEST(same_lines_as_joulesfs)
{
	char p1[64], p2[64], a[2048], c[2048];
	struct brood b;

	if (!served())
		SKIP(return, "this kernel has no /proc/<pid>/energy");
	ASSERT_EQ(0, brood_start(&b));
	snprintf(p1, sizeof(p1), "/proc/%d/energy", b.pid);
	snprintf(p2, sizeof(p2), "/proc/energy/%d", b.pid);
	EXPECT_LT(0, st_read(p1, a, sizeof(a)));
	EXPECT_LT(0, st_read(p2, c, sizeof(c)));
	EXPECT_STREQ(c, a);
	snprintf(p1, sizeof(p1), "/proc/%d/task/%d/energy", b.pid, b.tid);
	snprintf(p2, sizeof(p2), "/proc/energy/threads/%d/%d", b.pid, b.tid);
	EXPECT_LT(0, st_read(p1, a, sizeof(a)));
	EXPECT_LT(0, st_read(p2, c, sizeof(c)));
	EXPECT_STREQ(c, a);
	brood_end(&b);
}

/* fn in a child running as nobody: its exit code, or -1. */
static int as_nobody(int (*fn)(void))
{
	int status;
	pid_t p = fork();

	if (p < 0)
		return -1;
	if (p == 0) {
		if (setgid(NOBODY) || setuid(NOBODY))
			_exit(10);
		/* Changing uid made us non-dumpable: /proc hands our files to root. */
		prctl(PR_SET_DUMPABLE, 1);
		_exit(fn());
	}
	if (waitpid(p, &status, 0) != p || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static int io_rule(void)
{
	char b[2048];

	/* Root's init: refused, as /proc/1/io is. */
	if (st_read("/proc/1/energy", b, sizeof(b)) != -EACCES)
		return 11;
	if (st_read("/proc/1/io", b, sizeof(b)) != -EACCES)
		return 12;
	/* Its own process and thread: readable, as its io is. */
	if (st_read("/proc/self/io", b, sizeof(b)) <= 0)
		return 15;
	if (st_read("/proc/self/energy", b, sizeof(b)) <= 0)
		return 13;
	if (st_read("/proc/thread-self/energy", b, sizeof(b)) <= 0)
		return 14;
	return 0;
}

TEST(read_rule_of_proc_pid_io)
{
	if (!served())
		SKIP(return, "this kernel has no /proc/<pid>/energy");
	EXPECT_EQ(0, as_nobody(io_rule));
}

TEST(enodata_without_joules)
{
	char b[2048];

	if (!served())
		SKIP(return, "this kernel has no /proc/<pid>/energy");
	ASSERT_EQ(0, st_sh(". /lib/joules/lib.sh; joules_unload"));
	EXPECT_EQ(-ENODATA, st_read("/proc/self/energy", b, sizeof(b)));
	ASSERT_EQ(0, st_sh(". /lib/joules/lib.sh; joules_load"));
	EXPECT_LT(0, st_read("/proc/self/energy", b, sizeof(b)));
}

/* With no provider: refused as with one, but ENODATA for its own. */
static int refused_rule(void)
{
	char b[2048];

	if (st_read("/proc/1/energy", b, sizeof(b)) != -EACCES)
		return 11;
	if (st_read("/proc/self/energy", b, sizeof(b)) != -ENODATA)
		return 12;
	return 0;
}

/*
 * With no provider, a reader who may not read the task is refused as it
 * would be with one: the file does not tell it whether a provider is
 * loaded. Its own task's file says ENODATA.
 */
TEST(refused_before_enodata)
{
	int rc;

	if (!served())
		SKIP(return, "this kernel has no /proc/<pid>/energy");
	ASSERT_EQ(0, st_sh(". /lib/joules/lib.sh; joules_unload"));
	rc = as_nobody(refused_rule);
	ASSERT_EQ(0, st_sh(". /lib/joules/lib.sh; joules_load"));
	EXPECT_EQ(0, rc);
}

TEST_HARNESS_MAIN
