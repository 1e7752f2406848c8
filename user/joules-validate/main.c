// SPDX-License-Identifier: GPL-2.0
/*
 * joules-validate: runs stress-ng workloads of different kinds alone, then
 * together, each in a cgroup of its own, and sets the energy joules.ko
 * attributes to each against its marginal measured energy alone (the
 * node's measured energy over the run minus idle power times its
 * duration), with the spread over repetitions. See joules-validate(8).
 *
 * Exit status: 0 done, 1 a failure on the way, 2 usage error or refusal.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "core.h" /* kmod/core.h: JL_VERSION */
#include "nl.h"
#include "out.h"
#include "stats.h"
#include "uapi/joules_netlink.h"
#include "validate.h"

#define MEASURED (REC_SRC_METER | REC_SRC_RAPL)
/* A stress-ng that outlives its --timeout by this much is stuck. */
#define GRACE_NS (60ull * 1000000000ull)

struct opts {
	uint64_t duration; /* s */
	uint64_t repeat;
	unsigned int workloads; /* 1 << VW_* */
	const char *stress_ng;
	const char *cgroot;
	const char *csv;
	const char *tmpdir;
	bool version;
};

static const char help_text[] =
	"Usage: joules-validate [OPTION]...\n"
	"Run stress-ng workloads (cpu, matrix, memory, io, network) alone, then\n"
	"together, each in a cgroup of its own, and report the energy joules\n"
	"attributes to each against its marginal measured energy alone (the\n"
	"node's measured energy over the run minus idle power times its\n"
	"duration), as mean and sample standard deviation over repetitions.\n"
	"Needs root, the joules module, stress-ng, cgroup v2, and a node whose\n"
	"energy is measured (RAPL or a wall meter fed by joules-meterd).\n"
	"\n"
	"  -d, --duration SEC     seconds per run (default 30)\n"
	"  -r, --repeat N         repetitions (default 3)\n"
	"  -w, --workloads LIST   comma-separated from cpu,matrix,memory,io,network\n"
	"                         (default all five)\n"
	"      --stress-ng PATH   stress-ng to run (default: stress-ng in PATH)\n"
	"      --cgroup-root DIR  cgroup v2 directory to create the workloads'\n"
	"                         cgroups under (default /sys/fs/cgroup)\n"
	"      --csv FILE         also write every run's raw figures as CSV\n"
	"      --tmpdir DIR       stress-ng's --temp-path, where the io workload\n"
	"                         writes (default $TMPDIR or /tmp)\n"
	"  -h, --help             this help\n"
	"  -V, --version          version\n"
	"\n"
	"Each repetition runs: an idle run (nothing started: idle power), each\n"
	"workload alone, then all of them together; duration x (workloads + 2)\n"
	"seconds, and a little more, per repetition. Under a hypervisor the\n"
	"figures show that the tool works, not how accurate attribution is.\n";

static void help(FILE *fp)
{
	fputs(help_text, fp);
}

