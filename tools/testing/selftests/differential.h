/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the differential workload test (87-differential.c): a seeded
 * generator, the kernel's own figures (cpu.stat, schedstat, the process
 * CPU clock) and a tally of every comparison made, per figure.
 */
#ifndef JOULES_DIFFERENTIAL_H
#define JOULES_DIFFERENTIAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "selftest.h"

/* splitmix64: one stream per seed, the same on every machine. */
static uint64_t df_rng;

static inline uint64_t df_rnd(void)
{
	uint64_t z = (df_rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [lo, hi]. */
static inline unsigned long df_in(unsigned long lo, unsigned long hi)
{
	return hi <= lo ? lo : lo + df_rnd() % (hi - lo + 1);
}

/*
 * The seeds to run: SEED= in the environment, else jseed= on the kernel
 * command line (run-qemu.sh --append jseed=N), each one seed; else n seeds
 * from the clock. Returns how many.
 */
static inline int df_seeds(unsigned long long *out, int n)
{
	char b[4096], *p;
	const char *s = getenv("SEED");

	if (s && *s) {
		out[0] = strtoull(s, NULL, 0);
		return 1;
	}
	if (st_read("/proc/cmdline", b, sizeof(b)) > 0) {
		for (p = strtok(b, " \n"); p; p = strtok(NULL, " \n"))
			if (!strncmp(p, "jseed=", 6)) {
				out[0] = strtoull(p + 6, NULL, 0);
				return 1;
			}
	}
	for (int i = 0; i < n; i++) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		out[i] = ((unsigned long long)ts.tv_nsec ^
			  ((unsigned long long)ts.tv_sec << 20) ^
			  ((unsigned long long)getpid() << 40) ^
			  (unsigned long long)i * 7919) %
			 1000000007ULL;
	}
	return n;
}

/* usage_usec of a cgroup's cpu.stat (it and its descendants); ~0 if unreadable. */
static inline unsigned long long df_usage_usec(const char *dir)
{
	char path[4400], b[2048], *p;

	snprintf(path, sizeof(path), "%s/cpu.stat", dir);
	if (st_read(path, b, sizeof(b)) <= 0 || !(p = strstr(b, "usage_usec ")))
		return ~0ULL;
	return strtoull(p + 11, NULL, 10);
}

/* First field of a schedstat file: the task's se.sum_exec_runtime, ns. */
static inline unsigned long long df_schedstat(pid_t tid)
{
	char path[64], b[128];

	snprintf(path, sizeof(path), "/proc/%d/schedstat", tid);
	if (st_read(path, b, sizeof(b)) <= 0)
		return ~0ULL;
	return strtoull(b, NULL, 10);
}

/* "cpu_time_ns" of a joules key-value file; ~0 if absent. */
static inline unsigned long long df_cpu_ns(const char *path)
{
	char b[4096];
	unsigned long long v;

	if (st_read(path, b, sizeof(b)) <= 0 || st_kv(b, "cpu_time_ns", &v))
		return ~0ULL;
	return v;
}

/* Figures compared, each with its count, failures and largest deviation. */
struct df_fig {
	const char *name;
	const char *unit;
	unsigned long n, bad, shown;
	long long maxdev; /* the deviation of largest magnitude seen */
};

/*
 * One comparison: dev must lie in [lo, hi]. Failures are printed (the first
 * few of each figure per test), all are counted.
 */
static inline bool df_judge(struct df_fig *f, long long dev, long long lo,
			    long long hi, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static inline bool df_judge(struct df_fig *f, long long dev, long long lo,
			    long long hi, const char *fmt, ...)
{
	bool ok = dev >= lo && dev <= hi;
	va_list ap;

	f->n++;
	if (llabs(dev) > llabs(f->maxdev))
		f->maxdev = dev;
	if (ok)
		return true;
	f->bad++;
	if (f->shown++ < 8) {
		char msg[512];

		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		fprintf(stderr,
			"# MISMATCH %s: %s: deviation %lld %s outside [%lld, %lld]\n",
			f->name, msg, dev, f->unit, lo, hi);
	}
	return false;
}

#endif /* JOULES_DIFFERENTIAL_H */
