// SPDX-License-Identifier: GPL-2.0
/*
 * joules-train: learn the joules module's model coefficients from recorded
 * samples (joulesctl record) and an external power meter.
 *
 * Exit status: 0 success, 1 bad input data or failed fit/output, 2 usage
 * error, 3 --apply failed or refused an implausible model, 4 the result was
 * written but the model is implausible (see jt_model_check()).
 */
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "train.h"

#define EXIT_DATA 1
#define EXIT_USAGE 2
#define EXIT_APPLY 3
#define EXIT_IMPLAUSIBLE 4

static const char usage_text[] =
	"Usage: joules-train [OPTION]... -s SAMPLES.csv {-p PDU.csv | -c COMMAND}\n"
	"       joules-train --follow [OPTION]... [-s SAMPLES.csv] {-p PDU.csv | -c COMMAND}\n"
	"                    {--apply | -o FILE}\n"
	"Fit the joules module's energy model to an external power meter.\n"
	"\n"
	"Inputs:\n"
	"  -s, --samples FILE          samples recorded by 'joulesctl record' ('-': stdin)\n"
	"  -p, --pdu FILE              meter readings, CSV timestamp,watts ('-': stdin)\n"
	"  -c, --pdu-cmd COMMAND       run COMMAND with /bin/sh -c, read readings from its\n"
	"                              stdout until EOF\n"
	"      --pdu-timeout SECONDS   stop COMMAND when it writes nothing for SECONDS\n"
	"                              (default 60; 0: wait for ever)\n"
	"      --pdu-ms                numeric meter timestamps are Unix milliseconds\n"
	"                              (default: seconds, milliseconds if >= 1e11)\n"
	"      --pdu-localtime         ISO 8601 times without a zone are local (default UTC)\n"
	"      --meter instant|average a reading is the power at its time (default), or\n"
	"                              the mean since the previous reading (most PDUs)\n"
	"      --clock-offset SECONDS  add SECONDS to meter timestamps (default: the\n"
	"                              lag measured by cross-correlation)\n"
	"      --max-gap SECONDS       drop intervals spanning a larger meter gap (default 5;\n"
	"                              0: no limit)\n"
	"      --max-bad N             fail if more than N input lines are bad (default 0);\n"
	"                              reading stops there\n"
	"      --min-samples N         fail with fewer aligned intervals (default 20)\n"
	"Fit:\n"
	"  -m, --method nnls|ols       non-negative least squares (default) or OLS (a\n"
	"                              coefficient that comes out negative is dropped\n"
	"                              and the rest refitted)\n"
	"      --robust on|off         reject outlying intervals (bisquare weights from\n"
	"                              an LTS start; default on) or plain least squares\n"
	"  -k, --folds K               contiguous K-fold cross-validation (default 5;\n"
	"                              0 or 1: none)\n"
	"      --validate-samples FILE held-out samples to report accuracy on\n"
	"      --validate-pdu FILE     meter readings for --validate-samples\n"
	"      --bands auto|1|2|3|4    coefficient sets per clock-frequency band: auto\n"
	"                              (default) chooses up to 4; written only if better\n"
	"                              on held-out data than one set, every band plausible\n"
	"      --band-edges MHZ[,MHZ..] fixed band edges instead of searching them\n"
	"      --ridge LAMBDA          ridge penalty: accept collinear coefficients,\n"
	"                              split evenly (refused without it)\n"
	"Bounds (a model beyond them is refused, never written):\n"
	"      --max-node-watts W      node power (default 15000)\n"
	"      --max-idle-watts W      idle power (default 15000)\n"
	"      --max-cpu-watts W       power per busy CPU (default 50)\n"
	"Follow (recalibrate continuously):\n"
	"      --follow                read samples as they come (the module's netlink\n"
	"                              samples without -s; -s FILE or - streams CSV) and\n"
	"                              meter readings (-c, or -p FILE or -), refit every\n"
	"                              --refit on the last --window; install a new set\n"
	"                              only if better on the newest, held-out part of the\n"
	"                              window by --margin, plausible, the meter healthy\n"
	"      --window SECONDS        sliding window (default 3600)\n"
	"      --refit SECONDS         refit period (default 300)\n"
	"      --holdout FRACTION      newest part of the window judged, not fitted (0.2)\n"
	"      --margin PCT            held-out MAPE must be PCT% lower (default 5)\n"
	"      --log FILE              decision log, one line per refit (default stderr)\n"
	"Output:\n"
	"  -o, --output FILE           write the coefficients there (default stdout)\n"
	"      --apply                 install them in the running module\n"
	"      --sysfs DIR             module sysfs directory (default /sys/kernel/joules)\n"
	"      --plot FILE.svg|.png    predicted-vs-measured plot (needs gnuplot)\n"
	"      --progress              show progress even if stderr is not a terminal\n"
	"  -q, --quiet                 no summary on stdout when writing to -o\n"
	"  -h, --help                  this help\n"
	"  -V, --version               version\n"
	"\n"
	"Output: '#' summary lines, then one line\n"
	"  cpu_time_uw cycles_pj instructions_pj cache_miss_pj disk_byte_pj\n"
	"  net_tx_byte_pj net_rx_byte_pj pagecache_byte_pj idle_uw\n"
	"or, for a banded model (model/bands), one such line per band, each led by\n"
	"its upper edge in MHz ('max' for the last).\n"
	"Exit status: 0 ok, 1 bad data, a refused model or failed fit, 2 usage,\n"
	"3 --apply failed or\n"
	"refused an implausible model, 4 written but implausible (see the warning).\n"
	"--follow: 0 at the end of the samples or on SIGTERM/SIGINT, 1 an input\n"
	"failed, 2 usage.\n";

