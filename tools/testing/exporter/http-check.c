// SPDX-License-Identifier: GPL-2.0
/*
 * HTTP behaviour of a running joules-exporter, good clients and bad ones;
 * TAP on stdout. The caller starts the exporter (on the host, or in a
 * QEMU guest behind a forwarded port) and watches its memory.
 *
 *   http-check [-t TIMEOUT] [-m MAXCONN] [-n CONNS] [-l LIMIT] [-p PATH] HOST PORT
 *   http-check -g PATH [-a ACCEPT] HOST PORT   (one GET: the body on stdout,
 *                                               exit 0 on status 200)
 *
 * TIMEOUT is the exporter's --web.timeout (default 10), MAXCONN its
 * --web.max-connections (default 512): with CONNS (default 500) idle
 * connections held, a scrape must still succeed when CONNS < MAXCONN.
 * LIMIT (-l, default 60) is how long CONNS scrapes at once may take in all
 * (slower under emulation).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

/* A test waits up to LIMIT (or TIMEOUT + 10) seconds on its own. */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 600

static struct sockaddr_storage peer;
static socklen_t peer_len;
static const char *host_hdr = "localhost";
static const char *path = "/metrics";
/* The options (see above), for the tests. */
static int maxconn = 512, conns = 500;
static double limit = 60, timeout = 10;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A connected socket (blocking, 10 s send/receive timeouts), or -1. */
static int dial(bool nonblock)
{
	struct timeval tv = { .tv_sec = 10 };
	int fd = socket(
		peer.ss_family,
		SOCK_STREAM | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0), 0);

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&peer, peer_len) &&
	    !(nonblock && errno == EINPROGRESS)) {
		close(fd);
		return -1;
	}
	return fd;
}

static bool send_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n <= 0)
			return false;
		buf += n;
		len -= (size_t)n;
	}
	return true;
}

struct resp {
	int status; /* 0: no answer */
	char ctype[128];
	char *body; /* malloc()ed, NUL-terminated */
	size_t len;
};

/*
 * A chunked body (Transfer-Encoding: chunked) decoded in place: its length,
 * or (size_t)-1 if it is not well formed. Prometheus' API sends one when
 * its answer outgrows Go's first write buffer (2 KiB).
 */
static size_t dechunk(char *body, size_t len)
{
	char *in = body, *end = body + len, *out = body, *p;
	unsigned long n;

	for (;;) {
		n = strtoul(in, &p, 16);
		if (p == in || !(p = strstr(p, "\r\n")))
			return (size_t)-1;
		in = p + 2;
		if (!n)
			break;
		if (n > (size_t)(end - in) || (size_t)(end - in) - n < 2 ||
		    memcmp(in + n, "\r\n", 2))
			return (size_t)-1;
		memmove(out, in, n);
		out += n;
		in += n + 2;
	}
	*out = 0;
	return (size_t)(out - body);
}

/* Read a whole response (the request said Connection: close). */
static void read_resp(int fd, struct resp *r)
{
	size_t cap = 65536, len = 0;
	char *buf = malloc(cap), *hdr_end, *ct;
	ssize_t n;

	memset(r, 0, sizeof(*r));
	if (!buf)
		return;
	while ((n = recv(fd, buf + len, cap - len - 1, 0)) > 0) {
		len += (size_t)n;
		if (len + 1 == cap) {
			char *b = realloc(buf, cap * 2);

			if (!b)
				break;
			buf = b;
			cap *= 2;
		}
	}
	buf[len] = 0;
	if (sscanf(buf, "HTTP/1.%*d %d", &r->status) != 1)
		r->status = 0;
	hdr_end = strstr(buf, "\r\n\r\n");
	ct = strcasestr(buf, "\r\nContent-Type:");
	if (ct && (!hdr_end || ct < hdr_end)) {
		ct += 15;
		while (*ct == ' ')
			ct++;
		snprintf(r->ctype, sizeof(r->ctype), "%.*s",
			 (int)strcspn(ct, "\r\n"), ct);
	}
	if (hdr_end) {
		char *te = strcasestr(buf, "\r\nTransfer-Encoding:");
		char *ch = te ? strcasestr(te, "chunked") : NULL;

		r->len = len - (size_t)(hdr_end + 4 - buf);
		if (ch && ch < hdr_end) {
			r->len = dechunk(hdr_end + 4, r->len);
			if (r->len == (size_t)-1) {
				r->len = 0;
				r->status = 0; /* not an answer to trust */
			}
		}
		r->body = strdup(hdr_end + 4);
	}
	free(buf);
}

