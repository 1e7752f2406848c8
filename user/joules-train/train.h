/* SPDX-License-Identifier: GPL-2.0 */
/*
 * joules-train internals. Everything except main.c is library-like (no
 * exit(), no option parsing) so that the unit test links the same objects.
 */
#ifndef JOULES_TRAIN_H
#define JOULES_TRAIN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core.h"
#include "parse.h"
#include "fit.h"

#define JT_NF JL_NR_FEATURES

/* Where per-line diagnostics go; stderr unless a test redirects it. */
extern FILE *jt_diag;

/* Bad lines printed per input before only counting the rest. */
#define JT_BAD_SHOWN 100

struct jt_input_stats {
	unsigned long records; /* data records seen (header excluded) */
	unsigned long bad;
	unsigned long first_bad_line;
	char first_bad_why[160];
	/*
	 * Stop reading once this many lines are bad (0: read to the end): an
	 * input that is over --max-bad cannot be used, and a reader program
	 * may emit bad lines forever.
	 */
	unsigned long stop_after;
	int stopped; /* reading stopped at stop_after */
	/*
	 * Line number of the line before the text read now (--follow reads
	 * a file in chunks, a samples chunk after a copy of the header, which
	 * its caller counts in): line numbers are the file's own.
	 */
	unsigned long line_base;
};

/*
 * Count one bad line and print "name:line: reason" (the first JT_BAD_SHOWN).
 * Returns 1 when st->stop_after is reached (the reader should stop).
 */
