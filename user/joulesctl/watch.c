// SPDX-License-Identifier: GPL-2.0
/*
 * joulesctl watch / record: subscribers of the module's multicast groups.
 * Both groups need CAP_SYS_ADMIN, since samples and exit records carry
 * every user's data.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "joulesctl.h"

static void watch_usage(FILE *fp)
{
	fprintf(fp,
		"Usage: joulesctl watch [--json] [--samples | --exits | --cgroups] [-n COUNT]\n\n"
		"Print node samples (one per attribution interval) and exit records as\n"
		"they arrive, one line each: a task's final totals when it exits, a\n"
		"cgroup's (its descendants' included) once it is removed and nothing\n"
		"refers to it any more, its path then from the root of the hierarchy.\n"
		"Needs CAP_SYS_ADMIN.\n\n"
		"  -j, --json        one JSON object per line (\"type\": \"sample\", \"exit\"\n"
		"                    or \"cgroup_exit\")\n"
		"  -s, --samples     samples only\n"
		"  -e, --exits       exit records only (tasks and cgroups)\n"
		"  -c, --cgroups     cgroup exit records only\n"
		"  -n, --count COUNT stop after COUNT records\n"
		"  -h, --help        this help\n");
}

static int subscribe(struct jnl *nl, unsigned int groups)
{
	int err = jnl_subscribe(nl, groups);

	if (err)
		jc_nl_err(nl, JNL_OP_SUBSCRIBE, err, "subscribe");
	return err;
}

/*
 * The next event within timeout_ms (< 0: forever): 1; 0 for none (timeout,
 * a signal, or lost events: warned about, `lost` saying what it costs); or
 * -1 when receiving failed (printed).
 */
static int next_event(struct jnl *nl, struct jnl_event *ev, int timeout_ms,
		      const char *lost)
{
	int r = jnl_next_event(nl, ev, timeout_ms);

	if (r == -EINTR)
		return 0;
	if (r == -ENOBUFS) {
		cli_err("warning: %s%s (%lu times so far)",
			jnl_strerror(JNL_OP_SUBSCRIBE, r), lost,
			jnl_events_lost(nl));
		return 0;
	}
	if (r < 0) {
		cli_err("receive: %s", strerror(-r));
		return -1;
	}
	return r;
}

int cmd_watch(int argc, char **argv)
{
	unsigned int groups = 0;
	uint64_t count = 0, seen = 0;
	bool json = false, cgroups = false;
	const struct cli_opt opts[] = {
		CLI_OPT_FLAG("json", 'j', &json),
		CLI_OPT_BITS("samples", 's', &groups, JNL_GRP_SAMPLES),
		CLI_OPT_BITS("exits", 'e', &groups, JNL_GRP_EXITS),
		CLI_OPT_FLAG("cgroups", 'c', &cgroups),
		CLI_OPT_COUNT("count", 'n', &count, "bad count '%s'"),
		CLI_OPT_END,
	};
	const struct cli_cmdline cl = { .cmd = "watch",
					.opts = opts,
					.help = watch_usage };
	struct jnl *nl;
	int rc;

	rc = cli_getopt(&cl, argc, argv);
	if (rc != CLI_GO)
		return rc;
	if (cgroups && groups)
		return cli_usage(
			"watch",
			"--cgroups and --samples or --exits do not go together");
	if (cgroups)
		groups = JNL_GRP_EXITS;
	if (!groups)
		groups = JNL_GRP_SAMPLES | JNL_GRP_EXITS;

	if (jc_open(&nl))
		return CLI_FAIL;
	if (subscribe(nl, groups)) {
		jnl_close(nl);
		return CLI_FAIL;
	}
	cli_catch_signals();
	rc = CLI_OK;
	while (!cli_stop && (!count || seen < count)) {
		struct jnl_event ev;
		int r = next_event(nl, &ev, -1, "");

		if (r < 0) {
			rc = CLI_FAIL;
			break;
		}
		if (r == 0)
			continue;
		switch (ev.type) {
		case JNL_EV_SAMPLE:
			json ? out_sample_json(stdout, &ev.sample) :
			       out_sample_line(stdout, &ev.sample);
			break;
		case JNL_EV_EXIT:
			if (cgroups)
				continue;
			json ? out_exit_json(stdout, &ev.exit) :
			       out_task_line(stdout, &ev.exit);
			break;
		case JNL_EV_CGROUP_EXIT:
			json ? out_cgroup_exit_json(stdout, ev.cgroup) :
			       out_cgroup_line(stdout, ev.cgroup);
			jnl_event_free(&ev);
			break;
		default:
			jnl_event_free(&ev);
			continue;
		}
		seen++;
		/* Line by line, so a pipe sees each record when it happens. */
		if (fflush(stdout)) {
			rc = errno == EPIPE ? CLI_OK : CLI_FAIL;
			break;
		}
	}
	jnl_close(nl);
	return rc;
}

static void record_usage(FILE *fp)
{
	fprintf(fp,
		"Usage: joulesctl record [--count N] [--duration SECS] FILE\n\n"
		"Write the node's samples to FILE ('-' for standard output) as CSV, one row\n"
		"per attribution interval, flushed line by line, for joules-train. Columns:\n"
		"  %s\n"
		"Energies and features are the interval's deltas; source is rapl or\n"
		"model; a feature the node cannot count is an empty field. Runs until\n"
		"N rows, SECS seconds, or SIGINT. Needs CAP_SYS_ADMIN.\n\n"
		"  -c, --count N         stop after N rows\n"
		"  -D, --duration SECS   stop after SECS seconds\n"
		"  -h, --help            this help\n",
		OUT_RECORD_HEADER);
}

/* From here on SIGINT ends the recording cleanly, with the row count. */
static int record_start(void *ctx, uint64_t *start_ns)
{
	(void)ctx;
	cli_catch_signals();
	*start_ns = cli_now_ns();
	return 0;
}

static int record_next(void *ctx, uint64_t end_ns, struct sample_rec *s)
{
	struct jnl_event ev;
	int timeout = -1, r;

	if (end_ns) {
		uint64_t now = cli_now_ns();

		if (now >= end_ns)
			return RECORD_END;
		timeout = (int)((end_ns - now + 999999) / 1000000);
	}
	r = next_event(ctx, &ev, timeout, ": a row is missing");
	if (r < 0)
		return RECORD_FAIL;
	if (r == 0)
		return RECORD_NONE;
	if (ev.type != JNL_EV_SAMPLE) {
		jnl_event_free(&ev);
		return RECORD_NONE;
	}
	*s = ev.sample;
	return RECORD_SAMPLE;
}

int cmd_record(int argc, char **argv)
{
	struct record_args a = { 0 };
	const struct cli_opt opts[] = { RECORD_OPTS(&a), CLI_OPT_END };
	struct record_source src = { record_start, record_next, NULL };
	struct jnl *nl;
	int rc;

	rc = record_getopt(opts, record_usage, argc, argv);
	if (rc != CLI_GO)
		return rc;
	/* Subscribe first: a permission error should not leave an empty file. */
	if (jc_open(&nl))
		return CLI_FAIL;
	if (subscribe(nl, JNL_GRP_SAMPLES)) {
		jnl_close(nl);
		return CLI_FAIL;
	}
	src.ctx = nl;
	rc = record_run(&a, argv[optind], &src);
	jnl_close(nl);
	return rc;
}
