// SPDX-License-Identifier: GPL-2.0
/*
 * Unload and reload joules 50 times (scaled per kernel) while readers, writers and netlink
 * subscribers are active. No oops (the runner checks dmesg), no hang (an
 * alarm bounds the test) and the readers and writers see only clean
 * errors: ENOENT when the files are gone, ENODEV for a sysfs file open
 * across the unload, ESRCH for a task that is gone.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/syscall.h>

#include "selftest.h"

#define CYCLES 50 /* st_scaled() */

static volatile int stop;
static unsigned long ok_ops, clean_errs, bad_errs;
static int bad_errno;

static void note(int r)
{
	if (r >= 0)
		__sync_fetch_and_add(&ok_ops, 1);
	else if (r == -ENOENT || r == -ENODEV || r == -ESRCH)
		__sync_fetch_and_add(&clean_errs, 1);
	else {
		__sync_fetch_and_add(&bad_errs, 1);
		bad_errno = -r;
	}
}

static void *reader(void *arg)
{
	static const char *const files[] = {
		"/proc/energy/self",
		"/proc/energy/1",
		"/proc/energy/threads/1/1",
		JOULES_SYSFS "/tasks_tracked",
		JOULES_SYSFS "/model/coefficients",
		JOULES_SYSFS "/rapl/status",
	};
	char b[1024];
	unsigned int i = (unsigned long)arg;

	while (!stop) {
		ssize_t r = st_read(files[i++ % 6], b, sizeof(b));

		note(r < 0 ? r : 0);
		/* Busy, but leave the CPUs some room for RCU grace periods. */
		usleep(200);
	}
	return NULL;
}

/* Holds a sysfs file open across unloads and keeps reading it. */
static void *holder(void *arg)
{
	char b[256];

	(void)arg;
	while (!stop) {
		int fd = open(JOULES_SYSFS "/model/generation", O_RDONLY);
		int k;

		if (fd < 0) {
			note(-errno);
			usleep(1000);
			continue;
		}
		for (k = 0; k < 50 && !stop; k++) {
			ssize_t r = pread(fd, b, sizeof(b), 0);

			note(r < 0 ? -errno : 0);
			usleep(500);
		}
		close(fd);
	}
	return NULL;
}

static void *writer(void *arg)
{
	static const char set[] = "1000000 0 0 0 0 500000\n";

	(void)arg;
	while (!stop) {
		note(st_write(JOULES_SYSFS "/model/coefficients", set,
			      sizeof(set) - 1));
		note(st_write(JOULES_SYSFS "/interval_ms", "50\n", 3));
		usleep(1000);
	}
	return NULL;
}

static int mounted(void)
{
	char b[8192];

	return st_read("/proc/mounts", b, sizeof(b)) > 0 &&
	       strstr(b, " /proc/energy ");
}

static int unload(void)
{
	int tries;

	if (mounted() && umount2("/proc/energy", MNT_DETACH))
		return -errno;
	/* A file still open in joulesfs pins the module: retry briefly. */
	for (tries = 0; tries < 500; tries++) {
		if (!syscall(SYS_delete_module, "joules", O_NONBLOCK))
			return 0;
		if (errno != EWOULDBLOCK && errno != EBUSY && errno != EAGAIN)
			return -errno;
		usleep(10000);
	}
	return -EBUSY;
}

static int load(void)
{
	int fd = open(JOULES_KO, O_RDONLY | O_CLOEXEC);
	int r;

	if (fd < 0)
		return -errno;
	r = syscall(SYS_finit_module, fd, "", 0);
	close(fd);
	if (r)
		return -errno;
	if (mount("joulesfs", "/proc/energy", "joulesfs", 0, NULL))
		return -errno;
	return 0;
}

/*
 * The settings as they were, the module loaded and mounted, the
 * subscribers stopped and the sched_switch event off again afterwards,
 * from the parent (also after a crash or a hang).
 */
FIXTURE(reload)
{
	struct st_settings saved;
	pid_t subs[2];
};

FIXTURE_SETUP(reload)
{
	self->subs[0] = self->subs[1] = -1;
	st_settings_save(&self->saved);
}

