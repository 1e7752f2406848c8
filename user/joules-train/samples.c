// SPDX-License-Identifier: GPL-2.0
/*
 * Reader for `joulesctl record` files: one CSV row per attribution
 * interval, columns found by header name so that added columns do not
 * break old trainers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "csv.h"
#include "train.h"

const char *const jt_feature_cols[JT_NF] = {
	[JL_F_CPU_NS] = "cpu_ns",	[JL_F_CYCLES] = "cycles",
	[JL_F_INSTR] = "instructions",	[JL_F_MISSES] = "cache_misses",
	[JL_F_DISK] = "disk_bytes",	[JL_F_NET_TX] = "net_tx_bytes",
	[JL_F_NET_RX] = "net_rx_bytes", [JL_F_PAGECACHE] = "pagecache_bytes",
};

/* 8192 CPUs (x86 MAXSMP) at 10 GHz; 8 instructions per cycle; 1 TB/s. */
#define JT_MAX_CPUS 8192.0
const double jt_feature_max_rate[JT_NF] = {
	[JL_F_CPU_NS] = JT_MAX_CPUS,
	[JL_F_CYCLES] = JT_MAX_CPUS * 10,
	[JL_F_INSTR] = JT_MAX_CPUS * 10 * 8,
	[JL_F_MISSES] = JT_MAX_CPUS * 10,
	[JL_F_DISK] = 1000,
	[JL_F_NET_TX] = 1000,
	[JL_F_NET_RX] = 1000,
	[JL_F_PAGECACHE] = 1000,
};

enum {
	C_REALTIME,
	C_MONOTONIC,
	C_INTERVAL,
	C_SOURCE,
	C_GEN,
	C_ENERGY,
	C_IDLE,
	C_TASKS,
	C_FREQ,
	C_NR
};

static const char *const col_names[C_NR] = {
	"realtime_ns",	    "monotonic_ns", "interval_ns", "source",
	"model_generation", "energy_uj",    "idle_uj",	   "tasks",
	"freq_mhz",
};

void jt_samples_free(struct jt_samples *s)
{
	free(s->s);
	s->s = NULL;
	s->n = s->cap = 0;
}

unsigned long long jt_file_size(FILE *fp)
{
	struct stat st;

	if (fstat(fileno(fp), &st) || !S_ISREG(st.st_mode))
		return 0;
	return (unsigned long long)st.st_size;
}

/* Optional unsigned field: "" is absent (returns 1), a number 0, else < 0. */
static int opt_u64(const char *f, uint64_t *v, const char **why)
{
	if (!*f)
		return 1;
	return parse_u64(f, v, why);
}

/* One samples file being read: its columns and where rows go. */
struct rd {
	const char *name;
	struct csv_reader r;
	int col[C_NR], fcol[JT_NF]; /* field index of each column, -1: none */
	unsigned int nhdr;
	struct jt_samples *out;
};

static FILE *diag(void)
{
	return jt_diag ? jt_diag : stderr;
}

/* The header line: 0, or a negative errno after saying why. */
static int read_header(struct rd *d)
{
	int n = csv_next(&d->r), *col = d->col;
	unsigned int i;

	if (n == -EINVAL) {
		fprintf(diag(), "%s:%lu: bad header line: %s\n", d->name,
			d->r.lineno, d->r.why);
		return -EINVAL;
	}
	if (n <= 0) {
		fprintf(diag(), "%s: %s\n", d->name,
			n ? strerror(-n) : "empty file (no header line)");
		return n ? n : -EINVAL;
	}
	d->nhdr = d->r.nfield;
	for (i = 0; i < C_NR; i++)
		col[i] = csv_find(d->r.field, d->nhdr, col_names[i]);
	for (i = 0; i < JT_NF; i++)
		d->fcol[i] = csv_find(d->r.field, d->nhdr, jt_feature_cols[i]);
	if (col[C_REALTIME] < 0 || col[C_INTERVAL] < 0 ||
	    d->fcol[JL_F_CPU_NS] < 0) {
		fprintf(diag(),
			"%s:%lu: header lacks %s (want realtime_ns,monotonic_ns,interval_ns,"
			"source,model_generation,energy_uj,idle_uj,cpu_ns,cycles,instructions,"
			"cache_misses,disk_bytes,tasks)\n",
			d->name, d->r.lineno,
			col[C_REALTIME] < 0 ? "realtime_ns" :
			col[C_INTERVAL] < 0 ? "interval_ns" :
					      "cpu_ns");
		return -EINVAL;
	}
	return 0;
}

