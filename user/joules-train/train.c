// SPDX-License-Identifier: GPL-2.0
/*
 * From aligned rows to module coefficients: design matrix, fit of the
 * multi-feature model and of the CPU-time-only baseline, contiguous k-fold
 * cross-validation, metrics, and the summary written with the result.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "train.h"

unsigned int jt_coef_col(unsigned int coef)
{
	/* jl_coef order is the five features, then idle. */
	return coef == JL_NR_FEATURES ? JT_COL_IDLE : 1 + coef;
}

static unsigned int col_coef(unsigned int col)
{
	return col == JT_COL_IDLE ? JL_NR_FEATURES : col - 1;
}

void jt_coef_doubles(const struct jl_coef *c, double *k)
{
	unsigned int i;

	for (i = 0; i < JT_NF; i++)
		k[i] = (double)jl_coef_get(c, i);
	k[JT_NF] = (double)c->idle_uw;
}

double jt_predict_uj(const struct jl_coef *c, const struct jt_row *r)
{
	double k[JT_NF + 1];

	jt_coef_doubles(c, k);
	return jt_predict_k(k, r);
}

static FILE *diag(void)
{
	return jt_diag ? jt_diag : stderr;
}

int jt_fit_model(const struct fit_blocks *b, const double *mult,
		 enum fit_method method, struct jt_model *m)
{
	struct fit_solve_opts so = { .method = method,
				     .mult = mult,
				     .drop_negative = method == FIT_OLS };
	struct fit_result res;
	unsigned int i, j;
	int ret;

	memset(m, 0, sizeof(*m));
	ret = fit_solve_ex(b, &so, &res);
	if (ret)
		return ret;
	m->rcond = res.rcond;
	for (j = 0; j < b->ncols; j++) {
		unsigned int ci = col_coef(b->cols[j]);
		double v = res.beta[j] * jt_coef_unit(ci);

		m->raw[ci] = v;
		m->vif[ci] = res.vif[j];
		if (b->scale[j] > 0)
			m->fitted |= 1u << ci;
		if (res.dropped & (1u << j)) {
			m->dropped |= 1u << ci;
			m->negative[ci] = res.negative[j] * jt_coef_unit(ci);
		}
		if (b->scale[j] > 0 && m->vif[ci] > JT_COLLINEAR_VIF)
			m->collinear |= 1u << ci;
		/* Rounding noise of a coefficient fitted exactly at 0. */
		if (v < 0 && v > -0.5)
			v = 0;
		if (!(v >= 0))
			return -EDOM; /* cannot happen: NNLS, or OLS refitted */
		v = nearbyint(v);
		if (v > (double)JL_COEF_MAX)
			return -ERANGE;
		jl_coef_set(&m->coef, ci, (jl_u64)v);
	}
	for (i = 0; i < JL_NR_COEF; i++)
		if (!(m->fitted & (1u << i)))
			jl_coef_set(&m->coef, i, 0);
	/*
	 * Name the whole group that trades off: the coefficients in the
	 * direction the data determine least, if that direction is weak.
	 */
	if (m->collinear)
		for (j = 0; j < b->ncols; j++)
			if (b->scale[j] > 0 &&
			    fabs(res.weakest[j]) >= JT_COLLINEAR_WEIGHT)
				m->collinear |= 1u << col_coef(b->cols[j]);
	return 0;
}

/* Metrics of model and base over rows with weight > 0 (w NULL: all). */
FIT_HOT
static void evaluate(const struct jt_row *rows, size_t lo, size_t hi,
		     const double *w, const struct jl_coef *model,
		     const struct jl_coef *base, struct fit_acc *am,
		     struct fit_acc *ab, double *pm, double *pb)
{
	double km[JT_NF + 1], kb[JT_NF + 1];
	size_t i;

	jt_coef_doubles(model, km);
	jt_coef_doubles(base, kb);
	for (i = lo; i < hi; i++) {
		double watts = jt_row_watts(&rows[i]),
		       k = 1e3 / rows[i].interval_ns;
		double m = jt_predict_k(km, &rows[i]) * k,
		       b = jt_predict_k(kb, &rows[i]) * k;

		if (pm)
			pm[i] = m;
		if (pb)
			pb[i] = b;
		if (w && w[i] == 0)
			continue;
		fit_acc_add(am, watts, m);
		fit_acc_add(ab, watts, b);
	}
}

void jt_evaluate(const struct jt_row *rows, size_t n,
		 const struct jl_coef *model, const struct jl_coef *base,
		 struct jt_eval *ev)
{
	struct fit_acc am, ab;

	fit_acc_init(&am);
	fit_acc_init(&ab);
	evaluate(rows, 0, n, NULL, model, base, &am, &ab, NULL, NULL);
	fit_acc_result(&am, &ev->model);
	fit_acc_result(&ab, &ev->base);
}

