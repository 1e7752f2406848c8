// SPDX-License-Identifier: GPL-2.0
/*
 * Per-task accounting and the per-pid file, in the booted kernel: CPU time
 * and model energy of a busy loop, energy ratios, threads summing to their
 * process, exited tasks, permissions, sysfs input checking and unload with
 * files held open.
 */
#include <pthread.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/syscall.h>

#include "selftest.h"

#define COEF JOULES_SYSFS "/model/coefficients"
#define GEN JOULES_SYSFS "/model/generation"

/*
 * Every test: a model of 5 W per busy CPU; afterwards the module's
 * settings as they were before it (coefficients, idle_split, ...), and the
 * module loaded again after the one that unloads it; restored from the
 * parent, so also after a crash.
 */
FIXTURE(acct)
{
	struct st_settings saved;
};

FIXTURE_SETUP(acct)
{
	st_settings_save(&self->saved);
	/* 5 W per busy CPU and nothing else, unless the test sets its own. */
	ASSERT_EQ(0, st_write(COEF, "5000000 0 0 0 0 0\n", 18));
}

FIXTURE_TEARDOWN_PARENT(acct)
{
	EXPECT_EQ(0, st_load());
	EXPECT_EQ(0, st_settings_restore(&self->saved));
}

/* Long enough for the worker to charge everything that ran. */
static void settle(void)
{
	usleep(3 * st_interval_ms() * 1000 + 50000);
}

static int read_energy(const char *path, char *buf, size_t size)
{
	return st_read(path, buf, size) > 0 ? 0 : -1;
}

static int set_coef(const char *line)
{
	return st_write(COEF, line, strlen(line));
}

/* A child that burns `sec` of CPU then waits for a byte on `go` before exit. */
static pid_t burner(double sec, int *release_fd)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(p[1]);
		st_burn_cpu(sec);
		if (read(p[0], &c, 1) < 0)
			_exit(2);
		_exit(0);
	}
	close(p[0]);
	*release_fd = p[1];
	return pid;
}

static void release(pid_t pid, int fd)
{
	if (write(fd, "x", 1) < 0)
		DIAG("release write failed");
	close(fd);
	waitpid(pid, NULL, 0);
}

/*
 * Wait until the child has used `sec` of CPU (by its own schedstat) and
 * then is in one of `states` (a burner waiting for its release sleeps,
 * "S": its runtime is fixed from then; one that exited is a zombie, "Z",
 * with at most its last switch to go).
 */
static void wait_cpu(struct __test_metadata *_metadata, pid_t pid, double sec,
		     const char *states)
{
	char path[64], b[128];
	double t0 = st_now();
	bool used = false;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", pid);
	while (!used && st_now() - t0 < 60) {
		used = st_read(path, b, sizeof(b)) > 0 &&
		       strtoull(b, NULL, 10) / 1e9 >= sec;
		if (!used)
			usleep(20000);
	}
	if (CHECK(used, "pid %d used %.1f s of CPU within 60 s", pid, sec))
		CHECK(st_wait_state(pid, states, 60) == 0,
		      "pid %d in state %s within 60 s", pid, states);
}

/* A blocked task's CPU time by the kernel (schedstat), in ns; 0 if unread. */
static unsigned long long schedstat_ns(pid_t pid)
{
	char path[64], b[128];

	snprintf(path, sizeof(path), "/proc/%d/schedstat", pid);
	return st_read(path, b, sizeof(b)) > 0 ? strtoull(b, NULL, 10) : 0;
}

/*
 * 1 s busy loop: cpu_time_ns is the task's runtime by the kernel (it is
 * blocked: schedstat's figure, to the nanosecond) and at least the second
 * it burned; energy = prediction within 1%.
 */
