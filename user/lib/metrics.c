// SPDX-License-Identifier: GPL-2.0
/*
 * The joules metric families (metrics.h, Documentation/metrics.rst):
 * gathering from the module and rendering for Prometheus.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/capability.h>

#include "cgname.h"
#include "nl.h"
#include "parse.h"
#include "metrics.h"

const struct jm_collector_info jm_collectors[JM_NR_COLLECTORS] = {
	[JM_C_MODULE] = { "module", "module loaded, version, reloads" },
	[JM_C_NODE] = { "node",
			"node energy by source and RAPL domain, idle energy, "
			"CPU time (netlink GET_NODE)" },
	[JM_C_MODEL] = { "model", "model generation and coefficients (sysfs)" },
	[JM_C_METER] = { "meter", "energy meter present or absent and why (sysfs)" },
	[JM_C_PROCESS] = { "process",
			   "top N processes by energy (--processes top=N)" },
	[JM_C_CGROUP] = { "cgroup",
			  "per-cgroup (v2) energy, idle share, CPU time, storage "
			  "bytes, with container id and pod UID (--cgroups)" },
};

const char *const jm_reason_names[JM_NR_REASONS] = {
	[JM_OK] = "ok",
	[JM_NOT_LOADED] = "module_not_loaded",
	[JM_PERMISSION] = "permission",
	[JM_UNSUPPORTED] = "unsupported",
	[JM_FAILED] = "error",
};

/* Families. Names in base units; counters get _total from the writer. */
/* clang-format off */
static const struct prom_family
f_module_loaded = { "joules_module_loaded", PROM_GAUGE, NULL,
	"1 if the joules module answers on generic netlink, 0 if it is not loaded" },
f_module = { "joules_module", PROM_INFO, NULL,
	"Version of the loaded joules module and of its interfaces" },
f_load_time = { "joules_module_load_time_seconds", PROM_GAUGE, "seconds",
	"Unix time the module was loaded (now minus its uptime); its counters start from zero then" },
f_reloads = { "joules_exporter_module_reloads", PROM_COUNTER, NULL,
	"Module reloads this exporter noticed; each restarts the module's counters from zero" },
f_node_energy = { "joules_node_energy_joules", PROM_COUNTER, "joules",
	"Node energy since the module loaded, idle plus tasks, by the source of the latest interval" },
f_node_idle = { "joules_node_idle_energy_joules", PROM_COUNTER, "joules",
	"Idle share of the node energy since the module loaded" },
f_node_rapl = { "joules_node_rapl_energy_joules", PROM_COUNTER, "joules",
	"Measured energy per RAPL domain since the module loaded (measured domains only)" },
f_node_cpu = { "joules_node_cpu_seconds", PROM_COUNTER, "seconds",
	"On-CPU time of the tasks joules charged, since the module loaded" },
f_node_cycles = { "joules_node_cpu_cycles", PROM_COUNTER, NULL,
	"CPU cycles of the tasks joules charged (only where a PMU counts them)" },
f_node_instr = { "joules_node_instructions", PROM_COUNTER, NULL,
	"Retired instructions of the tasks joules charged (only where a PMU counts them)" },
f_node_misses = { "joules_node_cache_misses", PROM_COUNTER, NULL,
	"Last-level cache misses of the tasks joules charged (only where a PMU counts them)" },
f_node_disk = { "joules_node_storage_bytes", PROM_COUNTER, "bytes",
	"Storage bytes read and written by the tasks joules charged" },
f_node_net_tx = { "joules_node_network_transmit_bytes", PROM_COUNTER, "bytes",
	"IPv4/IPv6 socket bytes sent by the tasks joules charged (kernels with the sock_send_length tracepoint, 6.3+)" },
f_node_net_rx = { "joules_node_network_receive_bytes", PROM_COUNTER, "bytes",
	"IPv4/IPv6 socket bytes received by the tasks joules charged (kernels with the sock_recv_length tracepoint, 6.3+)" },
f_node_pagecache = { "joules_node_pagecache_read_bytes", PROM_COUNTER, "bytes",
	"Bytes the tasks joules charged read(2) without storage reads (page-cache hits)" },
f_node_intervals = { "joules_node_attribution_intervals", PROM_COUNTER, NULL,
	"Attribution intervals closed since the module loaded" },
f_node_tasks = { "joules_node_tasks_tracked", PROM_GAUGE, NULL,
	"Live task entries the module keeps" },
f_model_gen = { "joules_model_generation", PROM_GAUGE, NULL,
	"Coefficient sets written since the module loaded; 0: no model set, the model source charges nothing" },
f_model_power = { "joules_model_power_watts", PROM_GAUGE, "watts",
	"Model coefficients in watts: per busy CPU (cpu_time) and of the idle node (idle)" },
f_model_event = { "joules_model_event_energy_joules", PROM_GAUGE, "joules",
	"Model coefficients in joules per event" },
f_meter_present = { "joules_meter_present", PROM_GAUGE, NULL,
	"1 if an energy meter (RAPL) is registered, with its name; 0 with the reason it is absent" },
f_meter_wraps = { "joules_meter_wraps", PROM_COUNTER, NULL,
	"Energy counter wraps the module handled since the meter registered" },
