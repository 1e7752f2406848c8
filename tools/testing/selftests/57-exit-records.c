// SPDX-License-Identifier: GPL-2.0
/*
 * Exit records carry a task's identity as of its exit, like taskstats:
 *  - a child that setuid()s exits as its new uid, not as root;
 *  - exec in a non-leader thread (de_thread) swaps pids with the old
 *    leader: the old leader's record names the thread id it ended with,
 *    and the only record with pid == tgid is the process's real end.
 */
#include <pthread.h>
#include <sys/syscall.h>

#include "kselftest_harness.h"
#include "selftest.h"

#define NOBODY 65534

/* Exit records of tgid that arrive within secs; returns how many. */
static int exits_of(struct jnl *nl, pid_t tgid, struct task_rec *out, int max,
		    double secs)
{
	double end = st_now() + secs;
	int n = 0;

	while (st_now() < end && n < max) {
		struct jnl_event ev;
		int r = jnl_next_event(nl, &ev, 200);

		if (r == 1 && ev.type == JNL_EV_EXIT &&
		    ev.exit.tgid == (uint32_t)tgid)
			out[n++] = ev.exit;
	}
	return n;
}

TEST(setuid_child_exits_as_its_new_uid)
{
	struct task_rec rec[4];
	struct jnl *nl;
	pid_t p;
	int n;

	ASSERT_EQ(0, jnl_open(&nl));
	ASSERT_EQ(0, jnl_subscribe(nl, JNL_GRP_EXITS));
	p = fork();
	if (p == 0) {
		if (setgid(NOBODY) || setuid(NOBODY))
			_exit(1);
		st_burn_cpu(0.05);
		_exit(0);
	}
	waitpid(p, NULL, 0);
	n = exits_of(nl, p, rec, 4, 3 + 3 * st_interval_ms() / 1000.0);
	ASSERT_EQ(1, n);
	EXPECT_EQ(p, (pid_t)rec[0].pid);
	EXPECT_EQ(NOBODY, rec[0].uid);
	jnl_close(nl);
}

static int tidpipe[2];

static void *exec_thread(void *arg)
{
	pid_t tid = syscall(SYS_gettid);

	(void)arg;
	if (write(tidpipe[1], &tid, sizeof(tid)) != sizeof(tid))
		_exit(2);
	usleep(100000);
	execl("/bin/sleep", "sleep", "1", (char *)NULL);
	_exit(3);
}

TEST(exec_in_a_thread_is_no_process_exit)
{
	struct task_rec rec[8];
	struct jnl *nl;
	pid_t p, tid = 0;
	int n, i, leader_at = -1, thread_at = -1, leaders = 0;

	ASSERT_EQ(0, jnl_open(&nl));
	ASSERT_EQ(0, jnl_subscribe(nl, JNL_GRP_EXITS));
	ASSERT_EQ(0, pipe(tidpipe));
	p = fork();
	if (p == 0) {
		pthread_t th;

		pthread_create(&th, NULL, exec_thread, NULL);
		for (;;)
			pause(); /* ended by the other thread's exec */
	}
	ASSERT_EQ(sizeof(tid), read(tidpipe[0], &tid, sizeof(tid)));
	n = exits_of(nl, p, rec, 8, 3 + 3 * st_interval_ms() / 1000.0);
	waitpid(p, NULL, 0);
	for (i = 0; i < n; i++) {
		TH_LOG("exit record %d: pid %u tgid %u comm %s", i, rec[i].pid,
		       rec[i].tgid, rec[i].comm);
		if (rec[i].pid == (uint32_t)p) {
			leaders++;
			leader_at = i;
		}
		if (rec[i].pid == (uint32_t)tid)
			thread_at = i;
	}
	/* The old leader ended with the exec'ing thread's tid; sleep ended as p. */
	EXPECT_EQ(1, leaders);
	EXPECT_LE(0, thread_at);
	EXPECT_LT(thread_at, leader_at);
	if (leader_at >= 0)
		EXPECT_STREQ("sleep", rec[leader_at].comm);
	jnl_close(nl);
}

TEST_HARNESS_MAIN