TEST_F(acct, busy_loop)
{
	unsigned long long ns = 0, uj = 0, gen = 0, run;
	char path[64], b[1024], src[32];
	int fd;
	pid_t pid;

	/* 5 W per busy CPU, 2 pJ per disk byte; idle is the node's own line. */
	CHECK(set_coef("5000000 0 0 0 2 700000\n") == 0, "set coefficients");
	pid = burner(1.0, &fd);
	wait_cpu(_metadata, pid, 1.0, "S");
	settle();
	snprintf(path, sizeof(path), "/proc/energy/%d", pid);
	if (CHECK(read_energy(path, b, sizeof(b)) == 0, "read %s", path)) {
		CHECK(st_kv(b, "cpu_time_ns", &ns) == 0, "cpu_time_ns present");
		CHECK(st_kv(b, "energy_uj", &uj) == 0, "energy_uj present");
		CHECK(st_kvs(b, "source", src, sizeof(src)) == 0 &&
			      !strcmp(src, "model"),
		      "source is model (%s)", src);
		CHECK(st_kv(b, "model_generation", &gen) == 0 && gen > 0,
		      "model generation set");
		run = schedstat_ns(pid);
		CHECK(ns >= 1e9 && ns == run,
		      "cpu_time_ns %llu = schedstat's %llu, at least 1 s", ns,
		      run);
		/* The prediction: 5 W x cpu time (disk bytes are 0 here). */
		{
			double want = 5.0 * ns / 1e3;

			CHECK(uj > want * 0.99 && uj < want * 1.01,
			      "energy_uj %llu within 1%% of prediction %.0f",
			      uj, want);
		}
		CHECK(strstr(b, "cycles:") != NULL, "cycles line present");
		if (st_read(JOULES_SYSFS "/hw_counters", src, sizeof(src)) >
			    0 &&
		    !strncmp(src, "absent", 6))
			CHECK(strstr(b, "cycles: absent") &&
				      strstr(b, "instructions: absent") &&
				      strstr(b, "cache_misses: absent"),
			      "no PMU: hardware counters say absent, not 0");
	}
	release(pid, fd);
}

/*
 * A task that keeps moving between CPUs (and packages, where the machine
 * has several: the runtime it has not been charged for moves with it):
 * its CPU time is its own sum_exec_runtime to the nanosecond, and its
 * model energy is the prediction of exactly that time, to the microjoule.
 */
TEST_F(acct, migrating)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned long long ns = 0, uj = 0, run = 0;
	char path[64], b[1024];
	int done[2], go[2], i;
	pid_t pid;
	char c;

	if (st_read(JOULES_SYSFS "/packages", b, sizeof(b)) > 0)
		DIAG("%ld CPUs, packages: %s", ncpu, b);
	/* 5 W per busy CPU and nothing else: energy_uj = ns * 5e6 / 1e9. */
	CHECK(set_coef("5000000 0 0 0 0 0\n") == 0, "set coefficients");
	if (pipe(done) || pipe(go)) {
		CHECK(0, "pipes");
		return;
	}
	pid = fork();
	if (pid == 0) {
		for (i = 0; i < 24; i++) {
			cpu_set_t set;

			CPU_ZERO(&set);
			CPU_SET(i % ncpu, &set);
			if (sched_setaffinity(0, sizeof(set), &set))
				_exit(1);
			st_burn_cpu(0.02);
		}
		if (write(done[1], "x", 1) != 1 || read(go[0], &c, 1) < 0)
			_exit(2);
		_exit(0);
	}
	close(done[1]);
	close(go[0]);
	CHECK(read(done[0], &c, 1) == 1, "child moved over %ld CPUs", ncpu);
	/* The child is blocked now: nothing it counts changes any more. */
	settle();
	snprintf(path, sizeof(path), "/proc/%d/schedstat", pid);
	if (st_read(path, b, sizeof(b)) > 0)
		run = strtoull(b, NULL, 10);
	snprintf(path, sizeof(path), "/proc/energy/%d", pid);
	if (CHECK(read_energy(path, b, sizeof(b)) == 0, "read %s", path)) {
		st_kv(b, "cpu_time_ns", &ns);
		st_kv(b, "energy_uj", &uj);
		CHECK(run > 0.4e9 && ns == run,
		      "cpu_time_ns %llu = the task's own runtime %llu", ns,
		      run);
		CHECK(uj == ns / 200, "energy_uj %llu = prediction %llu", uj,
		      ns / 200);
	}
	if (write(go[1], "x", 1) < 0)
		DIAG("release write failed");
	close(go[1]);
	close(done[0]);
	waitpid(pid, NULL, 0);
}

