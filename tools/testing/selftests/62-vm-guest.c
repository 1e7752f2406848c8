// SPDX-License-Identifier: GPL-2.0
/*
 * Inside a VM: joules-meterd's [virtio] input reads the host's lines from
 * the virtio-serial port org.joules.meter and feeds this kernel's module.
 * run-qemu.sh gives the guest that port on a unix socket of the build host
 * and a second one, org.joules.test, whose input the host's vm-relay
 * writes into the first: this test writes the host's trace itself, a
 * seeded random walk of cumulative energies, and knows every number.
 *
 * At every reading the module's meter total moves by exactly what the
 * trace moved since the last baseline (1 uJ: the daemon carries energy as
 * a double of joules and feeds whole microjoules, so each end of a
 * difference may be truncated by one); processes are charged "meter"; the host going
 * silent, a new epoch, the daemon restarted and the module reloaded each
 * give one new baseline, after which the totals are exact again.
 *
 *   SEED=N, or jseed=N on the guest's command line, replays a walk.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "selftest.h"

#define PORTS "/sys/class/virtio-ports"
#define WALL JOULES_SYSFS "/wallmeter"
#define CONF "/tmp/vmg.conf"
#define LOG "/tmp/vmg.log"
#define NAME "vm-guest"
#define STEPS 20

/* /dev/vportNpM of the port named name, or "" (no such port). */
static void port_dev(const char *name, char *dev, size_t len)
{
	char path[300], got[128];
	struct dirent *d;
	DIR *dir = opendir(PORTS);

	dev[0] = 0;
	while (dir && (d = readdir(dir))) {
		snprintf(path, sizeof(path), PORTS "/%s/name", d->d_name);
		if (d->d_name[0] == '.' || st_read(path, got, sizeof(got)) <= 0)
			continue;
		got[strcspn(got, "\n")] = 0;
		if (!strcmp(got, name))
			snprintf(dev, len, "/dev/%s", d->d_name);
	}
	if (dir)
		closedir(dir);
}

static unsigned long long wall_u64(const char *file)
{
	char path[128], b[64];

	snprintf(path, sizeof(path), WALL "/%s", file);
	return st_read(path, b, sizeof(b)) > 0 ? strtoull(b, NULL, 10) : 0;
}

static bool wall_status_is(const char *want)
{
	char b[128];

	return st_read(WALL "/status", b, sizeof(b)) > 0 &&
	       !strncmp(b, want, strlen(want)) && b[strlen(want)] == '\n';
}

FIXTURE(vm)
{
	int ctl;
	pid_t daemon, burner;
	uint64_t rng;
	unsigned long long seed, epoch, seq, uj;
	/* The baseline the module took: the trace's energy and the meter's. */
	unsigned long long base_uj, base_meter;
	unsigned long long readings;
	/* As found, put back by the teardown (nothing if setup never saved). */
	struct st_settings saved;
};

static pid_t start_daemon(void)
{
	pid_t p = fork();

	if (!p) {
		int fd = open(LOG, O_WRONLY | O_CREAT | O_APPEND, 0644);

		dup2(fd, 1);
		dup2(fd, 2);
		execl("/usr/bin/joules-meterd", "joules-meterd", "-c", CONF,
		      "-v", NULL);
		_exit(127);
	}
	return p;
}

static void stop_daemon(pid_t *p)
{
	if (*p > 0) {
		kill(*p, SIGTERM);
		waitpid(*p, NULL, 0);
		*p = -1;
	}
}

/*
 * The module fed by a daemon on the port, from a seeded walk: 0, or -1
 * with the failed step logged.
 */
