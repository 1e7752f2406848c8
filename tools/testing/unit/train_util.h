/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the host tests of joules-train (test_train_*.c) share: deterministic
 * random numbers, synthetic rows and recordings, capture of the trainer's
 * diagnostics, a scratch directory, and the one way to run the joules-train
 * binary (run_cli()) and to skip when it is not built (TT_NEED_CLI()).
 */
#ifndef JOULES_TRAIN_UTIL_H
#define JOULES_TRAIN_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#include "gen.h"
#include "train.h"

/*
 * The harness (check.h) defines its runner's functions: only the test
 * programs include it, not train_util.c.
 */
#ifndef TRAIN_UTIL_C
#include "check.h"
/*
 * CLI tests generate and train on recordings of thousands of rows, slowly
 * under the sanitizers on a loaded machine: the harness's 30 s per test is
 * too short (it expands where each TEST() is, after this).
 */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 600
#endif

extern uint64_t rng_state;

uint64_t rng_u64(void);

double rng_unif(double lo, double hi);

double rng_gauss(void);

FILE *mem_in(const char *text);

extern char *diag_buf;

extern size_t diag_len;

/* Capture jt_diag output; returns the stream to close with diag_end(). */
void diag_begin(void);

const char *diag_end(void);

int rel_close(double a, double b, double tol);

#define HDR                                                                               \
	"realtime_ns,monotonic_ns,interval_ns,source,model_generation,energy_uj,idle_uj," \
	"cpu_ns,cycles,instructions,cache_misses,disk_bytes,tasks\n"

/* Realistic-ish synthetic node: each feature varies independently enough. */
extern const struct jl_coef truth;

struct jt_row *synth_rows(size_t n, const struct jl_coef *c, double noise,
			  unsigned int present);

#define ALL_FEATURES ((1u << JT_NF) - 1)

#define OLD_FEATURES ((1u << (JL_F_DISK + 1)) - 1)

/* Largest relative error of coefficients in mask against the truth. */
double coef_err(const struct jl_coef *c, const double *truth6,
		unsigned int mask, unsigned int *worst);

#define ALL_COEFS ((1u << JL_NR_COEF) - 1)

/* coef_err against what a generator's recording lets a fit find. */
double gen_coef_err(const struct jl_coef *c, const struct gen_opts *g,
		    unsigned int *worst);

/* Replace row i's features with a leverage outlier, etc.; lines from 2. */
void number_lines(struct jt_row *rows, size_t n);

int rejected_line(const struct jt_report *rep, unsigned long line);

extern char tmpdir[256];

void write_file(const char *path, const char *text);

extern char cli[PATH_MAX + 64];

int find_cli(void);

char *slurp(const char *path);

extern char *cli_out, *cli_err;

void unlink_tmp(const char *name);

/* A file of tmpdir, or NULL. */
char *slurp_tmp(const char *name);

int run_cli(const char *args);

/* Write samples and a meter trace that integrates to each interval's energy. */
void write_inputs(const char *sname, const char *pname, size_t n, int ms,
		  int pmu);

/* Seconds since an arbitrary start. */
double now_s(void);

/* Generate a recording into tmpdir with gen-train's generator. */
void gen_files(const char *sname, const char *pname, const struct gen_opts *o);

/* The coefficient line of the last run_cli() (its stdout); 0 if none. */
int cli_coef(struct jl_coef *c);

/* Set field `field` (1-based) of line `line` of tmpdir/in to val, into out. */
void edit_csv(const char *in, const char *out, int line, int field,
	      const char *val);

/* gen_write() into memory, read back and aligned as the CLI does. */
struct jt_row *gen_rows(const struct gen_opts *g, size_t *n,
			unsigned int *present);

/* Single fit, then the banded one, as main() does. */
int train_banded(struct jt_row *rows, size_t n, unsigned int present,
		 const struct jt_band_opts *bo, struct jt_report *rep,
		 struct jt_band_result *br);

/* Coefficients of the last line of a file (the single form), 0 if none. */
int file_coef(const char *name, struct jl_coef *c);

/*
 * Skip the current test (and return from it) when the joules-train binary
 * is not built; `what` says what was not tested in the skip's reason.
 */
#define TT_NEED_CLI(what)                                                       \
	do {                                                                    \
		if (!find_cli())                                                \
			SKIP(return,                                            \
				   "%s: joules-train not built (make -C user)", \
				   what);                                       \
	} while (0)

/*
 * Set up a test program: a fresh scratch directory (tmpdir) and the random
 * seed (TRAIN_TEST_SEED replays one; printed either way, on stderr: each
 * TEST starts from it in a child of its own).
 */
int tt_setup(const char *prog);
/* Remove the scratch directory and free what the helpers kept (at exit). */
void tt_cleanup(void);

/* main(): the harness's, after tt_setup() (tt_cleanup() runs at exit). */
#define TT_MAIN(prog)                                                          \
	int main(int argc, char **argv)                                        \
	{                                                                      \
		if (tt_setup(prog))                                            \
			return 1;                                              \
		ck_at_exit(tt_cleanup);                                        \
		fprintf(stderr, "# seed %#llx (TRAIN_TEST_SEED replays it)\n", \
			(unsigned long long)rng_state);                        \
		return test_harness_run(argc, argv);                           \
	}

#endif /* JOULES_TRAIN_UTIL_H */
