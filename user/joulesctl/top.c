// SPDX-License-Identifier: GPL-2.0
/*
 * joulesctl top: processes sorted by power, where power is a task's energy
 * delta between two snapshots over the time between them. The options,
 * the frames and the table are user/lib's, shared with joules-bpf; here is
 * only how to get a snapshot from the module, and the node's power.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd.h"
#include "joulesctl.h"

static void top_usage(FILE *fp)
{
	fprintf(fp,
		"Usage: joulesctl top [-d SECS] [-n ITERATIONS] [-b] [-H] [-m ROWS]\n\n"
		"Processes sorted by power (energy used per second over the last\n"
		"refresh interval), like top(1). Without a terminal, or with -b, frames\n"
		"are printed one after another; -n stops after ITERATIONS frames.\n"
		"Only tasks you may read are listed (all of them for root).\n\n"
		"  -d, --delay SECS        refresh interval (default 2, fractions allowed)\n"
		"  -n, --iterations N      print N frames, then exit\n"
		"  -b, --batch             no screen control, even on a terminal\n"
		"  -H, --threads           one row per thread instead of per process\n"
		"  -m, --max-rows ROWS     at most ROWS rows per frame (default: screen\n"
		"                          height on a terminal, all otherwise)\n"
		"  -h, --help              this help\n");
}

struct jc_top {
	struct jnl *nl;
	/* The node line needs CAP_PERFMON or CAP_SYS_ADMIN; without, the table alone. */
	bool have_node, started;
	struct node_rec node, prev_node;
	uint64_t node_ns, prev_node_ns;
};

static int top_snapshot(void *ctx, bool threads, struct top_state *ts)
{
	struct jc_top *t = ctx;
	struct task_rec *recs;
	size_t n;
	int err;

	/* The node line: its totals just before each dump. */
	if (!t->started) {
		t->started = true;
		if (jnl_get_node(t->nl, &t->prev_node))
			t->have_node = false;
		t->prev_node_ns = cli_now_ns();
	} else if (t->have_node && !jnl_get_node(t->nl, &t->node)) {
		t->node_ns = cli_now_ns();
	} else {
		t->have_node = false;
	}
	err = jnl_dump_tasks(t->nl, threads, &recs, &n);
	if (err) {
		if (err != -EINTR)
			jc_nl_err(t->nl, JNL_OP_DUMP, err, "task dump");
		return cli_stop ? 1 : err;
	}
	err = top_update(ts, recs, n, cli_now_ns());
	free(recs);
	if (err) {
		cli_err("out of memory");
		return cli_stop ? 1 : err;
	}
	return 0;
}

static void top_summary(void *ctx, char *buf, size_t size)
{
	struct jc_top *t = ctx;
	double ms = (double)(t->node_ns - t->prev_node_ns) / 1e6;

	if (t->have_node && t->node_ns > t->prev_node_ns &&
	    t->node.energy_uj >= t->prev_node.energy_uj)
		snprintf(buf, size, ", node %.3f W (idle %.3f W, %s)",
			 (double)(t->node.energy_uj - t->prev_node.energy_uj) /
				 1e3 / ms,
			 (double)(t->node.idle_uj - t->prev_node.idle_uj) /
				 1e3 / ms,
			 out_source_name(t->node.source));
	if (t->have_node) {
		t->prev_node = t->node;
		t->prev_node_ns = t->node_ns;
	}
}

int cmd_top(int argc, char **argv)
{
	struct top_args a = TOP_ARGS_INIT;
	const struct cli_opt opts[] = { TOP_OPTS(&a), CLI_OPT_END };
	const struct cli_cmdline cl = { .cmd = "top",
					.opts = opts,
					.help = top_usage };
	struct jc_top t = { .have_node = true };
	const struct top_source src = { top_snapshot, top_summary, &t };
	int rc;

	rc = cli_getopt(&cl, argc, argv);
	if (rc != CLI_GO)
		return rc;
	if (jc_open(&t.nl))
		return CLI_FAIL;
	cli_catch_signals();
	rc = top_run(&a, &src);
	jnl_close(t.nl);
	return rc;
}
