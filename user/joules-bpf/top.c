// SPDX-License-Identifier: GPL-2.0
/*
 * joules-bpf top: processes sorted by power, with user/lib/out.c's table
 * (the one joulesctl top prints). Power needs coefficients; without them
 * the table still sorts by CPU.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "jb.h"

static void top_usage(FILE *fp)
{
	fprintf(fp,
		"Usage: joules-bpf top [-d SECS] [-n ITERATIONS] [-b] [-H] [-m ROWS]\n"
		"                      [-C FILE | --coef LINE] [--max-tasks N]\n\n"
		"Processes sorted by power (model energy per second over the last refresh\n"
		"interval, with coefficients) and CPU use, like top(1). Uses the running\n"
		"collector, or loads one for its own lifetime when none runs (tasks then\n"
		"count from that moment).\n\n"
		"  -d, --delay SECS         refresh interval (default 2, fractions allowed)\n"
		"  -n, --iterations N       print N frames, then exit\n"
		"  -b, --batch              no screen control, even on a terminal\n"
		"  -H, --threads            one row per thread instead of per process\n"
		"  -m, --max-rows ROWS      at most ROWS rows per frame\n"
		"%s"
		"  -h, --help               this help\n",
		JB_COMMON_HELP);
}

static int snapshot(struct jb_coll *c, const struct jb_opts *o, bool threads,
		    struct top_state *ts, struct jb_snap *node)
{
	struct task_rec *recs;
	struct jb_snap s;
	int n, err;

	err = jb_snap_take(c, &s, true);
	if (err) {
		jb_err("reading the collector's maps: %s", strerror(-err));
		return err;
	}
	n = jb_records(&s, o, threads, &recs);
	if (n < 0) {
		jb_snap_free(&s);
		jb_err("out of memory");
		return n;
	}
	err = top_update(ts, recs, (size_t)n, s.mono_ns);
	free(recs);
	jb_snap_free(&s);
	*node = s;
	if (err)
		jb_err("out of memory");
	return err;
}

int cmd_top(int argc, char **argv)
{
	static const struct option opts[] = {
		JB_COMMON_LONG,
		{ "delay", required_argument, NULL, 'd' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "batch", no_argument, NULL, 'b' },
		{ "threads", no_argument, NULL, 'H' },
		{ "max-rows", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	uint64_t delay = 2000000000ull, iterations = 0, max_rows = 0;
	bool batch = false, threads = false, interactive, own;
	struct jb_snap prev, cur;
	struct top_state ts;
	struct jb_opts o;
	struct jb_coll c;
	int ch, rc;

	jb_opts_init(&o);
	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, JB_COMMON_SHORT "d:n:bHm:h", opts,
				 NULL)) != -1) {
		rc = jb_common_opt(&o, "top", ch, optarg);
		if (rc == 1)
			continue;
		if (rc)
			return rc;
		switch (ch) {
		case 'd':
			if (jb_parse_secs(optarg, &delay))
				return jb_usage(
					"top",
					"bad delay '%s' (positive seconds)",
					optarg);
			break;
		case 'n':
			if (jb_parse_count(optarg, &iterations))
				return jb_usage("top",
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
			if (jb_parse_count(optarg, &max_rows))
				return jb_usage("top", "bad row count '%s'",
						optarg);
			break;
		case 'h':
			top_usage(stdout);
			return JB_OK;
		default:
			return jb_bad_option("top", argc, argv);
		}
	}
	if (optind < argc)
		return jb_usage("top", "unexpected argument '%s'",
				argv[optind]);
	interactive = !batch && isatty(STDOUT_FILENO);
	if (jb_check_root())
		return JB_FAIL;
	jb_catch_signals();
	if (jb_coll_get(&c, &o, &own))
		return JB_FAIL;

	rc = JB_OK;
	top_init(&ts);
	if (snapshot(&c, &o, threads, &ts, &prev)) {
		rc = JB_FAIL;
		goto out;
	}
	for (uint64_t i = 0; !iterations || i < iterations; i++) {
		char summary[200], clock[16];
		size_t rows = (size_t)max_rows;
		double dt, cpu;
		time_t now;
		int n;

		jb_sleep_ns(delay);
		if (jb_stop)
			break;
		if (snapshot(&c, &o, threads, &ts, &cur)) {
			rc = JB_FAIL;
			break;
		}
		now = time(NULL);
		strftime(clock, sizeof(clock), "%H:%M:%S", localtime(&now));
		dt = (double)(cur.mono_ns - prev.mono_ns) / 1e9;
		cpu = dt > 0 ? (double)(cur.node.cpu_ns - prev.node.cpu_ns) /
				       1e7 / dt :
			       0;
		n = snprintf(
			summary, sizeof(summary),
			"joules-bpf top - %s, every %.3g s, collector %s, tasks %.1f%% CPU",
			clock, (double)delay / 1e9, own ? "private" : "shared",
			cpu);
		if (o.have_coef && dt > 0) {
			struct jl_feat f = { .present = (1u << JL_F_CPU_NS) |
							(1u << JL_F_DISK) };
			jl_u64 rem = 0, uj;

			f.v[JL_F_CPU_NS] = cur.node.cpu_ns - prev.node.cpu_ns;
			f.v[JL_F_DISK] =
				cur.node.read_bytes + cur.node.write_bytes -
				prev.node.read_bytes - prev.node.write_bytes;
			for (int h = 0; h < JB_NR_HW; h++) {
				if (!(c.meta.hw_present & (1u << h)))
					continue;
				f.v[JL_F_CYCLES + h] =
					cur.node.hw[h] - prev.node.hw[h];
				f.present |= 1u << (JL_F_CYCLES + h);
			}
			uj = jl_fj_to_uj(jl_model_fj(&o.coef, &f), &rem);
			snprintf(summary + n, sizeof(summary) - (size_t)n,
				 ", model: tasks %.3f W + idle %.3f W",
				 (double)uj / 1e6 / dt,
				 (double)o.coef.idle_uw / 1e6);
		}
		prev = cur;
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
			rc = jb_stop ? JB_OK : JB_FAIL;
			break;
		}
	}
out:
	top_free(&ts);
	jb_coll_close(&c);
	return rc;
}
