// SPDX-License-Identifier: GPL-2.0
/*
 * A process of 5,000 threads, read whole while its threads come and go.
 *
 * A process' totals sum its folded threads and every live one. The walk
 * over thousands of threads holds the group's raw lock for one thread at
 * a time (on PREEMPT_RT a raw lock is never preempted), so the worker may
 * fold a thread in the middle of it: a walk that raced a fold is retried,
 * or it would miss a thread folded before it got there, or count one
 * folded after it twice. Both show as a process total that goes down.
 *
 * The oracle: with every thread tracked and blocked, cpu_time_ns equals
 * the process CPU clock (the kernel's sum of its threads' runtimes); no
 * thread has exited, so the two read the same runtimes to the nanosecond.
 * Then, while a thread of the process creates and joins short threads,
 * folded by the worker every 10 ms (interval_ms), its total read again and
 * again never goes down; walk_retries in sysfs says whether walks raced
 * the folds in this run.
 */
#include <pthread.h>
#include <sched.h>

#include "kselftest_harness.h"
#include "selftest.h"

#define NTHREAD 5000
#define CHURN_SEC 0.001

struct proc {
	int go; /* EOF: every thread returns */
	int churn; /* EOF: the churner starts */
	int stop; /* EOF: the churner stops */
};

static void *blocked(void *arg)
{
	const struct proc *p = arg;
	char c;

	return read(p->go, &c, 1) < 0 ? (void *)1 : NULL;
}

static void *short_lived(void *arg)
{
	(void)arg;
	st_burn_cpu(CHURN_SEC);
	return NULL;
}

/* Short threads one after another, from the churn signal to the stop one. */
static void *churner(void *arg)
{
	const struct proc *p = arg;
	char c;

	if (read(p->churn, &c, 1) < 0)
		return (void *)1;
	fcntl(p->stop, F_SETFL, O_NONBLOCK);
	while (read(p->stop, &c, 1) < 0) {
		pthread_t th;

		if (pthread_create(&th, NULL, short_lived, NULL) ||
		    pthread_join(th, NULL))
			return (void *)1;
	}
	return NULL;
}

/*
 * The process and its reader on the last CPU of the mask, the others left
 * to the worker: under voluntary preemption a walk is not preempted, so a
 * worker on the reader's CPU would fold only between walks.
 */
static void pin_last_cpu(void)
{
	cpu_set_t all, one;
	int last = -1;

	if (sched_getaffinity(0, sizeof(all), &all) || CPU_COUNT(&all) < 2)
		return;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &all))
			last = cpu;
	CPU_ZERO(&one);
	CPU_SET(last, &one);
	sched_setaffinity(0, sizeof(one), &one);
}

/* The process: NTHREAD blocked threads and a churner; a byte on ready when all are up. */
static void child(int ready, struct proc *p)
{
	static pthread_t th[NTHREAD + 1];
	pthread_attr_t a;
	char c = 0;
	int n;

	pin_last_cpu();
	if (pthread_attr_init(&a) || pthread_attr_setstacksize(&a, 64 << 10))
		_exit(1);
	for (n = 0; n < NTHREAD; n++)
		if (pthread_create(&th[n], &a, blocked, p))
			_exit(2);
	if (pthread_create(&th[n], &a, churner, p))
		_exit(2);
	if (write(ready, &c, 1) != 1)
		_exit(1);
	close(ready);
	for (n = 0; n <= NTHREAD; n++) {
		void *r;

		if (pthread_join(th[n], &r) || r)
			_exit(1);
	}
	_exit(0);
}

static unsigned long long joules_cpu_ns(pid_t pid)
{
	unsigned long long v = ~0ULL;
	char path[64], b[4096];

	snprintf(path, sizeof(path), "/proc/energy/%d", pid);
	if (st_read(path, b, sizeof(b)) > 0)
		st_kv(b, "cpu_time_ns", &v);
	return v;
}

static unsigned long long clock_ns(pid_t pid)
{
	struct timespec ts;
	clockid_t clk;

	if (clock_getcpuclockid(pid, &clk) || clock_gettime(clk, &ts))
		return ~0ULL;
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

FIXTURE(many)
{
	pid_t pid;
	int go_w, churn_w, stop_w;
	char threads_max[32], interval[32];
};

#define THREADS_MAX "/proc/sys/kernel/threads-max"
#define INTERVAL JOULES_SYSFS "/interval_ms"

/* Room for the process: KASAN's larger kernel stacks lower the default threads-max. */
static int make_room(char *old, size_t size)
{
	char b[32];
	int len;

	if (st_read(THREADS_MAX, old, size) <= 0)
		return -1;
	if (strtoull(old, NULL, 10) >= 2 * NTHREAD)
		return 0;
	len = snprintf(b, sizeof(b), "%d", 2 * NTHREAD);
	return st_write(THREADS_MAX, b, len);
}

/* The process of NTHREAD blocked threads and a churner, all up; -1 if not. */
static pid_t start_process(FIXTURE_DATA(many) * self)
{
	int go[2], churn[2], stop[2], ready[2];
	struct proc p;
	pid_t pid;
	char c;

	if (pipe(go) || pipe(churn) || pipe(stop) || pipe(ready))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(go[1]);
		close(churn[1]);
		close(stop[1]);
		close(ready[0]);
		p = (struct proc){ .go = go[0],
				   .churn = churn[0],
				   .stop = stop[0] };
		child(ready[1], &p);
	}
	close(go[0]);
	close(churn[0]);
	close(stop[0]);
	close(ready[1]);
	self->go_w = go[1];
	self->churn_w = churn[1];
	self->stop_w = stop[1];
	if (pid > 0 && read(ready[0], &c, 1) != 1) {
		/* It exited before its threads were up: reaped here. */
		waitpid(pid, NULL, 0);
		pid = -1;
	}
	close(ready[0]);
	return pid;
}

