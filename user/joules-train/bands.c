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

#include "train.h"

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

/* Rows grouped by (fold, bin), reduced per group. */
struct bgrid {
	const struct jt_row *rows;
	size_t n;
	unsigned int K, B; /* folds, bins */
	double edge[JT_BAND_BINS]; /* B - 1 ascending bin edges, MHz */
	unsigned char *bin; /* per row */
	struct fit_blocks bm, bb; /* model and CPU-only columns */
	enum fit_method method;
};

static void bgrid_free(struct bgrid *g)
{
	free(g->bin);
	g->bin = NULL;
	fit_blocks_free(&g->bm);
	fit_blocks_free(&g->bb);
}

static unsigned int fold_of(const struct bgrid *g, size_t i)
{
	unsigned int k = (unsigned int)((unsigned __int128)i * g->K / g->n);

	/* fit_fold_start() rounds down: step to the fold that holds i. */
	while (k + 1 < g->K && fit_fold_start(g->n, k + 1, g->K) <= i)
		k++;
	while (k > 0 && fit_fold_start(g->n, k, g->K) > i)
		k--;
	return k;
}

static int bgrid_build(struct bgrid *g, const struct jt_row *rows, size_t n,
		       const double *mhz, const double *w, unsigned int present,
		       unsigned int K, const double *edges, unsigned int nedges,
		       enum fit_method method)
{
	unsigned int mcols[JT_NCOL], bcols[2], nm = 0, nb = 0, i, nblk;
	size_t *bounds = NULL, *pos = NULL, r;
	double *x = NULL, *y = NULL, *wp = NULL;
	struct fit_design d;
	int ret = -ENOMEM;

	memset(g, 0, sizeof(*g));
	g->rows = rows;
	g->n = n;
	g->K = K;
	g->B = nedges + 1;
	g->method = method;
	memcpy(g->edge, edges, nedges * sizeof(*edges));
	nblk = K * g->B;
	g->bin = malloc(n);
	bounds = calloc(nblk + 1, sizeof(*bounds));
	pos = calloc(nblk, sizeof(*pos));
	x = malloc(n * JT_NCOL * sizeof(*x));
	y = malloc(n * sizeof(*y));
	wp = malloc(n * sizeof(*wp));
	if (!g->bin || !bounds || !pos || !x || !y || !wp)
		goto out;
	/* Counting sort by block: fold-major, bins within. */
	for (r = 0; r < n; r++) {
		unsigned int b = 0;

		while (b < nedges && mhz[r] >= edges[b])
			b++;
		g->bin[r] = (unsigned char)b;
		bounds[fold_of(g, r) * g->B + b + 1]++;
	}
	for (i = 0; i < nblk; i++) {
		bounds[i + 1] += bounds[i];
		pos[i] = bounds[i];
	}
	for (r = 0; r < n; r++) {
		size_t p = pos[fold_of(g, r) * g->B + g->bin[r]]++;

		x[p * JT_NCOL + JT_COL_IDLE] = rows[r].interval_ns;
		for (i = 0; i < JT_NF; i++)
			x[p * JT_NCOL + 1 + i] = rows[r].f[i];
		y[p] = rows[r].meter_uj;
		wp[p] = w ? w[r] : 1;
	}
	mcols[nm++] = JT_COL_IDLE;
	bcols[nb++] = JT_COL_IDLE;
	for (i = 0; i < JT_NF; i++)
		if (present & (1u << i))
			mcols[nm++] = 1 + i;
	if (present & (1u << JL_F_CPU_NS))
		bcols[nb++] = 1 + JL_F_CPU_NS;
	d = (struct fit_design){
		.n = n, .stride = JT_NCOL, .x = x, .y = y, .w = wp,
		.bounds = bounds,
	};
	ret = fit_blocks_build(&d, mcols, nm, nblk, &g->bm);
	if (!ret)
		ret = fit_blocks_build(&d, bcols, nb, nblk, &g->bb);
out:
	free(bounds);
	free(pos);
	free(x);
	free(y);
	free(wp);
	if (ret)
		bgrid_free(g);
	return ret;
}

/*
 * Held-out predictions (W) of every row: for each fold, each band's set
 * (band_of_bin[] maps bins to nb bands) is fitted on the other folds, or
 * the CPU-only baseline if base. Returns 0 or the fit's error.
 */
