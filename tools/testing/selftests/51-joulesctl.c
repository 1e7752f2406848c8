// SPDX-License-Identifier: GPL-2.0
/*
 * joulesctl against the booted module: record's CSV, show against the
 * per-pid file, top without a terminal, watch, node, set, permission
 * errors for an unprivileged user and the message when the module is not
 * loaded.
 */
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdbool.h>

#include "selftest.h"

#define COEF JOULES_SYSFS "/model/coefficients"
#define GEN JOULES_SYSFS "/model/generation"
#define CSV_HEADER                                                                        \
	"realtime_ns,monotonic_ns,interval_ns,source,model_generation,energy_uj,idle_uj," \
	"cpu_ns,cycles,instructions,cache_misses,disk_bytes,tasks,"                       \
	"net_tx_bytes,net_rx_bytes,pagecache_bytes,freq_mhz,band"
#define CSV_FIELDS 18

/*
 * Every test: 1 W per CPU-second and 0.5 W idle (QEMU has no RAPL); the
 * module's settings put back afterwards, from the parent (also after a
 * crash), and the module loaded again after the test that unloads it.
 */
FIXTURE(jc)
{
	struct st_settings saved;
};

FIXTURE_SETUP(jc)
{
	st_settings_save(&self->saved);
	ASSERT_EQ(0, st_write(COEF, "1000000 0 0 0 0 500000\n", 23));
}

FIXTURE_TEARDOWN_PARENT(jc)
{
	EXPECT_EQ(0, st_load());
	EXPECT_EQ(0, st_settings_restore(&self->saved));
}

/* A child that burns CPU until killed. */
static pid_t spinner(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		volatile unsigned long x = 0;

		for (;;)
			x++;
	}
	return pid;
}

