// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz the generic netlink family with raw sockets: every command number
 * (those the family defines and others), flags, versions and attribute
 * streams, with lengths that lie, wrong types, unknown attributes and
 * truncated headers; METER_FEED with names, energies, powers, resets and
 * ages around their limits. Every request must be answered (an error or a
 * well-formed reply, never silence). What each one must get is worked out
 * from the rules it meets, modelled here from kmod/netlink.c and
 * kmod/wallmeter.c: the genetlink core refuses a command the family lacks
 * and an attribute stream its strict policy does not allow; a handler
 * refuses by its own rules with its own errno; well-formed requests work.
 * Where the errno is not settled by construction, an answer is enough. The
 * module must be unchanged afterwards, and the wall meter the fuzz fed is
 * taken away again by a reload (no command removes a meter).
 *
 *   84-fuzz-netlink [COUNT [SEED]]   (default 50000 requests, and a fixed
 *                                     seed; SEED= or jseed= in the
 *                                     environment too: the seed is printed)
 */
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/vfs.h>

#include "selftest.h"
#include "uapi/joules_netlink.h"

#define WALL JOULES_SYSFS "/wallmeter"
/* kmod/core.h: JL_WALL_MAX_AGE_NS, a reading's age above it refused. */
#define MAX_AGE_NS (60ULL * 1000000000ULL)
/* kmod/core.h: JL_WALL_PW_MAX_NS, the longest window an energy meter's power spans. */
#define PW_MAX_NS (60ULL * 1000000000ULL)
/* The policy's pid range (PID_MAX_LIMIT on 64-bit kernels). */
#define PID_LIMIT (4U * 1024 * 1024)

static uint64_t rng = 0x243f6a8885a308d3ULL;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* ---- the family as kmod/netlink.c defines it ---- */

/* What a policy entry allows; A_NONE (not listed) is refused when strict. */
enum akind { A_NONE, A_PID, A_U64, A_FLAG, A_STR, A_FD };

struct apol {
	uint8_t kind;
	uint16_t len; /* A_STR: the longest string */
};

static const struct apol pol_task[JOULES_A_MAX + 1] = {
	[JOULES_A_PID] = { A_PID },
	[JOULES_A_TID] = { A_PID },
	[JOULES_A_LAGGED] = { A_FLAG },
};
static const struct apol pol_dump[JOULES_A_MAX + 1] = {
	[JOULES_A_THREADS] = { A_FLAG },
	[JOULES_A_LAGGED] = { A_FLAG },
};
/* GET_NODE: the lagged view's flag, nothing else. */
static const struct apol pol_lagged[JOULES_A_MAX + 1] = {
	[JOULES_A_LAGGED] = { A_FLAG },
};
/* DUMP_CGROUPS: the flag, and a descriptor as the root (u32, 0..INT_MAX). */
static const struct apol pol_dump_cg[JOULES_A_MAX + 1] = {
	[JOULES_A_LAGGED] = { A_FLAG },
	[JOULES_A_CGROUP_ROOT_FD] = { A_FD },
};
static const struct apol pol_cgroup[JOULES_A_MAX + 1] = {
	[JOULES_A_CGROUP_ID] = { A_U64 },
	[JOULES_A_CGROUP_PATH] = { A_STR, 4095 },
	[JOULES_A_LAGGED] = { A_FLAG },
};
static const struct apol pol_feed[JOULES_A_MAX + 1] = {
	[JOULES_A_METER_NAME] = { A_STR, 31 },
	[JOULES_A_METER_UJ] = { A_U64 },
	[JOULES_A_METER_POWER_UW] = { A_U64 },
	[JOULES_A_METER_RESET] = { A_FLAG },
	[JOULES_A_METER_AGE_NS] = { A_U64 },
};

struct op {
	uint8_t cmd;
	bool doit, dumpit;
	const struct apol *pol;
};

/* joules_nl_ops[]: every other command number is refused (EOPNOTSUPP). */
static const struct op ops[] = {
	{ JOULES_CMD_GET_TASK, true, false, pol_task },
	{ JOULES_CMD_DUMP_TASKS, false, true, pol_dump },
	{ JOULES_CMD_GET_NODE, true, false, pol_lagged },
	{ JOULES_CMD_GET_CGROUP, true, false, pol_cgroup },
	{ JOULES_CMD_DUMP_CGROUPS, false, true, pol_dump_cg },
	{ JOULES_CMD_METER_FEED, true, false, pol_feed },
};
#define NR_OPS (sizeof(ops) / sizeof(ops[0]))
_Static_assert(JOULES_CMD_MAX == JOULES_CMD_METER_FEED,
	       "a new command: add it to ops[] with its policy and rules");
_Static_assert(JOULES_A_MAX == JOULES_A_CGROUP_ROOT_FD,
	       "a new attribute: is it in a request policy?");

static const struct op *op_of(unsigned int cmd)
{
	for (size_t i = 0; i < NR_OPS; i++)
		if (ops[i].cmd == cmd)
			return &ops[i];
	return NULL;
}

