// SPDX-License-Identifier: GPL-2.0
/*
 * Client of the joules generic netlink family. libnl builds and sends the
 * requests and parses attributes; receiving is done here with plain recv()
 * so that errno values (ENOBUFS for lost events, the kernel's own error of
 * a refused request) reach the caller unchanged instead of being folded
 * into libnl's coarser error codes.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <netlink/attr.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/family.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "uapi/joules_netlink.h"
#include "nl.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

/* The kernel never builds dump skbs above 32 KiB; twice that is safe. */
#define JNL_BUFSZ 65536
/* Receive buffer asked for by subscribers (exit records come in bursts). */
#define JNL_RCVBUF (8 << 20)

struct jnl {
	struct nl_sock *sk;
	int family;
	unsigned int version;
	int grp_samples; /* group id, or -errno */
	int grp_exits;
	char kmsg[256]; /* extack message of the last refused request */
	unsigned char *buf;
	/* FIFO of events that arrived while waiting for a reply. */
	struct jnl_event *q;
	size_t qhead, qlen, qcap;
	unsigned long lost;
	bool lost_pending;
	bool lagged; /* jnl_set_lagged() */
	int cg_root_fd; /* jnl_set_cgroup_root(), -1: none */
};

/* Reply attribute types (readers ignore attributes they do not know). */
static struct nla_policy jnl_policy[JOULES_A_MAX + 1] = {
	[JOULES_A_PID] = { .type = NLA_U32 },
	[JOULES_A_TID] = { .type = NLA_U32 },
	[JOULES_A_THREADS] = { .type = NLA_FLAG },
	[JOULES_A_TGID] = { .type = NLA_U32 },
	[JOULES_A_UID] = { .type = NLA_U32 },
	[JOULES_A_COMM] = { .type = NLA_STRING, .maxlen = 64 },
	[JOULES_A_NR_THREADS] = { .type = NLA_U32 },
	[JOULES_A_PROCESS] = { .type = NLA_FLAG },
	[JOULES_A_EXITED] = { .type = NLA_FLAG },
	[JOULES_A_READ_BYTES] = { .type = NLA_U64 },
	[JOULES_A_WRITE_BYTES] = { .type = NLA_U64 },
	[JOULES_A_ENERGY_UJ] = { .type = NLA_U64 },
	[JOULES_A_IDLE_UJ] = { .type = NLA_U64 },
	[JOULES_A_PKG_UJ] = { .type = NLA_U64 },
	[JOULES_A_CORE_UJ] = { .type = NLA_U64 },
	[JOULES_A_DRAM_UJ] = { .type = NLA_U64 },
	[JOULES_A_PSYS_UJ] = { .type = NLA_U64 },
	[JOULES_A_DOMAINS] = { .type = NLA_U32 },
	[JOULES_A_SOURCE] = { .type = NLA_U32 },
	[JOULES_A_MODEL_GEN] = { .type = NLA_U64 },
	[JOULES_A_CPU_NS] = { .type = NLA_U64 },
	[JOULES_A_CYCLES] = { .type = NLA_U64 },
	[JOULES_A_INSTRUCTIONS] = { .type = NLA_U64 },
	[JOULES_A_CACHE_MISSES] = { .type = NLA_U64 },
	[JOULES_A_DISK_BYTES] = { .type = NLA_U64 },
	[JOULES_A_PRESENT] = { .type = NLA_U32 },
	[JOULES_A_SEQ] = { .type = NLA_U64 },
	[JOULES_A_REALTIME_NS] = { .type = NLA_U64 },
	[JOULES_A_MONOTONIC_NS] = { .type = NLA_U64 },
	[JOULES_A_INTERVAL_NS] = { .type = NLA_U64 },
	[JOULES_A_NR_TASKS] = { .type = NLA_U32 },
	[JOULES_A_INTERVALS] = { .type = NLA_U64 },
	[JOULES_A_TASK_UJ] = { .type = NLA_U64 },
	[JOULES_A_TASKS_TRACKED] = { .type = NLA_U64 },
	[JOULES_A_UPTIME_NS] = { .type = NLA_U64 },
	[JOULES_A_CGROUP_ID] = { .type = NLA_U64 },
	[JOULES_A_CGROUP_PATH] = { .type = NLA_STRING },
	[JOULES_A_NET_TX_BYTES] = { .type = NLA_U64 },
	[JOULES_A_NET_RX_BYTES] = { .type = NLA_U64 },
	[JOULES_A_PAGECACHE_BYTES] = { .type = NLA_U64 },
	[JOULES_A_BAND] = { .type = NLA_U32 },
	[JOULES_A_FREQ_MHZ] = { .type = NLA_U32 },
	[JOULES_A_LAG_MS] = { .type = NLA_U32 },
};

