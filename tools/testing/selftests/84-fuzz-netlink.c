// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz the generic netlink family with raw sockets: random commands, flags,
 * versions and attribute streams, with lengths that lie, wrong types,
 * unknown attributes and truncated headers. Every request must be
 * answered (an error or a well-formed reply, never silence), the ones that
 * are malformed by construction must be refused, well-formed ones must
 * work, and the module must be unchanged afterwards.
 *
 *   84-fuzz-netlink [COUNT]   (default 50000)
 */
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "selftest.h"
#include "uapi/joules_netlink.h"

static uint64_t rng = 0x243f6a8885a308d3ULL;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int sock_open(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct timeval tv = { .tv_sec = 5 };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	int one = 1;

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

static char rbuf[65536];

/*
 * Receive until the request with `seq` is answered. Returns 0 for success
 * (ACK, or a dump ended by DONE, or a single reply), a negative errno from
 * the kernel, or -1000 on silence or a malformed reply.
 */
static int answer(int fd, uint32_t seq, bool dump, bool ack)
{
	bool got_reply = false;

	for (;;) {
		ssize_t n = recv(fd, rbuf, sizeof(rbuf), 0);
		struct nlmsghdr *h;

		if (n < 0)
			return got_reply && !ack && !dump ? 0 : -1000;
		for (h = (struct nlmsghdr *)rbuf; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_seq != seq)
				continue; /* a late answer to an earlier request */
			if (h->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(h);

				if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
					return -1000;
				return e->error;
			}
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN))
				return -1000;
			got_reply = true;
			if (!dump && !ack)
				return 0;
		}
	}
}

static int resolve(int fd, uint16_t *family)
{
	struct {
		struct nlmsghdr h;
		struct genlmsghdr g;
		char attrs[64];
	} req = { 0 };
	struct nlattr *a = (struct nlattr *)req.attrs;
	struct nlmsghdr *h;
	ssize_t n;

	a->nla_type = CTRL_ATTR_FAMILY_NAME;
	a->nla_len = NLA_HDRLEN + sizeof(JOULES_GENL_NAME);
	memcpy((char *)a + NLA_HDRLEN, JOULES_GENL_NAME,
	       sizeof(JOULES_GENL_NAME));
	req.h.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN) + NLA_ALIGN(a->nla_len);
	req.h.nlmsg_type = GENL_ID_CTRL;
	req.h.nlmsg_flags = NLM_F_REQUEST;
	req.h.nlmsg_seq = 1;
	req.g.cmd = CTRL_CMD_GETFAMILY;
	req.g.version = 1;
	if (send(fd, &req, req.h.nlmsg_len, 0) < 0)
		return -1;
	n = recv(fd, rbuf, sizeof(rbuf), 0);
	h = (struct nlmsghdr *)rbuf;
	if (n < 0 || !NLMSG_OK(h, (size_t)n) || h->nlmsg_type != GENL_ID_CTRL)
		return -1;
	{
		int len = h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);

		for (a = (struct nlattr *)((char *)NLMSG_DATA(h) + GENL_HDRLEN);
		     len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&
		     a->nla_len <= len;
		     len -= NLA_ALIGN(a->nla_len),
		    a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len)))
			if (a->nla_type == CTRL_ATTR_FAMILY_ID) {
				*family = *(uint16_t *)((char *)a + NLA_HDRLEN);
				return 0;
			}
	}
	return -1;
}

struct stats {
	unsigned long sent, refused, accepted, wrong, silent;
};

/*
 * The structural rules a strict policy enforces whatever the command:
 * every attribute header whole, its length within the message, no trailing
 * bytes, no attribute type beyond the family's maximum.
 */
static bool attrs_malformed(const char *p, size_t len)
{
	while (len) {
		const struct nlattr *a = (const struct nlattr *)p;
		size_t step;

		if (len < NLA_HDRLEN || a->nla_len < NLA_HDRLEN ||
		    a->nla_len > len)
			return true;
		if ((a->nla_type & NLA_TYPE_MASK) > JOULES_A_MAX)
			return true;
		step = NLA_ALIGN(a->nla_len);
		if (step >= len)
			return false;
		p += step;
		len -= step;
	}
	return false;
}

