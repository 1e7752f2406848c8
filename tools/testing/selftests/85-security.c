// SPDX-License-Identifier: GPL-2.0
/*
 * The security model (Documentation/admin-guide.rst): who may read what.
 *  - a netlink socket answers with its opener's rights: one opened by an
 *    unprivileged user and used by a setuid-root program sees no more;
 *  - node-wide measured energy needs CAP_PERFMON or CAP_SYS_ADMIN, the
 *    multicast groups CAP_SYS_ADMIN; CAP_NET_ADMIN alone gets neither;
 *  - the same uid in another mount namespace (a container) is refused,
 *    and so is a non-dumpable task of the same uid, and a reader an LSM
 *    (Landlock) confines wherever /proc/<pid>/io refuses it;
 *  - hidepid= hides other users' processes from listings and lookups,
 *    as proc's option does (remounts, gid=, ptraceable), and without
 *    options the reader's own /proc decides;
 *  - pids are those of the mount's (files) or the sender's (netlink) pid
 *    namespace, in names and in contents alike.
 */
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "kselftest_harness.h"
#include "selftest.h"

#define NOBODY 65534
#define HELPER "/tmp/85-setuid-helper"

/* Become nobody; dumpable again, as an ordinary user's process is. */
static void become_nobody(void)
{
	if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
		_exit(90);
	prctl(PR_SET_DUMPABLE, 1);
}

/* Run fn in a child; its exit status. */
static int in_child(int (*fn)(void *), void *arg)
{
	int status;
	pid_t p = fork();

	if (p == 0)
		_exit(fn(arg));
	if (p < 0 || waitpid(p, &status, 0) != p || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* ---- a socket handed to a setuid program ---- */

/*
 * The setuid helper (this program, --helper FD): dumps processes on the
 * inherited socket. Exit 0: no task of uid 0 in the dump and GET_NODE
 * refused; 1: it saw root's tasks; 2: GET_NODE answered; 3: error.
 */
static int helper(int fd)
{
	struct task_rec *recs;
	struct node_rec node;
	struct jnl *nl;
	size_t n, i, rooted = 0;

	if (geteuid() != 0 || jnl_open_fd(&nl, fd))
		return 3;
	if (jnl_dump_tasks(nl, false, &recs, &n))
		return 3;
	for (i = 0; i < n; i++)
		rooted += recs[i].uid == 0;
	free(recs);
	if (rooted)
		return 1;
	return jnl_get_node(nl, &node) == -EPERM ? 0 : 2;
}

static int socket_to_setuid(void *arg)
{
	bool as_root = arg != NULL;
	struct jnl *nl;
	char fd[16];

	if (!as_root)
		become_nobody();
	if (jnl_open(&nl))
		return 91;
	/* The socket stays open across exec. */
	fcntl(jnl_fd(nl), F_SETFD, 0);
	snprintf(fd, sizeof(fd), "%d", jnl_fd(nl));
	execl(HELPER, HELPER, "--helper", fd, (char *)NULL);
	return 92;
}

TEST(netlink_answers_with_the_openers_rights)
{
	ASSERT_EQ(0, st_sh("cp /proc/%d/exe " HELPER " && chown 0:0 " HELPER
			   " && chmod 4755 " HELPER,
			   getpid()));
	/* Opened by nobody: the setuid-root helper sees no root task. */
	EXPECT_EQ(0, in_child(socket_to_setuid, NULL));
	/* The check can fail: opened by root, the helper sees root's tasks. */
	EXPECT_EQ(1, in_child(socket_to_setuid, (void *)1));
	unlink(HELPER);
}

/* ---- capabilities ---- */

/* Keep uid 0 but only capability cap (-1: none). */
static int only_cap(int cap)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3
	};
	struct __user_cap_data_struct d[2] = { 0 };

	if (cap >= 0) {
		d[cap / 32].effective = d[cap / 32].permitted = 1U
								<< (cap % 32);
		d[cap / 32].inheritable = 0;
	}
	return syscall(SYS_capset, &h, d);
}

