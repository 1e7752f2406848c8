// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of joules-train: parsing (numbers, timestamps, CSV), the samples and meter
 * readers, alignment by meter semantics, input hygiene.
 */
#include <gsl/gsl_multifit.h>

#include "csv.h"
#include "parse.h"
#include "train_util.h"

/* ---- parse library ---- */

/* parse: strict integers, doubles and decimal seconds */
TEST(parse_numbers)
{
	const char *why = NULL;
	uint64_t u;
	int64_t s;
	double d;

	CHECK(parse_u64("18446744073709551615", &u, &why) == 0 &&
		      u == UINT64_MAX,
	      "u64 max");
	CHECK(parse_u64("18446744073709551616", &u, &why) == -ERANGE,
	      "u64 overflow");
	CHECK(parse_u64("", &u, &why) == -EINVAL, "empty");
	CHECK(parse_u64(" 1", &u, &why) == -EINVAL, "leading blank");
	CHECK(parse_u64("1 ", &u, &why) == -EINVAL, "trailing blank");
	CHECK(parse_u64("-1", &u, &why) == -EINVAL, "sign");
	CHECK(parse_u64("12x", &u, &why) == -EINVAL && why &&
		      strstr(why, "integer"),
	      "junk");
	CHECK(parse_s64("-9223372036854775808", &s, &why) == 0 &&
		      s == INT64_MIN,
	      "s64 min");
	CHECK(parse_s64("9223372036854775808", &s, &why) == -ERANGE,
	      "s64 overflow");
	CHECK(parse_double("-2.5e3", &d, &why) == 0 && d == -2500, "double");
	CHECK(parse_double("nan", &d, &why) == -EINVAL, "nan");
	CHECK(parse_double("inf", &d, &why) == -EINVAL, "inf");
	CHECK(parse_double(" 1", &d, &why) == -EINVAL, "double leading blank");
	CHECK(parse_double("1.5W", &d, &why) == -EINVAL, "double junk");
	CHECK(parse_double("1e999", &d, &why) == -EINVAL,
	      "double overflow is inf");
	/* strtod() reads C's hex floats: no meter writes them. */
	CHECK(parse_double("0x1p3", &d, &why) == -EINVAL, "hex float: %g", d);
	CHECK(parse_double("0X10", &d, &why) == -EINVAL, "hex integer: %g", d);
	CHECK(parse_double("-0x1.8p1", &d, &why) == -EINVAL,
	      "signed hex float: %g", d);
	CHECK(parse_seconds_ns("-0.25", &s, &why) == 0 && s == -250000000,
	      "seconds");
	CHECK(parse_seconds_ns("5", &s, &why) == 0 && s == 5000000000LL,
	      "int seconds");
	CHECK(parse_seconds_ns("0.0000000015", &s, &why) == 0 && s == 2,
	      "rounds half up");
	CHECK(parse_seconds_ns("1.", &s, &why) == -EINVAL,
	      "no fraction digits");
	CHECK(parse_seconds_ns("1e3", &s, &why) == -EINVAL &&
		      strstr(why, "exponent"),
	      "exponent");
}

