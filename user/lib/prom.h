/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Prometheus exposition writer: the text format 0.0.4 and OpenMetrics
 * 1.0.0, into a growing memory buffer with a size limit. joules-exporter
 * serves the buffer over HTTP, `joulesctl export` writes it to a file.
 *
 * The two formats differ in small ways this writer hides from its callers:
 *  - a counter family is named without `_total` in OpenMetrics' TYPE and
 *    HELP lines (its samples keep it), with `_total` in 0.0.4;
 *  - an info family is type `info` in OpenMetrics (samples `<name>_info`),
 *    a gauge named `<name>_info` in 0.0.4;
 *  - OpenMetrics has UNIT lines and ends with `# EOF`.
 * A family's HELP/TYPE lines are written before its first sample, so a
 * family without samples (hardware that is absent) does not appear at all.
 *
 * Numbers: prom_fixed() prints an integer count of 10^-decimals units
 * (microjoules as joules) exactly, without going through floating point;
 * prom_sfixed() a signed one.
 * Label values are escaped, and bytes that are not valid UTF-8 (a comm or
 * a cgroup path can hold any) are replaced with U+FFFD: one invalid label
 * would make Prometheus reject the whole scrape.
 */
#ifndef JOULES_PROM_H
#define JOULES_PROM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum prom_format {
	PROM_FMT_TEXT, /* text/plain; version=0.0.4 */
	PROM_FMT_OPENMETRICS, /* application/openmetrics-text; version=1.0.0 */
};

enum prom_type {
	PROM_COUNTER,
	PROM_GAUGE,
	PROM_INFO, /* value always 1; the labels are the information */
};

struct prom_family {
	/* Without the `_total` (counter) or `_info` (info) suffix. */
	const char *name;
	enum prom_type type;
	/* OpenMetrics UNIT ("joules", "seconds"): a suffix of name, or NULL. */
	const char *unit;
	const char *help; /* one line */
};

struct prom_label {
	const char *name;
	const char *value; /* any bytes; escaped and made valid UTF-8 */
};

struct prom_writer {
	enum prom_format fmt;
	char *buf;
	size_t len, cap;
	size_t limit; /* the buffer never grows beyond this */
	int err; /* first error: -ENOMEM or -E2BIG (over limit) */
	const struct prom_family *fam; /* current family */
	bool fam_started; /* its HELP/TYPE are written */
};

/* Default limit: far above any real scrape, low enough to bound memory. */
#define PROM_DEFAULT_LIMIT (16u << 20)

void prom_init(struct prom_writer *w, enum prom_format fmt, size_t limit);
/* Free the buffer (after prom_take(), nothing left to free). */
void prom_free(struct prom_writer *w);

/* Start a family; its header is written with its first sample. */
void prom_family(struct prom_writer *w, const struct prom_family *f);

/* A sample of the current family: v / 10^decimals, printed exactly. */
void prom_fixed(struct prom_writer *w, const struct prom_label *labels,
		size_t nlabels, uint64_t v, unsigned int decimals);
/* The same for a signed count: -1500000 at 6 decimals is -1.5. */
void prom_sfixed(struct prom_writer *w, const struct prom_label *labels,
		 size_t nlabels, int64_t v, unsigned int decimals);
/* A sample with an integer value. */
static inline void prom_u64(struct prom_writer *w,
			    const struct prom_label *labels, size_t nlabels,
			    uint64_t v)
{
	prom_fixed(w, labels, nlabels, v, 0);
}
/* A sample with a floating-point value (NaN and infinities allowed). */
void prom_double(struct prom_writer *w, const struct prom_label *labels,
		 size_t nlabels, double v);

/*
 * End the exposition (OpenMetrics: "# EOF"). Returns 0, or the first
 * error: -ENOMEM, or -E2BIG when the output would exceed the limit.
 */
int prom_finish(struct prom_writer *w);

/* Hand the buffer to the caller (free() it); the writer is empty after. */
char *prom_take(struct prom_writer *w, size_t *len);

/* The Content-Type header of a format. */
const char *prom_content_type(enum prom_format fmt);

/*
 * The format an HTTP Accept header asks for: OpenMetrics when it ranks
 * application/openmetrics-text (version 1.0.0 or unversioned) above
 * text/plain (q values; on a tie the one listed first), else the text
 * format, which is also the answer to no header at all.
 */
enum prom_format prom_negotiate(const char *accept);

/* Is s a valid metric or label name? (For tests and table checks.) */
bool prom_valid_name(const char *s, bool label);

#endif /* JOULES_PROM_H */
