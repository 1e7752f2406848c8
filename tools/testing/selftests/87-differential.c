// SPDX-License-Identifier: GPL-2.0
/*
 * Differential test: joules against the kernel's own accounting, under a
 * randomized workload.
 *
 * Each seed drives rounds of: fork/exec/exit storms, processes that live
 * less than one attribution interval, multi-threaded processes (some
 * threads dying early, some leaders exiting before their threads), a
 * process moved between cgroups while it runs (and once while it sleeps),
 * a threaded cgroup (one process's threads in different cgroups), deep
 * cgroup chains made and removed, cgroup entries read across rmdir, a
 * process in its own cgroup namespace, a pid namespace, io_uring SQPOLL
 * and io-wq workers, vhost workers (where /dev/vhost-net exists). The
 * test "plain" runs a round as is, "reload_in_the_middle" reloads the
 * module while the long-lived processes wait, "fork_pool_empty" reloads
 * it with fork_pool=0 or 2.
 *
 * After each round, with the workload stopped (every process blocked or a
 * zombie, then three intervals for the worker), joules is compared with
 * what the kernel counted itself:
 *  - every cgroup of the round's tree: cpu_time_ns against the growth of
 *    cpu.stat usage_usec since a snapshot taken after the module loaded;
 *    its tasks: against the threads its cgroup.threads list (and below);
 *  - every live thread against /proc/<tid>/schedstat, every live process
 *    against its CPU clock (clock_getcpuclockid()), and a process alone in
 *    its cgroup against that cgroup's cpu.stat;
 *  - every reaped child's exit records against its wait4() rusage;
 *  - root cgroup plus idle against node energy;
 *  - the module's cgroup and task objects back to their baseline;
 *  - paths and ids seen from inside a cgroup namespace.
 * The guest runner checks dmesg after the program.
 *
 * Tolerances come from the granularity of each figure (see the comments at
 * each comparison); none is a margin for joules' own error. Every
 * comparison is counted per figure, the largest deviation printed.
 *
 * The seed is printed; SEED=N in the environment or jseed=N on the kernel
 * command line (run-qemu.sh --append jseed=N) replays it. Without one,
 * three seeds are drawn, one for each kind of round (plain, reload, an
 * empty fork pool). Sizes scale with JOULES_SCALE (st_scaled()).
 *
 *   87-differential                 (the harness' options: -t TEST, -l)
 *   87-differential --burn-us N     (internal: an exec'd storm child)
 *   87-differential --role ...      (internal: a long-lived workload process)
 */
#include <dirent.h>
#include <limits.h>
#include <liburing.h>
#include <linux/vhost.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "kselftest_harness.h"
#include "selftest.h"
#include "differential.h"

#define CG "/sys/fs/cgroup"
#define MODEL "10000000 0 0 0 0 5000000" /* 10 W per CPU, 5 W idle */
#define MAX_SEEDS 4
#define MAX_CHILDREN 4096
#define MAX_CGS 1024
#define MAX_RECS 65536

static unsigned long long seeds[MAX_SEEDS];
static int nseeds;
static char coef_saved[256];

/* ------------------------------------------------------------------ */
/* The roles: long-lived workload processes, exec'd from a raw clone3  */
/* child (so glibc starts afresh in the cgroup it was cloned into).    */
/* ------------------------------------------------------------------ */

/* What a role reports to the test on its ready pipe. */
struct role_msg {
	char tag; /* 'r' ready (blocked), 'q' query answer */
	int32_t err;
	uint64_t v[8];
};

static int role_gate, role_ready;

static void role_send(char tag, int err, const uint64_t *v)
{
	struct role_msg m = { .tag = tag, .err = err };

	if (v)
		memcpy(m.v, v, sizeof(m.v));
	if (write(role_ready, &m, sizeof(m)) != sizeof(m))
		_exit(90);
}

/* Block until the test says what next: 'c' (work again), 'x' (exit), ... */
static char role_wait(void)
{
	char c;

	if (read(role_gate, &c, 1) != 1)
		_exit(91);
	return c;
}

static unsigned long long thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* mt: threads that burn and exit, threads that stay until the end. */
static pthread_mutex_t mt_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t mt_cond = PTHREAD_COND_INITIALIZER;
static int mt_release;

struct mt_arg {
	unsigned int us;
	int stay;
	/* threaded role: the cgroup.threads to join first */
	const char *move_to;
	unsigned long long moved_ns; /* its CPU time when the move was done */
};

static void *mt_thread(void *p)
{
	struct mt_arg *a = p;

	if (a->move_to) {
		char tid[16];
		int n = snprintf(tid, sizeof(tid), "%ld",
				 (long)syscall(SYS_gettid));

		/*
		 * First thing: join the threaded cgroup. All this thread's
		 * CPU time up to here is what either side may charge to the
		 * cgroup it left or joined.
		 */
		if (st_write(a->move_to, tid, n))
			_exit(92);
		a->moved_ns = thread_cpu_ns();
	}
	st_burn_cpu(a->us / 1e6);
	if (a->stay) {
		pthread_mutex_lock(&mt_lock);
		while (!mt_release)
			pthread_cond_wait(&mt_cond, &mt_lock);
		pthread_mutex_unlock(&mt_lock);
		st_burn_cpu(0.001);
	}
	return NULL;
}

/*
 * mt and threaded: a batch of n threads (the first phase keeps half of
 * them until the end); in the threaded role each thread moves itself to
 * t1 or t2 first. Returns the move bounds per target in v[0], v[1].
 */
static pthread_t stay_th[64];
static int nstay;

static void mt_batch(int n, unsigned int us, bool keep, const char *t1,
		     const char *t2, uint64_t *v)
{
	struct mt_arg *a = calloc(n, sizeof(*a));
	pthread_t *th = calloc(n, sizeof(*th));
	int i;

	for (i = 0; i < n; i++) {
		a[i].us = us / 2 + (i * 7919u) % (us + 1);
		a[i].stay = keep && (i & 1) && nstay < 64;
		a[i].move_to = t1 ? (i & 1 ? t2 : t1) : NULL;
		if (pthread_create(&th[i], NULL, mt_thread, &a[i]))
			_exit(93);
		if (a[i].stay)
			stay_th[nstay++] = th[i];
	}
	for (i = 0; i < n; i++)
		if (!a[i].stay)
			pthread_join(th[i], NULL);
	/* Stayers have moved before they block: wait for their report. */
	for (i = 0; i < n; i++)
		while (a[i].move_to && a[i].stay &&
		       !__atomic_load_n(&a[i].moved_ns, __ATOMIC_ACQUIRE))
			usleep(1000);
	for (i = 0; i < n; i++)
		if (v && a[i].move_to)
			v[i & 1] += a[i].moved_ns;
	/* a[] of stayers is still theirs: leak it (one per phase). */
	free(th);
}

static int role_mt(int argc, char **argv, bool threaded)
{
	int n = atoi(argv[0]), leader_first = atoi(argv[1]);
	unsigned int us = atoi(argv[2]);
	const char *t1 = threaded ? argv[3] : NULL,
		   *t2 = threaded ? argv[4] : NULL;
	uint64_t v[8] = { 0 };
	char c;

	(void)argc;
	mt_batch(n, us, true, t1, t2, v);
	st_burn_cpu(us / 1e6);
	role_send('r', 0, v);
	while ((c = role_wait()) == 'c') {
		memset(v, 0, sizeof(v));
		mt_batch(n / 2 + 1, us, false, t1, t2, v);
		st_burn_cpu(us / 1e6);
		role_send('r', 0, v);
	}
	pthread_mutex_lock(&mt_lock);
	mt_release = 1;
	pthread_cond_broadcast(&mt_cond);
	pthread_mutex_unlock(&mt_lock);
	if (leader_first)
		/*
		 * The leader goes first; the process ends with its last
		 * thread. The raw system call: glibc's pthread_exit() would
		 * need libgcc_s, which the guest has not.
		 */
		syscall(SYS_exit, 0);
	for (int i = 0; i < nstay; i++)
		pthread_join(stay_th[i], NULL);
	return 0;
}

/* mover: burns until told to stop (the test moves it meanwhile). */
static int role_mover(void)
{
	struct pollfd p = { .fd = role_gate, .events = POLLIN };
	char c;

	while (poll(&p, 1, 0) == 0)
		st_burn_cpu(0.001);
	if (role_wait() != 's')
		return 94;
	role_send('r', 0, NULL);
	while ((c = role_wait()) == 'c') {
		st_burn_cpu(0.02);
		role_send('r', 0, NULL);
	}
	return 0;
}

static pid_t clone_into(int cgfd, unsigned long long flags)
{
	struct clone_args a = {
		.flags = CLONE_INTO_CGROUP | flags,
		.exit_signal = SIGCHLD,
		.cgroup = (unsigned int)cgfd,
	};

	return syscall(SYS_clone3, &a, sizeof(a));
}

/*
 * cgns: in a cgroup namespace rooted at its own cgroup, with a child
 * cgroup "sub" charged by a burner; on 'q' it reads both through netlink
 * and through /proc/energy/cgroup and reports ids, cpu times and whether
 * the paths were the namespace's ("/" and "/sub").
 */
static void cgns_query(uint64_t outside);

