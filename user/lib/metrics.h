/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The joules metric families for Prometheus (Documentation/metrics.rst),
 * shared by joules-exporter and `joulesctl export`.
 *
 * A scrape has two halves. jm_gather() does the I/O: netlink requests to
 * the module and reads of /sys/kernel/joules, one collector at a time,
 * each with its own status (ok, module not loaded, missing privilege, ...)
 * and duration, into a jm_snapshot. jm_render() turns a snapshot into the
 * exposition without any I/O, so the host tests render made-up snapshots
 * and check them with promtool.
 *
 * Collectors are a table (jm_collectors[]): a new source of series is one
 * more entry, a file of collector/ with its gather and render functions
 * and its test next to it (NAME_test.c). A collector
 * that fails leaves its families out -- never zeros -- and says why in
 * joules_exporter_collector_success/_error and in one log line per change.
 *
 * Counters are the module's own totals since it loaded. A module reload
 * restarts them from zero, which is a counter reset to Prometheus: rate()
 * and increase() handle it. The exporter does not carry offsets across
 * reloads: its own restart would then look like a reset too and make
 * increase() count the module's whole total again (metrics.rst has the
 * details). It counts the reloads it notices.
 */
#ifndef JOULES_METRICS_H
#define JOULES_METRICS_H

#include <limits.h>
#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core.h"
#include "rec.h"
#include "prom.h"

struct jnl;
struct jm_kepler; /* collector/kepler.c */
struct jm_kepler_state;

enum jm_collector {
	JM_C_MODULE, /* joules_module_*: loaded, version */
	JM_C_NODE, /* joules_node_*: netlink GET_NODE */
	JM_C_MODEL, /* joules_model_*: sysfs model/ */
	JM_C_METER, /* joules_meter_*: sysfs rapl/ */
	JM_C_WALLMETER, /* joules_wall_meter_*: sysfs wallmeter/ */
	JM_C_STATIC, /* joules_static_power_*: sysfs static_power */
	JM_C_PROCESS, /* joules_process_*: DUMP_TASKS, only with top N */
	JM_C_CGROUP, /* joules_cgroup_*: DUMP_CGROUPS, unless --cgroups=off */
	JM_NR_COLLECTORS
};

/* Why a collector has no data (the `reason` label). */
enum jm_reason {
	JM_OK,
	JM_NOT_LOADED, /* "module_not_loaded" */
	JM_PERMISSION, /* "permission": a missing capability */
	JM_UNSUPPORTED, /* "unsupported": the module lacks the interface */
	JM_FAILED, /* "error": anything else */
	JM_NR_REASONS
};

struct jm_state;
struct jm_snapshot;
struct prom_writer;

/* Reasons for which a collector's series are rendered (jm_collector_info.shown). */
#define JM_SHOWN_OK (1u << JM_OK)
/* What is visible without the privilege, flagged by the error series. */
#define JM_SHOWN_PARTIAL (JM_SHOWN_OK | 1u << JM_PERMISSION)
#define JM_SHOWN_ALWAYS ((1u << JM_NR_REASONS) - 1)

struct jm_collector_info {
	const char *name; /* the `collector` label */
	const char *what; /* for --help */
	bool planned; /* not implemented yet: never gathered nor rendered */
	/* I/O into the snapshot; sets the collector's status on failure. */
	void (*gather)(struct jm_state *s, struct jm_snapshot *snap);
	/* The collector's families from the snapshot, no I/O. */
	void (*render)(const struct jm_state *s, const struct jm_snapshot *snap,
		       struct prom_writer *w);
	/* JM_SHOWN_*: rendered when its status is one of these. */
	unsigned int shown;
	/* Is it on with these settings? NULL: always. */
	bool (*wanted)(const struct jm_state *s);
};
extern const struct jm_collector_info *const jm_collectors[JM_NR_COLLECTORS];
extern const char *const jm_reason_names[JM_NR_REASONS];

/* --compat: other exporters' metric names served as well as joules' own. */
enum jm_compat {
	JM_COMPAT_NONE,
	JM_COMPAT_KEPLER, /* kepler_* (Kepler 0.10+), collector/kepler.c */
};

/*
 * Most lines of sysfs static_power kept: one per RAPL domain of each
 * package and one for the wall meter, far fewer than this.
 */
#define JM_STATIC_MAX 64

/* Largest --processes top=N: per-pid series are the cardinality risk. */
#define JM_MAX_TOP 1000

