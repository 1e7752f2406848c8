// SPDX-License-Identifier: GPL-2.0
/* Prometheus text 0.0.4 and OpenMetrics 1.0.0 exposition (prom.h). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "prom.h"

void prom_init(struct prom_writer *w, enum prom_format fmt, size_t limit)
{
	memset(w, 0, sizeof(*w));
	w->fmt = fmt;
	w->limit = limit ? limit : PROM_DEFAULT_LIMIT;
}

void prom_free(struct prom_writer *w)
{
	free(w->buf);
	w->buf = NULL;
	w->len = w->cap = 0;
}

/* Make room for n more bytes plus a NUL; false (and w->err) if not. */
static bool pw_room(struct prom_writer *w, size_t n)
{
	size_t need, cap;
	char *p;

	if (w->err)
		return false;
	need = w->len + n + 1;
	if (need <= w->cap)
		return true;
	if (need > w->limit) {
		w->err = -E2BIG;
		return false;
	}
	cap = w->cap ? w->cap : 4096;
	while (cap < need)
		cap *= 2;
	if (cap > w->limit)
		cap = w->limit;
	p = realloc(w->buf, cap);
	if (!p) {
		w->err = -ENOMEM;
		return false;
	}
	w->buf = p;
	w->cap = cap;
	return true;
}

static void pw_put(struct prom_writer *w, const char *s, size_t n)
{
	if (!pw_room(w, n))
		return;
	memcpy(w->buf + w->len, s, n);
	w->len += n;
	w->buf[w->len] = 0;
}

static void pw_str(struct prom_writer *w, const char *s)
{
	pw_put(w, s, strlen(s));
}

static void pw_chr(struct prom_writer *w, char c)
{
	pw_put(w, &c, 1);
}

/*
 * Length of the valid UTF-8 sequence at s (RFC 3629: no overlongs, no
 * surrogates, nothing above U+10FFFF), or 0 if it is not one.
 */
static size_t utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

/*
 * Escaped text: backslash and newline always, double quotes where asked
 * (label values; HELP in OpenMetrics); invalid UTF-8 becomes U+FFFD.
 */
static void pw_escaped(struct prom_writer *w, const char *s, bool quote)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t run = 0, n;

		/* Copy runs of plain characters in one go. */
		while (p[run] && p[run] != '\\' && p[run] != '\n' &&
		       p[run] != '"' && (n = utf8_len(p + run)))
			run += n;
		if (run) {
			pw_put(w, (const char *)p, run);
			p += run;
			continue;
		}
		if (*p == '\\')
			pw_put(w, "\\\\", 2);
		else if (*p == '\n')
			pw_put(w, "\\n", 2);
		else if (*p == '"')
			pw_put(w, quote ? "\\\"" : "\"", quote ? 2 : 1);
		else
			pw_put(w, "\xef\xbf\xbd", 3);
		p++;
	}
}

bool prom_valid_name(const char *s, bool label)
{
	if (!s || !*s)
		return false;
	for (const char *p = s; *p; p++) {
		bool alpha = (*p >= 'a' && *p <= 'z') ||
			     (*p >= 'A' && *p <= 'Z') || *p == '_' ||
			     (!label && *p == ':');

		if (!alpha && !(p > s && *p >= '0' && *p <= '9'))
			return false;
	}
	return true;
}

static const char *pw_suffix(const struct prom_family *f)
{
	switch (f->type) {
	case PROM_COUNTER:
		return "_total";
	case PROM_INFO:
		return "_info";
	default:
		return "";
	}
}

static const char *pw_type_name(const struct prom_writer *w,
				const struct prom_family *f)
{
	switch (f->type) {
	case PROM_COUNTER:
		return "counter";
	case PROM_INFO:
		return w->fmt == PROM_FMT_OPENMETRICS ? "info" : "gauge";
	default:
		return "gauge";
	}
}

void prom_family(struct prom_writer *w, const struct prom_family *f)
{
	w->fam = f;
	w->fam_started = false;
	if (!prom_valid_name(f->name, false) && !w->err)
		w->err = -EINVAL;
}

