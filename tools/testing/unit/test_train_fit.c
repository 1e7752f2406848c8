// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of joules-train: the fitter: recovery of known coefficients, units, NNLS against
 * brute force, robust weights, uncertainty, plausibility, blocked QR, folds.
 */
#include <gsl/gsl_multifit.h>

#include "csv.h"
#include "parse.h"
#include "train_util.h"

/* ---- fitting ---- */

/* fit: synthetic data (0.5% noise) recovers all %d coefficients within 2% */
TEST(recover)
{
	static const enum fit_method methods[] = { FIT_OLS, FIT_NNLS };
	size_t n = 20000;
	struct jt_row *rows = synth_rows(n, &truth, 0.005, ALL_FEATURES);
	unsigned int mi, i;

	for (mi = 0; mi < 2; mi++) {
		struct jt_train_opts o = { .method = methods[mi],
					   .folds = 5,
					   .min_samples = 20 };
		struct jt_report rep = { 0 };
		int ret;

		ret = jt_train(rows, n, ALL_FEATURES, &o, &rep, NULL, NULL);
		CHECK(ret == 0, "train %d", ret);
		for (i = 0; i < JL_NR_COEF; i++) {
			double want = (double)jl_coef_get(&truth, i);
			double got = (double)jl_coef_get(&rep.model.coef, i);

			CHECK(fabs(got - want) <= 0.02 * want,
			      "%s: %s %.0f want %.0f", mi ? "nnls" : "ols",
			      jl_coef_names[i], got, want);
		}
		CHECK(rep.have_cv && rep.cv.model.mape < 1.0 &&
			      rep.cv.model.r2 > 0.99,
		      "CV MAPE %.3f R2 %.4f", rep.cv.model.mape,
		      rep.cv.model.r2);
		CHECK(rep.cv.base.mape > 2 * rep.cv.model.mape,
		      "baseline is worse: %.3f", rep.cv.base.mape);
		CHECK(!rep.model.dropped, "nothing dropped");
	}
	free(rows);
}

/* units: noise-free fit returns the exact module coefficients */
TEST(exact_units)
{
	/* Noise-free data: the rounded module coefficients come back exactly. */
	struct jl_coef c = { .cpu_time_uw = 7654321,
			     .cycles_pj = 1234,
			     .instructions_pj = 567,
			     .cache_miss_pj = 45678,
			     .disk_byte_pj = 9876,
			     .idle_uw = 43210987 };
	struct jt_row *rows = synth_rows(500, &c, 0, ALL_FEATURES);
	struct jt_train_opts o = { .method = FIT_NNLS,
				   .folds = 5,
				   .min_samples = 20 };
	struct jt_report rep = { 0 };
	unsigned int i;
	size_t r;

	CHECK(jt_train(rows, 500, ALL_FEATURES, &o, &rep, NULL, NULL) == 0,
	      "train");
	for (i = 0; i < JL_NR_COEF; i++)
		CHECK(jl_coef_get(&rep.model.coef, i) == jl_coef_get(&c, i),
		      "%s %llu want %llu", jl_coef_names[i],
		      (unsigned long long)jl_coef_get(&rep.model.coef, i),
		      (unsigned long long)jl_coef_get(&c, i));
	CHECK(rep.cv.model.mape < 1e-6, "CV MAPE %g", rep.cv.model.mape);
	/* The trainer's prediction agrees with the module's fixed-point model. */
	for (r = 0; r < 500; r++) {
		struct jl_feat f = { .present = (1u << JL_NR_FEATURES) - 1 };
		jl_u64 rem = 0, uj;

		for (i = 0; i < JT_NF; i++)
			f.v[i] = (jl_u64)rows[r].f[i];
		uj = jl_fj_to_uj(
			jl_model_fj(&c, &f) +
				jl_power_fj(c.idle_uw,
					    (jl_u64)rows[r].interval_ns),
			&rem);
		if (!CHECK(fabs((double)uj - jt_predict_uj(&c, &rows[r])) <=
				   1.0,
			   "row %zu: module %llu uJ, trainer %.3f", r,
			   (unsigned long long)uj, jt_predict_uj(&c, &rows[r])))
			break;
	}
	free(rows);
}