static int opt_workloads(void *dst, const char *cmd, const char *arg)
{
	unsigned int *mask = dst, m = 0;
	char *dup = strdup(arg), *tok, *save = NULL;
	int rc = 0;

	for (tok = strtok_r(dup, ",", &save); tok && !rc;
	     tok = strtok_r(NULL, ",", &save)) {
		int w;

		for (w = 0; w < VW_N && strcmp(tok, vw_names[w]); w++)
			;
		if (w == VW_N)
			rc = cli_usage(
				cmd,
				"--workloads: unknown workload '%s' (cpu, "
				"matrix, memory, io, network)",
				tok);
		else
			m |= 1u << w;
	}
	free(dup);
	if (!rc && !m)
		rc = cli_usage(cmd, "--workloads: no workload in '%s'", arg);
	if (!rc)
		*mask = m;
	return rc;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	enum { O_STRESS = 0x100, O_CGROOT, O_CSV, O_TMPDIR };
	const struct cli_opt table[] = {
		CLI_OPT_COUNT(
			"duration", 'd', &o->duration,
			"--duration '%s': want a whole number of seconds > 0"),
		CLI_OPT_COUNT("repeat", 'r', &o->repeat,
			      "--repeat '%s': want a positive number"),
		CLI_OPT_FUNC("workloads", 'w', opt_workloads, &o->workloads),
		CLI_OPT_STR("stress-ng", O_STRESS, &o->stress_ng),
		CLI_OPT_STR("cgroup-root", O_CGROOT, &o->cgroot),
		CLI_OPT_STR("csv", O_CSV, &o->csv),
		CLI_OPT_STR("tmpdir", O_TMPDIR, &o->tmpdir),
		CLI_OPT_FLAG("version", 'V', &o->version),
		CLI_OPT_END,
	};
	const struct cli_cmdline cl = {
		.opts = table,
		.help = help,
		.min_args = 0,
		.max_args = 0,
	};
	int rc;

	o->duration = 30;
	o->repeat = 3;
	o->workloads = VW_ALL;
	o->stress_ng = "stress-ng";
	o->cgroot = "/sys/fs/cgroup";
	o->tmpdir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") :
							    "/tmp";
	rc = cli_getopt(&cl, argc, argv);
	if (rc != CLI_GO)
		return rc;
	if (o->version) {
		printf("joules-validate %s (netlink family version %d)\n",
		       JL_VERSION, JOULES_GENL_VERSION);
		return CLI_OK;
	}
	/* A day per run and a thousand repetitions are more than anyone needs. */
	if (o->duration > 86400)
		return cli_usage(NULL,
				 "--duration %" PRIu64 ": at most 86400 s",
				 o->duration);
	if (o->repeat > 1000)
		return cli_usage(NULL, "--repeat %" PRIu64 ": at most 1000",
				 o->repeat);
	if (!*o->cgroot || !*o->stress_ng || !*o->tmpdir ||
	    (o->csv && !*o->csv))
		return cli_usage(NULL, "an empty path");
	return CLI_GO;
}

/* ---- the run ---- */

struct snap {
	uint64_t seq; /* the module's interval this was read after */
	/* its end, CLOCK_MONOTONIC (the module's ktime_get_ns()) */
	uint64_t t_ns;
	struct node_rec node;
	uint64_t root_dyn; /* the root cgroup's energy minus its idle share */
	uint64_t dyn[VW_N]; /* the same of each workload's cgroup */
};

struct ctx {
	const struct opts *o;
	struct jnl *nl;
	char *stress_ng;
	char base[3072]; /* <root>/joules-validate.<pid> */
	bool base_made;
	unsigned int made; /* workloads whose cgroup exists */
	struct vw_child ch[VW_N];
	unsigned int sample_timeout_ms;
	FILE *csv;
	bool in_run;
	uint64_t unmeasured; /* intervals of this run without measured energy */
	uint32_t source; /* the node's source at the last snapshot */
};

static struct ctx C;

static void note_sample(const struct sample_rec *s)
{
	if (C.in_run && !(s->source & MEASURED))
		C.unmeasured++;
}

/*
 * The next sample event: 1, or -EINTR (a signal), -ETIMEDOUT, or a
 * receive error; timeout_ms 0 takes only what is queued.
 */
static int next_sample(struct sample_rec *out, int timeout_ms)
{
	for (;;) {
		struct jnl_event ev;
		int r = jnl_next_event(C.nl, &ev, timeout_ms);

		if (cli_stop)
			return -EINTR;
		if (r == -ENOBUFS)
			continue; /* lost samples: the next one still tells */
		if (r < 0)
			return r;
		if (!r)
			return -ETIMEDOUT;
		if (ev.type == JNL_EV_SAMPLE) {
			note_sample(&ev.sample);
			if (out)
				*out = ev.sample;
			jnl_event_free(&ev);
			return 1;
		}
		jnl_event_free(&ev);
	}
}

/*
 * The sample of the next interval to end: what was queued is dropped
 * first. 1, or as next_sample().
 */