static int bgrid_predict(const struct bgrid *g, const unsigned char *band_of_bin,
			 unsigned int nb, int base, double *pred)
{
	double *mult = malloc(g->K * g->B * sizeof(*mult));
	unsigned int k, b, kk, j;
	int ret = 0;

	if (!mult)
		return -ENOMEM;
	for (k = 0; k < g->K && !ret; k++) {
		size_t lo = fit_fold_start(g->n, k, g->K),
		       hi = fit_fold_start(g->n, k + 1, g->K), i;

		for (b = 0; b < nb && !ret; b++) {
			struct jt_model m;

			for (kk = 0; kk < g->K; kk++)
				for (j = 0; j < g->B; j++)
					mult[kk * g->B + j] =
						(g->K == 1 || kk != k) &&
						band_of_bin[j] == b;
			ret = jt_fit_model(base ? &g->bb : &g->bm, mult,
					   g->method, &m);
			for (i = lo; i < hi && !ret; i++)
				if (band_of_bin[g->bin[i]] == b)
					pred[i] = jt_predict_uj(&m.coef,
								&g->rows[i]) *
						  1e3 / g->rows[i].interval_ns;
		}
	}
	free(mult);
	return ret;
}

/* Metrics of pred over rows accepted by w1 and (if given) w2. */
static void metrics(const struct jt_row *rows, size_t n, const double *pred,
		    const double *w1, const double *w2, struct fit_metrics *m)
{
	struct fit_acc a;
	size_t i;

	fit_acc_init(&a);
	for (i = 0; i < n; i++)
		if ((!w1 || w1[i] > 0) && (!w2 || w2[i] > 0))
			fit_acc_add(&a, jt_row_watts(&rows[i]), pred[i]);
	fit_acc_result(&a, m);
}

/* A candidate: bin boundaries cut[0..nc) (1..B-1, ascending). */
struct cand {
	unsigned int nc;
	unsigned int cut[JL_MAX_BANDS - 1];
	double mape;
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

/* Held-out MAPE of a candidate (INFINITY: a band too small, a failed fit). */
static double cand_eval(const struct bgrid *g, struct cand *c,
			const size_t *bin_rows, size_t min_rows,
			const double *w, double *pred)
{
	unsigned char map[JT_BAND_BINS];
	size_t cnt[JL_MAX_BANDS] = { 0 };
	struct fit_metrics m;
	unsigned int j;

	band_map(g, c, map);
	for (j = 0; j < g->B; j++)
		cnt[map[j]] += bin_rows[j];
	for (j = 0; j <= c->nc; j++)
		if (cnt[j] < min_rows)
			return c->mape = INFINITY;
	if (bgrid_predict(g, map, c->nc + 1, 0, pred))
		return c->mape = INFINITY;
	metrics(g->rows, g->n, pred, w, NULL, &m);
	return c->mape = isfinite(m.mape) ? m.mape : INFINITY;
}

/* The best candidate with one boundary more than c. */
static struct cand add_cut(const struct bgrid *g, const struct cand *c,
			   const size_t *bin_rows, size_t min_rows,
			   const double *w, double *pred, unsigned int *tried)
{
	struct cand best = { .mape = INFINITY };
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
		if (t.mape < best.mape)
			best = t;
	}
	return best;
}

static int dbl_cmp(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return (a > b) - (a < b);
}

/* Bin edges: distinct quantiles of the known frequencies. */
static unsigned int quantile_edges(const double *mhz, size_t n, double *edges)
{
	double *s = malloc(n * sizeof(*s));
	unsigned int j, ne = 0;
	size_t m = 0, i;

	if (!s)
		return 0;
	for (i = 0; i < n; i++)
		if (mhz[i] > 0)
			s[m++] = mhz[i];
	qsort(s, m, sizeof(*s), dbl_cmp);
	for (j = 1; m && j < JT_BAND_BINS; j++) {
		double q = s[(size_t)((double)m * j / JT_BAND_BINS)];

		/* A frequency no row is below cannot separate anything. */
		if (q > s[0] && (!ne || q > edges[ne - 1]))
			edges[ne++] = q;
	}
	free(s);
	return ne;
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
	while (isfinite(best->mape) && best->nc + 1 < max) {
		struct cand more = add_cut(g, best, bin_rows, min_rows, w, pred,
					   tried);

		if (!isfinite(more.mape))
			break;
		if (!bo->exact &&
		    !(more.mape < best->mape * (1 - JT_BAND_MARGIN) - JT_BAND_SLACK))
			break;
		*best = more;
	}
	return 0;
}

