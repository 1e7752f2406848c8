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
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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
	"      --clock-offset SECONDS  add SECONDS to meter timestamps (default 0)\n"
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
	"Exit status: 0 ok, 1 bad data or failed fit, 2 usage, 3 --apply failed or\n"
	"refused an implausible model, 4 written but implausible (see the warning).\n"
	"--follow: 0 at the end of the samples or on SIGTERM/SIGINT, 1 an input\n"
	"failed, 2 usage.\n";

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
};

static const struct option long_opts[] = {
	{ "samples", required_argument, NULL, 's' },
	{ "pdu", required_argument, NULL, 'p' },
	{ "pdu-cmd", required_argument, NULL, 'c' },
	{ "pdu-timeout", required_argument, NULL, O_PDU_TIMEOUT },
	{ "pdu-ms", no_argument, NULL, O_PDU_MS },
	{ "pdu-localtime", no_argument, NULL, O_PDU_LOCAL },
	{ "meter", required_argument, NULL, O_METER },
	{ "clock-offset", required_argument, NULL, O_OFFSET },
	{ "max-gap", required_argument, NULL, O_MAX_GAP },
	{ "max-bad", required_argument, NULL, O_MAX_BAD },
	{ "min-samples", required_argument, NULL, O_MIN_SAMPLES },
	{ "method", required_argument, NULL, 'm' },
	{ "robust", required_argument, NULL, O_ROBUST },
	{ "bands", required_argument, NULL, O_BANDS },
	{ "follow", no_argument, NULL, O_FOLLOW },
	{ "window", required_argument, NULL, O_WINDOW },
	{ "refit", required_argument, NULL, O_REFIT },
	{ "holdout", required_argument, NULL, O_HOLDOUT },
	{ "margin", required_argument, NULL, O_MARGIN },
	{ "log", required_argument, NULL, O_LOG },
	{ "band-edges", required_argument, NULL, O_BAND_EDGES },
	{ "folds", required_argument, NULL, 'k' },
	{ "validate-samples", required_argument, NULL, O_VAL_SAMPLES },
	{ "validate-pdu", required_argument, NULL, O_VAL_PDU },
	{ "output", required_argument, NULL, 'o' },
	{ "apply", no_argument, NULL, O_APPLY },
	{ "sysfs", required_argument, NULL, O_SYSFS },
	{ "plot", required_argument, NULL, O_PLOT },
	{ "progress", no_argument, NULL, O_PROGRESS },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

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
	int apply, progress, quiet, no_robust;
	struct jt_band_opts bands;
	int follow;
	int64_t window_ns, refit_ns;
	double holdout, margin;
	const char *log;
};

static void __attribute__((noreturn, format(printf, 1, 2)))
usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("joules-train: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'joules-train --help'.\n", stderr);
	exit(EXIT_USAGE);
}

static unsigned long num_arg(const char *opt, const char *s, unsigned long max)
{
	const char *why;
	uint64_t v;

	if (parse_u64(s, &v, &why) || v > max)
		usage_error("%s '%s': %s", opt, s, why ? why : "too large");
	return (unsigned long)v;
}

static int64_t secs_arg(const char *opt, const char *s, int allow_neg)
{
	const char *why;
	int64_t v;

	if (parse_seconds_ns(s, &v, &why))
		usage_error("%s '%s': %s", opt, s, why);
	if (!allow_neg && v < 0)
		usage_error("%s '%s': must not be negative", opt, s);
	return v;
}

static double frac_arg(const char *opt, const char *s, double lo, double hi)
{
	const char *why;
	double v;

	if (parse_double(s, &v, &why))
		usage_error("%s '%s': %s", opt, s, why);
	if (!(v >= lo && v <= hi))
		usage_error("%s '%s': want %g..%g", opt, s, lo, hi);
	return v;
}

