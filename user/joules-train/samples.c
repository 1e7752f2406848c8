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
	[JL_F_CPU_NS] = "cpu_ns",      [JL_F_CYCLES] = "cycles",
	[JL_F_INSTR] = "instructions", [JL_F_MISSES] = "cache_misses",
	[JL_F_DISK] = "disk_bytes",    [JL_F_NET_TX] = "net_tx_bytes",
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

int jt_read_samples(FILE *fp, const char *name, struct jt_samples *out,
		    struct jt_progress *pr)
{
	int col[C_NR], fcol[JT_NF];
	unsigned long long total = jt_file_size(fp);
	struct csv_reader r;
	unsigned int nhdr, i;
	char progress_what[256];
	int n, ret = 0;

	snprintf(progress_what, sizeof(progress_what), "reading %s", name);
	csv_init(&r, fp, name, CSV_SKIP_COMMENTS);
	n = csv_next(&r);
	if (n == -EINVAL) {
		fprintf(jt_diag ? jt_diag : stderr,
			"%s:%lu: bad header line: %s\n", name, r.lineno, r.why);
		ret = -EINVAL;
		goto out;
	}
	if (n <= 0) {
		fprintf(jt_diag ? jt_diag : stderr, "%s: %s\n", name,
			n ? strerror(-n) : "empty file (no header line)");
		ret = n ? n : -EINVAL;
		goto out;
	}
	nhdr = r.nfield;
	for (i = 0; i < C_NR; i++)
		col[i] = csv_find(r.field, nhdr, col_names[i]);
	for (i = 0; i < JT_NF; i++)
		fcol[i] = csv_find(r.field, nhdr, jt_feature_cols[i]);
	if (col[C_REALTIME] < 0 || col[C_INTERVAL] < 0 ||
	    fcol[JL_F_CPU_NS] < 0) {
		fprintf(jt_diag ? jt_diag : stderr,
			"%s:%lu: header lacks %s (want realtime_ns,monotonic_ns,interval_ns,"
			"source,model_generation,energy_uj,idle_uj,cpu_ns,cycles,instructions,"
			"cache_misses,disk_bytes,tasks)\n",
			name, r.lineno,
			col[C_REALTIME] < 0 ? "realtime_ns" :
			col[C_INTERVAL] < 0 ? "interval_ns" :
					      "cpu_ns");
		ret = -EINVAL;
		goto out;
	}

