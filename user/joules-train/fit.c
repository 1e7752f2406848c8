// SPDX-License-Identifier: GPL-2.0
/*
 * Least-squares fitting for joules-train on top of GSL. See fit.h for why
 * the design is reduced to R factors block by block.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_multifit.h>

#include "fit.h"

/*
 * Above this reciprocal condition number a triangular system is solved by
 * back substitution: the SVD's truncation (at DBL_EPSILON of the largest
 * singular value, after balancing the columns) cannot apply to it.
 */
#define FIT_DIRECT_RCOND 1e-10

/* Rows per Householder pass: big enough to amortise, small enough for L2. */
#define FIT_CHUNK 1024

size_t fit_fold_start(size_t n, unsigned int k, unsigned int nfolds)
{
	/* n * k / K without overflow for any realistic n. */
	return (size_t)(((unsigned __int128)n * k) / nfolds);
}

void fit_blocks_free(struct fit_blocks *b)
{
	free(b->start);
	free(b->r);
	b->start = NULL;
	b->r = NULL;
}

/* Zero the strict lower triangle of the top k x k part (Householder vectors). */
static void clear_lower(gsl_matrix *w, size_t k)
{
	size_t i, j;

	for (i = 1; i < k; i++)
		for (j = 0; j < i; j++)
			gsl_matrix_set(w, i, j, 0.0);
}

/*
 * The distinct design columns of the sets, into u[]; at[s][i] gets where
 * set s's column i is among them. Returns how many.
 */
static unsigned int sets_union(const struct fit_blocks *b, unsigned int nsets,
			       unsigned int *u, unsigned int at[][FIT_MAXCOL])
{
	unsigned int nu = 0, s, i, j;

	for (s = 0; s < nsets; s++)
		for (i = 0; i < b[s].ncols; i++) {
			for (j = 0; j < nu && u[j] != b[s].cols[i]; j++)
				;
			if (j == nu)
				u[nu++] = b[s].cols[i];
			at[s][i] = j;
		}
	return nu;
}

/*
 * Column and target scales of each set b[s]: the root mean square of each
 * column (weighted), so the scaled columns are comparable; a column all 0
 * is left out (not active). A column in several sets is summed once (the
 * same sum for each).
 */
FIT_HOT
static int blocks_scales(const struct fit_design *d, struct fit_blocks *b,
			 unsigned int nsets)
{
	unsigned int u[FIT_MAXSETS * FIT_MAXCOL], at[FIT_MAXSETS][FIT_MAXCOL];
	double ss[FIT_MAXSETS * FIT_MAXCOL] = { 0 }, yss = 0;
	unsigned int nu = sets_union(b, nsets, u, at), i, s;
	size_t row;

	for (row = 0; row < d->n; row++) {
		const double *x = d->x + row * d->stride;
		double wr = d->w ? d->w[row] : 1;

		if (!(wr >= 0) || !isfinite(wr))
			return -EINVAL;
		for (i = 0; i < nu; i++)
			ss[i] += wr * x[u[i]] * x[u[i]];
		yss += wr * FIT_Y(d, row) * FIT_Y(d, row);
	}
	if (!isfinite(yss))
		return -EINVAL;
	for (s = 0; s < nsets; s++) {
		for (i = 0; i < b[s].ncols; i++) {
			double sum = ss[at[s][i]];

			if (!isfinite(sum))
				return -EINVAL;
			b[s].scale[i] = sqrt(sum / (double)d->n);
			if (b[s].scale[i] > 0)
				b[s].act[b[s].q++] = i;
		}
		b[s].yscale = yss > 0 ? sqrt(yss / (double)d->n) : 1.0;
	}
	return 0;
}

/* The blocks' first rows: given, or equal parts; they must tile [0, n). */
static int blocks_starts(const struct fit_design *d, struct fit_blocks *b)
{
	unsigned int nblocks = b->nblocks, blk;

	for (blk = 0; blk <= nblocks; blk++)
		b->start[blk] = d->bounds ? d->bounds[blk] :
					    fit_fold_start(d->n, blk, nblocks);
	if (b->start[0] || b->start[nblocks] != d->n)
		return -EINVAL;
	for (blk = 0; blk < nblocks; blk++)
		if (b->start[blk] > b->start[blk + 1])
			return -EINVAL;
	return 0;
}

