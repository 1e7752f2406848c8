// SPDX-License-Identifier: GPL-2.0
/*
 * The HTTP side of joules-exporter, on libmicrohttpd: one internal thread
 * (epoll) serves every connection, so a scrape never runs concurrently
 * with another and the netlink handle needs no lock.
 *
 * Bounds under bad clients: at most max_connections connections (more are
 * accepted and closed at once), each with EXP_CONNECTION_MEMORY bytes for
 * its request line and headers (larger headers get 431), closed after
 * timeout_s seconds without progress (a client that never finishes its
 * request), and at most max_requests scrape responses held at once (503
 * beyond: a client that never reads its response keeps its buffer until
 * the timeout).
 */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "exporter.h"

struct exp_server {
	const struct exp_config *cfg;
	struct jm_state *jm;
	unsigned int inflight; /* metrics responses not yet completed */
	char *landing;
};

/* *req_cls: a request whose headers were seen; one that holds metrics. */
static char request_marker, metrics_marker;

static enum MHD_Result reply_static(struct MHD_Connection *c, unsigned int code,
				    const char *type, const char *body)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(strlen(body), (void *)body,
					    MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result serve_metrics(struct exp_server *sv,
				     struct MHD_Connection *c, void **req_cls)
{
	const char *accept = MHD_lookup_connection_value(
		c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
	enum prom_format fmt = prom_negotiate(accept);
	struct MHD_Response *r;
	struct prom_writer w;
	enum MHD_Result ret;
	size_t len;
	char *buf;
	int err;

	if (sv->inflight >= sv->cfg->max_requests)
		return reply_static(c, MHD_HTTP_SERVICE_UNAVAILABLE,
				    "text/plain; charset=utf-8",
				    "too many concurrent scrapes\n");
	prom_init(&w, fmt, EXP_MAX_RESPONSE);
	err = jm_scrape(sv->jm, &w, NULL);
	if (err) {
		exp_log("error", "scrape failed: %s", strerror(-err));
		prom_free(&w);
		return reply_static(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
				    "text/plain; charset=utf-8",
				    "scrape failed, see the exporter's log\n");
	}
	buf = prom_take(&w, &len);
	r = MHD_create_response_from_buffer(len, buf, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(buf);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				prom_content_type(fmt));
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	if (ret == MHD_YES) {
		sv->inflight++;
		*req_cls = &metrics_marker;
	}
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
				  const char *url, const char *method,
				  const char *version, const char *upload_data,
				  size_t *upload_data_size, void **req_cls)
{
	struct exp_server *sv = cls;

	(void)version;
	(void)upload_data;
	if (!*req_cls) {
		if (strcmp(method, MHD_HTTP_METHOD_GET) &&
		    strcmp(method, MHD_HTTP_METHOD_HEAD))
			return reply_static(c, MHD_HTTP_METHOD_NOT_ALLOWED,
					    "text/plain; charset=utf-8",
					    "method not allowed\n");
		/*
		 * Answer on the next call, once the request is complete:
		 * a response queued earlier makes MHD close the connection,
		 * and scrapers reuse theirs.
		 */
		*req_cls = &request_marker;
		return MHD_YES;
	}
	if (*upload_data_size) {
		*upload_data_size = 0; /* a GET with a body: not needed */
		return MHD_YES;
	}
	if (*req_cls != &request_marker)
		return MHD_YES;
	if (!strcmp(url, sv->cfg->path))
		return serve_metrics(sv, c, req_cls);
	if (!strcmp(url, "/"))
		return reply_static(c, MHD_HTTP_OK, "text/html; charset=utf-8",
				    sv->landing);
	return reply_static(c, MHD_HTTP_NOT_FOUND, "text/plain; charset=utf-8",
			    "404 page not found\n");
}

static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct exp_server *sv = cls;

	(void)c;
	(void)toe;
	if (*req_cls == &metrics_marker && sv->inflight)
		sv->inflight--;
	*req_cls = NULL;
}

/*
 * libmicrohttpd's own messages (refused connections, bad requests): a
 * flood of bad clients must not become a flood of log lines, so at most
 * 10 a minute, then a count of those left out.
 */
static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	static time_t window;
	static unsigned int n, dropped;
	time_t now = time(NULL);
	char msg[512];
	size_t len;

	(void)cls;
	if (now - window >= 60) {
		if (dropped)
			exp_log("warn", "http: %u more messages left out",
				dropped);
		window = now;
		n = dropped = 0;
	}
	if (++n > 10) {
		dropped++;
		return;
	}
	vsnprintf(msg, sizeof(msg), fmt, ap);
	len = strlen(msg);
	while (len && (msg[len - 1] == '\n' || msg[len - 1] == '\r'))
		msg[--len] = 0;
	exp_log("warn", "http: %s", msg);
}