	while (!out->st.stopped && (n = csv_next(&r)) != 0) {
		struct jt_sample s = { .energy_uj = -1, .line = r.lineno };
		unsigned int present = 0;
		const char *why = NULL, *bad_col = NULL, *bad_val = NULL;
		uint64_t v;
		int rc;

		if (n == -EINVAL) {
			out->st.records++;
			jt_bad_line(&out->st, name, r.lineno, "%s", r.why);
			continue;
		}
		if (n < 0) {
			fprintf(jt_diag ? jt_diag : stderr,
				"%s: read error: %s\n", name, strerror(-n));
			ret = n;
			goto out;
		}
		out->st.records++;
		if ((out->st.records & 4095) == 0)
			jt_progress(pr, progress_what,
				    total ? r.bytes : out->st.records, total);
		if (r.nfield != nhdr) {
			jt_bad_line(&out->st, name, r.lineno,
				    "%u fields, the header has %u", r.nfield,
				    nhdr);
			continue;
		}
#define FIELD(c) (r.field[col[c]])
		rc = parse_u64(FIELD(C_REALTIME), &v, &why);
		if (!rc && v > INT64_MAX)
			rc = -ERANGE, why = "out of range";
		if (rc) {
			bad_col = "realtime_ns";
			bad_val = FIELD(C_REALTIME);
			goto bad;
		}
		s.end_ns = (int64_t)v;
		rc = parse_u64(FIELD(C_INTERVAL), &v, &why);
		if (!rc && (v == 0 || v > (uint64_t)s.end_ns))
			rc = -EINVAL,
			why = v ? "longer than realtime_ns" : "zero interval";
		if (rc) {
			bad_col = "interval_ns";
			bad_val = FIELD(C_INTERVAL);
			goto bad;
		}
		s.interval_ns = (double)v;
		if (col[C_MONOTONIC] >= 0 &&
		    opt_u64(FIELD(C_MONOTONIC), &v, &why) < 0) {
			bad_col = "monotonic_ns";
			bad_val = FIELD(C_MONOTONIC);
			goto bad;
		}
		if (col[C_GEN] >= 0 && opt_u64(FIELD(C_GEN), &v, &why) < 0) {
			bad_col = "model_generation";
			bad_val = FIELD(C_GEN);
			goto bad;
		}
		if (col[C_IDLE] >= 0 && opt_u64(FIELD(C_IDLE), &v, &why) < 0) {
			bad_col = "idle_uj";
			bad_val = FIELD(C_IDLE);
			goto bad;
		}
		if (col[C_TASKS] >= 0 &&
		    opt_u64(FIELD(C_TASKS), &v, &why) < 0) {
			bad_col = "tasks";
			bad_val = FIELD(C_TASKS);
			goto bad;
		}
		/* Unknown frequency: empty (joulesctl record) or "-". */
		if (col[C_FREQ] >= 0 && strcmp(FIELD(C_FREQ), "-")) {
			rc = opt_u64(FIELD(C_FREQ), &v, &why);
			if (!rc && v > JL_MHZ_MAX)
				rc = -ERANGE, why = "above 100 GHz";
			if (rc < 0) {
				bad_col = "freq_mhz";
				bad_val = FIELD(C_FREQ);
				goto bad;
			}
			if (!rc)
				s.freq_mhz = (double)v;
		}
		if (col[C_ENERGY] >= 0) {
			rc = opt_u64(FIELD(C_ENERGY), &v, &why);
			if (rc < 0) {
				bad_col = "energy_uj";
				bad_val = FIELD(C_ENERGY);
				goto bad;
			}
			if (!rc)
				s.energy_uj = (double)v;
		}
		for (i = 0; i < JT_NF; i++) {
			if (fcol[i] < 0)
				continue;
			rc = opt_u64(r.field[fcol[i]], &v, &why);
			if (rc < 0) {
				bad_col = jt_feature_cols[i];
				bad_val = r.field[fcol[i]];
				goto bad;
			}
			if (!rc) {
				present |= 1u << i;
				s.f[i] = (double)v;
				if (s.f[i] > jt_feature_max_rate[i] *
						     s.interval_ns) {
					jt_bad_line(
						&out->st, name, r.lineno,
						"%s: '%s' is %.3g per ns of the %.0f ms "
						"interval, more than any machine does (%g): a "
						"wrapped or corrupt counter?",
						jt_feature_cols[i], r.field[fcol[i]],
						s.f[i] / s.interval_ns,
						s.interval_ns * 1e-6,
						jt_feature_max_rate[i]);
					goto next;
				}
			}
		}
		if (col[C_SOURCE] >= 0) {
			const char *src = FIELD(C_SOURCE);

			if (!strcmp(src, "rapl")) {
				out->n_rapl++;
			} else if (!strcmp(src, "model")) {
				out->n_model++;
			} else if (!strcmp(src, "none")) {
				/* Nothing charged yet: an untrained node without RAPL. */
				out->n_none++;
			} else {
				jt_bad_line(
					&out->st, name, r.lineno,
					"source: '%s' is not rapl, model or none",
					src);
				continue;
			}
		}
		/* A feature is absent for the whole recording, never per row. */
		if (!out->decided) {
			out->present = present;
			out->decided = 1;
		} else if (present != out->present) {
			unsigned int d = present ^ out->present;

			for (i = 0; !(d & (1u << i)); i++)
				;
			jt_bad_line(&out->st, name, r.lineno,
				    "%s: %s here but %s in earlier rows",
				    jt_feature_cols[i],
				    present & (1u << i) ? "has a value" :
							  "empty",
				    present & (1u << i) ? "empty" : "set");
			continue;
		}
		/*
		 * Rows are consecutive intervals: a repeated or earlier end is a
		 * duplicate, and a start well before the previous end counts
		 * time (and energy) twice. Both would move the coefficients.
		 */
		if (out->n) {
			const struct jt_sample *p = &out->s[out->n - 1];
			int64_t start = s.end_ns - (int64_t)s.interval_ns;

			if (s.end_ns <= p->end_ns) {
				jt_bad_line(
					&out->st, name, r.lineno,
					"realtime_ns: '%s' is not after the row on line %lu "
					"(a duplicate, or rows out of time order)",
					FIELD(C_REALTIME), p->line);
				continue;
			}
			if (p->end_ns - start > JT_OVERLAP_TOL_NS) {
				jt_bad_line(
					&out->st, name, r.lineno,
					"interval_ns: '%s' overlaps the row on line %lu by "
					"%.0f ms",
					FIELD(C_INTERVAL), p->line,
					(double)(p->end_ns - start) * 1e-6);
				continue;
			}
		}
		if (out->n == out->cap) {
			size_t cap = out->cap ? out->cap * 2 : 4096;
			struct jt_sample *ns =
				realloc(out->s, cap * sizeof(*ns));

			if (!ns) {
				ret = -ENOMEM;
				goto out;
			}
			out->s = ns;
			out->cap = cap;
		}
		out->s[out->n++] = s;
		continue;
bad:
		jt_bad_line(&out->st, name, r.lineno, "%s: '%s': %s", bad_col,
			    bad_val, why);
next:;
	}
#undef FIELD
out:
	jt_progress_end(pr);
	jt_bad_summary(&out->st, name);
	csv_free(&r);
	return ret;
}
