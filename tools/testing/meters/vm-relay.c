// SPDX-License-Identifier: GPL-2.0
/*
 * The build host's end of a guest's two virtio-serial ports (run-qemu.sh):
 * what the guest's test writes on its control port (org.joules.test) is
 * written, as it came, into the guest's meter port (org.joules.meter), the
 * way joules-meterd --vm-host would write it. The test inside the guest
 * thus writes the host's trace itself, and knows every number in it; the
 * guest's joules-meterd reads it through QEMU's chardev and the real
 * virtio_console port.
 *
 *   vm-relay CTL_SOCKET METER_SOCKET   (QEMU's server=on sockets)
 * Waits up to 60 s for QEMU to create them; ends when QEMU closes them.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int dial(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if (strlen(path) >= sizeof(sa.sun_path))
		return -1;
	strcpy(sa.sun_path, path);
	for (int i = 0; i < 600; i++) {
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd < 0)
			return -1;
		if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
			return fd;
		close(fd);
		usleep(100000);
	}
	return -1;
}

int main(int argc, char **argv)
{
	int ctl, meter;
	char buf[4096];

	if (argc != 3) {
		fprintf(stderr, "usage: vm-relay CTL_SOCKET METER_SOCKET\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	ctl = dial(argv[1]);
	meter = dial(argv[2]);
	if (ctl < 0 || meter < 0) {
		fprintf(stderr, "vm-relay: no QEMU sockets at %s, %s\n",
			argv[1], argv[2]);
		return 1;
	}
	for (;;) {
		struct pollfd p[2] = { { .fd = ctl, .events = POLLIN },
				       { .fd = meter, .events = POLLIN } };
		ssize_t n;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		/* Anything the guest's daemon writes back is dropped. */
		if (p[1].revents) {
			n = read(meter, buf, sizeof(buf));
			if (n <= 0)
				return 0;
		}
		if (!p[0].revents)
			continue;
		n = read(ctl, buf, sizeof(buf));
		if (n <= 0)
			return 0;
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(meter, buf + off, (size_t)(n - off));

			if (w <= 0)
				return 1;
			off += w;
		}
	}
}