struct opts {
	const char *samples, *pdu, *pdu_cmd, *val_samples, *val_pdu;
	const char *output, *sysfs, *plot;
	enum parse_ts_unit unit;
	enum jt_meter_sem sem;
	int ts_flags;
	int64_t offset_ns, max_gap_ns, pdu_timeout_ns;
	unsigned long max_bad;
	size_t min_samples;
	enum fit_method method;
	unsigned int folds;
	bool apply, progress, quiet, no_robust, pdu_ms, pdu_local, version;
	struct jt_band_opts bands;
	bool follow;
	int64_t window_ns, refit_ns;
	double holdout, margin;
	const char *log;
	struct jt_limits lim;
	double ridge;
	bool offset_set, meter_set; /* given explicitly: they win */
};

/* A usage error naming the option and its argument. */
static int bad(const char *opt, const char *arg, const char *why)
{
	return cli_usage(NULL, "%s '%s': %s", opt, arg, why);
}

static int num_arg(const char *opt, const char *s, unsigned long max,
		   unsigned long *v)
{
	const char *why = NULL;
	uint64_t u;

	if (parse_u64(s, &u, &why) || u > max)
		return bad(opt, s, why ? why : "too large");
	*v = (unsigned long)u;
	return 0;
}

static int secs_arg(const char *opt, const char *s, int allow_neg, int64_t *v)
{
	const char *why;

	if (parse_seconds_ns(s, v, &why))
		return bad(opt, s, why);
	if (!allow_neg && *v < 0)
		return bad(opt, s, "must not be negative");
	return 0;
}

static int frac_arg(const char *opt, const char *s, double lo, double hi,
		    double *v)
{
	const char *why;

	if (parse_double(s, v, &why))
		return bad(opt, s, why);
	if (!(*v >= lo && *v <= hi))
		return cli_usage(NULL, "%s '%s': want %g..%g", opt, s, lo, hi);
	return 0;
}

/* One CLI_FUNC per option that needs more than the table's kinds. */
#define SECS_OPT(fn, name, neg)                                    \
	static int fn(void *dst, const char *cmd, const char *arg) \
	{                                                          \
		(void)cmd;                                         \
		return secs_arg(name, arg, neg, dst);              \
	}
SECS_OPT(opt_max_gap, "--max-gap", 0)
SECS_OPT(opt_window, "--window", 0)
SECS_OPT(opt_refit, "--refit", 0)

static int opt_offset(void *dst, const char *cmd, const char *arg)
{
	struct opts *o = dst;

	(void)cmd;
	o->offset_set = true;
	return secs_arg("--clock-offset", arg, 1, &o->offset_ns);
}

static int opt_pdu_timeout(void *dst, const char *cmd, const char *arg)
{
	int64_t *v = dst;
	int rc = secs_arg("--pdu-timeout", arg, 0, v);

	(void)cmd;
	if (!rc && *v > 86400000000000LL)
		rc = bad("--pdu-timeout", arg, "more than a day");
	return rc;
}

static int opt_max_bad(void *dst, const char *cmd, const char *arg)
{
	(void)cmd;
	return num_arg("--max-bad", arg, ULONG_MAX, dst);
}

static int opt_min_samples(void *dst, const char *cmd, const char *arg)
{
	unsigned long v = 0;
	int rc = num_arg("--min-samples", arg, ULONG_MAX, &v);

	(void)cmd;
	*(size_t *)dst = v;
	return rc;
}

static int opt_folds(void *dst, const char *cmd, const char *arg)
{
	unsigned long v = 0;
	int rc = num_arg("--folds", arg, 1000, &v);

	(void)cmd;
	*(unsigned int *)dst = (unsigned int)v;
	return rc;
}

static int opt_meter(void *dst, const char *cmd, const char *arg)
{
	struct opts *o = dst;
	enum jt_meter_sem *sem = &o->sem;

	(void)cmd;
	o->meter_set = true;
	if (!strcmp(arg, "instant"))
		*sem = JT_METER_INSTANT;
	else if (!strcmp(arg, "average"))
		*sem = JT_METER_AVERAGE;
	else
		return bad("--meter", arg, "want instant or average");
	return 0;
}

static int opt_method(void *dst, const char *cmd, const char *arg)
{
	enum fit_method *m = dst;

	(void)cmd;
	if (!strcmp(arg, "ols"))
		*m = FIT_OLS;
	else if (!strcmp(arg, "nnls"))
		*m = FIT_NNLS;
	else
		return bad("--method", arg, "want ols or nnls");
	return 0;
}

