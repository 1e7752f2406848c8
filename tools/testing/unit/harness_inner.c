// SPDX-License-Identifier: GPL-2.0
/*
 * Run by test_harness only (-f FIXTURE): two fixtures whose test fails
 * an ASSERT, one tearing down in the test's process and one in its
 * parent. Each teardown appends its name to the file INNER names.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"

static void mark(const char *what)
{
	int fd = open(getenv("INNER"), O_WRONLY | O_APPEND);

	if (fd >= 0) {
		if (write(fd, what, strlen(what)) < 0)
			perror("write");
		close(fd);
	}
}

FIXTURE(inner_child) {
	int unused;
};
FIXTURE_SETUP(inner_child)
{
}
FIXTURE_TEARDOWN(inner_child)
{
	mark("child ");
}
TEST_F(inner_child, asserts)
{
	ASSERT_EQ(0, 1);
}

FIXTURE(inner_parent) {
	int unused;
};
FIXTURE_SETUP(inner_parent)
{
}
FIXTURE_TEARDOWN_PARENT(inner_parent)
{
	mark("parent ");
}
TEST_F(inner_parent, asserts)
{
	ASSERT_EQ(0, 1);
}

TEST_HARNESS_MAIN