/*
 * About 3:1 CPU time gives the same ratio of energy. The oracle is each
 * task's runtime by the kernel, not the burners' nominal 0.9 and 0.3 s
 * (each overshoots by what the host lets it): at 5 W an energy is the
 * runtime / 200 ns, to the microjoule either way, so the ratio lies
 * within (a - 1) / (b + 1) and (a + 1) / (b - 1).
 */
TEST_F(acct, ratio)
{
	unsigned long long e1 = 0, e2 = 0, n1, n2;
	char path[64], b[1024];
	double r, a, c;
	int f1, f2;
	pid_t p1, p2;

	p1 = burner(0.9, &f1);
	p2 = burner(0.3, &f2);
	wait_cpu(_metadata, p1, 0.9, "S");
	wait_cpu(_metadata, p2, 0.3, "S");
	settle();
	snprintf(path, sizeof(path), "/proc/energy/%d", p1);
	CHECK(read_energy(path, b, sizeof(b)) == 0 &&
		      st_kv(b, "energy_uj", &e1) == 0,
	      "read first");
	snprintf(path, sizeof(path), "/proc/energy/%d", p2);
	CHECK(read_energy(path, b, sizeof(b)) == 0 &&
		      st_kv(b, "energy_uj", &e2) == 0,
	      "read second");
	n1 = schedstat_ns(p1);
	n2 = schedstat_ns(p2);
	a = n1 / 200.0;
	c = n2 / 200.0;
	r = e2 ? (double)e1 / e2 : 0;
	CHECK(c > 1 && r >= (a - 1) / (c + 1) && r <= (a + 1) / (c - 1),
	      "energy ratio %.4f (%llu / %llu uJ), CPU time ratio %.4f (%llu / %llu ns)",
	      r, e1, e2, c > 0 ? a / c : 0, n1, n2);
	release(p1, f1);
	release(p2, f2);
}

/* ---- threads ---- */

static pthread_barrier_t bar_burned, bar_exit;

static void *thread_fn(void *arg)
{
	st_burn_cpu(*(double *)arg);
	pthread_barrier_wait(&bar_burned);
	pthread_barrier_wait(&bar_exit);
	return NULL;
}

static void sum_threads(pid_t pid, unsigned long long *e,
			unsigned long long *ns, int *n)
{
	char path[160], b[64];
	char dirpath[64];
	FILE *ls;
	unsigned long long v;

	*e = *ns = 0;
	*n = 0;
	snprintf(dirpath, sizeof(dirpath), "ls /proc/energy/threads/%d", pid);
	ls = popen(dirpath, "r");
	if (!ls)
		return;
	while (fgets(b, sizeof(b), ls)) {
		b[strcspn(b, "\n")] = 0;
		snprintf(path, sizeof(path), "/proc/energy/threads/%d/%s", pid,
			 b);
		{
			char body[1024];

			if (read_energy(path, body, sizeof(body)))
				continue;
			if (!st_kv(body, "energy_uj", &v))
				*e += v;
			if (!st_kv(body, "cpu_time_ns", &v))
				*ns += v;
			(*n)++;
		}
	}
	pclose(ls);
}

/*
 * A child process with 3 burning threads; everything in it then blocks, so
 * the parent reads a quiet process and the sums must match exactly.
 */