static int opt_robust(void *dst, const char *cmd, const char *arg)
{
	bool *no_robust = dst;

	(void)cmd;
	if (!strcmp(arg, "on"))
		*no_robust = false;
	else if (!strcmp(arg, "off"))
		*no_robust = true;
	else
		return bad("--robust", arg, "want on or off");
	return 0;
}

static int opt_bands(void *dst, const char *cmd, const char *arg)
{
	struct jt_band_opts *b = dst;
	unsigned long v = 0;
	int rc;

	(void)cmd;
	if (!strcmp(arg, "auto")) {
		b->max_bands = JL_MAX_BANDS;
		b->exact = 0;
		return 0;
	}
	rc = num_arg("--bands", arg, JL_MAX_BANDS, &v);
	if (!rc && !v)
		rc = cli_usage(NULL, "--bands '%s': want auto or 1..%d", arg,
			       JL_MAX_BANDS);
	b->max_bands = (unsigned int)v;
	b->exact = 1;
	return rc;
}

static int opt_holdout(void *dst, const char *cmd, const char *arg)
{
	(void)cmd;
	return frac_arg("--holdout", arg, 0.01, 0.9, dst);
}

static int opt_margin(void *dst, const char *cmd, const char *arg)
{
	double *v = dst;
	int rc = frac_arg("--margin", arg, 0, 100, v);

	(void)cmd;
	*v /= 100;
	return rc;
}

static int opt_watts(void *dst, const char *cmd, const char *arg)
{
	(void)cmd;
	return frac_arg("--max-*-watts", arg, 1e-3, 1e9, dst);
}

static int opt_ridge(void *dst, const char *cmd, const char *arg)
{
	(void)cmd;
	return frac_arg("--ridge", arg, 1e-12, 1e3, dst);
}

/* "MHZ,MHZ,..": ascending upper edges, at most JL_MAX_BANDS - 1. */
static int opt_band_edges(void *dst, const char *cmd, const char *arg)
{
	struct jt_band_opts *b = dst;
	char buf[256], *tok, *save = NULL;
	unsigned long v;

	(void)cmd;
	if (snprintf(buf, sizeof(buf), "%s", arg) >= (int)sizeof(buf))
		return bad("--band-edges", arg, "too long");
	b->nedges = 0;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (num_arg("--band-edges", tok, JL_MHZ_MAX, &v))
			return CLI_USAGE;
		if (b->nedges == JL_MAX_BANDS - 1)
			return cli_usage(NULL,
					 "--band-edges '%s': at most %d edges",
					 arg, JL_MAX_BANDS - 1);
		if (!v || (b->nedges && v <= b->edges[b->nedges - 1]))
			return bad("--band-edges", arg,
				   "want ascending MHz above 0");
		b->edges[b->nedges++] = v;
	}
	if (!b->nedges)
		return bad("--band-edges", arg, "no edge");
	return 0;
}

static void help(FILE *fp)
{
	fputs(usage_text, fp);
}

enum {
	O_PDU_MS = 256,
	O_PDU_LOCAL,
	O_OFFSET,
	O_MAX_GAP,
	O_MAX_BAD,
	O_MIN_SAMPLES,
	O_VAL_SAMPLES,
	O_VAL_PDU,
	O_APPLY,
	O_SYSFS,
	O_PLOT,
	O_PROGRESS,
	O_PDU_TIMEOUT,
	O_METER,
	O_ROBUST,
	O_BANDS,
	O_BAND_EDGES,
	O_FOLLOW,
	O_WINDOW,
	O_REFIT,
	O_HOLDOUT,
	O_MARGIN,
	O_LOG,
	O_MAX_NODE_W,
	O_MAX_IDLE_W,
	O_MAX_CPU_W,
	O_RIDGE,
};

/* Options that only make sense together, or not at all. */
static int check_args(struct opts *o)
{
	if (o->follow) {
		if (!o->apply == !o->output)
			return cli_usage(NULL, "--follow needs exactly one of "
					       "--apply and -o FILE");
		if (o->refit_ns <= 0 || o->window_ns < o->refit_ns)
			return cli_usage(
				NULL, "--follow: want 0 < --refit <= --window");
		if (o->val_samples || o->plot)
			return cli_usage(NULL, "--follow takes no --validate-* "
					       "or --plot");
	} else if (!o->samples) {
		return cli_usage(NULL, "no samples given (-s FILE)");
	}
	if (o->bands.nedges && o->bands.exact &&
	    o->bands.max_bands != o->bands.nedges + 1)
		return cli_usage(NULL,
				 "--bands %u and %u --band-edges disagree",
				 o->bands.max_bands, o->bands.nedges);
	if (!!o->pdu + !!o->pdu_cmd != 1)
		return cli_usage(NULL,
				 "give exactly one of -p FILE and -c COMMAND");
	if (!o->val_samples != !o->val_pdu)
		return cli_usage(NULL, "--validate-samples and --validate-pdu "
				       "go together");
	if (o->samples && !strcmp(o->samples, "-") && o->pdu &&
	    !strcmp(o->pdu, "-"))
		return cli_usage(NULL, "samples and meter readings cannot both "
				       "come from stdin");
	if (o->val_samples &&
	    (!strcmp(o->val_samples, "-") || !strcmp(o->val_pdu, "-")))
		return cli_usage(NULL, "validation inputs must be files");
	return 0;
}

