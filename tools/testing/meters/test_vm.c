// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of the VM channel (user/joules-meterd/vm.c, virtio.c):
 * the line both sides share, finding the channel in QEMU command lines as
 * QEMU and libvirt write them, and the guest's "virtio" input reading a
 * FIFO that stands in for the port. No VM, no module.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "jmd.h"
#include "vm.h"

TEST(line_round_trip)
{
	struct jmd_vm_line a = { 18446744073709551615ULL >> 1, 7,
				 1733390000123456789ULL,
				 18446744073709551615ULL },
			   b;
	char buf[JMD_VM_LINE_MAX + 1], err[128];
	int n = jmd_vm_format(buf, sizeof(buf), &a);

	CHECK(n > 0 && buf[n - 1] == '\n', "formatted: %d bytes", n);
	buf[n - 1] = 0;
	CHECK(!jmd_vm_parse(buf, &b, err, sizeof(err)), "parsed: %s", err);
	CHECK(!memcmp(&a, &b, sizeof(a)), "the same four numbers back: %s",
	      buf);
	/* A later host's extra keys are ignored. */
	CHECK(!jmd_vm_parse(
		      "joules-vm 1 epoch=1 seq=2 time_ns=3 energy_uj=4 watts=5",
		      &b, err, sizeof(err)) &&
		      b.energy_uj == 4,
	      "extra keys after the four: %s", err);
}

TEST(line_refused)
{
	static const char *const bad[] = {
		"",
		"joules-vm 2 epoch=1 seq=2 time_ns=3 energy_uj=4",
		"joules-vm 1 epoch=1 seq=2 time_ns=3",
		"joules-vm 1 epoch=1 seq=2 time_ns=3 energy_uj=-4",
		"joules-vm 1 epoch=1 seq=2 time_ns=3 energy_uj=4x",
		"joules-vm 1 epoch=1 seq=2 time_ns=3 energy_uj=99999999999999999999",
		"joules-vm 1 seq=2 epoch=1 time_ns=3 energy_uj=4",
		"joules-vm 1 epoch=1  seq=2 time_ns=3 energy_uj=4",
		"joules-vm 1 epoch= seq=2 time_ns=3 energy_uj=4",
	};
	char err[128], longline[2 * JMD_VM_LINE_MAX];
	struct jmd_vm_line l;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(jmd_vm_parse(bad[i], &l, err, sizeof(err)) && err[0],
		      "refused: '%s' (%s)", bad[i], err);
	snprintf(longline, sizeof(longline),
		 "joules-vm 1 epoch=1 seq=2 time_ns=3 energy_uj=4 %*s",
		 JMD_VM_LINE_MAX, "x");
	CHECK(jmd_vm_parse(longline, &l, err, sizeof(err)),
	      "an overlong line: %s", err);
}

/* Split a command line at blanks (the tests' arguments have none inside). */
static int split(char *s, char **argv, int max)
{
	int argc = 0;

	for (char *t = strtok(s, " "); t && argc < max; t = strtok(NULL, " "))
		argv[argc++] = t;
	return argc;
}

static int find(const char *cmdline, char *path, int *fd, char *err)
{
	char buf[2048], *argv[64];
	int argc;

	snprintf(buf, sizeof(buf), "%s", cmdline);
	argc = split(buf, argv, 64);
	path[0] = 0;
	*fd = -2;
	return jmd_vm_find_channel(argc, argv, JMD_VM_CHANNEL, path, 108, fd,
				   err, 256);
}

