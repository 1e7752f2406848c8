// SPDX-License-Identifier: GPL-2.0
/*
 * The features added for the model (issue 18), in the per-thread file:
 * socket bytes from the sock_send_length/sock_recv_length tracepoints
 * (kernels 6.3+; absent, not zero, before), IPv4/IPv6 only, a peek not
 * counted; page-cache reads from the task's read(2) totals minus storage
 * reads. Each is exact here: one thread does one known thing, and the
 * file reports counts as of the read.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/utsname.h>

#include "kselftest_harness.h"
#include "selftest.h"

#define NET_BYTES (3u << 20)
#define FILE_BYTES (8u << 20)
#define PEEK_BYTES 4096u

/* Does this kernel have the socket length tracepoints (6.3+)? */
static bool kernel_has_sock_tp(void)
{
	struct utsname u;
	int maj = 0, min = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &maj, &min) != 2)
		return false;
	return maj > 6 || (maj == 6 && min >= 3);
}

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* The line of key in a thread's file: its value, or -2 "absent", -1 none. */
static long long thread_feat(pid_t tid, const char *key)
{
	char path[96], b[4096], v[32];

	snprintf(path, sizeof(path), "/proc/energy/threads/%d/%d", getpid(),
		 tid);
	if (st_read(path, b, sizeof(b)) <= 0 || st_kvs(b, key, v, sizeof(v)))
		return -1;
	if (!strcmp(v, "absent"))
		return -2;
	return strtoll(v, NULL, 10);
}

struct rx {
	int fd;
	pid_t tid;
	size_t got;
	int unix_fd;
};

/* Receive NET_BYTES; peek first (not counted); drain a Unix socket too. */
static void *receiver(void *arg)
{
	struct rx *r = arg;
	static char buf[65536];
	ssize_t n;

	r->tid = gettid_();
	n = recv(r->fd, buf, PEEK_BYTES, MSG_PEEK | MSG_WAITALL);
	if (n != (ssize_t)PEEK_BYTES)
		return NULL;
	while (r->got < NET_BYTES) {
		n = recv(r->fd, buf, sizeof(buf), 0);
		if (n <= 0)
			return NULL;
		r->got += (size_t)n;
	}
	n = recv(r->unix_fd, buf, sizeof(buf), MSG_WAITALL);
	return NULL;
}

static int tcp_pair(int *a, int *b)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int l = socket(AF_INET, SOCK_STREAM, 0);

	if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(l, 1) || getsockname(l, (struct sockaddr *)&sa, &len))
		return -1;
	*a = socket(AF_INET, SOCK_STREAM, 0);
	if (*a < 0 || connect(*a, (struct sockaddr *)&sa, sizeof(sa)))
		return -1;
	*b = accept(l, NULL, NULL);
	close(l);
	return *b < 0 ? -1 : 0;
}

struct tx {
	int fd, unix_fd;
	pid_t tid;
	int err;
	bool done, measured;
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

/* Send NET_BYTES on TCP and 64 KiB on a Unix socket; then wait to be read. */
static void *sender(void *arg)
{
	struct tx *t = arg;
	static char buf[65536];
	size_t sent = 0;

	t->tid = gettid_();
	while (sent < NET_BYTES) {
		size_t want = NET_BYTES - sent < sizeof(buf) ?
				      NET_BYTES - sent :
				      sizeof(buf);
		ssize_t n = send(t->fd, buf, want, 0);

		if (n <= 0) {
			t->err = errno;
			break;
		}
		sent += (size_t)n;
	}
	if (send(t->unix_fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf))
		t->err = errno;
	/* Stay alive, so that its thread file is still there to read. */
	pthread_mutex_lock(&t->lock);
	t->done = true;
	pthread_cond_broadcast(&t->cond);
	while (!t->measured)
		pthread_cond_wait(&t->cond, &t->lock);
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

TEST(socket_bytes)
{
	struct tx t = { .lock = PTHREAD_MUTEX_INITIALIZER,
			.cond = PTHREAD_COND_INITIALIZER };
	struct rx r = { 0 };
	int a, b, u[2];
	pthread_t ts;
	long long tx, rx, utx;

	ASSERT_EQ(0, tcp_pair(&a, &b));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, u));
	/* Big enough buffers that the Unix send never blocks. */
	t.fd = a;
	t.unix_fd = u[0];
	r.fd = b;
	r.unix_fd = u[1];
	ASSERT_EQ(0, pthread_create(&ts, NULL, sender, &t));
	/* Received here, so that the receiver's thread file stays to read. */
	receiver(&r);
	pthread_mutex_lock(&t.lock);
	while (!t.done)
		pthread_cond_wait(&t.cond, &t.lock);
	pthread_mutex_unlock(&t.lock);
	ASSERT_EQ(0, t.err);
	ASSERT_EQ(NET_BYTES, r.got);