TEST_F(acct, threads)
{
	unsigned long long pe = 0, pns = 0, te, tns, threads = 0;
	char path[64], b[1024];
	int go[2], ready[2], n;
	pid_t pid;
	char c;

	if (pipe(go) || pipe(ready))
		return;
	pid = fork();
	if (pid == 0) {
		double secs[3] = { 0.2, 0.4, 0.1 };
		pthread_t th[3];
		int i;

		pthread_barrier_init(&bar_burned, NULL, 4);
		pthread_barrier_init(&bar_exit, NULL, 4);
		for (i = 0; i < 3; i++)
			pthread_create(&th[i], NULL, thread_fn, &secs[i]);
		pthread_barrier_wait(&bar_burned);
		if (write(ready[1], "r", 1) < 0 || read(go[0], &c, 1) < 0)
			_exit(2);
		/* Let two threads exit; their totals must stay in the process. */
		pthread_barrier_wait(&bar_exit);
		for (i = 0; i < 3; i++)
			pthread_join(th[i], NULL);
		if (write(ready[1], "r", 1) < 0 || read(go[0], &c, 1) < 0)
			_exit(2);
		_exit(0);
	}
	if (read(ready[0], &c, 1) != 1)
		DIAG("child did not get ready");
	settle();
	sum_threads(pid, &te, &tns, &n);
	snprintf(path, sizeof(path), "/proc/energy/%d", pid);
	CHECK(read_energy(path, b, sizeof(b)) == 0, "read process");
	st_kv(b, "energy_uj", &pe);
	st_kv(b, "cpu_time_ns", &pns);
	st_kv(b, "threads", &threads);
	CHECK(n == 4, "4 thread files (got %d)", n);
	CHECK(threads == 4, "threads: 4 (got %llu)", threads);
	CHECK(pe == te, "process energy %llu == sum of threads %llu", pe, te);
	CHECK(pns == tns, "process cpu %llu == sum of threads %llu", pns, tns);
	CHECK(tns > 0.6e9, "threads used their CPU (%llu ns)", tns);
	if (write(go[1], "g", 1) < 0 || read(ready[0], &c, 1) != 1)
		DIAG("child did not join");
	settle();
	{
		unsigned long long pe2 = 0, pns2 = 0;

		CHECK(read_energy(path, b, sizeof(b)) == 0,
		      "read process again");
		st_kv(b, "energy_uj", &pe2);
		st_kv(b, "cpu_time_ns", &pns2);
		CHECK(pe2 >= pe && pns2 >= pns,
		      "totals kept after threads exit (%llu >= %llu, %llu >= %llu)",
		      pe2, pe, pns2, pns);
		sum_threads(pid, &te, &tns, &n);
		CHECK(n == 1, "one thread left (%d)", n);
	}
	if (write(go[1], "g", 1) < 0)
		DIAG("release failed");
	waitpid(pid, NULL, 0);
	close(go[0]);
	close(go[1]);
	close(ready[0]);
	close(ready[1]);
}

/*
 * an exited child keeps its final totals until reaped, then ENOENT; they
 * are its runtime by the kernel (the zombie's schedstat) to the ns
 */
TEST_F(acct, exited_child)
{
	unsigned long long ns = 0, uj = 0, run;
	char path[64], b[1024], state[32] = "";
	pid_t pid = fork();

	if (pid == 0) {
		st_burn_cpu(0.3);
		_exit(0);
	}
	/* Do not reap yet: the zombie keeps its final totals readable. */
	wait_cpu(_metadata, pid, 0.3, "Z");
	settle();
	snprintf(path, sizeof(path), "/proc/energy/%d", pid);
	if (CHECK(read_energy(path, b, sizeof(b)) == 0, "zombie readable")) {
		st_kvs(b, "state", state, sizeof(state));
		CHECK(!strcmp(state, "exited"), "state exited (%s)", state);
		st_kv(b, "cpu_time_ns", &ns);
		st_kv(b, "energy_uj", &uj);
		/* Its fork and exit add kernel time (slow under KASAN). */
		run = schedstat_ns(pid);
		CHECK(ns > 0.27e9 && ns == run,
		      "final cpu_time_ns %llu = schedstat's %llu, at least 0.27 s",
		      ns, run);
		CHECK(uj > 0 && uj > 5.0 * ns / 1e3 * 0.99 &&
			      uj < 5.0 * ns / 1e3 * 1.01,
		      "final energy %llu = prediction", uj);
	}
	waitpid(pid, NULL, 0);
	settle();
	CHECK(st_read(path, b, sizeof(b)) == -ENOENT, "reaped child: ENOENT");
}

