// SPDX-License-Identifier: GPL-2.0
/*
 * joules-meterd --vm-host: on the host, each VM's energy as the host's
 * joules attributes it, written into the VM's virtio-serial channel (vm.h)
 * once per interval, for the guest's joules-meterd to feed its module.
 *
 * VMs are QEMU processes (comm "qemu*") whose command line has a
 * virtserialport named --channel on a server socket (a path, or the fd
 * libvirt passes). A VM's energy is its libvirt machine scope's cgroup when
 * it runs in one (machine.slice/machine-*.scope: vhost and I/O threads
 * included), else its QEMU process's (--vm-account chooses). Lines are
 * written without blocking: a guest that does not read loses lines (each
 * carries the cumulative total, so the next one makes up for them), never
 * the other VMs' turn.
 *
 * Who may point the daemon where: the socket is connected with the
 * filesystem credentials of the QEMU process's owner (setfsuid), so a
 * process that only looks like QEMU cannot make root write into a socket
 * its owner could not write into.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "jmd.h"
#include "nl.h"
#include "vm.h"

#define VM_MAX 1024 /* VMs followed at once */
#define CMDLINE_MAX (256 * 1024)
#define ARGS_MAX 4096
#define IDLE_SPLIT "/sys/kernel/joules/idle_split"

enum vm_state { VM_NEW, VM_NONE, VM_SERVED };

