// SPDX-License-Identifier: GPL-2.0
/*
 * Robust row weights for the fitter (see fit_robust() in fit.h).
 *
 * Why this estimator: one bad interval (a meter spike or dropout, a
 * corrupt counter that is still plausible) moves a least-squares fit
 * arbitrarily. Huber-type weights do not help against rows with extreme
 * feature values (leverage points): the least-squares start fits them, so
 * their residuals look small. So the start is high-breakdown (least trimmed
 * squares), and the final estimate is Tukey's bisquare M-estimate from that
 * start with the scale held fixed: an MM-type estimator, efficient on clean
 * data and unmoved by a minority of bad rows, which get weight 0.
 *
 * All work is on scaled columns (unit RMS), and the IRLS steps accumulate
 * weighted normal equations (q x q) in one pass over the rows each: the
 * weights need not be exact, and the caller refits with them by QR.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_eigen.h>
#include <gsl/gsl_linalg.h>

#include "fit.h"

#define SUB_MAX 2000 /* rows of the subsample the start is computed on */
#define N_START 100 /* elemental starts */
#define N_KEEP 10 /* best starts refined to convergence */
#define MAX_CSTEP 30
#define MAX_IRLS 50
/*
 * IRLS first converges on every k-th row (at most this many), then
 * finishes on all rows from there in a few passes: each pass over a
 * million rows costs more than the whole subsample phase.
 */
#define IRLS_SUB 65536
/*
 * Passes over all rows after that, at most, and the relative change of the
 * coefficients in the last one below which the weights count as settled.
 */
#define IRLS_FULL 2
#define IRLS_SETTLED 1e-3
#define SCALE_SUB 262144 /* rows the scale's median is taken over */
#define SCALE_AHEAD 8 /* rows ahead of the scale's pass asked for */
#define MAD_NORMAL 1.4826 /* 1 / Phi^-1(3/4): MAD -> sigma under normality */
#define SCALE_FLOOR \
	1e-5 /* relative to the median |y|: below any meter's accuracy */

struct rob {
	const struct fit_design *d;
	const double *rdiv; /* divisor of row i's residual: rdiv[i * rstride] */
	size_t rstride;
	unsigned int q;
	unsigned int col[FIT_MAXCOL]; /* design column of each fitted one */
	double scale[FIT_MAXCOL];
	double inv_scale[FIT_MAXCOL];
	double yscale, inv_yscale;
	const struct fit_solve_opts *o;
	uint64_t rng;
};

static double rnd(struct rob *r)
{
	/* xorshift64*, fixed seed: the same fit every run */
	r->rng ^= r->rng >> 12;
	r->rng ^= r->rng << 25;
	r->rng ^= r->rng >> 27;
	return (double)((r->rng * 2685821657736338717ULL) >> 11) * 0x1.0p-53;
}

/* Scaled row i into x; returns the scaled target. */
static inline __attribute__((always_inline)) double
row(const struct rob *r, size_t i, double *restrict x)
{
	const double *src = r->d->x + i * r->d->stride;
	unsigned int j;

	for (j = 0; j < r->q; j++)
		x[j] = src[r->col[j]] * r->inv_scale[j];
	return FIT_Y(r->d, i) * r->inv_yscale;
}

static inline double rdiv_of(const struct rob *r, size_t i)
{
	return r->rdiv ? r->rdiv[i * r->rstride] : 1;
}

/* Residual of scaled row (x, y) i, divided by rdiv: powers, not energies. */
static inline __attribute__((always_inline)) double
resid_x(const struct rob *r, size_t i, const double *x, double y,
	const double *beta)
{
	return (y - fit_dot(x, beta, r->q)) / rdiv_of(r, i);
}

static inline __attribute__((always_inline)) double
resid(const struct rob *r, size_t i, const double *beta)
{
	double x[FIT_MAXCOL], y = row(r, i, x);

	return resid_x(r, i, x, y, beta);
}