/*
 * x . y over a chunk's column, as two interleaved partial sums in a
 * 16-byte vector: half the instructions of one running sum, and no less
 * accurate (the rounding differs from summing in order, not its size).
 */
static inline double chunk_dot(const double *restrict x,
			       const double *restrict y, size_t n)
{
	fit_v2d acc = { 0, 0 };
	double s;
	size_t i;

	for (i = 0; i + 2 <= n; i += 2) {
		fit_v2d xv, yv;

		__builtin_memcpy(&xv, x + i, sizeof(xv));
		__builtin_memcpy(&yv, y + i, sizeof(yv));
		acc += xv * yv;
	}
	s = acc[0] + acc[1];
	return i < n ? s + x[i] * y[i] : s;
}

/*
 * chunk_dot() of x with m (at most 4) columns y, y + ld, ..: the same
 * partial sums, each in the same order as chunk_dot() alone, but in one
 * pass, so that the m chains of adds overlap and x is loaded once.
 */
static inline __attribute__((always_inline)) void
chunk_dots(const double *restrict x, const double *y, size_t ld, unsigned int m,
	   size_t n, double *out)
{
	fit_v2d acc[4] = { { 0, 0 }, { 0, 0 }, { 0, 0 }, { 0, 0 } };
	unsigned int t;
	size_t i;

	for (i = 0; i + 2 <= n; i += 2) {
		fit_v2d xv;

		__builtin_memcpy(&xv, x + i, sizeof(xv));
#pragma GCC unroll 4
		for (t = 0; t < m; t++) {
			fit_v2d yv;

			__builtin_memcpy(&yv, y + t * ld + i, sizeof(yv));
			acc[t] += xv * yv;
		}
	}
	for (t = 0; t < m; t++) {
		double s = acc[t][0] + acc[t][1];

		out[t] = i < n ? s + x[i] * y[t * ld + i] : s;
	}
}

/* x *= a over a chunk's column, two at a time (the same products). */
static inline void chunk_scale(double *restrict x, double a, size_t n)
{
	fit_v2d av = { a, a };
	size_t i;

	for (i = 0; i + 2 <= n; i += 2) {
		fit_v2d xv;

		__builtin_memcpy(&xv, x + i, sizeof(xv));
		xv *= av;
		__builtin_memcpy(x + i, &xv, sizeof(xv));
	}
	if (i < n)
		x[i] *= a;
}

/*
 * Householder reduction of [R; C] to a new R: R is k x k upper triangular
 * (row-major), C a chunk of c rows stored column by column, ld apart.
 * Below the diagonal R is 0, so column j's reflector touches only R's row
 * j and C's column j: a chunk costs c k^2 multiply-adds, on contiguous
 * columns (GSL's general QR of the stacked matrix did the same arithmetic
 * on the known zeros, through strided accessors). Reflectors as LAPACK's
 * dlarfg: the new diagonal takes the sign opposite to the old one, so
 * nothing cancels.
 */
