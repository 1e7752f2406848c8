// SPDX-License-Identifier: GPL-2.0
/*
 * joules-bpf: the joules counters from a CO-RE BPF collector (bpf/), where
 * the module cannot be loaded, and a cross-check of the module's counters.
 * See Documentation/bpf.rst and joules-bpf(1).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "jb.h"

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
	"nine unsigned integers: cpu_time_uw cycles_pj instructions_pj cache_miss_pj "
	"disk_byte_pj net_tx_byte_pj net_rx_byte_pj pagecache_byte_pj idle_uw "
	"(or the six of the first layout: the first five and idle_uw)";

static int coef_text(struct jb_opts *o, const char *cmd, const char *what,
		     const char *buf, size_t len)
{
	int err = jl_coef_parse(buf, len, &o->coef);

	if (err == -JL_ERANGE)
		return cli_usage(cmd, "%s: a coefficient is above %llu", what,
				 (unsigned long long)JL_COEF_MAX);
	if (err)
		return cli_usage(cmd, "%s: not a coefficient set (%s)", what,
				 coef_form);
	o->have_coef = true;
	return 0;
}

/* A file that cannot be read ends the command, as a bad one does. */
int jb_opt_coef_file(void *o, const char *cmd, const char *path)
{
	char buf[4096];
	size_t len = 0;
	ssize_t n = 0;
	int fd = open(path, O_RDONLY);

	if (fd < 0) {
		cli_err("%s: %s", path, strerror(errno));
		return CLI_FAIL;
	}
	while (len < sizeof(buf) &&
	       (n = read(fd, buf + len, sizeof(buf) - len)) > 0)
		len += (size_t)n;
	if (n < 0 && len < sizeof(buf)) {
		cli_err("%s: %s", path, strerror(errno));
		close(fd);
		return CLI_FAIL;
	}
	close(fd);
	if (len == sizeof(buf))
		return cli_usage(cmd, "%s: too long for a coefficient file",
				 path);
	return coef_text(o, cmd, path, buf, len);
}

int jb_opt_max_tasks(void *o, const char *cmd, const char *arg)
{
	uint64_t v;

	if (cli_parse_count(arg, &v) || v > JB_MAX_TASKS_LIMIT)
		return cli_usage(cmd, "bad --max-tasks '%s' (1..%u)", arg,
				 JB_MAX_TASKS_LIMIT);
	((struct jb_opts *)o)->max_tasks = (uint32_t)v;
	return 0;
}

int jb_opt_coef(void *o, const char *cmd, const char *arg)
{
	return coef_text(o, cmd, "--coef", arg, strlen(arg));
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
		return CLI_OK;
	cli_err("needs root (CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN)");
	return CLI_FAIL;
}

int jb_check_btf(const struct jb_opts *o)
{
	if (!access(o->btf, R_OK))
		return CLI_OK;
	if (errno == ENOENT || errno == ENOTDIR)
		cli_err("no kernel BTF at %s: joules-bpf needs a kernel built with "
			"CONFIG_DEBUG_INFO_BTF=y (type information for CO-RE relocations "
			"and tp_btf programs)",
			o->btf);
	else
		cli_err("kernel BTF %s: %s", o->btf, strerror(errno));
	return CLI_FAIL;
}

static const struct cli_cmd commands[] = {
	{ "run", cmd_run,
	  "load and attach the collector; count until stopped" },
	{ "status", cmd_status, "is a collector running, and its state" },
	{ "stop", cmd_stop, "stop the running collector" },
	{ "show", cmd_show, "one process's (or thread's) counters and energy" },
	{ "top", cmd_top, "processes sorted by power, refreshed" },
	{ "record", cmd_record,
	  "write node samples to a CSV file for joules-train" },
};

static void version(void)
{
	printf("joules-bpf %s (map abi %d, core abi %d, libbpf %u.%u)\n",
	       JL_VERSION, JB_ABI, JL_ABI_VERSION, libbpf_major_version(),
	       libbpf_minor_version());
}

int main(int argc, char **argv)
{
	static const struct cli_tool tool = {
		.name = "joules-bpf",
		.about =
			"Per-task CPU time, I/O and hardware counters from a CO-RE BPF collector\n"
			"(no kernel module needed), with model energy from joules-train's\n"
			"coefficients. Needs root and a kernel with BTF.\n\n",
		.cmds = commands,
		.ncmds = sizeof(commands) / sizeof(commands[0]),
		.version = version,
	};

	return cli_main(&tool, argc, argv);
}