/* parse: timestamps (Unix s/ms, ISO 8601 with zones) to exact ns */
TEST(parse_timestamps)
{
	/* 2026-12-02T14:15:16Z */
	const int64_t base = 1796220916LL * 1000000000LL;
	enum parse_ts_kind k;
	const char *why;
	int64_t ns;
	int64_t day;

	CHECK(!parse_timestamp("1796220916", PARSE_TS_AUTO, 0, &ns, &k, &why) &&
		      ns == base && k == PARSE_TS_KIND_S,
	      "int seconds: %lld", (long long)ns);
	CHECK(!parse_timestamp("1796220916.25", PARSE_TS_AUTO, 0, &ns, &k,
			       &why) &&
		      ns == base + 250000000,
	      "fractional seconds: %lld", (long long)ns);
	CHECK(!parse_timestamp("1796220916.123456789", PARSE_TS_S, 0, &ns, &k,
			       &why) &&
		      ns == base + 123456789,
	      "ns resolution: %lld", (long long)ns);
	CHECK(!parse_timestamp("1796220916250", PARSE_TS_AUTO, 0, &ns, &k,
			       &why) &&
		      ns == base + 250000000 && k == PARSE_TS_KIND_MS,
	      "auto ms: %lld", (long long)ns);
	CHECK(!parse_timestamp("1796220916250.5", PARSE_TS_MS, 0, &ns, &k,
			       &why) &&
		      ns == base + 250500000,
	      "fractional ms: %lld", (long long)ns);
	CHECK(!parse_timestamp("1000", PARSE_TS_MS, 0, &ns, &k, &why) &&
		      ns == 1000000000,
	      "forced ms");
	CHECK(parse_timestamp("1796220916250", PARSE_TS_S, 0, &ns, &k, &why) ==
		      -ERANGE,
	      "ms as seconds overflows");
	CHECK(!parse_timestamp("2026-12-02T14:15:16.250Z", PARSE_TS_AUTO, 0,
			       &ns, &k, &why) &&
		      ns == base + 250000000 && k == PARSE_TS_KIND_ISO,
	      "ISO Z: %lld", (long long)ns);
	CHECK(!parse_timestamp("2026-12-02T15:15:16.250+01:00", PARSE_TS_AUTO,
			       0, &ns, &k, &why) &&
		      ns == base + 250000000,
	      "ISO +01:00");
	CHECK(!parse_timestamp("2026-12-02T09:45:16-0430", PARSE_TS_AUTO, 0,
			       &ns, &k, &why) &&
		      ns == base,
	      "ISO -0430");
	CHECK(!parse_timestamp("2026-12-02 14:15:16", PARSE_TS_AUTO, 0, &ns, &k,
			       &why) &&
		      ns == base,
	      "ISO with blank, no zone = UTC");
	CHECK(!parse_timestamp("2026-12-02t14:15:16,5z", PARSE_TS_AUTO, 0, &ns,
			       &k, &why) &&
		      ns == base + 500000000,
	      "lower-case t/z, comma fraction");
	CHECK(!parse_timestamp("2026-12-02T14:15", PARSE_TS_AUTO, 0, &ns, &k,
			       &why) &&
		      ns == base - 16000000000LL,
	      "no seconds");
	setenv("TZ", "CET-1CEST,M3.5.0,M10.5.0/3", 1);
	tzset();
	CHECK(!parse_timestamp("2026-12-02 15:15:16", PARSE_TS_AUTO,
			       PARSE_TS_LOCALTIME, &ns, &k, &why) &&
		      ns == base,
	      "local time (CET in December): %lld", (long long)ns);
	CHECK(!parse_timestamp("2026-07-02 15:15:16", PARSE_TS_AUTO,
			       PARSE_TS_LOCALTIME, &ns, &k, &why) &&
		      ns == base - 153LL * 86400 * 1000000000LL -
				      3600000000000LL,
	      "local time (CEST in July)");
	CHECK(!parse_timestamp("2026-12-02T14:15:16Z", PARSE_TS_AUTO,
			       PARSE_TS_LOCALTIME, &ns, &k, &why) &&
		      ns == base,
	      "explicit zone wins over local");
	unsetenv("TZ");
	tzset();

	CHECK(parse_timestamp("2026-13-02T00:00:00Z", PARSE_TS_AUTO, 0, &ns, &k,
			      &why) == -EINVAL &&
		      strstr(why, "month"),
	      "month 13");
	CHECK(parse_timestamp("2026-02-29T00:00:00Z", PARSE_TS_AUTO, 0, &ns, &k,
			      &why) == -EINVAL &&
		      strstr(why, "day"),
	      "Feb 29 2026");
	CHECK(!parse_timestamp("2024-02-29T00:00:00Z", PARSE_TS_AUTO, 0, &ns,
			       &k, &why),
	      "Feb 29 2024");
	CHECK(parse_timestamp("2026-12-02T24:00:00Z", PARSE_TS_AUTO, 0, &ns, &k,
			      &why) == -EINVAL &&
		      strstr(why, "hour"),
	      "hour 24");
	CHECK(parse_timestamp("2026-12-02T14:15:16Zx", PARSE_TS_AUTO, 0, &ns,
			      &k, &why) == -EINVAL &&
		      strstr(why, "junk"),
	      "junk after zone");
	CHECK(parse_timestamp("2026-12-02", PARSE_TS_AUTO, 0, &ns, &k, &why) ==
		      -EINVAL,
	      "date only");
	CHECK(parse_timestamp("-5", PARSE_TS_AUTO, 0, &ns, &k, &why) == -EINVAL,
	      "signed");
	CHECK(parse_timestamp("1.7e9", PARSE_TS_AUTO, 0, &ns, &k, &why) ==
			      -EINVAL &&
		      strstr(why, "exponent"),
	      "exponent, said: %s", why);
	CHECK(parse_timestamp("1796220916.", PARSE_TS_AUTO, 0, &ns, &k, &why) ==
			      -EINVAL &&
		      strstr(why, "decimal point"),
	      "no fraction digits, said: %s", why);
	CHECK(parse_timestamp("2026-12-02T15:15:16+01:", PARSE_TS_AUTO, 0, &ns,
			      &k, &why) == -EINVAL &&
		      strstr(why, "offset"),
	      "offset without its minutes");
	CHECK(parse_timestamp("2026-12-02T15:15:16+01:0", PARSE_TS_AUTO, 0, &ns,
			      &k, &why) == -EINVAL &&
		      strstr(why, "offset"),
	      "offset with one digit of minutes");
	CHECK(parse_timestamp("", PARSE_TS_AUTO, 0, &ns, &k, &why) == -EINVAL,
	      "empty");
	CHECK(parse_timestamp("now", PARSE_TS_AUTO, 0, &ns, &k, &why) ==
		      -EINVAL,
	      "word");

	/* The calendar arithmetic against libc's timegm over 1970..2261. */
	for (day = 0; day < 106000; day += 7) {
		time_t t = (time_t)day * 86400;
		struct tm tm;

		gmtime_r(&t, &tm);
		if (!CHECK(parse_days_from_civil(tm.tm_year + 1900,
						 (unsigned int)tm.tm_mon + 1,
						 (unsigned int)tm.tm_mday) ==
				   day,
			   "day %lld", (long long)day))
			break;
	}
}

