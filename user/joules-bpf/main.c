// SPDX-License-Identifier: GPL-2.0
/*
 * joules-bpf: the joules counters from a CO-RE BPF collector (bpf/), where
 * the module cannot be loaded, and a cross-check of the module's counters.
 * See Documentation/bpf.rst and joules-bpf(1).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "parse.h"
#include "jb.h"

volatile sig_atomic_t jb_stop;

static void jb_on_signal(int sig)
{
	(void)sig;
	jb_stop = 1;
}

void jb_catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	/* No SA_RESTART: a sleeping loop wakes at once. */
	sa.sa_handler = jb_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* Not SIGHUP: `nohup joules-bpf run &` must keep its SIG_IGN. */
	sigaction(SIGPIPE, &sa, NULL);
}

void jb_err(const char *fmt, ...)
{
	va_list ap;

	fputs("joules-bpf: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int jb_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "joules-bpf%s%s: ", cmd ? " " : "", cmd ? cmd : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'joules-bpf %s%s--help'.\n", cmd ? cmd : "",
		cmd ? " " : "");
	return JB_USAGE;
}

int jb_bad_option(const char *cmd, int argc, char **argv)
{
	const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : "?";

	if (optopt && strncmp(arg, "--", 2))
		return jb_usage(cmd,
				"invalid option '-%c' (or missing argument)",
				optopt);
	return jb_usage(cmd, "invalid option '%s' (or missing argument)", arg);
}

