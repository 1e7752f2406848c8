// SPDX-License-Identifier: GPL-2.0
/* Text, JSON and CSV output of the joules records, and the top tables. */
#include <errno.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "out.h"

/*
 * The per-pid file's spelling: each source that charged it, in the order
 * rapl, model, meter ("rapl,model"), or none.
 */
const char *out_source_name(uint32_t source)
{
	static const char *const names[8] = {
		"none",	 "model",	"rapl",	      "rapl,model",
		"meter", "model,meter", "rapl,meter", "rapl,model,meter",
	};

	return names[source & (REC_SRC_RAPL | REC_SRC_MODEL | REC_SRC_METER)];
}

static const int hw_feats[] = { JL_F_CYCLES, JL_F_INSTR, JL_F_MISSES };
/* Added after the first layout: after write_bytes in every format. */
static const int later_feats[] = { JL_F_NET_TX, JL_F_NET_RX, JL_F_PAGECACHE };
#define NR_OF(a) (sizeof(a) / sizeof((a)[0]))

/* "name: value" or "name: absent". */
static void text_feat(FILE *fp, uint32_t present, const uint64_t *feat, int f)
{
	if (present & REC_F(f))
		fprintf(fp, "%s: %" PRIu64 "\n", jl_feature_names[f], feat[f]);
	else
		fprintf(fp, "%s: absent\n", jl_feature_names[f]);
}

/*
 * The energy and counter fields that task and cgroup records share, so
 * that each output is written once for both.
 */
struct energy_view {
	uint32_t source, domains, present;
	uint64_t energy_uj, idle_uj, model_generation, read_bytes, write_bytes;
	const uint64_t *domain_uj, *feat;
	uint32_t lag_ms;
};
#define ENERGY_VIEW(r)                                                   \
	((struct energy_view){                                           \
		(r)->source, (r)->domains, (r)->present, (r)->energy_uj, \
		(r)->idle_uj, (r)->model_generation, (r)->read_bytes,    \
		(r)->write_bytes, (r)->domain_uj, (r)->feat, (r)->lag_ms })

/* The per-pid file's (and energy.stat's) lines from source on. */
static void text_energy(FILE *fp, const struct energy_view *e)
{
	fprintf(fp, "source: %s\n", out_source_name(e->source));
	if (e->source)
		fprintf(fp, "energy_uj: %" PRIu64 "\n", e->energy_uj);
	else
		fprintf(fp, "energy_uj: absent\n");
	for (int d = 0; d < JL_NR_DOMAINS; d++)
		if (e->domains & (1u << d))
			fprintf(fp, "energy_%s_uj: %" PRIu64 "\n",
				jl_domain_names[d], e->domain_uj[d]);
	fprintf(fp, "idle_uj: %" PRIu64 "\n", e->idle_uj);
	fprintf(fp, "model_generation: %" PRIu64 "\n", e->model_generation);
	fprintf(fp, "cpu_time_ns: %" PRIu64 "\n", e->feat[JL_F_CPU_NS]);
	for (size_t i = 0; i < NR_OF(hw_feats); i++)
		text_feat(fp, e->present, e->feat, hw_feats[i]);
	fprintf(fp, "read_bytes: %" PRIu64 "\n", e->read_bytes);
	fprintf(fp, "write_bytes: %" PRIu64 "\n", e->write_bytes);
	for (size_t i = 0; i < NR_OF(later_feats); i++)
		text_feat(fp, e->present, e->feat, later_feats[i]);
	if (e->lag_ms)
		fprintf(fp, "energy_lag_ms: %" PRIu32 "\n", e->lag_ms);
}

/*
 * Same keys and order as /proc/energy/<pid> (kmod/fs.c), plus uid, so a
 * script can parse either.
 */
void out_task_text(FILE *fp, const struct task_rec *t)
{
	struct energy_view e = ENERGY_VIEW(t);

	fprintf(fp, "pid: %" PRIu32 "\n", t->pid);
	fprintf(fp, "tgid: %" PRIu32 "\n", t->tgid);
	fprintf(fp, "uid: %" PRIu32 "\n", t->uid);
	fprintf(fp, "comm: %s\n", t->comm);
	if (t->process)
		fprintf(fp, "threads: %" PRIu32 "\n", t->nr_threads);
	fprintf(fp, "state: %s\n", t->exited ? "exited" : "alive");
	text_energy(fp, &e);
}

