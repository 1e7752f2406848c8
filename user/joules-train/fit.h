/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Generic linear least-squares fitter for joules-train: any number of
 * columns (up to FIT_MAXCOL), no intercept, row weights, contiguous blocks
 * for k-fold cross-validation and the block bootstrap, OLS or non-negative
 * least squares, and a robust (MM-type) estimator for the row weights.
 *
 * The n x p design is reduced block by block to the R factor of a
 * Householder QR of [X | y] (columns scaled to unit RMS first). Because
 * ||X b - y||^2 = ||R b - Q'y||^2 + const, every fit on a union of blocks is
 * solved exactly on a small (p+1) x (p+1) system: a million rows cost one
 * pass, and each cross-validation fold costs microseconds.
 */
#ifndef JOULES_TRAIN_FIT_H
#define JOULES_TRAIN_FIT_H

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/mman.h>

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

#define FIT_MAXCOL 32

/*
 * The functions whose loops over rows are most of a fit's time: on x86-64,
 * an AVX2 copy beside the default one, picked when the program loads
 * (GCC's and clang's target_clones, an ifunc). AVX2 without FMA: the same
 * multiplies and adds, rounded the same, in three-operand instructions, so
 * the results are bit for bit those of the default copy. On static
 * functions only: clang wants it on every declaration of an extern one.
 */
#if defined(__x86_64__) && !defined(__AVX2__) && !defined(FIT_NO_CLONES) && \
	(defined(__GNUC__) || defined(__clang__)) && defined(__linux__)
#define FIT_HOT __attribute__((target_clones("avx2", "default")))
#define FIT_AVX2 __attribute__((target("avx2")))
#define FIT_HAVE_AVX2() __builtin_cpu_supports("avx2")
#else
#define FIT_HOT
#define FIT_AVX2
#define FIT_HAVE_AVX2() 0
#endif

/* Target of row i of a design. */
#define FIT_Y(d, i) ((d)->y[(size_t)(i) * ((d)->ystride ? (d)->ystride : 1)])

enum fit_method {
	FIT_OLS, /* gsl_multifit_linear (SVD) */
	FIT_NNLS, /* Lawson-Hanson active set, coefficients >= 0 */
};

struct fit_design {
	size_t n; /* rows */
	unsigned int stride; /* doubles per row of x */
	const double *x; /* row-major, n x stride */
	const double *y; /* n targets, ystride doubles apart (0: 1) */
	unsigned int ystride;
	/* n row weights >= 0 (NULL: all 1); 0 leaves a row out */
	const double *w;
	/*
	 * nblocks + 1 row boundaries for fit_blocks_build() (NULL: equal
	 * blocks): blocks that are not equal, e.g. one per fold and band.
	 */
	const size_t *bounds;
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
	/*
	 * Ridge penalty of every fit on these blocks (0: none): rows
	 * sqrt(ridge tr(R'R) / q) I are added, so the scaled coefficients
	 * minimise ||X c - y||^2 + ridge (tr(X'X) / q) ||c||^2.
	 */
	double ridge;
};

/*
 * y[j] += a x[j], j < n: the inner loop of every normal-equations and
 * Gram accumulation and of the QR update. Two at a time in 16-byte vectors
 * (GCC and clang vector extensions): each element gets the same multiply
 * and add as one at a time, so the results are bit for bit the same, with
 * half the instructions (-O2 does not vectorize a loop of unknown length).
 */
typedef double fit_v2d __attribute__((vector_size(16), aligned(8)));
typedef double fit_v4d __attribute__((vector_size(32), aligned(8), may_alias));

/*
 * fit_axpy(), four at a time first when wide: for the AVX2 copies
 * (FIT_AVX2) of the hottest loops, one 32-byte operation where fit_axpy()
 * makes two 16-byte ones, element by element the same. Not in the default
 * copies: without AVX, GCC splits a 32-byte vector through the stack.
 */