FIXTURE_SETUP(many)
{
	self->pid = -1;
	self->go_w = self->churn_w = self->stop_w = -1;
	self->interval[0] = 0;
	self->threads_max[0] = 0;
	ASSERT_EQ(0, make_room(self->threads_max, sizeof(self->threads_max)))
	TH_LOG("threads-max");
}

FIXTURE_TEARDOWN(many)
{
	pid_t pid = self->pid;
	int st = -1;

	close(self->stop_w);
	close(self->churn_w);
	close(self->go_w);
	if (pid > 0) {
		EXPECT_EQ(pid, waitpid(pid, &st, 0));
		EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
		TH_LOG("the process' threads failed: status %#x", st);
	}
	if (self->interval[0])
		EXPECT_EQ(0, st_write(INTERVAL, self->interval,
				      strlen(self->interval)));
	EXPECT_EQ(0, st_write(THREADS_MAX, self->threads_max,
			      strlen(self->threads_max)));
}

/* Every thread tracked (the fork pool deferred most to the sweep): 60 s at most. */
static unsigned long long all_tracked(pid_t pid)
{
	unsigned long long n = 0;
	char path[64], b[4096];

	snprintf(path, sizeof(path), "/proc/energy/%d", pid);
	for (int i = 0; i < 600; i++) {
		if (st_read(path, b, sizeof(b)) > 0 &&
		    !st_kv(b, "threads", &n) && n == NTHREAD + 2)
			break;
		usleep(100000);
	}
	return n;
}

TEST_F_TIMEOUT(many, read_whole_while_threads_come_and_go, 600)
{
	unsigned long long j, k, prev = 0, down = 0, reads = 0, r0, r1;
	double t0, slowest = 0, end;

	ASSERT_EQ(0,
		  st_sh(". /lib/joules/lib.sh; joules_unload && joules_load"))
	TH_LOG("reload with the defaults");
	self->pid = start_process(self);
	ASSERT_LT(0, self->pid)
	TH_LOG("%d threads (threads-max, memory)", NTHREAD);
	ASSERT_EQ(NTHREAD + 2, all_tracked(self->pid))
	TH_LOG("threads in /proc/energy");
	/* Every thread blocked: the clock stands still (30 s at most). */
	k = clock_ns(self->pid);
	for (int i = 0; i < 300; i++) {
		usleep(100000);
		j = k;
		k = clock_ns(self->pid);
		if (k == j)
			break;
	}
	j = joules_cpu_ns(self->pid);
	ASSERT_NE(~0ULL, k);
	ASSERT_NE(~0ULL, j) TH_LOG("no /proc/energy/%d", self->pid);
	TH_LOG("%d threads blocked: joules %llu ns, clock %llu ns", NTHREAD + 2,
	       j, k);
	/* No thread has exited: both sum the same runtimes. */
	EXPECT_EQ(k, j);

	/* Folds every 10 ms, so that walks race them. */
	ASSERT_LT(0, st_read(INTERVAL, self->interval, sizeof(self->interval)));
	ASSERT_EQ(0, st_write(INTERVAL, "10", 2));
	r0 = st_sysfs_u64("walk_retries");
	pin_last_cpu();
	close(self->churn_w);
	self->churn_w = -1;
	end = st_now() + 4;
	while (st_now() < end) {
		t0 = st_now();
		j = joules_cpu_ns(self->pid);
		t0 = st_now() - t0;
		slowest = t0 > slowest ? t0 : slowest;
		ASSERT_NE(~0ULL, j);
		reads++;
		if (j < prev) {
			TH_LOG("read %llu: %llu ns after %llu ns", reads, j,
			       prev);
			down++;
		}
		prev = j > prev ? j : prev;
	}
	r1 = st_sysfs_u64("walk_retries");
	TH_LOG("%llu reads while threads came and went, slowest %.1f ms, %llu walks again",
	       reads, slowest * 1e3, r1 - r0);
	EXPECT_EQ(0, down)
	TH_LOG("the process total went down %llu times", down);
	/*
	 * Whether a walk raced a fold is the host's timing (none in 2,102
	 * reads in one 6.12 run, 16-217 in others): said, not asserted. A
	 * walk that raced one and was not done again shows as a total that
	 * went down, which is asserted.
	 */
	if (r1 == r0)
		TH_LOG("no walk raced a fold in this run: the check above proved nothing about the race");
}

TEST_HARNESS_MAIN