/* One request; extra is more header lines ("Name: value\r\n..."). */
static int request(const char *method, const char *p, const char *extra,
		   struct resp *r)
{
	char req[2048];
	int fd = dial(false);

	memset(r, 0, sizeof(*r));
	if (fd < 0)
		return -1;
	snprintf(req, sizeof(req),
		 "%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n%s\r\n",
		 method, p, host_hdr, extra ? extra : "");
	if (!send_all(fd, req, strlen(req))) {
		close(fd);
		return -1;
	}
	read_resp(fd, r);
	close(fd);
	return 0;
}

static void resp_free(struct resp *r)
{
	free(r->body);
	r->body = NULL;
}

/* A good scrape: 200, text format, our families. */
static bool scrape_ok(void)
{
	struct resp r;
	bool ok;

	request("GET", path, NULL, &r);
	ok = r.status == 200 && r.body &&
	     strstr(r.body, "joules_module_loaded");
	if (!ok)
		DIAG("scrape: status %d", r.status);
	resp_free(&r);
	return ok;
}

/* N: text 0.0.4 by default, OpenMetrics when asked */
TEST(formats)
{
	struct resp r;

	request("GET", path, NULL, &r);
	CHECK(r.status == 200, "status %d", r.status);
	CHECK(!strcmp(r.ctype, "text/plain; version=0.0.4; charset=utf-8"),
	      "content type '%s'", r.ctype);
	CHECK(r.body && strstr(r.body, "# TYPE joules_module_loaded gauge"),
	      "HELP/TYPE");
	CHECK(r.body && !strstr(r.body, "# EOF"), "no EOF in 0.0.4");
	resp_free(&r);
	request("GET", path,
		"Accept: application/openmetrics-text;version=1.0.0,"
		"application/openmetrics-text;version=0.0.1;q=0.75,"
		"text/plain;version=0.0.4;q=0.5,*/*;q=0.1\r\n",
		&r);
	CHECK(r.status == 200, "status %d", r.status);
	CHECK(!strcmp(r.ctype,
		      "application/openmetrics-text; version=1.0.0; charset=utf-8"),
	      "content type '%s'", r.ctype);
	CHECK(r.body && r.len >= 6 && !strcmp(r.body + r.len - 6, "# EOF\n"),
	      "OpenMetrics ends with # EOF");
	resp_free(&r);
	TH_LOG("%s: text 0.0.4 by default, OpenMetrics when asked", path);
}

/* landing page, 404, 405, HEAD */
TEST(paths)
{
	struct resp r;
	char href[300];

	snprintf(href, sizeof(href), "href=\"%s\"", path);
	request("GET", "/", NULL, &r);
	CHECK(r.status == 200 && strstr(r.ctype, "text/html") && r.body &&
		      strstr(r.body, href),
	      "landing page: %d '%s'", r.status, r.ctype);
	resp_free(&r);
	request("GET", "/nope", NULL, &r);
	CHECK(r.status == 404, "unknown path: %d", r.status);
	resp_free(&r);
	request("GET", "/metrics/../etc/passwd", NULL, &r);
	CHECK(r.status == 404, "traversal: %d", r.status);
	resp_free(&r);
	request("POST", path, "Content-Length: 5\r\n", &r);
	CHECK(r.status == 405, "POST: %d", r.status);
	resp_free(&r);
	request("HEAD", path, NULL, &r);
	CHECK(r.status == 200 && r.len == 0, "HEAD: %d, %zu body bytes",
	      r.status, r.len);
	resp_free(&r);
}

/* huge headers are refused, the exporter keeps serving */
TEST(huge_headers)
{
	size_t big = 1 << 20;
	char *hdr = malloc(big + 64);
	struct resp r;
	int fd;

	memcpy(hdr, "X-Big: ", 7);
	memset(hdr + 7, 'a', big);
	strcpy(hdr + 7 + big, "\r\n");
	fd = dial(false);
	if (fd >= 0) {
		char start[256];

		snprintf(start, sizeof(start),
			 "GET %s HTTP/1.1\r\nHost: %s\r\n", path, host_hdr);
		send_all(fd, start, strlen(start));
		/* The server may stop reading and answer early: fine. */
		send_all(fd, hdr, strlen(hdr));
		send_all(fd, "\r\n", 2);
		read_resp(fd, &r);
		close(fd);
		CHECK(r.status == 431 || r.status == 413 || r.status == 400 ||
			      r.status == 0,
		      "1 MiB header answered %d", r.status);
		DIAG("1 MiB header: status %d", r.status);
		resp_free(&r);
	}
	/* Many headers, each small. */
	fd = dial(false);
	if (fd >= 0) {
		char line[64];

		snprintf(line, sizeof(line), "GET %s HTTP/1.1\r\n", path);
		send_all(fd, line, strlen(line));
		for (int i = 0; i < 20000; i++) {
			snprintf(line, sizeof(line), "X-H%d: v\r\n", i);
			if (!send_all(fd, line, strlen(line)))
				break;
		}
		send_all(fd, "\r\n", 2);
		read_resp(fd, &r);
		close(fd);
		CHECK(r.status != 200, "20,000 headers answered 200");
		resp_free(&r);
	}
	free(hdr);
	CHECK(scrape_ok(), "serving after");
}

