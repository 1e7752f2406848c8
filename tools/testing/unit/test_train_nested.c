// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of joules-train: the headline is nested cross-validation
 * of the written model on every held-out row (issue 27), checked against
 * an independent computation of the same folds.
 */
#include <gsl/gsl_multifit.h>

#include "train_util.h"

/* Independent metrics: MAPE (%), MAE and RMSE (W) of predictions. */
struct ind_acc {
	double ape, ae, se;
	size_t n;
};

static void ind_add(struct ind_acc *a, double measured, double predicted)
{
	a->ape += fabs(predicted - measured) / fabs(measured);
	a->ae += fabs(predicted - measured);
	a->se += (predicted - measured) * (predicted - measured);
	a->n++;
}

/* Contiguous fold k of K over n rows, as Documentation/training.rst says. */
static size_t ind_fold(size_t n, unsigned int k, unsigned int K)
{
	return (size_t)((unsigned long long)n * k / K);
}

/*
 * OLS by GSL's SVD solver on the rows outside [lo, hi), all nine columns,
 * in the module's units and rounded as written (uW for idle and CPU time,
 * pJ per event). Returns 0 if every coefficient came out >= 0.
 */
static int ind_ols(const struct jt_row *rows, size_t n, size_t lo, size_t hi,
		   struct jl_coef *c)
{
	size_t m = n - (hi - lo), i, r = 0;
	gsl_matrix *X = gsl_matrix_alloc(m, JL_NR_COEF);
	gsl_vector *y = gsl_vector_alloc(m), *b = gsl_vector_alloc(JL_NR_COEF);
	gsl_matrix *cov = gsl_matrix_alloc(JL_NR_COEF, JL_NR_COEF);
	gsl_multifit_linear_workspace *ws =
		gsl_multifit_linear_alloc(m, JL_NR_COEF);
	double chisq;
	unsigned int j;
	int neg = 0;

	for (i = 0; i < n; i++) {
		if (i >= lo && i < hi)
			continue;
		/* Columns in jl_coef order: the eight features, then idle. */
		for (j = 0; j < JT_NF; j++)
			gsl_matrix_set(X, r, j, rows[i].f[j]);
		gsl_matrix_set(X, r, JT_NF, rows[i].interval_ns);
		gsl_vector_set(y, r, rows[i].meter_uj);
		r++;
	}
	gsl_multifit_linear(X, y, b, cov, &chisq, ws);
	for (j = 0; j < JL_NR_COEF; j++) {
		/* uJ per ns -> uW is 1e9; uJ per event -> pJ is 1e6. */
		double unit = j == JL_F_CPU_NS || j == JT_NF ? 1e9 : 1e6;
		double v = nearbyint(gsl_vector_get(b, j) * unit);

		neg |= v < 0;
		jl_coef_set(c, j, v < 0 ? 0 : (jl_u64)v);
	}
	gsl_multifit_linear_free(ws);
	gsl_matrix_free(X);
	gsl_matrix_free(cov);
	gsl_vector_free(y);
	gsl_vector_free(b);
	return neg ? -1 : 0;
}

/* Predicted power (W) of a row by the module's formula, independently. */
static double ind_predict_w(const struct jl_coef *c, const struct jt_row *r)
{
	double uj = (double)c->idle_uw * r->interval_ns * 1e-9;
	unsigned int j;

	for (j = 0; j < JT_NF; j++)
		uj += (double)jl_coef_get(c, j) * r->f[j] *
		      (j == JL_F_CPU_NS ? 1e-9 : 1e-6);
	return uj / r->interval_ns * 1e3;
}

/* Spikes: every 23rd row's meter reads 3x (a glitch, not the node). */
static void add_spikes(struct jt_row *rows, size_t n)
{
	for (size_t i = 7; i < n; i += 23)
		rows[i].meter_uj *= 3;
}

