// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of joules-train: parsing, CSV error reporting, meter
 * alignment, the fitter (OLS, NNLS, cross-validation), units of the
 * written coefficients, --apply against a fake sysfs, and the CLI.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gsl/gsl_multifit.h>

#include "core.h"
#include "csv.h"
#include "gen.h"
#include "parse.h"
#include "tap.h"
#include "train.h"

/* ---- deterministic random numbers ---- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng_u64(void)
{
	/* splitmix64 */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double rng_unif(double lo, double hi)
{
	return lo + (hi - lo) * ((double)(rng_u64() >> 11) * 0x1.0p-53);
}

static double rng_gauss(void)
{
	double u = rng_unif(1e-12, 1), v = rng_unif(0, 1);

	return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

/* ---- helpers ---- */

static FILE *mem_in(const char *text)
{
	return fmemopen((void *)text, strlen(text), "r");
}

static char *diag_buf;
static size_t diag_len;

/* Capture jt_diag output; returns the stream to close with diag_end(). */
static void diag_begin(void)
{
	free(diag_buf);
	diag_buf = NULL;
	jt_diag = open_memstream(&diag_buf, &diag_len);
}

static const char *diag_end(void)
{
	fclose(jt_diag);
	jt_diag = NULL;
	return diag_buf ? diag_buf : "";
}

static int rel_close(double a, double b, double tol)
{
	return fabs(a - b) <= tol * fmax(fabs(a), fabs(b)) ||
	       fabs(a - b) < 1e-300;
}

/* ---- parse library ---- */

static void test_parse_numbers(void)
{
	const char *why = NULL;
	uint64_t u;
	int64_t s;
	double d;

	tap_check(parse_u64("18446744073709551615", &u, &why) == 0 &&
			  u == UINT64_MAX,
		  "u64 max");
	tap_check(parse_u64("18446744073709551616", &u, &why) == -ERANGE,
		  "u64 overflow");
	tap_check(parse_u64("", &u, &why) == -EINVAL, "empty");
	tap_check(parse_u64(" 1", &u, &why) == -EINVAL, "leading blank");
	tap_check(parse_u64("1 ", &u, &why) == -EINVAL, "trailing blank");
	tap_check(parse_u64("-1", &u, &why) == -EINVAL, "sign");
	tap_check(parse_u64("12x", &u, &why) == -EINVAL && why &&
			  strstr(why, "integer"),
		  "junk");
	tap_check(parse_s64("-9223372036854775808", &s, &why) == 0 &&
			  s == INT64_MIN,
		  "s64 min");
	tap_check(parse_s64("9223372036854775808", &s, &why) == -ERANGE,
		  "s64 overflow");
	tap_check(parse_double("-2.5e3", &d, &why) == 0 && d == -2500,
		  "double");
	tap_check(parse_double("nan", &d, &why) == -EINVAL, "nan");
	tap_check(parse_double("inf", &d, &why) == -EINVAL, "inf");
	tap_check(parse_double(" 1", &d, &why) == -EINVAL,
		  "double leading blank");
	tap_check(parse_double("1.5W", &d, &why) == -EINVAL, "double junk");
	tap_check(parse_double("1e999", &d, &why) == -EINVAL,
		  "double overflow is inf");
	tap_check(parse_seconds_ns("-0.25", &s, &why) == 0 && s == -250000000,
		  "seconds");
	tap_check(parse_seconds_ns("5", &s, &why) == 0 && s == 5000000000LL,
		  "int seconds");
	tap_check(parse_seconds_ns("0.0000000015", &s, &why) == 0 && s == 2,
		  "rounds half up");
	tap_check(parse_seconds_ns("1.", &s, &why) == -EINVAL,
		  "no fraction digits");
	tap_check(parse_seconds_ns("1e3", &s, &why) == -EINVAL &&
			  strstr(why, "exponent"),
		  "exponent");
	tap_done("parse: strict integers, doubles and decimal seconds");
}

static void test_parse_timestamps(void)
{
	const int64_t base =
		1796220916LL * 1000000000LL; /* 2026-12-02T14:15:16Z */
	enum parse_ts_kind k;
	const char *why;
	int64_t ns;
	int64_t day;

	tap_check(!parse_timestamp("1796220916", PARSE_TS_AUTO, 0, &ns, &k,
				   &why) &&
			  ns == base && k == PARSE_TS_KIND_S,
		  "int seconds: %lld", (long long)ns);
	tap_check(!parse_timestamp("1796220916.25", PARSE_TS_AUTO, 0, &ns, &k,
				   &why) &&
			  ns == base + 250000000,
		  "fractional seconds: %lld", (long long)ns);
	tap_check(!parse_timestamp("1796220916.123456789", PARSE_TS_S, 0, &ns,
				   &k, &why) &&
			  ns == base + 123456789,
		  "ns resolution: %lld", (long long)ns);
	tap_check(!parse_timestamp("1796220916250", PARSE_TS_AUTO, 0, &ns, &k,
				   &why) &&
			  ns == base + 250000000 && k == PARSE_TS_KIND_MS,
		  "auto ms: %lld", (long long)ns);
	tap_check(!parse_timestamp("1796220916250.5", PARSE_TS_MS, 0, &ns, &k,
				   &why) &&
			  ns == base + 250500000,
		  "fractional ms: %lld", (long long)ns);
	tap_check(!parse_timestamp("1000", PARSE_TS_MS, 0, &ns, &k, &why) &&
			  ns == 1000000000,
		  "forced ms");
	tap_check(parse_timestamp("1796220916250", PARSE_TS_S, 0, &ns, &k,
				  &why) == -ERANGE,
		  "ms as seconds overflows");
	tap_check(!parse_timestamp("2026-12-02T14:15:16.250Z", PARSE_TS_AUTO, 0,
				   &ns, &k, &why) &&
			  ns == base + 250000000 && k == PARSE_TS_KIND_ISO,
		  "ISO Z: %lld", (long long)ns);
	tap_check(!parse_timestamp("2026-12-02T15:15:16.250+01:00",
				   PARSE_TS_AUTO, 0, &ns, &k, &why) &&
			  ns == base + 250000000,
		  "ISO +01:00");
	tap_check(!parse_timestamp("2026-12-02T09:45:16-0430", PARSE_TS_AUTO, 0,
				   &ns, &k, &why) &&
			  ns == base,
		  "ISO -0430");
	tap_check(!parse_timestamp("2026-12-02 14:15:16", PARSE_TS_AUTO, 0, &ns,
				   &k, &why) &&
			  ns == base,
		  "ISO with blank, no zone = UTC");
	tap_check(!parse_timestamp("2026-12-02t14:15:16,5z", PARSE_TS_AUTO, 0,
				   &ns, &k, &why) &&
			  ns == base + 500000000,
		  "lower-case t/z, comma fraction");
	tap_check(!parse_timestamp("2026-12-02T14:15", PARSE_TS_AUTO, 0, &ns,
				   &k, &why) &&
			  ns == base - 16000000000LL,
		  "no seconds");
	setenv("TZ", "CET-1CEST,M3.5.0,M10.5.0/3", 1);
	tzset();
	tap_check(!parse_timestamp("2026-12-02 15:15:16", PARSE_TS_AUTO,
				   PARSE_TS_LOCALTIME, &ns, &k, &why) &&
			  ns == base,
		  "local time (CET in December): %lld", (long long)ns);
	tap_check(!parse_timestamp("2026-07-02 15:15:16", PARSE_TS_AUTO,
				   PARSE_TS_LOCALTIME, &ns, &k, &why) &&
			  ns == base - 153LL * 86400 * 1000000000LL -
					  3600000000000LL,
		  "local time (CEST in July)");
	tap_check(!parse_timestamp("2026-12-02T14:15:16Z", PARSE_TS_AUTO,
				   PARSE_TS_LOCALTIME, &ns, &k, &why) &&
			  ns == base,
		  "explicit zone wins over local");
	unsetenv("TZ");
	tzset();

	tap_check(parse_timestamp("2026-13-02T00:00:00Z", PARSE_TS_AUTO, 0, &ns,
				  &k, &why) == -EINVAL &&
			  strstr(why, "month"),
		  "month 13");
	tap_check(parse_timestamp("2026-02-29T00:00:00Z", PARSE_TS_AUTO, 0, &ns,
				  &k, &why) == -EINVAL &&
			  strstr(why, "day"),
		  "Feb 29 2026");
	tap_check(!parse_timestamp("2024-02-29T00:00:00Z", PARSE_TS_AUTO, 0,
				   &ns, &k, &why),
		  "Feb 29 2024");
	tap_check(parse_timestamp("2026-12-02T24:00:00Z", PARSE_TS_AUTO, 0, &ns,
				  &k, &why) == -EINVAL &&
			  strstr(why, "hour"),
		  "hour 24");
	tap_check(parse_timestamp("2026-12-02T14:15:16Zx", PARSE_TS_AUTO, 0,
				  &ns, &k, &why) == -EINVAL &&
			  strstr(why, "junk"),
		  "junk after zone");
	tap_check(parse_timestamp("2026-12-02", PARSE_TS_AUTO, 0, &ns, &k,
				  &why) == -EINVAL,
		  "date only");
	tap_check(parse_timestamp("-5", PARSE_TS_AUTO, 0, &ns, &k, &why) ==
			  -EINVAL,
		  "signed");
	tap_check(parse_timestamp("1.7e9", PARSE_TS_AUTO, 0, &ns, &k, &why) ==
			  -EINVAL,
		  "exponent");
	tap_check(parse_timestamp("", PARSE_TS_AUTO, 0, &ns, &k, &why) ==
			  -EINVAL,
		  "empty");
	tap_check(parse_timestamp("now", PARSE_TS_AUTO, 0, &ns, &k, &why) ==
			  -EINVAL,
		  "word");

	/* The calendar arithmetic against libc's timegm over 1970..2261. */
	for (day = 0; day < 106000; day += 7) {
		time_t t = (time_t)day * 86400;
		struct tm tm;

		gmtime_r(&t, &tm);
		if (!tap_check(parse_days_from_civil(
				       tm.tm_year + 1900,
				       (unsigned int)tm.tm_mon + 1,
				       (unsigned int)tm.tm_mday) == day,
			       "day %lld", (long long)day))
			break;
	}
	tap_done(
		"parse: timestamps (Unix s/ms, ISO 8601 with zones) to exact ns");
}

static void test_csv_split(void)
{
	char line[256];
	char *f[8];
	const char *why;
	int n;

	strcpy(line, " a , \"b,\"\"c\"\" \" ,,d\t");
	n = csv_split(line, f, 8, &why);
	tap_check(n == 4, "n=%d", n);
	if (n == 4) {
		tap_check(!strcmp(f[0], "a"), "f0 '%s'", f[0]);
		tap_check(!strcmp(f[1], "b,\"c\" "), "f1 '%s'", f[1]);
		tap_check(!strcmp(f[2], ""), "f2 '%s'", f[2]);
		tap_check(!strcmp(f[3], "d"), "f3 '%s'", f[3]);
	}
	strcpy(line, "a,\"b");
	tap_check(csv_split(line, f, 8, &why) == -EINVAL &&
			  strstr(why, "unterminated"),
		  "unterminated");
	strcpy(line, "a,\"b\"x");
	tap_check(csv_split(line, f, 8, &why) == -EINVAL && strstr(why, "junk"),
		  "junk");
	strcpy(line, "a,b\"c");
	tap_check(csv_split(line, f, 8, &why) == -EINVAL, "stray quote");
	strcpy(line, "1,2,3,4,5");
	tap_check(csv_split(line, f, 2, &why) == 5 && !strcmp(f[1], "2"),
		  "more than max");
	{
		static const char text[] =
			"# comment\r\n\r\nx,y\r\n\n  \n1,2\n";
		struct csv_reader r;
		FILE *fp = mem_in(text);

		csv_init(&r, fp, "t", CSV_SKIP_COMMENTS);
		tap_check(csv_next(&r) == 2 && r.lineno == 3 &&
				  !strcmp(r.field[1], "y"),
			  "line 3");
		tap_check(csv_next(&r) == 2 && r.lineno == 6 &&
				  !strcmp(r.field[0], "1"),
			  "line 6");
		tap_check(csv_next(&r) == 0, "eof");
		csv_free(&r);
		fclose(fp);
	}
	{
		static const char text[] = "a,b\nc\0d,e\nf,g\n";
		struct csv_reader r;
		FILE *fp = fmemopen((void *)text, sizeof(text) - 1, "r");

		csv_init(&r, fp, "t", 0);
		tap_check(csv_next(&r) == 2, "first");
		tap_check(csv_next(&r) == -EINVAL && r.lineno == 2 &&
				  strstr(r.why, "NUL"),
			  "NUL");
		tap_check(csv_next(&r) == 2 && r.lineno == 3,
			  "continues after a bad line");
		csv_free(&r);
		fclose(fp);
	}
	tap_done("csv: splitting, quoting, line numbers, bad lines");
}

/* ---- input files ---- */

#define HDR                                                                               \
	"realtime_ns,monotonic_ns,interval_ns,source,model_generation,energy_uj,idle_uj," \
	"cpu_ns,cycles,instructions,cache_misses,disk_bytes,tasks\n"

static void test_samples_csv(void)
{
	static const char good[] = HDR
		"1796220916000000000,10,1000000000,rapl,1,5000000,100,800000000,,,,4096,3\n"
		"# a comment\n"
		"1796220917000000000,20,1000000000,model,1,6000000,100,900000000,,,,0,3\n";
	static const char bad[] = HDR
		"1796220916000000000,10,1000000000,rapl,1,5,1,8,1,2,3,4,3\n"
		"1796220917000000000,10,0,rapl,1,5,1,8,1,2,3,4,3\n" /* 3: zero */
		"1796220918000000000,10,1000000000,rapl,1,5,1,8,1,2,3\n" /* 4: fields */
		"1796220919000000000,10,1000000000,rapl,1,5,1,-8,1,2,3,4,3\n" /* 5 */
		"1796220920000000000,10,1000000000,solar,1,5,1,8,1,2,3,4,3\n" /* 6 */
		"1796220921000000000,10,1000000000,rapl,1,5,1,8,,2,3,4,3\n" /* 7 */
		"1796220922000000000,10,1000000000,rapl,1,5,1,8,1,2,3,4,3\n";
	struct jt_samples s = { 0 };
	const char *d;
	FILE *fp;
	int ret;

	fp = mem_in(good);
	diag_begin();
	ret = jt_read_samples(fp, "good.csv", &s, NULL);
	d = diag_end();
	fclose(fp);
	tap_check(ret == 0 && s.n == 2 && s.st.bad == 0,
		  "good: ret %d n %zu bad %lu: %s", ret, s.n, s.st.bad, d);
	tap_check(s.present == ((1u << JL_F_CPU_NS) | (1u << JL_F_DISK)),
		  "present %#x", s.present);
	tap_check(s.n == 2 && s.s[1].f[JL_F_CPU_NS] == 9e8 &&
			  s.s[0].f[JL_F_DISK] == 4096 &&
			  s.s[1].end_ns == 1796220917000000000LL &&
			  s.s[0].energy_uj == 5e6,
		  "values");
	tap_check(s.n_rapl == 1 && s.n_model == 1, "sources");
	jt_samples_free(&s);

	memset(&s, 0, sizeof(s));
	fp = mem_in(bad);
	diag_begin();
	ret = jt_read_samples(fp, "bad.csv", &s, NULL);
	d = diag_end();
	fclose(fp);
	tap_check(ret == 0 && s.n == 2 && s.st.bad == 5, "bad: n %zu bad %lu",
		  s.n, s.st.bad);
	tap_check(s.st.first_bad_line == 3 &&
			  strstr(s.st.first_bad_why, "interval_ns") &&
			  strstr(s.st.first_bad_why, "zero"),
		  "first bad: %lu %s", s.st.first_bad_line, s.st.first_bad_why);
	tap_check(strstr(d, "bad.csv:3: interval_ns") != NULL,
		  "line 3 reported: %s", d);
	tap_check(strstr(d, "bad.csv:4: 11 fields, the header has 13") != NULL,
		  "line 4");
	tap_check(strstr(d, "bad.csv:5: cpu_ns: '-8'") != NULL, "line 5");
	tap_check(strstr(d, "bad.csv:6: source: 'solar'") != NULL, "line 6");
	tap_check(strstr(d, "bad.csv:7: cycles: empty here") != NULL, "line 7");
	jt_samples_free(&s);

	memset(&s, 0, sizeof(s));
	fp = mem_in("realtime_ns,cpu_ns\n1,2\n");
	diag_begin();
	ret = jt_read_samples(fp, "nohdr.csv", &s, NULL);
	d = diag_end();
	fclose(fp);
	tap_check(ret == -EINVAL &&
			  strstr(d, "nohdr.csv:1: header lacks interval_ns"),
		  "missing column: %d %s", ret, d);
	jt_samples_free(&s);

	memset(&s, 0, sizeof(s));
	fp = mem_in("");
	diag_begin();
	ret = jt_read_samples(fp, "empty.csv", &s, NULL);
	d = diag_end();
	fclose(fp);
	tap_check(ret == -EINVAL && strstr(d, "empty.csv: empty file"),
		  "empty: %s", d);
	jt_samples_free(&s);
	tap_done(
		"samples CSV: values, absent features, bad lines with file:line and reason");
}

static void test_meter_csv(void)
{
	static const char text[] =
		"timestamp,watts\n"
		"1796220916,100\n"
		"1796220916.5,101.5\n"
		"1796220916.5,102\n" /* 4: not increasing */
		"1796220917,-1\n" /* 5: negative */
		"1796220918,abc\n" /* 6: watts */
		"2026-12-02T14:15:19Z,103\n"
		"1796220920,104,5\n" /* 8: fields */
		"17962209210,104\n" /* 9: year 2539: past int64 ns */
		"1796220921000,104\n"; /* 10: ms after s */
	struct jt_meter m;
	const char *d;
	FILE *fp;
	int ret;

	jt_meter_init(&m, PARSE_TS_AUTO, 0);
	fp = mem_in(text);
	diag_begin();
	ret = jt_read_meter(fp, "pdu.csv", &m, NULL);
	d = diag_end();
	fclose(fp);
	tap_check(ret == 0 && m.n == 3 && m.st.bad == 6,
		  "ret %d n %zu bad %lu: %s", ret, m.n, m.st.bad, d);
	tap_check(m.n == 3 && m.t[1] == 1796220916500000000LL &&
			  m.w[1] == 101.5 && m.t[2] == 1796220919000000000LL,
		  "values");
	tap_check(
		strstr(d,
		       "pdu.csv:4: timestamp '1796220916.5' is not after the reading on "
		       "line 3") != NULL,
		"line 4: %s", d);
	tap_check(strstr(d, "pdu.csv:5: watts '-1': negative power") != NULL,
		  "line 5");
	tap_check(strstr(d, "pdu.csv:6: watts 'abc'") != NULL, "line 6");
	tap_check(strstr(d, "pdu.csv:8: 3 fields, want 2") != NULL, "line 8");
	tap_check(
		strstr(d,
		       "pdu.csv:9: timestamp '17962209210': timestamp out of range") !=
			NULL,
		"line 9");
	tap_check(
		strstr(d,
		       "pdu.csv:10: timestamp '1796220921000' looks like Unix milliseconds, "
		       "earlier ones were Unix seconds") != NULL,
		"line 10");
	tap_check(m.st.first_bad_line == 4, "first bad %lu",
		  m.st.first_bad_line);
	jt_meter_free(&m);

	/* No header; milliseconds detected with a message. */
	jt_meter_init(&m, PARSE_TS_AUTO, 0);
	fp = mem_in("1796220916000,5\n1796220916250,6\n");
	diag_begin();
	ret = jt_read_meter(fp, "ms.csv", &m, NULL);
	d = diag_end();
	fclose(fp);
	tap_check(ret == 0 && m.n == 2 && m.st.bad == 0 &&
			  m.t[1] == 1796220916250000000LL,
		  "ms: n %zu", m.n);
	tap_check(
		strstr(d, "ms.csv:1: timestamps look like Unix milliseconds") !=
			NULL,
		"ms message: %s", d);
	jt_meter_free(&m);

	/* A bad first line is a bad line, not a header, when one field is a value. */
	jt_meter_init(&m, PARSE_TS_AUTO, 0);
	fp = mem_in("yesterday,5\n1796220916,6\n");
	diag_begin();
	ret = jt_read_meter(fp, "h.csv", &m, NULL);
	d = diag_end();
	fclose(fp);
	tap_check(ret == 0 && m.n == 1 && m.st.bad == 1 &&
			  strstr(d, "h.csv:1: timestamp"),
		  "bad first line: %s", d);
	jt_meter_free(&m);

	/* --pdu-cmd: a reader program's stdout, and its exit status. */
	jt_meter_init(&m, PARSE_TS_AUTO, 0);
	diag_begin();
	ret = jt_read_meter_cmd(
		"printf 'timestamp,watts\\n1796220916,7\\n1796220917,8.5\\n'",
		&m, NULL, 10);
	d = diag_end();
	tap_check(ret == 0 && m.n == 2 && m.w[1] == 8.5, "pdu-cmd: %d %zu %s",
		  ret, m.n, d);
	jt_meter_free(&m);
	jt_meter_init(&m, PARSE_TS_AUTO, 0);
	diag_begin();
	ret = jt_read_meter_cmd("echo 1796220916,7; exit 3", &m, NULL, 0);
	d = diag_end();
	tap_check(ret == -EIO && strstr(d, "exited with status 3"),
		  "pdu-cmd exit: %d %s", ret, d);
	jt_meter_free(&m);
	tap_done(
		"meter CSV: header optional, ms detection, bad lines, --pdu-cmd");
}

/* ---- alignment ---- */

/* Exact integral (J) of the linear interpolation of (t, w) over [a, b], s. */
static double ref_integral(const double *t, const double *w, int n, double a,
			   double b)
{
	double e = 0;
	int i;

	for (i = 0; i + 1 < n; i++) {
		double lo = fmax(a, t[i]), hi = fmin(b, t[i + 1]), k;

		if (hi <= lo)
			continue;
		/* antiderivative of w(x) = w_i + k (x - t_i) */
		k = (w[i + 1] - w[i]) / (t[i + 1] - t[i]);
		e += w[i] * (hi - lo) + k / 2 *
						((hi - t[i]) * (hi - t[i]) -
						 (lo - t[i]) * (lo - t[i]));
	}
	return e;
}

static void test_align(void)
{
	int64_t t[] = { 0, 1000000000, 3000000000LL, 4000000000LL };
	double w[] = { 10, 20, 20, 0 };
	struct jt_meter m = { .t = t, .w = w, .n = 4 };
	double uj = 0, rt[64], rw[64];
	int64_t gt[64];
	double gw[64];
	int i, ok = 1;

	tap_check(jt_meter_energy(&m, 500000000, 3500000000LL, 5000000000LL,
				  &uj) == JT_ALIGN_OK &&
			  fabs(uj - 56250000.0) < 1e-6,
		  "known trace: %.9f uJ", uj);
	tap_check(jt_meter_energy(&m, 0, 4000000000LL, 0, &uj) == JT_ALIGN_OK &&
			  fabs(uj - 65000000.0) < 1e-6,
		  "whole trace: %.9f", uj);
	tap_check(jt_meter_energy(&m, 1000000000, 3000000000LL, 0, &uj) ==
				  JT_ALIGN_OK &&
			  fabs(uj - 40000000.0) < 1e-6,
		  "on reading boundaries: %.9f", uj);
	tap_check(jt_meter_energy(&m, -1, 1000, 0, &uj) == JT_ALIGN_UNCOVERED,
		  "before");
	tap_check(jt_meter_energy(&m, 3500000000LL, 4000000001LL, 0, &uj) ==
			  JT_ALIGN_UNCOVERED,
		  "after");
	tap_check(jt_meter_energy(&m, 1500000000, 2500000000LL, 1999999999,
				  &uj) == JT_ALIGN_GAP,
		  "2 s gap inside");
	tap_check(jt_meter_energy(&m, 1500000000, 2500000000LL, 2000000000,
				  &uj) == JT_ALIGN_OK &&
			  fabs(uj - 20000000.0) < 1e-6,
		  "gap = max is fine");
	tap_check(jt_meter_energy(&m, 3100000000LL, 3200000000LL, 1000000000,
				  &uj) == JT_ALIGN_OK,
		  "a gap elsewhere does not matter");

	/* Random piecewise-linear traces against the antiderivative. */
	for (i = 0; i < 64; i++) {
		gt[i] = (int64_t)1796220916 * 1000000000LL +
			(int64_t)i * 1000000000LL +
			(int64_t)rng_unif(-3e8, 3e8);
		gw[i] = rng_unif(0, 300);
		rt[i] = (double)(gt[i] - gt[0]) * 1e-9;
		rw[i] = gw[i];
	}
	m = (struct jt_meter){ .t = gt, .w = gw, .n = 64 };
	for (i = 0; i < 2000 && ok; i++) {
		double a = rng_unif(0.5, 60), b = a + rng_unif(1e-6, 3);
		int64_t an = gt[0] + (int64_t)llround(a * 1e9),
			bn = gt[0] + (int64_t)llround(b * 1e9);
		double ref =
			ref_integral(rt, rw, 64, (double)(an - gt[0]) * 1e-9,
				     (double)(bn - gt[0]) * 1e-9) *
			1e6;

		ok = tap_check(
			jt_meter_energy(&m, an, bn, 0, &uj) == JT_ALIGN_OK &&
				fabs(uj - ref) <= 1e-9 * fabs(ref) + 1e-6,
			"random %d: %.6f vs %.6f", i, uj, ref);
	}

	/*
	 * jt_align with instant readings: a row's power is the mean of the
	 * readings inside it (linear between them), never interpolated from
	 * readings outside it, which belong to other rows' load.
	 */
	{
		int64_t t6[] = { 0, 500000000, 1000000000, 3000000000LL,
				 3500000000LL, 4000000000LL };
		double w6[] = { 10, 15, 20, 20, 10, 0 };
		unsigned long l6[] = { 2, 3, 4, 5, 6, 7 };
		/* offset 0.25 s: meter clock + 0.25 s = sample clock */
		struct jt_sample ss[] = {
			{ .end_ns = 4150000000LL, .interval_ns = 8e8,
			  .line = 10 }, /* [3.1, 3.9]: 3.5 inside */
			{ .end_ns = 1750000000LL, .interval_ns = 1e9,
			  .line = 11 }, /* [0.5, 1.5]: 2 s gap */
			{ .end_ns = 1250000000LL, .interval_ns = 9.5e8,
			  .line = 12 }, /* [0.05, 1.0]: 0.5 and 1 inside */
			{ .end_ns = 4400000000LL, .interval_ns = 5e8,
			  .line = 13 }, /* [3.65, 4.15]: past the end */
			{ .end_ns = 3950000000LL, .interval_ns = 1e8,
			  .line = 14 }, /* [3.6, 3.7]: no reading inside */
		};
		struct jt_samples s = { .s = ss, .n = 5 };
		struct jt_align_stats st;
		struct jt_row *rows = NULL;
		size_t n = 0;

		jt_meter_init(&m, PARSE_TS_AUTO, 0);
		m.t = t6;
		m.w = w6;
		m.line = l6;
		m.n = 6;
		tap_check(jt_align(&s, &m, 250000000, 1500000000, &rows, &n,
				   &st) == 0,
			  "align");
		tap_check(n == 2 && st.uncovered == 1 && st.gap == 1 &&
				  st.between == 1,
			  "n %zu uncovered %zu gap %zu between %zu", n,
			  st.uncovered, st.gap, st.between);
		if (n == 2) {
			tap_check(rows[0].end_ns == 1250000000LL &&
					  rows[1].end_ns == 4150000000LL,
				  "sorted by end time");
			tap_check(fabs(rows[0].meter_uj - 17.5 * 0.95e6) < 1e-6,
				  "two readings inside: %f", rows[0].meter_uj);
			tap_check(fabs(rows[1].meter_uj - 10 * 0.8e6) < 1e-6,
				  "one reading inside: %f", rows[1].meter_uj);
			tap_check(rows[0].line == 12 && rows[0].last_line == 12 &&
					  rows[0].mlo == 1 && rows[0].mhi == 2 &&
					  rows[1].mlo == 4 && rows[1].mhi == 4,
				  "provenance: line %lu meter %zu..%zu",
				  rows[0].line, rows[0].mlo, rows[0].mhi);
		}
		free(rows);
	}
	tap_done(
		"align: exact integral of piecewise-linear power, coverage, gaps, offset");
}

/* n contiguous rows of len_ns from t0_ns; feature cpu_ns = (i + 1) * 1e6. */
static struct jt_sample *rows_from(int64_t t0_ns, int64_t len_ns, size_t n)
{
	struct jt_sample *ss = calloc(n, sizeof(*ss));
	size_t i;

	for (i = 0; ss && i < n; i++) {
		ss[i].end_ns = t0_ns + (int64_t)(i + 1) * len_ns;
		ss[i].interval_ns = (double)len_ns;
		ss[i].f[JL_F_CPU_NS] = (double)(i + 1) * 1e6;
		ss[i].energy_uj = -1;
		ss[i].line = 2 + i;
	}
	return ss;
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void test_meter_semantics(void)
{
	/* Readings every second, 0..10 s; reading k is 10 + k W. */
	int64_t t[11];
	double w[11];
	unsigned long l[11];
	struct jt_sample *ss = rows_from(100000000, 250000000, 39);
	struct jt_samples s = { .s = ss, .n = 39 };
	struct jt_align_stats st;
	struct jt_row *rows = NULL;
	struct jt_meter m;
	size_t n = 0, i;

	/* jt_median against sorting, with ties and even counts. */
	for (i = 1; i < 200; i++) {
		double v[200], sorted[200], want;
		size_t j;

		for (j = 0; j < i; j++)
			v[j] = sorted[j] = floor(rng_unif(0, 20));
		qsort(sorted, i, sizeof(double), dbl_cmp);
		want = i & 1 ? sorted[i / 2] :
			       (sorted[i / 2 - 1] + sorted[i / 2]) / 2;
		if (!tap_check(jt_median(v, i) == want, "median of %zu", i))
			break;
	}
	for (i = 0; i < 11; i++) {
		t[i] = (int64_t)i * 1000000000LL;
		w[i] = 10 + (double)i;
		l[i] = 2 + i;
	}
	jt_meter_init(&m, PARSE_TS_AUTO, 0);
	m.t = t;
	m.w = w;
	m.line = l;
	m.n = 11;

	/*
	 * Instant readings, slower than the rows (1 s vs 250 ms): each reading
	 * is paired with the row it falls in; the others are not used.
	 */
	tap_check(jt_align(&s, &m, 0, 5000000000LL, &rows, &n, &st) == 0,
		  "instant");
	tap_check(n == 9 && st.between == 30 && !st.aggregated,
		  "instant: n %zu between %zu", n, st.between);
	tap_check(fabs(st.meter_period_ns - 1e9) < 1 &&
			  fabs(st.row_ns - 2.5e8) < 1,
		  "periods %g %g", st.meter_period_ns, st.row_ns);
	/* Reading at 1 s is in row [0.85, 1.1] (line 5): 11 W for 250 ms. */
	tap_check(n == 9 && rows[0].line == 5 &&
			  fabs(rows[0].meter_uj - 11 * 0.25e6) < 1e-6 &&
			  rows[0].f[JL_F_CPU_NS] == 4e6,
		  "paired: line %lu %f uJ", n ? rows[0].line : 0,
		  n ? rows[0].meter_uj : 0);
	free(rows);

	/*
	 * Average readings (reading k is the mean over (k - 1, k] s): the rows
	 * are summed into the meter's periods, pro rata where a row straddles
	 * a reading, and the target is exactly the reading times its period.
	 */
	m.sem = JT_METER_AVERAGE;
	tap_check(jt_align(&s, &m, 0, 5000000000LL, &rows, &n, &st) == 0,
		  "average");
	/* (0, 1] and (9, 10] are not covered by rows that span 0.1 .. 9.85 */
	tap_check(n == 8 && st.aggregated && st.uncovered == 2 &&
			  st.rows_in == 33,
		  "average: n %zu aggregated %d uncovered %zu rows %zu", n,
		  st.aggregated, st.uncovered, st.rows_in);
	if (n == 8) {
		/* (1, 2]: 0.4 of row 4, rows 5-7, 0.6 of row 8 */
		double f = (0.4 * 4 + 5 + 6 + 7 + 0.6 * 8) * 1e6;

		tap_check(rows[0].end_ns == 2000000000LL &&
				  rows[0].interval_ns == 1e9 &&
				  fabs(rows[0].meter_uj - 12e6) < 1e-6,
			  "(1, 2]: %lld %g %f", (long long)rows[0].end_ns,
			  rows[0].interval_ns, rows[0].meter_uj);
		tap_check(fabs(rows[0].f[JL_F_CPU_NS] - f) < 1e-3,
			  "pro rata: %f want %f", rows[0].f[JL_F_CPU_NS], f);
		tap_check(rows[0].line == 5 && rows[0].last_line == 9 &&
				  rows[0].mlo == 2 && rows[0].mhi == 2,
			  "lines %lu-%lu meter %zu", rows[0].line,
			  rows[0].last_line, rows[0].mlo);
	}
	free(rows);

	/* A missing row (a bad line) leaves its period uncovered. */
	memmove(&ss[10], &ss[11], 28 * sizeof(*ss)); /* row [2.6, 2.85] */
	s.n = 38;
	tap_check(jt_align(&s, &m, 0, 5000000000LL, &rows, &n, &st) == 0 &&
			  n == 7 && st.uncovered == 3,
		  "hole: n %zu uncovered %zu", n, st.uncovered);
	free(rows);
	free(ss);

	/* Average readings faster than the rows: integrated per row. */
	{
		int64_t tf[101];
		double wf[101];
		struct jt_sample *s2 = rows_from(0, 1000000000, 10);
		struct jt_samples ss2 = { .s = s2, .n = 10 };

		for (i = 0; i <= 100; i++) {
			tf[i] = (int64_t)i * 100000000LL;
			wf[i] = (double)(i % 7);
		}
		m.t = tf;
		m.w = wf;
		m.line = NULL;
		m.n = 101;
		tap_check(jt_align(&ss2, &m, 50000000, 5000000000LL, &rows, &n,
				   &st) == 0 &&
				  !st.aggregated,
			  "fine average");
		/*
		 * Row [1, 2] s is [0.95, 1.95] in meter time: half of reading
		 * 10's period (0.9, 1], all of 11..19, half of 20's.
		 */
		if (n >= 1) {
			double e = (wf[10] + wf[20]) * 0.05e6;

			for (i = 11; i <= 19; i++)
				e += wf[i] * 0.1e6;
			tap_check(rows[0].end_ns == 2000000000LL &&
					  fabs(rows[0].meter_uj - e) < 1e-6,
				  "per row: %lld %f want %f",
				  (long long)rows[0].end_ns, rows[0].meter_uj,
				  e);
		}
		free(rows);
		free(s2);
	}
	tap_done("align: instant readings paired with their row, average "
		 "readings over the meter's period, rows summed into it");
}

/* ---- fitting ---- */

/* Realistic-ish synthetic node: each feature varies independently enough. */
static const struct jl_coef truth = {
	.cpu_time_uw = 6000000, /* 6 W per busy CPU */
	.cycles_pj = 1000,
	.instructions_pj = 500,
	.cache_miss_pj = 50000,
	.disk_byte_pj = 10000,
	.net_tx_byte_pj = 20000,
	.net_rx_byte_pj = 15000,
	.pagecache_byte_pj = 2000,
	.idle_uw = 40000000, /* 40 W */
};

static struct jt_row *synth_rows(size_t n, const struct jl_coef *c,
				 double noise, unsigned int present)
{
	struct jt_row *r = calloc(n, sizeof(*r));
	size_t i;

	for (i = 0; r && i < n; i++) {
		double len = rng_unif(0.9e9, 1.1e9),
		       busy = rng_unif(0, 2) * len;

		r[i].end_ns = 1796220916000000000LL + (int64_t)i * 1000000000LL;
		r[i].interval_ns = nearbyint(len);
		r[i].f[JL_F_CPU_NS] = nearbyint(busy);
		r[i].f[JL_F_CYCLES] = nearbyint(busy * rng_unif(1.0, 3.5));
		r[i].f[JL_F_INSTR] =
			nearbyint(r[i].f[JL_F_CYCLES] * rng_unif(0.3, 2.5));
		r[i].f[JL_F_MISSES] = nearbyint(rng_unif(0, 2e8) * len * 1e-9);
		r[i].f[JL_F_DISK] =
			rng_unif(0, 1) < 0.3 ? 0 : nearbyint(rng_unif(0, 5e8));
		if (rng_unif(0, 1) < 0.33) {
			r[i].f[JL_F_NET_TX] = nearbyint(rng_unif(0, 2e8));
			r[i].f[JL_F_NET_RX] = nearbyint(rng_unif(0, 3e8));
		}
		r[i].f[JL_F_PAGECACHE] = nearbyint(rng_unif(0, 2e9));
		for (unsigned int j = 0; j < JT_NF; j++)
			if (!(present & (1u << j)))
				r[i].f[j] = 0;
		r[i].meter_uj =
			jt_predict_uj(c, &r[i]) * (1 + noise * rng_gauss());
		r[i].module_uj = -1;
	}
	return r;
}

#define ALL_FEATURES ((1u << JT_NF) - 1)
#define OLD_FEATURES ((1u << (JL_F_DISK + 1)) - 1)

/* Largest relative error of coefficients in mask against the truth. */
static double coef_err(const struct jl_coef *c, const double *truth6,
		       unsigned int mask, unsigned int *worst)
{
	double e = 0;
	unsigned int i;

	for (i = 0; i < JL_NR_COEF; i++) {
		double d;

		if (!(mask & (1u << i)) || truth6[i] == 0)
			continue;
		d = fabs((double)jl_coef_get(c, i) - truth6[i]) / truth6[i];
		if (d >= e) {
			e = d;
			if (worst)
				*worst = i;
		}
	}
	return e;
}

#define ALL_COEFS ((1u << JL_NR_COEF) - 1)

/* coef_err against what a generator's recording lets a fit find. */
static double gen_coef_err(const struct jl_coef *c, const struct gen_opts *g,
			   unsigned int *worst)
{
	double t[JL_NR_COEF];

	gen_effective_truth(g, t);
	return coef_err(c, t, ALL_COEFS, worst);
}

static void test_recover(void)
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
		tap_check(ret == 0, "train %d", ret);
		for (i = 0; i < JL_NR_COEF; i++) {
			double want = (double)jl_coef_get(&truth, i);
			double got = (double)jl_coef_get(&rep.model.coef, i);

			tap_check(fabs(got - want) <= 0.02 * want,
				  "%s: %s %.0f want %.0f", mi ? "nnls" : "ols",
				  jl_coef_names[i], got, want);
		}
		tap_check(rep.have_cv && rep.cv.model.mape < 1.0 &&
				  rep.cv.model.r2 > 0.99,
			  "CV MAPE %.3f R2 %.4f", rep.cv.model.mape,
			  rep.cv.model.r2);
		tap_check(rep.cv.base.mape > 2 * rep.cv.model.mape,
			  "baseline is worse: %.3f", rep.cv.base.mape);
		tap_check(!rep.model.dropped, "nothing dropped");
	}
	free(rows);
	tap_done(
		"fit: synthetic data (0.5%% noise) recovers all %d coefficients within 2%%", JL_NR_COEF);
}

