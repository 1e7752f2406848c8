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
#define OUT "/tmp/jc.out"
#define ERR "/tmp/jc.err"
#define CSV_HEADER                                                                        \
	"realtime_ns,monotonic_ns,interval_ns,source,model_generation,energy_uj,idle_uj," \
	"cpu_ns,cycles,instructions,cache_misses,disk_bytes,tasks,"                         \
	"net_tx_bytes,net_rx_bytes,pagecache_bytes,freq_mhz,band"
#define CSV_FIELDS 18

static const char *jc = "/usr/bin/joulesctl";
static char out[65536], err[4096];

/*
 * Run joulesctl with args (NULL-terminated) as uid (0 or 65534), stdout to
 * OUT and stderr to ERR, which are then read into out[] and err[]. Returns
 * the exit status, or -1.
 */
static int run(uid_t uid, const char *const *args)
{
	const char *argv[32];
	int n = 0, st;
	pid_t pid;

	argv[n++] = jc;
	while (*args && n < 31)
		argv[n++] = *args++;
	argv[n] = NULL;
	unlink(OUT);
	unlink(ERR);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int o = open(OUT, O_WRONLY | O_CREAT | O_TRUNC, 0666);
		int e = open(ERR, O_WRONLY | O_CREAT | O_TRUNC, 0666);

		if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(126);
		/* No terminal: joulesctl must not need one. */
		close(0);
		open("/dev/null", O_RDONLY);
		if (uid && (setgroups(0, NULL) || setgid(uid) || setuid(uid)))
			_exit(126);
		execv(jc, (char *const *)argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return -1;
	out[0] = err[0] = 0;
	st_read(OUT, out, sizeof(out));
	st_read(ERR, err, sizeof(err));
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

#define RUN(uid, ...) run(uid, (const char *const[]){ __VA_ARGS__, NULL })

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

static void test_record(void)
{
	unsigned long long gen = 0,
			   iv = (unsigned long long)st_interval_ms() * 1000000ull;
	unsigned long long prev_rt = 0, prev_mono = 0;
	char genbuf[32], *line, *next;
	int rc, rows = 0, bad = 0;

	if (st_read(GEN, genbuf, sizeof(genbuf)) > 0)
		gen = strtoull(genbuf, NULL, 10);
	rc = RUN(0, "record", "--count", "5", "/tmp/rec.csv");
	tap_check(rc == 0, "record exit %d: %s", rc, err);
	if (st_read("/tmp/rec.csv", out, sizeof(out)) <= 0) {
		tap_ok(0, "record wrote no file");
		return;
	}
	/*
	 * First the node's facts for joules-train: its CPU count is what
	 * the kernel says (sysconf), then the header.
	 */
	line = out;
	next = strchr(line, '\n');
	{
		char want[64];

		snprintf(want, sizeof(want), "# node: cpus=%ld packages=",
			 sysconf(_SC_NPROCESSORS_CONF));
		tap_check(next && !strncmp(line, want, strlen(want)),
			  "node facts '%.*s', want '%s'",
			  next ? (int)(next - line) : 0, line, want);
		if (next)
			line = next + 1;
	}
	next = strchr(line, '\n');
	tap_check(next != NULL, "no header line");
	if (next && strchr(next + 1, '\n'))
		tap_diag("first row: %.*s",
			 (int)(strchr(next + 1, '\n') - next - 1), next + 1);
	if (!next) {
		tap_done("record: CSV");
		return;
	}
	*next++ = 0;
	tap_check(!strcmp(line, CSV_HEADER), "header '%s'", line);
	for (line = next; *line; line = next) {
		char *f[CSV_FIELDS + 2];
		int n;

		next = strchr(line, '\n');
		if (!next) {
			tap_check(0, "row %d not terminated", rows + 1);
			break;
		}
		*next++ = 0;
		n = split(line, f, CSV_FIELDS + 2);
		rows++;
		if (n != CSV_FIELDS) {
			tap_check(0, "row %d has %d fields", rows, n);
			bad++;
			continue;
		}
		for (int i = 0; i < CSV_FIELDS; i++) {
			size_t len = strlen(f[i]);

			if (i == 3) {
				if (strcmp(f[i], "model") &&
				    strcmp(f[i], "rapl"))
					bad += !tap_check(0,
							  "row %d source '%s'",
							  rows, f[i]);
			} else if ((i >= 8 && i <= 10) || (i >= 13 && i <= 16)) {
				/*
				 * PMU counters, socket bytes (6.3+), the
				 * frequency: a number or empty (absent).
				 */
				if (len && !all_digits(f[i], len))
					bad += !tap_check(
						0, "row %d field %d '%s'", rows,
						i, f[i]);
			} else if (!all_digits(f[i], len)) {
				bad += !tap_check(0, "row %d field %d '%s'",
						  rows, i, f[i]);
			}
		}
		if (strtoull(f[0], NULL, 10) <= prev_rt ||
		    strtoull(f[1], NULL, 10) <= prev_mono)
			bad += !tap_check(
				0, "row %d: timestamps do not increase", rows);
		prev_rt = strtoull(f[0], NULL, 10);
		prev_mono = strtoull(f[1], NULL, 10);
		if (strtoull(f[2], NULL, 10) < iv / 2 ||
		    strtoull(f[2], NULL, 10) > iv * 3)
			bad += !tap_check(0, "row %d interval_ns %s vs %llu",
					  rows, f[2], iv);
		if (strtoull(f[4], NULL, 10) != gen)
			bad += !tap_check(0, "row %d generation %s vs %llu",
					  rows, f[4], gen);
		if (strtoull(f[6], NULL, 10) > strtoull(f[5], NULL, 10))
			bad += !tap_check(0, "row %d idle %s > energy %s", rows,
					  f[6], f[5]);
	}
	tap_check(rows == 5, "%d rows for --count 5", rows);
	tap_check(!bad, "%d bad fields", bad);
	tap_done(
		"record --count 5: node facts, exact header and 5 well-formed interval rows");
}

static void test_record_duration(void)
{
	double t0 = st_now(), dt;
	int rc, rows = -1;

	rc = RUN(0, "record", "--duration", "1", "/tmp/rec2.csv");
	dt = st_now() - t0;
	if (st_read("/tmp/rec2.csv", out, sizeof(out)) > 0) {
		rows = 0;
		for (char *p = out; (p = strchr(p, '\n')); p++)
			rows++;
		rows--; /* header */
	}
	tap_check(rc == 0, "exit %d: %s", rc, err);
	tap_check(dt >= 0.9 && dt < 5, "ran %.2f s", dt);
	/* 1 s at interval_ms: at least half the intervals, however slow QEMU is. */
	tap_check(rows >= (int)(500 / st_interval_ms()), "%d rows in 1 s at %u ms",
		  rows, st_interval_ms());
	tap_done(
		"record --duration 1 stops after a second with one row per interval");
}

static void test_record_unpriv(void)
{
	int rc;

	unlink("/tmp/rec3.csv");
	rc = RUN(65534, "record", "--count", "1", "/tmp/rec3.csv");
	tap_check(rc == 1, "exit %d", rc);
	tap_check(strstr(err, "permission denied") &&
			  strstr(err, "CAP_SYS_ADMIN"),
		  "stderr '%s'", err);
	tap_check(access("/tmp/rec3.csv", F_OK) != 0, "a file was left behind");
	rc = RUN(65534, "watch", "-n", "1");
	tap_check(rc == 1 && strstr(err, "CAP_SYS_ADMIN"),
		  "watch: exit %d '%s'", rc, err);
	tap_done(
		"record and watch as uid 65534: permission error explained, no file");
}

/* Every key of the per-pid file is in `show`'s output with the same value for identity. */
static void test_show(void)
{
	char path[64], file[4096], pidstr[16], v1[64], v2[64];
	pid_t pid = spinner();
	int rc, missing = 0;

	usleep(3 * st_interval_ms() * 1000);
	snprintf(pidstr, sizeof(pidstr), "%d", pid);
	snprintf(path, sizeof(path), "/proc/energy/%d", pid);
	rc = RUN(0, "show", pidstr);
	tap_check(rc == 0, "show exit %d: %s", rc, err);
	tap_check(st_read(path, file, sizeof(file)) > 0, "read %s", path);
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
			if (strncmp(out, want + 1, strlen(want + 1)) &&
			    !strstr(out, want)) {
				tap_check(0, "key '%s' missing from show", key);
				missing++;
			}
		}
		l = e + 1;
	}
	tap_check(!missing, "%d keys missing", missing);
	tap_check(!st_kvs(out, "pid", v1, sizeof(v1)) && !strcmp(v1, pidstr),
		  "pid '%s'", v1);
	tap_check(!st_kvs(out, "comm", v1, sizeof(v1)) &&
			  !st_kvs(file, "comm", v2, sizeof(v2)) &&
			  !strcmp(v1, v2),
		  "comm '%s' vs '%s'", v1, v2);
	tap_check(!st_kvs(out, "source", v1, sizeof(v1)) &&
			  !strcmp(v1, "model"),
		  "source '%s'", v1);
	rc = RUN(0, "show", "--json", pidstr);
	snprintf(v1, sizeof(v1), "{\"pid\":%d,", pid);
	tap_check(rc == 0 && !strncmp(out, v1, strlen(v1)) &&
			  strstr(out, "\"energy_uj\":"),
		  "json '%s'", out);
	rc = RUN(65534, "show", pidstr);
	tap_check(rc == 1 && strstr(err, "permission denied"),
		  "nobody: exit %d '%s'", rc, err);
	rc = RUN(0, "show", "4194000");
	tap_check(rc == 1 && strstr(err, "no such process"),
		  "missing: exit %d '%s'", rc, err);
	stop(pid);
	tap_done(
		"show: the per-pid file's keys, --json, permission and missing-pid errors");
}

