// SPDX-License-Identifier: GPL-2.0
/*
 * joules-meterd --vm-host: on the host, each VM's energy as the host's
 * joules attributes it, written into the VM's virtio-serial channel (vm.h)
 * once per interval, for the guest's joules-meterd to feed its module.
 *
 * VMs are QEMU processes (comm "qemu*") whose command line has a
 * virtserialport named --channel on a server socket (an absolute path, or
 * the listening fd libvirt passes). A VM's energy is its libvirt machine
 * scope's cgroup when it runs in one (machine.slice/machine-*.scope: vhost
 * and I/O threads included), else its QEMU process's (--vm-account
 * chooses). Lines are written without blocking: a guest that does not read
 * loses lines (each carries the cumulative total, so the next one makes up
 * for them), never the other VMs' turn.
 *
 * The daemon is root and what it reads is any user's. So:
 *  - a process is served only while its real, effective, saved and
 *    file-system ids are one (no setuid program in flight), and the same
 *    executable as when it was probed (an exec is another process);
 *  - the socket is connected by a child that has become that owner
 *    (setresuid: no capability left), and hands the socket back; a path a
 *    fake QEMU names is reached with its owner's rights, never root's;
 *  - abstract and relative names are refused, libvirt's fd is read back
 *    from the process itself (pidfd_getfd, getsockname), not from a table
 *    others can print lines into;
 *  - reading a command line, which can fault in a hostile process's
 *    memory, happens in a child with a time bound, as does the connect;
 *  - what a guest writes back is drained a little per turn, and dropped;
 *  - names and paths are escaped before they reach the log.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <dirent.h>

#include "cli.h"
#include "jmd.h"
#include "nl.h"
#include "vm.h"

#define VM_MAX 1024 /* VMs served at once */
#define VM_PER_USER 256 /* ... of them one non-root user's (default) */
#define SKIP_MAX 65536 /* processes remembered as not served */
#define SKIP_RETRY_S 30 /* ... and probed again after */
#define CMDLINE_MAX (256 * 1024)
#define ARGS_MAX 4096
#define CHILD_MS 2000 /* a probe's or a connect's bound */
#define DRAIN_MAX (8 * 512) /* what a guest wrote, dropped per turn */
#define LOG_PER_MIN 20 /* "not served" lines a minute */
#define IDLE_SPLIT "/sys/kernel/joules/idle_split"
#define UNPRIV "/sys/kernel/joules/unpriv_interval_ms"