static void test_exact_units(void)
{
	/* Noise-free data: the rounded module coefficients come back exactly. */
	struct jl_coef c = { .cpu_time_uw = 7654321, .cycles_pj = 1234,
			     .instructions_pj = 567, .cache_miss_pj = 45678,
			     .disk_byte_pj = 9876, .idle_uw = 43210987 };
	struct jt_row *rows = synth_rows(500, &c, 0, ALL_FEATURES);
	struct jt_train_opts o = { .method = FIT_NNLS,
				   .folds = 5,
				   .min_samples = 20 };
	struct jt_report rep = { 0 };
	unsigned int i;
	size_t r;

	tap_check(jt_train(rows, 500, ALL_FEATURES, &o, &rep, NULL, NULL) == 0,
		  "train");
	for (i = 0; i < JL_NR_COEF; i++)
		tap_check(jl_coef_get(&rep.model.coef, i) == jl_coef_get(&c, i),
			  "%s %llu want %llu", jl_coef_names[i],
			  (unsigned long long)jl_coef_get(&rep.model.coef, i),
			  (unsigned long long)jl_coef_get(&c, i));
	tap_check(rep.cv.model.mape < 1e-6, "CV MAPE %g", rep.cv.model.mape);
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
		if (!tap_check(fabs((double)uj - jt_predict_uj(&c, &rows[r])) <=
				       1.0,
			       "row %zu: module %llu uJ, trainer %.3f", r,
			       (unsigned long long)uj,
			       jt_predict_uj(&c, &rows[r])))
			break;
	}
	free(rows);
	tap_done("units: noise-free fit returns the exact module coefficients");
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

