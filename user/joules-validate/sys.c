// SPDX-License-Identifier: GPL-2.0
/* joules-validate's dealings with the machine: cgroups, children, loopback. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <linux/magic.h>
#include <linux/sched.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "validate.h"

const char *const vw_names[VW_N] = { "cpu", "matrix", "memory", "io",
				     "network" };

bool vsys_is_cgroup2(const char *dir)
{
	struct statfs sf;

	return !statfs(dir, &sf) && sf.f_type == CGROUP2_SUPER_MAGIC;
}

static bool executable(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode) && !access(path, X_OK);
}

char *vsys_find_exec(const char *name)
{
	const char *path = getenv("PATH");
	char *dup, *dir, *save = NULL, *found = NULL;

	if (strchr(name, '/'))
		return executable(name) ? strdup(name) : NULL;
	dup = strdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	for (dir = strtok_r(dup, ":", &save); dir && !found;
	     dir = strtok_r(NULL, ":", &save)) {
		char *p;

		/* Root runs what it finds: never from a relative entry (".", cwd). */
		if (dir[0] != '/')
			continue;
		if (asprintf(&p, "%s/%s", dir, name) < 0)
			break;
		if (executable(p))
			found = p;
		else
			free(p);
	}
	free(dup);
	return found;
}

bool vsys_loopback_ok(void)
{
	struct ifaddrs *ifa, *i;
	bool ok = false;

	if (getifaddrs(&ifa))
		return false;
	/* stress-ng takes lo's first IPv4 address, as here. */
	for (i = ifa; i; i = i->ifa_next) {
		const struct sockaddr_in *a = (const void *)i->ifa_addr;

		if (strcmp(i->ifa_name, "lo") || !a || a->sin_family != AF_INET)
			continue;
		ok = (i->ifa_flags & IFF_UP) &&
		     (ntohl(a->sin_addr.s_addr) >> 24) == 127;
		break;
	}
	freeifaddrs(ifa);
	return ok;
}