/*
 * The normal equations A beta = b of q columns as one (q + 1) x (q + 1)
 * upper triangle [A b] (NE_SIZE doubles), of the rows [x y]: ne_add()
 * adds w [x y] [x y]' to it, so b[i] gets (w x[i]) y in the same update
 * as A's row i (the last element, w y y, is not used). Restrict-qualified
 * and always inlined: it is the inner loop of every pass.
 */
#define NE_SIZE ((FIT_MAXCOL + 1) * (FIT_MAXCOL + 1))

/* [A b] of q columns, zeroed (its (q + 1)^2 doubles, not NE_SIZE). */
static inline void ne_zero(double *ab, unsigned int q)
{
	memset(ab, 0, (size_t)(q + 1) * (q + 1) * sizeof(*ab));
}

static inline __attribute__((always_inline)) void
ne_add(double *restrict ab, unsigned int q, const double *restrict xy, double w,
       int wide)
{
	fit_syr_w(ab, xy, w, q + 1, wide);
}

/*
 * The least-squares system of the normal equations from A = V L V': rows
 * M = L^1/2 V', z = L^-1/2 V' b, the directions the data do not determine
 * (eigenvalues below 1e-14 of the largest) left at 0. If there is none, M
 * is of full rank and its solution V z / L^1/2 goes into c: returns 1.
 */
static int eigen_system(const gsl_matrix *v, const gsl_vector *l, double lmax,
			const double *b, gsl_matrix *m, gsl_vector *z,
			gsl_vector *c)
{
	unsigned int q = (unsigned int)l->size, i, k;
	int full = 1;

	gsl_vector_set_zero(c);
	for (k = 0; k < q; k++) {
		double lk = gsl_vector_get(l, k), vb = 0, zk;
		/* Directions the data do not determine carry no information. */
		double sl = lk > 1e-14 * lmax ? sqrt(lk) : 0;

		for (i = 0; i < q; i++)
			vb += gsl_matrix_get(v, i, k) * b[i];
		for (i = 0; i < q; i++)
			gsl_matrix_set(m, k, i, sl * gsl_matrix_get(v, i, k));
		zk = sl > 0 ? vb / sl : 0;
		gsl_vector_set(z, k, zk);
		full &= sl > 0;
		for (i = 0; sl > 0 && i < q; i++)
			gsl_vector_set(c, i,
				       gsl_vector_get(c, i) +
					       gsl_matrix_get(v, i, k) * zk /
						       sl);
	}
	return full;
}

/*
 * Solve the normal equations A beta = b (A symmetric, upper triangle
 * filled) by the method: A = V L V' gives the least-squares system
 * M = L^1/2 V', z = L^-1/2 V' b with M'M = A, M'z = b, which NNLS and
 * OLS take as is. unconstrained: plain OLS whatever the method (the
 * high-breakdown start needs no constraint).
 */
static int solve_ne(const struct rob *r, const double *ab, int unconstrained,
		    double *beta)
{
	unsigned int q = r->q, i, j, k;
	double b[FIT_MAXCOL];
	gsl_matrix *am = gsl_matrix_alloc(q, q), *v = gsl_matrix_alloc(q, q);
	gsl_matrix *m = gsl_matrix_alloc(q, q);
	gsl_vector *l = gsl_vector_alloc(q), *z = gsl_vector_alloc(q),
		   *c = gsl_vector_alloc(q);
	gsl_eigen_symmv_workspace *ws = gsl_eigen_symmv_alloc(q);
	struct fit_solve_opts o = *r->o;
	double lmax = 0, neg[FIT_MAXCOL];
	unsigned int dropped, it;
	int ret = -ENOMEM, full;

	if (!am || !v || !m || !l || !z || !c || !ws)
		goto out;
	for (i = 0; i < q; i++) {
		for (j = i; j < q; j++) {
			gsl_matrix_set(am, i, j, ab[i * (q + 1) + j]);
			gsl_matrix_set(am, j, i, ab[i * (q + 1) + j]);
		}
		b[i] = ab[i * (q + 1) + q];
	}
	gsl_eigen_symmv(am, l, v, ws);
	for (k = 0; k < q; k++)
		lmax = fmax(lmax, gsl_vector_get(l, k));
	full = eigen_system(v, l, lmax, b, m, z, c);
	if (unconstrained) {
		o.method = FIT_OLS;
		o.drop_negative = 0;
	}
	if (full)
		ret = fit_small_solve_known(m, z, &o, c, &dropped, neg, &it);
	else
		ret = fit_small_solve(m, z, &o, c, &dropped, neg, &it);
	if (ret == -EDOM)
		ret = 0; /* NNLS's last feasible point: good enough for weights */
	for (i = 0; i < q; i++)
		beta[i] = gsl_vector_get(c, i);
out:
	if (ws)
		gsl_eigen_symmv_free(ws);
	gsl_vector_free(c);
	gsl_vector_free(z);
	gsl_vector_free(l);
	gsl_matrix_free(m);
	gsl_matrix_free(v);
	gsl_matrix_free(am);
	return ret;
}

