// SPDX-License-Identifier: GPL-2.0
/*
 * Netlink DUMP_TASKS latency with N sleeping tasks (default 10,000): the
 * request `joulesctl top` makes every refresh. Two figures per trial, each
 * the median of D dumps:
 *   raw  - request, receive and count every record (kernel side + socket);
 *   lib  - jnl_dump_tasks(): the same plus libjoules' parsing and sorting,
 *          what a tool pays.
 *
 * The tasks are processes by default (bench_spawn_sleepers(): one record
 * per task in the dump); -t makes them threads of this process and dumps
 * with JOULES_A_THREADS instead.
 *
 *   bench-nldump [-n TASKS] [-d DUMPS] [-r TRIALS] [-t] [-q]
 *
 * Goal: <= 20 ms per dump of 10,000 tasks on bare metal.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/netlink.h>

#include "harness.h"
#include "nl.h"
#include "uapi/joules_netlink.h"

struct nldump {
	unsigned long n;
	unsigned int dumps;
	bool threads;
	size_t records;
};

static int trial(void *arg, bool loaded, double *out)
{
	struct nldump *nd = arg;
	double raw[64], lib[64], t0;
	struct task_rec *recs;
	struct jnl *nl;
	unsigned int k;
	size_t n;
	int err;

	(void)loaded;
	err = jnl_open(&nl);
	if (err) {
		fprintf(stderr, "bench-nldump: %s\n",
			jnl_strerror(JNL_OP_OPEN, err));
		return -1;
	}
	for (k = 0; k < nd->dumps; k++) {
		struct nlattr flag = { .nla_len = NLA_HDRLEN,
				       .nla_type = JOULES_A_THREADS };

		t0 = bench_now();
		err = jnl_raw_request(nl, JOULES_CMD_DUMP_TASKS,
				      JOULES_GENL_VERSION, NLM_F_DUMP, &flag,
				      nd->threads ? sizeof(flag) : 0);
		raw[k] = (bench_now() - t0) * 1e3;
		if (err < 0)
			goto fail;
		nd->records = (size_t)err;
		t0 = bench_now();
		err = jnl_dump_tasks(nl, nd->threads, &recs, &n);
		lib[k] = (bench_now() - t0) * 1e3;
		if (err < 0)
			goto fail;
		free(recs);
	}
	jnl_close(nl);
	out[0] = bench_median(raw, nd->dumps);
	out[1] = bench_median(lib, nd->dumps);
	out[2] = out[0] * 1e6 / (double)nd->records;
	if (nd->records < nd->n) {
		fprintf(stderr,
			"bench-nldump: dump has %zu records, fewer than the %lu tasks\n",
			nd->records, nd->n);
		return -1;
	}
	return 0;
fail:
	fprintf(stderr, "bench-nldump: %s\n", jnl_strerror(JNL_OP_DUMP, err));
	jnl_close(nl);
	return -1;
}

int main(int argc, char **argv)
{
	static const struct bench_metric metrics[] = {
		{ "dump_raw", "ms", 20 },
		{ "dump_lib", "ms", 0 },
		{ "raw_per_record", "ns", 0 },
	};
	struct nldump nd = { .n = 10000, .dumps = 5 };
	struct bench_def d = {
		.name = "nldump",
		.metrics = metrics,
		.nr_metrics = 3,
		.reps = 5,
		.trial = trial,
		.arg = &nd,
	};
	struct bench_limits old;
	double t0;
	int rc;

	const struct bench_opt opts[] = {
		{ 'n', BENCH_ULONG, &nd.n, "TASKS" },
		{ 'd', BENCH_UINT, &nd.dumps, "DUMPS" },
		{ 'r', BENCH_UINT, &d.reps, "TRIALS" },
		{ 't', BENCH_SET, &nd.threads, NULL },
		BENCH_OPT_QUIET,
	};
	int err;

	err = bench_parse_args(argc, argv, argv[0], opts,
			       sizeof(opts) / sizeof(opts[0]));
	if (err)
		return err;
	if (!nd.n || !nd.dumps || nd.dumps > 64 || !d.reps) {
		fprintf(stderr, "bench-nldump: bad -n, -d or -r\n");
		return 2;
	}
	bench_task_room(nd.n, &old);
	t0 = bench_now();
	if (bench_spawn_sleepers(nd.n, nd.threads)) {
		bench_reap_sleepers();
		return 1;
	}
	printf("== nldump: DUMP_TASKS with %lu sleeping %s (spawned in %.1f s), %u dumps per trial, %u trials ==\n",
	       nd.n, nd.threads ? "threads" : "processes", bench_now() - t0,
	       nd.dumps, d.reps);
	fflush(stdout);
	rc = bench_run_loaded(&d);
	printf("nldump: %zu records per dump\n", nd.records);
	bench_set_loaded(false);
	bench_reap_sleepers();
	bench_task_room_restore(&old);
	return rc < 0 ? 1 : 0;
}
