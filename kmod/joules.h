/* SPDX-License-Identifier: GPL-2.0 */
/* Internal interfaces between the files of joules.ko. */
#ifndef JOULES_H
#define JOULES_H

#include <linux/types.h>
#include <linux/kobject.h>
#include <linux/sched.h>
#include "core.h"

#define JOULES_NAME "joules"

/* Who charged a task's energy (bits; a task may have seen both). */
#define JOULES_SRC_MODEL 0x1
#define JOULES_SRC_RAPL 0x2

/* Operator's choice in sysfs `source`. */
enum joules_source_mode {
	JOULES_MODE_AUTO,	/* RAPL where a meter is registered, model otherwise */
	JOULES_MODE_RAPL,	/* measured only; without a meter nothing is charged */
	JOULES_MODE_MODEL,	/* model even where a meter exists */
};

/*
 * A snapshot of one task's (or, with process = true, one thread group's)
 * totals, taken for a reader: the per-pid file, netlink, exit records.
 */
struct joules_stats {
	pid_t pid;		/* tid, or tgid for a process; in the reader's pid ns */
	pid_t tgid;
	uid_t uid;		/* real uid, in the reader's user ns */
	char comm[TASK_COMM_LEN];
	u64 energy_uj;		/* everything charged: pkg + dram (rapl) or model */
	u64 domain_uj[JL_NR_DOMAINS];	/* measured per RAPL domain */
	u64 idle_uj;		/* idle share, when sysfs idle_split is on */
	u64 cpu_ns;
	u64 cycles;
	u64 instructions;
	u64 cache_misses;
	u64 net_tx_bytes;
	u64 net_rx_bytes;
	u64 pagecache_bytes;
	u64 read_bytes;
	u64 write_bytes;
	/* JL_F_* bits of optional counters: PMU, socket bytes (6.3+), page cache */
	u32 opt_present;
	u32 domains;		/* JL_D_* bits this task was charged from */
	u32 source_mask;	/* JOULES_SRC_* */
	u32 nr_threads;		/* threads summed (1 for a task) */
	u64 model_generation;	/* coefficient set in force at the last charge */
	bool exited;		/* final totals: the task has exited */
};

/* One attribution interval of the whole node (the trainer's record). */
struct joules_node_sample {
	u64 seq;
	u64 realtime_ns;	/* CLOCK_REALTIME at the end of the interval */
	u64 monotonic_ns;	/* CLOCK_MONOTONIC at the end of the interval */
	u64 interval_ns;
	u32 source;		/* JOULES_SRC_* that charged this interval */
	u32 domains;		/* JL_D_* bits measured (rapl) */
	u64 model_generation;
	u64 energy_uj;		/* node energy this interval (idle + tasks) */
	u64 idle_uj;		/* of which idle */
	u64 domain_uj[JL_NR_DOMAINS];
	struct jl_feat feat;	/* feature deltas summed over all tasks */
	u32 nr_tasks;		/* tasks charged this interval */
	u32 freq_mhz;		/* node's effective frequency; 0: unknown */
	u32 band;		/* the model's band used this interval */
};

/* A cgroup's totals (its own tasks' and its descendants'), for a reader. */
struct joules_cg_stats {
	u64 id;			/* cgroup id (the cgroupfs inode number) */
	const char *path;	/* relative to a cgroup namespace's root */
	u32 nr_tasks;		/* live tasks in it and below */
	struct joules_stats st;	/* energy and counters; no pid, tgid, uid, comm */
};

/* Cumulative node totals since load (netlink GET_NODE, sysfs). */
struct joules_node_totals {
	u64 intervals;
	u64 energy_uj;
	u64 idle_uj;
	u64 task_uj;
	u64 domain_uj[JL_NR_DOMAINS];
	struct jl_feat feat;
	u32 source;		/* source of the latest interval */
	u32 domains;
	u64 model_generation;
	u64 tasks_tracked;	/* live task entries */
	u64 uptime_ns;		/* since the module loaded */
};

/* sysfs.c: /sys/kernel/joules/ */
extern struct kobject *joules_kobj;
int joules_sysfs_init(void);
void joules_sysfs_exit(void);

/*
 * model.c: the coefficient sets (one per frequency band), swapped
 * atomically for readers (RCU); every set bumps the generation once.
 */
struct joules_model {
	struct jl_bands bands;
	u64 generation;
	struct rcu_head rcu;
};
int joules_model_init(void);
void joules_model_exit(void);
/* Caller holds rcu_read_lock(); never NULL. */
const struct joules_model *joules_model_get(void);
int joules_model_set(const struct jl_coef *c);	/* a one-band model */
int joules_model_set_bands(const struct jl_bands *b);
/* One coefficient of a one-band model; -EBUSY with several bands. */
int joules_model_set_coef(unsigned int i, u64 v);
/*
 * The set of the band the worker used last (the one in force now): what
 * the single-set files show. Caller holds rcu_read_lock().
 */
const struct jl_coef *joules_model_coef(const struct joules_model *m);
extern unsigned int joules_band_now;	/* written by the worker */
extern u32 joules_freq_mhz_now;		/* 0: unknown */

/*
 * freq.c: the node's effective frequency, which picks the band. A module
 * may register a source (the selftests' test meter); otherwise the PMU's
 * cycles, or cpufreq.
 */