int jt_bad_line(struct jt_input_stats *st, const char *name, unsigned long line,
		const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Print the "N more bad lines not shown" note if any were suppressed. */
void jt_bad_summary(const struct jt_input_stats *st, const char *name);

/* Progress on stderr for long inputs. */
struct jt_progress {
	int on;
	int tty; /* redraw in place with \r */
	double last; /* time of the last update, s */
	const char *what;
	int shown;
	FILE *fp; /* NULL: stderr */
};
/*
 * Progress shares the terminal with messages: before printing one, call
 * jt_progress_clear() so it does not land on top of the progress line (the
 * next update redraws it). jt_bad_line() and jt_diagf() do this.
 */
void jt_progress_clear(void);
/* printf to jt_diag (stderr), after clearing a progress line. */
void jt_diagf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void jt_progress_init(struct jt_progress *p, int on, int tty);
/* done of total (total 0: a count; both 0: just the stage name). */
void jt_progress(struct jt_progress *p, const char *what,
		 unsigned long long done, unsigned long long total);
void jt_progress_end(struct jt_progress *p);

/* Median of v[0..n-1] (n > 0); reorders v. */
double jt_median(double *v, size_t n);

/* Size of a regular file behind fp, else 0 (pipes: progress by count). */
unsigned long long jt_file_size(FILE *fp);

/* ---- recorded samples (joulesctl record) ---- */

/* CSV column names of the features, in enum jl_feature order. */
extern const char *const jt_feature_cols[JT_NF];

/*
 * Largest plausible rate of each feature, per ns of the interval: a value
 * above it is a wrapped or corrupt counter, and one such row would poison a
 * least-squares fit, so it is a bad line. Sized for 8192 CPUs at 10 GHz.
 */
extern const double jt_feature_max_rate[JT_NF];

/* Rows may overlap their predecessor by this much (clock slew), not more. */
#define JT_OVERLAP_TOL_NS 1000000LL
/*
 * A running task's runtime (se.sum_exec_runtime) advances at scheduler
 * ticks: one tick at HZ=100, the coarsest kernel tick, is how far an
 * interval's cpu_ns may run past its length on each CPU.
 */
#define JT_TICK_NS_MAX 10000000.0

struct jt_sample {
	int64_t end_ns; /* CLOCK_REALTIME at the end of the interval */
	int64_t mono_ns; /* CLOCK_MONOTONIC there, -1: not recorded */
	double interval_ns;
	double f[JT_NF]; /* feature deltas; 0 where absent */
	double energy_uj; /* the module's recorded energy, -1 if empty */
	double freq_mhz; /* recorded effective clock frequency, 0: unknown */
	unsigned long line; /* in the samples file */
};

struct jt_samples {
	struct jt_sample *s;
	size_t n, cap;
	unsigned int present; /* bit (1 << jl_feature): column has values */
	unsigned int decided; /* presence fixed by the first good row */
	unsigned long n_rapl, n_model, n_meter, n_none;
	/* Node facts of `joulesctl record` ("# node: cpus=N packages=P ..."). */
	unsigned int cpus, packages; /* 0: not recorded */
	char sources[128];
	struct jt_input_stats st;
};

/*
 * Read a samples CSV. Bad lines are reported and counted in out->st; a
 * missing header or required column, or a read error, returns a negative
 * errno after printing why. Appends to *out (zero it first).
 */
int jt_read_samples(FILE *fp, const char *name, struct jt_samples *out,
		    struct jt_progress *pr);
void jt_samples_free(struct jt_samples *s);

/* ---- meter readings ---- */

/* Above this a reading is not one node's power: a bad line. */
#define JT_MAX_WATTS 1e6

/* What a meter's reading means. */
enum jt_meter_sem {
	JT_METER_INSTANT, /* the power at the reading's time */
	JT_METER_AVERAGE, /* the mean power since the previous reading */
};

struct jt_meter {
	int64_t *t; /* ns since the epoch, strictly increasing */
	double *w; /* watts */
	unsigned long *line; /* of each reading in its file (NULL: unknown) */
	size_t n, cap;
	/* as asked; AUTO is resolved on the first line */
	enum parse_ts_unit unit;
	int ts_flags; /* PARSE_TS_LOCALTIME */
	int kind_set;
	enum parse_ts_kind kind; /* kind of the first numeric timestamp */
	enum jt_meter_sem sem; /* set after jt_meter_init(); default instant */
	struct jt_input_stats st;
};

/* Set up an empty meter series with the timestamp options. */
void jt_meter_init(struct jt_meter *m, enum parse_ts_unit unit, int ts_flags);
/* Read "timestamp,watts" lines (header line optional). */
int jt_read_meter(FILE *fp, const char *name, struct jt_meter *m,
		  struct jt_progress *pr);
/*
 * Run cmd with /bin/sh -c in its own process group, its stdin /dev/null,
 * and read its stdout the same way, until EOF. Gives up when it writes
 * nothing for timeout_s seconds (0: never). The whole group is killed when
 * reading ends (EOF, error, timeout, m->st.stop_after) and when
 * joules-train is terminated by SIGTERM, SIGINT or SIGHUP meanwhile.
 */
int jt_read_meter_cmd(const char *cmd, struct jt_meter *m,
		      struct jt_progress *pr, double timeout_s);
void jt_meter_free(struct jt_meter *m);

/* ---- alignment ---- */

enum {
	JT_ALIGN_OK = 0,
	JT_ALIGN_UNCOVERED = 1,
	JT_ALIGN_GAP = 2,
	JT_ALIGN_BETWEEN = 3, /* instant: no reading inside the interval */
};

/*
 * Meter energy in uJ over [a, b] (ns, meter clock): the exact integral of
 * the piecewise-linear interpolation of the readings. Returns JT_ALIGN_OK,
 * JT_ALIGN_UNCOVERED (readings do not span [a, b]) or JT_ALIGN_GAP (two
 * consecutive readings bracketing part of [a, b] are more than max_gap_ns
 * apart).
 */
int jt_meter_energy(const struct jt_meter *m, int64_t a, int64_t b,
		    int64_t max_gap_ns, double *uj);

/* One interval to fit: a sample row, or rows summed into a meter period. */
struct jt_row {
	int64_t end_ns;
	double interval_ns;
	double f[JT_NF];
	double meter_uj; /* target */
	double module_uj; /* recorded energy_uj, -1 if none */
	/*
	 * Effective clock frequency, MHz (0: unknown): recorded, else from
	 * cycles per ns of CPU time (jt_rows_freq()); CPU-time weighted over
	 * the rows of a meter period.
	 */
	double freq_mhz;
	unsigned long line, last_line; /* sample rows it came from */
	size_t mlo, mhi; /* meter readings it used (indexes) */
};

struct jt_align_stats {
	size_t used;
	size_t uncovered; /* not covered by meter readings (or by rows) */
	size_t gap;
	size_t between; /* instant: rows without a reading inside */
	size_t rows_in; /* sample rows that went into the used intervals */
	int aggregated; /* average: rows were summed into meter periods */
	enum jt_meter_sem sem;
	double meter_period_ns; /* median time between readings */
	double row_ns; /* median sample interval */
};

/*
 * Pair the samples with the meter energy, by the meter's semantics (m->sem):
 *  - instant: a row's power is the mean of the linear interpolation between
 *    the readings inside it (one reading: that reading). Readings outside
 *    a row are other rows' load; a row without a reading inside is not used
 *    (counted in `between`).
 *  - average: reading k is the mean over (t[k-1], t[k]]. If the median
 *    period is at least half the median row, the rows are summed into the
 *    meter's periods (a row straddling a reading pro rata), and each period
 *    with its rows is one interval; a period not fully covered by rows is
 *    not used. Otherwise each row's energy is the exact integral of the
 *    readings' step function.
 * Rows touching a span between readings longer than max_gap_ns (> 0) are
 * dropped. offset_ns is added to meter timestamps. Rows come out sorted by
 * end time.
 */
int jt_align(const struct jt_samples *s, const struct jt_meter *m,
	     int64_t offset_ns, int64_t max_gap_ns, struct jt_row **rows,
	     size_t *nrows, struct jt_align_stats *st);

/*
 * jt_align(), giving the samples' memory back as they are aligned: the
 * samples, the readings and the rows are never all whole at once (the
 * peak of a long recording). s->s is freed and s->n is 0 on return, its
 * other fields (present, cpus, ...) kept.
 */
int jt_align_consume(struct jt_samples *s, const struct jt_meter *m,
		     int64_t offset_ns, int64_t max_gap_ns,
		     struct jt_row **rows, size_t *nrows,
		     struct jt_align_stats *st);

/* ---- model fitting ---- */

/* Design-matrix column of coefficient i (jl_coef order): idle is column 0. */
#define JT_COL_IDLE 0
#define JT_NCOL (1 + JT_NF)
unsigned int jt_coef_col(unsigned int coef);
/* Module units per fitted uJ-per-unit: 1e9 for the uW terms, 1e6 for pJ. */
static inline double jt_coef_unit(unsigned int coef)
{
	/* uJ/ns -> uW is 1e9; uJ per event -> pJ is 1e6. */
	return coef == 0 || coef == JL_NR_FEATURES ? 1e9 : 1e6;
}

struct jt_model {
	struct jl_coef coef; /* what is written */
	double raw[JL_NR_COEF]; /* fitted, module units, unrounded */
	unsigned int fitted; /* bit per coefficient index that was fitted */
	/* OLS: came out negative, refitted without (0); the first value */
	unsigned int dropped;
	double negative[JL_NR_COEF];
	double rcond; /* reciprocal condition number of the fit */
	int have_se;
	double se[JL_NR_COEF]; /* standard error, module units (bootstrap) */
	double vif[JL_NR_COEF]; /* variance inflation (see fit_result) */
	/* Coefficients the data cannot separate from each other. */
	unsigned int collinear;
};

/*
 * Coefficients are named as inseparable when one's variance inflation
 * exceeds JT_COLLINEAR_VIF (others then nearly reproduce its feature):
 * those, and all that take part in the least determined direction of the
 * data (|component| >= JT_COLLINEAR_WEIGHT), which trade off against it.
 */
#define JT_COLLINEAR_VIF 100.0
#define JT_COLLINEAR_WEIGHT 0.2

/* Predicted energy (uJ) of a row under coefficients c (double arithmetic). */
double jt_predict_uj(const struct jl_coef *c, const struct jt_row *r);

/* A set's coefficients as doubles, features then idle: read once, not a row. */
void jt_coef_doubles(const struct jl_coef *c, double *k);

/* jt_predict_uj() from jt_coef_doubles()'s k: the same arithmetic. */
static inline double jt_predict_k(const double *k, const struct jt_row *r)
{
	double e = k[JT_NF] * r->interval_ns * 1e-9;
	unsigned int i;

	for (i = 0; i < JT_NF; i++)
		e += k[i] * r->f[i] / jt_coef_unit(i);
	return e;
}

/*
 * Fit coefficients over the blocks of b, each weighted by mult[] (NULL:
 * all; see fit_solve_opts). OLS refits without negative coefficients.
 */
int jt_fit_model(const struct fit_blocks *b, const double *mult,
		 enum fit_method method, struct jt_model *m);

/* Model-evaluation metrics in power terms (W per interval). */
struct jt_eval {
	struct fit_metrics model;
	struct fit_metrics base;
};

struct jt_train_opts {
	enum fit_method method;
	unsigned int folds; /* 0/1: no cross-validation */
	size_t min_samples;
	int no_robust; /* plain least squares (--robust off) */
	int no_se; /* no bootstrap standard errors (fits nobody reads them of) */
	/*
	 * JT_SKIP_*: parts of the report nobody reads of this fit (the
	 * nested headline's runs, the bands' fits), left out (zero).
	 */
	unsigned int skip;
	/*
	 * Ridge penalty (--ridge; 0: none): every fit minimises
	 * ||X b - y||^2 + ridge * (tr(X'X) / p) ||b||^2 on columns scaled to
	 * unit RMS, which splits collinear coefficients evenly.
	 */
	double ridge;
	/* Floor of the robust scale, W: the meter's resolution (0: none). */
	double scale_floor_w;
	struct jt_progress *pr;
	double *weights; /* non-NULL: gets each row's robust weight (0: rejected) */
};

#define JT_SKIP_INSAMPLE 0x1 /* the in-sample metrics */
#define JT_SKIP_CV 0x2 /* the cross-validation folds' fits and metrics */
#define JT_SKIP_SUMMARY 0x4 /* outliers, meter/module ratio, median power */

/* The meter's lag behind the activity (jt_estimate_lag()). */
struct jt_lag {
	int ok; /* 0: too little activity or data to tell */
	double lag_s; /* the meter trails the activity by this */
	double r; /* correlation at the peak */
	double step_s; /* the correlation's grid */
};

/* The headline: nested cross-validation (jt_nested_cv()). */
struct jt_nested {
	int done; /* 0: no folds (--folds 0 or 1) */
	unsigned int folds;
	/* Over every held-out row: the written model and the CPU-only one. */
	struct jt_eval ev;
	/* The written model's MAPE per outer fold: range and standard deviation. */
	double fold_mape_min, fold_mape_max, fold_mape_sd;
	unsigned int banded_folds; /* outer folds whose procedure wrote bands */
};

/* An interval the robust fit rejected, for the report. */
struct jt_outlier {
	unsigned long line, last_line; /* sample rows */
	size_t mlo, mhi; /* meter readings (indexes) */
	double measured_w, predicted_w;
	double z; /* residual in units of the robust scale */
};
#define JT_OUTLIERS_SHOWN 20

/* --folds at most (the spread across folds is kept per fold). */
#define JT_MAX_FOLDS 1000

/* Block bootstrap for the standard errors. */
#define JT_BOOT_REPS 200
#define JT_BOOT_BLOCKS 48 /* about this many contiguous time blocks */
#define JT_BOOT_MIN_BLOCKS 10

struct jt_report {
	const char *samples_name; /* for the summary */
	const char *pdu_name;
	struct jt_align_stats al; /* how the training rows were aligned */
	double max_gap_s;
	struct jt_align_stats val_al;
	enum fit_method method;
	size_t n;
	unsigned int folds;
	unsigned int present; /* features present in the samples */
	unsigned int zero; /* present but 0 in every row */
	struct jt_model model; /* final: all rows */
	struct jt_model base; /* CPU-time-only baseline: idle + cpu_time */
	struct jt_eval insample;
	int have_cv;
	struct jt_eval cv;
	int have_val;
	size_t val_n;
	struct jt_eval val;
	struct jt_nested nested; /* the headline, when done */
	/* Alignment: the measured lag and what was done about it. */
	int have_lag;
	struct jt_lag lag;
	const char *lag_note; /* corrected / the given offset / warning */
	double offset_s; /* --clock-offset used */
	unsigned int clock_steps;
	double step_s;
	unsigned long step_line;
	double meter_over_module; /* sum meter / sum recorded energy_uj, 0 if none */
	/* robust fitting */
	int robust; /* 1: bisquare weights used */
	const char *robust_note; /* why not, if asked for and not done */
	double robust_scale_w;
	unsigned int robust_iter;
	int robust_converged;
	size_t n_rejected, n_down;
	size_t n_outliers_kept;
	struct jt_outlier outliers[JT_OUTLIERS_SHOWN];
	const unsigned long *meter_lines; /* to name outliers' readings */
	/* No meter_lines: reading k is on line meter_line0 + k (0: unknown). */
	unsigned long meter_line0;
	unsigned int se_blocks; /* time blocks of the bootstrap, 0: none */
	double median_w; /* median measured power of the fitted intervals */
};

/*
 * Plausibility of a trained model, the one place that decides whether it
 * may be installed: 0, or -1 with the reason in why. A model fails when
 * all its coefficients are 0, when the headline metrics (validation, else
 * cross-validation, else in-sample) are not finite, when its MAPE is more
 * than JT_WORSE_MARGIN (relative) and JT_WORSE_SLACK (percentage points,
 * for exact data) worse than the CPU-time-only baseline's on them,
 * when its idle power is below JT_IDLE_MIN_W or above the median measured
 * power, or when more than JT_MAX_REJECTED of the intervals were rejected
 * as outliers.
 */
#define JT_WORSE_MARGIN 0.10
#define JT_WORSE_SLACK 0.05
#define JT_IDLE_MIN_W 0.1
#define JT_MAX_REJECTED 0.20
int jt_model_check(const struct jt_report *rep, char *why, size_t len);

/*
 * Fit the model and the baseline on rows (robustly unless o->no_robust:
 * both with the model's row weights), cross-validate with contiguous
 * folds, estimate standard errors by a block bootstrap over time, fill
 * rep. Rejected rows are left out of the metrics. If cv_model/cv_base are
 * non-NULL they receive the held-out (or, without CV, in-sample) predicted
 * power in W per row. Returns 0 or a negative errno after printing why to
 * jt_diag (naming rep->samples_name and the line for a bad row).
 */
int jt_train(const struct jt_row *rows, size_t n, unsigned int present,
	     const struct jt_train_opts *o, struct jt_report *rep,
	     double *cv_model, double *cv_base);

/* Evaluate a model and the baseline on other rows (validation set). */
void jt_evaluate(const struct jt_row *rows, size_t n,
		 const struct jl_coef *model, const struct jl_coef *base,
		 struct jt_eval *ev);

/* Measured power of a row, W. */
static inline double jt_row_watts(const struct jt_row *r)
{
	return r->meter_uj / r->interval_ns * 1e3;
}

/*
 * Write the '#' summary lines and, if with_coef, the coefficient line
 * (with_coef 2: only the coefficient lines, after a report).
 */
int jt_write_report(FILE *fp, const struct jt_report *rep, int with_coef);

/* ---- frequency bands ---- */

/*
 * The write rule: a banded model replaces the single set only when its
 * held-out MAPE (the same contiguous folds, the same intervals) is lower
 * than the single model's by JT_BAND_MARGIN (relative) and JT_BAND_SLACK
 * (percentage points), and every band passes jt_model_check(). Each band
 * needs JT_BAND_MIN_SHARE of the intervals, --min-samples and ten per
 * coefficient; a band
 * more is kept only if it gains JT_BAND_MARGIN again. Edges are searched
 * among JT_BAND_BINS quantiles of the observed frequencies.
 */
#define JT_BAND_MARGIN 0.05
#define JT_BAND_SLACK 0.01
#define JT_BAND_MIN_SHARE 0.05
#define JT_BAND_BINS 40

struct jt_band_opts {
	unsigned int max_bands; /* 1: single only; up to JL_MAX_BANDS */
	int exact; /* max_bands exactly (--bands N), else up to it (auto) */
	unsigned int nedges; /* --band-edges: these edges, nedges + 1 bands */
	uint64_t edges[JL_MAX_BANDS - 1];
};

struct jt_band_result {
	int tried; /* banded candidates were evaluated */
	int banded; /* 1: write the banded model, 0: the single set */
	char why[384]; /* the decision, in words */
	size_t n_freq; /* intervals with a known frequency */
	unsigned int candidates; /* edge sets evaluated */
	struct jl_bands model; /* what to write (nr 1: the single set) */
	/* The best banded candidate (nb >= 2 when tried) */
	unsigned int nb;
	uint64_t upper_mhz[JL_MAX_BANDS];
	size_t nrows[JL_MAX_BANDS];
	struct jt_report band[JL_MAX_BANDS]; /* each band's own fit */
	int band_ok[JL_MAX_BANDS];
	char band_why[JL_MAX_BANDS]
		     [256]; /* jt_model_check() of a failed band */
	/* Held-out power metrics over the same intervals (both accepted). */
	struct fit_metrics cv_single, cv_banded, cv_base;
};

/*
 * Effective frequency of every row into mhz[] (MHz): the recorded one,
 * else cycles per ns of CPU time (jl_freq_mhz()) when cycles are present;
 * a row without either (no CPU time) keeps the previous row's, as the
 * module keeps the band in force then (0 before any). Returns the number
 * of rows whose own frequency is known.
 */
size_t jt_rows_freq(const struct jt_row *rows, size_t n, unsigned int present,
		    double *mhz);

/*
 * Fit and judge a banded model against the single one (rep, from
 * jt_train() on the same rows with o->weights = w_single). Fills res;
 * res->model is what to write. Returns 0 (res->banded says which) or a
 * negative errno (out of memory, a failed fit) after printing why. The
 * rows are regrouped by band in place during the bands' fits and put
 * back in their order before it returns.
 */
int jt_train_bands(struct jt_row *rows, size_t n, unsigned int present,
		   const struct jt_train_opts *o, const struct jt_band_opts *bo,
		   const struct jt_report *rep, const double *w_single,
		   struct jt_band_result *res);

/*
 * The report of a banded fit ('#' lines); with_model also writes the
 * model: the jl_bands text when banded, else the coefficient line.
 */
int jt_write_bands_report(FILE *fp, const struct jt_report *rep,
			  const struct jt_band_result *br, int with_model);

/* ---- models that cannot be absurd ---- */

/* Defaults of the bounds every written model is held to (issue 27). */
#define JT_MAX_NODE_W 15000.0 /* --max-node-watts */
#define JT_MAX_IDLE_W 15000.0 /* --max-idle-watts */
#define JT_MAX_CPU_W 50.0 /* --max-cpu-watts: per busy CPU */
/* Cycles per ns of CPU time above this are not cycles (10 GHz). */
#define JT_MAX_GHZ 10.0
/* A collinear coefficient known to within this (relative SE) is resolved. */
#define JT_COLLINEAR_SE 0.25
/* Intervals per fitted coefficient, at least. */
#define JT_MIN_PER_COEF 2

struct jt_limits {
	double node_w, idle_w, cpu_w;
	int ridge; /* --ridge given: a collinear fit is accepted */
};

/*
 * Refuse an absurd model (br->model, every band), with the reason in why
 * (also naming what the meter probably is): idle power, power per busy
 * CPU or the node's power (measured median, or predicted for any row)
 * above the limits; more busy CPUs in a row than the node has (s->cpus);
 * coefficients the data cannot separate without --ridge. Returns 0 or -1.
 */
int jt_refuse(const struct jt_report *rep, const struct jt_band_result *br,
	      const struct jt_row *rows, size_t n, unsigned int cpus,
	      const struct jt_limits *lim, char *why, size_t len);

/*
 * What the meter's readings are, from the data: -1 with the reason when
 * they are a cumulative energy counter (they rise in nearly every step),
 * else 0. *res_w gets the resolution: the smallest step between distinct
 * readings.
 */
int jt_meter_kind(const struct jt_meter *m, double *res_w, char *why,
		  size_t len);

/* ---- alignment measured, not assumed ---- */

/* Lags searched, and the largest corrected (beyond: refused). */
#define JT_LAG_SEARCH_S 15.0
#define JT_LAG_MAX_S 10.0
/* An explicit --clock-offset the data disagree with by more: a warning. */
#define JT_LAG_WARN_S 0.5
/* A jump of realtime_ns - monotonic_ns above this is a clock step. */
#define JT_STEP_NS 100000000LL

/*
 * The meter's lag behind the node's activity (busy CPUs), by the peak of
 * the cross-correlation of both on a common grid over +-JT_LAG_SEARCH_S
 * (refined by a parabola through the peak), with offset_ns applied. A
 * positive lag means the meter's timestamps are late: --clock-offset
 * -lag corrects it.
 */
void jt_estimate_lag(const struct jt_samples *s, const struct jt_meter *m,
		     int64_t offset_ns, struct jt_lag *out);

/*
 * A step of realtime_ns that monotonic_ns does not show (NTP, a manual
 * date): the rows after it are moved back onto the first rows' timeline
 * (realtime - monotonic of the first row) so the alignment stays
 * continuous. Returns the number of steps; *first_line and *step_s name
 * the first.
 */
unsigned int jt_unstep(struct jt_samples *s, unsigned long *first_line,
		       double *step_s);

/* ---- the headline: nested cross-validation ---- */

/*
 * What is written, from rows: jt_train() (robust weights, single set,
 * baseline) then jt_train_bands() (edges and band count by its inner
 * folds, the write rule): br->model is the model. o->weights, if set, gets
 * the single fit's row weights; cv_model/cv_base as for jt_train(). The rows
 * are permuted meanwhile and put back.
 */
int jt_fit_written(struct jt_row *rows, size_t n, unsigned int present,
		   const struct jt_train_opts *o, const struct jt_band_opts *bo,
		   struct jt_report *rep, struct jt_band_result *br,
		   double *cv_model, double *cv_base);

/* Predicted power (W) of a row under a banded model at mhz (0: band 1). */
double jt_predict_bands_w(const struct jl_bands *b, const struct jt_row *r,
			  double mhz);

/* A banded model's sets as doubles, read once for many rows. */
struct jt_bands_k {
	const struct jl_bands *b;
	double k[JL_MAX_BANDS][JT_NF + 1];
};
void jt_bands_doubles(const struct jl_bands *b, struct jt_bands_k *bk);

/* jt_predict_bands_w() from jt_bands_doubles(): the same arithmetic. */
static inline double jt_predict_bands_k(const struct jt_bands_k *bk,
					const struct jt_row *r, double mhz)
{
	unsigned int band = mhz > 0 ? jl_band_pick(bk->b, (jl_u64)mhz) : 0;

	return jt_predict_k(bk->k[band], r) * 1e3 / r->interval_ns;
}

/*
 * Nested K-fold cross-validation (K = o->folds; fold k is rows
 * [fit_fold_start(n, k, K), fit_fold_start(n, k + 1, K))): for each fold,
 * jt_fit_written() on the other rows (in order, with o->folds inner
 * folds), and its model (band by jt_rows_freq() of all rows) and its
 * CPU-only baseline predict every row of the fold. pm/pb (may be NULL) get
 * those predictions, W. The rows are permuted during the fits and put
 * back. Returns 0 or a negative errno after saying why.
 */
int jt_nested_cv(struct jt_row *rows, size_t n, unsigned int present,
		 const struct jt_train_opts *o, const struct jt_band_opts *bo,
		 struct jt_nested *res, double *pm, double *pb);

/* ---- --follow ---- */

/* A reading off the window's median by this factor (or <= 0 W) is a glitch. */
#define JT_GLITCH_RATIO 5.0

struct jt_follow_opts {
	const char *samples; /* CSV file or "-"; NULL: the module's netlink */
	const char *pdu, *pdu_cmd; /* one of them */
	enum parse_ts_unit unit;
	int ts_flags;
	enum jt_meter_sem sem;
	int64_t offset_ns, max_gap_ns, pdu_timeout_ns;
	int64_t window_ns, refit_ns;
	double holdout; /* newest share of the window kept out of the fit */
	double margin; /* relative held-out MAPE gain needed to replace */
	struct jt_train_opts train;
	struct jt_band_opts bands;
	struct jt_limits lim;
	const char *sysfs; /* install there (--apply), or */
	const char *output; /* replace this file atomically */
	const char *log; /* decision log (NULL: stderr) */
};

/*
 * Run until the samples end (or SIGTERM/SIGINT). Returns 0, or a negative
 * errno when an input could not be opened or read.
 */
int jt_follow(const struct jt_follow_opts *o);

/* ---- output targets ---- */

/*
 * Write the set to DIR/model/coefficients in one write(2), checking that
 * DIR/model/generation changed. On error returns a negative errno and puts
 * a human-readable reason into err.
 */
int jt_apply(const char *sysfs_dir, const struct jl_coef *c, char *err,
	     size_t errlen);
/* A banded model to DIR/model/bands the same way (one band: jt_apply()). */
int jt_apply_bands(const char *sysfs_dir, const struct jl_bands *b, char *err,
		   size_t errlen);

/*
 * The model in force in the module at DIR: 1 and *b, 0 when none is set
 * (generation 0), or -errno with the reason in err.
 */
int jt_read_model(const char *dir, struct jl_bands *b, char *err,
		  size_t errlen);

/* Full path of prog in $PATH into buf; 0 if found, -ENOENT if not. */
int jt_which(const char *prog, char *buf, size_t len);

/*
 * Predicted-vs-measured scatter plot via gnuplot; format from the file
 * extension (.svg or .png). Returns 0 or a negative errno with err set.
 */
int jt_plot(const char *file, const double *measured, const double *model,
	    const double *base, size_t n, const char *title, char *err,
	    size_t errlen);

#endif /* JOULES_TRAIN_H */
