// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of joules-train: a model that cannot be absurd is never
 * written (issue 27): meter units and meaning named from the data, bounds
 * on idle, per-CPU and node power (overridable), too few intervals, a
 * frequency stand-in above 10 GHz, the node's CPU count, a quantised
 * meter's robust scale, half-open intervals; one-shot and --follow.
 */
#include "train_util.h"

/* Rewrite tmpdir/in's watts (field 2, after the header) by an awk expr of w. */
static void map_watts(const char *in, const char *out, const char *expr)
{
	char cmd[1024];

	snprintf(
		cmd, sizeof(cmd),
		"cd '%s' && awk -F, -v OFS=, 'NR == 1 && $2 !~ /^[0-9.]/ "
		"{ print; next } { w = $2; $2 = sprintf(\"%%.6f\", %s); print }' "
		"%s > %s",
		tmpdir, expr, in, out);
	if (system(cmd))
		DIAG("%s failed", cmd);
}

/* A file of tmpdir exists (the model was written)? */
static int exists_tmp(const char *name)
{
	char path[600];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	return access(path, F_OK) == 0;
}

/* A 1 kHz-free recording: 1500 rows of the default node (40 W idle). */
static void base_files(void)
{
	struct gen_opts g;

	gen_defaults(&g);
	g.n = 1500;
	g.noise = 0.01;
	gen_files("rs.csv", "rp.csv", &g);
}

/*
 * The meter's unit: readings in mW (1000x) or kW (1/1000) fit a node of
 * 40 kW idle or 40 mW idle with exit 0 before; now refused, the unit named,
 * nothing written. The recorded energy_uj (2.5x below the meter in the
 * generator) is what tells the unit.
 *
 * refuse: a meter in mW or kW is named and refused, nothing written or
 * installed
 */
TEST(units)
{
	int rc;

	TT_NEED_CLI("refuse: mW and kW meters");
	base_files();
	map_watts("rp.csv", "rp_mw.csv", "w * 1000");
	map_watts("rp.csv", "rp_kw.csv", "w / 1000");
	unlink_tmp("o.txt");
	rc = run_cli("-s rs.csv -p rp_mw.csv -o o.txt");
	CHECK(rc == 1 && strstr(cli_err, "refused: ") &&
		      strstr(cli_err, "mW") && !exists_tmp("o.txt"),
	      "mW: %d %s", rc, cli_err);
	rc = run_cli("-s rs.csv -p rp_kw.csv -o o.txt");
	CHECK(rc == 1 && strstr(cli_err, "kW") && !exists_tmp("o.txt"),
	      "kW: %d %s", rc, cli_err);
	/* --apply never installs it either. */
	rc = run_cli("-s rs.csv -p rp_mw.csv --apply --sysfs nosuchdir");
	CHECK(rc == 1 && strstr(cli_err, "mW") && !strstr(cli_err, "nosuchdir"),
	      "mW --apply: %d %s", rc, cli_err);
	/* The same meter in W is fine. */
	rc = run_cli("-s rs.csv -p rp.csv -o o.txt");
	CHECK(rc == 0 && exists_tmp("o.txt"), "W: %d %s", rc, cli_err);
}

/* The meaning: a cumulative energy counter (J) read as power. *
 * refuse: a cumulative energy meter is named and refused
 */
TEST(cumulative)
{
	char cmd[1024];
	int rc;

	TT_NEED_CLI("refuse: cumulative meter");
	base_files();
	/* Running sum of power x time: joules since the first reading. */
	snprintf(
		cmd, sizeof(cmd),
		"cd '%s' && awk -F, -v OFS=, 'NR == 1 && $2 !~ /^[0-9.]/ "
		"{ print; next } { if (t0 != \"\") e += $2 * ($1 - t0); t0 = $1; "
		"$2 = sprintf(\"%%.6f\", e); print }' rp.csv > rp_cum.csv",
		tmpdir);
	CHECK(system(cmd) == 0, "cumulative meter file");
	unlink_tmp("o.txt");
	rc = run_cli("-s rs.csv -p rp_cum.csv -o o.txt");
	CHECK(rc == 1 && strstr(cli_err, "cumulative energy") &&
		      !exists_tmp("o.txt"),
	      "cumulative: %d %s", rc, cli_err);
}

/*
 * Bounds on the model, overridable: the default node (40 W idle, 6 W per
 * busy CPU) passes the defaults and fails tighter limits, each by name.
 *
 * refuse: idle, per-CPU and node power bounds, overridable
 */
