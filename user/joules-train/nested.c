// SPDX-License-Identifier: GPL-2.0
/*
 * The headline: nested cross-validation of exactly what is written.
 *
 * The procedure that turns rows into the written model (jt_fit_written():
 * robust weights, the single set, the band search with its own inner
 * folds and the write rule) is run once per outer fold on the other
 * folds' rows only, and the model it would write predicts every row of
 * the held-out fold, none left out. So a held-out row never influences
 * the weights, edges or band count it is judged by.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "train.h"

int jt_fit_written(struct jt_row *rows, size_t n, unsigned int present,
		   const struct jt_train_opts *o, const struct jt_band_opts *bo,
		   struct jt_report *rep, struct jt_band_result *br,
		   double *cv_model, double *cv_base)
{
	struct jt_train_opts to = *o;
	double *w = fit_alloc(n * sizeof(*w));
	int ret;

	if (!w)
		return -ENOMEM;
	to.weights = w;
	ret = jt_train(rows, n, present, &to, rep, cv_model, cv_base);
	to.weights = NULL;
	if (!ret)
		ret = jt_train_bands(rows, n, present, &to, bo, rep, w, br);
	if (!ret && o->weights)
		memcpy(o->weights, w, n * sizeof(*w));
	free(w);
	return ret;
}

double jt_predict_bands_w(const struct jl_bands *b, const struct jt_row *r,
			  double mhz)
{
	const struct jl_coef *c =
		&b->set[mhz > 0 ? jl_band_pick(b, (jl_u64)mhz) : 0];

	return jt_predict_uj(c, r) * 1e3 / r->interval_ns;
}

void jt_bands_doubles(const struct jl_bands *b, struct jt_bands_k *bk)
{
	unsigned int i;

	bk->b = b;
	for (i = 0; i < JL_MAX_BANDS; i++)
		jt_coef_doubles(&b->set[i], bk->k[i]);
}

static void reverse(struct jt_row *a, size_t n)
{
	struct jt_row t;
	size_t i;

	for (i = 0; i < n / 2; i++) {
		t = a[i];
		a[i] = a[n - 1 - i];
		a[n - 1 - i] = t;
	}
}

/* [a, a + n) rotated left by k, in place (three reversals). */
static void rotate(struct jt_row *a, size_t n, size_t k)
{
	if (!n || !k || k == n)
		return;
	reverse(a, k);
	reverse(a + k, n - k);
	reverse(a, n);
}

/*
 * [A M B] -> [B M A] in place, A and B two folds (of sizes within one row
 * of each other): the rows of the shorter are exchanged with as many of
 * the other's, and the one row left over crosses M by a memmove. Each row
 * of A and B moves once, M at most by one row.
 */
static void exchange_ends(struct jt_row *seg, size_t na, size_t nm, size_t nb)
{
	size_t s = na < nb ? na : nb, i;
	struct jt_row t;

	for (i = 0; i < s; i++) {
		t = seg[i];
		seg[i] = seg[na + nm + i];
		seg[na + nm + i] = t;
	}
	if (na > nb) {
		/* [B A2 M A1]: A2, the one row left, to the end */
		t = seg[s];
		memmove(seg + s, seg + s + 1, (nm + s) * sizeof(t));
		seg[s + nm + s] = t;
	} else if (nb > na) {
		/* [B1 M A B2]: B2, the one row left, after B1 */
		t = seg[na + nm + na];
		memmove(seg + s + 1, seg + s, (nm + na) * sizeof(t));
		seg[s] = t;
	}
}

/* Scratch of one outer fold's run, on the heap (the reports are large). */
struct fold_run {
	struct jt_report rep;
	struct jt_band_result br;
};

static void spread(const double *v, unsigned int k, struct jt_nested *res)
{
	double sum = 0, ss = 0;
	unsigned int i;

	res->fold_mape_min = INFINITY;
	res->fold_mape_max = -INFINITY;
	for (i = 0; i < k; i++) {
		sum += v[i];
		res->fold_mape_min = fmin(res->fold_mape_min, v[i]);
		res->fold_mape_max = fmax(res->fold_mape_max, v[i]);
	}
	for (i = 0; i < k; i++)
		ss += (v[i] - sum / k) * (v[i] - sum / k);
	res->fold_mape_sd = k > 1 ? sqrt(ss / (k - 1)) : 0;
}

/*
 * One outer fold: fit on the others, predict [lo, hi). The rows come as
 * [fold | the folds before it | the folds after it], each in its order:
 * the held-out rows first, the training rows after them, in time order.
 */