static void test_nnls(void)
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
		ok &= tap_check(fit_nnls(a, b, x, &it) == 0,
				"trial %d converged", trial);
		for (j = 0; j < n; j++)
			ok &= tap_check(gsl_vector_get(x, j) >= 0,
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
		ok &= tap_check(rss <= brute_nnls(a, b, ref) * (1 + 1e-9) +
						1e-12,
				"trial %d rss %.12g vs optimum %.12g", trial,
				rss, brute_nnls(a, b, ref));
	}
	tap_check(ols_negative > 100,
		  "OLS went negative %d times (the cases that matter)",
		  ols_negative);
	gsl_multifit_linear_free(ws);
	gsl_vector_free(c);
	gsl_vector_free(x);
	gsl_vector_free(b);
	gsl_matrix_free(cov);
	gsl_matrix_free(a);
	tap_done(
		"nnls: never negative, optimal against brute force (300 problems)");
}

static void test_nnls_trainer(void)
{
	/* Power drops with disk I/O here, so OLS fits a negative disk_byte_pj. */
	size_t n = 2000, i;
	struct jt_row *rows = synth_rows(n, &truth, 0.002, ALL_FEATURES);
	/*
	 * Misspecified on purpose (NNLS cannot follow the negative disk
	 * term), which a robust fit would partly treat as outliers: this is
	 * about the refit, so plain least squares.
	 */
	struct jt_train_opts o = { .method = FIT_OLS,
				   .folds = 4,
				   .min_samples = 20,
				   .no_robust = 1 };
	struct jt_report rep = { 0 }, nn = { 0 };
	char *text = NULL;
	size_t len = 0;
	FILE *fp;

	for (i = 0; i < n; i++)
		rows[i].meter_uj -= 18000.0 * 1e-6 * rows[i].f[JL_F_DISK];
	tap_check(jt_train(rows, n, ALL_FEATURES, &o, &rep, NULL, NULL) == 0,
		  "ols");
	/*
	 * Zeroing a negative coefficient after the fact leaves the others
	 * fitted to compensate for it; OLS must refit without it instead.
	 */
	tap_check(rep.model.negative[JL_F_DISK] < -1000 &&
			  (rep.model.dropped & (1u << JL_F_DISK)) &&
			  rep.model.coef.disk_byte_pj == 0 &&
			  rep.model.raw[JL_F_DISK] == 0,
		  "OLS disk %.1f pJ, dropped %#x",
		  rep.model.negative[JL_F_DISK], rep.model.dropped);
	o.method = FIT_NNLS;
	tap_check(jt_train(rows, n, ALL_FEATURES, &o, &nn, NULL, NULL) == 0,
		  "nnls");
	for (i = 0; i < JL_NR_COEF; i++)
		tap_check(nn.model.raw[i] >= 0, "nnls %s = %g",
			  jl_coef_names[i], nn.model.raw[i]);
	tap_check(!nn.model.dropped && nn.model.coef.disk_byte_pj == 0,
		  "disk 0, nothing dropped");
	/* Here the refit is the NNLS solution: the same active set. */
	for (i = 0; i < JL_NR_COEF; i++)
		tap_check(rel_close(rep.model.raw[i], nn.model.raw[i], 1e-6),
			  "ols refit %s %.6g = nnls %.6g", jl_coef_names[i],
			  rep.model.raw[i], nn.model.raw[i]);
	tap_check(fabs((double)nn.model.coef.cpu_time_uw - 6e6) < 0.05 * 6e6,
		  "cpu %llu", (unsigned long long)nn.model.coef.cpu_time_uw);
	fp = open_memstream(&text, &len);
	jt_write_report(fp, &rep, 1);
	fclose(fp);
	tap_check(strstr(text, "disk_byte_pj fit negative") &&
			  strstr(text, "refitted without it"),
		  "reported: %s", text);
	free(text);
	free(rows);
	tap_done("ols in the trainer: a negative coefficient is dropped and the "
		 "rest refitted (= nnls here)");
}