TEST(bounds)
{
	int rc;

	TT_NEED_CLI("refuse: bounds");
	base_files();
	rc = run_cli("-s rs.csv -p rp.csv --max-idle-watts 30");
	CHECK(rc == 1 && strstr(cli_err, "idle power") &&
		      strstr(cli_err, "--max-idle-watts"),
	      "idle bound: %d %s", rc, cli_err);
	rc = run_cli("-s rs.csv -p rp.csv --max-cpu-watts 5");
	CHECK(rc == 1 && strstr(cli_err, "per busy CPU") &&
		      strstr(cli_err, "--max-cpu-watts"),
	      "cpu bound: %d %s", rc, cli_err);
	rc = run_cli("-s rs.csv -p rp.csv --max-node-watts 45");
	CHECK(rc == 1 && strstr(cli_err, "--max-node-watts"),
	      "node bound: %d %s", rc, cli_err);
	rc = run_cli(
		"-s rs.csv -p rp.csv --max-idle-watts 41 --max-cpu-watts 7 "
		"--max-node-watts 15000");
	CHECK(rc == 0, "within bounds: %d %s", rc, cli_err);
	rc = run_cli("-s rs.csv -p rp.csv --max-cpu-watts -3");
	CHECK(rc == 2, "bad bound: %d %s", rc, cli_err);
}

/* Fewer intervals than two per coefficient: a fit says nothing. *
 * refuse: fewer than two intervals per coefficient
 */
TEST(too_few)
{
	struct gen_opts g;
	int rc;

	TT_NEED_CLI("refuse: too few intervals");
	gen_defaults(&g);
	g.n = 12;
	gen_files("fs.csv", "fp.csv", &g);
	rc = run_cli("-s fs.csv -p fp.csv --min-samples 1 -k 0");
	CHECK(rc == 1 && strstr(cli_err, "per coefficient") &&
		      !strstr(cli_out, "MAPE 0.0"),
	      "12 rows, 6 coefficients: %d %s %s", rc, cli_err, cli_out);
}

/* cycles per ns of CPU time above 10 GHz: not cycles. *
 * refuse: a frequency stand-in above 10 GHz, by line
 */
TEST(frequency)
{
	char cmd[1024];
	int rc;

	TT_NEED_CLI("refuse: frequency above 10 GHz");
	base_files();
	/* The cycles column (9) times 5: 5..17.5 GHz. */
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && awk -F, -v OFS=, '/^#/ || !h { if (!/^#/) h = 1; "
		 "print; next } { $9 = sprintf(\"%%.0f\", $9 * 5); print }' "
		 "rs.csv > rs_ghz.csv",
		 tmpdir);
	CHECK(system(cmd) == 0, "file");
	rc = run_cli("-s rs_ghz.csv -p rp.csv");
	CHECK(rc == 1 && strstr(cli_err, "above 10 GHz") &&
		      strstr(cli_err, "rs_ghz.csv:") &&
		      strstr(cli_err, "cycles per ns"),
	      "5x cycles: %d %s", rc, cli_err);
	/* The recorded frequency (17) times 5, cycles as they were. */
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && awk -F, -v OFS=, '/^#/ || !h { if (!/^#/) h = 1; "
		 "print; next } { $17 = sprintf(\"%%.0f\", $17 * 5); print }' "
		 "rs.csv > rs_mhz.csv",
		 tmpdir);
	CHECK(system(cmd) == 0, "file");
	rc = run_cli("-s rs_mhz.csv -p rp.csv");
	CHECK(rc == 1 && strstr(cli_err, "above 10 GHz") &&
		      strstr(cli_err, "(freq_mhz)"),
	      "5x freq_mhz: %d %s", rc, cli_err);
}

/*
 * A running task's runtime advances at scheduler ticks, so an interval's
 * cpu_ns may run up to one tick (10 ms at HZ=100, the coarsest) per CPU
 * past interval_ns times the CPU count: 2.08 busy CPUs in 100 ms rows on
 * 2 CPUs is the kernel's granularity (seen on a 1-CPU guest: 1.038), not
 * another node's CPU time; 2.5 is.
 *
 * refuse: busy CPUs past the count by less than a tick per interval are
 * accepted, by more refused
 */