static int role_cgns(char **argv)
{
	const char *dir = argv[0];
	unsigned int us = atoi(argv[1]);
	char path[4200];
	struct stat st;
	int fd;
	pid_t p;
	char c;

	/* Its parent: a cgroup outside the namespace, for the negative checks. */
	snprintf(path, sizeof(path), "%s/..", dir);
	if (stat(path, &st))
		return 98;
	if (unshare(CLONE_NEWCGROUP))
		return 95;
	snprintf(path, sizeof(path), "%s/sub", dir);
	fd = open(path, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return 96;
	p = clone_into(fd, 0);
	if (p == 0) {
		st_burn_cpu(us / 1e6);
		_exit(0);
	}
	close(fd);
	if (p < 0 || waitpid(p, NULL, 0) != p)
		return 97;
	st_burn_cpu(us / 1e6);
	role_send('r', 0, NULL);
	while ((c = role_wait()) != 'x') {
		if (c == 'c') {
			st_burn_cpu(us / 1e6);
			role_send('r', 0, NULL);
		} else if (c == 'q') {
			cgns_query(st.st_ino);
		}
	}
	return 0;
}

/*
 * The namespace's view of its root and of sub, for check_cgns(), and what
 * it must not see: the cgroup outside it by id, any path above its root
 * in the dump.
 */
static void cgns_query(uint64_t outside)
{
	char b[4096], s[4096];
	struct cgroup_rec r, *recs;
	size_t n;
	unsigned long long x;
	struct jnl *nl;
	uint64_t v[8];
	int err, bits;

	memset(v, 0, sizeof(v));
	bits = 0;
	if ((err = jnl_open(&nl)) == 0) {
		err = jnl_get_cgroup(nl, "/", 0, &r);
		if (err) {
			bits |= 1;
			v[6] = -err;
		} else {
			v[0] = r.id;
			if (strcmp(r.path, "/"))
				bits |= 16;
		}
		err = jnl_get_cgroup(nl, "/sub", 0, &r);
		if (err) {
			bits |= 2;
			v[7] = -err;
		} else {
			v[1] = r.id;
			v[2] = r.feat[JL_F_CPU_NS];
			if (strcmp(r.path, "/sub"))
				bits |= 32;
		}
		if (!jnl_get_cgroup(nl, NULL, outside, &r))
			bits |= 8192;
		if (jnl_dump_cgroups(nl, &recs, &n))
			bits |= 16384;
		else {
			/* Only its root and sub are below the namespace's root. */
			for (size_t i = 0; i < n; i++)
				if (strcmp(recs[i].path, "/") &&
				    strcmp(recs[i].path, "/sub"))
					bits |= 16384;
			free(recs);
		}
		jnl_close(nl);
	} else {
		bits |= 3;
	}
	if (st_read("/proc/energy/cgroup/energy.stat", b, sizeof(b)) <= 0 ||
	    st_kv(b, "id", &x))
		bits |= 4;
	else {
		v[3] = x;
		if (st_kvs(b, "path", s, sizeof(s)) || strcmp(s, "/"))
			bits |= 64;
	}
	if (st_read("/proc/energy/cgroup/sub/energy.stat", b, sizeof(b)) <= 0 ||
	    st_kv(b, "id", &x))
		bits |= 8;
	else {
		v[4] = x;
		if (!st_kv(b, "cpu_time_ns", &x))
			v[5] = x;
		if (st_kvs(b, "path", s, sizeof(s)) || strcmp(s, "/sub"))
			bits |= 128;
	}
	role_send('q', bits, v);
}

/* pidns: init of a new pid namespace; children that burn and exit, a thread. */
static void *burn_thread(void *p)
{
	st_burn_cpu((unsigned long)p / 1e6);
	return NULL;
}

static int role_pidns(char **argv)
{
	int kids = atoi(argv[0]);
	unsigned int us = atoi(argv[1]);
	pthread_t th;
	char c;

	for (int i = 0; i < kids; i++) {
		pid_t p = fork();

		if (p == 0) {
			st_burn_cpu((us / 4 + (i * 131u) % (us + 1)) / 1e6);
			_exit(0);
		}
	}
	while (wait(NULL) > 0)
		;
	pthread_create(&th, NULL, burn_thread, (void *)(unsigned long)us);
	pthread_join(th, NULL);
	role_send('r', getpid() == 1 ? 0 : -EINVAL, NULL);
	while ((c = role_wait()) == 'c') {
		st_burn_cpu(us / 1e6);
		role_send('r', 0, NULL);
	}
	return 0;
}

/* iou: an SQPOLL ring (its thread idles after 20 ms) and io-wq workers. */
static int iou_ops(struct io_uring *ring, int zero)
{
	static char buf[8][512];
	struct io_uring_cqe *cqe;
	int i;

	for (i = 0; i < 8; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

		if (!sqe)
			return -EBUSY;
		if (i < 4) {
			io_uring_prep_nop(sqe);
		} else {
			io_uring_prep_read(sqe, zero, buf[i], sizeof(buf[i]),
					   0);
			/* Punted to an io-wq worker. */
			io_uring_sqe_set_flags(sqe, IOSQE_ASYNC);
		}
	}
	io_uring_submit(ring);
	for (i = 0; i < 8; i++) {
		if (io_uring_wait_cqe(ring, &cqe))
			return -EIO;
		io_uring_cqe_seen(ring, cqe);
	}
	return 0;
}

static int role_iou(char **argv)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SQPOLL,
				     .sq_thread_idle = 20 };
	unsigned int us = atoi(argv[0]);
	struct io_uring ring;
	int err, zero = open("/dev/zero", O_RDONLY);
	char c;

	err = io_uring_queue_init_params(8, &ring, &p);
	if (!err)
		err = iou_ops(&ring, zero);
	st_burn_cpu(us / 1e6);
	role_send('r', err, NULL);
	while ((c = role_wait()) == 'c') {
		if (!err)
			iou_ops(&ring, zero);
		st_burn_cpu(us / 1e6);
		role_send('r', 0, NULL);
	}
	if (!err)
		io_uring_queue_exit(&ring);
	return 0;
}

/* vhost: the owner of a vhost-net device (its worker task). */
static int role_vhost(char **argv)
{
	unsigned int us = atoi(argv[0]);
	int fd = open("/dev/vhost-net", O_RDWR), err = 0;
	char c;

	if (fd < 0)
		err = -errno;
	else if (ioctl(fd, VHOST_SET_OWNER))
		err = -errno;
	st_burn_cpu(us / 1e6);
	role_send('r', err, NULL);
	while ((c = role_wait()) == 'c') {
		st_burn_cpu(us / 1e6);
		role_send('r', 0, NULL);
	}
	if (fd >= 0)
		close(fd);
	return 0;
}

static int role_main(int argc, char **argv)
{
	/* --role NAME GATE READY ARGS... */
	if (argc < 3)
		return 2;
	role_gate = atoi(argv[1]);
	role_ready = atoi(argv[2]);
	if (!strcmp(argv[0], "mt"))
		return role_mt(argc - 3, argv + 3, false);
	if (!strcmp(argv[0], "threaded"))
		return role_mt(argc - 3, argv + 3, true);
	if (!strcmp(argv[0], "mover"))
		return role_mover();
	if (!strcmp(argv[0], "cgns"))
		return role_cgns(argv + 3);
	if (!strcmp(argv[0], "pidns"))
		return role_pidns(argv + 3);
	if (!strcmp(argv[0], "iou"))
		return role_iou(argv + 3);
	if (!strcmp(argv[0], "vhost"))
		return role_vhost(argv + 3);
	return 3;
}

/* ------------------------------------------------------------------ */
/* The test side.                                                     */
/* ------------------------------------------------------------------ */

enum fig {
	F_CG_CPU,
	F_CG_TASKS,
	F_THREAD,
	F_PROC,
	F_PROC_CG,
	F_EXIT_RU,
	F_EXIT_CG,
	F_EXIT_MISSING,
	F_NODE,
	F_CG_OBJECTS,
	F_TASK_OBJECTS,
	F_CGNS,
	F_PRELOAD,
	F_NR
};

static struct df_fig figs[F_NR] = {
	[F_CG_CPU] = { "cgroup cpu_time_ns - 1000 * cpu.stat usage_usec growth",
		       "ns" },
	[F_CG_TASKS] = { "cgroup tasks: - threads in cgroup.threads (and below)",
			 "tasks" },
	[F_THREAD] = { "thread cpu_time_ns - /proc/<tid>/schedstat", "ns" },
	[F_PROC] = { "process cpu_time_ns - its CPU clock", "ns" },
	[F_PROC_CG] = { "process alone in a cgroup: cpu_time_ns - 1000 * usage_usec",
			"ns" },
	[F_EXIT_RU] = { "exit records - wait4() ru_utime+ru_stime", "ns" },
	[F_EXIT_CG] = { "exit records of a process alone in a cgroup - 1000 * usage_usec",
			"ns" },
	[F_EXIT_MISSING] = { "children without their exit record", "children" },
	[F_NODE] = { "node energy - (root cgroup + idle)", "uJ" },
	[F_CG_OBJECTS] = { "cgroup objects after teardown - baseline",
			   "objects" },
	[F_TASK_OBJECTS] = { "task objects after teardown - baseline",
			     "objects" },
	[F_CGNS] = { "cgroup namespace: mismatched ids or paths", "bits" },
	[F_PRELOAD] = { "tasks alive across a load: joules - kernel (charged from the load)",
			"ns" },
};