static const char *fit_error(int ret)
{
	return ret == -ERANGE ?
		       "a coefficient exceeds the module's maximum (1e12)" :
	       ret == -EDOM ? "NNLS did not converge" :
			      strerror(-ret);
}

/*
 * A frequency stand-in above JT_MAX_GHZ: the recorded one, or cycles per
 * ns of CPU time over at least 1 ms of it (shorter ones are too coarse).
 */
static double row_ghz(const struct jt_row *r, unsigned int present,
		      const char **what)
{
	double rec = r->freq_mhz * 1e-3, cyc = 0;

	if ((present & (1u << JL_F_CYCLES)) && r->f[JL_F_CPU_NS] >= 1e6)
		cyc = r->f[JL_F_CYCLES] / r->f[JL_F_CPU_NS];
	*what = cyc > rec ? "cycles per ns of cpu_ns" : "freq_mhz";
	/*
	 * fmax() but inline (it is a call into libm, once a row): the larger,
	 * or the one that is a number. Which of two zeros does not matter:
	 * the value is only compared with JT_MAX_GHZ, and said when above.
	 */
	if (isnan(rec))
		return cyc;
	return cyc > rec ? cyc : rec;
}

static int row_finite(const struct jt_row *r)
{
	int ok = isfinite(r->meter_uj) && isfinite(r->interval_ns) &&
		 r->interval_ns > 0;
	unsigned int i;

	for (i = 0; i < JT_NF; i++)
		ok &= isfinite(r->f[i]);
	return ok;
}

/* A row that cannot be fitted: say where it came from. */
static int check_rows(const struct jt_row *rows, size_t n, unsigned int present,
		      const char *name)
{
	size_t r, fast = 0, first = 0, bad = n;
	const char *what = "", *w;
	double ghz = 0, g;

	/*
	 * More than 1% of the intervals above JT_MAX_GHZ: the column is not
	 * what it says. A single one is a corrupt row for the robust fit.
	 * Else the first row with a value that is not finite. One pass.
	 */
	for (r = 0; r < n; r++) {
		g = row_ghz(&rows[r], present, &w);
		if (g > JT_MAX_GHZ && !fast++) {
			first = r;
			ghz = g;
			what = w;
		}
		if (bad == n && !row_finite(&rows[r]))
			bad = r;
	}
	if (fast > n / 100) {
		jt_diagf(
			"%s:%lu: the clock frequency is %.4g GHz (%s), above %g "
			"GHz, in %zu of %zu intervals: no CPU runs that fast, so "
			"the cycles column is not cycles (or freq_mhz is not "
			"MHz)\n",
			name ? name : "samples", rows[first].line, ghz, what,
			JT_MAX_GHZ, fast, n);
		return -EINVAL;
	}
	if (bad < n) {
		jt_diagf("%s:%lu: a value of this interval is not finite "
			 "after alignment\n",
			 name ? name : "samples", rows[bad].line);
		return -EINVAL;
	}
	return 0;
}

