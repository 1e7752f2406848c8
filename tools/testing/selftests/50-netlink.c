// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink family "joules" in the booted kernel: requests and
 * their errors, dumps of 800 to 2,000 tasks across many skbs, malformed and
 * random messages, the samples and exits groups, and what an unprivileged
 * user may and may not do.
 */
#include <dirent.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "selftest.h"
#include "nl.h"
#include "uapi/joules_netlink.h"

#define COEF JOULES_SYSFS "/model/coefficients"
#define NR_TASKS 2000

/*
 * NR_TASKS at the kernel's scale, but at least 800: about 150 task records
 * fill a dump's skb, and dump_raw needs the dump to go on across several.
 * KASAN and lockdep make 2,000 forks and threads slow (issue 24: CI time).
 */
static int nr_tasks(void)
{
	unsigned long n = st_scaled(NR_TASKS);

	return n < 800 ? 800 : (int)n;
}

static void settle(void)
{
	usleep(3 * st_interval_ms() * 1000 + 50000);
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- raw netlink, for messages libnl would not build ---- */

static int raw_open(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct timeval tv = { .tv_sec = 5 };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);

	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static int raw_send(int fd, const void *buf, size_t len)
{
	struct sockaddr_nl k = { .nl_family = AF_NETLINK };

	return sendto(fd, buf, len, 0, (struct sockaddr *)&k, sizeof(k)) ==
			       (ssize_t)len ?
		       0 :
		       -errno;
}

/*
 * Read the answer to `seq`: the kernel's error (< 0), 0 for an ACK or the
 * end of a dump, or -ETIMEDOUT when nothing came. *data counts data
 * messages, *dgrams the datagrams that carried them.
 */
static int raw_answer(int fd, uint32_t seq, int *data, int *dgrams)
{
	static char buf[65536];

	if (data)
		*data = 0;
	if (dgrams)
		*dgrams = 0;
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h;
		int len, got = 0;

		if (n < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		len = (int)n;
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, len);
		     h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_seq != seq)
				continue;
			if (h->nlmsg_type == NLMSG_ERROR)
				return ((struct nlmsgerr *)NLMSG_DATA(h))
					->error;
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			got++;
			if (data)
				(*data)++;
		}
		if (got && dgrams)
			(*dgrams)++;
	}
}

/* Message under construction: nlmsghdr + genlmsghdr + attributes. */
struct rmsg {
	union {
		struct nlmsghdr h;
		char buf[4096];
	};
	size_t len;
};

static void rmsg_init(struct rmsg *m, int family, uint8_t cmd, uint16_t flags,
		      uint32_t seq)
{
	struct genlmsghdr *g;

	memset(m, 0, sizeof(*m));
	m->h.nlmsg_type = (uint16_t)family;
	m->h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	m->h.nlmsg_seq = seq;
	g = (struct genlmsghdr *)(m->buf + NLMSG_HDRLEN);
	g->cmd = cmd;
	g->version = JOULES_GENL_VERSION;
	m->len = NLMSG_HDRLEN + GENL_HDRLEN;
	m->h.nlmsg_len = (uint32_t)m->len;
}

/* An attribute whose nla_len says `nla_len` while `datalen` bytes follow. */
static void rmsg_attr_raw(struct rmsg *m, uint16_t type, uint16_t nla_len,
			  const void *data, size_t datalen)
{
	struct nlattr *a = (struct nlattr *)(m->buf + m->len);

	a->nla_type = type;
	a->nla_len = nla_len;
	memcpy(a + 1, data, datalen);
	m->len += NLA_ALIGN(NLA_HDRLEN + datalen);
	m->h.nlmsg_len = (uint32_t)m->len;
}

static void rmsg_attr(struct rmsg *m, uint16_t type, const void *data,
		      size_t datalen)
{
	rmsg_attr_raw(m, type, (uint16_t)(NLA_HDRLEN + datalen), data, datalen);
}

/* Send m on a fresh raw socket and return the kernel's answer. */
static int raw_request(struct rmsg *m)
{
	int fd = raw_open(), err;

	if (fd < 0)
		return -EBADF;
	err = raw_send(fd, m->buf, m->len);
	if (!err)
		err = raw_answer(fd, m->h.nlmsg_seq, NULL, NULL);
	close(fd);
	return err;
}

/* ---- helpers ---- */

static int family_id;

/* GET_TASK of ourselves still works: the module survived what came before. */
static int alive(void)
{
	struct task_rec t;
	struct jnl *nl;
	int err = jnl_open(&nl);

	if (err)
		return err;
	err = jnl_get_task(nl, getpid(), false, &t);
	jnl_close(nl);
	if (!err && t.pid != (uint32_t)getpid())
		err = -EPROTO;
	return err;
}

/* Children blocked on one pipe: they all exit when the write end closes. */
struct brood {
	pid_t *pid;
	int n;
	int wfd;
};

static int brood_spawn(struct brood *b, int n)
{
	int p[2];

	b->pid = calloc((size_t)n, sizeof(pid_t));
	b->n = 0;
	if (!b->pid || pipe(p))
		return -1;
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();
		char c;

		if (pid < 0)
			break;
		if (pid == 0) {
			close(p[1]);
			while (read(p[0], &c, 1) < 0 && errno == EINTR)
				;
			_exit(0);
		}
		b->pid[b->n++] = pid;
	}
	close(p[0]);
	b->wfd = p[1];
	return b->n == n ? 0 : -1;
}