/*
 * Plain least squares, one set: the nested figure is exactly the
 * independent OLS fits' error on every held-out row.
 *
 * nested CV: equals independent OLS fits of the same folds on every
 * held-out row (MAPE, MAE, RMSE, fold spread)
 */
TEST(nested_equals_independent)
{
	const size_t n = 1200;
	const unsigned int K = 5;
	struct jt_row *rows = synth_rows(n, &truth, 0.01, ALL_FEATURES);
	struct jt_train_opts o = {
		.method = FIT_OLS, .folds = K, .min_samples = 20, .no_robust = 1
	};
	struct jt_band_opts bo = { .max_bands = 1 };
	struct jt_nested nr;
	struct ind_acc a = { 0 };
	double fold_min = INFINITY, fold_max = 0;
	unsigned int k;
	int ret, neg = 0;

	number_lines(rows, n);
	diag_begin();
	ret = jt_nested_cv(rows, n, ALL_FEATURES, &o, &bo, &nr, NULL, NULL);
	diag_end();
	CHECK(ret == 0 && nr.done && nr.folds == K, "nested: %d", ret);
	for (k = 0; k < K; k++) {
		size_t lo = ind_fold(n, k, K), hi = ind_fold(n, k + 1, K), i;
		struct ind_acc f = { 0 };
		struct jl_coef c;

		neg |= ind_ols(rows, n, lo, hi, &c);
		for (i = lo; i < hi; i++) {
			ind_add(&a, jt_row_watts(&rows[i]),
				ind_predict_w(&c, &rows[i]));
			ind_add(&f, jt_row_watts(&rows[i]),
				ind_predict_w(&c, &rows[i]));
		}
		fold_min = fmin(fold_min, 100 * f.ape / (double)f.n);
		fold_max = fmax(fold_max, 100 * f.ape / (double)f.n);
	}
	CHECK(!neg, "the independent fits have no negative coefficient "
		    "(else OLS and the trainer's would differ)");
	/*
	 * Two solvers (SVD here, the trainer's blocked QR) agree to about
	 * 1e-10 relative before rounding to whole module units, and round the
	 * same way but at a tie: 1e-7 relative bounds the difference.
	 */
	CHECK(nr.ev.model.n == n, "every row counted: %zu of %zu",
	      nr.ev.model.n, n);
	CHECK(rel_close(nr.ev.model.mape, 100 * a.ape / (double)a.n, 1e-7),
	      "MAPE %.9f independent %.9f", nr.ev.model.mape,
	      100 * a.ape / (double)a.n);
	CHECK(rel_close(nr.ev.model.mae, a.ae / (double)a.n, 1e-7),
	      "MAE %.9f independent %.9f", nr.ev.model.mae, a.ae / (double)a.n);
	CHECK(rel_close(nr.ev.model.rmse, sqrt(a.se / (double)a.n), 1e-7),
	      "RMSE %.9f independent %.9f", nr.ev.model.rmse,
	      sqrt(a.se / (double)a.n));
	CHECK(rel_close(nr.fold_mape_min, fold_min, 1e-7) &&
		      rel_close(nr.fold_mape_max, fold_max, 1e-7),
	      "fold spread %.6f..%.6f independent %.6f..%.6f", nr.fold_mape_min,
	      nr.fold_mape_max, fold_min, fold_max);
	free(rows);
}

/*
 * Robust fitting: each outer fold's weights come from its training rows
 * only, and the held-out spikes count. The independent side takes each
 * fold's written model from the trainer run on the rows the test itself
 * left in, and scores every held-out row itself.
 *
 * nested CV with robust fitting: weights from the training folds only,
 * every held-out row scored
 */
