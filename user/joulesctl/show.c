// SPDX-License-Identifier: GPL-2.0
/* joulesctl show, joulesctl node: one netlink request each. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

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

int cmd_show(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "thread", no_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	bool json = false, thread = false;
	struct jnl *nl;
	int c, rc = JC_OK;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "jth", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 't':
			thread = true;
			break;
		case 'h':
			show_usage(stdout);
			return JC_OK;
		default:
			return jc_bad_option("show", argc, argv);
		}
	}
	if (optind >= argc)
		return jc_usage("show", "missing PID");
	for (int i = optind; i < argc; i++) {
		pid_t pid;

		if (jc_parse_pid(argv[i], &pid))
			return jc_usage("show", "'%s' is not a process id",
					argv[i]);
	}
	if (jc_open(&nl))
		return JC_FAIL;
	for (int i = optind; i < argc; i++) {
		struct task_rec t;
		char what[64];
		pid_t pid;
		int err;

		jc_parse_pid(argv[i], &pid);
		err = jnl_get_task(nl, pid, thread, &t);
		if (err) {
			snprintf(what, sizeof(what), "%s %d",
				 thread ? "thread" : "pid", (int)pid);
			jc_nl_err(nl, JNL_OP_GET_TASK, err, what);
			rc = JC_FAIL;
			continue;
		}
		if (json) {
			out_task_json(stdout, &t);
		} else {
			if (i > optind)
				putchar('\n');
			out_task_text(stdout, &t);
		}
	}
	jnl_close(nl);
	if (fflush(stdout))
		rc = JC_FAIL;
	return rc;
}

static void node_usage(FILE *fp)
{
	fprintf(fp,
		"Usage: joulesctl node [--json]\n\n"
		"Node totals since the module loaded: energy (idle, tasks, per RAPL\n"
		"domain), feature totals, source, coefficient generation in force.\n"
		"Needs CAP_NET_ADMIN (root): node energy includes every user's work.\n\n"
		"  -j, --json     JSON output\n"
		"  -h, --help     this help\n");
}

int cmd_node(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct node_rec n;
	bool json = false;
	struct jnl *nl;
	int c, err;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'h':
			node_usage(stdout);
			return JC_OK;
		default:
			return jc_bad_option("node", argc, argv);
		}
	}
	if (optind < argc)
		return jc_usage("node", "unexpected argument '%s'",
				argv[optind]);
	if (jc_open(&nl))
		return JC_FAIL;
	err = jnl_get_node(nl, &n);
	if (err) {
		jc_nl_err(nl, JNL_OP_GET_NODE, err, "node");
		jnl_close(nl);
		return JC_FAIL;
	}
	jnl_close(nl);
	if (json)
		out_node_json(stdout, &n);
	else
		out_node_text(stdout, &n);
	return fflush(stdout) ? JC_FAIL : JC_OK;
}