static const int jnl_feat_attr[JL_NR_FEATURES] = {
	[JL_F_CPU_NS] = JOULES_A_CPU_NS,
	[JL_F_CYCLES] = JOULES_A_CYCLES,
	[JL_F_INSTR] = JOULES_A_INSTRUCTIONS,
	[JL_F_MISSES] = JOULES_A_CACHE_MISSES,
	[JL_F_DISK] = JOULES_A_DISK_BYTES,
	[JL_F_NET_TX] = JOULES_A_NET_TX_BYTES,
	[JL_F_NET_RX] = JOULES_A_NET_RX_BYTES,
	[JL_F_PAGECACHE] = JOULES_A_PAGECACHE_BYTES,
};

_Static_assert(JL_NR_DOMAINS == JOULES_NR_DOMAINS, "domain count");
_Static_assert(REC_SRC_RAPL == JOULES_SOURCE_RAPL &&
		       REC_SRC_MODEL == JOULES_SOURCE_MODEL &&
		       REC_SRC_METER == JOULES_SOURCE_METER,
	       "source bits");
_Static_assert(REC_F(JL_F_MISSES) == JOULES_FEAT_CACHE_MISSES &&
		       REC_F(JL_F_PAGECACHE) == JOULES_FEAT_PAGECACHE_BYTES,
	       "feature bits");

/* libnl's error codes, back to errno where there is one. */
static int jnl_nlerr(int nlerr)
{
	switch (nlerr < 0 ? -nlerr : nlerr) {
	case 0:
		return 0;
	case NLE_INTR:
		return -EINTR;
	case NLE_AGAIN:
		return -EAGAIN;
	case NLE_NOMEM:
		return -ENOMEM;
	case NLE_PERM:
		return -EPERM;
	case NLE_NOACCESS:
		return -EACCES;
	case NLE_OBJ_NOTFOUND:
		return -ENOENT;
	case NLE_INVAL:
		return -EINVAL;
	case NLE_RANGE:
		return -ERANGE;
	case NLE_MSGSIZE:
		return -EMSGSIZE;
	case NLE_OPNOTSUPP:
		return -EOPNOTSUPP;
	case NLE_AF_NOSUPPORT:
		return -EAFNOSUPPORT;
	case NLE_PROTO_MISMATCH:
		return -EPROTONOSUPPORT;
	case NLE_BUSY:
		return -EBUSY;
	default:
		return -EIO;
	}
}

static uint64_t jnl_u64(struct nlattr **tb, int type)
{
	return tb[type] ? nla_get_u64(tb[type]) : 0;
}

static uint32_t jnl_u32(struct nlattr **tb, int type)
{
	return tb[type] ? nla_get_u32(tb[type]) : 0;
}

/* Domain values present in the message; bits say which. */
static uint32_t jnl_domains(struct nlattr **tb, uint64_t *uj)
{
	uint32_t mask = 0;

	for (int d = 0; d < JL_NR_DOMAINS; d++) {
		uj[d] = jnl_u64(tb, JOULES_A_PKG_UJ + d);
		if (tb[JOULES_A_PKG_UJ + d])
			mask |= 1u << d;
	}
	return mask;
}

/* Features present in the message (absent is not zero). */
static uint32_t jnl_feats(struct nlattr **tb, uint64_t *v)
{
	uint32_t mask = 0;

	for (int f = 0; f < JL_NR_FEATURES; f++) {
		v[f] = jnl_u64(tb, jnl_feat_attr[f]);
		if (tb[jnl_feat_attr[f]])
			mask |= REC_F(f);
	}
	return mask;
}

/*
 * Parse a message into tb, which must hold attributes `req` and
 * JOULES_A_ENERGY_UJ (-EPROTO otherwise), and zero the record r.
 */
static int jnl_parse(struct nlmsghdr *nlh, struct nlattr **tb, int req, void *r,
		     size_t size)
{
	int err =
		jnl_nlerr(genlmsg_parse(nlh, 0, tb, JOULES_A_MAX, jnl_policy));

	if (err)
		return err;
	if (!tb[req] || !tb[JOULES_A_ENERGY_UJ])
		return -EPROTO;
	memset(r, 0, size);
	return 0;
}

/*
 * The energy and feature fields, named alike in task_rec, sample_rec and
 * node_rec: one macro rather than three copies.
 */
#define JNL_ENERGY_FIELDS(tb, r)                                         \
	do {                                                             \
		(r)->source = jnl_u32(tb, JOULES_A_SOURCE);              \
		(r)->energy_uj = jnl_u64(tb, JOULES_A_ENERGY_UJ);        \
		(r)->idle_uj = jnl_u64(tb, JOULES_A_IDLE_UJ);            \
		(r)->domains = jnl_domains(tb, (r)->domain_uj);          \
		(r)->model_generation = jnl_u64(tb, JOULES_A_MODEL_GEN); \
		(r)->present = jnl_feats(tb, (r)->feat);                 \
	} while (0)

