// SPDX-License-Identifier: GPL-2.0
/*
 * Fork/exit churn: N short-lived processes per trial (fork, the child
 * exits at once, the parent reaps it), W of them in flight at a time, with
 * nothing attached, joules.ko loaded and joules-bpf's collector attached,
 * in rotating order (-B: the module only). Each process is tracked at
 * fork, charged at its final switch, emits an exit record and is folded by
 * the worker: the module's whole per-task life cycle.
 *
 * Metrics per process: wall time; CPU time of the whole system (/proc/stat
 * busy ticks, all CPUs: includes the worker, which runs on the other CPU
 * while the forker waits); and the kworkers' CPU time (schedstat, taken
 * 0.5 s after the churn so that the worker has folded the dead tasks and
 * sent their exit records). After each loaded trial, the leak check: the
 * joules_entry slab (after shrink) and /sys/kernel/joules/objects must come
 * back to their values from before the trial. The collector has no
 * kworker: its own work is in its programs (counted as the forker's and
 * the reaper's system time) and in its loader process.
 *
 *   bench-forkexit [-n PROCESSES] [-w IN_FLIGHT] [-r ROUNDS] [-B] [-q]
 *
 * Goal: <= 3% slowdown (ratio 1.03) of the wall time per process with the
 * module; the collector's figures are reported next to it, without a goal.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#define OBJECTS "/sys/kernel/joules/objects"
#define FORK_POOL "/sys/module/joules/parameters/fork_pool"

struct forkexit {
	unsigned long n;
	unsigned int inflight;
	long slab0, per_slab, pool;
	long long obj0;
	unsigned int leaks;
};

static int trial(void *arg, bool loaded, double *out)
{
	struct forkexit *fe = arg;
	struct bench_stat s0, s1;
	unsigned long started = 0, reaped = 0;
	double t0, t1, k0, k1;
	int status;
	pid_t pid;

	if (loaded) {
		/* The baseline the leak check compares with. */
		fe->slab0 = bench_slab_active(&fe->per_slab);
		fe->obj0 = bench_read_ll(OBJECTS);
		fe->pool = bench_read_ll(FORK_POOL);
		if (fe->pool < 0)
			fe->pool = 0;
	}
	k0 = bench_kworker_ns();
	if (bench_proc_stat(&s0))
		return -1;
	t0 = bench_now();
	while (reaped < fe->n) {
		while (started < fe->n && started - reaped < fe->inflight) {
			pid = fork();
			if (pid < 0) {
				perror("fork");
				return -1;
			}
			if (!pid)
				_exit(0);
			started++;
		}
		pid = wait(&status);
		if (pid < 0) {
			perror("wait");
			return -1;
		}
		reaped++;
	}
	t1 = bench_now();
	if (bench_proc_stat(&s1))
		return -1;
	/* The worker folds the last of them within a few intervals. */
	bench_sleep(0.5);
	k1 = bench_kworker_ns();
	out[0] = (t1 - t0) * 1e6 / (double)fe->n;
	/* USER_HZ ticks -> microseconds. */
	out[1] = (double)(s1.busy - s0.busy) * 1e6 /
		 (double)sysconf(_SC_CLK_TCK) / (double)fe->n;
	out[2] = (k1 - k0) / 1e3 / (double)fe->n;
	return 0;
}

/*
 * Every churned task is folded and freed by the worker within a few
 * intervals; wait up to 20 s (software emulation is slow) for the counts to
 * return. kworkers come and go on their own, so allow a few objects either
 * way and one slab's worth of slack; and the fork pool's entries are in the
 * slab but not in objects: the pool is refilled to fork_pool when it falls
 * to half of it, so its level at rest moves within fork_pool / 2 between
 * two trials the module stays loaded for.
 */
static int after_loaded(void *arg)
{
	struct forkexit *fe = arg;
	long long obj = -1;
	long slab = -1;
	double t0 = bench_now();
	bool ok = false;

	do {
		bench_sleep(0.2);
		obj = bench_read_ll(OBJECTS);
		slab = bench_slab_active(NULL);
		ok = obj >= 0 && obj <= fe->obj0 + 4 &&
		     (fe->slab0 < 0 ||
		      slab <= fe->slab0 + fe->per_slab + fe->pool / 2);
	} while (!ok && bench_now() - t0 < 20);
	printf("leak check: objects %lld -> %lld, joules_entry slab active %ld -> %ld (%ld per slab, fork pool %ld), %.1f s after the churn: %s\n",
	       fe->obj0, obj, fe->slab0, slab, fe->per_slab, fe->pool,
	       bench_now() - t0,
	       ok ? "back to baseline" : "NOT back to baseline");
	if (fe->slab0 < 0)
		printf("leak check: no joules_entry line in /proc/slabinfo (boot with slab_nomerge)\n");
	if (!ok)
		fe->leaks++;
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	static const struct bench_metric metrics[] = {
		{ "wall_per_process", "us", 1.03 },
		{ "cpu_per_process", "us", 0 },
		{ "kworker_per_process", "us", 0 },
	};
	struct forkexit fe = { .n = 100000, .inflight = 1 };
	struct bench_def d = {
		.name = "forkexit",
		.metrics = metrics,
		.nr_metrics = 3,
		.reps = 5,
		.trial = trial,
		.arg = &fe,
		.after_loaded = after_loaded,
		.with_bpf = true,
	};
	int rc;

	const struct bench_opt opts[] = {
		{ 'n', BENCH_ULONG, &fe.n, "PROCESSES" },
		{ 'w', BENCH_UINT, &fe.inflight, "IN_FLIGHT" },
		{ 'r', BENCH_UINT, &d.reps, "ROUNDS" },
		{ 'B', BENCH_CLEAR, &d.with_bpf, NULL },
		BENCH_OPT_QUIET,
	};
	int err;

	err = bench_parse_args(argc, argv, argv[0], opts,
			       sizeof(opts) / sizeof(opts[0]));
	if (err)
		return err;
	if (!fe.n || !fe.inflight || !d.reps) {
		fprintf(stderr, "bench-forkexit: -n, -w and -r must be >= 1\n");
		return 2;
	}
	printf("== forkexit: %lu short-lived processes per trial, %u in flight, %u %s ==\n",
	       fe.n, fe.inflight, d.reps,
	       d.with_bpf ? "rounds of off, module, BPF collector" : "pairs");
	fflush(stdout);
	rc = bench_run_ab(&d);
	printf("RESULT forkexit leak_checks - failed=%u of=%u status=%s\n",
	       fe.leaks, d.reps, fe.leaks ? "missed" : "met");
	return rc < 0 ? 1 : 0;
}
