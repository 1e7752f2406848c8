// SPDX-License-Identifier: GPL-2.0
/*
 * joules-bpf record: node samples in joulesctl record's CSV (the trainer's
 * input), from the collector's per-CPU node totals. Each sample is the
 * growth of those totals since the previous one; with coefficients its
 * energy is the core's model of the sample's features plus idle power over
 * its length, as the module computes it in model mode.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "jb.h"

static void record_usage(FILE *fp)
{
	fprintf(fp,
		"Usage: joules-bpf record [-i SECS] [-c N] [-D SECS] [-C FILE | --coef LINE]\n"
		"                         [--max-tasks N] FILE\n\n"
		"Write node samples to FILE ('-' for standard output) as CSV, one row per\n"
		"interval, flushed line by line, for joules-train. Columns:\n"
		"  %s\n"
		"Features are the interval's deltas; hardware counters without a PMU are\n"
		"empty fields; tasks counts tasks charged in the interval. energy_uj and\n"
		"idle_uj need coefficients (source model), else they are 0 with source\n"
		"none. Uses the running collector, or loads one for its own lifetime.\n\n"
		"  -i, --interval SECS      sampling interval (default 1)\n"
		"  -c, --count N            stop after N rows\n"
		"  -D, --duration SECS      stop after SECS seconds\n"
		"%s"
		"  -h, --help               this help\n",
		OUT_RECORD_HEADER, JB_COMMON_HELP);
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct jb_record {
	struct jb_coll c;
	struct jb_opts o;
	uint64_t interval, next; /* ns; next: CLOCK_MONOTONIC of the next row */
	uint64_t seq;
	jl_u64 task_rem, idle_rem; /* fJ carried between rows' uJ */
	struct jb_snap prev;
};

static int record_start(void *ctx, uint64_t *start_ns)
{
	struct jb_record *r = ctx;
	int err;

	/* A new epoch, so the first sample counts the tasks charged in it. */
	r->c.meta.epoch++;
	err = jb_coll_write_meta(&r->c);
	if (!err)
		err = jb_node_read(&r->c, &r->prev);
	r->next = *start_ns = r->prev.mono_ns;
	return err;
}

_Static_assert((int)JL_NR_FEATURES == (int)JL_NR_FEATURES,
	       "features in the model's order");

/* The growth of the node totals since the previous row, as a sample. */
static void record_sample(struct jb_record *r, const struct jb_snap *cur,
			  struct sample_rec *smp)
{
	const struct jb_snap *prev = &r->prev;
	const struct jl_coef *coef = &r->o.coef;
	struct jl_feat f;

	jb_node_feat(&cur->node, &prev->node, r->c.meta.hw_present, &f);
	memset(smp, 0, sizeof(*smp));
	smp->seq = ++r->seq;
	smp->realtime_ns = realtime_ns();
	smp->monotonic_ns = cur->mono_ns;
	smp->interval_ns = cur->mono_ns - prev->mono_ns;
	smp->nr_tasks = (uint32_t)(cur->ran - prev->ran);
	smp->present = f.present;
	for (int i = 0; i < JL_NR_FEATURES; i++)
		smp->feat[i] = f.v[i];
	if (r->o.have_coef) {
		uint64_t task_uj;

		task_uj = jl_fj_to_uj(jl_model_fj(coef, &f), &r->task_rem);
		smp->idle_uj = jl_fj_to_uj(
			jl_power_fj(coef->idle_uw, smp->interval_ns),
			&r->idle_rem);
		smp->energy_uj = task_uj + smp->idle_uj;
		smp->source = REC_SRC_MODEL;
		smp->model_generation = 1;
	}
}

static int record_next(void *ctx, uint64_t end_ns, struct sample_rec *smp)
{
	struct jb_record *r = ctx;
	uint64_t now = cli_now_ns();
	struct jb_snap cur;
	int err;

	r->next += r->interval;
	/* Fell behind (a stall): skip the missed slots, no runt rows. */
	if (r->next <= now)
		r->next = now + r->interval;
	if (end_ns && r->next > end_ns)
		return RECORD_END;
	if (r->next > now)
		cli_sleep_ns(r->next - now);
	if (cli_stop)
		return RECORD_NONE;
	/* Tasks charged from now on count in the next sample. */
	r->c.meta.epoch++;
	err = jb_coll_write_meta(&r->c);
	if (!err)
		err = jb_node_read(&r->c, &cur);
	if (err) {
		cli_err("reading the collector's maps: %s", strerror(-err));
		return RECORD_FAIL;
	}
	record_sample(r, &cur, smp);
	r->prev = cur;
	return RECORD_SAMPLE;
}

int cmd_record(int argc, char **argv)
{
	struct jb_record r = { .interval = 1000000000ull };
	struct record_args a = { 0 };
	const struct cli_opt opts[] = {
		JB_COMMON_OPTS(&r.o),
		CLI_OPT_SECS("interval", 'i', &r.interval, 10000000ull,
			     "bad interval '%s' (at least 0.01 s)"),
		RECORD_OPTS(&a),
		CLI_OPT_END,
	};
	const struct record_source src = { record_start, record_next, &r };
	bool own;
	int rc;

	jb_opts_init(&r.o);
	rc = record_getopt(opts, record_usage, argc, argv);
	if (rc != CLI_GO)
		return rc;
	/* Collector first: a permission or BTF error should not leave an empty file. */
	if (jb_coll_get(&r.c, &r.o, &own))
		return CLI_FAIL;
	rc = record_run(&a, argv[optind], &src);
	jb_coll_close(&r.c);
	return rc;
}