/* Build one request; *bad says whether it is malformed by construction. */
static size_t build(char *msg, size_t cap, uint16_t family, uint32_t seq,
		    bool *bad, bool *dump, bool *ack, bool *valid)
{
	struct nlmsghdr *h = (struct nlmsghdr *)msg;
	struct genlmsghdr *g = NLMSG_DATA(h);
	size_t off = NLMSG_LENGTH(GENL_HDRLEN);
	unsigned int k, nattrs = rnd() % 5;
	uint8_t cmd;

	memset(msg, 0, 64);
	*bad = *valid = false;
	switch (rnd() % 8) {
	case 0:
		cmd = rnd() % 256;
		break;
	case 1:
		cmd = JOULES_CMD_GET_NODE;
		break;
	case 2:
	case 3:
		cmd = JOULES_CMD_DUMP_TASKS;
		break;
	default:
		cmd = JOULES_CMD_GET_TASK;
	}
	if (cmd == 0 || cmd > JOULES_CMD_GET_NODE)
		*bad = true; /* not a request command */
	*dump = cmd == JOULES_CMD_DUMP_TASKS ? rnd() % 8 != 0 : rnd() % 16 == 0;
	*ack = rnd() % 2;
	h->nlmsg_type = family;
	h->nlmsg_flags = NLM_F_REQUEST | (*dump ? NLM_F_DUMP : 0) |
			 (*ack ? NLM_F_ACK : 0);
	h->nlmsg_seq = seq;
	g->cmd = cmd;
	g->version = rnd() % 4 ? JOULES_GENL_VERSION : rnd() % 256;

	if (cmd == JOULES_CMD_GET_TASK && !*dump && rnd() % 4 == 0) {
		/* A well-formed request for ourselves. */
		struct nlattr *a = (struct nlattr *)(msg + off);

		a->nla_type = JOULES_A_PID;
		a->nla_len = NLA_HDRLEN + 4;
		*(uint32_t *)((char *)a + NLA_HDRLEN) = getpid();
		off += NLA_ALIGN(a->nla_len);
		*valid = g->version == JOULES_GENL_VERSION;
		nattrs = 0;
	}
	for (k = 0; k < nattrs && off + 300 < cap; k++) {
		struct nlattr *a = (struct nlattr *)(msg + off);
		unsigned int plen = rnd() % 3 ? 4 : rnd() % 40;
		unsigned int type =
			rnd() % 3 ? rnd() % (JOULES_A_MAX + 1) : rnd() % 0x4000;

		a->nla_type = type | (rnd() % 16 == 0 ? NLA_F_NESTED : 0);
		a->nla_len = NLA_HDRLEN + plen;
		for (unsigned int i = 0; i < plen; i++)
			((uint8_t *)a)[NLA_HDRLEN + i] =
				rnd() % 4 ? rnd() % 256 : 0;
		if (rnd() % 4 == 0)
			*(uint32_t *)((char *)a + NLA_HDRLEN) =
				rnd() % 3 ? (uint32_t)getpid() :
					    (uint32_t)rnd();
		if (rnd() % 10 == 0)
			/* A length that lies about the payload. */
			a->nla_len = rnd() % 2 ? rnd() % NLA_HDRLEN :
						 1000 + rnd() % 1000;
		off += NLA_ALIGN(NLA_HDRLEN + plen);
	}
	if (rnd() % 20 == 0 && off > NLMSG_HDRLEN + 1) {
		/* Truncated: the genl header or an attribute cut short. */
		off = NLMSG_HDRLEN + rnd() % (off - NLMSG_HDRLEN);
		*valid = false;
	}
	h->nlmsg_len = off;
	/* Judge what was finally built (truncation may cut attributes away). */
	*bad = cmd == 0 || cmd > JOULES_CMD_GET_NODE ||
	       off < NLMSG_LENGTH(GENL_HDRLEN) ||
	       attrs_malformed(msg + NLMSG_LENGTH(GENL_HDRLEN),
			       off > NLMSG_LENGTH(GENL_HDRLEN) ?
				       off - NLMSG_LENGTH(GENL_HDRLEN) :
				       0);
	if (*bad)
		*valid = false;
	return off;
}

static unsigned long count;
static uint16_t family;

/*
 * Random requests: malformed ones refused, valid ones answered, none
 * unanswered; the model untouched; the module still answering afterwards.
 */
FIXTURE(fuzz)
{
	struct st_settings saved;
};