static inline __attribute__((always_inline)) void
fit_axpy_w(double *restrict y, const double *restrict x, double a, size_t n,
	   int wide)
{
	fit_v2d av = { a, a };
	size_t j = 0;

	if (wide) {
#pragma GCC unroll 16
		for (; j + 4 <= n; j += 4)
			*(fit_v4d *)(y + j) += *(const fit_v4d *)(x + j) * a;
	}
#pragma GCC unroll 16
	for (; j + 2 <= n; j += 2) {
		fit_v2d xv, yv;

		__builtin_memcpy(&xv, x + j, sizeof(xv));
		__builtin_memcpy(&yv, y + j, sizeof(yv));
		yv += av * xv;
		__builtin_memcpy(y + j, &yv, sizeof(yv));
	}
	if (j < n)
		y[j] += a * x[j];
}

static inline __attribute__((always_inline)) void
fit_axpy(double *restrict y, const double *restrict x, double a, size_t n)
{
	fit_axpy_w(y, x, a, n, 0);
}

/*
 * m += w v v' over the upper triangle of the p x p matrix m (row-major):
 * a Gram matrix's row update. For the sizes of a node's model (FIT_SIZES,
 * up to 12) the loops are unrolled with p known: every fit and grid
 * does this for every row. The same operations in the same order.
 */
#define FIT_SIZES(X) \
	X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12)

static inline __attribute__((always_inline)) void
fit_syr_n(double *restrict m, const double *restrict v, double w,
	  unsigned int p, int wide)
{
	unsigned int i;

#pragma GCC unroll 16
	for (i = 0; i < p; i++)
		fit_axpy_w(m + i * p + i, v + i, w * v[i], p - i, wide);
}

/* fit_syr(), four at a time when wide (fit_axpy_w()). */
static inline __attribute__((always_inline)) void
fit_syr_w(double *restrict m, const double *restrict v, double w,
	  unsigned int p, int wide)
{
	switch (p) {
#define FIT_SYR_CASE(k)                      \
	case k:                              \
		fit_syr_n(m, v, w, k, wide); \
		return;
		FIT_SIZES(FIT_SYR_CASE)
#undef FIT_SYR_CASE
	}
	fit_syr_n(m, v, w, p, wide);
}

static inline __attribute__((always_inline)) void
fit_syr(double *restrict m, const double *restrict v, double w, unsigned int p)
{
	fit_syr_w(m, v, w, p, 0);
}

/* x . y over n, summed in order; unrolled as fit_syr() for its sizes. */
static inline __attribute__((always_inline)) double
fit_dot_n(const double *restrict x, const double *restrict y, unsigned int n)
{
	double p = 0;
	unsigned int j;

#pragma GCC unroll 16
	for (j = 0; j < n; j++)
		p += x[j] * y[j];
	return p;
}

static inline __attribute__((always_inline)) double
fit_dot(const double *restrict x, const double *restrict y, unsigned int n)
{
	switch (n) {
#define FIT_DOT_CASE(k) \
	case k:         \
		return fit_dot_n(x, y, k);
		FIT_SIZES(FIT_DOT_CASE)
#undef FIT_DOT_CASE
	}
	return fit_dot_n(x, y, n);
}

/*
 * Arrays of a value per row (megabytes each, read in passes and in random
 * order) in transparent huge pages, where the kernel grants them on
 * request (madvise): a 4 KiB page was a fault of its own and a TLB entry
 * of its own, and the faults and the TLB's misses were a good part of a
 * run. fit_alloc() is malloc() that asks for them. Not for arrays that
 * grow by realloc(): advice on part of a mapping splits it, and glibc's
 * realloc() can then no longer mremap() it, but copies it at every
 * doubling, the old and the new held at once.
 */
#define FIT_HUGE ((size_t)2 << 20)

static inline void *fit_alloc(size_t size)
{
	void *p;

	if (size < FIT_HUGE)
		return malloc(size ? size : 1);
	/* On a huge page's boundary: only the last one may be partial. */
	if (posix_memalign(&p, FIT_HUGE, size))
		return NULL;
	/* A hint: where it is refused, 4 KiB pages as before. */
	(void)madvise(p, size & ~(FIT_HUGE - 1), MADV_HUGEPAGE);
	return p;
}