/* Wait until the server closes fd; seconds waited, or -1 after limit. */
static double wait_closed(int fd, double limit)
{
	double t0 = now();
	char b[512];

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		double left = limit - (now() - t0);

		if (left <= 0)
			return -1;
		if (poll(&p, 1, (int)(left * 1000) + 1) > 0) {
			ssize_t n = recv(fd, b, sizeof(b), MSG_DONTWAIT);

			if (n == 0 || (n < 0 && errno != EAGAIN))
				return now() - t0;
		}
	}
}

/* a client that never finishes its request */
TEST(never_finishes)
{
	const char part[] = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ";
	int fd = dial(false);
	double t;

	CHECK(fd >= 0, "connect");
	if (fd < 0) {
		return;
	}
	send_all(fd, part, sizeof(part) - 1);
	/* The others are served meanwhile. */
	CHECK(scrape_ok(), "scrape while a request hangs");
	t = wait_closed(fd, timeout + 10);
	CHECK(t >= 0, "not closed within %.0f s", timeout + 10);
	DIAG("unfinished request closed after %.1f s (timeout %.0f s)", t,
	     timeout);
	close(fd);
}

/* n connections at once, each with a partial request; fds in fds[]. */
static int open_many(int *fds, int n)
{
	const char part[] = "GET /metrics HTTP/1.1\r\n";
	int ok = 0;

	for (int i = 0; i < n; i++)
		fds[i] = dial(true);
	for (int i = 0; i < n; i++) {
		struct pollfd p = { .fd = fds[i], .events = POLLOUT };

		if (fds[i] < 0)
			continue;
		if (poll(&p, 1, 5000) == 1 &&
		    send(fds[i], part, sizeof(part) - 1, MSG_NOSIGNAL) > 0)
			ok++;
	}
	return ok;
}