static inline __attribute__((always_inline)) void
qr_update_w(double *restrict r, unsigned int k, double *restrict cm, size_t ld,
	    size_t c, int wide)
{
	unsigned int j, l, m;

	for (j = 0; j < k; j++) {
		double *restrict v = cm + j * ld;
		double alpha = r[j * k + j], beta, tau, sc;
		double xn = chunk_dot(v, v, c);

		if (xn == 0)
			continue; /* the chunk is 0 there: nothing to rotate */
		beta = sqrt(alpha * alpha + xn);
		if (alpha > 0)
			beta = -beta;
		tau = (beta - alpha) / beta;
		sc = 1 / (alpha - beta);
		chunk_scale(v, sc, c);
		r[j * k + j] = beta;
		/*
		 * Up to four columns' dot products with v at a time, then
		 * their updates: u's update changes no other column's.
		 */
		for (l = j + 1; l < k; l += m) {
			double d[4];
			unsigned int t;

			m = k - l >= 4 ? 4 : k - l >= 2 ? 2 : 1;
			if (m == 4)
				chunk_dots(v, cm + l * ld, ld, 4, c, d);
			else if (m == 2)
				chunk_dots(v, cm + l * ld, ld, 2, c, d);
			else
				chunk_dots(v, cm + l * ld, ld, 1, c, d);
			for (t = 0; t < m; t++) {
				double *restrict u = cm + (l + t) * ld;
				double s = (r[j * k + l + t] + d[t]) * tau;

				r[j * k + l + t] -= s;
				/* u - s v, as exactly */
				fit_axpy_w(u, v, -s, c, wide);
			}
		}
	}
}

/* qr_update_w() in an AVX2 copy on CPUs that have it (FIT_AVX2). */
FIT_AVX2
static void qr_update_avx2(double *restrict r, unsigned int k,
			   double *restrict cm, size_t ld, size_t c)
{
	qr_update_w(r, k, cm, ld, c, 1);
}

static void qr_update(double *restrict r, unsigned int k, double *restrict cm,
		      size_t ld, size_t c)
{
	if (FIT_HAVE_AVX2())
		qr_update_avx2(r, k, cm, ld, c);
	else
		qr_update_w(r, k, cm, ld, c, 0);
}

/* Row `row` of d, scaled and weighted (sw), as row c of the chunk cm. */
static inline void chunk_row(const struct fit_design *d,
			     const struct fit_blocks *b, size_t row, double sw,
			     double *cm, size_t c)
{
	const double *x = d->x + row * d->stride;
	size_t j;

	for (j = 0; j < b->q; j++) {
		unsigned int a = b->act[j];

		cm[j * FIT_CHUNK + c] = sw * x[b->cols[a]] / b->scale[a];
	}
	cm[b->q * FIT_CHUNK + c] = sw * FIT_Y(d, row) / b->yscale;
}

/*
 * One block's R factor of [X y], scaled, into b[s].r for every set: its
 * rows are reduced a chunk at a time into the R so far (cm[s] holds a
 * chunk of set s, (q + 1) x FIT_CHUNK).
 */
FIT_HOT
static void block_qr(const struct fit_design *d, struct fit_blocks *b,
		     unsigned int nsets, unsigned int blk, double *const *cm)
{
	size_t end = b[0].start[blk + 1], row;
	unsigned int s;

	for (s = 0; s < nsets; s++)
		memset(b[s].r + (size_t)blk * (b[s].q + 1) * (b[s].q + 1), 0,
		       (b[s].q + 1) * (b[s].q + 1) * sizeof(*b[s].r));
	for (row = b[0].start[blk]; row < end;) {
		size_t c = 0;

		/* The next chunk, scaled, one column after the other. */
		for (; c < FIT_CHUNK && row < end; row++) {
			double sw = d->w ? sqrt(d->w[row]) : 1;

			if (sw == 0)
				continue; /* rejected: not in the fit */
			for (s = 0; s < nsets; s++)
				chunk_row(d, &b[s], row, sw, cm[s], c);
			c++;
		}
		if (!c)
			break;
		for (s = 0; s < nsets; s++)
			qr_update(b[s].r + (size_t)blk * (b[s].q + 1) *
						   (b[s].q + 1),
				  b[s].q + 1, cm[s], FIT_CHUNK, c);
	}
}

/* Set s's columns, its blocks' starts and room for their R factors. */
static int blocks_alloc(const struct fit_design *d, unsigned int nblocks,
			struct fit_blocks *b, double **cm)
{
	size_t k = b->q + 1;