/* Contiguous fold k of K over n rows starts here (fit_fold_start(n, K, K) == n). */
size_t fit_fold_start(size_t n, unsigned int k, unsigned int nfolds);

/*
 * Scale the columns and reduce each of nblocks contiguous, equal-as-possible
 * blocks of d to its R factor (of the weighted rows, sqrt(w) x and
 * sqrt(w) y). Returns 0, -EINVAL (bad arguments, a non-finite value),
 * -ENOMEM.
 */
int fit_blocks_build(const struct fit_design *d, const unsigned int *cols,
		     unsigned int ncols, unsigned int nblocks,
		     struct fit_blocks *b);
void fit_blocks_free(struct fit_blocks *b);

/* A set of columns to fit. */
struct fit_cols {
	const unsigned int *cols;
	unsigned int n;
};
#define FIT_MAXSETS 4

/*
 * fit_blocks_build() of nsets sets of columns at once, into b[0..nsets)
 * (each exactly as alone): the rows are read once for the scales and once
 * for the reductions, not once per set.
 */
int fit_blocks_build_sets(const struct fit_design *d,
			  const struct fit_cols *sets, unsigned int nsets,
			  unsigned int nblocks, struct fit_blocks *b);

struct fit_result {
	double beta[FIT_MAXCOL]; /* per cols[] entry, in the design's units */
	double rcond; /* reciprocal condition number (scaled) */
	unsigned int iter; /* NNLS outer iterations */
	/* drop_negative: cols[] entries refitted without, and their first value */
	unsigned int dropped;
	double negative[FIT_MAXCOL];
	/*
	 * Variance inflation of each cols[] entry (0: left out):
	 * (X'X)_jj [(X'X)^-1]_jj of the (weighted) design; 1 for a column
	 * orthogonal to the others, large when others nearly reproduce it.
	 */
	double vif[FIT_MAXCOL];
	/*
	 * The right singular vector of the smallest singular value of the
	 * scaled design, per cols[] entry: the combination of columns the data
	 * determine least (the columns that trade off against each other).
	 */
	double weakest[FIT_MAXCOL];
};

struct fit_solve_opts {
	enum fit_method method;
	/*
	 * Weight of each block (NULL: 1 each; 0 leaves it out): k-fold CV
	 * leaves one out, a block bootstrap counts how often each was drawn.
	 */
	const double *mult;
	/*
	 * OLS only: a coefficient that comes out negative is removed and the
	 * rest refitted, until none is (the module's coefficients are
	 * unsigned; zeroing one after the fact would leave the others fitted
	 * to compensate for it).
	 */
	int drop_negative;
	/* Ridge: see struct fit_blocks.ridge (fits on blocks use theirs). */
	double ridge;
	/* fit_robust(): the scale is at least this (residual / rdiv units). */
	double scale_floor;
};

/*
 * Fit on the blocks as o->mult says. Columns left out by scaling get beta
 * 0. Returns 0, -EINVAL, -ENOMEM, or -EDOM if NNLS did not converge.
 */
int fit_solve_ex(const struct fit_blocks *b, const struct fit_solve_opts *o,
		 struct fit_result *res);

/* fit_solve_ex on all blocks except `exclude` (-1 or out of range: all). */
int fit_solve(const struct fit_blocks *b, int exclude, enum fit_method method,
	      struct fit_result *res);

/*
 * Robust row weights for fitting d's columns cols (an MM-type estimator):
 *  1. a high-breakdown start: least trimmed squares (half the rows) on an
 *     evenly spaced subsample of at most 2000 rows, from 100 random
 *     elemental starts refined by concentration steps;
 *  2. the scale: 1.4826 x the median absolute residual of that start
 *     (over at most 262144 evenly spaced rows; not below 1e-5 of the
 *     median |y|, so exact data keep weight 1);
 *  3. Tukey's bisquare (c = 4.685, 95% efficiency under normal errors)
 *     by iteratively reweighted least squares with that scale fixed, with
 *     the method's constraint in each step: first on at most 65536
 *     evenly spaced rows until the coefficients change by at most 1e-7
 *     (relative), then (when that was a subsample) at most 2 passes over
 *     all rows from there; converged when the subsample phase did and
 *     the last pass moved the coefficients by at most 1e-3 (relative).
 *     A table of only 65536 rows or fewer iterates on all of them until
 *     the change is at most 1e-6.
 * Residuals are compared after dividing by the row's value in design
 * column rdiv_col (-1: by 1), e.g. the interval length, to compare powers
 * rather than energies (read in place: no copy of a column). w gets n
 * weights in [0, 1]; 0 means rejected (|residual| > c x scale).
 */
