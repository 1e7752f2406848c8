// SPDX-License-Identifier: GPL-2.0
/* joules-bpf run, status, stop: the collector's holder and its control. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "jb.h"

static const char *const hw_names[JB_NR_HW] = { "cycles", "instructions",
						"cache_misses" };

static void print_hw(FILE *fp, uint32_t present)
{
	const char *sep = "";

	if (!present) {
		fputs("absent", fp);
		return;
	}
	for (int i = 0; i < JB_NR_HW; i++) {
		if (present & (1u << i)) {
			fprintf(fp, "%s%s", sep, hw_names[i]);
			sep = " ";
		}
	}
}

static void run_usage(FILE *fp)
{
	fprintf(fp,
		"Usage: joules-bpf run [--max-tasks N] [--btf PATH] [-v] [-q]\n\n"
		"Load the BPF collector, attach it to the scheduler's tracepoints and count\n"
		"until SIGINT or SIGTERM ('joules-bpf stop'). Its maps are pinned in\n"
		"%s for 'show', 'status', 'top' and 'record'; they go when it stops.\n"
		"Counting starts when a task is first seen: at its fork, or when it first\n"
		"runs after the collector was attached.\n\n"
		"      --max-tasks N        size of the task map (default %d); a task\n"
		"                           beyond it goes uncounted (see 'status')\n"
		"      --btf PATH           kernel BTF for CO-RE (default %s)\n"
		"  -q, --quiet              no start-up line\n"
		"  -v, --verbose            libbpf's informational messages too\n"
		"  -h, --help               this help\n",
		JB_PIN_DIR, JB_DEFAULT_MAX_TASKS, JB_BTF_DEFAULT);
}

int cmd_run(int argc, char **argv)
{
	struct jb_opts o;
	bool quiet = false;
	const struct cli_opt opts[] = { JB_COMMON_OPTS(&o),
					CLI_OPT_FLAG("quiet", 'q', &quiet),
					CLI_OPT_END };
	const struct cli_cmdline cl = { .cmd = "run",
					.opts = opts,
					.help = run_usage };
	struct jb_coll c;
	pid_t stale;
	int rc, err;

	jb_opts_init(&o);
	rc = cli_getopt(&cl, argc, argv);
	if (rc != CLI_GO)
		return rc;
	if (jb_check_root() || jb_check_btf(&o))
		return CLI_FAIL;

	err = jb_coll_open_pinned(&c, &o, &stale);
	if (!err) {
		cli_err("a collector is already running (pid %" PRIu32
			"); 'joules-bpf stop' ends it",
			c.meta.loader_pid);
		jb_coll_close(&c);
		return CLI_FAIL;
	}
	if (err != -ENOENT)
		return CLI_FAIL;
	cli_catch_signals();
	if (jb_coll_load(&c, &o))
		return CLI_FAIL;
	if (jb_coll_pin(&c, &o)) {
		jb_coll_close(&c);
		return CLI_FAIL;
	}
	if (!quiet) {
		printf("joules-bpf: collector running (pid %d, max_tasks %" PRIu32
		       ", hw counters ",
		       (int)getpid(), c.max_tasks);
		print_hw(stdout, c.meta.hw_present);
		printf(", tick %s); maps in %s\n",
		       c.meta.tick_ns ? "100 ms" : "off", o.pin_dir);
		fflush(stdout);
	}
	/* A signal between the test and a pause() would be missed: poll. */
	while (!cli_stop)
		cli_sleep_ns(1000000000ull);
	jb_coll_close(&c);
	return CLI_OK;
}

/* status and stop: no options but -h, then the running collector. */
static int getopt_running(const char *cmd, void (*help)(FILE *fp), int argc,
			  char **argv, struct jb_opts *o, struct jb_coll *c)
{
	const struct cli_cmdline cl = { .cmd = cmd, .help = help };
	int rc = cli_getopt(&cl, argc, argv);

	if (rc != CLI_GO)
		return rc;
	jb_opts_init(o);
	return jb_coll_open_running(c, o, true) ? CLI_FAIL : CLI_GO;
}

static void status_usage(FILE *fp)
{
	fprintf(fp,
		"Usage: joules-bpf status\n\n"
		"State of the running collector, one \"key: value\" line each; exit status\n"
		"1 when none is running.\n\n"
		"  -h, --help     this help\n");
}

int cmd_status(int argc, char **argv)
{
	static const char *const stat_names[JB_NR_STATS] = {
		[JB_ST_TASKS_FULL] = "tasks_dropped",
		[JB_ST_PROCS_FULL] = "exits_dropped",
		[JB_ST_EXITS] = "exits_folded",
		[JB_ST_UNTRACKED] = "untracked_switches",
		[JB_ST_TICKS] = "ticks",
	};
	struct jb_snap s;
	struct jb_opts o;
	struct jb_coll c;
	int err;

	err = getopt_running("status", status_usage, argc, argv, &o, &c);
	if (err != CLI_GO)
		return err;
	err = jb_snap_take(&c, &s, true);
	if (err) {
		cli_err("reading the collector's maps: %s", strerror(-err));
		jb_coll_close(&c);
		return CLI_FAIL;
	}
	printf("collector: running\n");
	printf("pid: %" PRIu32 "\n", c.meta.loader_pid);
	printf("abi: %" PRIu32 "\n", c.meta.abi);
	printf("uptime_ns: %" PRIu64 "\n",
	       s.mono_ns - (uint64_t)c.meta.start_ns);
	printf("max_tasks: %" PRIu32 "\n", c.max_tasks);
	printf("tasks_tracked: %zu\n", s.ntasks);
	printf("processes_with_exited_threads: %zu\n", s.nprocs);
	printf("hw_counters: ");
	print_hw(stdout, c.meta.hw_present);
	printf("\ntick_ns: %" PRIu64 "\n", (uint64_t)c.meta.tick_ns);
	printf("cpus: %" PRIu32 "\n", c.meta.nr_cpus);
	printf("cpu_time_ns: %" PRIu64 "\n", (uint64_t)s.node.cpu_ns);
	printf("context_switches: %" PRIu64 "\n", s.switches);
	for (int i = 0; i < JB_NR_STATS; i++)
		printf("%s: %" PRIu64 "\n", stat_names[i], s.stats[i]);
	jb_snap_free(&s);
	jb_coll_close(&c);
	return fflush(stdout) ? CLI_FAIL : CLI_OK;
}

static void stop_usage(FILE *fp)
{
	fprintf(fp,
		"Usage: joules-bpf stop\n\n"
		"Stop the running collector (SIGTERM to its 'joules-bpf run') and wait\n"
		"until it has detached and removed its maps (at most 10 s).\n\n"
		"  -h, --help     this help\n");
}

int cmd_stop(int argc, char **argv)
{
	struct jb_opts o;
	struct jb_coll c;
	pid_t stale, pid;
	int err;

	err = getopt_running("stop", stop_usage, argc, argv, &o, &c);
	if (err != CLI_GO)
		return err;
	pid = (pid_t)c.meta.loader_pid;
	jb_coll_close(&c);
	if (kill(pid, SIGTERM)) {
		cli_err("cannot signal the collector (pid %d): %s", (int)pid,
			strerror(errno));
		return CLI_FAIL;
	}
	for (int i = 0; i < 1000; i++) {
		if (jb_coll_open_pinned(&c, &o, &stale) == -ENOENT)
			return CLI_OK;
		jb_coll_close(&c);
		usleep(10000);
	}
	cli_err("the collector (pid %d) did not stop within 10 s", (int)pid);
	return CLI_FAIL;
}