	b->nblocks = nblocks;
	b->start = calloc(nblocks + 1, sizeof(*b->start));
	b->r = calloc((size_t)nblocks * k * k, sizeof(*b->r));
	*cm = malloc(k * FIT_CHUNK * sizeof(**cm));
	if (!b->start || !b->r || !*cm)
		return -ENOMEM;
	return blocks_starts(d, b);
}

int fit_blocks_build_sets(const struct fit_design *d,
			  const struct fit_cols *sets, unsigned int nsets,
			  unsigned int nblocks, struct fit_blocks *b)
{
	double *cm[FIT_MAXSETS] = { NULL };
	unsigned int i, s, blk;
	int ret = -EINVAL;

	memset(b, 0, nsets * sizeof(*b));
	if (!nsets || nsets > FIT_MAXSETS || !nblocks ||
	    (!d->bounds && d->n < nblocks))
		return -EINVAL;
	for (s = 0; s < nsets; s++) {
		if (sets[s].n > FIT_MAXCOL)
			return -EINVAL;
		for (i = 0; i < sets[s].n; i++)
			if (sets[s].cols[i] >= d->stride)
				return -EINVAL;
		b[s].ncols = sets[s].n;
		memcpy(b[s].cols, sets[s].cols, sets[s].n * sizeof(*b->cols));
	}
	ret = blocks_scales(d, b, nsets);
	for (s = 0; !ret && s < nsets; s++)
		ret = blocks_alloc(d, nblocks, &b[s], &cm[s]);
	for (blk = 0; !ret && blk < nblocks; blk++)
		block_qr(d, b, nsets, blk, cm);
	for (s = 0; s < nsets; s++) {
		free(cm[s]);
		if (ret)
			fit_blocks_free(&b[s]);
	}
	return ret;
}

int fit_blocks_build(const struct fit_design *d, const unsigned int *cols,
		     unsigned int ncols, unsigned int nblocks,
		     struct fit_blocks *b)
{
	struct fit_cols set = { .cols = cols, .n = ncols };

	return fit_blocks_build_sets(d, &set, 1, nblocks, b);
}

/* Least squares on the columns in `in` only (others 0), by SVD. */
static int ls_subset(const gsl_matrix *a, const gsl_vector *b,
		     const unsigned char *in, gsl_vector *s)
{
	size_t m = a->size1, n = a->size2, np = 0, i, j, c;
	gsl_multifit_linear_workspace *ws;
	gsl_matrix *ap, *cov;
	gsl_vector *cp;
	double chisq;
	int ret = -ENOMEM;

	for (j = 0; j < n; j++)
		np += in[j];
	gsl_vector_set_zero(s);
	if (!np)
		return 0;
	ap = gsl_matrix_alloc(m, np);
	cov = gsl_matrix_alloc(np, np);
	cp = gsl_vector_alloc(np);
	ws = gsl_multifit_linear_alloc(m, np);
	if (!ap || !cov || !cp || !ws)
		goto out;
	for (j = 0, c = 0; j < n; j++) {
		if (!in[j])
			continue;
		for (i = 0; i < m; i++)
			gsl_matrix_set(ap, i, c, gsl_matrix_get(a, i, j));
		c++;
	}
	gsl_multifit_linear(ap, b, cp, cov, &chisq, ws);
	for (j = 0, c = 0; j < n; j++)
		if (in[j])
			gsl_vector_set(s, j, gsl_vector_get(cp, c++));
	ret = 0;
out:
	if (ws)
		gsl_multifit_linear_free(ws);
	gsl_vector_free(cp);
	gsl_matrix_free(cov);
	gsl_matrix_free(ap);
	return ret;
}

int fit_small_solve(const gsl_matrix *a, const gsl_vector *z,
		    const struct fit_solve_opts *o, gsl_vector *c,
		    unsigned int *dropped, double *negative,
		    unsigned int *iters)
{
	unsigned char in[FIT_MAXCOL];
	size_t n = a->size2, j;
	int ret;

	*dropped = 0;
	if (o->method == FIT_NNLS)
		return fit_nnls(a, z, c, iters);
	memset(in, 1, sizeof(in));
	ret = ls_subset(a, z, in, c);
	while (!ret && o->drop_negative) {
		int any = 0;

		for (j = 0; j < n; j++) {
			double v = gsl_vector_get(c, j);

			if (!in[j] || v >= 0)
				continue;
			in[j] = 0;
			any = 1;
			*dropped |= 1u << j;
			negative[j] = v;
		}
		if (!any)
			break;
		ret = ls_subset(a, z, in, c);
	}
	return ret;
}