f_meter_bogus = { "joules_meter_bogus_reads", PROM_COUNTER, NULL,
	"Meter readings dropped as implausible (above the maximum plausible power)" },
f_proc_energy = { "joules_process_energy_joules", PROM_COUNTER, "joules",
	"Energy charged to the process (all its threads, living and exited), top N by energy" },
f_proc_cpu = { "joules_process_cpu_seconds", PROM_COUNTER, "seconds",
	"On-CPU time of the process (all its threads), top N by energy" },
f_procs_seen = { "joules_exporter_processes_seen", PROM_GAUGE, NULL,
	"Processes in the module's dump this scrape (those the exporter may read)" },
f_cg_energy = { "joules_cgroup_energy_joules", PROM_COUNTER, "joules",
	"Energy charged to the cgroup and its descendants since the module loaded, exited tasks included" },
f_cg_idle = { "joules_cgroup_idle_energy_joules", PROM_COUNTER, "joules",
	"Idle share of the cgroup's energy: the node's idle energy split evenly among live tasks (with idle_split=1)" },
f_cg_cpu = { "joules_cgroup_cpu_seconds", PROM_COUNTER, "seconds",
	"On-CPU time of the cgroup's tasks and its descendants', exited ones included" },
f_cg_read = { "joules_cgroup_storage_read_bytes", PROM_COUNTER, "bytes",
	"Storage bytes read by the cgroup's tasks and its descendants'" },
f_cg_write = { "joules_cgroup_storage_written_bytes", PROM_COUNTER, "bytes",
	"Storage bytes written by the cgroup's tasks and its descendants'" },
f_cg_net_tx = { "joules_cgroup_network_transmit_bytes", PROM_COUNTER, "bytes",
	"IPv4/IPv6 socket bytes sent by the cgroup's tasks and its descendants' (kernels with sock_send_length, 6.3+)" },
f_cg_net_rx = { "joules_cgroup_network_receive_bytes", PROM_COUNTER, "bytes",
	"IPv4/IPv6 socket bytes received by the cgroup's tasks and its descendants' (kernels with sock_recv_length, 6.3+)" },
f_cg_pagecache = { "joules_cgroup_pagecache_read_bytes", PROM_COUNTER, "bytes",
	"Bytes the cgroup's tasks and its descendants' read(2) without storage reads (page-cache hits)" },
f_cgroups_seen = { "joules_exporter_cgroups_seen", PROM_GAUGE, NULL,
	"Cgroups in the module's dump this scrape (those the exporter may read, in its cgroup namespace)" },
f_build = { "joules_exporter_build", PROM_INFO, NULL,
	"Version of the joules exporter" },
f_scrape_dur = { "joules_exporter_scrape_duration_seconds", PROM_GAUGE, "seconds",
	"Time this scrape spent gathering" },
f_coll_dur = { "joules_exporter_collector_duration_seconds", PROM_GAUGE, "seconds",
	"Time each collector spent gathering this scrape" },
f_coll_ok = { "joules_exporter_collector_success", PROM_GAUGE, NULL,
	"1 if the collector gathered its series this scrape, 0 if not (see joules_exporter_collector_error)" },
f_coll_err = { "joules_exporter_collector_error", PROM_GAUGE, NULL,
	"Present (1) while a collector fails, with the reason: module_not_loaded, permission, unsupported, error" },
f_errors = { "joules_exporter_scrape_errors", PROM_COUNTER, NULL,
	"Scrapes in which the collector failed, since the exporter started" };
/* clang-format on */

void jm_init(struct jm_state *s, unsigned int top, const char *sysfs,
	     jm_log_fn log)
{
	const char *env = getenv("JOULES_SYSFS");

	memset(s, 0, sizeof(*s));
	s->top = top > JM_MAX_TOP ? JM_MAX_TOP : top;
	s->sysfs = sysfs ? sysfs : env && *env ? env : "/sys/kernel/joules";
	s->log = log;
	s->family = -1;
	s->cg_depth = JM_CG_ALL;
}

void jm_close(struct jm_state *s)
{
	jnl_close(s->nl);
	s->nl = NULL;
	if (s->cg_have_match)
		regfree(&s->cg_match);
	s->cg_have_match = false;
}

int jm_set_cgroups(struct jm_state *s, int depth, const char *match,
		   char *why, size_t size)
{
	regex_t re;
	int err;

	if (match) {
		err = regcomp(&re, match, REG_EXTENDED | REG_NOSUB);
		if (err) {
			regerror(err, &re, why, size);
			return -EINVAL;
		}
	}
	if (s->cg_have_match)
		regfree(&s->cg_match);
	s->cg_have_match = match != NULL;
	if (match)
		s->cg_match = re;
	s->cg_depth = depth;
	return 0;
}

int jm_parse_cgroups(const char *arg, int *depth)
{
	const char *why;
	uint64_t n;

	if (!strcmp(arg, "all")) {
		*depth = JM_CG_ALL;
		return 0;
	}
	if (!strcmp(arg, "off")) {
		*depth = JM_CG_OFF;
		return 0;
	}
	if (strncmp(arg, "depth=", 6) || parse_u64(arg + 6, &n, &why) ||
	    n >= JM_CG_ALL)
		return -EINVAL;
	*depth = (int)n;
	return 0;
}

