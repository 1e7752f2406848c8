// SPDX-License-Identifier: GPL-2.0
/* The benchmarks' harness: A/B alternation, statistics, /proc readers. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

bool bench_quiet;

double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void bench_sleep(double sec)
{
	struct timespec ts = { (time_t)sec, (long)((sec - (time_t)sec) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int bench_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -1 : 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double bench_median(double *v, unsigned int n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	return n & 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int bench_read_file(const char *path, char *buf, size_t size)
{
	ssize_t n;
	size_t off = 0;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -1;
	while (off < size - 1) {
		n = read(fd, buf + off, size - 1 - off);
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	buf[off] = 0;
	close(fd);
	return (int)off;
}

int bench_write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

long long bench_read_ll(const char *path)
{
	char buf[64];

	if (bench_read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	return strtoll(buf, NULL, 10);
}

#define THREADS_MAX "/proc/sys/kernel/threads-max"
#define PID_MAX "/proc/sys/kernel/pid_max"

/* Raise a limit to n + 4096; the old value to restore, or -1. */
static long long raise_limit(const char *path, unsigned long n)
{
	long long old = bench_read_ll(path);
	char buf[32];

	if (old < 0 || (unsigned long long)old >= n + 4096)
		return -1;
	snprintf(buf, sizeof(buf), "%lu", n + 4096);
	if (bench_write_file(path, buf))
		fprintf(stderr, "bench: cannot raise %s to %s\n", path, buf);
	return old;
}

static void restore_limit(const char *path, long long old)
{
	char buf[32];

	if (old < 0)
		return;
	snprintf(buf, sizeof(buf), "%lld", old);
	bench_write_file(path, buf);
}

void bench_task_room(unsigned long n, struct bench_limits *old)
{
	old->threads = raise_limit(THREADS_MAX, n);
	old->pids = raise_limit(PID_MAX, n);
}

void bench_task_room_restore(const struct bench_limits *old)
{
	restore_limit(THREADS_MAX, old->threads);
	restore_limit(PID_MAX, old->pids);
}

int bench_proc_stat(struct bench_stat *s)
{
	static char buf[16384];
	unsigned long long v[10] = { 0 };
	char *p;

	if (bench_read_file("/proc/stat", buf, sizeof(buf)) <= 0)
		return -1;
	/* cpu user nice system idle iowait irq softirq steal guest guest_nice */
	if (sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
		   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) < 8)
		return -1;
	s->busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
	s->idle = v[3] + v[4];
	p = strstr(buf, "\nctxt ");
	s->ctxt = p ? strtoull(p + 6, NULL, 10) : 0;
	return 0;
}

long long bench_cal_ipis(void)
{
	static char buf[65536];
	long long sum = 0;
	char *p, *end;

	if (bench_read_file("/proc/interrupts", buf, sizeof(buf)) <= 0)
		return -1;
	p = strstr(buf, "\n CAL:");
	if (!p)
		p = strstr(buf, "\nCAL:");
	if (!p)
		return -1;
	p = strchr(p, ':') + 1;
	/* Per-CPU counts, then the description ("Function call interrupts"). */
	for (;;) {
		long long n = strtoll(p, &end, 10);

		if (end == p)
			break;
		sum += n;
		p = end;
	}
	return sum;
}

long bench_slab_active(long *per_slab)
{
	char line[512];
	long act = -1, num, per;
	FILE *f;

	/* Free objects parked in per-CPU slabs count as active until shrunk. */
	bench_write_file("/sys/kernel/slab/joules_entry/shrink", "1");
	f = fopen("/proc/slabinfo", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "joules_entry %ld %ld %*d %ld", &act, &num,
			   &per) == 3) {
			if (per_slab)
				*per_slab = per;
			break;
		}
	}
	fclose(f);
	return act;
}

/* Sum of the on-CPU time (ns) of every task named kworker/... now. */
double bench_kworker_ns(void)
{
	char path[300], buf[128];
	struct dirent *de;
	double sum = 0;
	DIR *d = opendir("/proc");

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		if (bench_read_file(path, buf, sizeof(buf)) <= 0 ||
		    strncmp(buf, "kworker/", 8))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/schedstat", de->d_name);
		if (bench_read_file(path, buf, sizeof(buf)) > 0)
			sum += strtod(buf, NULL);
	}
	closedir(d);
	return sum;
}

