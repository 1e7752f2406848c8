/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared harness of the module benchmarks (run-bench.sh runs them).
 *
 * An A/B benchmark runs the same trial with joules.ko unloaded (A) and
 * loaded (B), alternating A B B A A B ... so that slow drift of the machine
 * (other guests on the host, thermal state) hits both sides alike, and
 * reports per metric the median and the spread of each side and of the
 * per-pair ratio B/A. With bench_def.with_bpf there is a third side, C:
 * the module unloaded and joules-bpf's collector attached; the three are
 * run in rounds whose order rotates (bench_run_ab()). A loaded-only
 * benchmark runs its trial with the module loaded and reports median and
 * spread of each metric.
 *
 * The module is loaded and unloaded, and the collector attached and
 * detached, by shell commands taken from the environment
 * (JOULES_BENCH_LOAD, JOULES_BENCH_UNLOAD, JOULES_BENCH_BPF_ON,
 * JOULES_BENCH_BPF_OFF), so the same programs run in the QEMU guest and on
 * bare metal. Every summary ends in machine-readable lines:
 *
 *   RESULT <bench> <metric> <unit> off=<median> on=<median> ratio=<median>
 *          ratio_min=<min> ratio_max=<max> diff=<median>
 *          [goal=<g> status=met|missed]
 *   RESULT <bench>-bpf <metric> <unit> off=<median> bpf=<median>
 *          ratio=<median> ratio_min=<min> ratio_max=<max> diff=<median>
 *          vs_module=<median of bpf/on>
 *   RESULT <bench>-bpf <metric> <unit> status=skipped reason=<text>
 *
 * The -bpf lines only with with_bpf; "skipped" when the collector could
 * not be attached at all (no joules-bpf, no BTF, no BPF in the kernel):
 * that is a property of the machine, not a failure of the benchmark.
 */
#ifndef JOULES_BENCH_HARNESS_H
#define JOULES_BENCH_HARNESS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define BENCH_MAX_METRICS 8
#define BENCH_MAX_REPS 64

/*
 * Lower is better for every metric here, so a goal is an upper bound: on
 * the ratio B/A in an A/B benchmark, on the value in a loaded-only one.
 * 0 = no goal.
 */
struct bench_metric {
	const char *name;
	const char *unit;
	double goal;
};

/* What is measuring the system during a trial. */
enum bench_state {
	BENCH_OFF, /* neither joules.ko nor joules-bpf */
	BENCH_MODULE, /* joules.ko loaded */
	BENCH_BPF, /* joules-bpf's collector attached, joules.ko unloaded */
	BENCH_NR_STATES,
};

struct bench_def {
	const char *name;
	const struct bench_metric *metrics;
	unsigned int nr_metrics;
	unsigned int reps; /* pairs (A/B) or trials (loaded-only) */
	/*
	 * One trial; fills out[nr_metrics]. Returns 0, or -1 to abort.
	 * loaded: the module is loaded (false for the collector's trials).
	 */
	int (*trial)(void *arg, bool loaded, double *out);
	void *arg;
	/* Optional: called after each loaded trial (leak checks and such). */
	int (*after_loaded)(void *arg);
	bool no_warmup; /* skip the discarded first trial */
	bool with_bpf; /* A/B only: the collector as a third side */
};

/*
 * Switch to a state with the environment's commands (leaving the others
 * first: the module and the collector are never both on); 0 or -1.
 * bench_set_loaded(on) is bench_set_state(on ? BENCH_MODULE : BENCH_OFF).
 */
int bench_set_state(enum bench_state s);
int bench_set_loaded(bool on);
bool bench_module_loaded(void);

/* Run the A/B or loaded-only benchmark; returns 0, 1 if a goal was missed, -1 on error. */
int bench_run_ab(const struct bench_def *d);
int bench_run_loaded(const struct bench_def *d);