static int fresh_sample(struct sample_rec *out)
{
	int r;

	while ((r = next_sample(NULL, 0)) == 1)
		;
	if (r != -ETIMEDOUT)
		return r;
	return next_sample(out, (int)C.sample_timeout_ms);
}

static int sample_err(int r)
{
	if (r == -EINTR)
		cli_err("interrupted");
	else if (r == -ETIMEDOUT)
		cli_err("no sample from the module in %u ms: is it ticking "
			"(/sys/kernel/joules/interval_ms)?",
			C.sample_timeout_ms);
	else
		cli_err("receiving the module's samples: %s", strerror(-r));
	return CLI_FAIL;
}

static unsigned int read_interval_ms(void)
{
	unsigned int v = 0;
	FILE *fp = fopen("/sys/kernel/joules/interval_ms", "r");

	if (fp) {
		if (fscanf(fp, "%u", &v) != 1)
			v = 0;
		fclose(fp);
	}
	return v ? v : 1000;
}

static uint64_t dyn(const struct cgroup_rec *r)
{
	return r->energy_uj - r->idle_uj;
}

/*
 * The node's and the cgroups' totals as of the end of one interval: read
 * right after the module published it (its sample event), and retried if
 * another interval ended while reading, so that every figure covers the
 * same span and the node's ends at a known instant. 0 or an exit status.
 */
static int snapshot(struct snap *sn)
{
	static struct cgroup_rec cr;
	struct sample_rec s;
	uint64_t iv, margin;
	int err, r;

	for (int tries = 0; tries < 20; tries++) {
		struct node_rec n2;

		r = fresh_sample(&s);
		if (r < 0)
			return sample_err(r);
		err = jnl_get_node(C.nl, &sn->node);
		if (err) {
			cli_err("reading the node: %s",
				jnl_strerror(JNL_OP_GET_NODE, err));
			return CLI_FAIL;
		}
		if (sn->node.intervals != s.seq)
			continue;
		/* "/": the root of our cgroup namespace, every task of the node in it. */
		err = jnl_get_cgroup(C.nl, "/", 0, &cr);
		if (err) {
			cli_err("reading the root cgroup: %s",
				jnl_strerror(JNL_OP_GET_CGROUP, err));
			return CLI_FAIL;
		}
		sn->root_dyn = dyn(&cr);
		for (int w = 0; w < VW_N; w++) {
			sn->dyn[w] = 0;
			if (!(C.made & (1u << w)))
				continue;
			err = jnl_get_cgroup(C.nl, NULL, C.ch[w].cgid, &cr);
			if (err) {
				cli_err("reading cgroup %s: %s", C.ch[w].dir,
					jnl_strerror(JNL_OP_GET_CGROUP, err));
				return CLI_FAIL;
			}
			sn->dyn[w] = dyn(&cr);
		}
		err = jnl_get_node(C.nl, &n2);
		if (err) {
			cli_err("reading the node: %s",
				jnl_strerror(JNL_OP_GET_NODE, err));
			return CLI_FAIL;
		}
		if (n2.intervals != s.seq)
			continue;
		/*
		 * The next interval's charges reach the cgroups before its
		 * count reaches the node, so the reads must be done before
		 * it can start: an interval (less up to a jiffy) after this
		 * one's end. The sample's time and ours are both
		 * CLOCK_MONOTONIC.
		 */
		iv = (uint64_t)read_interval_ms() * 1000000ull;
		margin = iv / 2 < 10000000 ? iv / 2 : 10000000;
		if (cli_now_ns() >= s.monotonic_ns + iv - margin)
			continue;
		sn->seq = s.seq;
		sn->t_ns = s.monotonic_ns;
		C.source = sn->node.source;
		return 0;
	}
	cli_err("could not read the module's totals within one of its intervals "
		"(20 tries): is the machine that busy?");
	return CLI_FAIL;
}