/* Replace row i's features with a leverage outlier, etc.; lines from 2. */
static void number_lines(struct jt_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		rows[i].line = rows[i].last_line = 2 + i;
}

static int rejected_line(const struct jt_report *rep, unsigned long line)
{
	for (size_t i = 0; i < rep->n_outliers_kept; i++)
		if (rep->outliers[i].line == line)
			return 1;
	return 0;
}

static void test_robust(void)
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
	tap_check(jt_train(rows, n, ALL_FEATURES, &o, &rep, NULL, NULL) == 0,
		  "clean");
	tap_check(rep.robust && rep.n_rejected <= 2,
		  "clean: %zu rejected", rep.n_rejected);

	/* One of each: meter spike, meter dropout, two leverage points. */
	rows[100].meter_uj *= 50;
	rows[900].meter_uj = 0;
	rows[2500].f[JL_F_CPU_NS] *= 40;
	rows[3100].f[JL_F_CYCLES] += 5e11;
	memset(&rep, 0, sizeof(rep));
	rep.samples_name = "s.csv";
	tap_check(jt_train(rows, n, ALL_FEATURES, &o, &rep, NULL, NULL) == 0,
		  "robust");
	e = coef_err(&rep.model.coef, t6, ALL_COEFS, &worst);
	tap_check(e < 0.02, "robust: %s off by %.2f%%", jl_coef_names[worst],
		  e * 100);
	tap_check(rep.n_rejected >= 4 && rep.n_rejected <= 8 &&
			  rejected_line(&rep, 102) &&
			  rejected_line(&rep, 902) &&
			  rejected_line(&rep, 2502) &&
			  rejected_line(&rep, 3102),
		  "rejected %zu, by line", rep.n_rejected);
	tap_check(rep.have_cv && rep.cv.model.mape < 1.0,
		  "CV MAPE %.3f%% without the rejected", rep.cv.model.mape);
	fp = open_memstream(&text, &len);
	jt_write_report(fp, &rep, 1);
	fclose(fp);
	tap_check(strstr(text, "# rejected: s.csv:2502") &&
			  strstr(text, "# rejected: s.csv:102") &&
			  strstr(text, "bisquare"),
		  "report: %s", text);
	free(text);

	/* --robust off: one bad row is enough to poison the fit. */
	o.no_robust = 1;
	memset(&rep, 0, sizeof(rep));
	tap_check(jt_train(rows, n, ALL_FEATURES, &o, &rep, NULL, NULL) == 0,
		  "plain");
	e = coef_err(&rep.model.coef, t6, ALL_COEFS, &worst);
	tap_check(!rep.robust && rep.n_rejected == 0 && e > 0.2,
		  "plain: %s off by %.1f%%", jl_coef_names[worst], e * 100);
	free(rows);
	tap_done("robust: bisquare IRLS from an LTS start rejects spikes, "
		 "dropouts and leverage points, by line; --robust off does not");
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

static void test_uncertainty(void)
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
		tap_check(jt_train(rows, 2000, ALL_FEATURES, &o, &rep, NULL,
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

		tap_check(rep.model.have_se && se_mean > sd / 2 &&
				  se_mean < sd * 2,
			  "cpu_time: bootstrap SE %.4g vs spread %.4g", se_mean,
			  sd);
	}
	tap_check(!rep.model.collinear, "varied load: no collinearity (%#x)",
		  rep.model.collinear);

	/* cpu_ns, cycles and instructions moving together within 1%. */
	rows = collinear_rows(5000, 0.01, 0.01);
	memset(&rep, 0, sizeof(rep));
	tap_check(jt_train(rows, 5000, ALL_FEATURES, &o, &rep, NULL, NULL) == 0,
		  "collinear");
	tap_check((rep.model.collinear & (1u << JL_F_CYCLES)) &&
			  (rep.model.collinear & (1u << JL_F_INSTR)) &&
			  !(rep.model.collinear & (1u << JL_F_DISK)) &&
			  !(rep.model.collinear & (1u << JL_F_MISSES)),
		  "named: %#x", rep.model.collinear);
	fp = open_memstream(&text, &len);
	jt_write_report(fp, &rep, 1);
	fclose(fp);
	tap_check(strstr(text, "cannot be separated") &&
			  strstr(text, "cycles") && strstr(text, "instructions") &&
			  strstr(text, "+-"),
		  "report: %s", text);
	free(text);
	free(rows);
	tap_done("uncertainty: block-bootstrap standard errors match the real "
		 "spread; collinear coefficients are named");
}

static void test_model_check(void)
{
	struct jt_row *rows = synth_rows(1000, &truth, 0.01, ALL_FEATURES);
	struct jt_train_opts o = { .method = FIT_NNLS,
				   .folds = 5,
				   .min_samples = 20 };
	struct jt_report rep = { 0 }, bad;
	char why[256];
	size_t i;

	tap_check(jt_train(rows, 1000, ALL_FEATURES, &o, &rep, NULL, NULL) == 0,
		  "train");
	tap_check(jt_model_check(&rep, why, sizeof(why)) == 0, "plausible: %s",
		  why);

	bad = rep;
	memset(&bad.model.coef, 0, sizeof(bad.model.coef));
	tap_check(jt_model_check(&bad, why, sizeof(why)) &&
			  strstr(why, "all coefficients are 0"),
		  "zero: %s", why);
	bad = rep;
	bad.cv.model.mape = NAN;
	tap_check(jt_model_check(&bad, why, sizeof(why)) &&
			  strstr(why, "not finite"),
		  "nan: %s", why);
	bad = rep;
	bad.cv.model.mape = bad.cv.base.mape * 1.5;
	tap_check(jt_model_check(&bad, why, sizeof(why)) &&
			  strstr(why, "worse than the CPU-only baseline"),
		  "worse: %s", why);
	bad = rep;
	bad.model.coef.idle_uw = 0;
	tap_check(jt_model_check(&bad, why, sizeof(why)) &&
			  strstr(why, "idle power"),
		  "idle 0: %s", why);
	bad = rep;
	bad.model.coef.idle_uw = (jl_u64)(rep.median_w * 2e6);
	tap_check(jt_model_check(&bad, why, sizeof(why)) &&
			  strstr(why, "idle power"),
		  "idle above the measured power: %s", why);
	bad = rep;
	bad.n_rejected = bad.n / 3;
	tap_check(jt_model_check(&bad, why, sizeof(why)) &&
			  strstr(why, "outliers"),
		  "a third rejected: %s", why);

	/* A meter that reads 0 throughout trains to a refused model. */
	for (i = 0; i < 1000; i++)
		rows[i].meter_uj = 0;
	memset(&rep, 0, sizeof(rep));
	if (jt_train(rows, 1000, ALL_FEATURES, &o, &rep, NULL, NULL) == 0)
		tap_check(jt_model_check(&rep, why, sizeof(why)) != 0,
			  "zero meter refused");
	free(rows);
	tap_done("model check: all zero, non-finite metrics, worse than the "
		 "baseline, implausible idle, mostly outliers");
}

/* OLS through the blocked QR agrees with gsl_multifit_linear on the full matrix. */
static void test_blocked_qr(void)
{
	const size_t n = 5000;
	const unsigned int p = 7, cols[] = { 0, 1, 2, 3, 4, 5, 6 };
	double *x = malloc(n * p * sizeof(*x)), *y = malloc(n * sizeof(*y));
	gsl_matrix *xm = gsl_matrix_alloc(n, p), *cov = gsl_matrix_alloc(p, p);
	gsl_vector *yv = gsl_vector_alloc(n), *c = gsl_vector_alloc(p);
	gsl_multifit_linear_workspace *ws = gsl_multifit_linear_alloc(n, p);
	struct fit_design d = { .n = n, .stride = p, .x = x, .y = y };
	struct fit_blocks b;
	struct fit_result res;
	double chisq;
	size_t i, j;

	for (i = 0; i < n; i++) {
		double u0 = rng_unif(0, 1);

		for (j = 0; j < p; j++) {
			/* wildly different column scales, mildly correlated */
			x[i * p + j] = pow(10, (double)j * 1.5) *
				       (rng_unif(0, 1) + 0.3 * u0);
			gsl_matrix_set(xm, i, j, x[i * p + j]);
		}
		y[i] = rng_unif(-1, 1) * 100 + x[i * p + 3] * 1e-4;
		gsl_vector_set(yv, i, y[i]);
	}
	gsl_multifit_linear(xm, yv, c, cov, &chisq, ws);
	tap_check(fit_blocks_build(&d, cols, p, 3, &b) == 0, "build");
	tap_check(fit_solve(&b, -1, FIT_OLS, &res) == 0, "solve");
	for (j = 0; j < p; j++)
		tap_check(rel_close(res.beta[j], gsl_vector_get(c, j), 1e-8),
			  "beta%zu %.12g vs %.12g", j, res.beta[j],
			  gsl_vector_get(c, j));
	fit_blocks_free(&b);
	gsl_multifit_linear_free(ws);
	gsl_vector_free(c);
	gsl_vector_free(yv);
	gsl_matrix_free(cov);
	gsl_matrix_free(xm);
	free(x);
	free(y);
	tap_done(
		"ols: blocked QR reduction gives gsl_multifit_linear's full-matrix solution");
}

