// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of joules-train: --follow: continuous recalibration through the command line.
 */
#include <gsl/gsl_multifit.h>

#include "csv.h"
#include "parse.h"
#include "train_util.h"

/* ---- --follow ---- */

/*
 * cli: --follow follows a changed node within 3 refits; 0 W, 10 kW and a
 * stall are rejected, the model kept; the module's set is the one in force
 */
TEST(cli_follow)
{
	static const double truth2[JL_NR_COEF] = { 9e6, 1500, 800, 60000, 10000,
						   0,	0,    0,   55e6 };
	const char *args =
		"--follow -s fs.csv -p fp.csv -o fm.txt --log fl.txt "
		"--window 250 --refit 100 --bands 1";
	char *log, *before, *after, *line;
	unsigned int wi = 0, after_change = 0, applied_at = 0;
	struct gen_opts g;
	struct jl_coef c;
	double t[JL_NR_COEF], e = 1;
	int rc;

	TT_NEED_CLI("cli: --follow");
	/* The node changes at row 1500 (about 1500 s in: refit 15). */
	gen_defaults(&g);
	g.n = 2200;
	g.noise = 0.003;
	g.change_row = 1500;
	memcpy(g.truth2, truth2, sizeof(truth2));
	gen_files("fs.csv", "fp.csv", &g);
	unlink_tmp("fm.txt");
	unlink_tmp("fl.txt");
	rc = run_cli(args);
	log = slurp_tmp("fl.txt");
	CHECK(rc == 0 && log && strstr(log, "end of input"), "ran: %d %s", rc,
	      cli_err);
	/* Which refit after the change applied the first new set. */
	for (line = log; line && *line;
	     line = strchr(line, '\n') ? strchr(line, '\n') + 1 : "") {
		unsigned int k;

		if (sscanf(line, "%*s refit %u:", &k) != 1 || k <= 15)
			continue;
		after_change = k - 15;
		if (!strncmp(strchr(line, ':') ? strstr(line, ": ") + 2 : "",
			     "applied", 7)) {
			applied_at = after_change;
			break;
		}
	}
	CHECK(applied_at >= 1 && applied_at <= 3,
	      "applied %u refits after the change", applied_at);
	memcpy(t, truth2, sizeof(t));
	if (file_coef("fm.txt", &c))
		e = coef_err(&c, t, ALL_COEFS, &wi);
	CHECK(e < 0.05, "follows the new truth: %s off by %.2f%%",
	      jl_coef_names[wi], e * 100);
	free(log);

	/* A burst of 0 W readings after the model settled: never applied. */
	g.change_row = 0;
	g.n = 1230;
	gen_files("fs.csv", "fp.csv", &g);
	unlink_tmp("fm.txt");
	unlink_tmp("fl.txt");
	rc = run_cli(args);
	before = slurp_tmp("fm.txt");
	g.n = 1400;
	g.bogus_row = 1240;
	g.bogus_n = 20;
	g.bogus_w = 0;
	gen_files("fs.csv", "fp.csv", &g);
	unlink_tmp("fl.txt");
	rc = run_cli(args);
	after = slurp_tmp("fm.txt");
	log = slurp_tmp("fl.txt");
	CHECK(rc == 0 && before && after && !strcmp(before, after),
	      "output unchanged by the burst: %d", rc);
	CHECK(log && strstr(log, "refit 13: rejected: meter glitch") &&
		      !strstr(strstr(log, "refit 13:"), "applied:"),
	      "log: %s", log ? log : "");
	free(log);
	free(after);

	/* 10 kW spikes, then a stall across a refit. */
	g.bogus_w = 10000;
	gen_files("fs.csv", "fp.csv", &g);
	unlink_tmp("fl.txt");
	rc = run_cli(args);
	after = slurp_tmp("fm.txt");
	log = slurp_tmp("fl.txt");
	CHECK(rc == 0 && after && !strcmp(before, after) && log &&
		      strstr(log, "refit 13: rejected: meter glitch"),
	      "10 kW: %d %s", rc, log ? log : "");
	free(log);
	free(after);
	g.stall = 1;
	g.bogus_row = 1270;
	g.bogus_n = 40;
	gen_files("fs.csv", "fp.csv", &g);
	unlink_tmp("fl.txt");
	rc = run_cli(args);
	after = slurp_tmp("fm.txt");
	log = slurp_tmp("fl.txt");
	CHECK(rc == 0 && after && !strcmp(before, after) && log &&
		      strstr(log, "rejected: meter stalled"),
	      "stall: %d %s", rc, log ? log : "");
	free(log);
	free(after);
	free(before);

	/* SIGTERM ends it cleanly; a missing meter input is an error. */
	rc = run_cli(
		"--follow -s - -p fp.csv -o fm.txt --window 250 --refit 100 "
		"< /dev/null");
	CHECK(rc == 0, "empty samples: %d %s", rc, cli_err);
	rc = run_cli("--follow -s fs.csv -p nonexistent.csv -o fm.txt");
	CHECK(rc == 1 && strstr(cli_err, "nonexistent"), "no meter: %d", rc);
	rc = run_cli("--follow -s fs.csv -p fp.csv");
	CHECK(rc == 2, "--follow needs a target: %d", rc);
	{
		char logp[600];
		int in[2], st = -1;
		pid_t pid = -1;
		double t0;

		snprintf(logp, sizeof(logp), "%s/fs.log", tmpdir);
		unlink(logp);
		if (pipe(in) == 0 && (pid = fork()) == 0) {
			dup2(in[0], STDIN_FILENO);
			close(in[1]);
			if (chdir(tmpdir))
				_exit(126);
			execl(cli, cli, "--follow", "-s", "-", "-c",
			      "sleep 600", "-o", "fm.txt", "--log", "fs.log",
			      (char *)NULL);
			_exit(127);
		} else if (pid > 0) {
			close(in[0]);
			usleep(500000);
			kill(pid, SIGTERM);
			t0 = now_s();
			while (waitpid(pid, &st, WNOHANG) == 0 &&
			       now_s() - t0 < 10)
				usleep(10000);
			if (now_s() - t0 >= 10)
				kill(pid, SIGKILL), waitpid(pid, &st, 0);
			close(in[1]);
		}
		log = slurp(logp);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0 && log &&
			      strstr(log, "stopped by signal 15"),
		      "SIGTERM: status %d, log %s", st, log ? log : "");
		free(log);
	}

	/*
	 * With --apply the module's model is the set in force: the truth
	 * itself is kept; a bad one is replaced (the fake sysfs's generation
	 * never moves, so the install is seen to fail); no module, no run.
	 */
	{
		char truth[400], cmd[1200];
		const char *fargs =
			"--follow -s fs.csv -p fp.csv --apply --sysfs fsys "
			"--log fl2.txt --window 250 --refit 100 --bands 1";

		gen_defaults(&g);
		g.n = 800;
		g.noise = 0.003;
		gen_files("fs.csv", "fp.csv", &g);
		gen_truth_line(&g, truth, sizeof(truth));
		snprintf(
			cmd, sizeof(cmd),
			"cd '%s' && mkdir -p fsys/model && echo 1 > fsys/model/generation && "
			"echo 'max %s' > fsys/model/bands && : > fsys/model/coefficients",
			tmpdir, truth);
		CHECK(system(cmd) == 0, "fake sysfs");
		unlink_tmp("fl2.txt");
		rc = run_cli(fargs);
		log = slurp_tmp("fl2.txt");
		CHECK(rc == 0 && log && strstr(log, "kept:") &&
			      !strstr(log, "applied:") &&
			      !strstr(log, "install failed"),
		      "the truth in force is kept: %d %s", rc, log ? log : "");
		free(log);
		snprintf(
			cmd, sizeof(cmd),
			"cd '%s' && echo 'max 1000000 0 0 0 0 0 0 0 1000000' > fsys/model/bands",
			tmpdir);
		CHECK(system(cmd) == 0, "fake sysfs, bad set");
		unlink_tmp("fl2.txt");
		rc = run_cli(fargs);
		log = slurp_tmp("fl2.txt");
		CHECK(log && strstr(log, "install failed") &&
			      strstr(log, "stayed at 1"),
		      "a bad set in force is replaced: %d %s", rc,
		      log ? log : "");
		free(log);
		rc = run_cli(
			"--follow -s fs.csv -p fp.csv --apply --sysfs nosuchdir");
		CHECK(rc != 0 && strstr(cli_err, "nosuchdir"),
		      "no module: %d %s", rc, cli_err);
	}
}

/*
 * Issue 27: --follow reads its inputs in chunks, and a bad line is named
 * by the file's own line number, not the chunk's.
 *
 * cli: --follow names bad lines by the file's own line number
 */
TEST(follow_lines)
{
	struct gen_opts g;
	int rc;

	TT_NEED_CLI("cli: --follow line numbers");
	gen_defaults(&g);
	g.n = 4000; /* about 500 KB of samples: several reads */
	g.noise = 0.003;
	gen_files("ls.csv", "lp.csv", &g);
	/* Line 3500 of the samples, line 7001 of the meter. */
	edit_csv("ls.csv", "ls2.csv", 3500, 3, "x");
	edit_csv("lp.csv", "lp2.csv", 7001, 2, "y");
	rc = run_cli("--follow -s ls2.csv -p lp2.csv -o lo.txt --log ll.txt "
		     "--window 600 --refit 300 --bands 1");
	CHECK(strstr(cli_err, "ls2.csv:3500: interval_ns") &&
		      strstr(cli_err, "lp2.csv:7001: "),
	      "file lines: rc %d %s", rc, cli_err);
}

TT_MAIN("test_train_follow")