/* Kill whatever runs in the workloads' cgroups and reap our children. */
static void kill_all(void)
{
	for (int w = 0; w < VW_N; w++)
		if (C.made & (1u << w))
			vsys_cg_kill(C.ch[w].dir);
	for (int w = 0; w < VW_N; w++) {
		if (C.ch[w].pid > 0) {
			kill(C.ch[w].pid, SIGKILL);
			waitpid(C.ch[w].pid, NULL, 0);
			C.ch[w].pid = 0;
		}
	}
}

static void cleanup(void)
{
	kill_all();
	for (int w = 0; w < VW_N; w++) {
		if (!(C.made & (1u << w)))
			continue;
		if (vsys_cg_remove(C.ch[w].dir))
			cli_err("cannot remove cgroup %s: %s", C.ch[w].dir,
				strerror(errno));
		if (C.ch[w].logfd >= 0)
			close(C.ch[w].logfd);
		C.ch[w].logfd = -1;
	}
	C.made = 0;
	if (C.base_made && vsys_cg_remove(C.base))
		cli_err("cannot remove cgroup %s: %s", C.base, strerror(errno));
	C.base_made = false;
}

/* stress-ng's command line for workload w. */
static void stress_argv(int w, char *timeout, char **argv)
{
	size_t n = 0;

	argv[n++] = C.stress_ng;
	switch (w) {
	case VW_CPU:
		argv[n++] = "--cpu";
		argv[n++] = "1";
		break;
	case VW_MATRIX:
		argv[n++] = "--matrix";
		argv[n++] = "1";
		break;
	case VW_MEMORY:
		argv[n++] = "--vm";
		argv[n++] = "1";
		argv[n++] = "--vm-bytes";
		argv[n++] = "64M";
		break;
	case VW_IO:
		argv[n++] = "--hdd";
		argv[n++] = "1";
		argv[n++] = "--hdd-bytes";
		argv[n++] = "32M";
		break;
	case VW_NETWORK:
		/* Bound to lo's address (vsys_loopback_ok()), not every interface. */
		argv[n++] = "--sock";
		argv[n++] = "1";
		argv[n++] = "--sock-if";
		argv[n++] = "lo";
		break;
	}
	/* Every stressor: stress-ng may want a writable directory for any. */
	argv[n++] = "--temp-path";
	argv[n++] = (char *)C.o->tmpdir;
	argv[n++] = "--timeout";
	argv[n++] = timeout;
	argv[n] = NULL;
}

/*
 * Start the workloads of mask, wait for all of them (watching the
 * module's samples), then until their cgroups are empty. 0 or an exit
 * status.
 */
static int run_workloads(unsigned int mask)
{
	char timeout[32], err[512], *argv[16];
	uint64_t t0 = cli_now_ns(),
		 limit = C.o->duration * 1000000000ull + GRACE_NS;
	unsigned int left = 0;

	snprintf(timeout, sizeof(timeout), "%" PRIu64 "s", C.o->duration);
	for (int w = 0; w < VW_N; w++) {
		if (!(mask & (1u << w)))
			continue;
		if (!vsys_cg_empty(C.ch[w].dir)) {
			cli_err("cgroup %s is not empty: something else runs there",
				C.ch[w].dir);
			return CLI_FAIL;
		}
		stress_argv(w, timeout, argv);
		if (vsys_spawn(&C.ch[w], argv, err, sizeof(err))) {
			cli_err("%s", err);
			return CLI_FAIL;
		}
		left |= 1u << w;
	}
	while (left) {
		int r;

		for (int w = 0; w < VW_N; w++) {
			int st;

			if (!(left & (1u << w)) ||
			    waitpid(C.ch[w].pid, &st, WNOHANG) != C.ch[w].pid)
				continue;
			C.ch[w].pid = 0;
			C.ch[w].status = st;
			left &= ~(1u << w);
		}
		if (!left)
			break;
		if (cli_now_ns() - t0 > limit) {
			cli_err("stress-ng did not stop within %llu s of its --timeout",
				GRACE_NS / 1000000000ull);
			return CLI_FAIL;
		}
		r = next_sample(NULL, 100);
		if (r < 0 && r != -ETIMEDOUT)
			return sample_err(r);
	}
	for (int w = 0; w < VW_N; w++) {
		char tail[256];
		int st = C.ch[w].status;

		if (!(mask & (1u << w)) || (WIFEXITED(st) && !WEXITSTATUS(st)))
			continue;
		vsys_log_tail(&C.ch[w], tail, sizeof(tail));
		if (WIFEXITED(st))
			cli_err("stress-ng (%s) failed with exit status %d%s%s",
				vw_names[w], WEXITSTATUS(st), *tail ? ": " : "",
				tail);
		else
			cli_err("stress-ng (%s) was killed by signal %d",
				vw_names[w], WTERMSIG(st));
		return CLI_FAIL;
	}
	/* stress-ng's own children: gone with it, or soon after. */
	for (int w = 0; w < VW_N; w++) {
		uint64_t t = cli_now_ns();

		while ((mask & (1u << w)) && !vsys_cg_empty(C.ch[w].dir)) {
			if (cli_stop)
				return sample_err(-EINTR);
			if (cli_now_ns() - t > 10000000000ull) {
				cli_err("cgroup %s: tasks left 10 s after stress-ng ended",
					C.ch[w].dir);
				return CLI_FAIL;
			}
			cli_sleep_ns(20000000);
		}
	}
	return 0;
}