enum kind {
	K_STORM,
	K_SHORT,
	K_DEEP,
	K_MT,
	K_THREADED,
	K_MOVER,
	K_CGNS,
	K_PIDNS,
	K_IOU,
	K_VHOST
};

static const char *const kind_name[] = { "storm",    "short", "deep", "mt",
					 "threaded", "mover", "cgns", "pidns",
					 "io_uring", "vhost" };

struct child {
	pid_t pid;
	enum kind kind;
	bool single; /* one thread all its life */
	bool reaper; /* reaped children of its own: rusage includes theirs */
	bool preload; /* alive across a module load */
	char alone[300]; /* the cgroup it alone ever ran in ("" if none) */
	int gate, ready; /* roles: the pipes */
	bool zombie; /* exited, not reaped yet */
	bool reaped;
	bool early; /* reaped as soon as it exited, like a shell does */
	bool compared;
	int status;
	struct rusage ru;
};

struct cgn {
	char rel[4200]; /* below the cgroup2 mount */
	unsigned long long base; /* usage_usec at the snapshot */
	long long bound; /* ns: what moves in and out of it may shift */
	/* moves of a busy task in or out: an interval each */
	unsigned int moves;
	unsigned long long pre; /* usage_usec before a module load */
	long long load_gap; /* ns: its growth from then to the snapshot */
	bool gone;
};

struct xrec {
	uint32_t pid, tgid;
	uint64_t cpu_ns;
};

/* One round's state; the harness runs each test in its own process. */
static struct child kids[MAX_CHILDREN];
static int nkids;
static struct cgn *cgs;
static int ncgs;
static struct xrec *recs;
static int nrecs;
static unsigned long lost_events;
/*
 * PREEMPT_RT with a fork pool that may run dry (fork_pool_empty): a task
 * that exits before the sweep tracks it cannot be tracked at its exit (a
 * probe may not allocate there), so its time is lost by design and
 * counted in exits_untracked (88-fork-pool checks that count). Here a
 * missing exit record and a cgroup short of cpu.stat are then allowed,
 * the former only as many as were counted; never a cgroup over cpu.stat.
 */
static bool may_lose;
static unsigned long long untracked0, missing;

static unsigned long long untracked_since(void)
{
	unsigned long long n = st_sysfs_u64("exits_untracked");

	return n == ~0ULL || n < untracked0 ? 0 : n - untracked0;
}
static uint64_t max_interval_ns;
static struct jnl *evnl;
static char top[64]; /* the round's cgroup, below CG */
static bool vhost_said;

/* ---- the module ---- */

static bool mounted(void)
{
	char b[16384];

	return st_read("/proc/mounts", b, sizeof(b)) > 0 &&
	       strstr(b, " /proc/energy ");
}

static int mod_unload(void)
{
	if (mounted() && umount2("/proc/energy", MNT_DETACH))
		return -errno;
	for (int i = 0; i < 1000; i++) {
		if (!syscall(SYS_delete_module, "joules", O_NONBLOCK))
			return 0;
		if (errno != EWOULDBLOCK && errno != EBUSY && errno != EAGAIN)
			return -errno;
		usleep(10000);
	}
	return -EBUSY;
}

static int mod_load(const char *params)
{
	int fd = open(JOULES_KO, O_RDONLY | O_CLOEXEC), r;

	if (fd < 0)
		return -errno;
	r = syscall(SYS_finit_module, fd, params, 0);
	close(fd);
	if (r)
		return -errno;
	if (!mounted() &&
	    mount("joulesfs", "/proc/energy", "joulesfs", 0, NULL))
		return -errno;
	return st_write(JOULES_SYSFS "/model/coefficients", MODEL,
			strlen(MODEL));
}

/* ---- events: exit records and samples ---- */

static int events_open(void)
{
	int err = jnl_open(&evnl);

	if (!err)
		err = jnl_subscribe(evnl, JNL_GRP_EXITS | JNL_GRP_SAMPLES);
	if (!err)
		fcntl(jnl_fd(evnl), F_SETFD, FD_CLOEXEC);
	return err;
}

static void events_close(void)
{
	if (evnl)
		jnl_close(evnl);
	evnl = NULL;
}

/* Take events for up to ms; returns the number of samples seen. */
static int events_take(int ms, int want_samples)
{
	double end = st_now() + ms / 1000.0;
	int samples = 0;

	while (evnl) {
		struct jnl_event ev;
		double left = end - st_now();
		int r;

		if (left < 0)
			left = 0;
		r = jnl_next_event(evnl, &ev, (int)(left * 1000));
		if (r == -ENOBUFS) {
			lost_events++;
			continue;
		}
		if (r != 1)
			break;
		if (ev.type == JNL_EV_EXIT && nrecs < MAX_RECS) {
			recs[nrecs].pid = ev.exit.pid;
			recs[nrecs].tgid = ev.exit.tgid;
			recs[nrecs].cpu_ns = ev.exit.feat[JL_F_CPU_NS];
			nrecs++;
		} else if (ev.type == JNL_EV_SAMPLE) {
			if (ev.sample.interval_ns > max_interval_ns)
				max_interval_ns = ev.sample.interval_ns;
			if (++samples >= want_samples && want_samples)
				break;
		}
		jnl_event_free(&ev);
	}
	return samples;
}

/*
 * Let the worker close three intervals after now, taking events meanwhile:
 * everything done before this call is charged after it.
 */
static void settle(void)
{
	events_take(0, 0);
	if (events_take(5000 + 4 * st_interval_ms(), 3) < 3)
		fprintf(stderr, "# no samples from the module for 5 s\n");
}

/* ---- the cgroup tree of a round ---- */

static struct cgn *cg_find(const char *rel)
{
	for (int i = 0; i < ncgs; i++)
		if (!strcmp(cgs[i].rel, rel))
			return &cgs[i];
	return NULL;
}

static int cg_make(const char *rel)
{
	char path[4300];

	snprintf(path, sizeof(path), CG "/%s", rel);
	if (mkdir(path, 0755))
		return -errno;
	if (ncgs < MAX_CGS) {
		/* A new cgroup's usage starts at zero. */
		snprintf(cgs[ncgs].rel, sizeof(cgs[ncgs].rel), "%s", rel);
		cgs[ncgs].base = 0;
		cgs[ncgs].bound = 0;
		cgs[ncgs].moves = 0;
		cgs[ncgs].load_gap = 0;
		cgs[ncgs].gone = false;
		ncgs++;
	}
	return 0;
}

static bool under(const char *rel, const char *anc)
{
	size_t n = strlen(anc);

	return !strncmp(rel, anc, n) && (rel[n] == 0 || rel[n] == '/');
}

/*
 * A move of a task from one cgroup to another: every cgroup that holds one
 * side and not the other may be charged up to `ns` more or less than the
 * kernel charged it; busy moves (ns < 0) count one interval each, see
 * cg_bound().
 */
static void cg_moved(const char *from, const char *to, long long ns)
{
	for (int i = 0; i < ncgs; i++)
		if (under(from, cgs[i].rel) != under(to, cgs[i].rel)) {
			if (ns < 0)
				cgs[i].moves++;
			else
				cgs[i].bound += ns;
		}
}

/*
 * A busy task moved: joules charges each interval to where the task is at
 * its end, so up to one interval of its time lands on the other side; the
 * kernel's rstat charges the time since the task's last update_curr() (at
 * most a tick: 10 ms at HZ >= 100) to the new cgroup. The two differ by at
 * most the larger: one interval (the longest the module reported in its
 * samples this round, plus a tick for the worker's lag in reading) per move.
 */
static long long cg_bound(const struct cgn *c)
{
	long long iv = max_interval_ns ? (long long)max_interval_ns :
					 st_interval_ms() * 1000000LL;

	return c->bound + (long long)c->moves * (iv + 10000000LL);
}