TEST(nested_robust_counts_every_row)
{
	const size_t n = 1500;
	const unsigned int K = 5;
	struct jt_row *rows = synth_rows(n, &truth, 0.01, ALL_FEATURES);
	struct jt_row *sub = malloc(n * sizeof(*sub));
	struct jt_train_opts o = { .method = FIT_NNLS,
				   .folds = K,
				   .min_samples = 20 };
	struct jt_band_opts bo = { .max_bands = 1 };
	static struct jt_report rep;
	static struct jt_band_result br;
	struct jt_nested nr;
	struct ind_acc a = { 0 };
	unsigned int k;
	int ret;

	number_lines(rows, n);
	add_spikes(rows, n);
	diag_begin();
	ret = jt_nested_cv(rows, n, ALL_FEATURES, &o, &bo, &nr, NULL, NULL);
	for (k = 0; k < K && !ret; k++) {
		size_t lo = ind_fold(n, k, K), hi = ind_fold(n, k + 1, K), i,
		       m = 0;

		for (i = 0; i < n; i++)
			if (i < lo || i >= hi)
				sub[m++] = rows[i];
		memset(&rep, 0, sizeof(rep));
		ret = jt_fit_written(sub, m, ALL_FEATURES, &o, &bo, &rep, &br,
				     NULL, NULL);
		for (i = lo; i < hi && !ret; i++)
			ind_add(&a, jt_row_watts(&rows[i]),
				ind_predict_w(&br.model.set[0], &rows[i]));
	}
	/* The old figure: one robust fit on all rows, rejected rows left out. */
	memset(&rep, 0, sizeof(rep));
	if (!ret)
		ret = jt_train(rows, n, ALL_FEATURES, &o, &rep, NULL, NULL);
	diag_end();
	CHECK(ret == 0, "fits: %d", ret);
	CHECK(nr.ev.model.n == n, "every row counted: %zu", nr.ev.model.n);
	CHECK(rel_close(nr.ev.model.mape, 100 * a.ape / (double)a.n, 1e-12),
	      "MAPE %.9f independent %.9f", nr.ev.model.mape,
	      100 * a.ape / (double)a.n);
	/*
	 * A spike (3x) read where the model predicts the truth is 2/3 off:
	 * on 1 row in 23 it alone adds 66.7%/23 = 2.9 points of MAPE. An
	 * honest figure is above that; the old one left the spikes out.
	 */
	CHECK(nr.ev.model.mape > 200.0 / 3 / 23 && rep.cv.model.mape < 2,
	      "nested %.2f%% counts the spikes, the rejected-row CV %.2f%% did not",
	      nr.ev.model.mape, rep.cv.model.mape);
	free(rows);
	free(sub);
}

/* The CLI's headline is that figure, with MAE, RMSE and the spread. *
 * cli: the headline is the nested figure, MAE and RMSE beside MAPE, the
 * spread across folds
 */
TEST(cli_headline)
{
	struct gen_opts g;
	double mape = -1, mae = -1, rmse = -1;
	const char *h;
	int rc;

	TT_NEED_CLI("cli: nested headline");
	gen_defaults(&g);
	g.n = 1500;
	g.noise = 0.01;
	gen_files("hs.csv", "hp.csv", &g);
	rc = run_cli("-s hs.csv -p hp.csv --bands 2");
	h = strstr(cli_out, "# node MAPE ");
	if (h)
		sscanf(h, "# node MAPE %lf%%", &mape);
	h = h ? strstr(h, "MAE ") : NULL;
	if (h)
		sscanf(h, "MAE %lf W, RMSE %lf W", &mae, &rmse);
	CHECK(rc == 0 &&
		      strstr(cli_out, "nested 5-fold CV: the written "
				      "model on all") &&
		      strstr(cli_out, "; folds ") && mape > 0 && mae > 0 &&
		      rmse >= mae,
	      "headline: rc %d MAPE %g MAE %g RMSE %g\n%s", rc, mape, mae, rmse,
	      cli_out);
	CHECK(!strstr(cli_out, "#   5-fold CV model"),
	      "no figure from rows the robust fit chose: %s", cli_out);
}

TT_MAIN("test_train_nested")
