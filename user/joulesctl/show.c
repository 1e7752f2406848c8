// SPDX-License-Identifier: GPL-2.0
/* joulesctl show, joulesctl node: one netlink request each. */
#include <stdio.h>

#include "cmd.h"
#include "joulesctl.h"

static void show_usage(FILE *fp)
{
	fprintf(fp,
		"Usage: joulesctl show [--json] [--thread] PID...\n\n"
		"Energy and counters of each process PID (all its threads, living and\n"
		"exited), as key: value lines like /proc/energy/PID, or one JSON object\n"
		"per line.\n\n"
		"  -j, --json     JSON output\n"
		"  -t, --thread   PID is a thread id: show that thread alone\n"
		"  -h, --help     this help\n\n"
		"Another user's task gives 'permission denied' unless run as root.\n");
}

static int get_task(void *ctx, pid_t pid, bool thread, struct task_rec *t)
{
	struct jnl *nl = ctx;
	char what[64];
	int err;

	err = jnl_get_task(nl, pid, thread, t);
	if (err) {
		snprintf(what, sizeof(what), "%s %d", thread ? "thread" : "pid",
			 (int)pid);
		jc_nl_err(nl, JNL_OP_GET_TASK, err, what);
	}
	return err;
}

int cmd_show(int argc, char **argv)
{
	struct show_args a = { 0 };
	const struct cli_opt opts[] = { SHOW_OPTS(&a), CLI_OPT_END };
	struct jnl *nl;
	int rc;

	rc = show_getopt(opts, show_usage, argc, argv);
	if (rc != CLI_GO)
		return rc;
	if (jc_open(&nl))
		return CLI_FAIL;
	rc = show_run(&a, argc - optind, argv + optind, get_task, nl);
	jnl_close(nl);
	return rc;
}

static void node_usage(FILE *fp)
{
	fprintf(fp,
		"Usage: joulesctl node [--json]\n\n"
		"Node totals since the module loaded: energy (idle, tasks, per RAPL\n"
		"domain), feature totals, source, coefficient generation in force.\n"
		"Needs CAP_PERFMON or CAP_SYS_ADMIN (root): node energy includes every user's work.\n\n"
		"  -j, --json     JSON output\n"
		"  -h, --help     this help\n");
}

int cmd_node(int argc, char **argv)
{
	bool json = false;
	const struct cli_opt opts[] = { CLI_OPT_FLAG("json", 'j', &json),
					CLI_OPT_END };
	const struct cli_cmdline cl = { .cmd = "node",
					.opts = opts,
					.help = node_usage };
	struct node_rec n;
	struct jnl *nl;
	int err;

	err = cli_getopt(&cl, argc, argv);
	if (err != CLI_GO)
		return err;
	if (jc_open(&nl))
		return CLI_FAIL;
	err = jnl_get_node(nl, &n);
	if (err) {
		jc_nl_err(nl, JNL_OP_GET_NODE, err, "node");
		jnl_close(nl);
		return CLI_FAIL;
	}
	jnl_close(nl);
	if (json)
		out_node_json(stdout, &n);
	else
		out_node_text(stdout, &n);
	return fflush(stdout) ? CLI_FAIL : CLI_OK;
}
