// SPDX-License-Identifier: GPL-2.0
/* joulesctl show, joulesctl node: one netlink request each. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "joulesctl.h"

static void show_usage(FILE *fp)
{
	fprintf(fp,
		"Usage: joulesctl show [--json] [--thread] [--lagged] PID...\n"
		"       joulesctl show [--json] [--lagged] --cgroup PATH...\n\n"
		"Energy and counters of each process PID (all its threads, living and\n"
		"exited), as key: value lines like /proc/energy/PID, or one JSON object\n"
		"per line.\n\n"
		"With --cgroup, of each cgroup (v2) PATH instead, its descendants and\n"
		"exited tasks included: the lines of\n"
		"/proc/energy/cgroup/PATH/energy.stat, then what the path says about\n"
		"what runs there (kind, runtime, container_id, pod_uid, qos, unit; the\n"
		"unknown ones left out). PATH is as in /proc/PID/cgroup, relative to\n"
		"your cgroup namespace (\"/\" is its root; the leading / is optional).\n\n"
		"  -j, --json     JSON output\n"
		"  -t, --thread   PID is a thread id: show that thread alone\n"
		"  -c, --cgroup   the operands are cgroup paths\n"
		"  -l, --lagged   the lagged view, as users without CAP_PERFMON see\n"
		"                 measured energy (energy_lag_ms: says so)\n"
		"  -h, --help     this help\n\n"
		"Another user's task gives 'permission denied' unless run as root. A\n"
		"cgroup needs CAP_PERFMON or CAP_SYS_ADMIN, or owning its directory.\n");
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

/* Each cgroup's record, as show_run() prints tasks'; a failure is skipped. */
static int show_cgroups(struct jnl *nl, bool json, int n, char **paths)
{
	struct cgroup_rec *c = malloc(sizeof(*c));
	int rc = CLI_OK, err;

	if (!c) {
		cli_err("out of memory");
		return CLI_FAIL;
	}
	for (int i = 0; i < n; i++) {
		err = jnl_get_cgroup(nl, paths[i], 0, c);
		if (err) {
			char what[80];

			snprintf(what, sizeof(what), "cgroup %.60s%s", paths[i],
				 strlen(paths[i]) > 60 ? "..." : "");
			jc_nl_err(nl, JNL_OP_GET_CGROUP, err, what);
			rc = CLI_FAIL;
			continue;
		}
		if (json) {
			out_cgroup_json(stdout, c);
		} else {
			if (i > 0)
				putchar('\n');
			out_cgroup_text(stdout, c);
		}
	}
	free(c);
	if (fflush(stdout))
		rc = CLI_FAIL;
	return rc;
}

int cmd_show(int argc, char **argv)
{
	struct show_args a = { 0 };
	bool cgroup = false, lagged = false;
	const struct cli_opt opts[] = { SHOW_OPTS(&a),
					CLI_OPT_FLAG("cgroup", 'c', &cgroup),
					CLI_OPT_FLAG("lagged", 'l', &lagged),
					CLI_OPT_END };
	const struct cli_cmdline cl = {
		.cmd = "show",
		.opts = opts,
		.help = show_usage,
		.min_args = 1,
		.max_args = -1,
		.operand = "PID (or PATH with --cgroup)",
	};
	struct jnl *nl;
	int rc;

	rc = cli_getopt(&cl, argc, argv);
	if (rc == CLI_GO && cgroup && a.thread)
		rc = cli_usage("show",
			       "--cgroup and --thread do not go together");
	if (rc == CLI_GO && !cgroup)
		rc = show_check_pids(optind, argc, argv);
	if (rc != CLI_GO)
		return rc;
	if (jc_open(&nl))
		return CLI_FAIL;
	jnl_set_lagged(nl, lagged);
	if (cgroup)
		rc = show_cgroups(nl, a.json, argc - optind, argv + optind);
	else
		rc = show_run(&a, argc - optind, argv + optind, get_task, nl);
	jnl_close(nl);
	return rc;
}

static void node_usage(FILE *fp)
{
	fprintf(fp,
		"Usage: joulesctl node [--json] [--lagged]\n\n"
		"Node totals since the module loaded: energy (idle, tasks, per RAPL\n"
		"domain), feature totals, source, coefficient generation in force.\n"
		"Needs CAP_PERFMON or CAP_SYS_ADMIN (root): node energy includes every user's work.\n\n"
		"  -j, --json     JSON output\n"
		"  -l, --lagged   the lagged view (no per-domain lines, no meter's)\n"
		"  -h, --help     this help\n");
}

int cmd_node(int argc, char **argv)
{
	bool json = false, lagged = false;
	const struct cli_opt opts[] = { CLI_OPT_FLAG("json", 'j', &json),
					CLI_OPT_FLAG("lagged", 'l', &lagged),
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
	err = jnl_get_node_view(nl, lagged, &n);
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
