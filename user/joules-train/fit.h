/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Generic linear least-squares fitter for joules-train: any number of
 * columns (up to FIT_MAXCOL), no intercept, contiguous blocks for k-fold
 * cross-validation, OLS or non-negative least squares.
 *
 * The n x p design is reduced block by block to the R factor of a
 * Householder QR of [X | y] (columns scaled to unit RMS first). Because
 * ||X b - y||^2 = ||R b - Q'y||^2 + const, every fit on a union of blocks is
 * solved exactly on a small (p+1) x (p+1) system: a million rows cost one
 * pass, and each cross-validation fold costs microseconds.
 */
#ifndef JOULES_TRAIN_FIT_H
#define JOULES_TRAIN_FIT_H

#include <stddef.h>

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

#define FIT_MAXCOL 32

enum fit_method {
	FIT_OLS, /* gsl_multifit_linear (SVD) */
	FIT_NNLS, /* Lawson-Hanson active set, coefficients >= 0 */
};

struct fit_design {
	size_t n; /* rows */
	unsigned int stride; /* doubles per row of x */
	const double *x; /* row-major, n x stride */
	const double *y; /* n targets */
};

struct fit_blocks {
	unsigned int ncols; /* columns asked for */
	unsigned int cols[FIT_MAXCOL]; /* their indices in a design row */
	double scale
		[FIT_MAXCOL]; /* RMS of each column; 0: all zero, left out */
	unsigned int q; /* columns actually fitted (scale > 0) */
	unsigned int act[FIT_MAXCOL]; /* q positions into cols[] */
	double yscale;
	unsigned int nblocks;
	size_t *start; /* nblocks + 1 row boundaries */
	double *r; /* nblocks R factors, (q+1) x (q+1) each */
};

/* Contiguous fold k of K over n rows starts here (fit_fold_start(n, K, K) == n). */
size_t fit_fold_start(size_t n, unsigned int k, unsigned int nfolds);

/*
 * Scale the columns and reduce each of nblocks contiguous, equal-as-possible
 * blocks of d to its R factor. Returns 0, -EINVAL (bad arguments), -ENOMEM.
 */
int fit_blocks_build(const struct fit_design *d, const unsigned int *cols,
		     unsigned int ncols, unsigned int nblocks,
		     struct fit_blocks *b);
void fit_blocks_free(struct fit_blocks *b);

struct fit_result {
	double beta[FIT_MAXCOL]; /* per cols[] entry, in the design's units */
	double rcond; /* reciprocal condition number (scaled) */
	unsigned int iter; /* NNLS outer iterations */
};

/*
 * Fit on all blocks except `exclude` (-1: all blocks). Columns left out by
 * scaling get beta 0. Returns 0, -EINVAL, -ENOMEM, or -EDOM if NNLS did not
 * converge.
 */
int fit_solve(const struct fit_blocks *b, int exclude, enum fit_method method,
	      struct fit_result *res);

/*
 * min ||A x - b||_2 subject to x >= 0 (Lawson & Hanson, "Solving Least
 * Squares Problems", ch. 23). A is m x n. x is never negative on return.
 * Returns 0, -ENOMEM, or -EDOM after too many iterations (x then holds the
 * last feasible point).
 */
int fit_nnls(const gsl_matrix *a, const gsl_vector *b, gsl_vector *x,
	     unsigned int *iters);

/* x . beta over cols (prediction for one design row). */
double fit_predict(const struct fit_blocks *b, const struct fit_result *res,
		   const double *row);

/* Accuracy of predictions against measurements. */
struct fit_metrics {
	size_t n;
	size_t n_mape; /* rows with a nonzero measurement (MAPE's base) */
	double mape; /* mean absolute percentage error, % */
	double rmse; /* root mean square error, same unit as the data */
	double r2; /* coefficient of determination */
};

struct fit_acc {
	size_t n, n_mape;
	double sum_ape, sse;
	double mean,
		m2; /* Welford running mean and sum of squares of measured */
};

void fit_acc_init(struct fit_acc *a);
void fit_acc_add(struct fit_acc *a, double measured, double predicted);
void fit_acc_result(const struct fit_acc *a, struct fit_metrics *m);

#endif /* JOULES_TRAIN_FIT_H */
