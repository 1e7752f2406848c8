// SPDX-License-Identifier: GPL-2.0
/*
 * joules-bpf record: node samples in joulesctl record's CSV (the trainer's
 * input), from the collector's per-CPU node totals. Each sample is the
 * growth of those totals since the previous one; with coefficients its
 * energy is the core's model of the sample's features plus idle power over
 * its length, as the module computes it in model mode.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "jb.h"

static void record_usage(FILE *fp)
{
	fprintf(fp,
		"Usage: joules-bpf record [-i SECS] [-c N] [-D SECS] [-C FILE | --coef LINE]\n"
		"                         [--max-tasks N] FILE\n\n"
		"Write node samples to FILE ('-' for standard output) as CSV, one row per\n"
		"interval, flushed line by line, for joules-train. Columns:\n"
		"  %s\n"
		"Features are the interval's deltas; hardware counters without a PMU are\n"
		"empty fields; tasks counts tasks charged in the interval. energy_uj and\n"
		"idle_uj need coefficients (source model), else they are 0 with source\n"
		"none. Uses the running collector, or loads one for its own lifetime.\n\n"
		"  -i, --interval SECS      sampling interval (default 1)\n"
		"  -c, --count N            stop after N rows\n"
		"  -D, --duration SECS      stop after SECS seconds\n"
		"%s"
		"  -h, --help               this help\n",
		OUT_RECORD_HEADER, JB_COMMON_HELP);
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int cmd_record(int argc, char **argv)
{
	static const struct option opts[] = {
		JB_COMMON_LONG,
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'c' },
		{ "duration", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	uint64_t interval = 1000000000ull, count = 0, duration = 0, rows = 0,
		 end = 0, next;
	jl_u64 task_rem = 0, idle_rem = 0;
	struct jb_snap prev, cur;
	const char *path;
	struct jb_opts o;
	struct jb_coll c;
	FILE *fp;
	bool own;
	int ch, rc, err;

	jb_opts_init(&o);
	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, JB_COMMON_SHORT "i:c:D:h", opts,
				 NULL)) != -1) {
		rc = jb_common_opt(&o, "record", ch, optarg);
		if (rc == 1)
			continue;
		if (rc)
			return rc;
		switch (ch) {
		case 'i':
			if (jb_parse_secs(optarg, &interval) ||
			    interval < 10000000ull)
				return jb_usage(
					"record",
					"bad interval '%s' (at least 0.01 s)",
					optarg);
			break;
		case 'c':
			if (jb_parse_count(optarg, &count))
				return jb_usage("record", "bad count '%s'",
						optarg);
			break;
		case 'D':
			if (jb_parse_secs(optarg, &duration))
				return jb_usage(
					"record",
					"bad duration '%s' (positive seconds)",
					optarg);
			break;
		case 'h':
			record_usage(stdout);
			return JB_OK;
		default:
			return jb_bad_option("record", argc, argv);
		}
	}
	if (optind >= argc)
		return jb_usage("record", "missing FILE");
	if (optind + 1 < argc)
		return jb_usage("record", "unexpected argument '%s'",
				argv[optind + 1]);
	path = argv[optind];
	if (jb_check_root())
		return JB_FAIL;
	jb_catch_signals();
	/* Collector first: a permission or BTF error should not leave an empty file. */
	if (jb_coll_get(&c, &o, &own))
		return JB_FAIL;
	fp = strcmp(path, "-") ? fopen(path, "w") : stdout;
	if (!fp) {
		jb_err("%s: %s", path, strerror(errno));
		jb_coll_close(&c);
		return JB_FAIL;
	}
	rc = JB_OK;
	err = out_record_header(fp);
	/* A new epoch, so the first sample counts the tasks charged in it. */
	c.meta.epoch++;
	if (!err)
		err = jb_coll_write_meta(&c);
	if (!err)
		err = jb_node_read(&c, &prev);
	if (err) {
		jb_err("%s: %s", path, strerror(-err));
		rc = JB_FAIL;
		goto out;
	}
	if (duration)
		end = prev.mono_ns + duration;
	next = prev.mono_ns;
	while (!jb_stop && (!count || rows < count)) {
		struct sample_rec smp;
		struct jl_feat f;
		uint64_t now = jb_now_ns();

		next += interval;
		/* Fell behind (a stall): skip the missed slots, no runt rows. */
		if (next <= now)
			next = now + interval;
		if (end && next > end)
			break;
		if (next > now)
			jb_sleep_ns(next - now);
		if (jb_stop)
			break;
		/* Tasks charged from now on count in the next sample. */
		c.meta.epoch++;
		err = jb_coll_write_meta(&c);
		if (!err)
			err = jb_node_read(&c, &cur);
		if (err) {
			jb_err("reading the collector's maps: %s",
			       strerror(-err));
			rc = JB_FAIL;
			break;
		}
		memset(&smp, 0, sizeof(smp));
		smp.seq = rows + 1;
		smp.realtime_ns = realtime_ns();
		smp.monotonic_ns = cur.mono_ns;
		smp.interval_ns = cur.mono_ns - prev.mono_ns;
		smp.nr_tasks = (uint32_t)(cur.ran - prev.ran);
		smp.present = REC_F(REC_CPU_NS) | REC_F(REC_DISK_BYTES) |
			      (c.meta.hw_present << REC_CYCLES);
		smp.feat[REC_CPU_NS] = cur.node.cpu_ns - prev.node.cpu_ns;
		smp.feat[REC_DISK_BYTES] =
			cur.node.read_bytes + cur.node.write_bytes -
			prev.node.read_bytes - prev.node.write_bytes;
		for (int h = 0; h < JB_NR_HW; h++)
			if (c.meta.hw_present & (1u << h))
				smp.feat[REC_CYCLES + h] =
					cur.node.hw[h] - prev.node.hw[h];
		if (o.have_coef) {
			uint64_t task_uj;

			for (int i = 0; i < JL_NR_FEATURES; i++)
				f.v[i] = smp.feat[i];
			f.present = smp.present;
			task_uj = jl_fj_to_uj(jl_model_fj(&o.coef, &f),
					      &task_rem);
			smp.idle_uj = jl_fj_to_uj(
				jl_power_fj(o.coef.idle_uw, smp.interval_ns),
				&idle_rem);
			smp.energy_uj = task_uj + smp.idle_uj;
			smp.source = REC_SRC_MODEL;
			smp.model_generation = 1;
		}
		err = out_record_row(fp, &smp);
		if (err) {
			jb_err("%s: %s", path, strerror(-err));
			rc = JB_FAIL;
			break;
		}
		prev = cur;
		rows++;
	}
	if (fp != stdout)
		fprintf(stderr, "joules-bpf: recorded %llu samples to %s\n",
			(unsigned long long)rows, path);
out:
	if (fp != stdout && fclose(fp) && rc == JB_OK) {
		jb_err("%s: %s", path, strerror(errno));
		rc = JB_FAIL;
	}
	jb_coll_close(&c);
	return rc;
}
