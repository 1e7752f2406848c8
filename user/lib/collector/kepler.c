// SPDX-License-Identifier: GPL-2.0
/*
 * --compat kepler: Kepler's (0.10+) metric names, served as well as
 * joules' own, so that a site switching keeps its dashboards and alerts.
 * Not a collector of its own: the same snapshot the node, cgroup and
 * process collectors gathered, under other names (Documentation/metrics.rst,
 * "Kepler compatibility").
 *
 * Kepler's watts are gauges. joules has counters only, so the watts here
 * are the change of a counter over a window the exporter measured: the
 * counters are kept at both ends of the last window of at least
 * compat_window_ns (joules_exporter_compat_window_seconds says how long it
 * was). A series without both ends in that window has no watts: absent,
 * never 0 or a guess.
 *
 * Zones: a RAPL domain is Kepler's zone of the same meaning (pkg is
 * "package"); energy the model charged, where no domain did, is zone
 * "model", a name Kepler does not have, so that estimated energy never
 * passes for a measured zone.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgname.h"
#include "collector.h"

/* clang-format off */
static const struct prom_family
f_node_j = { "kepler_node_cpu_joules", PROM_COUNTER, "joules",
	"Energy of the node per zone (joules --compat kepler: RAPL domains, or zone model)" },
f_node_w = { "kepler_node_cpu_watts", PROM_GAUGE, "watts",
	"Power of the node per zone over joules_exporter_compat_window_seconds" },
f_act_j = { "kepler_node_cpu_active_joules", PROM_COUNTER, "joules",
	"Energy joules charged to tasks (zone model only: joules splits idle from the total, not per RAPL domain)" },
f_act_w = { "kepler_node_cpu_active_watts", PROM_GAUGE, "watts",
	"Power joules charged to tasks over joules_exporter_compat_window_seconds (zone model only)" },
f_idle_j = { "kepler_node_cpu_idle_joules", PROM_COUNTER, "joules",
	"Idle energy of the node (zone model only)" },
f_idle_w = { "kepler_node_cpu_idle_watts", PROM_GAUGE, "watts",
	"Idle power of the node over joules_exporter_compat_window_seconds (zone model only)" },
f_usage = { "kepler_node_cpu_usage_ratio", PROM_GAUGE, "ratio",
	"On-CPU time of the tasks joules charged per online CPU second, over joules_exporter_compat_window_seconds" },
f_ctr_j = { "kepler_container_cpu_joules", PROM_COUNTER, "joules",
	"Energy joules charged to the container's cgroup per zone" },
f_ctr_w = { "kepler_container_cpu_watts", PROM_GAUGE, "watts",
	"Power of the container per zone over joules_exporter_compat_window_seconds" },
f_pod_j = { "kepler_pod_cpu_joules", PROM_COUNTER, "joules",
	"Energy joules charged to the pod's cgroup per zone" },
f_pod_w = { "kepler_pod_cpu_watts", PROM_GAUGE, "watts",
	"Power of the pod per zone over joules_exporter_compat_window_seconds" },
f_proc_j = { "kepler_process_cpu_joules", PROM_COUNTER, "joules",
	"Energy joules charged to the process per zone (--processes top=N)" },
f_proc_w = { "kepler_process_cpu_watts", PROM_GAUGE, "watts",
	"Power of the process per zone over joules_exporter_compat_window_seconds (--processes top=N)" },
f_proc_cpu = { "kepler_process_cpu_seconds", PROM_COUNTER, "seconds",
	"On-CPU time of the process (--processes top=N)" },
f_window = { "joules_exporter_compat_window_seconds", PROM_GAUGE, "seconds",
	"Length of the window the --compat watts and ratio gauges are computed over" };
/* clang-format on */

/* A new RAPL domain needs its Kepler zone name here. */
_Static_assert(JL_NR_DOMAINS == 4, "a Kepler zone per RAPL domain");

