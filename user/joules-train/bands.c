// SPDX-License-Identifier: GPL-2.0
/*
 * Frequency bands: one coefficient set per band of the node's effective
 * clock frequency (kmod/core.h, struct jl_bands). Edges are searched among
 * quantiles of the observed frequencies, and every candidate is judged on
 * contiguous held-out time folds against the single set, on the same
 * intervals.
 *
 * The rows are regrouped by (fold, frequency bin) and each group reduced
 * once to its R factor (fit.h): a band is a run of bins, so fitting any
 * band on any folds is a small solve on a union of blocks, and trying a
 * hundred edge sets costs little more than one pass over the data.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_linalg.h>

#include "train.h"

/* Blocks of a grid: folds x bins. */
#define JT_MAX_FOLDS_BANDS (JT_MAX_FOLDS * JT_BAND_BINS)

size_t jt_rows_freq(const struct jt_row *rows, size_t n, unsigned int present,
		    double *mhz)
{
	double last = 0;
	size_t i, known = 0;

	for (i = 0; i < n; i++) {
		double f = rows[i].freq_mhz;

		if (!(f > 0) && (present & (1u << JL_F_CYCLES)) &&
		    rows[i].f[JL_F_CPU_NS] >= 1) {
			f = floor(rows[i].f[JL_F_CYCLES] * 1e3 /
				  rows[i].f[JL_F_CPU_NS]);
			if (f > (double)JL_MHZ_MAX)
				f = 0; /* a bogus count, as jl_freq_mhz() */
		}
		if (f > 0) {
			known++;
			last = f;
		}
		mhz[i] = f > 0 ? f : last;
	}
	return known;
}

/*
 * Rows grouped by (fold, bin), each group reduced to two Gram matrices of
 * its scaled rows z = [x~ y~] (columns divided by their RMS): G = sum w z z'
 * (what a least-squares fit on any union of groups needs) and H = sum u u'
 * with u = [x~ / y~, -1] over the rows the search counts (w > 0, y > 0):
 * for coefficients c, [c 1]' H [c 1] is the sum of squared relative errors
 * of those rows. Every fold and every band candidate is then a sum of
 * small matrices: the rows are touched once per grid, not per candidate.
 */
struct bgrid {
	const struct jt_row *rows;
	size_t n;
	unsigned int K, B; /* folds, bins */
	double edge[JT_BAND_BINS]; /* B - 1 ascending bin edges, MHz */
	const unsigned char *bin; /* per row (struct btrain's: shared) */
	unsigned int p; /* model columns + 1 (y) */
	unsigned int cols[JT_NCOL]; /* design column of each model column */
	/* CPU-only columns, as indexes into cols */
	unsigned int nbase, base[2];
	double scale[JT_NCOL], yscale;
	double *G, *H; /* K * B blocks of p x p, fold-major */
	enum fit_method method;
	double ridge; /* as jt_train_opts.ridge */
};

static void bgrid_free(struct bgrid *g)
{
	free(g->G);
	free(g->H);
	g->G = g->H = NULL;
}

/*
 * Each row's frequency bin, the number of edges[] at or below its
 * frequency (they ascend). The same for every grid of a search, whatever
 * its weights: computed once.
 */
static void rows_bins(const double *mhz, size_t n, const double *edges,
		      unsigned int nedges, unsigned char *bin)
{
	size_t r;

	if (!nedges) {
		memset(bin, 0, n);
		return;
	}
	for (r = 0; r < n; r++) {
		unsigned int o = 0, len = nedges;

		/*
		 * The first edge above mhz[r] by bisection (they ascend):
		 * the first o edges are at or below it, and at most the
		 * next len. Each step moves o by a select, not a branch
		 * (the branches on the data were mispredicted).
		 */
		while (len > 1) {
			unsigned int half = len / 2;

			o = mhz[r] >= edges[o + half] ? o + half : o;
			len -= half;
		}
		bin[r] = (unsigned char)(o + (mhz[r] >= edges[o]));
	}
}

static double design(const struct jt_row *r, unsigned int col)
{
	return col == JT_COL_IDLE ? r->interval_ns : r->f[col - 1];
}

/*
 * Add the outer product of v (length p) into the p x p block m (upper
 * triangle). Restrict-qualified and inlined: the inner loop of a grid.
 */
static inline __attribute__((always_inline)) void
outer_add(double *restrict m, const double *restrict v, unsigned int p,
	  double w, int wide)
{
	fit_syr_w(m, v, w, p, wide);
}

/* Idle and the present features: the columns a grid may have. */
static unsigned int grid_candidates(unsigned int present, unsigned int *cand)
{
	unsigned int c, nc = 0;

	for (c = 0; c < JT_NCOL; c++)
		if (c == JT_COL_IDLE || (present & (1u << (c - 1))))
			cand[nc++] = c;
	return nc;
}

/*
 * Row r's unscaled sums into the blocks of its (fold, bin), pc = the
 * candidate columns + 1: G0 += w x x' with x = [x m], and for a row the
 * search counts (m > 0) H0 += v v' with v = [x / m, -1].
 */
static inline __attribute__((always_inline)) void
grid_row(const struct jt_row *row, const unsigned int *cand, unsigned int pc,
	 double wr, double *restrict g0, double *restrict h0, int wide)
{
	double x[FIT_MAXCOL], v[FIT_MAXCOL], m = row->meter_uj, inv;
	unsigned int i;

	for (i = 0; i + 1 < pc; i++)
		x[i] = design(row, cand[i]);
	x[pc - 1] = m;
	if (wr > 0)
		outer_add(g0, x, pc, wr, wide);
	if (wr > 0 && m > 0) {
		inv = 1 / m;
		for (i = 0; i + 1 < pc; i++)
			v[i] = x[i] * inv;
		v[pc - 1] = -1;
		outer_add(h0, v, pc, 1, wide);
	}
}

/*
 * The grid's columns from the unscaled sums: idle and the present
 * features whose RMS (weighted, over sw) is not 0; their scales, and the
 * target's. ss[] are the diagonal's sums over all blocks.
 */