static int outer_fold(struct jt_row *rows, size_t n, unsigned int present,
		      const struct jt_train_opts *o,
		      const struct jt_band_opts *bo, size_t lo, size_t hi,
		      const double *mhz, struct fold_run *fr,
		      struct fit_acc *am, struct fit_acc *ab,
		      struct fit_acc *fold, double *pm, double *pb)
{
	struct jt_train_opts to = *o;
	struct jt_bands_k bk;
	double kbase[JT_NF + 1];
	size_t m = n - (hi - lo), i;
	int ret;

	to.pr = NULL;
	to.weights = NULL;
	to.no_se = 1;
	/* Of the single set only its model, baseline and weights are used. */
	to.skip = JT_SKIP_INSAMPLE | JT_SKIP_CV | JT_SKIP_SUMMARY;
	memset(fr, 0, sizeof(*fr));
	fr->rep.samples_name = "training folds";
	ret = jt_fit_written(rows + (hi - lo), m, present, &to, bo, &fr->rep,
			     &fr->br, NULL, NULL);
	if (ret)
		return ret;
	fit_acc_init(fold);
	/* The sets as doubles once (jt_predict_bands_w()'s, jt_predict_uj()'s) */
	jt_bands_doubles(&fr->br.model, &bk);
	jt_coef_doubles(&fr->rep.base.coef, kbase);
	for (i = lo; i < hi; i++) {
		const struct jt_row *r = &rows[i - lo];
		double watts = jt_row_watts(r);
		double p = jt_predict_bands_k(&bk, r, mhz[i]);
		double q = jt_predict_k(kbase, r) * 1e3 / r->interval_ns;

		fit_acc_add(am, watts, p);
		fit_acc_add(ab, watts, q);
		fit_acc_add(fold, watts, p);
		if (pm)
			pm[i] = p;
		if (pb)
			pb[i] = q;
	}
	return 0;
}

int jt_nested_cv(struct jt_row *rows, size_t n, unsigned int present,
		 const struct jt_train_opts *o, const struct jt_band_opts *bo,
		 struct jt_nested *res, double *pm, double *pb)
{
	unsigned int K = o->folds, k;
	struct fold_run *fr = NULL;
	struct fit_acc am, ab, fold;
	double *mhz = NULL, fold_mape[JT_MAX_FOLDS];
	struct fit_metrics fm;
	int ret = -ENOMEM;

	memset(res, 0, sizeof(*res));
	if (K < 2 || K > JT_MAX_FOLDS)
		return 0;
	mhz = fit_alloc(n * sizeof(*mhz));
	fr = malloc(sizeof(*fr));
	if (!mhz || !fr)
		goto out;
	/* The band in force for each row, as the module picks it. */
	jt_rows_freq(rows, n, present, mhz);
	fit_acc_init(&am);
	fit_acc_init(&ab);
	for (k = 0; k < K; k++) {
		size_t lo = fit_fold_start(n, k, K),
		       hi = fit_fold_start(n, k + 1, K);

		jt_progress(o->pr, "nested cross-validation", k, K);
		ret = outer_fold(rows, n, present, o, bo, lo, hi, mhz, fr, &am,
				 &ab, &fold, pm, pb);
		/*
		 * The next fold to the front: [fold k | before | fold k + 1]
		 * -> [fold k + 1 | before, fold k]. No copy of the rows (most
		 * of the memory), and each moves about once a fold, where
		 * rotating the folds after it there and back moved them four
		 * times.
		 */
		if (!ret && k + 1 < K)
			exchange_ends(rows, hi - lo, lo,
				      fit_fold_start(n, k + 2, K) - hi);
		else
			rotate(rows, hi, hi - lo); /* the rows back in order */
		if (ret) {
			jt_diagf(
				"nested cross-validation: the fit without fold "
				"%u (intervals %zu..%zu) failed\n",
				k + 1, lo + 1, hi);
			goto out;
		}
		fit_acc_result(&fold, &fm);
		fold_mape[k] = fm.mape;
		res->banded_folds += fr->br.banded;
	}
	jt_progress_end(o->pr);
	res->folds = K;
	fit_acc_result(&am, &res->ev.model);
	fit_acc_result(&ab, &res->ev.base);
	spread(fold_mape, K, res);
	res->done = 1;
	ret = 0;
out:
	free(mhz);
	free(fr);
	return ret;
}