/* --plot: a known format, and gnuplot there before a long fit. */
static int check_plot(const char *plot)
{
	const char *dot = strrchr(plot, '.');
	char gp[4096];

	if (!dot || (strcasecmp(dot, ".svg") && strcasecmp(dot, ".png")))
		return cli_usage(NULL, "--plot '%s': must end in .svg or .png",
				 plot);
	if (jt_which("gnuplot", gp, sizeof(gp))) {
		cli_err("--plot needs gnuplot, which is not in PATH "
			"(Debian: apt-get install gnuplot-nox)");
		return EXIT_DATA;
	}
	return 0;
}

/* CLI_GO with *o filled in, or the status to exit with. */
/* Every option's default, before the command line. */
static void opts_defaults(struct opts *o)
{
	*o = (struct opts){
		.sysfs = "/sys/kernel/joules",
		.max_gap_ns = 5000000000LL,
		.pdu_timeout_ns = 60000000000LL,
		.min_samples = 20,
		.method = FIT_NNLS,
		.folds = 5,
		.bands = { .max_bands = JL_MAX_BANDS },
		.window_ns = 3600000000000LL,
		.refit_ns = 300000000000LL,
		.holdout = 0.2,
		.margin = 0.05,
		.lim = { .node_w = JT_MAX_NODE_W,
			 .idle_w = JT_MAX_IDLE_W,
			 .cpu_w = JT_MAX_CPU_W },
	};
}

/* What the options imply, then whether they go together: CLI_GO if so. */
static int opts_finish(struct opts *o)
{
	int rc;

	o->lim.ridge = o->ridge > 0;
	if (o->pdu_ms)
		o->unit = PARSE_TS_MS;
	if (o->pdu_local)
		o->ts_flags |= PARSE_TS_LOCALTIME;
	rc = check_args(o);
	if (!rc && o->plot)
		rc = check_plot(o->plot);
	return rc ? rc : CLI_GO;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	const struct cli_opt table[] = {
		CLI_OPT_STR("samples", 's', &o->samples),
		CLI_OPT_STR("pdu", 'p', &o->pdu),
		CLI_OPT_STR("pdu-cmd", 'c', &o->pdu_cmd),
		CLI_OPT_FUNC("pdu-timeout", O_PDU_TIMEOUT, opt_pdu_timeout,
			     &o->pdu_timeout_ns),
		CLI_OPT_FLAG("pdu-ms", O_PDU_MS, &o->pdu_ms),
		CLI_OPT_FLAG("pdu-localtime", O_PDU_LOCAL, &o->pdu_local),
		CLI_OPT_FUNC("meter", O_METER, opt_meter, o),
		CLI_OPT_FUNC("clock-offset", O_OFFSET, opt_offset, o),
		CLI_OPT_FUNC("max-gap", O_MAX_GAP, opt_max_gap, &o->max_gap_ns),
		CLI_OPT_FUNC("max-bad", O_MAX_BAD, opt_max_bad, &o->max_bad),
		CLI_OPT_FUNC("min-samples", O_MIN_SAMPLES, opt_min_samples,
			     &o->min_samples),
		CLI_OPT_FUNC("method", 'm', opt_method, &o->method),
		CLI_OPT_FUNC("robust", O_ROBUST, opt_robust, &o->no_robust),
		CLI_OPT_FUNC("bands", O_BANDS, opt_bands, &o->bands),
		CLI_OPT_FLAG("follow", O_FOLLOW, &o->follow),
		CLI_OPT_FUNC("window", O_WINDOW, opt_window, &o->window_ns),
		CLI_OPT_FUNC("refit", O_REFIT, opt_refit, &o->refit_ns),
		CLI_OPT_FUNC("holdout", O_HOLDOUT, opt_holdout, &o->holdout),
		CLI_OPT_FUNC("margin", O_MARGIN, opt_margin, &o->margin),
		CLI_OPT_STR("log", O_LOG, &o->log),
		CLI_OPT_FUNC("band-edges", O_BAND_EDGES, opt_band_edges,
			     &o->bands),
		CLI_OPT_FUNC("folds", 'k', opt_folds, &o->folds),
		CLI_OPT_STR("validate-samples", O_VAL_SAMPLES, &o->val_samples),
		CLI_OPT_STR("validate-pdu", O_VAL_PDU, &o->val_pdu),
		CLI_OPT_STR("output", 'o', &o->output),
		CLI_OPT_FLAG("apply", O_APPLY, &o->apply),
		CLI_OPT_STR("sysfs", O_SYSFS, &o->sysfs),
		CLI_OPT_STR("plot", O_PLOT, &o->plot),
		CLI_OPT_FLAG("progress", O_PROGRESS, &o->progress),
		CLI_OPT_FLAG("quiet", 'q', &o->quiet),
		CLI_OPT_FLAG("version", 'V', &o->version),
		CLI_OPT_FUNC("max-node-watts", O_MAX_NODE_W, opt_watts,
			     &o->lim.node_w),
		CLI_OPT_FUNC("max-idle-watts", O_MAX_IDLE_W, opt_watts,
			     &o->lim.idle_w),
		CLI_OPT_FUNC("max-cpu-watts", O_MAX_CPU_W, opt_watts,
			     &o->lim.cpu_w),
		CLI_OPT_FUNC("ridge", O_RIDGE, opt_ridge, &o->ridge),
		CLI_OPT_END,
	};
	const struct cli_cmdline cl = {
		.opts = table,
		.help = help,
		.min_args = 0,
		.max_args = 0,
	};
	int rc;

	opts_defaults(o);
	rc = cli_getopt(&cl, argc, argv);
	if (rc != CLI_GO)
		return rc;
	if (o->version) {
		printf("joules-train %s\n", JL_VERSION);
		return CLI_OK;
	}
	return opts_finish(o);
}