void out_json_string(FILE *fp, const char *s)
{
	fputc('"', fp);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(fp, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(fp, "\\u%04x", c);
		else
			fputc(c, fp);
	}
	fputc('"', fp);
}

/* "name":value or "name":null, with a leading comma. */
static void json_feat(FILE *fp, uint32_t present, const uint64_t *feat, int f)
{
	if (present & REC_F(f))
		fprintf(fp, ",\"%s\":%" PRIu64, jl_feature_names[f], feat[f]);
	else
		fprintf(fp, ",\"%s\":null", jl_feature_names[f]);
}

static void json_domains(FILE *fp, uint32_t domains, const uint64_t *uj)
{
	const char *sep = "";

	fputs(",\"domains_uj\":{", fp);
	for (int d = 0; d < JL_NR_DOMAINS; d++) {
		if (!(domains & (1u << d)))
			continue;
		fprintf(fp, "%s\"%s\":%" PRIu64, sep, jl_domain_names[d],
			uj[d]);
		sep = ",";
	}
	fputc('}', fp);
}

/* The JSON members shared by task and cgroup records, from "source" on. */
static void json_energy(FILE *fp, const struct energy_view *e)
{
	fprintf(fp, ",\"source\":\"%s\",\"energy_uj\":",
		out_source_name(e->source));
	if (e->source)
		fprintf(fp, "%" PRIu64, e->energy_uj);
	else
		fputs("null", fp);
	json_domains(fp, e->domains, e->domain_uj);
	fprintf(fp, ",\"idle_uj\":%" PRIu64 ",\"model_generation\":%" PRIu64,
		e->idle_uj, e->model_generation);
	json_feat(fp, e->present | REC_F(JL_F_CPU_NS), e->feat, JL_F_CPU_NS);
	for (size_t i = 0; i < NR_OF(hw_feats); i++)
		json_feat(fp, e->present, e->feat, hw_feats[i]);
	fprintf(fp, ",\"read_bytes\":%" PRIu64 ",\"write_bytes\":%" PRIu64,
		e->read_bytes, e->write_bytes);
	for (size_t i = 0; i < NR_OF(later_feats); i++)
		json_feat(fp, e->present, e->feat, later_feats[i]);
	if (e->lag_ms)
		fprintf(fp, ",\"energy_lag_ms\":%" PRIu32, e->lag_ms);
}

static void json_task_body(FILE *fp, const struct task_rec *t)
{
	struct energy_view e = ENERGY_VIEW(t);

	fprintf(fp,
		"\"pid\":%" PRIu32 ",\"tgid\":%" PRIu32 ",\"uid\":%" PRIu32
		",\"comm\":",
		t->pid, t->tgid, t->uid);
	out_json_string(fp, t->comm);
	fprintf(fp, ",\"process\":%s,\"threads\":%" PRIu32 ",\"exited\":%s",
		t->process ? "true" : "false", t->nr_threads,
		t->exited ? "true" : "false");
	json_energy(fp, &e);
}

void out_task_json(FILE *fp, const struct task_rec *t)
{
	fputc('{', fp);
	json_task_body(fp, t);
	fputs("}\n", fp);
}

void out_exit_json(FILE *fp, const struct task_rec *t)
{
	fputs("{\"type\":\"exit\",", fp);
	json_task_body(fp, t);
	fputs("}\n", fp);
}

/* " key=value" for a feature, "-" when absent. */
static void line_feat(FILE *fp, uint32_t present, const uint64_t *feat, int f)
{
	if (present & REC_F(f))
		fprintf(fp, " %s=%" PRIu64, jl_feature_names[f], feat[f]);
	else
		fprintf(fp, " %s=-", jl_feature_names[f]);
}

/* A word of a line: quoted only when it holds blanks, so simple ones stay greppable. */
static void line_word(FILE *fp, const char *s)
{
	if (strpbrk(s, " \t\n\"\\") || !s[0])
		out_json_string(fp, s);
	else
		fputs(s, fp);
}