/* csv: splitting, quoting, line numbers, bad lines */
TEST(csv_fields)
{
	char line[256];
	char *f[8];
	const char *why;
	int n;

	strcpy(line, " a , \"b,\"\"c\"\" \" ,,d\t");
	n = csv_split(line, f, 8, &why);
	CHECK(n == 4, "n=%d", n);
	if (n == 4) {
		CHECK(!strcmp(f[0], "a"), "f0 '%s'", f[0]);
		CHECK(!strcmp(f[1], "b,\"c\" "), "f1 '%s'", f[1]);
		CHECK(!strcmp(f[2], ""), "f2 '%s'", f[2]);
		CHECK(!strcmp(f[3], "d"), "f3 '%s'", f[3]);
	}
	strcpy(line, "a,\"b");
	CHECK(csv_split(line, f, 8, &why) == -EINVAL &&
		      strstr(why, "unterminated"),
	      "unterminated");
	strcpy(line, "a,\"b\"x");
	CHECK(csv_split(line, f, 8, &why) == -EINVAL && strstr(why, "junk"),
	      "junk");
	strcpy(line, "a,b\"c");
	CHECK(csv_split(line, f, 8, &why) == -EINVAL, "stray quote");
	strcpy(line, "1,2,3,4,5");
	CHECK(csv_split(line, f, 2, &why) == 5 && !strcmp(f[1], "2"),
	      "more than max");
	{
		static const char text[] =
			"# comment\r\n\r\nx,y\r\n\n  \n1,2\n";
		struct csv_reader r;
		FILE *fp = mem_in(text);

		csv_init(&r, fp, "t", CSV_SKIP_COMMENTS);
		CHECK(csv_next(&r) == 2 && r.lineno == 3 &&
			      !strcmp(r.field[1], "y"),
		      "line 3");
		CHECK(csv_next(&r) == 2 && r.lineno == 6 &&
			      !strcmp(r.field[0], "1"),
		      "line 6");
		CHECK(csv_next(&r) == 0, "eof");
		csv_free(&r);
		fclose(fp);
	}
	{
		static const char text[] = "a,b\nc\0d,e\nf,g\n";
		struct csv_reader r;
		FILE *fp = fmemopen((void *)text, sizeof(text) - 1, "r");

		csv_init(&r, fp, "t", 0);
		CHECK(csv_next(&r) == 2, "first");
		CHECK(csv_next(&r) == -EINVAL && r.lineno == 2 &&
			      strstr(r.why, "NUL"),
		      "NUL");
		CHECK(csv_next(&r) == 2 && r.lineno == 3,
		      "continues after a bad line");
		csv_free(&r);
		fclose(fp);
	}
}

/* One record of csv_next() as text, to compare two readers'. */
static void csv_record(struct csv_reader *r, int n, char *out, size_t len)
{
	size_t k = (size_t)snprintf(out, len, "%d %lu %llu %s|", n, r->lineno,
				    r->bytes, n == -EINVAL ? r->why : "");
	unsigned int i;

	for (i = 0; n > 0 && i < r->nfield && k < len; i++)
		k += (size_t)snprintf(out + k, len - k, "%.40s,", r->field[i]);
}