/* Brute-force NNLS: best unconstrained LS over every support set that is feasible. */
static double brute_nnls(const gsl_matrix *a, const gsl_vector *b,
			 double *best_x)
{
	size_t m = a->size1, n = a->size2, mask, i, j, c;
	double best = INFINITY;

	for (mask = 0; mask < (1u << n); mask++) {
		size_t k = (size_t)__builtin_popcountl(mask);
		double x[16] = { 0 }, rss = 0;
		int feasible = 1;

		if (k) {
			gsl_matrix *as = gsl_matrix_alloc(m, k),
				   *cov = gsl_matrix_alloc(k, k);
			gsl_vector *cs = gsl_vector_alloc(k);
			gsl_multifit_linear_workspace *ws =
				gsl_multifit_linear_alloc(m, k);
			double chisq;

			for (j = 0, c = 0; j < n; j++)
				if (mask & (1u << j)) {
					for (i = 0; i < m; i++)
						gsl_matrix_set(
							as, i, c,
							gsl_matrix_get(a, i,
								       j));
					c++;
				}
			gsl_multifit_linear(as, b, cs, cov, &chisq, ws);
			for (j = 0, c = 0; j < n; j++)
				if (mask & (1u << j)) {
					x[j] = gsl_vector_get(cs, c++);
					if (x[j] < 0)
						feasible = 0;
				}
			gsl_multifit_linear_free(ws);
			gsl_vector_free(cs);
			gsl_matrix_free(cov);
			gsl_matrix_free(as);
		}
		if (!feasible)
			continue;
		for (i = 0; i < m; i++) {
			double e = -gsl_vector_get(b, i);

			for (j = 0; j < n; j++)
				e += gsl_matrix_get(a, i, j) * x[j];
			rss += e * e;
		}
		if (rss < best) {
			best = rss;
			memcpy(best_x, x, n * sizeof(*x));
		}
	}
	return best;
}

/* nnls: never negative, optimal against brute force (300 problems) */
TEST(nnls)
{
	const size_t m = 12, n = 5;
	gsl_matrix *a = gsl_matrix_alloc(m, n), *cov = gsl_matrix_alloc(n, n);
	gsl_vector *b = gsl_vector_alloc(m), *x = gsl_vector_alloc(n),
		   *c = gsl_vector_alloc(n);
	gsl_multifit_linear_workspace *ws = gsl_multifit_linear_alloc(m, n);
	int trial, ols_negative = 0, ok = 1;

	for (trial = 0; trial < 300 && ok; trial++) {
		double ref[16], chisq, rss = 0;
		unsigned int it;
		size_t i, j;

		for (i = 0; i < m; i++) {
			for (j = 0; j < n; j++)
				gsl_matrix_set(
					a, i, j,
					rng_unif(-1, 1) +
						(trial % 3 == 0 ? 0.9 : 0));
			gsl_vector_set(b, i, rng_unif(-1, 2));
		}
		if (trial % 10 == 0) { /* rank deficient: two equal columns */
			for (i = 0; i < m; i++)
				gsl_matrix_set(a, i, 4,
					       gsl_matrix_get(a, i, 1));
		}
		gsl_multifit_linear(a, b, c, cov, &chisq, ws);
		for (j = 0; j < n; j++)
			ols_negative += gsl_vector_get(c, j) < 0;
		ok &= CHECK(fit_nnls(a, b, x, &it) == 0, "trial %d converged",
			    trial);
		for (j = 0; j < n; j++)
			ok &= CHECK(gsl_vector_get(x, j) >= 0,
				    "trial %d x%zu = %g", trial, j,
				    gsl_vector_get(x, j));
		for (i = 0; i < m; i++) {
			double e = -gsl_vector_get(b, i);

			for (j = 0; j < n; j++)
				e += gsl_matrix_get(a, i, j) *
				     gsl_vector_get(x, j);
			rss += e * e;
		}
		/* Convex problem: the residual must match the brute-force optimum. */
		ok &= CHECK(rss <= brute_nnls(a, b, ref) * (1 + 1e-9) + 1e-12,
			    "trial %d rss %.12g vs optimum %.12g", trial, rss,
			    brute_nnls(a, b, ref));
	}
	CHECK(ols_negative > 100,
	      "OLS went negative %d times (the cases that matter)",
	      ols_negative);
	gsl_multifit_linear_free(ws);
	gsl_vector_free(c);
	gsl_vector_free(x);
	gsl_vector_free(b);
	gsl_matrix_free(cov);
	gsl_matrix_free(a);
}