int fit_small_solve_known(const gsl_matrix *a, const gsl_vector *z,
			  const struct fit_solve_opts *o, gsl_vector *c,
			  unsigned int *dropped, double *negative,
			  unsigned int *iters)
{
	size_t n = c->size, j;

	*dropped = 0;
	for (j = 0; j < n; j++) {
		double v = gsl_vector_get(c, j);

		/* Not where NNLS's active set or OLS's dropping would end. */
		if (o->method == FIT_NNLS ? !(v > 0) :
					    o->drop_negative && v < 0)
			return fit_small_solve(a, z, o, c, dropped, negative,
					       iters);
	}
	/* NNLS: as many steps as would have added them all */
	if (o->method == FIT_NNLS && iters)
		*iters = (unsigned int)n;
	return 0;
}

int fit_small_solve_tri(const gsl_matrix *r, const gsl_vector *z,
			const struct fit_solve_opts *o, gsl_vector *c,
			unsigned int *dropped, double *negative,
			unsigned int *iters)
{
	size_t q = r->size1, i, j;

	for (i = q; i-- > 0;) {
		double s = gsl_vector_get(z, i);

		for (j = i + 1; j < q; j++)
			s -= gsl_matrix_get(r, i, j) * gsl_vector_get(c, j);
		gsl_vector_set(c, i, s / gsl_matrix_get(r, i, i));
	}
	return fit_small_solve_known(r, z, o, c, dropped, negative, iters);
}

/* w = A'(b - A x) */
static void neg_gradient(const gsl_matrix *a, const gsl_vector *b,
			 const gsl_vector *x, gsl_vector *res, gsl_vector *w)
{
	gsl_vector_memcpy(res, b);
	gsl_blas_dgemv(CblasNoTrans, -1.0, a, x, 1.0, res);
	gsl_blas_dgemv(CblasTrans, 1.0, a, res, 0.0, w);
}

/* The largest column sum of |A|: the problem's size, for the tolerance. */
static double norm1_cols(const gsl_matrix *a)
{
	size_t i, j;
	double norm1 = 0;

	for (j = 0; j < a->size2; j++) {
		double col = 0;

		for (i = 0; i < a->size1; i++)
			col += fabs(gsl_matrix_get(a, i, j));
		if (col > norm1)
			norm1 = col;
	}
	return norm1;
}

/* Most promising inactive variable: largest descent direction (n: none). */
static size_t nnls_pick(const gsl_vector *w, const unsigned char *in,
			const unsigned char *banned, double tol)
{
	size_t n = w->size, t = n, j;
	double best = tol;

	for (j = 0; j < n; j++)
		if (!in[j] && !banned[j] && gsl_vector_get(w, j) > best) {
			best = gsl_vector_get(w, j);
			t = j;
		}
	return t;
}

/*
 * Step from x towards s until the first variable hits zero; those at zero
 * (within tol) leave the active set.
 */
static void nnls_step(gsl_vector *x, const gsl_vector *s, unsigned char *in,
		      double tol)
{
	size_t n = x->size, j;
	double alpha = INFINITY;

	for (j = 0; j < n; j++) {
		double xj = gsl_vector_get(x, j), sj = gsl_vector_get(s, j);

		if (in[j] && sj <= 0 && xj - sj > 0 && xj / (xj - sj) < alpha)
			alpha = xj / (xj - sj);
	}
	if (!isfinite(alpha))
		alpha = 0;
	for (j = 0; j < n; j++) {
		double xj = gsl_vector_get(x, j);

		xj += alpha * (gsl_vector_get(s, j) - xj);
		if (in[j] && xj <= tol) {
			in[j] = 0;
			xj = 0;
		}
		gsl_vector_set(x, j, in[j] ? xj : 0);
	}
}