static void test_top(void)
{
	char pidstr[16], *frame2, *row;
	pid_t pid = spinner();
	int rc, frames = 0;
	double w = -1;

	snprintf(pidstr, sizeof(pidstr), "%d", pid);
	usleep(2 * st_interval_ms() * 1000);
	rc = RUN(0, "top", "-n", "2", "-d", "0.5");
	stop(pid);
	tap_check(rc == 0, "top exit %d: %s", rc, err);
	for (char *p = out; (p = strstr(p, "joulesctl top - ")); p++)
		frames++;
	tap_check(frames == 2, "%d frames for -n 2", frames);
	tap_check(!strchr(out, '\033'), "escape sequences without a terminal");
	/* In the last frame the spinner (1 W per CPU-second) is the first row. */
	frame2 = strstr(out, "joulesctl top - ");
	if (frame2)
		frame2 = strstr(frame2 + 1, "joulesctl top - ");
	row = frame2 ? strstr(frame2, "COMMAND\n") : NULL;
	if (row) {
		char rpid[16] = "";

		row += strlen("COMMAND\n");
		sscanf(row, "%15s %*s %lf", rpid, &w);
		tap_diag("top row: %.*s", (int)strcspn(row, "\n"), row);
		tap_check(!strcmp(rpid, pidstr), "first row pid %s, spinner %s",
			  rpid, pidstr);
		tap_check(w > 0.3 && w < 1.3,
			  "spinner power %.3f W at 1 W per CPU-second", w);
	} else {
		tap_check(0, "no second frame with a table:\n%s", out);
	}
	tap_done(
		"top -n 2 without a terminal: two frames, the busy task first at ~1 W");
}