/*
 * Selection by partitions without branches on the data (a swap each, the
 * end moved on by the comparison: unpredictable branches were most of the
 * time on residuals), around a median of three; when none is below the
 * pivot, those equal to it are split off, so every round removes at
 * least one value. The same k-th value as any exact
 * selection, and v left partitioned around it.
 */
/* Below this many values, insertion sort. */
#define KTH_SMALL 16

static inline double med3(double a, double b, double c)
{
	if (a < b)
		return b < c ? b : (a < c ? c : a);
	return a < c ? a : (b < c ? c : b);
}

double fit_kth(double *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n, i, j, m;

	while (hi - lo > KTH_SMALL) {
		double p = med3(v[lo], v[lo + (hi - lo) / 2], v[hi - 1]);

		/* [lo, j) < p, branch free: a swap each, j moves on less */
		for (i = j = lo; i < hi; i++) {
			double t = v[i];

			v[i] = v[j];
			v[j] = t;
			j += t < p;
		}
		if (k < j) {
			hi = j;
			continue;
		}
		if (j > lo) {
			lo = j;
			continue;
		}
		/* p is the least: [j, m) == p (p is one of them), [m, hi) > p */
		for (i = m = j; i < hi; i++) {
			double t = v[i];

			v[i] = v[m];
			v[m] = t;
			m += !(p < t);
		}
		if (k < m)
			return p;
		lo = m;
	}
	for (i = lo + 1; i < hi; i++) {
		double t = v[i];

		for (j = i; j > lo && v[j - 1] > t; j--)
			v[j] = v[j - 1];
		v[j] = t;
	}
	return v[k];
}

/*
 * The subsample the start is computed on, scaled once: per row the q
 * scaled columns, the scaled target and rdiv (1 when none), the values
 * row() and resid() give for it.
 */
struct subsample {
	size_t m;
	unsigned int w; /* doubles per row: q + 2 */
	double *z;
};

static inline const double *sub_row(const struct subsample *s, size_t k)
{
	return s->z + k * s->w;
}

/* Row `at` of the design into z, as row() and resid() see it. */
static void sub_set(const struct rob *r, double *z, size_t at)
{
	z[r->q] = row(r, at, z);
	z[r->q + 1] = rdiv_of(r, at);
}

static inline __attribute__((always_inline)) double
sub_resid(const struct rob *r, const double *z, const double *beta)
{
	return (z[r->q] - fit_dot(z, beta, r->q)) / z[r->q + 1];
}

/*
 * One concentration step on the subsample: least squares on the h rows
 * with the smallest |residual| under beta. Returns the sum of those h
 * squared residuals under the old beta (the LTS objective).
 */