static void grid_columns(struct bgrid *g, const unsigned int *cand,
			 unsigned int nc, const double *ss, double sw)
{
	unsigned int i, q = 0;

	for (i = 0; i < nc; i++) {
		if (!(ss[i] > 0) || !(sw > 0))
			continue;
		if (cand[i] == JT_COL_IDLE || cand[i] == 1 + JL_F_CPU_NS)
			g->base[g->nbase++] = q;
		g->scale[q] = sqrt(ss[i] / sw);
		g->cols[q++] = cand[i];
	}
	g->yscale = sw > 0 && ss[nc] > 0 ? sqrt(ss[nc] / sw) : 1;
	g->p = q + 1;
}

/*
 * The scaled blocks from the unscaled ones (pc x pc, upper triangles):
 * G = D G0 D with D the columns' and the target's 1 / RMS, and H the same
 * with the factors yscale / RMS (1 for the -1), both mirrored.
 */
static void grid_scale(struct bgrid *g, const unsigned int *cand,
		       unsigned int nc, const double *g0, const double *h0)
{
	unsigned int p = g->p, pc = nc + 1, at[JT_NCOL + 1], i, j;
	double dg[JT_NCOL + 1], dh[JT_NCOL + 1];
	size_t blk, pp = (size_t)p * p, ppc = (size_t)pc * pc;

	for (i = 0, j = 0; i + 1 < p; i++) {
		while (cand[j] != g->cols[i])
			j++;
		at[i] = j;
		dg[i] = 1 / g->scale[i];
		dh[i] = g->yscale / g->scale[i];
	}
	at[p - 1] = nc;
	dg[p - 1] = 1 / g->yscale;
	dh[p - 1] = 1;
	for (blk = 0; blk < (size_t)g->K * g->B; blk++)
		for (i = 0; i < p; i++)
			for (j = i; j < p; j++) {
				size_t a = blk * ppc + at[i] * pc + at[j];

				g->G[blk * pp + i * p + j] =
					g->G[blk * pp + j * p + i] =
						g0[a] * dg[i] * dg[j];
				g->H[blk * pp + i * p + j] =
					g->H[blk * pp + j * p + i] =
						h0[a] * dh[i] * dh[j];
			}
}

/*
 * Every row's unscaled sums into its block, in one pass; ss[] gets the
 * diagonal's totals and *sw the weights'. 0 or -EINVAL (a bad value).
 */
static inline __attribute__((always_inline)) int
grid_sums_w(const struct bgrid *g, const double *w, const unsigned int *cand,
	    unsigned int pc, double *g0, double *h0, double *ss, double *sw,
	    int wide)
{
	size_t r, blk, next = fit_fold_start(g->n, 1, g->K),
		       ppc = (size_t)pc * pc;
	unsigned int k = 0, i;

	*sw = 0;
	for (r = 0; r < g->n; r++) {
		double wr = w ? w[r] : 1;

		/* The rows come in order: the fold is the one that holds r. */
		while (k + 1 < g->K && next <= r)
			next = fit_fold_start(g->n, ++k + 1, g->K);
		if (!isfinite(g->rows[r].meter_uj) || !(wr >= 0))
			return -EINVAL;
		blk = ((size_t)k * g->B + g->bin[r]) * ppc;
		grid_row(&g->rows[r], cand, pc, wr, g0 + blk, h0 + blk, wide);
		*sw += wr;
	}
	for (i = 0; i < pc; i++) {
		ss[i] = 0;
		for (blk = 0; blk < (size_t)g->K * g->B; blk++)
			ss[i] += g0[blk * ppc + i * pc + i];
	}
	return 0;
}

/* grid_sums_w() in an AVX2 copy on CPUs that have it (FIT_AVX2). */
FIT_AVX2
static int grid_sums_avx2(const struct bgrid *g, const double *w,
			  const unsigned int *cand, unsigned int pc, double *g0,
			  double *h0, double *ss, double *sw)
{
	return grid_sums_w(g, w, cand, pc, g0, h0, ss, sw, 1);
}

static int grid_sums(const struct bgrid *g, const double *w,
		     const unsigned int *cand, unsigned int pc, double *g0,
		     double *h0, double *ss, double *sw)
{
	if (FIT_HAVE_AVX2())
		return grid_sums_avx2(g, w, cand, pc, g0, h0, ss, sw);
	return grid_sums_w(g, w, cand, pc, g0, h0, ss, sw, 0);
}

/*
 * The grid of rows with weights w: one pass sums every block's unscaled
 * products (and with them the columns' squares), then the columns that
 * are not all 0 are kept and the blocks scaled.
 */
FIT_HOT
static int bgrid_build(struct bgrid *g, const struct jt_row *rows, size_t n,
		       const unsigned char *bin, const double *w,
		       unsigned int present, unsigned int K,
		       const double *edges, unsigned int nedges,
		       const struct jt_train_opts *o)
{
	unsigned int cand[JT_NCOL], nc = grid_candidates(present, cand);
	double ss[JT_NCOL + 1], sw, *g0, *h0;
	size_t nblk = (size_t)K * (nedges + 1),
	       ppc = (size_t)(nc + 1) * (nc + 1);
	int ret = -ENOMEM;

	memset(g, 0, sizeof(*g));
	g->rows = rows;
	g->n = n;
	g->K = K;
	g->B = nedges + 1;
	g->method = o->method;
	g->ridge = o->ridge;
	g->bin = bin;
	memcpy(g->edge, edges, nedges * sizeof(*edges));
	g0 = calloc(nblk * ppc, sizeof(*g0));
	h0 = calloc(nblk * ppc, sizeof(*h0));
	if (g0 && h0)
		ret = grid_sums(g, w, cand, nc + 1, g0, h0, ss, &sw);
	if (!ret) {
		grid_columns(g, cand, nc, ss, sw);
		g->G = calloc(nblk * g->p * g->p, sizeof(*g->G));
		g->H = calloc(nblk * g->p * g->p, sizeof(*g->H));
		ret = g->G && g->H ? 0 : -ENOMEM;
	}
	if (!ret)
		grid_scale(g, cand, nc, g0, h0);
	else
		bgrid_free(g);
	free(g0);
	free(h0);
	return ret;
}

