// SPDX-License-Identifier: GPL-2.0
/*
 * Strict number and timestamp parsing shared by the joules tools. The
 * trainer reads millions of meter and sample lines, so this avoids
 * locale-dependent or allocation-heavy libc paths where it can, and never
 * accepts a partially parsed field.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "parse.h"

#define NSEC_PER_SEC 1000000000LL

static int fail(const char **why, const char *reason, int err)
{
	if (why)
		*why = reason;
	return err;
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* parse_u64() checking every step for overflow. */
static int parse_u64_checked(const char *s, uint64_t *out, const char **why)
{
	uint64_t v = 0;

	for (; *s; s++) {
		if (!is_digit(*s))
			return fail(why, "not an unsigned integer", -EINVAL);
		if (__builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, (uint64_t)(*s - '0'), &v))
			return fail(why, "integer too large", -ERANGE);
	}
	*out = v;
	return 0;
}

int parse_u64(const char *s, uint64_t *out, const char **why)
{
	const char *p = s;
	uint64_t v = 0;
	unsigned int d;

	if (!*s)
		return fail(why, "empty number", -EINVAL);
	/*
	 * The digits as they come: 19 cannot overflow, more are checked. Two
	 * a step halve the chain of multiply-adds; p[1] is read only after
	 * p[0] was a digit, so never past the NUL.
	 */
	while ((d = (unsigned int)((unsigned char)p[0] - '0')) <= 9) {
		unsigned int e = (unsigned int)((unsigned char)p[1] - '0');

		if (e > 9) {
			v = v * 10 + d;
			p++;
			break;
		}
		v = v * 100 + d * 10 + e;
		p += 2;
	}
	if (p - s > 19)
		return parse_u64_checked(s, out, why);
	if (*p)
		return fail(why, "not an unsigned integer", -EINVAL);
	*out = v;
	return 0;
}

int parse_s64(const char *s, int64_t *out, const char **why)
{
	int neg = 0;
	uint64_t v;
	int ret;

	if (*s == '+' || *s == '-')
		neg = *s++ == '-';
	ret = parse_u64(s, &v, why);
	if (ret == -EINVAL)
		return fail(why, "not an integer", ret);
	if (ret)
		return ret;
	if (v > (uint64_t)INT64_MAX + neg)
		return fail(why, "integer out of range", -ERANGE);
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}

/*
 * [+-]digits[.digits], at most 19 digits whose value is at most 2^53, at
 * most 22 of them after the point: the value is m / 10^k with both exact
 * doubles, so the one correctly rounded division is strtod()'s result
 * (Clinger's fast path). Returns 1 and *out then, 0 for anything else.
 */
static int simple_decimal(const char *s, double *out)
{
	static const double p10[23] = { 1e0,  1e1,  1e2,  1e3,	1e4,  1e5,
					1e6,  1e7,  1e8,  1e9,	1e10, 1e11,
					1e12, 1e13, 1e14, 1e15, 1e16, 1e17,
					1e18, 1e19, 1e20, 1e21, 1e22 };
	int neg = 0, nd = 0, frac = 0;
	uint64_t m = 0;
	double v;

	if (*s == '+' || *s == '-')
		neg = *s++ == '-';
	if (!is_digit(*s))
		return 0;
	for (; is_digit(*s) && nd <= 19; s++, nd++)
		m = m * 10 + (uint64_t)(*s - '0');
	if (*s == '.' && is_digit(s[1]))
		for (s++; is_digit(*s) && nd <= 19; s++, nd++, frac++)
			m = m * 10 + (uint64_t)(*s - '0');
	if (*s || nd > 19 || frac > 22 || m > (1ULL << 53))
		return 0;
	v = (double)m / p10[frac];
	*out = neg ? -v : v;
	return 1;
}

