/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The commands joulesctl and joules-bpf both offer -- show PID..., top and
 * record FILE -- as drivers around callbacks of the data source (the
 * module's netlink family, or the BPF collector's maps). The drivers own
 * the options, the loops and the output, so both tools behave and print
 * alike; a source only says how to get its records.
 */
#ifndef JOULES_CMD_H
#define JOULES_CMD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "cli.h"
#include "out.h"

/* show [-j] [-t] PID... */
struct show_args {
	bool json;
	bool thread; /* the PIDs are thread ids */
};

/* clang-format off */
#define SHOW_OPTS(a)						\
	CLI_OPT_FLAG("json", 'j', &(a)->json),			\
	CLI_OPT_FLAG("thread", 't', &(a)->thread)
/* clang-format on */

/*
 * show's command line: the options in opts (SHOW_OPTS and the tool's own),
 * then one or more PIDs. CLI_GO with optind at the first PID, or the
 * status to exit with.
 */
int show_getopt(const struct cli_opt *opts, void (*help)(FILE *fp), int argc,
		char **argv);
/*
 * The operand check of show_getopt(), for a tool whose options may make
 * the operands something else (joulesctl show --cgroup PATH...): are
 * argv[first..argc) all process ids? CLI_GO, or CLI_USAGE with the reason.
 */
int show_check_pids(int first, int argc, char **argv);

/*
 * One record of process `pid` (thread = false) or thread `pid`: 0, or
 * -errno with the reason printed.
 */
typedef int (*show_get_fn)(void *ctx, pid_t pid, bool thread,
			   struct task_rec *out);

/*
 * Print each PID's record (key: value blocks, or JSON lines); a PID that
 * fails is skipped. Returns CLI_OK, or CLI_FAIL if any failed.
 */
int show_run(const struct show_args *a, int n, char **pids, show_get_fn get,
	     void *ctx);

/* top [-d SECS] [-n N] [-b] [-H] [-m ROWS] */
struct top_args {
	uint64_t delay; /* ns between frames */
	uint64_t iterations; /* frames to print, 0: until stopped */
	uint64_t max_rows; /* 0: screen height on a terminal, else all */
	bool batch; /* no screen control */
	bool threads; /* a row per thread */
};

/* clang-format off */
#define TOP_ARGS_INIT { .delay = 2000000000ull }
#define TOP_OPTS(a)							\
	CLI_OPT_SECS("delay", 'd', &(a)->delay, 0,			\
		     "bad delay '%s' (positive seconds)"),		\
	CLI_OPT_COUNT("iterations", 'n', &(a)->iterations,		\
		      "bad iteration count '%s'"),			\
	CLI_OPT_FLAG("batch", 'b', &(a)->batch),			\
	CLI_OPT_FLAG("threads", 'H', &(a)->threads),			\
	CLI_OPT_COUNT("max-rows", 'm', &(a)->max_rows, "bad row count '%s'")
/* clang-format on */

struct top_source {
	/*
	 * A snapshot of every process (threads: every thread), fed to
	 * top_update(). 0; 1 when a signal cut it short (top ends quietly);
	 * or -errno with the reason printed.
	 */
	int (*snapshot)(void *ctx, bool threads, struct top_state *ts);
	/*
	 * After each frame's snapshot: append the source's part of the
	 * summary line ("joulesctl top - 12:00:00, every 2 s" comes first).
	 */
	void (*summary)(void *ctx, char *buf, size_t size);
	void *ctx;
};

/*
 * A snapshot, then a frame every a->delay: the summary line and
 * top_print()'s table, the screen cleared first on a terminal (unless
 * batch). Returns the exit status.
 */
int top_run(const struct top_args *a, const struct top_source *src);

/*
 * The same for a source whose rows are not tasks (joulesctl top
 * --cgroups): print(ctx, ...) prints each frame, summary line first,
 * instead of top_print() of the snapshot's tasks.
 */
typedef void (*top_print_fn)(void *ctx, FILE *fp, size_t max_rows,
			     const char *summary);
int top_run_rows(const struct top_args *a, const struct top_source *src,
		 top_print_fn print);

/* record [-c N] [-D SECS] FILE */
struct record_args {
	uint64_t count; /* rows, 0: no limit */
	uint64_t duration; /* ns, 0: no limit */
};

/* clang-format off */
#define RECORD_OPTS(a)							\
	CLI_OPT_COUNT("count", 'c', &(a)->count, "bad count '%s'"),	\
	CLI_OPT_SECS("duration", 'D', &(a)->duration, 0,		\
		     "bad duration '%s' (positive seconds)")
/* clang-format on */

/* record's command line, as show_getopt(), with one FILE (argv[optind]). */
int record_getopt(const struct cli_opt *opts, void (*help)(FILE *fp), int argc,
		  char **argv);

/* What record_source.next returns. */
enum {
	RECORD_NONE = 0, /* nothing this time: ask again (unless stopped) */
	RECORD_SAMPLE = 1, /* *s holds the next row */
	RECORD_END = 2, /* the duration is over */
	RECORD_FAIL = -1, /* failed, reason printed */
};

struct record_source {
	/*
	 * The file is open and has its header: get ready, and say when the
	 * duration starts. 0, or -errno (reported against the file).
	 */
	int (*start)(void *ctx, uint64_t *start_ns);
	/* The next sample, waiting at most until end_ns (0: no end). */
	int (*next)(void *ctx, uint64_t end_ns, struct sample_rec *s);
	void *ctx;
};

/*
 * Write the samples to path ('-': standard output) in the trainer's CSV,
 * until a->count rows, a->duration or a signal. Returns the exit status.
 */
int record_run(const struct record_args *a, const char *path,
	       const struct record_source *src);

#endif /* JOULES_CMD_H */