/* A repetition's runs, as the CSV and the report need them. */
struct result {
	double elapsed_s;
	int64_t node_uj, idle_uj, tasks_uj;
	int64_t attr_uj[VW_N];
};

static const char *const kind_names[] = { "idle", "alone", "together" };
enum { K_IDLE, K_ALONE, K_TOGETHER };

static void csv_header(FILE *fp)
{
	fprintf(fp,
		"repeat,run,workloads,elapsed_s,node_uj_before,node_uj_after,"
		"node_de_uj,idle_de_uj,tasks_de_uj,idle_w,measured_j");
	for (int w = 0; w < VW_N; w++)
		fprintf(fp, ",%s_uj", vw_names[w]);
	fprintf(fp, ",source\n");
}

static int csv_row(unsigned int rep, int kind, unsigned int mask,
		   const struct snap *a, const struct snap *b,
		   const struct result *r, double idle_w, double measured_j)
{
	FILE *fp = C.csv;
	bool first = true;

	if (!fp)
		return 0;
	fprintf(fp, "%u,%s,", rep, kind_names[kind]);
	if (!mask)
		fputc('-', fp);
	for (int w = 0; w < VW_N; w++) {
		if (!(mask & (1u << w)))
			continue;
		fprintf(fp, "%s%s", first ? "" : "+", vw_names[w]);
		first = false;
	}
	fprintf(fp,
		",%.6f,%" PRIu64 ",%" PRIu64 ",%" PRId64 ",%" PRId64 ",%" PRId64
		",%.6f,",
		r->elapsed_s, a->node.energy_uj, b->node.energy_uj, r->node_uj,
		r->idle_uj, r->tasks_uj, idle_w);
	if (kind == K_ALONE)
		fprintf(fp, "%.6f", measured_j);
	for (int w = 0; w < VW_N; w++) {
		fputc(',', fp);
		if (mask & (1u << w))
			fprintf(fp, "%" PRId64, r->attr_uj[w]);
	}
	fprintf(fp, ",%s\n", out_source_name(b->node.source));
	if (fflush(fp)) {
		cli_err("%s: write error: %s", C.o->csv, strerror(errno));
		return CLI_FAIL;
	}
	return 0;
}

/*
 * One run: nothing (mask 0: idle), one workload or all together, between
 * two snapshots. 0 or an exit status.
 */
static int run_one(int kind, unsigned int mask, struct snap *a, struct snap *b,
		   struct result *r)
{
	int rc;