/*
 * Scaled coefficients c (over the nsel columns sel[] of the grid) fitted on
 * the blocks whose mult is nonzero: the normal equations by Cholesky (a
 * ridge of 1e-12 of the diagonal keeps an empty column solvable), then the
 * method's solver on the triangular system, which has the same minimiser.
 * Returns 0, -EDOM (no data), or the solver's error.
 */
static int gram_solve(const struct bgrid *g, const unsigned char *use,
		      const unsigned int *sel, unsigned int nsel, double *c)
{
	double a[JT_NCOL * JT_NCOL] = { 0 }, rhs[JT_NCOL] = { 0 }, dmax = 0;
	unsigned int p = g->p, i, j, dropped, iters;
	size_t blk, pp = (size_t)p * p;
	struct fit_solve_opts so = { .method = g->method,
				     .drop_negative = g->method == FIT_OLS };
	double neg[FIT_MAXCOL];
	gsl_matrix_view av;
	gsl_vector_view rv, cv;
	int any = 0, ret;

	for (blk = 0; blk < (size_t)g->K * g->B; blk++) {
		const double *m = g->G + blk * pp;

		if (!use[blk])
			continue;
		any = 1;
		/* The blocks are symmetric: the lower triangle, mirrored after. */
		for (i = 0; i < nsel; i++) {
			for (j = 0; j <= i; j++)
				a[i * nsel + j] += m[sel[i] * p + sel[j]];
			rhs[i] += m[sel[i] * p + p - 1];
		}
	}
	if (!any)
		return -EDOM;
	for (i = 0; i < nsel; i++)
		for (j = 0; j < i; j++)
			a[j * nsel + i] = a[i * nsel + j];
	for (i = 0; i < nsel; i++)
		dmax = fmax(dmax, a[i * nsel + i]);
	if (!(dmax > 0))
		return -EDOM;
	{
		double tr = 0;

		for (i = 0; i < nsel; i++)
			tr += a[i * nsel + i];
		for (i = 0; i < nsel; i++)
			a[i * nsel + i] += 1e-12 * dmax + g->ridge * tr / nsel;
	}
	av = gsl_matrix_view_array(a, nsel, nsel);
	rv = gsl_vector_view_array(rhs, nsel);
	cv = gsl_vector_view_array(c, nsel);
	if (gsl_linalg_cholesky_decomp1(&av.matrix))
		return -EDOM;
	/* L z = X'y; then min ||L' c - z|| has the normal equations' minimiser. */
	gsl_blas_dtrsv(CblasLower, CblasNoTrans, CblasNonUnit, &av.matrix,
		       &rv.vector);
	/* decomp1 leaves L in the lower triangle: make the matrix L'. */
	for (i = 0; i < nsel; i++)
		for (j = 0; j < i; j++) {
			a[j * nsel + i] = a[i * nsel + j];
			a[i * nsel + j] = 0;
		}
	/* The ridge of 1e-12 keeps L' well conditioned: back substitution. */
	ret = fit_small_solve_tri(&av.matrix, &rv.vector, &so, &cv.vector,
				  &dropped, neg, &iters);
	return ret;
}

/*
 * Scaled coefficients c over sel[] to factors of the design's columns:
 * c yscale / scale, as a prediction's every term starts.
 */
static void gram_unscale(const struct bgrid *g, const unsigned int *sel,
			 unsigned int nsel, double *c)
{
	unsigned int i;

	for (i = 0; i < nsel; i++)
		c[i] = c[i] * g->yscale / g->scale[sel[i]];
}

/* A row's predicted energy (uJ) from gram_unscale()'s factors over sel[]. */
static double gram_predict(const struct bgrid *g, const unsigned int *sel,
			   unsigned int nsel, const double *k,
			   const struct jt_row *r)
{
	double e = 0;
	unsigned int i;

	for (i = 0; i < nsel; i++)
		e += k[i] * design(r, g->cols[sel[i]]);
	return e;
}

/* Which columns: all model columns, or the CPU-only baseline's. */
static unsigned int grid_sel(const struct bgrid *g, int base, unsigned int *sel)
{
	unsigned int i;

	if (base) {
		memcpy(sel, g->base, g->nbase * sizeof(*sel));
		return g->nbase;
	}
	for (i = 0; i + 1 < g->p; i++)
		sel[i] = i;
	return g->p - 1;
}

/* Blocks of band b without fold k (k == K: all folds; K == 1: all). */
static void band_blocks(const struct bgrid *g, const unsigned char *band_of_bin,
			unsigned int b, unsigned int k, unsigned char *use)
{
	unsigned int kk, j;

	for (kk = 0; kk < g->K; kk++)
		for (j = 0; j < g->B; j++)
			use[kk * g->B + j] =
				(g->K == 1 || kk != k) && band_of_bin[j] == b;
}

/*
 * One set of held-out predictions of the comparison: for each fold, each
 * band's set (map[] maps the grid's bins to nb bands) fitted on the other
 * folds of grid g, or the CPU-only baseline's if base.
 */
struct hset {
	const struct bgrid *g;
	const unsigned char *map;
	unsigned int nb, nsel, sel[JT_NCOL];
	double *c; /* K x nb sets (gram_unscale()'s), JT_NCOL apart */
	struct fit_acc acc;
};

/* The sets of every fold and band; 0 or the fit's error. */
static int hset_fit(struct hset *h, const struct bgrid *g,
		    const unsigned char *map, unsigned int nb, int base)
{
	unsigned char use[JT_MAX_FOLDS_BANDS];
	unsigned int k, b;
	int ret;

	h->g = g;
	h->map = map;
	h->nb = nb;
	h->nsel = grid_sel(g, base, h->sel);
	fit_acc_init(&h->acc);
	h->c = malloc((size_t)g->K * nb * JT_NCOL * sizeof(*h->c));
	if (!h->c)
		return -ENOMEM;
	for (k = 0; k < g->K; k++)
		for (b = 0; b < nb; b++) {
			band_blocks(g, map, b, k, use);
			double *c = h->c + ((size_t)k * nb + b) * JT_NCOL;

			ret = gram_solve(g, use, h->sel, h->nsel, c);
			if (ret)
				return ret;
			gram_unscale(g, h->sel, h->nsel, c);
		}
	return 0;
}

