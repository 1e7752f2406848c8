// SPDX-License-Identifier: GPL-2.0
/*
 * Context-switch cost: two processes ping-pong one byte over a pair of
 * pipes (the perf bench sched pipe pattern), N round trips per trial, with
 * nothing attached, joules.ko loaded and joules-bpf's collector attached,
 * in rotating order (-B: the module only). Pinned to one CPU (default)
 * every round trip is two real switches between the two processes, the
 * worst case for the sched_switch hook; -c -1 lets them spread over CPUs
 * (then most switches are to and from the idle task).
 *
 *   bench-ctxsw [-n ROUND_TRIPS] [-r ROUNDS] [-c CPU|-1] [-B] [-q]
 *
 * Goal: <= 1% slowdown (ratio 1.01) with the module; the collector's
 * figures are reported next to it, without a goal.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

struct ctxsw {
	unsigned long n;
	int cpu;
};

static void pong(int in, int out, unsigned long n)
{
	char c;

	while (n--) {
		if (read(in, &c, 1) != 1 || write(out, &c, 1) != 1)
			_exit(1);
	}
	_exit(0);
}

static int trial(void *arg, bool loaded, double *out)
{
	struct ctxsw *cs = arg;
	int ab[2], ba[2], status;
	unsigned long i;
	double t0, t1;
	pid_t pid;
	char c = 'x';

	(void)loaded;
	if (pipe(ab) || pipe(ba)) {
		perror("pipe");
		return -1;
	}
	if (cs->cpu >= 0 && bench_pin(cs->cpu)) {
		perror("sched_setaffinity");
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return -1;
	}
	if (!pid) {
		close(ab[1]);
		close(ba[0]);
		pong(ab[0], ba[1], cs->n);
	}
	close(ab[0]);
	close(ba[1]);
	/* One exchange first: the child is scheduled and its pages are in. */
	if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
		goto fail;
	t0 = bench_now();
	for (i = 1; i < cs->n; i++)
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			goto fail;
	t1 = bench_now();
	close(ab[1]);
	close(ba[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		return -1;
	out[0] = (t1 - t0) * 1e9 / (double)(cs->n - 1);
	return 0;
fail:
	perror("pipe ping-pong");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

int main(int argc, char **argv)
{
	static const struct bench_metric metrics[] = {
		{ "round_trip", "ns", 1.01 },
	};
	struct ctxsw cs = { 100000, 0 };
	struct bench_def d = {
		.name = "ctxsw",
		.metrics = metrics,
		.nr_metrics = 1,
		.reps = 10,
		.trial = trial,
		.arg = &cs,
		.with_bpf = true,
	};

	const struct bench_opt opts[] = {
		{ 'n', BENCH_ULONG, &cs.n, "ROUND_TRIPS" },
		{ 'r', BENCH_UINT, &d.reps, "ROUNDS" },
		{ 'c', BENCH_INT, &cs.cpu, "CPU|-1" },
		{ 'B', BENCH_CLEAR, &d.with_bpf, NULL },
		BENCH_OPT_QUIET,
	};
	int err;

	err = bench_parse_args(argc, argv, argv[0], opts,
			       sizeof(opts) / sizeof(opts[0]));
	if (err)
		return err;
	if (cs.n < 2 || !d.reps) {
		fprintf(stderr, "bench-ctxsw: need -n >= 2 and -r >= 1\n");
		return 2;
	}
	printf("== ctxsw: pipe ping-pong, %lu round trips per trial, %s, %u %s ==\n",
	       cs.n, cs.cpu >= 0 ? "both processes on one CPU" : "unpinned",
	       d.reps,
	       d.with_bpf ? "rounds of off, module, BPF collector" : "pairs");
	fflush(stdout);
	return bench_run_ab(&d) < 0 ? 1 : 0;
}
