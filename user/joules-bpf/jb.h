/* SPDX-License-Identifier: GPL-2.0 */
/* joules-bpf: what the subcommands share. See Documentation/bpf.rst. */
#ifndef JOULES_BPF_TOOL_H
#define JOULES_BPF_TOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cli.h"
#include "core.h"
#include "out.h"
#include "joules_bpf.h"

struct joules_bpf; /* the skeleton (joules.skel.h) */
struct bpf_link;

#define JB_PIN_DIR "/sys/fs/bpf/joules"
#define JB_BTF_DEFAULT "/sys/kernel/btf/vmlinux"

/* Options every command that touches BPF shares (JB_COMMON_OPTS). */
struct jb_opts {
	const char *btf; /* --btf or $JOULES_BPF_BTF */
	const char *pin_dir; /* $JOULES_BPF_PIN_DIR or JB_PIN_DIR */
	uint32_t max_tasks; /* --max-tasks */
	bool verbose; /* --verbose: libbpf's info messages too */
	bool have_coef; /* --coefficients / --coef given */
	struct jl_coef coef;
};

/* cli_opt table entries (and their handlers) for the shared options. */
enum { JB_OPT_BTF = 0x100, JB_OPT_MAX_TASKS, JB_OPT_COEF };
int jb_opt_max_tasks(void *o, const char *cmd, const char *arg);
int jb_opt_coef_file(void *o, const char *cmd, const char *arg);
int jb_opt_coef(void *o, const char *cmd, const char *arg);
/* clang-format off */
#define JB_COMMON_OPTS(o)						\
	CLI_OPT_STR("btf", JB_OPT_BTF, &(o)->btf),			\
	CLI_OPT_FUNC("max-tasks", JB_OPT_MAX_TASKS, jb_opt_max_tasks, (o)), \
	CLI_OPT_FUNC("coefficients", 'C', jb_opt_coef_file, (o)),	\
	CLI_OPT_FUNC("coef", JB_OPT_COEF, jb_opt_coef, (o)),		\
	CLI_OPT_FLAG("verbose", 'v', &(o)->verbose)
/* clang-format on */
#define JB_COMMON_HELP                                                                \
	"  -C, --coefficients FILE  model coefficients (joules-train's output, or\n"  \
	"                           /sys/kernel/joules/model/coefficients): energy\n" \
	"                           per task; without them energy is absent\n"        \
	"      --coef \"LINE\"        the same given inline: nine numbers\n"          \
	"      --max-tasks N        task map size if a collector is loaded here\n"    \
	"                           (default 16384)\n"                                \
	"      --btf PATH           kernel BTF (default /sys/kernel/btf/vmlinux)\n"   \
	"  -v, --verbose            libbpf's informational messages too\n"
void jb_opts_init(struct jb_opts *o);

/*
 * Privilege and kernel checks, in the order users hit them; each prints
 * the reason and returns CLI_FAIL, or CLI_OK.
 */
int jb_check_root(void);
int jb_check_btf(const struct jb_opts *o);

/* A loaded collector: ours (loaded in this process) or a running one's maps. */
struct jb_coll {
	struct joules_bpf *skel; /* NULL when reading a pinned collector */
	int tasks_fd, procs_fd, cpus_fd, stats_fd, meta_fd;
	unsigned int nr_cpus; /* possible CPUs */
	uint32_t max_tasks; /* from the map itself */
	struct jb_meta meta;
	/* Ours only: what keeps it attached. */
	struct bpf_link **links;
	size_t nlinks;
	int *perf_fds;
	size_t nperf;
	bool pinned; /* we pinned the maps (run) */
	const char *pin_dir;
};

/*
 * Load and attach a collector in this process (-errno, reason printed).
 * Hardware counters whose events cannot be opened on every online CPU are
 * absent; so is the tick if its events cannot be opened (warned).
 */
int jb_coll_load(struct jb_coll *c, const struct jb_opts *o);
/* Pin the maps of a loaded collector under o->pin_dir (run). */
int jb_coll_pin(struct jb_coll *c, const struct jb_opts *o);
/*
 * Open the running collector's pinned maps. -ENOENT: none is running
 * (nothing pinned, or its loader is gone: *stale_pid says which).
 */
int jb_coll_open_pinned(struct jb_coll *c, const struct jb_opts *o,
			pid_t *stale_pid);
/*
 * The same for a command that needs the running collector, jb_check_root()
 * first: when none runs, says so (and, with say_where, where a dead one
 * left its maps). CLI_OK, or CLI_FAIL with the reason printed.
 */
int jb_coll_open_running(struct jb_coll *c, const struct jb_opts *o,
			 bool say_where);
/*
 * The running collector if there is one, else load one here (top, record);
 * jb_check_root() first, then signals are caught (cli_catch_signals()).
 * 0 or -errno, reason printed.
 */
int jb_coll_get(struct jb_coll *c, const struct jb_opts *o, bool *own);
void jb_coll_close(struct jb_coll *c);
int jb_coll_write_meta(struct jb_coll *c);

struct jb_task_ent {
	uint32_t tid;
	struct jb_task v;
};

struct jb_proc_ent {
	uint32_t tgid;
	struct jb_proc v;
};

/* Everything at one instant, for show, top and record. */
struct jb_snap {
	struct jb_task_ent *tasks; /* sorted by tid */
	size_t ntasks;
	struct jb_proc_ent *procs; /* sorted by tgid */
	size_t nprocs;
	struct jb_counts node; /* sum over CPUs */
	uint32_t node_hw_seen;
	uint64_t ran;
	uint64_t switches;
	uint64_t stats[JB_NR_STATS];
	uint64_t mono_ns;
};

int jb_snap_take(struct jb_coll *c, struct jb_snap *s, bool with_tasks);
void jb_snap_free(struct jb_snap *s);
/* Node counters only (no map dump): cheap, for record. */
int jb_node_read(struct jb_coll *c, struct jb_snap *s);

/*
 * Records in out.h's form. Process records sum living threads and the
 * folded totals of exited ones. Returns the number of records, or -errno;
 * *recs is malloc()ed.
 */
int jb_records(const struct jb_snap *s, const struct jb_opts *o, bool threads,
	       struct task_rec **recs);
/* One process (thread = false) or thread. -ESRCH: not known to the collector. */
int jb_record_one(const struct jb_snap *s, const struct jb_opts *o, pid_t id,
		  bool thread, struct task_rec *out);

/*
 * Model energy (uJ) of cumulative feature totals with the core's
 * jl_model_fj(), without its saturation at 2^64 fJ (18 kJ) for
 * long-lived totals (uses linearity; at most 1 uJ low above that).
 */
uint64_t jb_model_uj(const struct jl_coef *c, const struct jl_feat *f);

/*
 * The node's features from prev to cur (hardware counters present in
 * hw_present), as the model's input: what top and record charge.
 */
void jb_node_feat(const struct jb_counts *cur, const struct jb_counts *prev,
		  uint32_t hw_present, struct jl_feat *f);

int cmd_run(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_stop(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_record(int argc, char **argv);

#endif /* JOULES_BPF_TOOL_H */