struct capcase {
	int cap;
	int node; /* GET_NODE result */
	int sub; /* joining the samples group */
	int raw; /* reading rapl/energy_uj: >0 or -errno */
};

static int probe_caps(void *arg)
{
	struct capcase *c = arg;
	struct node_rec node;
	struct jnl *nl;
	char b[4096];
	int rc = 0;

	if (only_cap(c->cap))
		return 93;
	if (jnl_open(&nl))
		return 94;
	if (jnl_get_node(nl, &node) != c->node)
		rc |= 1;
	if (jnl_subscribe(nl, JNL_GRP_SAMPLES) != c->sub)
		rc |= 2;
	jnl_close(nl);
	if ((st_read(JOULES_SYSFS "/rapl/energy_uj", b, sizeof(b)) > 0) !=
	    (c->raw > 0))
		rc |= 4;
	return rc;
}

TEST(node_energy_needs_perfmon_or_sys_admin)
{
	struct capcase cases[] = {
		{ CAP_NET_ADMIN, -EPERM, -EPERM, -EPERM },
		{ CAP_PERFMON, 0, -EPERM, 1 },
		{ CAP_SYS_ADMIN, 0, 0, 1 },
		{ -1, -EPERM, -EPERM, -EPERM },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		int rc = in_child(probe_caps, &cases[i]);

		TH_LOG("cap %d: %s%s%s%s", cases[i].cap,
		       rc ? "wrong:" : "as expected", rc & 1 ? " GET_NODE" : "",
		       rc & 2 ? " subscribe" : "",
		       rc & 4 ? " rapl/energy_uj" : "");
		EXPECT_EQ(0, rc);
	}
}

/* ---- the same uid elsewhere ---- */

struct target {
	pid_t pid;
	int release[2];
};