/* missing pid is ENOENT; self resolves to the reader */
TEST_F(acct, missing)
{
	char b[256];

	CHECK(st_read("/proc/energy/999999", b, sizeof(b)) == -ENOENT,
	      "missing pid");
	CHECK(st_read("/proc/energy/abc", b, sizeof(b)) == -ENOENT,
	      "non-numeric");
	CHECK(st_read("/proc/energy/0", b, sizeof(b)) == -ENOENT, "pid 0");
	CHECK(st_read("/proc/energy/self", b, sizeof(b)) > 0, "self readable");
	{
		unsigned long long pid = 0;

		st_kv(b, "pid", &pid);
		CHECK(pid == (unsigned long long)getpid(), "self is us (%llu)",
		      pid);
	}
}

/* an unprivileged user cannot read root's tasks, can read its own */
TEST_F(acct, unprivileged)
{
	int p[2];
	pid_t pid;
	int res[3] = { -1, -1, -1 };

	if (pipe(p))
		return;
	pid = fork();
	if (pid == 0) {
		char b[512];
		int r[3];

		close(p[0]);
		if (setgid(65534) || setuid(65534))
			_exit(3);
		r[0] = st_read("/proc/energy/1", b, sizeof(b));
		r[1] = st_read("/proc/energy/threads/1/1", b, sizeof(b));
		r[2] = st_read("/proc/energy/self", b, sizeof(b));
		if (write(p[1], r, sizeof(r)) < 0)
			_exit(4);
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], res, sizeof(res)) != sizeof(res))
		DIAG("child gave no result");
	close(p[0]);
	waitpid(pid, NULL, 0);
	CHECK(res[0] == -EACCES, "nobody reading root's process: %d", res[0]);
	CHECK(res[1] == -EACCES, "nobody reading root's thread: %d", res[1]);
	CHECK(res[2] > 0, "nobody reading itself: %d", res[2]);
}

/* 20+ kinds of bad sysfs input rejected, old coefficients intact */
TEST_F(acct, bad_sysfs)
{
	static const char *const bad_coef[] = {
		"\n",
		"1 2 3 4 5\n",
		"1 2 3 4 5 6 7\n",
		"-1 0 0 0 0 0\n",
		"+1 0 0 0 0 0\n",
		"0x10 0 0 0 0 0\n",
		"1.5 0 0 0 0 0\n",
		"a b c d e f\n",
		"1 2 3 4 5 6x\n",
		"1000000000001 0 0 0 0 0\n",
		"99999999999999999999 0 0 0 0 0\n",
		"1,2,3,4,5,6\n",
		"1 2 3 4 5 6\n\n",
		"1 2 3 4 5 6 # note\n",
		"1e3 0 0 0 0 0\n",
	};
	static const char nul_coef[] = "1 2 3\0 4 5 6\n";
	static const char *const bad_one[] = { "-5\n",
					       "abc\n",
					       "1 2\n",
					       "18446744073709551616\n",
					       "1000000000001\n",
					       " 5\n" };
	char before[128], after[128], g0[32], g1[32];
	unsigned int i, rejected = 0, total = 0;
	char path[128];

	st_read(COEF, before, sizeof(before));
	st_read(GEN, g0, sizeof(g0));
	for (i = 0; i < sizeof(bad_coef) / sizeof(bad_coef[0]); i++, total++) {
		int r = st_write(COEF, bad_coef[i], strlen(bad_coef[i]));

		if (r == -EINVAL)
			rejected++;
		else
			DIAG("accepted bad coefficients '%s' (%d)", bad_coef[i],
			     r);
	}
	total++;
	if (st_write(COEF, nul_coef, sizeof(nul_coef) - 1) == -EINVAL)
		rejected++;
	else
		DIAG("accepted embedded NUL");
	for (i = 0; i < sizeof(bad_one) / sizeof(bad_one[0]); i++, total++) {
		snprintf(path, sizeof(path), JOULES_SYSFS "/model/cpu_time_uw");
		if (st_write(path, bad_one[i], strlen(bad_one[i])) == -EINVAL)
			rejected++;
		else
			DIAG("cpu_time_uw accepted '%s'", bad_one[i]);
	}
	total++;
	if (st_write(JOULES_SYSFS "/interval_ms", "5\n", 2) == -EINVAL)
		rejected++;
	total++;
	if (st_write(JOULES_SYSFS "/source", "bogus\n", 6) == -EINVAL)
		rejected++;
	total++;
	if (st_write(JOULES_SYSFS "/idle_split", "2\n", 2) == -EINVAL)
		rejected++;
	st_read(COEF, after, sizeof(after));
	st_read(GEN, g1, sizeof(g1));
	CHECK(total >= 20, "%u kinds of bad input", total);
	CHECK(rejected == total, "%u of %u rejected with EINVAL", rejected,
	      total);
	CHECK(!strcmp(before, after), "coefficients unchanged ('%s' vs '%s')",
	      before, after);
	CHECK(!strcmp(g0, g1), "generation unchanged");
	/* And a good write bumps the generation. */
	CHECK(set_coef(before) == 0, "rewrite the old set");
	st_read(GEN, g1, sizeof(g1));
	CHECK(atoll(g1) == atoll(g0) + 1, "generation bumped (%s -> %s)", g0,
	      g1);
	/* Only root writes: nobody gets EACCES. */
	{
		pid_t pid = fork();
		int status;

		if (pid == 0) {
			if (setgid(65534) || setuid(65534))
				_exit(3);
			_exit(st_write(COEF, before, strlen(before)) ==
					      -EACCES ?
				      0 :
				      1);
		}
		waitpid(pid, &status, 0);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "nobody cannot write");
	}
}

