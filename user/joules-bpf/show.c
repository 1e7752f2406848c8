// SPDX-License-Identifier: GPL-2.0
/* joules-bpf show: one process's (or thread's) record from the running collector. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "jb.h"

static void show_usage(FILE *fp)
{
	fprintf(fp,
		"Usage: joules-bpf show [--json] [--thread] [-C FILE | --coef LINE] PID...\n\n"
		"Counters (and, with coefficients, model energy) of each process PID, summed\n"
		"over its threads, living and exited, as key: value lines in the layout of\n"
		"/proc/energy/PID, or one JSON object per line. Reads the collector that\n"
		"'joules-bpf run' holds.\n\n"
		"  -j, --json               JSON output\n"
		"  -t, --thread             PID is a thread id: that thread alone\n"
		"%s"
		"  -h, --help               this help\n",
		JB_COMMON_HELP);
}

int cmd_show(int argc, char **argv)
{
	static const struct option opts[] = {
		JB_COMMON_LONG,
		{ "json", no_argument, NULL, 'j' },
		{ "thread", no_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	bool json = false, thread = false;
	struct jb_opts o;
	struct jb_coll c;
	struct jb_snap s;
	pid_t stale;
	int ch, rc, err;

	jb_opts_init(&o);
	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, JB_COMMON_SHORT "jth", opts,
				 NULL)) != -1) {
		rc = jb_common_opt(&o, "show", ch, optarg);
		if (rc == 1)
			continue;
		if (rc)
			return rc;
		switch (ch) {
		case 'j':
			json = true;
			break;
		case 't':
			thread = true;
			break;
		case 'h':
			show_usage(stdout);
			return JB_OK;
		default:
			return jb_bad_option("show", argc, argv);
		}
	}
	if (optind >= argc)
		return jb_usage("show", "missing PID");
	for (int i = optind; i < argc; i++) {
		pid_t pid;

		if (jb_parse_pid(argv[i], &pid))
			return jb_usage("show", "'%s' is not a process id",
					argv[i]);
	}
	if (jb_check_root())
		return JB_FAIL;
	err = jb_coll_open_pinned(&c, &o, &stale);
	if (err == -ENOENT) {
		if (stale)
			jb_err("no collector running (its loader, pid %d, is gone)",
			       (int)stale);
		else
			jb_err("no collector running (start one with 'joules-bpf run')");
		return JB_FAIL;
	}
	if (err)
		return JB_FAIL;
	err = jb_snap_take(&c, &s, true);
	jb_coll_close(&c);
	if (err) {
		jb_err("reading the collector's maps: %s", strerror(-err));
		return JB_FAIL;
	}
	rc = JB_OK;
	for (int i = optind; i < argc; i++) {
		struct task_rec t;
		char path[64];
		pid_t pid;

		jb_parse_pid(argv[i], &pid);
		err = jb_record_one(&s, &o, pid, thread, &t);
		if (err) {
			snprintf(path, sizeof(path), "/proc/%d", (int)pid);
			if (err != -ESRCH)
				jb_err("%s %d: %s", thread ? "thread" : "pid",
				       (int)pid, strerror(-err));
			else if (access(path, F_OK))
				jb_err("%s %d: no such process",
				       thread ? "thread" : "pid", (int)pid);
			else
				jb_err("%s %d: not tracked (it has not run since the collector "
				       "started, or the task map was full)",
				       thread ? "thread" : "pid", (int)pid);
			rc = JB_FAIL;
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
	jb_snap_free(&s);
	if (fflush(stdout))
		rc = JB_FAIL;
	return rc;
}