static void test_folds(void)
{
	static const size_t ns[] = { 10, 11, 99, 1000, 1000003 };
	static const unsigned int ks[] = { 1, 2, 3, 5, 7, 10 };
	unsigned int a, bk, k;

	for (a = 0; a < sizeof(ns) / sizeof(ns[0]); a++)
		for (bk = 0; bk < sizeof(ks) / sizeof(ks[0]); bk++) {
			size_t n = ns[a], lo = SIZE_MAX, hi = 0;
			unsigned int K = ks[bk];

			tap_check(fit_fold_start(n, 0, K) == 0 &&
					  fit_fold_start(n, K, K) == n,
				  "ends n=%zu K=%u", n, K);
			for (k = 0; k < K; k++) {
				size_t sz = fit_fold_start(n, k + 1, K) -
					    fit_fold_start(n, k, K);

				lo = sz < lo ? sz : lo;
				hi = sz > hi ? sz : hi;
			}
			tap_check(hi - lo <= 1 && lo >= n / K,
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
		tap_check(fit_blocks_build(&d, cols, 2, 4, &b) == 0, "build");
		tap_check(b.start[2] == 200 && b.start[3] == 300,
			  "fold 2 is rows 200..299");
		tap_check(fit_solve(&b, 2, FIT_OLS, &r) == 0, "solve");
		tap_check(fabs(r.beta[0] - 3) < 1e-9 &&
				  fabs(r.beta[1] - 2) < 1e-9,
			  "without fold 2: %g %g", r.beta[0], r.beta[1]);
		tap_check(fit_solve(&b, 1, FIT_OLS, &r) == 0 &&
				  fabs(r.beta[0] - 3) > 1,
			  "with fold 2: %g", r.beta[0]);
		tap_check(fit_blocks_build(&d2, cols, 2, 1, &b2) == 0,
			  "build2");
		tap_check(fit_solve(&b, 2, FIT_NNLS, &r) == 0 &&
				  fit_solve(&b2, -1, FIT_NNLS, &r2) == 0,
			  "nnls");
		tap_check(rel_close(r.beta[0], r2.beta[0], 1e-10) &&
				  rel_close(r.beta[1], r2.beta[1], 1e-10),
			  "same as direct");
		tap_check(fit_solve(&b, 7, FIT_OLS, &r) == 0,
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
		tap_check(fit_blocks_build(&d, cols, 3, 3, &b) == 0 &&
				  b.q == 2 && b.scale[1] == 0,
			  "zero column dropped");
		tap_check(fit_solve(&b, -1, FIT_OLS, &r) == 0 &&
				  r.beta[1] == 0 &&
				  fabs(r.beta[0] - 5) < 1e-9 &&
				  fabs(r.beta[2] - 0.5) < 1e-12,
			  "fit %g %g %g", r.beta[0], r.beta[1], r.beta[2]);
		fit_blocks_free(&b);
		tap_check(fit_blocks_build(&d, cols, 3, 61, &b) == -EINVAL,
			  "more folds than rows");
	}
	tap_done("cv: contiguous folds, held-out fold excluded exactly");
}

static void test_train_errors_and_report(void)
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
	tap_check(jt_train(rows, 300, (1u << JL_F_CPU_NS) | (1u << JL_F_DISK),
			   &o, &rep, NULL, NULL) == -EINVAL,
		  "min samples");
	d = diag_end();
	tap_check(strstr(d, "only 300 aligned samples, need at least 301") !=
			  NULL,
		  "%s", d);
	o.min_samples = 20;
	o.folds = 200;
	diag_begin();
	tap_check(jt_train(rows, 300, 1, &o, &rep, NULL, NULL) == -EINVAL,
		  "folds");
	d = diag_end();
	tap_check(strstr(d, "too few for 200 folds") != NULL, "%s", d);

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
	tap_check(jt_train(rows, 300, (1u << JL_F_CPU_NS) | (1u << JL_F_DISK),
			   &o, &rep, NULL, NULL) == 0,
		  "train");
	tap_check(rep.zero == (1u << JL_F_DISK), "zero %#x", rep.zero);
	tap_check(rep.model.fitted ==
			  ((1u << JL_F_CPU_NS) | (1u << JL_NR_FEATURES)),
		  "fitted %#x", rep.model.fitted);
	fp = open_memstream(&text, &len);
	tap_check(jt_write_report(fp, &rep, 1) == 0, "write");
	fclose(fp);
	tap_check(jl_coef_parse(text, len, &parsed) == 0 &&
			  !memcmp(&parsed, &rep.model.coef, sizeof(parsed)),
		  "output parses with jl_coef_parse:\n%s", text);
	tap_check(
		strstr(text,
		       "left out (empty in the samples: not measured on this machine, "
		       "e.g. no PMU): cycles instructions cache_misses") !=
			NULL,
		"absent");
	tap_check(strstr(text, "left out (0 in every interval): disk_bytes") !=
			  NULL,
		  "zero");
	tap_check(strstr(text, "3 intervals not covered") != NULL, "dropped");
	tap_check(strstr(text, "# node MAPE ") && strstr(text, "(5-fold CV)") &&
			  strstr(text, "than CPU-only"),
		  "headline");
	tap_check(strstr(text, "meter energy is 2.00x") != NULL, "ratio");
	tap_check(parsed.cycles_pj == 0 && parsed.instructions_pj == 0 &&
			  parsed.cache_miss_pj == 0,
		  "absent features are 0");
	free(text);
	free(rows);
	tap_done(
		"train: errors, left-out features, report parses with jl_coef_parse");
}


/* ---- input hygiene (issue 17, cases 6-8) ---- */

static void test_input_hygiene(void)
{
	static const char bom_samples[] = "\xef\xbb\xbf" HDR
		"1796220916000000000,10,1000000000,rapl,1,5,1,8,1,2,3,4,3\n";
	static const char overlap[] = HDR
		"1796220916000000000,10,1000000000,rapl,1,5,1,8,1,2,3,4,3\n"
		"1796220917000000000,10,1000000000,rapl,1,5,1,8,1,2,3,4,3\n"
		"1796220917000000000,10,1000000000,rapl,1,5,1,8,1,2,3,4,3\n" /* 4: dup */
		"1796220918000000000,10,1000000000,rapl,1,5,1,8,1,2,3,4,3\n"
		"1796220919000000000,10,3000000000,rapl,1,5,1,8,1,2,3,4,3\n" /* 6: overlaps */
		"1796220919500000000,10,500000000,rapl,1,5,1,8,1,2,3,4,3\n" /* 7: ok */
		"1796220919200000000,10,100000000,rapl,1,5,1,8,1,2,3,4,3\n" /* 8: back */
		"1796220920500000000,10,1000500000,rapl,1,5,1,8,1,2,3,4,3\n"; /* 9: 0.5 ms: ok */
	static const char insane[] = HDR
		"1796220916250000000,10,250000000,rapl,1,5,1,1000000000000000,1,2,3,4,3\n"
		"1796220916500000000,10,250000000,rapl,1,5,1,8,18446744073709550616,2,3,4,3\n"
		"1796220916750000000,10,250000000,rapl,1,5,1,400000000,1,2,3,4,3\n";
	struct jt_samples s = { 0 };
	struct jt_meter m;
	const char *d;
	FILE *fp;
	int ret;

	/* A UTF-8 byte-order mark (Windows editors, Excel exports) is accepted. */
	fp = mem_in(bom_samples);
	diag_begin();
	ret = jt_read_samples(fp, "bom.csv", &s, NULL);
	d = diag_end();
	fclose(fp);
	tap_check(ret == 0 && s.n == 1 && s.st.bad == 0,
		  "BOM samples: %d n %zu: %s", ret, s.n, d);
	jt_samples_free(&s);
	jt_meter_init(&m, PARSE_TS_AUTO, 0);
	fp = mem_in("\xef\xbb\xbf" "1796220916,5\n1796220917,6\n");
	diag_begin();
	ret = jt_read_meter(fp, "bom.csv", &m, NULL);
	d = diag_end();
	fclose(fp);
	tap_check(ret == 0 && m.n == 2 && m.st.bad == 0,
		  "BOM meter without header: n %zu: %s", m.n, d);
	jt_meter_free(&m);
	jt_meter_init(&m, PARSE_TS_AUTO, 0);
	fp = fmemopen((void *)"\xff\xfe" "1\0" "7\0", 6, "r");
	diag_begin();
	ret = jt_read_meter(fp, "u16.csv", &m, NULL);
	d = diag_end();
	fclose(fp);
	tap_check(strstr(d, "u16.csv:1: UTF-16") != NULL, "UTF-16: %s", d);
	jt_meter_free(&m);

	/* Duplicate, overlapping and backwards rows are bad lines. */
	memset(&s, 0, sizeof(s));
	fp = mem_in(overlap);
	diag_begin();
	ret = jt_read_samples(fp, "ov.csv", &s, NULL);
	d = diag_end();
	fclose(fp);
	tap_check(ret == 0 && s.n == 5 && s.st.bad == 3,
		  "overlaps: n %zu bad %lu: %s", s.n, s.st.bad, d);
	tap_check(strstr(d, "ov.csv:4: realtime_ns") &&
			  strstr(d, "not after the row on line 3"),
		  "duplicate: %s", d);
	tap_check(strstr(d, "ov.csv:6: interval_ns") &&
			  strstr(d, "overlaps the row on line 5 by 2000 ms"),
		  "overlap: %s", d);
	tap_check(strstr(d, "ov.csv:8: realtime_ns") != NULL, "backwards: %s",
		  d);
	jt_samples_free(&s);

	/* Values no machine can produce: the row's line is named. */
	for (unsigned int i = 0; i < JT_NF; i++)
		tap_check(jt_feature_max_rate[i] > 0, "%s has a bound",
			  jt_feature_cols[i]);
	memset(&s, 0, sizeof(s));
	fp = mem_in(insane);
	diag_begin();
	ret = jt_read_samples(fp, "ins.csv", &s, NULL);
	d = diag_end();
	fclose(fp);
	tap_check(ret == 0 && s.n == 1 && s.st.bad == 2,
		  "implausible: n %zu bad %lu: %s", s.n, s.st.bad, d);
	tap_check(strstr(d, "ins.csv:2: cpu_ns") &&
			  strstr(d, "ins.csv:3: cycles"),
		  "named: %s", d);
	jt_samples_free(&s);

	/* A meter value beyond any node's power is a bad line, not a failed fit. */
	jt_meter_init(&m, PARSE_TS_AUTO, 0);
	fp = mem_in("1796220916,5\n1796220917,1e300\n1796220918,2000000\n"
		    "1796220919,7\n");
	diag_begin();
	ret = jt_read_meter(fp, "big.csv", &m, NULL);
	d = diag_end();
	fclose(fp);
	tap_check(ret == 0 && m.n == 2 && m.st.bad == 2,
		  "huge watts: n %zu bad %lu: %s", m.n, m.st.bad, d);
	tap_check(strstr(d, "big.csv:2: watts '1e300'") &&
			  strstr(d, "big.csv:3: watts '2000000'"),
		  "named: %s", d);
	jt_meter_free(&m);

	/* A clock offset that would overflow: no UB (UBSan), nothing aligns. */
	{
		int64_t t[] = { 1796220916000000000LL, 1796220920000000000LL };
		double w[] = { 10, 10 };
		struct jt_sample ss[] = {
			{ .end_ns = 1796220918000000000LL, .interval_ns = 1e9 },
		};
		struct jt_samples s1 = { .s = ss, .n = 1 };
		struct jt_align_stats st;
		struct jt_row *rows = NULL;
		size_t n = 1;

		jt_meter_init(&m, PARSE_TS_AUTO, 0);
		m.t = t;
		m.w = w;
		m.n = 2;
		tap_check(jt_align(&s1, &m, -9000000000LL * 1000000000LL, 0,
				   &rows, &n, &st) == 0 &&
				  n == 0 && st.uncovered == 1,
			  "offset -9e9 s: n %zu", n);
		free(rows);
		tap_check(jt_align(&s1, &m, INT64_MIN, 0, &rows, &n, &st) == 0 &&
				  n == 0,
			  "offset INT64_MIN");
		free(rows);
	}

	/* On a terminal a message starts on a line of its own, not over progress. */
	{
		struct jt_progress pr;
		struct jt_input_stats st = { 0 };
		char *buf = NULL;
		size_t len = 0;
		FILE *out = open_memstream(&buf, &len);

		jt_progress_init(&pr, 1, 1);
		pr.fp = out;
		jt_diag = out;
		jt_progress(&pr, "reading s.csv", 45, 100);
		jt_bad_line(&st, "s.csv", 7, "bad");
		jt_progress(&pr, "reading s.csv", 46, 100);
		jt_progress_end(&pr);
		jt_diag = NULL;
		fclose(out);
		tap_check(buf && strstr(buf, "45.0%\r\033[Ks.csv:7: bad\n"),
			  "progress cleared first: '%s'", buf ? buf : "");
		tap_check(buf && strstr(buf, "bad\njoules-train: reading s.csv  46.0%"),
			  "progress redrawn after: '%s'", buf ? buf : "");
		free(buf);
	}
	tap_done("inputs: BOM, duplicate/overlapping rows, implausible values, "
		 "offset overflow, progress vs messages");
}

/* ---- --apply ---- */

static char tmpdir[256];

static void write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	if (fp) {
		fputs(text, fp);
		fclose(fp);
	}
}