static int vm_start(struct __test_metadata *_metadata, FIXTURE_DATA(vm) * self)
{
	const char *s = getenv("SEED");
	FILE *fp;
	int err;

	err = st_static_none();
	if (err) {
		TH_LOG("%s 0: %s", ST_STATIC, strerror(-err));
		return -1;
	}
	if (!s)
		s = getenv("jseed");
	self->seed = s ? strtoull(s, NULL, 0) :
			 (unsigned long long)time(NULL) ^ getpid();
	self->rng = self->seed;
	DIAG("seed %llu (SEED=%llu or jseed=%llu replays it)", self->seed,
	     self->seed, self->seed);
	self->epoch = 1000 + ck_splitmix64(&self->rng) % 1000000;
	self->uj = ck_splitmix64(&self->rng) % 1000000000000ULL;
	fp = fopen(CONF, "w");
	if (!fp) {
		TH_LOG("%s: %m", CONF);
		return -1;
	}
	fchmod(fileno(fp), 0600);
	/* A long timeout: a stalled vCPU must not pass for a silent host. */
	fprintf(fp, "name = " NAME
		    "\ninterval = 0.2\ntimeout = 5\n[virtio host]\n");
	fclose(fp);
	st_write(WALL "/timeout_ms", "30000", 5);
	self->daemon = start_daemon();
	if (self->daemon <= 0) {
		TH_LOG("fork joules-meterd: %m");
		return -1;
	}
	return 0;
}

/* What the setup and the test changed: the teardown, or a failed setup. */
static void vm_undo(struct __test_metadata *_metadata, FIXTURE_DATA(vm) * self)
{
	stop_daemon(&self->daemon);
	if (self->burner > 0) {
		kill(self->burner, SIGKILL);
		waitpid(self->burner, NULL, 0);
	}
	if (self->ctl >= 0)
		close(self->ctl);
	/* Out of force before the next test. */
	st_write(WALL "/timeout_ms", "100", 3);
	usleep(500000);
	st_write(WALL "/timeout_ms", "30000", 5);
	EXPECT_EQ(0, st_settings_restore(&self->saved));
	if (self->ctl >= 0)
		st_sh("tail -n 30 " LOG " | sed 's/^/# /'");
}

FIXTURE_SETUP(vm)
{
	char meter[300], ctl[300];

	self->ctl = -1;
	self->daemon = self->burner = -1;
	/* virtio_console and what it needs, where they are modules (6.1). */
	st_sh("[ -f /lib/joules/console/order ] && while read -r m; do "
	      "insmod /lib/joules/console/$m 2>/dev/null; done < /lib/joules/console/order");
	for (int i = 0; i < 50; i++) {
		port_dev("org.joules.meter", meter, sizeof(meter));
		port_dev("org.joules.test", ctl, sizeof(ctl));
		if (meter[0] && ctl[0])
			break;
		usleep(100000);
	}
	if (!meter[0] || !ctl[0])
		SKIP(return,
			   "no virtio-serial ports org.joules.meter and org.joules.test "
			   "(a kernel without virtio_console, or run-qemu.sh without vm-relay)");
	self->ctl = open(ctl, O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, self->ctl);
	ASSERT_EQ(0, st_load());
	st_settings_save(&self->saved);
	ST_SETUP_OR_UNDO(vm_start(_metadata, self), vm_undo(_metadata, self));
}

FIXTURE_TEARDOWN(vm)
{
	vm_undo(_metadata, self);
}

/* One host line, through the relay: the trace moves by add (new epoch: from uj). */
static int send_line(FIXTURE_DATA(vm) * self, unsigned long long add)
{
	char line[160];
	struct timespec ts;
	int n;

	self->uj += add;
	clock_gettime(CLOCK_REALTIME, &ts);
	n = snprintf(
		line, sizeof(line),
		"joules-vm 1 epoch=%llu seq=%llu time_ns=%llu energy_uj=%llu\n",
		self->epoch, ++self->seq,
		(unsigned long long)ts.tv_sec * 1000000000ULL + ts.tv_nsec,
		self->uj);
	return write(self->ctl, line, n) == n ? 0 : -1;
}

/*
 * Send a line and wait until the module counted a reading of it: 1 when
 * it did, 0 when none came within 10 s.
 */
static int step(FIXTURE_DATA(vm) * self, unsigned long long add)
{
	unsigned long long r0 = wall_u64("readings");

	if (send_line(self, add))
		return 0;
	for (int i = 0; i < 200; i++) {
		if (wall_u64("readings") > r0)
			return 1;
		usleep(50000);
	}
	return 0;
}

/*
 * Walk `steps` lines from a new baseline; each reading's meter total must
 * be the baseline's plus what the trace moved, exactly (1 uJ). The number
 * of readings that were not.
 */
