// SPDX-License-Identifier: GPL-2.0
/*
 * What the selftests rely on in the kselftest harness they are built with
 * (tools/testing/ksft.mk): a fixture's teardown runs after an ASSERT
 * failed in its test, whether it tears down in the test's process or in
 * its parent. The selftests' teardowns put back the module's settings,
 * unload the test meters and remove cgroups; one skipped leaves them
 * changed for the rest of the program. harness_inner, beside this
 * program, has the fixtures that fail on purpose.
 */
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"

/* Runs harness_inner for fixture f only; its exit status, or -1. */
static int run_inner(const char *f, const char *marks)
{
	char self[PATH_MAX], inner[PATH_MAX + 16];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int st;
	pid_t p;

	if (n <= 0)
		return -1;
	self[n] = 0;
	snprintf(inner, sizeof(inner), "%s/harness_inner", dirname(self));
	p = fork();
	if (p == 0) {
		int null = open("/dev/null", O_WRONLY);

		/* Its failures are expected: kept out of this TAP stream. */
		dup2(null, 1);
		dup2(null, 2);
		setenv("INNER", marks, 1);
		execl(inner, inner, "-f", f, (char *)NULL);
		_exit(127);
	}
	if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

TEST(teardown_runs_after_a_failed_assert)
{
	static const char *const f[] = { "inner_child", "inner_parent" };
	static const char *const want[] = { "child ", "parent " };
	char marks[32], b[64];

	for (int i = 0; i < 2; i++) {
		int fd, st;
		ssize_t n;

		strcpy(marks, "/tmp/test_harness.XXXXXX");
		fd = mkstemp(marks);
		ASSERT_LE(0, fd);
		st = run_inner(f[i], marks);
		n = read(fd, b, sizeof(b) - 1);
		b[n > 0 ? n : 0] = 0;
		close(fd);
		unlink(marks);
		/* It ran and failed (127: not found; -1: no status)... */
		EXPECT_TRUE(st > 0 && st != 127) TH_LOG("%s: status %d", f[i], st);
		/* ...and its teardown ran, once. */
		EXPECT_STREQ(want[i], b) TH_LOG("%s: teardown ran \"%s\"", f[i], b);
	}
}

TEST_HARNESS_MAIN