/*
 * ols in the trainer: a negative coefficient is dropped and the rest
 * refitted (= nnls here)
 */
TEST(nnls_trainer)
{
	/* Power drops with disk I/O here, so OLS fits a negative disk_byte_pj. */
	size_t n = 2000, i;
	struct jt_row *rows = synth_rows(n, &truth, 0.002, ALL_FEATURES);
	/*
	 * Misspecified on purpose (NNLS cannot follow the negative disk
	 * term), which a robust fit would partly treat as outliers: this is
	 * about the refit, so plain least squares.
	 */
	struct jt_train_opts o = {
		.method = FIT_OLS, .folds = 4, .min_samples = 20, .no_robust = 1
	};
	struct jt_report rep = { 0 }, nn = { 0 };
	char *text = NULL;
	size_t len = 0;
	FILE *fp;

	for (i = 0; i < n; i++)
		rows[i].meter_uj -= 18000.0 * 1e-6 * rows[i].f[JL_F_DISK];
	CHECK(jt_train(rows, n, ALL_FEATURES, &o, &rep, NULL, NULL) == 0,
	      "ols");
	/*
	 * Zeroing a negative coefficient after the fact leaves the others
	 * fitted to compensate for it; OLS must refit without it instead.
	 */
	CHECK(rep.model.negative[JL_F_DISK] < -1000 &&
		      (rep.model.dropped & (1u << JL_F_DISK)) &&
		      rep.model.coef.disk_byte_pj == 0 &&
		      rep.model.raw[JL_F_DISK] == 0,
	      "OLS disk %.1f pJ, dropped %#x", rep.model.negative[JL_F_DISK],
	      rep.model.dropped);
	o.method = FIT_NNLS;
	CHECK(jt_train(rows, n, ALL_FEATURES, &o, &nn, NULL, NULL) == 0,
	      "nnls");
	for (i = 0; i < JL_NR_COEF; i++)
		CHECK(nn.model.raw[i] >= 0, "nnls %s = %g", jl_coef_names[i],
		      nn.model.raw[i]);
	CHECK(!nn.model.dropped && nn.model.coef.disk_byte_pj == 0,
	      "disk 0, nothing dropped");
	/* Here the refit is the NNLS solution: the same active set. */
	for (i = 0; i < JL_NR_COEF; i++)
		CHECK(rel_close(rep.model.raw[i], nn.model.raw[i], 1e-6),
		      "ols refit %s %.6g = nnls %.6g", jl_coef_names[i],
		      rep.model.raw[i], nn.model.raw[i]);
	CHECK(fabs((double)nn.model.coef.cpu_time_uw - 6e6) < 0.05 * 6e6,
	      "cpu %llu", (unsigned long long)nn.model.coef.cpu_time_uw);
	fp = open_memstream(&text, &len);
	jt_write_report(fp, &rep, 1);
	fclose(fp);
	CHECK(strstr(text, "disk_byte_pj fit negative") &&
		      strstr(text, "refitted without it"),
	      "reported: %s", text);
	free(text);
	free(rows);
}

/*
 * robust: bisquare IRLS from an LTS start rejects spikes, dropouts and
 * leverage points, by line; --robust off does not
 */