static uint64_t boot_rng(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

/*
 * Standard errors by a block bootstrap: the time blocks are drawn with
 * replacement and refitted (each fit costs microseconds on the blocks' R
 * factors). Contiguous blocks keep the autocorrelation of neighbouring
 * intervals, which per-interval formulas would ignore.
 */
static void bootstrap(const struct fit_blocks *b, enum fit_method method,
		      struct jt_model *m)
{
	double sum[JL_NR_COEF] = { 0 }, sum2[JL_NR_COEF] = { 0 };
	double *mult = calloc(b->nblocks, sizeof(*mult));
	uint64_t rng = 0x2545f4914f6cdd1dULL;
	unsigned int rep, ok = 0, i, k;

	if (!mult)
		return;
	for (rep = 0; rep < JT_BOOT_REPS; rep++) {
		struct jt_model bm;

		memset(mult, 0, b->nblocks * sizeof(*mult));
		for (k = 0; k < b->nblocks; k++)
			mult[(boot_rng(&rng) >> 11) % b->nblocks] += 1;
		if (jt_fit_model(b, mult, method, &bm))
			continue;
		for (i = 0; i < JL_NR_COEF; i++) {
			sum[i] += bm.raw[i];
			sum2[i] += bm.raw[i] * bm.raw[i];
		}
		ok++;
	}
	free(mult);
	if (ok < JT_BOOT_REPS / 2)
		return;
	for (i = 0; i < JL_NR_COEF; i++) {
		double v = (sum2[i] - sum[i] * sum[i] / ok) / (ok - 1);

		m->se[i] = v > 0 ? sqrt(v) : 0;
	}
	m->have_se = 1;
}

static int out_cmp(const void *pa, const void *pb)
{
	const struct jt_outlier *a = pa, *b = pb;

	return (a->line > b->line) - (a->line < b->line);
}

/* A row as doubles: interval_ns, then f[] (the design's columns). */
#define ROW_DOUBLES (sizeof(struct jt_row) / sizeof(double))
_Static_assert(sizeof(struct jt_row) % sizeof(double) == 0 &&
		       offsetof(struct jt_row, f) ==
			       offsetof(struct jt_row, interval_ns) +
				       sizeof(double) * JT_COL_IDLE +
				       sizeof(double) &&
		       JT_COL_IDLE == 0,
	       "jt_row: interval_ns then f[] as design columns");

/* Enough rows for the folds and for every coefficient? Said, not guessed. */
static int train_check(const struct jt_row *rows, size_t n,
		       unsigned int present, const struct jt_train_opts *o,
		       unsigned int nfolds, const char *samples_name)
{
	unsigned int i, k;
	int ret;

	if (n < o->min_samples || n < 2) {
		fprintf(diag(),
			"only %zu aligned samples, need at least %zu (--min-samples)\n",
			n, o->min_samples);
		return -EINVAL;
	}
	if (nfolds > 1 && n < 2 * (size_t)nfolds) {
		fprintf(diag(),
			"%zu aligned samples are too few for %u folds (--folds)\n",
			n, nfolds);
		return -EINVAL;
	}
	ret = check_rows(rows, n, present, samples_name);
	if (ret)
		return ret;
	for (i = 0, k = 1; i < JT_NF; i++)
		k += !!(present & (1u << i));
	if (n < JT_MIN_PER_COEF * (size_t)k) {
		fprintf(diag(),
			"%zu aligned intervals for %u coefficients: at least %u per "
			"coefficient are needed (with fewer, any data fit exactly "
			"and the error says nothing)\n",
			n, k, JT_MIN_PER_COEF);
		return -EINVAL;
	}
	return 0;
}

/*
 * Each fold is split into `sub` blocks for the bootstrap, of at least
 * 10 rows; fold k is then blocks [k sub, (k + 1) sub).
 */
static unsigned int train_sub_blocks(size_t n, unsigned int nfolds)
{
	unsigned int sub = (JT_BOOT_BLOCKS + nfolds - 1) / nfolds;

	if (sub > n / (10 * (size_t)nfolds))
		sub = (unsigned int)(n / (10 * (size_t)nfolds));
	return sub ? sub : 1;
}

/* The robust weights into w[] and d->w; too few rows is a note, not an error. */
static int train_robust(struct fit_design *d, const unsigned int *mcols,
			unsigned int nm, const struct jt_train_opts *o,
			double *w, struct jt_report *rep)
{
	struct fit_solve_opts so = {
		.method = o->method,
		.drop_negative = o->method == FIT_OLS,
		.ridge = o->ridge,
		/* residual / ns is kW: uJ / ns */
		.scale_floor = o->scale_floor_w * 1e-3,
	};
	struct fit_robust_info info;
	size_t r;
	int ret;

	jt_progress(o->pr, "robust fitting", 0, 0);
	/* residuals per ns of the interval (design column 0): powers */
	ret = fit_robust(d, mcols, nm, JT_COL_IDLE, &so, w, &info);
	if (ret == -EDOM) {
		/* Said in the report, not silently: too few rows. */
		rep->robust_note =
			"too few intervals (or features all 0) for a robust fit";
		for (r = 0; r < d->n; r++)
			w[r] = 1;
		return 0;
	}
	if (ret) {
		jt_diagf("robust fit failed: %s\n", strerror(-ret));
		return ret;
	}
	rep->robust = 1;
	rep->robust_scale_w = info.scale * 1e3; /* uJ/ns -> W */
	rep->robust_iter = info.iter;
	rep->robust_converged = info.converged;
	rep->n_rejected = info.rejected;
	rep->n_down = info.downweighted;
	d->w = w;
	return 0;
}

/* Fit on all folds but k, evaluate on fold k: the held-out error. */
static int train_cv(const struct jt_row *rows, const struct fit_design *d,
		    const struct fit_blocks *bm, const struct fit_blocks *bb,
		    unsigned int nfolds, unsigned int sub, double *mult,
		    const struct jt_train_opts *o, struct jt_report *rep,
		    double *cv_model, double *cv_base)
{
	unsigned int nblocks = nfolds * sub, i, k;
	struct fit_acc am, ab;
	int ret;

	fit_acc_init(&am);
	fit_acc_init(&ab);
	for (k = 0; k < nfolds; k++) {
		struct jt_model fm, fb;

		jt_progress(o->pr, "cross-validating", k, nfolds);
		if (nfolds > 1) {
			for (i = 0; i < nblocks; i++)
				mult[i] = i / sub != k;
			ret = jt_fit_model(bm, mult, o->method, &fm);
			if (!ret)
				ret = jt_fit_model(bb, mult, o->method, &fb);
			if (ret) {
				jt_diagf("fit of fold %u failed: %s\n", k + 1,
					 fit_error(ret));
				return ret;
			}
		} else {
			fm = rep->model;
			fb = rep->base;
		}
		/* Evaluate on the held-out fold only. */
		evaluate(rows, bm->start[k * sub], bm->start[(k + 1) * sub],
			 d->w, &fm.coef, &fb.coef, &am, &ab, cv_model, cv_base);
	}
	jt_progress_end(o->pr);
	if (nfolds > 1) {
		rep->have_cv = 1;
		fit_acc_result(&am, &rep->cv.model);
		fit_acc_result(&ab, &rep->cv.base);
	}
	return 0;
}

/* One rejected row, kept for the report while there is room. */
static void train_outlier(const struct jt_row *row, struct jt_report *rep)
{
	struct jt_outlier *ol;
	double watts = jt_row_watts(row);
	double p =
		jt_predict_uj(&rep->model.coef, row) * 1e3 / row->interval_ns;

	if (rep->n_outliers_kept >= JT_OUTLIERS_SHOWN)
		return;
	ol = &rep->outliers[rep->n_outliers_kept++];
	ol->line = row->line;
	ol->last_line = row->last_line;
	ol->mlo = row->mlo;
	ol->mhi = row->mhi;
	ol->measured_w = watts;
	ol->predicted_w = p;
	ol->z = rep->robust_scale_w > 0 ? (watts - p) / rep->robust_scale_w : 0;
}

/* Outliers, meter/module ratio and median power of the rows kept. */
static int train_summary(const struct jt_row *rows, size_t n, const double *w,
			 struct jt_report *rep)
{
	double sm = 0, su = 0, *y = fit_alloc(n * sizeof(*y));
	size_t nw = 0, r;

	if (!y)
		return -ENOMEM;
	for (r = 0; r < n; r++) {
		if (w[r] == 0) {
			train_outlier(&rows[r], rep);
			continue;
		}
		y[nw++] = jt_row_watts(&rows[r]);
		if (rows[r].module_uj < 0)
			continue;
		sm += rows[r].meter_uj;
		su += rows[r].module_uj;
	}
	rep->meter_over_module = su > 0 ? sm / su : 0;
	rep->median_w = nw ? jt_median(y, nw) : 0;
	free(y);
	qsort(rep->outliers, rep->n_outliers_kept, sizeof(rep->outliers[0]),
	      out_cmp);
	return 0;
}

/* Both fits on all rows; their block R factors are kept for the folds. */
static int train_fit_all(const struct fit_design *d, const unsigned int *mcols,
			 unsigned int nm, const unsigned int *bcols,
			 unsigned int nb, unsigned int nblocks,
			 const struct jt_train_opts *o, struct fit_blocks *bm,
			 struct fit_blocks *bb, struct jt_report *rep)
{
	struct fit_cols sets[2] = { { mcols, nm }, { bcols, nb } };
	struct fit_blocks b[2];
	unsigned int i;
	int ret;

	jt_progress(o->pr, "fitting", 0, 0);
	/* Both in one pass: the baseline's columns are the model's first. */
	ret = fit_blocks_build_sets(d, sets, 2, nblocks, b);
	*bm = b[0];
	*bb = b[1];
	if (ret) {
		jt_diagf("cannot set up the fit: %s\n", strerror(-ret));
		return ret;
	}
	bm->ridge = bb->ridge = o->ridge;
	for (i = 1; i < nm; i++)
		if (bm->scale[i] == 0)
			rep->zero |= 1u << (mcols[i] - 1);

	ret = jt_fit_model(bm, NULL, o->method, &rep->model);
	if (!ret)
		ret = jt_fit_model(bb, NULL, o->method, &rep->base);
	if (ret) {
		jt_diagf("fit failed: %s\n", fit_error(ret));
		return ret;
	}
	if (nblocks >= JT_BOOT_MIN_BLOCKS && !o->no_se) {
		jt_progress(o->pr, "bootstrapping", 0, 0);
		bootstrap(bm, o->method, &rep->model);
		rep->se_blocks = nblocks;
	}
	return 0;
}

/*
 * The rows are the design, read in place: interval_ns and f[] are
 * columns 0..JT_NF of a row of ROW_DOUBLES doubles, meter_uj the
 * target (no copy: the rows are most of the memory). The model's columns
 * are idle and every feature present; the baseline's idle and CPU time.
 */
static void train_design(const struct jt_row *rows, size_t n,
			 unsigned int present, struct fit_design *d,
			 unsigned int *mcols, unsigned int *nm,
			 unsigned int *bcols, unsigned int *nb)
{
	unsigned int i;

	*d = (struct fit_design){ .n = n,
				  .stride = ROW_DOUBLES,
				  .x = &rows[0].interval_ns,
				  .y = &rows[0].meter_uj,
				  .ystride = ROW_DOUBLES };
	*nm = *nb = 0;
	mcols[(*nm)++] = JT_COL_IDLE;
	bcols[(*nb)++] = JT_COL_IDLE;
	for (i = 0; i < JT_NF; i++)
		if (present & (1u << i))
			mcols[(*nm)++] = 1 + i;
	if (present & (1u << JL_F_CPU_NS))
		bcols[(*nb)++] = 1 + JL_F_CPU_NS;
}

int jt_train(const struct jt_row *rows, size_t n, unsigned int present,
	     const struct jt_train_opts *o, struct jt_report *rep,
	     double *cv_model, double *cv_base)
{
	unsigned int mcols[JT_NCOL], bcols[2], nm, nb;
	unsigned int nfolds = o->folds > 1 ? o->folds : 1, sub, nblocks;
	struct fit_blocks bm = { 0 }, bb = { 0 };
	struct fit_design d;
	struct fit_acc am, ab;
	double *w, *mult;
	size_t r;
	int ret;

	rep->method = o->method;
	rep->n = n;
	rep->folds = nfolds;
	rep->present = present;
	ret = train_check(rows, n, present, o, nfolds, rep->samples_name);
	if (ret)
		return ret;
	sub = train_sub_blocks(n, nfolds);
	nblocks = nfolds * sub;

	/* The weights go straight to the caller's array, if it wants them. */
	w = o->weights ? o->weights : fit_alloc(n * sizeof(*w));
	mult = malloc(nblocks * sizeof(*mult));
	if (!w || !mult) {
		ret = -ENOMEM;
		goto out;
	}
	for (r = 0; r < n; r++)
		w[r] = 1;
	train_design(rows, n, present, &d, mcols, &nm, bcols, &nb);
	if (!o->no_robust) {
		ret = train_robust(&d, mcols, nm, o, w, rep);
		if (ret)
			goto out;
	}
	ret = train_fit_all(&d, mcols, nm, bcols, nb, nblocks, o, &bm, &bb,
			    rep);
	if (ret)
		goto out;
	if (!(o->skip & JT_SKIP_INSAMPLE)) {
		fit_acc_init(&am);
		fit_acc_init(&ab);
		evaluate(rows, 0, n, d.w, &rep->model.coef, &rep->base.coef,
			 &am, &ab, NULL, NULL);
		fit_acc_result(&am, &rep->insample.model);
		fit_acc_result(&ab, &rep->insample.base);
	}
	if (!(o->skip & JT_SKIP_CV))
		ret = train_cv(rows, &d, &bm, &bb, nfolds, sub, mult, o, rep,
			       cv_model, cv_base);
	if (!ret && !(o->skip & JT_SKIP_SUMMARY))
		ret = train_summary(rows, n, w, rep);
out:
	fit_blocks_free(&bm);
	fit_blocks_free(&bb);
	if (w != o->weights)
		free(w);
	free(mult);
	return ret;
}

/* The metrics the headline (and the plausibility check) is about. */
static const struct jt_eval *headline(const struct jt_report *rep,
				      const char **name)
{
	if (rep->have_val) {
		*name = "validation";
		return &rep->val;
	}
	if (rep->nested.done) {
		*name = "nested CV";
		return &rep->nested.ev;
	}
	if (rep->have_cv) {
		*name = "CV";
		return &rep->cv;
	}
	*name = "in-sample";
	return &rep->insample;
}

int jt_model_check(const struct jt_report *rep, char *why, size_t len)
{
	const struct jt_eval *h;
	const char *hname;
	double idle_w = (double)rep->model.coef.idle_uw * 1e-6;
	unsigned int i;
	int any = 0;

	*why = '\0';
	for (i = 0; i < JL_NR_COEF; i++)
		any |= jl_coef_get(&rep->model.coef, i) != 0;
	if (!any) {
		snprintf(why, len, "all coefficients are 0");
		return -1;
	}
	h = headline(rep, &hname);
	if (!isfinite(h->model.mape) || !isfinite(h->model.rmse) ||
	    !isfinite(h->model.r2)) {
		snprintf(
			why, len,
			"the %s metrics are not finite (MAPE %g%%, R2 %g): does the "
			"meter read 0, or one value, throughout?",
			hname, h->model.mape, h->model.r2);
		return -1;
	}
	if (isfinite(h->base.mape) &&
	    h->model.mape >
		    h->base.mape * (1 + JT_WORSE_MARGIN) + JT_WORSE_SLACK) {
		snprintf(
			why, len,
			"worse than the CPU-only baseline on %s data (MAPE %.2f%% vs "
			"%.2f%%)",
			hname, h->model.mape, h->base.mape);
		return -1;
	}
	if (idle_w < JT_IDLE_MIN_W) {
		snprintf(why, len,
			 "idle power %.3g W is implausible (below %g W): the "
			 "features do not separate idle from load",
			 idle_w, JT_IDLE_MIN_W);
		return -1;
	}
	if (rep->median_w > 0 && idle_w > rep->median_w) {
		snprintf(why, len,
			 "idle power %.4g W is above the median measured power "
			 "%.4g W",
			 idle_w, rep->median_w);
		return -1;
	}
	if (rep->n &&
	    (double)rep->n_rejected > JT_MAX_REJECTED * (double)rep->n) {
		snprintf(
			why, len,
			"%zu of %zu intervals were rejected as outliers: the model "
			"does not describe these readings (wrong --meter or "
			"--clock-offset?)",
			rep->n_rejected, rep->n);
		return -1;
	}
	return 0;
}

/* "cycles" of "cycles_pj": the coefficient's name without its unit. */
static void coef_label(unsigned int i, char *buf, size_t len)
{
	const char *name = jl_coef_names[i], *us = strrchr(name, '_');

	snprintf(buf, len, "%.*s", us ? (int)(us - name) : (int)strlen(name),
		 name);
}

/* A coefficient in readable units: W per CPU, W, or pJ per event. */
static void coef_value(FILE *fp, unsigned int i, double v, int unit)
{
	if (i == JL_F_CPU_NS)
		fprintf(fp, "%.4g%s", v * 1e-6, unit ? " W/CPU" : "");
	else if (i == JL_NR_FEATURES)
		fprintf(fp, "%.4g%s", v * 1e-6, unit ? " W" : "");
	else
		fprintf(fp, "%.4g%s", v, unit ? " pJ" : "");
}

static void coef_list(FILE *fp, unsigned int mask)
{
	unsigned int i, k = 0, n = (unsigned int)__builtin_popcount(mask);
	char label[64];

	for (i = 0; i < JL_NR_COEF; i++) {
		if (!(mask & (1u << i)))
			continue;
		coef_label(i, label, sizeof(label));
		fprintf(fp, "%s%s", k ? (k + 1 == n ? " and " : ", ") : "",
			label);
		k++;
	}
}

/* The fitted values with their standard errors, one per line. */
static void fitted_lines(FILE *fp, const struct jt_report *rep)
{
	const struct jt_model *m = &rep->model;
	char label[64];
	unsigned int i;

	if (m->have_se)
		fprintf(fp,
			"# fitted (+- standard error from a block bootstrap: %d "
			"resamples of %u time blocks); rcond %.3g\n",
			JT_BOOT_REPS, rep->se_blocks, m->rcond);
	else
		fprintf(fp,
			"# fitted (too few intervals for standard errors); rcond "
			"%.3g\n",
			m->rcond);
	for (i = 0; i < JL_NR_COEF; i++) {
		if (!(m->fitted & (1u << i)))
			continue;
		coef_label(i, label, sizeof(label));
		fprintf(fp, "#   %-14s ", label);
		coef_value(fp, i, m->raw[i], 1);
		if (m->have_se) {
			fputs(" +- ", fp);
			coef_value(fp, i, m->se[i], 0);
			if (m->raw[i] > 0)
				fprintf(fp, " (%.2g%%)",
					100 * m->se[i] / m->raw[i]);
		}
		fputc('\n', fp);
	}
	for (i = 0; i < JL_NR_COEF; i++)
		if (m->dropped & (1u << i)) {
			fprintf(fp, "# warning: %s fit negative (",
				jl_coef_names[i]);
			coef_value(fp, i, m->negative[i], 1);
			fputs(") with OLS: refitted without it (written as 0)\n",
			      fp);
		}
	if (m->collinear) {
		unsigned int k = 0;

		fputs("# warning: ", fp);
		coef_list(fp, m->collinear);
		fputs(" cannot be separated by these data: they vary together "
		      "(variance inflation",
		      fp);
		k = 0;
		for (i = 0; i < JL_NR_COEF; i++)
			if (m->collinear & (1u << i))
				fprintf(fp, "%s %.3g", k++ ? "," : "",
					m->vif[i]);
		fputs(")", fp);
		if (m->have_se) {
			fputs(", so each alone is uncertain (", fp);
			k = 0;
			for (i = 0; i < JL_NR_COEF; i++)
				if (m->collinear & (1u << i))
					fprintf(fp, "%s+-%.2g%%",
						k++ ? ", " : "",
						m->raw[i] > 0 ?
							100 * m->se[i] /
								m->raw[i] :
							INFINITY);
			fputs(")", fp);
		}
		fputs(" even if the node's power is predicted well; per-process "
		      "energy depends on them: record a more varied load\n",
		      fp);
	}
}

/* The line of meter reading k, 0 if not known. */
static unsigned long meter_line(const struct jt_report *rep, size_t k)
{
	if (rep->meter_lines)
		return rep->meter_lines[k];
	return rep->meter_line0 ? rep->meter_line0 + k : 0;
}

/* Robust fitting and the rejected intervals, by file and line. */
static void robust_lines(FILE *fp, const struct jt_report *rep)
{
	const char *sn = rep->samples_name ? rep->samples_name : "samples";
	const char *pn = rep->pdu_name ? rep->pdu_name : "meter";
	size_t i;

	if (!rep->robust) {
		fprintf(fp, "# robust fitting off: %s\n",
			rep->robust_note ?
				rep->robust_note :
				"plain least squares (--robust off)");
		return;
	}
	fprintf(fp,
		"# robust: bisquare weights from an LTS start, scale %.3g W, %u "
		"iteration%s%s; %zu interval%s rejected (|residual| > %.4g W), %zu "
		"weighted below 0.5; the in-sample metrics leave the rejected out, the "
		"nested CV scores every interval\n",
		rep->robust_scale_w, rep->robust_iter,
		rep->robust_iter == 1 ? "" : "s",
		rep->robust_converged ? "" : " (not converged)",
		rep->n_rejected, rep->n_rejected == 1 ? "" : "s",
		FIT_BISQUARE_C * rep->robust_scale_w, rep->n_down);
	for (i = 0; i < rep->n_outliers_kept; i++) {
		const struct jt_outlier *o = &rep->outliers[i];

		fprintf(fp, "# rejected: %s:%lu", sn, o->line);
		if (o->last_line != o->line)
			fprintf(fp, "-%lu", o->last_line);
		if (rep->meter_lines || rep->meter_line0) {
			fprintf(fp, " (%s:%lu", pn, meter_line(rep, o->mlo));
			if (o->mhi != o->mlo)
				fprintf(fp, "-%lu", meter_line(rep, o->mhi));
			fputc(')', fp);
		}
		fprintf(fp,
			": measured %.4g W, predicted %.4g W (%+.3g x scale)\n",
			o->measured_w, o->predicted_w, o->z);
	}
	if (rep->n_rejected > rep->n_outliers_kept)
		fprintf(fp, "# ... and %zu more rejected intervals\n",
			rep->n_rejected - rep->n_outliers_kept);
}

static void metric_line(FILE *fp, const char *what, const struct fit_metrics *m)
{
	fprintf(fp,
		"#   %-24s %7.2f%% %10.3f W %10.3f W %8.4f  (%zu intervals)\n",
		what, m->mape, m->mae, m->rmse, m->r2, m->n);
}

static void eval_lines(FILE *fp, const char *what, const struct jt_eval *e)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%s model", what);
	metric_line(fp, buf, &e->model);
	snprintf(buf, sizeof(buf), "%s cpu-only", what);
	metric_line(fp, buf, &e->base);
}