/* Kepler's zone per RAPL domain: what the powercap zone of that domain is named. */
static const char *const kp_zone_names[JL_NR_DOMAINS] = {
	[JL_D_PKG] = "package",
	[JL_D_CORE] = "core",
	[JL_D_DRAM] = "dram",
	[JL_D_PSYS] = "psys",
};
#define KP_ZONE_MODEL "model"
/* The node's wall meter (joules-meterd): the whole node, as Kepler's "platform" is not. */
#define KP_ZONE_METER "meter"

enum kp_kind {
	KP_NODE,
	KP_ACTIVE, /* zones model and meter only */
	KP_IDLE,
	KP_USAGE, /* the node's CPU time: a counter for the ratio, not a series */
	KP_CONTAINER,
	KP_POD,
	KP_PROCESS,
	KP_PROC_CPU,
};

/* A key names a counter across scrapes: kind, zone and who. */
#define KP_KEY 112

struct kp_series {
	char key[KP_KEY];
	enum kp_kind kind;
	const char *zone;
	uint64_t v; /* uJ; ns for KP_USAGE and KP_PROC_CPU */
	size_t idx; /* into snap->cgroups or snap->procs */
};

/* What a snapshot serves under Kepler's names; freed with the snapshot. */
struct jm_kepler {
	struct kp_series *v;
	size_t n, cap;
	struct cgname *cg; /* per cgroup of the snapshot */
	struct kp_proc *proc; /* per process */
	size_t nproc; /* of proc: jm_snapshot_free() empties the list first */
};

/* A process's container and executable, from /proc/PID. */
struct kp_proc {
	bool known; /* the file was read: no type label otherwise */
	char ctr[CGN_ID_LEN + 1]; /* container id or "" */
	char *exe; /* malloc()ed link of /proc/PID/exe, or NULL */
};

struct kp_counter {
	char key[KP_KEY];
	uint64_t v;
};

/* Counters by key, sorted, as they were at one time. */
struct kp_table {
	struct kp_counter *v;
	size_t n;
	uint64_t ns; /* CLOCK_MONOTONIC; 0: not taken */
	uint64_t reloads; /* jm_state's when taken */
	uint64_t uptime_ns; /* the module's; 0: unknown */
};

/* An executable as first read, kept while its pid has the same comm. */
struct kp_exe {
	uint32_t pid;
	char comm[32];
	char *exe; /* malloc()ed, or NULL: not readable */
};

/*
 * The last window (counters at its start and at its end), and the last
 * scrape's executables.
 */
struct jm_kepler_state {
	struct kp_table from, to;
	long ncpus; /* online CPUs at its end */
	struct kp_exe *exe; /* the last scrape's processes, by pid */
	size_t nexe;
};

static void kp_exe_free(struct kp_exe *e, size_t n)
{
	for (size_t i = 0; e && i < n; i++)
		free(e[i].exe);
	free(e);
}

int jm_parse_compat(const char *arg, enum jm_compat *c)
{
	if (!strcmp(arg, "kepler"))
		*c = JM_COMPAT_KEPLER;
	else if (!strcmp(arg, "none"))
		*c = JM_COMPAT_NONE;
	else
		return -EINVAL;
	return 0;
}

int jm_set_compat_kepler(struct jm_state *s, const char *node_name,
			 uint64_t window_ns)
{
	if (!s->kepler) {
		s->kepler = calloc(1, sizeof(*s->kepler));
		if (!s->kepler)
			return -ENOMEM;
	}
	s->compat = JM_COMPAT_KEPLER;
	s->node_name = node_name;
	s->compat_window_ns = window_ns;
	return 0;
}

void jm_kepler_state_free(struct jm_state *s)
{
	if (!s->kepler)
		return;
	free(s->kepler->from.v);
	free(s->kepler->to.v);
	kp_exe_free(s->kepler->exe, s->kepler->nexe);
	free(s->kepler);
	s->kepler = NULL;
}