/* The first line of a small file, without its newline; 0 or -1. */
static int read_line(const char *path, char *buf, size_t len)
{
	FILE *fp = fopen(path, "r");
	bool ok;

	if (!fp)
		return -1;
	ok = fgets(buf, (int)len, fp) != NULL;
	fclose(fp);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

const char *vsys_hypervisor(void)
{
	static char vendor[128];
	char line[4096];
	bool flag = false;
	FILE *fp;

	if (!read_line("/sys/class/dmi/id/sys_vendor", vendor,
		       sizeof(vendor)) &&
	    strstr(vendor, "QEMU"))
		return vendor;
	fp = fopen("/proc/cpuinfo", "r");
	while (fp && !flag && fgets(line, sizeof(line), fp))
		flag = !strncmp(line, "flags", 5) &&
		       (strstr(line, " hypervisor ") ||
			strstr(line, " hypervisor\n"));
	if (fp)
		fclose(fp);
	if (!flag)
		return NULL;
	/* The DMI vendor names it where there is one (KVM, VMware, ...). */
	return vendor[0] ? vendor : "the cpuinfo flag 'hypervisor'";
}

/* The cgroup id is its directory's file handle (as systemd reads it). */
static int cg_id(const char *dir, uint64_t *id)
{
	struct {
		struct file_handle fh;
		uint64_t id;
	} h = { .fh.handle_bytes = sizeof(uint64_t) };
	struct stat st;
	int mnt;

	if (!name_to_handle_at(AT_FDCWD, dir, &h.fh, &mnt, 0) &&
	    h.fh.handle_bytes == sizeof(uint64_t)) {
		memcpy(id, h.fh.f_handle, sizeof(*id));
		return 0;
	}
	/* Without handles: kernfs gives the id as the inode number on 64-bit. */
	if (stat(dir, &st))
		return -errno;
	*id = st.st_ino;
	return 0;
}

int vsys_cg_create(struct vw_child *c, char *err, size_t errlen)
{
	int e;

	/* Never adopt a directory someone made: it would be removed at the end. */
	if (mkdir(c->dir, 0755)) {
		e = -errno;
		snprintf(err, errlen, "cannot create cgroup %s: %s", c->dir,
			 strerror(-e));
		return e;
	}
	e = cg_id(c->dir, &c->cgid);
	if (e)
		snprintf(err, errlen, "cgroup %s: cannot read its id: %s",
			 c->dir, strerror(-e));
	return e;
}

int vsys_cg_remove(const char *dir)
{
	/* Tasks that just exited may keep it busy for a moment. */
	for (int i = 0; i < 50; i++) {
		if (!rmdir(dir) || errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			return -errno;
		usleep(100000);
	}
	return -EBUSY;
}

bool vsys_cg_empty(const char *dir)
{
	char path[4200], line[256];
	bool empty = false;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/cgroup.events", dir);
	fp = fopen(path, "r");
	if (!fp)
		return errno == ENOENT;
	while (fgets(line, sizeof(line), fp))
		if (!strncmp(line, "populated ", 10))
			empty = line[10] == '0';
	fclose(fp);
	return empty;
}

void vsys_cg_kill(const char *dir)
{
	char path[4200];
	FILE *fp;
	int fd;

	snprintf(path, sizeof(path), "%s/cgroup.kill", dir);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = write(fd, "1", 1);

		close(fd);
		if (n == 1)
			return;
	}
	/* Before 5.14: each process, until none is left (forks race us). */
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	for (int round = 0; round < 20 && !vsys_cg_empty(dir); round++) {
		long pid;

		fp = fopen(path, "r");
		if (!fp)
			return;
		/* 0: a task outside our pid namespace; never a group or -1. */
		while (fscanf(fp, "%ld", &pid) == 1)
			if (pid > 0)
				kill((pid_t)pid, SIGKILL);
		fclose(fp);
		usleep(50000);
	}
}

/* The child's side: move into the cgroup (unless clone3 did), exec. */
static void child(const struct vw_child *c, char *const argv[], bool move)
{
	char path[4200];
	sigset_t none;
	int fd;

	if (move) {
		snprintf(path, sizeof(path), "%s/cgroup.procs", c->dir);
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, "0", 1) != 1) {
			dprintf(c->logfd,
				"joules-validate: cannot join %s: %s\n", c->dir,
				strerror(errno));
			_exit(127);
		}
		close(fd);
	}
	/* stress-ng does not outlive us, whatever kills us. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(127);
	/* Handlers are reset by exec; the mask is not. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		dup2(fd, 0);
	dup2(c->logfd, 1);
	dup2(c->logfd, 2);
	execv(argv[0], argv);
	dprintf(2, "joules-validate: cannot run %s: %s\n", argv[0],
		strerror(errno));
	_exit(127);
}

int vsys_spawn(struct vw_child *c, char *const argv[], char *err, size_t errlen)
{
	struct clone_args args = { .flags = CLONE_INTO_CGROUP,
				   .exit_signal = SIGCHLD };
	int cgfd, e;
	pid_t p;

	if (c->logfd < 0)
		c->logfd = memfd_create("stress-ng", MFD_CLOEXEC);
	if (c->logfd < 0) {
		e = -errno;
		snprintf(err, errlen, "memfd_create: %s", strerror(-e));
		return e;
	}
	/* A fresh log for this run. */
	if (ftruncate(c->logfd, 0) == 0)
		lseek(c->logfd, 0, SEEK_SET);
	fflush(NULL);
	cgfd = open(c->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cgfd < 0) {
		e = -errno;
		snprintf(err, errlen, "%s: %s", c->dir, strerror(-e));
		return e;
	}
	args.cgroup = (uint64_t)cgfd;
	p = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
	if (p < 0 && (errno == ENOSYS || errno == E2BIG || errno == EINVAL)) {
		/* Before 5.7: the child writes itself into cgroup.procs. */
		p = fork();
		if (p == 0)
			child(c, argv, true);
	} else if (p == 0) {
		child(c, argv, false);
	}
	e = errno;
	close(cgfd);
	if (p < 0) {
		snprintf(err, errlen, "cannot start %s in %s: %s", argv[0],
			 c->dir, strerror(e));
		return -e;
	}
	c->pid = p;
	c->status = 0;
	return 0;
}

void vsys_log_tail(const struct vw_child *c, char *buf, size_t len)
{
	char tmp[8192], *end, *start;
	off_t size, off;
	ssize_t n;

	buf[0] = 0;
	if (c->logfd < 0)
		return;
	/* The end of a long log is where stress-ng says why it failed. */
	size = lseek(c->logfd, 0, SEEK_END);
	off = size > (off_t)sizeof(tmp) - 1 ? size - (off_t)sizeof(tmp) + 1 : 0;
	n = pread(c->logfd, tmp, sizeof(tmp) - 1, off);
	if (n <= 0)
		return;
	tmp[n] = 0;
	end = tmp + n;
	while (end > tmp && (end[-1] == '\n' || end[-1] == ' '))
		*--end = 0;
	start = strrchr(tmp, '\n');
	snprintf(buf, len, "%s", start ? start + 1 : tmp);
}