static int cg_open(const char *rel)
{
	char path[4300];

	snprintf(path, sizeof(path), CG "/%s", rel);
	return open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* Threads in a cgroup and below, by the kernel's cgroup.threads. */
static long cg_threads(const char *rel, pid_t *tids, long max, long n)
{
	char path[4300], line[32];
	FILE *f;

	snprintf(path, sizeof(path), CG "/%s/cgroup.threads", rel);
	f = fopen(path, "re");
	if (!f)
		return n;
	while (fgets(line, sizeof(line), f))
		if (n < max)
			tids[n++] = atoi(line);
		else
			n++;
	fclose(f);
	return n;
}

/* ---- children ---- */

static struct child *kid_new(pid_t pid, enum kind k, bool single)
{
	struct child *c;

	if (nkids >= MAX_CHILDREN)
		return NULL;
	c = &kids[nkids++];
	memset(c, 0, sizeof(*c));
	c->pid = pid;
	c->kind = k;
	c->single = single;
	c->gate = c->ready = -1;
	return c;
}

/* A child that burns us microseconds (half of them through exec) and exits. */
static pid_t spawn_burner(const char *rel, unsigned int us, bool may_exec,
			  bool reap_now)
{
	int fd = cg_open(rel);
	char arg[16];
	bool ex = may_exec && (df_rnd() & 1);
	pid_t p;

	if (fd < 0)
		return -1;
	snprintf(arg, sizeof(arg), "%u", us);
	p = clone_into(fd, 0);
	if (p == 0) {
		if (ex) {
			char *const av[] = { "87-differential", "--burn-us",
					     arg, NULL };

			execv("/proc/self/exe", av);
			_exit(98);
		}
		st_burn_cpu(us / 1e6);
		_exit(0);
	}
	close(fd);
	if (p > 0) {
		struct child *c = kid_new(p, K_STORM, true);

		/*
		 * Reaped at once, like a shell's commands: the task is
		 * released before the worker may ever have seen it alive.
		 */
		if (c && reap_now && wait4(p, &c->status, 0, &c->ru) == p)
			c->zombie = c->reaped = c->early = true;
	}
	return p;
}

/* A role, from its first instruction in cgroup rel. */
static struct child *spawn_role(const char *rel, enum kind k,
				unsigned long long flags, const char *name,
				const char *a0, const char *a1, const char *a2,
				const char *a3, const char *a4)
{
	int g[2], r[2], fd;
	char gs[16], rs[16];
	struct child *c;
	pid_t p;

	if (pipe2(g, O_CLOEXEC) || pipe2(r, O_CLOEXEC))
		return NULL;
	fd = cg_open(rel);
	if (fd < 0)
		return NULL;
	snprintf(gs, sizeof(gs), "%d", g[0]);
	snprintf(rs, sizeof(rs), "%d", r[1]);
	{
		char *const av[] = { "87-differential",
				     "--role",
				     (char *)name,
				     gs,
				     rs,
				     (char *)a0,
				     (char *)a1,
				     (char *)a2,
				     (char *)a3,
				     (char *)a4,
				     NULL };

		p = clone_into(fd, flags);
		if (p == 0) {
			fcntl(g[0], F_SETFD, 0);
			fcntl(r[1], F_SETFD, 0);
			execv("/proc/self/exe", av);
			_exit(99);
		}
	}
	close(fd);
	close(g[0]);
	close(r[1]);
	if (p < 0) {
		close(g[1]);
		close(r[0]);
		return NULL;
	}
	c = kid_new(p, k, false);
	if (!c)
		return NULL;
	c->gate = g[1];
	c->ready = r[0];
	return c;
}

/* Wait for a role's message (taking events meanwhile); 0 or -1. */
static int role_msg(struct child *c, struct role_msg *m)
{
	double end = st_now() + 120;

	while (st_now() < end) {
		struct pollfd p = { .fd = c->ready, .events = POLLIN };

		if (poll(&p, 1, 50) == 1)
			return read(c->ready, m, sizeof(*m)) == sizeof(*m) ? 0 :
									     -1;
		events_take(0, 0);
	}
	return -1;
}

static void role_tell(struct child *c, char what)
{
	if (c->gate >= 0 && write(c->gate, &what, 1) != 1)
		fprintf(stderr, "# gate of %d: %m\n", c->pid);
}

/* ---- the comparisons ---- */

/* usage_usec in cpu.stat of the cgroup rel (below the mount), or ~0ULL. */
static unsigned long long cg_usage(const char *rel)
{
	char dir[4300];

	snprintf(dir, sizeof(dir), CG "/%s", rel);
	return df_usage_usec(dir);
}

/*
 * Every cgroup of the round's tree, workload stopped and charged.
 *
 * cpu.stat's usage_usec is the cgroup's (and descendants') sum of the
 * deltas update_curr() added to its tasks' se.sum_exec_runtime
 * (cgroup_account_cputime(), kernel/sched/fair.c), the very sum joules
 * counts from, printed truncated to microseconds. Between two readings
 * the truncation makes 1000 * (u1 - u0) differ from the true growth by
 * less than 1000 ns either way: that is the whole tolerance. A task that
 * moved shifts its time between the cgroups it moved between by at most
 * the bound noted for each move (cg_moved()). After a reload in the
 * middle, joules counts from the load, the snapshot is read a little
 * later: what ran between (an io-wq worker's idle exit, say) is in joules
 * and not in the growth, and is at most the growth from a reading taken
 * before the load to the snapshot (load_gap), which the kernel measured.
 */
/*
 * The kernel's figures of the round's cgroups (usage and threads), hashed:
 * tasks the roles do not hold can run or exit on their own (io-wq workers
 * end 5 s after their last work), and joules charges a task's last run an
 * interval after it. A check reads only after a settle in which these did
 * not move, and reads again if they moved while it read.
 */
static unsigned long long kernel_state(void)
{
	static pid_t tids[65536];
	unsigned long long h = 1469598103934665603ULL;

	for (int i = 0; i < ncgs; i++) {
		if (cgs[i].gone)
			continue;
		h = (h ^ cg_usage(cgs[i].rel)) * 1099511628211ULL;
		h = (h ^ (unsigned long long)cg_threads(cgs[i].rel, tids, 65536,
							0)) *
		    1099511628211ULL;
	}
	return h;
}

struct cg_reading {
	unsigned long long u, j, jt;
	long long nt;
	bool unread;
};

static void read_cgroups(struct cg_reading *r)
{
	static pid_t tids[65536];

	for (int i = 0; i < ncgs; i++) {
		struct cgn *c = &cgs[i];
		char path[4300], b[4096];

		if (c->gone)
			continue;
		r[i].j = 0;
		r[i].jt = ~0ULL;
		r[i].nt = 0;
		r[i].u = cg_usage(c->rel);
		snprintf(path, sizeof(path),
			 "/proc/energy/cgroup/%s/energy.stat", c->rel);
		r[i].unread = r[i].u == ~0ULL ||
			      st_read(path, b, sizeof(b)) <= 0 ||
			      st_kv(b, "cpu_time_ns", &r[i].j) ||
			      st_kv(b, "tasks", &r[i].jt);
		/* Tasks here and below, as the kernel lists them now. */
		for (int d = 0; d < ncgs; d++)
			if (!cgs[d].gone && under(cgs[d].rel, c->rel))
				r[i].nt = cg_threads(cgs[d].rel, tids, 65536,
						     r[i].nt);
	}
}

static void check_cgroups(const char *when)
{
	static struct cg_reading rd[MAX_CGS];
	unsigned long long before = kernel_state(), after, lost;
	int tries;

	for (tries = 0; tries < 20; tries++) {
		settle();
		after = kernel_state();
		if (after != before) {
			before = after;
			continue;
		}
		read_cgroups(rd);
		after = kernel_state();
		if (after == before)
			break;
		before = after;
	}
	if (tries)
		fprintf(stderr,
			"# %s: the kernel's figures moved: %d more settle(s)%s\n",
			when, tries, tries == 20 ? ", still moving" : "");
	if (tries == 20)
		read_cgroups(rd);
	lost = may_lose ? untracked_since() : 0;
	if (lost)
		fprintf(stderr,
			"# %s: %llu tasks lost and counted (exits_untracked): cgroups may be short\n",
			when, lost);
	for (int i = 0; i < ncgs; i++) {
		struct cgn *c = &cgs[i];
		long long k, dev;

		if (c->gone)
			continue;
		if (rd[i].unread) {
			df_judge(&figs[F_CG_CPU], 1LL << 40, 0, 0,
				 "%s %s: unreadable", when, c->rel);
			continue;
		}
		k = (long long)(rd[i].u - c->base) * 1000;
		dev = (long long)rd[i].j - k;
		df_judge(
			&figs[F_CG_CPU], dev,
			lost ? LLONG_MIN : -999 - cg_bound(c),
			999 + cg_bound(c) + c->load_gap,
			"%s /%s: joules %llu ns, cpu.stat +%lld ns (ratio %.4f, %lld ns ran between the load and the snapshot)",
			when, c->rel, rd[i].j, k, k ? (double)rd[i].j / k : 0.0,
			c->load_gap);
		df_judge(&figs[F_CG_TASKS], (long long)rd[i].jt - rd[i].nt, 0,
			 0, "%s /%s: tasks: %llu, kernel %lld", when, c->rel,
			 rd[i].jt, rd[i].nt);
	}
}

static struct child *kid_of(pid_t pid)
{
	for (int i = 0; i < nkids; i++)
		if (kids[i].pid == pid)
			return &kids[i];
	return NULL;
}

/*
 * Every live task of the tree (all blocked): a thread's cpu_time_ns and its
 * schedstat are both se.sum_exec_runtime of a task that is not running:
 * equal to the nanosecond. A process's CPU clock (thread_group_cputime():
 * sum_sched_runtime of its dead threads plus its live threads' runtime)
 * misses what each dead thread ran after __exit_signal() added it up, which
 * joules counts (it reads a task until its final switch): joules may be
 * above it, never below. A process alone in its cgroup has all of its
 * time, every exit tail included, in cpu.stat: equal within the 1000 ns of
 * truncation. Tasks that lived across a module load were charged from the
 * load on: at most the kernel's figure.
 */
static void check_live(void)
{
	static pid_t tids[65536];
	long n = 0;

	for (int d = 0; d < ncgs; d++)
		if (!cgs[d].gone)
			n = cg_threads(cgs[d].rel, tids, 65536, n);
	if (n > 65536)
		n = 65536;
	for (long i = 0; i < n; i++) {
		char path[128], b[1024];
		unsigned long long tg = 0, k, j;
		struct child *c;

		snprintf(path, sizeof(path), "/proc/%d/status", tids[i]);
		if (st_read(path, b, sizeof(b)) <= 0 || !strstr(b, "Tgid:"))
			continue;
		tg = strtoull(strstr(b, "Tgid:") + 5, NULL, 10);
		c = kid_of(tg);
		k = df_schedstat(tids[i]);
		snprintf(path, sizeof(path), "/proc/energy/threads/%llu/%d", tg,
			 tids[i]);
		j = df_cpu_ns(path);
		if (k == ~0ULL)
			continue;
		if (j == ~0ULL) {
			df_judge(&figs[F_THREAD], -(long long)k, 0, 0,
				 "task %d of %llu: no %s", tids[i], tg, path);
			continue;
		}
		df_judge(&figs[c && c->preload ? F_PRELOAD : F_THREAD],
			 (long long)(j - k), c && c->preload ? LLONG_MIN : 0, 0,
			 "task %d of %llu%s: joules %llu, schedstat %llu",
			 tids[i], tg,
			 c && c->preload ? " (since the load)" : "", j, k);
	}
	for (int i = 0; i < nkids; i++) {
		struct child *c = &kids[i];
		struct timespec ts;
		clockid_t clk;
		unsigned long long j, k;
		char path[64];

		if (c->zombie || c->kind == K_STORM)
			continue;
		if (clock_getcpuclockid(c->pid, &clk) ||
		    clock_gettime(clk, &ts))
			continue;
		k = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
		snprintf(path, sizeof(path), "/proc/energy/%d", c->pid);
		j = df_cpu_ns(path);
		if (j == ~0ULL) {
			df_judge(&figs[F_PROC], -(long long)k, 0, 0,
				 "process %d: no %s", c->pid, path);
			continue;
		}
		if (c->preload)
			df_judge(
				&figs[F_PRELOAD], (long long)(j - k), LLONG_MIN,
				0,
				"process %d (since the load): joules %llu, clock %llu",
				c->pid, j, k);
		else
			df_judge(&figs[F_PROC], (long long)(j - k), 0,
				 LLONG_MAX,
				 "process %d: joules %llu, clock %llu", c->pid,
				 j, k);
		if (c->alone[0] && !c->preload) {
			struct cgn *g = cg_find(c->alone);
			unsigned long long u = cg_usage(c->alone);
			if (g && u != ~0ULL)
				df_judge(
					&figs[F_PROC_CG],
					(long long)j -
						(long long)(u - g->base) * 1000,
					-999 - cg_bound(g), 999 + cg_bound(g),
					"process %d alone in /%s: joules %llu, cpu.stat %llu us",
					c->pid, c->alone, j, u - g->base);
		}
	}
}

/*
 * Root cgroup plus idle is the node, to the microjoule: both reads of a
 * pair between two ticks (st_node_root(); 58-cgroups.c does the same).
 */
static void check_node(void)
{
	struct node_rec n0, n1;
	struct cgroup_rec r0, r1;
	struct jnl *nl, *ev;
	int attempt, err = -EAGAIN, ok;

	if (jnl_open(&nl))
		return;
	if (jnl_open(&ev) || jnl_subscribe(ev, JNL_GRP_SAMPLES)) {
		jnl_close(nl);
		return;
	}
	for (attempt = 0; attempt < 10 && err == -EAGAIN; attempt++) {
		err = st_node_root(nl, ev, &n0, &r0);
		if (err)
			continue;
		st_burn_cpu(0.05);
		usleep(2 * st_interval_ms() * 1000);
		err = st_node_root(nl, ev, &n1, &r1);
	}
	ok = !err;
	if (ok)
		df_judge(&figs[F_NODE],
			 (long long)((n1.energy_uj - n0.energy_uj) -
				     ((n1.idle_uj - n0.idle_uj) +
				      (r1.energy_uj - r0.energy_uj))),
			 0, 0, "node +%llu uJ, idle +%llu, root cgroup +%llu",
			 (unsigned long long)(n1.energy_uj - n0.energy_uj),
			 (unsigned long long)(n1.idle_uj - n0.idle_uj),
			 (unsigned long long)(r1.energy_uj - r0.energy_uj));
	else
		fprintf(stderr,
			"# node check: no two reads between two ticks in 10 tries\n");
	jnl_close(ev);
	jnl_close(nl);
}

/* The cgns role's view, against the kernel's ids (the directories' inodes). */
static void check_cgns(struct child *c, const char *rel)
{
	char dir[4300];
	struct role_msg m;
	struct stat st_root, st_sub;
	unsigned long long jsub = ~0ULL;
	int bits;

	role_tell(c, 'q');
	if (role_msg(c, &m) || m.tag != 'q') {
		df_judge(&figs[F_CGNS], 1 << 10, 0, 0,
			 "no answer from the namespace");
		return;
	}
	snprintf(dir, sizeof(dir), CG "/%s", rel);
	stat(dir, &st_root);
	snprintf(dir, sizeof(dir), CG "/%s/sub", rel);
	stat(dir, &st_sub);
	snprintf(dir, sizeof(dir), "/proc/energy/cgroup/%s/sub/energy.stat",
		 rel);
	jsub = df_cpu_ns(dir);
	bits = m.err;
	/* cgroup ids are their kernfs inode numbers (64-bit ino_t). */
	if (!(bits & 1) && m.v[0] != st_root.st_ino)
		bits |= 1 << 8;
	if (!(bits & 2) && (m.v[1] != st_sub.st_ino || m.v[2] != jsub))
		bits |= 1 << 9;
	if (!(bits & 4) && m.v[3] != st_root.st_ino)
		bits |= 1 << 11;
	if (!(bits & 8) && (m.v[4] != st_sub.st_ino || m.v[5] != jsub))
		bits |= 1 << 12;
	df_judge(
		&figs[F_CGNS], bits, 0, 0,
		"inside the namespace of /%s: GET_CGROUP / %s (id %llu), /sub %s (id %llu); "
		"file / id %llu, sub id %llu; kernel ids %llu, %llu; bits: 1,2 GET failed, "
		"4,8 file failed, 16-128 wrong paths, 256-4096 wrong ids or cpu, "
		"8192 the parent outside read by id, 16384 a dump failed or went outside",
		rel, bits & 1 ? strerror((int)m.v[6]) : "ok",
		(unsigned long long)m.v[0],
		bits & 2 ? strerror((int)m.v[7]) : "ok",
		(unsigned long long)m.v[1], (unsigned long long)m.v[3],
		(unsigned long long)m.v[4], (unsigned long long)st_root.st_ino,
		(unsigned long long)st_sub.st_ino);
}

/*
 * Reap every child (after its exit record came, so it is off its CPU for
 * good) and compare.
 *
 * wait4() fills ru_utime/ru_stime with getrusage(RUSAGE_BOTH): the
 * child's reaped children (none here: children that reaped their own are
 * left out) plus thread_group_cputime_adjusted(), whose cputime_adjust()
 * (kernel/sched/cputime.c) scales the tick samples so that utime + stime
 * is exactly the group's sum_exec_runtime; each is then truncated to a
 * microsecond (ns_to_kernel_old_timeval()). So for a process of one
 * thread, read after its final switch, the rusage sum lies in
 * (runtime - 2000 ns, runtime]. For several threads the kernel's sum
 * misses each exited thread's tail after __exit_signal(), joules does not:
 * joules at or above rusage; and when the process was alone in its cgroup,
 * equal to cpu.stat's growth within 1000 ns.
 */
static void reap_and_check(bool all)
{
	double end;
	int waiting, i;

	/* Zombies first, without reaping. */
	for (i = 0; i < nkids; i++) {
		siginfo_t si;

		if (kids[i].zombie || (!all && kids[i].gate >= 0))
			continue;
		for (;;) {
			memset(&si, 0, sizeof(si));
			if (waitid(P_PID, kids[i].pid, &si,
				   WEXITED | WNOWAIT | WNOHANG))
				break;
			if (si.si_pid == kids[i].pid) {
				kids[i].zombie = true;
				break;
			}
			events_take(20, 0);
		}
	}
	/* Their exit records (the one with pid == tgid is the last). */
	end = st_now() + 2 + 5 * st_interval_ms() / 1000.0;
	do {
		waiting = 0;
		for (i = 0; i < nkids; i++) {
			bool seen = false;

			if (!kids[i].zombie || kids[i].compared)
				continue;
			for (int r = nrecs - 1; r >= 0 && !seen; r--)
				seen = recs[r].pid == (uint32_t)kids[i].pid &&
				       recs[r].tgid == (uint32_t)kids[i].pid;
			waiting += !seen;
		}
		if (waiting)
			events_take(100, 0);
	} while (waiting && st_now() < end);
	/* One more interval for records of other threads sent in the same tick. */
	events_take(st_interval_ms() + 50, 0);

	for (i = 0; i < nkids; i++) {
		struct child *c = &kids[i];
		unsigned long long j = 0, ru;
		int nr = 0;
		bool leader = false;

		if (!c->zombie || c->compared)
			continue;
		if (!c->reaped &&
		    wait4(c->pid, &c->status, 0, &c->ru) != c->pid) {
			fprintf(stderr, "# wait4 %d: %m\n", c->pid);
			continue;
		}
		if (!WIFEXITED(c->status) || WEXITSTATUS(c->status))
			fprintf(stderr,
				"# child %d (%s) ended with status 0x%x\n",
				c->pid, kind_name[c->kind], c->status);
		c->reaped = c->compared = true;
		if (c->gate >= 0) {
			close(c->gate);
			close(c->ready);
			c->gate = c->ready = -1;
		}
		for (int r = 0; r < nrecs; r++)
			if (recs[r].tgid == (uint32_t)c->pid) {
				j += recs[r].cpu_ns;
				nr++;
				leader |= recs[r].pid == (uint32_t)c->pid;
			}
		if (!leader && may_lose && ++missing <= untracked_since()) {
			fprintf(stderr,
				"# child %d (%s): no exit record, counted in exits_untracked (%llu)\n",
				c->pid, kind_name[c->kind], untracked_since());
			continue;
		}
		df_judge(&figs[F_EXIT_MISSING], !leader, 0, 0,
			 "child %d (%s%s): no exit record", c->pid,
			 kind_name[c->kind],
			 c->early ? ", reaped at once" : "");
		if (!leader)
			continue;
		ru = (c->ru.ru_utime.tv_sec + c->ru.ru_stime.tv_sec) *
			     1000000000ULL +
		     (c->ru.ru_utime.tv_usec + c->ru.ru_stime.tv_usec) *
			     1000ULL;
		if (c->reaper)
			continue;
		if (c->preload)
			df_judge(
				&figs[F_PRELOAD], (long long)(j - ru),
				LLONG_MIN, 1999,
				"child %d (since the load, %d records): joules %llu, rusage %llu",
				c->pid, nr, j, ru);
		else if (c->early)
			/*
			 * Reaped at once: wait4() may have read its runtime
			 * before its final switch (the exit path after
			 * exit_notify() still runs): at most joules' figure.
			 */
			df_judge(
				&figs[F_EXIT_RU], (long long)(j - ru), 0,
				LLONG_MAX,
				"child %d (reaped at once, %d records): joules %llu, rusage %llu",
				c->pid, nr, j, ru);
		else if (c->single)
			df_judge(
				&figs[F_EXIT_RU], (long long)(j - ru), 0, 1999,
				"child %d (kind %d, %d records): joules %llu, rusage %llu",
				c->pid, c->kind, nr, j, ru);
		else {
			df_judge(
				&figs[F_EXIT_RU], (long long)(j - ru), 0,
				LLONG_MAX,
				"child %d (kind %d, %d thread records): joules %llu, rusage %llu",
				c->pid, c->kind, nr, j, ru);
			if ((long long)(j - ru) > 1000000)
				fprintf(stderr,
					"# child %d (%s, %d thread records): the kernel's group sum "
					"misses %llu ns of its threads' exits\n",
					c->pid, kind_name[c->kind], nr, j - ru);
		}
		if (c->alone[0] && !c->preload) {
			struct cgn *g = cg_find(c->alone);
			unsigned long long u = cg_usage(c->alone);
			if (g && u != ~0ULL)
				df_judge(
					&figs[F_EXIT_CG],
					(long long)j -
						(long long)(u - g->base) * 1000,
					-999 - cg_bound(g), 999 + cg_bound(g),
					"child %d alone in /%s: records %llu, cpu.stat %llu us",
					c->pid, c->alone, j, u - g->base);
		}
	}
}

/* ---- a round ---- */

struct round {
	int seed_ix;
	unsigned long long seed;
	const char *name;
	bool reload_mid;
	const char *params; /* module parameters for the round */
};

static void tree_teardown(void)
{
	/* Deepest first; a cgroup is busy until its last task is released. */
	for (int i = ncgs - 1; i >= 0; i--) {
		char path[4300];
		double end = st_now() + 3;

		if (cgs[i].gone)
			continue;
		snprintf(path, sizeof(path), CG "/%s", cgs[i].rel);
		while (rmdir(path) && errno == EBUSY && st_now() < end)
			usleep(10000);
		cgs[i].gone = true;
	}
}

/*
 * cgroup entries read across rmdir (the sequence of issue 23's leak):
 * mkdir, open energy.stat, rmdir, read the open file.
 */
static void leak_probe(const char *base, int n)
{
	for (int i = 0; i < n; i++) {
		char rel[400], path[4400], b[2048];
		int fd;

		snprintf(rel, sizeof(rel), "%s/x%d", base, i);
		if (cg_make(rel))
			continue;
		snprintf(path, sizeof(path),
			 "/proc/energy/cgroup/%s/energy.stat", rel);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		snprintf(path, sizeof(path), CG "/%s", rel);
		rmdir(path);
		cgs[ncgs - 1].gone = true;
		if (fd >= 0) {
			if (read(fd, b, sizeof(b)) < 0 && errno != ENOENT &&
			    errno != ENODEV)
				fprintf(stderr, "# read across rmdir: %m\n");
			close(fd);
		}
	}
}

/* A deep chain with burners at random levels; returns its depth. */
static int deep_chain(const char *base, int depth)
{
	char rel[4200];
	size_t len;
	int d;

	snprintf(rel, sizeof(rel), "%s", base);
	len = strlen(rel);
	for (d = 1; d <= depth && len + 3 < sizeof(rel); d++) {
		memcpy(rel + len, "/d", 3);
		len += 2;
		if (cg_make(rel))
			break;
		if (d == depth || !df_in(0, 15))
			spawn_burner(rel, df_in(200, 3000), false,
				     df_rnd() & 1);
	}
	return d - 1;
}

static void seed_rng(const struct round *r)
{
	df_rng = r->seed * 1000003ULL + (unsigned long long)(r->name[0]) * 7 +
		 strlen(r->name);
}

/* Long-lived roles of a round. */
struct roles {
	struct child *mt[4], *thr, *mover, *cgns, *pidns, *iou, *vhost;
	int nmt;
};

static void roles_start(struct roles *ro, unsigned int us)
{
	char rel[300], a0[16], a1[16], a2[16], t1[400], t2[400], dir[600];

	ro->nmt = df_in(1, 3);
	for (int i = 0; i < ro->nmt; i++) {
		snprintf(rel, sizeof(rel), "%s/mt%d", top, i);
		cg_make(rel);
		snprintf(a0, sizeof(a0), "%lu", df_in(2, 8));
		snprintf(a1, sizeof(a1), "%d",
			 i == 0 ? 1 : (int)df_in(0, 1)); /* leader first? */
		snprintf(a2, sizeof(a2), "%lu", df_in(us / 2, us * 2));
		ro->mt[i] =
			spawn_role(rel, K_MT, 0, "mt", a0, a1, a2, NULL, NULL);
		if (ro->mt[i])
			snprintf(ro->mt[i]->alone, sizeof(ro->mt[i]->alone),
				 "%s", rel);
	}
	/* Threaded: a domain with two threaded children. */
	snprintf(rel, sizeof(rel), "%s/tdom", top);
	cg_make(rel);
	snprintf(t1, sizeof(t1), "%s/tdom/t1", top);
	snprintf(t2, sizeof(t2), "%s/tdom/t2", top);
	cg_make(t1);
	cg_make(t2);
	snprintf(dir, sizeof(dir), CG "/%s/cgroup.type", t1);
	st_write(dir, "threaded", 8);
	snprintf(dir, sizeof(dir), CG "/%s/cgroup.type", t2);
	st_write(dir, "threaded", 8);
	snprintf(t1, sizeof(t1), CG "/%s/tdom/t1/cgroup.threads", top);
	snprintf(t2, sizeof(t2), CG "/%s/tdom/t2/cgroup.threads", top);
	snprintf(a0, sizeof(a0), "%lu", df_in(2, 6));
	snprintf(a2, sizeof(a2), "%lu", df_in(us / 2, us * 2));
	ro->thr =
		spawn_role(rel, K_THREADED, 0, "threaded", a0, "0", a2, t1, t2);
	if (ro->thr)
		snprintf(ro->thr->alone, sizeof(ro->thr->alone), "%s", rel);
	/* The mover, between mv/a and mv/b. */
	snprintf(rel, sizeof(rel), "%s/mv", top);
	cg_make(rel);
	snprintf(rel, sizeof(rel), "%s/mv/a", top);
	cg_make(rel);
	snprintf(rel, sizeof(rel), "%s/mv/b", top);
	cg_make(rel);
	snprintf(rel, sizeof(rel), "%s/mv/a", top);
	ro->mover = spawn_role(rel, K_MOVER, 0, "mover", NULL, NULL, NULL, NULL,
			       NULL);
	if (ro->mover)
		ro->mover->single = true;
	/* A cgroup namespace. */
	snprintf(rel, sizeof(rel), "%s/cgns", top);
	cg_make(rel);
	snprintf(t1, sizeof(t1), "%s/cgns/sub", top);
	cg_make(t1);
	snprintf(dir, sizeof(dir), CG "/%s", rel);
	snprintf(a2, sizeof(a2), "%lu", df_in(us / 2, us * 2));
	ro->cgns =
		spawn_role(rel, K_CGNS, 0, "cgns", dir, a2, NULL, NULL, NULL);
	if (ro->cgns)
		ro->cgns->reaper = true;
	/* A pid namespace. */
	snprintf(rel, sizeof(rel), "%s/pidns", top);
	cg_make(rel);
	snprintf(a0, sizeof(a0), "%lu", df_in(1, 6));
	ro->pidns = spawn_role(rel, K_PIDNS, CLONE_NEWPID, "pidns", a0, a2,
			       NULL, NULL, NULL);
	if (ro->pidns)
		ro->pidns->reaper = true;
	/* io_uring. */
	snprintf(rel, sizeof(rel), "%s/iou", top);
	cg_make(rel);
	ro->iou = spawn_role(rel, K_IOU, 0, "iou", a2, NULL, NULL, NULL, NULL);
	if (ro->iou)
		snprintf(ro->iou->alone, sizeof(ro->iou->alone), "%s", rel);
	/* vhost. */
	snprintf(rel, sizeof(rel), "%s/vhost", top);
	cg_make(rel);
	ro->vhost = spawn_role(rel, K_VHOST, 0, "vhost", a2, NULL, NULL, NULL,
			       NULL);
}

/* Has process pid a thread whose name starts with prefix? */
static bool has_thread(pid_t pid, const char *prefix)
{
	char path[300], comm[64];
	struct dirent *de;
	bool found = false;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/comm", pid,
			 de->d_name);
		found = st_read(path, comm, sizeof(comm)) > 0 &&
			!strncmp(comm, prefix, strlen(prefix));
	}
	closedir(d);
	return found;
}