struct vm {
	pid_t pid;
	unsigned long long start; /* starttime: a pid reused is another VM */
	enum vm_state state;
	bool seen; /* in this scan */
	uid_t uid;
	gid_t gid;
	char name[64]; /* -name guest=NAME, or the pid */
	char sock[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char cgroup[512]; /* "" : the process's energy */
	int fd;
	char pend[JMD_VM_LINE_MAX + 1]; /* a line not yet written whole */
	size_t plen, poff;
	uint64_t seq, epoch_base, epoch_bump, last_uj;
	bool have_uj, slow, failing;
	char why[256]; /* the last error said, said again only when it changes */
};

static struct vm *vms[VM_MAX];
static size_t nvms;
static bool said_full;

static void vm_log(const struct vm *v, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void vm_log(const struct vm *v, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: VM %s (pid %d): ", cli_prog, v->name, (int)v->pid);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}

/* Say why a VM is not served, once per reason. */
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

/* comm and starttime from /proc/PID/stat; 0, or -1 (gone, or not QEMU). */
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
	if (!p)
		return -1;
	/* Field 22 (starttime); p is at the end of field 2. */
	for (i = 2; i < 22 && p; i++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", start) != 1)
		return -1;
	return 0;
}

static int proc_owner(pid_t pid, uid_t *uid, gid_t *gid)
{
	char path[64], buf[4096], *u, *g;
	unsigned long eu, eg;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	u = strstr(buf, "\nUid:");
	g = strstr(buf, "\nGid:");
	/* Real, effective, ...: the effective ids are the second. */
	if (!u || !g || sscanf(u + 5, "%*u %lu", &eu) != 1 ||
	    sscanf(g + 5, "%*u %lu", &eg) != 1)
		return -1;
	*uid = (uid_t)eu;
	*gid = (gid_t)eg;
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

/* "-name guest=NAME,..." or "-name NAME"; else the pid. */
static void vm_name(struct vm *v, int argc, char **argv)
{
	snprintf(v->name, sizeof(v->name), "%d", (int)v->pid);
	for (int i = 0; i + 1 < argc; i++) {
		const char *s = argv[i + 1];
		size_t n;

		if (strcmp(argv[i], "-name") && strcmp(argv[i], "--name"))
			continue;
		if (!strncmp(s, "guest=", 6))
			s += 6;
		n = strcspn(s, ",");
		snprintf(v->name, sizeof(v->name), "%.*s", (int)n, s);
		return;
	}
}

/* The socket a fd=N chardev listens on: its inode, then its path. */
static int fd_socket_path(pid_t pid, int fd, char *out, size_t len)
{
	char path[64], link[64], *table;
	unsigned long ino;
	ssize_t n;
	int rc;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return -1;
	link[n] = 0;
	if (sscanf(link, "socket:[%lu]", &ino) != 1)
		return -1;
	table = malloc(CMDLINE_MAX);
	if (!table)
		return -1;
	/* The process's own network namespace's table. */
	snprintf(path, sizeof(path), "/proc/%d/net/unix", (int)pid);
	rc = read_file(path, table, CMDLINE_MAX) > 0 ?
		     jmd_vm_unix_path(table, ino, out, len) :
		     -1;
	free(table);
	return rc;
}

/* A new QEMU process: does it have the channel, where, and whose energy. */
static void vm_probe(struct vm *v, const char *channel, int account)
{
	char path[64], err[256], *buf, *argv[ARGS_MAX];
	ssize_t len;
	int argc = 0, fd = -1;

	v->state = VM_NONE;
	buf = malloc(CMDLINE_MAX);
	if (!buf)
		return;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)v->pid);
	len = read_file(path, buf, CMDLINE_MAX);
	for (ssize_t i = 0; len > 0 && i < len && argc < ARGS_MAX;
	     i += (ssize_t)strlen(buf + i) + 1)
		argv[argc++] = buf + i;
	vm_name(v, argc, argv);
	if (jmd_vm_find_channel(argc, argv, channel, v->sock, sizeof(v->sock),
				&fd, err, sizeof(err))) {
		vm_log(v, "not served: %s", err);
		free(buf);
		return;
	}
	free(buf);
	if (fd >= 0 && fd_socket_path(v->pid, fd, v->sock, sizeof(v->sock))) {
		vm_log(v,
		       "not served: its channel's fd %d is not a named unix socket",
		       fd);
		return;
	}
	if (account != 'p')
		machine_scope(v->pid, v->cgroup, sizeof(v->cgroup));
	if (account == 'c' && !v->cgroup[0]) {
		vm_log(v, "not served: --vm-account cgroup, and it is in no "
			  "machine.slice/machine-*.scope");
		return;
	}
	v->state = VM_SERVED;
	v->fd = -1;
	vm_log(v, "channel %s at %s; its energy: %s%s", channel, v->sock,
	       v->cgroup[0] ? "cgroup " : "process",
	       v->cgroup[0] ? v->cgroup : "");
}

/*
 * Connect as the VM's owner now (see the top of this file): not as at its
 * start, since QEMU's -runas drops root after it starts, and the pid must
 * still be that VM's when its owner is read (a reused pid is another).
 */
static int vm_connect(struct vm *v)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t sl = sizeof(sa);
	unsigned long long start;
	int fd, rc, e;

	if (proc_owner(v->pid, &v->uid, &v->gid) || proc_qemu(v->pid, &start) ||
	    start != v->start)
		return -ESRCH;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/*
	 * Some seconds of lines at most: each carries the total, so more
	 * would only be stale, and a guest that stops reading is seen soon.
	 */
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &(int){ 16384 }, sizeof(int));
	memcpy(sa.sun_path, v->sock, strlen(v->sock));
	if (v->sock[0] == '@') {
		/* QEMU's abstract=on: the name without the '@'. */
		sa.sun_path[0] = 0;
		sl = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
				 strlen(v->sock));
	}
	setfsgid(v->gid);
	setfsuid(v->uid);
	rc = connect(fd, (struct sockaddr *)&sa, sl);
	e = errno;
	setfsuid(0);
	setfsgid(0);
	if (rc && e != EINPROGRESS) {
		close(fd);
		return -e;
	}
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
 * VM process, the host's module loaded again (its load time, in seconds).
 */