static int jnl_parse_task(struct nlmsghdr *nlh, struct task_rec *t)
{
	struct nlattr *tb[JOULES_A_MAX + 1];
	int err = jnl_parse(nlh, tb, JOULES_A_PID, t, sizeof(*t));

	if (err)
		return err;
	t->pid = jnl_u32(tb, JOULES_A_PID);
	t->tgid = jnl_u32(tb, JOULES_A_TGID);
	t->uid = jnl_u32(tb, JOULES_A_UID);
	t->nr_threads = jnl_u32(tb, JOULES_A_NR_THREADS);
	if (tb[JOULES_A_COMM])
		nla_strlcpy(t->comm, tb[JOULES_A_COMM], sizeof(t->comm));
	t->process = tb[JOULES_A_PROCESS] != NULL;
	t->exited = tb[JOULES_A_EXITED] != NULL;
	JNL_ENERGY_FIELDS(tb, t);
	t->read_bytes = jnl_u64(tb, JOULES_A_READ_BYTES);
	t->write_bytes = jnl_u64(tb, JOULES_A_WRITE_BYTES);
	t->lag_ms = jnl_u32(tb, JOULES_A_LAG_MS);
	return 0;
}

static int jnl_parse_cgroup(struct nlmsghdr *nlh, struct cgroup_rec *c)
{
	struct nlattr *tb[JOULES_A_MAX + 1];
	int err = jnl_parse(nlh, tb, JOULES_A_CGROUP_ID, c, sizeof(*c));

	if (err)
		return err;
	if (!tb[JOULES_A_CGROUP_PATH])
		return -EPROTO;
	c->id = jnl_u64(tb, JOULES_A_CGROUP_ID);
	nla_strlcpy(c->path, tb[JOULES_A_CGROUP_PATH], sizeof(c->path));
	c->nr_tasks = jnl_u32(tb, JOULES_A_NR_TASKS);
	c->exited = tb[JOULES_A_EXITED] != NULL;
	JNL_ENERGY_FIELDS(tb, c);
	c->read_bytes = jnl_u64(tb, JOULES_A_READ_BYTES);
	c->write_bytes = jnl_u64(tb, JOULES_A_WRITE_BYTES);
	c->lag_ms = jnl_u32(tb, JOULES_A_LAG_MS);
	return 0;
}

static int jnl_parse_sample(struct nlmsghdr *nlh, struct sample_rec *s)
{
	struct nlattr *tb[JOULES_A_MAX + 1];
	int err = jnl_parse(nlh, tb, JOULES_A_SEQ, s, sizeof(*s));

	if (err)
		return err;
	s->seq = jnl_u64(tb, JOULES_A_SEQ);
	s->realtime_ns = jnl_u64(tb, JOULES_A_REALTIME_NS);
	s->monotonic_ns = jnl_u64(tb, JOULES_A_MONOTONIC_NS);
	s->interval_ns = jnl_u64(tb, JOULES_A_INTERVAL_NS);
	JNL_ENERGY_FIELDS(tb, s);
	s->nr_tasks = jnl_u32(tb, JOULES_A_NR_TASKS);
	s->freq_mhz = jnl_u32(tb, JOULES_A_FREQ_MHZ);
	s->band = jnl_u32(tb, JOULES_A_BAND);
	return 0;
}

static int jnl_parse_node(struct nlmsghdr *nlh, struct node_rec *n)
{
	struct nlattr *tb[JOULES_A_MAX + 1];
	int err = jnl_parse(nlh, tb, JOULES_A_INTERVALS, n, sizeof(*n));

	if (err)
		return err;
	n->intervals = jnl_u64(tb, JOULES_A_INTERVALS);
	n->task_uj = jnl_u64(tb, JOULES_A_TASK_UJ);
	JNL_ENERGY_FIELDS(tb, n);
	n->tasks_tracked = jnl_u64(tb, JOULES_A_TASKS_TRACKED);
	n->uptime_ns = jnl_u64(tb, JOULES_A_UPTIME_NS);
	n->lag_ms = jnl_u32(tb, JOULES_A_LAG_MS);
	if (tb[JOULES_A_METER_NAME]) {
		nla_strlcpy(n->meter_name, tb[JOULES_A_METER_NAME],
			    sizeof(n->meter_name));
		n->meter_uj = jnl_u64(tb, JOULES_A_METER_UJ);
		n->meter_pending_uj =
			(int64_t)jnl_u64(tb, JOULES_A_METER_PENDING_UJ);
	}
	return 0;
}

static struct genlmsghdr *jnl_genlhdr(struct nlmsghdr *nlh)
{
	return nlmsg_data(nlh);
}

/* Queue a multicast message as an event; unknown commands are dropped. */
static void jnl_queue_event(struct jnl *nl, struct nlmsghdr *nlh)
{
	struct jnl_event ev;
	int err;

	if (nlh->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN)
		return;
	memset(&ev, 0, sizeof(ev));
	switch (jnl_genlhdr(nlh)->cmd) {
	case JOULES_CMD_SAMPLE:
		ev.type = JNL_EV_SAMPLE;
		err = jnl_parse_sample(nlh, &ev.sample);
		break;
	case JOULES_CMD_EXIT:
		ev.type = JNL_EV_EXIT;
		err = jnl_parse_task(nlh, &ev.exit);
		break;
	case JOULES_CMD_CGROUP_EXIT:
		ev.type = JNL_EV_CGROUP_EXIT;
		ev.cgroup = malloc(sizeof(*ev.cgroup));
		err = ev.cgroup ? jnl_parse_cgroup(nlh, ev.cgroup) : -ENOMEM;
		if (err)
			free(ev.cgroup);
		break;
	default:
		return;
	}
	if (err)
		return;
	if (nl->qlen == nl->qcap) {
		size_t cap = nl->qcap ? nl->qcap * 2 : 16;
		struct jnl_event *q = malloc(cap * sizeof(*q));

		if (!q) {
			nl->lost++;
			nl->lost_pending = true;
			return;
		}
		for (size_t i = 0; i < nl->qlen; i++)
			q[i] = nl->q[(nl->qhead + i) % nl->qcap];
		free(nl->q);
		nl->q = q;
		nl->qcap = cap;
		nl->qhead = 0;
	}
	nl->q[(nl->qhead + nl->qlen) % nl->qcap] = ev;
	nl->qlen++;
}

