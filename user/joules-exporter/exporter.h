/* SPDX-License-Identifier: GPL-2.0 */
/* joules-exporter: what its files share. */
#ifndef JOULES_EXPORTER_H
#define JOULES_EXPORTER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "metrics.h"

#define EXP_DEFAULT_LISTEN "127.0.0.1:9764"
#define EXP_DEFAULT_PATH "/metrics"
/* Bounds under bad clients (see joules-exporter(8), SECURITY). */
#define EXP_DEFAULT_MAX_CONNECTIONS 512
#define EXP_DEFAULT_MAX_REQUESTS 40
#define EXP_DEFAULT_TIMEOUT_S 10
/* --compat watts: Kepler's own default interval is about this. */
#define EXP_DEFAULT_COMPAT_WINDOW_S 5
/* Request line and headers of one connection: far above any scraper's. */
#define EXP_CONNECTION_MEMORY (16 * 1024)
/*
 * The largest exposition: top=1000 is about 250 KiB, a cgroup about 2 KiB
 * (five series with its path, container id and pod UID; up to 3 KiB with
 * the socket and page-cache ones): room for some 10,000 cgroups. Only
 * what a scrape renders is allocated.
 */
#define EXP_MAX_RESPONSE (32u << 20)

struct exp_config {
	const char *listen;
	const char *path;
	unsigned int top;
	unsigned int max_connections;
	unsigned int max_requests; /* scrapes answered or being sent at once */
	unsigned int timeout_s; /* idle connection timeout */
	enum jm_compat compat; /* --compat */
	bool live; /* --energy live */
};

/* A parsed --web.listen-address. */
struct exp_addr {
	struct sockaddr_storage ss;
	socklen_t len;
	bool dual_stack; /* "[::]" or ":port": also IPv4 */
	char text[80]; /* as printed in the log */
};

/*
 * "host:port", "[v6addr]:port" or ":port" (every address). The host is
 * resolved (numeric or a name such as localhost; the first answer is
 * used). 0, or -EINVAL with *why set.
 */
int exp_parse_listen(const char *s, struct exp_addr *a, const char **why);

/* logfmt lines on stderr (the journal under systemd). */
void exp_log(const char *level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* jm_log_fn for the collectors. */
void exp_log_collector(const char *level, const char *collector,
		       const char *msg);

/*
 * Serve until SIGINT/SIGTERM. Returns the exit status: 0 after a signal,
 * 1 if the server cannot start (reason logged).
 */
int exp_serve(const struct exp_config *cfg, const struct exp_addr *addr,
	      struct jm_state *jm);

#endif /* JOULES_EXPORTER_H */