/* Held-out prediction (W) of row i, of fold k. */
static inline __attribute__((always_inline)) double
hset_predict(const struct hset *h, unsigned int k, size_t i)
{
	const struct bgrid *g = h->g;
	unsigned int b = h->map[g->bin[i]];

	return gram_predict(g, h->sel, h->nsel,
			    h->c + ((size_t)k * h->nb + b) * JT_NCOL,
			    &g->rows[i]) *
	       1e3 / g->rows[i].interval_ns;
}

/* The metrics of nh sets over the rows w accepts, in one pass. */
FIT_HOT
static void hsets_metrics(struct hset *h, unsigned int nh, const double *w)
{
	const struct bgrid *g = h[0].g;
	unsigned int k, j;
	size_t i;

	for (k = 0; k < g->K; k++)
		for (i = fit_fold_start(g->n, k, g->K);
		     i < fit_fold_start(g->n, k + 1, g->K); i++) {
			if (!(w[i] > 0))
				continue;
			for (j = 0; j < nh; j++)
				fit_acc_add(&h[j].acc,
					    jt_row_watts(&g->rows[i]),
					    hset_predict(&h[j], k, i));
		}
}

/*
 * The search's criterion without touching the rows: the root mean squared
 * relative error (%) of the held-out rows it counts, each fold's bands
 * fitted on the other folds. INFINITY if a fit fails.
 */
FIT_HOT
static double bgrid_heldout_err(const struct bgrid *g,
				const unsigned char *band_of_bin,
				unsigned int nb)
{
	unsigned char use[JT_MAX_FOLDS_BANDS];
	unsigned int sel[JT_NCOL], nsel = grid_sel(g, 0, sel), k, b, j, i, l;
	unsigned int p = g->p;
	size_t pp = (size_t)p * p;
	double c[JT_NCOL + 1], sse = 0, cnt = 0;

	for (k = 0; k < g->K; k++)
		for (b = 0; b < nb; b++) {
			band_blocks(g, band_of_bin, b, k, use);
			if (gram_solve(g, use, sel, nsel, c))
				return INFINITY;
			c[p - 1] = 1;
			for (j = 0; j < g->B; j++) {
				const double *h =
					g->H + ((size_t)k * g->B + j) * pp;

				if (band_of_bin[j] != b)
					continue;
				for (i = 0; i < p; i++)
					for (l = 0; l < p; l++)
						sse += c[i] * h[i * p + l] *
						       c[l];
			}
		}
	for (k = 0; k < g->K * g->B; k++)
		cnt += g->H[k * pp + pp - 1]; /* the count: (-1)(-1) per row */
	return cnt > 0 && sse >= 0 ? 100 * sqrt(sse / cnt) : INFINITY;
}

/* A candidate: bin boundaries cut[0..nc) (1..B-1, ascending). */
struct cand {
	unsigned int nc;
	unsigned int cut[JL_MAX_BANDS - 1];
	double err;
};

static void band_map(const struct bgrid *g, const struct cand *c,
		     unsigned char *band_of_bin)
{
	unsigned int j, e;

	for (j = 0; j < g->B; j++) {
		unsigned char b = 0;

		for (e = 0; e < c->nc; e++)
			b += c->cut[e] <= j;
		band_of_bin[j] = b;
	}
}

/*
 * The held-out criterion of a candidate (bgrid_heldout_err(); INFINITY: a
 * band too small, a failed fit).
 */
static double cand_eval(const struct bgrid *g, struct cand *c,
			const size_t *bin_rows, size_t min_rows,
			const double *w, double *pred)
{
	unsigned char map[JT_BAND_BINS];
	size_t cnt[JL_MAX_BANDS] = { 0 };
	unsigned int j;

	(void)w;
	(void)pred;
	band_map(g, c, map);
	for (j = 0; j < g->B; j++)
		cnt[map[j]] += bin_rows[j];
	for (j = 0; j <= c->nc; j++)
		if (cnt[j] < min_rows)
			return c->err = INFINITY;
	return c->err = bgrid_heldout_err(g, map, c->nc + 1);
}

/* The best candidate with one boundary more than c. */
static struct cand add_cut(const struct bgrid *g, const struct cand *c,
			   const size_t *bin_rows, size_t min_rows,
			   const double *w, double *pred, unsigned int *tried)
{
	struct cand best = { .err = INFINITY };
	unsigned int e, j;

	for (e = 1; e < g->B; e++) {
		struct cand t = { .nc = 0 };
		int dup = 0;

		for (j = 0; j < c->nc; j++)
			dup |= c->cut[j] == e;
		if (dup)
			continue;
		for (j = 0; j < c->nc && c->cut[j] < e; j++)
			t.cut[t.nc++] = c->cut[j];
		t.cut[t.nc++] = e;
		for (; j < c->nc; j++)
			t.cut[t.nc++] = c->cut[j];
		cand_eval(g, &t, bin_rows, min_rows, w, pred);
		(*tried)++;
		if (t.err < best.err)
			best = t;
	}
	return best;
}

/*
 * The values at sorted positions ks[0..nk) (ascending, base the position
 * of s[0]) of s[0..m) into q[], by selection: the middle one first, then
 * the ones below it among the values fit_kth() left before it, and the
 * ones above among those after it, so the values are read about log2(nk)
 * times, not nk.
 */
static void kth_many(double *s, size_t m, size_t base, const size_t *ks,
		     unsigned int nk, double *q)
{
	unsigned int mid = nk / 2, lo, hi;
	size_t k;

	if (!nk)
		return;
	k = ks[mid] - base;
	q[mid] = fit_kth(s, m, k);
	for (lo = mid; lo > 0 && ks[lo - 1] == ks[mid]; lo--)
		q[lo - 1] = q[mid];
	for (hi = mid + 1; hi < nk && ks[hi] == ks[mid]; hi++)
		q[hi] = q[mid];
	kth_many(s, k, base, ks, lo, q);
	kth_many(s + k + 1, m - k - 1, base + k + 1, ks + hi, nk - hi, q + hi);
}

