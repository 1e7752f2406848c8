// SPDX-License-Identifier: GPL-2.0
/*
 * The command-line plumbing joulesctl and joules-bpf share (cli.h): one
 * copy, so both tools word their errors and parse their options alike.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "parse.h"
#include "cli.h"

const char *cli_prog = "joules";
volatile sig_atomic_t cli_stop;

static void cli_on_signal(int sig)
{
	(void)sig;
	cli_stop = 1;
}

void cli_catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	/* No SA_RESTART: a blocking poll()/recv() or a sleep returns EINTR at once. */
	sa.sa_handler = cli_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/*
	 * A closed pipe (joulesctl watch | head) is an ordinary end. Not
	 * SIGHUP: `nohup joules-bpf run &` must keep its SIG_IGN.
	 */
	sigaction(SIGPIPE, &sa, NULL);
}

static void say(const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", cli_prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void cli_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
}

void cli_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s%s%s: ", cli_prog, cmd ? " " : "", cmd ? cmd : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s %s%s--help'.\n", cli_prog, cmd ? cmd : "",
		cmd ? " " : "");
	return CLI_USAGE;
}

int cli_bad_option(const char *cmd, int argc, char **argv)
{
	const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : "?";

	if (optopt && strncmp(arg, "--", 2))
		return cli_usage(cmd,
				 "invalid option '-%c' (or missing argument)",
				 optopt);
	return cli_usage(cmd, "invalid option '%s' (or missing argument)", arg);
}

uint64_t cli_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void cli_sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000u),
			       .tv_nsec = (long)(ns % 1000000000u) };

	while (!cli_stop && nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int cli_parse_secs(const char *s, uint64_t *ns)
{
	const char *why;
	int64_t v;

	if (parse_seconds_ns(s, &v, &why) || v <= 0)
		return -EINVAL;
	*ns = (uint64_t)v;
	return 0;
}

int cli_parse_count(const char *s, uint64_t *n)
{
	const char *why;

	if (parse_u64(s, n, &why) || !*n)
		return -EINVAL;
	return 0;
}

int cli_parse_pid(const char *s, pid_t *pid)
{
	const char *why;
	uint64_t v;

	if (parse_u64(s, &v, &why) || !v || v > 0x3fffffff)
		return -EINVAL;
	*pid = (pid_t)v;
	return 0;
}

/* Enough for any command's table; cli_getopt() refuses a larger one. */
#define CLI_MAX_OPTS 48

static const struct cli_opt *cli_find(const struct cli_opt *opts, int key)
{
	for (; opts && opts->name; opts++)
		if (opts->key == key)
			return opts;
	return NULL;
}

/* Apply one parsed option; 0, or the status to exit with. */
static int cli_apply(const char *cmd, const struct cli_opt *o, char *arg)
{
	uint64_t v;

	switch (o->kind) {
	case CLI_FLAG:
		*(bool *)o->dst = true;
		return 0;
	case CLI_BITS:
		*(unsigned int *)o->dst |= (unsigned int)o->val;
		return 0;
	case CLI_STR:
		*(const char **)o->dst = arg;
		return 0;
	case CLI_COUNT:
		if (cli_parse_count(arg, &v))
			return cli_usage(cmd, o->bad, arg);
		*(uint64_t *)o->dst = v;
		return 0;
	case CLI_SECS:
		if (cli_parse_secs(arg, &v) || v < o->val)
			return cli_usage(cmd, o->bad, arg);
		*(uint64_t *)o->dst = v;
		return 0;
	case CLI_FUNC:
		return o->fn(o->dst, cmd, arg);
	}
	return CLI_FAIL;
}

int cli_getopt(const struct cli_cmdline *cl, int argc, char **argv)
{
	struct option lo[CLI_MAX_OPTS + 2];
	char so[3 * CLI_MAX_OPTS + 3], *p = so;
	const struct cli_opt *o;
	size_t n = 0;
	int c, nargs;

	if (cl->in_order)
		*p++ = '+';
	for (o = cl->opts; o && o->name; o++) {
		if (n == CLI_MAX_OPTS) {
			cli_err("%s: too many options (a bug)", cl->cmd);
			return CLI_FAIL;
		}
		lo[n++] = (struct option){ o->name,
					   CLI_HAS_ARG(o->kind) ?
						   required_argument :
						   no_argument,
					   NULL, o->key };
		if (o->key > 0 && o->key <= 0xff) {
			*p++ = (char)o->key;
			if (CLI_HAS_ARG(o->kind))
				*p++ = ':';
		}
	}
	lo[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	lo[n] = (struct option){ 0 };
	*p++ = 'h';
	*p = 0;

	/* optind = 0 also resets getopt's state between commands (tests). */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		int rc;

		o = c == '?' ? NULL : cli_find(cl->opts, c);
		if (!o && c == 'h') {
			cl->help(stdout);
			return CLI_OK;
		}
		if (!o)
			return cli_bad_option(cl->cmd, argc, argv);
		rc = cli_apply(cl->cmd, o, optarg);
		if (rc)
			return rc;
	}
	nargs = argc - optind;
	if (nargs < cl->min_args)
		return cli_usage(cl->cmd, "missing %s", cl->operand);
	if (cl->max_args >= 0 && nargs > cl->max_args)
		return cli_usage(cl->cmd, "unexpected argument '%s'",
				 argv[optind + cl->max_args]);
	return CLI_GO;
}

static void cli_tool_usage(const struct cli_tool *t, FILE *fp)
{
	fprintf(fp, "Usage: %s [--help] [--version] COMMAND [ARGS...]\n\n%s",
		t->name, t->about);
	fputs("Commands:\n", fp);
	for (size_t i = 0; i < t->ncmds; i++)
		fprintf(fp, "  %-8s %s\n", t->cmds[i].name, t->cmds[i].summary);
	fprintf(fp,
		"\n'%s COMMAND --help' describes each command; see %s(1).\n",
		t->name, t->name);
}

int cli_main(const struct cli_tool *t, int argc, char **argv)
{
	const char *cmd;

	cli_prog = t->name;
	if (argc < 2) {
		cli_tool_usage(t, stderr);
		return CLI_USAGE;
	}
	cmd = argv[1];
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") ||
	    !strcmp(cmd, "help")) {
		cli_tool_usage(t, stdout);
		return CLI_OK;
	}
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
		t->version();
		return CLI_OK;
	}
	for (size_t i = 0; i < t->ncmds; i++)
		if (!strcmp(cmd, t->cmds[i].name))
			return t->cmds[i].fn(argc - 1, argv + 1);
	return cli_usage(NULL, "unknown command '%s'", cmd);
}