/* One datagram into nl->buf; returns its length or -errno. */
static ssize_t jnl_recv(struct jnl *nl)
{
	ssize_t n;

	n = recv(nl_socket_get_fd(nl->sk), nl->buf, JNL_BUFSZ, MSG_TRUNC);
	if (n < 0) {
		if (errno == ENOBUFS) {
			/* Multicast messages were dropped; the socket still works. */
			nl->lost++;
			nl->lost_pending = true;
		}
		return -errno;
	}
	if (n > JNL_BUFSZ)
		return -EMSGSIZE;
	return n;
}

static bool jnl_is_event(const struct jnl *nl, const struct nlmsghdr *nlh)
{
	return nlh->nlmsg_pid == 0 && nlh->nlmsg_seq == 0 &&
	       nlh->nlmsg_type == nl->family;
}

/* The extack message of an error reply, if the kernel sent one. */
static void jnl_extack(struct jnl *nl, struct nlmsghdr *nlh)
{
	struct nlmsgerr *e = nlmsg_data(nlh);
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	size_t off = sizeof(*e);
	struct nlattr *a;
	int len;

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - NLMSG_HDRLEN;
	off = NLMSG_ALIGN(off);
	len = (int)nlh->nlmsg_len - NLMSG_HDRLEN - (int)off;
	if (len <= 0)
		return;
	a = (struct nlattr *)((char *)e + off);
	if (nla_parse(tb, NLMSGERR_ATTR_MAX, a, len, NULL) < 0 ||
	    !tb[NLMSGERR_ATTR_MSG])
		return;
	nla_strlcpy(nl->kmsg, tb[NLMSGERR_ATTR_MSG], sizeof(nl->kmsg));
}

typedef int (*jnl_msg_fn)(struct jnl *nl, struct nlmsghdr *nlh, void *arg);

/*
 * Send msg (freed here) and read until its ACK, error or NLMSG_DONE. Data
 * messages go to fn; events are queued. Returns the number of data
 * messages or -errno (the kernel's error, or fn's first error: the rest of
 * the answer is still read so the socket stays in step).
 */
static int jnl_transact(struct jnl *nl, struct nl_msg *msg, jnl_msg_fn fn,
			void *arg)
{
	int err, count = 0, fnerr = 0;
	uint32_t seq;

	nl->kmsg[0] = 0;
	err = nl_send_auto(nl->sk, msg);
	seq = nlmsg_hdr(msg)->nlmsg_seq;
	nlmsg_free(msg);
	if (err < 0)
		return jnl_nlerr(err);

	for (;;) {
		ssize_t n = jnl_recv(nl);
		struct nlmsghdr *nlh;
		int len;

		if (n == -ENOBUFS)
			continue;
		if (n < 0)
			return (int)n;
		len = (int)n;
		for (nlh = (struct nlmsghdr *)nl->buf; nlmsg_ok(nlh, len);
		     nlh = nlmsg_next(nlh, &len)) {
			if (jnl_is_event(nl, nlh)) {
				jnl_queue_event(nl, nlh);
				continue;
			}
			if (nlh->nlmsg_seq != seq)
				continue; /* left over from an abandoned request */
			switch (nlh->nlmsg_type) {
			case NLMSG_ERROR: {
				struct nlmsgerr *e = nlmsg_data(nlh);

				if (nlh->nlmsg_len < NLMSG_HDRLEN + sizeof(*e))
					return -EPROTO;
				if (e->error) {
					jnl_extack(nl, nlh);
					return e->error;
				}
				return fnerr ? fnerr : count;
			}
			case NLMSG_DONE: {
				int *derr = nlmsg_data(nlh);

				if (nlh->nlmsg_len >=
					    NLMSG_HDRLEN + sizeof(int) &&
				    *derr < 0)
					return *derr;
				return fnerr ? fnerr : count;
			}
			case NLMSG_NOOP:
			case NLMSG_OVERRUN:
				continue;
			default:
				if (nlh->nlmsg_type != nl->family)
					continue;
				count++;
				if (fn && !fnerr)
					fnerr = fn(nl, nlh, arg);
			}
		}
	}
}

static struct nl_msg *jnl_msg(struct jnl *nl, uint8_t cmd, uint8_t version,
			      int flags)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (!msg)
		return NULL;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, nl->family, 0, flags,
			 cmd, version)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