/* --cgroups: off, or the deepest level exported ("/" is 0). */
#define JM_CG_OFF (-1)
#define JM_CG_ALL INT_MAX

struct jm_status {
	bool enabled; /* gathered this scrape */
	enum jm_reason reason;
	int err; /* negative errno, 0 */
	char msg[256]; /* why, for the log */
	uint64_t ns; /* time spent gathering */
};

struct jm_snapshot {
	struct jm_status st[JM_NR_COLLECTORS];
	uint64_t ns; /* the whole gather */
	uint64_t load_time_ms; /* Unix time the module loaded, 0: unknown */

	/* module */
	bool loaded;
	unsigned int nl_version; /* netlink family version */
	char version[32]; /* sysfs version, "" if unreadable */
	char abi[16]; /* sysfs abi_version */

	/* node */
	struct node_rec node;

	/* model */
	uint64_t model_generation;
	struct jl_coef coef; /* valid when model_generation > 0 */

	/* meter */
	bool meter_present;
	char meter[64]; /* name when present */
	char meter_reason[192]; /* why absent */
	bool have_wraps, have_bogus;
	uint64_t wraps, bogus_reads;

	/* wallmeter: what was read; a figure without have_* is left out */
	struct jm_wallmeter {
		enum {
			JM_WALL_UNREAD, /* status not read or not understood */
			JM_WALL_ABSENT, /* never fed; reason says so */
			JM_WALL_IN_FORCE,
			JM_WALL_SILENT, /* no reading for longer than timeout_ms */
		} state;
		char meter[64]; /* name, in force or silent */
		char reason[192]; /* why absent */
		bool have_readings, have_refused, have_energy, have_pending,
			have_residual, have_window, have_power;
		uint64_t readings, refused, energy_uj, window_ms, power_uw;
		int64_t pending_uj, residual_uj;
	} wall;

	/* static: the lines of sysfs static_power that parsed, in its order */
	struct jm_static {
		char scope[16]; /* "pkg0", "pkg1", ..., "wall" */
		char domain[8]; /* pkg, core, dram, psys; meter (wall) */
		char in_force[12]; /* measured, set, none */
		bool have_power, have_age; /* "-": nothing measured yet */
		uint64_t power_uw, age_ms, idle_ms;
	} statics[JM_STATIC_MAX];
	size_t nstatics;

	/* process: the top N by energy, energy descending */
	struct task_rec *procs;
	size_t nprocs;
	size_t procs_seen; /* records in the dump */

	/* cgroup: those within the depth and the match, by path */
	struct jm_cgroup *cgroups;
	size_t ncgroups;
	size_t cgroups_seen; /* records in the dump */
	bool idle_split; /* sysfs idle_split: idle energy is shared out to tasks */

	/* --compat kepler: the series and what joules cannot know of them */
	struct jm_kepler *kepler;
};

/* What the cgroup families need of a cgroup record (those are 4 KiB). */
struct jm_cgroup {
	char *path; /* malloc()ed; "/" is the root of the exporter's cgroup namespace */
	uint32_t source; /* 0: nothing charged it, no energy to show */
	/* REC_F() of the features counted (CPU time, socket bytes, ...) */
	uint32_t present;
	uint64_t energy_uj, idle_uj, cpu_ns, read_bytes, write_bytes;
	/* where present */
	uint64_t net_tx_bytes, net_rx_bytes, pagecache_bytes;
	/* bits of domain_uj[] present (--compat kepler's zones) */
	uint32_t domains;
	uint64_t domain_uj[JL_NR_DOMAINS];
};

/* Log callback: level is "error", "warn" or "info". */
typedef void (*jm_log_fn)(const char *level, const char *collector,
			  const char *msg);

