// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of joules-train: --apply against a fake sysfs, and the joules-train command line end
 * to end (inputs, meter, features, robust fitting, degenerate data).
 */
#include <gsl/gsl_multifit.h>

#include "csv.h"
#include "parse.h"
#include "train_util.h"

/* ---- --apply ---- */

/* apply: one write, generation must change, clear errors */
TEST(apply)
{
	struct jl_coef c = { .cpu_time_uw = 1,
			     .cycles_pj = 2,
			     .instructions_pj = 3,
			     .cache_miss_pj = 4,
			     .disk_byte_pj = 5,
			     .idle_uw = 6 };
	char dir[512], path[600], gen[600], err[512], want[128];
	int ret, status;
	pid_t pid;

	snprintf(dir, sizeof(dir), "%s/sysfs", tmpdir);
	ret = jt_apply(dir, &c, err, sizeof(err));
	CHECK(ret == -ENOENT && strstr(err, "not loaded"), "no dir: %d %s", ret,
	      err);

	mkdir(dir, 0755);
	snprintf(path, sizeof(path), "%s/model", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/model/coefficients", dir);
	snprintf(gen, sizeof(gen), "%s/model/generation", dir);
	ret = jt_apply(dir, &c, err, sizeof(err));
	CHECK(ret == -ENOENT && strstr(err, "generation"), "no generation: %s",
	      err);

	write_file(gen, "7\n");
	write_file(path, "");
	ret = jt_apply(dir, &c, err, sizeof(err));
	CHECK(ret == -EAGAIN && strstr(err, "stayed at 7"),
	      "unchanged generation: %s", err);

	/*
	 * FIFOs play the module: the child serves generation 7, takes the set
	 * in one read, then serves 8. Opening a FIFO blocks until the other
	 * side opens it, which orders the steps like a synchronous sysfs.
	 */
	unlink(path);
	unlink(gen);
	CHECK(mkfifo(path, 0600) == 0 && mkfifo(gen, 0600) == 0, "mkfifo");
	jl_coef_format(&c, want, sizeof(want));
	pid = fork();
	if (pid == 0) {
		char buf[256];
		ssize_t n;
		int fd;

		fd = open(gen, O_WRONLY);
		if (write(fd, "7\n", 2) != 2)
			_exit(2);
		close(fd);
		fd = open(path, O_RDONLY);
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		buf[n > 0 ? n : 0] = '\0';
		fd = open(gen, O_WRONLY);
		if (write(fd, "8\n", 2) != 2)
			_exit(2);
		close(fd);
		_exit(strcmp(buf, want) ? 1 : 0);
	}
	ret = jt_apply(dir, &c, err, sizeof(err));
	waitpid(pid, &status, 0);
	CHECK(ret == 0, "apply: %d %s", ret, ret ? err : "");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "module saw '%s' in one read", want);
	unlink(path);
	unlink(gen);
}

/* ---- CLI ---- */

