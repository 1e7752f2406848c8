// SPDX-License-Identifier: GPL-2.0
/*
 * Churn: 100,000 processes and threads are created and exit while readers
 * loop over /proc/energy, another lists the churning threads, and a
 * netlink subscriber listens. Afterwards the
 * module's object count is back to its baseline, its task table matches
 * the tasks that exist, and its slab holds no more than before.
 *
 *   81-churn [PROCESSES THREADS]   (default 20000 80000: threads are cheaper,
 *                                   scaled by st_scaled() per kernel)
 */
#include <dirent.h>
#include <pthread.h>
#include <signal.h>

#include "selftest.h"

static volatile int stop_readers;
static unsigned long reads_ok, reads_gone, reads_bad;
static int last_bad_errno;

/* Walk /proc/energy and read every process (and its threads) found. */
static void *reader(void *arg)
{
	char path[300], b[1024];

	(void)arg;
	while (!stop_readers) {
		DIR *d = opendir("/proc/energy");
		struct dirent *de;

		if (!d) {
			__sync_fetch_and_add(&reads_bad, 1);
			last_bad_errno = errno;
			usleep(1000);
			continue;
		}
		while ((de = readdir(d)) && !stop_readers) {
			ssize_t r;

			if (de->d_name[0] < '1' || de->d_name[0] > '9')
				continue;
			snprintf(path, sizeof(path), "/proc/energy/%s",
				 de->d_name);
			r = st_read(path, b, sizeof(b));
			if (r > 0)
				__sync_fetch_and_add(&reads_ok, 1);
			else if (r == -ENOENT || r == -ESRCH)
				/* The process exited between readdir and read. */
				__sync_fetch_and_add(&reads_gone, 1);
			else {
				__sync_fetch_and_add(&reads_bad, 1);
				last_bad_errno = -r;
			}
		}
		closedir(d);
		/* Readers keep up the pressure without starving the churn. */
		usleep(20000);
	}
	return NULL;
}

/*
 * List this process's threads, which come and go by the thousand: the
 * listing emits names outside RCU (dir_emit() may fault and sleep; a
 * debug kernel reports it if it does not).
 */
static void *thread_lister(void *arg)
{
	char path[64];

	(void)arg;
	snprintf(path, sizeof(path), "/proc/energy/threads/%d", getpid());
	while (!stop_readers) {
		DIR *d = opendir(path);

		if (!d) {
			__sync_fetch_and_add(&reads_bad, 1);
			last_bad_errno = errno;
			usleep(1000);
			continue;
		}
		while (readdir(d))
			;
		closedir(d);
		__sync_fetch_and_add(&reads_ok, 1);
		usleep(5000);
	}
	return NULL;
}

static void *nop(void *arg)
{
	return arg;
}

static int churn_threads(unsigned long n)
{
	pthread_t th[64];
	unsigned long done = 0;

	while (done < n) {
		unsigned int k, batch = n - done < 64 ? n - done : 64;

		for (k = 0; k < batch; k++)
			if (pthread_create(&th[k], NULL, nop, NULL))
				return -1;
		for (k = 0; k < batch; k++)
			pthread_join(th[k], NULL);
		done += batch;
	}
	return 0;
}

static int churn_procs(unsigned long n)
{
	/* volatile: vfork's child runs on this stack frame. */
	volatile unsigned long i;

	for (i = 0; i < n; i++) {
		/*
		 * vfork: a new process (new pid, task and thread group) without
		 * copying the address space, which dominates under emulation.
		 */
		pid_t p = vfork();

		if (p < 0)
			return -1;
		if (p == 0)
			_exit(0);
		waitpid(p, NULL, 0);
	}
	return 0;
}

/* Tasks that exist now, from /proc (every thread of every process). */
static long count_tasks(void)
{
	DIR *d = opendir("/proc"), *t;
	struct dirent *de, *te;
	char path[300];
	long n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/task", de->d_name);
		t = opendir(path);
		if (!t)
			continue;
		while ((te = readdir(t)))
			if (te->d_name[0] >= '1' && te->d_name[0] <= '9')
				n++;
		closedir(t);
	}
	closedir(d);
	return n;
}