struct jm_state {
	unsigned int top; /* per-process series for the top N; 0: none */
	int cg_depth; /* JM_CG_OFF, or the deepest cgroup level exported */
	int cg_root_fd; /* jm_set_cgroup_root(), or -1 */
	/* Why a root could not be used (then no cgroup series), or "". */
	char cg_root_err[192];
	bool cg_have_match;
	regex_t cg_match; /* only cgroups whose path matches, if cg_have_match */
	const char *sysfs; /* the module's sysfs directory */
	const char *proc; /* procfs: $JOULES_PROC (tests) or /proc */
	jm_log_fn log; /* may be NULL */
	struct jnl *nl; /* reopened when a request fails */
	int family; /* netlink family id at the last open, or -1 */
	bool seen_node;
	uint64_t last_uptime_ns;
	bool reload_seen; /* this scrape: family id changed, uptime fell */
	uint64_t load_time_ms; /* the module's load time, kept while loaded */
	uint64_t reloads; /* module reloads noticed */
	uint64_t errors[JM_NR_COLLECTORS]; /* failed gathers */
	enum jm_reason last[JM_NR_COLLECTORS]; /* logged state */
	bool logged[JM_NR_COLLECTORS];
	bool ptrace_warned;
	enum jm_compat compat;
	const char *node_name; /* kepler's node_name label */
	uint64_t compat_window_ns; /* shortest window watts are computed over */
	struct jm_kepler_state *kepler; /* counters at the window's ends */
	/*
	 * Energy as users without CAP_PERFMON see it unless live (--energy
	 * live): task and cgroup records in the lagged view, node-wide
	 * figures read at most once per epoch (jm_gather()).
	 */
	bool live;
	bool lagged; /* this scrape: !live and the module's policy is on */
	uint64_t held_at; /* when the held node-wide figures were read */
	struct jm_snapshot *held; /* those figures, malloc()ed */
};

/*
 * top: per-process series for the top N processes by energy (0: none; at
 * most JM_MAX_TOP). sysfs: NULL for $JOULES_SYSFS or /sys/kernel/joules.
 * Every cgroup is exported until jm_set_cgroups() says otherwise.
 */
void jm_init(struct jm_state *s, unsigned int top, const char *sysfs,
	     jm_log_fn log);
/*
 * The final teardown: frees the netlink handle, the cgroup match and the
 * --compat state. Not for reconnecting (that is jm_retry(), the handle
 * only): the settings would be lost.
 */
void jm_close(struct jm_state *s);
/* Serve energy live (true), or as users without CAP_PERFMON see it (default). */
void jm_set_live(struct jm_state *s, bool live);

/*
 * Which cgroups get series: depth JM_CG_OFF (none, the collector is off),
 * JM_CG_ALL, or the deepest level; match NULL, or a POSIX extended
 * regular expression the path ("/kubepods.slice/...") must match. 0, or
 * -EINVAL with the reason in why[size] (a bad expression).
 */
int jm_set_cgroups(struct jm_state *s, int depth, const char *match, char *why,
		   size_t size);
/*
 * Cgroups below the cgroup v2 directory dir, paths relative to it, not the
 * caller's cgroup namespace (--cgroups.root: a container given the host's
 * cgroup2 mount). 0, or -errno with the reason in why[size].
 */
int jm_set_cgroup_root(struct jm_state *s, const char *dir, char *why,
		       size_t size);
/*
 * A root that could not be used (a node without cgroup v2 there): the
 * cgroup collector then fails with this reason, serving no cgroup series,
 * and the other collectors go on.
 */
void jm_set_cgroup_root_failed(struct jm_state *s, const char *why);

/*
 * Serve Kepler's names as well (--compat kepler): node_name is the
 * constant label, window_ns the shortest window the watts gauges are
 * computed over. 0 or -ENOMEM.
 */
int jm_set_compat_kepler(struct jm_state *s, const char *node_name,
			 uint64_t window_ns);
/* Parse a --compat argument: "kepler" or "none". 0 or -EINVAL. */
int jm_parse_compat(const char *arg, enum jm_compat *c);

/* Parse a --cgroups argument: "all", "off" or "depth=N". 0 or -EINVAL. */
int jm_parse_cgroups(const char *arg, int *depth);
/* Does the cgroup at path get series (depth and match)? */
bool jm_cgroup_wanted(const struct jm_state *s, const char *path);

/* Gather every collector into *snap (free it with jm_snapshot_free()). */
void jm_gather(struct jm_state *s, struct jm_snapshot *snap);
void jm_snapshot_free(struct jm_snapshot *snap);

/* The exposition of a snapshot (no I/O). */
void jm_render(const struct jm_state *s, const struct jm_snapshot *snap,
	       struct prom_writer *w);

/*
 * A whole scrape: gather, render and finish into w (prom_init()ed by the
 * caller). Returns prom_finish()'s result. *failed (may be NULL) is the
 * number of enabled collectors that did not succeed.
 */
int jm_scrape(struct jm_state *s, struct prom_writer *w, int *failed);

/*
 * Parse a --processes argument: "top=N" (1..JM_MAX_TOP), "off" or "0".
 * 0 or -EINVAL / -ERANGE.
 */
int jm_parse_processes(const char *arg, unsigned int *top);

#endif /* JOULES_METRICS_H */
