/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Strict parsing of numbers and timestamps for the joules tools.
 *
 * "Strict" means: the whole string must be consumed, no leading or trailing
 * blanks, no empty input, no silent overflow. Every function returns 0 on
 * success or a negative errno (-EINVAL: malformed, -ERANGE: out of range);
 * where a why argument exists it is set to a short human-readable reason
 * (a string constant) on error, so callers can print "file:line: reason".
 */
#ifndef JOULES_PARSE_H
#define JOULES_PARSE_H

#include <stdint.h>

/* Unsigned decimal integer: digits only, no sign. */
int parse_u64(const char *s, uint64_t *out, const char **why);

/* Signed decimal integer, optional leading '+' or '-'. */
int parse_s64(const char *s, int64_t *out, const char **why);

/* Finite floating-point number (strtod syntax, no inf/nan, no blanks). */
int parse_double(const char *s, double *out, const char **why);

/*
 * Exact decimal fixed point: "[+-]digits[.digits]" multiplied by `scale`, a
 * power of ten (1000000000 turns seconds into ns), without going through
 * floating point, so "1764684916.25" becomes exactly 1764684916250000000.
 * Digits beyond the scale's resolution are rounded half away from zero.
 * allow_sign = 0 rejects a sign.
 */
int parse_fixed(const char *s, int64_t scale, int allow_sign, int64_t *out,
		const char **why);

/* A signed duration in seconds ("5", "-0.25", "3600.5") as nanoseconds. */
int parse_seconds_ns(const char *s, int64_t *ns, const char **why);

/* Days since 1970-01-01 of a proleptic Gregorian date (no range check). */
int64_t parse_days_from_civil(int64_t y, unsigned int m, unsigned int d);

/* Flags for parse_iso8601() / parse_timestamp(). */
#define PARSE_TS_LOCALTIME 0x1 /* zone-less ISO times are local, not UTC */

/*
 * ISO 8601 / RFC 3339 date and time, as ns since the Unix epoch:
 *   YYYY-MM-DD{T| }hh:mm[:ss[.fraction]][Z|+hh:mm|-hh:mm|+hhmm|+hh]
 * Without a zone designator the time is UTC, or local time (TZ) with
 * PARSE_TS_LOCALTIME.
 */
int parse_iso8601(const char *s, int flags, int64_t *ns, const char **why);

/* How a numeric timestamp is to be read. */
enum parse_ts_unit {
	PARSE_TS_AUTO, /* seconds, or milliseconds if >= PARSE_TS_MS_MIN */
	PARSE_TS_S, /* Unix seconds */
	PARSE_TS_MS, /* Unix milliseconds */
};

/* What a timestamp turned out to be. */
enum parse_ts_kind {
	PARSE_TS_KIND_S,
	PARSE_TS_KIND_MS,
	PARSE_TS_KIND_ISO,
};

/*
 * Auto-detection threshold: 1e11 as seconds is the year 5138, as
 * milliseconds 1973, so real data is never ambiguous.
 */
#define PARSE_TS_MS_MIN 100000000000LL

/*
 * A timestamp in any of the accepted forms: Unix seconds (integer or
 * fractional), Unix milliseconds (integer or fractional) or ISO 8601.
 * *kind (may be NULL) says which form was recognised.
 */
int parse_timestamp(const char *s, enum parse_ts_unit unit, int flags,
		    int64_t *ns, enum parse_ts_kind *kind, const char **why);

#endif /* JOULES_PARSE_H */