uint64_t jb_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void jb_sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000u),
			       .tv_nsec = (long)(ns % 1000000000u) };

	while (!jb_stop && nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int jb_parse_secs(const char *s, uint64_t *ns)
{
	const char *why;
	int64_t v;

	if (parse_seconds_ns(s, &v, &why) || v <= 0)
		return -EINVAL;
	*ns = (uint64_t)v;
	return 0;
}

int jb_parse_count(const char *s, uint64_t *n)
{
	const char *why;

	if (parse_u64(s, n, &why) || !*n)
		return -EINVAL;
	return 0;
}

int jb_parse_pid(const char *s, pid_t *pid)
{
	const char *why;
	uint64_t v;

	if (parse_u64(s, &v, &why) || !v || v > 0x3fffffff)
		return -EINVAL;
	*pid = (pid_t)v;
	return 0;
}

void jb_opts_init(struct jb_opts *o)
{
	const char *e;

	memset(o, 0, sizeof(*o));
	e = getenv("JOULES_BPF_BTF");
	o->btf = e && *e ? e : JB_BTF_DEFAULT;
	e = getenv("JOULES_BPF_PIN_DIR");
	o->pin_dir = e && *e ? e : JB_PIN_DIR;
	o->max_tasks = JB_DEFAULT_MAX_TASKS;
}

static const char coef_form[] =
	"six unsigned integers: cpu_time_uw cycles_pj instructions_pj cache_miss_pj "
	"disk_byte_pj idle_uw";

static int coef_text(struct jb_opts *o, const char *cmd, const char *what,
		     const char *buf, size_t len)
{
	int err = jl_coef_parse(buf, len, &o->coef);

	if (err == -JL_ERANGE)
		return jb_usage(cmd, "%s: a coefficient is above %llu", what,
				(unsigned long long)JL_COEF_MAX);
	if (err)
		return jb_usage(cmd, "%s: not a coefficient set (%s)", what,
				coef_form);
	o->have_coef = true;
	return 0;
}

static int coef_file(struct jb_opts *o, const char *cmd, const char *path)
{
	char buf[4096];
	size_t len = 0;
	ssize_t n = 0;
	int fd = open(path, O_RDONLY);

	if (fd < 0) {
		jb_err("%s: %s", path, strerror(errno));
		return JB_FAIL;
	}
	while (len < sizeof(buf) &&
	       (n = read(fd, buf + len, sizeof(buf) - len)) > 0)
		len += (size_t)n;
	if (n < 0 && len < sizeof(buf)) {
		jb_err("%s: %s", path, strerror(errno));
		close(fd);
		return JB_FAIL;
	}
	close(fd);
	if (len == sizeof(buf))
		return jb_usage(cmd, "%s: too long for a coefficient file",
				path);
	return coef_text(o, cmd, path, buf, len);
}

int jb_common_opt(struct jb_opts *o, const char *cmd, int c, const char *arg)
{
	uint64_t v;
	int rc;

	switch (c) {
	case JB_OPT_BTF:
		o->btf = arg;
		return 1;
	case JB_OPT_MAX_TASKS:
		if (jb_parse_count(arg, &v) || v > JB_MAX_TASKS_LIMIT)
			return jb_usage(cmd, "bad --max-tasks '%s' (1..%u)",
					arg, JB_MAX_TASKS_LIMIT);
		o->max_tasks = (uint32_t)v;
		return 1;
	case 'C':
		rc = coef_file(o, cmd, arg);
		return rc ? rc : 1;
	case JB_OPT_COEF:
		rc = coef_text(o, cmd, "--coef", arg, strlen(arg));
		return rc ? rc : 1;
	case 'v':
		o->verbose = true;
		return 1;
	}
	return 0;
}

/* Effective capability bits, from /proc/self/status. */
static int cap_eff(uint64_t *caps)
{
	char line[256];
	FILE *fp = fopen("/proc/self/status", "r");
	int rc = -ENOENT;

	if (!fp)
		return -errno;
	while (fgets(line, sizeof(line), fp)) {
		if (!strncmp(line, "CapEff:", 7)) {
			*caps = strtoull(line + 7, NULL, 16);
			rc = 0;
			break;
		}
	}
	fclose(fp);
	return rc;
}

#define CAP_SYS_ADMIN_BIT 21
#define CAP_PERFMON_BIT 38
#define CAP_BPF_BIT 39

int jb_check_root(void)
{
	uint64_t caps = 0;
	bool ok;

	if (cap_eff(&caps))
		ok = geteuid() == 0;
	else
		ok = (caps & (1ull << CAP_SYS_ADMIN_BIT)) ||
		     ((caps & (1ull << CAP_BPF_BIT)) &&
		      (caps & (1ull << CAP_PERFMON_BIT)));
	if (ok)
		return JB_OK;
	jb_err("needs root (CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN)");
	return JB_FAIL;
}

int jb_check_btf(const struct jb_opts *o)
{
	if (!access(o->btf, R_OK))
		return JB_OK;
	if (errno == ENOENT || errno == ENOTDIR)
		jb_err("no kernel BTF at %s: joules-bpf needs a kernel built with "
		       "CONFIG_DEBUG_INFO_BTF=y (type information for CO-RE relocations "
		       "and tp_btf programs)",
		       o->btf);
	else
		jb_err("kernel BTF %s: %s", o->btf, strerror(errno));
	return JB_FAIL;
}

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{ "run", cmd_run,
	  "load and attach the collector; count until stopped" },
	{ "status", cmd_status, "is a collector running, and its state" },
	{ "stop", cmd_stop, "stop the running collector" },
	{ "show", cmd_show, "one process's (or thread's) counters and energy" },
	{ "top", cmd_top, "processes sorted by power, refreshed" },
	{ "record", cmd_record,
	  "write node samples to a CSV file for joules-train" },
};

static void usage(FILE *fp)
{
	fprintf(fp,
		"Usage: joules-bpf [--help] [--version] COMMAND [ARGS...]\n\n"
		"Per-task CPU time, I/O and hardware counters from a CO-RE BPF collector\n"
		"(no kernel module needed), with model energy from joules-train's\n"
		"coefficients. Needs root and a kernel with BTF.\n\n"
		"Commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(fp, "  %-8s %s\n", commands[i].name,
			commands[i].summary);
	fprintf(fp,
		"\n'joules-bpf COMMAND --help' describes each command; see joules-bpf(1).\n");
}

int main(int argc, char **argv)
{
	const char *cmd;

	if (argc < 2)
		return usage(stderr), JB_USAGE;
	cmd = argv[1];
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") ||
	    !strcmp(cmd, "help")) {
		usage(stdout);
		return JB_OK;
	}
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
		printf("joules-bpf %s (map abi %d, core abi %d, libbpf %u.%u)\n",
		       JL_VERSION, JB_ABI, JL_ABI_VERSION,
		       libbpf_major_version(), libbpf_minor_version());
		return JB_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(cmd, commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	return jb_usage(NULL, "unknown command '%s'", cmd);
}
