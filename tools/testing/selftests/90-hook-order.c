// SPDX-License-Identifier: GPL-2.0
/*
 * Tasks born and released while joules attaches its hooks. An entry made
 * for a new or exiting task holds a pointer to it until the free hook
 * (sched_process_free) lets go of it; a task released before that hook
 * is attached would leave its entry pointing at freed memory, read by the
 * worker at the next interval (KASAN: slab-use-after-free in count_into,
 * seen once in 82-reload-stress on the 7.2 debug kernel). The module is
 * loaded with pauses between its registrations (hook_gap_ms) while a
 * child forks and reaps short-lived children throughout.
 *
 * The oracle: once the churn is over, every entry in joules' table is a
 * task that exists: tasks_tracked is at most the number of threads in
 * /proc (the runner checks dmesg for KASAN's report as well).
 */
#include <signal.h>
#include <sys/wait.h>

#include "selftest.h"

/* Threads in /proc now: every task_struct a live entry may point to. */
static long live_threads(void)
{
	return st_sh_number(
		"ls -d /proc/[0-9]*/task/[0-9]* 2>/dev/null | wc -l");
}

static long tracked(void)
{
	char b[64];

	if (st_read(JOULES_SYSFS "/tasks_tracked", b, sizeof(b)) <= 0)
		return -1;
	return atol(b);
}

/* Forks and reaps children that exit at once, until killed. */
static pid_t churn(void)
{
	pid_t c = fork();

	if (c)
		return c;
	for (;;) {
		pid_t k = vfork();

		if (!k)
			_exit(0);
		if (k > 0)
			waitpid(k, NULL, 0);
	}
}

TEST(tasks_released_while_the_hooks_attach)
{
	long before, live, after;
	pid_t c;

	ASSERT_EQ(0, st_sh(". /lib/joules/lib.sh; joules_unload"));
	c = churn();
	ASSERT_GT(c, 0);
	usleep(200000);
	EXPECT_EQ(0,
		  st_sh(". /lib/joules/lib.sh; joules_load hook_gap_ms=300"));
	usleep(500000);
	kill(c, SIGKILL);
	waitpid(c, NULL, 0);
	/* Released tasks' frees run a grace period on; then some intervals. */
	usleep(20 * st_interval_ms() * 1000 + 500000);
	before = tracked();
	live = live_threads();
	after = tracked();
	ASSERT_GE(before, 0);
	ASSERT_GT(live, 0);
	/* A kernel thread may come or go while counting: 2 of slack. */
	EXPECT_LE(before < after ? before : after, live + 2)
	TH_LOG("tasks_tracked %ld..%ld, threads in /proc %ld", before, after,
	       live);
	/* Back to a module loaded as usual for the next program. */
	EXPECT_EQ(0, st_sh(". /lib/joules/lib.sh; joules_unload; joules_load"));
}

TEST_HARNESS_MAIN