static void stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static bool all_digits(const char *s, size_t len)
{
	if (!len)
		return false;
	for (size_t i = 0; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* Split a CSV line (no quoting in our output) into at most max fields. */
static int split(char *line, char **f, int max)
{
	int n = 0;

	f[n++] = line;
	for (char *p = line; *p && n < max; p++)
		if (*p == ',') {
			*p = 0;
			f[n++] = p + 1;
		}
	return n;
}

TEST_F(jc, record)
{
	unsigned long long gen = 0, iv = (unsigned long long)st_interval_ms() *
					 1000000ull;
	unsigned long long prev_rt = 0, prev_mono = 0;
	char genbuf[32], *line, *next;
	int rc, rows = 0, bad = 0;

	if (st_read(GEN, genbuf, sizeof(genbuf)) > 0)
		gen = strtoull(genbuf, NULL, 10);
	rc = ST_JC(0, "record", "--count", "5", "/tmp/rec.csv");
	CHECK(rc == 0, "record exit %d: %s", rc, st_err);
	ASSERT_LT(0, st_read("/tmp/rec.csv", st_out, sizeof(st_out)))
	TH_LOG("record wrote no file");
	/*
	 * First the node's facts for joules-train: its CPU count is what
	 * the kernel says (sysconf), then the header.
	 */
	line = st_out;
	next = strchr(line, '\n');
	{
		char want[64];

		snprintf(want, sizeof(want), "# node: cpus=%ld packages=",
			 sysconf(_SC_NPROCESSORS_CONF));
		CHECK(next && !strncmp(line, want, strlen(want)),
		      "node facts '%.*s', want '%s'",
		      next ? (int)(next - line) : 0, line, want);
		if (next)
			line = next + 1;
	}
	next = strchr(line, '\n');
	CHECK(next != NULL, "no header line");
	if (next && strchr(next + 1, '\n'))
		DIAG("first row: %.*s",
		     (int)(strchr(next + 1, '\n') - next - 1), next + 1);
	if (!next) {
		/* Up to here: record: CSV */
		return;
	}
	*next++ = 0;
	CHECK(!strcmp(line, CSV_HEADER), "header '%s'", line);
	for (line = next; *line; line = next) {
		char *f[CSV_FIELDS + 2];
		int n;

		next = strchr(line, '\n');
		if (!next) {
			CHECK(0, "row %d not terminated", rows + 1);
			break;
		}
		*next++ = 0;
		n = split(line, f, CSV_FIELDS + 2);
		rows++;
		if (n != CSV_FIELDS) {
			CHECK(0, "row %d has %d fields", rows, n);
			bad++;
			continue;
		}
		for (int i = 0; i < CSV_FIELDS; i++) {
			size_t len = strlen(f[i]);

			if (i == 3) {
				if (strcmp(f[i], "model") &&
				    strcmp(f[i], "rapl"))
					bad += !CHECK(0, "row %d source '%s'",
						      rows, f[i]);
			} else if ((i >= 8 && i <= 10) ||
				   (i >= 13 && i <= 16)) {
				/*
				 * PMU counters, socket bytes (6.3+), the
				 * frequency: a number or empty (absent).
				 */
				if (len && !all_digits(f[i], len))
					bad += !CHECK(0, "row %d field %d '%s'",
						      rows, i, f[i]);
			} else if (!all_digits(f[i], len)) {
				bad += !CHECK(0, "row %d field %d '%s'", rows,
					      i, f[i]);
			}
		}
		if (strtoull(f[0], NULL, 10) <= prev_rt ||
		    strtoull(f[1], NULL, 10) <= prev_mono)
			bad += !CHECK(0, "row %d: timestamps do not increase",
				      rows);
		/*
		 * Every sample is written and the samples tile time: an
		 * interval is exactly the step of monotonic_ns from the row
		 * before (one clock reading ends one and starts the next).
		 * How long a tick takes under emulation is not asserted;
		 * only that it never comes early.
		 */
		if (prev_mono && strtoull(f[2], NULL, 10) !=
					 strtoull(f[1], NULL, 10) - prev_mono)
			bad += !CHECK(
				0,
				"row %d interval_ns %s, monotonic_ns step %llu (%s)",
				rows, f[2],
				strtoull(f[1], NULL, 10) - prev_mono, st_err);
		if (strtoull(f[2], NULL, 10) < iv / 2)
			bad += !CHECK(0, "row %d interval_ns %s vs %llu", rows,
				      f[2], iv);
		prev_rt = strtoull(f[0], NULL, 10);
		prev_mono = strtoull(f[1], NULL, 10);
		if (strtoull(f[4], NULL, 10) != gen)
			bad += !CHECK(0, "row %d generation %s vs %llu", rows,
				      f[4], gen);
		if (strtoull(f[6], NULL, 10) > strtoull(f[5], NULL, 10))
			bad += !CHECK(0, "row %d idle %s > energy %s", rows,
				      f[6], f[5]);
	}
	rc = ST_JC(0, "record", "--count", "5", "/tmp/rec.csv");
	CHECK(rc == 0, "record exit %d: %s", rc, st_err);
	ASSERT_LT(0, st_read("/tmp/rec.csv", st_out, sizeof(st_out)))
	TH_LOG("record wrote no file");
	/*
	 * First the node's facts for joules-train: its CPU count is what
	 * the kernel says (sysconf), then the header.
	 */
	line = st_out;
	next = strchr(line, '\n');
	{
		char want[64];

		snprintf(want, sizeof(want), "# node: cpus=%ld packages=",
			 sysconf(_SC_NPROCESSORS_CONF));
		CHECK(next && !strncmp(line, want, strlen(want)),
		      "node facts '%.*s', want '%s'",
		      next ? (int)(next - line) : 0, line, want);
		if (next)
			line = next + 1;
	}
	next = strchr(line, '\n');
	CHECK(next != NULL, "no header line");
}

/*
 * record --duration 1 stops after a second, with rows for the intervals
 * that ended while it ran: each row's monotonic_ns inside the run. How many
 * intervals fit in a second under emulation is the host's load, so only
 * one is required.
 */
TEST_F(jc, record_duration)
{
	double t0 = st_now(), dt;
	int rc, rows = 0, outside = 0;
	char *p, *line;

	rc = ST_JC(0, "record", "--duration", "1", "/tmp/rec2.csv");
	dt = st_now() - t0;
	CHECK(rc == 0, "exit %d: %s", rc, st_err);
	CHECK(dt >= 0.9 && dt < 5, "ran %.2f s", dt);
	ASSERT_LT(0, st_read("/tmp/rec2.csv", st_out, sizeof(st_out)));
	for (line = st_out; (p = strchr(line, '\n')); line = p + 1) {
		double mono;

		/* Rows start with digits: realtime_ns,monotonic_ns,... */
		if (*line < '0' || *line > '9' || !strchr(line, ','))
			continue;
		rows++;
		mono = strtoull(strchr(line, ',') + 1, NULL, 10) / 1e9;
		outside += mono < t0 || mono > t0 + dt;
	}
	CHECK(rows >= 1, "%d rows in %.2f s at %u ms", rows, dt,
	      st_interval_ms());
	CHECK(outside == 0, "%d of %d rows end outside the run [%.3f, %.3f]",
	      outside, rows, t0, t0 + dt);
}

/* record and watch as uid 65534: permission error explained, no file */
TEST_F(jc, record_unpriv)
{
	int rc;

	unlink("/tmp/rec3.csv");
	rc = ST_JC(65534, "record", "--count", "1", "/tmp/rec3.csv");
	CHECK(rc == 1, "exit %d", rc);
	CHECK(strstr(st_err, "permission denied") &&
		      strstr(st_err, "CAP_SYS_ADMIN"),
	      "stderr '%s'", st_err);
	CHECK(access("/tmp/rec3.csv", F_OK) != 0, "a file was left behind");
	rc = ST_JC(65534, "watch", "-n", "1");
	CHECK(rc == 1 && strstr(st_err, "CAP_SYS_ADMIN"), "watch: exit %d '%s'",
	      rc, st_err);
}

/* Every key of the per-pid file is in `show`'s output with the same value for identity. */
TEST_F(jc, show)
{
	char path[64], file[4096], pidstr[16], v1[64], v2[64];
	pid_t pid = spinner();
	int rc, missing = 0;

	usleep(3 * st_interval_ms() * 1000);
	snprintf(pidstr, sizeof(pidstr), "%d", pid);
	snprintf(path, sizeof(path), "/proc/energy/%d", pid);
	rc = ST_JC(0, "show", pidstr);
	CHECK(rc == 0, "show exit %d: %s", rc, st_err);
	CHECK(st_read(path, file, sizeof(file)) > 0, "read %s", path);
	for (char *l = file; *l;) {
		char *e = strchr(l, '\n'), *c = strchr(l, ':');
		char key[64];

		if (!e)
			break;
		if (c && c < e && (size_t)(c - l) < sizeof(key)) {
			char want[80];

			memcpy(key, l, (size_t)(c - l));
			key[c - l] = 0;
			snprintf(want, sizeof(want), "\n%s:", key);
			if (strncmp(st_out, want + 1, strlen(want + 1)) &&
			    !strstr(st_out, want)) {
				CHECK(0, "key '%s' missing from show", key);
				missing++;
			}
		}
		l = e + 1;
	}
	CHECK(!missing, "%d keys missing", missing);
	CHECK(!st_kvs(st_out, "pid", v1, sizeof(v1)) && !strcmp(v1, pidstr),
	      "pid '%s'", v1);
	CHECK(!st_kvs(st_out, "comm", v1, sizeof(v1)) &&
		      !st_kvs(file, "comm", v2, sizeof(v2)) && !strcmp(v1, v2),
	      "comm '%s' vs '%s'", v1, v2);
	CHECK(!st_kvs(st_out, "source", v1, sizeof(v1)) && !strcmp(v1, "model"),
	      "source '%s'", v1);
	rc = ST_JC(0, "show", "--json", pidstr);
	snprintf(v1, sizeof(v1), "{\"pid\":%d,", pid);
	CHECK(rc == 0 && !strncmp(st_out, v1, strlen(v1)) &&
		      strstr(st_out, "\"energy_uj\":"),
	      "json '%s'", st_out);
	rc = ST_JC(65534, "show", pidstr);
	CHECK(rc == 1 && strstr(st_err, "permission denied"),
	      "nobody: exit %d '%s'", rc, st_err);
	rc = ST_JC(0, "show", "4194000");
	CHECK(rc == 1 && strstr(st_err, "no such process"),
	      "missing: exit %d '%s'", rc, st_err);
	stop(pid);
}

/* top -n 2 without a terminal: two frames, the busy task first at ~1 W */
TEST_F(jc, top)
{
	char pidstr[16], *frame2, *row;
	pid_t pid = spinner();
	int rc, frames = 0;
	double w = -1, lo, hi, f_lo, f_hi;
	struct st_frame_mark m[2];

	snprintf(pidstr, sizeof(pidstr), "%d", pid);
	usleep(2 * st_interval_ms() * 1000);
	rc = st_jc_frames(
		(const char *const[]){ "top", "-n", "2", "-d", "0.5", NULL },
		st_task_usage_usec, &pid, m, 2);
	stop(pid);
	CHECK(rc == 0, "top exit %d: %s", rc, st_err);
	for (char *p = st_out; (p = strstr(p, "joulesctl top - ")); p++)
		frames++;
	CHECK(frames == 2, "%d frames for -n 2", frames);
	CHECK(!strchr(st_out, '\033'), "escape sequences without a terminal");
	/* In the last frame the spinner (1 W per CPU-second) is the first row. */
	frame2 = strstr(st_out, "joulesctl top - ");
	if (frame2)
		frame2 = strstr(frame2 + 1, "joulesctl top - ");
	row = frame2 ? strstr(frame2, "COMMAND\n") : NULL;
	if (row) {
		char rpid[16] = "";

		row += strlen("COMMAND\n");
		sscanf(row, "%15s %*s %lf", rpid, &w);
		DIAG("top row: %.*s", (int)strcspn(row, "\n"), row);
		CHECK(!strcmp(rpid, pidstr), "first row pid %s, spinner %s",
		      rpid, pidstr);
		/*
		 * 1 W per CPU-second of what emulation gave the spinner in
		 * the frame (its schedstat around top's snapshots), not of a
		 * nominal whole CPU; never above one CPU.
		 */
		st_frame_share(&m[0], &m[1], &lo, &hi, &f_lo, &f_hi);
		DIAG("spinner: %.3f..%.3f of a CPU in a frame of %.3f..%.3f s",
		     lo, hi, f_lo, f_hi);
		CHECK(w >= lo && w <= hi && w < 1.3,
		      "spinner power %.3f W at 1 W per CPU-second of %.3f..%.3f",
		      w, lo, hi);
	} else {
		CHECK(0, "no second frame with a table:\n%s", st_out);
	}
}

/* watch --json --samples -n 3: three JSON lines */
TEST_F(jc, watch)
{
	int rc, lines = 0;

	rc = ST_JC(0, "watch", "--json", "--samples", "-n", "3");
	for (char *l = st_out; *l;) {
		char *e = strchr(l, '\n');

		if (!e)
			break;
		if (!strncmp(l, "{\"type\":\"sample\",\"seq\":", 23) &&
		    e[-1] == '}')
			lines++;
		l = e + 1;
	}
	CHECK(rc == 0, "watch exit %d: %s", rc, st_err);
	CHECK(lines == 3, "%d JSON sample lines:\n%s", lines, st_out);
}

/*
 * watch --exits sees a child that exits while it runs (among whatever else
 * exits meanwhile), and ends cleanly on SIGTERM.
 */
TEST_F(jc, watch_exit)
{
	char want[64];
	pid_t w, child;
	bool seen = false;
	int st = -1;

	w = st_jc_start(0, (const char *const[]){ "watch", "--exits", NULL });
	ASSERT_LT(0, w);
	usleep(500000); /* let it subscribe */
	child = fork();
	if (child == 0) {
		st_burn_cpu(0.05);
		_exit(0);
	}
	waitpid(child, NULL, 0);
	snprintf(want, sizeof(want), "exit pid=%d ", child);
	for (int i = 0; i < 100 && !seen; i++) {
		usleep(100000);
		st_out[0] = 0;
		st_read(ST_JC_OUT, st_out, sizeof(st_out));
		seen = !strncmp(st_out, want, strlen(want)) ||
		       strstr(st_out, want) != NULL;
	}
	kill(w, SIGTERM);
	waitpid(w, &st, 0);
	CHECK(seen, "no '%s...' in:\n%s", want, st_out);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "watch status after SIGTERM %d", st);
}

/* node: totals as root, permission explained for others */
TEST_F(jc, node)
{
	unsigned long long v;
	int rc;

	rc = ST_JC(0, "node");
	CHECK(rc == 0, "exit %d: %s", rc, st_err);
	CHECK(!st_kv(st_out, "intervals", &v) && v > 0, "intervals");
	CHECK(!st_kv(st_out, "energy_uj", &v), "energy_uj");
	rc = ST_JC(0, "node", "--json");
	CHECK(rc == 0 && strstr(st_out, "\"intervals\":"), "json '%s'", st_out);
	rc = ST_JC(65534, "node");
	CHECK(rc == 1 && strstr(st_err, "CAP_PERFMON"), "nobody: exit %d '%s'",
	      rc, st_err);
}

/* set: two keys in one atomic write, one new generation; bad keys and users refused */
TEST_F(jc, set)
{
	unsigned long long g0 = 0, g1 = 0, c[9];
	char buf[256], *p;
	int rc;

	st_write(COEF, "1000000 1 2 3 4 500000\n", 23);
	if (st_read(GEN, buf, sizeof(buf)) > 0)
		g0 = strtoull(buf, NULL, 10);
	rc = ST_JC(0, "set", "cycles_pj=7", "idle_uw=250000");
	CHECK(rc == 0, "exit %d: %s", rc, st_err);
	if (st_read(GEN, buf, sizeof(buf)) > 0)
		g1 = strtoull(buf, NULL, 10);
	/* One write: exactly one new generation for two keys. */
	CHECK(g1 == g0 + 1, "generation %llu -> %llu", g0, g1);
	p = strstr(st_out, "generation: ");
	CHECK(p && strtoull(p + 12, NULL, 10) == g1, "printed '%s'", st_out);
	st_read(COEF, buf, sizeof(buf));
	p = buf;
	while (*p == '#' && strchr(p, '\n'))
		p = strchr(p, '\n') + 1;
	/* Read back in the nine-field form; the six-field write left 0s. */
	CHECK(sscanf(p, "%llu %llu %llu %llu %llu %llu %llu %llu %llu", &c[0],
		     &c[1], &c[2], &c[3], &c[4], &c[5], &c[6], &c[7],
		     &c[8]) == 9 &&
		      c[0] == 1000000 && c[1] == 7 && c[2] == 2 && c[3] == 3 &&
		      c[4] == 4 && !c[5] && !c[6] && !c[7] && c[8] == 250000,
	      "coefficients now '%s'", p);
	rc = ST_JC(0, "set", "bogus=1");
	CHECK(rc == 2 && strstr(st_err, "unknown coefficient"),
	      "bogus key: %d '%s'", rc, st_err);
	rc = ST_JC(0, "set", "cycles_pj=1000000000001");
	CHECK(rc == 2, "above maximum: %d", rc);
	rc = ST_JC(65534, "set", "cycles_pj=1");
	CHECK(rc == 1 && strstr(st_err, "permission denied"), "nobody: %d '%s'",
	      rc, st_err);
	if (st_read(GEN, buf, sizeof(buf)) > 0)
		CHECK(strtoull(buf, NULL, 10) == g1,
		      "a refused set changed the generation");
}

/* --help for the tool and every command; unknown command is a usage error */
TEST_F(jc, help)
{
	static const char *const cmds[] = { "show",   "top", "watch",
					    "record", "set", "node" };
	int rc;

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		char want[64];

		rc = ST_JC(0, cmds[i], "--help");
		snprintf(want, sizeof(want), "Usage: joulesctl %s", cmds[i]);
		CHECK(rc == 0 && !strncmp(st_out, want, strlen(want)),
		      "%s --help: %d", cmds[i], rc);
	}
	rc = ST_JC(0, "--help");
	CHECK(rc == 0 && strstr(st_out, "Commands:"), "--help: %d", rc);
	rc = ST_JC(0, "frobnicate");
	CHECK(rc == 2 && strstr(st_err, "unknown command"),
	      "unknown command: %d", rc);
}