TEST(robust)
{
	size_t n = 4000, i;
	struct jt_row *rows = synth_rows(n, &truth, 0.005, ALL_FEATURES);
	struct jt_train_opts o = { .method = FIT_NNLS,
				   .folds = 5,
				   .min_samples = 20 };
	struct jt_report rep = { 0 };
	unsigned int worst = 0;
	double t6[JL_NR_COEF], e;
	char *text = NULL;
	size_t len = 0;
	FILE *fp;

	for (i = 0; i < JL_NR_COEF; i++)
		t6[i] = (double)jl_coef_get(&truth, i);
	number_lines(rows, n);
	/* Clean data: the robust fit rejects (almost) nothing. */
	CHECK(jt_train(rows, n, ALL_FEATURES, &o, &rep, NULL, NULL) == 0,
	      "clean");
	CHECK(rep.robust && rep.n_rejected <= 2, "clean: %zu rejected",
	      rep.n_rejected);

	/* One of each: meter spike, meter dropout, two leverage points. */
	rows[100].meter_uj *= 50;
	rows[900].meter_uj = 0;
	rows[2500].f[JL_F_CPU_NS] *= 40;
	rows[3100].f[JL_F_CYCLES] += 5e11;
	memset(&rep, 0, sizeof(rep));
	rep.samples_name = "s.csv";
	CHECK(jt_train(rows, n, ALL_FEATURES, &o, &rep, NULL, NULL) == 0,
	      "robust");
	e = coef_err(&rep.model.coef, t6, ALL_COEFS, &worst);
	CHECK(e < 0.02, "robust: %s off by %.2f%%", jl_coef_names[worst],
	      e * 100);
	CHECK(rep.n_rejected >= 4 && rep.n_rejected <= 8 &&
		      rejected_line(&rep, 102) && rejected_line(&rep, 902) &&
		      rejected_line(&rep, 2502) && rejected_line(&rep, 3102),
	      "rejected %zu, by line", rep.n_rejected);
	CHECK(rep.have_cv && rep.cv.model.mape < 1.0,
	      "CV MAPE %.3f%% without the rejected", rep.cv.model.mape);
	fp = open_memstream(&text, &len);
	jt_write_report(fp, &rep, 1);
	fclose(fp);
	CHECK(strstr(text, "# rejected: s.csv:2502") &&
		      strstr(text, "# rejected: s.csv:102") &&
		      strstr(text, "bisquare"),
	      "report: %s", text);
	free(text);

	/* --robust off: one bad row is enough to poison the fit. */
	o.no_robust = 1;
	memset(&rep, 0, sizeof(rep));
	CHECK(jt_train(rows, n, ALL_FEATURES, &o, &rep, NULL, NULL) == 0,
	      "plain");
	e = coef_err(&rep.model.coef, t6, ALL_COEFS, &worst);
	CHECK(!rep.robust && rep.n_rejected == 0 && e > 0.2,
	      "plain: %s off by %.1f%%", jl_coef_names[worst], e * 100);
	free(rows);
}

/* Rows whose cpu_ns, cycles and instructions nearly move together. */
static struct jt_row *collinear_rows(size_t n, double spread, double noise)
{
	struct jt_row *r = synth_rows(n, &truth, 0, ALL_FEATURES);
	size_t i;

	for (i = 0; r && i < n; i++) {
		double busy = r[i].f[JL_F_CPU_NS];

		r[i].f[JL_F_CYCLES] =
			nearbyint(busy * 2.5 * (1 + spread * rng_unif(-1, 1)));
		r[i].f[JL_F_INSTR] = nearbyint(r[i].f[JL_F_CYCLES] * 1.2 *
					       (1 + spread * rng_unif(-1, 1)));
		r[i].meter_uj = jt_predict_uj(&truth, &r[i]) *
				(1 + noise * rng_gauss());
	}
	return r;
}

/*
 * uncertainty: block-bootstrap standard errors match the real spread;
 * collinear coefficients are named
 */