int jnl_open(struct jnl **out)
{
	return jnl_open_fd(out, -1);
}

int jnl_open_fd(struct jnl **out, int fd)
{
	struct genl_family *fam;
	struct nl_cache *cache;
	struct jnl *nl;
	int one = 1;
	int err;

	*out = NULL;
	nl = calloc(1, sizeof(*nl));
	if (!nl)
		return -ENOMEM;
	nl->cg_root_fd = -1;
	nl->buf = malloc(JNL_BUFSZ);
	nl->sk = nl_socket_alloc();
	if (!nl->buf || !nl->sk) {
		err = -ENOMEM;
		goto fail;
	}
	if (fd < 0)
		err = jnl_nlerr(genl_connect(nl->sk));
	else
		err = jnl_nlerr(nl_socket_set_fd(nl->sk, NETLINK_GENERIC, fd));
	if (err)
		goto fail;
	err = jnl_nlerr(genl_ctrl_alloc_cache(nl->sk, &cache));
	if (err)
		goto fail;
	fam = genl_ctrl_search_by_name(cache, JOULES_GENL_NAME);
	if (fam) {
		nl->family = (int)genl_family_get_id(fam);
		nl->version = genl_family_get_version(fam);
		genl_family_put(fam);
	}
	nl_cache_free(cache);
	if (!fam) {
		err = -ENOENT;
		goto fail;
	}
	nl->grp_samples = genl_ctrl_resolve_grp(nl->sk, JOULES_GENL_NAME,
						JOULES_GENL_MCGRP_SAMPLES);
	if (nl->grp_samples < 0)
		nl->grp_samples = nl->grp_samples == -NLE_OBJ_NOTFOUND ?
					  -EOPNOTSUPP :
					  jnl_nlerr(nl->grp_samples);
	nl->grp_exits = genl_ctrl_resolve_grp(nl->sk, JOULES_GENL_NAME,
					      JOULES_GENL_MCGRP_EXITS);
	if (nl->grp_exits < 0)
		nl->grp_exits = nl->grp_exits == -NLE_OBJ_NOTFOUND ?
					-EOPNOTSUPP :
					jnl_nlerr(nl->grp_exits);
	/* The module's reason for refusing a request, without the echo. */
	setsockopt(nl_socket_get_fd(nl->sk), SOL_NETLINK, NETLINK_EXT_ACK, &one,
		   sizeof(one));
	setsockopt(nl_socket_get_fd(nl->sk), SOL_NETLINK, NETLINK_CAP_ACK, &one,
		   sizeof(one));
	*out = nl;
	return 0;
fail:
	jnl_close(nl);
	return err;
}

void jnl_close(struct jnl *nl)
{
	if (!nl)
		return;
	if (nl->sk)
		nl_socket_free(nl->sk);
	free(nl->buf);
	free(nl->q);
	free(nl);
}

unsigned int jnl_version(const struct jnl *nl)
{
	return nl->version;
}

int jnl_fd(const struct jnl *nl)
{
	return nl_socket_get_fd(nl->sk);
}

int jnl_family_id(const struct jnl *nl)
{
	return nl->family;
}

int jnl_group_id(const struct jnl *nl, unsigned int group)
{
	if (group == JNL_GRP_SAMPLES)
		return nl->grp_samples;
	if (group == JNL_GRP_EXITS)
		return nl->grp_exits;
	return -EINVAL;
}

const char *jnl_kernel_msg(const struct jnl *nl)
{
	return nl->kmsg[0] ? nl->kmsg : NULL;
}

const char *jnl_strerror(enum jnl_op op, int err)
{
	if (err < 0)
		err = -err;
	switch (op) {
	case JNL_OP_OPEN:
		if (err == ENOENT)
			return "joules module not loaded (no generic netlink family 'joules')";
		if (err == EPROTONOSUPPORT || err == EAFNOSUPPORT)
			return "kernel without generic netlink";
		break;
	case JNL_OP_GET_TASK:
		if (err == ESRCH)
			return "no such process";
		if (err == EPERM)
			return "permission denied: a task's energy counters are readable only "
			       "by its owner and root";
		if (err == ENOENT)
			return "task not tracked by joules (it started before the module "
			       "loaded, or is a kernel thread)";
		if (err == EAGAIN)
			return "the task kept changing its program or credentials while it "
			       "was read: try again";
		break;
	case JNL_OP_GET_NODE:
		if (err == EPERM)
			return "permission denied: node totals need CAP_PERFMON or CAP_SYS_ADMIN "
			       "(run as root): measured node energy is a side channel on every "
			       "user's work";
		break;
	case JNL_OP_SUBSCRIBE:
		if (err == EPERM)
			return "permission denied: the samples and exits groups need "
			       "CAP_SYS_ADMIN (run as root), since they carry measured node "
			       "energy and every user's data";
		if (err == EOPNOTSUPP)
			return "the module offers no multicast groups on this kernel (it "
			       "cannot restrict them to CAP_SYS_ADMIN)";
		break;
	case JNL_OP_GET_CGROUP:
		if (err == ENOENT)
			return "no such cgroup (v2; paths are relative to your cgroup namespace)";
		if (err == EPERM)
			return "permission denied: a cgroup's energy needs CAP_PERFMON or "
			       "CAP_SYS_ADMIN, or owning the cgroup's directory";
		break;
	case JNL_OP_METER_FEED:
		if (err == EPERM)
			return "permission denied: feeding the wall meter needs CAP_SYS_ADMIN "
			       "(run as root)";
		if (err == ERANGE)
			return "the module refused the reading as implausible (it went back "
			       "without a reset, or above wallmeter/max_power_w)";
		if (err == EINVAL || err == EOPNOTSUPP)
			return "the module refused the meter reading (a module without "
			       "meter support, or a bad name)";
		break;
	case JNL_OP_DUMP:
		break;
	}
	if (err == ENOBUFS)
		return "events lost: receive buffer overflow";
	return strerror(err);
}