static void pw_header(struct prom_writer *w)
{
	const struct prom_family *f = w->fam;
	/* 0.0.4 names the family as its samples are named. */
	const char *sfx = w->fmt == PROM_FMT_TEXT ? pw_suffix(f) : "";
	bool om = w->fmt == PROM_FMT_OPENMETRICS;

	w->fam_started = true;
	pw_str(w, "# HELP ");
	pw_str(w, f->name);
	pw_str(w, sfx);
	pw_chr(w, ' ');
	pw_escaped(w, f->help ? f->help : "", om);
	pw_str(w, "\n# TYPE ");
	pw_str(w, f->name);
	pw_str(w, sfx);
	pw_chr(w, ' ');
	pw_str(w, pw_type_name(w, f));
	pw_chr(w, '\n');
	if (om && f->unit && *f->unit) {
		pw_str(w, "# UNIT ");
		pw_str(w, f->name);
		pw_chr(w, ' ');
		pw_str(w, f->unit);
		pw_chr(w, '\n');
	}
}

/* The sample's name and labels, up to the blank before the value. */
static bool pw_sample_start(struct prom_writer *w,
			    const struct prom_label *labels, size_t nlabels)
{
	if (!w->fam) {
		if (!w->err)
			w->err = -EINVAL;
		return false;
	}
	if (!w->fam_started)
		pw_header(w);
	pw_str(w, w->fam->name);
	pw_str(w, pw_suffix(w->fam));
	if (nlabels) {
		pw_chr(w, '{');
		for (size_t i = 0; i < nlabels; i++) {
			if (!prom_valid_name(labels[i].name, true) && !w->err)
				w->err = -EINVAL;
			if (i)
				pw_chr(w, ',');
			pw_str(w, labels[i].name);
			pw_str(w, "=\"");
			pw_escaped(w, labels[i].value ? labels[i].value : "",
				   true);
			pw_chr(w, '"');
		}
		pw_chr(w, '}');
	}
	pw_chr(w, ' ');
	return !w->err;
}

static const uint64_t pow10_u64[] = {
	1ull,
	10ull,
	100ull,
	1000ull,
	10000ull,
	100000ull,
	1000000ull,
	10000000ull,
	100000000ull,
	1000000000ull,
	10000000000ull,
	100000000000ull,
	1000000000000ull,
	10000000000000ull,
	100000000000000ull,
	1000000000000000ull,
	10000000000000000ull,
	100000000000000000ull,
	1000000000000000000ull,
};
#define PW_MAX_DECIMALS (sizeof(pow10_u64) / sizeof(pow10_u64[0]) - 1)

/* v / 10^decimals, with a minus sign if neg (v is the magnitude). */
static void pw_fixed(struct prom_writer *w, const struct prom_label *labels,
		     size_t nlabels, bool neg, uint64_t v,
		     unsigned int decimals)
{
	char num[48];
	int n;

	if (decimals > PW_MAX_DECIMALS) {
		if (!w->err)
			w->err = -EINVAL;
		return;
	}
	if (!pw_sample_start(w, labels, nlabels))
		return;
	n = snprintf(num, sizeof(num), "%s%" PRIu64, neg && v ? "-" : "",
		     v / pow10_u64[decimals]);
	if (decimals && v % pow10_u64[decimals]) {
		/* The fraction, zero-padded, trailing zeros dropped. */
		n += snprintf(num + n, sizeof(num) - (size_t)n, ".%0*" PRIu64,
			      (int)decimals, v % pow10_u64[decimals]);
		while (num[n - 1] == '0')
			n--;
	}
	num[n++] = '\n';
	pw_put(w, num, (size_t)n);
}

void prom_fixed(struct prom_writer *w, const struct prom_label *labels,
		size_t nlabels, uint64_t v, unsigned int decimals)
{
	pw_fixed(w, labels, nlabels, false, v, decimals);
}

void prom_sfixed(struct prom_writer *w, const struct prom_label *labels,
		 size_t nlabels, int64_t v, unsigned int decimals)
{
	/* The magnitude in unsigned arithmetic: INT64_MIN has no positive twin. */
	uint64_t m = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

	pw_fixed(w, labels, nlabels, v < 0, m, decimals);
}

void prom_double(struct prom_writer *w, const struct prom_label *labels,
		 size_t nlabels, double v)
{
	char num[48];

	if (!pw_sample_start(w, labels, nlabels))
		return;
	if (isnan(v))
		snprintf(num, sizeof(num), "NaN\n");
	else if (isinf(v))
		snprintf(num, sizeof(num), "%sInf\n", v > 0 ? "+" : "-");
	else
		snprintf(num, sizeof(num), "%.10g\n", v);
	pw_str(w, num);
}

