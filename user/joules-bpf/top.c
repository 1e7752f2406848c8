// SPDX-License-Identifier: GPL-2.0
/*
 * joules-bpf top: processes sorted by power, with user/lib/out.c's table
 * (the one joulesctl top prints). Power needs coefficients; without them
 * the table still sorts by CPU.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "jb.h"

static void top_usage(FILE *fp)
{
	fprintf(fp,
		"Usage: joules-bpf top [-d SECS] [-n ITERATIONS] [-b] [-H] [-m ROWS]\n"
		"                      [-C FILE | --coef LINE] [--max-tasks N]\n\n"
		"Processes sorted by power (model energy per second over the last refresh\n"
		"interval, with coefficients) and CPU use, like top(1). Uses the running\n"
		"collector, or loads one for its own lifetime when none runs (tasks then\n"
		"count from that moment).\n\n"
		"  -d, --delay SECS         refresh interval (default 2, fractions allowed)\n"
		"  -n, --iterations N       print N frames, then exit\n"
		"  -b, --batch              no screen control, even on a terminal\n"
		"  -H, --threads            one row per thread instead of per process\n"
		"  -m, --max-rows ROWS      at most ROWS rows per frame\n"
		"%s"
		"  -h, --help               this help\n",
		JB_COMMON_HELP);
}

struct jb_top {
	struct jb_coll c;
	struct jb_opts o;
	bool own; /* the collector is this process's */
	bool started;
	struct jb_snap prev, cur; /* node totals only (maps freed) */
};

static int top_snapshot(void *ctx, bool threads, struct top_state *ts)
{
	struct jb_top *t = ctx;
	struct task_rec *recs;
	struct jb_snap s;
	int n, err;

	err = jb_snap_take(&t->c, &s, true);
	if (err) {
		cli_err("reading the collector's maps: %s", strerror(-err));
		return err;
	}
	n = jb_records(&s, &t->o, threads, &recs);
	if (n < 0) {
		jb_snap_free(&s);
		cli_err("out of memory");
		return n;
	}
	err = top_update(ts, recs, (size_t)n, s.mono_ns);
	free(recs);
	jb_snap_free(&s);
	t->cur = s;
	if (!t->started) {
		t->prev = s;
		t->started = true;
	}
	if (err)
		cli_err("out of memory");
	return err;
}

/* CPU use of all tasks and, with coefficients, the model's node power. */
static void top_summary(void *ctx, char *buf, size_t size)
{
	struct jb_top *t = ctx;
	const struct jb_counts *cur = &t->cur.node, *prev = &t->prev.node;
	double dt, cpu;
	int n;

	dt = (double)(t->cur.mono_ns - t->prev.mono_ns) / 1e9;
	cpu = dt > 0 ? (double)(cur->cpu_ns - prev->cpu_ns) / 1e7 / dt : 0;
	n = snprintf(buf, size, ", collector %s, tasks %.1f%% CPU",
		     t->own ? "private" : "shared", cpu);
	if (t->o.have_coef && dt > 0 && n > 0 && (size_t)n < size) {
		struct jl_feat f;
		jl_u64 rem = 0, uj;

		jb_node_feat(cur, prev, t->c.meta.hw_present, &f);
		uj = jl_fj_to_uj(jl_model_fj(&t->o.coef, &f), &rem);
		snprintf(buf + n, size - (size_t)n,
			 ", model: tasks %.3f W + idle %.3f W",
			 (double)uj / 1e6 / dt,
			 (double)t->o.coef.idle_uw / 1e6);
	}
	t->prev = t->cur;
}

int cmd_top(int argc, char **argv)
{
	struct jb_top t = { .own = false };
	struct top_args a = TOP_ARGS_INIT;
	const struct cli_opt opts[] = { JB_COMMON_OPTS(&t.o), TOP_OPTS(&a),
					CLI_OPT_END };
	const struct cli_cmdline cl = { .cmd = "top",
					.opts = opts,
					.help = top_usage };
	const struct top_source src = { top_snapshot, top_summary, &t };
	int rc;

	jb_opts_init(&t.o);
	rc = cli_getopt(&cl, argc, argv);
	if (rc != CLI_GO)
		return rc;
	if (jb_coll_get(&t.c, &t.o, &t.own))
		return CLI_FAIL;
	rc = top_run(&a, &src);
	jb_coll_close(&t.c);
	return rc;
}