struct joules_freq_source {
	const char *name;
	/* MHz now, or an error (the frequency is then unknown); may sleep. */
	int (*read_mhz)(struct joules_freq_source *s, u32 *mhz);
	void *priv;
};
int joules_freq_register(struct joules_freq_source *s);
void joules_freq_unregister(struct joules_freq_source *s);
bool joules_freq_source(char *buf, size_t size);
/* Worker: this interval's frequency (MHz, 0: unknown), node deltas given. */
u64 joules_freq_now(const struct jl_feat *node);

/* tasks.c: the per-task table. */
int joules_tasks_init(void);
void joules_tasks_exit(void);
/*
 * Fill *st for task t (process = false) or t's whole thread group
 * (process = true, t may be any thread of it). Returns 0, or -ENOENT when
 * joules has no record of t.
 */
struct pid_namespace;
struct user_namespace;
/* ... with pids as seen in ns and the uid as seen in uns. */
int joules_task_stats(struct task_struct *t, bool process,
		      struct pid_namespace *ns, struct user_namespace *uns,
		      struct joules_stats *st);

/* perm.c: who may read what (Documentation/admin-guide.rst). */
struct joules_reader {
	const struct cred *cred;	/* whose ids */
	struct file *file;		/* capabilities of its opener (a netlink
					 * socket), or NULL: the current task's */
};
void joules_reader_current(struct joules_reader *r);
/* The /proc/<pid>/io rule, stricter where a module cannot ask (perm.c). */
bool joules_may_read(struct task_struct *t, const struct joules_reader *r);
int joules_read_lock(struct task_struct *t);	/* exec's lock; -EINTR */
void joules_read_unlock(struct task_struct *t);
/* Node-wide measured energy: CAP_PERFMON or CAP_SYS_ADMIN. */
bool joules_may_read_node(const struct joules_reader *r);
struct cgroup;
/* A cgroup's totals: as node energy, or the owner of its directory. */
bool joules_may_read_cgroup(struct cgroup *cgrp, const struct joules_reader *r);
u64 joules_tasks_tracked(void);

/* hooks.c: scheduler tracepoints. */
int joules_hooks_init(void);
void joules_hooks_exit(void);

/* attr.c: the periodic attribution worker. */
int joules_attr_init(void);
void joules_attr_stop(void);	/* the worker stops; hooks may still run */
void joules_attr_exit(void);	/* hooks gone: fold what the worker held */
void joules_node_get(struct joules_node_totals *nt);

/* fs.c: joulesfs, mounted on /proc/energy. */
int joules_fs_init(void);
void joules_fs_exit(void);
struct seq_file;
struct pid_namespace;
/* The per-pid file's lines, pids as seen in ns; the caller checked the reader. */
int joules_print_stats(struct seq_file *m, struct task_struct *t, bool process,
		       struct pid_namespace *ns);

/* procpid.c: /proc/<pid>/energy of patched kernels. */
void joules_procpid_init(void);
void joules_procpid_exit(void);
ssize_t joules_procpid_status(char *buf);

/* netlink.c: generic netlink family "joules". */
int joules_nl_init(void);
void joules_nl_exit(void);
/* Called from the attribution worker (process context, may sleep). */
void joules_nl_sample(const struct joules_node_sample *s);
void joules_nl_exit_record(const struct joules_stats *st);
void joules_nl_cgroup_exit(const struct joules_cg_stats *cs);
bool joules_nl_exits_wanted(void);


/*
 * Energy sources (source.c). A meter gives per-package, per-domain energy
 * counters: the RAPL MSRs (rapl.c) or, in tests, a synthetic meter module.
 * joules samples each package often enough that a counter of `bits` bits
 * cannot wrap twice between samples at max_power_uw, and accumulates wrap-
 * safe deltas in 64 bits.
 */
struct joules_meter {
	const char *name;
	struct module *owner;
	u32 domains;		/* JL_D_* bits this meter has */
	unsigned int nr_pkgs;
	unsigned int bits;	/* counter width, 1..64 (RAPL: 32) */
	unsigned int esu;	/* one count is 1/2^esu J */
	/*
	 * Optional per-domain units: where bit (1 << JL_D_*) of esu_mask is
	 * set, that domain counts in 1/2^domain_esu[d] J instead of esu
	 * (Intel server DRAM: fixed 15.3 uJ; SPR platform: 1 J). A meter
	 * that leaves both zero uses esu for every domain.
	 */
	u32 esu_mask;
	unsigned int domain_esu[JL_NR_DOMAINS];
	u64 max_power_uw;	/* per domain; larger deltas are bogus */
	/* Read the raw counters of package pkg into raw[JL_D_*]; may sleep. */
	int (*read)(struct joules_meter *m, unsigned int pkg, u64 *raw);
	void *priv;
};
int joules_meter_register(struct joules_meter *m);
void joules_meter_unregister(struct joules_meter *m);

/* For the worker: is a meter registered, and the energy since last take. */
struct joules_meter_take {
	u64 uj[JL_NR_DOMAINS];
	u32 domains;
};
bool joules_meter_take(unsigned int pkg, struct joules_meter_take *t);
int joules_source_init(void);
void joules_source_exit(void);
/* sysfs: RAPL/meter status under /sys/kernel/joules/rapl/ */
int joules_source_sysfs(struct kobject *parent);

/*
 * rapl.c: the RAPL MSR meter, registered at load where the CPU has RAPL.
 * joules_rapl_init() fails only on allocation failure; a CPU without RAPL
 * is not an error, and joules_rapl_absent_reason() then says why ("no
 * RAPL: ..."); it is "" while the MSR meter is registered.
 */
int joules_rapl_init(void);
void joules_rapl_exit(void);
const char *joules_rapl_absent_reason(void);

#endif /* JOULES_H */