struct fit_robust_info {
	double scale; /* in residual / rdiv units */
	unsigned int iter; /* IRLS iterations */
	int converged;
	size_t rejected; /* weight 0 */
	size_t downweighted; /* 0 < weight < 0.5 */
};

#define FIT_BISQUARE_C 4.685

/* The k-th smallest (0-based) of v[0..n-1], n > k, in O(n); reorders v. */
double fit_kth(double *v, size_t n, size_t k);

int fit_robust(const struct fit_design *d, const unsigned int *cols,
	       unsigned int ncols, int rdiv_col, const struct fit_solve_opts *o,
	       double *w, struct fit_robust_info *info);

/*
 * min ||A x - b||_2 subject to x >= 0 (Lawson & Hanson, "Solving Least
 * Squares Problems", ch. 23). A is m x n. x is never negative on return.
 * Returns 0, -ENOMEM, or -EDOM after too many iterations (x then holds the
 * last feasible point).
 */
int fit_nnls(const gsl_matrix *a, const gsl_vector *b, gsl_vector *x,
	     unsigned int *iters);

/*
 * min ||A c - z|| over a small system by o->method: NNLS, or OLS (by SVD)
 * with o->drop_negative (then *dropped gets a bit per column refitted
 * without, negative[] its first value). Returns 0, -ENOMEM, -EDOM (NNLS).
 */
int fit_small_solve(const gsl_matrix *a, const gsl_vector *z,
		    const struct fit_solve_opts *o, gsl_vector *c,
		    unsigned int *dropped, double *negative,
		    unsigned int *iters);

/*
 * fit_small_solve() when c already holds the unconstrained least-squares
 * solution of a full-rank, well-conditioned system (so that the SVD would
 * give it too): that, when the method ends there (NNLS: every coefficient
 * positive; OLS: none to drop), else fit_small_solve() from the start.
 */
int fit_small_solve_known(const gsl_matrix *a, const gsl_vector *z,
			  const struct fit_solve_opts *o, gsl_vector *c,
			  unsigned int *dropped, double *negative,
			  unsigned int *iters);

/*
 * The same for a square upper triangular a of that kind: the unconstrained
 * solution by back substitution.
 */
int fit_small_solve_tri(const gsl_matrix *r, const gsl_vector *z,
			const struct fit_solve_opts *o, gsl_vector *c,
			unsigned int *dropped, double *negative,
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
	double mae; /* mean absolute error, same unit */
	double r2; /* coefficient of determination */
};

struct fit_acc {
	size_t n, n_mape;
	double sum_ape, sse, sae;
	/* Welford running mean and sum of squares of measured */
	double mean, m2;
};

void fit_acc_init(struct fit_acc *a);

/* Inline: every evaluation pass adds each of its rows. */
static inline void fit_acc_add(struct fit_acc *a, double measured,
			       double predicted)
{
	double e = predicted - measured, delta;

	a->n++;
	a->sse += e * e;
	a->sae += fabs(e);
	if (measured != 0) {
		a->sum_ape += fabs(e / measured);
		a->n_mape++;
	}
	/* Welford: SST without the cancellation of sum(y^2) - n mean^2. */
	delta = measured - a->mean;
	a->mean += delta / (double)a->n;
	a->m2 += delta * (measured - a->mean);
}

void fit_acc_result(const struct fit_acc *a, struct fit_metrics *m);

#endif /* JOULES_TRAIN_FIT_H */