bool bench_module_loaded(void)
{
	struct stat st;

	return !stat("/sys/module/joules", &st);
}

static int module_switch(bool on)
{
	const char *cmd =
		getenv(on ? "JOULES_BENCH_LOAD" : "JOULES_BENCH_UNLOAD");
	int rc;

	if (!cmd)
		cmd = on ? ". /lib/joules/lib.sh && joules_load" :
			   ". /lib/joules/lib.sh && joules_unload";
	rc = system(cmd);
	if (rc || bench_module_loaded() != on) {
		fprintf(stderr, "bench: '%s' failed (status %d)\n", cmd, rc);
		return -1;
	}
	return 0;
}

/*
 * Whether the collector is attached: ours to track, since it is a user
 * process holding BPF links, not something sysfs shows. run-bench.sh
 * starts from a detached collector.
 */
static bool bpf_attached;

/*
 * Attach the collector. Its command says why it could not on stdout (and
 * whatever else on stderr), so that the first failure can be reported as
 * the reason the bpf side is skipped. 0, or -1 with why[] filled.
 */
static int bpf_attach(char *why, size_t size)
{
	const char *cmd = getenv("JOULES_BENCH_BPF_ON");
	char line[256];
	FILE *p;
	int rc;

	why[0] = 0;
	if (!cmd || !*cmd) {
		snprintf(
			why, size,
			"JOULES_BENCH_BPF_ON is not set (run-bench.sh sets it)");
		return -1;
	}
	fflush(stdout);
	p = popen(cmd, "r");
	if (!p) {
		snprintf(why, size, "popen: %s", strerror(errno));
		return -1;
	}
	/* The last non-empty line is the reason. */
	while (fgets(line, sizeof(line), p)) {
		line[strcspn(line, "\n")] = 0;
		if (line[0])
			snprintf(why, size, "%s", line);
	}
	rc = pclose(p);
	if (rc) {
		if (!why[0])
			snprintf(why, size, "'%s' failed (status %d)", cmd, rc);
		return -1;
	}
	bpf_attached = true;
	return 0;
}

static int bpf_detach(void)
{
	const char *cmd = getenv("JOULES_BENCH_BPF_OFF");
	int rc;

	if (!cmd || !*cmd) {
		fprintf(stderr, "bench: JOULES_BENCH_BPF_OFF is not set\n");
		return -1;
	}
	rc = system(cmd);
	if (rc) {
		fprintf(stderr, "bench: '%s' failed (status %d)\n", cmd, rc);
		return -1;
	}
	bpf_attached = false;
	return 0;
}

int bench_set_state(enum bench_state s)
{
	bool changed = false;
	char why[256];

	if (s != BENCH_BPF && bpf_attached) {
		if (bpf_detach())
			return -1;
		changed = true;
	}
	if (bench_module_loaded() != (s == BENCH_MODULE)) {
		if (module_switch(s == BENCH_MODULE))
			return -1;
		changed = true;
	}
	if (s == BENCH_BPF && !bpf_attached) {
		if (bpf_attach(why, sizeof(why))) {
			fprintf(stderr, "bench: BPF collector: %s\n", why);
			return -1;
		}
		changed = true;
	}
	/*
	 * Let the switch settle: after a load the worker's first intervals,
	 * after an unload the RCU callbacks that free the table, after a
	 * detach the links' and maps' deferred release.
	 */
	if (changed)
		bench_sleep(0.5);
	return 0;
}

int bench_set_loaded(bool on)
{
	return bench_set_state(on ? BENCH_MODULE : BENCH_OFF);
}

struct spread {
	double med, min, max;
	unsigned int n;
};

static struct spread spread_of(const double *v, unsigned int n)
{
	double s[BENCH_MAX_REPS];
	struct spread r = { NAN, NAN, NAN, 0 };
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!isnan(v[i]))
			s[r.n++] = v[i];
	if (!r.n)
		return r;
	r.med = bench_median(s, r.n);
	r.min = s[0];
	r.max = s[r.n - 1];
	return r;
}

static const char *const state_name[BENCH_NR_STATES] = { "off", "on", "bpf" };

/*
 * The order of the sides in round r is orders[r % 6]: over six rounds
 * every side comes first, second and last twice, so slow drift hits the
 * three alike. Without the bpf side the rows reduce to off,on then on,off
 * alternately, the pairs of the two-sided benchmark.
 */