static inline __attribute__((always_inline)) double
cstep_w(struct rob *r, const struct subsample *ss, size_t h, double *beta,
	double *tmp, int *fail, int wide)
{
	double ab[NE_SIZE], thr, obj = 0;
	size_t i, taken = 0, m = ss->m;
	uint32_t at[SUB_MAX + 1];

	ne_zero(ab, r->q);

	for (i = 0; i < m; i++)
		tmp[m + i] = tmp[i] = fabs(sub_resid(r, sub_row(ss, i), beta));
	thr = fit_kth(tmp + m, m, h - 1);
	/*
	 * The first h rows in order that are not above thr (NaN included, as
	 * not above), listed without a branch on the data first: about half
	 * are, at random, and a branch per row was mispredicted every other.
	 */
	for (i = 0; i < m; i++) {
		at[taken] = (uint32_t)i;
		taken += !(tmp[i] > thr) & (taken < h);
	}
	for (i = 0; i < taken; i++) {
		ne_add(ab, r->q, sub_row(ss, at[i]), 1, wide);
		obj += tmp[at[i]] * tmp[at[i]];
	}
	*fail = solve_ne(r, ab, 1, beta) != 0;
	return obj;
}

/* cstep_w() in an AVX2 copy on CPUs that have it (FIT_AVX2). */
FIT_AVX2
static double cstep_avx2(struct rob *r, const struct subsample *ss, size_t h,
			 double *beta, double *tmp, int *fail)
{
	return cstep_w(r, ss, h, beta, tmp, fail, 1);
}

static double cstep(struct rob *r, const struct subsample *ss, size_t h,
		    double *beta, double *tmp, int *fail)
{
	if (FIT_HAVE_AVX2())
		return cstep_avx2(r, ss, h, beta, tmp, fail);
	return cstep_w(r, ss, h, beta, tmp, fail, 0);
}

/* An exact fit through q random subsample rows; 0 if they are degenerate. */
static int elemental(struct rob *r, const struct subsample *ss, double *beta)
{
	double ab[NE_SIZE];
	size_t pick[FIT_MAXCOL], m = ss->m;
	unsigned int i, j;
	gsl_matrix *xm;
	gsl_matrix *v;
	gsl_vector *s, *w;
	int ok = 0;

	ne_zero(ab, r->q);
	for (i = 0; i < r->q; i++) {
again:
		pick[i] = (size_t)(rnd(r) * (double)m);
		for (j = 0; j < i; j++)
			if (pick[j] == pick[i])
				goto again;
	}
	xm = gsl_matrix_alloc(r->q, r->q);
	v = gsl_matrix_alloc(r->q, r->q);
	s = gsl_vector_alloc(r->q);
	w = gsl_vector_alloc(r->q);
	if (xm && v && s && w) {
		for (i = 0; i < r->q; i++) {
			const double *z = sub_row(ss, pick[i]);

			for (j = 0; j < r->q; j++)
				gsl_matrix_set(xm, i, j, z[j]);
			ne_add(ab, r->q, z, 1, 0);
		}
		gsl_linalg_SV_decomp(xm, v, s, w);
		ok = gsl_vector_get(s, r->q - 1) > 1e-10 * gsl_vector_get(s, 0);
	}
	gsl_vector_free(w);
	gsl_vector_free(s);
	gsl_matrix_free(v);
	gsl_matrix_free(xm);
	return ok && !solve_ne(r, ab, 1, beta);
}