static void test_watch(void)
{
	int rc, lines = 0;

	rc = RUN(0, "watch", "--json", "--samples", "-n", "3");
	for (char *l = out; *l;) {
		char *e = strchr(l, '\n');

		if (!e)
			break;
		if (!strncmp(l, "{\"type\":\"sample\",\"seq\":", 23) &&
		    e[-1] == '}')
			lines++;
		l = e + 1;
	}
	tap_check(rc == 0, "watch exit %d: %s", rc, err);
	tap_check(lines == 3, "%d JSON sample lines:\n%s", lines, out);
	tap_done("watch --json --samples -n 3: three JSON lines");
}

/*
 * watch --exits sees a child that exits while it runs (among whatever else
 * exits meanwhile), and ends cleanly on SIGTERM.
 */
static void test_watch_exit(void)
{
	char want[64];
	pid_t w, child;
	bool seen = false;
	int st = -1, fd;

	unlink(OUT);
	fflush(stdout);
	w = fork();
	if (w == 0) {
		fd = open(OUT, O_WRONLY | O_CREAT | O_TRUNC, 0666);
		if (fd < 0 || dup2(fd, 1) < 0)
			_exit(126);
		execl(jc, jc, "watch", "--exits", (char *)NULL);
		_exit(127);
	}
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
		out[0] = 0;
		st_read(OUT, out, sizeof(out));
		seen = !strncmp(out, want, strlen(want)) ||
		       strstr(out, want) != NULL;
	}
	kill(w, SIGTERM);
	waitpid(w, &st, 0);
	tap_check(seen, "no '%s...' in:\n%s", want, out);
	tap_check(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		  "watch status after SIGTERM %d", st);
	tap_done(
		"watch --exits prints the exit record of a child, ends on SIGTERM");
}

static void test_node(void)
{
	unsigned long long v;
	int rc;

	rc = RUN(0, "node");
	tap_check(rc == 0, "exit %d: %s", rc, err);
	tap_check(!st_kv(out, "intervals", &v) && v > 0, "intervals");
	tap_check(!st_kv(out, "energy_uj", &v), "energy_uj");
	rc = RUN(0, "node", "--json");
	tap_check(rc == 0 && strstr(out, "\"intervals\":"), "json '%s'", out);
	rc = RUN(65534, "node");
	tap_check(rc == 1 && strstr(err, "CAP_PERFMON"),
		  "nobody: exit %d '%s'", rc, err);
	tap_done("node: totals as root, permission explained for others");
}