static const enum bench_state orders[6][BENCH_NR_STATES] = {
	{ BENCH_OFF, BENCH_MODULE, BENCH_BPF },
	{ BENCH_BPF, BENCH_MODULE, BENCH_OFF },
	{ BENCH_OFF, BENCH_BPF, BENCH_MODULE },
	{ BENCH_MODULE, BENCH_OFF, BENCH_BPF },
	{ BENCH_BPF, BENCH_OFF, BENCH_MODULE },
	{ BENCH_MODULE, BENCH_BPF, BENCH_OFF },
};

static void order_name(unsigned int rep, bool bpf, char *buf, size_t size)
{
	size_t len = 0;
	unsigned int k;

	buf[0] = 0;
	for (k = 0; k < BENCH_NR_STATES; k++) {
		enum bench_state st = orders[rep % 6][k];

		if (st == BENCH_BPF && !bpf)
			continue;
		len += (size_t)snprintf(buf + len, size - len, "%s%s",
					len ? "," : "", state_name[st]);
	}
}

/* Per-round ratios a/b and differences a-b of one metric. */
static void ratios(const double *a, const double *b, unsigned int n,
		   double *ratio, double *diff)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		ratio[i] = b[i] > 0 ? a[i] / b[i] : NAN;
		diff[i] = a[i] - b[i];
	}
}

int bench_run_ab(const struct bench_def *d)
{
	static double v[BENCH_NR_STATES][BENCH_MAX_METRICS][BENCH_MAX_REPS];
	double ratio[BENCH_MAX_REPS], diff[BENCH_MAX_REPS];
	double out[BENCH_MAX_METRICS];
	unsigned int rep, k, m, reps = d->reps;
	char bpf_skip[256] = "", order[32];
	bool bpf = d->with_bpf;
	int missed = 0;

	if (reps > BENCH_MAX_REPS)
		reps = BENCH_MAX_REPS;
	/*
	 * Whether the collector can be attached here at all: if not, its side
	 * is skipped with the reason, and the module's pairs run as before.
	 */
	if (bpf && bench_set_loaded(false) == 0 &&
	    bpf_attach(bpf_skip, sizeof(bpf_skip))) {
		printf("%s: BPF collector side skipped: %s\n", d->name,
		       bpf_skip);
		bpf = false;
	}
	/* A warm-up trial, discarded: page cache, slab caches, branch predictors. */
	if (bench_set_state(BENCH_OFF) ||
	    (!d->no_warmup && d->trial(d->arg, false, out)))
		return -1;
	for (rep = 0; rep < reps; rep++) {
		for (k = 0; k < BENCH_NR_STATES; k++) {
			enum bench_state st = orders[rep % 6][k];
			bool loaded = st == BENCH_MODULE;

			if (st == BENCH_BPF && !bpf)
				continue;
			if (bench_set_state(st) ||
			    d->trial(d->arg, loaded, out))
				return -1;
			for (m = 0; m < d->nr_metrics; m++)
				v[st][m][rep] = out[m];
			if (loaded && d->after_loaded &&
			    d->after_loaded(d->arg))
				missed = 1;
		}
		if (bench_quiet)
			continue;
		order_name(rep, bpf, order, sizeof(order));
		printf("%s %2u (%s):", bpf ? "round" : "pair", rep + 1, order);
		for (m = 0; m < d->nr_metrics; m++) {
			double a = v[BENCH_OFF][m][rep],
			       b = v[BENCH_MODULE][m][rep];

			printf("  %s off %.4g on %.4g", d->metrics[m].name, a,
			       b);
			if (bpf)
				printf(" bpf %.4g", v[BENCH_BPF][m][rep]);
			printf(" %s (x%.4f", d->metrics[m].unit,
			       a > 0 ? b / a : NAN);
			if (bpf)
				printf(", bpf x%.4f",
				       a > 0 ? v[BENCH_BPF][m][rep] / a : NAN);
			printf(")");
		}
		printf("\n");
		fflush(stdout);
	}
	if (bench_set_state(BENCH_OFF))
		return -1;

	for (m = 0; m < d->nr_metrics; m++) {
		const struct bench_metric *bm = &d->metrics[m];
		const double *off = v[BENCH_OFF][m], *on = v[BENCH_MODULE][m];
		struct spread a = spread_of(off, reps), b = spread_of(on, reps);
		struct spread r, df;

		ratios(on, off, reps, ratio, diff);
		r = spread_of(ratio, reps);
		df = spread_of(diff, reps);
		printf("%s: %s (%s), %u pairs: off median %.4g [%.4g .. %.4g], on median %.4g [%.4g .. %.4g]\n",
		       d->name, bm->name, bm->unit, reps, a.med, a.min, a.max,
		       b.med, b.min, b.max);
		printf("%s: %s: on/off ratio median %.4f [%.4f .. %.4f], on-off median %+.4g %s [%+.4g .. %+.4g]\n",
		       d->name, bm->name, r.med, r.min, r.max, df.med, bm->unit,
		       df.min, df.max);
		printf("RESULT %s %s %s off=%.6g on=%.6g ratio=%.6g ratio_min=%.6g ratio_max=%.6g diff=%.6g",
		       d->name, bm->name, bm->unit, a.med, b.med, r.med, r.min,
		       r.max, df.med);
		if (bm->goal > 0) {
			bool met = r.med <= bm->goal;

			printf(" goal=%.4g status=%s", bm->goal,
			       met ? "met" : "missed");
			if (!met)
				missed = 1;
		}
		printf("\n");
	}
	if (!d->with_bpf)
		goto done;
	/*
	 * The collector's side: no goal (the goals are the module's), and
	 * never a number when it could not run.
	 */
	for (m = 0; m < d->nr_metrics; m++) {
		const struct bench_metric *bm = &d->metrics[m];
		const double *off = v[BENCH_OFF][m], *on = v[BENCH_MODULE][m];
		const double *c = v[BENCH_BPF][m];
		struct spread a, cs, r, df, vm;

		if (!bpf) {
			printf("RESULT %s-bpf %s %s status=skipped reason=%s\n",
			       d->name, bm->name, bm->unit, bpf_skip);
			continue;
		}
		a = spread_of(off, reps);
		cs = spread_of(c, reps);
		ratios(c, off, reps, ratio, diff);
		r = spread_of(ratio, reps);
		df = spread_of(diff, reps);
		printf("%s: %s (%s), %u rounds: bpf median %.4g [%.4g .. %.4g]\n",
		       d->name, bm->name, bm->unit, reps, cs.med, cs.min,
		       cs.max);
		printf("%s: %s: bpf/off ratio median %.4f [%.4f .. %.4f], bpf-off median %+.4g %s [%+.4g .. %+.4g]\n",
		       d->name, bm->name, r.med, r.min, r.max, df.med, bm->unit,
		       df.min, df.max);
		printf("RESULT %s-bpf %s %s off=%.6g bpf=%.6g ratio=%.6g ratio_min=%.6g ratio_max=%.6g diff=%.6g",
		       d->name, bm->name, bm->unit, a.med, cs.med, r.med, r.min,
		       r.max, df.med);
		ratios(c, on, reps, ratio, diff);
		vm = spread_of(ratio, reps);
		printf(" vs_module=%.6g\n", vm.med);
	}
done:
	fflush(stdout);
	return missed;
}

