/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the C selftests that run inside the booted kernel. */
#ifndef JOULES_SELFTEST_H
#define JOULES_SELFTEST_H

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "nl.h"

/*
 * Every TEST here runs under emulation, where seconds are long: a test
 * that hangs still fails on its own (and the rest go on) after this long,
 * well inside the guest's whole timeout.
 */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 600

#define JOULES_SYSFS "/sys/kernel/joules"
#define JOULES_KO "/lib/joules/joules.ko"

/*
 * A long test's size on this kernel: n scaled by $JOULES_SCALE percent
 * (the guest runner sets it from kernels.conf; slow debug kernels run
 * less), never below 1.
 */
static inline unsigned long st_scaled(unsigned long n)
{
	const char *s = getenv("JOULES_SCALE");
	unsigned long pct = s && *s ? strtoul(s, NULL, 10) : 100;

	n = n * pct / 100;
	return n ? n : 1;
}

/* Run a shell command; returns its exit status (or -1). */
static inline int st_sh(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static inline int st_sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	if (rc == -1 || !WIFEXITED(rc))
		return -1;
	return WEXITSTATUS(rc);
}

/* The number a shell command prints on its first line, or -1 (no line). */
static inline long st_sh_number(const char *cmd)
{
	char b[64];
	long n = -1;
	FILE *f = popen(cmd, "r");

	if (!f)
		return -1;
	if (fgets(b, sizeof(b), f))
		n = atol(b);
	pclose(f);
	return n;
}

/* Read a whole small file into buf (NUL-terminated); returns length or -errno. */
static inline ssize_t st_read(const char *path, char *buf, size_t size)
{
	ssize_t n, off = 0;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -errno;
	while ((size_t)off < size - 1) {
		n = read(fd, buf + off, size - 1 - off);
		if (n < 0) {
			n = -errno;
			close(fd);
			return n;
		}
		if (n == 0)
			break;
		off += n;
	}
	buf[off] = 0;
	close(fd);
	return off;
}

/* Is this a PREEMPT_RT kernel (its version string says so)? */
static inline bool st_rt_kernel(void)
{
	struct utsname u;

	return !uname(&u) && strstr(u.version, "PREEMPT_RT");
}

/* A number from /sys/kernel/joules/NAME; ~0ULL if it cannot be read. */
static inline unsigned long long st_sysfs_u64(const char *name)
{
	char path[128], b[64];

	snprintf(path, sizeof(path), JOULES_SYSFS "/%s", name);
	if (st_read(path, b, sizeof(b)) <= 0)
		return ~0ULL;
	return strtoull(b, NULL, 10);
}

/*
 * Worker intervals in which the scan for tasks moved while asleep goes
 * once over the task table (kmod/taskcg.c): 32 tasks or 128 buckets an
 * interval, whichever limit comes first.
 */
static inline int st_moved_scan_ticks(void)
{
	const char *bits_file = "/sys/module/joules/parameters/table_bits";
	unsigned long long by_tasks, by_buckets, bits = 13;
	char b[32];

	if (st_read(bits_file, b, sizeof(b)) > 0)
		bits = strtoull(b, NULL, 10);
	by_tasks = st_sysfs_u64("tasks_tracked") / 32;
	by_buckets = (1ULL << bits) / 128;
	return (int)(by_tasks > by_buckets ? by_tasks : by_buckets) + 1;
}

/* Write a string to a file in one write(); returns 0 or -errno. */
static inline int st_write(const char *path, const char *s, size_t len)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, len);
	if (n < 0) {
		n = -errno;
		close(fd);
		return n;
	}
	close(fd);
	return (size_t)n == len ? 0 : -EIO;
}