/*
 * active_objs and objs_per_slab of the joules_entry cache, or -1. Shrink it
 * first: free objects parked in per-CPU slabs otherwise count as active.
 */
static long slab_active(long *per_slab)
{
	FILE *f;
	char line[512];
	long active = -1;

	st_write("/sys/kernel/slab/joules_entry/shrink", "1", 1);
	f = fopen("/proc/slabinfo", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		long a, num, size, per;

		if (sscanf(line, "joules_entry %ld %ld %ld %ld", &a, &num,
			   &size, &per) == 4) {
			active = a;
			*per_slab = per;
		}
	}
	fclose(f);
	return active;
}

/*
 * The fork hook's pool of ready entries is refilled once it is down to
 * half, so it holds anywhere from half to all of fork_pool entries of the
 * slab. Before each slab reading it is drained below half by short-lived
 * children and left to refill: full, the same at both readings.
 */
static void fill_pool(void)
{
	char b[32];
	long n = 64;

	if (st_read("/sys/module/joules/parameters/fork_pool", b, sizeof(b)) >
	    0)
		n = atol(b);
	for (long i = 0; i <= n / 2; i++) {
		pid_t p = fork();

		if (p == 0)
			_exit(0);
		if (p > 0)
			waitpid(p, NULL, 0);
	}
	usleep(300000);
}

/* A KASAN kernel (its quarantine keeps freed objects active in the slab)? */
static bool kasan_kernel(void)
{
	return st_sh("grep -q ' kasan_quarantine_put$' /proc/kallsyms") == 0;
}

/* Wait (bounded) for the object count to come back to `want`. */
static unsigned long long wait_objects(unsigned long long want, long slack)
{
	unsigned long long o = 0;
	double t0 = st_now();

	while (st_now() - t0 < 20) {
		o = st_sysfs_u64("objects");
		if ((long long)(o - want) <= slack &&
		    (long long)(want - o) <= slack)
			break;
		usleep(100000);
	}
	return o;
}

static unsigned long nproc, nthr;

/* The netlink subscriber a crashed run leaves behind is stopped by the parent. */
FIXTURE(churn)
{
	pid_t sub;
};

FIXTURE_SETUP(churn)
{
	self->sub = -1;
}

FIXTURE_TEARDOWN_PARENT(churn)
{
	if (self->sub > 0)
		kill(self->sub, SIGKILL);
}

/*
 * Processes and threads created and exited with readers and a subscriber
 * all along; then no leak: objects back to the baseline, the task table
 * matches the system, the slab at its baseline.
 */