/*
 * One kind of record a request answers with: the reply's command, its
 * parser, and for dumps the record size, the first allocation and the
 * order the records are returned in. GET_TASK and DUMP_TASKS, GET_CGROUP
 * and DUMP_CGROUPS, GET_NODE all go through jnl_get() or jnl_dump().
 */
struct jnl_kind {
	uint8_t cmd;
	int (*parse)(struct jnl *nl, struct nlmsghdr *nlh, void *rec);
	size_t size;
	size_t first; /* records of the first allocation of a dump */
	int (*cmp)(const void *a, const void *b);
};

static int jnl_task_parse(struct jnl *nl, struct nlmsghdr *nlh, void *rec)
{
	(void)nl;
	return jnl_parse_task(nlh, rec);
}

static int jnl_cmp_pid(const void *a, const void *b)
{
	const struct task_rec *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static const struct jnl_kind jnl_task_kind = {
	.cmd = JOULES_CMD_TASK,
	.parse = jnl_task_parse,
	.size = sizeof(struct task_rec),
	.first = 256,
	.cmp = jnl_cmp_pid,
};

static int jnl_cgroup_parse(struct jnl *nl, struct nlmsghdr *nlh, void *rec)
{
	(void)nl;
	return jnl_parse_cgroup(nlh, rec);
}

static int jnl_cmp_path(const void *a, const void *b)
{
	return strcmp(((const struct cgroup_rec *)a)->path,
		      ((const struct cgroup_rec *)b)->path);
}

static const struct jnl_kind jnl_cgroup_kind = {
	.cmd = JOULES_CMD_CGROUP,
	.parse = jnl_cgroup_parse,
	.size = sizeof(struct cgroup_rec),
	.first = 64,
	.cmp = jnl_cmp_path,
};

static int jnl_node_parse(struct jnl *nl, struct nlmsghdr *nlh, void *rec)
{
	struct node_rec *n = rec;
	int err = jnl_parse_node(nlh, n);

	n->version = nl->version;
	return err;
}

static const struct jnl_kind jnl_node_kind = {
	.cmd = JOULES_CMD_NODE,
	.parse = jnl_node_parse,
	.size = sizeof(struct node_rec),
};

struct jnl_get_ctx {
	const struct jnl_kind *kind;
	void *rec;
};

static int jnl_get_fn(struct jnl *nl, struct nlmsghdr *nlh, void *arg)
{
	struct jnl_get_ctx *g = arg;

	if (jnl_genlhdr(nlh)->cmd != g->kind->cmd)
		return -EPROTO;
	return g->kind->parse(nl, nlh, g->rec);
}

/* Send msg (a GET_*; freed here): its one record into *rec. 0 or -errno. */
static int jnl_get(struct jnl *nl, struct nl_msg *msg,
		   const struct jnl_kind *kind, void *rec)
{
	struct jnl_get_ctx g = { kind, rec };
	int n = jnl_transact(nl, msg, jnl_get_fn, &g);

	if (n < 0)
		return n;
	return n == 1 ? 0 : -EPROTO;
}

struct jnl_dump_ctx {
	const struct jnl_kind *kind;
	char *recs;
	size_t n, cap;
};

static int jnl_dump_fn(struct jnl *nl, struct nlmsghdr *nlh, void *arg)
{
	struct jnl_dump_ctx *d = arg;
	const struct jnl_kind *k = d->kind;
	int err;

	if (jnl_genlhdr(nlh)->cmd != k->cmd)
		return -EPROTO;
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : k->first;
		char *r = realloc(d->recs, cap * k->size);

		if (!r)
			return -ENOMEM;
		d->recs = r;
		d->cap = cap;
	}
	err = k->parse(nl, nlh, d->recs + d->n * k->size);
	if (err)
		return err;
	d->n++;
	return 0;
}

/*
 * Send msg (a DUMP_*; freed here): every record, in the kind's order, into
 * a malloc()ed *recs of *n. 0 or -errno (*recs NULL, *n 0).
 */