int bench_run_loaded(const struct bench_def *d)
{
	double v[BENCH_MAX_METRICS][BENCH_MAX_REPS], out[BENCH_MAX_METRICS];
	unsigned int rep, m, reps = d->reps;
	int missed = 0;

	if (reps > BENCH_MAX_REPS)
		reps = BENCH_MAX_REPS;
	if (bench_set_loaded(true) ||
	    (!d->no_warmup && d->trial(d->arg, true, out)))
		return -1;
	for (rep = 0; rep < reps; rep++) {
		if (d->trial(d->arg, true, out))
			return -1;
		for (m = 0; m < d->nr_metrics; m++)
			v[m][rep] = out[m];
		if (bench_quiet)
			continue;
		printf("trial %2u:", rep + 1);
		for (m = 0; m < d->nr_metrics; m++)
			printf("  %s %.4g %s", d->metrics[m].name, out[m],
			       d->metrics[m].unit);
		printf("\n");
		fflush(stdout);
	}
	for (m = 0; m < d->nr_metrics; m++) {
		const struct bench_metric *bm = &d->metrics[m];
		struct spread s = spread_of(v[m], reps);

		printf("%s: %s (%s), %u trials: median %.4g [%.4g .. %.4g]\n",
		       d->name, bm->name, bm->unit, reps, s.med, s.min, s.max);
		printf("RESULT %s %s %s value=%.6g min=%.6g max=%.6g", d->name,
		       bm->name, bm->unit, s.med, s.min, s.max);
		if (bm->goal > 0) {
			bool met = s.med <= bm->goal;

			printf(" goal=%.4g status=%s", bm->goal,
			       met ? "met" : "missed");
			if (!met)
				missed = 1;
		}
		printf("\n");
	}
	fflush(stdout);
	return missed;
}