void jm_snapshot_free(struct jm_snapshot *snap)
{
	free(snap->procs);
	snap->procs = NULL;
	snap->nprocs = 0;
	for (size_t i = 0; i < snap->ncgroups; i++)
		free(snap->cgroups[i].path);
	free(snap->cgroups);
	snap->cgroups = NULL;
	snap->ncgroups = 0;
}

int jm_parse_processes(const char *arg, unsigned int *top)
{
	const char *why;
	uint64_t n;

	if (!strcmp(arg, "off") || !strcmp(arg, "0")) {
		*top = 0;
		return 0;
	}
	if (strncmp(arg, "top=", 4) || parse_u64(arg + 4, &n, &why) || !n)
		return -EINVAL;
	if (n > JM_MAX_TOP)
		return -ERANGE;
	*top = (unsigned int)n;
	return 0;
}

static uint64_t jm_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void jm_fail(struct jm_status *st, enum jm_reason r, int err,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void jm_fail(struct jm_status *st, enum jm_reason r, int err,
		    const char *fmt, ...)
{
	va_list ap;

	st->reason = r;
	st->err = err;
	va_start(ap, fmt);
	vsnprintf(st->msg, sizeof(st->msg), fmt, ap);
	va_end(ap);
}

/* The reason a failed netlink request or file read stands for. */
static enum jm_reason jm_reason_of(int err)
{
	switch (-err) {
	case EPERM:
	case EACCES:
		return JM_PERMISSION;
	case ENOENT:
		return JM_NOT_LOADED;
	case EOPNOTSUPP:
		return JM_UNSUPPORTED;
	default:
		return JM_FAILED;
	}
}

/*
 * The failure of a sysfs read: without the directory the module is not
 * loaded, which deserves that sentence rather than a path and ENOENT.
 */
static void jm_sysfs_fail(const struct jm_state *s, struct jm_status *st,
			  const char *name, int err)
{
	if (err == -ENOENT && access(s->sysfs, F_OK))
		jm_fail(st, JM_NOT_LOADED, err,
			"joules module not loaded (no %s)", s->sysfs);
	else
		jm_fail(st, jm_reason_of(err), err, "%s/%s: %s", s->sysfs,
			name, strerror(-err));
}

/* A small sysfs file, trailing newline dropped: its length or -errno. */
static ssize_t jm_read(const struct jm_state *s, const char *name, char *buf,
		       size_t size)
{
	char path[512];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", s->sysfs, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n < 0)
		return n;
	buf[n] = 0;
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = 0;
	return n;
}

static int jm_read_u64(const struct jm_state *s, const char *name,
		       uint64_t *v)
{
	char buf[64];
	const char *why;
	ssize_t n = jm_read(s, name, buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	return parse_u64(buf, v, &why) ? -EINVAL : 0;
}

/* Is cap in this process's effective set? */
static bool jm_capable(int cap)
{
	struct __user_cap_header_struct h = { .version =
						      _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d))
		return false;
	return d[cap / 32].effective & (1u << (cap % 32));
}

/*
 * Open the netlink handle if it is closed. A changed family id means the
 * module was registered anew: a reload, even if its uptime has already
 * passed the old one.
 */
static int jm_open(struct jm_state *s)
{
	int err, fam;

	if (s->nl)
		return 0;
	err = jnl_open(&s->nl);
	if (err)
		return err;
	fam = jnl_family_id(s->nl);
	if (s->family >= 0 && fam != s->family)
		s->reload_seen = true;
	s->family = fam;
	return 0;
}

/*
 * A request failed: the module may have been reloaded (the old family id
 * is gone), so reconnect and try once more. -EPERM is final. If the
 * module cannot be reached any more, *op says so.
 */
static int jm_retry(struct jm_state *s, int err, enum jnl_op *op)
{
	int oerr;

	if (err != -EPERM) {
		jm_close(s);
		oerr = jm_open(s);
		if (oerr) {
			*op = JNL_OP_OPEN;
			return oerr;
		}
		return 1;
	}
	return err;
}

static void gather_module(struct jm_state *s, struct jm_snapshot *snap)
{
	struct jm_status *st = &snap->st[JM_C_MODULE];
	int err = jm_open(s);

	if (jm_read(s, "version", snap->version, sizeof(snap->version)) < 0)
		snap->version[0] = 0;
	if (jm_read(s, "abi_version", snap->abi, sizeof(snap->abi)) < 0)
		snap->abi[0] = 0;
	/* Not loaded is a state to report, not a failure to gather. */
	if (err && err != -ENOENT)
		jm_fail(st, jm_reason_of(err), err, "netlink: %s",
			jnl_strerror(JNL_OP_OPEN, err));
}

static void gather_node(struct jm_state *s, struct jm_snapshot *snap)
{
	struct jm_status *st = &snap->st[JM_C_NODE];
	enum jnl_op op = JNL_OP_GET_NODE;
	struct timespec ts;
	int err = s->nl ? 0 : -ENOENT;
	uint64_t up;

	if (s->nl) {
		err = jnl_get_node(s->nl, &snap->node);
		if (err) {
			err = jm_retry(s, err, &op);
			if (err == 1)
				err = jnl_get_node(s->nl, &snap->node);
		}
	} else {
		op = JNL_OP_OPEN;
	}
	if (err) {
		const char *k = s->nl ? jnl_kernel_msg(s->nl) : NULL;

		jm_fail(st, jm_reason_of(err), err, "%s%s%s%s%s",
			op == JNL_OP_OPEN ? "" : "GET_NODE: ",
			jnl_strerror(op, err), k ? " (module: " : "",
			k ? k : "", k ? ")" : "");
		return;
	}
	if (s->seen_node && snap->node.uptime_ns < s->last_uptime_ns)
		s->reload_seen = true;
	s->seen_node = true;
	s->last_uptime_ns = snap->node.uptime_ns;
	/*
	 * Load time = now - uptime moves by the request's latency from one
	 * scrape to the next. Keep the first estimate until the module is
	 * reloaded or the clock is stepped, so that changes() of it counts
	 * reloads, not jitter.
	 */
	clock_gettime(CLOCK_REALTIME, &ts);
	up = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	up = up > snap->node.uptime_ns / 1000000 ?
		     up - snap->node.uptime_ns / 1000000 :
		     0;
	if (s->reload_seen || !s->load_time_ms ||
	    up > s->load_time_ms + 1000 || up + 1000 < s->load_time_ms)
		s->load_time_ms = up;
	snap->load_time_ms = s->load_time_ms;
}

static void gather_model(struct jm_state *s, struct jm_snapshot *snap)
{
	struct jm_status *st = &snap->st[JM_C_MODEL];
	char buf[JL_COEF_TEXT_MAX + 1];
	ssize_t n;
	int err;

	err = jm_read_u64(s, "model/generation", &snap->model_generation);
	if (err) {
		jm_sysfs_fail(s, st, "model/generation", err);
		return;
	}
	n = jm_read(s, "model/coefficients", buf, sizeof(buf));
	if (n < 0) {
		jm_sysfs_fail(s, st, "model/coefficients", (int)n);
		return;
	}
	if (jl_coef_parse(buf, (jl_size)n, &snap->coef))
		jm_fail(st, JM_FAILED, -EINVAL,
			"%s/model/coefficients: cannot parse '%s'", s->sysfs,
			buf);
}

static void gather_meter(struct jm_state *s, struct jm_snapshot *snap)
{
	struct jm_status *st = &snap->st[JM_C_METER];
	char buf[256];
	ssize_t n = jm_read(s, "rapl/status", buf, sizeof(buf));

	if (n < 0) {
		jm_sysfs_fail(s, st, "rapl/status", (int)n);
		return;
	}
	if (!strncmp(buf, "absent", 6)) {
		const char *r = buf + 6;

		while (*r == ':' || *r == ' ')
			r++;
		/* Long reasons are cut: a label, not a log. */
		snprintf(snap->meter_reason, sizeof(snap->meter_reason),
			 "%.*s", (int)sizeof(snap->meter_reason) - 1,
			 *r ? r : "unknown");
		return;
	}
	snap->meter_present = true;
	snprintf(snap->meter, sizeof(snap->meter), "%.*s",
		 (int)sizeof(snap->meter) - 1, buf);
	snap->have_wraps = !jm_read_u64(s, "rapl/wraps", &snap->wraps);
	snap->have_bogus =
		!jm_read_u64(s, "rapl/bogus_reads", &snap->bogus_reads);
}

/* Energy descending, then pid, so the top N is stable between scrapes. */
static int jm_cmp_energy(const void *a, const void *b)
{
	const struct task_rec *x = *(const struct task_rec *const *)a;
	const struct task_rec *y = *(const struct task_rec *const *)b;

	if (x->energy_uj != y->energy_uj)
		return x->energy_uj > y->energy_uj ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static void gather_process(struct jm_state *s, struct jm_snapshot *snap)
{
	struct jm_status *st = &snap->st[JM_C_PROCESS];
	struct task_rec *recs, **idx;
	size_t n, keep;
	int err;

	enum jnl_op op = JNL_OP_DUMP;

	if (!s->nl) {
		jm_fail(st, JM_NOT_LOADED, -ENOENT, "%s",
			jnl_strerror(JNL_OP_OPEN, -ENOENT));
		return;
	}
	err = jnl_dump_tasks(s->nl, false, &recs, &n);
	if (err) {
		err = jm_retry(s, err, &op);
		if (err == 1)
			err = jnl_dump_tasks(s->nl, false, &recs, &n);
	}
	if (err) {
		jm_fail(st, jm_reason_of(err), err, "%s%s",
			op == JNL_OP_OPEN ? "" : "DUMP_TASKS: ",
			jnl_strerror(op, err));
		return;
	}
	snap->procs_seen = n;
	keep = n < s->top ? n : s->top;
	idx = malloc((n ? n : 1) * sizeof(*idx));
	snap->procs = malloc((keep ? keep : 1) * sizeof(*snap->procs));
	if (!idx || !snap->procs) {
		free(idx);
		free(recs);
		jm_snapshot_free(snap);
		jm_fail(st, JM_FAILED, -ENOMEM, "out of memory");
		return;
	}
	/* Sort pointers: the records are large, 10,000 of them are common. */
	for (size_t i = 0; i < n; i++)
		idx[i] = &recs[i];
	qsort(idx, n, sizeof(*idx), jm_cmp_energy);
	for (size_t i = 0; i < keep; i++)
		snap->procs[i] = *idx[i];
	snap->nprocs = keep;
	free(idx);
	free(recs);
	/*
	 * Without CAP_SYS_PTRACE the dump leaves out other users' processes:
	 * the series are then the top of a part, which must not pass for
	 * the whole. Reported as a permission failure; the visible
	 * processes are still exported.
	 */
	if (!jm_capable(CAP_SYS_PTRACE))
		jm_fail(st, JM_PERMISSION, -EPERM,
			"DUMP_TASKS: without CAP_SYS_PTRACE only this user's "
			"(uid %u) processes are visible; the top %u is of "
			"those",
			(unsigned int)getuid(), s->top);
}

bool jm_cgroup_wanted(const struct jm_state *s, const char *path)
{
	if ((int)cgname_depth(path) > s->cg_depth)
		return false;
	return !s->cg_have_match || !regexec(&s->cg_match, path, 0, NULL, 0);
}

static void gather_cgroup(struct jm_state *s, struct jm_snapshot *snap)
{
	struct jm_status *st = &snap->st[JM_C_CGROUP];
	enum jnl_op op = JNL_OP_DUMP;
	struct cgroup_rec *recs;
	size_t n, k = 0;
	int err;

	if (!s->nl) {
		jm_fail(st, JM_NOT_LOADED, -ENOENT, "%s",
			jnl_strerror(JNL_OP_OPEN, -ENOENT));
		return;
	}
	err = jnl_dump_cgroups(s->nl, &recs, &n);
	if (err) {
		err = jm_retry(s, err, &op);
		if (err == 1)
			err = jnl_dump_cgroups(s->nl, &recs, &n);
	}
	if (err) {
		const char *kmsg = s->nl ? jnl_kernel_msg(s->nl) : NULL;

		/* A module from before cgroups does not know the command. */
		if (err == -EOPNOTSUPP && op != JNL_OP_OPEN)
			jm_fail(st, JM_UNSUPPORTED, err,
				"DUMP_CGROUPS: the loaded module has no cgroup "
				"interface (older than the exporter?)");
		else
			jm_fail(st, jm_reason_of(err), err, "%s%s%s%s%s",
				op == JNL_OP_OPEN ? "" : "DUMP_CGROUPS: ",
				jnl_strerror(op, err), kmsg ? " (module: " : "",
				kmsg ? kmsg : "", kmsg ? ")" : "");
		return;
	}
	/* Without it idle energy is the node's alone: a cgroup has no share. */
	{
		uint64_t v = 0;

		snap->idle_split = !jm_read_u64(s, "idle_split", &v) && v;
	}
	snap->cgroups_seen = n;
	snap->cgroups = malloc((n ? n : 1) * sizeof(*snap->cgroups));
	if (!snap->cgroups)
		goto nomem;
	for (size_t i = 0; i < n; i++) {
		const struct cgroup_rec *r = &recs[i];
		struct jm_cgroup *c = &snap->cgroups[k];

		if (!jm_cgroup_wanted(s, r->path))
			continue;
		c->path = strdup(r->path);
		if (!c->path)
			goto nomem;
		c->source = r->source;
		c->present = r->present;
		c->energy_uj = r->energy_uj;
		c->idle_uj = r->idle_uj;
		c->cpu_ns = r->feat[JL_F_CPU_NS];
		c->read_bytes = r->read_bytes;
		c->write_bytes = r->write_bytes;
		c->net_tx_bytes = r->feat[JL_F_NET_TX];
		c->net_rx_bytes = r->feat[JL_F_NET_RX];
		c->pagecache_bytes = r->feat[JL_F_PAGECACHE];
		snap->ncgroups = ++k;
	}
	free(recs);
	/*
	 * Without CAP_PERFMON or CAP_SYS_ADMIN the dump holds only the
	 * cgroups whose directories the exporter owns: shown, but flagged
	 * as a part that must not pass for the whole.
	 */
	if (!jm_capable(CAP_PERFMON) && !jm_capable(CAP_SYS_ADMIN))
		jm_fail(st, JM_PERMISSION, -EPERM,
			"DUMP_CGROUPS: without CAP_PERFMON or CAP_SYS_ADMIN "
			"only cgroups whose directories uid %u owns are "
			"visible (%zu)",
			(unsigned int)getuid(), n);
	return;
nomem:
	free(recs);
	jm_snapshot_free(snap);
	jm_fail(st, JM_FAILED, -ENOMEM, "out of memory");
}

/* Log a collector's state when it changes: once, not every scrape. */
static void jm_log_change(struct jm_state *s, int c, const struct jm_status *st)
{
	if (!s->log)
		return;
	if (s->logged[c] && s->last[c] == st->reason)
		return;
	if (st->reason != JM_OK)
		s->log("error", jm_collectors[c].name, st->msg);
	else if (s->logged[c])
		s->log("info", jm_collectors[c].name, "ok again");
	s->logged[c] = true;
	s->last[c] = st->reason;
}

typedef void (*jm_gather_fn)(struct jm_state *s, struct jm_snapshot *snap);

static const jm_gather_fn jm_gather_fns[JM_NR_COLLECTORS] = {
	[JM_C_MODULE] = gather_module,
	[JM_C_NODE] = gather_node,
	[JM_C_MODEL] = gather_model,
	[JM_C_METER] = gather_meter,
	[JM_C_PROCESS] = gather_process,
	[JM_C_CGROUP] = gather_cgroup,
};

void jm_gather(struct jm_state *s, struct jm_snapshot *snap)
{
	uint64_t t0 = jm_now();

	memset(snap, 0, sizeof(*snap));
	for (int c = 0; c < JM_NR_COLLECTORS; c++) {
		struct jm_status *st = &snap->st[c];
		uint64_t t;

		if (!jm_gather_fns[c] || (c == JM_C_PROCESS && !s->top) ||
		    (c == JM_C_CGROUP && s->cg_depth == JM_CG_OFF))
			continue;
		st->enabled = true;
		t = jm_now();
		jm_gather_fns[c](s, snap);
		st->ns = jm_now() - t;
		if (st->reason != JM_OK)
			s->errors[c]++;
		jm_log_change(s, c, st);
	}
	/*
	 * Loaded: the family answered this scrape. An open handle alone
	 * proves nothing: the module may have gone since it was opened, which
	 * the node request finds out (and then closes the handle).
	 */
	snap->loaded = s->nl != NULL;
	snap->nl_version = s->nl ? jnl_version(s->nl) : 0;
	/* Counted once, however many signs of it this scrape saw. */
	if (s->reload_seen)
		s->reloads++;
	s->reload_seen = false;
	snap->ns = jm_now() - t0;
}

/* Render: one function per collector, then the exporter's own families. */

#define NL(a) (sizeof(a) / sizeof((a)[0]))

static void render_module(const struct jm_state *s,
			  const struct jm_snapshot *snap, struct prom_writer *w)
{
	char nlv[16];

	prom_family(w, &f_module_loaded);
	prom_u64(w, NULL, 0, snap->loaded);
	if (snap->loaded) {
		struct prom_label l[] = { { "version", snap->version },
					  { "abi_version", snap->abi },
					  { "netlink_version", nlv } };

		snprintf(nlv, sizeof(nlv), "%u", snap->nl_version);
		prom_family(w, &f_module);
		prom_u64(w, l, NL(l), 1);
	}
	prom_family(w, &f_reloads);
	prom_u64(w, NULL, 0, s->reloads);
}

static void render_node(const struct jm_snapshot *snap, struct prom_writer *w)
{
	const struct node_rec *n = &snap->node;
	struct prom_label src[] = { { "source", out_source_name(n->source) } };
	static const struct {
		const struct prom_family *f;
		int feat;
		unsigned int decimals;
	} feats[] = {
		{ &f_node_cpu, JL_F_CPU_NS, 9 },
		{ &f_node_cycles, JL_F_CYCLES, 0 },
		{ &f_node_instr, JL_F_INSTR, 0 },
		{ &f_node_misses, JL_F_MISSES, 0 },
		{ &f_node_disk, JL_F_DISK, 0 },
		{ &f_node_net_tx, JL_F_NET_TX, 0 },
		{ &f_node_net_rx, JL_F_NET_RX, 0 },
		{ &f_node_pagecache, JL_F_PAGECACHE, 0 },
	};

	if (snap->load_time_ms) {
		prom_family(w, &f_load_time);
		prom_fixed(w, NULL, 0, snap->load_time_ms, 3);
	}
	/* No source has charged anything yet: no energy to show. */
	if (n->source) {
		prom_family(w, &f_node_energy);
		prom_fixed(w, src, NL(src), n->energy_uj, 6);
		prom_family(w, &f_node_idle);
		prom_fixed(w, src, NL(src), n->idle_uj, 6);
	}
	prom_family(w, &f_node_rapl);
	for (int d = 0; d < JL_NR_DOMAINS; d++) {
		struct prom_label l[] = { { "domain", jl_domain_names[d] } };

		if (n->domains & (1u << d))
			prom_fixed(w, l, NL(l), n->domain_uj[d], 6);
	}
	for (size_t i = 0; i < NL(feats); i++) {
		if (!(n->present & REC_F(feats[i].feat)))
			continue;
		prom_family(w, feats[i].f);
		prom_fixed(w, NULL, 0, n->feat[feats[i].feat],
			   feats[i].decimals);
	}
	prom_family(w, &f_node_intervals);
	prom_u64(w, NULL, 0, n->intervals);
	prom_family(w, &f_node_tasks);
	prom_u64(w, NULL, 0, n->tasks_tracked);
}

static void render_model(const struct jm_snapshot *snap, struct prom_writer *w)
{
	const struct jl_coef *c = &snap->coef;
	static const char *const events[] = {
		"cycle", "instruction", "cache_miss", "disk_byte",
		"net_tx_byte", "net_rx_byte", "pagecache_byte",
	};
	const uint64_t pj[] = { c->cycles_pj,	   c->instructions_pj,
				c->cache_miss_pj,  c->disk_byte_pj,
				c->net_tx_byte_pj, c->net_rx_byte_pj,
				c->pagecache_byte_pj };
	struct prom_label cpu[] = { { "term", "cpu_time" } };
	struct prom_label idle[] = { { "term", "idle" } };

	prom_family(w, &f_model_gen);
	prom_u64(w, NULL, 0, snap->model_generation);
	/* Generation 0: no model is set; its zeros are not coefficients. */
	if (!snap->model_generation)
		return;
	prom_family(w, &f_model_power);
	prom_fixed(w, cpu, NL(cpu), c->cpu_time_uw, 6);
	prom_fixed(w, idle, NL(idle), c->idle_uw, 6);
	prom_family(w, &f_model_event);
	for (size_t i = 0; i < NL(events); i++) {
		struct prom_label l[] = { { "event", events[i] } };

		prom_fixed(w, l, NL(l), pj[i], 12);
	}
}

static void render_meter(const struct jm_snapshot *snap, struct prom_writer *w)
{
	struct prom_label l[] = { { "meter", snap->meter },
				  { "reason", snap->meter_reason } };

	prom_family(w, &f_meter_present);
	prom_u64(w, snap->meter_present ? l : l + 1, 1, snap->meter_present);
	if (snap->have_wraps) {
		prom_family(w, &f_meter_wraps);
		prom_u64(w, NULL, 0, snap->wraps);
	}
	if (snap->have_bogus) {
		prom_family(w, &f_meter_bogus);
		prom_u64(w, NULL, 0, snap->bogus_reads);
	}
}

static void render_process(const struct jm_snapshot *snap,
			   struct prom_writer *w)
{
	char pid[16];
	struct prom_label l[] = { { "pid", pid }, { "comm", NULL } };

	prom_family(w, &f_procs_seen);
	prom_u64(w, NULL, 0, snap->procs_seen);
	prom_family(w, &f_proc_energy);
	for (size_t i = 0; i < snap->nprocs; i++) {
		const struct task_rec *t = &snap->procs[i];

		if (!t->source)
			continue; /* nothing charged it: no energy to show */
		snprintf(pid, sizeof(pid), "%" PRIu32, t->pid);
		l[1].value = t->comm;
		prom_fixed(w, l, NL(l), t->energy_uj, 6);
	}
	prom_family(w, &f_proc_cpu);
	for (size_t i = 0; i < snap->nprocs; i++) {
		const struct task_rec *t = &snap->procs[i];

		if (!(t->present & REC_F(JL_F_CPU_NS)))
			continue;
		snprintf(pid, sizeof(pid), "%" PRIu32, t->pid);
		l[1].value = t->comm;
		prom_fixed(w, l, NL(l), t->feat[JL_F_CPU_NS], 9);
	}
}

/*
 * Labels of a cgroup: its path, and what the path names (cgname); empty
 * ones are left out, which Prometheus reads the same as "".
 */
#define JM_CG_LABELS 6
static size_t cg_labels(const struct jm_cgroup *c, const struct cgname *n,
			struct prom_label *l)
{
	size_t k = 0;

	l[k++] = (struct prom_label){ "cgroup", c->path };
	l[k++] = (struct prom_label){ "kind", cgn_kind_names[n->kind] };
	if (n->runtime)
		l[k++] = (struct prom_label){ "runtime", n->runtime };
	if (n->container_id[0])
		l[k++] = (struct prom_label){ "container_id", n->container_id };
	if (n->pod_uid[0])
		l[k++] = (struct prom_label){ "pod_uid", n->pod_uid };
	if (n->qos)
		l[k++] = (struct prom_label){ "qos", n->qos };
	return k;
}

static void render_cgroup(const struct jm_snapshot *snap, struct prom_writer *w)
{
	/* Absent is not zero: energy needs a source, counters a count. */
	static const struct {
		const struct prom_family *f;
		size_t off;
		unsigned int decimals;
		uint32_t needs_source, needs_present;
	} fams[] = {
		{ &f_cg_energy, offsetof(struct jm_cgroup, energy_uj), 6, ~0u, 0 },
		{ &f_cg_idle, offsetof(struct jm_cgroup, idle_uj), 6, ~0u, 0 },
		{ &f_cg_cpu, offsetof(struct jm_cgroup, cpu_ns), 9, 0,
		  REC_F(JL_F_CPU_NS) },
		{ &f_cg_read, offsetof(struct jm_cgroup, read_bytes), 0, 0, 0 },
		{ &f_cg_write, offsetof(struct jm_cgroup, write_bytes), 0, 0, 0 },
		/* Kernels without the tracepoints or TASK_XACCT: no series. */
		{ &f_cg_net_tx, offsetof(struct jm_cgroup, net_tx_bytes), 0, 0,
		  REC_F(JL_F_NET_TX) },
		{ &f_cg_net_rx, offsetof(struct jm_cgroup, net_rx_bytes), 0, 0,
		  REC_F(JL_F_NET_RX) },
		{ &f_cg_pagecache, offsetof(struct jm_cgroup, pagecache_bytes), 0,
		  0, REC_F(JL_F_PAGECACHE) },
	};
	struct cgname *names;

	prom_family(w, &f_cgroups_seen);
	prom_u64(w, NULL, 0, snap->cgroups_seen);
	if (!snap->ncgroups)
		return;
	/* Each family's samples are contiguous: name every cgroup once first. */
	names = malloc(snap->ncgroups * sizeof(*names));
	if (!names) {
		if (!w->err)
			w->err = -ENOMEM;
		return;
	}
	for (size_t i = 0; i < snap->ncgroups; i++)
		cgname_parse(snap->cgroups[i].path, &names[i]);
	for (size_t f = 0; f < NL(fams); f++) {
		prom_family(w, fams[f].f);
		for (size_t i = 0; i < snap->ncgroups; i++) {
			const struct jm_cgroup *c = &snap->cgroups[i];
			struct prom_label l[JM_CG_LABELS];
			size_t nl;

			if ((fams[f].needs_source && !c->source) ||
			    (c->present & fams[f].needs_present) !=
				    fams[f].needs_present)
				continue;
			/* As energy.stat: an idle share only where idle is shared. */
			if (fams[f].f == &f_cg_idle && !snap->idle_split &&
			    !c->idle_uj)
				continue;
			nl = cg_labels(c, &names[i], l);
			prom_fixed(w, l, nl,
				   *(const uint64_t *)((const char *)c + fams[f].off),
				   fams[f].decimals);
		}
	}
	free(names);
}

static void render_exporter(const struct jm_state *s,
			    const struct jm_snapshot *snap,
			    struct prom_writer *w)
{
	struct prom_label v[] = { { "version", JL_VERSION } };
	struct prom_label c[2] = { { "collector", NULL }, { "reason", NULL } };

	prom_family(w, &f_build);
	prom_u64(w, v, NL(v), 1);
	prom_family(w, &f_scrape_dur);
	prom_fixed(w, NULL, 0, snap->ns, 9);
	prom_family(w, &f_coll_dur);
	for (int i = 0; i < JM_NR_COLLECTORS; i++) {
		if (!snap->st[i].enabled)
			continue;
		c[0].value = jm_collectors[i].name;
		prom_fixed(w, c, 1, snap->st[i].ns, 9);
	}
	prom_family(w, &f_coll_ok);
	for (int i = 0; i < JM_NR_COLLECTORS; i++) {
		if (!snap->st[i].enabled)
			continue;
		c[0].value = jm_collectors[i].name;
		prom_u64(w, c, 1, snap->st[i].reason == JM_OK);
	}
	prom_family(w, &f_coll_err);
	for (int i = 0; i < JM_NR_COLLECTORS; i++) {
		if (!snap->st[i].enabled || snap->st[i].reason == JM_OK)
			continue;
		c[0].value = jm_collectors[i].name;
		c[1].value = jm_reason_names[snap->st[i].reason];
		prom_u64(w, c, 2, 1);
	}
	prom_family(w, &f_errors);
	for (int i = 0; i < JM_NR_COLLECTORS; i++) {
		if (!snap->st[i].enabled)
			continue;
		c[0].value = jm_collectors[i].name;
		prom_u64(w, c, 1, s->errors[i]);
	}
}

void jm_render(const struct jm_state *s, const struct jm_snapshot *snap,
	       struct prom_writer *w)
{
	const struct jm_status *st = snap->st;

	if (st[JM_C_MODULE].enabled)
		render_module(s, snap, w);
	if (st[JM_C_NODE].enabled && st[JM_C_NODE].reason == JM_OK)
		render_node(snap, w);
	if (st[JM_C_MODEL].enabled && st[JM_C_MODEL].reason == JM_OK)
		render_model(snap, w);
	if (st[JM_C_METER].enabled && st[JM_C_METER].reason == JM_OK)
		render_meter(snap, w);
	/* A partial view (no CAP_SYS_PTRACE) is still shown, flagged. */
	if (st[JM_C_PROCESS].enabled && (st[JM_C_PROCESS].reason == JM_OK ||
					 st[JM_C_PROCESS].reason == JM_PERMISSION))
		render_process(snap, w);
	if (st[JM_C_CGROUP].enabled && (st[JM_C_CGROUP].reason == JM_OK ||
					st[JM_C_CGROUP].reason == JM_PERMISSION))
		render_cgroup(snap, w);
	render_exporter(s, snap, w);
}

int jm_scrape(struct jm_state *s, struct prom_writer *w, int *failed)
{
	struct jm_snapshot snap;
	int nfail = 0;

	jm_gather(s, &snap);
	jm_render(s, &snap, w);
	for (int i = 0; i < JM_NR_COLLECTORS; i++)
		if (snap.st[i].enabled && snap.st[i].reason != JM_OK)
			nfail++;
	jm_snapshot_free(&snap);
	if (failed)
		*failed = nfail;
	return prom_finish(w);
}