static uint64_t vm_epoch(const struct vm *v, uint64_t load_s)
{
	char boot[64] = "";
	uint64_t h = 0xcbf29ce484222325ULL;

	read_file("/proc/sys/kernel/random/boot_id", boot, sizeof(boot));
	h = fnv(h, boot, strlen(boot));
	h = fnv(h, &v->pid, sizeof(v->pid));
	h = fnv(h, &v->start, sizeof(v->start));
	h = fnv(h, v->cgroup, strlen(v->cgroup));
	h = fnv(h, &load_s, sizeof(load_s));
	return h >> 1; /* a decimal that fits any reader's signed 64 bits */
}

/* Drain what the guest wrote (nothing is expected) and write the line. */
static void vm_write(struct vm *v)
{
	char junk[512];

	while (read(v->fd, junk, sizeof(junk)) > 0)
		;
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
		vm_fail(v, "%s: %s; connecting again", v->sock,
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

struct host_opts {
	const char *channel;
	int account; /* 'a'uto, 'c'group, 'p'rocess */
	bool idle;
	uint64_t interval_ns, count;
	bool verbose;
};

/* One VM's turn: its energy now, a line, written. */
static void vm_serve(struct vm *v, struct jnl *nl, const struct host_opts *o,
		     uint64_t load_s)
{
	struct jmd_vm_line l = { 0 };
	uint64_t uj, idle, epoch;
	uint32_t source;
	struct timespec ts;
	int err;

	if (v->cgroup[0]) {
		struct cgroup_rec *c = malloc(sizeof(*c));

		if (!c)
			return;
		err = jnl_get_cgroup(nl, v->cgroup, 0, c);
		uj = c->energy_uj;
		idle = c->idle_uj;
		source = c->source;
		free(c);
	} else {
		struct task_rec t;

		err = jnl_get_task(nl, v->pid, false, &t);
		uj = t.energy_uj;
		idle = t.idle_uj;
		source = t.source;
	}
	if (err) {
		vm_fail(v, "its energy: %s",
			jnl_strerror(v->cgroup[0] ? JNL_OP_GET_CGROUP :
						    JNL_OP_GET_TASK,
				     err));
		return;
	}
	if (!source) {
		vm_fail(v,
			"no energy charged to it yet (none while the host has no "
			"RAPL, model or meter in force): nothing written");
		return;
	}
	if (o->idle)
		uj += idle;
	epoch = vm_epoch(v, load_s);
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
	if (v->fd < 0) {
		int fd = vm_connect(v);

		if (fd < 0) {
			vm_fail(v, "%s: %s; trying every interval", v->sock,
				strerror(-fd));
			return;
		}
		v->fd = fd;
		if (v->failing || o->verbose)
			vm_log(v, "connected to %s", v->sock);
		v->failing = false;
	}
	/* A line still half-written goes first; this one waits its turn. */
	if (v->plen == v->poff) {
		clock_gettime(CLOCK_REALTIME, &ts);
		l.epoch = v->epoch_base + v->epoch_bump;
		l.seq = ++v->seq;
		l.time_ns = (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
		l.energy_uj = uj;
		v->plen = (size_t)jmd_vm_format(v->pend, sizeof(v->pend), &l);
		v->poff = 0;
		if (o->verbose)
			vm_log(v, "%s", v->pend);
	}
	vm_write(v);
}

static void vm_free(struct vm *v)
{
	if (v->fd >= 0)
		close(v->fd);
	free(v);
}

/* Find QEMU processes: new ones probed, gone ones dropped. */
static void vm_scan(const struct host_opts *o)
{
	struct dirent *d;
	DIR *dir = opendir("/proc");
	size_t i;

	for (i = 0; i < nvms; i++)
		vms[i]->seen = false;
	while (dir && (d = readdir(dir))) {
		unsigned long long start;
		char *end;
		long pid = strtol(d->d_name, &end, 10);
		struct vm *v = NULL;

		if (*end || pid <= 0 || proc_qemu((pid_t)pid, &start))
			continue;
		for (i = 0; i < nvms; i++)
			if (vms[i]->pid == pid && vms[i]->start == start)
				v = vms[i];
		if (v) {
			v->seen = true;
			continue;
		}
		if (nvms == VM_MAX) {
			if (!said_full)
				cli_err("more than %d QEMU processes: the rest are "
					"not served",
					VM_MAX);
			said_full = true;
			continue;
		}
		v = calloc(1, sizeof(*v));
		if (!v)
			continue;
		v->pid = (pid_t)pid;
		v->start = start;
		v->fd = -1;
		v->seen = true;
		vm_probe(v, o->channel, o->account);
		vms[nvms++] = v;
	}
	if (dir)
		closedir(dir);
	for (i = 0; i < nvms;) {
		if (vms[i]->seen) {
			i++;
			continue;
		}
		if (vms[i]->state == VM_SERVED)
			vm_log(vms[i], "gone");
		vm_free(vms[i]);
		vms[i] = vms[--nvms];
		said_full = false;
	}
}

/* idle_split must be on for an idle share to be in the tasks' records. */
static bool idle_split_on(void)
{
	char b[8];

	return read_file(IDLE_SPLIT, b, sizeof(b)) > 0 && b[0] == '1';
}

int jmd_vm_host(const char *channel, const char *account, const char *idle,
		uint64_t interval_ns, uint64_t count, bool verbose)
{
	struct host_opts o = {
		.channel = channel ? channel : JMD_VM_CHANNEL,
		.interval_ns = interval_ns ? interval_ns : 1000000000ULL,
		.count = count,
		.verbose = verbose,
	};
	int last_err = 0;
	bool said_idle = false;
	struct jnl *nl = NULL;
	uint64_t next, done = 0;

	if (!account || !strcmp(account, "auto"))
		o.account = 'a';
	else if (!strcmp(account, "cgroup"))
		o.account = 'c';
	else if (!strcmp(account, "process"))
		o.account = 'p';
	else
		return cli_usage(
			NULL, "--vm-account '%s': want auto, cgroup or process",
			account);
	if (!idle || !strcmp(idle, "exclude"))
		o.idle = false;
	else if (!strcmp(idle, "include"))
		o.idle = true;
	else
		return cli_usage(
			NULL, "--vm-idle '%s': want exclude or include", idle);
	if (strlen(o.channel) >= 64 || !o.channel[0])
		return cli_usage(NULL,
				 "--channel: want a name of 1 to 63 bytes");
	if (geteuid()) {
		cli_err("--vm-host needs root (it reads every QEMU process and the "
			"host's per-cgroup energy)");
		return CLI_FAIL;
	}
	/* Root's supplementary groups must not open a VM owner's connect. */
	if (setgroups(0, NULL)) {
		cli_err("setgroups: %s", strerror(errno));
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
		struct node_rec node;
		uint64_t t, load_s = 0;
		int err = 0;

		if (!nl)
			err = jnl_open(&nl);
		if (!err)
			err = jnl_get_node(nl, &node);
		if (err) {
			if (err != last_err)
				cli_err("the host's joules: %s; trying every interval",
					jnl_strerror(nl ? JNL_OP_GET_NODE :
							  JNL_OP_OPEN,
						     err));
			last_err = err;
			if (nl)
				jnl_close(nl);
			nl = NULL;
		} else {
			if (last_err)
				fprintf(stderr,
					"%s: the host's joules answers again\n",
					cli_prog);
			last_err = 0;
			load_s =
				(cli_now_ns() - node.uptime_ns) / 1000000000ULL;
		}
		if (!err && o.idle && !idle_split_on()) {
			if (!said_idle)
				cli_err("--vm-idle include, but %s is not 1: the VMs' "
					"records carry no idle share, nothing written "
					"until it is",
					IDLE_SPLIT);
			said_idle = true;
			err = -1;
		} else if (!err) {
			said_idle = false;
		}
		vm_scan(&o);
		for (size_t i = 0; !err && i < nvms; i++)
			if (vms[i]->state == VM_SERVED)
				vm_serve(vms[i], nl, &o, load_s);
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
	if (nl)
		jnl_close(nl);
	return CLI_OK;
}