	tx = thread_feat(t.tid, "net_tx_bytes");
	rx = thread_feat(t.tid, "net_rx_bytes");
	utx = thread_feat(r.tid, "net_rx_bytes");
	TH_LOG("sender %d: net_tx_bytes %lld net_rx_bytes %lld; receiver %d: net_rx_bytes %lld",
	       t.tid, tx, rx, r.tid, utx);
	if (!kernel_has_sock_tp()) {
		/* 6.1: no tracepoints, so absent, never a made-up 0. */
		EXPECT_EQ(-2, tx);
		EXPECT_EQ(-2, rx);
		EXPECT_EQ(-2, utx);
	} else {
		/* Exactly the TCP bytes: not the Unix socket's, not the peek. */
		EXPECT_EQ((long long)NET_BYTES, tx);
		EXPECT_EQ(0, rx);
		EXPECT_EQ((long long)NET_BYTES, utx);
		EXPECT_EQ(0, thread_feat(r.tid, "net_tx_bytes"));
	}
	pthread_mutex_lock(&t.lock);
	t.measured = true;
	pthread_cond_broadcast(&t.cond);
	pthread_mutex_unlock(&t.lock);
	pthread_join(ts, NULL);
	close(a);
	close(b);
	close(u[0]);
	close(u[1]);
}

struct reader {
	const char *path;
	pid_t tid;
	size_t got;
	bool done, measured;
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

/* read(2) the whole file, from the page cache (tmpfs has no storage). */
static void *read_file(void *arg)
{
	struct reader *r = arg;
	static char buf[65536];
	int fd = open(r->path, O_RDONLY);
	ssize_t n;

	r->tid = gettid_();
	while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0)
		r->got += (size_t)n;
	if (fd >= 0)
		close(fd);
	pthread_mutex_lock(&r->lock);
	r->done = true;
	pthread_cond_broadcast(&r->cond);
	while (!r->measured)
		pthread_cond_wait(&r->cond, &r->lock);
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

TEST(pagecache_reads)
{
	struct reader r = { .path = "/tmp/13-features.dat",
			    .lock = PTHREAD_MUTEX_INITIALIZER,
			    .cond = PTHREAD_COND_INITIALIZER };
	static char buf[65536];
	char io[2048];
	long long pc, disk = 0;
	unsigned long long rchar;
	pthread_t t;
	size_t left = FILE_BYTES;
	int fd;

	if (st_read("/proc/self/io", io, sizeof(io)) <= 0 ||
	    st_kv(io, "rchar", &rchar))
		SKIP(return, "no /proc/<pid>/io rchar (CONFIG_TASK_XACCT off)");
	fd = open(r.path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ASSERT_LE(0, fd);
	memset(buf, 'j', sizeof(buf));
	while (left) {
		ssize_t n =
			write(fd, buf, left < sizeof(buf) ? left : sizeof(buf));

		ASSERT_LT(0, n);
		left -= (size_t)n;
	}
	close(fd);

	ASSERT_EQ(0, pthread_create(&t, NULL, read_file, &r));
	pthread_mutex_lock(&r.lock);
	while (!r.done)
		pthread_cond_wait(&r.cond, &r.lock);
	pthread_mutex_unlock(&r.lock);
	ASSERT_EQ(FILE_BYTES, r.got);
	pc = thread_feat(r.tid, "pagecache_bytes");
	{
		char path[96], b[4096];
		unsigned long long rd = 0;

		snprintf(path, sizeof(path), "/proc/energy/threads/%d/%d",
			 getpid(), r.tid);
		if (st_read(path, b, sizeof(b)) > 0 &&
		    !st_kv(b, "read_bytes", &rd))
			disk = (long long)rd;
	}
	TH_LOG("reader %d: pagecache_bytes %lld read_bytes %lld of %u read(2)",
	       r.tid, pc, disk, FILE_BYTES);
	/* Every byte came from memory: all of it is page-cache reading. */
	EXPECT_EQ((long long)FILE_BYTES - disk, pc);
	EXPECT_EQ(0, disk);

	pthread_mutex_lock(&r.lock);
	r.measured = true;
	pthread_cond_broadcast(&r.cond);
	pthread_mutex_unlock(&r.lock);
	pthread_join(t, NULL);
	unlink(r.path);
}

/* Node samples say which of them this kernel counts. */
TEST(samples_present)
{
	struct sample_rec s[2];
	struct jnl *nl = NULL;
	int n;

	if (jnl_open(&nl) || jnl_subscribe(nl, JNL_GRP_SAMPLES))
		SKIP(return, "no netlink samples here");
	n = st_fresh_samples(nl, s, 2);
	jnl_close(nl);
	ASSERT_EQ(2, n);
	EXPECT_EQ(kernel_has_sock_tp(), !!(s[1].present & REC_F(JL_F_NET_TX)));
	EXPECT_EQ(kernel_has_sock_tp(), !!(s[1].present & REC_F(JL_F_NET_RX)));
	EXPECT_TRUE(s[1].present & REC_F(JL_F_PAGECACHE));
}

TEST_HARNESS_MAIN
