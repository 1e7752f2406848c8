/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Minimal kselftest-style TAP producer shared by the host unit tests and the
 * selftests that run inside the QEMU-booted kernel.
 *
 *   TAP version 13
 *   1..N
 *   ok 1 name
 *   not ok 2 name
 *   ok 3 name # SKIP reason
 *   # Totals: pass:1 fail:1 xfail:0 xpass:0 skip:1 error:0
 *
 * Usage: tap_plan(n); then one tap_ok()/tap_skip() per test; return
 * tap_finish() from main(). tap_check(cond, ...) records a failed
 * expectation inside the current test (printed as a diagnostic) so that one
 * test can assert several things and report once with tap_done().
 */
#ifndef JOULES_TAP_H
#define JOULES_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

struct tap_state {
	int planned;
	int n;
	int pass;
	int fail;
	int skip;
	int cur_fail;	/* failed expectations in the current test */
};

static struct tap_state tap_st __attribute__((unused));

static inline void tap_plan(int n)
{
	tap_st.planned = n;
	printf("TAP version 13\n1..%d\n", n);
	fflush(stdout);
}

static inline void tap_diag(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static inline void tap_diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}

static inline void tap_vresult(int ok, const char *directive,
			       const char *fmt, va_list ap)
{
	tap_st.n++;
	if (directive)
		tap_st.skip++;
	else if (ok)
		tap_st.pass++;
	else
		tap_st.fail++;
	printf("%sok %d ", ok ? "" : "not ", tap_st.n);
	vprintf(fmt, ap);
	if (directive)
		printf(" # %s", directive);
	putchar('\n');
	fflush(stdout);
	tap_st.cur_fail = 0;
}

static inline int tap_ok(int ok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline int tap_ok(int ok, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_vresult(ok, NULL, fmt, ap);
	va_end(ap);
	return ok;
}

/* Report a test that could not run here; counts as neither pass nor fail. */
static inline void tap_skip(const char *reason, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline void tap_skip(const char *reason, const char *fmt, ...)
{
	va_list ap;
	char d[256];

	snprintf(d, sizeof(d), "SKIP %s", reason);
	va_start(ap, fmt);
	tap_vresult(1, d, fmt, ap);
	va_end(ap);
}

/* Record one expectation of the current test; prints a diagnostic on failure. */
#define tap_check(cond, ...)                                              \
	({                                                                \
		int __c = !!(cond);                                       \
		if (!__c) {                                               \
			tap_st.cur_fail++;                                \
			printf("# %s:%d: check failed: %s: ", __FILE__,   \
			       __LINE__, #cond);                          \
			printf(__VA_ARGS__);                              \
			putchar('\n');                                    \
		}                                                         \
		__c;                                                      \
	})

/* Close the current test: ok if no tap_check() in it failed. */
#define tap_done(...) tap_ok(tap_st.cur_fail == 0, __VA_ARGS__)

static inline int tap_finish(void)
{
	if (tap_st.planned != tap_st.n) {
		printf("# planned %d tests but ran %d\n", tap_st.planned,
		       tap_st.n);
		tap_st.fail++;
	}
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:%d error:0\n",
	       tap_st.pass, tap_st.fail, tap_st.skip);
	fflush(stdout);
	return tap_st.fail ? 1 : 0;
}

#endif /* JOULES_TAP_H */