static void test_apply(void)
{
	struct jl_coef c = { .cpu_time_uw = 1, .cycles_pj = 2, .instructions_pj = 3,
			     .cache_miss_pj = 4, .disk_byte_pj = 5, .idle_uw = 6 };
	char dir[512], path[600], gen[600], err[512], want[128];
	int ret, status;
	pid_t pid;

	snprintf(dir, sizeof(dir), "%s/sysfs", tmpdir);
	ret = jt_apply(dir, &c, err, sizeof(err));
	tap_check(ret == -ENOENT && strstr(err, "not loaded"), "no dir: %d %s",
		  ret, err);

	mkdir(dir, 0755);
	snprintf(path, sizeof(path), "%s/model", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/model/coefficients", dir);
	snprintf(gen, sizeof(gen), "%s/model/generation", dir);
	ret = jt_apply(dir, &c, err, sizeof(err));
	tap_check(ret == -ENOENT && strstr(err, "generation"),
		  "no generation: %s", err);

	write_file(gen, "7\n");
	write_file(path, "");
	ret = jt_apply(dir, &c, err, sizeof(err));
	tap_check(ret == -EAGAIN && strstr(err, "stayed at 7"),
		  "unchanged generation: %s", err);

	/*
	 * FIFOs play the module: the child serves generation 7, takes the set
	 * in one read, then serves 8. Opening a FIFO blocks until the other
	 * side opens it, which orders the steps like a synchronous sysfs.
	 */
	unlink(path);
	unlink(gen);
	tap_check(mkfifo(path, 0600) == 0 && mkfifo(gen, 0600) == 0, "mkfifo");
	jl_coef_format(&c, want, sizeof(want));
	pid = fork();
	if (pid == 0) {
		char buf[256];
		ssize_t n;
		int fd;

		fd = open(gen, O_WRONLY);
		if (write(fd, "7\n", 2) != 2)
			_exit(2);
		close(fd);
		fd = open(path, O_RDONLY);
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		buf[n > 0 ? n : 0] = '\0';
		fd = open(gen, O_WRONLY);
		if (write(fd, "8\n", 2) != 2)
			_exit(2);
		close(fd);
		_exit(strcmp(buf, want) ? 1 : 0);
	}
	ret = jt_apply(dir, &c, err, sizeof(err));
	waitpid(pid, &status, 0);
	tap_check(ret == 0, "apply: %d %s", ret, ret ? err : "");
	tap_check(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "module saw '%s' in one read", want);
	unlink(path);
	unlink(gen);
	tap_done("apply: one write, generation must change, clear errors");
}

/* ---- CLI ---- */

static char cli[PATH_MAX + 64];

static int find_cli(void)
{
	char exe[PATH_MAX];
	const char *env = getenv("JOULES_TRAIN");
	ssize_t n;
	char *slash;

	if (env) {
		snprintf(cli, sizeof(cli), "%s", env);
		return access(cli, X_OK) == 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return 0;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return 0;
	*slash = '\0';
	/* tools/testing/unit/build/test_train -> user/build/joules-train */
	snprintf(cli, sizeof(cli), "%s/../../../../user/build/joules-train",
		 exe);
	return access(cli, X_OK) == 0;
}

static char *slurp(const char *path)
{
	FILE *fp = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	if (fp) {
		int ch;

		while ((ch = fgetc(fp)) != EOF)
			fputc(ch, out);
		fclose(fp);
	}
	fclose(out);
	return buf;
}

static char *cli_out, *cli_err;

static void unlink_tmp(const char *name)
{
	char path[600];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	unlink(path);
}

/* A file of tmpdir, or NULL. */
static char *slurp_tmp(const char *name)
{
	char path[600];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	if (access(path, R_OK))
		return NULL;
	return slurp(path);
}

static int run_cli(const char *args)
{
	char cmd[8192];
	int st;

	/* A hang must fail the test, not stall it. */
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && timeout -k 5 60 '%s' %s >out.txt 2>err.txt",
		 tmpdir, cli, args);
	st = system(cmd);
	free(cli_out);
	free(cli_err);
	snprintf(cmd, sizeof(cmd), "%s/out.txt", tmpdir);
	cli_out = slurp(cmd);
	snprintf(cmd, sizeof(cmd), "%s/err.txt", tmpdir);
	cli_err = slurp(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Write samples and a meter trace that integrates to each interval's energy. */
static void write_inputs(const char *sname, const char *pname, size_t n, int ms,
			 int pmu)
{
	/* The first layout's columns (HDR): a recording from before issue 18. */
	unsigned int present =
		pmu ? OLD_FEATURES : (1u << JL_F_CPU_NS) | (1u << JL_F_DISK);
	struct jt_row *rows = synth_rows(n, &truth, 0.003, present);
	char path[600];
	int64_t t = 1796220916000000000LL;
	FILE *s, *p;
	size_t i;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, sname);
	s = fopen(path, "w");
	snprintf(path, sizeof(path), "%s/%s", tmpdir, pname);
	p = fopen(path, "w");
	fputs(HDR, s);
	fputs("timestamp,watts\n", p);
	for (i = 0; i < n; i++) {
		int64_t len = (int64_t)rows[i].interval_ns, end = t + len;
		double w = jt_row_watts(&rows[i]);

		if (pmu)
			fprintf(s,
				"%lld,%lld,%lld,rapl,1,%.0f,0,%.0f,%.0f,%.0f,%.0f,%.0f,4\n",
				(long long)end,
				(long long)(end - 1796220916000000000LL),
				(long long)len, rows[i].meter_uj / 2.5,
				rows[i].f[0], rows[i].f[1], rows[i].f[2],
				rows[i].f[3], rows[i].f[4]);
		else
			fprintf(s,
				"%lld,%lld,%lld,model,1,%.0f,0,%.0f,,,,%.0f,4\n",
				(long long)end,
				(long long)(end - 1796220916000000000LL),
				(long long)len, rows[i].meter_uj / 2.5,
				rows[i].f[0], rows[i].f[4]);
		/* Flat power over the interval, 1 us ramps at its ends. */
		if (ms) {
			fprintf(p, "%.3f,%.6f\n", (double)(t + 1000) * 1e-6, w);
			fprintf(p, "%.3f,%.6f\n", (double)(end - 1000) * 1e-6,
				w);
		} else {
			fprintf(p, "%lld.%09lld,%.6f\n",
				(long long)((t + 1000) / 1000000000),
				(long long)((t + 1000) % 1000000000), w);
			fprintf(p, "%lld.%09lld,%.6f\n",
				(long long)((end - 1000) / 1000000000),
				(long long)((end - 1000) % 1000000000), w);
		}
		t = end;
	}
	fclose(s);
	fclose(p);
	free(rows);
}

static void test_cli(void)
{
	char gp[4096], *file;
	struct jl_coef c;
	int rc;

	if (!find_cli()) {
		tap_skip("joules-train not built (make -C user)",
			 "cli: end to end");
		return;
	}
	rc = run_cli("--help");
	tap_check(rc == 0 && strstr(cli_out, "Usage: joules-train"),
		  "--help %d", rc);
	rc = run_cli("");
	tap_check(rc == 2 && strstr(cli_err, "no samples"), "no args: %d %s",
		  rc, cli_err);
	rc = run_cli("-s x.csv -p y.csv --method lasso");
	tap_check(rc == 2 && strstr(cli_err, "--method 'lasso'"),
		  "bad method: %d", rc);
	rc = run_cli("-s x.csv -p y.csv -c true");
	tap_check(rc == 2, "-p and -c: %d", rc);

	write_inputs("s.csv", "p.csv", 400, 0, 1);
	rc = run_cli("-s s.csv -p p.csv -o coef.txt");
	tap_check(rc == 0, "fit: %d %s", rc, cli_err);
	{
		char path[600];

		snprintf(path, sizeof(path), "%s/coef.txt", tmpdir);
		file = slurp(path);
	}
	tap_check(file && jl_coef_parse(file, strlen(file), &c) == 0,
		  "coef.txt parses");
	if (file && !jl_coef_parse(file, strlen(file), &c))
		tap_check(fabs((double)c.cpu_time_uw - 6e6) < 0.02 * 6e6 &&
				  fabs((double)c.idle_uw - 4e7) < 0.02 * 4e7,
			  "cpu %llu idle %llu",
			  (unsigned long long)c.cpu_time_uw,
			  (unsigned long long)c.idle_uw);
	tap_check(strstr(cli_out, "# node MAPE") &&
			  strstr(cli_out, "better than CPU-only"),
		  "summary on stdout: %s", cli_out);
	free(file);

	/* Milliseconds, auto-detected, no PMU columns, via --pdu-cmd. */
	write_inputs("s2.csv", "p2.csv", 200, 1, 0);
	rc = run_cli("-s s2.csv -c 'cat p2.csv' -k 3");
	tap_check(rc == 0 && strstr(cli_err, "look like Unix milliseconds") &&
			  strstr(cli_out,
				 "no PMU): cycles instructions cache_misses"),
		  "ms + pdu-cmd + no PMU: %d %s", rc, cli_err);

	/* A bad line fails by default, passes with --max-bad. */
	{
		char cmd[1024];

		snprintf(cmd, sizeof(cmd),
			 "cd '%s' && sed '5s/,/;/' p.csv > p3.csv", tmpdir);
		rc = system(cmd);
	}
	rc = run_cli("-s s.csv -p p3.csv");
	tap_check(rc == 1 && strstr(cli_err, "p3.csv:5: 1 fields") &&
			  strstr(cli_err, "more than --max-bad 0"),
		  "bad line: %d %s", rc, cli_err);
	rc = run_cli("-s s.csv -p p3.csv --max-bad 1");
	tap_check(rc == 0 && strstr(cli_err, "p3.csv:5:"), "--max-bad 1: %d",
		  rc);

	/* Clocks that do not overlap: a clear error. */
	rc = run_cli("-s s.csv -p p.csv --clock-offset 100000");
	tap_check(rc == 1 && strstr(cli_err, "0 of 400 intervals aligned") &&
			  strstr(cli_err, "samples span"),
		  "offset: %d %s", rc, cli_err);

	/* Validation set. */
	write_inputs("v.csv", "vp.csv", 100, 0, 1);
	rc = run_cli(
		"-s s.csv -p p.csv --validate-samples v.csv --validate-pdu vp.csv -m ols");
	tap_check(rc == 0 && strstr(cli_out, "validation model") &&
			  strstr(cli_out, "(validation), "),
		  "validation: %d %s", rc, cli_err);

	/* --apply to a fake sysfs whose generation never moves. */
	{
		char path[600];

		snprintf(path, sizeof(path), "%s/fake", tmpdir);
		mkdir(path, 0755);
		snprintf(path, sizeof(path), "%s/fake/model", tmpdir);
		mkdir(path, 0755);
		snprintf(path, sizeof(path), "%s/fake/model/generation",
			 tmpdir);
		write_file(path, "1\n");
		snprintf(path, sizeof(path), "%s/fake/model/coefficients",
			 tmpdir);
		write_file(path, "");
	}
	rc = run_cli("-s s.csv -p p.csv --apply --sysfs fake -q");
	tap_check(rc == 3 && strstr(cli_err, "did not take"),
		  "apply unchanged: %d %s", rc, cli_err);
	rc = run_cli("-s s.csv -p p.csv --apply --sysfs nowhere -q");
	tap_check(rc == 3 && strstr(cli_err, "not loaded"),
		  "apply no module: %d", rc);

	if (jt_which("gnuplot", gp, sizeof(gp)) == 0) {
		char path[600];
		char *svg;

		rc = run_cli(
			"-s s.csv -p p.csv -o /dev/null -q --plot fit.svg");
		snprintf(path, sizeof(path), "%s/fit.svg", tmpdir);
		svg = slurp(path);
		tap_check(rc == 0 && svg && strstr(svg, "<svg"), "plot: %d %s",
			  rc, cli_err);
		free(svg);
	}
	rc = run_cli("-s s.csv -p p.csv --plot fit.pdf");
	tap_check(rc == 2 && strstr(cli_err, ".svg or .png"), "plot ext: %d",
		  rc);
	tap_done(
		"cli: usage errors, fit, ms/pdu-cmd, bad lines, validation, apply, plot");
}

/* Seconds since an arbitrary start. */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* 0 if the process in pidfile (tmpdir-relative) is gone. */
static int pidfile_alive(const char *name)
{
	char path[600], *text;
	long pid;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	text = slurp(path);
	pid = text ? strtol(text, NULL, 10) : 0;
	free(text);
	if (pid <= 0)
		return -1;
	/* A zombie is dead: whoever inherited it just has not reaped it yet. */
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	text = slurp(path);
	if (text && *text && !strstr(text, ") Z ")) {
		free(text);
		kill((pid_t)pid, SIGKILL);
		return 1;
	}
	free(text);
	return 0;
}

static void test_cli_pdu_cmd(void)
{
	double t0;
	int rc;

	if (!find_cli()) {
		tap_skip("joules-train not built (make -C user)",
			 "cli: --pdu-cmd timeout, process group, --max-bad");
		return;
	}
	write_inputs("s.csv", "p.csv", 200, 0, 1);

	/* A reader that hangs: the timeout ends it, with a reason. */
	t0 = now_s();
	rc = run_cli("-s s.csv -c 'echo $$ > hang.pid; exec sleep 60' "
		     "--pdu-timeout 1");
	tap_check(rc == 1 && strstr(cli_err, "no output for 1 s"),
		  "hang: %d %s", rc, cli_err);
	tap_check(now_s() - t0 < 10, "ended after %.1f s", now_s() - t0);
	tap_check(pidfile_alive("hang.pid") == 0, "reader killed");

	/* Bad lines forever: reading stops once --max-bad is exceeded. */
	t0 = now_s();
	rc = run_cli("-s s.csv -c 'yes garbage' --max-bad 10");
	tap_check(rc == 1 && strstr(cli_err, "more than --max-bad 10"),
		  "bad forever: %d %.300s", rc, cli_err);
	tap_check(now_s() - t0 < 10, "stopped after %.1f s", now_s() - t0);

	/* Exit on a fatal error kills the reader's children too. */
	rc = run_cli("-s s.csv -c 'sleep 60 & echo $! > kid.pid; "
		     "echo garbage; wait'");
	tap_check(rc == 1, "bad line ends it: %d %s", rc, cli_err);
	usleep(200000);
	tap_check(pidfile_alive("kid.pid") == 0, "reader's child killed");

	/* SIGTERM to joules-train takes the reader's process group with it. */
	{
		char cmd[2048];
		pid_t pid;
		int st, i;

		snprintf(cmd, sizeof(cmd), "%s/kid2.pid", tmpdir);
		unlink(cmd);
		pid = fork();
		if (pid == 0) {
			if (chdir(tmpdir))
				_exit(126);
			execl(cli, "joules-train", "-s", "s.csv", "-c",
			      "sleep 60 & echo $! > kid2.pid; wait",
			      (char *)NULL);
			_exit(127);
		}
		for (i = 0; i < 100; i++) {
			struct stat sb;

			if (!stat(cmd, &sb) && sb.st_size > 0)
				break;
			usleep(50000);
		}
		usleep(100000);
		kill(pid, SIGTERM);
		waitpid(pid, &st, 0);
		tap_check(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM,
			  "joules-train died of SIGTERM: %#x", st);
		usleep(200000);
		tap_check(pidfile_alive("kid2.pid") == 0,
			  "reader's child gone after SIGTERM");
	}

	/* The reader does not share our stdin (the samples may come from there). */
	rc = run_cli("-s - -c 'cat > /dev/null; cat p.csv' < s.csv");
	tap_check(rc == 0, "stdin samples + reader: %d %s", rc, cli_err);
	tap_done("cli: --pdu-cmd timeout, process group, --max-bad stops reading");
}

static void test_cli_inputs(void)
{
	char cmd[1024];
	int rc;

	if (!find_cli()) {
		tap_skip("joules-train not built (make -C user)",
			 "cli: inputs named by file and line");
		return;
	}
	write_inputs("s.csv", "p.csv", 200, 0, 1);
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && printf '\\357\\273\\277' > sb.csv && cat s.csv >> sb.csv"
		 " && awk -F, -v OFS=, 'NR == 10 { $2 = \"1e300\" } { print }' p.csv > pbig.csv",
		 tmpdir);
	tap_check(system(cmd) == 0, "setup");
	rc = run_cli("-s sb.csv -p p.csv");
	tap_check(rc == 0, "BOM: %d %s", rc, cli_err);
	rc = run_cli("-s s.csv -p pbig.csv");
	tap_check(rc == 1 && strstr(cli_err, "pbig.csv:10: watts '1e300'") &&
			  !strstr(cli_err, "cannot set up the fit"),
		  "1e300: %d %s", rc, cli_err);
	rc = run_cli("-s s.csv -p p.csv --clock-offset -9000000000");
	tap_check(rc == 1 && strstr(cli_err, "0 of 200 intervals aligned"),
		  "offset -9e9 s: %d %s", rc, cli_err);
	/* The spans are printed whenever fewer than --min-samples align. */
	rc = run_cli("-s s.csv -p p.csv --clock-offset 190 --min-samples 50");
	tap_check(rc == 1 && strstr(cli_err, "intervals aligned") &&
			  strstr(cli_err, "samples span"),
		  "spans with some aligned: %d %s", rc, cli_err);
	tap_done("cli: BOM, 1e300 named by line, offset overflow, time spans");
}

/* Generate a recording into tmpdir with gen-train's generator. */
static void gen_files(const char *sname, const char *pname,
		      const struct gen_opts *o)
{
	char sp[600], pp[600];
	FILE *s, *p;

	snprintf(sp, sizeof(sp), "%s/%s", tmpdir, sname);
	snprintf(pp, sizeof(pp), "%s/%s", tmpdir, pname);
	s = fopen(sp, "w");
	p = fopen(pp, "w");
	if (!s || !p || gen_write(o, s, p))
		tap_diag("cannot write %s, %s", sp, pp);
	if (s)
		fclose(s);
	if (p)
		fclose(p);
}

/* The coefficient line of the last run_cli() (its stdout); 0 if none. */
static int cli_coef(struct jl_coef *c)
{
	const char *p = cli_out, *last = NULL;

	while (p && *p) {
		if (*p != '#')
			last = p;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return last && !jl_coef_parse(last, strlen(last), c);
}


/*
 * Issue 18: socket bytes and page-cache reads flow from the recording to the
 * model; recorded on a kernel without them (empty columns), they stay 0.
 */
static void test_cli_features(void)
{
	struct gen_opts g;
	struct jl_coef c;
	unsigned int wi = 0;
	double e;
	int rc;

	if (!find_cli()) {
		tap_skip("joules-train not built (make -C user)",
			 "cli: socket and page-cache features");
		return;
	}
	gen_defaults(&g);
	g.n = 4000;
	g.extra = 1;
	gen_files("sx.csv", "px.csv", &g);
	rc = run_cli("-s sx.csv -p px.csv");
	e = cli_coef(&c) ? gen_coef_err(&c, &g, &wi) : 1;
	tap_check(rc == 0 && e < 0.02, "all eight features: %d, %s off by %.2f%%: %s",
		  rc, jl_coef_names[wi], e * 100, cli_err);
	tap_check(c.net_tx_byte_pj && c.net_rx_byte_pj && c.pagecache_byte_pj,
		  "the new coefficients are fitted");
	tap_check(strstr(cli_out, "net_tx_byte") && strstr(cli_out, "pagecache_byte"),
		  "report names them: %s", cli_out);

	g.extra = 0;
	gen_files("sx.csv", "px.csv", &g);
	rc = run_cli("-s sx.csv -p px.csv");
	e = cli_coef(&c) ? gen_coef_err(&c, &g, &wi) : 1;
	tap_check(rc == 0 && e < 0.02 && !c.net_tx_byte_pj && !c.net_rx_byte_pj &&
			  !c.pagecache_byte_pj,
		  "absent columns: %d, %s off by %.2f%%, new ones 0", rc,
		  jl_coef_names[wi], e * 100);
	tap_done("cli: socket and page-cache features fitted where recorded, 0 where absent");
}

static void test_cli_meter(void)
{
	struct gen_opts g;
	struct jl_coef c;
	unsigned int wi = 0;
	double e;
	int rc;

	if (!find_cli()) {
		tap_skip("joules-train not built (make -C user)",
			 "cli: meter period and semantics");
		return;
	}
	/*
	 * Issue 17 case 3: the module's 100 ms rows against a 1 Hz meter that
	 * reports the mean of each second. Fitting rows one by one gave 78 pJ
	 * per cycle for a true 300.
	 */
	gen_defaults(&g);
	g.n = 20000;
	g.ivl_ms = 100;
	g.meter_ms = 1000;
	g.meter = GEN_AVERAGE;
	g.phase_rows = 5;
	g.truth[1] = 300;
	/* Noise-free: the alignment alone must not bias anything. */
	g.noise = 0;
	gen_files("s3.csv", "p3.csv", &g);
	rc = run_cli("-s s3.csv -p p3.csv --meter average");
	e = cli_coef(&c) ? gen_coef_err(&c, &g, &wi) : 1;
	tap_check(rc == 0 && e < 0.001, "average 1 Hz, 100 ms rows: %d, %s "
		  "off by %.1f%%: %s", rc, jl_coef_names[wi], e * 100, cli_err);
	tap_check(strstr(cli_out, "summed into") &&
			  strstr(cli_out, "mean over the preceding"),
		  "aggregation reported: %s", cli_out);

	/* Instantaneous readings with 1% noise: each paired with its row. */
	g.meter = GEN_INSTANT;
	g.noise = 0.01;
	gen_files("s3.csv", "p3.csv", &g);
	rc = run_cli("-s s3.csv -p p3.csv --meter instant");
	e = cli_coef(&c) ? gen_coef_err(&c, &g, &wi) : 1;
	tap_check(rc == 0 && e < 0.10, "instant 1 Hz, 100 ms rows: %d, %s "
		  "off by %.1f%%: %s", rc, jl_coef_names[wi], e * 100, cli_err);
	tap_check(strstr(cli_out, "without a reading inside"),
		  "unused rows reported: %s", cli_out);

	/*
	 * Case 4: a PDU that averages over the preceding second, rows of a
	 * second: read as instantaneous the trace is half a period late.
	 */
	gen_defaults(&g);
	g.n = 3000;
	g.meter_ms = 1000;
	g.meter = GEN_AVERAGE;
	g.phase_rows = 3;
	gen_files("s4.csv", "p4.csv", &g);
	rc = run_cli("-s s4.csv -p p4.csv --meter average");
	e = cli_coef(&c) ? gen_coef_err(&c, &g, &wi) : 1;
	tap_check(rc == 0 && e < 0.05, "average 1 Hz, 1 s rows: %d, %s off "
		  "by %.1f%%: %s", rc, jl_coef_names[wi], e * 100, cli_err);
	rc = run_cli("-s s4.csv -p p4.csv --meter sometimes");
	tap_check(rc == 2 && strstr(cli_err, "--meter"), "bad --meter: %d", rc);
	tap_done("cli: 1 Hz meters against 100 ms and 1 s rows, instant and "
		 "average readings");
}

/* Set field `field` (1-based) of line `line` of tmpdir/in to val, into out. */
static void edit_csv(const char *in, const char *out, int line, int field,
		     const char *val)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && awk -F, -v OFS=, 'NR == %d { $%d = \"%s\" } "
		 "{ print }' %s > %s",
		 tmpdir, line, field, val, in, out);
	if (system(cmd))
		tap_diag("%s failed", cmd);
}