/* How many of want[0..n) are in the records (records sorted by pid). */
static int count_present(const struct task_rec *recs, size_t nrec,
			 const pid_t *want, int n)
{
	int found = 0;

	for (int i = 0; i < n; i++) {
		size_t lo = 0, hi = nrec;

		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (recs[mid].pid < (uint32_t)want[i])
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < nrec && recs[lo].pid == (uint32_t)want[i])
			found++;
	}
	return found;
}

static bool strictly_sorted(const struct task_rec *recs, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (recs[i - 1].pid >= recs[i].pid)
			return false;
	return true;
}

/* ---- tests ---- */

/*
 * Every test: known coefficients so that energy is charged (QEMU has no
 * RAPL) and a netlink socket; the module's settings as they were put back
 * afterwards, from the parent, so also after a crash.
 */
FIXTURE(genl)
{
	struct st_settings saved;
	struct jnl *nl;
};

/* The brood's n children killed, the settings put back: a teardown, or a failed setup. */
static void put_back(struct __test_metadata *_metadata,
		     const struct st_settings *saved, const pid_t *pids, int n)
{
	for (int i = 0; i < n; i++)
		kill(pids[i], SIGKILL);
	EXPECT_EQ(0, st_settings_restore(saved));
}

FIXTURE_SETUP(genl)
{
	int err;

	st_settings_save(&self->saved);
	ASSERT_EQ(0, st_write(COEF, "1000000 0 0 0 0 500000\n", 23));
	err = jnl_open(&self->nl);
	if (err)
		put_back(_metadata, &self->saved, NULL, 0);
	ASSERT_EQ(0, err) TH_LOG("%s", jnl_strerror(JNL_OP_OPEN, err));
}

FIXTURE_TEARDOWN_PARENT(genl)
{
	put_back(_metadata, &self->saved, NULL, 0);
}

/* The same, with nr_tasks() children alive (killed afterwards). */
FIXTURE(brood)
{
	struct st_settings saved;
	struct jnl *nl;
	struct brood b;
	pid_t pids[NR_TASKS];
};

FIXTURE_SETUP(brood)
{
	int err;

	st_settings_save(&self->saved);
	ASSERT_EQ(0, st_write(COEF, "1000000 0 0 0 0 500000\n", 23));
	err = jnl_open(&self->nl);
	if (err)
		put_back(_metadata, &self->saved, NULL, 0);
	ASSERT_EQ(0, err) TH_LOG("%s", jnl_strerror(JNL_OP_OPEN, err));
	if (brood_spawn(&self->b, nr_tasks()))
		DIAG("spawned only %d children", self->b.n);
	memcpy(self->pids, self->b.pid, self->b.n * sizeof(pid_t));
	settle();
}

FIXTURE_TEARDOWN_PARENT(brood)
{
	put_back(_metadata, &self->saved, self->pids, self->b.n);
}

/* family 'N' resolves, version N */
TEST_F(genl, family)
{
	struct jnl *nl = self->nl;

	CHECK(jnl_version(nl) == JOULES_GENL_VERSION, "version %u",
	      jnl_version(nl));
	CHECK(family_id >= GENL_MIN_ID, "family id %d", family_id);
	TH_LOG("family '%s' resolves, version %d", JOULES_GENL_NAME,
	       JOULES_GENL_VERSION);
}

/* GET_TASK of our own process */
TEST_F(genl, get_self)
{
	struct jnl *nl = self->nl;
	struct task_rec t;
	char comm[64] = "";
	int err;

	st_burn_cpu(0.05);
	settle();
	err = jnl_get_task(nl, getpid(), false, &t);
	CHECK(err == 0, "GET_TASK self: %d", err);
	if (!err) {
		st_read("/proc/self/comm", comm, sizeof(comm));
		comm[strcspn(comm, "\n")] = 0;
		CHECK(t.pid == (uint32_t)getpid() &&
			      t.tgid == (uint32_t)getpid(),
		      "pid %u tgid %u", t.pid, t.tgid);
		CHECK(t.uid == getuid(), "uid %u", t.uid);
		CHECK(!strcmp(t.comm, comm), "comm '%s' vs '%s'", t.comm, comm);
		CHECK(t.process && !t.exited && t.nr_threads >= 1,
		      "process %d exited %d threads %u", t.process, t.exited,
		      t.nr_threads);
		CHECK(t.feat[JL_F_CPU_NS] >= 40000000ull,
		      "cpu_ns %llu after 50 ms of burning",
		      (unsigned long long)t.feat[JL_F_CPU_NS]);
		CHECK(t.present & REC_F(JL_F_CPU_NS), "cpu_ns present");
	}
}

struct parked {
	pid_t tid;
	int fd;
};