static void feature_list(FILE *fp, unsigned int mask)
{
	unsigned int i;
	int any = 0;

	for (i = 0; i < JT_NF; i++)
		if (mask & (1u << i)) {
			fprintf(fp, "%s%s", any ? " " : "", jt_feature_cols[i]);
			any = 1;
		}
	if (!any)
		fputs("none", fp);
}

/* What was read and how it was aligned: meter, lag, clock, dropped rows. */
static void report_input(FILE *fp, const struct jt_report *rep)
{
	fprintf(fp, "# joules-train %s: %s fit of %zu intervals (%s, %s)\n",
		JL_VERSION, rep->method == FIT_OLS ? "ols" : "nnls", rep->n,
		rep->samples_name ? rep->samples_name : "-",
		rep->pdu_name ? rep->pdu_name : "-");
	fprintf(fp,
		"# meter: readings every %.3g s (median), %s; sample rows %.3g s\n",
		rep->al.meter_period_ns * 1e-9,
		rep->al.sem == JT_METER_AVERAGE ?
			"each the mean over the preceding period (--meter average)" :
			"each the power at its time (--meter instant)",
		rep->al.row_ns * 1e-9);
	if (rep->have_lag)
		fprintf(fp,
			"# lag: the meter trails the activity by %+.3f s "
			"(cross-correlation %.3f, grid %.3g s); %s; --clock-offset "
			"%+.3f s used\n",
			rep->lag.lag_s, rep->lag.r, rep->lag.step_s,
			rep->lag_note ? rep->lag_note : "", rep->offset_s);
	if (rep->clock_steps)
		fprintf(fp,
			"# clock: realtime_ns steps by %+.3f s at line %lu (%u "
			"step%s), monotonic_ns does not: one continuous timeline\n",
			rep->step_s, rep->step_line, rep->clock_steps,
			rep->clock_steps == 1 ? "" : "s");
	if (rep->al.aggregated) {
		fprintf(fp,
			"# %zu sample rows summed into %zu meter periods (the meter is "
			"not faster than the rows)\n",
			rep->al.rows_in, rep->al.used);
		fprintf(fp,
			"# dropped: %zu meter periods not fully covered by sample rows, "
			"%zu longer than %g s\n",
			rep->al.uncovered, rep->al.gap, rep->max_gap_s);
	} else {
		fprintf(fp,
			"# dropped: %zu intervals not covered by meter readings, %zu across "
			"meter gaps > %g s\n",
			rep->al.uncovered, rep->al.gap, rep->max_gap_s);
		if (rep->al.between)
			fprintf(fp,
				"# %zu sample rows without a reading inside not used (an "
				"instantaneous reading says nothing about the rows around it)\n",
				rep->al.between);
	}
}

