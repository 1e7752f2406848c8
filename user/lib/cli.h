/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the joules command-line tools (joulesctl, joules-bpf) share: exit
 * statuses, messages, signal handling, option parsing by table and the
 * "TOOL COMMAND [ARGS...]" dispatcher. Messages start with the name of the
 * tool that cli_main() runs ("joulesctl: ...").
 */
#ifndef JOULES_CLI_H
#define JOULES_CLI_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* Exit statuses. */
#define CLI_OK 0
#define CLI_FAIL 1
#define CLI_USAGE 2
/* cli_getopt(): options parsed, go on (never an exit status). */
#define CLI_GO (-1)

/* The running tool's name, for messages (set by cli_main()). */
extern const char *cli_prog;

/* Set by SIGINT/SIGTERM/SIGPIPE: loops finish their current step and return. */
extern volatile sig_atomic_t cli_stop;
void cli_catch_signals(void);

/* "TOOL: <message>" on stderr. */
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same prefix and newline for a progress note (not an error). */
void cli_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A usage error of `cmd`: message, then a hint to --help; returns CLI_USAGE. */
int cli_usage(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* After getopt_long() returned '?': name the bad option; returns CLI_USAGE. */
int cli_bad_option(const char *cmd, int argc, char **argv);

/* CLOCK_MONOTONIC in ns. */
uint64_t cli_now_ns(void);
/* Sleep ns unless a signal stops us first (cli_stop). */
void cli_sleep_ns(uint64_t ns);

/* Positive number of seconds (fractions allowed) as ns; -EINVAL otherwise. */
int cli_parse_secs(const char *s, uint64_t *ns);
/* Positive decimal count. */
int cli_parse_count(const char *s, uint64_t *n);
/* Process/thread id. */
int cli_parse_pid(const char *s, pid_t *pid);

/* What an option table entry does with its argument. */
enum cli_opt_kind {
	CLI_FLAG, /* bool *dst = true; no argument */
	CLI_BITS, /* unsigned int *dst |= val; no argument */
	CLI_STR, /* const char **dst = the argument */
	CLI_COUNT, /* uint64_t *dst = a positive count, else usage error `bad` */
	CLI_SECS, /* uint64_t *dst = positive seconds >= val ns, else `bad` */
	CLI_FUNC, /* fn(dst, cmd, argument): 0, or an exit status to end with */
};
/* The arguments of the kinds from CLI_STR on are required. */
#define CLI_HAS_ARG(kind) ((kind) >= CLI_STR)

/*
 * One option of a command: --name, and -key when key is a character (long
 * only when key > 0xff). -h/--help is implicit. `bad` is a usage message
 * whose %s is the rejected argument.
 */
struct cli_opt {
	const char *name; /* NULL ends the table */
	int key;
	enum cli_opt_kind kind;
	void *dst;
	const char *bad;
	uint64_t val;
	int (*fn)(void *dst, const char *cmd, const char *arg);
};

/* Table entries; key is a character, or a number > 0xff for long only. */
/* clang-format off */
#define CLI_OPT_FLAG(n, k, p) \
	{ .name = (n), .key = (k), .kind = CLI_FLAG, .dst = (p) }
#define CLI_OPT_BITS(n, k, p, bits) \
	{ .name = (n), .key = (k), .kind = CLI_BITS, .dst = (p), .val = (bits) }
#define CLI_OPT_STR(n, k, p) \
	{ .name = (n), .key = (k), .kind = CLI_STR, .dst = (p) }
#define CLI_OPT_COUNT(n, k, p, msg) \
	{ .name = (n), .key = (k), .kind = CLI_COUNT, .dst = (p), .bad = (msg) }
#define CLI_OPT_SECS(n, k, p, min_ns, msg) \
	{ .name = (n), .key = (k), .kind = CLI_SECS, .dst = (p), .bad = (msg), \
	  .val = (min_ns) }
#define CLI_OPT_FUNC(n, k, f, p) \
	{ .name = (n), .key = (k), .kind = CLI_FUNC, .dst = (p), .fn = (f) }
#define CLI_OPT_END { .name = NULL }
/* clang-format on */

/* A command's command line: options, help, and how many operands. */
struct cli_cmdline {
	const char *cmd;
	const struct cli_opt *opts; /* may be NULL: -h alone */
	void (*help)(FILE *fp);
	int min_args, max_args; /* max_args < 0: any number */
	const char *operand; /* "missing <operand>" when fewer than min_args */
	bool in_order; /* options end at the first operand (getopt's "+") */
};

/*
 * Parse argv's options in order (argv[0] is the command). Returns CLI_GO
 * with optind at the first operand, or the status to exit with: CLI_OK
 * after -h printed the help, CLI_USAGE (reason printed) for a bad option,
 * value or operand count, or what a CLI_FUNC option returned.
 */
int cli_getopt(const struct cli_cmdline *cl, int argc, char **argv);

/* A subcommand: TOOL NAME ARGS... runs fn(argc, argv) with argv[0] = NAME. */
struct cli_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

struct cli_tool {
	const char *name;
	const char *about; /* paragraphs between "Usage:" and "Commands:" */
	const struct cli_cmd *cmds;
	size_t ncmds;
	void (*version)(void); /* prints the --version line */
};

/*
 * main() of a tool: --help/-h/help, --version/-V, or the named command;
 * returns the exit status.
 */
int cli_main(const struct cli_tool *t, int argc, char **argv);

#endif /* JOULES_CLI_H */