	rc = snapshot(a);
	if (rc)
		return rc;
	C.in_run = true;
	C.unmeasured = 0;
	if (mask) {
		rc = run_workloads(mask);
	} else {
		uint64_t end = cli_now_ns() + C.o->duration * 1000000000ull;

		while (!rc && cli_now_ns() < end) {
			int s = next_sample(NULL, 100);

			if (s < 0 && s != -ETIMEDOUT)
				rc = sample_err(s);
		}
	}
	if (rc)
		goto out;
	/*
	 * A task's last counts are charged at the interval after its final
	 * switch-out: let two more intervals pass before reading.
	 */
	for (int i = 0; i < 2 && !rc; i++) {
		int s = next_sample(NULL, (int)C.sample_timeout_ms);

		if (s < 0)
			rc = sample_err(s);
	}
	if (!rc)
		rc = snapshot(b);
	if (rc)
		goto out;
	if (C.unmeasured || !(b->node.source & MEASURED)) {
		cli_err("the node's energy was not measured through the %s run "
			"(%" PRIu64
			" intervals without RAPL or a meter; source "
			"now %s): a wall meter that went silent?",
			kind_names[kind], C.unmeasured,
			out_source_name(b->node.source));
		rc = CLI_FAIL;
		goto out;
	}
	memset(r, 0, sizeof(*r));
	r->elapsed_s = (double)(b->t_ns - a->t_ns) / 1e9;
	r->node_uj = (int64_t)(b->node.energy_uj - a->node.energy_uj);
	r->idle_uj = (int64_t)(b->node.idle_uj - a->node.idle_uj);
	r->tasks_uj = (int64_t)(b->root_dyn - a->root_dyn);
	for (int w = 0; w < VW_N; w++)
		if (mask & (1u << w))
			r->attr_uj[w] = (int64_t)(b->dyn[w] - a->dyn[w]);
out:
	C.in_run = false;
	return rc;
}

/*
 * Repetition k's runs: idle, each workload alone, all of them together;
 * into rep and its rows (rowof[w]: workload w's). 0 or an exit status.
 */
static int repetition(unsigned int k, struct vreport *rep,
		      struct vreport_row *rows, const int *rowof)
{
	const unsigned int mask = C.o->workloads;
	struct snap a, b;
	struct result r;
	double idle_w;
	int64_t sum = 0;
	int rc;

	cli_note("repetition %u/%" PRIu64 ": idle (%" PRIu64 " s)", k,
		 C.o->repeat, C.o->duration);
	rc = run_one(K_IDLE, 0, &a, &b, &r);
	if (rc)
		return rc;
	idle_w = (double)r.node_uj / 1e6 / r.elapsed_s;
	vstat_add(&rep->idle_w, idle_w);
	rc = csv_row(k, K_IDLE, 0, &a, &b, &r, idle_w, NAN);
	if (rc)
		return rc;
	for (int w = 0; w < VW_N; w++) {
		double measured;

		if (!(mask & (1u << w)))
			continue;
		cli_note("repetition %u/%" PRIu64 ": %s alone", k, C.o->repeat,
			 vw_names[w]);
		rc = run_one(K_ALONE, 1u << w, &a, &b, &r);
		if (rc)
			return rc;
		/* Marginal: what the node drew above its idle power. */
		measured = (double)r.node_uj / 1e6 - idle_w * r.elapsed_s;
		vstat_add(&rows[rowof[w]].measured, measured);
		vstat_add(&rows[rowof[w]].alone, (double)r.attr_uj[w] / 1e6);
		rc = csv_row(k, K_ALONE, 1u << w, &a, &b, &r, idle_w, measured);
		if (rc)
			return rc;
	}
	cli_note("repetition %u/%" PRIu64 ": together", k, C.o->repeat);
	rc = run_one(K_TOGETHER, mask, &a, &b, &r);
	if (rc)
		return rc;
	for (int w = 0; w < VW_N; w++) {
		if (!(mask & (1u << w)))
			continue;
		vstat_add(&rows[rowof[w]].together, (double)r.attr_uj[w] / 1e6);
		sum += r.attr_uj[w];
	}
	rep->cons.runs++;
	rep->cons.workloads_uj += sum;
	rep->cons.others_uj += r.tasks_uj - sum;
	rep->cons.idle_uj += r.idle_uj;
	rep->cons.node_uj += r.node_uj;
	return csv_row(k, K_TOGETHER, mask, &a, &b, &r, idle_w, NAN);
}

