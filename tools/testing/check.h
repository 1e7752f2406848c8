/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's kselftest harness (kselftest_harness.h from linux-source-6.12,
 * tools/testing/ksft.mk) as every joules test program uses it, plus one
 * expectation of its own:
 *
 *   CHECK(cond, fmt, ...)   EXPECT_TRUE(cond) with the condition's text and a
 *                           printf-style explanation logged when it fails;
 *                           evaluates to cond (0 or 1) so that a test can go
 *                           on only with what it could read.
 *   ck_at_exit(fn)          a clean-up that runs when the program ends.
 *
 * Each TEST runs in a child of its own, so a crash fails that test (and the
 * program) rather than ending the run; its result is one TAP line.
 */
#ifndef JOULES_CHECK_H
#define JOULES_CHECK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "kselftest_harness.h"

#define CHECK(cond, fmt, ...)                                   \
	({                                                      \
		bool __ok = (cond);                             \
		if (!__ok)                                      \
			TH_LOG("check failed: %s: " fmt, #cond, \
			       ##__VA_ARGS__);                  \
		EXPECT_TRUE(__ok);                              \
		__ok;                                           \
	})

/*
 * Run fn when the program ends: test_harness_run() ends it itself
 * (ksft_exit()), so nothing after it in main() runs. Only in the process
 * that asked: the harness's test children end with _exit(), a test's own
 * children may not. One fn per program (per file that includes this).
 */
static pid_t ck_exit_pid;
static void (*ck_exit_fn)(void);

static inline void ck_exit_hook(void)
{
	if (getpid() == ck_exit_pid && ck_exit_fn)
		ck_exit_fn();
}

static inline void ck_at_exit(void (*fn)(void))
{
	if (!ck_exit_fn)
		atexit(ck_exit_hook);
	ck_exit_pid = getpid();
	ck_exit_fn = fn;
}

/*
 * SplitMix64: the randomized tests' generator, one step from *state. A
 * test prints its seed; the same seed replays the same sequence.
 */
static inline uint64_t ck_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A diagnostic outside a test's body (no _metadata there): "# ..." on stdout. */
#define DIAG(fmt, ...) ksft_print_msg(fmt "\n", ##__VA_ARGS__)

#endif /* JOULES_CHECK_H */