/* Count a bad line of the row being read; always 1 (the row is dropped). */
static int bad_field(struct rd *d, const char *col, const char *val,
		     const char *why)
{
	jt_bad_line(&d->out->st, d->name, d->r.lineno, "%s: '%s': %s", col, val,
		    why);
	return 1;
}

#define FIELD(d, c) ((d)->r.field[(d)->col[c]])

/*
 * The optional columns that are only checked for being numbers, and
 * monotonic_ns, which read_row() parsed already: mono_rc is opt_u64()'s.
 */
static int check_optional(struct rd *d, int mono_rc, const char *mono_why)
{
	static const unsigned int cols[] = { C_GEN, C_IDLE, C_TASKS };
	const char *why = NULL;
	uint64_t v;
	unsigned int i;

	if (mono_rc < 0)
		return bad_field(d, col_names[C_MONOTONIC],
				 FIELD(d, C_MONOTONIC), mono_why);
	for (i = 0; i < sizeof(cols) / sizeof(cols[0]); i++)
		if (d->col[cols[i]] >= 0 &&
		    opt_u64(FIELD(d, cols[i]), &v, &why) < 0)
			return bad_field(d, col_names[cols[i]],
					 FIELD(d, cols[i]), why);
	return 0;
}

/* realtime_ns and interval_ns, both required. */
static int parse_times(struct rd *d, struct jt_sample *s)
{
	const char *why = NULL;
	uint64_t v;
	int rc;

	rc = parse_u64(FIELD(d, C_REALTIME), &v, &why);
	if (!rc && v > INT64_MAX)
		rc = -ERANGE, why = "out of range";
	if (rc)
		return bad_field(d, "realtime_ns", FIELD(d, C_REALTIME), why);
	s->end_ns = (int64_t)v;
	rc = parse_u64(FIELD(d, C_INTERVAL), &v, &why);
	if (!rc && (v == 0 || v > (uint64_t)s->end_ns))
		rc = -EINVAL,
		why = v ? "longer than realtime_ns" : "zero interval";
	if (rc)
		return bad_field(d, "interval_ns", FIELD(d, C_INTERVAL), why);
	s->interval_ns = (double)v;
	return 0;
}

/* freq_mhz and energy_uj: optional values. */
static int parse_freq_energy(struct rd *d, struct jt_sample *s)
{
	const char *why = NULL;
	uint64_t v;
	int rc;

	/* Unknown frequency: empty (joulesctl record) or "-". */
	if (d->col[C_FREQ] >= 0 && strcmp(FIELD(d, C_FREQ), "-")) {
		rc = opt_u64(FIELD(d, C_FREQ), &v, &why);
		if (!rc && v > JL_MHZ_MAX)
			rc = -ERANGE, why = "above 100 GHz";
		if (rc < 0)
			return bad_field(d, "freq_mhz", FIELD(d, C_FREQ), why);
		if (!rc)
			s->freq_mhz = (double)v;
	}
	if (d->col[C_ENERGY] >= 0) {
		rc = opt_u64(FIELD(d, C_ENERGY), &v, &why);
		if (rc < 0)
			return bad_field(d, "energy_uj", FIELD(d, C_ENERGY),
					 why);
		if (!rc)
			s->energy_uj = (double)v;
	}
	return 0;
}