/* " source=... energy_uj=... ... pagecache_bytes=...\n" */
static void line_energy(FILE *fp, const struct energy_view *e)
{
	fprintf(fp, " source=%s energy_uj=%" PRIu64 " idle_uj=%" PRIu64,
		out_source_name(e->source), e->energy_uj, e->idle_uj);
	for (int d = 0; d < JL_NR_DOMAINS; d++)
		if (e->domains & (1u << d))
			fprintf(fp, " %s_uj=%" PRIu64, jl_domain_names[d],
				e->domain_uj[d]);
	fprintf(fp, " model_generation=%" PRIu64, e->model_generation);
	line_feat(fp, e->present | REC_F(JL_F_CPU_NS), e->feat, JL_F_CPU_NS);
	for (size_t i = 0; i < NR_OF(hw_feats); i++)
		line_feat(fp, e->present, e->feat, hw_feats[i]);
	fprintf(fp, " read_bytes=%" PRIu64 " write_bytes=%" PRIu64,
		e->read_bytes, e->write_bytes);
	for (size_t i = 0; i < NR_OF(later_feats); i++)
		line_feat(fp, e->present, e->feat, later_feats[i]);
	fputc('\n', fp);
}

void out_task_line(FILE *fp, const struct task_rec *t)
{
	struct energy_view e = ENERGY_VIEW(t);

	fprintf(fp, "%s pid=%" PRIu32 " tgid=%" PRIu32 " uid=%" PRIu32 " comm=",
		t->exited ? "exit" : "task", t->pid, t->tgid, t->uid);
	line_word(fp, t->comm);
	line_energy(fp, &e);
}

/* --- cgroups --- */

void out_cgroup_text(FILE *fp, const struct cgroup_rec *c)
{
	struct energy_view e = ENERGY_VIEW(c);
	struct cgname n;

	cgname_parse(c->path, &n);
	fprintf(fp, "path: %s\n", c->path);
	fprintf(fp, "id: %" PRIu64 "\n", c->id);
	fprintf(fp, "tasks: %" PRIu32 "\n", c->nr_tasks);
	if (c->exited)
		fprintf(fp, "state: removed\n");
	text_energy(fp, &e);
	fprintf(fp, "kind: %s\n", cgn_kind_names[n.kind]);
	if (n.runtime)
		fprintf(fp, "runtime: %s\n", n.runtime);
	if (n.container_id[0])
		fprintf(fp, "container_id: %s\n", n.container_id);
	if (n.pod_uid[0])
		fprintf(fp, "pod_uid: %s\n", n.pod_uid);
	if (n.qos)
		fprintf(fp, "qos: %s\n", n.qos);
	if (n.unit[0])
		fprintf(fp, "unit: %s\n", n.unit);
}

/* ,"name":"value" or ,"name":null */
static void json_opt(FILE *fp, const char *name, const char *v)
{
	fprintf(fp, ",\"%s\":", name);
	if (v && *v)
		out_json_string(fp, v);
	else
		fputs("null", fp);
}

static void json_cgroup_body(FILE *fp, const struct cgroup_rec *c)
{
	struct energy_view e = ENERGY_VIEW(c);
	struct cgname n;

	cgname_parse(c->path, &n);
	fputs("\"path\":", fp);
	out_json_string(fp, c->path);
	fprintf(fp, ",\"id\":%" PRIu64 ",\"tasks\":%" PRIu32 ",\"removed\":%s",
		c->id, c->nr_tasks, c->exited ? "true" : "false");
	json_energy(fp, &e);
	json_opt(fp, "kind", cgn_kind_names[n.kind]);
	json_opt(fp, "runtime", n.runtime);
	json_opt(fp, "container_id", n.container_id);
	json_opt(fp, "pod_uid", n.pod_uid);
	json_opt(fp, "qos", n.qos);
	json_opt(fp, "unit", n.unit);
}

void out_cgroup_json(FILE *fp, const struct cgroup_rec *c)
{
	fputc('{', fp);
	json_cgroup_body(fp, c);
	fputs("}\n", fp);
}

void out_cgroup_exit_json(FILE *fp, const struct cgroup_rec *c)
{
	fputs("{\"type\":\"cgroup_exit\",", fp);
	json_cgroup_body(fp, c);
	fputs("}\n", fp);
}

void out_cgroup_line(FILE *fp, const struct cgroup_rec *c)
{
	struct energy_view e = ENERGY_VIEW(c);
	struct cgname n;

	cgname_parse(c->path, &n);
	fprintf(fp, "%s path=", c->exited ? "cgroup-exit" : "cgroup");
	line_word(fp, c->path);
	fprintf(fp, " id=%" PRIu64 " kind=%s", c->id, cgn_kind_names[n.kind]);
	if (n.runtime)
		fprintf(fp, " runtime=%s", n.runtime);
	if (n.container_id[0])
		fprintf(fp, " container_id=%s", n.container_id);
	if (n.pod_uid[0])
		fprintf(fp, " pod_uid=%s", n.pod_uid);
	if (n.qos)
		fprintf(fp, " qos=%s", n.qos);
	fprintf(fp, " tasks=%" PRIu32, c->nr_tasks);
	line_energy(fp, &e);
}