/* The telemetry path in HTML (it comes from the command line). */
static char *landing_page(const char *path)
{
	char esc[1024], *out = NULL;
	size_t k = 0;

	for (const char *p = path; *p && k + 8 < sizeof(esc); p++) {
		const char *e = *p == '&' ? "&amp;" :
				*p == '<' ? "&lt;" :
				*p == '>' ? "&gt;" :
				*p == '"' ? "&quot;" :
					    NULL;

		if (e) {
			memcpy(esc + k, e, strlen(e));
			k += strlen(e);
		} else {
			esc[k++] = *p;
		}
	}
	esc[k] = 0;
	if (asprintf(
		    &out,
		    "<!DOCTYPE html>\n<html><head><title>joules exporter</title></head>\n"
		    "<body><h1>joules exporter</h1>\n"
		    "<p>Energy attributed by joules.ko, for Prometheus.</p>\n"
		    "<p><a href=\"%s\">Metrics</a></p>\n"
		    "<p>Version %s. See joules-exporter(8) and Documentation/metrics.rst.</p>\n"
		    "</body></html>\n",
		    esc, JL_VERSION) < 0)
		return NULL;
	return out;
}

/*
 * The backlog holds as many connections as may be open at once: a burst of
 * scrapers whose SYNs were dropped would otherwise come back only after
 * TCP's retransmission backoff (1, 3, 7, 15 s ...).
 */
static int listen_socket(const struct exp_addr *a, unsigned int backlog)
{
	int one = 1, zero = 0;
	int fd = socket(a->ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (a->ss.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY,
			   a->dual_stack ? &zero : &one, sizeof(int));
	if (bind(fd, (const struct sockaddr *)&a->ss, a->len) ||
	    listen(fd, (int)backlog)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

int exp_serve(const struct exp_config *cfg, const struct exp_addr *addr,
	      struct jm_state *jm)
{
	struct exp_server sv = { .cfg = cfg, .jm = jm };
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
			     MHD_USE_ERROR_LOG;
	struct MHD_Daemon *d;
	sigset_t set;
	int fd, sig;

	sv.landing = landing_page(cfg->path);
	if (!sv.landing) {
		exp_log("error", "out of memory");
		return 1;
	}
	/* Blocked before MHD starts its thread, so only sigwait() sees them. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);

	/* Our own socket: bind errors are reported with their reason. */
	fd = listen_socket(addr, cfg->max_connections);
	if (fd < 0) {
		exp_log("error", "cannot listen on %s: %s", addr->text,
			strerror(-fd));
		free(sv.landing);
		return 1;
	}
	if (addr->ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	/* The logger first, so that no message goes to MHD's own. */
	d = MHD_start_daemon(
		flags, 0, NULL, NULL, on_request, &sv,
		MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, NULL,
		MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_CONNECTION_LIMIT,
		cfg->max_connections, MHD_OPTION_CONNECTION_TIMEOUT,
		cfg->timeout_s, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
		(size_t)EXP_CONNECTION_MEMORY, MHD_OPTION_NOTIFY_COMPLETED,
		on_completed, &sv, MHD_OPTION_END);
	if (!d) {
		exp_log("error", "cannot start the HTTP server on %s",
			addr->text);
		close(fd);
		free(sv.landing);
		return 1;
	}
	exp_log("info", "listening on %s, metrics at %s", addr->text,
		cfg->path);
	while (sigwait(&set, &sig))
		;
	exp_log("info", "stopping on %s", sig == SIGINT ? "SIGINT" : "SIGTERM");
	MHD_stop_daemon(d); /* closes the listening socket too */
	free(sv.landing);
	return 0;
}