static void *park(void *arg)
{
	struct parked *p = arg;
	char c;

	p->tid = (pid_t)syscall(SYS_gettid);
	st_burn_cpu(0.02);
	while (read(p->fd, &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

/* GET_TASK of a thread (TID) and its process (PID) */
TEST_F(genl, get_thread)
{
	struct jnl *nl = self->nl;
	struct parked p = { 0 };
	struct task_rec t, proc;
	pthread_t th;
	int fds[2], err;

	ASSERT_EQ(0, pipe(fds));
	p.fd = fds[0];
	ASSERT_EQ(0, pthread_create(&th, NULL, park, &p));
	while (!__atomic_load_n(&p.tid, __ATOMIC_ACQUIRE))
		usleep(1000);
	settle();
	err = jnl_get_task(nl, p.tid, true, &t);
	CHECK(err == 0, "GET_TASK TID %d: %d", p.tid, err);
	if (!err) {
		CHECK(t.pid == (uint32_t)p.tid && t.tgid == (uint32_t)getpid(),
		      "pid %u tgid %u", t.pid, t.tgid);
		CHECK(!t.process && t.nr_threads == 1,
		      "thread record: process %d threads %u", t.process,
		      t.nr_threads);
		CHECK(t.feat[JL_F_CPU_NS] >= 15000000ull, "thread cpu_ns %llu",
		      (unsigned long long)t.feat[JL_F_CPU_NS]);
	}
	/* A non-leader thread id is not a process id. */
	err = jnl_get_task(nl, p.tid, false, &proc);
	CHECK(err == -ESRCH, "GET_TASK PID=<non-leader tid>: %d", err);
	err = jnl_get_task(nl, getpid(), false, &proc);
	CHECK(!err && proc.nr_threads >= 2, "process has %u threads",
	      proc.nr_threads);
	close(fds[1]);
	pthread_join(th, NULL);
	close(fds[0]);
}

/* GET_TASK errors: ESRCH for missing tasks, EINVAL with a reason for bad requests */
TEST_F(genl, get_errors)
{
	struct jnl *nl = self->nl;
	struct task_rec t;
	struct rmsg m;
	uint32_t v = (uint32_t)getpid();
	pid_t gone;
	int err;

	gone = fork();
	if (gone == 0)
		_exit(0);
	waitpid(gone, NULL, 0);
	err = jnl_get_task(nl, gone, false, &t);
	CHECK(err == -ESRCH, "reaped pid %d: %d", gone, err);
	err = jnl_get_task(nl, 4194000, true, &t);
	CHECK(err == -ESRCH, "unused tid: %d", err);

	rmsg_init(&m, family_id, JOULES_CMD_GET_TASK, 0, 11);
	err = raw_request(&m);
	CHECK(err == -EINVAL, "neither PID nor TID: %d", err);
	rmsg_init(&m, family_id, JOULES_CMD_GET_TASK, 0, 12);
	rmsg_attr(&m, JOULES_A_PID, &v, 4);
	rmsg_attr(&m, JOULES_A_TID, &v, 4);
	err = raw_request(&m);
	CHECK(err == -EINVAL, "both PID and TID: %d", err);

	/* The module says why (extended ack), and libnl's path shows it. */
	err = jnl_raw_request(nl, JOULES_CMD_GET_TASK, JOULES_GENL_VERSION, 0,
			      NULL, 0);
	CHECK(err == -EINVAL, "empty GET_TASK via libnl: %d", err);
	CHECK(jnl_kernel_msg(nl) && strstr(jnl_kernel_msg(nl), "exactly one"),
	      "extack '%s'",
	      jnl_kernel_msg(nl) ? jnl_kernel_msg(nl) : "(none)");
}

/* DUMP_TASKS returns all N live child processes */
TEST_F(brood, dump_processes)
{
	struct jnl *nl = self->nl;
	const struct brood *b = &self->b;
	struct task_rec *recs = NULL;
	size_t n = 0;
	int err, found;
	double t0 = st_now();

	err = jnl_dump_tasks(nl, false, &recs, &n);
	CHECK(err == 0, "dump: %d", err);
	found = count_present(recs, n, b->pid, b->n);
	DIAG("dump of %zu processes in %.2f s", n, st_now() - t0);
	CHECK(found == b->n, "%d of %d children in the dump", found, b->n);
	CHECK(n >= (size_t)b->n + 1, "%zu records", n);
	CHECK(strictly_sorted(recs, n), "no duplicates");
	for (size_t i = 0; i < n; i++)
		if (!recs[i].process || recs[i].pid != recs[i].tgid) {
			CHECK(0, "record %zu: pid %u tgid %u process %d", i,
			      recs[i].pid, recs[i].tgid, recs[i].process);
			break;
		}
	free(recs);
	TH_LOG("DUMP_TASKS returns all %d live child processes", b->n);
}

/* The same dump on a raw socket: many datagrams, each message multipart, then DONE. */
TEST_F(brood, dump_raw)
{
	const struct brood *b = &self->b;
	struct rmsg m;
	int fd = raw_open(), err, data = 0, dgrams = 0;

	rmsg_init(&m, family_id, JOULES_CMD_DUMP_TASKS, NLM_F_DUMP, 77);
	err = fd < 0 ? -EBADF : raw_send(fd, m.buf, m.len);
	if (!err)
		err = raw_answer(fd, 77, &data, &dgrams);
	if (fd >= 0)
		close(fd);
	CHECK(err == 0, "dump ended with %d", err);
	CHECK(data >= b->n, "%d messages", data);
	CHECK(dgrams > 4, "%d datagrams (the dump must continue across skbs)",
	      dgrams);
	TH_LOG("raw DUMP_TASKS: %d records in %d skbs, ended by NLMSG_DONE",
	       data, dgrams);
}

static void *sleeper(void *arg)
{
	int fd = *(int *)arg;
	char c;

	while (read(fd, &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

/* DUMP_TASKS with THREADS returns all N threads of a process */
TEST_F(genl, dump_threads)
{
	struct jnl *nl = self->nl;
	int want = nr_tasks();
	pthread_t *th = calloc(want, sizeof(*th));
	pid_t *tids = calloc(want + 1, sizeof(pid_t));
	struct task_rec *recs = NULL;
	pthread_attr_t attr;
	int fds[2], made = 0, err, found = 0, ours = 0;
	size_t n = 0;
	DIR *d;
	struct dirent *de;

	ASSERT_NE(NULL, th);
	ASSERT_NE(NULL, tids);
	ASSERT_EQ(0, pipe(fds));
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (; made < want; made++)
		if (pthread_create(&th[made], &attr, sleeper, &fds[0]))
			break;
	CHECK(made == want, "created %d threads", made);
	settle();
	/* Our thread ids, from /proc/self/task. */
	d = opendir("/proc/self/task");
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.' && ours <= want)
			tids[ours++] = atoi(de->d_name);
	if (d)
		closedir(d);
	err = jnl_dump_tasks(nl, true, &recs, &n);
	CHECK(err == 0, "dump: %d", err);
	found = count_present(recs, n, tids, ours);
	CHECK(found == ours && ours == made + 1, "%d of %d threads (%d made)",
	      found, ours, made);
	CHECK(strictly_sorted(recs, n), "no duplicates");
	for (size_t i = 0; i < n; i++)
		if (recs[i].process || recs[i].nr_threads != 1) {
			CHECK(0, "record %zu is not a thread record", i);
			break;
		}
	free(recs);
	close(fds[1]);
	for (int i = 0; i < made; i++)
		pthread_join(th[i], NULL);
	close(fds[0]);
	free(th);
	free(tids);
	TH_LOG("DUMP_TASKS with THREADS returns all %d threads of a process",
	       want + 1);
}

/* A request that must be refused; returns 1 when it was. */
/*
 * A request that must be refused (with `want`, if nonzero); returns 1 when
 * it was.
 */
static int refused(const char *what, struct rmsg *m, int want)
{
	int err = raw_request(m);

	if (err >= 0 || err == -ETIMEDOUT || err == -EBADF) {
		DIAG("%s: answered %d, expected an error", what, err);
		return 0;
	}
	if (want && err != want) {
		DIAG("%s: error %d, expected %d", what, err, want);
		return 0;
	}
	return 1;
}

/* malformed attributes: bad types, lengths, ranges, unknown attributes and commands */
TEST_F(genl, malformed_attrs)
{
	uint32_t pid = (uint32_t)getpid(), zero = 0, big = 0x7fffffff;
	uint64_t p64 = pid;
	uint16_t p16 = 1;
	struct rmsg m;
	int ok = 1, s = 100;

#define CASE_E(want, what, cmd, flags, build)                        \
	do {                                                         \
		rmsg_init(&m, family_id, cmd, flags, (uint32_t)s++); \
		build;                                               \
		ok &= refused(what, &m, want);                       \
	} while (0)
#define CASE(...) CASE_E(0, __VA_ARGS__)

	CASE_E(-EINVAL, "unknown attribute type", JOULES_CMD_GET_TASK, 0,
	       (rmsg_attr(&m, JOULES_A_PID, &pid, 4),
		rmsg_attr(&m, JOULES_A_MAX + 7, &pid, 4)));
	CASE("reply-only attribute in a request", JOULES_CMD_GET_TASK, 0,
	     (rmsg_attr(&m, JOULES_A_PID, &pid, 4),
	      rmsg_attr(&m, JOULES_A_ENERGY_UJ, &p64, 8)));
	CASE_E(-EINVAL, "PID as u64", JOULES_CMD_GET_TASK, 0,
	       rmsg_attr(&m, JOULES_A_PID, &p64, 8));
	CASE("PID as u16", JOULES_CMD_GET_TASK, 0,
	     rmsg_attr(&m, JOULES_A_PID, &p16, 2));
	CASE_E(-ERANGE, "PID 0", JOULES_CMD_GET_TASK, 0,
	       rmsg_attr(&m, JOULES_A_PID, &zero, 4));
	CASE_E(-ERANGE, "PID above PID_MAX_LIMIT", JOULES_CMD_GET_TASK, 0,
	       rmsg_attr(&m, JOULES_A_PID, &big, 4));
	CASE("TID empty", JOULES_CMD_GET_TASK, 0,
	     rmsg_attr(&m, JOULES_A_TID, NULL, 0));
	CASE("nla_len beyond the message", JOULES_CMD_GET_TASK, 0,
	     rmsg_attr_raw(&m, JOULES_A_PID, 64, &pid, 4));
	CASE("nla_len below the header", JOULES_CMD_GET_TASK, 0,
	     rmsg_attr_raw(&m, JOULES_A_PID, 2, &pid, 4));
	CASE("trailing garbage after attributes", JOULES_CMD_GET_TASK, 0,
	     (rmsg_attr(&m, JOULES_A_PID, &pid, 4), m.len += 2,
	      m.h.nlmsg_len = (uint32_t)m.len));
	CASE("flag with a payload", JOULES_CMD_DUMP_TASKS, NLM_F_DUMP,
	     rmsg_attr(&m, JOULES_A_THREADS, &pid, 4));
	CASE("PID in a dump request", JOULES_CMD_DUMP_TASKS, NLM_F_DUMP,
	     rmsg_attr(&m, JOULES_A_PID, &pid, 4));
	CASE("attribute to GET_NODE", JOULES_CMD_GET_NODE, 0,
	     rmsg_attr(&m, JOULES_A_PID, &pid, 4));
	CASE("nested flag on a u32", JOULES_CMD_GET_TASK, 0,
	     rmsg_attr(&m, JOULES_A_PID | NLA_F_NESTED, &pid, 4));
	CASE("DUMP_TASKS without NLM_F_DUMP", JOULES_CMD_DUMP_TASKS, 0,
	     (void)0);
	CASE("GET_TASK as a dump", JOULES_CMD_GET_TASK, NLM_F_DUMP,
	     rmsg_attr(&m, JOULES_A_PID, &pid, 4));
	CASE_E(-EOPNOTSUPP, "reply command as a request", JOULES_CMD_TASK, 0,
	       rmsg_attr(&m, JOULES_A_PID, &pid, 4));
	CASE_E(-EOPNOTSUPP, "unknown command", 200, 0, (void)0);
	CASE("command 0", JOULES_CMD_UNSPEC, 0, (void)0);
	CASE("reserved genl header bytes set", JOULES_CMD_GET_TASK, 0,
	     (((struct genlmsghdr *)(m.buf + NLMSG_HDRLEN))->reserved = 1,
	      rmsg_attr(&m, JOULES_A_PID, &pid, 4)));
#undef CASE
#undef CASE_E
	CHECK(ok, "every malformed request refused");
	CHECK(alive() == 0, "module answers afterwards");
}

/* malformed netlink headers: truncated, short and overlong messages */
TEST_F(genl, malformed_headers)
{
	struct rmsg m;
	int fd = raw_open(), err;

	/* Shorter than a genl header: genetlink refuses it. */
	rmsg_init(&m, family_id, JOULES_CMD_GET_TASK, 0, 300);
	m.len = NLMSG_HDRLEN + 2;
	m.h.nlmsg_len = (uint32_t)m.len;
	err = raw_send(fd, m.buf, m.len);
	if (!err)
		err = raw_answer(fd, 300, NULL, NULL);
	CHECK(err < 0 && err != -ETIMEDOUT, "truncated genl header: %d", err);

	/* No payload at all. */
	rmsg_init(&m, family_id, JOULES_CMD_GET_TASK, 0, 301);
	m.len = NLMSG_HDRLEN;
	m.h.nlmsg_len = (uint32_t)m.len;
	err = raw_send(fd, m.buf, m.len);
	if (!err)
		err = raw_answer(fd, 301, NULL, NULL);
	CHECK(err < 0 && err != -ETIMEDOUT, "header only: %d", err);

	/* nlmsg_len beyond the datagram, and below a header: dropped silently. */
	rmsg_init(&m, family_id, JOULES_CMD_GET_TASK, 0, 302);
	m.h.nlmsg_len = 4000;
	raw_send(fd, m.buf, NLMSG_HDRLEN + GENL_HDRLEN);
	rmsg_init(&m, family_id, JOULES_CMD_GET_TASK, 0, 303);
	m.h.nlmsg_len = 8;
	raw_send(fd, m.buf, NLMSG_HDRLEN + GENL_HDRLEN);
	/* A 3-byte datagram. */
	raw_send(fd, m.buf, 3);
	if (fd >= 0)
		close(fd);
	CHECK(alive() == 0, "module answers afterwards");
}

/* Random requests: every one gets an answer and nothing breaks. */
TEST_F(genl, fuzz)
{
	struct jnl *nl = self->nl;

	static const uint8_t cmds[] = {
		JOULES_CMD_UNSPEC,   JOULES_CMD_GET_TASK, JOULES_CMD_DUMP_TASKS,
		JOULES_CMD_GET_NODE, JOULES_CMD_TASK,	  JOULES_CMD_SAMPLE,
		JOULES_CMD_MAX + 1
	};
	unsigned int seed = 12345, answered = 0, accepted = 0, total = 3000;
	struct timeval tv = { .tv_sec = 5 };
	unsigned char payload[256];

	/* A request left unanswered shows up as -EAGAIN instead of a hang. */
	setsockopt(jnl_fd(nl), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	for (unsigned int i = 0; i < total; i++) {
		uint8_t cmd = cmds[rand_r(&seed) % sizeof(cmds)];
		uint16_t flags = rand_r(&seed) % 3 == 0 ? NLM_F_DUMP : 0;
		size_t len = 0;
		int err, nattr = rand_r(&seed) % 5;

		/* Mostly well-formed TLVs with random types and sizes, sometimes noise. */
		for (int a = 0; a < nattr && len + 16 < sizeof(payload); a++) {
			struct nlattr *h = (struct nlattr *)(payload + len);
			size_t dl = (size_t)(rand_r(&seed) % 12);

			h->nla_type =
				(uint16_t)(rand_r(&seed) % (JOULES_A_MAX + 4));
			h->nla_len = (uint16_t)(NLA_HDRLEN + dl);
			if (rand_r(&seed) % 8 == 0)
				h->nla_len = (uint16_t)(rand_r(&seed) % 40);
			for (size_t k = 0; k < dl; k++)
				payload[len + NLA_HDRLEN + k] =
					(unsigned char)rand_r(&seed);
			len += NLA_ALIGN(NLA_HDRLEN + dl);
		}
		if (rand_r(&seed) % 10 == 0)
			len += (size_t)(rand_r(&seed) % 3);
		err = jnl_raw_request(nl, cmd, (uint8_t)(rand_r(&seed) % 3),
				      flags, payload, len);
		if (err != -EAGAIN && err != -EINTR)
			answered++;
		if (err >= 0)
			accepted++;
	}
	DIAG("%u random requests: %u answered, %u accepted", total, answered,
	     accepted);
	CHECK(answered == total, "%u of %u answered", answered, total);
	CHECK(alive() == 0, "module answers afterwards");
	TH_LOG("%u random requests answered, module still working", total);
}

/* GET_NODE: node totals, conserved, generation as in sysfs */
TEST_F(genl, node)
{
	struct jnl *nl = self->nl;
	struct node_rec n;
	char gen[32];
	int err;

	settle();
	err = jnl_get_node(nl, &n);
	CHECK(err == 0, "GET_NODE: %d", err);
	if (!err) {
		CHECK(n.intervals > 0, "intervals %llu",
		      (unsigned long long)n.intervals);
		CHECK(n.energy_uj == n.idle_uj + n.task_uj,
		      "conservation: energy %llu != idle %llu + tasks %llu",
		      (unsigned long long)n.energy_uj,
		      (unsigned long long)n.idle_uj,
		      (unsigned long long)n.task_uj);
		CHECK(n.feat[JL_F_CPU_NS] > 0, "cpu_ns total %llu",
		      (unsigned long long)n.feat[JL_F_CPU_NS]);
		CHECK(n.uptime_ns > 0 && n.tasks_tracked > 0,
		      "uptime %llu tracked %llu",
		      (unsigned long long)n.uptime_ns,
		      (unsigned long long)n.tasks_tracked);
		if (st_read(JOULES_SYSFS "/model/generation", gen,
			    sizeof(gen)) > 0)
			CHECK(n.model_generation == strtoull(gen, NULL, 10),
			      "generation %llu vs sysfs %s",
			      (unsigned long long)n.model_generation, gen);
		CHECK(n.source == REC_SRC_MODEL || n.source == REC_SRC_RAPL,
		      "source %u", n.source);
	}
}

/* samples group: one message per interval with both clocks */
TEST_F(genl, samples)
{
	struct sample_rec s[3];
	uint64_t iv = (uint64_t)st_interval_ms() * 1000000ull;
	struct jnl *nl;
	int got = 0, err;

	err = jnl_open(&nl);
	if (!err)
		err = jnl_subscribe(nl, JNL_GRP_SAMPLES);
	CHECK(err == 0, "subscribe as root: %d", err);
	while (!err && got < 3) {
		struct jnl_event ev;
		int r = jnl_next_event(nl, &ev,
				       (int)(iv / 1000000) * 10 + 2000);

		if (r <= 0) {
			CHECK(0, "no sample: %d", r);
			break;
		}
		if (ev.type == JNL_EV_SAMPLE)
			s[got++] = ev.sample;
	}
	if (got == 3) {
		uint64_t rt = now_ns(CLOCK_REALTIME),
			 mono = now_ns(CLOCK_MONOTONIC);

		CHECK(s[1].seq == s[0].seq + 1 && s[2].seq == s[1].seq + 1,
		      "seq %llu %llu %llu", (unsigned long long)s[0].seq,
		      (unsigned long long)s[1].seq,
		      (unsigned long long)s[2].seq);
		for (int i = 0; i < 3; i++) {
			/*
			 * Never early; how late under emulation is not
			 * asserted. Consecutive samples tile time exactly:
			 * end - previous end = interval.
			 */
			CHECK(s[i].interval_ns > iv / 2,
			      "interval_ns %llu vs %llu",
			      (unsigned long long)s[i].interval_ns,
			      (unsigned long long)iv);
			if (i)
				CHECK(s[i].interval_ns ==
					      s[i].monotonic_ns -
						      s[i - 1].monotonic_ns,
				      "interval_ns %llu, monotonic step %llu",
				      (unsigned long long)s[i].interval_ns,
				      (unsigned long long)(s[i].monotonic_ns -
							   s[i - 1].monotonic_ns));
			CHECK(s[i].realtime_ns <= rt &&
				      s[i].realtime_ns + 10000000000ull > rt,
			      "realtime %llu now %llu",
			      (unsigned long long)s[i].realtime_ns,
			      (unsigned long long)rt);
			CHECK(s[i].monotonic_ns <= mono &&
				      s[i].monotonic_ns + 10000000000ull > mono,
			      "monotonic %llu now %llu",
			      (unsigned long long)s[i].monotonic_ns,
			      (unsigned long long)mono);
			CHECK(s[i].idle_uj <= s[i].energy_uj,
			      "idle %llu > energy %llu",
			      (unsigned long long)s[i].idle_uj,
			      (unsigned long long)s[i].energy_uj);
			CHECK(s[i].present & REC_F(JL_F_CPU_NS),
			      "cpu_ns present");
		}
		CHECK(s[2].monotonic_ns > s[1].monotonic_ns &&
			      s[1].monotonic_ns > s[0].monotonic_ns,
		      "monotonic timestamps increase");
	}
	jnl_close(nl);
}

/*
 * A new interval_ms is in force at once: after a 60 s interval was set,
 * setting 100 ms again must not leave the node without samples until the
 * long interval ends (found by 81-churn after 80-fuzz-sysfs left a 60 s
 * interval pending, and nothing was folded for a minute).
 */
TEST_F(genl, interval_change)
{
	char old[32];
	struct sample_rec s[2];
	struct jnl_event ev;
	struct jnl *nl;
	double t0 = 0;
	int err;

	if (st_read(JOULES_SYSFS "/interval_ms", old, sizeof(old)) <= 0)
		strcpy(old, "100\n");
	err = jnl_open(&nl);
	if (!err)
		err = jnl_subscribe(nl, JNL_GRP_SAMPLES);
	CHECK(err == 0, "subscribe: %d", err);
	if (!err) {
		/*
		 * One sample after the write: the 60 s tick is queued now.
		 * Old samples go before the write, not after: a tick between
		 * the write and the drain queues the next one 60 s away, and
		 * its sample would be dropped (seen on debug-rt).
		 */
		while (jnl_next_event(nl, &ev, 0) == 1)
			jnl_event_free(&ev);
		CHECK(st_write(JOULES_SYSFS "/interval_ms", "60000", 5) == 0,
		      "set 60000 ms");
		CHECK(st_samples(nl, s, 1) == 1, "a sample after setting 60 s");
		CHECK(st_write(JOULES_SYSFS "/interval_ms", "100", 3) == 0,
		      "set 100 ms");
		t0 = st_now();
		CHECK(st_fresh_samples(nl, s, 2) == 2,
		      "two samples after setting 100 ms");
		CHECK(st_now() - t0 < 2.0,
		      "they came in %.2f s, not after the 60 s interval",
		      st_now() - t0);
		jnl_close(nl);
	}
	st_write(JOULES_SYSFS "/interval_ms", old, strlen(old));
}

/*
 * The exit record of a child equals its last per-pid read: the child burns
 * CPU, blocks on a pipe; we read /proc/energy/<pid> after two intervals,
 * release it, and it exits at once.
 */
TEST_F(genl, exit_record)
{
	uint64_t iv = (uint64_t)st_interval_ms() * 1000000ull, max_sample = 0;
	unsigned long long f_energy = 0, f_cpu = 0;
	int go[2], ready[2], err, have_file = 0;
	struct task_rec ex;
	bool got = false;
	char path[64], body[2048], c;
	struct jnl *nl;
	pid_t pid;
	double deadline, t_rel, t_reaped;
	uint64_t after_ns = 0;

	err = jnl_open(&nl);
	if (!err)
		err = jnl_subscribe(nl, JNL_GRP_EXITS | JNL_GRP_SAMPLES);
	ASSERT_EQ(0, err);
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(ready));
	pid = fork();
	if (pid == 0) {
		close(go[1]);
		close(ready[0]);
		st_burn_cpu(0.3);
		if (write(ready[1], "r", 1) != 1)
			_exit(2);
		if (read(go[0], &c, 1) < 0)
			_exit(3);
		_exit(0);
	}
	close(go[0]);
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1)
		CHECK(0, "child did not get ready");
	usleep((useconds_t)(2 * iv / 1000));
	snprintf(path, sizeof(path), "/proc/energy/%d", pid);
	if (st_read(path, body, sizeof(body)) > 0 &&
	    !st_kv(body, "energy_uj", &f_energy) &&
	    !st_kv(body, "cpu_time_ns", &f_cpu))
		have_file = 1;
	CHECK(have_file, "read %s", path);
	/*
	 * Release: the child's last action is this read returning and _exit().
	 * What it runs after the file was read is bounded by the wall time from
	 * here to the record's arrival, not to its reaping: waitpid() returns
	 * at exit_notify(), and the child runs on to its last switch-out (for
	 * milliseconds when the host deschedules the vCPU), which the record
	 * is built after.
	 */
	t_rel = st_now();
	if (write(go[1], "g", 1) != 1)
		CHECK(0, "release failed");
	close(go[1]);
	waitpid(pid, NULL, 0);
	t_reaped = st_now();
	deadline = st_now() + 5 + 20.0 * (double)iv / 1e9;
	while (!got && st_now() < deadline) {
		struct jnl_event ev;
		int r = jnl_next_event(nl, &ev, 500);

		if (r < 0 && r != -EINTR && r != -ENOBUFS) {
			CHECK(0, "receive: %d", r);
			break;
		}
		if (r <= 0)
			continue;
		if (ev.type == JNL_EV_SAMPLE &&
		    ev.sample.energy_uj > max_sample)
			max_sample = ev.sample.energy_uj;
		if (ev.type == JNL_EV_EXIT && ev.exit.pid == (uint32_t)pid) {
			/* 1 ms: the task clock is not CLOCK_MONOTONIC */
			after_ns =
				(uint64_t)((st_now() - t_rel) * 1e9) + 1000000;
			ex = ev.exit;
			got = true;
		}
	}
	CHECK(got, "exit record for %d arrived", pid);
	if (got && have_file) {
		DIAG("file: energy %llu cpu %llu; exit record: energy %llu cpu %llu; "
		     "largest interval energy %llu; reaped %.1f ms after release",
		     f_energy, f_cpu, (unsigned long long)ex.energy_uj,
		     (unsigned long long)ex.feat[JL_F_CPU_NS],
		     (unsigned long long)max_sample, (t_reaped - t_rel) * 1e3);
		CHECK(ex.exited && ex.tgid == (uint32_t)pid,
		      "exited %d tgid %u", ex.exited, ex.tgid);
		CHECK(ex.feat[JL_F_CPU_NS] >= f_cpu &&
			      ex.feat[JL_F_CPU_NS] - f_cpu <= after_ns,
		      "cpu_ns: exit %llu vs file %llu (%llu ns from release to the record)",
		      (unsigned long long)ex.feat[JL_F_CPU_NS], f_cpu,
		      (unsigned long long)after_ns);
		CHECK(ex.energy_uj >= f_energy &&
			      ex.energy_uj - f_energy <=
				      max_sample * (after_ns / iv + 2),
		      "energy: exit %llu vs file %llu (largest interval's node energy %llu)",
		      (unsigned long long)ex.energy_uj, f_energy,
		      (unsigned long long)max_sample);
		CHECK(f_cpu >= 250000000ull,
		      "the child's 0.3 s of CPU is counted: %llu", f_cpu);
		CHECK(f_energy > 0, "the child was charged energy");
	}
	close(ready[0]);
	jnl_close(nl);
}

/* What an unprivileged child could do, reported back through a pipe. */
struct unpriv {
	int opened;
	int sub_samples;
	int sub_exits;
	int get_root;
	int get_self;
	int get_node;
	int dump;
	size_t dumped;
	size_t foreign;
	int self_in_dump;
};

static void unpriv_child(int wfd, pid_t root_pid)
{
	struct unpriv u = { 0 };
	struct task_rec t, *recs;
	struct node_rec n;
	struct jnl *nl;
	size_t nrec;

	if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
		_exit(10);
	u.opened = jnl_open(&nl);
	if (!u.opened) {
		u.sub_samples = jnl_subscribe(nl, JNL_GRP_SAMPLES);
		u.sub_exits = jnl_subscribe(nl, JNL_GRP_EXITS);
		u.get_root = jnl_get_task(nl, root_pid, false, &t);
		u.get_self = jnl_get_task(nl, getpid(), false, &t);
		u.get_node = jnl_get_node(nl, &n);
		u.dump = jnl_dump_tasks(nl, false, &recs, &nrec);
		if (!u.dump) {
			u.dumped = nrec;
			for (size_t i = 0; i < nrec; i++) {
				if (recs[i].uid != 65534)
					u.foreign++;
				if (recs[i].pid == (uint32_t)getpid())
					u.self_in_dump = 1;
			}
			free(recs);
		}
		jnl_close(nl);
	}
	if (write(wfd, &u, sizeof(u)) != sizeof(u))
		_exit(11);
	_exit(0);
}

static int run_unpriv(struct unpriv *u)
{
	int p[2];
	pid_t pid, root = getpid();
	ssize_t n;

	if (pipe(p))
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		st_burn_cpu(0.01);
		unpriv_child(p[1], root);
	}
	close(p[1]);
	n = read(p[0], u, sizeof(*u));
	close(p[0]);
	waitpid(pid, NULL, 0);
	return n == sizeof(*u) ? 0 : -1;
}

/* Group ids the family was given, via the controller. */
static int group_ids(int *samples, int *exits)
{
	struct jnl *nl;
	int err = jnl_open(&nl);

	if (err)
		return err;
	*samples = jnl_group_id(nl, JNL_GRP_SAMPLES);
	*exits = jnl_group_id(nl, JNL_GRP_EXITS);
	jnl_close(nl);
	return 0;
}

/* bind() with a groups bitmask as uid 65534: refused for our groups below 32. */
static int unpriv_bind(int id)
{
	pid_t pid;
	int st;

	if (id <= 0 || id >= 32)
		return 1;
	pid = fork();
	if (pid == 0) {
		struct sockaddr_nl sa = { .nl_family = AF_NETLINK,
					  .nl_groups = 1u << (id - 1) };
		int fd;

		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(10);
		fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC);
		if (fd < 0)
			_exit(11);
		_exit(bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 ? 1 :
		      errno == EPERM					? 0 :
									  12);
	}
	waitpid(pid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

TEST_F(genl, unpriv)
{
	struct unpriv u;
	int gs = -1, ge = -1;

	ASSERT_EQ(0, run_unpriv(&u))
	TH_LOG("unprivileged child reported nothing");
	group_ids(&gs, &ge);
	DIAG("group ids: samples %d, exits %d (bind() path checked below 32)",
	     gs, ge);
	CHECK(u.opened == 0, "open as nobody: %d", u.opened);
	CHECK(u.sub_samples == -EPERM, "join samples as nobody: %d",
	      u.sub_samples);
	CHECK(unpriv_bind(gs),
	      "bind() to samples group %d as nobody was not refused", gs);
	/* Up to here: uid 65534 cannot join the samples group (EPERM) */
	CHECK(u.sub_exits == -EPERM, "join exits as nobody: %d", u.sub_exits);
	CHECK(unpriv_bind(ge),
	      "bind() to exits group %d as nobody was not refused", ge);
	/* Up to here: uid 65534 cannot join the exits group (EPERM) */
	CHECK(u.get_root == -EPERM, "GET_TASK of root's process: %d",
	      u.get_root);
	CHECK(u.get_self == 0, "GET_TASK of itself: %d", u.get_self);
	CHECK(u.get_node == -EPERM, "GET_NODE: %d", u.get_node);
	/* Up to here: uid 65534: GET_TASK of root's task is EPERM, its own works, GET_NODE is EPERM */
	CHECK(u.dump == 0, "dump: %d", u.dump);
	CHECK(u.foreign == 0, "%zu of %zu dumped records belong to other users",
	      u.foreign, u.dumped);
	CHECK(u.self_in_dump, "own process in the dump");
	/* Up to here: uid 65534: DUMP_TASKS skips other users' tasks */
}

int main(int argc, char **argv)
{
	struct jnl *nl;
	int err;

	if (access(JOULES_SYSFS, F_OK)) {
		printf("1..0 # SKIP joules module not loaded\n");
		return KSFT_SKIP;
	}
	err = jnl_open(&nl);
	if (err) {
		printf("1..0 # joules netlink: %s\n",
		       jnl_strerror(JNL_OP_OPEN, err));
		return KSFT_FAIL;
	}
	family_id = jnl_family_id(nl);
	jnl_close(nl);
	return test_harness_run(argc, argv);
}