TEST(uncertainty)
{
	struct jt_train_opts o = { .method = FIT_NNLS,
				   .folds = 5,
				   .min_samples = 20 };
	struct jt_report rep = { 0 };
	struct jt_row *rows;
	double sum = 0, sum2 = 0, se_mean = 0;
	char *text = NULL;
	size_t len = 0;
	unsigned int k;
	FILE *fp;

	/*
	 * The standard errors must mean something: over 20 independent
	 * recordings the spread of the fitted cpu_time is what one
	 * recording's block bootstrap said it would be (within 2x).
	 */
	for (k = 0; k < 20; k++) {
		double v;

		rows = synth_rows(2000, &truth, 0.01, ALL_FEATURES);
		memset(&rep, 0, sizeof(rep));
		CHECK(jt_train(rows, 2000, ALL_FEATURES, &o, &rep, NULL,
			       NULL) == 0,
		      "train %u", k);
		v = rep.model.raw[JL_F_CPU_NS];
		sum += v;
		sum2 += v * v;
		se_mean += rep.model.se[JL_F_CPU_NS] / 20;
		free(rows);
	}
	{
		double sd = sqrt((sum2 - sum * sum / 20) / 19);

		CHECK(rep.model.have_se && se_mean > sd / 2 && se_mean < sd * 2,
		      "cpu_time: bootstrap SE %.4g vs spread %.4g", se_mean,
		      sd);
	}
	CHECK(!rep.model.collinear, "varied load: no collinearity (%#x)",
	      rep.model.collinear);

	/* cpu_ns, cycles and instructions moving together within 1%. */
	rows = collinear_rows(5000, 0.01, 0.01);
	memset(&rep, 0, sizeof(rep));
	CHECK(jt_train(rows, 5000, ALL_FEATURES, &o, &rep, NULL, NULL) == 0,
	      "collinear");
	CHECK((rep.model.collinear & (1u << JL_F_CYCLES)) &&
		      (rep.model.collinear & (1u << JL_F_INSTR)) &&
		      !(rep.model.collinear & (1u << JL_F_DISK)) &&
		      !(rep.model.collinear & (1u << JL_F_MISSES)),
	      "named: %#x", rep.model.collinear);
	fp = open_memstream(&text, &len);
	jt_write_report(fp, &rep, 1);
	fclose(fp);
	CHECK(strstr(text, "cannot be separated") && strstr(text, "cycles") &&
		      strstr(text, "instructions") && strstr(text, "+-"),
	      "report: %s", text);
	free(text);
	free(rows);
}

/*
 * model check: all zero, non-finite metrics, worse than the baseline,
 * implausible idle, mostly outliers
 */
TEST(model_check)
{
	struct jt_row *rows = synth_rows(1000, &truth, 0.01, ALL_FEATURES);
	struct jt_train_opts o = { .method = FIT_NNLS,
				   .folds = 5,
				   .min_samples = 20 };
	struct jt_report rep = { 0 }, bad;
	char why[256];
	size_t i;

	CHECK(jt_train(rows, 1000, ALL_FEATURES, &o, &rep, NULL, NULL) == 0,
	      "train");
	CHECK(jt_model_check(&rep, why, sizeof(why)) == 0, "plausible: %s",
	      why);

	bad = rep;
	memset(&bad.model.coef, 0, sizeof(bad.model.coef));
	CHECK(jt_model_check(&bad, why, sizeof(why)) &&
		      strstr(why, "all coefficients are 0"),
	      "zero: %s", why);
	bad = rep;
	bad.cv.model.mape = NAN;
	CHECK(jt_model_check(&bad, why, sizeof(why)) &&
		      strstr(why, "not finite"),
	      "nan: %s", why);
	bad = rep;
	bad.cv.model.mape = bad.cv.base.mape * 1.5;
	CHECK(jt_model_check(&bad, why, sizeof(why)) &&
		      strstr(why, "worse than the CPU-only baseline"),
	      "worse: %s", why);
	bad = rep;
	bad.model.coef.idle_uw = 0;
	CHECK(jt_model_check(&bad, why, sizeof(why)) &&
		      strstr(why, "idle power"),
	      "idle 0: %s", why);
	bad = rep;
	bad.model.coef.idle_uw = (jl_u64)(rep.median_w * 2e6);
	CHECK(jt_model_check(&bad, why, sizeof(why)) &&
		      strstr(why, "idle power"),
	      "idle above the measured power: %s", why);
	bad = rep;
	bad.n_rejected = bad.n / 3;
	CHECK(jt_model_check(&bad, why, sizeof(why)) && strstr(why, "outliers"),
	      "a third rejected: %s", why);

	/* A meter that reads 0 throughout trains to a refused model. */
	for (i = 0; i < 1000; i++)
		rows[i].meter_uj = 0;
	memset(&rep, 0, sizeof(rep));
	if (jt_train(rows, 1000, ALL_FEATURES, &o, &rep, NULL, NULL) == 0)
		CHECK(jt_model_check(&rep, why, sizeof(why)) != 0,
		      "zero meter refused");
	free(rows);
}

