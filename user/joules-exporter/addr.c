// SPDX-License-Identifier: GPL-2.0
/* --web.listen-address in the Prometheus exporters' spelling. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "parse.h"
#include "exporter.h"

int exp_parse_listen(const char *s, struct exp_addr *a, const char **why)
{
	struct addrinfo hints, *res = NULL;
	char host[256], port[8];
	const char *colon, *hs, *he;
	uint64_t p;
	int rc;

	memset(a, 0, sizeof(*a));
	if (s[0] == '[') {
		hs = s + 1;
		he = strchr(hs, ']');
		if (!he || he[1] != ':') {
			*why = "expected [IPv6-address]:port";
			return -EINVAL;
		}
		colon = he + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon) {
			*why = "expected host:port";
			return -EINVAL;
		}
		hs = s;
		he = colon;
		if (memchr(hs, ':', (size_t)(he - hs))) {
			*why = "an IPv6 address goes in brackets: [addr]:port";
			return -EINVAL;
		}
	}
	if (parse_u64(colon + 1, &p, why) || p == 0 || p > 65535) {
		*why = "the port must be a number from 1 to 65535";
		return -EINVAL;
	}
	if ((size_t)(he - hs) >= sizeof(host)) {
		*why = "host name too long";
		return -EINVAL;
	}
	memcpy(host, hs, (size_t)(he - hs));
	host[he - hs] = 0;
	snprintf(port, sizeof(port), "%u", (unsigned int)p);

	/* ":port" is every address, IPv6 and IPv4 (Prometheus' meaning). */
	if (!host[0]) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&a->ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_addr = in6addr_any;
		in6->sin6_port = htons((uint16_t)p);
		a->len = sizeof(*in6);
		a->dual_stack = true;
		snprintf(a->text, sizeof(a->text), ":%s", port);
		return 0;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	rc = getaddrinfo(host, port, &hints, &res);
	if (rc || !res) {
		*why = rc ? gai_strerror(rc) : "no address";
		return -EINVAL;
	}
	memcpy(&a->ss, res->ai_addr, res->ai_addrlen);
	a->len = res->ai_addrlen;
	freeaddrinfo(res);
	if (a->ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&a->ss;
		char t[INET6_ADDRSTRLEN];

		a->dual_stack = IN6_IS_ADDR_UNSPECIFIED(&in6->sin6_addr);
		inet_ntop(AF_INET6, &in6->sin6_addr, t, sizeof(t));
		snprintf(a->text, sizeof(a->text), "[%s]:%s", t, port);
	} else {
		struct sockaddr_in *in = (struct sockaddr_in *)&a->ss;
		char t[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &in->sin_addr, t, sizeof(t));
		snprintf(a->text, sizeof(a->text), "%s:%s", t, port);
	}
	return 0;
}