static int block_as_nobody(struct target *t, bool dumpable)
{
	int ready[2];
	char c;

	if (pipe(t->release) || pipe(ready))
		return -1;
	t->pid = fork();
	if (t->pid == 0) {
		close(t->release[1]);
		close(ready[0]);
		become_nobody();
		prctl(PR_SET_DUMPABLE, dumpable ? 1 : 0);
		if (write(ready[1], "x", 1) != 1 ||
		    read(t->release[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1)
		return -1;
	close(ready[0]);
	return 0;
}

static void release(struct target *t)
{
	close(t->release[1]);
	waitpid(t->pid, NULL, 0);
}

/* As nobody, optionally in a new user + mount namespace: read pid's file. */
static int read_as_nobody(void *arg)
{
	pid_t pid = *(pid_t *)arg & 0x3fffffff;
	bool other_mnt = *(pid_t *)arg & 0x40000000;
	char path[64], b[4096];
	ssize_t r;

	become_nobody();
	if (other_mnt && unshare(CLONE_NEWUSER | CLONE_NEWNS))
		return 95;
	snprintf(path, sizeof(path), "/proc/energy/%d", pid);
	r = st_read(path, b, sizeof(b));
	return r > 0 ? 0 : r == -EACCES ? 1 : 2;
}

TEST(same_uid_in_another_mount_namespace_is_refused)
{
	struct target t;
	pid_t arg;

	ASSERT_EQ(0, block_as_nobody(&t, true));
	arg = t.pid;
	EXPECT_EQ(0, in_child(read_as_nobody, &arg));
	arg = t.pid | 0x40000000;
	EXPECT_EQ(1, in_child(read_as_nobody, &arg));
	release(&t);
}

TEST(non_dumpable_task_of_the_same_uid_is_refused)
{
	struct target t;
	pid_t arg;

	ASSERT_EQ(0, block_as_nobody(&t, false));
	arg = t.pid;
	EXPECT_EQ(1, in_child(read_as_nobody, &arg));
	release(&t);
}

/*
 * The LSMs are asked when a file is opened, about the program the task
 * runs then; after an exec a read of the open file asks them again (the
 * reader here is root: allowed) and shows the new program.
 */
TEST(an_open_file_asks_again_after_an_exec)
{
	char path[64], comm[64], b[4096];
	int go[2], fd;
	pid_t kid;
	char c;

	ASSERT_EQ(0, pipe(go));
	kid = fork();
	if (kid == 0) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		execl("/bin/sleep", "sleep", "30", (char *)NULL);
		_exit(2);
	}
	close(go[0]);
	snprintf(path, sizeof(path), "/proc/energy/%d", kid);
	fd = open(path, O_RDONLY);
	ASSERT_LE(0, fd);
	EXPECT_LT(0, pread(fd, b, sizeof(b), 0));
	ASSERT_EQ(1, write(go[1], "x", 1));
	/* The exec is done once /proc says so. */
	for (int i = 0; i < 200; i++) {
		snprintf(comm, sizeof(comm), "/proc/%d/comm", kid);
		if (st_read(comm, b, sizeof(b)) > 0 && !strncmp(b, "sleep", 5))
			break;
		usleep(10000);
	}
	memset(b, 0, sizeof(b));
	EXPECT_LT(0, pread(fd, b, sizeof(b) - 1, 0)) TH_LOG("read: %m");
	EXPECT_NE(NULL, strstr(b, "comm: sleep")) TH_LOG("%.80s", b);
	close(fd);
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
	close(go[1]);
}

/*
 * A task that changes credentials while root reads it (a daemon dropping
 * privileges after fork) is not refused: the LSMs' verdict was about the
 * old credentials, so it is asked again, and a task that kept changing
 * says EAGAIN, never EPERM. The child flips its effective uid every
 * FLIP_US: rarely enough that asking again gets through, often enough
 * that reads land between a verdict and its check.
 */
#define FLIP_US 1000
#define FLIP_READS 3000

TEST(a_task_changing_credentials_is_read_by_root)
{
	int n_ok = 0, n_again = 0, n_perm[2] = { 0 }, n_other = 0, other = 0, err;
	struct task_rec rec;
	char path[64], b[4096];
	pid_t kid, me = getpid();
	struct jnl *nl;

	kid = fork();
	if (kid == 0) {
		/*
		 * Gone with this test, should it fail an ASSERT (a change of
		 * euid clears PR_SET_PDEATHSIG).
		 */
		for (;;) {
			if (getppid() != me)
				_exit(0);
			if (setresuid(-1, NOBODY, -1) || setresuid(-1, 0, -1))
				_exit(1);
			usleep(FLIP_US);
		}
	}
	ASSERT_LT(0, kid);
	ASSERT_EQ(0, jnl_open(&nl));
	st_wait_tracked(kid);
	snprintf(path, sizeof(path), "/proc/energy/%d", kid);
	for (int i = 0; i < FLIP_READS; i++) {
		err = i % 2 ? jnl_get_task(nl, kid, false, &rec) :
			      st_read(path, b, sizeof(b));
		if (err > 0)
			err = 0;
		if (!err)
			n_ok++;
		else if (err == -EAGAIN)
			n_again++;
		else if (err == -EPERM || err == -EACCES)
			n_perm[i % 2]++;
		else if (n_other++ == 0)
			other = err;
	}
	jnl_close(nl);
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
	TH_LOG("%d reads: %d answered, %d EAGAIN, refused %d by the file and %d by netlink, %d else (first %s)",
	       FLIP_READS, n_ok, n_again, n_perm[0], n_perm[1], n_other,
	       strerror(-other));
	EXPECT_EQ(0, n_perm[0]);
	EXPECT_EQ(0, n_perm[1]);
	EXPECT_EQ(0, n_other);
	EXPECT_LT(FLIP_READS / 2, n_ok);
}

/* ---- an LSM: a reader confined by Landlock ---- */

/*
 * Landlock's ptrace scoping (5.13): a confined task may not ptrace, nor
 * read with PTRACE_MODE_READ, a task outside its domain, its own uid's
 * included. Returns 0, or -errno when Landlock is not there.
 */
static int landlock_confine(void)
{
	struct landlock_ruleset_attr a = {
		.handled_access_fs = LANDLOCK_ACCESS_FS_MAKE_REG,
	};
	int fd = syscall(__NR_landlock_create_ruleset, &a, sizeof(a), 0);
	int err = 0;

	if (fd < 0)
		return -errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(__NR_landlock_restrict_self, fd, 0))
		err = -errno;
	close(fd);
	return err;
}

/*
 * As nobody, confined by Landlock: pid (nobody, outside the domain) must
 * be refused wherever the kernel's /proc/<pid>/io refuses it, and a child
 * made inside the domain readable everywhere. Exit 0 when so; 10 + which
 * check failed otherwise; 4 when Landlock is not there.
 */
static int read_confined(void *arg)
{
	pid_t pid = *(pid_t *)arg, kid;
	struct task_rec rec, *recs;
	char path[64], b[4096];
	struct jnl *nl;
	size_t n, i;
	int ret = 0;

	become_nobody();
	if (landlock_confine())
		return 4;
	snprintf(path, sizeof(path), "/proc/%d/io", pid);
	if (st_read(path, b, sizeof(b)) != -EACCES)
		return 10; /* the oracle: the kernel's own rule refuses it */
	snprintf(path, sizeof(path), "/proc/energy/%d", pid);
	if (st_read(path, b, sizeof(b)) != -EACCES)
		return 11;
	snprintf(path, sizeof(path), "/proc/energy/threads/%d/%d", pid, pid);
	if (st_read(path, b, sizeof(b)) != -EACCES)
		return 12;
	if (jnl_open(&nl))
		return 13;
	if (jnl_get_task(nl, pid, false, &rec) != -EPERM)
		ret = 14;
	if (!ret && jnl_dump_tasks(nl, false, &recs, &n) == 0) {
		for (i = 0; i < n; i++)
			if (recs[i].pid == (uint32_t)pid)
				ret = 15;
		free(recs);
	} else if (!ret) {
		ret = 16;
	}
	/* Its own process, and a child inside its domain, stay readable. */
	snprintf(path, sizeof(path), "/proc/energy/%d", getpid());
	if (!ret && st_read(path, b, sizeof(b)) <= 0)
		ret = 17;
	kid = fork();
	if (kid == 0) {
		pause();
		_exit(0);
	}
	snprintf(path, sizeof(path), "/proc/%d/io", kid);
	if (!ret && st_read(path, b, sizeof(b)) <= 0)
		ret = 18;
	snprintf(path, sizeof(path), "/proc/energy/%d", kid);
	if (!ret && st_read(path, b, sizeof(b)) <= 0)
		ret = 19;
	if (!ret && jnl_get_task(nl, kid, false, &rec))
		ret = 20;
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
	jnl_close(nl);
	return ret;
}

/* Never looser than /proc/<pid>/io, whose check asks the LSMs. */
TEST(a_landlock_confined_reader_is_refused_as_by_proc)
{
	struct target t;
	pid_t arg;
	int r;

	ASSERT_EQ(0, block_as_nobody(&t, true));
	arg = t.pid;
	r = in_child(read_confined, &arg);
	release(&t);
	if (r == 4)
		SKIP(return, "Landlock is not in this kernel's LSMs");
	EXPECT_EQ(0, r);
}

/* ---- hidepid ---- */

#define HMNT "/tmp/85-hidepid"

static int list_as_nobody(void *arg)
{
	const char *want = arg; /* "invisible" or "noaccess" */
	char b[4096], own[64];
	bool saw1 = false, sawme = false;
	struct dirent *de;
	struct stat st;
	DIR *d;

	become_nobody();
	d = opendir(HMNT);
	if (!d)
		return 96;
	snprintf(own, sizeof(own), "%d", getpid());
	while ((de = readdir(d))) {
		saw1 |= !strcmp(de->d_name, "1");
		sawme |= !strcmp(de->d_name, own);
	}
	closedir(d);
	if (!sawme)
		return 97;
	if (!strcmp(want, "invisible"))
		return !saw1 && stat(HMNT "/1", &st) && errno == ENOENT &&
				       st_read(HMNT "/1", b, sizeof(b)) ==
					       -ENOENT ?
			       0 :
			       1;
	/* noaccess: listed, not readable, its threads not listable. */
	return saw1 && st_read(HMNT "/1", b, sizeof(b)) == -EACCES &&
			       !opendir(HMNT "/threads/1") && errno == EACCES ?
		       0 :
		       1;
}

TEST(hidepid)
{
	char m[4096];

	mkdir(HMNT, 0755);
	ASSERT_EQ(
		0,
		st_sh("mount -t joulesfs -o hidepid=invisible joulesfs " HMNT));
	EXPECT_EQ(0, in_child(list_as_nobody, "invisible"));
	EXPECT_LT(0, st_read(HMNT "/1", m, sizeof(m))); /* root sees all */
	st_sh("umount " HMNT);
	ASSERT_EQ(
		0,
		st_sh("mount -t joulesfs -o hidepid=noaccess joulesfs " HMNT));
	EXPECT_EQ(0, in_child(list_as_nobody, "noaccess"));
	st_sh("umount " HMNT);
	/* An unknown option fails the mount. */
	EXPECT_NE(0, st_sh("mount -t joulesfs -o hidepid=maybe joulesfs " HMNT
			   " 2>/dev/null"));
	EXPECT_NE(0, st_sh("mount -t joulesfs -o bogus joulesfs " HMNT
			   " 2>/dev/null"));
	/* Options are shown as proc shows them: by name. */
	ASSERT_EQ(
		0,
		st_sh("mount -t joulesfs -o hidepid=2,gid=4242 joulesfs " HMNT));
	EXPECT_EQ(
		0,
		st_sh("grep -q '^joulesfs " HMNT
		      " joulesfs .*gid=4242,hidepid=invisible' /proc/mounts"));
	st_sh("umount " HMNT);
}

/* A member of the gid= group, not root: may it see pid 1? */
static int member_sees_pid1(void *arg)
{
	gid_t g = 4242;
	struct stat st;

	(void)arg;
	if (setgroups(1, &g) || setgid(NOBODY) || setuid(NOBODY))
		return 90;
	prctl(PR_SET_DUMPABLE, 1);
	return stat(HMNT "/1", &st) == 0 ? 0 : 1;
}

/* As procfs: hidepid=ptraceable checks everyone, gid= exempts no one. */
TEST(hidepid_ptraceable_ignores_gid)
{
	mkdir(HMNT, 0755);
	ASSERT_EQ(0, st_sh("mount -t joulesfs -o hidepid=invisible,gid=4242 "
			   "joulesfs " HMNT));
	EXPECT_EQ(0, in_child(member_sees_pid1, NULL));
	st_sh("umount " HMNT);
	ASSERT_EQ(0, st_sh("mount -t joulesfs -o hidepid=ptraceable,gid=4242 "
			   "joulesfs " HMNT));
	EXPECT_EQ(1, in_child(member_sees_pid1, NULL));
	st_sh("umount " HMNT);
}

/* A remount changes what it names and keeps the rest, as proc's does. */
TEST(remount_applies_its_options)
{
	mkdir(HMNT, 0755);
	ASSERT_EQ(
		0,
		st_sh("mount -t joulesfs -o hidepid=off,gid=4242 joulesfs " HMNT));
	ASSERT_EQ(0, st_sh("mount -o remount,hidepid=invisible " HMNT));
	EXPECT_EQ(0, in_child(list_as_nobody, "invisible"));
	EXPECT_EQ(
		0,
		st_sh("grep -q '^joulesfs " HMNT
		      " joulesfs .*gid=4242,hidepid=invisible' /proc/mounts"));
	ASSERT_EQ(0, st_sh("mount -o remount,hidepid=noaccess " HMNT));
	EXPECT_EQ(0, in_child(list_as_nobody, "noaccess"));
	EXPECT_EQ(0,
		  st_sh("grep -q '^joulesfs " HMNT
			" joulesfs .*gid=4242,hidepid=noaccess' /proc/mounts"));
	/* A bad value changes nothing. */
	EXPECT_NE(0, st_sh("mount -o remount,hidepid=3 " HMNT " 2>/dev/null"));
	EXPECT_EQ(0, in_child(list_as_nobody, "noaccess"));
	st_sh("umount " HMNT);
}

/*
 * Without options, the mounter's /proc decides at each access: a remount
 * of it counts, not only its options of when joulesfs was mounted.
 */
TEST(without_options_the_mounters_proc_decides)
{
	struct stat st;

	mkdir(HMNT, 0755);
	ASSERT_EQ(0, st_sh("mount -t joulesfs joulesfs " HMNT));
	ASSERT_EQ(0, st_sh("mount -o remount,hidepid=invisible /proc"));
	EXPECT_EQ(0, in_child(list_as_nobody, "invisible"));
	ASSERT_EQ(0, st_sh("mount -o remount,hidepid=noaccess /proc"));
	EXPECT_EQ(0, in_child(list_as_nobody, "noaccess"));
	ASSERT_EQ(0,
		  st_sh("mount -o remount,hidepid=invisible,gid=4242 /proc"));
	EXPECT_EQ(0, in_child(member_sees_pid1, NULL));
	st_sh("mount -o remount,hidepid=off,gid=0 /proc");
	EXPECT_EQ(0, stat(HMNT "/1", &st));
	/* Nothing of /proc's shows as its own options. */
	EXPECT_NE(0, st_sh("grep -q '^joulesfs " HMNT
			   " joulesfs .*hidepid' /proc/mounts"));
	st_sh("umount " HMNT);
}

/*
 * As nobody in a user and mount namespace of its own, with something else
 * on /proc (a tmpfs: pid 1 stays hidden; or, in a chroot, a link back into
 * joulesfs: the lookup of its own child neither hangs nor recurses). A
 * reader chooses its /proc, so its /proc must not decide.
 */
#define ROOT85 "/tmp/85-root"

static int own_proc_as_nobody(void *arg)
{
	const char *how = arg;
	char name[32], link[32];
	struct stat st;
	pid_t kid;
	int ret;

	become_nobody();
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS))
		return 95;
	/* Its own ids mapped, so that it may make files in its tmpfs. */
	if (st_write("/proc/self/setgroups", "deny", 4) ||
	    st_write("/proc/self/uid_map", "65534 65534 1", 13) ||
	    st_write("/proc/self/gid_map", "65534 65534 1", 13))
		return 94;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return 96;
	if (!strcmp(how, "tmpfs")) {
		if (mount("t", "/proc", "tmpfs", 0, NULL))
			return 97;
		return stat(HMNT "/1", &st) == 0 ? 1 : errno == ENOENT ? 0 : 2;
	}
	/*
	 * A root whose /proc is a link to a name in joulesfs not yet looked
	 * up: a lookup that walked the reader's /proc would wait for itself.
	 */
	kid = fork();
	if (kid == 0) {
		pause();
		_exit(0);
	}
	snprintf(name, sizeof(name), "/e/%d", kid);
	snprintf(link, sizeof(link), "e/%d", kid);
	if (mount("t", ROOT85, "tmpfs", 0, NULL))
		ret = 40;
	else if (mkdir(ROOT85 "/e", 0755))
		ret = 41;
	else if (mount(HMNT, ROOT85 "/e", NULL, MS_BIND | MS_REC, NULL))
		ret = 42 + 100 * (errno == EPERM) + 200 * (errno == EINVAL);
	else if (symlink(link, ROOT85 "/proc"))
		ret = 43;
	else if (chroot(ROOT85) || chdir("/"))
		ret = 44;
	else
		ret = stat(name, &st) == 0 ? 0 : 3;
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
	return ret;
}