/* Each role's 'r' (blocked); roles' own errors and bounds noted. */
static void roles_ready(struct roles *ro, bool first)
{
	struct child *all[] = { ro->mt[0], ro->mt[1], ro->mt[2], ro->mt[3],
				ro->thr,   ro->mover, ro->cgns,	 ro->pidns,
				ro->iou,   ro->vhost };

	for (unsigned int i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		struct role_msg m;
		struct child *c = all[i];

		if (!c || c->gate < 0)
			continue;
		if (role_msg(c, &m) || m.tag != 'r') {
			fprintf(stderr,
				"# role %d (kind %d) did not get ready\n",
				c->pid, c->kind);
			continue;
		}
		if (c == ro->thr) {
			char t1[300], t2[300], from[300];

			/* Each thread's move: its whole CPU time up to it (mt_thread()). */
			snprintf(from, sizeof(from), "%s/tdom", top);
			snprintf(t1, sizeof(t1), "%s/tdom/t1", top);
			snprintf(t2, sizeof(t2), "%s/tdom/t2", top);
			cg_moved(from, t1, m.v[0]);
			cg_moved(from, t2, m.v[1]);
		}
		if (c == ro->iou && m.err && first)
			fprintf(stderr,
				"# io_uring SQPOLL: %s (workers not exercised)\n",
				strerror(-m.err));
		if (c == ro->vhost && first) {
			if (m.err && !vhost_said) {
				fprintf(stderr,
					"# vhost: skipped: %s on /dev/vhost-net%s\n",
					strerror(-m.err),
					m.err == -ENOENT ?
						" (no vhost_net in this guest)" :
						"");
				vhost_said = true;
			}
			/*
			 * Before 6.4 the worker is a kthread attached to the
			 * owner's cgroup after it started: a move from the
			 * root. Since, a thread of the owner.
			 */
			if (!m.err && !has_thread(c->pid, "vhost-")) {
				char rel[300];

				snprintf(rel, sizeof(rel), "%s/vhost", top);
				cg_moved("", rel, -1);
				fprintf(stderr,
					"# vhost: the worker is a kthread here\n");
			}
		}
	}
}

