// SPDX-License-Identifier: GPL-2.0
/*
 * joules-exporter: the energy joules.ko attributes, served to Prometheus
 * over HTTP. See Documentation/man/joules-exporter.8 and
 * Documentation/metrics.rst.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <time.h>

#include "cli.h"
#include "uapi/joules_netlink.h"
#include "exporter.h"

/* logfmt: ts=... level=... [collector=...] msg="..." */
static void exp_vlog(const char *level, const char *collector, const char *fmt,
		     va_list ap)
{
	char msg[1024], ts[40];
	struct timeval tv;
	struct tm tm;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	flockfile(stderr);
	fprintf(stderr, "ts=%s.%03ldZ level=%s ", ts, (long)tv.tv_usec / 1000,
		level);
	if (collector)
		fprintf(stderr, "collector=%s ", collector);
	fputs("msg=\"", stderr);
	for (const char *p = msg; *p; p++) {
		if (*p == '"' || *p == '\\')
			fputc('\\', stderr);
		fputc(*p == '\n' ? ' ' : *p, stderr);
	}
	fputs("\"\n", stderr);
	funlockfile(stderr);
}

void exp_log(const char *level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	exp_vlog(level, NULL, fmt, ap);
	va_end(ap);
}

static void exp_logc(const char *level, const char *collector, const char *fmt,
		     ...) __attribute__((format(printf, 3, 4)));
static void exp_logc(const char *level, const char *collector, const char *fmt,
		     ...)
{
	va_list ap;

	va_start(ap, fmt);
	exp_vlog(level, collector, fmt, ap);
	va_end(ap);
}

void exp_log_collector(const char *level, const char *collector,
		       const char *msg)
{
	exp_logc(level, collector, "%s", msg);
}