static int walk(struct __test_metadata *_metadata, FIXTURE_DATA(vm) * self,
		int steps, const char *what)
{
	int bad = 0, i;

	/* The first reading of a walk is the baseline: the module's, and ours. */
	if (!step(self, 1000 + ck_splitmix64(&self->rng) % 3000000)) {
		DIAG("%s: no reading of the first line", what);
		return steps;
	}
	/* Taken in (and any new baseline placed) by a tick: until it holds still. */
	self->base_meter = wall_u64("energy_uj");
	for (i = 0; i < 20; i++) {
		unsigned long long m;

		usleep(150000);
		m = wall_u64("energy_uj");
		if (m == self->base_meter && i)
			break;
		self->base_meter = m;
	}
	self->base_uj = self->uj;
	for (i = 0; i < steps; i++) {
		unsigned long long want, got = 0;
		int k;

		if (!step(self, 1000 + ck_splitmix64(&self->rng) % 3000000)) {
			DIAG("%s: step %d: no reading within 10 s", what, i);
			bad++;
			continue;
		}
		want = self->base_meter + (self->uj - self->base_uj);
		/* The module takes a reading in at its next tick. */
		for (k = 0; k < 40; k++) {
			got = wall_u64("energy_uj");
			if (got + 1 >= want && got <= want + 1)
				break;
			usleep(50000);
		}
		if (k == 40) {
			DIAG("%s: step %d: meter %llu uJ, the trace says %llu (%+lld)",
			     what, i, got, want, (long long)(got - want));
			bad++;
		}
	}
	CHECK(!bad, "%s: %d of %d readings off the trace", what, bad, steps);
	(void)_metadata;
	return bad;
}

TEST_F(vm, trace)
{
	char b[256];
	int i;

	/* The meter comes into force with the first readings. */
	for (i = 0; i < 50 && !wall_status_is(NAME); i++)
		send_line(self, 1000), usleep(200000);
	st_read(WALL "/status", b, sizeof(b));
	ASSERT_TRUE(wall_status_is(NAME)) TH_LOG("wallmeter/status: %s", b);
	walk(_metadata, self, STEPS, "a steady host");

	/* What runs is charged by the host's meter. */
	self->burner = fork();
	if (!self->burner)
		for (;;)
			;
	for (i = 0; i < 10; i++)
		step(self, 2000000);
	snprintf(b, sizeof(b), "/proc/energy/%d", self->burner);
	{
		char body[1024], src[64] = "";

		st_read(b, body, sizeof(body));
		st_kvs(body, "source", src, sizeof(src));
		CHECK(strstr(src, "meter") != NULL, "a burner's source: %s",
		      src);
	}
}

TEST_F(vm, faults)
{
	char b[256];
	int i;

	for (i = 0; i < 50 && !wall_status_is(NAME); i++)
		send_line(self, 1000), usleep(200000);
	ASSERT_TRUE(wall_status_is(NAME));
	walk(_metadata, self, 5, "before the faults");

	/* The host goes quiet past the daemon's timeout: said, then resumed. */
	sleep(7);
	CHECK(!st_sh("grep -q 'no line from the host in 5000 ms' " LOG),
	      "a silent host is logged");
	walk(_metadata, self, 5, "after a silent host");

	/* A new epoch, with a count that starts low: a new baseline, not a drop. */
	self->epoch++;
	self->uj = 5000;
	send_line(self, 0);
	usleep(500000);
	CHECK(!st_sh("grep -q 'restarted (epoch' " LOG),
	      "a new epoch is logged");
	walk(_metadata, self, 5, "after a new epoch");

	/* The daemon restarted: the port is held again, the walk goes on. */
	stop_daemon(&self->daemon);
	self->daemon = start_daemon();
	walk(_metadata, self, 5, "after the daemon restarted");

	/* The module reloaded under the daemon: fed again, a new baseline. */
	ASSERT_EQ(0,
		  st_sh(". /lib/joules/lib.sh; joules_unload && joules_load"));
	st_static_none();
	st_write(WALL "/timeout_ms", "30000", 5);
	for (i = 0; i < 50 && !wall_status_is(NAME); i++)
		send_line(self, 1000), usleep(200000);
	st_read(WALL "/status", b, sizeof(b));
	ASSERT_TRUE(wall_status_is(NAME)) TH_LOG("after the reload: %s", b);
	walk(_metadata, self, 5, "after the module reloaded");
}

TEST_HARNESS_MAIN