struct vm {
	pid_t pid;
	unsigned long long start; /* starttime: a pid reused is another VM */
	dev_t exe_dev; /* the executable it was probed with */
	ino_t exe_ino;
	bool seen; /* in this scan */
	bool reprobe; /* it exec'd: probe it again */
	uid_t uid;
	gid_t gid;
	char name[64]; /* -name guest=NAME, or the pid; printable */
	char sock[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char shown[160]; /* sock, printable */
	char cgroup[512]; /* "": the process's energy */
	int fd;
	char pend[JMD_VM_LINE_MAX + 1]; /* a line not yet written whole */
	size_t plen, poff;
	uint64_t seq, epoch_base, epoch_bump, last_uj;
	bool have_uj, slow, failing;
	char why[256]; /* the last error, said again when it changes */
};

/* A process that is not a served VM, until it is probed again. */
struct skip {
	pid_t pid;
	unsigned long long start;
	uint64_t until_ns; /* UINT64_MAX: until it ends */
	bool seen;
};

static struct vm *vms[VM_MAX];
static unsigned int stuck; /* children killed that have not ended yet */
static size_t nvms;
static struct skip *skips;
static size_t nskips;
static bool said_full;
static uint64_t log_window_ns;
static unsigned int log_count, log_dropped;

static void vm_log(const struct vm *v, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static bool log_budget(void);

static void vm_log(const struct vm *v, const char *fmt, ...)
{
	va_list ap;

	/* A user's own VMs can make their lines change every interval. */
	if (v->uid && !log_budget())
		return;

	fprintf(stderr, "%s: VM %s (pid %d): ", cli_prog, v->name, (int)v->pid);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}

/* Say why a VM is not served (now), once per reason. */
static void vm_fail(struct vm *v, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void vm_fail(struct vm *v, const char *fmt, ...)
{
	char why[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (!v->failing || strcmp(why, v->why))
		vm_log(v, "%s", why);
	v->failing = true;
	snprintf(v->why, sizeof(v->why), "%s", why);
}

/*
 * "Not served" lines: anyone can start processes named qemu, so at most
 * LOG_PER_MIN a minute, then a count of the rest.
 */
static bool log_budget(void)
{
	uint64_t now = cli_now_ns();

	if (now - log_window_ns >= 60000000000ULL) {
		if (log_dropped)
			fprintf(stderr,
				"%s: %u more processes not served, not logged\n",
				cli_prog, log_dropped);
		log_window_ns = now;
		log_count = log_dropped = 0;
	}
	if (log_count < LOG_PER_MIN) {
		log_count++;
		return true;
	}
	log_dropped++;
	return false;
}

static ssize_t read_file(const char *path, char *buf, size_t cap)
{
	size_t len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while (len + 1 < cap) {
		ssize_t n = read(fd, buf + len, cap - 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = 0;
	return (ssize_t)len;
}

/* starttime from /proc/PID/stat of a process named qemu*; 0, or -1. */
static int proc_qemu(pid_t pid, unsigned long long *start)
{
	char path[64], buf[1024], *p;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	p = strchr(buf, '(');
	if (!p || strncmp(p + 1, "qemu", 4))
		return -1;
	/* comm may hold ')' and blanks: the fields follow the last ')'. */
	p = strrchr(buf, ')');
	/* Field 22 (starttime); p is at the end of field 2. */
	for (i = 2; i < 22 && p; i++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", start) != 1)
		return -1;
	return 0;
}

static int proc_owner(pid_t pid, uid_t *uid, gid_t *gid)
{
	char path[64], buf[4096];

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	return jmd_vm_owner(buf, uid, gid);
}

/*
 * The executable's identity. Only ever called in a child (in_child): the
 * file may be on a file system its owner serves and never answers.
 */
static int proc_exe(pid_t pid, dev_t *dev, ino_t *ino, mode_t *mode)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if (stat(path, &st))
		return -1;
	*dev = st.st_dev;
	*ino = st.st_ino;
	*mode = st.st_mode;
	return 0;
}

/* libvirt's machine scope among the process's cgroup path's ancestors. */
static void machine_scope(pid_t pid, char *out, size_t len)
{
	char path[64], buf[4096], *p, *s, *e;

	out[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return;
	/* cgroup v2: the "0::PATH" line. */
	p = strstr(buf, "0::/");
	if (!p || (p != buf && p[-1] != '\n'))
		return;
	p += 3;
	p[strcspn(p, "\n")] = 0;
	s = strstr(p, "/machine.slice/machine-");
	if (!s)
		return;
	e = strchr(s + strlen("/machine.slice/"), '/');
	if (e)
		*e = 0;
	if (strlen(p) < 7 || strcmp(p + strlen(p) - 6, ".scope") ||
	    strlen(p) >= len)
		return;
	snprintf(out, len, "%s", p);
}

/* ---- work done in a child, bounded in time ---- */

struct probe_out {
	int rc; /* 0: the channel is at path */
	int fd;
	dev_t exe_dev;
	ino_t exe_ino;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char name[64];
	char err[256];
};

/* Reap children left behind stuck (in_child's WNOHANG). */
static void reap(void)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		if (stuck)
			stuck--;
}

/*
 * Run fn(arg, sock) in a child; take back up to len bytes it writes on
 * sock, and the one descriptor it may send. 0, or -1 when it did not
 * answer within CHILD_MS (it is killed) or failed.
 */
static int in_child(void (*fn)(void *, int), void *arg, void *out, size_t len,
		    int *fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = out, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct pollfd pfd;
	struct cmsghdr *c;
	int sv[2], rc = -1;
	ssize_t n;
	pid_t pid;

	if (fd)
		*fd = -1;
	/* Children stuck in a fault pile up: no more until some end. */
	if (stuck >= 4)
		reap();
	if (stuck >= 4)
		return -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (!pid) {
		close(sv[0]);
		fn(arg, sv[1]);
		_exit(0);
	}
	close(sv[1]);
	pfd = (struct pollfd){ .fd = sv[0], .events = POLLIN };
	if (poll(&pfd, 1, CHILD_MS) == 1) {
		n = recvmsg(sv[0], &mh, MSG_CMSG_CLOEXEC);
		if (n == (ssize_t)len) {
			rc = 0;
			c = CMSG_FIRSTHDR(&mh);
			if (fd && c && c->cmsg_level == SOL_SOCKET &&
			    c->cmsg_type == SCM_RIGHTS)
				memcpy(fd, CMSG_DATA(c), sizeof(int));
		}
	}
	close(sv[0]);
	/* One stuck in a fault (a hostile process's memory) is left to die. */
	kill(pid, SIGKILL);
	if (waitpid(pid, NULL, rc ? WNOHANG : 0) == 0)
		stuck++;
	return rc;
}

/*
 * libvirt's fd=N: the listening socket, taken from the process itself, and
 * the path it is bound to. 0, or -1 with err.
 */
static int fd_socket_path(pid_t pid, unsigned long long start, int fd,
			  char *out, size_t len, char *err, size_t errlen)
{
	struct sockaddr_un sa;
	socklen_t sl = sizeof(sa), ol;
	unsigned long long now;
	int pfd, s, dom = 0, acc = 0;

	pfd = pidfd_open(pid, 0);
	if (pfd < 0 || proc_qemu(pid, &now) || now != start) {
		snprintf(err, errlen, "gone");
		if (pfd >= 0)
			close(pfd);
		return -1;
	}
	s = pidfd_getfd(pfd, fd, 0);
	close(pfd);
	if (s < 0) {
		snprintf(err, errlen, "its fd %d: %s", fd, strerror(errno));
		return -1;
	}
	ol = sizeof(int);
	if (getsockopt(s, SOL_SOCKET, SO_DOMAIN, &dom, &ol) || dom != AF_UNIX ||
	    getsockopt(s, SOL_SOCKET, SO_ACCEPTCONN, &acc, &ol) || !acc ||
	    getsockname(s, (struct sockaddr *)&sa, &sl) ||
	    sl <= offsetof(struct sockaddr_un, sun_path) ||
	    sa.sun_path[0] != '/') {
		snprintf(err, errlen,
			 "its fd %d is not a listening unix socket with a path",
			 fd);
		close(s);
		return -1;
	}
	close(s);
	sl = strnlen(sa.sun_path, sl - offsetof(struct sockaddr_un, sun_path));
	if (sl >= len) {
		snprintf(err, errlen, "its fd %d: a path too long", fd);
		return -1;
	}
	memcpy(out, sa.sun_path, sl);
	out[sl] = 0;
	return 0;
}

struct probe_in {
	pid_t pid;
	unsigned long long start;
	const char *channel;
};

/* The child's half of a probe: the command line, parsed. */
static void probe_child(void *arg, int sock)
{
	const struct probe_in *in = arg;
	static char buf[CMDLINE_MAX];
	static char *argv[ARGS_MAX];
	struct probe_out o = { .rc = -1, .fd = -1 };
	char path[64];
	ssize_t len;
	int argc = 0;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)in->pid);
	len = read_file(path, buf, sizeof(buf));
	for (ssize_t i = 0; len > 0 && i < len && argc < ARGS_MAX;
	     i += (ssize_t)strlen(buf + i) + 1)
		argv[argc++] = buf + i;
	snprintf(o.name, sizeof(o.name), "%d", (int)in->pid);
	for (int i = 0; i + 1 < argc; i++) {
		const char *s = argv[i + 1];
		char raw[sizeof(o.name)];
		size_t n;

		if (strcmp(argv[i], "-name") && strcmp(argv[i], "--name"))
			continue;
		if (!strncmp(s, "guest=", 6))
			s += 6;
		n = strcspn(s, ",");
		if (n >= sizeof(raw))
			n = sizeof(raw) - 1;
		memcpy(raw, s, n);
		raw[n] = 0;
		jmd_vm_printable(o.name, sizeof(o.name), raw);
		break;
	}
	o.rc = jmd_vm_find_channel(argc, argv, in->channel, o.path,
				   sizeof(o.path), &o.fd, o.err, sizeof(o.err));
	if (!o.rc && o.fd >= 0)
		o.rc = fd_socket_path(in->pid, in->start, o.fd, o.path,
				      sizeof(o.path), o.err, sizeof(o.err));
	if (!o.rc) {
		mode_t mode;

		if (proc_exe(in->pid, &o.exe_dev, &o.exe_ino, &mode)) {
			o.rc = -1;
			snprintf(o.err, sizeof(o.err), "gone");
		} else if (mode & (S_ISUID | S_ISGID)) {
			/* Its argv is its caller's; its ids may all be root's. */
			o.rc = -1;
			snprintf(o.err, sizeof(o.err),
				 "it runs a setuid or setgid program");
		}
	}
	if (send(sock, &o, sizeof(o), 0) != sizeof(o))
		_exit(1);
}

struct host_opts {
	const char *channel;
	int account; /* 'a'uto, 'c'group, 'p'rocess */
	bool idle;
	bool live; /* --vm-energy live: measured energy as it is charged */
	uint64_t interval_ns, count;
	size_t per_user;
	bool verbose;
};

/* A process the probe turned down: remembered for SKIP_RETRY_S. */
static void skip_add(pid_t pid, unsigned long long start, bool for_good)
{
	uint64_t until = for_good ? UINT64_MAX :
				    cli_now_ns() + SKIP_RETRY_S * 1000000000ULL;

	if (nskips == SKIP_MAX)
		return; /* probed again at each scan: bounded by the pid space */
	skips[nskips++] = (struct skip){ pid, start, until, true };
}

static bool skipped(pid_t pid, unsigned long long start)
{
	for (size_t i = 0; i < nskips; i++)
		if (skips[i].pid == pid && skips[i].start == start) {
			skips[i].seen = true;
			return true;
		}
	return false;
}

/* Not served, and why (rate-limited: anyone can make such processes). */
static void not_served(pid_t pid, const char *name, const char *why)
{
	char w[256];

	if (!log_budget())
		return;
	jmd_vm_printable(w, sizeof(w), why);
	fprintf(stderr, "%s: VM %s (pid %d): not served: %s\n", cli_prog, name,
		(int)pid, w);
	fflush(stderr);
}

static size_t served_by(uid_t uid)
{
	size_t n = 0;

	for (size_t i = 0; i < nvms; i++)
		n += vms[i]->uid == uid;
	return n;
}

/* A new QEMU process: does it have the channel, where, and whose energy. */
static struct vm *vm_probe(pid_t pid, unsigned long long start,
			   const struct host_opts *o, bool *for_good)
{
	struct probe_in in = { .pid = pid,
			       .start = start,
			       .channel = o->channel };
	struct probe_out po;
	char name[16];
	struct vm *v;
	uid_t uid;
	gid_t gid;

	snprintf(name, sizeof(name), "%d", (int)pid);
	if (proc_owner(pid, &uid, &gid)) {
		not_served(pid, name,
			   "its user or group ids differ (a setuid "
			   "or setgid program?)");
		return NULL;
	}
	if (uid && served_by(uid) >= o->per_user) {
		not_served(pid, name,
			   "its user has as many VMs served as one "
			   "user may");
		return NULL;
	}
	if (in_child(probe_child, &in, &po, sizeof(po), NULL)) {
		/* Not again while it lives: each try would cost the bound. */
		*for_good = true;
		not_served(pid, name,
			   "its command line could not be read in time");
		return NULL;
	}
	po.name[sizeof(po.name) - 1] = 0;
	po.err[sizeof(po.err) - 1] = 0;
	po.path[sizeof(po.path) - 1] = 0;
	if (po.rc) {
		not_served(pid, po.name, po.err);
		return NULL;
	}
	v = calloc(1, sizeof(*v));
	if (!v)
		return NULL;
	v->pid = pid;
	v->start = start;
	v->exe_dev = po.exe_dev;
	v->exe_ino = po.exe_ino;
	v->uid = uid;
	v->gid = gid;
	v->fd = -1;
	snprintf(v->name, sizeof(v->name), "%s", po.name);
	snprintf(v->sock, sizeof(v->sock), "%s", po.path);
	jmd_vm_printable(v->shown, sizeof(v->shown), v->sock);
	if (o->account != 'p')
		machine_scope(pid, v->cgroup, sizeof(v->cgroup));
	if (o->account == 'c' && !v->cgroup[0]) {
		not_served(pid, v->name,
			   "--vm-account cgroup, and it is in no "
			   "machine.slice/machine-*.scope");
		free(v);
		return NULL;
	}
	{
		char cg[600];

		jmd_vm_printable(cg, sizeof(cg), v->cgroup);
		vm_log(v, "channel %s at %s; its energy: %s%s", o->channel,
		       v->shown, v->cgroup[0] ? "cgroup " : "process", cg);
	}
	return v;
}

struct conn_in {
	const char *sock;
	pid_t pid;
	dev_t exe_dev;
	ino_t exe_ino;
	uid_t uid;
	gid_t gid;
};

/* The child's half of a connect: become the owner, connect, hand it back. */
static void conn_child(void *arg, int sock)
{
	const struct conn_in *in = arg;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	int rc = 0, fd = -1;
	struct iovec iov = { .iov_base = &rc, .iov_len = sizeof(rc) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	uid_t r, e, s;
	dev_t dev;
	ino_t ino;
	mode_t mode;

	/* Still the program it was probed with (an exec is another process). */
	if (proc_exe(in->pid, &dev, &ino, &mode) || dev != in->exe_dev ||
	    ino != in->exe_ino)
		rc = ESTALE;
	else if (setgroups(0, NULL) || setresgid(in->gid, in->gid, in->gid) ||
		 setresuid(in->uid, in->uid, in->uid) ||
		 getresuid(&r, &e, &s) || r != in->uid || e != in->uid ||
		 s != in->uid)
		rc = EPERM;
	else {
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
			    0);
		memcpy(sa.sun_path, in->sock, strlen(in->sock));
		if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
			rc = errno == EINPROGRESS ? 0 : errno;
	}
	if (!rc && fd >= 0) {
		struct cmsghdr *c;

		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	if (sendmsg(sock, &mh, 0) < 0)
		_exit(1);
}

/*
 * Connect as the VM's owner now (see the top of this file): not as at its
 * start, since QEMU's -runas drops root after it starts; the pid must
 * still be that VM's, running what it ran when probed.
 */
static int vm_connect(struct vm *v)
{
	struct conn_in in = { .sock = v->sock,
			      .pid = v->pid,
			      .exe_dev = v->exe_dev,
			      .exe_ino = v->exe_ino };
	unsigned long long start;
	int rc, fd;

	if (proc_qemu(v->pid, &start) || start != v->start)
		return -ESRCH;
	if (proc_owner(v->pid, &in.uid, &in.gid)) {
		v->reprobe = true;
		return -ESRCH;
	}
	v->uid = in.uid;
	v->gid = in.gid;
	if (in_child(conn_child, &in, &rc, sizeof(rc), &fd))
		return -ETIMEDOUT;
	if (rc == ESTALE) {
		v->reprobe = true;
		return -ESRCH;
	}
	if (rc || fd < 0) {
		if (fd >= 0)
			close(fd);
		return rc ? -rc : -EIO;
	}
	/*
	 * Some seconds of lines at most: each carries the total, so more
	 * would only be stale, and a guest that stops reading is seen soon.
	 */
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &(int){ 16384 }, sizeof(int));
	return fd;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ c[i]) * 0x100000001b3ULL;
	return h;
}

/*
 * The epoch: the same for as long as this VM's count runs on (a restarted
 * daemon keeps it), new when the count restarts: another boot, another
 * VM process, the host's module loaded again (its latched load time).
 */
static uint64_t vm_epoch(const struct vm *v, uint64_t load_ns)
{
	char boot[64] = "";
	uint64_t h = 0xcbf29ce484222325ULL;

	read_file("/proc/sys/kernel/random/boot_id", boot, sizeof(boot));
	h = fnv(h, boot, strlen(boot));
	h = fnv(h, &v->pid, sizeof(v->pid));
	h = fnv(h, &v->start, sizeof(v->start));
	h = fnv(h, v->cgroup, strlen(v->cgroup));
	h = fnv(h, &load_ns, sizeof(load_ns));
	return h >> 2; /* room for bumps; a decimal any reader's int64 holds */
}

/* Drop a little of what the guest wrote (nothing is expected); write the line. */
static void vm_write(struct vm *v)
{
	char junk[512];

	for (int i = 0; i < DRAIN_MAX / (int)sizeof(junk); i++)
		if (read(v->fd, junk, sizeof(junk)) <= 0)
			break;
	while (v->poff < v->plen) {
		ssize_t n = send(v->fd, v->pend + v->poff, v->plen - v->poff,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n > 0) {
			v->poff += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			if (!v->slow)
				vm_log(v,
				       "the guest is not reading: lines dropped "
				       "until it does (each has the total)");
			v->slow = true;
			return;
		}
		vm_fail(v, "%s: %s; connecting again", v->shown,
			n ? strerror(errno) : "closed");
		close(v->fd);
		v->fd = -1;
		v->plen = v->poff = 0;
		return;
	}
	if (v->slow)
		vm_log(v, "the guest reads again");
	v->slow = false;
	v->plen = v->poff = 0;
}

/*
 * The VM's energy now, its cgroup's or its process's (with its idle share
 * for --vm-idle include): 0, or -1 when there is none to write (said).
 */
static int vm_energy(struct vm *v, struct jnl *nl, const struct host_opts *o,
		     uint64_t *uj)
{
	uint64_t idle;
	uint32_t source;
	int err;

	if (v->cgroup[0]) {
		struct cgroup_rec *c = malloc(sizeof(*c));

		if (!c)
			return -1;
		err = jnl_get_cgroup(nl, v->cgroup, 0, c);
		*uj = c->energy_uj;
		idle = c->idle_uj;
		source = c->source;
		free(c);
	} else {
		struct task_rec t;

		err = jnl_get_task(nl, v->pid, false, &t);
		*uj = t.energy_uj;
		idle = t.idle_uj;
		source = t.source;
	}
	if (err) {
		vm_fail(v, "its energy: %s",
			jnl_strerror(v->cgroup[0] ? JNL_OP_GET_CGROUP :
						    JNL_OP_GET_TASK,
				     err));
		return -1;
	}
	if (!source) {
		vm_fail(v,
			"no energy charged to it yet (none while the host has no "
			"RAPL, model or meter in force): nothing written");
		return -1;
	}
	if (o->idle)
		*uj += idle;
	return 0;
}

/* The VM's socket, connected if it is not: 0, or -1 (said, unless gone). */
static int vm_reconnect(struct vm *v, const struct host_opts *o)
{
	int fd;

	if (v->fd >= 0)
		return 0;
	fd = vm_connect(v);
	if (fd < 0) {
		if (fd != -ESRCH)
			vm_fail(v, "%s: %s; trying every interval", v->shown,
				strerror(-fd));
		return -1;
	}
	v->fd = fd;
	if (v->failing || o->verbose)
		vm_log(v, "connected to %s", v->shown);
	v->failing = false;
	return 0;
}

/* One VM's turn: its energy now, a line, written. */
static void vm_serve(struct vm *v, struct jnl *nl, const struct host_opts *o,
		     uint64_t load_ns)
{
	struct jmd_vm_line l = { 0 };
	uint64_t uj, epoch;
	struct timespec ts;

	if (vm_energy(v, nl, o, &uj))
		return;
	epoch = vm_epoch(v, load_ns);
	if (!v->have_uj || epoch != v->epoch_base) {
		v->epoch_base = epoch;
		v->epoch_bump = 0;
	} else if (uj < v->last_uj) {
		/* The count went back with nothing else changed: restart it. */
		vm_log(v, "its energy went back (%llu to %llu uJ): a new epoch",
		       (unsigned long long)v->last_uj, (unsigned long long)uj);
		v->epoch_bump++;
	}
	v->last_uj = uj;
	v->have_uj = true;
	if (vm_reconnect(v, o))
		return;
	/* A line still half-written goes first; this one waits its turn. */
	if (v->plen == v->poff) {
		int n;

		clock_gettime(CLOCK_REALTIME, &ts);
		l.epoch = (v->epoch_base + v->epoch_bump) & (UINT64_MAX >> 1);
		l.seq = ++v->seq;
		l.time_ns = (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
		l.energy_uj = uj;
		n = jmd_vm_format(v->pend, sizeof(v->pend), &l);
		if (n < 0)
			return;
		v->plen = (size_t)n;
		v->poff = 0;
		if (o->verbose)
			vm_log(v, "%.*s", (int)v->plen - 1, v->pend);
	}
	vm_write(v);
}

static void vm_free(struct vm *v)
{
	if (v->fd >= 0)
		close(v->fd);
	free(v);
}

/* A scan begins: nothing seen yet. */
static void scan_begin(uint64_t now)
{
	size_t i;

	for (i = 0; i < nvms; i++)
		vms[i]->seen = false;
	/* Turned down long enough ago: probed again (a cgroup may appear). */
	for (i = 0; i < nskips;)
		if (skips[i].until_ns <= now)
			skips[i] = skips[--nskips];
		else
			skips[i++].seen = false;
}

/* A scan ends: what it did not see is forgotten, or dropped (logged). */
static void scan_end(bool unscanned)
{
	size_t i;

	/* Those that ended are forgotten (when a whole scan saw them or not). */
	for (i = 0; !unscanned && !cli_stop && i < nskips;)
		if (!skips[i].seen)
			skips[i] = skips[--nskips];
		else
			i++;
	for (i = 0; i < nvms;) {
		if (vms[i]->seen || (cli_stop && !vms[i]->reprobe)) {
			i++;
			continue;
		}
		vm_log(vms[i], vms[i]->reprobe ?
				       "it ran another program: probed again" :
				       "gone");
		vm_free(vms[i]);
		vms[i] = vms[--nvms];
		said_full = false;
	}
	reap();
}

/* Find QEMU processes: new ones probed, gone ones dropped. */
static void vm_scan(const struct host_opts *o)
{
	uint64_t now = cli_now_ns();
	uint64_t probe_ns = 0, t0;
	bool for_good = false, unscanned = false;
	struct dirent *d;
	DIR *dir = opendir("/proc");
	size_t i;

	scan_begin(now);
	while (dir && !cli_stop && (d = readdir(dir))) {
		unsigned long long start;
		char *end;
		long pid = strtol(d->d_name, &end, 10);
		struct vm *v = NULL;

		if (*end || pid <= 0 || proc_qemu((pid_t)pid, &start))
			continue;
		for (i = 0; i < nvms; i++)
			if (vms[i]->pid == pid && vms[i]->start == start)
				v = vms[i];
		if (v && !v->reprobe) {
			v->seen = true;
			continue;
		}
		if (v)
			continue; /* dropped below, probed at the next scan */
		if (skipped((pid_t)pid, start))
			continue;
		if (nvms == VM_MAX) {
			if (!said_full)
				cli_err("%d VMs served: the rest are not",
					VM_MAX);
			said_full = true;
			continue;
		}
		/*
		 * Probes take up to CHILD_MS each: past half an interval spent
		 * in them, the rest wait for the next scan, so that the served
		 * get their turn.
		 */
		if (probe_ns > o->interval_ns / 2) {
			unscanned = true;
			continue;
		}
		t0 = cli_now_ns();
		v = vm_probe((pid_t)pid, start, o, &for_good);
		probe_ns += cli_now_ns() - t0;
		if (!v) {
			skip_add((pid_t)pid, start, for_good);
			for_good = false;
			continue;
		}
		v->seen = true;
		vms[nvms++] = v;
	}
	if (dir)
		closedir(dir);
	scan_end(unscanned);
}

/* idle_split must be on for an idle share to be in the tasks' records. */
/*
 * The module's lagged view is on: unpriv_interval_ms not 0. A module
 * without the setting has no such view (and would refuse the request).
 */
static bool lagged_on(void)
{
	char b[16];

	return read_file(UNPRIV, b, sizeof(b)) > 0 && strtoul(b, NULL, 10) > 0;
}

static bool idle_split_on(void)
{
	char b[8];

	return read_file(IDLE_SPLIT, b, sizeof(b)) > 0 && b[0] == '1';
}

/*
 * --vm-account, --vm-idle, --vm-energy and --channel: 0, or the usage
 * error's status.
 */
static int host_opts_check(struct host_opts *o, const char *account,
			   const char *idle, const char *energy)
{
	if (!account || !strcmp(account, "auto"))
		o->account = 'a';
	else if (!strcmp(account, "cgroup"))
		o->account = 'c';
	else if (!strcmp(account, "process"))
		o->account = 'p';
	else
		return cli_usage(
			NULL, "--vm-account '%s': want auto, cgroup or process",
			account);
	if (!idle || !strcmp(idle, "exclude"))
		o->idle = false;
	else if (!strcmp(idle, "include"))
		o->idle = true;
	else
		return cli_usage(
			NULL, "--vm-idle '%s': want exclude or include", idle);
	/*
	 * A VM's owner reads what its channel carries, without CAP_PERFMON:
	 * the lagged view, as the module shows such readers.
	 */
	if (!energy || !strcmp(energy, "lagged"))
		o->live = false;
	else if (!strcmp(energy, "live"))
		o->live = true;
	else
		return cli_usage(NULL, "--vm-energy '%s': want lagged or live",
				 energy);
	if (strlen(o->channel) >= 64 || !o->channel[0])
		return cli_usage(NULL,
				 "--channel: want a name of 1 to 63 bytes");
	return CLI_OK;
}

/* The host's joules, from one interval to the next (jmd_vm_host). */
struct host_state {
	struct jnl *nl; /* NULL: opened again at the next interval */
	int last_err; /* said once, until it changes */
	uint64_t load_ns; /* the module's load time, latched */
	bool said_idle;
};

/*
 * Whether the VMs get a line this interval: the host's joules answers
 * and, for --vm-idle include, has idle_split on. 0, or nonzero (said once).
 */
static int host_check(struct host_state *h, const struct host_opts *o)
{
	struct node_rec node;
	int err = 0;

	if (!h->nl)
		err = jnl_open(&h->nl);
	/* What the VMs' owners may see: as the module shows them. */
	if (!err)
		jnl_set_lagged(h->nl, !o->live && lagged_on());
	if (!err)
		err = jnl_get_node(h->nl, &node);
	if (err) {
		if (err != h->last_err)
			cli_err("the host's joules: %s; trying every interval",
				jnl_strerror(h->nl ? JNL_OP_GET_NODE :
						     JNL_OP_OPEN,
					     err));
		h->last_err = err;
		if (h->nl)
			jnl_close(h->nl);
		h->nl = NULL;
	} else {
		if (h->last_err)
			fprintf(stderr, "%s: the host's joules answers again\n",
				cli_prog);
		h->last_err = 0;
		h->load_ns = jmd_vm_load_latch(h->load_ns,
					       cli_now_ns() - node.uptime_ns);
	}
	if (!err && o->idle && !idle_split_on()) {
		if (!h->said_idle)
			cli_err("--vm-idle include, but %s is not 1: the VMs' "
				"records carry no idle share, nothing written "
				"until it is",
				IDLE_SPLIT);
		h->said_idle = true;
		err = -1;
	} else if (!err) {
		h->said_idle = false;
	}
	return err;
}

int jmd_vm_host(const char *channel, const char *account, const char *idle,
		const char *energy, uint64_t interval_ns, uint64_t count,
		uint64_t per_user, bool verbose)
{
	struct host_opts o = {
		.channel = channel ? channel : JMD_VM_CHANNEL,
		.interval_ns = interval_ns ? interval_ns : 1000000000ULL,
		.count = count,
		.per_user = per_user ? per_user : VM_PER_USER,
		.verbose = verbose,
	};
	struct host_state h = { 0 };
	uint64_t next, done = 0;
	int rc;

	rc = host_opts_check(&o, account, idle, energy);
	if (rc != CLI_OK)
		return rc;
	if (geteuid()) {
		cli_err("--vm-host needs root (it reads every QEMU process and the "
			"host's per-cgroup energy)");
		return CLI_FAIL;
	}
	skips = calloc(SKIP_MAX, sizeof(*skips));
	if (!skips) {
		cli_err("out of memory");
		return CLI_FAIL;
	}
	fprintf(stderr,
		"%s: serving VMs' energy on channel %s every %.3g s (%s, idle "
		"share %s)\n",
		cli_prog, o.channel, (double)o.interval_ns / 1e9,
		o.account == 'a' ? "machine scope, else process" :
		o.account == 'c' ? "machine scope" :
				   "process",
		o.idle ? "included" : "excluded");
	next = cli_now_ns();
	while (!cli_stop && (!o.count || done < o.count)) {
		int err = host_check(&h, &o);
		uint64_t t;

		vm_scan(&o);
		for (size_t i = 0; !err && i < nvms && !cli_stop; i++)
			vm_serve(vms[i], h.nl, &o, h.load_ns);
		done++;
		if (o.count && done >= o.count)
			break;
		next += o.interval_ns;
		t = cli_now_ns();
		if (next <= t)
			next = t + o.interval_ns - (t - next) % o.interval_ns;
		cli_sleep_ns(next - t);
	}
	while (nvms)
		vm_free(vms[--nvms]);
	free(skips);
	if (h.nl)
		jnl_close(h.nl);
	return CLI_OK;
}