TEST(find_channel)
{
	char path[108], err[256];
	int fd;

	/* QEMU by hand: a path, the port after other ports. */
	CHECK(!find("qemu-system-x86_64 -m 512 -device virtio-serial-pci"
		    " -chardev socket,id=ga,path=/run/ga.sock,server=on,wait=off"
		    " -device virtserialport,chardev=ga,name=org.qemu.guest_agent.0"
		    " -chardev socket,id=jm,path=/run/vm1/jm.sock,server=on,wait=off"
		    " -device virtserialport,chardev=jm,name=org.joules.meter",
		    path, &fd, err) &&
		      !strcmp(path, "/run/vm1/jm.sock") && fd == -1,
	      "by hand: '%s' fd %d (%s)", path, fd, err);
	/* The old spelling: "server,nowait", and --options. */
	CHECK(!find("qemu --chardev socket,id=jm,path=/tmp/a,,b.sock,server,nowait"
		    " --device virtserialport,name=org.joules.meter,chardev=jm",
		    path, &fd, err) &&
		      !strcmp(path, "/tmp/a,b.sock"),
	      "server,nowait and a doubled comma: '%s' (%s)", path, err);
	/* libvirt: the listening socket passed as fd=N, the device in JSON. */
	CHECK(!find("/usr/bin/qemu-system-x86_64 -name guest=vm1,debug-threads=on"
		    " -chardev socket,id=charchannel0,fd=33,server=on,wait=off"
		    " -device {\"driver\":\"virtserialport\",\"bus\":\"virtio-serial0.0\",\"nr\":1,"
		    "\"chardev\":\"charchannel0\",\"id\":\"channel0\",\"name\":\"org.joules.meter\"}",
		    path, &fd, err) &&
		      fd == 33 && !path[0],
	      "libvirt's fd=33: fd %d, path '%s' (%s)", fd, path, err);
	/* A JSON value that looks like a key is not one. */
	CHECK(find("qemu -chardev socket,id=c,path=/x,server=on"
		   " -device {\"driver\":\"virtserialport\",\"id\":\"name\",\"chardev\":\"c\","
		   "\"name\":\"org.other\"}",
		   path, &fd, err),
	      "a port named org.other is not ours");
	CHECK(find("qemu -m 1", path, &fd, err) &&
		      strstr(err, "no virtserialport"),
	      "no port: %s", err);
	CHECK(find("qemu -chardev pty,id=jm -device virtserialport,chardev=jm,name=org.joules.meter",
		   path, &fd, err) &&
		      strstr(err, "not a socket"),
	      "a pty: %s", err);
	CHECK(find("qemu -chardev socket,id=jm,path=/x -device virtserialport,chardev=jm,name=org.joules.meter",
		   path, &fd, err) &&
		      strstr(err, "server"),
	      "QEMU as the client: %s", err);
	CHECK(find("qemu -device virtserialport,chardev=nope,name=org.joules.meter",
		   path, &fd, err) &&
		      strstr(err, "no -chardev"),
	      "no such chardev: %s", err);
	CHECK(find("qemu -chardev socket,id=jm,fd=x1,server=on"
		   " -device virtserialport,chardev=jm,name=org.joules.meter",
		   path, &fd, err) &&
		      strstr(err, "not a descriptor"),
	      "fd=x1: %s", err);
}

/* A root daemon parses these from any user's process: nothing may overflow. */
TEST(find_channel_hostile)
{
	char path[108], err[256], big[1000];
	int fd;

	/* Long driver names, both forms (ASan builds this test). */
	snprintf(big, sizeof(big), "qemu -device driver=%0127d", 0);
	CHECK(find(big, path, &fd, err), "a 127-byte driver: %s", err);
	snprintf(big, sizeof(big), "qemu -device {\"driver\":\"%0200d\"}", 0);
	CHECK(find(big, path, &fd, err), "a 200-byte JSON driver: %s", err);
	snprintf(big, sizeof(big),
		 "qemu -chardev socket,id=%0300d,path=/x,server=on -device "
		 "virtserialport,chardev=%0300d,name=org.joules.meter",
		 0, 0);
	CHECK(find(big, path, &fd, err), "300-byte ids: %s", err);
	/* Only a file-system socket at an absolute path is QEMU's own. */
	CHECK(find("qemu -chardev socket,id=jm,path=@victim,server=on"
		   " -device virtserialport,chardev=jm,name=org.joules.meter",
		   path, &fd, err) &&
		      strstr(err, "absolute"),
	      "path=@victim: %s", err);
	CHECK(find("qemu -chardev socket,id=jm,path=rel.sock,server=on"
		   " -device virtserialport,chardev=jm,name=org.joules.meter",
		   path, &fd, err) &&
		      strstr(err, "absolute"),
	      "a relative path: %s", err);
	CHECK(find("qemu -chardev socket,id=jm,path=/x.sock,abstract=on,server=on"
		   " -device virtserialport,chardev=jm,name=org.joules.meter",
		   path, &fd, err) &&
		      strstr(err, "abstract"),
	      "abstract=on: %s", err);
	/* QEMU takes the last of a repeated key. */
	CHECK(!find("qemu -chardev socket,id=jm,path=/a,path=/b,server=on"
		    " -device virtserialport,chardev=jm,name=org.joules.meter",
		    path, &fd, err) &&
		      !strcmp(path, "/b"),
	      "path=/a,path=/b: '%s' (%s)", path, err);
}