/* The feature columns; *present gets a bit per feature with a value. */
static int parse_features(struct rd *d, struct jt_sample *s,
			  unsigned int *present)
{
	const char *why = NULL, *f;
	unsigned int i;
	uint64_t v;
	int rc;

	for (i = 0; i < JT_NF; i++) {
		if (d->fcol[i] < 0)
			continue;
		f = d->r.field[d->fcol[i]];
		rc = opt_u64(f, &v, &why);
		if (rc < 0)
			return bad_field(d, jt_feature_cols[i], f, why);
		if (rc)
			continue;
		*present |= 1u << i;
		s->f[i] = (double)v;
		if (s->f[i] > jt_feature_max_rate[i] * s->interval_ns) {
			jt_bad_line(
				&d->out->st, d->name, d->r.lineno,
				"%s: '%s' is %.3g per ns of the %.0f ms "
				"interval, more than any machine does (%g): a "
				"wrapped or corrupt counter?",
				jt_feature_cols[i], f, s->f[i] / s->interval_ns,
				s->interval_ns * 1e-6, jt_feature_max_rate[i]);
			return 1;
		}
	}
	return 0;
}

static int count_source(struct rd *d)
{
	struct jt_samples *out = d->out;
	const char *src;

	if (d->col[C_SOURCE] < 0)
		return 0;
	src = FIELD(d, C_SOURCE);
	if (!strcmp(src, "rapl")) {
		out->n_rapl++;
	} else if (!strcmp(src, "model")) {
		out->n_model++;
	} else if (!strcmp(src, "meter")) {
		/* The node's wall meter (joules-meterd) charged it. */
		out->n_meter++;
	} else if (!strcmp(src, "none")) {
		/* Nothing charged yet: an untrained node without RAPL. */
		out->n_none++;
	} else {
		jt_bad_line(&out->st, d->name, d->r.lineno,
			    "source: '%s' is not rapl, model, meter or none",
			    src);
		return 1;
	}
	return 0;
}

/*
 * A feature is absent for the whole recording, never per row; rows are
 * consecutive intervals: a repeated or earlier end is a duplicate, and a
 * start well before the previous end counts time (and energy) twice. Both
 * would move the coefficients.
 */
static int check_sequence(struct rd *d, const struct jt_sample *s,
			  unsigned int present)
{
	struct jt_samples *out = d->out;
	const struct jt_sample *p;
	int64_t start = s->end_ns - (int64_t)s->interval_ns;
	unsigned int i, diff;

	if (!out->decided) {
		out->present = present;
		out->decided = 1;
	} else if (present != out->present) {
		diff = present ^ out->present;
		for (i = 0; !(diff & (1u << i)); i++)
			;
		jt_bad_line(&out->st, d->name, d->r.lineno,
			    "%s: %s here but %s in earlier rows",
			    jt_feature_cols[i],
			    present & (1u << i) ? "has a value" : "empty",
			    present & (1u << i) ? "empty" : "set");
		return 1;
	}
	if (!out->n)
		return 0;
	p = &out->s[out->n - 1];
	/*
	 * Both clocks recorded and the monotonic one in order: a realtime
	 * step (jt_unstep() mends it), not a duplicate or an overlap.
	 */
	if (p->mono_ns >= 0 && s->mono_ns >= 0 &&
	    s->mono_ns - (int64_t)s->interval_ns - p->mono_ns >=
		    -JT_OVERLAP_TOL_NS &&
	    (s->end_ns <= p->end_ns || p->end_ns - start > JT_OVERLAP_TOL_NS))
		return 0;
	if (s->end_ns <= p->end_ns) {
		jt_bad_line(
			&out->st, d->name, d->r.lineno,
			"realtime_ns: '%s' is not after the row on line %lu "
			"(a duplicate, or rows out of time order)",
			FIELD(d, C_REALTIME), p->line);
		return 1;
	}
	if (p->end_ns - start > JT_OVERLAP_TOL_NS) {
		jt_bad_line(&out->st, d->name, d->r.lineno,
			    "interval_ns: '%s' overlaps the row on line %lu by "
			    "%.0f ms",
			    FIELD(d, C_INTERVAL), p->line,
			    (double)(p->end_ns - start) * 1e-6);
		return 1;
	}
	return 0;
}