static FILE *open_in(const char *name)
{
	FILE *fp;

	if (!strcmp(name, "-"))
		return stdin;
	fp = fopen(name, "r");
	if (!fp)
		cli_err("%s: %s", name, strerror(errno));
	return fp;
}

static void close_in(FILE *fp)
{
	if (fp && fp != stdin)
		fclose(fp);
}

/* a + b, clamped to the int64 range (a --clock-offset may be absurd). */
static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;

	if (!__builtin_add_overflow(a, b, &r))
		return r;
	return b > 0 ? INT64_MAX : INT64_MIN;
}

static void fmt_time(int64_t ns, char *buf, size_t len)
{
	time_t t = (time_t)(ns / 1000000000LL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The time the samples span (taken before aligning gives them back). */
struct span {
	size_t n;
	int64_t lo, hi;
};

static void samples_span(const struct jt_samples *s, struct span *sp)
{
	size_t i;

	sp->n = s->n;
	sp->lo = INT64_MAX;
	sp->hi = INT64_MIN;
	for (i = 0; i < s->n; i++) {
		int64_t start = s->s[i].end_ns - (int64_t)s->s[i].interval_ns;

		if (start < sp->lo)
			sp->lo = start;
		if (s->s[i].end_ns > sp->hi)
			sp->hi = s->s[i].end_ns;
	}
}

/* Explain an empty alignment: usually the clocks or the units disagree. */
static void explain_ranges(const struct span *sp, const struct jt_meter *m,
			   int64_t offset_ns)
{
	char a[32], b[32], c[32], d[32];

	if (!sp->n || !m->n)
		return;
	fmt_time(sp->lo, a, sizeof(a));
	fmt_time(sp->hi, b, sizeof(b));
	fmt_time(sat_add(m->t[0], offset_ns), c, sizeof(c));
	fmt_time(sat_add(m->t[m->n - 1], offset_ns), d, sizeof(d));
	cli_err("samples span %s .. %s, meter readings (with --clock-offset) "
		"%s .. %s",
		a, b, c, d);
}

/* Stop after this many bad lines: one more than what is still allowed. */
static unsigned long bad_budget(const struct opts *o, unsigned long bad)
{
	if (o->max_bad == ULONG_MAX)
		return 0;
	return o->max_bad + 1 - bad;
}

/* Read one samples/meter pair; returns 0 or an exit status. */
static int load(const struct opts *o, const char *sname, const char *pname,
		const char *cmd, struct jt_samples *s, struct jt_meter *m,
		struct jt_progress *pr, unsigned long *bad)
{
	FILE *fp;
	int ret;

	fp = open_in(sname);
	if (!fp)
		return EXIT_DATA;
	s->st.stop_after = bad_budget(o, *bad);
	ret = jt_read_samples(fp, sname, s, pr);
	close_in(fp);
	if (ret)
		return EXIT_DATA;
	*bad += s->st.bad;
	if (s->st.stopped)
		return 0; /* over --max-bad: the caller says so */
	jt_meter_init(m, o->unit, o->ts_flags);
	m->sem = o->sem;
	m->st.stop_after = bad_budget(o, *bad);
	if (cmd) {
		ret = jt_read_meter_cmd(cmd, m, pr,
					(double)o->pdu_timeout_ns * 1e-9);
	} else {
		fp = open_in(pname);
		if (!fp)
			return EXIT_DATA;
		ret = jt_read_meter(fp, pname, m, pr);
		close_in(fp);
	}
	if (ret)
		return EXIT_DATA;
	*bad += m->st.bad;
	if (m->st.stopped)
		return 0;
	if (m->n < 2) {
		cli_err("%s: %zu usable meter readings, need at least 2",
			cmd ? "pdu-cmd" : pname, m->n);
		return EXIT_DATA;
	}
	return 0;
}

/* What the meter is: refuse a cumulative one; its resolution. */
static int meter_kind(const struct jt_meter *m, const char *name, double *res_w)
{
	char why[384];

	if (jt_meter_kind(m, res_w, why, sizeof(why))) {
		cli_err("refused: %s: %s", name, why);
		return EXIT_DATA;
	}
	return 0;
}

static int align(const struct opts *o, const struct jt_samples *s,
		 const struct jt_meter *m, struct jt_row **rows, size_t *n,
		 struct jt_align_stats *st)
{
	if (jt_align(s, m, o->offset_ns, o->max_gap_ns, rows, n, st)) {
		cli_err("out of memory");
		return EXIT_DATA;
	}
	return 0;
}

/* Everything one run holds; freed by run_free(). */
struct run {
	struct opts o;
	struct jt_samples s, vs;
	struct jt_meter m, vm;
	struct jt_row *rows, *vrows;
	size_t n, vn;
	struct jt_report rep;
	struct jt_band_result br;
	struct jt_progress pr;
	struct span span; /* of the training samples */
	double *pm, *pb;
	int implausible;
	char why[256];
	double res_w; /* the meter's resolution, W */
};

static int run_follow(const struct opts *o)
{
	struct jt_follow_opts fo = {
		.samples = o->samples,
		.pdu = o->pdu,
		.pdu_cmd = o->pdu_cmd,
		.unit = o->unit,
		.ts_flags = o->ts_flags,
		.sem = o->sem,
		.offset_ns = o->offset_ns,
		.max_gap_ns = o->max_gap_ns,
		.pdu_timeout_ns = o->pdu_timeout_ns,
		.window_ns = o->window_ns,
		.refit_ns = o->refit_ns,
		.holdout = o->holdout,
		.margin = o->margin,
		.train = { .method = o->method,
			   .folds = o->folds,
			   .min_samples = o->min_samples,
			   .no_robust = o->no_robust,
			   .ridge = o->ridge },
		.lim = o->lim,
		.bands = o->bands,
		.sysfs = o->apply ? o->sysfs : NULL,
		.output = o->output,
		.log = o->log,
	};

	return jt_follow(&fo) ? EXIT_DATA : 0;
}

/* Both inputs, and the validation pair; 0 or an exit status. */
static int load_all(struct run *r)
{
	const struct opts *o = &r->o;
	unsigned long bad = 0;
	int ret;

	ret = load(o, o->samples, o->pdu, o->pdu_cmd, &r->s, &r->m, &r->pr,
		   &bad);
	if (!ret && o->val_samples && bad <= o->max_bad)
		ret = load(o, o->val_samples, o->val_pdu, NULL, &r->vs, &r->vm,
			   &r->pr, &bad);
	if (ret)
		return ret;
	if (bad > o->max_bad) {
		cli_err("%lu bad input lines, more than --max-bad %lu", bad,
			o->max_bad);
		return EXIT_DATA;
	}
	if (bad)
		cli_err("%lu bad input lines skipped (--max-bad %lu)", bad,
			o->max_bad);
	return 0;
}

/* Too few intervals: say what alignment dropped, and the time ranges. */
static void explain_alignment(const struct run *r)
{
	const struct jt_align_stats *al = &r->rep.al;

	if (al->aggregated)
		cli_err("%zu sample rows summed into %zu meter periods (%zu not "
			"fully covered by rows, %zu longer than --max-gap)",
			al->rows_in, r->n, al->uncovered, al->gap);
	else
		cli_err("%zu of %zu intervals aligned with meter readings (%zu "
			"not covered, %zu across gaps > --max-gap, %zu without "
			"a reading inside)",
			r->n, r->span.n, al->uncovered, al->gap, al->between);
	explain_ranges(&r->span, &r->m, r->o.offset_ns);
}

/*
 * The samples' clock steps, and the meter's lag measured: corrected when
 * no --clock-offset was given (refused beyond JT_LAG_MAX_S), else the
 * given one wins with a warning if the data disagree.
 */
static int measure_alignment(struct run *r)
{
	struct jt_report *rep = &r->rep;
	struct opts *o = &r->o;
	struct jt_lag *l = &rep->lag;
	double period;

	rep->clock_steps = jt_unstep(&r->s, &rep->step_line, &rep->step_s);
	if (rep->clock_steps)
		cli_err("warning: %s:%lu: realtime_ns steps by %+.3f s where "
			"monotonic_ns does not (%u step%s): aligned on one "
			"continuous timeline",
			o->samples, rep->step_line, rep->step_s,
			rep->clock_steps, rep->clock_steps == 1 ? "" : "s");
	jt_estimate_lag(&r->s, &r->m, o->offset_ns, l);
	rep->have_lag = l->ok;
	rep->offset_s = (double)o->offset_ns * 1e-9;
	if (!l->ok)
		return 0;
	period = r->m.n > 1 ? (double)(r->m.t[r->m.n - 1] - r->m.t[0]) * 1e-9 /
				      (double)(r->m.n - 1) :
			      0;
	if (o->offset_set) {
		if (fabs(l->lag_s) > JT_LAG_WARN_S)
			cli_err("warning: the data put the meter %+.2f s off the "
				"given --clock-offset (cross-correlation %.2f)%s",
				l->lag_s, l->r,
				!o->meter_set && fabs(l->lag_s - period / 2) <
							 period / 4 ?
					": about half the meter's period, an "
					"averaging meter (--meter average)?" :
					"");
		rep->lag_note = "--clock-offset given: kept";
		return 0;
	}
	if (fabs(l->lag_s) > JT_LAG_MAX_S) {
		cli_err("refused: the meter's readings trail the node's activity by "
			"%.2f s (cross-correlation %.2f), more than %g s: are the "
			"clocks set? give --clock-offset if that is right",
			l->lag_s, l->r, JT_LAG_MAX_S);
		return EXIT_DATA;
	}
	if (fabs(l->lag_s) > fmax(JT_LAG_WARN_S / 2, l->step_s)) {
		o->offset_ns = -(int64_t)llround(l->lag_s * 1e3) * 1000000;
		rep->offset_s = (double)o->offset_ns * 1e-9;
		rep->lag_note = "corrected";
		if (o->meter_set && fabs(l->lag_s) > JT_LAG_WARN_S)
			cli_err("warning: with --meter %s the meter still trails "
				"the activity by %.2f s: corrected",
				o->sem == JT_METER_AVERAGE ? "average" :
							     "instant",
				l->lag_s);
	} else {
		rep->lag_note = "within the rows' granularity: none applied";
	}
	return 0;
}

/*
 * The readings' line numbers, to name an outlier's: when they follow each
 * other (no bad or blank line between readings, the usual case), the first
 * says them all and the array (8 bytes a reading) goes.
 */
static void meter_lines(struct run *r)
{
	const unsigned long *l = r->m.line;
	size_t i;

	r->rep.meter_lines = l;
	if (!l || !r->m.n)
		return;
	for (i = 1; i < r->m.n; i++)
		if (l[i] != l[0] + i)
			return;
	r->rep.meter_line0 = l[0];
	r->rep.meter_lines = NULL;
	free(r->m.line);
	r->m.line = NULL;
}

/*
 * The training rows, the samples given back as they are aligned (with the
 * readings and the rows, the peak of memory).
 */
static int align_train(struct run *r)
{
	samples_span(&r->s, &r->span);
	if (jt_align_consume(&r->s, &r->m, r->o.offset_ns, r->o.max_gap_ns,
			     &r->rows, &r->n, &r->rep.al)) {
		cli_err("out of memory");
		return EXIT_DATA;
	}
	return 0;
}

/* Align, fit the single set and the banded candidate. */
static int train_all(struct run *r)
{
	struct opts *o = &r->o;
	size_t k;
	struct jt_train_opts to;
	int ret;

	ret = meter_kind(&r->m, o->pdu_cmd ? "pdu-cmd" : o->pdu, &r->res_w);
	if (!ret)
		ret = measure_alignment(r);
	if (!ret) {
		meter_lines(r); /* before the peak: aligning */
		ret = align_train(r);
	}
	if (ret)
		return ret;
	if (r->n < o->min_samples)
		explain_alignment(r);
	/*
	 * The rows hold what the fit needs: the readings (but their line
	 * numbers, for the report) go too. The predictions per row are for
	 * --plot only.
	 */
	free(r->m.t);
	free(r->m.w);
	r->m.t = NULL;
	r->m.w = NULL;
	k = r->n ? r->n : 1;
	if (o->plot) {
		r->pm = fit_alloc(k * sizeof(*r->pm));
		r->pb = fit_alloc(k * sizeof(*r->pb));
		if (!r->pm || !r->pb) {
			cli_err("out of memory");
			return EXIT_DATA;
		}
	}
	r->rep.samples_name = o->samples;
	r->rep.pdu_name = o->pdu_cmd ? "pdu-cmd" : o->pdu;
	r->rep.max_gap_s = (double)o->max_gap_ns * 1e-9;
	to = (struct jt_train_opts){
		.method = o->method,
		.folds = o->folds,
		.min_samples = o->min_samples,
		.no_robust = o->no_robust,
		.pr = &r->pr,
		.ridge = o->ridge,
		.scale_floor_w = r->res_w,
		/* The nested headline replaces the single set's folds. */
		.skip = o->folds > 1 ? JT_SKIP_CV : 0,
	};
	if (jt_fit_written(r->rows, r->n, r->s.present, &to, &o->bands, &r->rep,
			   &r->br, r->pm, r->pb))
		return EXIT_DATA;
	/* The headline: what is written, judged on rows it never saw. */
	to.weights = NULL;
	if (jt_nested_cv(r->rows, r->n, r->s.present, &to, &o->bands,
			 &r->rep.nested, r->pm, r->pb))
		return EXIT_DATA;
	if (((o->bands.exact && o->bands.max_bands > 1) || o->bands.nedges) &&
	    !r->br.banded)
		cli_err("banded model not written: %s", r->br.why);
	return 0;
}

/* --validate-*: the written model on the held-out recording. */
static int validate(struct run *r)
{
	const struct opts *o = &r->o;
	int ret = align(o, &r->vs, &r->vm, &r->vrows, &r->vn, &r->rep.val_al);

	if (ret)
		return ret;
	if (!r->vn) {
		struct span vsp;

		cli_err("no validation interval aligned with %s", o->val_pdu);
		samples_span(&r->vs, &vsp);
		explain_ranges(&vsp, &r->vm, o->offset_ns);
		return EXIT_DATA;
	}
	if (r->s.present & ~r->vs.present)
		cli_err("warning: %s lacks features the model uses; they count "
			"as 0 there",
			o->val_samples);
	jt_evaluate(r->vrows, r->vn, &r->rep.model.coef, &r->rep.base.coef,
		    &r->rep.val);
	r->rep.have_val = 1;
	r->rep.val_n = r->vn;
	return 0;
}

/* A model that cannot be: never written, never installed. */
static int refuse_absurd(struct run *r)
{
	char why[512];

	if (!jt_refuse(&r->rep, &r->br, r->rows, r->n, r->s.cpus, &r->o.lim,
		       why, sizeof(why)))
		return 0;
	cli_err("refused: %s", why);
	return EXIT_DATA;
}

/* The report and model to -o FILE or stdout (and the summary to stdout). */
static int write_output(struct run *r)
{
	const struct opts *o = &r->o;
	FILE *out = o->output ? fopen(o->output, "w") : stdout;

	if (!out) {
		cli_err("%s: %s", o->output, strerror(errno));
		return EXIT_DATA;
	}
	if (jt_write_bands_report(out, &r->rep, &r->br, 1) ||
	    (o->output ? fclose(out) : fflush(out))) {
		cli_err("writing %s: %s", o->output ? o->output : "stdout",
			strerror(errno));
		return EXIT_DATA;
	}
	if (o->output && !o->quiet)
		jt_write_bands_report(stdout, &r->rep, &r->br, 0);
	return 0;
}

/*
 * Never install a model that fails the plausibility checks: a banded one
 * is only chosen when every band passed them.
 */
static int check_and_apply(struct run *r)
{
	const struct opts *o = &r->o;
	char err[512];

	r->implausible =
		r->br.banded ? 0 :
			       jt_model_check(&r->rep, r->why, sizeof(r->why));
	if (r->implausible && o->apply) {
		cli_err("--apply: refusing to install an implausible model: %s",
			r->why);
		return EXIT_APPLY;
	}
	if (r->implausible)
		cli_err("warning: implausible model (written, but --apply would "
			"refuse it): %s",
			r->why);
	if (!o->apply)
		return 0;
	if (jt_apply_bands(o->sysfs, &r->br.model, err, sizeof(err))) {
		cli_err("--apply: %s", err);
		return EXIT_APPLY;
	}
	if (!o->quiet)
		cli_err("%s installed in %s",
			r->br.banded ? "banded model" : "coefficients",
			o->sysfs);
	return 0;
}

static int plot(struct run *r)
{
	char title[128], err[512];
	double *meas = fit_alloc(r->n * sizeof(*meas));
	size_t i;
	int ret;

	if (!meas) {
		cli_err("out of memory");
		return EXIT_DATA;
	}
	for (i = 0; i < r->n; i++)
		meas[i] = jt_row_watts(&r->rows[i]);
	snprintf(title, sizeof(title),
		 "joules-train: %s predictions, %zu intervals",
		 r->rep.nested.done ? "nested cross-validated" : "in-sample",
		 r->n);
	ret = jt_plot(r->o.plot, meas, r->pm, r->pb, r->n, title, err,
		      sizeof(err));
	free(meas);
	if (ret) {
		cli_err("--plot: %s", err);
		return EXIT_DATA;
	}
	return 0;
}

static void run_free(struct run *r)
{
	free(r->pm);
	free(r->pb);
	free(r->rows);
	free(r->vrows);
	jt_samples_free(&r->s);
	jt_samples_free(&r->vs);
	jt_meter_free(&r->m);
	jt_meter_free(&r->vm);
}

int main(int argc, char **argv)
{
	static struct run r; /* large (the band reports): not on the stack */
	int ret;

	cli_prog = "joules-train";
	/*
	 * Arrays of a value per row are mapped and unmapped on their own,
	 * whatever was freed before: glibc would otherwise raise its mmap
	 * threshold after the first such free and put the next ones on the
	 * heap, where a freed one stays resident below a live one.
	 */
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
	ret = parse_args(argc, argv, &r.o);
	if (ret != CLI_GO)
		return ret;
	if (r.o.follow)
		return run_follow(&r.o);
	jt_progress_init(&r.pr, r.o.progress || isatty(STDERR_FILENO),
			 isatty(STDERR_FILENO));
	ret = load_all(&r);
	if (!ret)
		ret = train_all(&r);
	if (!ret && r.o.val_samples)
		ret = validate(&r);
	if (!ret)
		ret = refuse_absurd(&r);
	if (!ret)
		ret = write_output(&r);
	if (!ret)
		ret = check_and_apply(&r);
	if (!ret && r.o.plot)
		ret = plot(&r);
	if (!ret && r.implausible)
		ret = EXIT_IMPLAUSIBLE;
	run_free(&r);
	return ret;
}