/* cli: usage errors, fit, ms/pdu-cmd, bad lines, validation, apply, plot */
TEST(cli_end_to_end)
{
	char gp[4096], *file;
	struct jl_coef c;
	int rc;

	TT_NEED_CLI("cli: end to end");
	rc = run_cli("--help");
	CHECK(rc == 0 && strstr(cli_out, "Usage: joules-train"), "--help %d",
	      rc);
	rc = run_cli("");
	CHECK(rc == 2 && strstr(cli_err, "no samples"), "no args: %d %s", rc,
	      cli_err);
	rc = run_cli("-s x.csv -p y.csv --method lasso");
	CHECK(rc == 2 && strstr(cli_err, "--method 'lasso'"), "bad method: %d",
	      rc);
	rc = run_cli("-s x.csv -p y.csv -c true");
	CHECK(rc == 2, "-p and -c: %d", rc);

	write_inputs("s.csv", "p.csv", 400, 0, 1);
	rc = run_cli("-s s.csv -p p.csv -o coef.txt");
	CHECK(rc == 0, "fit: %d %s", rc, cli_err);
	{
		char path[600];

		snprintf(path, sizeof(path), "%s/coef.txt", tmpdir);
		file = slurp(path);
	}
	CHECK(file && jl_coef_parse(file, strlen(file), &c) == 0,
	      "coef.txt parses");
	if (file && !jl_coef_parse(file, strlen(file), &c))
		CHECK(fabs((double)c.cpu_time_uw - 6e6) < 0.02 * 6e6 &&
			      fabs((double)c.idle_uw - 4e7) < 0.02 * 4e7,
		      "cpu %llu idle %llu", (unsigned long long)c.cpu_time_uw,
		      (unsigned long long)c.idle_uw);
	CHECK(strstr(cli_out, "# node MAPE") &&
		      strstr(cli_out, "better than CPU-only"),
	      "summary on stdout: %s", cli_out);
	free(file);

	/* Milliseconds, auto-detected, no PMU columns, via --pdu-cmd. */
	write_inputs("s2.csv", "p2.csv", 200, 1, 0);
	rc = run_cli("-s s2.csv -c 'cat p2.csv' -k 3");
	CHECK(rc == 0 && strstr(cli_err, "look like Unix milliseconds") &&
		      strstr(cli_out,
			     "no PMU): cycles instructions cache_misses"),
	      "ms + pdu-cmd + no PMU: %d %s", rc, cli_err);

	/* A bad line fails by default, passes with --max-bad. */
	{
		char cmd[1024];

		snprintf(cmd, sizeof(cmd),
			 "cd '%s' && sed '5s/,/;/' p.csv > p3.csv", tmpdir);
		rc = system(cmd);
	}
	rc = run_cli("-s s.csv -p p3.csv");
	CHECK(rc == 1 && strstr(cli_err, "p3.csv:5: 1 fields") &&
		      strstr(cli_err, "more than --max-bad 0"),
	      "bad line: %d %s", rc, cli_err);
	rc = run_cli("-s s.csv -p p3.csv --max-bad 1");
	CHECK(rc == 0 && strstr(cli_err, "p3.csv:5:"), "--max-bad 1: %d", rc);

	/* Clocks that do not overlap: a clear error. */
	rc = run_cli("-s s.csv -p p.csv --clock-offset 100000");
	CHECK(rc == 1 && strstr(cli_err, "0 of 400 intervals aligned") &&
		      strstr(cli_err, "samples span"),
	      "offset: %d %s", rc, cli_err);

	/* Validation set. */
	write_inputs("v.csv", "vp.csv", 100, 0, 1);
	rc = run_cli(
		"-s s.csv -p p.csv --validate-samples v.csv --validate-pdu vp.csv -m ols");
	CHECK(rc == 0 && strstr(cli_out, "validation model") &&
		      strstr(cli_out, "(validation), "),
	      "validation: %d %s", rc, cli_err);

	/* --apply to a fake sysfs whose generation never moves. */
	{
		char path[600];

		snprintf(path, sizeof(path), "%s/fake", tmpdir);
		mkdir(path, 0755);
		snprintf(path, sizeof(path), "%s/fake/model", tmpdir);
		mkdir(path, 0755);
		snprintf(path, sizeof(path), "%s/fake/model/generation",
			 tmpdir);
		write_file(path, "1\n");
		snprintf(path, sizeof(path), "%s/fake/model/coefficients",
			 tmpdir);
		write_file(path, "");
	}
	rc = run_cli("-s s.csv -p p.csv --apply --sysfs fake -q");
	CHECK(rc == 3 && strstr(cli_err, "did not take"),
	      "apply unchanged: %d %s", rc, cli_err);
	rc = run_cli("-s s.csv -p p.csv --apply --sysfs nowhere -q");
	CHECK(rc == 3 && strstr(cli_err, "not loaded"), "apply no module: %d",
	      rc);

	if (jt_which("gnuplot", gp, sizeof(gp)) == 0) {
		char path[600];
		char *svg;

		rc = run_cli(
			"-s s.csv -p p.csv -o /dev/null -q --plot fit.svg");
		snprintf(path, sizeof(path), "%s/fit.svg", tmpdir);
		svg = slurp(path);
		CHECK(rc == 0 && svg && strstr(svg, "<svg"), "plot: %d %s", rc,
		      cli_err);
		free(svg);
	}
	rc = run_cli("-s s.csv -p p.csv --plot fit.pdf");
	CHECK(rc == 2 && strstr(cli_err, ".svg or .png"), "plot ext: %d", rc);
}