static void test_set(void)
{
	unsigned long long g0 = 0, g1 = 0, c[9];
	char buf[256], *p;
	int rc;

	st_write(COEF, "1000000 1 2 3 4 500000\n", 23);
	if (st_read(GEN, buf, sizeof(buf)) > 0)
		g0 = strtoull(buf, NULL, 10);
	rc = RUN(0, "set", "cycles_pj=7", "idle_uw=250000");
	tap_check(rc == 0, "exit %d: %s", rc, err);
	if (st_read(GEN, buf, sizeof(buf)) > 0)
		g1 = strtoull(buf, NULL, 10);
	/* One write: exactly one new generation for two keys. */
	tap_check(g1 == g0 + 1, "generation %llu -> %llu", g0, g1);
	p = strstr(out, "generation: ");
	tap_check(p && strtoull(p + 12, NULL, 10) == g1, "printed '%s'", out);
	st_read(COEF, buf, sizeof(buf));
	p = buf;
	while (*p == '#' && strchr(p, '\n'))
		p = strchr(p, '\n') + 1;
	/* Read back in the nine-field form; the six-field write left 0s. */
	tap_check(sscanf(p, "%llu %llu %llu %llu %llu %llu %llu %llu %llu",
			 &c[0], &c[1], &c[2], &c[3], &c[4], &c[5], &c[6],
			 &c[7], &c[8]) == 9 &&
			  c[0] == 1000000 && c[1] == 7 && c[2] == 2 &&
			  c[3] == 3 && c[4] == 4 && !c[5] && !c[6] && !c[7] &&
			  c[8] == 250000,
		  "coefficients now '%s'", p);
	rc = RUN(0, "set", "bogus=1");
	tap_check(rc == 2 && strstr(err, "unknown coefficient"),
		  "bogus key: %d '%s'", rc, err);
	rc = RUN(0, "set", "cycles_pj=1000000000001");
	tap_check(rc == 2, "above maximum: %d", rc);
	rc = RUN(65534, "set", "cycles_pj=1");
	tap_check(rc == 1 && strstr(err, "permission denied"),
		  "nobody: %d '%s'", rc, err);
	if (st_read(GEN, buf, sizeof(buf)) > 0)
		tap_check(strtoull(buf, NULL, 10) == g1,
			  "a refused set changed the generation");
	tap_done(
		"set: two keys in one atomic write, one new generation; bad keys and users refused");
}

static void test_help(void)
{
	static const char *const cmds[] = { "show",   "top", "watch",
					    "record", "set", "node" };
	int rc;

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		char want[64];

		rc = RUN(0, cmds[i], "--help");
		snprintf(want, sizeof(want), "Usage: joulesctl %s", cmds[i]);
		tap_check(rc == 0 && !strncmp(out, want, strlen(want)),
			  "%s --help: %d", cmds[i], rc);
	}
	rc = RUN(0, "--help");
	tap_check(rc == 0 && strstr(out, "Commands:"), "--help: %d", rc);
	rc = RUN(0, "frobnicate");
	tap_check(rc == 2 && strstr(err, "unknown command"),
		  "unknown command: %d", rc);
	tap_done(
		"--help for the tool and every command; unknown command is a usage error");
}

static void test_not_loaded(void)
{
	int rc;

	if (st_sh(". /lib/joules/lib.sh && joules_unload") != 0) {
		tap_ok(0, "could not unload the module");
		return;
	}
	rc = RUN(0, "show", "1");
	tap_check(
		rc == 1 &&
			strstr(err,
			       "joules module not loaded (no generic netlink family "
			       "'joules')"),
		"show: %d '%s'", rc, err);
	rc = RUN(0, "record", "--count", "1", "/tmp/rec4.csv");
	tap_check(rc == 1 && strstr(err, "joules module not loaded"),
		  "record: %d '%s'", rc, err);
	rc = RUN(0, "set", "cycles_pj=1");
	tap_check(rc == 1 && strstr(err, "joules module not loaded"),
		  "set: %d '%s'", rc, err);
	tap_check(st_sh(". /lib/joules/lib.sh && joules_load") == 0, "reload");
	tap_done("module not loaded: every command says so");
}

int main(void)
{
	char saved[256] = "";

	if (access(JOULES_SYSFS, F_OK)) {
		printf("1..0 # SKIP joules module not loaded\n");
		return KSFT_SKIP;
	}
	if (access(jc, X_OK))
		jc = "../../../user/build/joulesctl";
	tap_plan(11);
	st_read(COEF, saved, sizeof(saved));
	/* 1 W per CPU-second and 0.5 W idle: QEMU has no RAPL. */
	st_write(COEF, "1000000 0 0 0 0 500000\n", 23);
	test_record();
	test_record_duration();
	test_record_unpriv();
	test_show();
	test_top();
	test_watch();
	test_watch_exit();
	test_node();
	test_set();
	test_help();
	{
		char *line = saved;

		while (*line == '#' && strchr(line, '\n'))
			line = strchr(line, '\n') + 1;
		if (*line)
			st_write(COEF, line, strlen(line));
	}
	test_not_loaded();
	return tap_finish();
}
