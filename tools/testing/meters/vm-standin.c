// SPDX-License-Identifier: GPL-2.0
/*
 * A stand-in for a QEMU VM, for the tests of joules-meterd --vm-host: run
 * as "qemu-system-x86_64" (the daemon finds VMs by that name) with a QEMU
 * command line the daemon reads and this program ignores. Like QEMU's
 * server=on chardev it listens on a unix socket and takes one client at a
 * time; what the client writes is appended to a file. The socket's path
 * comes from the environment, never from the command line the daemon
 * parses, so a parsing bug is not mirrored here.
 *
 *   STANDIN_SOCK=PATH   listen here (required)
 *   STANDIN_LOG=FILE    append what arrives (default: discard)
 *   STANDIN_BURN=N      N threads that burn CPU while burning is on
 *   STANDIN_UID=UID     drop to this uid and gid, then exec STANDIN_EXEC:
 *                       started under another name, the process is never
 *                       a root one named as QEMU
 *   STANDIN_FD=N        listen on descriptor N too (libvirt passes QEMU the
 *                       listening socket as fd=N)
 *   STANDIN_FLOOD=N     N threads that write to the client without end (a
 *                       guest that floods its port)
 *   STANDIN_EXEC2=PATH  exec this on SIGHUP, the same arguments (a process
 *                       that was probed and then runs something else)
 * SIGUSR1 turns burning on and off; SIGUSR2 stops reading and resumes it
 * (a guest that does not read); SIGTERM ends it.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static volatile sig_atomic_t burning, paused, stop, hup;
static volatile int client = -1;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		burning = !burning;
	else if (sig == SIGUSR2)
		paused = !paused;
	else if (sig == SIGHUP)
		hup = 1;
	else
		stop = 1;
}

static void *burn(void *arg)
{
	volatile unsigned long x = 0;

	(void)arg;
	for (;;) {
		if (burning)
			x++;
		else
			usleep(10000);
	}
	return NULL;
}

static void *flood(void *arg)
{
	static const char junk[4096];

	(void)arg;
	for (;;) {
		int c = client;

		if (c < 0 || write(c, junk, sizeof(junk)) < 0)
			usleep(1000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *sock = getenv("STANDIN_SOCK"), *log = getenv("STANDIN_LOG");
	const char *nburn = getenv("STANDIN_BURN"),
		   *uid = getenv("STANDIN_UID");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct sigaction act = { .sa_handler = on_signal };
	int ls, cl = -1, out = -1;

	(void)argc;
	if (!sock || strlen(sock) >= sizeof(sa.sun_path)) {
		fprintf(stderr,
			"vm-standin: STANDIN_SOCK=PATH, shorter than %zu\n",
			sizeof(sa.sun_path));
		return 2;
	}
	if (uid) {
		const char *exe = getenv("STANDIN_EXEC");

		if (!exe || setgroups(0, NULL) || setgid(atoi(uid)) ||
		    setuid(atoi(uid))) {
			perror("vm-standin: STANDIN_EXEC, setuid");
			return 1;
		}
		unsetenv("STANDIN_UID");
		execv(exe, argv);
		perror(exe);
		return 1;
	}
	sigaction(SIGUSR1, &act, NULL);
	sigaction(SIGUSR2, &act, NULL);
	sigaction(SIGTERM, &act, NULL);
	sigaction(SIGINT, &act, NULL);
	sigaction(SIGHUP, &act, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (log) {
		out = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
			   0644);
		if (out < 0) {
			perror(log);
			return 1;
		}
	}
	for (int i = nburn ? atoi(nburn) : 0; i > 0; i--) {
		pthread_t t;

		burning = 1;
		if (pthread_create(&t, NULL, burn, NULL))
			return 1;
	}
	for (int i = getenv("STANDIN_FLOOD") ? atoi(getenv("STANDIN_FLOOD")) :
					       0;
	     i > 0; i--) {
		pthread_t t;

		if (pthread_create(&t, NULL, flood, NULL))
			return 1;
	}
	ls = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	strcpy(sa.sun_path, sock);
	unlink(sock);
	if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(ls, 1)) {
		perror(sock);
		return 1;
	}
	if (getenv("STANDIN_FD")) {
		int n = atoi(getenv("STANDIN_FD"));

		if (dup2(ls, n) != n) {
			perror("vm-standin: STANDIN_FD");
			return 1;
		}
		close(ls);
		ls = n;
	}
	while (!stop) {
		struct pollfd p = { .fd = cl >= 0 ? cl : ls, .events = POLLIN };
		char buf[4096];
		ssize_t n;

		if (hup && getenv("STANDIN_EXEC2")) {
			execv(getenv("STANDIN_EXEC2"), argv);
			return 1;
		}
		if (paused) {
			usleep(50000);
			continue;
		}
		if (poll(&p, 1, 100) <= 0)
			continue;
		if (cl < 0) {
			cl = accept(ls, NULL, NULL);
			client = cl;
			continue;
		}
		n = read(cl, buf, sizeof(buf));
		if (n <= 0) {
			client = -1;
			close(cl);
			cl = -1;
			continue;
		}
		if (out >= 0 && write(out, buf, (size_t)n) != n)
			return 1;
	}
	unlink(sock);
	return 0;
}
