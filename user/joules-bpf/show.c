// SPDX-License-Identifier: GPL-2.0
/* joules-bpf show: one process's (or thread's) record from the running collector. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "jb.h"

struct jb_show {
	struct jb_snap snap;
	const struct jb_opts *o;
};

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

/* The record of process (or thread) pid in the snapshot ctx. */
static int get_task(void *ctx, pid_t pid, bool thread, struct task_rec *t)
{
	const struct jb_show *sh = ctx;
	const char *what = thread ? "thread" : "pid";
	char path[64];
	int err = jb_record_one(&sh->snap, sh->o, pid, thread, t);

	if (!err)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (err != -ESRCH)
		cli_err("%s %d: %s", what, (int)pid, strerror(-err));
	else if (access(path, F_OK))
		cli_err("%s %d: no such process", what, (int)pid);
	else
		cli_err("%s %d: not tracked (it has not run since the collector "
			"started, or the task map was full)",
			what, (int)pid);
	return err;
}

int cmd_show(int argc, char **argv)
{
	struct show_args a = { 0 };
	struct jb_opts o;
	const struct cli_opt opts[] = { JB_COMMON_OPTS(&o), SHOW_OPTS(&a),
					CLI_OPT_END };
	struct jb_show sh = { .o = &o };
	struct jb_coll c;
	int rc, err;

	jb_opts_init(&o);
	rc = show_getopt(opts, show_usage, argc, argv);
	if (rc != CLI_GO)
		return rc;
	if (jb_coll_open_running(&c, &o, false))
		return CLI_FAIL;
	/* One snapshot for all PIDs: they are shown as of the same instant. */
	err = jb_snap_take(&c, &sh.snap, true);
	jb_coll_close(&c);
	if (err) {
		cli_err("reading the collector's maps: %s", strerror(-err));
		return CLI_FAIL;
	}
	rc = show_run(&a, argc - optind, argv + optind, get_task, &sh);
	jb_snap_free(&sh.snap);
	return rc;
}