/* The features used, and why the others were left out. */
static void report_features(FILE *fp, const struct jt_report *rep)
{
	unsigned int absent = ((1u << JT_NF) - 1) & ~rep->present;

	fputs("# features: ", fp);
	feature_list(fp, rep->present & ~rep->zero);
	fputc('\n', fp);
	if (absent) {
		fputs("# left out (empty in the samples: not measured on this machine, e.g. no "
		      "PMU): ",
		      fp);
		feature_list(fp, absent);
		fputc('\n', fp);
	}
	if (rep->zero) {
		fputs("# left out (0 in every interval): ", fp);
		feature_list(fp, rep->zero);
		fputc('\n', fp);
	}
}

/* The metrics table, then the headline error against CPU-only. */
static void report_metrics(FILE *fp, const struct jt_report *rep)
{
	const struct jt_eval *head;
	const char *head_name;
	char hname[192];
	double gain;

	fprintf(fp, "# %-26s %8s %12s %12s %8s\n", "", "MAPE", "MAE", "RMSE",
		"R2");
	eval_lines(fp, "in-sample", &rep->insample);
	if (rep->nested.done) {
		snprintf(hname, sizeof(hname), "nested %u-fold",
			 rep->nested.folds);
		eval_lines(fp, hname, &rep->nested.ev);
	} else if (rep->have_cv) {
		/* --follow: the single set's folds, its rejected rows left out. */
		snprintf(hname, sizeof(hname), "%u-fold CV", rep->folds);
		eval_lines(fp, hname, &rep->cv);
	}
	if (rep->have_val)
		eval_lines(fp, "validation", &rep->val);
	head = headline(rep, &head_name);
	if (rep->nested.done && !rep->have_val) {
		snprintf(
			hname, sizeof(hname),
			"nested %u-fold CV: the written model on all %zu held-out "
			"intervals; folds %.2f-%.2f%%, sd %.2f",
			rep->nested.folds, head->model.n,
			rep->nested.fold_mape_min, rep->nested.fold_mape_max,
			rep->nested.fold_mape_sd);
		head_name = hname;
	} else if (rep->have_cv && !rep->have_val) {
		head_name = hname;
	}
	gain = head->base.mape > 0 ?
		       100.0 * (head->base.mape - head->model.mape) /
			       head->base.mape :
		       0;
	fprintf(fp,
		"# node MAPE %.2f%% (%s), MAE %.4g W, RMSE %.4g W; %.1f%% %s than "
		"CPU-only (%.2f%%)\n",
		head->model.mape, head_name, head->model.mae, head->model.rmse,
		fabs(gain), gain >= 0 ? "better" : "worse", head->base.mape);
}