static void test_cli_robust(void)
{
	struct gen_opts g;
	struct jl_coef c, c0;
	double clean6[JL_NR_COEF];
	unsigned int wi = 0;
	double e;
	int rc;

	if (!find_cli()) {
		tap_skip("joules-train not built (make -C user)",
			 "cli: one bad value (issue 17 case 1)");
		return;
	}
	gen_defaults(&g);
	g.n = 4000;
	g.ivl_ms = 250;
	gen_files("s1.csv", "p1.csv", &g);

	/* Impossible values are bad lines, named; the rest fits well. */
	edit_csv("s1.csv", "s1a.csv", 2001, 8, "1000000000000000");
	rc = run_cli("-s s1a.csv -p p1.csv --max-bad 1");
	e = cli_coef(&c) ? gen_coef_err(&c, &g, &wi) : 1;
	tap_check(rc == 0 && strstr(cli_err, "s1a.csv:2001: cpu_ns") &&
			  e < 0.03,
		  "cpu_ns 1e15: %d, %s off by %.1f%%: %s", rc,
		  jl_coef_names[wi], e * 100, cli_err);
	edit_csv("s1.csv", "s1b.csv", 2001, 9, "18446744073709550616");
	rc = run_cli("-s s1b.csv -p p1.csv");
	tap_check(rc == 1 && strstr(cli_err, "s1b.csv:2001: cycles"),
		  "wrapped counter: %d %s", rc, cli_err);

	/* A plausible but wrong value: rejected by the fit, named. */
	edit_csv("s1.csv", "s1c.csv", 2001, 8, "40000000000");
	rc = run_cli("-s s1c.csv -p p1.csv");
	e = cli_coef(&c) ? gen_coef_err(&c, &g, &wi) : 1;
	tap_check(rc == 0 && strstr(cli_out, "# rejected: s1c.csv:2001") &&
			  e < 0.03,
		  "cpu_ns x160: %d, %s off by %.1f%%: %s", rc,
		  jl_coef_names[wi], e * 100, cli_out);

	/*
	 * Meter glitches with an averaging 1 Hz meter and no cycles term: one
	 * glitch must leave the fit where the clean recording puts it.
	 */
	g.meter_ms = 1000;
	g.meter = GEN_AVERAGE;
	g.truth[1] = 0;
	gen_files("s1.csv", "p1.csv", &g);
	rc = run_cli("-s s1.csv -p p1.csv --meter average");
	tap_check(rc == 0 && cli_coef(&c0), "clean: %d %s", rc, cli_err);
	for (unsigned int i = 0; i < JL_NR_COEF; i++)
		clean6[i] = (double)jl_coef_get(&c0, i);
	edit_csv("p1.csv", "p1d.csv", 500, 2, "100000");
	rc = run_cli("-s s1.csv -p p1d.csv --meter average");
	e = cli_coef(&c) ? coef_err(&c, clean6, ALL_COEFS, &wi) : 1;
	tap_check(rc == 0 && strstr(cli_out, "(p1d.csv:500)") && e < 0.01 &&
			  c.cycles_pj < 30,
		  "100 kW: %d, %s moved by %.1f%%, cycles %llu: %s", rc,
		  jl_coef_names[wi], e * 100, (unsigned long long)c.cycles_pj,
		  cli_out);
	edit_csv("p1.csv", "p1e.csv", 500, 2, "0");
	rc = run_cli("-s s1.csv -p p1e.csv --meter average");
	e = cli_coef(&c) ? coef_err(&c, clean6, ALL_COEFS, &wi) : 1;
	tap_check(rc == 0 && strstr(cli_out, "(p1e.csv:500)") && e < 0.01 &&
			  c.cycles_pj < 30,
		  "0 W dropout: %d, %s moved by %.1f%%, cycles %llu", rc,
		  jl_coef_names[wi], e * 100, (unsigned long long)c.cycles_pj);
	rc = run_cli("-s s1.csv -p p1d.csv --meter average --robust off");
	e = cli_coef(&c) ? gen_coef_err(&c, &g, &wi) : 0;
	tap_check(rc != 2 && e > 0.2 && !strstr(cli_out, "# rejected"),
		  "--robust off: %d, %s off by %.1f%%", rc, jl_coef_names[wi],
		  e * 100);
	rc = run_cli("-s s1.csv -p p1d.csv --robust maybe");
	tap_check(rc == 2, "bad --robust: %d", rc);
	tap_done("cli: one bad value: impossible ones are bad lines, plausible "
		 "ones rejected by line (issue 17 case 1)");
}

static void test_cli_degenerate(void)
{
	struct gen_opts g;
	char path[600], *file;
	int rc;

	if (!find_cli()) {
		tap_skip("joules-train not built (make -C user)",
			 "cli: degenerate models are not applied");
		return;
	}
	gen_defaults(&g);
	g.n = 500;
	gen_files("s2.csv", "p2.csv", &g);
	{
		char cmd[1024];

		snprintf(cmd, sizeof(cmd),
			 "cd '%s' && awk -F, -v OFS=, 'NR > 1 { $2 = 0 } { print }' "
			 "p2.csv > p2z.csv && mkdir -p fake2/model && "
			 "echo 1 > fake2/model/generation && "
			 ": > fake2/model/coefficients",
			 tmpdir);
		tap_check(system(cmd) == 0, "setup");
	}
	/* A meter that reads 0 W throughout: --apply refuses, exit 3. */
	rc = run_cli("-s s2.csv -p p2z.csv --apply --sysfs fake2 -o c2.txt");
	snprintf(path, sizeof(path), "%s/fake2/model/coefficients", tmpdir);
	file = slurp(path);
	tap_check(rc == 3 && strstr(cli_err, "--apply: refusing") &&
			  file && !*file,
		  "zero meter --apply: %d, sysfs '%s': %s", rc,
		  file ? file : "?", cli_err);
	free(file);
	/* Writing it still works, with a warning and its own status. */
	rc = run_cli("-s s2.csv -p p2z.csv -o c2.txt -q");
	snprintf(path, sizeof(path), "%s/c2.txt", tmpdir);
	file = slurp(path);
	tap_check(rc == 4 && strstr(cli_err, "implausible") && file &&
			  strstr(file, "# warning: implausible model"),
		  "zero meter to a file: %d %s", rc, cli_err);
	free(file);

	/* Collinear features: named, with their uncertainty (case 5). */
	gen_defaults(&g);
	g.n = 5000;
	g.spread = 0.02;
	g.phase_rows = 10;
	gen_files("s5.csv", "p5.csv", &g);
	rc = run_cli("-s s5.csv -p p5.csv");
	tap_check((rc == 0 || rc == 4) && strstr(cli_out, "cannot be separated") &&
			  strstr(cli_out, "instructions"),
		  "collinear: %d %s", rc, cli_out);
	/* Whatever OLS makes of it, a model worse than CPU-only is no success. */
	rc = run_cli("-s s5.csv -p p5.csv -m ols");
	tap_check(cli_coef(&(struct jl_coef){ 0 }) &&
			  !(rc == 0 && strstr(cli_out, "worse than CPU-only")),
		  "ols collinear: %d %s", rc, cli_out);
	tap_done("cli: degenerate models refused by --apply (exit 3), written "
		 "with a warning (exit 4); collinearity named (cases 2, 5)");
}


/* ---- frequency bands ---- */

static const char band_truth[] =
	"2000 4000000 1000 500 50000 10000 20000 15000 2000 40000000;"
	"max 9000000 1500 500 50000 10000 20000 15000 2000 55000000";

/* gen_write() into memory, read back and aligned as the CLI does. */
static struct jt_row *gen_rows(const struct gen_opts *g, size_t *n,
			       unsigned int *present)
{
	char *sb = NULL, *pb = NULL;
	size_t sl = 0, pl = 0;
	FILE *s = open_memstream(&sb, &sl), *p = open_memstream(&pb, &pl);
	struct jt_samples smp = { 0 };
	struct jt_meter m;
	struct jt_align_stats st;
	struct jt_row *rows = NULL;

	*n = 0;
	gen_write(g, s, p);
	fclose(s);
	fclose(p);
	s = mem_in(sb);
	p = mem_in(pb);
	jt_meter_init(&m, PARSE_TS_AUTO, 0);
	if (!jt_read_samples(s, "s", &smp, NULL) &&
	    !jt_read_meter(p, "p", &m, NULL))
		jt_align(&smp, &m, 0, 5000000000LL, &rows, n, &st);
	*present = smp.present;
	fclose(s);
	fclose(p);
	jt_samples_free(&smp);
	jt_meter_free(&m);
	free(sb);
	free(pb);
	return rows;
}

/* Single fit, then the banded one, as main() does. */
static int train_banded(const struct jt_row *rows, size_t n,
			unsigned int present, const struct jt_band_opts *bo,
			struct jt_report *rep, struct jt_band_result *br)
{
	double *w = malloc(n * sizeof(*w));
	struct jt_train_opts o = { .method = FIT_NNLS, .folds = 5,
				   .min_samples = 20, .weights = w };
	int ret;

	memset(rep, 0, sizeof(*rep));
	ret = jt_train(rows, n, present, &o, rep, NULL, NULL);
	o.weights = NULL;
	if (!ret)
		ret = jt_train_bands(rows, n, present, &o, bo, rep, w, br);
	free(w);
	return ret;
}

/* Largest relative error of band b of the model against the truth's. */
static double band_err(const struct jl_bands *m, unsigned int b,
		       const struct gen_opts *g, unsigned int *worst)
{
	double t[JL_NR_COEF];
	unsigned int i;

	for (i = 0; i < JL_NR_COEF; i++)
		t[i] = i == GEN_IDLE || !(i >= JL_F_NET_TX && !g->extra) ?
			       g->band_truth[b][i] :
			       0;
	return coef_err(&m->set[b], t, ALL_COEFS, worst);
}