/* Helpers. */
double bench_now(void); /* CLOCK_MONOTONIC, seconds */
void bench_sleep(double sec);
int bench_pin(int cpu); /* pin the calling thread; 0 or -1 */
double bench_median(double *v, unsigned int n); /* sorts v */
/* Whole small file, NUL-terminated; its length or -1. */
int bench_read_file(const char *path, char *buf, size_t size);
int bench_write_file(const char *path, const char *s); /* 0 or -1 */
long long bench_read_ll(const char *path); /* one integer, or -1 */
/* threads-max and pid_max before bench_task_room() raised them (-1: not). */
struct bench_limits {
	long long threads, pids;
};
/* Room for n more tasks than the guest's defaults allow; undo with restore. */
void bench_task_room(unsigned long n, struct bench_limits *old);
void bench_task_room_restore(const struct bench_limits *old);

/* /proc/stat: busy (user+nice+system+irq+softirq+steal) and idle ticks, ctxt. */
struct bench_stat {
	unsigned long long busy; /* USER_HZ ticks, all CPUs */
	unsigned long long idle; /* idle + iowait */
	unsigned long long ctxt;
};
int bench_proc_stat(struct bench_stat *s);
/* Sum over CPUs of the "CAL" (function call IPI) line of /proc/interrupts, or -1. */
long long bench_cal_ipis(void);
/*
 * On-CPU time (ns, /proc/<pid>/schedstat) summed over the kworker threads
 * that exist now, or -1: the attribution worker runs as one of them.
 */
double bench_kworker_ns(void);
/* Active objects of the joules_entry slab after shrinking it, or -1. */
long bench_slab_active(long *per_slab);

/*
 * n sleeping tasks until bench_reap_sleepers() (or this process's death):
 * processes made with clone(CLONE_VM), so that 10,000 fit a small guest
 * (each is its own thread group but shares this process's memory: a kernel
 * stack and one page of user stack each), or threads of this process.
 */
int bench_spawn_sleepers(unsigned long n, bool threads);
/*
 * The same kind of processes, each waking every `period` seconds and
 * going back to sleep at once: tasks that run in every interval. Reaped
 * with the sleepers.
 */
int bench_spawn_tickers(unsigned long n, double period);
void bench_reap_sleepers(void);
/* The pids of the processes spawned so far (not threads), and their count. */
const pid_t *bench_sleeper_pids(unsigned long *n);

/*
 * n leaf cgroups (v2) shaped like a Kubernetes node's, under
 * /sys/fs/cgroup/jbench.slice: n / 100 pod-like slices of up to 100
 * container-like scopes each (depth 3), cgroup2 mounted first if need be.
 * 0, or -1 with the reason printed.
 */
int bench_cgroups_make(unsigned long n);
/* Move pid into leaf i, or into the root cgroup when i < 0; 0 or -1. */
int bench_cgroup_move(pid_t pid, long i);
/* Remove the tree bench_cgroups_make(n) made (move its tasks out first). */
void bench_cgroups_remove(unsigned long n);

/* Print no per-trial lines, only the summaries. */
extern bool bench_quiet;

/*
 * A benchmark's command line, one table for all of them: each option a
 * letter, where its value goes, and its name in the usage line ("-n TASKS");
 * flags (no value) set a bool. BENCH_OPT_QUIET is -q (bench_quiet).
 */
enum bench_opt_type {
	BENCH_ULONG, /* unsigned long */
	BENCH_UINT, /* unsigned int */
	BENCH_INT, /* int, may be negative */
	BENCH_DOUBLE, /* double */
	BENCH_STR, /* const char *, the argument itself */
	BENCH_SET, /* bool, set to true */
	BENCH_CLEAR, /* bool, set to false */
};

struct bench_opt {
	char opt;
	enum bench_opt_type type;
	void *dst;
	/* the value's name in the usage line; NULL for flags */
	const char *meta;
};

#define BENCH_OPT_QUIET                            \
	{                                          \
		'q', BENCH_SET, &bench_quiet, NULL \
	}

/*
 * Parse argv by the table (n options). 0, or 2 after printing the usage
 * line to stderr (an unknown option, a missing value, a number that is not
 * one or does not fit): main() returns it.
 */
int bench_parse_args(int argc, char **argv, const char *prog,
		     const struct bench_opt *opts, unsigned int n);

#endif /* JOULES_BENCH_HARNESS_H */