TEST(a_readers_own_proc_decides_nothing)
{
	mkdir(HMNT, 0755);
	mkdir(ROOT85, 0755);
	ASSERT_EQ(0, st_sh("mount -o remount,hidepid=invisible /proc"));
	ASSERT_EQ(0, st_sh("mount -t joulesfs joulesfs " HMNT));
	EXPECT_EQ(0, in_child(own_proc_as_nobody, "tmpfs"));
	EXPECT_EQ(0, in_child(own_proc_as_nobody, "link"));
	st_sh("umount " HMNT);
	st_sh("mount -o remount,hidepid=off /proc");
	rmdir(ROOT85);
}

/* ---- pid namespaces ---- */

/* The test and PID 1 of its new namespace, in step. */
static int ns_ready[2], ns_done[2];

/* PID 1 of a new pid namespace: what does it see? */
static int in_pid_ns(void *arg)
{
	char b[4096], c[4096];
	unsigned long long v;
	struct task_rec *recs;
	struct task_rec tr;
	struct jnl *nl;
	size_t n, i;
	int go[2], rc = 0;
	pid_t kid;

	(void)arg;
	if (getpid() != 1)
		return 80;
	/* The first child is pid 2 (before the shell of the mount below). */
	if (pipe(go))
		return 82;
	kid = fork();
	if (kid == 0) {
		char x;

		close(go[1]);
		if (read(go[0], &x, 1) < 0)
			_exit(1);
		_exit(0);
	}
	if (kid != 2)
		rc |= 1;
	/* Our own joulesfs, in our pid namespace, on a private /proc/energy. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    st_sh("mount -t joulesfs joulesfs /proc/energy"))
		return 81;
	usleep(3 * st_interval_ms() * 1000);
	/* The test reads our mount from outside now. */
	if (write(ns_ready[1], "x", 1) != 1 || read(ns_done[0], b, 1) != 1)
		return 85;
	/* Names and contents: namespace pids. */
	if (st_read("/proc/energy/2", b, sizeof(b)) <= 0 ||
	    st_kv(b, "pid", &v) || v != 2)
		rc |= 2;
	if (st_read("/proc/energy/self", c, sizeof(c)) <= 0 ||
	    st_kv(c, "pid", &v) || v != 1)
		rc |= 4;
	/* Netlink: the sender's namespace, for finding and for numbering. */
	if (jnl_open(&nl))
		return 83;
	if (jnl_get_task(nl, 2, false, &tr) || tr.pid != 2)
		rc |= 8;
	if (jnl_dump_tasks(nl, false, &recs, &n))
		return 84;
	for (i = 0; i < n; i++)
		if (recs[i].pid != 1 && recs[i].pid != 2)
			rc |= 16; /* someone outside, or a host pid */
	if (n != 2)
		rc |= 32;
	free(recs);
	jnl_close(nl);
	close(go[1]);
	waitpid(kid, NULL, 0);
	umount("/proc/energy");
	return rc;
}