/* 0 if the process in pidfile (tmpdir-relative) is gone. */
static int pidfile_alive(const char *name)
{
	char path[600], *text;
	long pid;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	text = slurp(path);
	pid = text ? strtol(text, NULL, 10) : 0;
	free(text);
	if (pid <= 0)
		return -1;
	/* A zombie is dead: whoever inherited it just has not reaped it yet. */
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	text = slurp(path);
	if (text && *text && !strstr(text, ") Z ")) {
		free(text);
		kill((pid_t)pid, SIGKILL);
		return 1;
	}
	free(text);
	return 0;
}

/* cli: --pdu-cmd timeout, process group, --max-bad stops reading */
TEST(cli_pdu_cmd)
{
	double t0;
	int rc;

	TT_NEED_CLI("cli: --pdu-cmd timeout, process group, --max-bad");
	write_inputs("s.csv", "p.csv", 200, 0, 1);

	/* A reader that hangs: the timeout ends it, with a reason. */
	t0 = now_s();
	rc = run_cli("-s s.csv -c 'echo $$ > hang.pid; exec sleep 60' "
		     "--pdu-timeout 1");
	CHECK(rc == 1 && strstr(cli_err, "no output for 1 s"), "hang: %d %s",
	      rc, cli_err);
	CHECK(now_s() - t0 < 10, "ended after %.1f s", now_s() - t0);
	CHECK(pidfile_alive("hang.pid") == 0, "reader killed");

	/* Bad lines forever: reading stops once --max-bad is exceeded. */
	t0 = now_s();
	rc = run_cli("-s s.csv -c 'yes garbage' --max-bad 10");
	CHECK(rc == 1 && strstr(cli_err, "more than --max-bad 10"),
	      "bad forever: %d %.300s", rc, cli_err);
	CHECK(now_s() - t0 < 10, "stopped after %.1f s", now_s() - t0);

	/* Exit on a fatal error kills the reader's children too. */
	rc = run_cli("-s s.csv -c 'sleep 60 & echo $! > kid.pid; "
		     "echo garbage; wait'");
	CHECK(rc == 1, "bad line ends it: %d %s", rc, cli_err);
	usleep(200000);
	CHECK(pidfile_alive("kid.pid") == 0, "reader's child killed");

	/* SIGTERM to joules-train takes the reader's process group with it. */
	{
		char cmd[2048];
		pid_t pid;
		int st, i;

		snprintf(cmd, sizeof(cmd), "%s/kid2.pid", tmpdir);
		unlink(cmd);
		pid = fork();
		if (pid == 0) {
			if (chdir(tmpdir))
				_exit(126);
			execl(cli, "joules-train", "-s", "s.csv", "-c",
			      "sleep 60 & echo $! > kid2.pid; wait",
			      (char *)NULL);
			_exit(127);
		}
		for (i = 0; i < 100; i++) {
			struct stat sb;

			if (!stat(cmd, &sb) && sb.st_size > 0)
				break;
			usleep(50000);
		}
		usleep(100000);
		kill(pid, SIGTERM);
		waitpid(pid, &st, 0);
		CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM,
		      "joules-train died of SIGTERM: %#x", st);
		usleep(200000);
		CHECK(pidfile_alive("kid2.pid") == 0,
		      "reader's child gone after SIGTERM");
	}

	/* The reader does not share our stdin (the samples may come from there). */
	rc = run_cli("-s - -c 'cat > /dev/null; cat p.csv' < s.csv");
	CHECK(rc == 0, "stdin samples + reader: %d %s", rc, cli_err);
}