void out_sample_line(FILE *fp, const struct sample_rec *s)
{
	fprintf(fp,
		"sample seq=%" PRIu64 " realtime_ns=%" PRIu64
		" monotonic_ns=%" PRIu64 " interval_ns=%" PRIu64
		" source=%s model_generation=%" PRIu64 " energy_uj=%" PRIu64
		" idle_uj=%" PRIu64,
		s->seq, s->realtime_ns, s->monotonic_ns, s->interval_ns,
		out_source_name(s->source), s->model_generation, s->energy_uj,
		s->idle_uj);
	for (int d = 0; d < JL_NR_DOMAINS; d++)
		if (s->domains & (1u << d))
			fprintf(fp, " %s_uj=%" PRIu64, jl_domain_names[d],
				s->domain_uj[d]);
	for (int f = 0; f < JL_NR_FEATURES; f++)
		line_feat(fp, s->present, s->feat, f);
	fprintf(fp, " tasks=%" PRIu32, s->nr_tasks);
	if (s->freq_mhz)
		fprintf(fp, " freq_mhz=%" PRIu32, s->freq_mhz);
	else
		fputs(" freq_mhz=-", fp);
	fprintf(fp, " band=%" PRIu32 "\n", s->band);
}

void out_sample_json(FILE *fp, const struct sample_rec *s)
{
	fprintf(fp,
		"{\"type\":\"sample\",\"seq\":%" PRIu64
		",\"realtime_ns\":%" PRIu64 ",\"monotonic_ns\":%" PRIu64
		",\"interval_ns\":%" PRIu64
		",\"source\":\"%s\",\"model_generation\":%" PRIu64
		",\"energy_uj\":%" PRIu64 ",\"idle_uj\":%" PRIu64,
		s->seq, s->realtime_ns, s->monotonic_ns, s->interval_ns,
		out_source_name(s->source), s->model_generation, s->energy_uj,
		s->idle_uj);
	json_domains(fp, s->domains, s->domain_uj);
	for (int f = 0; f < JL_NR_FEATURES; f++)
		json_feat(fp, s->present, s->feat, f);
	fprintf(fp, ",\"tasks\":%" PRIu32, s->nr_tasks);
	if (s->freq_mhz)
		fprintf(fp, ",\"freq_mhz\":%" PRIu32, s->freq_mhz);
	else
		fputs(",\"freq_mhz\":null", fp);
	fprintf(fp, ",\"band\":%" PRIu32 "}\n", s->band);
}

void out_node_text(FILE *fp, const struct node_rec *n)
{
	if (n->version)
		fprintf(fp, "netlink_version: %" PRIu32 "\n", n->version);
	fprintf(fp, "source: %s\n", out_source_name(n->source));
	fprintf(fp, "intervals: %" PRIu64 "\n", n->intervals);
	fprintf(fp, "uptime_ns: %" PRIu64 "\n", n->uptime_ns);
	fprintf(fp, "energy_uj: %" PRIu64 "\n", n->energy_uj);
	fprintf(fp, "idle_uj: %" PRIu64 "\n", n->idle_uj);
	fprintf(fp, "task_uj: %" PRIu64 "\n", n->task_uj);
	for (int d = 0; d < JL_NR_DOMAINS; d++)
		if (n->domains & (1u << d))
			fprintf(fp, "energy_%s_uj: %" PRIu64 "\n",
				jl_domain_names[d], n->domain_uj[d]);
	for (int f = 0; f < JL_NR_FEATURES; f++) {
		const char *name =
			f == JL_F_CPU_NS ? "cpu_time_ns" : jl_feature_names[f];

		if (n->present & REC_F(f))
			fprintf(fp, "%s: %" PRIu64 "\n", name, n->feat[f]);
		else
			fprintf(fp, "%s: absent\n", name);
	}
	fprintf(fp, "model_generation: %" PRIu64 "\n", n->model_generation);
	fprintf(fp, "tasks_tracked: %" PRIu64 "\n", n->tasks_tracked);
	if (*n->meter_name) {
		/* A wall meter has fed the node: its books. */
		fprintf(fp, "meter: %s\n", n->meter_name);
		fprintf(fp, "meter_uj: %" PRIu64 "\n", n->meter_uj);
		fprintf(fp, "meter_pending_uj: %" PRId64 "\n",
			n->meter_pending_uj);
	}
	if (n->lag_ms)
		fprintf(fp, "energy_lag_ms: %" PRIu32 "\n", n->lag_ms);
}