/* Every repetition's runs, then the report. 0 or an exit status. */
static int validate(void)
{
	const unsigned int mask = C.o->workloads;
	struct vreport_row rows[VW_N];
	struct vreport rep = {
		.repeat = (unsigned int)C.o->repeat,
		.duration_s = (unsigned int)C.o->duration,
		.rows = rows,
		.hypervisor = vsys_hypervisor(),
	};
	int rowof[VW_N], nw = 0, rc;

	memset(rows, 0, sizeof(rows));
	for (int w = 0; w < VW_N; w++) {
		rowof[w] = -1;
		if (mask & (1u << w)) {
			rowof[w] = nw;
			rows[nw++].name = vw_names[w];
		}
	}
	rep.nrows = (size_t)nw;
	if (C.csv)
		csv_header(C.csv);
	for (unsigned int k = 1; k <= C.o->repeat; k++) {
		rc = repetition(k, &rep, rows, rowof);
		if (rc)
			return rc;
	}
	rep.source = out_source_name(C.source);
	vreport_print(stdout, &rep);
	return fflush(stdout) ? CLI_FAIL : CLI_OK;
}

/* ---- refusals and setup ---- */

/* What must hold before anything is started; 0 or CLI_USAGE with the reason. */
static int refuse(const struct opts *o)
{
	struct stat st;

	/* First: without the module nothing else matters (and this is safe anywhere). */
	if (stat("/sys/module/joules", &st)) {
		cli_err("the joules module is not loaded (no /sys/module/joules): "
			"modprobe joules");
		return CLI_USAGE;
	}
	if (geteuid() != 0) {
		cli_err("must run as root: it creates cgroups, moves stress-ng "
			"into them and reads the node's measured energy");
		return CLI_USAGE;
	}
	C.stress_ng = vsys_find_exec(o->stress_ng);
	if (!C.stress_ng) {
		if (strchr(o->stress_ng, '/'))
			cli_err("--stress-ng %s: not an executable file",
				o->stress_ng);
		else
			cli_err("stress-ng not found in PATH (apt-get install "
				"stress-ng, or --stress-ng PATH)");
		return CLI_USAGE;
	}
	if (!vsys_is_cgroup2(o->cgroot)) {
		cli_err("%s is not a cgroup v2 directory (mount -t cgroup2 none %s, "
			"or --cgroup-root DIR)",
			o->cgroot, o->cgroot);
		return CLI_USAGE;
	}
	if ((o->workloads & (1u << VW_NETWORK)) && !vsys_loopback_ok()) {
		cli_err("the loopback interface is down or has no 127.x address: "
			"stress-ng's sock stressor would listen on every interface "
			"(ip link set lo up)");
		return CLI_USAGE;
	}
	if ((stat(o->tmpdir, &st) || !S_ISDIR(st.st_mode) ||
	     access(o->tmpdir, W_OK | X_OK))) {
		cli_err("--tmpdir %s: not a writable directory (stress-ng's, where "
			"the io workload writes)",
			o->tmpdir);
		return CLI_USAGE;
	}
	return 0;
}

/*
 * --csv as root: never through a symlink (someone else's directory), only
 * a regular file, truncated once it is known to be one.
 */
static FILE *open_csv(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	struct stat st;
	FILE *fp;

	if (fd < 0) {
		cli_err("--csv %s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
		cli_err("--csv %s: not a regular file of its own (a link?)",
			path);
		close(fd);
		return NULL;
	}
	fp = ftruncate(fd, 0) ? NULL : fdopen(fd, "w");
	if (!fp) {
		cli_err("--csv %s: %s", path, strerror(errno));
		close(fd);
	}
	return fp;
}

static void on_hangup(int sig)
{
	(void)sig;
	cli_stop = 1;
}

static void catch_hup(void)
{
	struct sigaction old, sa;

	if (sigaction(SIGHUP, NULL, &old) || old.sa_handler == SIG_IGN)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_hangup;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGHUP, &sa, NULL);
}