/* cli: BOM, 1e300 named by line, offset overflow, time spans */
TEST(cli_inputs)
{
	char cmd[1024];
	int rc;

	TT_NEED_CLI("cli: inputs named by file and line");
	write_inputs("s.csv", "p.csv", 200, 0, 1);
	snprintf(
		cmd, sizeof(cmd),
		"cd '%s' && printf '\\357\\273\\277' > sb.csv && cat s.csv >> sb.csv"
		" && awk -F, -v OFS=, 'NR == 10 { $2 = \"1e300\" } { print }' p.csv > pbig.csv",
		tmpdir);
	CHECK(system(cmd) == 0, "setup");
	rc = run_cli("-s sb.csv -p p.csv");
	CHECK(rc == 0, "BOM: %d %s", rc, cli_err);
	rc = run_cli("-s s.csv -p pbig.csv");
	CHECK(rc == 1 && strstr(cli_err, "pbig.csv:10: watts '1e300'") &&
		      !strstr(cli_err, "cannot set up the fit"),
	      "1e300: %d %s", rc, cli_err);
	rc = run_cli("-s s.csv -p p.csv --clock-offset -9000000000");
	CHECK(rc == 1 && strstr(cli_err, "0 of 200 intervals aligned"),
	      "offset -9e9 s: %d %s", rc, cli_err);
	/* The spans are printed whenever fewer than --min-samples align. */
	rc = run_cli("-s s.csv -p p.csv --clock-offset 190 --min-samples 50");
	CHECK(rc == 1 && strstr(cli_err, "intervals aligned") &&
		      strstr(cli_err, "samples span"),
	      "spans with some aligned: %d %s", rc, cli_err);
}

/*
 * Issue 18: socket bytes and page-cache reads flow from the recording to the
 * model; recorded on a kernel without them (empty columns), they stay 0.
 *
 * cli: socket and page-cache features fitted where recorded, 0 where absent
 */
TEST(cli_features)
{
	struct gen_opts g;
	struct jl_coef c;
	unsigned int wi = 0;
	double e;
	int rc;

	TT_NEED_CLI("cli: socket and page-cache features");
	gen_defaults(&g);
	g.n = 4000;
	g.extra = 1;
	gen_files("sx.csv", "px.csv", &g);
	rc = run_cli("-s sx.csv -p px.csv");
	e = cli_coef(&c) ? gen_coef_err(&c, &g, &wi) : 1;
	CHECK(rc == 0 && e < 0.02,
	      "all eight features: %d, %s off by %.2f%%: %s", rc,
	      jl_coef_names[wi], e * 100, cli_err);
	CHECK(c.net_tx_byte_pj && c.net_rx_byte_pj && c.pagecache_byte_pj,
	      "the new coefficients are fitted");
	CHECK(strstr(cli_out, "net_tx_byte") &&
		      strstr(cli_out, "pagecache_byte"),
	      "report names them: %s", cli_out);

	g.extra = 0;
	gen_files("sx.csv", "px.csv", &g);
	rc = run_cli("-s sx.csv -p px.csv");
	e = cli_coef(&c) ? gen_coef_err(&c, &g, &wi) : 1;
	CHECK(rc == 0 && e < 0.02 && !c.net_tx_byte_pj && !c.net_rx_byte_pj &&
		      !c.pagecache_byte_pj,
	      "absent columns: %d, %s off by %.2f%%, new ones 0", rc,
	      jl_coef_names[wi], e * 100);
}

/*
 * cli: 1 Hz meters against 100 ms and 1 s rows, instant and average
 * readings
 */