/* Least trimmed squares on an evenly spaced subsample (FAST-LTS style). */
static int lts_start(struct rob *r, double *beta)
{
	size_t n = r->d->n, m = n < SUB_MAX ? n : SUB_MAX, h, i, k;
	double best[N_KEEP][FIT_MAXCOL], best_obj[N_KEEP];
	struct subsample ss = { .m = m, .w = r->q + 2 };
	double *tmp = fit_alloc(2 * m * sizeof(*tmp));
	unsigned int s, tries = 0, nkeep = 0;
	int ret = -ENOMEM, fail;

	ss.z = fit_alloc(m * ss.w * sizeof(*ss.z));
	if (!ss.z || !tmp)
		goto out;
	for (i = 0; i < m; i++)
		sub_set(r, ss.z + i * ss.w,
			(size_t)((unsigned __int128)i * n / m));
	h = (m + r->q + 1) / 2;
	for (s = 0; s < N_START && tries < 10 * N_START; tries++) {
		double b[FIT_MAXCOL], obj;

		if (!elemental(r, &ss, b))
			continue;
		s++;
		cstep(r, &ss, h, b, tmp, &fail);
		if (fail)
			continue;
		obj = cstep(r, &ss, h, b, tmp, &fail);
		if (fail)
			continue;
		/* Keep the N_KEEP best (insertion into a short sorted list). */
		for (k = nkeep; k > 0 && best_obj[k - 1] > obj; k--)
			if (k < N_KEEP) {
				best_obj[k] = best_obj[k - 1];
				memcpy(best[k], best[k - 1], sizeof(best[k]));
			}
		if (k < N_KEEP) {
			best_obj[k] = obj;
			memcpy(best[k], b, sizeof(best[k]));
			if (nkeep < N_KEEP)
				nkeep++;
		}
	}
	ret = -EDOM;
	if (!nkeep)
		goto out; /* no non-degenerate subset of q rows */
	for (k = 0; k < nkeep; k++) {
		double prev = INFINITY, obj = best_obj[k];
		unsigned int it;

		for (it = 0; it < MAX_CSTEP && obj < prev; it++) {
			prev = obj;
			obj = cstep(r, &ss, h, best[k], tmp, &fail);
			if (fail)
				break;
		}
		best_obj[k] = obj;
	}
	for (i = 0, k = 1; k < nkeep; k++)
		if (best_obj[k] < best_obj[i])
			i = k;
	memcpy(beta, best[i], r->q * sizeof(*beta));
	ret = 0;
out:
	free(tmp);
	free(ss.z);
	return ret;
}

static double bisquare(double u)
{
	double t;

	if (fabs(u) >= 1)
		return 0;
	t = 1 - u * u;
	return t * t;
}

/*
 * The bisquare weights' normal equations under beta ([A b] zeroed): over
 * the scaled subsample ss, else over all rows of the design. The rows go
 * in batches, first every row's weight, then the updates: a weight is a
 * chain of dependent operations (the dot product's adds, two divisions)
 * that one row at a time left the CPU waiting on; a batch's chains
 * overlap. Each row's arithmetic and the order of the updates are the same.
 */
#define IRLS_BATCH 16

static inline __attribute__((always_inline)) void
irls_ne_w(const struct rob *r, const struct subsample *ss, double cs,
	  const double *beta, double *ab, int wide)
{
	double x[IRLS_BATCH][FIT_MAXCOL + 1], wr[IRLS_BATCH];
	size_t i, k, nb, n = ss ? ss->m : r->d->n;

	for (i = 0; i < n; i += nb) {
		nb = n - i < IRLS_BATCH ? n - i : IRLS_BATCH;
		for (k = 0; k < nb; k++) {
			if (ss) {
				wr[k] = bisquare(
					sub_resid(r, sub_row(ss, i + k), beta) /
					cs);
			} else {
				double y = x[k][r->q] = row(r, i + k, x[k]);

				wr[k] = bisquare(
					resid_x(r, i + k, x[k], y, beta) / cs);
			}
		}
		for (k = 0; k < nb; k++)
			if (wr[k] > 0)
				ne_add(ab, r->q, ss ? sub_row(ss, i + k) : x[k],
				       wr[k], wide);
	}
}

/* irls_ne_w() in an AVX2 copy on CPUs that have it (FIT_AVX2). */
FIT_AVX2
static void irls_ne_avx2(const struct rob *r, const struct subsample *ss,
			 double cs, const double *beta, double *ab)
{
	irls_ne_w(r, ss, cs, beta, ab, 1);
}