TEST(pids_of_the_mount_and_of_the_sender)
{
	static char stack[256 * 1024];
	int status, rc;
	pid_t p;

	char path[64], b[4096], x;
	unsigned long long v = 0;

	ASSERT_EQ(0, pipe(ns_ready));
	ASSERT_EQ(0, pipe(ns_done));
	p = clone(in_pid_ns, stack + sizeof(stack),
		  CLONE_NEWPID | CLONE_NEWNS | SIGCHLD, NULL);
	ASSERT_LT(0, p);
	/*
	 * The namespace's mount read from outside, through its root: names
	 * and contents are still the namespace's pids, not the reader's.
	 */
	if (read(ns_ready[0], &x, 1) == 1) {
		snprintf(path, sizeof(path), "/proc/%d/root/proc/energy/2", p);
		EXPECT_LT(0, st_read(path, b, sizeof(b)));
		EXPECT_EQ(0, st_kv(b, "pid", &v));
		EXPECT_EQ(2, v);
	}
	EXPECT_EQ(1, write(ns_done[1], "x", 1));
	ASSERT_EQ(p, waitpid(p, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	rc = WEXITSTATUS(status);
	TH_LOG("in the new pid namespace: %d (1: pid, 2: file name, 4: self, 8: GET, 16/32: DUMP)",
	       rc);
	EXPECT_EQ(0, rc);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--helper"))
		return helper(atoi(argv[2]));
	if (access(JOULES_SYSFS "/version", R_OK)) {
		printf("1..0 # SKIP joules not loaded\n");
		return KSFT_SKIP;
	}
	return test_harness_run(argc, argv);
}