TEST(cli_meter)
{
	struct gen_opts g;
	struct jl_coef c;
	unsigned int wi = 0;
	double e;
	int rc;

	TT_NEED_CLI("cli: meter period and semantics");
	/*
	 * Issue 17 case 3: the module's 100 ms rows against a 1 Hz meter that
	 * reports the mean of each second. Fitting rows one by one gave 78 pJ
	 * per cycle for a true 300.
	 */
	gen_defaults(&g);
	g.n = 20000;
	g.ivl_ms = 100;
	g.meter_ms = 1000;
	g.meter = GEN_AVERAGE;
	g.phase_rows = 5;
	g.truth[1] = 300;
	/* Noise-free: the alignment alone must not bias anything. */
	g.noise = 0;
	gen_files("s3.csv", "p3.csv", &g);
	rc = run_cli("-s s3.csv -p p3.csv --meter average");
	e = cli_coef(&c) ? gen_coef_err(&c, &g, &wi) : 1;
	CHECK(rc == 0 && e < 0.001,
	      "average 1 Hz, 100 ms rows: %d, %s "
	      "off by %.1f%%: %s",
	      rc, jl_coef_names[wi], e * 100, cli_err);
	CHECK(strstr(cli_out, "summed into") &&
		      strstr(cli_out, "mean over the preceding"),
	      "aggregation reported: %s", cli_out);

	/* Instantaneous readings with 1% noise: each paired with its row. */
	g.meter = GEN_INSTANT;
	g.noise = 0.01;
	gen_files("s3.csv", "p3.csv", &g);
	rc = run_cli("-s s3.csv -p p3.csv --meter instant");
	e = cli_coef(&c) ? gen_coef_err(&c, &g, &wi) : 1;
	CHECK(rc == 0 && e < 0.10,
	      "instant 1 Hz, 100 ms rows: %d, %s "
	      "off by %.1f%%: %s",
	      rc, jl_coef_names[wi], e * 100, cli_err);
	CHECK(strstr(cli_out, "without a reading inside"),
	      "unused rows reported: %s", cli_out);

	/*
	 * Case 4: a PDU that averages over the preceding second, rows of a
	 * second: read as instantaneous the trace is half a period late.
	 */
	gen_defaults(&g);
	g.n = 3000;
	g.meter_ms = 1000;
	g.meter = GEN_AVERAGE;
	g.phase_rows = 3;
	gen_files("s4.csv", "p4.csv", &g);
	rc = run_cli("-s s4.csv -p p4.csv --meter average");
	e = cli_coef(&c) ? gen_coef_err(&c, &g, &wi) : 1;
	CHECK(rc == 0 && e < 0.05,
	      "average 1 Hz, 1 s rows: %d, %s off "
	      "by %.1f%%: %s",
	      rc, jl_coef_names[wi], e * 100, cli_err);
	rc = run_cli("-s s4.csv -p p4.csv --meter sometimes");
	CHECK(rc == 2 && strstr(cli_err, "--meter"), "bad --meter: %d", rc);
}

/*
 * cli: one bad value: impossible ones are bad lines, plausible ones
 * rejected by line (issue 17 case 1)
 */
