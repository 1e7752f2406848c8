// SPDX-License-Identifier: GPL-2.0
/*
 * joulesctl top: processes sorted by power, where power is a task's energy
 * delta between two snapshots over the time between them. The table itself
 * is user/lib/out.c's, shared with joules-bpf.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

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

/* Sleep ns unless a signal stops us first. */
static void top_sleep(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000u),
			       .tv_nsec = (long)(ns % 1000000000u) };

	while (!jc_stop && nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int top_snapshot(struct jnl *nl, bool threads, struct top_state *ts)
{
	struct task_rec *recs;
	size_t n;
	int err;

	err = jnl_dump_tasks(nl, threads, &recs, &n);
	if (err) {
		if (err != -EINTR)
			jc_nl_err(nl, JNL_OP_DUMP, err, "task dump");
		return err;
	}
	err = top_update(ts, recs, n, jc_now_ns());
	free(recs);
	if (err)
		jc_err("out of memory");
	return err;
}

int cmd_top(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "delay", required_argument, NULL, 'd' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "batch", no_argument, NULL, 'b' },
		{ "threads", no_argument, NULL, 'H' },
		{ "max-rows", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	uint64_t delay = 2000000000ull, iterations = 0, max_rows = 0;
	bool batch = false, threads = false, interactive, have_node = true;
	struct node_rec node, prev_node;
	uint64_t node_ns = 0, prev_node_ns = 0;
	struct top_state ts;
	struct jnl *nl;
	int c, rc = JC_OK;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "d:n:bHm:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (jc_parse_secs(optarg, &delay))
				return jc_usage(
					"top",
					"bad delay '%s' (positive seconds)",
					optarg);
			break;
		case 'n':
			if (jc_parse_count(optarg, &iterations))
				return jc_usage("top",
						"bad iteration count '%s'",
						optarg);
			break;
		case 'b':
			batch = true;
			break;
		case 'H':
			threads = true;
			break;
		case 'm':
			if (jc_parse_count(optarg, &max_rows))
				return jc_usage("top", "bad row count '%s'",
						optarg);
			break;
		case 'h':
			top_usage(stdout);
			return JC_OK;
		default:
			return jc_bad_option("top", argc, argv);
		}
	}
	if (optind < argc)
		return jc_usage("top", "unexpected argument '%s'",
				argv[optind]);
	interactive = !batch && isatty(STDOUT_FILENO);

	if (jc_open(&nl))
		return JC_FAIL;
	jc_catch_signals();
	top_init(&ts);
	memset(&prev_node, 0, sizeof(prev_node));
	/* The node line needs CAP_NET_ADMIN; without it, the table alone. */
	if (jnl_get_node(nl, &prev_node))
		have_node = false;
	prev_node_ns = jc_now_ns();
	if (top_snapshot(nl, threads, &ts)) {
		rc = jc_stop ? JC_OK : JC_FAIL;
		goto out;
	}
	for (uint64_t i = 0; !iterations || i < iterations; i++) {
		char summary[160], clock[16];
		size_t rows = (size_t)max_rows;
		time_t now;
		int n;

		top_sleep(delay);
		if (jc_stop)
			break;
		if (have_node && !jnl_get_node(nl, &node))
			node_ns = jc_now_ns();
		else
			have_node = false;
		if (top_snapshot(nl, threads, &ts)) {
			rc = jc_stop ? JC_OK : JC_FAIL;
			break;
		}
		now = time(NULL);
		strftime(clock, sizeof(clock), "%H:%M:%S", localtime(&now));
		n = snprintf(summary, sizeof(summary),
			     "joulesctl top - %s, every %.3g s", clock,
			     (double)delay / 1e9);
		if (have_node && node_ns > prev_node_ns &&
		    node.energy_uj >= prev_node.energy_uj)
			snprintf(
				summary + n, sizeof(summary) - (size_t)n,
				", node %.3f W (idle %.3f W, %s)",
				(double)(node.energy_uj - prev_node.energy_uj) /
					1e3 /
					((double)(node_ns - prev_node_ns) /
					 1e6),
				(double)(node.idle_uj - prev_node.idle_uj) /
					1e3 /
					((double)(node_ns - prev_node_ns) /
					 1e6),
				out_source_name(node.source));
		if (have_node) {
			prev_node = node;
			prev_node_ns = node_ns;
		}
		if (interactive) {
			struct winsize ws;

			if (!rows && !ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) &&
			    ws.ws_row > 5)
				rows = ws.ws_row - 5;
			fputs("\033[H\033[2J", stdout);
		} else if (i) {
			putchar('\n');
		}
		top_print(&ts, stdout, rows, summary);
		if (fflush(stdout)) {
			rc = jc_stop ? JC_OK : JC_FAIL;
			break;
		}
	}
out:
	top_free(&ts);
	jnl_close(nl);
	return rc;
}
