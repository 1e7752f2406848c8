// SPDX-License-Identifier: GPL-2.0
/*
 * From aligned rows to module coefficients: design matrix, fit of the
 * multi-feature model and of the CPU-time-only baseline, contiguous k-fold
 * cross-validation, metrics, and the summary written with the result.
 */
#include <errno.h>
#include <math.h>
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

double jt_coef_unit(unsigned int coef)
{
	/* uJ/ns -> uW is 1e9; uJ per event -> pJ is 1e6. */
	return coef == 0 || coef == JL_NR_FEATURES ? 1e9 : 1e6;
}

double jt_predict_uj(const struct jl_coef *c, const struct jt_row *r)
{
	return ((double)c->idle_uw * r->interval_ns +
		(double)c->cpu_time_uw * r->f[JL_F_CPU_NS]) *
		       1e-9 +
	       ((double)c->cycles_pj * r->f[JL_F_CYCLES] +
		(double)c->instructions_pj * r->f[JL_F_INSTR] +
		(double)c->cache_miss_pj * r->f[JL_F_MISSES] +
		(double)c->disk_byte_pj * r->f[JL_F_DISK]) *
		       1e-6;
}

int jt_fit_model(const struct fit_blocks *b, int exclude,
		 enum fit_method method, struct jt_model *m)
{
	struct fit_result res;
	unsigned int i, j;
	int ret;

	memset(m, 0, sizeof(*m));
	ret = fit_solve(b, exclude, method, &res);
	if (ret)
		return ret;
	m->rcond = res.rcond;
	for (j = 0; j < b->ncols; j++) {
		unsigned int ci = col_coef(b->cols[j]);
		double v = res.beta[j] * jt_coef_unit(ci);

		m->raw[ci] = v;
		if (b->scale[j] > 0)
			m->fitted |= 1u << ci;
		if (v < 0) {
			/* The module's coefficients are unsigned: OLS may not fit that. */
			m->clamped |= 1u << ci;
			v = 0;
		}
		v = nearbyint(v);
		if (v > (double)JL_COEF_MAX)
			return -ERANGE;
		jl_coef_set(&m->coef, ci, (jl_u64)v);
	}
	for (i = 0; i < JL_NR_COEF; i++)
		if (!(m->fitted & (1u << i)))
			jl_coef_set(&m->coef, i, 0);
	return 0;
}

void jt_evaluate(const struct jt_row *rows, size_t n,
		 const struct jl_coef *model, const struct jl_coef *base,
		 struct jt_eval *ev)
{
	struct fit_acc am, ab;
	size_t i;

	fit_acc_init(&am);
	fit_acc_init(&ab);
	for (i = 0; i < n; i++) {
		double w = jt_row_watts(&rows[i]),
		       k = 1e3 / rows[i].interval_ns;

		fit_acc_add(&am, w, jt_predict_uj(model, &rows[i]) * k);
		fit_acc_add(&ab, w, jt_predict_uj(base, &rows[i]) * k);
	}
	fit_acc_result(&am, &ev->model);
	fit_acc_result(&ab, &ev->base);
}

static FILE *diag(void)
{
	return jt_diag ? jt_diag : stderr;
}