static int jnl_dump(struct jnl *nl, struct nl_msg *msg,
		    const struct jnl_kind *kind, void **recs, size_t *n)
{
	struct jnl_dump_ctx d = { .kind = kind };
	int err = jnl_transact(nl, msg, jnl_dump_fn, &d);

	if (err < 0) {
		free(d.recs);
		return err;
	}
	qsort(d.recs, d.n, kind->size, kind->cmp);
	*recs = d.recs;
	*n = d.n;
	return 0;
}

void jnl_set_cgroup_root(struct jnl *nl, int fd)
{
	nl->cg_root_fd = fd;
}

void jnl_set_lagged(struct jnl *nl, bool on)
{
	nl->lagged = on;
}

/* The lagged view asked for, where set; false: no room. */
static bool jnl_put_lagged(const struct jnl *nl, struct nl_msg *msg)
{
	return !nl->lagged || nla_put_flag(msg, JOULES_A_LAGGED) == 0;
}

int jnl_get_task(struct jnl *nl, pid_t id, bool thread, struct task_rec *out)
{
	struct nl_msg *msg;

	if (id <= 0)
		return -EINVAL;
	msg = jnl_msg(nl, JOULES_CMD_GET_TASK, JOULES_GENL_VERSION, 0);
	if (!msg)
		return -ENOMEM;
	if (nla_put_u32(msg, thread ? JOULES_A_TID : JOULES_A_PID,
			(uint32_t)id) < 0 ||
	    !jnl_put_lagged(nl, msg)) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	return jnl_get(nl, msg, &jnl_task_kind, out);
}

int jnl_dump_tasks(struct jnl *nl, bool threads, struct task_rec **recs,
		   size_t *n)
{
	struct nl_msg *msg;
	void *r = NULL;
	int err;

	*recs = NULL;
	*n = 0;
	msg = jnl_msg(nl, JOULES_CMD_DUMP_TASKS, JOULES_GENL_VERSION,
		      NLM_F_DUMP);
	if (!msg)
		return -ENOMEM;
	if ((threads && nla_put_flag(msg, JOULES_A_THREADS) < 0) ||
	    !jnl_put_lagged(nl, msg)) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	err = jnl_dump(nl, msg, &jnl_task_kind, &r, n);
	*recs = r;
	return err;
}

int jnl_get_cgroup(struct jnl *nl, const char *path, uint64_t id,
		   struct cgroup_rec *out)
{
	struct nl_msg *msg =
		jnl_msg(nl, JOULES_CMD_GET_CGROUP, JOULES_GENL_VERSION, 0);

	if (!msg)
		return -ENOMEM;
	if ((path ? nla_put_string(msg, JOULES_A_CGROUP_PATH, path) :
		    nla_put_u64(msg, JOULES_A_CGROUP_ID, id)) < 0 ||
	    !jnl_put_lagged(nl, msg)) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	return jnl_get(nl, msg, &jnl_cgroup_kind, out);
}

int jnl_dump_cgroups(struct jnl *nl, struct cgroup_rec **recs, size_t *n)
{
	struct nl_msg *msg;
	void *r = NULL;
	int err;

	*recs = NULL;
	*n = 0;
	msg = jnl_msg(nl, JOULES_CMD_DUMP_CGROUPS, JOULES_GENL_VERSION,
		      NLM_F_DUMP);
	if (!msg)
		return -ENOMEM;
	if (!jnl_put_lagged(nl, msg) ||
	    (nl->cg_root_fd >= 0 &&
	     nla_put_u32(msg, JOULES_A_CGROUP_ROOT_FD, nl->cg_root_fd) < 0)) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	err = jnl_dump(nl, msg, &jnl_cgroup_kind, &r, n);
	*recs = r;
	return err;
}

void jnl_event_free(struct jnl_event *ev)
{
	if (ev->type == JNL_EV_CGROUP_EXIT)
		free(ev->cgroup);
	ev->cgroup = NULL;
}

int jnl_get_node_view(struct jnl *nl, bool lagged, struct node_rec *out)
{
	struct nl_msg *msg =
		jnl_msg(nl, JOULES_CMD_GET_NODE, JOULES_GENL_VERSION, 0);

	if (!msg)
		return -ENOMEM;
	if (lagged && nla_put_flag(msg, JOULES_A_LAGGED) < 0) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	return jnl_get(nl, msg, &jnl_node_kind, out);
}

int jnl_get_node(struct jnl *nl, struct node_rec *out)
{
	return jnl_get_node_view(nl, false, out);
}

int jnl_raw_request(struct jnl *nl, uint8_t cmd, uint8_t version,
		    uint16_t flags, const void *buf, size_t len)
{
	struct nl_msg *msg = jnl_msg(nl, cmd, version, flags);

	if (!msg)
		return -ENOMEM;
	if (len && nlmsg_append(msg, (void *)buf, len, 0) < 0) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	return jnl_transact(nl, msg, NULL, NULL);
}

