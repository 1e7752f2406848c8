// SPDX-License-Identifier: GPL-2.0
/*
 * joules-bpf in the booted kernel: the CO-RE collector loads; a busy
 * loop's CPU time agrees with the module's and with the scheduler's own
 * figure within 2%; model energy from the same coefficients agrees with
 * the module's; exited threads and processes are folded and released;
 * record writes the trainer's CSV; the module and the collector do not
 * disturb each other (module unloaded and reloaded under the collector);
 * and the loader's errors without root and without BTF are clear.
 */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/stat.h>

#include "out.h"
#include "selftest.h"

#define JB "/usr/bin/joules-bpf"
#define RUN_LOG "/tmp/jb-run.log"
#define COEF JOULES_SYSFS "/model/coefficients"
#define COEF_LINE "5000000 0 0 0 2 700000"
#define LIB ". /lib/joules/lib.sh; "

static char out[16384];

/* Run a shell command as `uid` (-1: as we are); its stdout+stderr in out. */
static int run_as(int uid, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int run_as(int uid, const char *fmt, ...)
{
	char cmd[1024];
	int p[2], status;
	size_t len = 0;
	ssize_t n;
	va_list ap;
	pid_t pid;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	out[0] = 0;
	if (pipe(p))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		close(p[0]);
		close(p[1]);
		if (uid >= 0 && (setgid(uid) || setuid(uid)))
			_exit(126);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	while (len < sizeof(out) - 1 &&
	       (n = read(p[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += (size_t)n;
	out[len] = 0;
	close(p[0]);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

#define run(...) run_as(-1, __VA_ARGS__)

static pid_t collector = -1;

static int start_collector_args(const char *max_tasks)
{
	collector = fork();
	if (collector == 0) {
		int fd = open(RUN_LOG, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(fd, 1);
		dup2(fd, 2);
		execl(JB, "joules-bpf", "run", "--max-tasks", max_tasks,
		      (char *)NULL);
		_exit(127);
	}
	/* Loading and verifying under emulation takes a few seconds. */
	for (int i = 0; i < 300; i++) {
		if (run(JB " status") == 0)
			return 0;
		if (waitpid(collector, NULL, WNOHANG) == collector) {
			collector = -1;
			return -1;
		}
		usleep(100000);
	}
	return -1;
}

static int start_collector(void)
{
	return start_collector_args("4096");
}

/*
 * Every test but the errors': the collector running (started afresh: a
 * kernel without BTF, the debug ones, skips them); afterwards, from the
 * parent (also after a crash), the collector stopped, the module loaded
 * and its settings as they were.
 */
FIXTURE(collector)
{
	struct st_settings saved;
	pid_t pid;
};

FIXTURE_SETUP(collector)
{
	self->pid = -1;
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		SKIP(return, "this kernel has no BTF (CONFIG_DEBUG_INFO_BTF)");
	st_settings_save(&self->saved);
	if (start_collector()) {
		st_sh("cat " RUN_LOG);
		if (collector > 0)
			kill(collector, SIGKILL);
		ASSERT_TRUE(0)
		TH_LOG("the BPF collector does not load and attach");
	}
	self->pid = collector;
}

FIXTURE_TEARDOWN_PARENT(collector)
{
	if (run(JB " stop") && self->pid > 0)
		kill(self->pid, SIGKILL);
	EXPECT_EQ(0, st_load());
	EXPECT_EQ(0, st_settings_restore(&self->saved));
}

/* Split a CSV line in place (no quoting in this format); returns the field count. */
static int split_csv(char *line, char **f, int max)
{
	int n = 0;

	line[strcspn(line, "\n")] = 0;
	while (n < max) {
		f[n++] = line;
		line = strchr(line, ',');
		if (!line)
			break;
		*line++ = 0;
	}
	return n;
}

/* The module's view of the PMU: "absent" under QEMU. */
static bool pmu_absent(void)
{
	char b[64];

	return st_read(JOULES_SYSFS "/hw_counters", b, sizeof(b)) > 0 &&
	       !strncmp(b, "absent", 6);
}

/*
 * The scheduler's runtime of pid's main thread (its whole CPU time when it
 * has no other threads), read once the child is blocked: what both
 * collectors count.
 */
static unsigned long long schedstat_ns(pid_t pid)
{
	char path[64], b[128];

	snprintf(path, sizeof(path), "/proc/%d/schedstat", pid);
	return st_read(path, b, sizeof(b)) > 0 ? strtoull(b, NULL, 10) : 0;
}

/*
 * A child's own CPU clock, read before it reports and blocks: the tail
 * (write, read, block) adds a little, and under emulation host preemption
 * there is guest CPU time, so allow -1%..+5% against it.
 */
static bool own_ok(unsigned long long v, unsigned long long own)
{
	return v + own / 100 >= own && v <= own + own / 20;
}

static double rel(double a, double b)
{
	double d = a > b ? a - b : b - a;

	return b ? d / b : (a ? 1 : 0);
}

/* Process CPU time of `pid` from /proc/<pid>/stat would be in ticks: ask the child. */
struct child {
	pid_t pid;
	int go; /* write a byte: the child exits */
	int report; /* the child writes its CLOCK_PROCESS_CPUTIME_ID ns here */
	unsigned long long cpu_ns;
};

static void *thread_burn(void *arg)
{
	st_burn_cpu(*(double *)arg);
	return NULL;
}

/*
 * A child that burns `main_s` of CPU in its main thread and `thr_s` in a
 * thread that then exits (0: no thread), reports its process CPU time, and
 * waits (blocked) for a byte before exiting.
 */
static int child_start(struct child *c, double main_s, double thr_s)
{
	int go[2], rep[2];

	if (pipe(go) || pipe(rep))
		return -1;
	c->pid = fork();
	if (c->pid < 0)
		return -1;
	if (c->pid == 0) {
		struct timespec ts;
		unsigned long long ns;
		pthread_t th;
		char b;

		close(go[1]);
		close(rep[0]);
		if (thr_s > 0) {
			if (pthread_create(&th, NULL, thread_burn, &thr_s))
				_exit(3);
			pthread_join(th, NULL);
		}
		st_burn_cpu(main_s);
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
		ns = (unsigned long long)ts.tv_sec * 1000000000ull + ts.tv_nsec;
		if (write(rep[1], &ns, sizeof(ns)) != sizeof(ns))
			_exit(2);
		if (read(go[0], &b, 1) < 0)
			_exit(2);
		_exit(0);
	}
	close(go[0]);
	close(rep[1]);
	c->go = go[1];
	c->report = rep[0];
	if (read(c->report, &c->cpu_ns, sizeof(c->cpu_ns)) != sizeof(c->cpu_ns))
		return -1;
	/* Blocked now (or about to be): give both collectors their last switch. */
	usleep(300000);
	return 0;
}

static void child_end(struct child *c)
{
	if (write(c->go, "x", 1) < 0)
		DIAG("release write failed");
	close(c->go);
	close(c->report);
	waitpid(c->pid, NULL, 0);
}

/* cpu_time_ns of `pid` per joules-bpf show (extra: more options). */
static int bpf_show(pid_t pid, const char *extra, unsigned long long *ns)
{
	int rc = run(JB " show %s %d", extra, pid);

	if (rc)
		DIAG("joules-bpf show %d: rc %d: %s", pid, rc, out);
	return rc || st_kv(out, "cpu_time_ns", ns) ? -1 : 0;
}

static int module_cpu(pid_t pid, unsigned long long *ns, unsigned long long *uj)
{
	char path[64], b[2048];

	snprintf(path, sizeof(path), "/proc/energy/%d", pid);
	if (st_read(path, b, sizeof(b)) <= 0 || st_kv(b, "cpu_time_ns", ns))
		return -1;
	if (uj && st_kv(b, "energy_uj", uj))
		*uj = 0;
	return 0;
}

TEST(errors)
{
	int rc;

	rc = run_as(65534, JB " status");
	CHECK(rc == 1, "status as nobody exits 1 (rc %d)", rc);
	CHECK(strstr(out,
		     "joules-bpf: needs root (CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN)"),
	      "clear message: %s", out);
	rc = run_as(65534, JB " run");
	CHECK(rc == 1 && strstr(out, "needs root"),
	      "run as nobody refused (rc %d): %s", rc, out);
	/* Up to here: without root: a clear error */

	rc = run(JB " run --btf /nonexistent/vmlinux");
	CHECK(rc == 1, "run --btf missing exits 1 (rc %d)", rc);
	CHECK(strstr(out, "/nonexistent/vmlinux") &&
		      strstr(out, "CONFIG_DEBUG_INFO_BTF"),
	      "message names the file and the kernel option: %s", out);
	rc = run("JOULES_BPF_BTF=/nonexistent/btf " JB " top -b -n 1");
	CHECK(rc == 1 && strstr(out, "CONFIG_DEBUG_INFO_BTF"),
	      "JOULES_BPF_BTF override too (rc %d): %s", rc, out);
	CHECK(run(JB " status") == 1, "nothing left running");
	/* Up to here: without BTF: a clear error naming CONFIG_DEBUG_INFO_BTF */

	CHECK(run(JB " run --max-tasks 0") == 2,
	      "--max-tasks 0 is a usage error");
	CHECK(run(JB " show --coef '1 2 3' 1") == 2 &&
		      strstr(out, "not a coefficient set"),
	      "bad --coef: %s", out);
	CHECK(run(JB " show") == 2, "show without PID is a usage error");
	CHECK(run(JB " show 1") == 1 && strstr(out, "no collector running"),
	      "show with no collector: %s", out);
	/* Up to here: usage errors and no collector */
}

TEST_F(collector, load)
{
	unsigned long long v;
	char hw[64] = "", mod_hw[64] = "";

	/* Started by the fixture. */
	run(JB " status");
	for (char *l = strtok(out, "\n"); l; l = strtok(NULL, "\n"))
		DIAG("status: %s", l);
	run(JB " status");
	CHECK(st_kv(out, "max_tasks", &v) == 0 && v == 4096,
	      "task map sized by --max-tasks (%llu)", v);
	CHECK(st_kv(out, "tasks_tracked", &v) == 0 && v > 0,
	      "tasks tracked (%llu)", v);
	CHECK(st_kv(out, "tasks_dropped", &v) == 0 && v == 0, "none dropped");
	/* Both see the same PMU (none under QEMU). */
	if (st_read(JOULES_SYSFS "/hw_counters", mod_hw, sizeof(mod_hw)) > 0) {
		mod_hw[strcspn(mod_hw, "\n")] = 0;
		st_kvs(out, "hw_counters", hw, sizeof(hw));
		CHECK(!strcmp(hw, mod_hw), "hw counters: bpf '%s', module '%s'",
		      hw, mod_hw);
	}
	CHECK(run(JB " run") == 1 && strstr(out, "already running"),
	      "a second collector is refused: %s", out);
	/* Up to here: the BPF collector loads and attaches */
}

TEST_F(collector, busy_loop)
{
	unsigned long long sch;
	unsigned long long b_ns = 0, m_ns = 0, m_uj = 0, b_uj = 0, rd = 0,
			   wr = 0, want;
	char s[32];
	struct child c;
	int fd;

	/* The module charges model energy from the same set. */
	CHECK(st_write(COEF, COEF_LINE "\n", strlen(COEF_LINE) + 1) == 0,
	      "module coefficients set");
	if (!CHECK(child_start(&c, 1.0, 0) == 0, "busy child")) {
		/* Up to here: busy loop: CPU time agrees with the module within 2% */
		return;
	}
	/* Let the module's attribution interval charge the last of it. */
	usleep(400000);
	sch = schedstat_ns(c.pid);
	if (CHECK(bpf_show(c.pid, "", &b_ns) == 0, "joules-bpf show") &&
	    CHECK(module_cpu(c.pid, &m_ns, &m_uj) == 0, "/proc/energy/%d",
		  c.pid)) {
		DIAG("cpu ns: bpf %llu module %llu schedstat %llu child %llu",
		     b_ns, m_ns, sch, c.cpu_ns);
		CHECK(rel(b_ns, m_ns) < 0.02,
		      "bpf %llu vs module %llu within 2%%", b_ns, m_ns);
		CHECK(rel(b_ns, sch) < 0.02,
		      "bpf %llu vs schedstat %llu within 2%%", b_ns, sch);
		CHECK(own_ok(b_ns, c.cpu_ns), "bpf %llu vs child's own %llu",
		      b_ns, c.cpu_ns);
		CHECK(b_ns > 0.95e9, "about 1 s (%llu)", b_ns);
		CHECK(st_kvs(out, "source", s, sizeof(s)) == 0 &&
			      !strcmp(s, "none"),
		      "no coefficients: source none (%s)", s);
		CHECK(strstr(out, "energy_uj: absent\n"),
		      "energy absent, not 0");
		CHECK(strstr(out, "state: alive\n") &&
			      strstr(out, "threads: 1\n"),
		      "alive, one thread");
		if (pmu_absent())
			CHECK(strstr(out, "cycles: absent\n") &&
				      strstr(out, "instructions: absent\n") &&
				      strstr(out, "cache_misses: absent\n"),
			      "no PMU: hardware counters absent, not 0");
	}
	/* Up to here: busy loop: CPU time agrees with the module within 2% */

	/* Energy: the same core code, the same coefficients. */
	if (bpf_show(c.pid, "--coef '" COEF_LINE "'", &b_ns) == 0 &&
	    st_kv(out, "energy_uj", &b_uj) == 0) {
		st_kv(out, "read_bytes", &rd);
		st_kv(out, "write_bytes", &wr);
		/* 5 W x time + 2 pJ per byte, in uJ, rounded down. */
		want = (b_ns * 5000000ull + (rd + wr) * 2000ull) /
		       1000000000ull;
		CHECK(b_uj == want, "energy_uj %llu is the model's %llu", b_uj,
		      want);
		CHECK(strstr(out, "source: model\n"), "source model");
		CHECK(rel(b_uj, m_uj) < 0.02,
		      "bpf %llu uJ vs module %llu uJ within 2%%", b_uj, m_uj);
	} else {
		CHECK(0, "show --coef: %s", out);
	}
	fd = open("/tmp/jb-coef", O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd >= 0) {
		const char f[] = "# from joules-train\n" COEF_LINE "\n";

		CHECK(write(fd, f, sizeof(f) - 1) == (ssize_t)sizeof(f) - 1,
		      "write file");
		close(fd);
	}
	CHECK(bpf_show(c.pid, "-C /tmp/jb-coef", &b_ns) == 0 &&
		      st_kv(out, "energy_uj", &want) == 0 && want == b_uj,
	      "-C FILE gives the same (%llu): %s", want, out);
	CHECK(bpf_show(c.pid, "-C " COEF, &b_ns) == 0 &&
		      st_kv(out, "energy_uj", &want) == 0 && want == b_uj,
	      "-C the module's own coefficients file (%llu)", want);
	CHECK(run(JB " show --json --coef '" COEF_LINE "' %d", c.pid) == 0 &&
		      strstr(out, "\"source\":\"model\"") &&
		      strstr(out, "\"cycles\":"),
	      "JSON: %s", out);
	/* Up to here: model energy: the core's formula, agreeing with the module */
	child_end(&c);
}

TEST_F(collector, exits)
{
	unsigned long long b_ns, t_ns, m_ns, v0 = 0, v1 = 0;
	struct child c;
	char path[64];
	int rc, gone;

	run(JB " status");
	st_kv(out, "exits_folded", &v0);
	if (!CHECK(child_start(&c, 0.2, 0.5) == 0, "child with a thread")) {
		/* Up to here: an exited thread stays in its process's totals */
		return;
	}
	usleep(300000);
	if (CHECK(bpf_show(c.pid, "", &b_ns) == 0, "show process")) {
		CHECK(own_ok(b_ns, c.cpu_ns),
		      "process %llu vs child's own %llu", b_ns, c.cpu_ns);
		CHECK(strstr(out, "threads: 1\n"), "one living thread");
		if (module_cpu(c.pid, &m_ns, NULL) == 0)
			CHECK(rel(b_ns, m_ns) < 0.02, "bpf %llu vs module %llu",
			      b_ns, m_ns);
	}
	if (CHECK(bpf_show(c.pid, "--thread", &t_ns) == 0, "show main thread"))
		CHECK(t_ns < b_ns - 0.4e9,
		      "thread alone %llu excludes the exited thread", t_ns);
	run(JB " status");
	st_kv(out, "exits_folded", &v1);
	CHECK(v1 > v0, "exits folded %llu -> %llu", v0, v1);
	/* Up to here: an exited thread stays in its process's totals */

	/* A zombie keeps its final totals until reaped, then it is gone. */
	if (write(c.go, "x", 1) < 0)
		DIAG("release failed");
	usleep(300000);
	rc = bpf_show(c.pid, "", &b_ns);
	CHECK(rc == 0 && strstr(out, "state: exited\n"), "zombie: exited: %s",
	      out);
	CHECK(rc == 0 && own_ok(b_ns, c.cpu_ns),
	      "zombie keeps %llu (child %llu)", b_ns, c.cpu_ns);
	if (CHECK(module_cpu(c.pid, &m_ns, NULL) == 0, "module: zombie"))
		CHECK(rel(b_ns, m_ns) < 0.02, "zombie: bpf %llu vs module %llu",
		      b_ns, m_ns);
	close(c.go);
	close(c.report);
	waitpid(c.pid, NULL, 0);
	snprintf(path, sizeof(path), "%d", c.pid);
	/* Release is RCU-deferred: allow it a moment. */
	gone = 0;
	for (int i = 0; i < 50 && !gone; i++) {
		rc = run(JB " show %s", path);
		gone = rc == 1 && strstr(out, "no such process");
		if (!gone)
			usleep(100000);
	}
	CHECK(gone, "reaped process is gone: %s", out);
	/* Up to here: exited process: final totals until reaped, then released */
}

/* After exec: burn, report the process's CPU time on fd `rep`, wait on `go`. */
static int exec_helper(double sec, int rep, int go)
{
	struct timespec ts;
	unsigned long long ns;
	char b;

	st_burn_cpu(sec);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	ns = (unsigned long long)ts.tv_sec * 1000000000ull + ts.tv_nsec;
	if (write(rep, &ns, sizeof(ns)) != sizeof(ns) || read(go, &b, 1) < 0)
		return 2;
	return 0;
}

struct exec_arg {
	int rep, go;
};

static void *thread_exec(void *arg)
{
	struct exec_arg *a = arg;
	char r[16], g[16];

	st_burn_cpu(0.3);
	snprintf(r, sizeof(r), "%d", a->rep);
	snprintf(g, sizeof(g), "%d", a->go);
	execl("/proc/self/exe", "60-bpf", "--exec-helper", r, g, (char *)NULL);
	return NULL;
}

/*
 * exec in a thread that is not the group leader: the kernel gives it the
 * leader's pid and releases the old leader. The process keeps all of it.
 */
TEST_F(collector, exec_thread)
{
	unsigned long long b_ns = 0, m_ns, own = 0, v;
	int go[2], rep[2];
	char comm[32] = "";
	pid_t pid;

	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(rep));
	pid = fork();
	if (pid == 0) {
		struct exec_arg a = { rep[1], go[0] };
		pthread_t th;

		close(go[1]);
		close(rep[0]);
		st_burn_cpu(0.3);
		if (pthread_create(&th, NULL, thread_exec, &a))
			_exit(3);
		pthread_join(th, NULL); /* never returns: the exec kills us */
		_exit(4);
	}
	close(go[0]);
	close(rep[1]);
	CHECK(read(rep[0], &own, sizeof(own)) == sizeof(own),
	      "helper reported");
	usleep(300000);
	if (CHECK(bpf_show(pid, "", &b_ns) == 0, "show after exec")) {
		CHECK(own_ok(b_ns, own), "bpf %llu vs process's own %llu", b_ns,
		      own);
		CHECK(b_ns > 0.85e9, "all three parts (%llu)", b_ns);
		/* comm comes from the exec'd path, /proc/self/exe */
		CHECK(st_kvs(out, "comm", comm, sizeof(comm)) == 0 &&
			      !strcmp(comm, "exe"),
		      "comm of the new image (%s)", comm);
		CHECK(st_kv(out, "threads", &v) == 0 && v == 1,
		      "one thread left");
	}
	if (module_cpu(pid, &m_ns, NULL) == 0)
		CHECK(rel(b_ns, m_ns) < 0.02, "bpf %llu vs module %llu", b_ns,
		      m_ns);
	if (write(go[1], "x", 1) < 0)
		DIAG("release failed");
	close(go[1]);
	close(rep[0]);
	waitpid(pid, NULL, 0);
}

/* record: the trainer's CSV from the collector */
TEST_F(collector, record)
{
	char line[512], head[512];
	unsigned long long rows = 0, cpu = 0;
	bool no_pmu = pmu_absent();
	FILE *fp;
	pid_t p;
	int rc;

	/* A busy child during the recording. */
	p = fork();
	if (p == 0) {
		st_burn_cpu(2.0);
		_exit(0);
	}
	rc = run(JB " record -i 0.2 -c 3 --coef '" COEF_LINE "' /tmp/jb.csv");
	kill(p, SIGKILL);
	waitpid(p, NULL, 0);
	CHECK(rc == 0, "record rc %d: %s", rc, out);
	fp = fopen("/tmp/jb.csv", "r");
	if (CHECK(fp != NULL, "csv written")) {
		/* The node's facts for joules-train, then the header. */
		if (fgets(head, sizeof(head), fp))
			CHECK(!strncmp(head, "# node: cpus=", 13),
			      "node facts: %s", head);
		if (fgets(head, sizeof(head), fp))
			CHECK(!strcmp(head, OUT_RECORD_HEADER "\n"),
			      "header: %s", head);
		while (fgets(line, sizeof(line), fp)) {
			char *f[20];
			unsigned long long iv, e, idle, ns, disk, task;
			int n = split_csv(line, f, 20);

			rows++;
			if (!CHECK(n == 18, "18 fields (%d)", n))
				continue;
			iv = strtoull(f[2], NULL, 10);
			e = strtoull(f[5], NULL, 10);
			idle = strtoull(f[6], NULL, 10);
			ns = strtoull(f[7], NULL, 10);
			disk = strtoull(f[11], NULL, 10);
			cpu += ns;
			CHECK(!strcmp(f[3], "model"), "source model (%s)",
			      f[3]);
			CHECK(iv > 0.15e9 && iv < 0.5e9,
			      "interval %llu about 0.2 s", iv);
			/* idle 0.7 W over the interval, rounded with a carry. */
			CHECK(idle + 1 >= iv * 7 / 10000 &&
				      idle <= iv * 7 / 10000 + 1,
			      "idle_uj %llu is 0.7 W x %llu ns", idle, iv);
			task = (ns * 5000000ull + disk * 2000ull) /
			       1000000000ull;
			CHECK(e + 1 >= idle + task && e <= idle + task + 1,
			      "energy %llu = idle %llu + model %llu", e, idle,
			      task);
			/* No PMU: empty fields, not 0. */
			if (no_pmu)
				CHECK(!*f[8] && !*f[9] && !*f[10],
				      "hw fields empty");
			else
				CHECK(*f[8] && *f[9] && *f[10],
				      "hw fields present");
		}
		fclose(fp);
	}
	CHECK(rows == 3, "3 rows (%llu)", rows);
	CHECK(cpu > 0.3e9, "the busy child's time is in the samples (%llu ns)",
	      cpu);
}

/* One busy child; check what each collector says within 2% of its own. */
static void both_agree(struct __test_metadata *_metadata, const char *what,
		       bool module)
{
	unsigned long long b_ns = 0, m_ns = 0, sch;
	struct child c;

	if (!CHECK(child_start(&c, 0.5, 0) == 0, "busy child"))
		return;
	usleep(400000);
	sch = schedstat_ns(c.pid);
	if (CHECK(bpf_show(c.pid, "", &b_ns) == 0, "bpf show")) {
		CHECK(rel(b_ns, sch) < 0.02, "bpf %llu vs schedstat %llu", b_ns,
		      sch);
		CHECK(own_ok(b_ns, c.cpu_ns), "bpf %llu vs child's own %llu",
		      b_ns, c.cpu_ns);
	}
	if (module &&
	    CHECK(module_cpu(c.pid, &m_ns, NULL) == 0, "module per-pid file")) {
		CHECK(rel(m_ns, sch) < 0.02, "module %llu vs schedstat %llu",
		      m_ns, sch);
		CHECK(rel(b_ns, m_ns) < 0.02, "bpf %llu vs module %llu", b_ns,
		      m_ns);
	}
	child_end(&c);
	TH_LOG("%s", what);
}

TEST_F(collector, coexist)
{
	int rc = st_sh(LIB "joules_unload");

	CHECK(rc == 0, "module unloaded under the collector");
	CHECK(run(JB " status") == 0, "collector still running");
	both_agree(_metadata, "module unloaded: the collector goes on counting",
		   false);

	rc = st_sh(LIB "joules_load");
	CHECK(rc == 0, "module loaded under the collector");
	both_agree(_metadata,
		   "module reloaded under the collector: both count right",
		   true);
}

TEST_F(collector, stop)
{
	unsigned long long v = 0;
	int status = -1, rc;
	struct stat sb;

	rc = run(JB " stop");
	CHECK(rc == 0, "stop rc %d: %s", rc, out);
	if (collector > 0) {
		CHECK(waitpid(collector, &status, 0) == collector &&
			      WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "run exited 0 (status %#x)", status);
		collector = -1;
	}
	CHECK(stat("/sys/fs/bpf/joules", &sb) != 0, "pins removed");
	CHECK(run(JB " status") == 1, "nothing running");
	/* Up to here: stop: detached and unpinned */

	/*
	 * A full task map: tasks beyond it go uncounted, and say so. The
	 * children live until counted: ones that exit at once free their
	 * entries and may never fill the map (seen on 6.12).
	 */
	if (start_collector_args("8") == 0) {
		pid_t kids[20];
		int hold[2];
		char c;

		if (pipe(hold))
			hold[0] = hold[1] = -1;
		for (int i = 0; i < 20; i++) {
			kids[i] = fork();
			if (kids[i] == 0) {
				close(hold[1]);
				/* Run once (a switch the collector sees), then wait. */
				if (read(hold[0], &c, 1) < 0)
					_exit(1);
				_exit(0);
			}
		}
		close(hold[0]);
		usleep(200000);
		rc = run(JB " status");
		close(hold[1]);
		for (int i = 0; i < 20; i++)
			if (kids[i] > 0)
				waitpid(kids[i], NULL, 0);
		CHECK(rc == 0, "status rc %d", rc);
		CHECK(st_kv(out, "max_tasks", &v) == 0 && v == 8,
		      "max_tasks %llu", v);
		CHECK(st_kv(out, "tasks_tracked", &v) == 0 && v <= 8,
		      "tracked %llu <= 8", v);
		CHECK(st_kv(out, "tasks_dropped", &v) == 0 && v > 0,
		      "dropped %llu > 0", v);
		CHECK(run(JB " stop") == 0, "stopped");
		waitpid(collector, NULL, 0);
		collector = -1;
	} else {
		CHECK(0, "collector with --max-tasks 8 started");
	}
	/* Up to here: a full task map drops new tasks and counts them */

	rc = run(JB " top -b -n 1 -d 0.3");
	CHECK(rc == 0, "top rc %d", rc);
	CHECK(strstr(out, "collector private") && strstr(out, "PID USER"),
	      "table: %s", out);
	CHECK(run(JB " status") == 1, "private collector gone with top");
	/* Up to here: top loads a private collector when none runs */
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "--exec-helper"))
		return exec_helper(0.3, atoi(argv[2]), atoi(argv[3]));
	if (access(JB, X_OK)) {
		printf("TAP version 13\n1..0 # SKIP joules-bpf not built\n");
		return KSFT_SKIP;
	}
	return test_harness_run(argc, argv);
}
