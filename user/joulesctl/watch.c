// SPDX-License-Identifier: GPL-2.0
/*
 * joulesctl watch / record: subscribers of the module's multicast groups.
 * Both groups need CAP_NET_ADMIN, since samples and exit records carry
 * every user's data.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "joulesctl.h"

static void watch_usage(FILE *fp)
{
	fprintf(fp,
		"Usage: joulesctl watch [--json] [--samples | --exits] [-n COUNT]\n\n"
		"Print node samples (one per attribution interval) and exit records (a\n"
		"task's final totals) as they arrive, one line each. Needs CAP_NET_ADMIN.\n\n"
		"  -j, --json        one JSON object per line (\"type\": \"sample\" or \"exit\")\n"
		"  -s, --samples     samples only\n"
		"  -e, --exits       exit records only\n"
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

int cmd_watch(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "samples", no_argument, NULL, 's' },
		{ "exits", no_argument, NULL, 'e' },
		{ "count", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	unsigned int groups = 0;
	uint64_t count = 0, seen = 0;
	bool json = false;
	struct jnl *nl;
	int c, rc = JC_OK;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "jsen:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 's':
			groups |= JNL_GRP_SAMPLES;
			break;
		case 'e':
			groups |= JNL_GRP_EXITS;
			break;
		case 'n':
			if (jc_parse_count(optarg, &count))
				return jc_usage("watch", "bad count '%s'",
						optarg);
			break;
		case 'h':
			watch_usage(stdout);
			return JC_OK;
		default:
			return jc_bad_option("watch", argc, argv);
		}
	}
	if (optind < argc)
		return jc_usage("watch", "unexpected argument '%s'",
				argv[optind]);
	if (!groups)
		groups = JNL_GRP_SAMPLES | JNL_GRP_EXITS;

	if (jc_open(&nl))
		return JC_FAIL;
	if (subscribe(nl, groups)) {
		jnl_close(nl);
		return JC_FAIL;
	}
	jc_catch_signals();
	while (!jc_stop && (!count || seen < count)) {
		struct jnl_event ev;
		int r = jnl_next_event(nl, &ev, -1);

		if (r == -EINTR)
			continue;
		if (r == -ENOBUFS) {
			jc_err("warning: %s (%lu times so far)",
			       jnl_strerror(JNL_OP_SUBSCRIBE, r),
			       jnl_events_lost(nl));
			continue;
		}
		if (r < 0) {
			jc_err("receive: %s", strerror(-r));
			rc = JC_FAIL;
			break;
		}
		if (r == 0)
			continue;
		if (ev.type == JNL_EV_SAMPLE)
			json ? out_sample_json(stdout, &ev.sample) :
			       out_sample_line(stdout, &ev.sample);
		else
			json ? out_exit_json(stdout, &ev.exit) :
			       out_task_line(stdout, &ev.exit);
		seen++;
		/* Line by line, so a pipe sees each record when it happens. */
		if (fflush(stdout)) {
			rc = errno == EPIPE ? JC_OK : JC_FAIL;
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
		"N rows, SECS seconds, or SIGINT. Needs CAP_NET_ADMIN.\n\n"
		"  -c, --count N         stop after N rows\n"
		"  -D, --duration SECS   stop after SECS seconds\n"
		"  -h, --help            this help\n",
		OUT_RECORD_HEADER);
}

int cmd_record(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "count", required_argument, NULL, 'c' },
		{ "duration", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	uint64_t count = 0, duration = 0, rows = 0, end = 0;
	const char *path;
	struct jnl *nl;
	FILE *fp;
	int c, err, rc = JC_OK;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "c:D:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			if (jc_parse_count(optarg, &count))
				return jc_usage("record", "bad count '%s'",
						optarg);
			break;
		case 'D':
			if (jc_parse_secs(optarg, &duration))
				return jc_usage(
					"record",
					"bad duration '%s' (positive seconds)",
					optarg);
			break;
		case 'h':
			record_usage(stdout);
			return JC_OK;
		default:
			return jc_bad_option("record", argc, argv);
		}
	}
	if (optind >= argc)
		return jc_usage("record", "missing FILE");
	if (optind + 1 < argc)
		return jc_usage("record", "unexpected argument '%s'",
				argv[optind + 1]);
	path = argv[optind];

	/* Subscribe first: a permission error should not leave an empty file. */
	if (jc_open(&nl))
		return JC_FAIL;
	if (subscribe(nl, JNL_GRP_SAMPLES)) {
		jnl_close(nl);
		return JC_FAIL;
	}
	fp = strcmp(path, "-") ? fopen(path, "w") : stdout;
	if (!fp) {
		jc_err("%s: %s", path, strerror(errno));
		jnl_close(nl);
		return JC_FAIL;
	}
	err = out_record_header(fp);
	if (err) {
		jc_err("%s: %s", path, strerror(-err));
		rc = JC_FAIL;
		goto out;
	}
	jc_catch_signals();
	if (duration)
		end = jc_now_ns() + duration;
	while (!jc_stop && (!count || rows < count)) {
		struct jnl_event ev;
		int timeout = -1, r;

		if (end) {
			uint64_t now = jc_now_ns();

			if (now >= end)
				break;
			timeout = (int)((end - now + 999999) / 1000000);
		}
		r = jnl_next_event(nl, &ev, timeout);
		if (r == -EINTR || r == 0)
			continue;
		if (r == -ENOBUFS) {
			jc_err("warning: %s: a row is missing (%lu times so far)",
			       jnl_strerror(JNL_OP_SUBSCRIBE, r),
			       jnl_events_lost(nl));
			continue;
		}
		if (r < 0) {
			jc_err("receive: %s", strerror(-r));
			rc = JC_FAIL;
			break;
		}
		if (ev.type != JNL_EV_SAMPLE)
			continue;
		err = out_record_row(fp, &ev.sample);
		if (err) {
			jc_err("%s: %s", path, strerror(-err));
			rc = JC_FAIL;
			break;
		}
		rows++;
	}
	if (fp != stdout)
		fprintf(stderr, "joulesctl: recorded %llu samples to %s\n",
			(unsigned long long)rows, path);
out:
	if (fp != stdout && fclose(fp) && rc == JC_OK) {
		jc_err("%s: %s", path, strerror(errno));
		rc = JC_FAIL;
	}
	jnl_close(nl);
	return rc;
}