static void irls_ne(const struct rob *r, const struct subsample *ss, double cs,
		    const double *beta, double *ab)
{
	if (FIT_HAVE_AVX2())
		irls_ne_avx2(r, ss, cs, beta, ab);
	else
		irls_ne_w(r, ss, cs, beta, ab, 0);
}

/*
 * Bisquare IRLS with the scale fixed (cs = c x scale), over the subsample
 * ss (NULL: all rows), from beta until it settles. info->iter counts all
 * iterations.
 */
static int irls(struct rob *r, const struct subsample *ss, double cs,
		double *beta, struct fit_robust_info *info, unsigned int max_it,
		double *last)
{
	unsigned int it, j;
	int ret;

	for (it = 1; it <= max_it; it++) {
		double ab[NE_SIZE], nb[FIT_MAXCOL], diff = 0, big = 1;

		ne_zero(ab, r->q);
		irls_ne(r, ss, cs, beta, ab);
		ret = solve_ne(r, ab, 0, nb);
		if (ret)
			return ret;
		for (j = 0; j < r->q; j++) {
			diff = fmax(diff, fabs(nb[j] - beta[j]));
			big = fmax(big, fabs(nb[j]));
			beta[j] = nb[j];
		}
		info->iter++;
		*last = diff / big;
		/*
		 * The weights need not be exact: the caller refits with them.
		 * The cheap subsample phase converges tightly, so that the
		 * passes over all rows start close.
		 */
		if (diff <= (ss ? 1e-7 : 1e-6) * big) {
			info->converged = 1;
			return 0;
		}
	}
	info->converged = 0;
	return 0;
}

/*
 * IRLS from beta: on all rows when there are at most IRLS_SUB, else first
 * on every step-th row until it settles, then at most IRLS_FULL passes
 * over all rows from there: each moves beta by about a fifth of the one
 * before, and the caller refits with the weights anyway. The subsample is
 * scaled once into a compact copy (each iteration gathered it from the
 * design again: a cache miss a row).
 */
static int irls_all(struct rob *r, double cs, double *beta,
		    struct fit_robust_info *info)
{
	size_t n = r->d->n, step, i;
	struct subsample ss = { .w = r->q + 2 };
	double last = 0;
	int ret, sub_converged;

	if (n <= IRLS_SUB)
		return irls(r, NULL, cs, beta, info, MAX_IRLS, &last);
	step = (n + IRLS_SUB - 1) / IRLS_SUB;
	ss.m = (n + step - 1) / step;
	ss.z = fit_alloc(ss.m * ss.w * sizeof(*ss.z));
	if (!ss.z)
		return -ENOMEM;
	for (i = 0; i < ss.m; i++)
		sub_set(r, ss.z + i * ss.w, i * step);
	ret = irls(r, &ss, cs, beta, info, MAX_IRLS, &last);
	free(ss.z);
	if (ret)
		return ret;
	sub_converged = info->converged;
	ret = irls(r, NULL, cs, beta, info, IRLS_FULL, &last);
	info->converged = sub_converged && last <= IRLS_SETTLED;
	return ret;
}

/* The columns that are not all 0, and the scales that make them comparable. */
FIT_HOT
static void rob_scales(struct rob *r, const unsigned int *cols,
		       unsigned int ncols)
{
	const struct fit_design *d = r->d;
	double ss[FIT_MAXCOL] = { 0 }, yss = 0;
	size_t row_i;
	unsigned int i;

	for (row_i = 0; row_i < d->n; row_i++) {
		const double *x = d->x + row_i * d->stride;

		for (i = 0; i < ncols; i++)
			ss[i] += x[cols[i]] * x[cols[i]];
		yss += FIT_Y(d, row_i) * FIT_Y(d, row_i);
	}
	for (i = 0; i < ncols; i++)
		if (ss[i] > 0) {
			r->col[r->q] = cols[i];
			r->scale[r->q] = sqrt(ss[i] / (double)d->n);
			r->inv_scale[r->q] = 1 / r->scale[r->q];
			r->q++;
		}
	r->yscale = yss > 0 ? sqrt(yss / (double)d->n) : 1;
	r->inv_yscale = 1 / r->yscale;
}