static void test_bands(void)
{
	static struct jt_band_result br;
	struct jt_band_opts bo = { .max_bands = JL_MAX_BANDS };
	struct jt_report rep;
	struct gen_opts g;
	struct jt_row *rows;
	unsigned int present, wi = 0, b;
	size_t n, i, known;
	double *mhz, e;
	int ret;

	gen_defaults(&g);
	g.n = 8000;
	g.noise = 0.003;
	tap_check(gen_parse_bands(&g, band_truth) == 0 && g.nbands == 2,
		  "truth parses");
	rows = gen_rows(&g, &n, &present);
	tap_check(n > 7900, "aligned %zu", n);

	/* Frequencies: recorded, and the same from cycles / cpu_ns. */
	mhz = malloc(n * sizeof(*mhz));
	known = jt_rows_freq(rows, n, present, mhz);
	tap_check(known == n, "every row has a frequency: %zu of %zu", known, n);
	for (i = 0; i < n; i++)
		rows[i].freq_mhz = 0;
	known = jt_rows_freq(rows, n, present, mhz);
	tap_check(known == n, "from cycles: %zu of %zu", known, n);
	tap_check(jt_rows_freq(rows, n, present & ~(1u << JL_F_CYCLES), mhz) == 0,
		  "neither: unknown");
	free(mhz);

	ret = train_banded(rows, n, present, &bo, &rep, &br);
	tap_check(ret == 0 && br.banded && br.model.nr == 2, "banded chosen: %d %s",
		  ret, br.why);
	tap_check(br.nb == 2 && br.upper_mhz[0] >= 1925 && br.upper_mhz[0] <= 2075,
		  "edge %llu near the true 2000 MHz",
		  (unsigned long long)br.upper_mhz[0]);
	tap_check(br.cv_banded.mape < 0.5 * br.cv_single.mape &&
			  br.cv_banded.n == br.cv_single.n,
		  "held out: banded %.3f%% vs single %.3f%% on %zu intervals",
		  br.cv_banded.mape, br.cv_single.mape, br.cv_banded.n);
	for (b = 0; b < br.model.nr; b++) {
		e = band_err(&br.model, b, &g, &wi);
		tap_check(e < 0.02, "auto: band %u %s off by %.2f%%", b,
			  jl_coef_names[wi], e * 100);
	}

	/* Fixed edges at the truth's. */
	bo.nedges = 1;
	bo.edges[0] = 2000;
	ret = train_banded(rows, n, present, &bo, &rep, &br);
	tap_check(ret == 0 && br.banded && br.model.upper_mhz[0] == 2000,
		  "fixed edge: %d %s", ret, br.why);
	for (b = 0; b < br.model.nr; b++) {
		e = band_err(&br.model, b, &g, &wi);
		tap_check(e < 0.02, "fixed: band %u %s off by %.2f%%", b,
			  jl_coef_names[wi], e * 100);
	}
	free(rows);

	/* One truth at every frequency: the single set stays. */
	gen_defaults(&g);
	g.n = 8000;
	bo.nedges = 0;
	rows = gen_rows(&g, &n, &present);
	ret = train_banded(rows, n, present, &bo, &rep, &br);
	tap_check(ret == 0 && !br.banded && br.model.nr == 1 &&
			  !memcmp(&br.model.set[0], &rep.model.coef,
				  sizeof(rep.model.coef)) &&
			  strstr(br.why, "not better"),
		  "frequency-independent truth keeps one set: %s", br.why);
	/* Even forced to bands, the rule still says single. */
	bo.max_bands = 3;
	bo.exact = 1;
	ret = train_banded(rows, n, present, &bo, &rep, &br);
	tap_check(ret == 0 && !br.banded, "--bands 3: %s", br.why);
	free(rows);
	tap_done("bands: edge found near the truth's, each band within 2%%, "
		 "beats one set held out; one truth keeps one set");
}

/* The CLI writes a banded model that jl_bands_parse() reads back. */
static void test_cli_bands(void)
{
	struct jl_bands b;
	struct gen_opts g;
	const char *p;
	int rc;

	if (!find_cli()) {
		tap_skip("joules-train not built (make -C user)",
			 "cli: banded output");
		return;
	}
	gen_defaults(&g);
	g.n = 6000;
	g.noise = 0.003;
	gen_parse_bands(&g, band_truth);
	gen_files("sb.csv", "pb.csv", &g);
	rc = run_cli("-s sb.csv -p pb.csv -o model.txt -q");
	p = slurp_tmp("model.txt");
	tap_check(rc == 0 && p && !jl_bands_parse(p, strlen(p), &b) && b.nr == 2,
		  "banded output parses: %d %s", rc, cli_err);
	tap_check(p && strstr(p, "# written: 2 bands"), "says why");
	tap_check(b.set[1].idle_uw > 54000000 && b.set[1].idle_uw < 56000000,
		  "upper band's idle %llu", (unsigned long long)b.set[1].idle_uw);
	free((void *)p);
	/* --apply goes to model/bands (a file here: the generation stays). */
	{
		char cmd[1024];

		snprintf(cmd, sizeof(cmd),
			 "mkdir -p '%s/fk/model' && echo 1 > '%s/fk/model/generation' "
			 "&& : > '%s/fk/model/bands'",
			 tmpdir, tmpdir, tmpdir);
		rc = system(cmd);
	}
	rc = run_cli("-s sb.csv -p pb.csv --apply --sysfs fk");
	p = slurp_tmp("fk/model/bands");
	tap_check(rc == 3 && strstr(cli_err, "stayed at 1") && p &&
			  !jl_bands_parse(p, strlen(p), &b) && b.nr == 2,
		  "--apply wrote model/bands: %d %s", rc, cli_err);
	free((void *)p);
	rc = run_cli("-s sb.csv -p pb.csv --bands 1");
	tap_check(rc == 4 || rc == 0, "--bands 1: %d", rc);
	tap_check(strstr(cli_out, "single set (--bands 1)") &&
			  cli_coef(&(struct jl_coef){ 0 }),
		  "--bands 1 writes one set");
	rc = run_cli("-s sb.csv -p pb.csv --band-edges 3000,2000");
	tap_check(rc == 2 && strstr(cli_err, "ascending"), "bad edges: %d %s", rc,
		  cli_err);
	/* No frequency at all: said, and one set written. */
	g.nbands = 0;
	gen_files("sb.csv", "pb.csv", &g);
	rc = run_cli("-s sb.csv -p pb.csv --bands 2");
	tap_check(rc == 0 && cli_coef(&(struct jl_coef){ 0 }) &&
			  strstr(cli_err, "banded model not written"),
		  "--bands 2 on one truth: %d %s", rc, cli_err);
	tap_done("cli: banded output parses with jl_bands_parse, --bands 1, bad edges");
}

/* ---- --follow ---- */

/* Coefficients of the last line of a file (the single form), 0 if none. */
static int file_coef(const char *name, struct jl_coef *c)
{
	char *t = slurp_tmp(name), *p, *last = NULL;
	int ok;

	for (p = t; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : "")
		if (*p != '#')
			last = p;
	ok = last && !jl_coef_parse(last, strlen(last), c);
	free(t);
	return ok;
}

static void test_cli_follow(void)
{
	static const double truth2[JL_NR_COEF] = { 9e6, 1500, 800, 60000, 10000,
						   0, 0, 0, 55e6 };
	const char *args = "--follow -s fs.csv -p fp.csv -o fm.txt --log fl.txt "
			   "--window 250 --refit 100 --bands 1";
	char *log, *before, *after, *line;
	unsigned int wi = 0, after_change = 0, applied_at = 0;
	struct gen_opts g;
	struct jl_coef c;
	double t[JL_NR_COEF], e = 1;
	int rc;

	if (!find_cli()) {
		tap_skip("joules-train not built (make -C user)", "cli: --follow");
		return;
	}
	/* The node changes at row 1500 (about 1500 s in: refit 15). */
	gen_defaults(&g);
	g.n = 2200;
	g.noise = 0.003;
	g.change_row = 1500;
	memcpy(g.truth2, truth2, sizeof(truth2));
	gen_files("fs.csv", "fp.csv", &g);
	unlink_tmp("fm.txt");
	unlink_tmp("fl.txt");
	rc = run_cli(args);
	log = slurp_tmp("fl.txt");
	tap_check(rc == 0 && log && strstr(log, "end of input"), "ran: %d %s", rc,
		  cli_err);
	/* Which refit after the change applied the first new set. */
	for (line = log; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : "") {
		unsigned int k;

		if (sscanf(line, "%*s refit %u:", &k) != 1 || k <= 15)
			continue;
		after_change = k - 15;
		if (!strncmp(strchr(line, ':') ? strstr(line, ": ") + 2 : "", "applied", 7)) {
			applied_at = after_change;
			break;
		}
	}
	tap_check(applied_at >= 1 && applied_at <= 3,
		  "applied %u refits after the change", applied_at);
	memcpy(t, truth2, sizeof(t));
	if (file_coef("fm.txt", &c))
		e = coef_err(&c, t, ALL_COEFS, &wi);
	tap_check(e < 0.05, "follows the new truth: %s off by %.2f%%",
		  jl_coef_names[wi], e * 100);
	free(log);

	/* A burst of 0 W readings after the model settled: never applied. */
	g.change_row = 0;
	g.n = 1230;
	gen_files("fs.csv", "fp.csv", &g);
	unlink_tmp("fm.txt");
	unlink_tmp("fl.txt");
	rc = run_cli(args);
	before = slurp_tmp("fm.txt");
	g.n = 1400;
	g.bogus_row = 1240;
	g.bogus_n = 20;
	g.bogus_w = 0;
	gen_files("fs.csv", "fp.csv", &g);
	unlink_tmp("fl.txt");
	rc = run_cli(args);
	after = slurp_tmp("fm.txt");
	log = slurp_tmp("fl.txt");
	tap_check(rc == 0 && before && after && !strcmp(before, after),
		  "output unchanged by the burst: %d", rc);
	tap_check(log && strstr(log, "refit 13: rejected: meter glitch") &&
			  !strstr(strstr(log, "refit 13:"), "applied:"),
		  "log: %s", log ? log : "");
	free(log);
	free(after);

	/* 10 kW spikes, then a stall across a refit. */
	g.bogus_w = 10000;
	gen_files("fs.csv", "fp.csv", &g);
	unlink_tmp("fl.txt");
	rc = run_cli(args);
	after = slurp_tmp("fm.txt");
	log = slurp_tmp("fl.txt");
	tap_check(rc == 0 && after && !strcmp(before, after) && log &&
			  strstr(log, "refit 13: rejected: meter glitch"),
		  "10 kW: %d %s", rc, log ? log : "");
	free(log);
	free(after);
	g.stall = 1;
	g.bogus_row = 1270;
	g.bogus_n = 40;
	gen_files("fs.csv", "fp.csv", &g);
	unlink_tmp("fl.txt");
	rc = run_cli(args);
	after = slurp_tmp("fm.txt");
	log = slurp_tmp("fl.txt");
	tap_check(rc == 0 && after && !strcmp(before, after) && log &&
			  strstr(log, "rejected: meter stalled"),
		  "stall: %d %s", rc, log ? log : "");
	free(log);
	free(after);
	free(before);

	/* SIGTERM ends it cleanly; a missing meter input is an error. */
	rc = run_cli("--follow -s - -p fp.csv -o fm.txt --window 250 --refit 100 "
		     "< /dev/null");
	tap_check(rc == 0, "empty samples: %d %s", rc, cli_err);
	rc = run_cli("--follow -s fs.csv -p nonexistent.csv -o fm.txt");
	tap_check(rc == 1 && strstr(cli_err, "nonexistent"), "no meter: %d", rc);
	rc = run_cli("--follow -s fs.csv -p fp.csv");
	tap_check(rc == 2, "--follow needs a target: %d", rc);
	{
		char logp[600];
		int in[2], st = -1;
		pid_t pid = -1;
		double t0;

		snprintf(logp, sizeof(logp), "%s/fs.log", tmpdir);
		unlink(logp);
		if (pipe(in) == 0 && (pid = fork()) == 0) {
			dup2(in[0], STDIN_FILENO);
			close(in[1]);
			if (chdir(tmpdir))
				_exit(126);
			execl(cli, cli, "--follow", "-s", "-", "-c", "sleep 600", "-o",
			      "fm.txt", "--log", "fs.log", (char *)NULL);
			_exit(127);
		} else if (pid > 0) {
			close(in[0]);
			usleep(500000);
			kill(pid, SIGTERM);
			t0 = now_s();
			while (waitpid(pid, &st, WNOHANG) == 0 && now_s() - t0 < 10)
				usleep(10000);
			if (now_s() - t0 >= 10)
				kill(pid, SIGKILL), waitpid(pid, &st, 0);
			close(in[1]);
		}
		log = slurp(logp);
		tap_check(WIFEXITED(st) && WEXITSTATUS(st) == 0 && log &&
				  strstr(log, "stopped by signal 15"),
			  "SIGTERM: status %d, log %s", st, log ? log : "");
		free(log);
	}

	/*
	 * With --apply the module's model is the set in force: the truth
	 * itself is kept; a bad one is replaced (the fake sysfs's generation
	 * never moves, so the install is seen to fail); no module, no run.
	 */
	{
		char truth[400], cmd[1200];
		const char *fargs = "--follow -s fs.csv -p fp.csv --apply --sysfs fsys "
				    "--log fl2.txt --window 250 --refit 100 --bands 1";

		gen_defaults(&g);
		g.n = 800;
		g.noise = 0.003;
		gen_files("fs.csv", "fp.csv", &g);
		gen_truth_line(&g, truth, sizeof(truth));
		snprintf(cmd, sizeof(cmd),
			 "cd '%s' && mkdir -p fsys/model && echo 1 > fsys/model/generation && "
			 "echo 'max %s' > fsys/model/bands && : > fsys/model/coefficients", tmpdir, truth);
		tap_check(system(cmd) == 0, "fake sysfs");
		unlink_tmp("fl2.txt");
		rc = run_cli(fargs);
		log = slurp_tmp("fl2.txt");
		tap_check(rc == 0 && log && strstr(log, "kept:") && !strstr(log, "applied:") &&
				  !strstr(log, "install failed"),
			  "the truth in force is kept: %d %s", rc, log ? log : "");
		free(log);
		snprintf(cmd, sizeof(cmd),
			 "cd '%s' && echo 'max 1000000 0 0 0 0 0 0 0 1000000' > fsys/model/bands",
			 tmpdir);
		tap_check(system(cmd) == 0, "fake sysfs, bad set");
		unlink_tmp("fl2.txt");
		rc = run_cli(fargs);
		log = slurp_tmp("fl2.txt");
		tap_check(log && strstr(log, "install failed") && strstr(log, "stayed at 1"),
			  "a bad set in force is replaced: %d %s", rc, log ? log : "");
		free(log);
		rc = run_cli("--follow -s fs.csv -p fp.csv --apply --sysfs nosuchdir");
		tap_check(rc != 0 && strstr(cli_err, "nosuchdir"),
			  "no module: %d %s", rc, cli_err);
	}
	tap_done("cli: --follow follows a changed node within 3 refits; 0 W, "
		 "10 kW and a stall are rejected, the model kept; the module's set "
		 "is the one in force");
}

int main(void)
{
	char tmpl[] = "/tmp/test_train.XXXXXX";
	char cmd[300];

	if (!mkdtemp(tmpl)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(tmpdir, sizeof(tmpdir), "%s", tmpl);
	tap_plan(29);
	test_parse_numbers();
	test_parse_timestamps();
	test_csv_split();
	test_samples_csv();
	test_meter_csv();
	test_align();
	test_meter_semantics();
	test_recover();
	test_exact_units();
	test_nnls();
	test_nnls_trainer();
	test_robust();
	test_uncertainty();
	test_model_check();
	test_blocked_qr();
	test_folds();
	test_train_errors_and_report();
	test_input_hygiene();
	test_apply();
	test_cli();
	test_cli_pdu_cmd();
	test_cli_inputs();
	test_cli_meter();
	test_cli_features();
	test_cli_robust();
	test_cli_degenerate();
	test_bands();
	test_cli_bands();
	test_cli_follow();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd))
		tap_diag("could not remove %s", tmpdir);
	free(diag_buf);
	free(cli_out);
	free(cli_err);
	return tap_finish();
}