/* The reference: gsl_multifit_linear's SVD fit of the full n x p matrix, into beta. */
static void gsl_ols(const double *x, const double *y, size_t n, unsigned int p,
		    double *beta)
{
	gsl_matrix *xm = gsl_matrix_alloc(n, p), *cov = gsl_matrix_alloc(p, p);
	gsl_vector *yv = gsl_vector_alloc(n), *c = gsl_vector_alloc(p);
	gsl_multifit_linear_workspace *ws = gsl_multifit_linear_alloc(n, p);
	double chisq;
	size_t i, j;

	for (i = 0; i < n; i++) {
		for (j = 0; j < p; j++)
			gsl_matrix_set(xm, i, j, x[i * p + j]);
		gsl_vector_set(yv, i, y[i]);
	}
	gsl_multifit_linear(xm, yv, c, cov, &chisq, ws);
	for (j = 0; j < p; j++)
		beta[j] = gsl_vector_get(c, j);
	gsl_multifit_linear_free(ws);
	gsl_vector_free(c);
	gsl_vector_free(yv);
	gsl_matrix_free(cov);
	gsl_matrix_free(xm);
}

/* ols: blocked QR reduction gives gsl_multifit_linear's full-matrix solution */
TEST(blocked_qr)
{
	const size_t n = 5000;
	const unsigned int p = 7, cols[] = { 0, 1, 2, 3, 4, 5, 6 };
	double *x = malloc(n * p * sizeof(*x)), *y = malloc(n * sizeof(*y));
	struct fit_design d = { .n = n, .stride = p, .x = x, .y = y };
	struct fit_blocks b;
	struct fit_result res;
	double ref[7];
	size_t i, j;

	for (i = 0; i < n; i++) {
		double u0 = rng_unif(0, 1);

		/* wildly different column scales, mildly correlated */
		for (j = 0; j < p; j++)
			x[i * p + j] = pow(10, (double)j * 1.5) *
				       (rng_unif(0, 1) + 0.3 * u0);
		y[i] = rng_unif(-1, 1) * 100 + x[i * p + 3] * 1e-4;
	}
	gsl_ols(x, y, n, p, ref);
	CHECK(fit_blocks_build(&d, cols, p, 3, &b) == 0, "build");
	CHECK(fit_solve(&b, -1, FIT_OLS, &res) == 0, "solve");
	for (j = 0; j < p; j++)
		CHECK(rel_close(res.beta[j], ref[j], 1e-8),
		      "beta%zu %.12g vs %.12g", j, res.beta[j], ref[j]);
	fit_blocks_free(&b);
	free(x);
	free(y);
}

/*
 * ols: nearly collinear columns (condition ~1e6 after scaling) lose no
 * accuracy in the blocked reduction: its fit matches gsl_multifit_linear's
 * SVD of the full matrix, where normal equations would keep only a few
 * digits (their condition is squared).
 */
TEST(blocked_qr_collinear)
{
	const size_t n = 4000;
	const unsigned int p = 4, cols[] = { 0, 1, 2, 3 };
	double *x = malloc(n * p * sizeof(*x)), *y = malloc(n * sizeof(*y));
	struct fit_design d = { .n = n, .stride = p, .x = x, .y = y };
	struct fit_blocks b;
	struct fit_result res;
	double ref[4];
	size_t i, j;

	for (i = 0; i < n; i++) {
		double u = rng_unif(0, 1), *r = x + i * p;

		r[0] = 1e9;
		r[1] = 1e6 * u;
		/* column 2 is column 1 to within 1e-6 of it */
		r[2] = 3e6 * u * (1 + 1e-6 * rng_unif(-1, 1));
		r[3] = 1e3 * rng_unif(0, 1);
		y[i] = 4e-2 * r[0] + 2 * r[1] + 1 * r[2] + 5 * r[3] +
		       1e3 * rng_gauss();
	}
	gsl_ols(x, y, n, p, ref);
	CHECK(fit_blocks_build(&d, cols, p, 5, &b) == 0, "build");
	CHECK(fit_solve(&b, -1, FIT_OLS, &res) == 0, "solve");
	CHECK(res.rcond < 1e-5, "nearly collinear: rcond %g", res.rcond);
	for (j = 0; j < p; j++)
		CHECK(rel_close(res.beta[j], ref[j], 1e-6),
		      "beta%zu %.12g vs %.12g", j, res.beta[j], ref[j]);
	fit_blocks_free(&b);
	free(x);
	free(y);
}