/* The module, its node's source, its samples. 0 or an exit status. */
static int open_module(void)
{
	struct sample_rec s;
	struct node_rec n;
	uint32_t source;
	int err, r;

	err = jnl_open(&C.nl);
	if (err) {
		cli_err("%s", jnl_strerror(JNL_OP_OPEN, err));
		return err == -ENOENT ? CLI_USAGE : CLI_FAIL;
	}
	/* Not stress-ng's: it would hold a subscribed socket nobody reads. */
	fcntl(jnl_fd(C.nl), F_SETFD, FD_CLOEXEC);
	err = jnl_subscribe(C.nl, JNL_GRP_SAMPLES);
	if (err) {
		cli_err("cannot receive the module's samples: %s",
			jnl_strerror(JNL_OP_SUBSCRIBE, err));
		return CLI_FAIL;
	}
	/* Three intervals and a margin: a busy machine delays the worker. */
	C.sample_timeout_ms = 3 * read_interval_ms() + 2000;
	err = jnl_get_node(C.nl, &n);
	if (err) {
		cli_err("reading the node: %s",
			jnl_strerror(JNL_OP_GET_NODE, err));
		return CLI_FAIL;
	}
	source = n.source;
	/*
	 * The last interval can have ended before a meter's first reading (a
	 * meter started just now): then the next one, which ends after it
	 * (what was queued before is no later than the one just read).
	 */
	if (!(source & MEASURED)) {
		r = fresh_sample(&s);
		if (r < 0)
			return sample_err(r);
		source = s.source;
	}
	if (!(source & MEASURED)) {
		cli_err("the node's energy is not measured (source: %s): there is "
			"nothing to validate attribution against; run where RAPL is "
			"read or a wall meter is fed (joules-meterd)",
			out_source_name(source));
		return CLI_USAGE;
	}
	C.source = source;
	return 0;
}

static int make_cgroups(void)
{
	char err[512];
	struct vw_child base = { .logfd = -1 };

	if (snprintf(C.base, sizeof(C.base), "%s/joules-validate.%d",
		     C.o->cgroot, (int)getpid()) >= (int)sizeof(C.base)) {
		cli_err("--cgroup-root %.40s...: too long a path", C.o->cgroot);
		return CLI_FAIL;
	}
	snprintf(base.dir, sizeof(base.dir), "%s", C.base);
	if (vsys_cg_create(&base, err, sizeof(err))) {
		cli_err("%s", err);
		return CLI_FAIL;
	}
	C.base_made = true;
	for (int w = 0; w < VW_N; w++) {
		if (!(C.o->workloads & (1u << w)))
			continue;
		snprintf(C.ch[w].dir, sizeof(C.ch[w].dir), "%s/%s", C.base,
			 vw_names[w]);
		if (vsys_cg_create(&C.ch[w], err, sizeof(err))) {
			cli_err("%s", err);
			return CLI_FAIL;
		}
		C.made |= 1u << w;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	int rc;

	cli_prog = "joules-validate";
	rc = parse_args(argc, argv, &o);
	if (rc != CLI_GO)
		return rc;
	C.o = &o;
	for (int w = 0; w < VW_N; w++)
		C.ch[w].logfd = -1;
	rc = refuse(&o);
	if (!rc)
		rc = open_module();
	if (rc)
		goto out;
	if (o.csv && !(C.csv = open_csv(o.csv))) {
		rc = CLI_FAIL;
		goto out;
	}
	cli_catch_signals();
	/* A closed terminal ends a run as SIGTERM does (unless nohup'd). */
	catch_hup();
	rc = make_cgroups();
	if (!rc)
		rc = validate();
	cleanup();
	if (C.csv && fclose(C.csv) && !rc) {
		cli_err("%s: %s", o.csv, strerror(errno));
		rc = CLI_FAIL;
	}
out:
	if (C.nl)
		jnl_close(C.nl);
	free(C.stress_ng);
	return rc;
}
