// SPDX-License-Identifier: GPL-2.0
/*
 * joules-meterd: reads the node's wall meters each interval, sums them
 * into one cumulative energy and feeds it to joules.ko (METER_FEED), and/or
 * writes the trainer's meter CSV. See joules-meterd(8).
 *
 * Exit status: 0 success, 1 a failed reading (--once), a bad configuration
 * or a fatal error, 2 usage error.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "core.h" /* kmod/core.h: JL_VERSION */
#include "jmd.h"
#include "vm.h"
#include "uapi/joules_netlink.h"

struct opts {
	const char *conf;
	const char *csv;
	const char *channel, *vm_account, *vm_idle, *vm_energy;
	uint64_t count, interval_ns, per_user;
	bool once, no_feed, check, verbose, version, vm_host;
};

static const char help_text[] =
	"Usage: joules-meterd [OPTION]...\n"
	"Read the node's wall meters (PDU over SNMP, BMC over IPMI, or a command)\n"
	"each interval, sum them, and feed the node's cumulative energy to the\n"
	"joules module; or write the meter CSV joules-train reads.\n"
	"\n"
	"  -c, --config FILE   configuration (default " JMD_CONF_DEFAULT
	"); it holds\n"
	"                      the meters' credentials, which are never taken from\n"
	"                      the command line: it must be owned by root (or by the\n"
	"                      user running joules-meterd), writable by nobody else\n"
	"                      and not readable by others (mode 0600)\n"
	"      --once          read each input once, print its samples (input, label,\n"
	"                      kind, value) and their sum, and exit: 0 when every\n"
	"                      input answered with plausible values, 1 otherwise\n"
	"      --csv FILE      also write readings as CSV timestamp,watts (Unix\n"
	"                      seconds; '-': standard output), joules-train's --pdu\n"
	"      --no-feed       do not feed the module (only read; with --csv)\n"
	"      --count N       stop after N intervals\n"
	"      --check         check the configuration and exit\n"
	"  -v, --verbose       log every reading\n"
	"  -h, --help          this help\n"
	"  -V, --version       version\n"
	"\n"
	"On a host of QEMU VMs (no configuration file read):\n"
	"      --vm-host       write each VM's energy, as this host's joules\n"
	"                      attributes it, into the VM's virtio-serial channel\n"
	"                      every interval (inside the VM, a [virtio] input\n"
	"                      reads it); needs root\n"
	"      --channel NAME  the channel's name (default " JMD_VM_CHANNEL
	")\n"
	"      --vm-account auto|cgroup|process\n"
	"                      a VM's energy: its libvirt machine scope's cgroup,\n"
	"                      or its QEMU process's (auto: the scope if it is in\n"
	"                      one)\n"
	"      --vm-idle exclude|include\n"
	"                      the VM's share of the host's idle energy too\n"
	"                      (include; needs idle_split = 1) or not (default)\n"
	"      --vm-energy lagged|live\n"
	"                      measured energy as users without CAP_PERFMON see\n"
	"                      it (default: a VM's owner reads its channel), or\n"
	"                      as charged each interval (live)\n"
	"      --vm-per-user N VMs served of one user but root (default 256)\n"
	"      --interval S    seconds between lines (default 1, 0.1 .. 10)\n"
	"\n"
	"An input that fails or a reading refused as implausible is logged once\n"
	"per change of state; an interval with any input failed feeds nothing\n"
	"(a partial sum would understate the node), and the next good reading\n"
	"starts a new baseline (METER_RESET). Without the module loaded, readings\n"
	"go on and the feed is retried every interval.\n";

static void help(FILE *fp)
{
	fputs(help_text, fp);
}

/* The default's own pointer: --config given (even as the default) differs. */
static const char conf_default[] = JMD_CONF_DEFAULT;