/* cv: contiguous folds, held-out fold excluded exactly */
TEST(folds)
{
	static const size_t ns[] = { 10, 11, 99, 1000, 1000003 };
	static const unsigned int ks[] = { 1, 2, 3, 5, 7, 10 };
	unsigned int a, bk, k;

	for (a = 0; a < sizeof(ns) / sizeof(ns[0]); a++)
		for (bk = 0; bk < sizeof(ks) / sizeof(ks[0]); bk++) {
			size_t n = ns[a], lo = SIZE_MAX, hi = 0;
			unsigned int K = ks[bk];

			CHECK(fit_fold_start(n, 0, K) == 0 &&
				      fit_fold_start(n, K, K) == n,
			      "ends n=%zu K=%u", n, K);
			for (k = 0; k < K; k++) {
				size_t sz = fit_fold_start(n, k + 1, K) -
					    fit_fold_start(n, k, K);

				lo = sz < lo ? sz : lo;
				hi = sz > hi ? sz : hi;
			}
			CHECK(hi - lo <= 1 && lo >= n / K,
			      "sizes n=%zu K=%u: %zu..%zu", n, K, lo, hi);
		}

	/*
	 * Leaving a fold out must fit exactly the other rows: noise-free data
	 * with garbage in fold 2 of 4 gives the true line only without fold 2,
	 * and equals a direct fit on the remaining rows.
	 */
	{
		const size_t n = 400;
		const unsigned int cols[] = { 0, 1 };
		double x[400 * 2], y[400], x2[300 * 2], y2[300];
		struct fit_design d = { .n = n, .stride = 2, .x = x, .y = y };
		struct fit_design d2 = {
			.n = 300, .stride = 2, .x = x2, .y = y2
		};
		struct fit_blocks b, b2;
		struct fit_result r, r2;
		size_t i, m = 0;

		for (i = 0; i < n; i++) {
			x[2 * i] = 1;
			x[2 * i + 1] = rng_unif(0, 10);
			y[i] = 3 + 2 * x[2 * i + 1];
			if (i >= 200 && i < 300) /* fold 2 of 4 */
				y[i] = rng_unif(0, 1000);
			else {
				x2[2 * m] = x[2 * i];
				x2[2 * m + 1] = x[2 * i + 1];
				y2[m++] = y[i];
			}
		}
		CHECK(fit_blocks_build(&d, cols, 2, 4, &b) == 0, "build");
		CHECK(b.start[2] == 200 && b.start[3] == 300,
		      "fold 2 is rows 200..299");
		CHECK(fit_solve(&b, 2, FIT_OLS, &r) == 0, "solve");
		CHECK(fabs(r.beta[0] - 3) < 1e-9 && fabs(r.beta[1] - 2) < 1e-9,
		      "without fold 2: %g %g", r.beta[0], r.beta[1]);
		CHECK(fit_solve(&b, 1, FIT_OLS, &r) == 0 &&
			      fabs(r.beta[0] - 3) > 1,
		      "with fold 2: %g", r.beta[0]);
		CHECK(fit_blocks_build(&d2, cols, 2, 1, &b2) == 0, "build2");
		CHECK(fit_solve(&b, 2, FIT_NNLS, &r) == 0 &&
			      fit_solve(&b2, -1, FIT_NNLS, &r2) == 0,
		      "nnls");
		CHECK(rel_close(r.beta[0], r2.beta[0], 1e-10) &&
			      rel_close(r.beta[1], r2.beta[1], 1e-10),
		      "same as direct");
		CHECK(fit_solve(&b, 7, FIT_OLS, &r) == 0,
		      "exclude out of range = use all");
		fit_blocks_free(&b);
		fit_blocks_free(&b2);
	}
	{
		/* An all-zero column is left out (beta 0), not a singular fit. */
		const unsigned int cols[] = { 0, 1, 2 };
		double x[60 * 3], y[60];
		struct fit_design d = { .n = 60, .stride = 3, .x = x, .y = y };
		struct fit_blocks b;
		struct fit_result r;
		size_t i;

		for (i = 0; i < 60; i++) {
			x[3 * i] = 1;
			x[3 * i + 1] = 0;
			x[3 * i + 2] = (double)i;
			y[i] = 5 + 0.5 * (double)i;
		}
		CHECK(fit_blocks_build(&d, cols, 3, 3, &b) == 0 && b.q == 2 &&
			      b.scale[1] == 0,
		      "zero column dropped");
		CHECK(fit_solve(&b, -1, FIT_OLS, &r) == 0 && r.beta[1] == 0 &&
			      fabs(r.beta[0] - 5) < 1e-9 &&
			      fabs(r.beta[2] - 0.5) < 1e-12,
		      "fit %g %g %g", r.beta[0], r.beta[1], r.beta[2]);
		fit_blocks_free(&b);
		CHECK(fit_blocks_build(&d, cols, 3, 61, &b) == -EINVAL,
		      "more folds than rows");
	}
}