/*
 * The inner loop: least squares on the active set into s, stepping back
 * while a variable of it comes out <= 0. 0, -ENOMEM or -EDOM (too long).
 */
static int nnls_inner(const gsl_matrix *a, const gsl_vector *b,
		      unsigned char *in, gsl_vector *s, gsl_vector *x,
		      double tol, unsigned int *it, unsigned int maxit)
{
	size_t n = a->size2, j;

	for (;;) {
		int feasible = 1;

		if (ls_subset(a, b, in, s))
			return -ENOMEM;
		for (j = 0; j < n; j++)
			if (in[j] && gsl_vector_get(s, j) <= 0)
				feasible = 0;
		if (feasible)
			return 0;
		nnls_step(x, s, in, tol);
		if (++*it > maxit)
			return -EDOM;
	}
}

/*
 * The usual case, every coefficient positive at the unconstrained
 * optimum: the active set method would add the variables one by one, a
 * least-squares solve each, and end with them all in and the same solve
 * on all (then nothing is left to add). Done at once: 1 if so, x = s.
 */
static int nnls_interior(const gsl_matrix *a, const gsl_vector *b,
			 unsigned char *in, gsl_vector *s)
{
	size_t n = a->size2, j;

	if (a->size1 < n)
		return 0;
	memset(in, 1, n);
	if (!ls_subset(a, b, in, s))
		for (j = 0; j < n && gsl_vector_get(s, j) > 0; j++)
			;
	else
		j = 0;
	if (j == n)
		return 1;
	memset(in, 0, n);
	return 0;
}

int fit_nnls(const gsl_matrix *a, const gsl_vector *b, gsl_vector *x,
	     unsigned int *iters)
{
	size_t m = a->size1, n = a->size2, j;
	unsigned char *in = calloc(n ? n : 1, 1),
		      *banned = calloc(n ? n : 1, 1);
	gsl_vector *w = gsl_vector_alloc(n), *s = gsl_vector_alloc(n);
	gsl_vector *res = gsl_vector_alloc(m);
	unsigned int it = 0, maxit = 3 * (unsigned int)n + 10;
	double tol;
	int ret = -ENOMEM;

	if (!in || !banned || !w || !s || !res)
		goto out;
	gsl_vector_set_zero(x);
	/* The usual lsqnonneg tolerance: a few ulps of the problem's size. */
	tol = 10 * DBL_EPSILON * norm1_cols(a) * (double)(m > n ? m : n);

	ret = 0;
	if (n && nnls_interior(a, b, in, s)) {
		gsl_vector_memcpy(x, s);
		/* as many steps as would have added them */
		it = (unsigned int)n;
		goto out;
	}
	neg_gradient(a, b, x, res, w);
	for (;;) {
		size_t t = nnls_pick(w, in, banned, tol);

		if (t == n)
			break;
		if (++it > maxit) {
			ret = -EDOM;
			break;
		}
		in[t] = 1;
		ret = nnls_inner(a, b, in, s, x, tol, &it, maxit);
		if (ret)
			goto out;
		gsl_vector_memcpy(x, s);
		neg_gradient(a, b, x, res, w);
		/*
		 * Degenerate case (rank deficiency): the variable just added came
		 * out at zero although its gradient said it should grow. Leave it
		 * out for good, or the loop would pick it again forever.
		 */
		if (gsl_vector_get(x, t) <= 0) {
			in[t] = 0;
			banned[t] = 1;
		}
	}
out:
	/* The contract is x >= 0; make it hold even on the error paths. */
	for (j = 0; j < n; j++)
		if (!(gsl_vector_get(x, j) > 0))
			gsl_vector_set(x, j, 0);
	if (iters)
		*iters = it;
	gsl_vector_free(res);
	gsl_vector_free(s);
	gsl_vector_free(w);
	free(banned);
	free(in);
	return ret;
}