static void close_many(int *fds, int n)
{
	for (int i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* N connections that never finish, at once */
TEST(many_idle)
{
	int n = conns;
	int *fds = calloc((size_t)n, sizeof(int));
	int ok = open_many(fds, n);
	bool during;

	DIAG("%d of %d connections opened with partial requests", ok, n);
	usleep(500000);
	during = scrape_ok();
	if (n < maxconn)
		CHECK(during, "a scrape failed with %d idle connections", n);
	else
		DIAG("scrape with %d idle connections (limit %d): %s", n,
		     maxconn, during ? "served" : "refused");
	close_many(fds, n);
	free(fds);
	usleep(500000);
	CHECK(scrape_ok(), "serving after");
	TH_LOG("%d connections that never finish, at once", n);
}

/* Parse what one connection received. */
static int status_of(const char *buf)
{
	int st = 0;

	if (sscanf(buf, "HTTP/1.%*d %d", &st) != 1)
		return 0;
	return st;
}

/* N scrapes at once are served or refused, none hang */
TEST(many_scrapes)
{
	int n = conns;
	char req[256];
	int *fds = calloc((size_t)n, sizeof(int));
	char(*head)[16] = calloc((size_t)n, 16);
	size_t *got = calloc((size_t)n, sizeof(size_t));
	struct pollfd *p = calloc((size_t)n, sizeof(*p));
	int ok = 0, busy = 0, closed = 0, other = 0, open = 0;
	double t0 = now(), t;

	snprintf(req, sizeof(req),
		 "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n",
		 path, host_hdr);
	for (int i = 0; i < n; i++)
		fds[i] = dial(true);
	for (int i = 0; i < n; i++) {
		struct pollfd w = { .fd = fds[i], .events = POLLOUT };

		if (fds[i] >= 0 && poll(&w, 1, 5000) == 1)
			send(fds[i], req, strlen(req), MSG_NOSIGNAL);
	}
	/* Read every answer as it comes, all at once, until the limit. */
	for (int i = 0; i < n; i++) {
		p[i].fd = fds[i];
		p[i].events = POLLIN;
		if (fds[i] >= 0)
			open++;
		else
			closed++;
	}
	while (open && (t = now() - t0) < limit) {
		if (poll(p, (nfds_t)n, 1000) <= 0)
			continue;
		for (int i = 0; i < n; i++) {
			char buf[4096];
			ssize_t r;

			if (p[i].fd < 0 ||
			    !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			r = recv(p[i].fd, buf, sizeof(buf), MSG_DONTWAIT);
			if (r > 0) {
				if (got[i] < sizeof(head[i]) - 1) {
					size_t k = sizeof(head[i]) - 1 - got[i];

					memcpy(head[i] + got[i], buf,
					       (size_t)r < k ? (size_t)r : k);
				}
				got[i] += (size_t)r;
				continue;
			}
			if (r < 0 && errno == EAGAIN)
				continue;
			/* End of the response, or the connection refused. */
			switch (got[i] ? status_of(head[i]) : 0) {
			case 200:
				ok++;
				break;
			case 503:
				busy++;
				break;
			case 0:
				closed++;
				break;
			default:
				other++;
			}
			close(p[i].fd);
			p[i].fd = -1;
			fds[i] = -1;
			open--;
		}
	}
	t = now() - t0;
	close_many(fds, n);
	free(fds);
	free(head);
	free(got);
	free(p);
	DIAG("%d scrapes at once: %d ok, %d 503, %d closed unanswered, %d other, %d unfinished after %.1f s",
	     n, ok, busy, closed, other, open, t);
	CHECK(!open, "%d still open after %.0f s", open, limit);
	CHECK(ok > 0, "none served");
	CHECK(!other, "%d answered neither 200 nor 503", other);
	CHECK(scrape_ok(), "serving after");
	TH_LOG("%d scrapes at once are served or refused, none hang", n);
}

/* N clients that never read their response */
TEST(slow_readers)
{
	int n = 50;
	char req[256];
	int *fds = calloc((size_t)n, sizeof(int));
	int rcv = 1024;

	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path,
		 host_hdr);
	for (int i = 0; i < n; i++) {
		fds[i] = dial(false);
		if (fds[i] < 0)
			continue;
		setsockopt(fds[i], SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
		send_all(fds[i], req, strlen(req));
	}
	usleep(500000);
	CHECK(scrape_ok(), "scrape with %d clients not reading", n);
	close_many(fds, n);
	free(fds);
	TH_LOG("%d clients that never read their response", n);
}

int main(int argc, char **argv)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res;
	struct rlimit rl;
	const char *get = NULL, *accept = NULL;
	int c;

	while ((c = getopt(argc, argv, "t:m:n:p:g:a:l:")) != -1) {
		switch (c) {
		case 'l':
			limit = atof(optarg);
			break;
		case 'g':
			get = optarg;
			break;
		case 'a':
			accept = optarg;
			break;
		case 't':
			timeout = atof(optarg);
			break;
		case 'm':
			maxconn = atoi(optarg);
			break;
		case 'n':
			conns = atoi(optarg);
			break;
		case 'p':
			path = optarg;
			break;
		default:
			fprintf(stderr,
				"usage: http-check [-t TIMEOUT] [-m MAXCONN] [-n CONNS] [-l LIMIT] [-p PATH] HOST PORT\n"
				"       http-check -g PATH [-a ACCEPT] HOST PORT\n");
			return 2;
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr, "http-check: HOST PORT\n");
		return 2;
	}
	if (getaddrinfo(argv[optind], argv[optind + 1], &hints, &res)) {
		fprintf(stderr, "http-check: cannot resolve %s\n",
			argv[optind]);
		return 2;
	}
	memcpy(&peer, res->ai_addr, res->ai_addrlen);
	peer_len = res->ai_addrlen;
	freeaddrinfo(res);
	signal(SIGPIPE, SIG_IGN);
	if (get) {
		char hdr[512] = "";
		struct resp r;

		if (accept)
			snprintf(hdr, sizeof(hdr), "Accept: %s\r\n", accept);
		if (request("GET", get, hdr, &r)) {
			fprintf(stderr, "http-check: cannot connect to %s:%s\n",
				argv[optind], argv[optind + 1]);
			return 1;
		}
		if (r.body)
			fwrite(r.body, 1, r.len, stdout);
		if (r.status != 200)
			fprintf(stderr, "http-check: %s: status %d\n", get,
				r.status);
		return r.status == 200 ? 0 : 1;
	}
	/* Room for the connections plus a few. */
	if (!getrlimit(RLIMIT_NOFILE, &rl) &&
	    rl.rlim_cur < (rlim_t)conns + 64) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}

	/* The harness's own options are not http-check's: it runs them all. */
	optind = 1;
	return test_harness_run(1, argv);
}