/* train: errors, left-out features, report parses with jl_coef_parse */
TEST(train_errors_and_report)
{
	struct jt_row *rows = synth_rows(
		300, &truth, 0.01, (1u << JL_F_CPU_NS) | (1u << JL_F_DISK));
	struct jt_train_opts o = { .method = FIT_NNLS,
				   .folds = 5,
				   .min_samples = 301 };
	struct jt_report rep = { 0 };
	char *text = NULL;
	size_t len = 0, i;
	struct jl_coef parsed;
	const char *d;
	FILE *fp;

	diag_begin();
	CHECK(jt_train(rows, 300, (1u << JL_F_CPU_NS) | (1u << JL_F_DISK), &o,
		       &rep, NULL, NULL) == -EINVAL,
	      "min samples");
	d = diag_end();
	CHECK(strstr(d, "only 300 aligned samples, need at least 301") != NULL,
	      "%s", d);
	o.min_samples = 20;
	o.folds = 200;
	diag_begin();
	CHECK(jt_train(rows, 300, 1, &o, &rep, NULL, NULL) == -EINVAL, "folds");
	d = diag_end();
	CHECK(strstr(d, "too few for 200 folds") != NULL, "%s", d);

	/* disk_bytes present but always 0: left out and said so. */
	for (i = 0; i < 300; i++) {
		rows[i].meter_uj -= (double)truth.disk_byte_pj * 1e-6 *
				    rows[i].f[JL_F_DISK];
		rows[i].f[JL_F_DISK] = 0;
		rows[i].module_uj = rows[i].meter_uj / 2;
	}
	o.folds = 5;
	memset(&rep, 0, sizeof(rep));
	rep.samples_name = "s.csv";
	rep.pdu_name = "p.csv";
	rep.max_gap_s = 5;
	rep.al.uncovered = 3;
	CHECK(jt_train(rows, 300, (1u << JL_F_CPU_NS) | (1u << JL_F_DISK), &o,
		       &rep, NULL, NULL) == 0,
	      "train");
	CHECK(rep.zero == (1u << JL_F_DISK), "zero %#x", rep.zero);
	CHECK(rep.model.fitted ==
		      ((1u << JL_F_CPU_NS) | (1u << JL_NR_FEATURES)),
	      "fitted %#x", rep.model.fitted);
	fp = open_memstream(&text, &len);
	CHECK(jt_write_report(fp, &rep, 1) == 0, "write");
	fclose(fp);
	CHECK(jl_coef_parse(text, len, &parsed) == 0 &&
		      !memcmp(&parsed, &rep.model.coef, sizeof(parsed)),
	      "output parses with jl_coef_parse:\n%s", text);
	CHECK(strstr(text,
		     "left out (empty in the samples: not measured on this machine, "
		     "e.g. no PMU): cycles instructions cache_misses") != NULL,
	      "absent");
	CHECK(strstr(text, "left out (0 in every interval): disk_bytes") !=
		      NULL,
	      "zero");
	CHECK(strstr(text, "3 intervals not covered") != NULL, "dropped");
	CHECK(strstr(text, "# node MAPE ") && strstr(text, "(5-fold CV)") &&
		      strstr(text, "than CPU-only"),
	      "headline");
	CHECK(strstr(text, "meter energy is 2.00x") != NULL, "ratio");
	CHECK(parsed.cycles_pj == 0 && parsed.instructions_pj == 0 &&
		      parsed.cache_miss_pj == 0,
	      "absent features are 0");
	free(text);
	free(rows);
}

TT_MAIN("test_train_fit")
