// SPDX-License-Identifier: GPL-2.0
/*
 * Scheduling latency with readers of a large process (issue 26): cyclictest
 * (Debian's rt-tests) at SCHED_FIFO 95, one measuring thread per CPU, while
 * R processes read /proc/energy/<pid> of a process of T threads in a loop,
 * with joules.ko loaded, against the same readers with it unloaded (their
 * open fails, and they spin on), in alternated trials of one run. Both
 * sides keep the CPUs busy: under QEMU -icount an idle guest's timers fire
 * late by the host's wakeup, which would make the quiet side the noisy one. A process read walks every thread of the
 * process; on PREEMPT_RT the raw locks it takes (one thread's at a time)
 * are the sections a real-time task cannot preempt, so the worst latency
 * is the figure to watch there:
 *   max_latency - worst wakeup latency of any measuring thread (us);
 *   avg_latency - mean of the measuring threads' averages (us).
 * Reported, not judged: under emulation a vCPU is a host thread that the
 * host deschedules at will, so the absolute figures say little; the
 * difference between the two sides, in one run, is the point.
 *
 *   bench-rtlat [-t THREADS] [-R READERS] [-s SECONDS] [-i INTERVAL_US] [-r PAIRS] [-q]
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "harness.h"

#define RT_MAX_READERS 16

struct rtlat {
	unsigned long threads;
	unsigned int readers;
	double secs;
	unsigned int interval_us;
	pid_t target;
};

/*
 * Read the target's process file until killed. Unloaded, the open fails
 * and the loop spins on: both sides have the same busy readers, and what
 * differs is only what joules does for them.
 */
static void reader(pid_t target)
{
	char path[64], buf[4096];

	snprintf(path, sizeof(path), "/proc/energy/%d", (int)target);
	for (;;) {
		int fd = open(path, O_RDONLY);

		if (fd < 0)
			continue;
		while (read(fd, buf, sizeof(buf)) > 0)
			;
		close(fd);
	}
}

/*
 * cyclictest for `secs`; the worst Max: and the mean Avg: of its threads'
 * summary lines ("T: 0 (  123) P:95 I:500 C: 2000 Min: 3 Act: 5 Avg: 6
 * Max: 45"). 0, or -1 if it did not run or printed no thread.
 */
static int cyclictest(const struct rtlat *r, double *max, double *avg)
{
	char dur[32], intv[32], line[256];
	int pfd[2], status, n = 0;
	double sum = 0;
	FILE *f;
	pid_t pid;

	snprintf(dur, sizeof(dur), "%.0f", r->secs);
	snprintf(intv, sizeof(intv), "%u", r->interval_us);
	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		dup2(pfd[1], 1);
		close(pfd[0]);
		close(pfd[1]);
		execlp("cyclictest", "cyclictest", "-q", "-m", "-S", "-p", "95",
		       "-i", intv, "-D", dur, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	f = fdopen(pfd[0], "r");
	*max = 0;
	while (f && fgets(line, sizeof(line), f)) {
		const char *m = strstr(line, "Max:"), *a = strstr(line, "Avg:");

		if (strncmp(line, "T:", 2) || !m || !a)
			continue;
		if (atof(m + 4) > *max)
			*max = atof(m + 4);
		sum += atof(a + 4);
		n++;
	}
	if (f)
		fclose(f);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) || !n)
		return -1;
	*avg = sum / n;
	return 0;
}

static int trial(void *arg, bool loaded, double *out)
{
	struct rtlat *r = arg;
	pid_t rd[RT_MAX_READERS];
	unsigned int i, nr = r->readers;
	int err;

	(void)loaded;
	for (i = 0; i < nr; i++) {
		rd[i] = fork();
		if (!rd[i])
			reader(r->target);
		if (rd[i] < 0) {
			nr = i;
			break;
		}
	}
	err = cyclictest(r, &out[0], &out[1]);
	for (i = 0; i < nr; i++) {
		kill(rd[i], SIGKILL);
		waitpid(rd[i], NULL, 0);
	}
	if (err)
		fprintf(stderr,
			"bench-rtlat: cyclictest failed (rt-tests installed?)\n");
	return err;
}

int main(int argc, char **argv)
{
	static const struct bench_metric metrics[] = {
		{ "max_latency", "us", 0 },
		{ "avg_latency", "us", 0 },
	};
	struct rtlat r = {
		.threads = 5000, .readers = 2, .secs = 10, .interval_us = 500
	};
	struct bench_def d = {
		.name = "rtlat",
		.metrics = metrics,
		.nr_metrics = 2,
		.reps = 3,
		.trial = trial,
		.arg = &r,
		.no_warmup = true,
	};
	struct bench_limits lim;
	unsigned long nthreads;
	int rc;

	const struct bench_opt opts[] = {
		{ 't', BENCH_ULONG, &r.threads, "THREADS" },
		{ 'R', BENCH_UINT, &r.readers, "READERS" },
		{ 's', BENCH_DOUBLE, &r.secs, "SECONDS" },
		{ 'i', BENCH_UINT, &r.interval_us, "INTERVAL_US" },
		{ 'r', BENCH_UINT, &d.reps, "PAIRS" },
		BENCH_OPT_QUIET,
	};
	int err;

	err = bench_parse_args(argc, argv, argv[0], opts,
			       sizeof(opts) / sizeof(opts[0]));
	if (err)
		return err;
	if (r.secs < 1 || !d.reps || !r.interval_us ||
	    r.readers > RT_MAX_READERS) {
		fprintf(stderr,
			"bench-rtlat: need -s >= 1, -r >= 1, -i >= 1 and -R <= %d\n",
			RT_MAX_READERS);
		return 2;
	}
	/* cyclictest keeps its running statistics in POSIX shared memory. */
	if (access("/dev/shm", W_OK) &&
	    (mkdir("/dev/shm", 01777),
	     mount("tmpfs", "/dev/shm", "tmpfs", 0, "mode=1777")))
		perror("bench-rtlat: mount /dev/shm");
	nthreads = r.threads;
	bench_task_room(nthreads, &lim);
	/* The target is this process: its threads sleep, readers walk them. */
	r.target = getpid();
	if (bench_spawn_sleepers(nthreads, true)) {
		bench_reap_sleepers();
		bench_task_room_restore(&lim);
		return 1;
	}
	printf("== rtlat: cyclictest -p 95 -i %u, %.0f s per trial; %u readers of a %lu-thread process; %u pairs ==\n",
	       r.interval_us, r.secs, r.readers, nthreads, d.reps);
	fflush(stdout);
	rc = bench_run_ab(&d);
	bench_reap_sleepers();
	bench_task_room_restore(&lim);
	return rc < 0 ? 1 : 0;
}
