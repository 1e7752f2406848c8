// SPDX-License-Identifier: GPL-2.0
/*
 * Idle cost: what an otherwise idle system with N sleeping tasks (default
 * 1,000) spends with joules.ko loaded, against the same without it, over a
 * window of S seconds per trial. The bench itself sleeps through the
 * window. Per second of wall time:
 *   kworker_cpu - CPU time of all kworker threads (/proc/<pid>/schedstat,
 *                 ns precision): the attribution worker runs as one of them
 *                 on system_unbound_wq, so on - off is the worker's cost;
 *   busy        - busy time of all CPUs from /proc/stat (tick-sampled:
 *                 user+nice+system+irq+softirq+steal), including the IPIs'
 *                 handlers and the sched_switch hook on every switch;
 *   cal_ipis    - function-call IPIs (the CAL line of /proc/interrupts,
 *                 all CPUs): the worker's flush runs on every CPU each
 *                 interval;
 *   ctxt        - context switches.
 *
 *   bench-idle [-n TASKS] [-s SECONDS] [-r PAIRS] [-q]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

struct idle {
	unsigned long n;
	double secs;
};

static int trial(void *arg, bool loaded, double *out)
{
	struct idle *id = arg;
	struct bench_stat s0, s1;
	long long ipi0, ipi1;
	double k0, k1, t0, t1, hz = (double)sysconf(_SC_CLK_TCK);

	(void)loaded;
	/*
	 * kworkers come and go, so their sum can lose a dead one's time: take
	 * it first and last, outside the /proc/stat window.
	 */
	k0 = bench_kworker_ns();
	if (bench_proc_stat(&s0))
		return -1;
	ipi0 = bench_cal_ipis();
	t0 = bench_now();
	bench_sleep(id->secs);
	t1 = bench_now();
	if (bench_proc_stat(&s1))
		return -1;
	ipi1 = bench_cal_ipis();
	k1 = bench_kworker_ns();
	if (k0 < 0 || k1 < 0)
		return -1;
	out[0] = (k1 - k0) / 1e3 / (t1 - t0);
	out[1] = (double)(s1.busy - s0.busy) * 1e3 / hz / (t1 - t0);
	out[2] =
		ipi0 >= 0 && ipi1 >= 0 ? (double)(ipi1 - ipi0) / (t1 - t0) : -1;
	out[3] = (double)(s1.ctxt - s0.ctxt) / (t1 - t0);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct bench_metric metrics[] = {
		{ "kworker_cpu", "us/s", 0 },
		{ "busy", "ms/s", 0 },
		{ "cal_ipis", "1/s", 0 },
		{ "ctxt", "1/s", 0 },
	};
	struct idle id = { .n = 1000, .secs = 10 };
	struct bench_def d = {
		.name = "idle",
		.metrics = metrics,
		.nr_metrics = 4,
		.reps = 5,
		.trial = trial,
		.arg = &id,
		.no_warmup = true, /* nothing to warm: the bench sleeps */
	};
	int rc;

	const struct bench_opt opts[] = {
		{ 'n', BENCH_ULONG, &id.n, "TASKS" },
		{ 's', BENCH_DOUBLE, &id.secs, "SECONDS" },
		{ 'r', BENCH_UINT, &d.reps, "PAIRS" },
		BENCH_OPT_QUIET,
	};
	int err;

	err = bench_parse_args(argc, argv, argv[0], opts,
			       sizeof(opts) / sizeof(opts[0]));
	if (err)
		return err;
	if (id.secs <= 0 || !d.reps) {
		fprintf(stderr, "bench-idle: need -s > 0 and -r >= 1\n");
		return 2;
	}
	if (bench_spawn_sleepers(id.n, false)) {
		bench_reap_sleepers();
		return 1;
	}
	printf("== idle: %lu sleeping processes, %.0f s window per trial, %u pairs ==\n",
	       id.n, id.secs, d.reps);
	fflush(stdout);
	rc = bench_run_ab(&d);
	bench_reap_sleepers();
	return rc < 0 ? 1 : 0;
}
