// SPDX-License-Identifier: GPL-2.0
/*
 * joulesctl export: the metrics joules-exporter serves, on standard output
 * or as a file for node_exporter's textfile collector. The file is written
 * whole under a temporary name and renamed over the old one, so the
 * collector never reads half of it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "metrics.h"
#include "joulesctl.h"

/* node_exporter reads DIR/NAME.prom; the temporary name does not match. */
#define TEXTFILE_NAME "joules.prom"

static void export_usage(FILE *fp)
{
	fprintf(fp,
		"Usage: joulesctl export [--textfile DIR] [--processes top=N|off]\n"
		"                        [--cgroups all|off|depth=N] [--cgroups-match REGEX]\n"
		"                        [--cgroups-root DIR] [--openmetrics] [--interval SECS]\n\n"
		"The metrics joules-exporter serves (Documentation/metrics.rst), in the\n"
		"Prometheus text format on standard output, or written atomically to\n"
		"DIR/" TEXTFILE_NAME
		" (a temporary file renamed over it) for node_exporter's\n"
		"textfile collector (--collector.textfile.directory=DIR).\n\n"
		"  -d, --textfile DIR       write DIR/" TEXTFILE_NAME
		" instead of standard output\n"
		"  -p, --processes top=N    per-process series for the N processes with\n"
		"                           the most energy (N <= %u; default off)\n"
		"  -c, --cgroups all|off|depth=N\n"
		"                           per-cgroup series: every cgroup (default), none,\n"
		"                           or those at most N levels below the root\n"
		"  -M, --cgroups-match REGEX only cgroups whose path matches REGEX (POSIX\n"
		"                           extended, e.g. '^/kubepods')\n"
		"  -R, --cgroups-root DIR   cgroups below the cgroup v2 directory DIR, paths\n"
		"                           relative to it (default: this cgroup namespace's)\n"
		"  -o, --openmetrics        OpenMetrics 1.0.0 (not with --textfile: the\n"
		"                           textfile collector reads the text format)\n"
		"  -i, --interval SECS      write again every SECS until stopped\n"
		"  -h, --help               this help\n\n"
		"Node energy and every cgroup need CAP_PERFMON or CAP_SYS_ADMIN (root);\n"
		"other users' processes need CAP_SYS_PTRACE. A collector that fails\n"
		"leaves its series out and is named in joules_exporter_collector_error;\n"
		"the exit status is then 1.\n",
		JM_MAX_TOP);
}

static int opt_processes(void *dst, const char *cmd, const char *arg)
{
	int err = jm_parse_processes(arg, dst);

	if (err == -ERANGE)
		return cli_usage(cmd, "--processes: at most top=%u",
				 JM_MAX_TOP);
	if (err)
		return cli_usage(cmd, "bad --processes '%s' (top=N or off)",
				 arg);
	return 0;
}

static int opt_cgroups(void *dst, const char *cmd, const char *arg)
{
	if (jm_parse_cgroups(arg, dst))
		return cli_usage(
			cmd, "bad --cgroups '%s' (all, off or depth=N)", arg);
	return 0;
}

static void export_log(const char *level, const char *collector,
		       const char *msg)
{
	cli_err("%s: %s: %s", level, collector, msg);
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* DIR/joules.prom, replaced in one rename(). */
static int write_textfile(const char *dir, const char *buf, size_t len)
{
	char tmp[4096], dst[4096];
	int fd, err;

	if ((size_t)snprintf(dst, sizeof(dst), "%s/%s", dir, TEXTFILE_NAME) >=
		    sizeof(dst) ||
	    (size_t)snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", dir,
			     TEXTFILE_NAME) >= sizeof(tmp)) {
		cli_err("%s: path too long", dir);
		return -ENAMETOOLONG;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		cli_err("%s: cannot create a file there: %s", dir,
			strerror(-err));
		return err;
	}
	/* mkstemp() makes it 0600; node_exporter may run as another user. */
	err = fchmod(fd, 0644) ? -errno : 0;
	if (!err)
		err = write_all(fd, buf, len);
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, dst))
		err = -errno;
	if (err) {
		cli_err("%s: %s", dst, strerror(-err));
		unlink(tmp);
	}
	return err;
}

int cmd_export(int argc, char **argv)
{
	const char *dir = NULL, *cg_match = NULL, *cg_root = NULL;
	int cg_depth = JM_CG_ALL;
	char why[128];
	unsigned int top = 0;
	bool om = false;
	uint64_t interval = 0;
	const struct cli_opt opts[] = {
		CLI_OPT_STR("textfile", 'd', &dir),
		CLI_OPT_FUNC("processes", 'p', opt_processes, &top),
		CLI_OPT_FUNC("cgroups", 'c', opt_cgroups, &cg_depth),
		CLI_OPT_STR("cgroups-match", 'M', &cg_match),
		CLI_OPT_STR("cgroups-root", 'R', &cg_root),
		CLI_OPT_FLAG("openmetrics", 'o', &om),
		CLI_OPT_SECS("interval", 'i', &interval, 100000000ull,
			     "bad interval '%s' (seconds, at least 0.1)"),
		CLI_OPT_END,
	};
	const struct cli_cmdline cl = {
		.cmd = "export",
		.opts = opts,
		.help = export_usage,
	};
	struct jm_state jm;
	struct stat sb;
	int rc, failed = 0;

	rc = cli_getopt(&cl, argc, argv);
	if (rc != CLI_GO)
		return rc;
	if (dir && om)
		return cli_usage(
			"export",
			"--openmetrics and --textfile do not go together: "
			"the textfile collector reads the text format");
	if (dir && (stat(dir, &sb) || !S_ISDIR(sb.st_mode))) {
		cli_err("%s: not a directory", dir);
		return CLI_FAIL;
	}
	if (interval)
		cli_catch_signals();
	jm_init(&jm, top, NULL, export_log);
	if (jm_set_cgroups(&jm, cg_depth, cg_match, why, sizeof(why))) {
		jm_close(&jm);
		return cli_usage("export", "bad --cgroups-match '%s': %s",
				 cg_match, why);
	}
	if (cg_root && jm_set_cgroup_root(&jm, cg_root, why, sizeof(why))) {
		jm_close(&jm);
		return cli_usage("export", "bad --cgroups-root '%s': %s",
				 cg_root, why);
	}
	do {
		struct prom_writer w;
		size_t len;
		char *buf;
		int err;

		prom_init(&w, om ? PROM_FMT_OPENMETRICS : PROM_FMT_TEXT, 0);
		err = jm_scrape(&jm, &w, &failed);
		buf = prom_take(&w, &len);
		if (err) {
			cli_err("cannot build the metrics: %s", strerror(-err));
			rc = CLI_FAIL;
		} else if (dir) {
			rc = write_textfile(dir, buf, len) ? CLI_FAIL : CLI_OK;
		} else {
			rc = write_all(STDOUT_FILENO, buf, len) ? CLI_FAIL :
								  CLI_OK;
		}
		free(buf);
		if (rc == CLI_OK && failed)
			rc = CLI_FAIL;
		if (interval && !cli_stop)
			cli_sleep_ns(interval);
	} while (interval && !cli_stop);
	jm_close(&jm);
	return rc;
}