TEST(cli_robust)
{
	struct gen_opts g;
	struct jl_coef c, c0;
	double clean6[JL_NR_COEF];
	unsigned int wi = 0;
	double e;
	int rc;

	TT_NEED_CLI("cli: one bad value (issue 17 case 1)");
	gen_defaults(&g);
	g.n = 4000;
	g.ivl_ms = 250;
	gen_files("s1.csv", "p1.csv", &g);

	/* Impossible values are bad lines, named; the rest fits well. */
	edit_csv("s1.csv", "s1a.csv", 2001, 8, "1000000000000000");
	rc = run_cli("-s s1a.csv -p p1.csv --max-bad 1");
	e = cli_coef(&c) ? gen_coef_err(&c, &g, &wi) : 1;
	CHECK(rc == 0 && strstr(cli_err, "s1a.csv:2001: cpu_ns") && e < 0.03,
	      "cpu_ns 1e15: %d, %s off by %.1f%%: %s", rc, jl_coef_names[wi],
	      e * 100, cli_err);
	edit_csv("s1.csv", "s1b.csv", 2001, 9, "18446744073709550616");
	rc = run_cli("-s s1b.csv -p p1.csv");
	CHECK(rc == 1 && strstr(cli_err, "s1b.csv:2001: cycles"),
	      "wrapped counter: %d %s", rc, cli_err);

	/* A plausible but wrong value: rejected by the fit, named. */
	edit_csv("s1.csv", "s1c.csv", 2001, 8, "40000000000");
	rc = run_cli("-s s1c.csv -p p1.csv");
	e = cli_coef(&c) ? gen_coef_err(&c, &g, &wi) : 1;
	CHECK(rc == 0 && strstr(cli_out, "# rejected: s1c.csv:2001") &&
		      e < 0.03,
	      "cpu_ns x160: %d, %s off by %.1f%%: %s", rc, jl_coef_names[wi],
	      e * 100, cli_out);
	/*
	 * Its meter readings are named by their lines: the same readings one
	 * line further down when a bad line comes before them (the lines no
	 * longer follow each other, so each reading's is kept).
	 */
	{
		const char *at = strstr(cli_out, "s1c.csv:2001 (p1.csv:");
		unsigned long lo = 0, hi = 0, lo2 = 0, hi2 = 0;
		char cmd[1024];

		CHECK(at &&
			      sscanf(at, "s1c.csv:2001 (p1.csv:%lu-%lu)", &lo,
				     &hi) == 2 &&
			      lo > 3 && hi >= lo,
		      "readings named: %s", cli_out);
		snprintf(cmd, sizeof(cmd),
			 "cd '%s' && awk 'NR == 3 { print \"x,y\" } { print }' "
			 "p1.csv > p1x.csv",
			 tmpdir);
		CHECK(!system(cmd), "%s", cmd);
		rc = run_cli("-s s1c.csv -p p1x.csv --max-bad 1");
		at = strstr(cli_out, "s1c.csv:2001 (p1x.csv:");
		CHECK(rc == 0 && at &&
			      sscanf(at, "s1c.csv:2001 (p1x.csv:%lu-%lu)", &lo2,
				     &hi2) == 2 &&
			      lo2 == lo + 1 && hi2 == hi + 1,
		      "%lu-%lu, after a bad line %lu-%lu: %s", lo, hi, lo2, hi2,
		      cli_out);
	}

	/*
	 * Meter glitches with an averaging 1 Hz meter and no cycles term: one
	 * glitch must leave the fit where the clean recording puts it.
	 */
	g.meter_ms = 1000;
	g.meter = GEN_AVERAGE;
	g.truth[1] = 0;
	gen_files("s1.csv", "p1.csv", &g);
	rc = run_cli("-s s1.csv -p p1.csv --meter average");
	CHECK(rc == 0 && cli_coef(&c0), "clean: %d %s", rc, cli_err);
	for (unsigned int i = 0; i < JL_NR_COEF; i++)
		clean6[i] = (double)jl_coef_get(&c0, i);
	edit_csv("p1.csv", "p1d.csv", 500, 2, "100000");
	rc = run_cli("-s s1.csv -p p1d.csv --meter average");
	e = cli_coef(&c) ? coef_err(&c, clean6, ALL_COEFS, &wi) : 1;
	CHECK(rc == 0 && strstr(cli_out, "(p1d.csv:500)") && e < 0.01 &&
		      c.cycles_pj < 30,
	      "100 kW: %d, %s moved by %.1f%%, cycles %llu: %s", rc,
	      jl_coef_names[wi], e * 100, (unsigned long long)c.cycles_pj,
	      cli_out);
	edit_csv("p1.csv", "p1e.csv", 500, 2, "0");
	rc = run_cli("-s s1.csv -p p1e.csv --meter average");
	e = cli_coef(&c) ? coef_err(&c, clean6, ALL_COEFS, &wi) : 1;
	CHECK(rc == 0 && strstr(cli_out, "(p1e.csv:500)") && e < 0.01 &&
		      c.cycles_pj < 30,
	      "0 W dropout: %d, %s moved by %.1f%%, cycles %llu", rc,
	      jl_coef_names[wi], e * 100, (unsigned long long)c.cycles_pj);
	rc = run_cli("-s s1.csv -p p1d.csv --meter average --robust off");
	e = cli_coef(&c) ? gen_coef_err(&c, &g, &wi) : 0;
	CHECK(rc != 2 && e > 0.2 && !strstr(cli_out, "# rejected"),
	      "--robust off: %d, %s off by %.1f%%", rc, jl_coef_names[wi],
	      e * 100);
	rc = run_cli("-s s1.csv -p p1d.csv --robust maybe");
	CHECK(rc == 2, "bad --robust: %d", rc);
}