static int append(struct jt_samples *out, const struct jt_sample *s)
{
	if (out->n == out->cap) {
		size_t cap = out->cap ? out->cap * 2 : 4096;
		struct jt_sample *ns = realloc(out->s, cap * sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		out->s = ns;
		out->cap = cap;
	}
	out->s[out->n++] = *s;
	return 0;
}

/* One data row: 0 kept, 1 bad (counted), or a negative errno. */
static int read_row(struct rd *d)
{
	struct jt_sample s = { .energy_uj = -1,
			       .line = d->r.lineno,
			       .mono_ns = -1 };
	uint64_t v;
	const char *mono_why = NULL;
	unsigned int present = 0;
	int mono_rc = 1;

	if (d->r.nfield != d->nhdr) {
		jt_bad_line(&d->out->st, d->name, d->r.lineno,
			    "%u fields, the header has %u", d->r.nfield,
			    d->nhdr);
		return 1;
	}
	/* Parsed once: a bad one is reported after the times, as before. */
	if (d->col[C_MONOTONIC] >= 0)
		mono_rc = opt_u64(FIELD(d, C_MONOTONIC), &v, &mono_why);
	if (!mono_rc && v > INT64_MAX)
		mono_rc = -ERANGE, mono_why = "out of range";
	if (!mono_rc)
		s.mono_ns = (int64_t)v;
	if (parse_times(d, &s) || check_optional(d, mono_rc, mono_why) ||
	    parse_freq_energy(d, &s) || parse_features(d, &s, &present) ||
	    count_source(d) || check_sequence(d, &s, present))
		return 1;
	return append(d->out, &s);
}

#undef FIELD

/*
 * "# node: cpus=N packages=P energy=SOURCES" (joulesctl record): what the
 * node is, to check the model against. Other comments are ignored.
 */
static void node_facts(void *ctx, const char *line, unsigned long lineno)
{
	struct jt_samples *out = ctx;
	const char *p;
	unsigned int v;

	(void)lineno;
	if (strncmp(line, "# node:", 7))
		return;
	p = strstr(line, "cpus=");
	if (p && sscanf(p, "cpus=%u", &v) == 1)
		out->cpus = v;
	p = strstr(line, "packages=");
	if (p && sscanf(p, "packages=%u", &v) == 1)
		out->packages = v;
	p = strstr(line, "energy=");
	if (p)
		sscanf(p, "energy=%127s", out->sources);
}

int jt_read_samples(FILE *fp, const char *name, struct jt_samples *out,
		    struct jt_progress *pr)
{
	unsigned long long total = jt_file_size(fp);
	struct rd d = { .name = name, .out = out };
	char progress_what[256];
	int n, ret;

	snprintf(progress_what, sizeof(progress_what), "reading %s", name);
	csv_init(&d.r, fp, name, CSV_SKIP_COMMENTS);
	d.r.lineno = out->st.line_base;
	d.r.comment = node_facts;
	d.r.comment_ctx = out;
	ret = read_header(&d);
	while (!ret && !out->st.stopped && (n = csv_next(&d.r)) != 0) {
		if (n == -EINVAL) {
			out->st.records++;
			jt_bad_line(&out->st, name, d.r.lineno, "%s", d.r.why);
			continue;
		}
		if (n < 0) {
			fprintf(diag(), "%s: read error: %s\n", name,
				strerror(-n));
			ret = n;
			break;
		}
		out->st.records++;
		if ((out->st.records & 4095) == 0)
			jt_progress(pr, progress_what,
				    total ? d.r.bytes : out->st.records, total);
		n = read_row(&d);
		if (n < 0)
			ret = n;
	}
	jt_progress_end(pr);
	jt_bad_summary(&out->st, name);
	csv_free(&d.r);
	return ret;
}