TEST(node_facts_tick)
{
	struct gen_opts g;
	char cmd[1400];
	int rc;

	TT_NEED_CLI("refuse: node facts, a tick's slack");
	gen_defaults(&g);
	g.n = 1500;
	g.noise = 0.01;
	g.ivl_ms = 100;
	gen_files("rs.csv", "rp.csv", &g);
	for (int i = 0; i < 2; i++) {
		double peak = i ? 2.5 : 2.08;

		/* cpu_ns (field 8) scaled so that the busiest row has peak CPUs. */
		snprintf(
			cmd, sizeof(cmd),
			"cd '%s' && awk -F, -v OFS=, -v peak=%g '"
			"NR == FNR { if ($8 ~ /^[0-9]/ && $3 > 0 && $8 / $3 > m) m = $8 / $3; next }"
			"FNR == 1 { print \"# node: cpus=2 packages=1 energy=rapl:package\" }"
			"$8 ~ /^[0-9]/ { $8 = sprintf(\"%%.0f\", $8 * peak / m) } { print }' "
			"rs.csv rs.csv > rs_tick.csv",
			tmpdir, peak);
		CHECK(system(cmd) == 0, "file");
		rc = run_cli("-s rs_tick.csv -p rp.csv");
		if (i)
			CHECK(rc == 1 && strstr(cli_err, "busy CPUs"),
			      "2.5 on 2 CPUs: %d %s", rc, cli_err);
		else
			CHECK(!strstr(cli_err, "busy CPUs"),
			      "2.08 on 2 CPUs: %d %s", rc, cli_err);
	}
}

/* The node's facts: more busy CPUs than the recording's CPU count. *
 * refuse: more busy CPUs than the recording's node has
 */
TEST(node_facts)
{
	char cmd[1024];
	int rc;

	TT_NEED_CLI("refuse: node facts");
	base_files();
	/* The generator's load is up to 2 busy CPUs. */
	snprintf(
		cmd, sizeof(cmd),
		"cd '%s' && { echo '# node: cpus=1 packages=1 energy=rapl:package'; "
		"cat rs.csv; } > rs_1cpu.csv && "
		"{ echo '# node: cpus=4 packages=1 energy=rapl:package'; "
		"cat rs.csv; } > rs_4cpu.csv",
		tmpdir);
	CHECK(system(cmd) == 0, "files");
	rc = run_cli("-s rs_1cpu.csv -p rp.csv");
	CHECK(rc == 1 && strstr(cli_err, "busy CPUs") &&
		      strstr(cli_err, "has 1"),
	      "1 CPU: %d %s", rc, cli_err);
	rc = run_cli("-s rs_4cpu.csv -p rp.csv");
	CHECK(rc == 0, "4 CPUs: %d %s", rc, cli_err);
}

/*
 * A quantised meter: a node idle at exactly 171 W most of the time, read
 * in whole watts. Exact idle rows collapse the robust scale to nothing and
 * every loaded row (off by up to 0.5 W of rounding) looks like an outlier;
 * floored at the meter's resolution (1 W), none is.
 *
 * quantised meter: the robust scale is floored at the resolution found in
 * the readings
 */
TEST(quantised)
{
	const size_t n = 900;
	struct jt_samples s = { 0 };
	struct jt_meter m;
	struct jt_row *rows = NULL;
	struct jt_align_stats st;
	struct jt_train_opts o = { .method = FIT_NNLS,
				   .folds = 5,
				   .min_samples = 20 };
	struct jt_report rep = { 0 };
	char why[256];
	double res = 0;
	size_t i, nr = 0;
	int ret;

	s.s = calloc(n, sizeof(*s.s));
	jt_meter_init(&m, PARSE_TS_AUTO, 0);
	m.t = calloc(2 * n, sizeof(*m.t));
	m.w = calloc(2 * n, sizeof(*m.w));
	s.present = (1u << JL_F_CPU_NS) | (1u << JL_F_DISK);
	for (i = 0; i < n; i++) {
		int64_t end =
			1796220916000000000LL + (int64_t)(i + 1) * 1000000000LL;
		int idle = i % 9 < 5;
		double busy = idle ? 0 : rng_unif(0.2, 8), disk;
		double w;

		disk = idle ? 0 : rng_unif(0, 3e8);
		s.s[i] = (struct jt_sample){ .end_ns = end,
					     .interval_ns = 1e9,
					     .energy_uj = -1,
					     .line = 2 + i };
		s.s[i].f[JL_F_CPU_NS] = busy * 1e9;
		s.s[i].f[JL_F_DISK] = disk;
		/* 171 W idle, 12 W per CPU, 20 nJ per byte; whole watts. */
		w = nearbyint(171 + 12 * busy + 2e-8 * disk +
			      0.3 * rng_gauss());
		if (idle)
			w = 171;
		m.t[2 * i] = end - 1000000000LL + 1000000;
		m.t[2 * i + 1] = end - 1000000;
		m.w[2 * i] = m.w[2 * i + 1] = w;
	}
	s.n = n;
	m.n = 2 * n;
	ret = jt_align(&s, &m, 0, 5000000000LL, &rows, &nr, &st);
	/* The first and last rows reach 1 ms beyond the readings. */
	CHECK(ret == 0 && nr == n - 2, "aligned %zu", nr);
	CHECK(jt_meter_kind(&m, &res, why, sizeof(why)) == 0 && res == 1,
	      "resolution %g W (want 1)", res);
	o.scale_floor_w = res;
	diag_begin();
	ret = jt_train(rows, nr, s.present, &o, &rep, NULL, NULL);
	diag_end();
	/*
	 * Rounding is off by at most 0.5 W plus the 0.3 W noise: within the
	 * bisquare's 4.685 x 1 W, so nothing is rejected.
	 */
	CHECK(ret == 0 && rep.robust_scale_w >= 1 && rep.n_rejected == 0,
	      "scale %g W, %zu of %zu rejected", rep.robust_scale_w,
	      rep.n_rejected, nr);
	free(rows);
	free(s.s);
	jt_meter_free(&m);
}

