/* SPDX-License-Identifier: GPL-2.0 */
/* joules-bpf: what the subcommands share. See Documentation/bpf.rst. */
#ifndef JOULES_BPF_TOOL_H
#define JOULES_BPF_TOOL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core.h"
#include "out.h"
#include "joules_bpf.h"

struct joules_bpf; /* the skeleton (joules.skel.h) */
struct bpf_link;

/* Exit statuses (as joulesctl's). */
#define JB_OK 0
#define JB_FAIL 1
#define JB_USAGE 2

#define JB_PIN_DIR "/sys/fs/bpf/joules"
#define JB_BTF_DEFAULT "/sys/kernel/btf/vmlinux"

extern volatile sig_atomic_t jb_stop;
void jb_catch_signals(void);

void jb_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int jb_usage(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int jb_bad_option(const char *cmd, int argc, char **argv);

uint64_t jb_now_ns(void);
int jb_parse_secs(const char *s, uint64_t *ns);
int jb_parse_count(const char *s, uint64_t *n);
int jb_parse_pid(const char *s, pid_t *pid);
void jb_sleep_ns(uint64_t ns);

/* Options every command that touches BPF shares (see jb_common_opt()). */
struct jb_opts {
	const char *btf; /* --btf or $JOULES_BPF_BTF */
	const char *pin_dir; /* $JOULES_BPF_PIN_DIR or JB_PIN_DIR */
	uint32_t max_tasks; /* --max-tasks */
	bool verbose; /* --verbose: libbpf's info messages too */
	bool have_coef; /* --coefficients / --coef given */
	struct jl_coef coef;
};

/* getopt_long entries and handler for the shared options. */
#define JB_COMMON_SHORT "vC:"
enum { JB_OPT_BTF = 0x100, JB_OPT_MAX_TASKS, JB_OPT_COEF };
/* clang-format off */
#define JB_COMMON_LONG							\
	{ "btf", required_argument, NULL, JB_OPT_BTF },			\
	{ "max-tasks", required_argument, NULL, JB_OPT_MAX_TASKS },	\
	{ "coefficients", required_argument, NULL, 'C' },		\
	{ "coef", required_argument, NULL, JB_OPT_COEF },		\
	{ "verbose", no_argument, NULL, 'v' }
/* clang-format on */
#define JB_COMMON_HELP                                                                \
	"  -C, --coefficients FILE  model coefficients (joules-train's output, or\n"  \
	"                           /sys/kernel/joules/model/coefficients): energy\n" \
	"                           per task; without them energy is absent\n"        \
	"      --coef \"LINE\"        the same given inline: six numbers\n"           \
	"      --max-tasks N        task map size if a collector is loaded here\n"    \
	"                           (default 16384)\n"                                \
	"      --btf PATH           kernel BTF (default /sys/kernel/btf/vmlinux)\n"   \
	"  -v, --verbose            libbpf's informational messages too\n"
void jb_opts_init(struct jb_opts *o);
/* Returns 1 if c was a shared option (handled), 0 if not, JB_USAGE on error. */
int jb_common_opt(struct jb_opts *o, const char *cmd, int c, const char *arg);

/*
 * Privilege and kernel checks, in the order users hit them; each prints
 * the reason and returns JB_FAIL, or JB_OK.
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
/* The running collector if there is one, else load one here (top, record). */
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

int cmd_run(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_stop(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_record(int argc, char **argv);

#endif /* JOULES_BPF_TOOL_H */