/*
 * Bin edges: distinct quantiles of the known frequencies, s[m j / BINS] of
 * them sorted, found by selection (no sort). s is scratch of n doubles.
 */
static unsigned int quantile_edges(const double *mhz, size_t n, double *edges,
				   double *s)
{
	double lo = INFINITY, q[JT_BAND_BINS];
	size_t ks[JT_BAND_BINS], m = 0, i;
	unsigned int j, ne = 0;

	for (i = 0; i < n; i++)
		if (mhz[i] > 0) {
			s[m++] = mhz[i];
			lo = fmin(lo, mhz[i]);
		}
	if (!m)
		return 0;
	for (j = 1; j < JT_BAND_BINS; j++)
		ks[j - 1] = (size_t)((double)m * j / JT_BAND_BINS);
	kth_many(s, m, 0, ks, JT_BAND_BINS - 1, q);
	for (j = 0; j + 1 < JT_BAND_BINS; j++)
		/* A frequency no row is below cannot separate anything. */
		if (q[j] > lo && (!ne || q[j] > edges[ne - 1]))
			edges[ne++] = q[j];
	return ne;
}

static int same_cuts(const struct cand *a, const struct cand *b)
{
	unsigned int j;

	if (a->nc != b->nc)
		return 0;
	for (j = 0; j < a->nc; j++)
		if (a->cut[j] != b->cut[j])
			return 0;
	return 1;
}

/* Edge search on g (fixed edges: the one candidate). */
static int search(const struct bgrid *g, const struct jt_band_opts *bo,
		  const size_t *bin_rows, size_t min_rows, const double *w,
		  double *pred, struct cand *best, unsigned int *tried)
{
	struct cand cur = { .nc = 0 };
	unsigned int j, max = bo->max_bands > JL_MAX_BANDS ? JL_MAX_BANDS :
							     bo->max_bands;

	if (bo->nedges) {
		best->nc = bo->nedges;
		for (j = 0; j < bo->nedges; j++)
			best->cut[j] = j + 1;
		cand_eval(g, best, bin_rows, min_rows, w, pred);
		(*tried)++;
		return 0;
	}
	*best = add_cut(g, &cur, bin_rows, min_rows, w, pred, tried);
	/* Greedy: a band more only if it gains the margin again. */
	while (isfinite(best->err) && best->nc + 1 < max) {
		struct cand more =
			add_cut(g, best, bin_rows, min_rows, w, pred, tried);

		if (!isfinite(more.err))
			break;
		if (!bo->exact &&
		    !(more.err <
		      best->err * (1 - JT_BAND_MARGIN) - JT_BAND_SLACK))
			break;
		*best = more;
	}
	return 0;
}

/*
 * Where the rows go when regrouped by band (each band's in their order):
 * row i's place is computed, not looked up in an array of n places. A
 * cycle of the permutation visits the rows in random order, and the next
 * place is needed before the next row can be asked for: from band[] and
 * rank[] (n bytes each) and base[] (a place per band per 64 rows) it is at
 * hand in the cache, where an array of n places was a miss of its own per
 * row.
 */
#define RG_BLOCK 64
#define RG_DONE 0x80 /* in band[]: the row is in its place (scratch) */
/* Steps of a cycle ahead whose row is asked for (prefetched). */
#define RG_AHEAD 16

struct regroup {
	unsigned char *band; /* each row's band, RG_DONE while moving */
	unsigned char *rank; /* rows of its band before it in its block */
	size_t *base; /* per block of RG_BLOCK rows and band: its first place */
	size_t start[JL_MAX_BANDS + 1]; /* where each band begins */
};

/* Row i's place: its block's for its band, after its band's rows before it. */
static inline size_t rg_dest(const struct regroup *g, size_t i)
{
	unsigned int b = g->band[i] & ~RG_DONE;

	return g->base[(i / RG_BLOCK) * JL_MAX_BANDS + b] + g->rank[i];
}

/* base[], rank[] and start[] from band[] (each < nb). */
static void rg_setup(struct regroup *g, size_t n, unsigned int nb)
{
	size_t at[JL_MAX_BANDS], i, k;
	unsigned int b;

	memset(g->start, 0, sizeof(g->start));
	for (i = 0; i < n; i++)
		g->start[g->band[i] + 1]++;
	for (b = 0; b < nb; b++) {
		g->start[b + 1] += g->start[b];
		at[b] = g->start[b];
	}
	for (i = 0; i < n; i += RG_BLOCK) {
		size_t end = i + RG_BLOCK < n ? i + RG_BLOCK : n;
		size_t *base = g->base + (i / RG_BLOCK) * JL_MAX_BANDS;

		for (b = 0; b < nb; b++)
			base[b] = at[b];
		for (k = i; k < end; k++)
			g->rank[k] = (unsigned char)(at[g->band[k]]++ -
						     base[g->band[k]]);
	}
}

static inline void prefetch_row(const struct jt_row *r)
{
	const char *p = (const char *)r;

	__builtin_prefetch(p, 1);
	__builtin_prefetch(p + 64, 1);
	__builtin_prefetch(p + sizeof(*r) - 1, 1);
}

/* RG_AHEAD steps of the cycle after j (a short cycle wraps around). */
static size_t rg_ahead(const struct regroup *g, size_t j)
{
	unsigned int k;

	for (k = 0; k < RG_AHEAD; k++)
		j = rg_dest(g, j);
	return j;
}

static void rg_clear(struct regroup *g, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		g->band[i] &= ~RG_DONE;
}

/*
 * Rows moved in place so that row i lands at rg_dest(i), by following the
 * permutation's cycles.
 */
static void permute(struct jt_row *rows, size_t n, struct regroup *g)
{
	struct jt_row carry, t;
	size_t i, j, ahead;

	for (i = 0; i < n; i++) {
		if (g->band[i] & RG_DONE)
			continue;
		carry = rows[i];
		ahead = rg_ahead(g, i);
		for (j = rg_dest(g, i); j != i; j = rg_dest(g, j)) {
			prefetch_row(rows + ahead);
			ahead = rg_dest(g, ahead);
			t = rows[j];
			rows[j] = carry;
			carry = t;
			g->band[j] |= RG_DONE;
		}
		rows[i] = carry;
		g->band[i] |= RG_DONE;
	}
	rg_clear(g, n);
}