/* What a wrongly accepted request might change is put back afterwards. */
FIXTURE_SETUP(fuzz)
{
	st_settings_save(&self->saved);
}

FIXTURE_TEARDOWN_PARENT(fuzz)
{
	EXPECT_EQ(0, st_settings_restore(&self->saved));
}

TEST_F_TIMEOUT(fuzz, random_requests, 1800)
{
	char g0[32], g1[32], b[1024];
	static char msg[4096];
	struct stats st = { 0 };
	unsigned long i;
	int fd = sock_open();

	ASSERT_LE(0, fd);
	st_read(JOULES_SYSFS "/model/generation", g0, sizeof(g0));
	for (i = 0; i < count; i++) {
		bool bad, dump, ack, valid;
		uint32_t seq = 100 + i;
		size_t n = build(msg, sizeof(msg), family, seq, &bad, &dump,
				 &ack, &valid);
		int r;

		if (send(fd, msg, n, 0) < 0) {
			/* The socket itself refused a broken header: also a refusal. */
			st.refused++;
			continue;
		}
		st.sent++;
		/* A message shorter than a genl header never reaches the family. */
		if (n < NLMSG_LENGTH(GENL_HDRLEN)) {
			r = answer(fd, seq, false, true);
			if (r == -1000)
				st.silent++;
			if (r < 0) {
				st.refused++;
			} else {
				st.accepted++;
				st.wrong++;
			}
			continue;
		}
		r = answer(fd, seq, dump, ack);
		if (r == -1000) {
			st.silent++;
			if (st.silent < 5)
				DIAG("request %lu (cmd %u, %zu bytes) got no answer",
				     i,
				     ((struct genlmsghdr *)NLMSG_DATA(
					      (struct nlmsghdr *)msg))
					     ->cmd,
				     n);
			/* Resynchronise on a fresh socket. */
			close(fd);
			fd = sock_open();
			continue;
		}
		if (r < 0)
			st.refused++;
		else
			st.accepted++;
		if ((bad && r >= 0) || (valid && r < 0)) {
			st.wrong++;
			if (st.wrong < 5) {
				char hex[200] = "";

				for (size_t j = 0; j < n && j < 64; j++)
					sprintf(hex + strlen(hex), "%02x",
						(uint8_t)msg[j]);
				DIAG("request %lu: %s request gave %d: %s", i,
				     bad ? "malformed" : "valid", r, hex);
			}
		}
	}
	CHECK(st.wrong == 0 && st.silent == 0,
	      "%lu requests: %lu refused, %lu answered, %lu wrong, %lu unanswered",
	      count, st.refused, st.accepted, st.wrong, st.silent);
	st_read(JOULES_SYSFS "/model/generation", g1, sizeof(g1));
	g1[strcspn(g1, "\n")] = 0;
	CHECK(!strncmp(g0, g1, strlen(g1)), "model generation unchanged (%s)",
	      g1);
	{
		bool dump, ack, valid, bad;
		int r;

		/* A plain GET_NODE and a per-pid read still work. */
		build(msg, sizeof(msg), family, 7, &bad, &dump, &ack, &valid);
		{
			struct nlmsghdr *h = (struct nlmsghdr *)msg;
			struct genlmsghdr *g = NLMSG_DATA(h);

			h->nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
			h->nlmsg_flags = NLM_F_REQUEST;
			h->nlmsg_seq = 7;
			g->cmd = JOULES_CMD_GET_NODE;
			g->version = JOULES_GENL_VERSION;
		}
		r = send(fd, msg, NLMSG_LENGTH(GENL_HDRLEN), 0) < 0 ?
			    -errno :
			    answer(fd, 7, false, false);
		CHECK(r == 0 && st_read("/proc/energy/self", b, sizeof(b)) > 0,
		      "module still answers GET_NODE (%d) and the per-pid file",
		      r);
	}
	close(fd);
}

int main(int argc, char **argv)
{
	int fd = sock_open();

	if (fd < 0 || resolve(fd, &family)) {
		printf("1..0 # SKIP joules netlink family not available\n");
		return KSFT_SKIP;
	}
	close(fd);
	/* A number (not an option) first: how many requests. */
	count = argc > 1 && argv[1][0] != '-' ? strtoul(argv[1], NULL, 10) :
						50000;
	return test_harness_run(argc, argv);
}