#define SLEEPER_STACK (16 * 1024)

static pid_t *sleeper_pids;
static unsigned long nr_sleepers;

/* Runs on its own tiny stack in our address space: raw syscalls only. */
static int sleeper(void *arg)
{
	(void)arg;
	syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	for (;;)
		syscall(SYS_pause);
	return 0;
}

/* A period (ns) for the tickers: every clone shares this memory. */
static struct timespec ticker_period;

static int ticker(void *arg)
{
	(void)arg;
	syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	for (;;)
		syscall(SYS_nanosleep, &ticker_period, NULL);
	return 0;
}

static void *sleeper_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static int spawn_clones(unsigned long n, int (*fn)(void *));

int bench_spawn_tickers(unsigned long n, double period)
{
	ticker_period.tv_sec = (time_t)period;
	ticker_period.tv_nsec = (long)((period - (double)(time_t)period) * 1e9);
	return spawn_clones(n, ticker);
}

const pid_t *bench_sleeper_pids(unsigned long *n)
{
	*n = nr_sleepers;
	return sleeper_pids;
}

int bench_spawn_sleepers(unsigned long n, bool threads)
{
	pthread_attr_t attr;
	unsigned long i;
	int err;

	if (threads) {
		/* They end with this process. */
		pthread_attr_init(&attr);
		pthread_attr_setstacksize(&attr, 4 * SLEEPER_STACK);
		for (i = 0; i < n; i++) {
			pthread_t th;

			err = pthread_create(&th, &attr, sleeper_thread, NULL);
			if (err) {
				fprintf(stderr, "bench: thread %lu: %s\n", i,
					strerror(err));
				return -1;
			}
			pthread_detach(th);
		}
		return 0;
	}
	return spawn_clones(n, sleeper);
}

