// SPDX-License-Identifier: GPL-2.0
/*
 * Tasks that never pass sched_process_fork are tracked too: io_uring's
 * SQPOLL thread (create_io_thread()), like io-wq and vhost workers, is
 * made by copy_process() without it. The SQPOLL thread of a ring spins
 * for its idle time, so it has CPU time of its own; joules must show it
 * as a thread of the process, with the runtime the scheduler counted, and
 * charge it energy, not leave its CPU time to other tasks.
 */
#include <dirent.h>
#include <liburing.h>

#include "kselftest_harness.h"
#include "selftest.h"

/* The tid of our thread named iou-sqp-<pid>, or 0. */
static pid_t sqpoll_tid(void)
{
	char path[300], comm[64], want[32];
	struct dirent *de;
	pid_t tid = 0;
	DIR *d = opendir("/proc/self/task");

	if (!d)
		return 0;
	snprintf(want, sizeof(want), "iou-sqp-%d\n", getpid());
	while ((de = readdir(d)) && !tid) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
			 de->d_name);
		if (st_read(path, comm, sizeof(comm)) > 0 &&
		    !strcmp(comm, want))
			tid = atoi(de->d_name);
	}
	closedir(d);
	return tid;
}

/* The scheduler's runtime of a thread (schedstat's first field), ns. */
static unsigned long long schedstat_ns(pid_t tid)
{
	char path[64], b[128];

	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", tid);
	return st_read(path, b, sizeof(b)) > 0 ? strtoull(b, NULL, 10) : 0;
}

TEST(sqpoll_thread_is_tracked_and_charged)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SQPOLL,
				     .sq_thread_idle = 3000 };
	unsigned long long cpu = 0, energy = 0, sched;
	char path[96], b[2048], coef[256];
	struct io_uring ring;
	pid_t tid;
	int err, i;

	err = io_uring_queue_init_params(8, &ring, &p);
	if (err == -EINVAL || err == -ENOSYS || err == -EPERM)
		SKIP(return, "no SQPOLL io_uring here (%s)", strerror(-err));
	ASSERT_EQ(0, err);
	ASSERT_LT(0, st_read(JOULES_SYSFS "/model/coefficients", coef,
			     sizeof(coef)));
	ASSERT_EQ(0, st_write(JOULES_SYSFS "/model/coefficients",
			      "10000000 0 0 0 0 0", 18));
	/* A few no-ops wake the thread; then it polls, spinning, for 3 s. */
	for (i = 0; i < 4; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
		struct io_uring_cqe *cqe;

		io_uring_prep_nop(sqe);
		io_uring_submit(&ring);
		ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
		io_uring_cqe_seen(&ring, cqe);
	}
	tid = sqpoll_tid();
	ASSERT_LT(0, tid);
	usleep(1000000 + 3 * st_interval_ms() * 1000);

	snprintf(path, sizeof(path), "/proc/energy/threads/%d/%d", getpid(),
		 tid);
	ASSERT_LT(0, st_read(path, b, sizeof(b)));
	sched = schedstat_ns(tid);
	ASSERT_EQ(0, st_kv(b, "cpu_time_ns", &cpu));
	EXPECT_EQ(0, st_kv(b, "energy_uj", &energy));
	TH_LOG("iou-sqp %d: cpu_time_ns %llu (schedstat %llu), energy_uj %llu",
	       tid, cpu, sched, energy);
	/* Busy for most of a second: the scheduler's runtime, as of the read. */
	EXPECT_LT(200000000ULL, cpu);
	EXPECT_LE(cpu, sched);
	EXPECT_LT(sched - cpu, 50000000ULL);
	/* Charged by the model (10 W per CPU) for the intervals it ran in. */
	EXPECT_LT(1000000ULL, energy);

	io_uring_queue_exit(&ring);
	st_write(JOULES_SYSFS "/model/coefficients", coef, strlen(coef));
}

TEST_HARNESS_MAIN