void out_node_json(FILE *fp, const struct node_rec *n)
{
	fprintf(fp,
		"{\"netlink_version\":%" PRIu32
		",\"source\":\"%s\",\"intervals\":%" PRIu64
		",\"uptime_ns\":%" PRIu64 ",\"energy_uj\":%" PRIu64
		",\"idle_uj\":%" PRIu64 ",\"task_uj\":%" PRIu64,
		n->version, out_source_name(n->source), n->intervals,
		n->uptime_ns, n->energy_uj, n->idle_uj, n->task_uj);
	json_domains(fp, n->domains, n->domain_uj);
	for (int f = 0; f < JL_NR_FEATURES; f++)
		json_feat(fp, n->present, n->feat, f);
	fprintf(fp,
		",\"model_generation\":%" PRIu64 ",\"tasks_tracked\":%" PRIu64,
		n->model_generation, n->tasks_tracked);
	if (n->lag_ms)
		fprintf(fp, ",\"energy_lag_ms\":%" PRIu32, n->lag_ms);
	fputs("}\n", fp);
}

static int out_flush(FILE *fp)
{
	if (fflush(fp) || ferror(fp))
		return errno ? -errno : -EIO;
	return 0;
}

/* Distinct physical_package_id values of the CPUs, 0 if unknown. */
static unsigned int count_packages(void)
{
	int seen[1024] = { 0 }, id;
	unsigned int n = 0, cpu;
	char path[96];
	FILE *f;

	for (cpu = 0; cpu < 65536; cpu++) {
		snprintf(
			path, sizeof(path),
			"/sys/devices/system/cpu/cpu%u/topology/physical_package_id",
			cpu);
		f = fopen(path, "r");
		if (!f)
			break;
		if (fscanf(f, "%d", &id) == 1 && id >= 0 && id < 1024 &&
		    !seen[id]) {
			seen[id] = 1;
			n++;
		}
		fclose(f);
	}
	return n;
}

/* The first line of a sysfs file, blanks turned into '+' ("" if none). */
static void sysfs_word(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	char *p;

	buf[0] = '\0';
	if (!f)
		return;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	for (p = buf; *p; p++)
		if (*p == ' ' || *p == '\t' || *p == ',')
			*p = '+';
}

int out_node_facts(FILE *fp)
{
	char status[128], domains[128];
	long cpus = sysconf(_SC_NPROCESSORS_CONF);

	sysfs_word("/sys/kernel/joules/rapl/status", status, sizeof(status));
	sysfs_word("/sys/kernel/joules/rapl/domains", domains, sizeof(domains));
	fprintf(fp, "# node: cpus=%ld packages=%u energy=%s%s%s\n",
		cpus > 0 ? cpus : 0, count_packages(),
		*status ? status : "unknown", *domains ? ":" : "", domains);
	return out_flush(fp);
}

int out_record_header(FILE *fp)
{
	fputs(OUT_RECORD_HEADER "\n", fp);
	return out_flush(fp);
}

/*
 * The trainer wants one word: the wall meter (its energy is the meter's),
 * else rapl, else model (measured wins over modelled).
 */
static const char *record_source(uint32_t source)
{
	if (source & REC_SRC_METER)
		return "meter";
	if (source & REC_SRC_RAPL)
		return "rapl";
	if (source & REC_SRC_MODEL)
		return "model";
	return "none";
}

/* ",value", or "," for an absent feature. */
static void csv_feat(FILE *fp, const struct sample_rec *s, int f)
{
	if (s->present & REC_F(f))
		fprintf(fp, ",%" PRIu64, s->feat[f]);
	else
		fputc(',', fp);
}

int out_record_row(FILE *fp, const struct sample_rec *s)
{
	static const int cols[] = { JL_F_CPU_NS, JL_F_CYCLES, JL_F_INSTR,
				    JL_F_MISSES, JL_F_DISK };

	fprintf(fp,
		"%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%s,%" PRIu64 ",%" PRIu64
		",%" PRIu64,
		s->realtime_ns, s->monotonic_ns, s->interval_ns,
		record_source(s->source), s->model_generation, s->energy_uj,
		s->idle_uj);
	for (size_t i = 0; i < NR_OF(cols); i++)
		csv_feat(fp, s, cols[i]);
	fprintf(fp, ",%" PRIu32, s->nr_tasks);
	for (size_t i = 0; i < NR_OF(later_feats); i++)
		csv_feat(fp, s, later_feats[i]);
	/* Frequency: empty when unknown, as an absent feature. */
	if (s->freq_mhz)
		fprintf(fp, ",%" PRIu32, s->freq_mhz);
	else
		fputc(',', fp);
	fprintf(fp, ",%" PRIu32 "\n", s->band);
	return out_flush(fp);
}