int jnl_subscribe(struct jnl *nl, unsigned int groups)
{
	int fd = nl_socket_get_fd(nl->sk);
	int ids[2] = { -1, -1 }, k = 0;
	int size = JNL_RCVBUF;

	if (groups & JNL_GRP_SAMPLES) {
		if (nl->grp_samples < 0)
			return nl->grp_samples;
		ids[k++] = nl->grp_samples;
	}
	if (groups & JNL_GRP_EXITS) {
		if (nl->grp_exits < 0)
			return nl->grp_exits;
		ids[k++] = nl->grp_exits;
	}
	for (int i = 0; i < k; i++)
		if (setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &ids[i],
			       sizeof(ids[i])))
			return -errno;
	/* FORCE needs CAP_NET_ADMIN, which a subscriber may lack: then plain. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	return 0;
}

static uint64_t jnl_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int jnl_next_event(struct jnl *nl, struct jnl_event *ev, int timeout_ms)
{
	uint64_t deadline =
		timeout_ms >= 0 ? jnl_now_ms() + (uint64_t)timeout_ms : 0;

	for (;;) {
		struct pollfd pfd = { .fd = nl_socket_get_fd(nl->sk),
				      .events = POLLIN };
		struct nlmsghdr *nlh;
		int wait = -1, len, r;
		ssize_t n;

		if (nl->lost_pending) {
			nl->lost_pending = false;
			return -ENOBUFS;
		}
		if (nl->qlen) {
			*ev = nl->q[nl->qhead];
			nl->qhead = (nl->qhead + 1) % nl->qcap;
			nl->qlen--;
			return 1;
		}
		if (timeout_ms >= 0) {
			uint64_t now = jnl_now_ms();

			wait = now >= deadline ? 0 : (int)(deadline - now);
		}
		r = poll(&pfd, 1, wait);
		if (r < 0)
			return -errno;
		if (r == 0)
			return 0;
		n = jnl_recv(nl);
		if (n == -ENOBUFS)
			continue;
		if (n < 0)
			return (int)n;
		len = (int)n;
		for (nlh = (struct nlmsghdr *)nl->buf; nlmsg_ok(nlh, len);
		     nlh = nlmsg_next(nlh, &len))
			if (jnl_is_event(nl, nlh))
				jnl_queue_event(nl, nlh);
	}
}

unsigned long jnl_events_lost(const struct jnl *nl)
{
	return nl->lost;
}

/* The METER_FEED attributes into msg. 0 or -errno. */
/* attr: JOULES_A_METER_UJ (cumulative energy) or JOULES_A_METER_POWER_UW. */
/* age_ns 0: no METER_AGE_NS (a module before it refuses the attribute). */
static int jnl_meter_put(struct nl_msg *msg, const char *name, int attr,
			 uint64_t value, uint64_t age_ns, bool reset)
{
	if (!name || !*name || strlen(name) > 31)
		return -EINVAL;
	if (nla_put_string(msg, JOULES_A_METER_NAME, name) < 0 ||
	    nla_put_u64(msg, attr, value) < 0 ||
	    (age_ns && nla_put_u64(msg, JOULES_A_METER_AGE_NS, age_ns) < 0) ||
	    (reset && nla_put_flag(msg, JOULES_A_METER_RESET) < 0))
		return -EMSGSIZE;
	return 0;
}

static int jnl_meter_send(struct jnl *nl, const char *name, int attr,
			  uint64_t value, uint64_t age_ns, bool reset)
{
	struct nl_msg *msg =
		jnl_msg(nl, JOULES_CMD_METER_FEED, JOULES_GENL_VERSION, 0);
	int err;

	if (!msg)
		return -ENOMEM;
	err = jnl_meter_put(msg, name, attr, value, age_ns, reset);
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	err = jnl_transact(nl, msg, NULL, NULL);
	return err < 0 ? err : 0;
}

int jnl_meter_feed(struct jnl *nl, const char *name, uint64_t uj, bool reset)
{
	return jnl_meter_send(nl, name, JOULES_A_METER_UJ, uj, 0, reset);
}

int jnl_meter_feed_aged(struct jnl *nl, const char *name, uint64_t uj,
			uint64_t age_ns, bool reset)
{
	return jnl_meter_send(nl, name, JOULES_A_METER_UJ, uj, age_ns, reset);
}

int jnl_meter_feed_power(struct jnl *nl, const char *name, uint64_t uw,
			 bool reset)
{
	return jnl_meter_send(nl, name, JOULES_A_METER_POWER_UW, uw, 0, reset);
}

int jnl_meter_payload(const char *name, uint64_t uj, bool reset, void *buf,
		      size_t cap)
{
	struct nl_msg *msg = nlmsg_alloc();
	struct nlmsghdr *nlh;
	size_t len;
	int err;

	if (!msg)
		return -ENOMEM;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, 0, 0, 0,
			 JOULES_CMD_METER_FEED, JOULES_GENL_VERSION)) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	err = jnl_meter_put(msg, name, JOULES_A_METER_UJ, uj, 0, reset);
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	nlh = nlmsg_hdr(msg);
	len = (size_t)genlmsg_attrlen(nlmsg_data(nlh), 0);
	if (len > cap) {
		nlmsg_free(msg);
		return -ENOSPC;
	}
	memcpy(buf, genlmsg_attrdata(nlmsg_data(nlh), 0), len);
	nlmsg_free(msg);
	return (int)len;
}