int prom_finish(struct prom_writer *w)
{
	if (w->fmt == PROM_FMT_OPENMETRICS)
		pw_str(w, "# EOF\n");
	else if (!w->len && pw_room(w, 0))
		/* An empty exposition is still a buffer, and a string. */
		w->buf[0] = 0;
	return w->err;
}

char *prom_take(struct prom_writer *w, size_t *len)
{
	char *b = w->buf;

	*len = w->len;
	w->buf = NULL;
	w->len = w->cap = 0;
	return b;
}

const char *prom_content_type(enum prom_format fmt)
{
	if (fmt == PROM_FMT_OPENMETRICS)
		return "application/openmetrics-text; version=1.0.0; charset=utf-8";
	return "text/plain; version=0.0.4; charset=utf-8";
}

/* Trim blanks at both ends of [*s, *e). */
static void trim(const char **s, const char **e)
{
	while (*s < *e && isspace((unsigned char)**s))
		(*s)++;
	while (*e > *s && isspace((unsigned char)(*e)[-1]))
		(*e)--;
}

static bool span_is(const char *s, const char *e, const char *word)
{
	size_t n = strlen(word);

	return (size_t)(e - s) == n && !strncasecmp(s, word, n);
}

/* One media range of an Accept header: what it offers, at which q. */
static void accept_range(const char *s, const char *e, double *q_om,
			 double *q_text, int *first, int idx)
{
	const char *semi = memchr(s, ';', (size_t)(e - s));
	const char *ts = s, *te = semi ? semi : e;
	const char *version = NULL, *vend = NULL;
	double q = 1.0;
	bool om, text;

	trim(&ts, &te);
	/* Parameters: q=, version= (quotes allowed). */
	while (semi) {
		const char *ks = semi + 1, *ke, *vs, *ve;

		semi = memchr(ks, ';', (size_t)(e - ks));
		ve = semi ? semi : e;
		ke = memchr(ks, '=', (size_t)(ve - ks));
		if (!ke)
			continue;
		vs = ke + 1;
		trim(&ks, &ke);
		trim(&vs, &ve);
		if (ve - vs >= 2 && *vs == '"' && ve[-1] == '"') {
			vs++;
			ve--;
		}
		if (span_is(ks, ke, "q")) {
			char num[16];
			size_t n = (size_t)(ve - vs);
			char *end;

			if (n == 0 || n >= sizeof(num))
				return; /* malformed: ignore the range */
			memcpy(num, vs, n);
			num[n] = 0;
			q = strtod(num, &end);
			if (*end || !(q >= 0 && q <= 1))
				return;
		} else if (span_is(ks, ke, "version")) {
			version = vs;
			vend = ve;
		}
	}
	om = span_is(ts, te, "application/openmetrics-text") &&
	     (!version || span_is(version, vend, "1.0.0"));
	text = (span_is(ts, te, "text/plain") &&
		(!version || span_is(version, vend, "0.0.4"))) ||
	       span_is(ts, te, "text/*") || span_is(ts, te, "*/*");
	/* The first range with the highest q decides a tie. */
	if (om && q > *q_om) {
		*q_om = q;
		first[0] = idx;
	}
	if (text && q > *q_text) {
		*q_text = q;
		first[1] = idx;
	}
}

enum prom_format prom_negotiate(const char *accept)
{
	double q_om = 0, q_text = 0;
	int first[2] = { -1, -1 }, idx = 0;
	const char *s = accept;

	if (!accept)
		return PROM_FMT_TEXT;
	while (*s) {
		const char *e = strchr(s, ',');

		if (!e)
			e = s + strlen(s);
		accept_range(s, e, &q_om, &q_text, first, idx++);
		s = *e ? e + 1 : e;
	}
	if (q_om <= 0)
		return PROM_FMT_TEXT;
	if (q_om > q_text)
		return PROM_FMT_OPENMETRICS;
	if (q_om == q_text && first[0] < first[1])
		return PROM_FMT_OPENMETRICS;
	return PROM_FMT_TEXT;
}