int parse_double(const char *s, double *out, const char **why)
{
	char *end;
	double v;

	if (simple_decimal(s, out))
		return 0;
	if (!*s)
		return fail(why, "empty number", -EINVAL);
	/* strtod skips leading blanks; a strict field must not have them. */
	if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == '\v' ||
	    *s == '\f')
		return fail(why, "not a number", -EINVAL);
	/* Nor C's hex floats ("0x1p3"): no meter writes them. */
	if (strpbrk(s, "xX"))
		return fail(why, "not a decimal number", -EINVAL);
	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end)
		return fail(why, "not a number", -EINVAL);
	if (!isfinite(v))
		return fail(why, "not a finite number", -EINVAL);
	/* ERANGE with a finite result is underflow: the value is usable. */
	if (errno == ERANGE && fabs(v) > 1.0)
		return fail(why, "number out of range", -ERANGE);
	*out = v;
	return 0;
}

int parse_fixed(const char *s, int64_t scale, int allow_sign, int64_t *out,
		const char **why)
{
	uint64_t ip = 0, fp = 0, v;
	int64_t place;
	int neg = 0, round = 0;
	const char *k;

	if (*s == '+' || *s == '-') {
		if (!allow_sign)
			return fail(why, "sign not allowed", -EINVAL);
		neg = *s++ == '-';
	}
	if (!is_digit(*s))
		return fail(why, *s ? "not a number" : "empty number", -EINVAL);
	/* 19 digits cannot overflow: check each step only beyond them. */
	for (k = s; is_digit(*s) && s - k < 19; s++)
		ip = ip * 10 + (uint64_t)(*s - '0');
	for (; is_digit(*s); s++) {
		if (__builtin_mul_overflow(ip, 10, &ip) ||
		    __builtin_add_overflow(ip, (uint64_t)(*s - '0'), &ip))
			return fail(why, "number out of range", -ERANGE);
	}
	if (*s == '.') {
		s++;
		if (!is_digit(*s))
			return fail(why, "no digits after the decimal point",
				    -EINVAL);
		/* Keep as many fraction digits as the scale resolves, round on the next. */
		for (place = scale / 10; is_digit(*s); s++) {
			if (place) {
				fp += (uint64_t)(*s - '0') * (uint64_t)place;
				place /= 10;
			} else if (!round) {
				round = *s >= '5' ? 1 : -1;
			}
		}
	}
	if (*s)
		return fail(why,
			    (*s == 'e' || *s == 'E') ?
				    "exponent notation not accepted" :
				    "not a number",
			    -EINVAL);
	if (round > 0)
		fp++;
	if (__builtin_mul_overflow(ip, (uint64_t)scale, &v) ||
	    __builtin_add_overflow(v, fp, &v) || v > (uint64_t)INT64_MAX)
		return fail(why, "number out of range", -ERANGE);
	*out = neg ? -(int64_t)v : (int64_t)v;
	return 0;
}

int parse_seconds_ns(const char *s, int64_t *ns, const char **why)
{
	return parse_fixed(s, NSEC_PER_SEC, 1, ns, why);
}

/*
 * Days from 1970-01-01 for a proleptic Gregorian date: shift the year to
 * start in March so the leap day is the last day of the year, then count
 * 400-year eras (146097 days each).
 */
