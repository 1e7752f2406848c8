// SPDX-License-Identifier: GPL-2.0
/*
 * Backend "virtio": inside a VM, the host's account of this VM's energy,
 * read from the virtio-serial port the host's joules-meterd --vm-host
 * writes (vm.h has the line). Keys:
 *   port = NAME     the port's name (default org.joules.meter): udev's
 *                   /dev/virtio-ports/NAME, or without udev the /dev/vportNpM
 *                   whose /sys/class/virtio-ports/vportNpM/name is NAME
 *   device = PATH   the character device (or, for tests, a FIFO) instead
 * The port is opened on the first reading and kept open read-write from
 * then on: the host's lines that arrive while nobody holds it are lost.
 * A reading is the newest line; when none came since the last reading it
 * waits for the next one, up to the input's timeout, so readings follow
 * the host's lines. A line with a new epoch (the host's count restarted)
 * fails one reading, which makes the next a new baseline.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "jmd.h"
#include "vm.h"

#define PORTS_DEV "/dev/virtio-ports"
#define PORTS_SYS "/sys/class/virtio-ports"

struct vio_priv {
	char port[64];
	char device[256];
	int fd;
	char buf[JMD_VM_LINE_MAX + 2]; /* a partial line */
	size_t len;
	bool skip; /* discarding an overlong line up to its newline */
	struct jmd_vm_line last; /* the newest good line */
	bool have_last, returned; /* ... and whether a reading gave it */
	char bad[160]; /* the first bad line since the last reading */
};

static struct vio_priv *vio_priv(struct jmd_input *in, char *err, size_t errlen)
{
	struct vio_priv *p = in->priv;

	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p) {
			snprintf(err, errlen, "out of memory");
			return NULL;
		}
		p->fd = -1;
		in->priv = p;
	}
	return p;
}

static int vio_set(struct jmd_input *in, const char *key, const char *val,
		   char *err, size_t errlen)
{
	struct vio_priv *p = vio_priv(in, err, errlen);
	char *dst;
	size_t cap;

	if (!p)
		return -1;
	if (!strcmp(key, "port")) {
		dst = p->port;
		cap = sizeof(p->port);
		/* A name, never a path: it is looked up under /dev and /sys. */
		if (!val[0] || strchr(val, '/') || !strcmp(val, ".") ||
		    !strcmp(val, "..")) {
			snprintf(err, errlen, "port '%s': want a port name",
				 val);
			return -1;
		}
	} else if (!strcmp(key, "device")) {
		dst = p->device;
		cap = sizeof(p->device);
		if (val[0] != '/') {
			snprintf(err, errlen,
				 "device '%s': want an absolute path", val);
			return -1;
		}
	} else {
		snprintf(err, errlen, "unknown key '%s' (want port or device)",
			 key);
		return -1;
	}
	if (dst[0]) {
		snprintf(err, errlen, "%s: given twice", key);
		return -1;
	}
	if (strlen(val) >= cap) {
		snprintf(err, errlen, "%s: longer than %zu bytes", key,
			 cap - 1);
		return -1;
	}
	snprintf(dst, cap, "%s", val);
	return 0;
}

static int vio_open(struct jmd_input *in, char *err, size_t errlen)
{
	struct vio_priv *p = vio_priv(in, err, errlen);

	if (!p)
		return -1;
	if (p->port[0] && p->device[0]) {
		snprintf(err, errlen, "port and device: give one");
		return -1;
	}
	if (!p->device[0] && !p->port[0])
		snprintf(p->port, sizeof(p->port), "%s", JMD_VM_CHANNEL);
	return 0;
}

static void vio_close(struct jmd_input *in)
{
	struct vio_priv *p = in->priv;

	if (!p)
		return;
	if (p->fd >= 0)
		close(p->fd);
	free(p);
	in->priv = NULL;
}

/* The port's device: udev's link, else the vport whose name matches. */
static int vio_resolve(const struct vio_priv *p, char *dev, size_t len,
		       char *err, size_t errlen)
{
	char path[512], name[128];
	struct dirent *d;
	DIR *dir;

	if (p->device[0]) {
		snprintf(dev, len, "%s", p->device);
		return 0;
	}
	snprintf(path, sizeof(path), PORTS_DEV "/%s", p->port);
	if (!access(path, F_OK)) {
		snprintf(dev, len, "%s", path);
		return 0;
	}
	dir = opendir(PORTS_SYS);
	if (!dir) {
		snprintf(
			err, errlen,
			"no virtio-serial ports (%s: %s): is this a VM with the "
			"channel %s, and virtio_console loaded?",
			PORTS_SYS, strerror(errno), p->port);
		return -1;
	}
	while ((d = readdir(dir))) {
		ssize_t n;
		int fd;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), PORTS_SYS "/%s/name", d->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, name, sizeof(name) - 1);
		close(fd);
		if (n <= 0)
			continue;
		name[n] = 0;
		name[strcspn(name, "\n")] = 0;
		if (strcmp(name, p->port))
			continue;
		snprintf(dev, len, "/dev/%s", d->d_name);
		closedir(dir);
		return 0;
	}
	closedir(dir);
	snprintf(err, errlen, "no virtio-serial port named %s (none in %s)",
		 p->port, PORTS_SYS);
	return -1;
}