TEST(owner)
{
	static const char ok_[] =
		"Name:\tqemu\nUid:\t107\t107\t107\t107\nGid:\t112\t112\t112\t112\n";
	static const char *const bad[] = {
		/* A setuid program: real uid 1000, the rest root. */
		"Uid:\t1000\t0\t0\t0\nGid:\t1000\t1000\t1000\t1000\n",
		"Uid:\t0\t0\t0\t1000\nGid:\t0\t0\t0\t0\n",
		"Uid:\t1000\t1000\t1000\t1000\nGid:\t1000\t0\t1000\t1000\n",
		"Uid:\t1000\t1000\t1000\nGid:\t1000\t1000\t1000\t1000\n",
		"Name:\tx\n",
	};
	uid_t u = 1;
	gid_t g = 1;

	CHECK(!jmd_vm_owner(ok_, &u, &g) && u == 107 && g == 112,
	      "107:112: %u:%u", u, g);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(jmd_vm_owner(bad[i], &u, &g), "refused: %s", bad[i]);
}

TEST(load_latch)
{
	/* Two reads microseconds apart around a whole second: one value. */
	uint64_t l = jmd_vm_load_latch(0, 1999999999ULL);

	CHECK(jmd_vm_load_latch(l, 2000000001ULL) == l,
	      "2.000000001 s keeps it");
	CHECK(jmd_vm_load_latch(l, 1999999000ULL) == l, "1.999999 s keeps it");
	/* A reload moves it by far more. */
	CHECK(jmd_vm_load_latch(l, 9000000000ULL) == 9000000000ULL,
	      "a reload moves it");
}

TEST(printable)
{
	char out[64];

	jmd_vm_printable(out, sizeof(out),
			 "vm1\nVM forged (pid 1): connected\x1b[2J");
	CHECK(!strchr(out, '\n') && !strchr(out, 0x1b), "escaped: %s", out);
	CHECK(strstr(out, "\\n") != NULL, "a newline shown as \\n: %s", out);
	jmd_vm_printable(out, 8, "0123456789");
	CHECK(strlen(out) == 7, "cut to fit: %s", out);
}

/* ---- the guest's input on a FIFO ---- */

struct fifo {
	char dir[64], path[96];
	int w;
	struct jmd_input in;
};

static void fifo_open(struct fifo *f, unsigned int timeout_ms)
{
	char err[256] = "";

	snprintf(f->dir, sizeof(f->dir), "/tmp/test_vm.XXXXXX");
	if (!mkdtemp(f->dir))
		abort();
	snprintf(f->path, sizeof(f->path), "%s/port", f->dir);
	if (mkfifo(f->path, 0600))
		abort();
	memset(&f->in, 0, sizeof(f->in));
	f->in.be = &jmd_virtio_backend;
	f->in.timeout_ms = timeout_ms;
	if (f->in.be->set(&f->in, "device", f->path, err, sizeof(err)) ||
	    f->in.be->open(&f->in, err, sizeof(err)))
		abort();
	/* The host's end: opened once the reader holds it (O_RDWR, O_NONBLOCK). */
	f->w = -1;
}

static int fifo_read(struct fifo *f, double *j, char *err)
{
	struct jmd_sample s[JMD_MAX_SAMPLES];
	size_t n = 0;
	int r;

	err[0] = 0;
	r = f->in.be->read(&f->in, s, &n, err, 256);
	if (f->w < 0)
		f->w = open(f->path, O_WRONLY | O_NONBLOCK);
	if (!r && (n != 1 || s[0].kind != JMD_ENERGY))
		return -2;
	if (!r)
		*j = s[0].value;
	return r;
}

static void put(struct fifo *f, const char *text)
{
	if (write(f->w, text, strlen(text)) != (ssize_t)strlen(text))
		abort();
}

static void fifo_close(struct fifo *f)
{
	f->in.be->close(&f->in);
	if (f->w >= 0)
		close(f->w);
	unlink(f->path);
	rmdir(f->dir);
}

static uint64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

