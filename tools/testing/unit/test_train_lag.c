// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of joules-train: alignment measured, not assumed (issue
 * 27): the meter's lag by cross-correlation, corrected or refused, an
 * explicit --clock-offset kept with a warning, and a step of the samples'
 * wall clock mended from the monotonic one.
 */
#include "train_util.h"

/* tmpdir/in -> out with each meter timestamp (s.fraction) moved by secs. */
static void shift_meter(const char *in, const char *out, int secs)
{
	char cmd[1024];

	snprintf(
		cmd, sizeof(cmd),
		"cd '%s' && awk -F, -v OFS=, 'NR == 1 && $1 !~ /^[0-9]/ { print; "
		"next } { n = split($1, a, \".\"); $1 = (a[1] + %d) (n > 1 ? "
		"\".\" a[2] : \"\"); print }' %s > %s",
		tmpdir, secs, in, out);
	if (system(cmd))
		DIAG("%s failed", cmd);
}

/*
 * tmpdir/in -> out with realtime_ns (field 1) of the data rows from line
 * `from` on moved by step_ns: the wall clock stepped, monotonic did not.
 */
static void step_samples(const char *in, const char *out, unsigned long from,
			 long long step_ns)
{
	char pi[600], po[600], line[4096];
	unsigned long no = 0;
	FILE *fi, *fo;

	snprintf(pi, sizeof(pi), "%s/%s", tmpdir, in);
	snprintf(po, sizeof(po), "%s/%s", tmpdir, out);
	fi = fopen(pi, "r");
	fo = fopen(po, "w");
	while (fi && fo && fgets(line, sizeof(line), fi)) {
		long long rt;
		int used = 0;

		no++;
		if (no >= from && sscanf(line, "%lld%n", &rt, &used) == 1 &&
		    line[used] == ',')
			fprintf(fo, "%lld%s", rt + step_ns, line + used);
		else
			fputs(line, fo);
	}
	if (fi)
		fclose(fi);
	if (fo)
		fclose(fo);
}

/* "# lag: the meter trails the activity by %f s" of the last run. */
static double reported_lag(void)
{
	const char *p =
		strstr(cli_out, "# lag: the meter trails the activity by ");
	double v = NAN;

	if (p)
		sscanf(p, "# lag: the meter trails the activity by %lf", &v);
	return v;
}

/*
 * 3000 one-second rows, a phase-structured load (as a real node), a meter
 * reading the power every 250 ms on its own phase.
 */
static void files(struct gen_opts *g)
{
	gen_defaults(g);
	g->n = 3000;
	g->noise = 0.01;
	g->phase_rows = 4;
	g->meter_ms = 250;
	gen_files("gs.csv", "gp.csv", g);
}

/* lag: a meter 2 s late is measured, reported and corrected */
TEST(lag_corrected)
{
	struct gen_opts g;
	struct jl_coef c;
	unsigned int wi = 0;
	double e = 1, lag;
	int rc;

	TT_NEED_CLI("lag: corrected");
	files(&g);
	shift_meter("gp.csv", "gp2.csv", 2);
	rc = run_cli("-s gs.csv -p gp2.csv");
	lag = reported_lag();
	if (rc == 0 && cli_coef(&c))
		e = gen_coef_err(&c, &g, &wi);
	/* The grid is a fifth of a row (0.2 s); the parabola refines within it. */
	CHECK(fabs(lag - 2) <= 0.1, "lag %.3f s reported (want 2 +- 0.1): %s",
	      lag, cli_out);
	CHECK(rc == 0 && strstr(cli_out, "; corrected;") && e < 0.02,
	      "2 s late meter: rc %d, %s off by %.2f%%: %s", rc,
	      jl_coef_names[wi], e * 100, cli_err);
}

/* lag: beyond 10 s refused; an explicit --clock-offset wins */
TEST(lag_refused)
{
	struct gen_opts g;
	int rc;

	TT_NEED_CLI("lag: refused beyond 10 s");
	files(&g);
	shift_meter("gp.csv", "gp12.csv", 12);
	unlink_tmp("o.txt");
	rc = run_cli("-s gs.csv -p gp12.csv -o o.txt");
	CHECK(rc == 1 && strstr(cli_err, "refused: ") &&
		      strstr(cli_err, "more than 10 s") && !slurp_tmp("o.txt"),
	      "12 s: rc %d %s", rc, cli_err);
	/* An explicit offset wins; where it is right, no warning. */
	rc = run_cli("-s gs.csv -p gp12.csv -o o.txt --clock-offset -12");
	CHECK(rc == 0 && !strstr(cli_err, "warning: the data put"),
	      "--clock-offset -12: rc %d %s", rc, cli_err);
}

/*
 * lag: an explicit --clock-offset is kept, with a warning when the data
 * disagree by more than 0.5 s
 */
TEST(lag_explicit_warns)
{
	struct gen_opts g;
	double lag;
	int rc;

	TT_NEED_CLI("lag: explicit offset disagreeing");
	files(&g);
	shift_meter("gp.csv", "gp2.csv", 2);
	rc = run_cli("-s gs.csv -p gp2.csv --clock-offset 0");
	lag = reported_lag();
	CHECK(rc != 2 &&
		      strstr(cli_err, "warning: the data put the meter +2") &&
		      strstr(cli_out, "--clock-offset given: kept") &&
		      fabs(lag - 2) <= 0.1,
	      "kept with a warning: rc %d lag %.3f %s", rc, lag, cli_err);
}

/*
 * clock: a realtime step monotonic does not show is found, the alignment
 * kept continuous
 */
TEST(clock_step)
{
	struct gen_opts g;
	struct jl_coef c;
	unsigned int wi = 0;
	double e = 1;
	int rc;

	TT_NEED_CLI("clock step");
	files(&g);
	/* Data line 1500 on: the wall clock jumped 30 s ahead. */
	step_samples("gs.csv", "gs_step.csv", 1501, 30000000000LL);
	rc = run_cli("-s gs_step.csv -p gp.csv");
	if (rc == 0 && cli_coef(&c))
		e = gen_coef_err(&c, &g, &wi);
	CHECK(rc == 0 &&
		      strstr(cli_err,
			     "gs_step.csv:1501: realtime_ns steps by +30") &&
		      strstr(cli_out, "# clock: realtime_ns steps") && e < 0.02,
	      "step: rc %d, %s off by %.2f%%: %s %s", rc, jl_coef_names[wi],
	      e * 100, cli_err, cli_out);
	/* Backwards: rows earlier by wall clock, in order by monotonic. */
	step_samples("gs.csv", "gs_back.csv", 1501, -30000000000LL);
	rc = run_cli("-s gs_back.csv -p gp.csv");
	e = 1;
	if (rc == 0 && cli_coef(&c))
		e = gen_coef_err(&c, &g, &wi);
	CHECK(rc == 0 && strstr(cli_err, "steps by -30") && e < 0.02,
	      "back step: rc %d, %s off by %.2f%%: %s", rc, jl_coef_names[wi],
	      e * 100, cli_err);
}

TT_MAIN("test_train_lag")
