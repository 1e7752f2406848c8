/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the C selftests that run inside the booted kernel. */
#ifndef JOULES_SELFTEST_H
#define JOULES_SELFTEST_H

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nl.h"
#include "tap.h"

#define JOULES_SYSFS "/sys/kernel/joules"
#define JOULES_KO "/lib/joules/joules.ko"

/* Exit status the guest runner reads as "skipped". */
#define KSFT_SKIP 4

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
static inline int st_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
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
static inline int st_kv(const char *body, const char *key, unsigned long long *v)
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
static inline int st_kvs(const char *body, const char *key, char *out, size_t size)
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
			tap_diag("no sample: %d", r);
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

/*
 * Load the synthetic meter with `args`, let three intervals pass so that
 * it is in use, and open a netlink socket subscribed to samples. 0, or -1
 * with the meter unloaded again and the reason in a diagnostic.
 */
static inline int st_meter_subscribe(const char *args, struct jnl **nl)
{
	int err;

	if (st_sh("insmod " ST_METER " %s", args)) {
		tap_diag("insmod %s %s failed", ST_METER, args);
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
		tap_diag("netlink: %s", jnl_strerror(JNL_OP_SUBSCRIBE, err));
		st_sh("rmmod joules_testmeter");
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
	struct clone_args args = { .flags = CLONE_INTO_CGROUP, .exit_signal = SIGCHLD };
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

#endif /* JOULES_SELFTEST_H */