static int spawn_clones(unsigned long n, int (*fn)(void *))
{
	pid_t *pids;
	char *stacks;
	unsigned long i;

	stacks = mmap(NULL, n * SLEEPER_STACK, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	pids = realloc(sleeper_pids, (nr_sleepers + n) * sizeof(*pids));
	if (stacks == MAP_FAILED || !pids) {
		perror("bench: sleepers");
		return -1;
	}
	sleeper_pids = pids;
	for (i = 0; i < n; i++) {
		pid_t pid = clone(fn, stacks + (i + 1) * SLEEPER_STACK,
				  CLONE_VM | CLONE_FS | CLONE_FILES | SIGCHLD,
				  NULL);

		if (pid < 0) {
			fprintf(stderr, "bench: clone %lu: %s\n", i,
				strerror(errno));
			return -1;
		}
		sleeper_pids[nr_sleepers++] = pid;
	}
	return 0;
}

void bench_reap_sleepers(void)
{
	unsigned long i;

	for (i = 0; i < nr_sleepers; i++)
		kill(sleeper_pids[i], SIGKILL);
	for (i = 0; i < nr_sleepers; i++)
		waitpid(sleeper_pids[i], NULL, 0);
	nr_sleepers = 0;
}

#define CG_ROOT "/sys/fs/cgroup"
#define CG_TREE CG_ROOT "/jbench.slice"

/* Leaf i: jbench.slice/pod<i / 100>.slice/ctr<i>.scope, or its slice (leaf = false). */
static void cg_path(unsigned long i, bool leaf, char *buf, size_t size)
{
	if (leaf)
		snprintf(buf, size, CG_TREE "/pod%lu.slice/ctr%lu.scope",
			 i / 100, i);
	else
		snprintf(buf, size, CG_TREE "/pod%lu.slice", i / 100);
}

int bench_cgroups_make(unsigned long n)
{
	char path[256], mounts[16384];
	unsigned long i;

	if (bench_read_file("/proc/mounts", mounts, sizeof(mounts)) < 0 ||
	    (!strstr(mounts, " " CG_ROOT " cgroup2 ") &&
	     system("mount -t cgroup2 none " CG_ROOT))) {
		fprintf(stderr, "bench: no cgroup2 at %s\n", CG_ROOT);
		return -1;
	}
	if (mkdir(CG_TREE, 0755) && errno != EEXIST)
		goto fail;
	for (i = 0; i < n; i++) {
		if (i % 100 == 0) {
			cg_path(i, false, path, sizeof(path));
			if (mkdir(path, 0755) && errno != EEXIST)
				goto fail;
		}
		cg_path(i, true, path, sizeof(path));
		if (mkdir(path, 0755) && errno != EEXIST)
			goto fail;
	}
	return 0;
fail:
	fprintf(stderr, "bench: mkdir %s: %s\n", path, strerror(errno));
	return -1;
}

int bench_cgroup_move(pid_t pid, long i)
{
	char path[256], s[32];

	if (i < 0)
		snprintf(path, sizeof(path), CG_ROOT "/cgroup.procs");
	else {
		cg_path((unsigned long)i, true, path, sizeof(path));
		strcat(path, "/cgroup.procs");
	}
	snprintf(s, sizeof(s), "%d", (int)pid);
	if (bench_write_file(path, s)) {
		fprintf(stderr, "bench: %d into %s: %s\n", (int)pid, path,
			strerror(errno));
		return -1;
	}
	return 0;
}

void bench_cgroups_remove(unsigned long n)
{
	char path[256];
	unsigned long i;

	for (i = 0; i < n; i++) {
		cg_path(i, true, path, sizeof(path));
		/* Busy until the last task that was in it is released. */
		for (int k = 0; rmdir(path) && errno == EBUSY && k < 100; k++)
			bench_sleep(0.01);
		if (i % 100 == 99 || i == n - 1) {
			cg_path(i, false, path, sizeof(path));
			rmdir(path);
		}
	}
	rmdir(CG_TREE);
}

static void bench_usage(const char *prog, const struct bench_opt *opts,
			unsigned int n)
{
	fprintf(stderr, "usage: %s", prog);
	for (unsigned int i = 0; i < n; i++)
		if (opts[i].meta)
			fprintf(stderr, " [-%c %s]", opts[i].opt, opts[i].meta);
		else
			fprintf(stderr, " [-%c]", opts[i].opt);
	fputc('\n', stderr);
}

/* One option's value into its destination; 0, or -1 if it does not parse or fit. */
static int bench_store(const struct bench_opt *o, const char *arg)
{
	char *end = NULL;

	errno = 0;
	switch (o->type) {
	case BENCH_ULONG:
	case BENCH_UINT: {
		unsigned long v;

		if (*arg == '-')
			return -1;
		v = strtoul(arg, &end, 0);
		if (errno || end == arg || *end ||
		    (o->type == BENCH_UINT && v > UINT_MAX))
			return -1;
		if (o->type == BENCH_ULONG)
			*(unsigned long *)o->dst = v;
		else
			*(unsigned int *)o->dst = (unsigned int)v;
		return 0;
	}
	case BENCH_INT: {
		long v = strtol(arg, &end, 0);

		if (errno || end == arg || *end || v < INT_MIN || v > INT_MAX)
			return -1;
		*(int *)o->dst = (int)v;
		return 0;
	}
	case BENCH_DOUBLE:
		*(double *)o->dst = strtod(arg, &end);
		return errno || end == arg || *end ? -1 : 0;
	case BENCH_STR:
		*(const char **)o->dst = arg;
		return 0;
	case BENCH_SET:
	case BENCH_CLEAR:
		*(bool *)o->dst = o->type == BENCH_SET;
		return 0;
	}
	return -1;
}

int bench_parse_args(int argc, char **argv, const char *prog,
		     const struct bench_opt *opts, unsigned int n)
{
	char spec[64];
	unsigned int i, k = 0;
	int c;

	for (i = 0; i < n && k + 3 < sizeof(spec); i++) {
		spec[k++] = opts[i].opt;
		if (opts[i].meta)
			spec[k++] = ':';
	}
	spec[k] = 0;
	optind = 1;
	while ((c = getopt(argc, argv, spec)) != -1) {
		for (i = 0; i < n && opts[i].opt != c; i++)
			;
		if (i == n ||
		    bench_store(&opts[i], opts[i].meta ? optarg : "")) {
			if (i < n)
				fprintf(stderr, "%s: bad value '%s' for -%c\n",
					prog, optarg, c);
			bench_usage(prog, opts, n);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", prog,
			argv[optind]);
		bench_usage(prog, opts, n);
		return 2;
	}
	return 0;
}