TEST(virtio_input)
{
	struct fifo f;
	char err[256];
	uint64_t t0;
	double j = 0;

	fifo_open(&f, 300);
	/* Nothing yet: it waits its timeout for a line, then says so. */
	t0 = ms_now();
	CHECK(fifo_read(&f, &j, err) == -1 &&
		      strstr(err, "no line from the host in 300 ms"),
	      "no line: %s", err);
	CHECK(ms_now() - t0 >= 300, "waited %llu ms",
	      (unsigned long long)(ms_now() - t0));
	/* Two lines: the newest counts; a split line is put back together. */
	put(&f, "joules-vm 1 epoch=5 seq=1 time_ns=1 energy_uj=1000000\n");
	put(&f, "joules-vm 1 epoch=5 seq=2 time_ns=2 ener");
	put(&f, "gy_uj=2500000\n");
	CHECK(!fifo_read(&f, &j, err) && j == 2.5, "newest: %.6f J (%s)", j,
	      err);
	/* A line that comes while it waits ends the wait. */
	if (!fork()) {
		usleep(100000);
		put(&f,
		    "joules-vm 1 epoch=5 seq=3 time_ns=3 energy_uj=3000001\n");
		_exit(0);
	}
	t0 = ms_now();
	CHECK(!fifo_read(&f, &j, err) && j == 3.000001 && ms_now() - t0 < 300,
	      "waited for the next line: %.6f J after %llu ms (%s)", j,
	      (unsigned long long)(ms_now() - t0), err);
	wait(NULL);
	/* A bad line fails the reading (a new baseline follows). */
	put(&f, "joules-vm 1 epoch=5 seq=4 energy_uj=4\n");
	put(&f, "joules-vm 1 epoch=5 seq=5 time_ns=5 energy_uj=5000000\n");
	CHECK(fifo_read(&f, &j, err) == -1 && strstr(err, "a bad line"),
	      "bad: %s", err);
	put(&f, "joules-vm 1 epoch=5 seq=6 time_ns=6 energy_uj=6000000\n");
	CHECK(!fifo_read(&f, &j, err) && j == 6, "after it: %.6f J (%s)", j,
	      err);
	/* An overlong line is dropped whole, up to its newline. */
	for (int i = 0; i < 3; i++)
		put(&f,
		    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
	put(&f,
	    " energy_uj=9\njoules-vm 1 epoch=5 seq=7 time_ns=7 energy_uj=7000000\n");
	CHECK(fifo_read(&f, &j, err) == -1 && strstr(err, "longer than"),
	      "overlong: %s", err);
	put(&f, "joules-vm 1 epoch=5 seq=8 time_ns=8 energy_uj=8000000\n");
	CHECK(!fifo_read(&f, &j, err) && j == 8, "then: %.6f J (%s)", j, err);
	/* A new epoch: one failed reading, then its line without waiting. */
	put(&f, "joules-vm 1 epoch=6 seq=1 time_ns=9 energy_uj=100\n");
	CHECK(fifo_read(&f, &j, err) == -1 && strstr(err, "restarted"),
	      "epoch: %s", err);
	t0 = ms_now();
	CHECK(!fifo_read(&f, &j, err) && j == 0.0001 && ms_now() - t0 < 100,
	      "the new epoch's line: %.6f J (%s)", j, err);
	fifo_close(&f);
}

TEST(virtio_conf)
{
	static const char *const bad[][2] = {
		{ "port", "../x" },
		{ "port", "" },
		{ "device", "rel/path" },
		{ "speed", "1" },
	};
	char err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct jmd_input in = { .be = &jmd_virtio_backend };

		err[0] = 0;
		CHECK(in.be->set(&in, bad[i][0], bad[i][1], err, sizeof(err)) &&
			      err[0],
		      "%s = '%s': %s", bad[i][0], bad[i][1], err);
		in.be->close(&in);
	}
	{
		struct jmd_input in = { .be = &jmd_virtio_backend };

		CHECK(!in.be->set(&in, "port", "a", err, sizeof(err)) &&
			      !in.be->set(&in, "device", "/dev/vport1p1", err,
					  sizeof(err)) &&
			      in.be->open(&in, err, sizeof(err)) &&
			      strstr(err, "give one"),
		      "port and device: %s", err);
		in.be->close(&in);
	}
}

TEST_HARNESS_MAIN