/* Each band's own (robust) fit and checks; its row weights into wb. */
static int fit_bands(const struct jt_row *rows, size_t n, unsigned int present,
		     const struct jt_train_opts *o, const struct jt_report *rep,
		     const struct bgrid *g, const struct cand *best,
		     const double *edges, unsigned char *band,
		     struct jt_row *sub, double *scratch, double *wb,
		     struct jt_band_result *res)
{
	unsigned char map[JT_BAND_BINS];
	unsigned int b, j;
	size_t i;
	int ret;

	res->tried = 1;
	res->nb = best->nc + 1;
	band_map(g, best, map);
	for (j = 0; j < best->nc; j++)
		res->upper_mhz[j] = (uint64_t)edges[best->cut[j] - 1];
	for (i = 0; i < n; i++)
		band[i] = map[g->bin[i]];
	for (b = 0; b < res->nb; b++) {
		struct jt_train_opts bopt = *o;
		struct jt_report *br = &res->band[b];
		size_t m = 0;

		for (i = 0; i < n; i++)
			if (band[i] == b)
				sub[m++] = rows[i];
		res->nrows[b] = m;
		bopt.pr = NULL;
		bopt.weights = scratch;
		memset(br, 0, sizeof(*br));
		br->samples_name = rep->samples_name;
		br->pdu_name = rep->pdu_name;
		br->meter_lines = rep->meter_lines;
		br->al = rep->al;
		br->max_gap_s = rep->max_gap_s;
		ret = jt_train(sub, m, present, &bopt, br, NULL, NULL);
		if (ret) {
			jt_diagf("banded fit: band %u failed\n", b + 1);
			return ret;
		}
		for (i = 0, m = 0; i < n; i++)
			if (band[i] == b)
				wb[i] = scratch[m++];
		res->band_ok[b] = !jt_model_check(br, res->band_why[b],
						  sizeof(res->band_why[b]));
	}
	return 0;
}

int jt_train_bands(const struct jt_row *rows, size_t n, unsigned int present,
		   const struct jt_train_opts *o, const struct jt_band_opts *bo,
		   const struct jt_report *rep, const double *w_single,
		   struct jt_band_result *res)
{
	unsigned int K = o->folds > 1 ? o->folds : 1, ne, j, b;
	double edges[JT_BAND_BINS], *mhz = NULL, *pred = NULL, *ps = NULL,
				    *pb = NULL, *wb = NULL;
	struct bgrid g = { 0 }, gb = { 0 };
	struct jt_row *sub = NULL;
	struct cand best = { .mape = INFINITY }, prev;
	unsigned char map[JT_BAND_BINS], *band = NULL;
	size_t bin_rows[JT_BAND_BINS] = { 0 }, min_rows, i;
	const double *wsearch;
	char why[256];
	int ret = -ENOMEM, all_ok = 1, round;

	memset(res, 0, sizeof(*res));
	jl_bands_single(&res->model, &rep->model.coef);
	if (bo->max_bands <= 1 && !bo->nedges) {
		snprintf(res->why, sizeof(res->why), "single set (--bands 1)");
		return 0;
	}
	mhz = malloc(n * sizeof(*mhz));
	pred = malloc(n * sizeof(*pred));
	ps = malloc(n * sizeof(*ps));
	pb = malloc(n * sizeof(*pb));
	wb = malloc(n * sizeof(*wb));
	band = malloc(n);
	sub = malloc(n * sizeof(*sub));
	if (!mhz || !pred || !ps || !pb || !wb || !band || !sub)
		goto out;
	res->n_freq = jt_rows_freq(rows, n, present, mhz);
	if (!res->n_freq) {
		snprintf(res->why, sizeof(res->why),
			 "single set: no frequency known (no freq_mhz column "
			 "values and no cycles): a banded fit is impossible");
		ret = 0;
		goto out;
	}
	if (K < 2) {
		snprintf(res->why, sizeof(res->why),
			 "single set: without cross-validation (--folds) a banded "
			 "model cannot be judged on held-out data");
		ret = 0;
		goto out;
	}
	if (bo->nedges) {
		for (j = 0; j < bo->nedges; j++)
			edges[j] = (double)bo->edges[j];
		ne = bo->nedges;
	} else {
		ne = quantile_edges(mhz, n, edges);
	}
	if (!ne) {
		snprintf(res->why, sizeof(res->why),
			 "single set: every interval ran at the same frequency");
		ret = 0;
		goto out;
	}
	min_rows = (size_t)ceil(JT_BAND_MIN_SHARE * (double)n);
	if (min_rows < o->min_samples)
		min_rows = o->min_samples;
	/* Ten intervals per coefficient: a band fitted on less is a guess. */
	if (min_rows < 10 * JT_NCOL)
		min_rows = 10 * JT_NCOL;
	/*
	 * Which rows the search may trust: the single fit's, unless it
	 * rejected so many that it does not describe the data (a whole band
	 * can look like outliers to one set); then all. A second round
	 * searches again with the bands' own robust weights.
	 */
	wsearch = w_single;
	if (!w_single || (double)rep->n_rejected > JT_MAX_REJECTED * (double)n)
		wsearch = NULL;
	for (round = 0; round < 2; round++) {
		if (round && bo->nedges)
			break;
		bgrid_free(&g);
		ret = bgrid_build(&g, rows, n, mhz, wsearch, present, K, edges,
				  ne, o->method);
		if (ret) {
			jt_diagf("banded fit: cannot set up: %s\n",
				 strerror(-ret));
			goto out;
		}
		memset(bin_rows, 0, sizeof(bin_rows));
		for (i = 0; i < n; i++)
			bin_rows[g.bin[i]] += wsearch ? wsearch[i] > 0 : 1;
		prev = best;
		ret = search(&g, bo, bin_rows, min_rows, wsearch, pred, &best,
			     &res->candidates);
		if (ret)
			goto out;
		if (!isfinite(best.mape)) {
			if (round) {
				/* Keep the first round's (grid and fits). */
				best = prev;
				bgrid_free(&g);
				ret = bgrid_build(&g, rows, n, mhz, w_single,
						  present, K, edges, ne,
						  o->method);
				if (ret)
					goto out;
				break;
			}
			snprintf(res->why, sizeof(res->why),
				 "single set: no band edges leave every band %zu "
				 "intervals (%.0f%% and --min-samples)",
				 min_rows, JT_BAND_MIN_SHARE * 100);
			goto out;
		}
		ret = fit_bands(rows, n, present, o, rep, &g, &best, edges, band,
				sub, pred, wb, res);
		if (ret)
			goto out;
		wsearch = wb;
	}
	band_map(&g, &best, map);
	all_ok = 1;
	for (b = 0; b < res->nb; b++)
		all_ok &= res->band_ok[b];