/*
 * Diagnostics of the reduced, scaled system R (q x q): condition, variance
 * inflation, and the direction the data determine least, from its SVD.
 */
static int diagnose(const gsl_matrix *r, const struct fit_blocks *b,
		    struct fit_result *res)
{
	size_t q = r->size1, i, j;
	gsl_matrix *u = gsl_matrix_alloc(q, q), *v = gsl_matrix_alloc(q, q);
	gsl_vector *sv = gsl_vector_alloc(q), *work = gsl_vector_alloc(q);
	int ret = -ENOMEM;

	if (!u || !v || !sv || !work)
		goto out;
	gsl_matrix_memcpy(u, r);
	gsl_linalg_SV_decomp(u, v, sv, work);
	/* singular values come sorted in decreasing order */
	res->rcond = gsl_vector_get(sv, 0) > 0 ?
			     gsl_vector_get(sv, q - 1) / gsl_vector_get(sv, 0) :
			     0;
	for (j = 0; j < q; j++) {
		double diag = 0, inv = 0;

		for (i = 0; i < q; i++) {
			double rij = gsl_matrix_get(r, i, j),
			       s = gsl_vector_get(sv, i);
			double vji = gsl_matrix_get(v, j, i);

			diag += rij * rij;
			inv += s > 0 ? vji * vji / (s * s) : INFINITY;
		}
		res->vif[b->act[j]] = diag * inv;
		res->weakest[b->act[j]] = gsl_matrix_get(v, j, q - 1);
	}
	ret = 0;
out:
	gsl_vector_free(work);
	gsl_vector_free(sv);
	gsl_matrix_free(v);
	gsl_matrix_free(u);
	return ret;
}

/*
 * Stack the R factors of the blocks in use into st, each scaled by the
 * root of its multiplicity; returns how many were stacked.
 */
static size_t stack_blocks(const struct fit_blocks *b,
			   const struct fit_solve_opts *o, gsl_matrix *st)
{
	size_t k = b->q + 1, nb = 0, blk, i, j;

	for (blk = 0; blk < b->nblocks; blk++) {
		const double *r = b->r + blk * k * k;
		/* Drawn m times weighs like m copies: R scaled by sqrt(m). */
		double sm = o->mult ? sqrt(o->mult[blk]) : 1;

		if (sm == 0)
			continue;
		for (i = 0; i < k; i++)
			for (j = 0; j < k; j++)
				gsl_matrix_set(st, nb * k + i, j,
					       sm * r[i * k + j]);
		nb++;
	}
	return nb;
}

/*
 * Penalty rows: sqrt(lambda) I beside the data, target 0, as block nb;
 * lambda relative to the mean squared column of the stacked data.
 */
static void stack_ridge(const struct fit_blocks *b, gsl_matrix *st, size_t nb)
{
	size_t k = b->q + 1, i, j;
	double tr = 0, l;

	for (i = 0; i < nb * k; i++)
		for (j = 0; j < b->q; j++)
			tr += gsl_matrix_get(st, i, j) *
			      gsl_matrix_get(st, i, j);
	l = sqrt(b->ridge * tr / b->q);
	for (i = 0; i < k; i++)
		for (j = 0; j < k; j++)
			gsl_matrix_set(st, nb * k + i, j,
				       i == j && i < b->q ? l : 0);
}

/*
 * Solve R c = z (scaled) and bring the coefficients back to data units.
 * R well conditioned (res->rcond from its SVD): by back substitution,
 * what the SVD's solution is then too (no singular value is truncated).
 */