/* Take the complete lines in p->buf; keep a partial one. */
static void vio_lines(struct vio_priv *p, const char *data, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char c = data[i];
		struct jmd_vm_line l;
		char why[128];

		if (c != '\n') {
			if (p->skip)
				continue;
			if (p->len >= JMD_VM_LINE_MAX) {
				/* Not the host's: drop it whole. */
				if (!p->bad[0])
					snprintf(p->bad, sizeof(p->bad),
						 "a line longer than %d bytes",
						 JMD_VM_LINE_MAX);
				p->skip = true;
				p->len = 0;
				continue;
			}
			p->buf[p->len++] = c;
			continue;
		}
		if (p->skip) {
			p->skip = false;
			continue;
		}
		p->buf[p->len] = 0;
		p->len = 0;
		if (!p->buf[0])
			continue;
		if (jmd_vm_parse(p->buf, &l, why, sizeof(why))) {
			if (!p->bad[0])
				snprintf(p->bad, sizeof(p->bad), "%s", why);
			continue;
		}
		p->last = l;
		p->have_last = true;
		p->returned = false;
	}
}

/* Read what is there. 0, or -1 with err (the fd is then closed). */
static int vio_drain(struct vio_priv *p, char *err, size_t errlen)
{
	char data[4096];

	for (;;) {
		ssize_t n = read(p->fd, data, sizeof(data));

		if (n > 0) {
			vio_lines(p, data, (size_t)n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		/*
		 * 0: the host's side is not connected (a half line it left is
		 * not the start of the next connection's); else an error.
		 */
		p->len = 0;
		p->skip = false;
		snprintf(
			err, errlen, "%s",
			n ? strerror(errno) :
			    "the host's side is not connected (no joules-meterd "
			    "--vm-host, or it stopped)");
		if (n) {
			close(p->fd);
			p->fd = -1;
		}
		return -1;
	}
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int vio_read(struct jmd_input *in, struct jmd_sample *out, size_t *n,
		    char *err, size_t errlen)
{
	struct vio_priv *p = in->priv;
	uint64_t epoch = p->last.epoch, deadline;
	bool had = p->have_last;

	*n = 0;
	if (p->fd < 0) {
		char dev[512];

		if (vio_resolve(p, dev, sizeof(dev), err, errlen))
			return -1;
		/* Read-write: a port nobody writes to still counts as held. */
		p->fd = open(dev, O_RDWR | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (p->fd < 0) {
			snprintf(err, errlen, "%s: %s", dev, strerror(errno));
			return -1;
		}
		p->len = 0;
		p->skip = false;
	}
	p->bad[0] = 0;
	if (vio_drain(p, err, errlen))
		return -1;
	/* Nothing new: wait for the host's next line, up to the timeout. */
	deadline = mono_ms() + in->timeout_ms;
	while (!(p->have_last && !p->returned)) {
		struct pollfd pfd = { .fd = p->fd, .events = POLLIN };
		uint64_t now = mono_ms();
		int r;

		if (now >= deadline) {
			snprintf(err, errlen,
				 "no line from the host in %u ms%s%s",
				 in->timeout_ms,
				 p->bad[0] ? "; a bad one: " : "", p->bad);
			return -1;
		}
		r = poll(&pfd, 1, (int)(deadline - now));
		if (r < 0 && errno != EINTR) {
			snprintf(err, errlen, "poll: %s", strerror(errno));
			return -1;
		}
		if (r > 0 && !(pfd.revents & POLLIN)) {
			/* Hung up, no data: the host is not there. */
			snprintf(
				err, errlen,
				"the host's side is not connected (no joules-meterd "
				"--vm-host, or it stopped)");
			return -1;
		}
		if (r > 0 && vio_drain(p, err, errlen))
			return -1;
	}
	if (p->bad[0]) {
		snprintf(err, errlen, "a bad line from the host: %s", p->bad);
		return -1;
	}
	/* The new epoch's line is kept for the next reading, the baseline's. */
	if (had && p->last.epoch != epoch) {
		snprintf(
			err, errlen,
			"the host's count restarted (epoch %llu, was %llu): a new "
			"baseline",
			(unsigned long long)p->last.epoch,
			(unsigned long long)epoch);
		return -1;
	}
	p->returned = true;
	out[0].kind = JMD_ENERGY;
	out[0].value = (double)p->last.energy_uj / 1e6;
	out[0].wrap_j = 0;
	snprintf(out[0].label, sizeof(out[0].label), "host");
	*n = 1;
	return 0;
}

const struct jmd_backend jmd_virtio_backend = {
	.type = "virtio",
	.set = vio_set,
	.open = vio_open,
	.read = vio_read,
	.close = vio_close,
};