void jm_kepler_free(struct jm_snapshot *snap)
{
	if (!snap->kepler)
		return;
	free(snap->kepler->v);
	free(snap->kepler->cg);
	for (size_t i = 0; snap->kepler->proc && i < snap->kepler->nproc; i++)
		free(snap->kepler->proc[i].exe);
	free(snap->kepler->proc);
	free(snap->kepler);
	snap->kepler = NULL;
}

/* Add a series; keys too long for KP_KEY cannot occur (ids are bounded). */
static int kp_add(struct jm_kepler *k, enum kp_kind kind, const char *zone,
		  uint64_t v, size_t idx, const char *who)
{
	struct kp_series *e;

	if (k->n == k->cap) {
		size_t cap = k->cap ? 2 * k->cap : 64;
		void *p = realloc(k->v, cap * sizeof(*k->v));

		if (!p)
			return -ENOMEM;
		k->v = p;
		k->cap = cap;
	}
	e = &k->v[k->n++];
	snprintf(e->key, sizeof(e->key), "%d/%s/%s", (int)kind, who,
		 zone ? zone : "");
	e->kind = kind;
	e->zone = zone;
	e->v = v;
	e->idx = idx;
	return 0;
}

/*
 * The zones of a record: its RAPL domains, or zone model when the model
 * charged it and no domain did. Nothing when nothing charged it.
 */
static int kp_add_zones(struct jm_kepler *k, enum kp_kind kind, uint32_t source,
			uint32_t domains, const uint64_t *domain_uj,
			uint64_t energy_uj, size_t idx, const char *who)
{
	int err = 0;

	for (int d = 0; d < JL_NR_DOMAINS && !err; d++)
		if (domains & (1u << d))
			err = kp_add(k, kind, kp_zone_names[d], domain_uj[d],
				     idx, who);
	/* The wall meter's energy is a zone of its own, next to RAPL's. */
	if ((source & REC_SRC_METER) && !err)
		err = kp_add(k, kind, KP_ZONE_METER, energy_uj, idx, who);
	else if (!domains && (source & REC_SRC_MODEL) && !err)
		err = kp_add(k, kind, KP_ZONE_MODEL, energy_uj, idx, who);
	return err;
}

/* The node: measured zones, zone model with its idle and active parts. */
static int kp_build_node(struct jm_kepler *k, const struct jm_snapshot *snap)
{
	const struct node_rec *n = &snap->node;
	int err = 0;

	if (snap->st[JM_C_NODE].reason != JM_OK || !snap->st[JM_C_NODE].enabled)
		return 0;
	for (int d = 0; d < JL_NR_DOMAINS && !err; d++)
		if (n->domains & (1u << d))
			err = kp_add(k, KP_NODE, kp_zone_names[d],
				     n->domain_uj[d], 0, "");
	/*
	 * The node's source is that of its latest interval: the wall meter's
	 * energy (whatever shaped it), or the model's alone.
	 */
	if (((n->source & REC_SRC_METER) || n->source == REC_SRC_MODEL) &&
	    !err) {
		const char *zone = n->source & REC_SRC_METER ? KP_ZONE_METER :
							       KP_ZONE_MODEL;

		err = kp_add(k, KP_NODE, zone, n->energy_uj, 0, "");
		if (!err && n->energy_uj >= n->idle_uj)
			err = kp_add(k, KP_ACTIVE, zone,
				     n->energy_uj - n->idle_uj, 0, "");
		if (!err)
			err = kp_add(k, KP_IDLE, zone, n->idle_uj, 0, "");
	}
	if ((n->present & REC_F(JL_F_CPU_NS)) && !err)
		err = kp_add(k, KP_USAGE, NULL, n->feat[JL_F_CPU_NS], 0, "");
	return err;
}

/*
 * Is a pod or container at path believable? Names are all a cgroup has,
 * and a user names the cgroups delegated to them (systemd's
 * user@UID.service) as they like: a forged "...-pod<uid>.slice" there
 * would charge its energy to someone's pod. Only the runtimes' top-level
 * trees, which root alone creates, are believed, and in them only the
 * places where the kubelet and the runtimes make pods and containers;
 * rootless Podman's containers are then not Kepler's containers.
 */