static int solve_unscale(const struct fit_blocks *b,
			 const struct fit_solve_opts *o, gsl_matrix *r,
			 gsl_vector *z, gsl_vector *c, struct fit_result *res)
{
	double neg[FIT_MAXCOL];
	unsigned int dropped = 0;
	size_t j;
	int ret;

	if (res->rcond > FIT_DIRECT_RCOND)
		ret = fit_small_solve_tri(r, z, o, c, &dropped, neg,
					  &res->iter);
	else
		ret = fit_small_solve(r, z, o, c, &dropped, neg, &res->iter);
	if (ret == -ENOMEM)
		return ret;
	for (j = 0; j < b->q; j++) {
		unsigned int col = b->act[j];
		double u = b->yscale / b->scale[col];

		res->beta[col] = gsl_vector_get(c, j) * u;
		if (dropped & (1u << j)) {
			res->dropped |= 1u << col;
			res->negative[col] = neg[j] * u;
		}
	}
	return ret;
}

int fit_solve_ex(const struct fit_blocks *b, const struct fit_solve_opts *o,
		 struct fit_result *res)
{
	size_t k = b->q + 1, nb = 0, blk;
	gsl_matrix *st = NULL, *rr = NULL;
	gsl_vector *tau = NULL, *c = NULL;
	gsl_matrix_view av;
	gsl_vector_view zv;
	int ret = -ENOMEM;

	memset(res, 0, sizeof(*res));
	res->rcond = 1;
	for (blk = 0; blk < b->nblocks; blk++)
		nb += !o->mult || o->mult[blk] > 0;
	if (!nb)
		return -EINVAL;
	if (!b->q)
		return 0;

	/* Stack the R factors of the blocks in use and reduce them to one. */
	st = gsl_matrix_alloc((nb + (b->ridge > 0)) * k, k);
	tau = gsl_vector_alloc(k);
	c = gsl_vector_alloc(b->q);
	rr = gsl_matrix_alloc(b->q, b->q);
	if (!st || !tau || !c || !rr)
		goto out;
	nb = stack_blocks(b, o, st);
	if (b->ridge > 0)
		stack_ridge(b, st, nb++);
	if (nb > 1) {
		gsl_linalg_QR_decomp(st, tau);
		clear_lower(st, k);
	}
	av = gsl_matrix_submatrix(st, 0, 0, b->q, b->q);
	zv = gsl_matrix_subcolumn(st, b->q, 0, b->q);
	gsl_matrix_memcpy(rr, &av.matrix);
	if (diagnose(rr, b, res))
		goto out;
	ret = solve_unscale(b, o, &av.matrix, &zv.vector, c, res);
out:
	gsl_matrix_free(rr);
	gsl_vector_free(c);
	gsl_vector_free(tau);
	gsl_matrix_free(st);
	return ret;
}

int fit_solve(const struct fit_blocks *b, int exclude, enum fit_method method,
	      struct fit_result *res)
{
	double mult[256], *m = mult;
	struct fit_solve_opts o = { .method = method };
	unsigned int i;
	int ret;

	if (exclude >= 0 && (unsigned int)exclude < b->nblocks) {
		if (b->nblocks > 256) {
			m = malloc(b->nblocks * sizeof(*m));
			if (!m)
				return -ENOMEM;
		}
		for (i = 0; i < b->nblocks; i++)
			m[i] = (int)i != exclude;
		o.mult = m;
	}
	ret = fit_solve_ex(b, &o, res);
	if (m != mult)
		free(m);
	return ret;
}

double fit_predict(const struct fit_blocks *b, const struct fit_result *res,
		   const double *row)
{
	double p = 0;
	unsigned int i;

	for (i = 0; i < b->ncols; i++)
		p += res->beta[i] * row[b->cols[i]];
	return p;
}

void fit_acc_init(struct fit_acc *a)
{
	memset(a, 0, sizeof(*a));
}

void fit_acc_result(const struct fit_acc *a, struct fit_metrics *m)
{
	m->n = a->n;
	m->n_mape = a->n_mape;
	m->mape = a->n_mape ? 100.0 * a->sum_ape / (double)a->n_mape : NAN;
	m->rmse = a->n ? sqrt(a->sse / (double)a->n) : NAN;
	m->mae = a->n ? a->sae / (double)a->n : NAN;
	m->r2 = a->m2 > 0 ? 1.0 - a->sse / a->m2 : NAN;
}
