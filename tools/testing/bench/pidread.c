// SPDX-License-Identifier: GPL-2.0
/*
 * Per-pid file latency: open + read + close of /proc/energy/<pid> for a
 * sleeping process, against the same for /proc/<pid>/io, the kernel's own
 * file of the same kind (a permission check and a few key: value lines
 * through seq_file). The two are interleaved batch by batch, so the ratio
 * compares them under the same conditions; under software emulation the
 * absolute time is many times the bare-metal one, the ratio much less so.
 *
 * Each batch times B consecutive operations (the clock is read once per
 * batch: under emulation a clock read is not free); a trial is K batches of
 * each file and reports the medians of the per-operation means.
 *
 *   bench-pidread [-b BATCH] [-k BATCHES] [-r TRIALS] [-q]
 *   bench-pidread -i   (/proc/<pid>/io only: needs no module, for the host)
 *
 * Goal: <= 5 us median on bare metal.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

struct pidread {
	char energy[64], io[64];
	unsigned int batch, batches;
	bool io_only;
};

/* Mean time of one open+read+close of path over n operations, in us. */
static double batch_us(const char *path, unsigned int n)
{
	char buf[4096];
	unsigned int i;
	double t0;
	int fd;

	t0 = bench_now();
	for (i = 0; i < n; i++) {
		fd = open(path, O_RDONLY);
		if (fd < 0 || read(fd, buf, sizeof(buf)) <= 0) {
			perror(path);
			return -1;
		}
		close(fd);
	}
	return (bench_now() - t0) * 1e6 / n;
}

static int trial(void *arg, bool loaded, double *out)
{
	struct pidread *pr = arg;
	double e[BENCH_MAX_REPS * 16], io[BENCH_MAX_REPS * 16];
	unsigned int k;

	(void)loaded;
	for (k = 0; k < pr->batches; k++) {
		io[k] = batch_us(pr->io, pr->batch);
		e[k] = pr->io_only ? 0 : batch_us(pr->energy, pr->batch);
		if (io[k] < 0 || e[k] < 0)
			return -1;
	}
	out[1] = bench_median(io, pr->batches);
	out[0] = pr->io_only ? 0 : bench_median(e, pr->batches);
	out[2] = pr->io_only ? 0 : out[0] / out[1];
	return 0;
}

int main(int argc, char **argv)
{
	static const struct bench_metric metrics[] = {
		{ "energy_file", "us", 5 },
		{ "proc_pid_io", "us", 0 },
		{ "energy_over_io", "x", 0 },
	};
	struct pidread pr = { .batch = 100, .batches = 21 };
	struct bench_def d = {
		.name = "pidread",
		.metrics = metrics,
		.nr_metrics = 3,
		.reps = 7,
		.trial = trial,
		.arg = &pr,
	};
	int rc, status;
	pid_t pid;

	const struct bench_opt opts[] = {
		{ 'b', BENCH_UINT, &pr.batch, "BATCH" },
		{ 'k', BENCH_UINT, &pr.batches, "BATCHES" },
		{ 'r', BENCH_UINT, &d.reps, "TRIALS" },
		{ 'i', BENCH_SET, &pr.io_only, NULL },
		BENCH_OPT_QUIET,
	};
	int err;

	err = bench_parse_args(argc, argv, argv[0], opts,
			       sizeof(opts) / sizeof(opts[0]));
	if (err)
		return err;
	if (!pr.batch || !pr.batches || pr.batches > BENCH_MAX_REPS * 16 ||
	    !d.reps) {
		fprintf(stderr, "bench-pidread: bad -b, -k or -r\n");
		return 2;
	}
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (!pid) {
		for (;;)
			pause();
	}
	snprintf(pr.energy, sizeof(pr.energy), "/proc/energy/%d", pid);
	snprintf(pr.io, sizeof(pr.io), "/proc/%d/io", pid);
	printf("== pidread: open+read+close of %s vs %s, %u batches of %u per trial, %u trials ==\n",
	       pr.io_only ? "(none)" : pr.energy, pr.io, pr.batches, pr.batch,
	       d.reps);
	fflush(stdout);
	if (pr.io_only) {
		/* Reference only: no module, nothing loaded or unloaded. */
		double out[3], v[BENCH_MAX_REPS];
		unsigned int r;

		for (r = 0; r < d.reps && r < BENCH_MAX_REPS; r++) {
			if (trial(&pr, false, out))
				break;
			v[r] = out[1];
		}
		rc = r == d.reps ? 0 : -1;
		if (!rc) {
			double med = bench_median(v, r);

			printf("pidread: proc_pid_io (us), %u trials: median %.4g [%.4g .. %.4g]\n",
			       r, med, v[0], v[r - 1]);
			printf("RESULT pidread proc_pid_io us value=%.6g min=%.6g max=%.6g\n",
			       med, v[0], v[r - 1]);
		}
	} else {
		rc = bench_run_loaded(&d);
		bench_set_loaded(false);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return rc < 0 ? 1 : 0;
}