FIXTURE_TEARDOWN_PARENT(reload)
{
	for (int i = 0; i < 2; i++)
		if (self->subs[i] > 0) {
			kill(-self->subs[i], SIGKILL);
			kill(self->subs[i], SIGKILL);
		}
	EXPECT_EQ(0, st_load());
	EXPECT_EQ(0, st_settings_restore(&self->saved));
	st_write("/sys/kernel/tracing/events/sched/sched_switch/enable", "0\n",
		 2);
}

/*
 * Unload/reload cycles under readers, writers, holders of open files and
 * netlink subscribers; a hang fails the test after 600 s.
 */
TEST_F_TIMEOUT(reload, stress, 600)
{
	pthread_t th[5];
	pid_t subs[2];
	int i, fail_unload = 0, fail_load = 0, fail_read = 0, status;
	int cycles = st_scaled(CYCLES);
	char b[1024];
	double t0;
	/*
	 * Keep two other probes on sched_switch (the trace event and ftrace's
	 * comm recorder) so that adding and removing ours does not rewrite the
	 * static call inside __schedule on every cycle. Under QEMU's software
	 * emulation that patching, done 50 times while the other vCPU runs
	 * __schedule with interrupts off, has livelocked the guest in
	 * text_poke_bp_batch (see Documentation/testing.rst); the module's own
	 * register/unregister path is the same either way.
	 */
	if (access("/sys/kernel/tracing/events", F_OK))
		mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL);
	st_write("/sys/kernel/tracing/buffer_size_kb", "64\n", 3);
	st_write("/sys/kernel/tracing/events/sched/sched_switch/enable", "1\n",
		 2);

	/* Subscribers: joulesctl watch, restarted whenever it ends. */
	for (i = 0; i < 2; i++) {
		subs[i] = fork();
		if (subs[i] == 0) {
			setpgid(0, 0);
			for (;;) {
				if (system("timeout 2 joulesctl watch --json >/dev/null 2>&1") ==
				    -1)
					_exit(1);
				usleep(20000);
			}
		}
		/* The parent's copy, for the teardown: never written in the child. */
		self->subs[i] = subs[i];
	}
	pthread_create(&th[0], NULL, reader, (void *)0UL);
	pthread_create(&th[1], NULL, reader, (void *)3UL);
	pthread_create(&th[2], NULL, writer, NULL);
	pthread_create(&th[3], NULL, holder, NULL);
	pthread_create(&th[4], NULL, reader, (void *)1UL);
	t0 = st_now();
	for (i = 0; i < cycles; i++) {
		int r = unload();

		if (r) {
			fail_unload++;
			DIAG("cycle %d: unload: %s", i, strerror(-r));
			break;
		}
		usleep(20000);
		r = load();
		if (r) {
			fail_load++;
			DIAG("cycle %d: load: %s", i, strerror(-r));
			break;
		}
		usleep(50000);
		if (st_read("/proc/energy/self", b, sizeof(b)) <= 0)
			fail_read++;
	}
	CHECK(!fail_unload && !fail_load && i == cycles,
	      "%d unload/reload cycles under load in %.1f s", i, st_now() - t0);
	CHECK(!fail_read,
	      "per-pid file readable after every reload (%d misses)",
	      fail_read);
	stop = 1;
	for (i = 0; i < 5; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < 2; i++) {
		kill(-subs[i], SIGKILL);
		kill(subs[i], SIGKILL);
		waitpid(subs[i], &status, 0);
		self->subs[i] = -1;
	}
	CHECK(bad_errs == 0 && ok_ops > 0,
	      "readers and writers: %lu ok, %lu clean errors, %lu others (last: %s)",
	      ok_ops, clean_errs, bad_errs,
	      bad_errs ? strerror(bad_errno) : "none");
	/* Still a working module at the end. */
	if (!mounted())
		mount("joulesfs", "/proc/energy", "joulesfs", 0, NULL);
	CHECK(st_read("/proc/energy/self", b, sizeof(b)) > 0 &&
		      st_write(JOULES_SYSFS "/interval_ms", "100\n", 4) == 0,
	      "module works after the stress");
}

int main(int argc, char **argv)
{
	if (access(JOULES_SYSFS "/version", R_OK)) {
		printf("1..0 # SKIP joules not loaded\n");
		return KSFT_SKIP;
	}
	return test_harness_run(argc, argv);
}
