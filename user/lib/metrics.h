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
 * Collectors are a table (jm_collectors[]): a new source of series (the
 * per-cgroup families once the module has a cgroup netlink API) is one more
 * entry, one gather function and one render function. A collector that
 * fails leaves its families out -- never zeros -- and says why in
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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core.h"
#include "out.h"
#include "prom.h"

struct jnl;

enum jm_collector {
	JM_C_MODULE, /* joules_module_*: loaded, version */
	JM_C_NODE, /* joules_node_*: netlink GET_NODE */
	JM_C_MODEL, /* joules_model_*: sysfs model/ */
	JM_C_METER, /* joules_meter_*: sysfs rapl/ */
	JM_C_PROCESS, /* joules_process_*: DUMP_TASKS, only with top N */
	JM_C_CGROUP, /* planned: needs the module's cgroup netlink API */
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

struct jm_collector_info {
	const char *name; /* the `collector` label */
	const char *what; /* for --help */
	bool planned; /* not implemented yet: never gathered nor rendered */
};
extern const struct jm_collector_info jm_collectors[JM_NR_COLLECTORS];
extern const char *const jm_reason_names[JM_NR_REASONS];

/* Largest --processes top=N: per-pid series are the cardinality risk. */
#define JM_MAX_TOP 1000

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

	/* process: the top N by energy, energy descending */
	struct task_rec *procs;
	size_t nprocs;
	size_t procs_seen; /* records in the dump */
};

/* Log callback: level is "error", "warn" or "info". */
typedef void (*jm_log_fn)(const char *level, const char *collector,
			  const char *msg);

struct jm_state {
	unsigned int top; /* per-process series for the top N; 0: none */
	const char *sysfs; /* the module's sysfs directory */
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
};

/*
 * top: per-process series for the top N processes by energy (0: none; at
 * most JM_MAX_TOP). sysfs: NULL for $JOULES_SYSFS or /sys/kernel/joules.
 */
void jm_init(struct jm_state *s, unsigned int top, const char *sysfs,
	     jm_log_fn log);
void jm_close(struct jm_state *s);

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