/* The inverse of permute(): row rg_dest(i) goes back to i. */
static void unpermute(struct jt_row *rows, size_t n, struct regroup *g)
{
	struct jt_row t;
	size_t i, j, d, ahead;

	for (i = 0; i < n; i++) {
		if (g->band[i] & RG_DONE)
			continue;
		t = rows[i];
		ahead = rg_ahead(g, i);
		for (j = i; (d = rg_dest(g, j)) != i; j = d) {
			prefetch_row(rows + ahead);
			ahead = rg_dest(g, ahead);
			rows[j] = rows[d];
			g->band[j] |= RG_DONE;
		}
		rows[j] = t;
		g->band[j] |= RG_DONE;
	}
	rg_clear(g, n);
}

/*
 * Each band's own (robust) fit and checks; its row weights into wb. The
 * rows are regrouped in place by band (each band's in their order, as a
 * copy would have them) and put back: a copy of the rows would be most of
 * the memory. g->band (n) and g->base are scratch.
 */
static int fit_bands(struct jt_row *rows, size_t n, unsigned int present,
		     const struct jt_train_opts *o, const struct jt_report *rep,
		     const struct bgrid *gr, const struct cand *best,
		     const double *edges, struct regroup *g, double *scratch,
		     double *wb, struct jt_band_result *res)
{
	unsigned char map[JT_BAND_BINS];
	unsigned int b, j;
	size_t i;
	int ret = 0;

	res->tried = 1;
	res->nb = best->nc + 1;
	band_map(gr, best, map);
	for (j = 0; j < best->nc; j++)
		res->upper_mhz[j] = (uint64_t)edges[best->cut[j] - 1];
	for (i = 0; i < n; i++)
		g->band[i] = map[gr->bin[i]];
	rg_setup(g, n, res->nb);
	permute(rows, n, g);
	for (b = 0; b < res->nb; b++) {
		struct jt_train_opts bopt = *o;
		struct jt_report *br = &res->band[b];
		size_t m = g->start[b + 1] - g->start[b];

		res->nrows[b] = m;
		bopt.pr = NULL;
		bopt.no_se = 1;
		/* jt_model_check() judges a band by its folds (K > 1 here). */
		bopt.skip = JT_SKIP_INSAMPLE;
		bopt.weights = scratch + g->start[b];
		memset(br, 0, sizeof(*br));
		br->samples_name = rep->samples_name;
		br->pdu_name = rep->pdu_name;
		br->meter_lines = rep->meter_lines;
		br->meter_line0 = rep->meter_line0;
		br->al = rep->al;
		br->max_gap_s = rep->max_gap_s;
		ret = jt_train(rows + g->start[b], m, present, &bopt, br, NULL,
			       NULL);
		if (ret) {
			jt_diagf("banded fit: band %u failed\n", b + 1);
			break;
		}
		res->band_ok[b] = !jt_model_check(br, res->band_why[b],
						  sizeof(res->band_why[b]));
	}
	unpermute(rows, n, g);
	if (!ret)
		for (i = 0; i < n; i++)
			wb[i] = scratch[rg_dest(g, i)];
	return ret;
}

/* The state of one band search: inputs, scratch and the grids built. */
struct btrain {
	struct jt_row *rows;
	size_t n;
	unsigned int present, K, ne;
	const struct jt_train_opts *o;
	const struct jt_band_opts *bo;
	const struct jt_report *rep;
	const double *w_single;
	double edges[JT_BAND_BINS], *mhz, *pred, *wb;
	struct bgrid g, gb, gs;
	const double *g_w; /* the weights g was built with */
	int g_is_wb; /* ... and they are the bands' weights, wb */
	size_t min_rows;
	struct regroup rg;
	unsigned char *bin;
	struct cand best;
};

static int bt_alloc(struct btrain *t)
{
	size_t n = t->n;

	t->mhz = fit_alloc(n * sizeof(*t->mhz));
	t->pred = fit_alloc(n * sizeof(*t->pred));
	t->wb = fit_alloc(n * sizeof(*t->wb));
	t->rg.band = fit_alloc(n);
	t->rg.rank = fit_alloc(n);
	t->rg.base = fit_alloc((n / RG_BLOCK + 1) * JL_MAX_BANDS *
			       sizeof(*t->rg.base));
	t->bin = fit_alloc(n);
	if (!t->mhz || !t->pred || !t->wb || !t->rg.band || !t->rg.rank ||
	    !t->rg.base || !t->bin)
		return -ENOMEM;
	return 0;
}

static void bt_free(struct btrain *t)
{
	bgrid_free(&t->g);
	bgrid_free(&t->gb);
	bgrid_free(&t->gs);
	free(t->mhz);
	free(t->pred);
	free(t->wb);
	free(t->rg.band);
	free(t->rg.rank);
	free(t->rg.base);
	free(t->bin);
}

/*
 * The candidate edges, and the fewest rows a band may have; 0 when there is
 * nothing to search (res->why says why), 1 to search.
 */
static int bt_setup(struct btrain *t, struct jt_band_result *res)
{
	unsigned int j;

	res->n_freq = jt_rows_freq(t->rows, t->n, t->present, t->mhz);
	if (!res->n_freq) {
		snprintf(res->why, sizeof(res->why),
			 "single set: no frequency known (no freq_mhz column "
			 "values and no cycles): a banded fit is impossible");
		return 0;
	}
	if (t->K < 2) {
		snprintf(
			res->why, sizeof(res->why),
			"single set: without cross-validation (--folds) a banded "
			"model cannot be judged on held-out data");
		return 0;
	}
	if (t->bo->nedges) {
		for (j = 0; j < t->bo->nedges; j++)
			t->edges[j] = (double)t->bo->edges[j];
		t->ne = t->bo->nedges;
	} else {
		t->ne = quantile_edges(t->mhz, t->n, t->edges, t->pred);
	}
	if (!t->ne) {
		snprintf(
			res->why, sizeof(res->why),
			"single set: every interval ran at the same frequency");
		return 0;
	}
	rows_bins(t->mhz, t->n, t->edges, t->ne, t->bin);
	/* The bins are all the search needs of the frequencies. */
	free(t->mhz);
	t->mhz = NULL;
	t->min_rows = (size_t)ceil(JT_BAND_MIN_SHARE * (double)t->n);
	if (t->min_rows < t->o->min_samples)
		t->min_rows = t->o->min_samples;
	/* Ten intervals per coefficient: a band fitted on less is a guess. */
	if (t->min_rows < 10 * JT_NCOL)
		t->min_rows = 10 * JT_NCOL;
	return 1;
}