static bool kp_trusted(const char *path, const struct cgname *n)
{
	static const char *const roots[] = { "system.slice", "machine.slice",
					     "docker", "k8s.io", "default" };
	size_t len;

	/* A kubepods tree below the top level is anyone's who made it. */
	if (n->kube_nested)
		return false;
	/*
	 * So is a container below where runtimes make them: directly in a
	 * pod, or in a runtime's top-level cgroup.
	 */
	if (n->container_id[0] && !n->in_pod && n->container_depth != 1)
		return false;
	path += strspn(path, "/");
	len = strcspn(path, "/");
	if (!strncmp(path, "kubepods", 8))
		return true;
	for (size_t i = 0; i < NL(roots); i++)
		if (len == strlen(roots[i]) && !strncmp(path, roots[i], len))
			return true;
	return false;
}

/*
 * Kepler's runtime label values (its ContainerRuntime): "crio" for CRI-O,
 * and "kubernetes" for a bare id directly in a cgroupfs-driver pod.
 */
static const char *kp_runtime(const struct cgname *n)
{
	if (!n->runtime)
		return n->in_cgroupfs_pod ? "kubernetes" : "unknown";
	return strcmp(n->runtime, "cri-o") ? n->runtime : "crio";
}

/* Containers and pods: their own cgroups (kind container, pod). */
static int kp_build_cgroups(struct jm_kepler *k, const struct jm_snapshot *snap)
{
	int err = 0;

	if (!snap->ncgroups)
		return 0;
	k->cg = calloc(snap->ncgroups, sizeof(*k->cg));
	if (!k->cg)
		return -ENOMEM;
	for (size_t i = 0; i < snap->ncgroups && !err; i++) {
		const struct jm_cgroup *c = &snap->cgroups[i];
		struct cgname *n = &k->cg[i];

		cgname_parse(c->path, n);
		if (!kp_trusted(c->path, n))
			continue;
		if (n->kind == CGN_CONTAINER)
			err = kp_add_zones(k, KP_CONTAINER, c->source,
					   c->domains, c->domain_uj,
					   c->energy_uj, i, n->container_id);
		else if (n->kind == CGN_POD)
			err = kp_add_zones(k, KP_POD, c->source, c->domains,
					   c->domain_uj, c->energy_uj, i,
					   n->pod_uid);
	}
	return err;
}

/* Processes: the top N, keyed by pid and comm (a pid is reused). */
static int kp_build_procs(struct jm_kepler *k, const struct jm_snapshot *snap)
{
	char who[64];
	int err = 0;

	for (size_t i = 0; i < snap->nprocs && !err; i++) {
		const struct task_rec *t = &snap->procs[i];

		snprintf(who, sizeof(who), "%" PRIu32 "/%.*s", t->pid,
			 (int)sizeof(t->comm), t->comm);
		err = kp_add_zones(k, KP_PROCESS, t->source, t->domains,
				   t->domain_uj, t->energy_uj, i, who);
		if (!err && (t->present & REC_F(JL_F_CPU_NS)))
			err = kp_add(k, KP_PROC_CPU, NULL, t->feat[JL_F_CPU_NS],
				     i, who);
	}
	return err;
}