int64_t parse_days_from_civil(int64_t y, unsigned int m, unsigned int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static unsigned int days_in_month(int64_t y, unsigned int m)
{
	static const unsigned char mdays[12] = { 31, 28, 31, 30, 31, 30,
						 31, 31, 30, 31, 30, 31 };
	int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return mdays[m - 1] + (m == 2 && leap);
}

/* Exactly n digits at *sp; advances *sp. */
static int take_digits(const char **sp, int n, unsigned int *out)
{
	const char *s = *sp;
	unsigned int v = 0;
	int i;

	for (i = 0; i < n; i++) {
		if (!is_digit(s[i]))
			return -1;
		v = v * 10 + (unsigned int)(s[i] - '0');
	}
	*sp = s + n;
	*out = v;
	return 0;
}

/* YYYY-MM-DD and the separator before the time. */
static int iso_date(const char **sp, unsigned int *y, unsigned int *mo,
		    unsigned int *d, const char **why)
{
	const char *s = *sp;

	if (take_digits(&s, 4, y) || *s++ != '-' || take_digits(&s, 2, mo) ||
	    *s++ != '-' || take_digits(&s, 2, d))
		return fail(why, "bad date (want YYYY-MM-DD)", -EINVAL);
	if (*mo < 1 || *mo > 12)
		return fail(why, "month out of range", -EINVAL);
	if (*d < 1 || *d > days_in_month(*y, *mo))
		return fail(why, "day out of range", -EINVAL);
	if (*s != 'T' && *s != 't' && *s != ' ')
		return fail(why,
			    *s ? "bad date/time separator (want 'T' or ' ')" :
				 "date without a time",
			    -EINVAL);
	*sp = s + 1;
	return 0;
}

/* The fraction of a second after '.' or ',', in ns. */
static int iso_frac(const char **sp, int64_t *frac, const char **why)
{
	const char *s = *sp;
	int64_t place = NSEC_PER_SEC / 10;
	int round = 0;

	if (!is_digit(*s))
		return fail(why, "no digits in the fraction of a second",
			    -EINVAL);
	/* Same rounding as parse_fixed(): half away from zero at 1 ns. */
	for (; is_digit(*s); s++) {
		if (place) {
			*frac += (*s - '0') * place;
			place /= 10;
		} else if (!round) {
			round = *s >= '5' ? 1 : -1;
		}
	}
	*frac += round > 0;
	*sp = s;
	return 0;
}

/* hh:mm[:ss[.fff]], each field in range. */
static int iso_time(const char **sp, unsigned int *h, unsigned int *mi,
		    unsigned int *sec, int64_t *frac, const char **why)
{
	const char *s = *sp;
	int ret;

	if (take_digits(&s, 2, h) || *s++ != ':' || take_digits(&s, 2, mi))
		return fail(why, "bad time (want hh:mm[:ss])", -EINVAL);
	if (*s == ':') {
		s++;
		if (take_digits(&s, 2, sec))
			return fail(why, "bad seconds", -EINVAL);
		if (*s == '.' || *s == ',') {
			s++;
			ret = iso_frac(&s, frac, why);
			if (ret)
				return ret;
		}
	}
	if (*h > 23)
		return fail(why, "hour out of range", -EINVAL);
	if (*mi > 59)
		return fail(why, "minute out of range", -EINVAL);
	if (*sec > 59)
		return fail(
			why,
			"second out of range (leap seconds are not accepted)",
			-EINVAL);
	*sp = s;
	return 0;
}

/* Z or +hh[:mm]/-hh[:mm], if any: the offset from UTC in seconds. */
static int iso_zone(const char **sp, int64_t *off, int *have_zone,
		    const char **why)
{
	const char *s = *sp;
	unsigned int oh = 0, om = 0;

	if (*s == 'Z' || *s == 'z') {
		*have_zone = 1;
		s++;
	} else if (*s == '+' || *s == '-') {
		int neg = *s++ == '-';

		if (take_digits(&s, 2, &oh))
			return fail(why, "bad UTC offset (want +hh:mm)",
				    -EINVAL);
		/* +hh, +hhmm or +hh:mm; a colon needs its minutes. */
		if (*s == ':' && !is_digit(s[1]))
			return fail(why, "bad UTC offset (want +hh:mm)",
				    -EINVAL);
		if (*s == ':')
			s++;
		if (is_digit(*s) && take_digits(&s, 2, &om))
			return fail(why, "bad UTC offset (want +hh:mm)",
				    -EINVAL);
		if (oh > 23 || om > 59)
			return fail(why, "UTC offset out of range", -EINVAL);
		*off = ((int64_t)oh * 3600 + om * 60) * (neg ? -1 : 1);
		*have_zone = 1;
	}
	*sp = s;
	return 0;
}

int parse_iso8601(const char *s, int flags, int64_t *ns, const char **why)
{
	unsigned int y, mo, d, h, mi, sec = 0;
	int64_t frac = 0, t, off = 0;
	int have_zone = 0, ret;

	ret = iso_date(&s, &y, &mo, &d, why);
	if (!ret)
		ret = iso_time(&s, &h, &mi, &sec, &frac, why);
	if (!ret)
		ret = iso_zone(&s, &off, &have_zone, why);
	if (ret)
		return ret;
	if (*s)
		return fail(why, "junk after the time", -EINVAL);

	if (!have_zone && (flags & PARSE_TS_LOCALTIME)) {
		struct tm tm = {
			.tm_year = (int)y - 1900,
			.tm_mon = (int)mo - 1,
			.tm_mday = (int)d,
			.tm_hour = (int)h,
			.tm_min = (int)mi,
			.tm_sec = (int)sec,
			.tm_isdst = -1,
		};
		time_t tt = mktime(&tm);

		if (tt == (time_t)-1)
			return fail(why, "local time not representable",
				    -ERANGE);
		t = (int64_t)tt;
	} else {
		t = parse_days_from_civil(y, mo, d) * 86400 + h * 3600 +
		    mi * 60 + sec - off;
	}
	if (t < 0 || t > INT64_MAX / NSEC_PER_SEC - 1)
		return fail(why,
			    "time out of range (before 1970 or after 2262)",
			    -ERANGE);
	*ns = t * NSEC_PER_SEC + frac;
	return 0;
}

/* Integer part of an unsigned decimal, saturating; -1 if not numeric. */
static int64_t int_part(const char *s)
{
	const char *k = s;
	int64_t v = 0;

	if (!is_digit(*s))
		return -1;
	/* 17 digits cannot reach the saturation: no test for it there. */
	for (; is_digit(*s) && s - k < 17; s++)
		v = v * 10 + (*s - '0');
	for (; is_digit(*s); s++)
		v = v > INT64_MAX / 100 ? INT64_MAX / 10 : v * 10 + (*s - '0');
	return v;
}

int parse_timestamp(const char *s, enum parse_ts_unit unit, int flags,
		    int64_t *ns, enum parse_ts_kind *kind, const char **why)
{
	enum parse_ts_kind k;
	int64_t ip, v;
	int ret;

	if (!*s)
		return fail(why, "empty timestamp", -EINVAL);
	/*
	 * "YYYY-" can only start a date; a Unix time has no '-' in it. s[4]
	 * is read only when s[1..3] are not the NUL.
	 */
	if (is_digit(s[0]) && s[1] && s[2] && s[3] && s[4] == '-') {
		ret = parse_iso8601(s, flags, ns, why);
		if (!ret && kind)
			*kind = PARSE_TS_KIND_ISO;
		return ret;
	}
	if (*s == '-' || *s == '+')
		return fail(why, "signed Unix timestamp", -EINVAL);
	ip = int_part(s);
	if (ip < 0)
		return fail(why, "not a timestamp", -EINVAL);
	if (unit == PARSE_TS_MS ||
	    (unit == PARSE_TS_AUTO && ip >= PARSE_TS_MS_MIN))
		k = PARSE_TS_KIND_MS;
	else
		k = PARSE_TS_KIND_S;
	ret = parse_fixed(s, k == PARSE_TS_KIND_MS ? 1000000 : NSEC_PER_SEC, 0,
			  &v, why);
	if (ret == -ERANGE)
		return fail(
			why,
			k == PARSE_TS_KIND_S ?
				"timestamp out of range for Unix seconds (milliseconds? see --pdu-ms)" :
				"timestamp out of range for Unix milliseconds",
			ret);
	/* parse_fixed() said why. */
	if (ret)
		return ret;
	*ns = v;
	if (kind)
		*kind = k;
	return 0;
}