static void usage(FILE *fp)
{
	fprintf(fp,
		"Usage: joules-exporter [OPTION]...\n\n"
		"Serve the energy joules.ko attributes to Prometheus: node energy by\n"
		"source and RAPL domain, idle energy, the model, the meter's status,\n"
		"energy and CPU time per cgroup (with container id and pod UID), and\n"
		"per-process series on request. Text format 0.0.4, or OpenMetrics\n"
		"1.0.0 when the scraper asks for it.\n\n"
		"  --web.listen-address=ADDR   host:port, [v6]:port or :port (every\n"
		"                              address) to listen on (default %s)\n"
		"  --web.telemetry-path=PATH   where metrics are served (default %s)\n"
		"  --web.max-connections=N     connections at once; more are closed\n"
		"                              (default %u)\n"
		"  --web.max-requests=N        scrape responses held at once; more get\n"
		"                              503 (default %u)\n"
		"  --web.timeout=SECS          close a connection idle this long\n"
		"                              (default %u)\n"
		"  --processes=top=N|off       per-process series for the N processes\n"
		"                              with the most energy, N <= %u (default off:\n"
		"                              per-pid series explode cardinality)\n"
		"  --cgroups=all|off|depth=N   per-cgroup series: every cgroup (default),\n"
		"                              none, or those at most N levels below the\n"
		"                              root (\"/\" is level 0)\n"
		"  --cgroups.match=REGEX       only cgroups whose path matches REGEX (POSIX\n"
		"                              extended, unanchored; e.g. '^/kubepods')\n"
		"  --cgroups.root=DIR          cgroups below the cgroup v2 directory DIR,\n"
		"                              paths relative to it, instead of those of\n"
		"                              the exporter's cgroup namespace (in a\n"
		"                              container: the host's /sys/fs/cgroup\n"
		"                              mounted read-only at DIR)\n"
		"  --compat=kepler|none        also serve Kepler's (0.10+) names: node,\n"
		"                              container and pod energy and watts (and\n"
		"                              processes with --processes)\n"
		"  --compat.node-name=NAME     their node_name label (default: the host\n"
		"                              name)\n"
		"  --compat.window=SECS        shortest window their watts are computed\n"
		"                              over (default %u; at least 10 of the\n"
		"                              module's intervals)\n"
		"  --energy=lagged|live        measured energy as users without\n"
		"                              CAP_PERFMON see it (default: whoever\n"
		"                              reaches the port reads it; process and\n"
		"                              cgroup series in the lagged view, node\n"
		"                              ones read once an epoch), or live\n"
		"  --version                   print the version\n"
		"  -h, --help                  this help\n\n"
		"Collectors:\n",
		EXP_DEFAULT_LISTEN, EXP_DEFAULT_PATH,
		EXP_DEFAULT_MAX_CONNECTIONS, EXP_DEFAULT_MAX_REQUESTS,
		EXP_DEFAULT_TIMEOUT_S, JM_MAX_TOP, EXP_DEFAULT_COMPAT_WINDOW_S);
	for (int c = 0; c < JM_NR_COLLECTORS; c++)
		fprintf(fp, "  %-9s %s\n", jm_collectors[c]->name,
			jm_collectors[c]->what);
	fprintf(fp,
		"\nPrivileges: node energy (GET_NODE) and every cgroup need CAP_PERFMON or\n"
		"CAP_SYS_ADMIN; other users' processes need CAP_SYS_PTRACE. Without them\n"
		"the series are left out (cgroups: only those whose directories the\n"
		"exporter owns) and joules_exporter_collector_error{reason=\"permission\"}\n"
		"says so. Cgroups are those of the exporter's cgroup namespace, or below\n"
		"--cgroups.root. See joules-exporter(8).\n");
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

/* --energy: lagged (as users without CAP_PERFMON see it) or live. */
static int opt_energy(void *dst, const char *cmd, const char *arg)
{
	bool *live = dst;

	if (!strcmp(arg, "lagged"))
		*live = false;
	else if (!strcmp(arg, "live"))
		*live = true;
	else
		return cli_usage(cmd, "bad --energy '%s' (lagged or live)",
				 arg);
	return 0;
}

static int opt_compat(void *dst, const char *cmd, const char *arg)
{
	if (jm_parse_compat(arg, dst))
		return cli_usage(cmd, "bad --compat '%s' (kepler or none)",
				 arg);
	return 0;
}

static int opt_uint(unsigned int *dst, const char *name, uint64_t v,
		    uint64_t max)
{
	if (v > max)
		return cli_usage(NULL, "%s: at most %llu", name,
				 (unsigned long long)max);
	*dst = (unsigned int)v;
	return 0;
}

enum {
	OPT_LISTEN = 0x100,
	OPT_PATH,
	OPT_MAXCONN,
	OPT_MAXREQ,
	OPT_TIMEOUT,
	OPT_PROCESSES,
	OPT_CGROUPS,
	OPT_CGMATCH,
	OPT_CGROOT,
	OPT_COMPAT,
	OPT_ENERGY,
	OPT_NODENAME,
	OPT_WINDOW,
	OPT_VERSION,
};

/* The web options in range and consistent; the address to listen on. */
static int check_web(struct exp_config *cfg, uint64_t maxconn, uint64_t maxreq,
		     uint64_t timeout, struct exp_addr *addr)
{
	const char *why;
	int rc;

	/* Connections need file descriptors: keep well inside 1024. */
	if ((rc = opt_uint(&cfg->max_connections, "--web.max-connections",
			   maxconn, 900)) ||
	    (rc = opt_uint(&cfg->max_requests, "--web.max-requests", maxreq,
			   1000)) ||
	    (rc = opt_uint(&cfg->timeout_s, "--web.timeout",
			   timeout / 1000000000ull, 3600)))
		return rc;
	if (cfg->path[0] != '/' || !strcmp(cfg->path, "/"))
		return cli_usage(NULL,
				 "--web.telemetry-path must start with '/' and "
				 "not be '/' (the landing page)");
	if (exp_parse_listen(cfg->listen, addr, &why))
		return cli_usage(NULL, "bad --web.listen-address '%s': %s",
				 cfg->listen, why);
	return 0;
}

/*
 * --compat kepler: Kepler's node_name is the host name unless the site
 * names its nodes otherwise (a DaemonSet passes spec.nodeName). uts
 * holds the name for as long as the exporter runs.
 */
static int set_kepler(struct jm_state *jm, const char *node_name,
		      uint64_t window, struct utsname *uts)
{
	if (!node_name)
		node_name = uname(uts) ? "" : uts->nodename;
	if (jm_set_compat_kepler(jm, node_name, window)) {
		exp_log("error", "out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* The collectors' options (the web's are in exp_config). */
struct collect_opts {
	int cg_depth;
	const char *cg_match;
	const char *cg_root;
	const char *node_name;
	uint64_t window; /* 0: not given (the option's least is 1 s) */
};

/* The settings in force, in the log's first line. */
static void log_start(const struct exp_config *cfg,
		      const struct collect_opts *co)
{
	char procs[32], cgs[32];

	snprintf(procs, sizeof(procs), cfg->top ? "top=%u" : "off", cfg->top);
	snprintf(cgs, sizeof(cgs),
		 co->cg_depth == JM_CG_ALL ? "all" :
		 co->cg_depth == JM_CG_OFF ? "off" :
					     "depth=%d",
		 co->cg_depth);
	exp_log("info",
		"starting joules-exporter %s, processes %s, cgroups %s%s%s%s%s%s",
		JL_VERSION, procs, cgs, co->cg_match ? " matching " : "",
		co->cg_match ? co->cg_match : "", co->cg_root ? " below " : "",
		co->cg_root ? co->cg_root : "",
		cfg->compat == JM_COMPAT_KEPLER ? ", compat kepler" : "");
}

/*
 * --compat.node-name and --compat.window without --compat=kepler would do
 * nothing: a setup that meant Kepler's names and lost them. window is 0
 * when not given (the option's least is 1 s); it then gets the default.
 */
static int check_compat(enum jm_compat compat, const char *node_name,
			uint64_t *window)
{
	if (compat != JM_COMPAT_KEPLER && (node_name || *window))
		return cli_usage(NULL, "%s needs --compat=kepler",
				 node_name ? "--compat.node-name" :
					     "--compat.window");
	if (!*window)
		*window = EXP_DEFAULT_COMPAT_WINDOW_S * 1000000000ull;
	return 0;
}

/*
 * The collectors as the options say, one gather now (a missing module or
 * privilege is logged at once), then the server: the exit status.
 */
static int run(const struct exp_config *cfg, const struct exp_addr *addr,
	       const struct collect_opts *co)
{
	struct utsname uts;
	char why_re[128];
	struct jm_snapshot snap;
	struct jm_state jm;
	int rc;

	jm_init(&jm, cfg->top, NULL, exp_log_collector);
	jm_set_live(&jm, cfg->live);
	if (jm_set_cgroups(&jm, co->cg_depth, co->cg_match, why_re,
			   sizeof(why_re))) {
		jm_close(&jm);
		return cli_usage(NULL, "bad --cgroups.match '%s': %s",
				 co->cg_match, why_re);
	}
	/*
	 * Not fatal: on a node without cgroup v2 there the node's series are
	 * still served, and the cgroup collector says why it has none.
	 */
	if (co->cg_root &&
	    jm_set_cgroup_root(&jm, co->cg_root, why_re, sizeof(why_re))) {
		char msg[192];

		snprintf(msg, sizeof(msg),
			 "--cgroups.root '%s': %s: no cgroup series",
			 co->cg_root, why_re);
		jm_set_cgroup_root_failed(&jm, msg);
	}
	if (cfg->compat == JM_COMPAT_KEPLER &&
	    set_kepler(&jm, co->node_name, co->window, &uts)) {
		jm_close(&jm);
		return 1;
	}
	log_start(cfg, co);
	/* One gather now: a missing module or privilege is logged at once. */
	jm_gather(&jm, &snap);
	jm_snapshot_free(&snap);
	rc = exp_serve(cfg, addr, &jm);
	jm_close(&jm);
	return rc;
}

int main(int argc, char **argv)
{
	struct exp_config cfg = {
		.listen = EXP_DEFAULT_LISTEN,
		.path = EXP_DEFAULT_PATH,
	};
	uint64_t maxconn = EXP_DEFAULT_MAX_CONNECTIONS;
	uint64_t maxreq = EXP_DEFAULT_MAX_REQUESTS;
	uint64_t timeout = EXP_DEFAULT_TIMEOUT_S * 1000000000ull;
	bool version = false;
	struct collect_opts co = { .cg_depth = JM_CG_ALL };
	const struct cli_opt opts[] = {
		CLI_OPT_STR("web.listen-address", OPT_LISTEN, &cfg.listen),
		CLI_OPT_STR("web.telemetry-path", OPT_PATH, &cfg.path),
		CLI_OPT_COUNT("web.max-connections", OPT_MAXCONN, &maxconn,
			      "bad --web.max-connections '%s'"),
		CLI_OPT_COUNT("web.max-requests", OPT_MAXREQ, &maxreq,
			      "bad --web.max-requests '%s'"),
		CLI_OPT_SECS("web.timeout", OPT_TIMEOUT, &timeout,
			     1000000000ull,
			     "bad --web.timeout '%s' (seconds, at least 1)"),
		CLI_OPT_FUNC("processes", OPT_PROCESSES, opt_processes,
			     &cfg.top),
		CLI_OPT_FUNC("cgroups", OPT_CGROUPS, opt_cgroups, &co.cg_depth),
		CLI_OPT_STR("cgroups.match", OPT_CGMATCH, &co.cg_match),
		CLI_OPT_STR("cgroups.root", OPT_CGROOT, &co.cg_root),
		CLI_OPT_FUNC("compat", OPT_COMPAT, opt_compat, &cfg.compat),
		CLI_OPT_FUNC("energy", OPT_ENERGY, opt_energy, &cfg.live),
		CLI_OPT_STR("compat.node-name", OPT_NODENAME, &co.node_name),
		CLI_OPT_SECS("compat.window", OPT_WINDOW, &co.window,
			     1000000000ull,
			     "bad --compat.window '%s' (seconds, at least 1)"),
		CLI_OPT_FLAG("version", OPT_VERSION, &version),
		CLI_OPT_END,
	};
	const struct cli_cmdline cl = {
		.cmd = NULL,
		.opts = opts,
		.help = usage,
	};
	struct exp_addr addr;
	int rc;

	cli_prog = "joules-exporter";
	rc = cli_getopt(&cl, argc, argv);
	if (rc != CLI_GO)
		return rc;
	if (version) {
		printf("joules-exporter %s (netlink family version %d)\n",
		       JL_VERSION, JOULES_GENL_VERSION);
		return CLI_OK;
	}
	rc = check_web(&cfg, maxconn, maxreq, timeout, &addr);
	if (rc)
		return rc;
	rc = check_compat(cfg.compat, co.node_name, &co.window);
	if (rc)
		return rc;
	return run(&cfg, &addr, &co);
}