static int kp_cmp_series(const void *a, const void *b)
{
	const struct kp_series *x = a, *y = b;

	int c;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	c = strcmp(x->key, y->key);
	if (c)
		return c;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/*
 * Two cgroups can name the same container (a runtime's own cgroup and a
 * nested one of the same kind): one series each key, or Prometheus would
 * reject the whole scrape for a duplicate. The first in path order stays.
 */
static void kp_sort_unique(struct jm_kepler *k)
{
	size_t j = 0;

	qsort(k->v, k->n, sizeof(*k->v), kp_cmp_series);
	for (size_t i = 0; i < k->n; i++)
		if (!j || strcmp(k->v[j - 1].key, k->v[i].key))
			k->v[j++] = k->v[i];
	k->n = j;
}

static int kp_cmp_counter(const void *a, const void *b)
{
	return strcmp(((const struct kp_counter *)a)->key,
		      ((const struct kp_counter *)b)->key);
}

/* The counters of the series, sorted by key (the series are). */
static int kp_table(const struct jm_kepler *k, uint64_t now, struct kp_table *t)
{
	t->v = malloc((k->n ? k->n : 1) * sizeof(*t->v));
	if (!t->v)
		return -ENOMEM;
	t->n = k->n;
	t->ns = now;
	for (size_t i = 0; i < k->n; i++) {
		memcpy(t->v[i].key, k->v[i].key, KP_KEY);
		t->v[i].v = k->v[i].v;
	}
	qsort(t->v, t->n, sizeof(*t->v), kp_cmp_counter);
	return 0;
}

/*
 * The shortest window: --compat.window, and at least 10 of the module's
 * intervals (sysfs interval_ms). The module charges whole intervals, so
 * a window holds one interval more or less than its length: over 10 that
 * is a 10% swing of the watts at most, over 2 it would be 50%.
 */
static uint64_t kp_min_window(const struct jm_state *s)
{
	uint64_t ms;

	if (jm_read_u64(s, "interval_ms", &ms) || ms > 60000)
		return s->compat_window_ns;
	return s->compat_window_ns > 10 * ms * 1000000 ? s->compat_window_ns :
							 10 * ms * 1000000;
}

/*
 * Close the window when it is at least kp_min_window() long: its end
 * becomes the next one's start. Scrapes in between (a second Prometheus)
 * see the same window, so every scraper gets watts over the stated time.
 */
static int kp_advance(struct jm_state *s, const struct jm_snapshot *snap,
		      uint64_t now, long ncpus)
{
	const struct jm_kepler *k = snap->kepler;
	struct jm_kepler_state *ks = s->kepler;
	struct kp_table t;
	int err;

	/* Torn down (jm_close()): the counters are served, no watts. */
	if (!ks)
		return 0;
	if (ks->to.ns && now - ks->to.ns < kp_min_window(s))
		return 0;
	err = kp_table(k, now, &t);
	if (err)
		return err;
	t.reloads = s->reloads;
	if (snap->st[JM_C_NODE].enabled && snap->st[JM_C_NODE].reason == JM_OK)
		t.uptime_ns = snap->node.uptime_ns;
	free(ks->from.v);
	ks->from = ks->to;
	ks->to = t;
	ks->ncpus = ncpus;
	return 0;
}

int jm_kepler_build(struct jm_state *s, struct jm_snapshot *snap, uint64_t now,
		    long ncpus)
{
	struct jm_kepler *k = snap->kepler;
	int err;

	if (!k) {
		k = calloc(1, sizeof(*k));
		if (!k)
			return -ENOMEM;
		snap->kepler = k;
	}
	err = kp_build_node(k, snap);
	if (!err)
		err = kp_build_cgroups(k, snap);
	if (!err)
		err = kp_build_procs(k, snap);
	if (err)
		return err;
	kp_sort_unique(k);
	return kp_advance(s, snap, now, ncpus);
}

/*
 * The container a process runs in, from its cgroup file's v2 line, as the
 * cgroup families name it. Unreadable: unknown, and the series has no type
 * rather than a guessed one.
 */
static void kp_proc_container(int dfd, struct kp_proc *p)
{
	char line[4096];
	struct cgname n;
	FILE *fp;
	int fd;

	fd = openat(dfd, "cgroup", O_RDONLY | O_CLOEXEC);
	fp = fd < 0 ? NULL : fdopen(fd, "r");
	if (!fp) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while (fgets(line, sizeof(line), fp)) {
		line[strcspn(line, "\n")] = 0;
		if (strncmp(line, "0::", 3))
			continue;
		cgname_parse(line + 3, &n);
		if (kp_trusted(line + 3, &n))
			snprintf(p->ctr, sizeof(p->ctr), "%s", n.container_id);
		p->known = true;
		break;
	}
	fclose(fp);
}

/*
 * Whether the process in directory dfd is still the one the module
 * reported: its comm begins with the record's (since 5.17 /proc gives a
 * kernel thread its whole name and a kworker its workqueue, the module the
 * task's 15 bytes). Another comm is most likely another process that got
 * the pid since the dump (or one renamed in between): nothing is then said
 * of it. One that takes the old comm on purpose passes; see metrics.rst.
 */
static bool kp_proc_same(int dfd, const struct task_rec *t)
{
	char comm[64];
	ssize_t len;
	int fd;

	fd = openat(dfd, "comm", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	len = read(fd, comm, sizeof(comm) - 1);
	close(fd);
	if (len <= 0 || comm[len - 1] != '\n')
		return false;
	comm[len - 1] = 0;
	return t->comm[0] && !strncmp(comm, t->comm, strlen(t->comm));
}

static int kp_exe_cmp(const void *a, const void *b)
{
	const struct kp_exe *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* The last scrape's exe entry of t's pid, if it had the same comm. */
static struct kp_exe *kp_exe_find(struct jm_kepler_state *ks,
				  const struct task_rec *t)
{
	struct kp_exe key = { .pid = t->pid }, *e;

	if (!ks || !ks->nexe)
		return NULL;
	e = bsearch(&key, ks->exe, ks->nexe, sizeof(*e), kp_exe_cmp);
	return e && !strcmp(e->comm, t->comm) ? e : NULL;
}

/*
 * What PROC/PID says of a process, all read through one directory fd, so
 * that a pid reused after the comm was checked fails the reads (the
 * directory stays the old process's) rather than answering for another.
 * Its executable where this exporter may read the link (its own user's
 * processes, or CAP_SYS_PTRACE), as Kepler's exe label has it: as first
 * read (old, from the last scrape), so that a series keeps its labels.
 * The executable as read is left in *exe (malloc()ed, or NULL). Whether
 * the pid still had the record's process.
 */
static bool kp_proc_info(const char *proc, const struct task_rec *t,
			 const struct kp_exe *old, struct kp_proc *p,
			 char **exe)
{
	char path[4096], link[4096];
	ssize_t len;
	bool same;
	int dfd;

	p->known = false;
	p->ctr[0] = 0;
	p->exe = NULL;
	*exe = NULL;
	snprintf(path, sizeof(path), "%s/%" PRIu32, proc, t->pid);
	dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return false;
	same = kp_proc_same(dfd, t);
	if (same) {
		kp_proc_container(dfd, p);
		if (old && old->exe) {
			*exe = strdup(old->exe);
		} else {
			len = readlinkat(dfd, "exe", link, sizeof(link) - 1);
			if (len > 0) {
				link[len] = 0;
				*exe = strdup(link);
			}
		}
		p->exe = *exe ? strdup(*exe) : NULL;
	}
	close(dfd);
	return same;
}

/*
 * Every process's container and executable; the executables become the
 * state's for the next scrape (the last scrape's processes only, so the
 * list is as long as --processes allows).
 */
static void kp_procs_info(struct jm_state *s, const struct jm_snapshot *snap,
			  struct jm_kepler *k)
{
	struct jm_kepler_state *ks = s->kepler;
	struct kp_exe *next = calloc(snap->nprocs, sizeof(*next));
	const char *proc = s->proc ? s->proc : "/proc";
	size_t n = 0;

	for (size_t i = 0; i < snap->nprocs; i++) {
		const struct task_rec *t = &snap->procs[i];
		char *exe;
		bool same;

		same = kp_proc_info(proc, t, kp_exe_find(ks, t), &k->proc[i],
				    &exe);
		if (!next || !same) {
			free(exe);
			continue;
		}
		next[n].pid = t->pid;
		snprintf(next[n].comm, sizeof(next[n].comm), "%s", t->comm);
		next[n++].exe = exe;
	}
	if (!ks) {
		kp_exe_free(next, n);
		return;
	}
	kp_exe_free(ks->exe, ks->nexe);
	qsort(next, n, sizeof(*next), kp_exe_cmp);
	ks->exe = next;
	ks->nexe = n;
}

/*
 * After the collectors: the processes' containers (the only I/O), then
 * the series. Failing leaves Kepler's names out, never joules' own.
 */
void jm_kepler_gather(struct jm_state *s, struct jm_snapshot *snap)
{
	struct jm_kepler *k = calloc(1, sizeof(*k));

	snap->kepler = k;
	if (k && snap->nprocs) {
		k->proc = calloc(snap->nprocs, sizeof(*k->proc));
		if (k->proc) {
			k->nproc = snap->nprocs;
			kp_procs_info(s, snap, k);
		}
	}
	if (!k || (snap->nprocs && !k->proc) ||
	    jm_kepler_build(s, snap, jm_now(), sysconf(_SC_NPROCESSORS_ONLN))) {
		if (s->log)
			s->log("error", "kepler",
			       "out of memory: Kepler's names left out");
		jm_kepler_free(snap);
	}
}

static const struct kp_counter *kp_find(const struct kp_table *t,
					const char *key)
{
	struct kp_counter k;

	if (!t->v)
		return NULL;
	snprintf(k.key, sizeof(k.key), "%s", key);
	return bsearch(&k, t->v, t->n, sizeof(*t->v), kp_cmp_counter);
}

/*
 * Did the module reload within the window? Its counters restarted from 0
 * and may have passed their old values since, so a counter that did not
 * fall proves nothing: the exporter's reload count or the module's uptime
 * going down tells.
 */
static bool kp_window_reset(const struct jm_kepler_state *ks)
{
	return ks->to.reloads != ks->from.reloads ||
	       (ks->from.uptime_ns && ks->to.uptime_ns &&
		ks->to.uptime_ns < ks->from.uptime_ns);
}

/*
 * A counter's change per second over the last window, times scale; false
 * when the window or either end is missing, the module reloaded within it,
 * or the counter fell: absent, not 0.
 */
static bool kp_rate(const struct jm_kepler_state *ks, const char *key,
		    double scale, double *out)
{
	const struct kp_counter *a, *b;

	if (!ks || !ks->from.ns || ks->to.ns <= ks->from.ns ||
	    kp_window_reset(ks))
		return false;
	a = kp_find(&ks->from, key);
	b = kp_find(&ks->to, key);
	if (!a || !b || b->v < a->v)
		return false;
	*out = (double)(b->v - a->v) * scale /
	       ((double)(ks->to.ns - ks->from.ns) / 1e9);
	return true;
}

/* The labels of a series, Kepler's order; node_name last. */
#define KP_LABELS 9
static size_t kp_labels(const struct jm_state *s,
			const struct jm_snapshot *snap,
			const struct kp_series *e, char *pid, size_t pidsz,
			struct prom_label *l)
{
	const struct jm_kepler *k = snap->kepler;
	const struct cgname *n = NULL;
	const struct task_rec *t;
	const struct kp_proc *p;
	size_t i = 0;

	switch (e->kind) {
	case KP_CONTAINER:
		n = &k->cg[e->idx];
		l[i++] = (struct prom_label){ "container_id", n->container_id };
		l[i++] = (struct prom_label){ "runtime", kp_runtime(n) };
		l[i++] = (struct prom_label){ "state", "running" };
		if (n->pod_uid[0])
			l[i++] = (struct prom_label){ "pod_id", n->pod_uid };
		break;
	case KP_POD:
		n = &k->cg[e->idx];
		l[i++] = (struct prom_label){ "pod_id", n->pod_uid };
		l[i++] = (struct prom_label){ "state", "running" };
		break;
	case KP_PROCESS:
	case KP_PROC_CPU:
		t = &snap->procs[e->idx];
		p = k->proc ? &k->proc[e->idx] : NULL;
		snprintf(pid, pidsz, "%" PRIu32, t->pid);
		l[i++] = (struct prom_label){ "pid", pid };
		l[i++] = (struct prom_label){ "comm", t->comm };
		if (p && p->exe)
			l[i++] = (struct prom_label){ "exe", p->exe };
		if (p && p->known)
			l[i++] = (struct prom_label){ "type",
						      p->ctr[0] ? "container" :
								  "regular" };
		/* Kepler's CPU seconds have no state: its energy series do. */
		if (e->kind == KP_PROCESS)
			l[i++] = (struct prom_label){ "state", "running" };
		if (p && p->ctr[0])
			l[i++] = (struct prom_label){ "container_id", p->ctr };
		break;
	default:
		break;
	}
	if (e->zone)
		l[i++] = (struct prom_label){ "zone", e->zone };
	if (s->node_name && s->node_name[0])
		l[i++] = (struct prom_label){ "node_name", s->node_name };
	return i;
}

/* One family: every series of a kind, the counter or its watts. */
static void kp_family(const struct jm_state *s, const struct jm_snapshot *snap,
		      struct prom_writer *w, const struct prom_family *f,
		      enum kp_kind kind, bool watts)
{
	const struct jm_kepler *k = snap->kepler;
	struct prom_label l[KP_LABELS];
	char pid[16];
	double v;

	prom_family(w, f);
	for (size_t i = 0; i < k->n; i++) {
		const struct kp_series *e = &k->v[i];
		size_t nl;

		if (e->kind != kind)
			continue;
		nl = kp_labels(s, snap, e, pid, sizeof(pid), l);
		if (!watts)
			prom_fixed(w, l, nl, e->v, kind == KP_PROC_CPU ? 9 : 6);
		else if (kp_rate(s->kepler, e->key, 1e-6, &v))
			prom_double(w, l, nl, v);
	}
}

/* CPU time per online CPU second: Kepler's usage ratio. */
static void kp_usage(const struct jm_state *s, const struct jm_snapshot *snap,
		     struct prom_writer *w)
{
	const struct jm_kepler *k = snap->kepler;
	struct prom_label l[] = { { "node_name", s->node_name } };
	double v;

	for (size_t i = 0; i < k->n; i++) {
		if (k->v[i].kind != KP_USAGE || !s->kepler ||
		    s->kepler->ncpus < 1 ||
		    !kp_rate(s->kepler, k->v[i].key,
			     1e-9 / (double)s->kepler->ncpus, &v))
			continue;
		prom_family(w, &f_usage);
		prom_double(w, l, s->node_name && s->node_name[0], v);
	}
}

void jm_kepler_render(const struct jm_state *s, const struct jm_snapshot *snap,
		      struct prom_writer *w)
{
	static const struct {
		const struct prom_family *f;
		enum kp_kind kind;
		bool watts;
	} fams[] = {
		{ &f_node_j, KP_NODE, false },
		{ &f_node_w, KP_NODE, true },
		{ &f_act_j, KP_ACTIVE, false },
		{ &f_act_w, KP_ACTIVE, true },
		{ &f_idle_j, KP_IDLE, false },
		{ &f_idle_w, KP_IDLE, true },
		{ &f_ctr_j, KP_CONTAINER, false },
		{ &f_ctr_w, KP_CONTAINER, true },
		{ &f_pod_j, KP_POD, false },
		{ &f_pod_w, KP_POD, true },
		{ &f_proc_j, KP_PROCESS, false },
		{ &f_proc_w, KP_PROCESS, true },
		{ &f_proc_cpu, KP_PROC_CPU, false },
	};
	const struct jm_kepler_state *ks = s->kepler;

	if (s->compat != JM_COMPAT_KEPLER || !snap->kepler)
		return;
	for (size_t i = 0; i < NL(fams); i++) {
		kp_family(s, snap, w, fams[i].f, fams[i].kind, fams[i].watts);
		if (fams[i].kind == KP_IDLE && fams[i].watts)
			kp_usage(s, snap, w);
	}
	if (ks && ks->from.ns && ks->to.ns > ks->from.ns) {
		prom_family(w, &f_window);
		prom_fixed(w, NULL, 0, ks->to.ns - ks->from.ns, 9);
	}
}