/* "MHZ,MHZ,..": ascending upper edges, at most JL_MAX_BANDS - 1. */
static void band_edges(const char *arg, struct jt_band_opts *b)
{
	char buf[256], *tok, *save = NULL;

	if (snprintf(buf, sizeof(buf), "%s", arg) >= (int)sizeof(buf))
		usage_error("--band-edges '%s': too long", arg);
	b->nedges = 0;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		unsigned long v = num_arg("--band-edges", tok, JL_MHZ_MAX);

		if (b->nedges == JL_MAX_BANDS - 1)
			usage_error("--band-edges '%s': at most %d edges", arg,
				    JL_MAX_BANDS - 1);
		if (!v || (b->nedges && v <= b->edges[b->nedges - 1]))
			usage_error("--band-edges '%s': want ascending MHz above 0",
				    arg);
		b->edges[b->nedges++] = v;
	}
	if (!b->nedges)
		usage_error("--band-edges '%s': no edge", arg);
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	int c;

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
	};
	while ((c = getopt_long(argc, argv, "s:p:c:m:k:o:qhV", long_opts,
				NULL)) != -1) {
		switch (c) {
		case 's':
			o->samples = optarg;
			break;
		case 'p':
			o->pdu = optarg;
			break;
		case 'c':
			o->pdu_cmd = optarg;
			break;
		case O_PDU_MS:
			o->unit = PARSE_TS_MS;
			break;
		case O_PDU_LOCAL:
			o->ts_flags |= PARSE_TS_LOCALTIME;
			break;
		case O_METER:
			if (!strcmp(optarg, "instant"))
				o->sem = JT_METER_INSTANT;
			else if (!strcmp(optarg, "average"))
				o->sem = JT_METER_AVERAGE;
			else
				usage_error("--meter '%s': want instant or average",
					    optarg);
			break;
		case O_OFFSET:
			o->offset_ns = secs_arg("--clock-offset", optarg, 1);
			break;
		case O_PDU_TIMEOUT:
			o->pdu_timeout_ns =
				secs_arg("--pdu-timeout", optarg, 0);
			if (o->pdu_timeout_ns > 86400000000000LL)
				usage_error("--pdu-timeout '%s': more than a day",
					    optarg);
			break;
		case O_MAX_GAP:
			o->max_gap_ns = secs_arg("--max-gap", optarg, 0);
			break;
		case O_MAX_BAD:
			o->max_bad = num_arg("--max-bad", optarg, ULONG_MAX);
			break;
		case O_MIN_SAMPLES:
			o->min_samples =
				num_arg("--min-samples", optarg, ULONG_MAX);
			break;
		case 'm':
			if (!strcmp(optarg, "ols"))
				o->method = FIT_OLS;
			else if (!strcmp(optarg, "nnls"))
				o->method = FIT_NNLS;
			else
				usage_error("--method '%s': want ols or nnls",
					    optarg);
			break;
		case O_ROBUST:
			if (!strcmp(optarg, "on"))
				o->no_robust = 0;
			else if (!strcmp(optarg, "off"))
				o->no_robust = 1;
			else
				usage_error("--robust '%s': want on or off",
					    optarg);
			break;
		case O_BANDS:
			if (!strcmp(optarg, "auto")) {
				o->bands.max_bands = JL_MAX_BANDS;
				o->bands.exact = 0;
			} else {
				o->bands.max_bands = (unsigned int)num_arg(
					"--bands", optarg, JL_MAX_BANDS);
				o->bands.exact = 1;
				if (!o->bands.max_bands)
					usage_error("--bands '%s': want auto or 1..%d",
						    optarg, JL_MAX_BANDS);
			}
			break;
		case O_FOLLOW:
			o->follow = 1;
			break;
		case O_WINDOW:
			o->window_ns = secs_arg("--window", optarg, 0);
			break;
		case O_REFIT:
			o->refit_ns = secs_arg("--refit", optarg, 0);
			break;
		case O_HOLDOUT:
			o->holdout = frac_arg("--holdout", optarg, 0.01, 0.9);
			break;
		case O_MARGIN:
			o->margin = frac_arg("--margin", optarg, 0, 100) / 100;
			break;
		case O_LOG:
			o->log = optarg;
			break;
		case O_BAND_EDGES:
			band_edges(optarg, &o->bands);
			break;
		case 'k':
			o->folds =
				(unsigned int)num_arg("--folds", optarg, 1000);
			break;
		case O_VAL_SAMPLES:
			o->val_samples = optarg;
			break;
		case O_VAL_PDU:
			o->val_pdu = optarg;
			break;
		case 'o':
			o->output = optarg;
			break;
		case O_APPLY:
			o->apply = 1;
			break;
		case O_SYSFS:
			o->sysfs = optarg;
			break;
		case O_PLOT:
			o->plot = optarg;
			break;
		case O_PROGRESS:
			o->progress = 1;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(0);
		case 'V':
			printf("joules-train %s\n", JL_VERSION);
			exit(0);
		default:
			fputs("Try 'joules-train --help'.\n", stderr);
			exit(EXIT_USAGE);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (o->follow) {
		if (!o->apply == !o->output)
			usage_error("--follow needs exactly one of --apply and -o FILE");
		if (o->refit_ns <= 0 || o->window_ns < o->refit_ns)
			usage_error("--follow: want 0 < --refit <= --window");
		if (o->val_samples || o->plot)
			usage_error("--follow takes no --validate-* or --plot");
	} else if (!o->samples) {
		usage_error("no samples given (-s FILE)");
	}
	if (o->bands.nedges && o->bands.exact &&
	    o->bands.max_bands != o->bands.nedges + 1)
		usage_error("--bands %u and %u --band-edges disagree",
			    o->bands.max_bands, o->bands.nedges);
	if (!!o->pdu + !!o->pdu_cmd != 1)
		usage_error("give exactly one of -p FILE and -c COMMAND");
	if (!o->val_samples != !o->val_pdu)
		usage_error(
			"--validate-samples and --validate-pdu go together");
	if (o->samples && !strcmp(o->samples, "-") && o->pdu && !strcmp(o->pdu, "-"))
		usage_error(
			"samples and meter readings cannot both come from stdin");
	if (o->val_samples &&
	    (!strcmp(o->val_samples, "-") || !strcmp(o->val_pdu, "-")))
		usage_error("validation inputs must be files");
	if (o->plot) {
		const char *dot = strrchr(o->plot, '.');
		char gp[4096];

		if (!dot ||
		    (strcasecmp(dot, ".svg") && strcasecmp(dot, ".png")))
			usage_error("--plot '%s': must end in .svg or .png",
				    o->plot);
		/* Fail before a long fit, not after it. */
		if (jt_which("gnuplot", gp, sizeof(gp))) {
			fprintf(stderr,
				"joules-train: --plot needs gnuplot, which is not in PATH "
				"(Debian: apt-get install gnuplot-nox)\n");
			exit(EXIT_DATA);
		}
	}
}

static FILE *open_in(const char *name)
{
	FILE *fp;

	if (!strcmp(name, "-"))
		return stdin;
	fp = fopen(name, "r");
	if (!fp)
		fprintf(stderr, "joules-train: %s: %s\n", name,
			strerror(errno));
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

/* Explain an empty alignment: usually the clocks or the units disagree. */
static void explain_ranges(const struct jt_samples *s, const struct jt_meter *m,
			   int64_t offset_ns)
{
	char a[32], b[32], c[32], d[32];
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	size_t i;

	if (!s->n || !m->n)
		return;
	for (i = 0; i < s->n; i++) {
		int64_t start = s->s[i].end_ns - (int64_t)s->s[i].interval_ns;

		if (start < lo)
			lo = start;
		if (s->s[i].end_ns > hi)
			hi = s->s[i].end_ns;
	}
	fmt_time(lo, a, sizeof(a));
	fmt_time(hi, b, sizeof(b));
	fmt_time(sat_add(m->t[0], offset_ns), c, sizeof(c));
	fmt_time(sat_add(m->t[m->n - 1], offset_ns), d, sizeof(d));
	fprintf(stderr,
		"joules-train: samples span %s .. %s, meter readings (with "
		"--clock-offset) %s .. %s\n",
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
		fprintf(stderr,
			"joules-train: %s: %zu usable meter readings, need at least 2\n",
			cmd ? "pdu-cmd" : pname, m->n);
		return EXIT_DATA;
	}
	return 0;
}

static int align(const struct opts *o, const struct jt_samples *s,
		 const struct jt_meter *m, struct jt_row **rows, size_t *n,
		 struct jt_align_stats *st)
{
	if (jt_align(s, m, o->offset_ns, o->max_gap_ns, rows, n, st)) {
		fprintf(stderr, "joules-train: out of memory\n");
		return EXIT_DATA;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct jt_samples s = { 0 }, vs = { 0 };
	struct jt_meter m = { 0 }, vm = { 0 };
	struct jt_row *rows = NULL, *vrows = NULL;
	struct jt_report rep = { 0 };
	static struct jt_band_result br;
	struct jt_progress pr;
	struct jt_train_opts to;
	double *pm = NULL, *pb = NULL, *meas = NULL, *wt = NULL;
	unsigned long bad = 0;
	size_t n = 0, vn = 0, i;
	struct opts o;
	char err[512], why[256];
	int ret, implausible = 0;
	FILE *out;

	parse_args(argc, argv, &o);
	if (o.follow) {
		struct jt_follow_opts fo = {
			.samples = o.samples,
			.pdu = o.pdu,
			.pdu_cmd = o.pdu_cmd,
			.unit = o.unit,
			.ts_flags = o.ts_flags,
			.sem = o.sem,
			.offset_ns = o.offset_ns,
			.max_gap_ns = o.max_gap_ns,
			.pdu_timeout_ns = o.pdu_timeout_ns,
			.window_ns = o.window_ns,
			.refit_ns = o.refit_ns,
			.holdout = o.holdout,
			.margin = o.margin,
			.train = { .method = o.method, .folds = o.folds,
				   .min_samples = o.min_samples,
				   .no_robust = o.no_robust },
			.bands = o.bands,
			.sysfs = o.apply ? o.sysfs : NULL,
			.output = o.output,
			.log = o.log,
		};

		return jt_follow(&fo) ? EXIT_DATA : 0;
	}
	jt_progress_init(&pr, o.progress || isatty(STDERR_FILENO),
			 isatty(STDERR_FILENO));

	ret = load(&o, o.samples, o.pdu, o.pdu_cmd, &s, &m, &pr, &bad);
	if (!ret && o.val_samples && bad <= o.max_bad)
		ret = load(&o, o.val_samples, o.val_pdu, NULL, &vs, &vm, &pr,
			   &bad);
	if (ret)
		goto out;
	if (bad > o.max_bad) {
		fprintf(stderr,
			"joules-train: %lu bad input lines, more than --max-bad %lu\n",
			bad, o.max_bad);
		ret = EXIT_DATA;
		goto out;
	}
	if (bad)
		fprintf(stderr,
			"joules-train: %lu bad input lines skipped (--max-bad %lu)\n",
			bad, o.max_bad);

	ret = align(&o, &s, &m, &rows, &n, &rep.al);
	if (ret)
		goto out;
	if (n < o.min_samples) {
		if (rep.al.aggregated)
			fprintf(stderr,
				"joules-train: %zu sample rows summed into %zu meter "
				"periods (%zu not fully covered by rows, %zu longer than "
				"--max-gap)\n",
				rep.al.rows_in, n, rep.al.uncovered, rep.al.gap);
		else
			fprintf(stderr,
				"joules-train: %zu of %zu intervals aligned with meter "
				"readings (%zu not covered, %zu across gaps > --max-gap, "
				"%zu without a reading inside)\n",
				n, s.n, rep.al.uncovered, rep.al.gap,
				rep.al.between);
		explain_ranges(&s, &m, o.offset_ns);
	}

	pm = malloc((n ? n : 1) * sizeof(*pm));
	pb = malloc((n ? n : 1) * sizeof(*pb));
	meas = malloc((n ? n : 1) * sizeof(*meas));
	wt = malloc((n ? n : 1) * sizeof(*wt));
	if (!pm || !pb || !meas || !wt) {
		fprintf(stderr, "joules-train: out of memory\n");
		ret = EXIT_DATA;
		goto out;
	}
	rep.samples_name = o.samples;
	rep.pdu_name = o.pdu_cmd ? "pdu-cmd" : o.pdu;
	rep.meter_lines = m.line;
	rep.max_gap_s = (double)o.max_gap_ns * 1e-9;
	to = (struct jt_train_opts){
		.method = o.method,
		.folds = o.folds,
		.min_samples = o.min_samples,
		.no_robust = o.no_robust,
		.pr = &pr,
		.weights = wt,
	};
	if (jt_train(rows, n, s.present, &to, &rep, pm, pb)) {
		ret = EXIT_DATA;
		goto out;
	}
	to.weights = NULL;
	if (jt_train_bands(rows, n, s.present, &to, &o.bands, &rep, wt, &br)) {
		ret = EXIT_DATA;
		goto out;
	}
	if ((o.bands.exact && o.bands.max_bands > 1) || o.bands.nedges) {
		if (!br.banded)
			fprintf(stderr, "joules-train: banded model not written: %s\n",
				br.why);
	}

	if (o.val_samples) {
		ret = align(&o, &vs, &vm, &vrows, &vn, &rep.val_al);
		if (ret)
			goto out;
		if (!vn) {
			fprintf(stderr,
				"joules-train: no validation interval aligned with %s\n",
				o.val_pdu);
			explain_ranges(&vs, &vm, o.offset_ns);
			ret = EXIT_DATA;
			goto out;
		}
		if (s.present & ~vs.present)
			fprintf(stderr,
				"joules-train: warning: %s lacks features the model uses; "
				"they count as 0 there\n",
				o.val_samples);
		jt_evaluate(vrows, vn, &rep.model.coef, &rep.base.coef,
			    &rep.val);
		rep.have_val = 1;
		rep.val_n = vn;
	}

	out = o.output ? fopen(o.output, "w") : stdout;
	if (!out) {
		fprintf(stderr, "joules-train: %s: %s\n", o.output,
			strerror(errno));
		ret = EXIT_DATA;
		goto out;
	}
	if (jt_write_bands_report(out, &rep, &br, 1) ||
	    (o.output ? fclose(out) : fflush(out))) {
		fprintf(stderr, "joules-train: writing %s: %s\n",
			o.output ? o.output : "stdout", strerror(errno));
		ret = EXIT_DATA;
		goto out;
	}
	if (o.output && !o.quiet)
		jt_write_bands_report(stdout, &rep, &br, 0);

	/*
	 * Never install a model that fails the plausibility checks: a banded
	 * one is only chosen when every band passed them.
	 */
	implausible = br.banded ? 0 : jt_model_check(&rep, why, sizeof(why));
	if (implausible && o.apply) {
		fprintf(stderr,
			"joules-train: --apply: refusing to install an implausible "
			"model: %s\n",
			why);
		ret = EXIT_APPLY;
		goto out;
	}
	if (implausible)
		fprintf(stderr,
			"joules-train: warning: implausible model (written, but "
			"--apply would refuse it): %s\n",
			why);
	if (o.apply) {
		if (jt_apply_bands(o.sysfs, &br.model, err, sizeof(err))) {
			fprintf(stderr, "joules-train: --apply: %s\n", err);
			ret = EXIT_APPLY;
			goto out;
		}
		if (!o.quiet)
			fprintf(stderr,
				"joules-train: %s installed in %s\n",
				br.banded ? "banded model" : "coefficients",
				o.sysfs);
	}

	if (o.plot) {
		char title[128];

		for (i = 0; i < n; i++)
			meas[i] = jt_row_watts(&rows[i]);
		snprintf(title, sizeof(title),
			 "joules-train: %s predictions, %zu intervals",
			 rep.have_cv ? "cross-validated" : "in-sample", n);
		if (jt_plot(o.plot, meas, pm, pb, n, title, err, sizeof(err))) {
			fprintf(stderr, "joules-train: --plot: %s\n", err);
			ret = EXIT_DATA;
			goto out;
		}
	}
	ret = implausible ? EXIT_IMPLAUSIBLE : 0;
out:
	free(pm);
	free(pb);
	free(meas);
	free(wt);
	free(rows);
	free(vrows);
	jt_samples_free(&s);
	jt_samples_free(&vs);
	jt_meter_free(&m);
	jt_meter_free(&vm);
	return ret;
}