	/* Single, banded and CPU-only on the same held-out intervals. */
	ret = bgrid_build(&gb, rows, n, mhz, wb, present, K, edges, ne,
			  o->method);
	if (!ret)
		ret = bgrid_predict(&gb, map, res->nb, 0, pred);
	bgrid_free(&g);
	if (!ret)
		ret = bgrid_build(&g, rows, n, mhz, w_single, present, K, edges,
				  ne, o->method);
	{
		unsigned char one[JT_BAND_BINS] = { 0 };

		if (!ret)
			ret = bgrid_predict(&g, one, 1, 0, ps);
		if (!ret)
			ret = bgrid_predict(&g, one, 1, 1, pb);
	}
	if (ret) {
		jt_diagf("banded fit: held-out evaluation failed: %s\n",
			 ret == -EDOM ? "NNLS did not converge" : strerror(-ret));
		goto out;
	}
	/*
	 * On the intervals the bands accept: ones the single set rejected
	 * count against it (a band it cannot describe is not noise).
	 */
	metrics(rows, n, ps, wb, NULL, &res->cv_single);
	metrics(rows, n, pred, wb, NULL, &res->cv_banded);
	metrics(rows, n, pb, wb, NULL, &res->cv_base);

	if (!(res->cv_banded.mape < res->cv_single.mape * (1 - JT_BAND_MARGIN) &&
	      res->cv_single.mape - res->cv_banded.mape > JT_BAND_SLACK)) {
		snprintf(res->why, sizeof(res->why),
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
			res->model.upper_mhz[b] = b + 1 < res->nb ?
							  res->upper_mhz[b] :
							  0;
			res->model.set[b] = res->band[b].model.coef;
		}
		snprintf(res->why, sizeof(res->why),
			 "%u bands: held-out MAPE %.3f%% vs %.3f%% for the single "
			 "set, every band plausible",
			 res->nb, res->cv_banded.mape, res->cv_single.mape);
	}
	ret = 0;
out:
	bgrid_free(&g);
	bgrid_free(&gb);
	free(mhz);
	free(pred);
	free(ps);
	free(pb);
	free(wb);
	free(band);
	free(sub);
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
	fprintf(fp, "# frequency bands: %zu of %zu intervals with a known "
		    "frequency; %u edge sets tried\n",
		br->n_freq, rep->n, br->candidates);
	if (br->tried) {
		fprintf(fp, "# held-out (%u contiguous folds, the same intervals) "
			    "%8s %12s %8s\n",
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
					fprintf(fp, " %s %.4g", jl_coef_names[i],
						m->raw[i]);
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