/* Value of "key: value" in a key-value file body; returns 0 and *v, or -1. */
static inline int st_kv(const char *body, const char *key,
			unsigned long long *v)
{
	size_t kl = strlen(key);
	const char *p = body;

	while (p && *p) {
		if (!strncmp(p, key, kl) && p[kl] == ':') {
			char *end;

			errno = 0;
			*v = strtoull(p + kl + 1, &end, 10);
			if (errno || end == p + kl + 1)
				return -1;
			return 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

/* String value of "key: value" into out; returns 0 or -1. */
static inline int st_kvs(const char *body, const char *key, char *out,
			 size_t size)
{
	size_t kl = strlen(key);
	const char *p = body;

	while (p && *p) {
		if (!strncmp(p, key, kl) && p[kl] == ':') {
			const char *s = p + kl + 1, *e;

			while (*s == ' ' || *s == '\t')
				s++;
			e = strchr(s, '\n');
			if (!e)
				e = s + strlen(s);
			if ((size_t)(e - s) >= size)
				return -1;
			memcpy(out, s, e - s);
			out[e - s] = 0;
			return 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

/* The module's attribution interval, ms (100 if it cannot be read). */
static inline unsigned int st_interval_ms(void)
{
	char b[32];

	if (st_read(JOULES_SYSFS "/interval_ms", b, sizeof(b)) <= 0)
		return 100;
	return (unsigned int)atoi(b);
}

/* Set the attribution interval: 0 or -errno. */
static inline int st_set_interval_ms(unsigned int ms)
{
	char b[16];

	snprintf(b, sizeof(b), "%u", ms);
	return st_write(JOULES_SYSFS "/interval_ms", b, strlen(b));
}

/*
 * The next n node samples on a socket subscribed to JNL_GRP_SAMPLES (other
 * events skipped); returns how many came within 5 s each.
 */
static inline int st_samples(struct jnl *nl, struct sample_rec *s, int n)
{
	int got = 0;

	while (got < n) {
		struct jnl_event ev;
		int r = jnl_next_event(nl, &ev, 5000);

		if (r <= 0) {
			DIAG("no sample: %d", r);
			break;
		}
		if (ev.type == JNL_EV_SAMPLE)
			s[got++] = ev.sample;
	}
	return got;
}

/*
 * The same, of intervals that end after this call: samples queued on the
 * socket meanwhile are dropped first (a subscriber that was busy would
 * otherwise get old ones at once, and wait for nothing).
 */
static inline int st_fresh_samples(struct jnl *nl, struct sample_rec *s, int n)
{
	struct jnl_event ev;

	while (jnl_next_event(nl, &ev, 0) == 1)
		jnl_event_free(&ev);
	return st_samples(nl, s, n);
}

#define ST_METER "/lib/joules/joules_testmeter.ko"
#define ST_STATIC JOULES_SYSFS "/meter_idle_uw"

/*
 * No static power. The synthetic meter draws the same power busy or idle,
 * so measured (the default) all of it would be static and the tasks would
 * get nothing: tests of how measured energy is split set it to 0 and put
 * "auto" back (st_meter_unload()); 31-static-power measures it.
 */
static inline int st_static_none(void)
{
	return st_write(ST_STATIC, "0 0 0 0 0", 9);
}

static inline int st_meter_unload(void)
{
	st_write(ST_STATIC, "auto", 4);
	return st_sh("rmmod joules_testmeter");
}

/*
 * Load the synthetic meter with `args`, let three intervals pass so that
 * it is in use, and open a netlink socket subscribed to samples. 0, or -1
 * with the meter unloaded again and the reason in a diagnostic.
 */
static inline int st_meter_subscribe(const char *args, struct jnl **nl)
{
	int err;

	if (st_sh("insmod " ST_METER " %s", args)) {
		DIAG("insmod %s %s failed", ST_METER, args);
		return -1;
	}
	if (st_static_none()) {
		DIAG("%s: cannot set", ST_STATIC);
		st_sh("rmmod joules_testmeter");
		return -1;
	}
	usleep(3 * st_interval_ms() * 1000 + 50000);
	err = jnl_open(nl);
	if (!err) {
		err = jnl_subscribe(*nl, JNL_GRP_SAMPLES);
		if (err)
			jnl_close(*nl);
	}
	if (err) {
		DIAG("netlink: %s", jnl_strerror(JNL_OP_SUBSCRIBE, err));
		st_meter_unload();
		return -1;
	}
	return 0;
}

static inline double st_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline unsigned long long st_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * Waits, 5 s at most, until pid's /proc/energy file stops saying ENOENT: a
 * new task the fork pool could not take is tracked by the sweep, a little
 * later (on a slow kernel). 0, or -ENOENT.
 */
static inline int st_wait_tracked(pid_t pid)
{
	char path[64], b[4096];
	double end = st_now() + 5;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/energy/%d", (int)pid);
	while ((n = st_read(path, b, sizeof(b))) == -ENOENT && st_now() < end)
		usleep(20000);
	return n == -ENOENT ? -ENOENT : 0;
}

/*
 * The node's totals and the root cgroup's, read between two ticks: after
 * a sample (ev subscribes to samples), and good only if the reads ended
 * before the next tick took its timestamp. A tick charges the cgroups
 * before it counts its interval, so equal interval counts around the
 * reads do not show that one came in between (30-rapl's snapshot() says
 * more). 0, -EAGAIN (read again), or another error.
 */
static inline int st_node_root(struct jnl *nl, struct jnl *ev,
			       struct node_rec *n, struct cgroup_rec *r)
{
	struct sample_rec s, next;
	uint64_t done;

	if (st_fresh_samples(ev, &s, 1) != 1)
		return -ETIMEDOUT;
	if (jnl_get_node(nl, n) || jnl_get_cgroup(nl, "/", 0, r))
		return -EIO;
	done = st_now_ns();
	if (st_samples(ev, &next, 1) != 1)
		return -ETIMEDOUT;
	if (n->intervals != s.seq || next.seq != s.seq + 1 ||
	    next.monotonic_ns <= done)
		return -EAGAIN;
	return 0;
}

/*
 * Wait (at most sec) until task pid is in one of the states (the letters
 * of /proc/<pid>/stat's third field, e.g. "S" or "Z"): a task that sleeps
 * has a runtime that no longer moves, one that exited has at most its last
 * switch to go. 0, or -1 if it never was (or is gone).
 */
static inline int st_wait_state(pid_t pid, const char *states, double sec)
{
	double end = st_now() + sec;
	char path[64], b[512];

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	do {
		const char *p;
		int r = st_read(path, b, sizeof(b));

		/* The command name may hold ") ": the state follows the last. */
		if (r > 0 && (p = strrchr(b, ')')) && p[1] == ' ' && p[2] &&
		    strchr(states, p[2]))
			return 0;
		if (r == -ENOENT || r == -ESRCH)
			return -1; /* gone: it never will be */
		usleep(10000);
	} while (st_now() < end);
	return -1;
}

/* Burn CPU for `sec` seconds of this thread's own CPU time. */
static inline void st_burn_cpu(double sec)
{
	struct timespec ts;
	volatile unsigned long x = 0;
	double start;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	start = ts.tv_sec + ts.tv_nsec / 1e9;
	for (;;) {
		for (int i = 0; i < 100000; i++)
			x += i;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		if (ts.tv_sec + ts.tv_nsec / 1e9 - start >= sec)
			break;
	}
}

/*
 * A child in cgroup rel under the cgroup2 mount root from its first
 * instruction (clone3 with CLONE_INTO_CGROUP): 0 in the child, its pid in
 * the parent, -1 on error.
 */
static inline pid_t st_spawn_in(const char *root, const char *rel)
{
	struct clone_args args = { .flags = CLONE_INTO_CGROUP,
				   .exit_signal = SIGCHLD };
	char path[512];
	pid_t p;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	fd = open(path, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return -1;
	args.cgroup = fd;
	p = syscall(SYS_clone3, &args, sizeof(args));
	if (p != 0)
		close(fd);
	return p;
}

/*
 * The module's writable settings as a test found them, put back when it is
 * done: a fixture's setup saves them, its teardown restores each one that
 * the test changed (the bands before the coefficients, which they hold),
 * also after a reload that brought back the defaults.
 */
static const char *const st_settings_names[] = {
	"interval_ms",
	"gamma_milli",
	"delta_milli",
	"idle_split",
	"source",
	"meter_idle_uw",
	"model/bands",
	"model/coefficients",
	"wallmeter/timeout_ms",
	"wallmeter/max_power_w",
	"unpriv_interval_ms",
};
#define ST_NR_SETTINGS \
	(sizeof(st_settings_names) / sizeof(st_settings_names[0]))

struct st_settings {
	char v[ST_NR_SETTINGS][2048];
};

/* A setting's value as it is written: "auto [rapl] model" reads back as "rapl". */
static inline void st_setting_value(const char *name, char *v)
{
	char *a, *b;

	if (!strcmp(name, "source") && (a = strchr(v, '[')) &&
	    (b = strchr(a, ']'))) {
		memmove(v, a + 1, b - a - 1);
		v[b - a - 1] = 0;
	}
}

/*
 * The harness runs a fixture's teardown only after its setup completed: a
 * setup that fails or skips after it changed something (these settings, a
 * module, a cgroup, a child) undoes that itself first, as the teardown
 * would, or the next tests find it changed.
 */
#define ST_SETUP_OR_UNDO(start, undo)   \
	do {                            \
		int __st_err = (start); \
                                        \
		if (__st_err)           \
			undo;           \
		ASSERT_EQ(0, __st_err); \
	} while (0)

static inline void st_settings_save(struct st_settings *s)
{
	char path[128];

	for (size_t i = 0; i < ST_NR_SETTINGS; i++) {
		snprintf(path, sizeof(path), JOULES_SYSFS "/%s",
			 st_settings_names[i]);
		if (st_read(path, s->v[i], sizeof(s->v[i])) <= 0)
			s->v[i][0] = 0;
		st_setting_value(st_settings_names[i], s->v[i]);
	}
}

/*
 * Write back every saved setting that now reads otherwise; how many could
 * not be (each named in a diagnostic). The module must be loaded.
 */
static inline int st_settings_restore(const struct st_settings *s)
{
	char path[128], cur[2048];
	int bad = 0;

	for (size_t i = 0; i < ST_NR_SETTINGS; i++) {
		int err;

		if (!s->v[i][0])
			continue;
		snprintf(path, sizeof(path), JOULES_SYSFS "/%s",
			 st_settings_names[i]);
		if (st_read(path, cur, sizeof(cur)) > 0) {
			st_setting_value(st_settings_names[i], cur);
			if (!strcmp(cur, s->v[i]))
				continue;
		}
		err = st_write(path, s->v[i], strlen(s->v[i]));
		if (err) {
			DIAG("restoring %s: %s", st_settings_names[i],
			     strerror(-err));
			bad++;
		}
	}
	return bad;
}

/* The module loaded and /proc/energy mounted, as the guest runner has them; 0 or -1. */
static inline int st_load(void)
{
	return st_sh(". /lib/joules/lib.sh; joules_load") ? -1 : 0;
}

/*
 * The model's coefficients as a test found them, to put back when it is
 * done (a fixture's setup saves them, its teardown restores them).
 */
#define ST_COEF JOULES_SYSFS "/model/coefficients"

struct st_model {
	char saved[256];
};

/* Save the coefficients in force, then set coef; 0 or -errno. */
static inline int st_model_set(struct st_model *m, const char *coef)
{
	if (!m->saved[0] && st_read(ST_COEF, m->saved, sizeof(m->saved)) <= 0)
		m->saved[0] = 0;
	return st_write(ST_COEF, coef, strlen(coef));
}

/* The saved coefficients back in force (if any were saved); 0 or -errno. */
static inline int st_model_restore(struct st_model *m)
{
	int err = 0;

	if (m->saved[0])
		err = st_write(ST_COEF, m->saved, strlen(m->saved));
	m->saved[0] = 0;
	return err;
}

/*
 * joulesctl as the tests run it: as uid (0 or 65534), without a terminal,
 * stdout and stderr into files that st_jc_finish() reads back into
 * st_out[] and st_err[].
 */
#define ST_JOULESCTL "/usr/bin/joulesctl"
#define ST_JC_OUT "/tmp/st-jc.out"
#define ST_JC_ERR "/tmp/st-jc.err"

/* The program run: the installed one, or another a test's main() picks. */
static const char *st_jc_path __attribute__((unused)) = ST_JOULESCTL;
static char st_out[1 << 17] __attribute__((unused));
static char st_err[4096] __attribute__((unused));

/* Start joulesctl with args (NULL-terminated); its pid, or -1. */
static inline pid_t st_jc_start(uid_t uid, const char *const *args)
{
	const char *argv[32];
	int n = 0;
	pid_t pid;

	argv[n++] = st_jc_path;
	while (*args && n < 31)
		argv[n++] = *args++;
	argv[n] = NULL;
	unlink(ST_JC_OUT);
	unlink(ST_JC_ERR);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		int o = open(ST_JC_OUT, O_WRONLY | O_CREAT | O_TRUNC, 0666);
		int e = open(ST_JC_ERR, O_WRONLY | O_CREAT | O_TRUNC, 0666);

		if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(126);
		/* No terminal: joulesctl must not need one. */
		close(0);
		open("/dev/null", O_RDONLY);
		if (uid && (setgroups(0, NULL) || setgid(uid) || setuid(uid)))
			_exit(126);
		execv(st_jc_path, (char *const *)argv);
		_exit(127);
	}
	return pid;
}

/*
 * Wait for a started joulesctl, killed if it is still running after sec;
 * its exit status (-1 if killed, crashed or never started), its output in
 * st_out[] and st_err[].
 */
static inline int st_jc_finish(pid_t pid, double sec)
{
	double end = st_now() + sec;
	pid_t r = -1;
	int st = 0;

	if (pid > 0) {
		while ((r = waitpid(pid, &st, WNOHANG)) == 0 && st_now() < end)
			usleep(20000);
		if (r == 0) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
		}
	}
	st_out[0] = st_err[0] = 0;
	st_read(ST_JC_OUT, st_out, sizeof(st_out));
	st_read(ST_JC_ERR, st_err, sizeof(st_err));
	return pid > 0 && r == pid && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Run joulesctl to its end (at most 60 s): ST_JC(uid, "show", "--json"). */
#define ST_JC(uid, ...)                                                       \
	st_jc_finish(                                                         \
		st_jc_start(uid, (const char *const[]){ __VA_ARGS__, NULL }), \
		60)

/*
 * What a CPU-time counter stood at when `joulesctl top` printed its
 * frames. top flushes each frame as it prints it, so polling its output
 * and the counter in turn brackets the snapshot behind frame k between the
 * last poll that did not see it (pre) and the first that did (post).
 */
struct st_frame_mark {
	double t_pre, t_post; /* CLOCK_MONOTONIC, s */
	unsigned long long u_pre, u_post; /* the counter, us */
};

/* How many frames of top are in its output file so far. */
static inline int st_jc_frames_so_far(void)
{
	static char b[sizeof(st_out)];
	int n = 0;

	if (st_read(ST_JC_OUT, b, sizeof(b)) <= 0)
		return 0;
	for (const char *p = b; (p = strstr(p, "joulesctl top - ")); p++)
		n++;
	return n;
}

/*
 * Run joulesctl top (args) as root to its end (at most 60 s), marking
 * frames 1..nmarks with usage(arg), a CPU time in us; its exit status, -1
 * if it failed or printed fewer frames. Its output in st_out[], st_err[].
 */
static inline int st_jc_frames(const char *const *args,
			       unsigned long long (*usage)(const void *),
			       const void *arg, struct st_frame_mark *m,
			       int nmarks)
{
	double t = st_now(), end = t + 60;
	unsigned long long u = usage(arg);
	pid_t pid = st_jc_start(0, args), r = 0;
	int seen = 0, st = 0;

	if (pid < 0)
		return -1;
	for (;;) {
		/*
		 * Reap first, count after: a top that printed its last frame
		 * and exited between a count and the reap left that frame
		 * unmarked.
		 */
		int n;
		double t1;
		unsigned long long u1;

		r = waitpid(pid, &st, WNOHANG);
		n = st_jc_frames_so_far();
		t1 = st_now();
		u1 = usage(arg);
		for (; seen < n && seen < nmarks; seen++) {
			m[seen].t_pre = t;
			m[seen].u_pre = u;
			m[seen].t_post = t1;
			m[seen].u_post = u1;
		}
		t = t1;
		u = u1;
		if (r || t1 >= end)
			break;
		usleep(10000);
	}
	if (!r) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	st_jc_finish(-1, 0);
	if (seen < nmarks)
		return -1;
	return r == pid && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/*
 * The share of a CPU (CPU seconds per second) the counter grew by in the
 * frame top printed at mark b, which spans its snapshots behind a and b:
 * at least what surely fell inside (post of a to pre of b) over the
 * longest the frame can be, at most what may have (pre of a to post of b)
 * over the shortest; and the module charges CPU time per interval, so a
 * frame holds its intervals give or take one. [*lo, *hi], and the frame's
 * length [*f_lo, *f_hi] in s.
 */
static inline void st_frame_share(const struct st_frame_mark *a,
				  const struct st_frame_mark *b, double *lo,
				  double *hi, double *f_lo, double *f_hi)
{
	double ival = st_interval_ms() / 1e3;
	double c_lo =
		(b->u_pre > a->u_post ? b->u_pre - a->u_post : 0) / 1e6 - ival;
	double c_hi = (b->u_post - a->u_pre) / 1e6 + ival;

	*f_lo = b->t_pre - a->t_post;
	*f_hi = b->t_post - a->t_pre;
	*lo = *f_hi > 0 ? c_lo / *f_hi : 0;
	*hi = *f_lo > 0 ? c_hi / *f_lo : 1e9;
}

/* A task's CPU time by its schedstat, us (0 if unread); arg points to its pid. */
static inline unsigned long long st_task_usage_usec(const void *arg)
{
	char path[64], b[128];

	snprintf(path, sizeof(path), "/proc/%d/schedstat", *(const pid_t *)arg);
	if (st_read(path, b, sizeof(b)) <= 0)
		return 0;
	return strtoull(b, NULL, 10) / 1000;
}

/*
 * cgroup v2, as the cgroup tests set it up: the hierarchy at ST_CG (mounted
 * here when it is not yet), cgroups made and removed by their paths
 * relative to it.
 */
#define ST_CG "/sys/fs/cgroup"

/* cgroup2 at ST_CG: 0 (*mounted set when this call mounted it), or -1. */
static inline int st_cgroup2(int *mounted)
{
	*mounted = 0;
	if (!st_sh("grep -q ' " ST_CG " cgroup2 ' /proc/mounts"))
		return 0;
	if (st_sh("mount -t cgroup2 none " ST_CG))
		return -1;
	*mounted = 1;
	return 0;
}

static inline int st_mkcg(const char *rel)
{
	return st_sh("mkdir -p " ST_CG "/%s", rel);
}

static inline int st_rmdir_cb(const char *path, const struct stat *sb, int type,
			      struct FTW *f)
{
	(void)sb;
	(void)f;
	if (type == FTW_DP)
		rmdir(path);
	return 0;
}

/*
 * Remove cgroup rel and everything under it, deepest first (a cgroup's
 * control files go with its directory); 0 once rel is gone, else -1.
 */
static inline int st_rmcg(const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), ST_CG "/%s", rel);
	nftw(path, st_rmdir_cb, 16, FTW_DEPTH | FTW_PHYS);
	return access(path, F_OK) ? 0 : -1;
}

/*
 * A burner of sec CPU seconds in cgroup rel, reaped; or (sec < 0) one that
 * runs until killed. Its pid, or -1.
 */
static inline pid_t st_burn_in(const char *rel, double sec)
{
	pid_t p = st_spawn_in(ST_CG, rel);

	if (p == 0) {
		if (sec < 0)
			for (volatile unsigned long x = 0;; x++)
				;
		st_burn_cpu(sec);
		_exit(0);
	}
	if (p > 0 && sec >= 0)
		waitpid(p, NULL, 0);
	return p;
}

/* The CPU time of a cgroup and its descendants by the kernel's cpu.stat, us (0 if unread). */
static inline unsigned long long st_cg_usage_usec(const char *rel)
{
	char path[512], b[4096];
	unsigned long long v = 0;
	char *p;

	snprintf(path, sizeof(path), ST_CG "/%s/cpu.stat", rel);
	if (st_read(path, b, sizeof(b)) > 0 && (p = strstr(b, "usage_usec ")))
		v = strtoull(p + 11, NULL, 10);
	return v;
}

/* A cgroup's totals by path through netlink; 0 or an error of jnl_get_cgroup(). */
static inline int st_cg_get(const char *rel, struct cgroup_rec *r)
{
	struct jnl *nl;
	int err = jnl_open(&nl);

	if (!err) {
		err = jnl_get_cgroup(nl, rel, 0, r);
		jnl_close(nl);
	}
	return err;
}

/* A cgroup's energy_uj by its energy.stat file (~0 if unread). */
static inline unsigned long long st_cg_file_energy(const char *rel)
{
	char path[512], b[4096];
	unsigned long long v = ~0ULL;

	snprintf(path, sizeof(path), "/proc/energy/cgroup/%s/energy.stat", rel);
	if (st_read(path, b, sizeof(b)) > 0)
		st_kv(b, "energy_uj", &v);
	return v;
}

#endif /* JOULES_SELFTEST_H */