/*
 * cli: degenerate models refused by --apply (exit 3), written with a
 * warning (exit 4); collinear ones refused without --ridge (cases 2, 5)
 */
TEST(cli_degenerate)
{
	struct gen_opts g;
	char path[600], *file;
	int rc;

	TT_NEED_CLI("cli: degenerate models are not applied");
	gen_defaults(&g);
	g.n = 500;
	gen_files("s2.csv", "p2.csv", &g);
	{
		char cmd[1024];

		snprintf(
			cmd, sizeof(cmd),
			"cd '%s' && awk -F, -v OFS=, 'NR > 1 { $2 = 0 } { print }' "
			"p2.csv > p2z.csv && mkdir -p fake2/model && "
			"echo 1 > fake2/model/generation && "
			": > fake2/model/coefficients",
			tmpdir);
		CHECK(system(cmd) == 0, "setup");
	}
	/* A meter that reads 0 W throughout: --apply refuses, exit 3. */
	rc = run_cli("-s s2.csv -p p2z.csv --apply --sysfs fake2 -o c2.txt");
	snprintf(path, sizeof(path), "%s/fake2/model/coefficients", tmpdir);
	file = slurp(path);
	CHECK(rc == 3 && strstr(cli_err, "--apply: refusing") && file && !*file,
	      "zero meter --apply: %d, sysfs '%s': %s", rc, file ? file : "?",
	      cli_err);
	free(file);
	/* Writing it still works, with a warning and its own status. */
	rc = run_cli("-s s2.csv -p p2z.csv -o c2.txt -q");
	snprintf(path, sizeof(path), "%s/c2.txt", tmpdir);
	file = slurp(path);
	CHECK(rc == 4 && strstr(cli_err, "implausible") && file &&
		      strstr(file, "# warning: implausible model"),
	      "zero meter to a file: %d %s", rc, cli_err);
	free(file);

	/* Collinear features: named, with their uncertainty (case 5). */
	gen_defaults(&g);
	g.n = 5000;
	g.spread = 0.02;
	g.phase_rows = 10;
	gen_files("s5.csv", "p5.csv", &g);
	/* Issue 27: refused (nothing written) unless --ridge is given. */
	rc = run_cli("-s s5.csv -p p5.csv");
	CHECK(rc == 1 && strstr(cli_err, "refused: ") &&
		      strstr(cli_err, "cannot be separated") &&
		      strstr(cli_err, "instructions") &&
		      strstr(cli_err, "--ridge") &&
		      !cli_coef(&(struct jl_coef){ 0 }),
	      "collinear refused: %d %s %s", rc, cli_err, cli_out);
	rc = run_cli("-s s5.csv -p p5.csv --ridge 0.001");
	CHECK((rc == 0 || rc == 4) && strstr(cli_out, "cannot be separated") &&
		      cli_coef(&(struct jl_coef){ 0 }),
	      "collinear with --ridge: written, named: %d %s %s", rc, cli_err,
	      cli_out);
	/* Whatever OLS makes of it, a model worse than CPU-only is no success. */
	rc = run_cli("-s s5.csv -p p5.csv -m ols");
	CHECK(!(rc == 0 && strstr(cli_out, "worse than CPU-only")),
	      "ols collinear: %d %s", rc, cli_out);
}

TT_MAIN("test_train_cli")