/* module not loaded: every command says so */
TEST_F(jc, not_loaded)
{
	int rc;

	ASSERT_EQ(0, st_sh(". /lib/joules/lib.sh && joules_unload"))
	TH_LOG("could not unload the module");
	rc = ST_JC(0, "show", "1");
	CHECK(rc == 1 &&
		      strstr(st_err,
			     "joules module not loaded (no generic netlink family "
			     "'joules')"),
	      "show: %d '%s'", rc, st_err);
	rc = ST_JC(0, "record", "--count", "1", "/tmp/rec4.csv");
	CHECK(rc == 1 && strstr(st_err, "joules module not loaded"),
	      "record: %d '%s'", rc, st_err);
	rc = ST_JC(0, "set", "cycles_pj=1");
	CHECK(rc == 1 && strstr(st_err, "joules module not loaded"),
	      "set: %d '%s'", rc, st_err);
	CHECK(st_sh(". /lib/joules/lib.sh && joules_load") == 0, "reload");
}

int main(int argc, char **argv)
{
	if (access(JOULES_SYSFS, F_OK)) {
		printf("1..0 # SKIP joules module not loaded\n");
		return KSFT_SKIP;
	}
	if (access(st_jc_path, X_OK))
		st_jc_path = "../../../user/build/joulesctl";
	return test_harness_run(argc, argv);
}