int jt_train(const struct jt_row *rows, size_t n, unsigned int present,
	     const struct jt_train_opts *o, struct jt_report *rep,
	     double *cv_model, double *cv_base)
{
	unsigned int mcols[JT_NCOL], bcols[2], nm = 0, nb = 0, i, k;
	unsigned int nblocks = o->folds > 1 ? o->folds : 1;
	struct fit_blocks bm = { 0 }, bb = { 0 };
	struct fit_design d;
	struct fit_acc am, ab;
	double *x = NULL, *y = NULL;
	size_t r;
	int ret;

	rep->method = o->method;
	rep->n = n;
	rep->folds = nblocks;
	rep->present = present;
	if (n < o->min_samples || n < 2) {
		fprintf(diag(),
			"only %zu aligned samples, need at least %zu (--min-samples)\n",
			n, o->min_samples);
		return -EINVAL;
	}
	if (nblocks > 1 && n < 2 * (size_t)nblocks) {
		fprintf(diag(),
			"%zu aligned samples are too few for %u folds (--folds)\n",
			n, nblocks);
		return -EINVAL;
	}
	x = malloc(n * JT_NCOL * sizeof(*x));
	y = malloc(n * sizeof(*y));
	if (!x || !y) {
		ret = -ENOMEM;
		goto out;
	}
	for (r = 0; r < n; r++) {
		x[r * JT_NCOL + JT_COL_IDLE] = rows[r].interval_ns;
		for (i = 0; i < JT_NF; i++)
			x[r * JT_NCOL + 1 + i] = rows[r].f[i];
		y[r] = rows[r].meter_uj;
	}
	d = (struct fit_design){ .n = n, .stride = JT_NCOL, .x = x, .y = y };
	mcols[nm++] = JT_COL_IDLE;
	bcols[nb++] = JT_COL_IDLE;
	for (i = 0; i < JT_NF; i++)
		if (present & (1u << i))
			mcols[nm++] = 1 + i;
	if (present & (1u << JL_F_CPU_NS))
		bcols[nb++] = 1 + JL_F_CPU_NS;

	jt_progress(o->pr, "fitting", 0, 0);
	ret = fit_blocks_build(&d, mcols, nm, nblocks, &bm);
	if (!ret)
		ret = fit_blocks_build(&d, bcols, nb, nblocks, &bb);
	if (ret) {
		fprintf(diag(), "cannot set up the fit: %s\n", strerror(-ret));
		goto out;
	}
	for (i = 1; i < nm; i++)
		if (bm.scale[i] == 0)
			rep->zero |= 1u << (mcols[i] - 1);

	ret = jt_fit_model(&bm, -1, o->method, &rep->model);
	if (!ret)
		ret = jt_fit_model(&bb, -1, o->method, &rep->base);
	if (ret) {
		fprintf(diag(), "fit failed: %s\n",
			ret == -ERANGE ?
				"a coefficient exceeds the module's maximum (1e12)" :
			ret == -EDOM ? "NNLS did not converge" :
				       strerror(-ret));
		goto out;
	}
	jt_evaluate(rows, n, &rep->model.coef, &rep->base.coef, &rep->insample);

	fit_acc_init(&am);
	fit_acc_init(&ab);
	for (k = 0; k < nblocks; k++) {
		struct jt_model fm, fb;

		jt_progress(o->pr, "cross-validating", k, nblocks);
		if (nblocks > 1) {
			ret = jt_fit_model(&bm, (int)k, o->method, &fm);
			if (!ret)
				ret = jt_fit_model(&bb, (int)k, o->method, &fb);
			if (ret) {
				fprintf(diag(), "fit of fold %u failed: %s\n",
					k + 1, strerror(-ret));
				goto out;
			}
		} else {
			fm = rep->model;
			fb = rep->base;
		}
		/* Evaluate on the held-out fold only: rows bm.start[k].. */
		for (r = bm.start[k]; r < bm.start[k + 1]; r++) {
			double w = jt_row_watts(&rows[r]),
			       s = 1e3 / rows[r].interval_ns;
			double pm = jt_predict_uj(&fm.coef, &rows[r]) * s;
			double pb = jt_predict_uj(&fb.coef, &rows[r]) * s;

			fit_acc_add(&am, w, pm);
			fit_acc_add(&ab, w, pb);
			if (cv_model)
				cv_model[r] = pm;
			if (cv_base)
				cv_base[r] = pb;
		}
	}
	jt_progress_end(o->pr);
	if (nblocks > 1) {
		rep->have_cv = 1;
		fit_acc_result(&am, &rep->cv.model);
		fit_acc_result(&ab, &rep->cv.base);
	}

	{
		double sm = 0, su = 0;

		for (r = 0; r < n; r++) {
			if (rows[r].module_uj < 0)
				continue;
			sm += rows[r].meter_uj;
			su += rows[r].module_uj;
		}
		rep->meter_over_module = su > 0 ? sm / su : 0;
	}
	ret = 0;
out:
	fit_blocks_free(&bm);
	fit_blocks_free(&bb);
	free(x);
	free(y);
	return ret;
}

