// SPDX-License-Identifier: GPL-2.0
/*
 * joulesctl: show, stream and record what joules.ko attributes, and set the
 * model's coefficients. See Documentation/man/joulesctl.1.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core.h"
#include "parse.h"
#include "uapi/joules_netlink.h"
#include "joulesctl.h"

volatile sig_atomic_t jc_stop;

static void jc_on_signal(int sig)
{
	(void)sig;
	jc_stop = 1;
}

void jc_catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	/* No SA_RESTART: a blocking poll()/recv() returns EINTR at once. */
	sa.sa_handler = jc_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* A closed pipe (joulesctl watch | head) is an ordinary end. */
	sigaction(SIGPIPE, &sa, NULL);
}

void jc_err(const char *fmt, ...)
{
	va_list ap;

	fputs("joulesctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int jc_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "joulesctl%s%s: ", cmd ? " " : "", cmd ? cmd : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'joulesctl %s%s--help'.\n", cmd ? cmd : "",
		cmd ? " " : "");
	return JC_USAGE;
}

int jc_bad_option(const char *cmd, int argc, char **argv)
{
	const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : "?";

	if (optopt && strncmp(arg, "--", 2))
		return jc_usage(cmd,
				"invalid option '-%c' (or missing argument)",
				optopt);
	return jc_usage(cmd, "invalid option '%s' (or missing argument)", arg);
}

void jc_nl_err(const struct jnl *nl, enum jnl_op op, int err, const char *what)
{
	const char *k = nl ? jnl_kernel_msg(nl) : NULL;

	if (k)
		jc_err("%s: %s (module: %s)", what, jnl_strerror(op, err), k);
	else
		jc_err("%s: %s", what, jnl_strerror(op, err));
}

int jc_open(struct jnl **nl)
{
	int err = jnl_open(nl);

	if (err)
		jc_err("%s", jnl_strerror(JNL_OP_OPEN, err));
	return err;
}

uint64_t jc_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int jc_parse_secs(const char *s, uint64_t *ns)
{
	const char *why;
	int64_t v;

	if (parse_seconds_ns(s, &v, &why) || v <= 0)
		return -EINVAL;
	*ns = (uint64_t)v;
	return 0;
}

int jc_parse_count(const char *s, uint64_t *n)
{
	const char *why;

	if (parse_u64(s, n, &why) || !*n)
		return -EINVAL;
	return 0;
}

int jc_parse_pid(const char *s, pid_t *pid)
{
	const char *why;
	uint64_t v;

	if (parse_u64(s, &v, &why) || !v || v > 0x3fffffff)
		return -EINVAL;
	*pid = (pid_t)v;
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{ "show", cmd_show, "one process's (or thread's) energy and counters" },
	{ "top", cmd_top, "processes sorted by power, refreshed" },
	{ "watch", cmd_watch,
	  "print node samples and exit records as they arrive" },
	{ "record", cmd_record,
	  "write node samples to a CSV file for joules-train" },
	{ "set", cmd_set, "change model coefficients (atomically, via sysfs)" },
	{ "node", cmd_node, "node totals since the module loaded" },
};

static void usage(FILE *fp)
{
	fprintf(fp,
		"Usage: joulesctl [--help] [--version] COMMAND [ARGS...]\n\n"
		"Per-process energy attribution (joules.ko) from the command line.\n\n"
		"Commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(fp, "  %-8s %s\n", commands[i].name,
			commands[i].summary);
	fprintf(fp,
		"\n'joulesctl COMMAND --help' describes each command; see joulesctl(1).\n");
}

int main(int argc, char **argv)
{
	const char *cmd;

	if (argc < 2)
		return usage(stderr), JC_USAGE;
	cmd = argv[1];
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") ||
	    !strcmp(cmd, "help")) {
		usage(stdout);
		return JC_OK;
	}
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
		printf("joulesctl %s (netlink family version %d, abi %d)\n",
		       JL_VERSION, JOULES_GENL_VERSION, JL_ABI_VERSION);
		return JC_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(cmd, commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	return jc_usage(NULL, "unknown command '%s'", cmd);
}
