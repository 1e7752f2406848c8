// SPDX-License-Identifier: GPL-2.0
/*
 * Fit-time benchmark of the joules-train fitter: N synthetic samples x P
 * feature columns (plus the idle column) from known coefficients with 1%
 * noise, then the work joules-train does per fit: column scaling and the
 * blocked QR reduction, the all-data fit and K cross-validation fits, for
 * OLS and NNLS. Run pinned to one core by bench-train.sh.
 *
 *   bench_train [-n SAMPLES] [-p FEATURES] [-k FOLDS] [--direct]
 *
 * --direct also times gsl_multifit_linear on the full matrix, the textbook
 * way, for comparison.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_multifit.h>

#include "fit.h"

static uint64_t rng = 42;

static double unif(void)
{
	/* xorshift64*: fast enough not to dominate generation */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (double)((rng * 2685821657736338717ULL) >> 11) * 0x1.0p-53;
}

static double gauss(void)
{
	return sqrt(-2 * log(unif() + 1e-300)) * cos(2 * M_PI * unif());
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double run(const struct fit_blocks *b, enum fit_method m, unsigned int k,
		  struct fit_result *all)
{
	struct fit_result r;
	double t0 = now();
	unsigned int i;

	if (fit_solve(b, -1, m, all))
		fprintf(stderr, "fit failed\n");
	for (i = 0; i < k; i++)
		if (fit_solve(b, (int)i, m, &r))
			fprintf(stderr, "fold %u failed\n", i);
	return now() - t0;
}

int main(int argc, char **argv)
{
	size_t n = 1000000, i;
	unsigned int p = 8, k = 5, j, cols[FIT_MAXCOL];
	double beta[FIT_MAXCOL], *x, *y, t0, t_reduce, t_ols, t_nnls, worst = 0;
	struct fit_result ols, nnls;
	struct fit_design d;
	struct fit_blocks b;
	int direct = 0, a;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "-n") && a + 1 < argc)
			n = strtoul(argv[++a], NULL, 10);
		else if (!strcmp(argv[a], "-p") && a + 1 < argc)
			p = (unsigned int)strtoul(argv[++a], NULL, 10);
		else if (!strcmp(argv[a], "-k") && a + 1 < argc)
			k = (unsigned int)strtoul(argv[++a], NULL, 10);
		else if (!strcmp(argv[a], "--direct"))
			direct = 1;
		else {
			fprintf(stderr,
				"usage: bench_train [-n N] [-p P] [-k K] [--direct]\n");
			return 2;
		}
	}
	if (p + 1 > FIT_MAXCOL || k < 2 || n < 2 * k) {
		fprintf(stderr, "bad sizes\n");
		return 2;
	}
	p += 1; /* column 0 is the interval length (idle power) */
	x = malloc(n * p * sizeof(*x));
	y = malloc(n * sizeof(*y));
	if (!x || !y)
		return 1;
	/*
	 * uJ per unit: idle 40 W (per 1e9 ns), then features of different
	 * magnitudes that each add up to 5 W at full activity.
	 */
	beta[0] = 40e-3; /* 40 W = 0.04 uJ per ns */
	for (j = 1; j < p; j++) {
		beta[j] = 5.0 / (double)j;
		cols[j] = j;
	}
	cols[0] = 0;
	t0 = now();
	for (i = 0; i < n; i++) {
		double *r = x + i * p, e = 0, load = unif();

		r[0] = 1e9 * (0.9 + 0.2 * unif());
		/* correlated through the common load, as real counters are */
		for (j = 1; j < p; j++)
			r[j] = nearbyint((0.5 * load + 0.5 * unif()) * 1e6 *
					 (double)j);
		for (j = 0; j < p; j++)
			e += beta[j] * r[j];
		y[i] = e * (1 + 0.01 * gauss());
	}
	printf("generated %zu samples x %u features (+ idle) in %.2f s\n", n,
	       p - 1, now() - t0);

	d = (struct fit_design){ .n = n, .stride = p, .x = x, .y = y };
	t0 = now();
	if (fit_blocks_build(&d, cols, p, k, &b)) {
		fprintf(stderr, "reduce failed\n");
		return 1;
	}
	t_reduce = now() - t0;
	t_ols = run(&b, FIT_OLS, k, &ols);
	t_nnls = run(&b, FIT_NNLS, k, &nnls);
	for (j = 0; j < p; j++) {
		double e = fabs(nnls.beta[j] - beta[j]) / beta[j];

		worst = e > worst ? e : worst;
	}
	printf("scale + blocked QR reduction: %8.3f s\n", t_reduce);
	printf("OLS  fit + %u CV fits:         %8.3f ms\n", k, t_ols * 1e3);
	printf("NNLS fit + %u CV fits:         %8.3f ms (%u iterations)\n", k,
	       t_nnls * 1e3, nnls.iter);
	printf("largest coefficient error:     %8.4f %%\n", worst * 100);
	printf("fit time %.3f s for %zu samples x %u features: %.3g samples/s "
	       "(one core)\n",
	       t_reduce + t_ols + t_nnls, n, p - 1,
	       (double)n / (t_reduce + t_ols + t_nnls));

	if (direct) {
		gsl_matrix_view xv = gsl_matrix_view_array(x, n, p);
		gsl_vector_view yv = gsl_vector_view_array(y, n);
		gsl_multifit_linear_workspace *ws =
			gsl_multifit_linear_alloc(n, p);
		gsl_matrix *cov = gsl_matrix_alloc(p, p);
		gsl_vector *c = gsl_vector_alloc(p);
		double chisq;

		t0 = now();
		gsl_multifit_linear(&xv.matrix, &yv.vector, c, cov, &chisq, ws);
		printf("for comparison, one gsl_multifit_linear on the full "
		       "matrix: %.3f s\n",
		       now() - t0);
		gsl_multifit_linear_free(ws);
		gsl_matrix_free(cov);
		gsl_vector_free(c);
	}
	fit_blocks_free(&b);
	free(x);
	free(y);
	return 0;
}