/* csv: a regular file (read in blocks) gives a stream's records */
TEST(csv_blocks)
{
	static const char *const lines[] = {
		"\xef\xbb\xbf"
		"a,b\r\n",
		"# c\n",
		"1, \"2\"\r\n",
		"\n",
		"x\0y,z\n",
		"3,\"4\n",
		"5,6\r\r\n",
	};
	size_t cap = 3 << 20, len = 0, i;
	char *text = malloc(cap), ra[256], rb[256];
	FILE *reg = tmpfile(), *mem;
	struct csv_reader a, b;
	int na, nb, same = 1;

	if (!text || !reg) {
		CHECK(0, "no memory or tmpfile");
		return;
	}
	/* Lines of every kind, and some longer than a block, at odd offsets. */
	for (i = 0; len < cap - (1 << 20); i++) {
		const char *l = lines[i % 7];
		size_t n = i % 7 == 4 ? 6 : strlen(l);

		memcpy(text + len, l, n);
		len += n;
		if (i % 1000 == 999) {
			memset(text + len, '9', 300000 + i);
			len += 300000 + i;
			text[len++] = '\n';
		}
	}
	memcpy(text + len, "7,8", 3); /* the last line without '\n' */
	len += 3;
	fwrite(text, 1, len, reg);
	rewind(reg);
	mem = fmemopen(text, len, "r");
	csv_init(&a, reg, "a", CSV_SKIP_COMMENTS);
	csv_init(&b, mem, "b", CSV_SKIP_COMMENTS);
	CHECK(a.block && !b.block, "block %d %d", a.block, b.block);
	do {
		na = csv_next(&a);
		nb = csv_next(&b);
		csv_record(&a, na, ra, sizeof(ra));
		csv_record(&b, nb, rb, sizeof(rb));
		if (strcmp(ra, rb)) {
			CHECK(0, "'%s' != '%s'", ra, rb);
			same = 0;
		}
	} while (same && (na > 0 || na == -EINVAL));
	CHECK(same && na == 0 && a.lineno > 7000, "same records, %lu lines",
	      a.lineno);
	csv_free(&a);
	csv_free(&b);
	fclose(reg);
	fclose(mem);
	free(text);
}

/* ---- input files ---- */

/* samples CSV: values, absent features, bad lines with file:line and reason */
TEST(samples_csv)
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
		"1796220922000000000,10,1000000000,rapl,1,5,1,8,1,2,3,4,3\n"
		/* 9: above INT64_MAX, not absent */
		"1796220923000000000,9223372036854775808,1000000000,rapl,1,5,1,8,1,2,3,4,3\n";
	struct jt_samples s = { 0 };
	const char *d;
	FILE *fp;
	int ret;

	fp = mem_in(good);
	diag_begin();
	ret = jt_read_samples(fp, "good.csv", &s, NULL);
	d = diag_end();
	fclose(fp);
	CHECK(ret == 0 && s.n == 2 && s.st.bad == 0,
	      "good: ret %d n %zu bad %lu: %s", ret, s.n, s.st.bad, d);
	CHECK(s.present == ((1u << JL_F_CPU_NS) | (1u << JL_F_DISK)),
	      "present %#x", s.present);
	CHECK(s.n == 2 && s.s[1].f[JL_F_CPU_NS] == 9e8 &&
		      s.s[0].f[JL_F_DISK] == 4096 &&
		      s.s[1].end_ns == 1796220917000000000LL &&
		      s.s[0].energy_uj == 5e6,
	      "values");
	CHECK(s.n_rapl == 1 && s.n_model == 1, "sources");
	jt_samples_free(&s);

	memset(&s, 0, sizeof(s));
	fp = mem_in(bad);
	diag_begin();
	ret = jt_read_samples(fp, "bad.csv", &s, NULL);
	d = diag_end();
	fclose(fp);
	CHECK(ret == 0 && s.n == 2 && s.st.bad == 6, "bad: n %zu bad %lu", s.n,
	      s.st.bad);
	CHECK(s.st.first_bad_line == 3 &&
		      strstr(s.st.first_bad_why, "interval_ns") &&
		      strstr(s.st.first_bad_why, "zero"),
	      "first bad: %lu %s", s.st.first_bad_line, s.st.first_bad_why);
	CHECK(strstr(d, "bad.csv:3: interval_ns") != NULL,
	      "line 3 reported: %s", d);
	CHECK(strstr(d, "bad.csv:4: 11 fields, the header has 13") != NULL,
	      "line 4");
	CHECK(strstr(d, "bad.csv:5: cpu_ns: '-8'") != NULL, "line 5");
	CHECK(strstr(d, "bad.csv:6: source: 'solar'") != NULL, "line 6");
	CHECK(strstr(d, "bad.csv:7: cycles: empty here") != NULL, "line 7");
	CHECK(strstr(d, "bad.csv:9: monotonic_ns") != NULL, "line 9: %s", d);
	jt_samples_free(&s);

	memset(&s, 0, sizeof(s));
	fp = mem_in("realtime_ns,cpu_ns\n1,2\n");
	diag_begin();
	ret = jt_read_samples(fp, "nohdr.csv", &s, NULL);
	d = diag_end();
	fclose(fp);
	CHECK(ret == -EINVAL &&
		      strstr(d, "nohdr.csv:1: header lacks interval_ns"),
	      "missing column: %d %s", ret, d);
	jt_samples_free(&s);

	memset(&s, 0, sizeof(s));
	fp = mem_in("");
	diag_begin();
	ret = jt_read_samples(fp, "empty.csv", &s, NULL);
	d = diag_end();
	fclose(fp);
	CHECK(ret == -EINVAL && strstr(d, "empty.csv: empty file"), "empty: %s",
	      d);
	jt_samples_free(&s);
}