/* Ask for row i of the design (its lines), y included when it is in x. */
static inline void prefetch_row(const struct fit_design *d, size_t i)
{
	const char *p = (const char *)(d->x + i * d->stride);
	size_t len = d->stride * sizeof(*d->x), o;

	for (o = 0; o < len; o += 64)
		__builtin_prefetch(p + o);
	__builtin_prefetch(p + len - 1);
}

/*
 * The residual scale (scaled units) of the start: the MAD, but not below
 * a share of the typical target nor the meter's resolution. -1: no memory.
 */
FIT_HOT
static double rob_scale(const struct rob *r, const double *beta)
{
	const struct fit_design *d = r->d;
	double *tmp, *ty, scale;
	size_t step, m, k;

	/* Medians over evenly spaced rows: plenty for a scale. */
	step = d->n > SCALE_SUB ? (d->n + SCALE_SUB - 1) / SCALE_SUB : 1;
	m = (d->n + step - 1) / step;
	/*
	 * Both medians' values in one pass: the rows are step apart, a cache
	 * miss each, so they are read once and the one ahead is asked for.
	 */
	tmp = fit_alloc(2 * m * sizeof(*tmp));
	if (!tmp)
		return -1;
	ty = tmp + m;
	for (k = 0; k < m; k++) {
		if (k + SCALE_AHEAD < m)
			prefetch_row(d, (k + SCALE_AHEAD) * step);
		tmp[k] = fabs(resid(r, k * step, beta));
		ty[k] = fabs(FIT_Y(d, k * step) / r->yscale /
			     rdiv_of(r, k * step));
	}
	scale = MAD_NORMAL * fit_kth(tmp, m, m / 2);
	scale = fmax(scale, SCALE_FLOOR * fit_kth(ty, m, m / 2));
	/* A quantised meter: residuals below its resolution are not news. */
	scale = fmax(scale, r->o->scale_floor / r->yscale);
	free(tmp);
	if (!(scale > 0))
		scale = 1e-300; /* all targets 0: every nonzero residual is news */
	return scale;
}

/* Every row's bisquare weight under beta into w, counted into info. */
FIT_HOT
static void rob_weights(const struct rob *r, double cs, const double *beta,
			double *w, struct fit_robust_info *info)
{
	size_t row_i;

	for (row_i = 0; row_i < r->d->n; row_i++) {
		w[row_i] = bisquare(resid(r, row_i, beta) / cs);
		info->rejected += w[row_i] == 0;
		info->downweighted += w[row_i] > 0 && w[row_i] < 0.5;
	}
}

int fit_robust(const struct fit_design *d, const unsigned int *cols,
	       unsigned int ncols, int rdiv_col, const struct fit_solve_opts *o,
	       double *w, struct fit_robust_info *info)
{
	struct rob r = { .d = d,
			 .rdiv = rdiv_col >= 0 ? d->x + rdiv_col : NULL,
			 .rstride = d->stride,
			 .o = o,
			 .rng = 0x9e3779b97f4a7c15ULL };
	double beta[FIT_MAXCOL], scale, cs;
	int ret;

	memset(info, 0, sizeof(*info));
	if (ncols > FIT_MAXCOL)
		return -EINVAL;
	rob_scales(&r, cols, ncols);
	/* An exact fit through half the rows needs more rows than that. */
	if (!r.q || d->n < 2 * (size_t)r.q + 2)
		return -EDOM;
	ret = lts_start(&r, beta);
	if (ret)
		return ret;
	scale = rob_scale(&r, beta);
	if (scale < 0)
		return -ENOMEM;
	cs = FIT_BISQUARE_C * scale;

	ret = irls_all(&r, cs, beta, info);
	if (ret)
		return ret;
	rob_weights(&r, cs, beta, w, info);
	info->scale = scale * r.yscale;
	return 0;
}