/*
 * The edges, searched in up to two rounds; < 0 an error, 1 when no edges
 * fit (res->why says so), 0 with t->best and the bands' fits in res.
 */
static int bt_search(struct btrain *t, struct jt_band_result *res)
{
	size_t bin_rows[JT_BAND_BINS], i;
	const double *wsearch;
	struct cand prev;
	int ret, round;

	/*
	 * Which rows the search may trust: the single fit's, unless it
	 * rejected so many that it does not describe the data (a whole band
	 * can look like outliers to one set); then all. A second round
	 * searches again with the bands' own robust weights.
	 */
	wsearch = t->w_single;
	if (!t->w_single ||
	    (double)t->rep->n_rejected > JT_MAX_REJECTED * (double)t->n)
		wsearch = NULL;
	/*
	 * A grid is built once per set of weights: the first round's, when
	 * it is the single fit's, is kept for the held-out comparison (gs),
	 * and the last round's serves as the bands' (gb) when the bands'
	 * weights did not change after it (same edges: the same band fits).
	 */
	for (round = 0; round < 2; round++) {
		if (round && t->bo->nedges)
			break;
		if (round && t->g_w == t->w_single) {
			t->gs = t->g;
			memset(&t->g, 0, sizeof(t->g));
		}
		bgrid_free(&t->g);
		ret = bgrid_build(&t->g, t->rows, t->n, t->bin, wsearch,
				  t->present, t->K, t->edges, t->ne, t->o);
		if (ret) {
			jt_diagf("banded fit: cannot set up: %s\n",
				 strerror(-ret));
			return ret;
		}
		t->g_w = wsearch;
		t->g_is_wb = round > 0;
		memset(bin_rows, 0, sizeof(bin_rows));
		for (i = 0; i < t->n; i++)
			bin_rows[t->g.bin[i]] += wsearch ? wsearch[i] > 0 : 1;
		prev = t->best;
		ret = search(&t->g, t->bo, bin_rows, t->min_rows, wsearch,
			     t->pred, &t->best, &res->candidates);
		if (ret)
			return ret;
		if (!isfinite(t->best.err)) {
			if (round) {
				/* Keep the first round's fits. */
				t->best = prev;
				break;
			}
			snprintf(
				res->why, sizeof(res->why),
				"single set: no band edges leave every band %zu "
				"intervals (%.0f%% and --min-samples)",
				t->min_rows, JT_BAND_MIN_SHARE * 100);
			return 1;
		}
		if (round && same_cuts(&t->best, &prev))
			break; /* the same bands: the same fits and weights */
		ret = fit_bands(t->rows, t->n, t->present, t->o, t->rep, &t->g,
				&t->best, t->edges, &t->rg, t->pred, t->wb,
				res);
		if (ret)
			return ret;
		t->g_is_wb = 0;
		wsearch = t->wb;
	}
	return 0;
}

/* The single set's grid: the search's first, or built now. */
static int bt_grid_single(struct btrain *t)
{
	if (!t->gs.G && t->g_w == t->w_single && t->g.G) {
		t->gs = t->g;
		memset(&t->g, 0, sizeof(t->g));
	}
	bgrid_free(&t->g);
	if (t->gs.G)
		return 0;
	return bgrid_build(&t->gs, t->rows, t->n, t->bin, t->w_single,
			   t->present, t->K, t->edges, t->ne, t->o);
}

/*
 * Single, banded and CPU-only on the same held-out intervals: the grids
 * already built are reused where their weights are the right ones, each
 * fold's sets fitted first, then the rows read once for all three.
 */
FIT_HOT
static int bt_heldout(struct btrain *t, const unsigned char *map,
		      struct jt_band_result *res)
{
	unsigned char one[JT_BAND_BINS] = { 0 };
	struct hset h[3] = { { 0 } }; /* banded, single, CPU-only */
	unsigned int j;
	int ret = 0;

	/* What regrouped the rows for the bands' fits is not needed now. */
	free(t->rg.band);
	free(t->rg.rank);
	free(t->rg.base);
	t->rg.band = t->rg.rank = NULL;
	t->rg.base = NULL;

	if (t->g_is_wb) {
		t->gb = t->g;
		memset(&t->g, 0, sizeof(t->g));
	} else {
		ret = bgrid_build(&t->gb, t->rows, t->n, t->bin, t->wb,
				  t->present, t->K, t->edges, t->ne, t->o);
	}
	if (!ret)
		ret = hset_fit(&h[0], &t->gb, map, res->nb, 0);
	if (!ret)
		ret = bt_grid_single(t);
	if (!ret)
		ret = hset_fit(&h[1], &t->gs, one, 1, 0);
	if (!ret)
		ret = hset_fit(&h[2], &t->gs, one, 1, 1);
	if (ret) {
		jt_diagf("banded fit: held-out evaluation failed: %s\n",
			 ret == -EDOM ? "NNLS did not converge" :
					strerror(-ret));
	} else {
		/*
		 * On the intervals the bands accept: ones the single set
		 * rejected count against it (a band it cannot describe is
		 * not noise).
		 */
		hsets_metrics(h, 3, t->wb);
		fit_acc_result(&h[0].acc, &res->cv_banded);
		fit_acc_result(&h[1].acc, &res->cv_single);
		fit_acc_result(&h[2].acc, &res->cv_base);
	}
	for (j = 0; j < 3; j++)
		free(h[j].c);
	return ret;
}

