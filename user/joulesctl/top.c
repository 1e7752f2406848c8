// SPDX-License-Identifier: GPL-2.0
/*
 * joulesctl top: processes sorted by power, where power is a task's energy
 * delta between two snapshots over the time between them. The options,
 * the frames and the table are user/lib's, shared with joules-bpf; here is
 * only how to get a snapshot from the module, and the node's power. With
 * --cgroups the rows are cgroups (DUMP_CGROUPS), named by cgname.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd.h"
#include "joulesctl.h"
#include "parse.h"

static void top_usage(FILE *fp)
{
	fprintf(fp,
		"Usage: joulesctl top [-d SECS] [-n ITERATIONS] [-b] [-H] [-m ROWS]\n"
		"       joulesctl top --cgroups [--depth N] [--cgroups-match REGEX]\n"
		"                     [-d SECS] [-n ITERATIONS] [-b] [-m ROWS]\n\n"
		"Processes sorted by power (energy used per second over the last\n"
		"refresh interval), like top(1). Without a terminal, or with -b, frames\n"
		"are printed one after another; -n stops after ITERATIONS frames.\n"
		"Only tasks you may read are listed (all of them for root).\n\n"
		"With --cgroups, one row per cgroup (v2) instead: its power and CPU over\n"
		"the interval, its tasks, and the container id (first 12 digits), pod UID\n"
		"and QoS class read from the runtimes' naming of its path. A cgroup's\n"
		"totals include its descendants', so rows do not add up. Needs\n"
		"CAP_PERFMON or CAP_SYS_ADMIN for every cgroup; otherwise only the\n"
		"cgroups whose directories you own are listed.\n\n"
		"  -d, --delay SECS        refresh interval (default 2, fractions allowed)\n"
		"  -n, --iterations N      print N frames, then exit\n"
		"  -b, --batch             no screen control, even on a terminal\n"
		"  -H, --threads           one row per thread instead of per process\n"
		"  -c, --cgroups           one row per cgroup instead of per process\n"
		"  -D, --depth N           with --cgroups: cgroups at most N levels below\n"
		"                          the root, \"/\" being 0 (default 3)\n"
		"  -M, --cgroups-match REGEX\n"
		"                          with --cgroups: only cgroups whose path matches\n"
		"                          REGEX (POSIX extended, unanchored; e.g.\n"
		"                          '^/kubepods')\n"
		"  -m, --max-rows ROWS     at most ROWS rows per frame (default: screen\n"
		"                          height on a terminal, all otherwise)\n"
		"  -h, --help              this help\n");
}

struct jc_top {
	struct jnl *nl;
	struct cgtop_state cg; /* --cgroups */
	/* The node line needs CAP_PERFMON or CAP_SYS_ADMIN; without, the table alone. */
	bool have_node, started;
	struct node_rec node, prev_node;
	uint64_t node_ns, prev_node_ns;
};

/* The node line: its totals just before each dump. */
static void node_snapshot(struct jc_top *t)
{
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
}

static int top_snapshot(void *ctx, bool threads, struct top_state *ts)
{
	struct jc_top *t = ctx;
	struct task_rec *recs;
	size_t n;
	int err;

	node_snapshot(t);
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

static int cg_snapshot(void *ctx, bool threads, struct top_state *ts)
{
	struct jc_top *t = ctx;
	struct cgroup_rec *recs;
	size_t n;
	int err;

	(void)threads;
	(void)ts;
	node_snapshot(t);
	err = jnl_dump_cgroups(t->nl, &recs, &n);
	if (err) {
		if (err != -EINTR)
			jc_nl_err(t->nl, JNL_OP_DUMP, err, "cgroup dump");
		return cli_stop ? 1 : err;
	}
	err = cgtop_update(&t->cg, recs, n, cli_now_ns());
	free(recs);
	if (err) {
		cli_err("out of memory");
		return cli_stop ? 1 : err;
	}
	return 0;
}

static void cg_print(void *ctx, FILE *fp, size_t max_rows, const char *summary)
{
	struct jc_top *t = ctx;

	cgtop_print(&t->cg, fp, max_rows, summary);
}

static int opt_depth(void *dst, const char *cmd, const char *arg)
{
	const char *why;
	uint64_t v;

	if (parse_u64(arg, &v, &why) || v > INT_MAX)
		return cli_usage(cmd, "bad depth '%s' (0 or more levels)", arg);
	*(unsigned int *)dst = (unsigned int)v;
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
	bool cgroups = false;
	unsigned int depth = 3;
	const char *match = NULL;
	char why[128];
	const struct cli_opt opts[] = {
		TOP_OPTS(&a),
		CLI_OPT_FLAG("cgroups", 'c', &cgroups),
		CLI_OPT_FUNC("depth", 'D', opt_depth, &depth),
		CLI_OPT_STR("cgroups-match", 'M', &match),
		CLI_OPT_END,
	};
	const struct cli_cmdline cl = { .cmd = "top",
					.opts = opts,
					.help = top_usage };
	struct jc_top t = { .have_node = true };
	const struct top_source src = { top_snapshot, top_summary, &t };
	int rc;

	rc = cli_getopt(&cl, argc, argv);
	if (rc != CLI_GO)
		return rc;
	if (cgroups && a.threads)
		return cli_usage("top",
				 "--cgroups and --threads do not go together");
	/* Silently showing every process would hide the mistake. */
	if (match && !cgroups)
		return cli_usage("top", "--cgroups-match needs --cgroups");
	if (cgroups) {
		/* On failure nothing was allocated: no cgtop_free() needed. */
		cgtop_init(&t.cg, depth);
		rc = match ? cgtop_set_match(&t.cg, match, why, sizeof(why)) :
			     0;
		if (rc == -EINVAL)
			return cli_usage("top", "bad --cgroups-match '%s': %s",
					 match, why);
		if (rc) {
			cli_err("out of memory");
			return CLI_FAIL;
		}
	}
	if (jc_open(&t.nl)) {
		cgtop_free(&t.cg);
		return CLI_FAIL;
	}
	cli_catch_signals();
	if (cgroups) {
		struct top_source cg = src;

		cg.snapshot = cg_snapshot;
		rc = top_run_rows(&a, &cg, cg_print);
		cgtop_free(&t.cg);
	} else {
		rc = top_run(&a, &src);
	}
	jnl_close(t.nl);
	return rc;
}