/* Human names and units of the raw (unrounded) coefficients. */
static const char *const raw_name[JL_NR_COEF] = {
	"cpu_time", "cycles", "instructions", "cache_miss", "disk_byte", "idle",
};

static void raw_value(FILE *fp, unsigned int i, double v)
{
	if (i == 0)
		fprintf(fp, "%.4g W/CPU", v * 1e-6);
	else if (i == JL_NR_FEATURES)
		fprintf(fp, "%.4g W", v * 1e-6);
	else
		fprintf(fp, "%.4g pJ", v);
}

static void metric_line(FILE *fp, const char *what, const struct fit_metrics *m)
{
	fprintf(fp, "#   %-24s %7.2f%% %10.3f W %8.4f  (%zu intervals)\n", what,
		m->mape, m->rmse, m->r2, m->n);
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

int jt_write_report(FILE *fp, const struct jt_report *rep, int with_coef)
{
	const struct jt_eval *head;
	const char *head_name;
	char line[256], hname[64];
	unsigned int i, absent = ((1u << JT_NF) - 1) & ~rep->present;
	double gain;
	int len;

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
	fputs("# fitted:", fp);
	for (i = 0; i < JL_NR_COEF; i++) {
		if (!(rep->model.fitted & (1u << i)))
			continue;
		fprintf(fp, " %s ", raw_name[i]);
		raw_value(fp, i, rep->model.raw[i]);
	}
	fprintf(fp, "; rcond %.3g\n", rep->model.rcond);
	for (i = 0; i < JL_NR_COEF; i++)
		if (rep->model.clamped & (1u << i))
			fprintf(fp,
				"# warning: %s fit negative (%.4g), written as 0: use "
				"--method nnls\n",
				jl_coef_names[i], rep->model.raw[i]);
	if (rep->model.rcond < 1e-6)
		fputs("# warning: features nearly collinear; individual coefficients are not "
		      "well determined\n",
		      fp);
	fprintf(fp, "# %-26s %8s %12s %8s\n", "", "MAPE", "RMSE", "R2");
	eval_lines(fp, "in-sample", &rep->insample);
	if (rep->have_cv) {
		snprintf(hname, sizeof(hname), "%u-fold CV", rep->folds);
		eval_lines(fp, hname, &rep->cv);
	}
	if (rep->have_val)
		eval_lines(fp, "validation", &rep->val);
	if (rep->have_val) {
		head = &rep->val;
		head_name = "validation";
	} else if (rep->have_cv) {
		head = &rep->cv;
		head_name = hname;
	} else {
		head = &rep->insample;
		head_name = "in-sample";
	}
	gain = head->base.mape > 0 ?
		       100.0 * (head->base.mape - head->model.mape) /
			       head->base.mape :
		       0;
	fprintf(fp,
		"# node MAPE %.1f%% (%s), %.1f%% %s than CPU-only (%.1f%%)\n",
		head->model.mape, head_name, fabs(gain),
		gain >= 0 ? "better" : "worse", head->base.mape);
	if (rep->meter_over_module > 0)
		fprintf(fp, "# meter energy is %.2fx the recorded energy_uj\n",
			rep->meter_over_module);
	if (!with_coef)
		return ferror(fp) ? -EIO : 0;
	len = jl_coef_format(&rep->model.coef, line, sizeof(line));
	if (len < 0)
		return len;
	fprintf(fp,
		"# cpu_time_uw cycles_pj instructions_pj cache_miss_pj disk_byte_pj idle_uw\n");
	fputs(line, fp);
	return ferror(fp) ? -EIO : 0;
}