/* Banded only if better on held-out data by the margin, every band sane. */
static void bt_decide(struct jt_band_result *res, int all_ok)
{
	char why[256];
	unsigned int b;

	if (!(res->cv_banded.mape <
		      res->cv_single.mape * (1 - JT_BAND_MARGIN) &&
	      res->cv_single.mape - res->cv_banded.mape > JT_BAND_SLACK)) {
		snprintf(
			res->why, sizeof(res->why),
			"single set: %u bands are not better on held-out data "
			"(MAPE %.3f%% vs %.3f%%; needs %.0f%% and %.2g points lower)",
			res->nb, res->cv_banded.mape, res->cv_single.mape,
			JT_BAND_MARGIN * 100, JT_BAND_SLACK);
	} else if (!all_ok) {
		for (b = 0; b < res->nb && res->band_ok[b]; b++)
			;
		snprintf(why, sizeof(why), "%s", res->band_why[b]);
		snprintf(res->why, sizeof(res->why),
			 "single set: band %u of the better banded model is "
			 "implausible: %s",
			 b + 1, why);
	} else {
		res->banded = 1;
		res->model.nr = res->nb;
		for (b = 0; b < res->nb; b++) {
			res->model.upper_mhz[b] =
				b + 1 < res->nb ? res->upper_mhz[b] : 0;
			res->model.set[b] = res->band[b].model.coef;
		}
		snprintf(
			res->why, sizeof(res->why),
			"%u bands: held-out MAPE %.3f%% vs %.3f%% for the single "
			"set, every band plausible",
			res->nb, res->cv_banded.mape, res->cv_single.mape);
	}
}

int jt_train_bands(struct jt_row *rows, size_t n, unsigned int present,
		   const struct jt_train_opts *o, const struct jt_band_opts *bo,
		   const struct jt_report *rep, const double *w_single,
		   struct jt_band_result *res)
{
	struct btrain t = {
		.rows = rows,
		.n = n,
		.present = present,
		.K = o->folds > 1 ? o->folds : 1,
		.o = o,
		.bo = bo,
		.rep = rep,
		.w_single = w_single,
		.best = { .err = INFINITY },
	};
	unsigned char map[JT_BAND_BINS];
	unsigned int b;
	int ret, all_ok = 1;

	memset(res, 0, sizeof(*res));
	jl_bands_single(&res->model, &rep->model.coef);
	if (bo->max_bands <= 1 && !bo->nedges) {
		snprintf(res->why, sizeof(res->why), "single set (--bands 1)");
		return 0;
	}
	ret = bt_alloc(&t);
	if (ret)
		goto out;
	if (!bt_setup(&t, res))
		goto out;
	ret = bt_search(&t, res);
	if (ret) {
		ret = ret > 0 ? 0 : ret;
		goto out;
	}
	band_map(&t.g, &t.best, map);
	for (b = 0; b < res->nb; b++)
		all_ok &= res->band_ok[b];
	ret = bt_heldout(&t, map, res);
	if (ret)
		goto out;
	bt_decide(res, all_ok);
out:
	bt_free(&t);
	return ret;
}

static void band_range(const struct jt_band_result *br, unsigned int b,
		       char *buf, size_t len)
{
	if (br->nb == 1)
		snprintf(buf, len, "all");
	else if (!b)
		snprintf(buf, len, "< %llu MHz",
			 (unsigned long long)br->upper_mhz[0]);
	else if (b + 1 == br->nb)
		snprintf(buf, len, ">= %llu MHz",
			 (unsigned long long)br->upper_mhz[b - 1]);
	else
		snprintf(buf, len, "%llu-%llu MHz",
			 (unsigned long long)br->upper_mhz[b - 1],
			 (unsigned long long)br->upper_mhz[b]);
}

static void cv_line(FILE *fp, const char *what, const struct fit_metrics *m)
{
	fprintf(fp, "#   %-24s %7.2f%% %10.3f W %8.4f  (%zu intervals)\n", what,
		m->mape, m->rmse, m->r2, m->n);
}

int jt_write_bands_report(FILE *fp, const struct jt_report *rep,
			  const struct jt_band_result *br, int with_model)
{
	char text[JL_BANDS_TEXT_MAX], range[64], label[64];
	unsigned int b, i;
	int len;

	if (jt_write_report(fp, rep, 0))
		return -EIO;
	fprintf(fp,
		"# frequency bands: %zu of %zu intervals with a known "
		"frequency; %u edge sets tried\n",
		br->n_freq, rep->n, br->candidates);
	if (br->tried) {
		fprintf(fp,
			"# band search, on the %u folds it chose by (not the "
			"headline) %8s %12s %8s\n",
			rep->folds, "MAPE", "RMSE", "R2");
		cv_line(fp, "single set", &br->cv_single);
		snprintf(label, sizeof(label), "%u bands", br->nb);
		cv_line(fp, label, &br->cv_banded);
		cv_line(fp, "cpu-only", &br->cv_base);
		for (b = 0; b < br->nb; b++) {
			const struct jt_model *m = &br->band[b].model;

			band_range(br, b, range, sizeof(range));
			fprintf(fp, "# band %u (%s, %zu intervals):", b + 1,
				range, br->nrows[b]);
			for (i = 0; i < JL_NR_COEF; i++)
				if (m->fitted & (1u << i))
					fprintf(fp, " %s %.4g",
						jl_coef_names[i], m->raw[i]);
			fprintf(fp, "; %s\n",
				br->band_ok[b] ? "plausible" : br->band_why[b]);
		}
	}
	fprintf(fp, "# written: %s\n", br->why);
	if (!with_model)
		return ferror(fp) ? -EIO : 0;
	if (!br->banded)
		return jt_write_report(fp, rep, 2);
	len = jl_bands_format(&br->model, text, sizeof(text));
	if (len < 0)
		return len;
	fputs("# upper_mhz", fp);
	for (i = 0; i < JL_NR_COEF; i++)
		fprintf(fp, " %s", jl_coef_names[i]);
	fputc('\n', fp);
	fputs(text, fp);
	return ferror(fp) ? -EIO : 0;
}