/* The whole attributes in [p, p + len), as nla_for_each_attr() walks them. */
#define for_each_nla(a, p, len, rem)                           \
	for (a = (const struct nlattr *)(p), rem = (int)(len); \
	     rem >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&  \
	     a->nla_len <= rem;                                \
	     rem -= NLA_ALIGN(a->nla_len),                     \
	    a = (const struct nlattr *)((const char *)a +      \
					NLA_ALIGN(a->nla_len)))

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
 * the kernel, or -1000 on silence or a malformed reply. A request whose
 * success has no answer at all (METER_FEED without NLM_F_ACK) is followed
 * by a barrier, `bseq` (0: none): the barrier answered first means success.
 */
static int answer(int fd, uint32_t seq, bool dump, bool ack, uint32_t bseq)
{
	bool got_reply = false;

	for (;;) {
		ssize_t n = recv(fd, rbuf, sizeof(rbuf), 0);
		struct nlmsghdr *h;

		if (n < 0)
			return got_reply && !ack && !dump ? 0 : -1000;
		for (h = (struct nlmsghdr *)rbuf; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			if (bseq && h->nlmsg_seq == bseq)
				return 0;
			if (h->nlmsg_seq != seq)
				continue; /* a late answer to an earlier request */
			if (h->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(h);

				if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
					return -1000;
				return e->error;
			}
			if (bseq)
				return -1000; /* METER_FEED never replies */
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

/* The controller's ops of the family: CAP_DO/CAP_DUMP bits, 0x80 if listed. */
static uint8_t kernel_ops[256];

static void ctrl_ops(const struct nlattr *ops_attr)
{
	const struct nlattr *e, *a;
	int rem, rem2;

	for_each_nla(e, (const char *)ops_attr + NLA_HDRLEN,
		     ops_attr->nla_len - NLA_HDRLEN, rem)
	{
		uint32_t id = 256, flags = 0;

		for_each_nla(a, (const char *)e + NLA_HDRLEN,
			     e->nla_len - NLA_HDRLEN, rem2)
		{
			if ((a->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_OP_ID)
				memcpy(&id, (const char *)a + NLA_HDRLEN, 4);
			if ((a->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_OP_FLAGS)
				memcpy(&flags, (const char *)a + NLA_HDRLEN, 4);
		}
		if (id < 256)
			kernel_ops[id] =
				0x80 |
				(flags & (GENL_CMD_CAP_DO | GENL_CMD_CAP_DUMP));
	}
}

static int resolve(int fd, uint16_t *family)
{
	struct {
		struct nlmsghdr h;
		struct genlmsghdr g;
		char attrs[64];
	} req = { 0 };
	struct nlattr *na = (struct nlattr *)req.attrs;
	const struct nlattr *a;
	struct nlmsghdr *h;
	bool found = false;
	ssize_t n;
	int rem;

	na->nla_type = CTRL_ATTR_FAMILY_NAME;
	na->nla_len = NLA_HDRLEN + sizeof(JOULES_GENL_NAME);
	memcpy((char *)na + NLA_HDRLEN, JOULES_GENL_NAME,
	       sizeof(JOULES_GENL_NAME));
	req.h.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN) + NLA_ALIGN(na->nla_len);
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
	for_each_nla(a, (char *)NLMSG_DATA(h) + GENL_HDRLEN,
		     h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN), rem)
	{
		if (a->nla_type == CTRL_ATTR_FAMILY_ID) {
			memcpy(family, (const char *)a + NLA_HDRLEN, 2);
			found = true;
		}
		if ((a->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_OPS)
			ctrl_ops(a);
	}
	return found ? 0 : -1;
}

/* ---- what a request must get ---- */

enum want {
	WANT_ANY, /* answered, whatever the answer */
	WANT_REFUSAL, /* an error, whichever */
	WANT_ERR, /* exactly err */
	WANT_OK, /* success */
	WANT_OK_OR_ERR, /* success or exactly err */
};

struct expect {
	enum want kind;
	int err;
	bool feed; /* reaches joules_wall_feed(): counted in wallmeter/ */
	bool power, reset;
	uint64_t value;
	char name[32];
};

static bool expect_met(const struct expect *x, int r)
{
	switch (x->kind) {
	case WANT_REFUSAL:
		return r < 0;
	case WANT_ERR:
		return r == x->err;
	case WANT_OK:
		return r == 0;
	case WANT_OK_OR_ERR:
		return r == 0 || r == x->err;
	default:
		return true;
	}
}

/* One attribute against its policy entry, as validate_nla() strictly. */
static bool nla_allowed(const struct nlattr *a, const struct apol *p)
{
	const uint8_t *d = (const uint8_t *)a + NLA_HDRLEN;
	unsigned int len = a->nla_len - NLA_HDRLEN, min;
	uint32_t v;

	if (a->nla_type & NLA_F_NESTED)
		return false; /* NLA_F_NESTED not expected (or unknown) */
	switch (p->kind) {
	case A_PID:
		if (len != 4)
			return false;
		memcpy(&v, d, 4);
		return v >= 1 && v <= PID_LIMIT;
	case A_U64:
		return len == 8;
	case A_FD:
		if (len != 4)
			return false;
		memcpy(&v, d, 4);
		return v <= 0x7fffffffU;
	case A_FLAG:
		return len == 0;
	case A_STR:
		/* NLA_NUL_STRING: a NUL early enough, one trailing NUL dropped. */
		min = len < p->len + 1U ? len : p->len + 1U;
		if (!min || !memchr(d, 0, min))
			return false;
		return len - !d[len - 1] <= p->len;
	default:
		return false;
	}
}

/*
 * The strict parse of the attributes (nlmsg_parse() with NL_VALIDATE_STRICT):
 * false if it refuses them (an attribute not whole, bytes left over, a type
 * of 0 or above the maximum, one its policy does not allow); tb[] the last
 * of each type otherwise.
 */
static bool parse_strict(const char *p, size_t len, const struct apol *pol,
			 const struct nlattr **tb)
{
	memset(tb, 0, sizeof(*tb) * (JOULES_A_MAX + 1));
	while (len) {
		const struct nlattr *a = (const struct nlattr *)p;
		unsigned int type = a->nla_type & NLA_TYPE_MASK;
		size_t step;

		if (len < NLA_HDRLEN || a->nla_len < NLA_HDRLEN ||
		    a->nla_len > len)
			return false;
		if (!type || type > JOULES_A_MAX || !nla_allowed(a, &pol[type]))
			return false;
		tb[type] = a;
		step = NLA_ALIGN(a->nla_len);
		if (step >= len)
			return true;
		p += step;
		len -= step;
	}
	return true;
}

static uint64_t nla_u64(const struct nlattr *a)
{
	uint64_t v;

	memcpy(&v, (const char *)a + NLA_HDRLEN, 8);
	return v;
}

/*
 * The wall meter as the fuzz's own readings left it (known once one was
 * taken, and only with no other feeder): its name, kind, last value, and
 * when the request that was last taken was sent (CLOCK_BOOTTIME, as the
 * module's timeout).
 */
static struct {
	bool known, alone, power;
	char name[32];
	uint64_t raw, sent_ns, timeout_ns, max_uw;
} wm;

static uint64_t boot_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * The most energy the next reading of the meter may add (uJ), read after
 * its answer: the module refuses more than max_power over the time since
 * the last reading was taken plus its power window (jl_wall_reading_aged()),
 * and that time is at most since the last taken one was sent plus its age.
 */
static uint64_t feed_room(void)
{
	unsigned __int128 r = (unsigned __int128)wm.max_uw *
			      (boot_ns() - wm.sent_ns + MAX_AGE_NS + PW_MAX_NS);

	r = r / 1000000000ULL + 1;
	return r > UINT64_MAX ? UINT64_MAX : (uint64_t)r;
}

/*
 * METER_FEED past the policy, as root (joules_nl_meter_feed() then
 * joules_wall_feed() and jl_wall_reading_aged()): a name of printable
 * ASCII without blanks, exactly one of energy and power, else EINVAL; an
 * age above 60 s or a power above wallmeter/max_power_w, ERANGE; a power,
 * a reset, or a reading of another meter or kind (a new baseline) taken;
 * energy that went back, ERANGE; more energy, taken or ERANGE (too fast).
 * A meter silent for timeout_ms starts a new baseline: near that, either.
 */
static void feed_rules(const struct nlattr **tb, struct expect *x)
{
	const struct nlattr *ua = tb[JOULES_A_METER_UJ];
	const struct nlattr *pa = tb[JOULES_A_METER_POWER_UW];
	const char *name =
		tb[JOULES_A_METER_NAME] ?
			(const char *)tb[JOULES_A_METER_NAME] + NLA_HDRLEN :
			"";
	const char *c;
	bool same;

	x->kind = WANT_ERR;
	x->err = -EINVAL;
	for (c = name; *c; c++)
		if (*c <= ' ' || *c > '~')
			return;
	if (c == name || !ua == !pa)
		return;
	x->feed = true;
	x->power = pa;
	x->reset = tb[JOULES_A_METER_RESET];
	x->value = nla_u64(pa ? pa : ua);
	strcpy(x->name, name);
	x->err = -ERANGE;
	if ((tb[JOULES_A_METER_AGE_NS] &&
	     nla_u64(tb[JOULES_A_METER_AGE_NS]) > MAX_AGE_NS) ||
	    (x->power && x->value > wm.max_uw))
		return;
	x->kind = WANT_OK;
	if (x->power || x->reset)
		return;
	/* Energy: another meter or kind is a new baseline. */
	same = wm.known && !wm.power && !strcmp(wm.name, name);
	if (wm.known && !same)
		return;
	x->kind = WANT_OK_OR_ERR;
	if (same && boot_ns() - wm.sent_ns < wm.timeout_ns / 2 &&
	    (x->value < wm.raw || x->value - wm.raw > feed_room()))
		x->kind = WANT_ERR;
}

/*
 * A handler's "exactly one of a and b": EINVAL if not; false then, else
 * true with whatever answer for now.
 */
static bool one_of(const struct nlattr **tb, int a, int b, struct expect *x)
{
	x->kind = !tb[a] == !tb[b] ? WANT_ERR : WANT_ANY;
	x->err = -EINVAL;
	return x->kind == WANT_ANY;
}

static bool cgroup_root_ok; /* GET_CGROUP "/" answered before the fuzz */
static int cg_fd = -1; /* a cgroup v2 directory the fuzz holds open, or -1 */

/* What the request in msg (n bytes, as sent) must get. */
static void judge(const char *msg, size_t n, struct expect *x)
{
	const struct nlmsghdr *h = (const struct nlmsghdr *)msg;
	const struct genlmsghdr *g = NLMSG_DATA(h);
	const struct nlattr *tb[JOULES_A_MAX + 1];
	bool dump = (h->nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP;
	const struct op *op;
	uint32_t pid;

	memset(x, 0, sizeof(*x));
	x->kind = WANT_REFUSAL;
	/* No whole genl header; a command (or mode) the family lacks. */
	if (n < NLMSG_LENGTH(GENL_HDRLEN))
		return;
	op = op_of(g->cmd);
	if (!op || (dump ? !op->dumpit : !op->doit)) {
		x->kind = WANT_ERR;
		x->err = -EOPNOTSUPP;
		return;
	}
	if (!parse_strict(msg + NLMSG_LENGTH(GENL_HDRLEN),
			  n - NLMSG_LENGTH(GENL_HDRLEN), op->pol, tb))
		return;
	switch (op->cmd) {
	case JOULES_CMD_GET_TASK:
		if (!one_of(tb, JOULES_A_PID, JOULES_A_TID, x))
			return;
		if (tb[JOULES_A_PID]) {
			memcpy(&pid,
			       (const char *)tb[JOULES_A_PID] + NLA_HDRLEN, 4);
			if (pid == (uint32_t)getpid())
				x->kind = WANT_OK;
		}
		break;
	case JOULES_CMD_GET_CGROUP:
		if (!one_of(tb, JOULES_A_CGROUP_ID, JOULES_A_CGROUP_PATH, x))
			return;
		if (cgroup_root_ok && tb[JOULES_A_CGROUP_PATH] &&
		    !strcmp((const char *)tb[JOULES_A_CGROUP_PATH] + NLA_HDRLEN,
			    "/"))
			x->kind = WANT_OK;
		break;
	case JOULES_CMD_METER_FEED:
		feed_rules(tb, x);
		break;
	case JOULES_CMD_DUMP_CGROUPS:
		/* A root other than a cgroup v2 directory: EBADF, said why. */
		x->kind = WANT_OK;
		if (tb[JOULES_A_CGROUP_ROOT_FD]) {
			memcpy(&pid,
			       (const char *)tb[JOULES_A_CGROUP_ROOT_FD] +
				       NLA_HDRLEN,
			       4);
			if (cg_fd < 0 || pid != (uint32_t)cg_fd) {
				x->kind = WANT_ERR;
				x->err = -EBADF;
			}
		}
		break;
	default:
		/* GET_NODE as root, and DUMP_TASKS. */
		x->kind = WANT_OK;
	}
	/* The module reads no version; success is asked only of version 1. */
	if (g->version != JOULES_GENL_VERSION &&
	    (x->kind == WANT_OK || x->kind == WANT_OK_OR_ERR))
		x->kind = WANT_ANY;
}

/* ---- building requests ---- */

/* An attribute at msg + off; returns the offset after it. */
static size_t put(char *msg, size_t off, unsigned int type, const void *data,
		  unsigned int len)
{
	struct nlattr *a = (struct nlattr *)(msg + off);

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, data, len);
	memset((char *)a + NLA_HDRLEN + len, 0, NLA_ALIGN(len) - len);
	return off + NLA_ALIGN(NLA_HDRLEN + len);
}

static uint64_t pick(const uint64_t *v, size_t n)
{
	return v[rnd() % n];
}

/* A u64 payload: 8 bytes mostly, a length that lies sometimes. */
static unsigned int u64_len(void)
{
	static const unsigned int lens[] = { 0, 4, 7, 9, 16 };

	return rnd() % 12 ? 8 : lens[rnd() % 5];
}

/* Meter names: printable, none that the kernel's checkers would match. */
static const char *const names[] = {
	"fz84-1", "fz84-2",
	"fz84~!.0123456789-0123456789-01", /* 31 bytes, the longest */
};
_Static_assert(sizeof("fz84~!.0123456789-0123456789-01") == 32, "31 bytes");

/* A METER_NAME payload into b: good, or broken in one of several ways. */
static unsigned int feed_name(char *b)
{
	static const char bad[] = { ' ', '\t', '\n', 0x1f, 0x7f, (char)0x80 };
	const char *nm = names[rnd() % 3];
	unsigned int len = strlen(nm) + 1, k = rnd() % 16;

	memset(b, 0, 48);
	memcpy(b, nm, len);
	if (k < 3) {
		/* Zeros after the NUL: 32 bytes at most are allowed. */
		len += rnd() % (34 - len);
	} else if (k == 3) {
		len = 1; /* "" */
	} else if (k == 4) {
		len = 0;
	} else if (k == 5) {
		b[rnd() % (len - 1)] = bad[rnd() % sizeof(bad)];
	} else if (k == 6) {
		/* Too long, or no NUL at all. */
		memset(b, 'x', 33);
		len = 31 + rnd() % 3;
		b[len - 1] = rnd() % 2 ? 0 : 'x';
	} else if (k == 7) {
		/* Bytes after the NUL: the name ends at the NUL. */
		memcpy(b + len, "xyz", 3);
		len += 3;
	}
	return len;
}

struct fattr {
	unsigned int type, len;
	char d[48];
};

/* METER_FEED's attributes in a random order; the offset after them. */
static size_t feed_attrs(char *msg, size_t off)
{
	static const uint64_t ages[] = {
		0, 1, MAX_AGE_NS - 1, MAX_AGE_NS, MAX_AGE_NS + 1, ~0ULL
	};
	static uint64_t uj = 1000000;
	uint64_t pw[] = { 0, 1, wm.max_uw, wm.max_uw + 1, ~0ULL, 50000000 };
	struct fattr f[8] = { 0 };
	unsigned int nf = 0, k, v = rnd() % 10;
	uint64_t x;

	if (rnd() % 16) {
		f[nf].type = JOULES_A_METER_NAME;
		f[nf].len = feed_name(f[nf].d);
		nf++;
	}
	if (v < 5 || v == 8) {
		/* Energy: on from the last reading taken, back, or an edge. */
		if (wm.known && !wm.power)
			uj = wm.raw;
		k = rnd() % 9;
		x = k < 5 ? uj + rnd() % 20000 :
		    k == 5 ?
			    uj - 1 - rnd() % 1000 :
		    k == 6 ?
			    pick((const uint64_t[]){ 0, 1, ~0ULL }, 3) :
			    /* Beyond what the module may take by the answer (too fast). */
			    k == 7 ? uj + 2 * feed_room() :
				     rnd();
		f[nf].type = JOULES_A_METER_UJ;
		f[nf].len = u64_len();
		memcpy(f[nf].d, &x, 8);
		nf++;
	}
	if ((v >= 5 && v < 8) || v == 8) {
		x = rnd() % 4 ? pick(pw, 6) : rnd() % (wm.max_uw + 2);
		f[nf].type = JOULES_A_METER_POWER_UW;
		f[nf].len = u64_len();
		memcpy(f[nf].d, &x, 8);
		nf++;
	}
	if (rnd() % 5 == 0) {
		f[nf].type = JOULES_A_METER_RESET;
		f[nf].len = rnd() % 8 ? 0 : 4;
		memset(f[nf].d, 0, 4);
		nf++;
	}
	if (rnd() % 5 < 2) {
		x = rnd() % 3 ? pick(ages, 6) : rnd() % (MAX_AGE_NS + 2);
		f[nf].type = JOULES_A_METER_AGE_NS;
		f[nf].len = u64_len();
		memcpy(f[nf].d, &x, 8);
		nf++;
	}
	if (nf && rnd() % 16 == 0) {
		/* The same type twice: the last one counts, both are checked. */
		f[nf] = f[rnd() % nf];
		if (f[nf].len == 8)
			f[nf].d[rnd() % 8] ^= 1;
		nf++;
	}
	if (rnd() % 10 == 0) {
		/* One that the policy does not list, or a flag in its type. */
		f[nf].type = rnd() % (JOULES_A_MAX + 2) |
			     (rnd() % 4 ? 0 : NLA_F_NESTED);
		f[nf].len = rnd() % 12;
		for (k = 0; k < f[nf].len; k++)
			f[nf].d[k] = rnd();
		nf++;
	}
	for (k = nf; k > 1; k--) {
		unsigned int j = rnd() % k;
		struct fattr t = f[k - 1];

		f[k - 1] = f[j];
		f[j] = t;
	}
	for (k = 0; k < nf; k++)
		off = put(msg, off, f[k].type, f[k].d, f[k].len);
	return off;
}

/* Random attributes of any type; cgroup commands' own ones often. */
static size_t random_attrs(char *msg, size_t off, size_t cap, uint8_t cmd)
{
	unsigned int k, nattrs = rnd() % 5;

	for (k = 0; k < nattrs && off + 300 < cap; k++) {
		struct nlattr *a = (struct nlattr *)(msg + off);
		unsigned int plen = rnd() % 3 ? 4 : rnd() % 40;
		unsigned int type =
			rnd() % 3 ? rnd() % (JOULES_A_MAX + 1) : rnd() % 0x4000;

		if ((cmd == JOULES_CMD_GET_CGROUP ||
		     cmd == JOULES_CMD_DUMP_CGROUPS) &&
		    rnd() % 2) {
			const char *path = rnd() % 2 ? "/" : "/nonesuch";
			uint64_t id[2] = { rnd() % 4 ? 1 + rnd() % 4096 :
						       rnd() };

			off = rnd() % 2 ? put(msg, off, JOULES_A_CGROUP_ID, id,
					      u64_len()) :
					  put(msg, off, JOULES_A_CGROUP_PATH,
					      path, strlen(path) + 1);
			continue;
		}
		if (cmd == JOULES_CMD_DUMP_CGROUPS && rnd() % 3 == 0) {
			/* The root: ours, stdio, none open, out of range. */
			uint32_t v[2] = { rnd() % 2 ? (uint32_t)cg_fd :
					  rnd() % 2 ? rnd() % 3 :
					  rnd() % 2 ? 1000 + rnd() % 1000 :
						      (uint32_t)rnd() };

			off = put(msg, off, JOULES_A_CGROUP_ROOT_FD, v,
				  rnd() % 8 ? 4 : rnd() % 9);
			continue;
		}
		/* The lagged view's flag, allowed on every read. */
		if (rnd() % 8 == 0) {
			type = JOULES_A_LAGGED;
			plen = rnd() % 2 ? 0 : 4;
		}
		a->nla_type = type | (rnd() % 16 == 0 ? NLA_F_NESTED : 0);
		a->nla_len = NLA_HDRLEN + plen;
		for (unsigned int i = 0; i < plen; i++)
			((uint8_t *)a)[NLA_HDRLEN + i] =
				rnd() % 4 ? rnd() % 256 : 0;
		if (rnd() % 4 == 0)
			*(uint32_t *)((char *)a + NLA_HDRLEN) =
				rnd() % 3 ? (uint32_t)getpid() :
					    (uint32_t)rnd();
		off += NLA_ALIGN(NLA_HDRLEN + plen);
	}
	return off;
}

/* A command number: each the family defines, others, and none. */
static uint8_t pick_cmd(void)
{
	switch (rnd() % 16) {
	case 0:
	case 1:
		return rnd() % 256;
	case 2:
		/* Every number of the enum, messages included, and the next. */
		return rnd() % (JOULES_CMD_MAX + 2);
	case 3:
		return JOULES_CMD_GET_NODE;
	case 4:
		return JOULES_CMD_GET_CGROUP;
	case 5:
		return JOULES_CMD_DUMP_CGROUPS;
	case 6:
	case 7:
		return JOULES_CMD_METER_FEED;
	case 8:
	case 9:
	case 10:
		return JOULES_CMD_DUMP_TASKS;
	default:
		return JOULES_CMD_GET_TASK;
	}
}

/* Build one request; its length. */
static size_t build(char *msg, size_t cap, uint16_t family, uint32_t seq)
{
	struct nlmsghdr *h = (struct nlmsghdr *)msg;
	struct genlmsghdr *g = NLMSG_DATA(h);
	size_t off = NLMSG_LENGTH(GENL_HDRLEN);
	uint8_t cmd = pick_cmd();
	const struct op *op = op_of(cmd);
	bool dump = op && op->dumpit && !op->doit ? rnd() % 8 != 0 :
						    rnd() % 16 == 0;

	memset(msg, 0, 64);
	h->nlmsg_type = family;
	h->nlmsg_flags = NLM_F_REQUEST | (dump ? NLM_F_DUMP : 0) |
			 (rnd() % 2 ? NLM_F_ACK : 0);
	h->nlmsg_seq = seq;
	g->cmd = cmd;
	g->version = rnd() % 4 ? JOULES_GENL_VERSION : rnd() % 256;

	if (cmd == JOULES_CMD_METER_FEED) {
		off = feed_attrs(msg, off);
	} else if (cmd == JOULES_CMD_GET_TASK && !dump && rnd() % 4 == 0) {
		/* A well-formed request for ourselves. */
		uint32_t pid = getpid();

		off = put(msg, off, JOULES_A_PID, &pid, 4);
	} else {
		off = random_attrs(msg, off, cap, cmd);
	}
	if (rnd() % 10 == 0 && off > NLMSG_LENGTH(GENL_HDRLEN)) {
		/* A length that lies about the first attribute's payload. */
		struct nlattr *a =
			(struct nlattr *)(msg + NLMSG_LENGTH(GENL_HDRLEN));

		a->nla_len =
			rnd() % 2 ? rnd() % NLA_HDRLEN : 1000 + rnd() % 1000;
	}
	if (rnd() % 20 == 0 && off > NLMSG_HDRLEN + 1)
		/* Truncated: the genl header or an attribute cut short. */
		off = NLMSG_HDRLEN + rnd() % (off - NLMSG_HDRLEN);
	h->nlmsg_len = off;
	return off;
}

/* A request the family refuses whatever comes (command 0), as a barrier. */
static int send_barrier(int fd, uint16_t family, uint32_t seq)
{
	struct {
		struct nlmsghdr h;
		struct genlmsghdr g;
	} b = { .h = { .nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN),
		       .nlmsg_type = family,
		       .nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK,
		       .nlmsg_seq = seq } };

	return send(fd, &b, b.h.nlmsg_len, 0) < 0 ? -1 : 0;
}

static unsigned long count;
static uint64_t seed;
static uint16_t family;

struct stats {
	unsigned long sent, refused, accepted, wrong, silent, feeds, taken,
		feed_refused;
};

/* The outcome of one request: counted, and named when it is wrong. */
static void tally(struct stats *st, unsigned long i, const char *msg, size_t n,
		  const struct expect *x, int r, uint64_t sent_ns)
{
	const struct genlmsghdr *g = NLMSG_DATA((const struct nlmsghdr *)msg);

	if (r == -1000) {
		st->silent++;
		if (st->silent < 5)
			DIAG("request %lu (cmd %u, %zu bytes) got no answer", i,
			     g->cmd, n);
		return;
	}
	if (r < 0)
		st->refused++;
	else
		st->accepted++;
	if (x->feed) {
		if (r == 0) {
			st->taken++;
			wm.known = wm.alone;
			wm.power = x->power;
			wm.raw = x->value;
			wm.sent_ns = sent_ns;
			strcpy(wm.name, x->name);
		} else {
			st->feed_refused++;
		}
	}
	if (!expect_met(x, r)) {
		st->wrong++;
		if (st->wrong < 8) {
			char hex[200] = "";

			for (size_t j = 0; j < n && j < 80; j++)
				sprintf(hex + strlen(hex), "%02x",
					(uint8_t)msg[j]);
			DIAG("request %lu (cmd %u): expected %d (err %d), got %d: %s",
			     i, g->cmd, x->kind, x->err, r, hex);
		}
	}
}

/*
 * Random requests: each answered as its rules say, none unanswered; the
 * model untouched; the module still answering afterwards; the wall meter
 * the fuzz fed taken away by a reload.
 */
FIXTURE(fuzz)
{
	struct st_settings saved;
	unsigned long long readings, refused;
};

/* What a wrongly accepted request might change is put back afterwards. */
FIXTURE_SETUP(fuzz)
{
	st_settings_save(&self->saved);
	self->readings = st_sysfs_u64("wallmeter/readings");
	self->refused = st_sysfs_u64("wallmeter/refused");
}

/*
 * No command takes a wall meter away, and one that fell silent stays in
 * wallmeter/status and NODE records: when the fuzz fed the meter (or was
 * refused by it: its counters), a reload leaves the node as a fresh load
 * does, without one (the settings, wallmeter's too, are then put back).
 */
FIXTURE_TEARDOWN_PARENT(fuzz)
{
	struct node_rec node = { 0 };
	char now[128] = "";
	struct jnl *nl;

	if (st_sysfs_u64("wallmeter/readings") != self->readings ||
	    st_sysfs_u64("wallmeter/refused") != self->refused) {
		EXPECT_EQ(
			0,
			st_sh(". /lib/joules/lib.sh; joules_unload && joules_load"));
		st_read(WALL "/status", now, sizeof(now));
		CHECK(!strncmp(now, "absent", 6),
		      "wall meter after the reload: %s", now);
		if (CHECK(!jnl_open(&nl), "netlink after the reload")) {
			CHECK(!jnl_get_node(nl, &node) && !node.meter_name[0],
			      "no meter in NODE after the reload ('%s')",
			      node.meter_name);
			jnl_close(nl);
		}
	}
	EXPECT_EQ(0, st_settings_restore(&self->saved));
}

TEST_F_TIMEOUT(fuzz, random_requests, 1800)
{
	char g0[32], g1[32], b[1024], status[128] = "";
	static char msg[4096];
	struct stats st = { 0 };
	unsigned long long r0 = self->readings, f0 = self->refused;
	unsigned long i;
	int fd = sock_open();
	struct statfs sfs;
	struct jnl *nl;

	ASSERT_LE(0, fd);
	DIAG("seed %llu, %lu requests (replay: 84-fuzz-netlink %lu %llu, or SEED=%llu, or run-qemu.sh --append jseed=%llu)",
	     (unsigned long long)seed, count, count, (unsigned long long)seed,
	     (unsigned long long)seed, (unsigned long long)seed);
	for (i = 0; i < 256; i++) {
		const struct op *op = op_of(i);
		unsigned int want =
			op ? 0x80 | (op->doit ? GENL_CMD_CAP_DO : 0) |
					(op->dumpit ? GENL_CMD_CAP_DUMP : 0) :
			     0;

		CHECK(kernel_ops[i] == want,
		      "command %lu: the controller says %#x, the fuzzer knows %#x",
		      i, kernel_ops[i], want);
	}
	if (!jnl_open(&nl)) {
		struct cgroup_rec cr;

		cgroup_root_ok = !jnl_get_cgroup(nl, "/", 0, &cr);
		jnl_close(nl);
	}
	cg_fd = open(ST_CG, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg_fd >= 0 && (fstatfs(cg_fd, &sfs) || sfs.f_type != 0x63677270)) {
		close(cg_fd); /* not cgroup2 (CGROUP2_SUPER_MAGIC): none */
		cg_fd = -1;
	}
	wm.max_uw = st_sysfs_u64("wallmeter/max_power_w") * 1000000ULL;
	wm.timeout_ns = st_sysfs_u64("wallmeter/timeout_ms") * 1000000ULL;
	/* A meter in force is another feeder's: energy readings are then open. */
	st_read(WALL "/status", status, sizeof(status));
	wm.alone =
		!strncmp(status, "absent", 6) || !strncmp(status, "silent", 6);
	if (!wm.alone)
		DIAG("another feeder's meter is in force: %s", status);
	st_read(JOULES_SYSFS "/model/generation", g0, sizeof(g0));
	for (i = 0; i < count; i++) {
		uint32_t seq = 100 + i;
		size_t n = build(msg, sizeof(msg), family, seq);
		const struct nlmsghdr *h = (const struct nlmsghdr *)msg;
		const struct genlmsghdr *g = NLMSG_DATA(h);
		bool dump = (h->nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP;
		bool ack = h->nlmsg_flags & NLM_F_ACK;
		uint64_t sent_ns = boot_ns();
		uint32_t bseq = 0;
		struct expect x;
		int r;

		if (send(fd, msg, n, 0) < 0) {
			/* The socket itself refused a broken header: also a refusal. */
			st.refused++;
			continue;
		}
		st.sent++;
		/* A message shorter than a genl header never reaches the family. */
		if (n < NLMSG_LENGTH(GENL_HDRLEN)) {
			dump = false;
			ack = true;
		} else if (g->cmd == JOULES_CMD_METER_FEED && !dump && !ack) {
			bseq = seq | 0x80000000U;
			if (send_barrier(fd, family, bseq))
				bseq = 0;
		}
		r = answer(fd, seq, dump, ack, bseq);
		/* Judged after the answer: the meter's silence bounded from above. */
		judge(msg, n, &x);
		if (x.feed)
			st.feeds++;
		tally(&st, i, msg, n, &x, r, sent_ns);
		if (r == -1000) {
			/* Resynchronise on a fresh socket. */
			close(fd);
			fd = sock_open();
		}
	}
	CHECK(st.wrong == 0 && st.silent == 0,
	      "%lu requests: %lu refused, %lu answered, %lu wrong, %lu unanswered",
	      count, st.refused, st.accepted, st.wrong, st.silent);
	DIAG("%lu meter readings past the handler's checks: %lu taken, %lu refused",
	     st.feeds, st.taken, st.feed_refused);
	if (wm.alone)
		CHECK(st_sysfs_u64("wallmeter/readings") - r0 == st.taken &&
			      st_sysfs_u64("wallmeter/refused") - f0 ==
				      st.feed_refused,
		      "wallmeter/readings +%llu, refused +%llu",
		      st_sysfs_u64("wallmeter/readings") - r0,
		      st_sysfs_u64("wallmeter/refused") - f0);
	st_read(JOULES_SYSFS "/model/generation", g1, sizeof(g1));
	g1[strcspn(g1, "\n")] = 0;
	CHECK(!strncmp(g0, g1, strlen(g1)), "model generation unchanged (%s)",
	      g1);
	{
		/* A plain GET_NODE and a per-pid read still work. */
		struct {
			struct nlmsghdr h;
			struct genlmsghdr g;
		} req = { .h = { .nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN),
				 .nlmsg_type = family,
				 .nlmsg_flags = NLM_F_REQUEST,
				 .nlmsg_seq = 7 },
			  .g = { .cmd = JOULES_CMD_GET_NODE,
				 .version = JOULES_GENL_VERSION } };
		int r = send(fd, &req, req.h.nlmsg_len, 0) < 0 ?
				-errno :
				answer(fd, 7, false, false, 0);

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
	/*
	 * Numbers (not options) first: how many requests, and the seed (or
	 * SEED=, or jseed= on the guest's command line).
	 */
	count = argc > 1 && argv[1][0] != '-' ? strtoul(argv[1], NULL, 10) :
						50000;
	if (argc > 2 && argv[2][0] != '-')
		seed = strtoull(argv[2], NULL, 0);
	else if (getenv("SEED") || getenv("jseed"))
		seed = strtoull(getenv("SEED") ? getenv("SEED") :
						 getenv("jseed"),
				NULL, 0);
	/* 0 would stop xorshift: the fixed start, as without a seed. */
	if (seed)
		rng = seed;
	seed = rng;
	return test_harness_run(argc, argv);
}