static int parse_args(int argc, char **argv, struct opts *o)
{
	enum {
		O_ONCE = 0x100,
		O_CSV,
		O_NOFEED,
		O_CHECK,
		O_COUNT,
		O_VMHOST,
		O_CHANNEL,
		O_VMACCOUNT,
		O_VMIDLE,
		O_VMENERGY,
		O_INTERVAL,
		O_PERUSER
	};
	const struct cli_opt table[] = {
		CLI_OPT_STR("config", 'c', &o->conf),
		CLI_OPT_FLAG("once", O_ONCE, &o->once),
		CLI_OPT_STR("csv", O_CSV, &o->csv),
		CLI_OPT_FLAG("no-feed", O_NOFEED, &o->no_feed),
		CLI_OPT_COUNT("count", O_COUNT, &o->count,
			      "--count '%s': want a positive number"),
		CLI_OPT_FLAG("check", O_CHECK, &o->check),
		CLI_OPT_FLAG("vm-host", O_VMHOST, &o->vm_host),
		CLI_OPT_STR("channel", O_CHANNEL, &o->channel),
		CLI_OPT_STR("vm-account", O_VMACCOUNT, &o->vm_account),
		CLI_OPT_STR("vm-idle", O_VMIDLE, &o->vm_idle),
		CLI_OPT_STR("vm-energy", O_VMENERGY, &o->vm_energy),
		CLI_OPT_COUNT("vm-per-user", O_PERUSER, &o->per_user,
			      "--vm-per-user '%s': want a positive number"),
		CLI_OPT_SECS("interval", O_INTERVAL, &o->interval_ns,
			     100000000ULL,
			     "--interval '%s': want seconds, at least 0.1"),
		CLI_OPT_FLAG("verbose", 'v', &o->verbose),
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

	o->conf = conf_default;
	rc = cli_getopt(&cl, argc, argv);
	if (rc != CLI_GO)
		return rc;
	if (o->version) {
		printf("joules-meterd %s (netlink family version %d)\n",
		       JL_VERSION, JOULES_GENL_VERSION);
		return CLI_OK;
	}
	if (o->once + o->check > 1)
		return cli_usage(NULL, "--once and --check exclude each other");
	if (o->vm_host && (o->once || o->check || o->csv || o->no_feed ||
			   o->conf != conf_default))
		return cli_usage(NULL,
				 "--vm-host takes none of --config, --once, "
				 "--check, --csv, --no-feed");
	if (!o->vm_host && (o->channel || o->vm_account || o->vm_idle ||
			    o->vm_energy || o->interval_ns || o->per_user))
		return cli_usage(NULL,
				 "--channel, --vm-account, --vm-idle, "
				 "--vm-energy, --vm-per-user and --interval "
				 "go with --vm-host");
	if (o->interval_ns > 10000000000ULL)
		return cli_usage(NULL, "--interval: at most 10 s");
	return CLI_GO;
}

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void logf_(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", cli_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}

static void acc_logger(void *ctx, const char *msg)
{
	(void)ctx;
	logf_("%s", msg);
}

/* ---- CSV ---- */

static FILE *csv_open(const char *path)
{
	FILE *fp;

	if (!strcmp(path, "-"))
		fp = stdout;
	else
		fp = fopen(path, "w");
	if (!fp) {
		cli_err("%s: %s", path, strerror(errno));
		return NULL;
	}
	fprintf(fp, "timestamp,watts\n");
	fflush(fp);
	return fp;
}

static int csv_row(FILE *fp, double watts)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	fprintf(fp, "%lld.%03ld,%.3f\n", (long long)ts.tv_sec,
		ts.tv_nsec / 1000000, watts);
	return fflush(fp) ? -1 : 0;
}

/* ---- reading ---- */

struct input_state {
	bool failed; /* last reading failed */
	char err[256];
};

/*
 * Read every input into s/n; each input's failure is logged when its
 * state changes. Returns the number of inputs that failed.
 */
static size_t read_all(struct jmd_conf *c, struct input_state *st,
		       struct jmd_sample s[][JMD_MAX_SAMPLES], size_t *n,
		       bool quiet)
{
	size_t failed = 0;

	for (size_t i = 0; i < c->nin; i++) {
		struct jmd_input *in = &c->in[i];
		char err[256] = "";

		n[i] = 0;
		if (in->be->read(in, s[i], &n[i], err, sizeof(err)) ||
		    n[i] > JMD_MAX_SAMPLES) {
			if (!err[0])
				snprintf(err, sizeof(err), "read failed");
			n[i] = 0;
			failed++;
			if (!quiet && (!st[i].failed || strcmp(st[i].err, err)))
				logf_("[%s %s]: %s%s", in->be->type, in->name,
				      err,
				      st[i].failed ?
					      "" :
					      " (nothing fed until it answers)");
			st[i].failed = true;
			snprintf(st[i].err, sizeof(st[i].err), "%s", err);
			continue;
		}
		if (st[i].failed && !quiet)
			logf_("[%s %s]: answers again", in->be->type, in->name);
		st[i].failed = false;
	}
	return failed;
}

static int run_once(struct jmd_conf *c, const struct opts *o)
{
	static struct jmd_sample s[JMD_MAX_INPUTS][JMD_MAX_SAMPLES];
	static struct input_state st[JMD_MAX_INPUTS];
	const struct jmd_sample *sp[JMD_MAX_INPUTS];
	size_t n[JMD_MAX_INPUTS];
	struct jmd_step step;
	struct jmd_acc acc;
	size_t failed;
	FILE *csv = NULL;
	int rc = CLI_OK;

	failed = read_all(c, st, s, n, true);
	for (size_t i = 0; i < c->nin; i++) {
		if (st[i].failed) {
			printf("%s\t-\terror\t%s\n", c->in[i].name, st[i].err);
			continue;
		}
		for (size_t k = 0; k < n[i]; k++) {
			printf("%s\t%s\t%s\t%.12g", c->in[i].name,
			       s[i][k].label, jmd_kind_name(s[i][k].kind),
			       s[i][k].value);
			if (s[i][k].kind == JMD_ENERGY && s[i][k].wrap_j > 0)
				printf("\twrap %.12g", s[i][k].wrap_j);
			putchar('\n');
		}
	}
	if (failed) {
		fflush(stdout);
		cli_err("%zu of %zu inputs failed", failed, c->nin);
		return CLI_FAIL;
	}
	jmd_acc_init(&acc, c->nin, c->max_power, 0);
	for (size_t i = 0; i < c->nin; i++)
		sp[i] = s[i];
	jmd_acc_step(&acc, cli_now_ns(), sp, n, &step);
	if (!step.feed) {
		fflush(stdout);
		cli_err("refused: %s", step.why);
		return CLI_FAIL;
	}
	if (step.have_watts)
		printf("sum\t-\tpower\t%.12g\n", step.watts);
	if (o->csv && step.have_watts) {
		csv = csv_open(o->csv);
		if (!csv || csv_row(csv, step.watts))
			rc = CLI_FAIL;
		if (csv && csv != stdout)
			fclose(csv);
	}
	return rc;
}

/* The daemon's state from one interval to the next (run and its steps). */
struct run_state {
	struct jmd_conf *c;
	const struct opts *o;
	struct jmd_acc acc;
	struct jmd_feeder f;
	FILE *csv;
	uint64_t next; /* the next interval's start */
	uint64_t last_good; /* the last good reading's time */
	char last_why[512]; /* the last refusal, logged once */
	bool silent, late;
};

/*
 * One round of reads into the accumulator: step says what to feed
 * (nothing when an input failed or the reading was refused).
 */
static void read_round(struct run_state *r, struct jmd_step *step)
{
	static struct jmd_sample s[JMD_MAX_INPUTS][JMD_MAX_SAMPLES];
	static struct input_state st[JMD_MAX_INPUTS];
	const struct jmd_sample *sp[JMD_MAX_INPUTS];
	size_t n[JMD_MAX_INPUTS];
	uint64_t t0 = cli_now_ns(), t;

	if (read_all(r->c, st, s, n, false)) {
		jmd_acc_gap(&r->acc);
		memset(step, 0, sizeof(*step));
		return;
	}
	for (size_t i = 0; i < r->c->nin; i++)
		sp[i] = s[i];
	/* The meters were read somewhere in [t0, now]: its middle. */
	t = cli_now_ns();
	t = t0 + (t - t0) / 2;
	jmd_acc_step(&r->acc, t, sp, n, step);
	/*
	 * A VM port's read waits for the host's next line: when its value was
	 * taken is not known, so the reading goes without an age.
	 */
	for (size_t i = 0; i < r->c->nin; i++)
		if (!strcmp(r->c->in[i].be->type, "virtio"))
			step->t_ns = 0;
	if (!step->feed && strcmp(step->why, r->last_why))
		logf_("reading refused (nothing fed): %s", step->why);
	snprintf(r->last_why, sizeof(r->last_why), "%s",
		 step->feed ? "" : step->why);
}

/* A good reading: logged, fed, written as CSV. -1: the CSV write failed. */
static int use_reading(struct run_state *r, const struct jmd_step *step)
{
	const struct opts *o = r->o;

	if (r->silent)
		logf_("meter readings again after %.1f s",
		      (double)(cli_now_ns() - r->last_good) / 1e9);
	r->silent = false;
	r->last_good = cli_now_ns();
	if (o->verbose)
		logf_("reading: %s%.3f W, %llu uJ%s",
		      step->have_watts ? "" : "(no rate yet) ",
		      step->have_watts ? step->watts : 0.0,
		      (unsigned long long)step->uj,
		      step->reset ? ", new baseline" : "");
	if (!o->no_feed)
		jmd_feed(&r->f, step->uj, step->t_ns, step->reset, o->verbose);
	if (r->csv && step->have_watts && csv_row(r->csv, step->watts)) {
		cli_err("%s: write error: %s", o->csv, strerror(errno));
		return -1;
	}
	return 0;
}

/* Sleep to the next interval's start; those already past are skipped. */
static void wait_interval(struct run_state *r)
{
	uint64_t interval_ns = r->c->interval_ns, t;

	r->next += interval_ns;
	t = cli_now_ns();
	if (r->next <= t) {
		if (!r->late)
			logf_("reading the inputs takes longer than the "
			      "interval: intervals skipped");
		r->late = true;
		r->next = t + interval_ns - (t - r->next) % interval_ns;
	} else {
		r->late = false;
	}
	cli_sleep_ns(r->next - t);
}

static int run(struct jmd_conf *c, const struct opts *o)
{
	struct run_state r = { .c = c, .o = o };
	uint64_t done = 0, round_ns = 0;
	int rc = CLI_OK;

	if (o->csv && !(r.csv = csv_open(o->csv)))
		return CLI_FAIL;
	jmd_feeder_init(&r.f, c->name);
	r.f.log = acc_logger;
	/*
	 * Readings further apart than a few intervals plus the longest a
	 * round of reads may take (each input to its timeout, one after the
	 * other) are a gap (a suspended host, a stopped daemon), not a slope.
	 */
	for (size_t i = 0; i < c->nin; i++)
		round_ns += c->in[i].timeout_ms * 1000000ull;
	jmd_acc_init(&r.acc, c->nin, c->max_power,
		     3 * c->interval_ns + 2 * round_ns);
	r.acc.log = acc_logger;
	logf_("meter '%s': %zu input%s every %.3g s%s%s", c->name, c->nin,
	      c->nin == 1 ? "" : "s", (double)c->interval_ns / 1e9,
	      o->no_feed ? ", not feeding the module" : "",
	      r.csv ? ", writing CSV" : "");
	r.next = r.last_good = cli_now_ns();
	while (!cli_stop && (!o->count || done < o->count)) {
		struct jmd_step step;

		read_round(&r, &step);
		if (step.feed) {
			if (use_reading(&r, &step)) {
				rc = CLI_FAIL;
				break;
			}
		} else if (!r.silent &&
			   cli_now_ns() - r.last_good > c->silent_after_ns) {
			logf_("no good reading for %.1f s (silent_after): the module "
			      "falls back to its model",
			      (double)(cli_now_ns() - r.last_good) / 1e9);
			r.silent = true;
		}
		done++;
		if (o->count && done >= o->count)
			break;
		wait_interval(&r);
	}
	if (r.csv && r.csv != stdout)
		fclose(r.csv);
	jmd_feeder_close(&r.f);
	return rc;
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	static struct jmd_conf c;
	char err[512];
	int rc;

	cli_prog = "joules-meterd";
	rc = parse_args(argc, argv, &o);
	if (rc != CLI_GO)
		return rc;
	if (o.vm_host) {
		cli_catch_signals();
		return jmd_vm_host(o.channel, o.vm_account, o.vm_idle,
				   o.vm_energy, o.interval_ns, o.count,
				   o.per_user, o.verbose);
	}
	if (jmd_conf_load(o.conf, &c, err, sizeof(err))) {
		cli_err("%s", err);
		return CLI_FAIL;
	}
	if (o.check) {
		printf("%s: meter '%s', %zu input%s, interval %.3g s: OK\n",
		       o.conf, c.name, c.nin, c.nin == 1 ? "" : "s",
		       (double)c.interval_ns / 1e9);
		jmd_conf_free(&c);
		return CLI_OK;
	}
	cli_catch_signals();
	rc = o.once ? run_once(&c, &o) : run(&c, &o);
	jmd_conf_free(&c);
	return rc;
}