TEST_F_TIMEOUT(churn, no_leak, 3000)
{
	unsigned long long base_obj, obj, tracked, misses0;
	long per = 0, slab0, slab1, tasks, ncpu;
	pthread_t rd[3];
	pid_t sub = -1, forker;
	int status, i;
	double t0;

	/* A subscriber to both multicast groups, if the tool is there. */
	if (access("/usr/bin/joulesctl", X_OK) == 0) {
		sub = fork();
		if (sub == 0) {
			int fd = open("/tmp/churn-watch.out",
				      O_WRONLY | O_CREAT | O_TRUNC, 0600);

			dup2(fd, 1);
			execl("/usr/bin/joulesctl", "joulesctl", "watch",
			      "--json", (char *)NULL);
			_exit(127);
		}
		self->sub = sub;
	}
	for (i = 0; i < 2; i++)
		pthread_create(&rd[i], NULL, reader, NULL);
	pthread_create(&rd[2], NULL, thread_lister, NULL);
	usleep(500000);
	base_obj = wait_objects(st_sysfs_u64("objects"), 0);
	fill_pool();
	slab0 = slab_active(&per);
	misses0 = st_sysfs_u64("lookup_misses");

	t0 = st_now();
	forker = fork();
	if (forker == 0)
		_exit(churn_procs(nproc / 2) ? 1 : 0);
	CHECK(churn_procs(nproc - nproc / 2) == 0, "fork");
	CHECK(churn_threads(nthr) == 0, "pthread_create");
	waitpid(forker, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "second forker");
	DIAG("%lu processes and %lu threads in %.1f s", nproc, nthr,
	     st_now() - t0);
	/* Up to here: nproc processes and nthr threads created and exited */

	/*
	 * Same tasks as at the baseline: the objects must come back. A leak
	 * only raises the count; idle kworkers may have exited meanwhile.
	 */
	obj = wait_objects(base_obj, 4);
	DIAG("objects %llu, tracked %llu, fork_deferred %llu, alloc_failures %llu, lookup misses +%llu",
	     obj, st_sysfs_u64("tasks_tracked"), st_sysfs_u64("fork_deferred"),
	     st_sysfs_u64("alloc_failures"),
	     st_sysfs_u64("lookup_misses") - misses0);
	CHECK((long long)(obj - base_obj) <= 4,
	      "objects back to baseline: %llu vs %llu (kworkers may differ by a few)",
	      obj, base_obj);

	stop_readers = 1;
	for (i = 0; i < 3; i++)
		pthread_join(rd[i], NULL);
	CHECK(reads_bad == 0 && reads_ok > 0,
	      "readers: %lu reads, %lu of exited tasks (ENOENT/ESRCH), %lu other errors (last %s)",
	      reads_ok, reads_gone, reads_bad,
	      reads_bad ? strerror(last_bad_errno) : "none");
	if (sub > 0) {
		kill(sub, SIGTERM);
		waitpid(sub, &status, 0);
		self->sub = -1;
		CHECK(WIFEXITED(status) || (WIFSIGNALED(status) &&
					    WTERMSIG(status) == SIGTERM),
		      "netlink subscriber listened throughout and ended cleanly");
	} else {
		TH_LOG("no netlink subscriber: joulesctl not installed");
	}

	usleep(500000);
	tracked = st_sysfs_u64("tasks_tracked");
	tasks = count_tasks();
	/*
	 * Entries are freed after an RCU grace period: wait (bounded) for
	 * them. The slab is counted by whole slabs, and SLUB keeps one per CPU
	 * that a shrink does not give back: within one slab per CPU.
	 */
	ncpu = sysconf(_SC_NPROCESSORS_ONLN) > 0 ?
		       sysconf(_SC_NPROCESSORS_ONLN) :
		       1;
	fill_pool();
	t0 = st_now();
	do {
		slab1 = slab_active(&per);
		if (slab0 < 0 || slab1 <= slab0 + per * ncpu)
			break;
		usleep(200000);
	} while (st_now() - t0 < 10);
	DIAG("tracked %llu, tasks in /proc %ld, slab active %ld -> %ld (%ld per slab), lookup misses +%llu",
	     tracked, tasks, slab0, slab1, per,
	     st_sysfs_u64("lookup_misses") - misses0);
	CHECK((long)tracked - tasks <= 2 && tasks - (long)tracked <= 2,
	      "task table %llu matches the %ld tasks that exist", tracked,
	      tasks);
	if (slab0 >= 0 && kasan_kernel())
		DIAG("KASAN holds freed objects in its quarantine: the slab is not a count here");
	else if (slab0 >= 0)
		CHECK(slab1 <= slab0 + per * ncpu, "slab not grown: %ld -> %ld",
		      slab0, slab1);
	else
		DIAG("no joules_entry line in /proc/slabinfo (merged cache)");
}

int main(int argc, char **argv)
{
	if (st_sysfs_u64("version") == ~0ULL) {
		printf("1..0 # SKIP joules not loaded\n");
		return KSFT_SKIP;
	}
	/* Two numbers (not options) first: processes and threads. */
	nproc = argc > 2 && argv[1][0] != '-' ? strtoul(argv[1], NULL, 10) :
						st_scaled(20000);
	nthr = argc > 2 && argv[1][0] != '-' ? strtoul(argv[2], NULL, 10) :
					       st_scaled(80000);
	return test_harness_run(argc, argv);
}