static void roles_tell(struct roles *ro, char what)
{
	struct child *all[] = { ro->mt[0], ro->mt[1], ro->mt[2], ro->mt[3],
				ro->thr,   ro->mover, ro->cgns,	 ro->pidns,
				ro->iou,   ro->vhost };

	for (unsigned int i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (all[i] && all[i]->gate >= 0)
			role_tell(all[i], what);
}

/*
 * The short-lived work, in random order: storms of fork(+exec)+exit,
 * processes shorter than an interval, deep chains, reads across rmdir, and
 * the mover's moves in between.
 */
static void churn(struct roles *ro, bool moves)
{
	unsigned int iv = st_interval_ms();
	unsigned long storms = st_scaled(df_in(30, 90)),
		      shorts = st_scaled(df_in(20, 60));
	int depth = df_in(10, st_scaled(100) > 10 ? st_scaled(100) : 10);
	int leaks = df_in(3, 10), nmoves = 0;
	char rel[300], mv_a[300], mv_b[300];
	bool in_a = true;
	double t0 = st_now();

	snprintf(mv_a, sizeof(mv_a), "%s/mv/a", top);
	snprintf(mv_b, sizeof(mv_b), "%s/mv/b", top);
	snprintf(rel, sizeof(rel), "%s/storm", top);
	if (!cg_find(rel))
		cg_make(rel);
	snprintf(rel, sizeof(rel), "%s/short", top);
	if (!cg_find(rel))
		cg_make(rel);
	while (storms || shorts || depth || leaks) {
		unsigned long what = df_in(0, 9);

		if (what < 4 && storms) {
			unsigned long n = df_in(1, storms < 20 ? storms : 20);

			snprintf(rel, sizeof(rel), "%s/storm", top);
			for (unsigned long i = 0; i < n; i++)
				spawn_burner(rel, df_in(0, 2000), true,
					     df_rnd() & 1);
			storms -= n;
		} else if (what < 7 && shorts) {
			unsigned long n = df_in(1, shorts < 15 ? shorts : 15);

			/* Shorter than one interval, started and reaped between ticks. */
			snprintf(rel, sizeof(rel), "%s/short", top);
			for (unsigned long i = 0; i < n; i++)
				spawn_burner(rel, df_in(100, iv * 1000 / 3),
					     false, df_rnd() & 1);
			shorts -= n;
		} else if (what == 7 && depth) {
			char base[300];

			snprintf(base, sizeof(base), "%s/deep%d", top, depth);
			if (!cg_make(base))
				deep_chain(base, depth);
			depth = 0;
		} else if (what == 8 && leaks) {
			snprintf(rel, sizeof(rel), "%s/leak", top);
			if (!cg_find(rel))
				cg_make(rel);
			leak_probe(rel, leaks);
			leaks = 0;
		} else if (moves && ro->mover && ro->mover->gate >= 0 &&
			   nmoves < 12) {
			char path[400], pid[16];
			int n = snprintf(pid, sizeof(pid), "%d",
					 ro->mover->pid);

			snprintf(path, sizeof(path), CG "/%s/cgroup.procs",
				 in_a ? mv_b : mv_a);
			if (!st_write(path, pid, n)) {
				cg_moved(in_a ? mv_a : mv_b, in_a ? mv_b : mv_a,
					 -1);
				in_a = !in_a;
				nmoves++;
			}
		}
		events_take(df_in(0, 3) ? 0 : iv / 2, 0);
	}
	if (moves && ro->mover && ro->mover->gate >= 0)
		role_tell(ro->mover, 's');
	fprintf(stderr, "# churn: %d moves, %.1f s\n", nmoves, st_now() - t0);
}

/*
 * A sleeper moved: the mover, blocked since before the intervals settle()
 * waited out, goes to the other side. It runs no more before the check,
 * so no charge tells joules it moved; its tasks: must follow anyway, once
 * the worker's scan has been over the table. Its CPU time stays where it
 * ran, in both accounts (bound 0).
 */
static void move_sleeper(struct roles *ro)
{
	char path[400], cur[400], pid[16], a[300], b[300];
	bool in_a;
	int n, want;

	if (!ro->mover || ro->mover->gate < 0)
		return;
	snprintf(a, sizeof(a), "%s/mv/a", top);
	snprintf(b, sizeof(b), "%s/mv/b", top);
	snprintf(path, sizeof(path), "/proc/%d/cgroup", ro->mover->pid);
	/* A move not made is a check not made: counted as off. */
	if (st_read(path, cur, sizeof(cur)) <= 0) {
		df_judge(&figs[F_CG_TASKS], 1, 0, 0,
			 "the mover's cgroup: unreadable");
		return;
	}
	cur[strcspn(cur, "\n")] = 0;
	in_a = strlen(cur) > strlen(a) &&
	       !strcmp(cur + strlen(cur) - strlen(a), a);
	n = snprintf(pid, sizeof(pid), "%d", ro->mover->pid);
	snprintf(path, sizeof(path), CG "/%s/cgroup.procs", in_a ? b : a);
	events_take(0, 0); /* samples from before the move do not count */
	n = st_write(path, pid, n);
	if (n) {
		df_judge(&figs[F_CG_TASKS], 1, 0, 0,
			 "moving the blocked mover: %s", strerror(-n));
		return;
	}
	cg_moved(in_a ? a : b, in_a ? b : a, 0);
	/*
	 * The worker's scan for such moves goes slowly (taskcg.c): wait for
	 * it, counted in samples (intervals stretch under emulation), until
	 * joules counts the mover where the kernel lists it, for at most
	 * twice a pass over the table and then some. check_cgroups() judges
	 * what it finds.
	 */
	want = 2 * st_moved_scan_ticks() + 8;
	snprintf(path, sizeof(path), "/proc/energy/cgroup/%s/energy.stat",
		 in_a ? b : a);
	for (n = 0; n < want; n++) {
		static pid_t tids[1024];
		unsigned long long jt = ~0ULL;
		char st[4096];

		if (events_take(5000 + 4 * (int)st_interval_ms(), 1) < 1)
			break;
		if (st_read(path, st, sizeof(st)) > 0 &&
		    !st_kv(st, "tasks", &jt) &&
		    (long long)jt == cg_threads(in_a ? b : a, tids, 1024, 0))
			break;
	}
	fprintf(stderr,
		"# the blocked mover moved; followed after %d samples (of %d at most)\n",
		n + 1, want);
}

static void fig_summary(const char *label)
{
	for (int f = 0; f < F_NR; f++)
		if (figs[f].n)
			fprintf(stderr,
				"# %s: %-70s %6lu compared, %4lu off, largest deviation %lld %s\n",
				label, figs[f].name, figs[f].n, figs[f].bad,
				figs[f].maxdev, figs[f].unit);
}

static int run_round(const struct round *r)
{
	unsigned long long base_cg, base_obj, now_cg = 0, now_obj = 0;
	unsigned int us;
	struct roles ro = { 0 };
	double t0 = st_now(), end;
	int err;

	seed_rng(r);
	for (int f = 0; f < F_NR; f++)
		figs[f].shown = 0;
	nkids = ncgs = nrecs = 0;
	lost_events = 0;
	max_interval_ns = 0;
	fprintf(stderr,
		"# seed %llu, round %s (replay: SEED=%llu, or jseed=%llu on the guest's command line)\n",
		r->seed, r->name, r->seed, r->seed);
	if (r->params) {
		err = mod_unload();
		if (!err)
			err = mod_load(r->params);
		if (err) {
			fprintf(stderr, "# reload with %s: %s\n", r->params,
				strerror(-err));
			return -1;
		}
	} else if (st_write(JOULES_SYSFS "/model/coefficients", MODEL,
			    strlen(MODEL))) {
		return -1;
	}
	if (events_open())
		return -1;
	settle();
	may_lose = r->params && st_rt_kernel();
	untracked0 = st_sysfs_u64("exits_untracked");
	missing = 0;
	base_cg = st_sysfs_u64("cgroups");
	base_obj = st_sysfs_u64("objects");
	snprintf(top, sizeof(top), "jd%llu-%s", r->seed % 100000, r->name);
	if (cg_make(top))
		return -1;
	us = df_in(5000, 30000);

	roles_start(&ro, us);
	churn(&ro, true);
	roles_ready(&ro, true);
	/* Storm children to their end (zombies, not reaped: their records). */
	for (int i = 0; i < nkids; i++)
		if (kids[i].gate < 0 && !kids[i].reaped) {
			siginfo_t si;

			waitid(P_PID, kids[i].pid, &si, WEXITED | WNOWAIT);
		}
	settle();
	/* Once a seed: the scan it waits for takes seconds (taskcg.c). */
	if (!r->reload_mid && !r->params)
		move_sleeper(&ro);
	check_live();
	check_cgroups("stopped");
	if (ro.cgns) {
		char rel[300];

		snprintf(rel, sizeof(rel), "%s/cgns", top);
		check_cgns(ro.cgns, rel);
	}

	if (r->reload_mid) {
		/* Reap the dead, keep the blocked; reload; snapshot; go on. */
		reap_and_check(false);
		settle();
		check_cgroups("before the reload");
		events_close();
		err = mod_unload();
		for (int i = 0; i < ncgs; i++)
			if (!cgs[i].gone)
				cgs[i].pre = cg_usage(cgs[i].rel);
		if (!err)
			err = mod_load("");
		if (err) {
			fprintf(stderr, "# reload: %s\n", strerror(-err));
			return -1;
		}
		if (events_open())
			return -1;
		settle();
		for (int i = 0; i < nkids; i++)
			if (!kids[i].reaped)
				kids[i].preload = true;
		for (int i = 0; i < ncgs; i++) {
			if (!cgs[i].gone) {
				cgs[i].base = cg_usage(cgs[i].rel);
				/* + 999: the extra reading's truncation; none if unread */
				if (cgs[i].pre != ~0ULL && cgs[i].base != ~0ULL)
					cgs[i].load_gap =
						(long long)(cgs[i].base -
							    cgs[i].pre) *
							1000 +
						999;
			}
			cgs[i].bound = 0;
			cgs[i].moves = 0;
		}
		/* At most what ran between the load and the snapshot; every task counted. */
		check_cgroups("just after the reload");
		roles_tell(&ro, 'c');
		churn(&ro, false);
		roles_ready(&ro, false);
		for (int i = 0; i < nkids; i++)
			if (kids[i].gate < 0 && !kids[i].reaped) {
				siginfo_t si;

				waitid(P_PID, kids[i].pid, &si,
				       WEXITED | WNOWAIT);
			}
		settle();
		check_live();
		check_cgroups("stopped after the reload");
	}
	check_node();

	/* The end: every role exits, everything is reaped and compared. */
	roles_tell(&ro, 'x');
	reap_and_check(true);
	settle();
	check_cgroups("all exited");
	if (lost_events)
		fprintf(stderr,
			"# %lu overflows of the event socket: records were lost (a test limit)\n",
			lost_events);
	events_close();

	tree_teardown();
	/* Objects back: the removed cgroups' entries go after RCU (5 s is plenty). */
	end = st_now() + 5;
	while (st_now() < end) {
		now_cg = st_sysfs_u64("cgroups");
		now_obj = st_sysfs_u64("objects");
		if (now_cg <= base_cg && now_obj <= base_obj + 4)
			break;
		usleep(200000);
	}
	/* Idle kworkers come and go: task objects within 4 of the baseline. */
	df_judge(&figs[F_CG_OBJECTS], (long long)(now_cg - base_cg), LLONG_MIN,
		 0, "%s: cgroups %llu -> %llu", r->name, base_cg, now_cg);
	df_judge(&figs[F_TASK_OBJECTS], (long long)(now_obj - base_obj),
		 LLONG_MIN, 4, "%s: objects %llu -> %llu", r->name, base_obj,
		 now_obj);
	fprintf(stderr,
		"# seed %llu round %s: %d children, %d cgroups, %d exit records, %.1f s\n",
		r->seed, r->name, nkids, ncgs, nrecs, st_now() - t0);
	if (r->params) {
		/* Back to the defaults for whatever runs next. */
		if (mod_unload() || mod_load(""))
			fprintf(stderr, "# reload with the defaults failed\n");
	}
	return 0;
}

FIXTURE(diff)
{
	int unused;
};

FIXTURE_SETUP(diff)
{
	cgs = calloc(MAX_CGS, sizeof(*cgs));
	recs = calloc(MAX_RECS, sizeof(*recs));
	ASSERT_NE(NULL, cgs);
	ASSERT_NE(NULL, recs);
	signal(SIGPIPE, SIG_IGN);
}

FIXTURE_TEARDOWN(diff)
{
	int f;

	fig_summary("all seeds");
	for (f = 0; f < F_NR; f++) {
		unsigned long bad = figs[f].bad;

		if (bad)
			TH_LOG("%s: %lu of %lu off", figs[f].name, bad,
			       figs[f].n);
		EXPECT_EQ(0, bad);
	}
}

/*
 * Each kind of round runs one of the seeds (three drawn: one each, within
 * CI's few minutes a kernel); SEED= or jseed= replays that seed in all.
 */
static void run_seeds(struct __test_metadata *_metadata, int ix,
		      const char *name, bool mid, const char *params)
{
	int s = ix % nseeds;
	struct round r = { s, seeds[s], name, mid, params };

	ASSERT_EQ(0, run_round(&r))
	TH_LOG("round %s of seed %llu could not run", name, seeds[s]);
	fig_summary(name);
}

TEST_F_TIMEOUT(diff, plain, 900)
{
	run_seeds(_metadata, 0, "plain", false, NULL);
}

TEST_F_TIMEOUT(diff, reload_in_the_middle, 900)
{
	run_seeds(_metadata, 1, "reload", true, NULL);
}

TEST_F_TIMEOUT(diff, fork_pool_empty, 900)
{
	/* fork_pool=0 defers every new task to the sweep; 2 refills between forks. */
	static char params[32];

	df_rng = seeds[2 % nseeds] ^ 0x5eed;
	snprintf(params, sizeof(params), "fork_pool=%d", df_rnd() & 1 ? 2 : 0);
	fprintf(stderr, "# module parameters: %s\n", params);
	run_seeds(_metadata, 2, "pool", false, params);
}

static void restore_coef(void)
{
	if (coef_saved[0])
		st_write(JOULES_SYSFS "/model/coefficients", coef_saved,
			 strlen(coef_saved));
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "--burn-us")) {
		st_burn_cpu(atoi(argv[2]) / 1e6);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "--role"))
		return role_main(argc - 2, argv + 2);
	if (access(JOULES_SYSFS "/cgroups", R_OK)) {
		printf("1..0 # SKIP joules without cgroups\n");
		return KSFT_SKIP;
	}
	if (st_sh("grep -q ' " CG
		  " cgroup2 ' /proc/mounts || mount -t cgroup2 none " CG)) {
		printf("1..0 # SKIP no cgroup2\n");
		return KSFT_SKIP;
	}
	if (access(JOULES_KO, R_OK)) {
		printf("1..0 # SKIP no %s to reload\n", JOULES_KO);
		return KSFT_SKIP;
	}
	nseeds = df_seeds(seeds, 3);
	for (int i = 0; i < nseeds; i++)
		printf("# seed %llu (replay: SEED=%llu, or run-qemu.sh --append jseed=%llu)\n",
		       seeds[i], seeds[i], seeds[i]);
	fflush(stdout);
	st_read(JOULES_SYSFS "/model/coefficients", coef_saved,
		sizeof(coef_saved));
	ck_at_exit(restore_coef);
	return test_harness_run(argc, argv);
}