/* The coefficients line, under its field names. */
static int report_coef(FILE *fp, const struct jt_report *rep)
{
	char line[256];
	int len;

	len = jl_coef_format(&rep->model.coef, line, sizeof(line));
	if (len < 0)
		return len;
	/* The field names, from the core's table: they cannot drift. */
	fputc('#', fp);
	for (unsigned int i = 0; i < JL_NR_COEF; i++)
		fprintf(fp, " %s", jl_coef_names[i]);
	fputc('\n', fp);
	fputs(line, fp);
	return ferror(fp) ? -EIO : 0;
}

int jt_write_report(FILE *fp, const struct jt_report *rep, int with_coef)
{
	char why[256];

	if (with_coef == 2)
		return report_coef(fp, rep); /* after a report written before */
	report_input(fp, rep);
	report_features(fp, rep);
	robust_lines(fp, rep);
	fitted_lines(fp, rep);
	report_metrics(fp, rep);
	if (rep->meter_over_module > 0)
		fprintf(fp, "# meter energy is %.2fx the recorded energy_uj\n",
			rep->meter_over_module);
	if (jt_model_check(rep, why, sizeof(why)))
		fprintf(fp,
			"# warning: implausible model, --apply refuses it: %s\n",
			why);
	if (!with_coef)
		return ferror(fp) ? -EIO : 0;
	return report_coef(fp, rep);
}