static void *reader_fn(void *arg)
{
	volatile int *stop = arg;
	char b[1024];

	while (!*stop)
		st_read("/proc/energy/self", b, sizeof(b));
	return NULL;
}

/* unload while readers hold files open: refused cleanly, no oops */
TEST_F(acct, unload_with_open_files)
{
	char b[1024];
	int fd, rc;
	volatile int stop = 0;
	pthread_t th[2];

	fd = open("/proc/energy/self", O_RDONLY);
	CHECK(fd >= 0, "open");
	pthread_create(&th[0], NULL, reader_fn, (void *)&stop);
	pthread_create(&th[1], NULL, reader_fn, (void *)&stop);
	/* A mounted, busy joulesfs pins the module: these fail cleanly. */
	rc = st_sh("rmmod joules 2>/dev/null");
	CHECK(rc != 0, "rmmod refused while mounted and open");
	CHECK(umount2("/proc/energy", MNT_DETACH) == 0, "lazy umount: %s",
	      strerror(errno));
	rc = st_sh("rmmod joules 2>/dev/null");
	CHECK(rc != 0, "rmmod refused while a file is open");
	CHECK(read(fd, b, sizeof(b)) > 0, "open file still reads");
	stop = 1;
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);
	close(fd);
	usleep(100000);
	rc = st_sh("rmmod joules");
	CHECK(rc == 0, "rmmod once closed");
	CHECK(st_read("/proc/energy/self", b, sizeof(b)) < 0,
	      "no file after unload");
	CHECK(st_sh(". /lib/joules/lib.sh; joules_load") == 0, "load again");
	CHECK(st_read("/proc/energy/self", b, sizeof(b)) > 0, "file back");
}

/* idle_split gives every task a share of idle energy */
TEST_F(acct, idle_split)
{
	unsigned long long pid_e = 0;
	char body[1024];

	/* idle_split moves the idle line into tasks without losing any of it. */
	CHECK(st_write(JOULES_SYSFS "/idle_split", "1\n", 2) == 0,
	      "idle_split on");
	CHECK(set_coef("0 0 0 0 0 100000000\n") == 0, "idle only: 100 W");
	settle();
	CHECK(st_read("/proc/energy/1", body, sizeof(body)) > 0, "read init");
	st_kv(body, "idle_uj", &pid_e);
	CHECK(pid_e > 0, "init got an idle share (%llu uJ)", pid_e);
}

int main(int argc, char **argv)
{
	char b[64];

	if (st_read(JOULES_SYSFS "/version", b, sizeof(b)) <= 0) {
		printf("1..0 # SKIP joules not loaded\n");
		return KSFT_SKIP;
	}
	return test_harness_run(argc, argv);
}