/* meter CSV: header optional, ms detection, bad lines, --pdu-cmd */
TEST(meter_csv)
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
	CHECK(ret == 0 && m.n == 3 && m.st.bad == 6, "ret %d n %zu bad %lu: %s",
	      ret, m.n, m.st.bad, d);
	CHECK(m.n == 3 && m.t[1] == 1796220916500000000LL && m.w[1] == 101.5 &&
		      m.t[2] == 1796220919000000000LL,
	      "values");
	CHECK(strstr(d,
		     "pdu.csv:4: timestamp '1796220916.5' is not after the reading on "
		     "line 3") != NULL,
	      "line 4: %s", d);
	CHECK(strstr(d, "pdu.csv:5: watts '-1': negative power") != NULL,
	      "line 5");
	CHECK(strstr(d, "pdu.csv:6: watts 'abc'") != NULL, "line 6");
	CHECK(strstr(d, "pdu.csv:8: 3 fields, want 2") != NULL, "line 8");
	CHECK(strstr(d,
		     "pdu.csv:9: timestamp '17962209210': timestamp out of range") !=
		      NULL,
	      "line 9");
	CHECK(strstr(d,
		     "pdu.csv:10: timestamp '1796220921000' looks like Unix milliseconds, "
		     "earlier ones were Unix seconds") != NULL,
	      "line 10");
	CHECK(m.st.first_bad_line == 4, "first bad %lu", m.st.first_bad_line);
	jt_meter_free(&m);

	/* No header; milliseconds detected with a message. */
	jt_meter_init(&m, PARSE_TS_AUTO, 0);
	fp = mem_in("1796220916000,5\n1796220916250,6\n");
	diag_begin();
	ret = jt_read_meter(fp, "ms.csv", &m, NULL);
	d = diag_end();
	fclose(fp);
	CHECK(ret == 0 && m.n == 2 && m.st.bad == 0 &&
		      m.t[1] == 1796220916250000000LL,
	      "ms: n %zu", m.n);
	CHECK(strstr(d, "ms.csv:1: timestamps look like Unix milliseconds") !=
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
	CHECK(ret == 0 && m.n == 1 && m.st.bad == 1 &&
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
	CHECK(ret == 0 && m.n == 2 && m.w[1] == 8.5, "pdu-cmd: %d %zu %s", ret,
	      m.n, d);
	jt_meter_free(&m);
	jt_meter_init(&m, PARSE_TS_AUTO, 0);
	diag_begin();
	ret = jt_read_meter_cmd("echo 1796220916,7; exit 3", &m, NULL, 0);
	d = diag_end();
	CHECK(ret == -EIO && strstr(d, "exited with status 3"),
	      "pdu-cmd exit: %d %s", ret, d);
	jt_meter_free(&m);
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

/* align: exact integral of piecewise-linear power, coverage, gaps, offset */
TEST(align)
{
	int64_t t[] = { 0, 1000000000, 3000000000LL, 4000000000LL };
	double w[] = { 10, 20, 20, 0 };
	struct jt_meter m = { .t = t, .w = w, .n = 4 };
	double uj = 0, rt[64], rw[64];
	int64_t gt[64];
	double gw[64];
	int i, ok = 1;

	CHECK(jt_meter_energy(&m, 500000000, 3500000000LL, 5000000000LL, &uj) ==
			      JT_ALIGN_OK &&
		      fabs(uj - 56250000.0) < 1e-6,
	      "known trace: %.9f uJ", uj);
	CHECK(jt_meter_energy(&m, 0, 4000000000LL, 0, &uj) == JT_ALIGN_OK &&
		      fabs(uj - 65000000.0) < 1e-6,
	      "whole trace: %.9f", uj);
	CHECK(jt_meter_energy(&m, 1000000000, 3000000000LL, 0, &uj) ==
			      JT_ALIGN_OK &&
		      fabs(uj - 40000000.0) < 1e-6,
	      "on reading boundaries: %.9f", uj);
	CHECK(jt_meter_energy(&m, -1, 1000, 0, &uj) == JT_ALIGN_UNCOVERED,
	      "before");
	CHECK(jt_meter_energy(&m, 3500000000LL, 4000000001LL, 0, &uj) ==
		      JT_ALIGN_UNCOVERED,
	      "after");
	CHECK(jt_meter_energy(&m, 1500000000, 2500000000LL, 1999999999, &uj) ==
		      JT_ALIGN_GAP,
	      "2 s gap inside");
	CHECK(jt_meter_energy(&m, 1500000000, 2500000000LL, 2000000000, &uj) ==
			      JT_ALIGN_OK &&
		      fabs(uj - 20000000.0) < 1e-6,
	      "gap = max is fine");
	CHECK(jt_meter_energy(&m, 3100000000LL, 3200000000LL, 1000000000,
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

		ok = CHECK(jt_meter_energy(&m, an, bn, 0, &uj) == JT_ALIGN_OK &&
				   fabs(uj - ref) <= 1e-9 * fabs(ref) + 1e-6,
			   "random %d: %.6f vs %.6f", i, uj, ref);
	}

	/*
	 * jt_align with instant readings: a row's power is the mean of the
	 * readings inside it (linear between them), never interpolated from
	 * readings outside it, which belong to other rows' load.
	 */
	{
		int64_t t6[] = { 0,
				 500000000,
				 1000000000,
				 3000000000LL,
				 3500000000LL,
				 4000000000LL };
		double w6[] = { 10, 15, 20, 20, 10, 0 };
		unsigned long l6[] = { 2, 3, 4, 5, 6, 7 };
		/* offset 0.25 s: meter clock + 0.25 s = sample clock */
		struct jt_sample ss[] = {
			{ .end_ns = 4150000000LL,
			  .interval_ns = 8e8,
			  .line = 10 }, /* [3.1, 3.9]: 3.5 inside */
			{ .end_ns = 1750000000LL,
			  .interval_ns = 1e9,
			  .line = 11 }, /* [0.5, 1.5]: 2 s gap */
			{ .end_ns = 1250000000LL,
			  .interval_ns = 9.5e8,
			  .line = 12 }, /* [0.05, 1.0]: 0.5 and 1 inside */
			{ .end_ns = 4400000000LL,
			  .interval_ns = 5e8,
			  .line = 13 }, /* [3.65, 4.15]: past the end */
			{ .end_ns = 3950000000LL,
			  .interval_ns = 1e8,
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
		CHECK(jt_align(&s, &m, 250000000, 1500000000, &rows, &n, &st) ==
			      0,
		      "align");
		CHECK(n == 2 && st.uncovered == 1 && st.gap == 1 &&
			      st.between == 1,
		      "n %zu uncovered %zu gap %zu between %zu", n,
		      st.uncovered, st.gap, st.between);
		if (n == 2) {
			CHECK(rows[0].end_ns == 1250000000LL &&
				      rows[1].end_ns == 4150000000LL,
			      "sorted by end time");
			CHECK(fabs(rows[0].meter_uj - 17.5 * 0.95e6) < 1e-6,
			      "two readings inside: %f", rows[0].meter_uj);
			CHECK(fabs(rows[1].meter_uj - 10 * 0.8e6) < 1e-6,
			      "one reading inside: %f", rows[1].meter_uj);
			CHECK(rows[0].line == 12 && rows[0].last_line == 12 &&
				      rows[0].mlo == 1 && rows[0].mhi == 2 &&
				      rows[1].mlo == 4 && rows[1].mhi == 4,
			      "provenance: line %lu meter %zu..%zu",
			      rows[0].line, rows[0].mlo, rows[0].mhi);
		}
		free(rows);
	}
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

/*
 * align: instant readings paired with their row, average readings over the
 * meter's period, rows summed into it
 */
TEST(meter_semantics)
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
		if (!CHECK(jt_median(v, i) == want, "median of %zu", i))
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
	CHECK(jt_align(&s, &m, 0, 5000000000LL, &rows, &n, &st) == 0,
	      "instant");
	CHECK(n == 9 && st.between == 30 && !st.aggregated,
	      "instant: n %zu between %zu", n, st.between);
	CHECK(fabs(st.meter_period_ns - 1e9) < 1 && fabs(st.row_ns - 2.5e8) < 1,
	      "periods %g %g", st.meter_period_ns, st.row_ns);
	/* Reading at 1 s is in row [0.85, 1.1] (line 5): 11 W for 250 ms. */
	CHECK(n == 9 && rows[0].line == 5 &&
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
	CHECK(jt_align(&s, &m, 0, 5000000000LL, &rows, &n, &st) == 0,
	      "average");
	/* (0, 1] and (9, 10] are not covered by rows that span 0.1 .. 9.85 */
	CHECK(n == 8 && st.aggregated && st.uncovered == 2 && st.rows_in == 33,
	      "average: n %zu aggregated %d uncovered %zu rows %zu", n,
	      st.aggregated, st.uncovered, st.rows_in);
	if (n == 8) {
		/* (1, 2]: 0.4 of row 4, rows 5-7, 0.6 of row 8 */
		double f = (0.4 * 4 + 5 + 6 + 7 + 0.6 * 8) * 1e6;

		CHECK(rows[0].end_ns == 2000000000LL &&
			      rows[0].interval_ns == 1e9 &&
			      fabs(rows[0].meter_uj - 12e6) < 1e-6,
		      "(1, 2]: %lld %g %f", (long long)rows[0].end_ns,
		      rows[0].interval_ns, rows[0].meter_uj);
		CHECK(fabs(rows[0].f[JL_F_CPU_NS] - f) < 1e-3,
		      "pro rata: %f want %f", rows[0].f[JL_F_CPU_NS], f);
		CHECK(rows[0].line == 5 && rows[0].last_line == 9 &&
			      rows[0].mlo == 2 && rows[0].mhi == 2,
		      "lines %lu-%lu meter %zu", rows[0].line,
		      rows[0].last_line, rows[0].mlo);
	}
	free(rows);

	/* A missing row (a bad line) leaves its period uncovered. */
	memmove(&ss[10], &ss[11], 28 * sizeof(*ss)); /* row [2.6, 2.85] */
	s.n = 38;
	CHECK(jt_align(&s, &m, 0, 5000000000LL, &rows, &n, &st) == 0 &&
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
		CHECK(jt_align(&ss2, &m, 50000000, 5000000000LL, &rows, &n,
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
			CHECK(rows[0].end_ns == 2000000000LL &&
				      fabs(rows[0].meter_uj - e) < 1e-6,
			      "per row: %lld %f want %f",
			      (long long)rows[0].end_ns, rows[0].meter_uj, e);
		}
		free(rows);
		free(s2);
	}
}

/*
 * jt_align_consume() on one pairing: the same rows and counts as
 * jt_align() on a copy of the samples, and the samples given back.
 */
static void consume_same(struct __test_metadata *_metadata,
			 const struct jt_sample *ss, size_t ns,
			 const struct jt_meter *m, int64_t gap_ns,
			 const char *what)
{
	struct jt_samples a = { .n = ns }, b = { .n = ns, .present = 5 };
	struct jt_align_stats sa, sb;
	struct jt_row *ra = NULL, *rb = NULL;
	size_t na = 0, nb = 0;

	a.s = malloc(ns * sizeof(*ss));
	b.s = malloc(ns * sizeof(*ss));
	ASSERT_TRUE(a.s && b.s);
	memcpy(a.s, ss, ns * sizeof(*ss));
	memcpy(b.s, ss, ns * sizeof(*ss));
	CHECK(jt_align(&a, m, 0, gap_ns, &ra, &na, &sa) == 0 &&
		      jt_align_consume(&b, m, 0, gap_ns, &rb, &nb, &sb) == 0,
	      "%s: aligned", what);
	CHECK(na == nb && (!na || !memcmp(ra, rb, na * sizeof(*ra))),
	      "%s: %zu rows, %zu consuming", what, na, nb);
	CHECK(!memcmp(&sa, &sb, sizeof(sa)), "%s: the same counts", what);
	CHECK(!b.s && !b.n && b.present == 5, "%s: samples given back", what);
	free(ra);
	free(rb);
	jt_samples_free(&a);
}

/*
 * align: aligning while giving the samples back (more of them than one
 * give-back step) changes nothing: instant with rows dropped for every
 * reason, average summed into periods, rows out of order.
 */
TEST(align_consume)
{
	const size_t ns = 150000, nm = 40000;
	struct jt_sample *ss = rows_from(0, 250000000, ns), t;
	int64_t *tm = malloc(nm * sizeof(*tm));
	double *wm = malloc(nm * sizeof(*wm));
	unsigned long *lm = malloc(nm * sizeof(*lm));
	struct jt_meter m;
	size_t i;

	ASSERT_TRUE(ss && tm && wm && lm);
	/* Readings every 0.8 s from 5 s on, a 10 s gap at 2000 s. */
	for (i = 0; i < nm; i++) {
		tm[i] = 5000000000LL + (int64_t)i * 800000000LL +
			(i >= 2500 ? 10000000000LL : 0);
		wm[i] = 50 + (double)(i % 13);
		lm[i] = 1 + i;
	}
	jt_meter_init(&m, PARSE_TS_AUTO, 0);
	m.t = tm;
	m.w = wm;
	m.line = lm;
	m.n = nm;
	consume_same(_metadata, ss, ns, &m, 5000000000LL, "instant");
	m.sem = JT_METER_AVERAGE;
	consume_same(_metadata, ss, ns, &m, 5000000000LL, "average");
	m.sem = JT_METER_INSTANT;
	for (i = 0; i + 7 < ns; i += 1000) {
		t = ss[i];
		ss[i] = ss[i + 7];
		ss[i + 7] = t;
	}
	consume_same(_metadata, ss, ns, &m, 0, "out of order");
	free(ss);
	free(tm);
	free(wm);
	free(lm);
}

/* ---- input hygiene (issue 17, cases 6-8) ---- */

/*
 * inputs: BOM, duplicate/overlapping rows, implausible values, offset
 * overflow, progress vs messages
 */
TEST(input_hygiene)
{
	static const char bom_samples[] =
		"\xef\xbb\xbf" HDR
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
	CHECK(ret == 0 && s.n == 1 && s.st.bad == 0,
	      "BOM samples: %d n %zu: %s", ret, s.n, d);
	jt_samples_free(&s);
	jt_meter_init(&m, PARSE_TS_AUTO, 0);
	fp = mem_in("\xef\xbb\xbf"
		    "1796220916,5\n1796220917,6\n");
	diag_begin();
	ret = jt_read_meter(fp, "bom.csv", &m, NULL);
	d = diag_end();
	fclose(fp);
	CHECK(ret == 0 && m.n == 2 && m.st.bad == 0,
	      "BOM meter without header: n %zu: %s", m.n, d);
	jt_meter_free(&m);
	jt_meter_init(&m, PARSE_TS_AUTO, 0);
	fp = fmemopen((void *)"\xff\xfe"
			      "1\0"
			      "7\0",
		      6, "r");
	diag_begin();
	ret = jt_read_meter(fp, "u16.csv", &m, NULL);
	d = diag_end();
	fclose(fp);
	CHECK(strstr(d, "u16.csv:1: UTF-16") != NULL, "UTF-16: %s", d);
	jt_meter_free(&m);

	/* Duplicate, overlapping and backwards rows are bad lines. */
	memset(&s, 0, sizeof(s));
	fp = mem_in(overlap);
	diag_begin();
	ret = jt_read_samples(fp, "ov.csv", &s, NULL);
	d = diag_end();
	fclose(fp);
	CHECK(ret == 0 && s.n == 5 && s.st.bad == 3,
	      "overlaps: n %zu bad %lu: %s", s.n, s.st.bad, d);
	CHECK(strstr(d, "ov.csv:4: realtime_ns") &&
		      strstr(d, "not after the row on line 3"),
	      "duplicate: %s", d);
	CHECK(strstr(d, "ov.csv:6: interval_ns") &&
		      strstr(d, "overlaps the row on line 5 by 2000 ms"),
	      "overlap: %s", d);
	CHECK(strstr(d, "ov.csv:8: realtime_ns") != NULL, "backwards: %s", d);
	jt_samples_free(&s);

	/* Values no machine can produce: the row's line is named. */
	for (unsigned int i = 0; i < JT_NF; i++)
		CHECK(jt_feature_max_rate[i] > 0, "%s has a bound",
		      jt_feature_cols[i]);
	memset(&s, 0, sizeof(s));
	fp = mem_in(insane);
	diag_begin();
	ret = jt_read_samples(fp, "ins.csv", &s, NULL);
	d = diag_end();
	fclose(fp);
	CHECK(ret == 0 && s.n == 1 && s.st.bad == 2,
	      "implausible: n %zu bad %lu: %s", s.n, s.st.bad, d);
	CHECK(strstr(d, "ins.csv:2: cpu_ns") && strstr(d, "ins.csv:3: cycles"),
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
	CHECK(ret == 0 && m.n == 2 && m.st.bad == 2,
	      "huge watts: n %zu bad %lu: %s", m.n, m.st.bad, d);
	CHECK(strstr(d, "big.csv:2: watts '1e300'") &&
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
		CHECK(jt_align(&s1, &m, -9000000000LL * 1000000000LL, 0, &rows,
			       &n, &st) == 0 &&
			      n == 0 && st.uncovered == 1,
		      "offset -9e9 s: n %zu", n);
		free(rows);
		CHECK(jt_align(&s1, &m, INT64_MIN, 0, &rows, &n, &st) == 0 &&
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
		CHECK(buf && strstr(buf, "45.0%\r\033[Ks.csv:7: bad\n"),
		      "progress cleared first: '%s'", buf ? buf : "");
		CHECK(buf && strstr(buf,
				    "bad\njoules-train: reading s.csv  46.0%"),
		      "progress redrawn after: '%s'", buf ? buf : "");
		free(buf);
	}
}

TT_MAIN("test_train_input")