/* A reading exactly on a row boundary belongs to one row, not both. *
 * alignment: intervals are half open, a boundary reading is used once
 */
TEST(half_open)
{
	struct jt_samples s = { 0 };
	struct jt_meter m;
	struct jt_row *rows = NULL;
	struct jt_align_stats st;
	static int64_t t[4];
	static double w[4] = { 100, 1000, 100, 100 };
	const int64_t t0 = 1796220916000000000LL, sec = 1000000000LL;
	size_t n = 0;

	s.s = calloc(2, sizeof(*s.s));
	s.n = 2;
	s.present = 1u << JL_F_CPU_NS;
	s.s[0] = (struct jt_sample){ .end_ns = t0 + sec,
				     .interval_ns = 1e9,
				     .energy_uj = -1,
				     .line = 2 };
	s.s[1] = (struct jt_sample){ .end_ns = t0 + 2 * sec,
				     .interval_ns = 1e9,
				     .energy_uj = -1,
				     .line = 3 };
	/* Readings at 0.5 s, exactly 1 s (the boundary), 1.5 s and 2.5 s. */
	t[0] = t0 + sec / 2;
	t[1] = t0 + sec;
	t[2] = t0 + 3 * sec / 2;
	t[3] = t0 + 5 * sec / 2;
	jt_meter_init(&m, PARSE_TS_AUTO, 0);
	m.t = t;
	m.w = w;
	m.n = 4;
	m.sem = JT_METER_INSTANT;
	/* The readings start at 0.5 s: only cover (0.5, 2.5]. */
	s.s[0].interval_ns = 0.5e9;
	jt_align(&s, &m, 0, 5 * sec, &rows, &n, &st);
	CHECK(n == 2, "two rows: %zu", n);
	/* Row 1 (0.5, 1]: the 1000 W reading; row 2 (1, 2]: 1.5 s only. */
	CHECK(n == 2 && fabs(jt_row_watts(&rows[0]) - 1000) < 1e-9 &&
		      fabs(jt_row_watts(&rows[1]) - 100) < 1e-9,
	      "row powers %g, %g W (want 1000, 100)",
	      n ? jt_row_watts(&rows[0]) : 0,
	      n > 1 ? jt_row_watts(&rows[1]) : 0);
	free(rows);
	free(s.s);
}

/* --follow refuses the same models: a mW meter is never installed. *
 * --follow: an absurd refit is rejected with the reason, never installed
 */
TEST(follow)
{
	char *log;
	int rc;

	TT_NEED_CLI("refuse: --follow");
	base_files();
	map_watts("rp.csv", "rp_mw.csv", "w * 1000");
	unlink_tmp("fo.txt");
	unlink_tmp("fl.txt");
	rc = run_cli("--follow -s rs.csv -p rp_mw.csv -o fo.txt --log fl.txt "
		     "--window 600 --refit 300 --bands 1");
	log = slurp_tmp("fl.txt");
	CHECK(rc == 0 && log && strstr(log, "rejected: ") &&
		      strstr(log, "mW") && !strstr(log, "applied:") &&
		      !exists_tmp("fo.txt"),
	      "follow mW: %d %s %s", rc, log ? log : "", cli_err);
	free(log);
}

TT_MAIN("test_train_refuse")