/* --- the top tables (top.h) --- */

static const char *top_user(uint32_t uid, char *buf, size_t size)
{
	struct passwd *pw = getpwuid(uid);

	if (pw && strlen(pw->pw_name) < 9)
		return pw->pw_name;
	snprintf(buf, size, "%" PRIu32, uid);
	return buf;
}

void top_print(const struct top_state *ts, FILE *fp, size_t max_rows,
	       const char *summary)
{
	double total = 0;
	size_t n = ts->nrows;

	for (size_t i = 0; i < ts->nrows; i++)
		if (ts->rows[i].power_w > 0)
			total += ts->rows[i].power_w;
	if (summary)
		fprintf(fp, "%s\n", summary);
	fprintf(fp, "tasks: %zu  sum of task power: %.3f W\n\n", ts->nrows,
		total);
	fprintf(fp, "%8s %-8s %10s %7s %12s %-10s %s\n", "PID", "USER",
		"POWER_W", "CPU%", "ENERGY_J", "SOURCE", "COMMAND");
	if (max_rows && n > max_rows)
		n = max_rows;
	for (size_t i = 0; i < n; i++) {
		const struct top_row *r = &ts->rows[i];
		char ubuf[16], pw[16], cpu[16];

		if (r->power_w < 0) {
			strcpy(pw, "-");
			strcpy(cpu, "-");
		} else {
			snprintf(pw, sizeof(pw), "%.3f", r->power_w);
			snprintf(cpu, sizeof(cpu), "%.1f", r->cpu_pct);
		}
		fprintf(fp, "%8" PRIu32 " %-8s %10s %7s %12.3f %-10s %s\n",
			r->rec.pid, top_user(r->rec.uid, ubuf, sizeof(ubuf)),
			pw, cpu, (double)r->rec.energy_uj / 1e6,
			out_source_name(r->rec.source), r->rec.comm);
	}
}

void cgtop_print(const struct cgtop_state *ts, FILE *fp, size_t max_rows,
		 const char *summary)
{
	size_t n = ts->nrows;

	if (summary)
		fprintf(fp, "%s\n", summary);
	fprintf(fp, "cgroups: %zu shown of %zu (depth <= %u", ts->nrows,
		ts->seen, ts->max_depth);
	if (ts->match_src)
		fprintf(fp, ", matching '%s'", ts->match_src);
	fprintf(fp, "); a row includes the rows below it");
	for (size_t i = 0; i < ts->nrows; i++)
		if (ts->rows[i].name.kind == CGN_ROOT &&
		    ts->rows[i].power_w >= 0)
			fprintf(fp, "; root %.3f W", ts->rows[i].power_w);
	fprintf(fp, "\n\n%9s %6s %12s %5s %-12s %-36s %-10s %s\n", "POWER_W",
		"CPU%", "ENERGY_J", "TASKS", "CONTAINER", "POD_UID", "QOS",
		"CGROUP");
	if (max_rows && n > max_rows)
		n = max_rows;
	for (size_t i = 0; i < n; i++) {
		const struct cgtop_row *r = &ts->rows[i];
		char pw[16] = "-", cpu[16] = "-", energy[24] = "-",
		     id[16] = "-";

		if (r->power_w >= 0)
			snprintf(pw, sizeof(pw), "%.3f", r->power_w);
		if (r->cpu_pct >= 0)
			snprintf(cpu, sizeof(cpu), "%.1f", r->cpu_pct);
		if (r->rec->source)
			snprintf(energy, sizeof(energy), "%.3f",
				 (double)r->rec->energy_uj / 1e6);
		if (r->name.container_id[0])
			snprintf(id, sizeof(id), "%.*s", CGN_SHORT_ID_LEN,
				 r->name.container_id);
		fprintf(fp, "%9s %6s %12s %5" PRIu32 " %-12s %-36s %-10s %s\n",
			pw, cpu, energy, r->rec->nr_tasks, id,
			r->name.pod_uid[0] ? r->name.pod_uid : "-",
			r->name.qos ? r->name.qos : "-", r->rec->path);
	}
}
