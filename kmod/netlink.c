// SPDX-License-Identifier: GPL-2.0
/*
 * joules: generic netlink family "joules" (Documentation/netlink.rst).
 *
 * Requests: GET_TASK (one process or thread), DUMP_TASKS (every readable
 * process or thread), GET_NODE (node totals: CAP_PERFMON or CAP_SYS_ADMIN),
 * GET_CGROUP and DUMP_CGROUPS (cgroup totals, cgroup.c), METER_FEED (a
 * wall meter's reading, CAP_SYS_ADMIN; wallmeter.c).
 * Multicast: "samples" (one message per attribution interval) and "exits"
 * (final totals of exited tasks and cgroups, CGROUP_EXIT), both
 * CAP_SYS_ADMIN: measured node energy
 * and every user's data (the genetlink core checks one capability per
 * group at join time; CAP_PERFMON cannot be expressed there).
 *
 * Who reads: both whoever opened the socket and the task that sends the
 * request must be allowed (perm.c), so a socket handed to a setuid program
 * answers with its opener's rights (the CVE-2014-0181 class). Pids are
 * found and printed in the pid namespace of the task that sent the request
 * (a dump's, at its start); uids in the socket opener's user namespace.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/threads.h>
#include <net/genetlink.h>
#include <net/netlink.h>
#include <net/sock.h>
#include <linux/cgroup.h>
#include <linux/kernfs.h>
#include <linux/slab.h>

#include "compat.h"
#include "cgroup.h"
#include "model.h"
#include "netlink.h"
#include "perm.h"
#include "report.h"
#include "tasks.h"
#include "totals.h"
#include "wallmeter.h"
#include "uapi/joules_netlink.h"

/* The uapi bits are the module's bits; keep them from drifting apart. */
static_assert(JOULES_SOURCE_MODEL == JOULES_SRC_MODEL);
static_assert(JOULES_SOURCE_RAPL == JOULES_SRC_RAPL);
static_assert(JOULES_SOURCE_METER == JOULES_SRC_METER);
static_assert(JOULES_NR_DOMAINS == JL_NR_DOMAINS);
static_assert(JOULES_DOMAIN_PKG == BIT(JL_D_PKG) &&
	      JOULES_DOMAIN_CORE == BIT(JL_D_CORE));
static_assert(JOULES_DOMAIN_DRAM == BIT(JL_D_DRAM) &&
	      JOULES_DOMAIN_PSYS == BIT(JL_D_PSYS));
static_assert(JOULES_A_CORE_UJ == JOULES_A_PKG_UJ + JL_D_CORE);
static_assert(JOULES_A_DRAM_UJ == JOULES_A_PKG_UJ + JL_D_DRAM);
static_assert(JOULES_A_PSYS_UJ == JOULES_A_PKG_UJ + JL_D_PSYS);
static_assert(JOULES_FEAT_CPU_NS == BIT(JL_F_CPU_NS) &&
	      JOULES_FEAT_CYCLES == BIT(JL_F_CYCLES));
static_assert(JOULES_FEAT_INSTRUCTIONS == BIT(JL_F_INSTR));
static_assert(JOULES_FEAT_CACHE_MISSES == BIT(JL_F_MISSES));
static_assert(JOULES_FEAT_DISK_BYTES == BIT(JL_F_DISK));
static_assert(JOULES_FEAT_NET_TX_BYTES == BIT(JL_F_NET_TX) &&
	      JOULES_FEAT_NET_RX_BYTES == BIT(JL_F_NET_RX));
static_assert(JOULES_FEAT_PAGECACHE_BYTES == BIT(JL_F_PAGECACHE));

/*
 * Counters a PMU or a kernel may lack (socket bytes before 6.3): absent,
 * never faked as zero. Page-cache reads stay in the optional set for the
 * protocol's sake; this module always has them (compat.h).
 */
#define JOULES_FEAT_OPT                                                   \
	(JOULES_FEAT_CYCLES | JOULES_FEAT_INSTRUCTIONS |                  \
	 JOULES_FEAT_CACHE_MISSES | JOULES_FEAT_NET_TX_BYTES |            \
	 JOULES_FEAT_NET_RX_BYTES | JOULES_FEAT_PAGECACHE_BYTES)

enum joules_nl_group {
	JOULES_NL_GRP_SAMPLES,
	JOULES_NL_GRP_EXITS,
};

/*
 * Per-group permission (GENL_MCAST_CAP_NET_ADMIN) is checked by the genetlink
 * core at bind time; 6.1 has no family bind callback to do it ourselves. On
 * a kernel without it the groups would be open to every user, so they are
 * not offered at all there.
 */
#if JL_HAVE_GENL_MCAST_CAP
static const struct genl_multicast_group joules_nl_mcgrps[] = {
	[JOULES_NL_GRP_SAMPLES] = { .name = JOULES_GENL_MCGRP_SAMPLES,
				    .flags = GENL_MCAST_CAP_SYS_ADMIN },
	[JOULES_NL_GRP_EXITS] = { .name = JOULES_GENL_MCGRP_EXITS,
				  .flags = GENL_MCAST_CAP_SYS_ADMIN },
};
#define JOULES_NL_NR_MCGRPS ARRAY_SIZE(joules_nl_mcgrps)
#else
#define joules_nl_mcgrps NULL
#define JOULES_NL_NR_MCGRPS 0
#endif

/* Not const: 6.1 policies point at a non-const range. */
static struct netlink_range_validation joules_nl_pid_range __ro_after_init = {
	.min = 1,
	.max = PID_MAX_LIMIT,
};

/* Attributes not listed are NLA_UNSPEC, which strict validation rejects. */
static const struct nla_policy joules_nl_get_task_policy[JOULES_A_MAX + 1] = {
	[JOULES_A_PID] = NLA_POLICY_FULL_RANGE(NLA_U32, &joules_nl_pid_range),
	[JOULES_A_TID] = NLA_POLICY_FULL_RANGE(NLA_U32, &joules_nl_pid_range),
	[JOULES_A_LAGGED] = { .type = NLA_FLAG },
};

static const struct nla_policy joules_nl_dump_policy[JOULES_A_MAX + 1] = {
	[JOULES_A_THREADS] = { .type = NLA_FLAG },
	[JOULES_A_LAGGED] = { .type = NLA_FLAG },
};

/* GET_NODE: the lagged view, or nothing. */
static const struct nla_policy joules_nl_node_policy[JOULES_A_MAX + 1] = {
	[JOULES_A_LAGGED] = { .type = NLA_FLAG },
};

/* GET_CGROUP: by id or by path (relative to the sender's cgroup namespace). */
static const struct nla_policy joules_nl_get_cgroup_policy[JOULES_A_MAX + 1] = {
	[JOULES_A_CGROUP_ID] = { .type = NLA_U64 },
	[JOULES_A_CGROUP_PATH] = { .type = NLA_NUL_STRING, .len = PATH_MAX - 1 },
	[JOULES_A_LAGGED] = { .type = NLA_FLAG },
};

static struct netlink_range_validation joules_nl_fd_range __ro_after_init = {
	.min = 0,
	.max = INT_MAX,
};

/* DUMP_CGROUPS: the lagged view, and the root by a directory, or nothing. */
static const struct nla_policy joules_nl_dump_cgroups_policy[JOULES_A_MAX + 1] = {
	[JOULES_A_LAGGED] = { .type = NLA_FLAG },
	[JOULES_A_CGROUP_ROOT_FD] = NLA_POLICY_FULL_RANGE(NLA_U32, &joules_nl_fd_range),
};

/* METER_FEED: a name and one of energy or power (checked in the handler). */
static const struct nla_policy joules_nl_meter_feed_policy[JOULES_A_MAX + 1] = {
	[JOULES_A_METER_NAME] = { .type = NLA_NUL_STRING, .len = 31 },
	[JOULES_A_METER_UJ] = { .type = NLA_U64 },
	[JOULES_A_METER_POWER_UW] = { .type = NLA_U64 },
	[JOULES_A_METER_RESET] = { .type = NLA_FLAG },
	[JOULES_A_METER_AGE_NS] = { .type = NLA_U64 },
};

static int joules_nl_get_task(struct sk_buff *skb, struct genl_info *info);
static int joules_nl_dump_start(struct netlink_callback *cb);
static int joules_nl_dump(struct sk_buff *skb, struct netlink_callback *cb);
static int joules_nl_dump_done(struct netlink_callback *cb);
static int joules_nl_get_node(struct sk_buff *skb, struct genl_info *info);
static int joules_nl_get_cgroup(struct sk_buff *skb, struct genl_info *info);
static int joules_nl_cg_dump_start(struct netlink_callback *cb);
static int joules_nl_cg_dump(struct sk_buff *skb, struct netlink_callback *cb);
static int joules_nl_cg_dump_done(struct netlink_callback *cb);
static int joules_nl_meter_feed(struct sk_buff *skb, struct genl_info *info);

/* .validate is 0: strict parsing for do and dump (no GENL_DONT_VALIDATE_*). */
static const struct genl_ops joules_nl_ops[] = {
	{
		.cmd = JOULES_CMD_GET_TASK,
		.doit = joules_nl_get_task,
		.policy = joules_nl_get_task_policy,
		.maxattr = JOULES_A_MAX,
	},
	{
		.cmd = JOULES_CMD_DUMP_TASKS,
		.start = joules_nl_dump_start,
		.dumpit = joules_nl_dump,
		.done = joules_nl_dump_done,
		.policy = joules_nl_dump_policy,
		.maxattr = JOULES_A_MAX,
	},
	{
		/* Node energy is a side channel: checked in the handler. */
		.cmd = JOULES_CMD_GET_NODE,
		.doit = joules_nl_get_node,
		.policy = joules_nl_node_policy,
		.maxattr = JOULES_A_MAX,
	},
	{
		.cmd = JOULES_CMD_GET_CGROUP,
		.doit = joules_nl_get_cgroup,
		.policy = joules_nl_get_cgroup_policy,
		.maxattr = JOULES_A_MAX,
	},
	{
		.cmd = JOULES_CMD_DUMP_CGROUPS,
		.start = joules_nl_cg_dump_start,
		.dumpit = joules_nl_cg_dump,
		.done = joules_nl_cg_dump_done,
		.policy = joules_nl_dump_cgroups_policy,
		.maxattr = JOULES_A_MAX,
	},
	{
		/* CAP_SYS_ADMIN of sender and opener: checked in the handler. */
		.cmd = JOULES_CMD_METER_FEED,
		.doit = joules_nl_meter_feed,
		.policy = joules_nl_meter_feed_policy,
		.maxattr = JOULES_A_MAX,
	},
};

static struct genl_family joules_nl_family __ro_after_init = {
	.name = JOULES_GENL_NAME,
	.version = JOULES_GENL_VERSION,
	.maxattr = JOULES_A_MAX,
	/*
	 * init_net only: the multicast permission check is against the netns
	 * owner, which must be the initial user namespace.
	 */
	.netnsok = false,
	.parallel_ops = true,
	.module = THIS_MODULE,
	.ops = joules_nl_ops,
	.n_ops = ARRAY_SIZE(joules_nl_ops),
	.mcgrps = joules_nl_mcgrps,
	.n_mcgrps = JOULES_NL_NR_MCGRPS,
	/* .resv_start_op 0: reserved header bytes are checked for every command. */
};

/*
 * Serialises the worker's multicasts against unregistering the family, so
 * that no message is sent on group ids the family no longer owns.
 */
static DEFINE_MUTEX(joules_nl_lock);
static bool joules_nl_up;

/*
 * Records are written in place: attributes are stored directly at the
 * skb's tail, each checked against the room left, and the skb grows once
 * at the end. A dump of 10,000 tasks spent 40% of its instructions in
 * nla_put()'s per-attribute calls (tailroom check, skb_put(), memset and
 * memcpy). The bytes on the wire are those nla_put*() would write.
 */
struct joules_nl_w {
	struct sk_buff *skb;
	u8 *p;		/* where the next attribute goes */
	u8 *start;	/* the record's first attribute */
	u8 *end;	/* end of the skb's room */
	bool full;	/* an attribute did not fit: the record is dropped */
};

/* Room for the largest single attribute, so an overflow can rewind. */
#define JOULES_NL_W_MIN 32

static bool joules_nl_w_start(struct joules_nl_w *w, struct sk_buff *skb)
{
	if (skb_tailroom(skb) < JOULES_NL_W_MIN)
		return false;
	w->skb = skb;
	w->start = w->p = skb_tail_pointer(skb);
	w->end = w->p + skb_tailroom(skb);
	w->full = false;
	return true;
}

/* 0, or -EMSGSIZE with the skb not grown when the record did not fit. */
static int joules_nl_w_end(struct joules_nl_w *w)
{
	if (w->full)
		return -EMSGSIZE;
	__skb_put(w->skb, w->p - w->start);
	return 0;
}

/*
 * Header of an attribute of @len bytes; returns where its data goes. One
 * that does not fit marks the record full and is written over its start
 * instead (never past the skb's room); the record is then dropped.
 */
static __always_inline void *joules_nl_w_attr(struct joules_nl_w *w, int type,
					      int len)
{
	struct nlattr *nla;

	BUILD_BUG_ON(nla_total_size(TASK_COMM_LEN) > JOULES_NL_W_MIN);
	if (unlikely(w->end - w->p < nla_total_size(len))) {
		w->full = true;
		w->p = w->start;
	}
	nla = (struct nlattr *)w->p;
	nla->nla_type = type;
	nla->nla_len = nla_attr_size(len);
	w->p += nla_total_size(len);
	return nla_data(nla);
}

static __always_inline void joules_nl_w_u32(struct joules_nl_w *w, int type,
					    u32 v)
{
	*(u32 *)joules_nl_w_attr(w, type, sizeof(v)) = v;
}

static __always_inline void joules_nl_w_flag(struct joules_nl_w *w, int type)
{
	joules_nl_w_attr(w, type, 0);
}

/* As nla_put_u64_64bit(): a pad attribute first where alignment matters. */
static __always_inline void joules_nl_w_u64(struct joules_nl_w *w, int type,
					    u64 v)
{
	if (!IS_ENABLED(CONFIG_HAVE_EFFICIENT_UNALIGNED_ACCESS) &&
	    !IS_ALIGNED((unsigned long)w->p + NLA_HDRLEN, 8))
		joules_nl_w_flag(w, JOULES_A_PAD);
	put_unaligned(v, (u64 *)joules_nl_w_attr(w, type, sizeof(v)));
}

/* A NUL-terminated comm, padded with zeros like nla_put_string(). */
static void joules_nl_w_comm(struct joules_nl_w *w, const char *comm)
{
	int len = strnlen(comm, TASK_COMM_LEN - 1) + 1;
	char *d = joules_nl_w_attr(w, JOULES_A_COMM, len);

	memcpy(d, comm, len - 1);
	memset(d + len - 1, 0, NLA_ALIGN(len) - len + 1);
}

static void joules_nl_w_domains(struct joules_nl_w *w, u32 domains,
				const u64 *uj)
{
	int d;

	for (d = 0; d < JL_NR_DOMAINS; d++)
		if (domains & BIT(d))
			joules_nl_w_u64(w, JOULES_A_PKG_UJ + d, uj[d]);
	joules_nl_w_u32(w, JOULES_A_DOMAINS, domains);
}

/* Feature values v[] (JL_F_* order); hardware ones only when present. */
static void joules_nl_w_feat(struct joules_nl_w *w, const jl_u64 *v,
			     u32 present)
{
	static const int attr[JL_NR_FEATURES] = {
		[JL_F_CPU_NS] = JOULES_A_CPU_NS,
		[JL_F_CYCLES] = JOULES_A_CYCLES,
		[JL_F_INSTR] = JOULES_A_INSTRUCTIONS,
		[JL_F_MISSES] = JOULES_A_CACHE_MISSES,
		[JL_F_DISK] = JOULES_A_DISK_BYTES,
		[JL_F_NET_TX] = JOULES_A_NET_TX_BYTES,
		[JL_F_NET_RX] = JOULES_A_NET_RX_BYTES,
		[JL_F_PAGECACHE] = JOULES_A_PAGECACHE_BYTES,
	};
	int f;

	for (f = 0; f < JL_NR_FEATURES; f++)
		if (present & BIT(f))
			joules_nl_w_u64(w, attr[f], v[f]);
	joules_nl_w_u32(w, JOULES_A_PRESENT, present);
}

/* A string of any length: one that does not fit drops the record. */
static void joules_nl_w_str(struct joules_nl_w *w, int type, const char *s)
{
	int len = strlen(s) + 1;
	struct nlattr *nla;

	if (w->full || w->end - w->p < nla_total_size(len)) {
		w->full = true;
		return;
	}
	nla = (struct nlattr *)w->p;
	nla->nla_type = type;
	nla->nla_len = nla_attr_size(len);
	memcpy(nla_data(nla), s, len);
	memset((u8 *)nla_data(nla) + len, 0, nla_padlen(len));
	w->p += nla_total_size(len);
}

/* The energy and counters of a task or cgroup record. */
static void joules_nl_w_energy(struct joules_nl_w *w, const struct joules_stats *st)
{
	jl_u64 feat[JL_NR_FEATURES] = {
		[JL_F_CPU_NS] = st->cpu_ns,
		[JL_F_CYCLES] = st->cycles,
		[JL_F_INSTR] = st->instructions,
		[JL_F_MISSES] = st->cache_misses,
		[JL_F_NET_TX] = st->net_tx_bytes,
		[JL_F_NET_RX] = st->net_rx_bytes,
		[JL_F_PAGECACHE] = st->pagecache_bytes,
	};
	/* These records carry read/write bytes separately, not DISK_BYTES. */
	u32 present = JOULES_FEAT_CPU_NS | (st->opt_present & JOULES_FEAT_OPT);

	joules_nl_w_u64(w, JOULES_A_ENERGY_UJ, st->energy_uj);
	joules_nl_w_u64(w, JOULES_A_IDLE_UJ, st->idle_uj);
	joules_nl_w_domains(w, st->domains, st->domain_uj);
	joules_nl_w_u32(w, JOULES_A_SOURCE, st->source_mask);
	joules_nl_w_u64(w, JOULES_A_MODEL_GEN, st->model_generation);
	joules_nl_w_feat(w, feat, present);
	joules_nl_w_u64(w, JOULES_A_READ_BYTES, st->read_bytes);
	joules_nl_w_u64(w, JOULES_A_WRITE_BYTES, st->write_bytes);
	if (st->lag_ms)
		joules_nl_w_u32(w, JOULES_A_LAG_MS, st->lag_ms);
}

/* A task record; @process and @exited add those flags. */
static int joules_nl_fill_stats(struct sk_buff *skb,
				const struct joules_stats *st, bool process,
				bool exited)
{
	struct joules_nl_w w;

	if (!joules_nl_w_start(&w, skb))
		return -EMSGSIZE;
	joules_nl_w_u32(&w, JOULES_A_PID, st->pid);
	joules_nl_w_u32(&w, JOULES_A_TGID, st->tgid);
	joules_nl_w_u32(&w, JOULES_A_UID, st->uid);
	joules_nl_w_comm(&w, st->comm);
	joules_nl_w_u32(&w, JOULES_A_NR_THREADS, st->nr_threads);
	if (process)
		joules_nl_w_flag(&w, JOULES_A_PROCESS);
	if (exited)
		joules_nl_w_flag(&w, JOULES_A_EXITED);
	joules_nl_w_energy(&w, st);
	return joules_nl_w_end(&w);
}

/* A cgroup record. */
static int joules_nl_fill_cgroup(struct sk_buff *skb, const struct joules_cg_stats *cs)
{
	struct joules_nl_w w;

	if (!joules_nl_w_start(&w, skb))
		return -EMSGSIZE;
	joules_nl_w_u64(&w, JOULES_A_CGROUP_ID, cs->id);
	joules_nl_w_str(&w, JOULES_A_CGROUP_PATH, cs->path);
	joules_nl_w_u32(&w, JOULES_A_NR_TASKS, cs->nr_tasks);
	if (cs->st.exited)
		joules_nl_w_flag(&w, JOULES_A_EXITED);
	joules_nl_w_energy(&w, &cs->st);
	return joules_nl_w_end(&w);
}

/* Presence of the features the module always counts. */
static u32 joules_nl_feat_present(const struct jl_feat *f)
{
	return (f->present & JOULES_FEAT_OPT) | JOULES_FEAT_CPU_NS |
	       JOULES_FEAT_DISK_BYTES;
}

static int joules_nl_fill_sample(struct sk_buff *skb,
				 const struct joules_node_sample *s)
{
	struct joules_nl_w w;

	if (!joules_nl_w_start(&w, skb))
		return -EMSGSIZE;
	joules_nl_w_u64(&w, JOULES_A_SEQ, s->seq);
	joules_nl_w_u64(&w, JOULES_A_REALTIME_NS, s->realtime_ns);
	joules_nl_w_u64(&w, JOULES_A_MONOTONIC_NS, s->monotonic_ns);
	joules_nl_w_u64(&w, JOULES_A_INTERVAL_NS, s->interval_ns);
	joules_nl_w_u32(&w, JOULES_A_SOURCE, s->source);
	joules_nl_w_u64(&w, JOULES_A_MODEL_GEN, s->model_generation);
	joules_nl_w_u64(&w, JOULES_A_ENERGY_UJ, s->energy_uj);
	joules_nl_w_u64(&w, JOULES_A_IDLE_UJ, s->idle_uj);
	joules_nl_w_domains(&w, s->domains, s->domain_uj);
	joules_nl_w_feat(&w, s->feat.v, joules_nl_feat_present(&s->feat));
	joules_nl_w_u32(&w, JOULES_A_NR_TASKS, s->nr_tasks);
	joules_nl_w_u32(&w, JOULES_A_BAND, s->band);
	/* No frequency source: absent, not 0 MHz. */
	if (s->freq_mhz)
		joules_nl_w_u32(&w, JOULES_A_FREQ_MHZ, s->freq_mhz);
	return joules_nl_w_end(&w);
}

/* lag_ms > 0: the lagged view (no domains, no meter's books). */
static int joules_nl_fill_node(struct sk_buff *skb,
			       const struct joules_node_totals *nt,
			       const struct joules_wall_totals *wt, u64 generation,
			       unsigned int lag_ms)
{
	struct joules_nl_w w;

	if (!joules_nl_w_start(&w, skb))
		return -EMSGSIZE;
	joules_nl_w_u64(&w, JOULES_A_INTERVALS, nt->intervals);
	if (lag_ms) {
		joules_nl_w_u64(&w, JOULES_A_ENERGY_UJ, nt->lag_uj);
		joules_nl_w_u64(&w, JOULES_A_IDLE_UJ, nt->lag_idle_uj);
		joules_nl_w_u64(&w, JOULES_A_TASK_UJ, nt->lag_uj - nt->lag_idle_uj);
		joules_nl_w_u32(&w, JOULES_A_LAG_MS, lag_ms);
	} else {
		joules_nl_w_u64(&w, JOULES_A_ENERGY_UJ, nt->energy_uj);
		joules_nl_w_u64(&w, JOULES_A_IDLE_UJ, nt->idle_uj);
		joules_nl_w_u64(&w, JOULES_A_TASK_UJ, nt->task_uj);
		joules_nl_w_domains(&w, nt->domains, nt->domain_uj);
	}
	joules_nl_w_feat(&w, nt->feat.v, joules_nl_feat_present(&nt->feat));
	joules_nl_w_u32(&w, JOULES_A_SOURCE, nt->source);
	joules_nl_w_u64(&w, JOULES_A_MODEL_GEN, generation);
	joules_nl_w_u64(&w, JOULES_A_TASKS_TRACKED, nt->tasks_tracked);
	joules_nl_w_u64(&w, JOULES_A_UPTIME_NS, nt->uptime_ns);
	if (*wt->name && !lag_ms) {
		/* A meter has fed the node: its books (PENDING_UJ is signed). */
		joules_nl_w_str(&w, JOULES_A_METER_NAME, wt->name);
		joules_nl_w_u64(&w, JOULES_A_METER_UJ, wt->meter_uj);
		joules_nl_w_u64(&w, JOULES_A_METER_PENDING_UJ, (u64)wt->pending_uj);
	}
	return joules_nl_w_end(&w);
}

/*
 * The socket's opener, who must be allowed as well as the sender. A
 * kernel socket has no file, so no opener whose rights could be checked:
 * -EPERM.
 */
static int joules_nl_opener(struct sk_buff *skb, struct joules_reader *r)
{
	struct socket *sock = NETLINK_CB(skb).sk->sk_socket;
	struct file *f = sock ? sock->file : NULL;

	if (!f)
		return -EPERM;
	r->cred = f->f_cred;
	r->file = f;
	return 0;
}

/* Both the sender of skb and the socket's opener may read node energy (then both set). */
static bool joules_nl_node_reader(struct sk_buff *skb, struct joules_reader *opener,
				  struct joules_reader *sender)
{
	joules_reader_current(sender);
	return !joules_nl_opener(skb, opener) && joules_may_read_node(opener) &&
	       joules_may_read_node(sender);
}

/* What one read of a task needs under its lock. */
struct joules_nl_read {
	struct sk_buff *skb;
	const struct joules_reader *opener, *sender;
	struct pid_namespace *ns;
	struct joules_stats *st;
	bool process;
};

static int joules_nl_read_task(struct task_struct *t, void *arg)
{
	struct joules_nl_read *a = arg;

	if (!joules_may_read(t, a->opener) || !joules_may_read(t, a->sender))
		return -EPERM;
	return joules_task_stats(t, a->process, a->ns,
				 sk_user_ns(NETLINK_CB(a->skb).sk), a->st);
}

/*
 * t's totals for the sender of skb, if both it and the socket's opener
 * may read them (under exec's lock, like /proc/<pid>/io), and the LSMs let
 * the sender; -EPERM if not, -EAGAIN if t kept changing its program or
 * credentials meanwhile (joules_read_judged()). The rule is tried once
 * without the lock, so that the LSMs (a link followed, perm.c) are asked
 * only for tasks it lets through, and again under it.
 */
static int joules_nl_task_stats(struct sk_buff *skb, struct task_struct *t,
				bool process, struct pid_namespace *ns,
				bool lagged, struct joules_stats *st)
{
	struct joules_reader opener, sender;
	struct joules_nl_read a = {
		.skb = skb, .opener = &opener, .sender = &sender,
		.ns = ns, .st = st, .process = process,
	};
	struct joules_verdict v = {};
	int err;

	if (joules_nl_opener(skb, &opener))
		return -EPERM;
	joules_reader_current(&sender);
	if (!joules_may_read(t, &opener) || !joules_may_read(t, &sender))
		return -EPERM;
	err = joules_lsm_verdict(t, &v);
	if (!err)
		err = joules_read_judged(t, &v, joules_nl_read_task, &a);
	joules_verdict_put(&v);
	if (err == -EACCES)
		return -EPERM;
	if (!err)
		joules_stats_lag(st, joules_reader_lag_ms(&opener, &sender, lagged));
	return err;
}

static int joules_nl_get_task(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *pa = info->attrs[JOULES_A_PID];
	struct nlattr *ta = info->attrs[JOULES_A_TID];
	struct nlattr *which = pa ? pa : ta;
	bool process = pa != NULL;
	struct task_struct *t = NULL;
	struct joules_stats st;
	struct sk_buff *msg;
	struct pid *pid;
	void *hdr;
	int err;

	if (!pa == !ta) {
		GENL_SET_ERR_MSG(
			info,
			"exactly one of JOULES_A_PID or JOULES_A_TID is required");
		return -EINVAL;
	}

	rcu_read_lock();
	pid = find_pid_ns(nla_get_u32(which), task_active_pid_ns(current));
	if (pid)
		t = pid_task(pid, process ? PIDTYPE_TGID : PIDTYPE_PID);
	if (t)
		get_task_struct(t);
	rcu_read_unlock();
	if (!t) {
		if (process)
			NL_SET_ERR_MSG_ATTR(info->extack, which,
					    "no such process");
		else
			NL_SET_ERR_MSG_ATTR(info->extack, which,
					    "no such thread");
		return -ESRCH;
	}

	err = joules_nl_task_stats(skb, t, process, task_active_pid_ns(current),
				   info->attrs[JOULES_A_LAGGED], &st);
	if (err == -EPERM)
		NL_SET_ERR_MSG_ATTR(info->extack, which,
				    "not permitted to read this task's counters");
	else if (err == -EAGAIN)
		NL_SET_ERR_MSG_ATTR(info->extack, which,
				    "the task kept changing its program or credentials: try again");
	else if (err == -ENOENT)
		NL_SET_ERR_MSG_ATTR(info->extack, which,
				    "task not tracked by joules");
	put_task_struct(t);
	if (err)
		return err;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &joules_nl_family, 0,
				JOULES_CMD_TASK);
	if (!hdr || joules_nl_fill_stats(msg, &st, process, st.exited)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

/*
 * Dump state, kept in cb->ctx between the skbs of one dump. The pid
 * namespace is the requester's, pinned at start: later parts of the dump
 * run in whichever task calls recvmsg().
 */
struct joules_nl_dump_ctx {
	struct pid_namespace *ns;
	int next; /* lowest pid number not yet looked at */
	bool threads;
	bool lagged;
};
static_assert(sizeof(struct joules_nl_dump_ctx) <=
	      sizeof_field(struct netlink_callback, ctx));

static struct joules_nl_dump_ctx *joules_nl_ctx(struct netlink_callback *cb)
{
	return (struct joules_nl_dump_ctx *)cb->ctx;
}

static int joules_nl_dump_start(struct netlink_callback *cb)
{
	struct nlattr **attrs = jl_dumpit_attrs(cb);
	struct joules_nl_dump_ctx *ctx = joules_nl_ctx(cb);

	ctx->threads = attrs && attrs[JOULES_A_THREADS];
	ctx->lagged = attrs && attrs[JOULES_A_LAGGED];
	ctx->next = 1;
	ctx->ns = get_pid_ns(task_active_pid_ns(current));
	return 0;
}

static int joules_nl_dump_done(struct netlink_callback *cb)
{
	struct joules_nl_dump_ctx *ctx = joules_nl_ctx(cb);

	if (ctx->ns)
		put_pid_ns(ctx->ns);
	ctx->ns = NULL;
	return 0;
}

/* The next process (or thread) at or above ctx->next, with a reference. */
static struct task_struct *joules_nl_next_task(struct joules_nl_dump_ctx *ctx)
{
	enum pid_type type = ctx->threads ? PIDTYPE_PID : PIDTYPE_TGID;
	struct task_struct *t = NULL;
	struct pid *pid;

	rcu_read_lock();
	while ((pid = find_ge_pid(ctx->next, ctx->ns))) {
		ctx->next = pid_nr_ns(pid, ctx->ns);
		t = pid_task(pid, type);
		if (t) {
			get_task_struct(t);
			break;
		}
		ctx->next++;
	}
	rcu_read_unlock();
	return t;
}

static int joules_nl_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct joules_nl_dump_ctx *ctx = joules_nl_ctx(cb);
	bool process = !ctx->threads;
	struct joules_stats st;
	struct task_struct *t;
	bool more = false;
	void *hdr;
	int err;

	while ((t = joules_nl_next_task(ctx))) {
		/* Unreadable and untracked tasks are skipped, not reported. */
		err = joules_nl_task_stats(cb->skb, t, process, ctx->ns, ctx->lagged, &st);
		put_task_struct(t);
		if (err == -EINTR)
			return err;
		if (err) {
			ctx->next++;
			continue;
		}
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq, &joules_nl_family,
				  NLM_F_MULTI, JOULES_CMD_TASK);
		if (!hdr) {
			more = true;
			break;
		}
		if (joules_nl_fill_stats(skb, &st, process, st.exited)) {
			genlmsg_cancel(skb, hdr);
			more = true;
			break;
		}
		genlmsg_end(skb, hdr);
		/* Only now: a record that did not fit is retried in the next skb. */
		ctx->next++;
	}
	/* A record too big for an empty skb would otherwise loop forever. */
	if (more && !skb->len)
		return -EMSGSIZE;
	/* 0 (nothing added, nothing left) ends the dump with NLMSG_DONE. */
	return skb->len;
}

static int joules_nl_get_node(struct sk_buff *skb, struct genl_info *info)
{
	struct joules_reader opener, sender;
	struct joules_node_totals nt;
	struct joules_wall_totals wt;
	struct sk_buff *msg;
	unsigned int lag_ms;
	u64 generation;
	void *hdr;

	if (!joules_nl_node_reader(skb, &opener, &sender)) {
		GENL_SET_ERR_MSG(info, "node energy needs CAP_PERFMON or CAP_SYS_ADMIN");
		return -EPERM;
	}

	lag_ms = joules_reader_lag_ms(&opener, &sender, info->attrs[JOULES_A_LAGGED]);
	memset(&nt, 0, sizeof(nt));
	joules_node_get(&nt);
	joules_wall_get(&wt);
	/* The generation in force now, not the one of the last interval. */
	rcu_read_lock();
	generation = joules_model_get()->generation;
	rcu_read_unlock();

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &joules_nl_family, 0,
				JOULES_CMD_NODE);
	if (!hdr || joules_nl_fill_node(msg, &nt, &wt, generation, lag_ms)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

static int joules_nl_meter_feed(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **a = info->attrs;
	struct joules_reader opener, sender;
	bool power = a[JOULES_A_METER_POWER_UW];

	joules_reader_current(&sender);
	if (joules_nl_opener(skb, &opener) ||
	    !joules_may_feed(&opener) || !joules_may_feed(&sender)) {
		GENL_SET_ERR_MSG(info, "feeding the wall meter needs CAP_SYS_ADMIN");
		return -EPERM;
	}
	if (!a[JOULES_A_METER_NAME] || !joules_wall_name_ok(nla_data(a[JOULES_A_METER_NAME]))) {
		GENL_SET_ERR_MSG(info, "METER_NAME is required: printable ASCII, no blanks");
		return -EINVAL;
	}
	if (!a[JOULES_A_METER_UJ] == !power) {
		GENL_SET_ERR_MSG(info, "exactly one of METER_UJ and METER_POWER_UW");
		return -EINVAL;
	}
	return joules_wall_feed(nla_data(a[JOULES_A_METER_NAME]), power,
				nla_get_u64(a[power ? JOULES_A_METER_POWER_UW :
						      JOULES_A_METER_UJ]),
				a[JOULES_A_METER_AGE_NS] ?
					nla_get_u64(a[JOULES_A_METER_AGE_NS]) : 0,
				a[JOULES_A_METER_RESET], info->extack);
}

/*
 * A cgroup's totals for the sender of skb, path relative to root, if both
 * the sender and the socket's opener may read them (perm.c).
 */
static int joules_nl_cgroup_stats(struct sk_buff *skb, struct cgroup *cgrp,
				  struct cgroup *root, char *path, bool lagged,
				  struct joules_cg_stats *cs)
{
	struct joules_reader opener, sender;
	struct joules_cg *cg;
	int n;

	if (joules_nl_opener(skb, &opener))
		return -EPERM;
	joules_reader_current(&sender);
	if (!joules_may_read_cgroup(cgrp, &opener) ||
	    !joules_may_read_cgroup(cgrp, &sender))
		return -EPERM;
	n = joules_cgroup_path(cgrp, root, path, PATH_MAX);
	if (n < 0)
		return n;
	cg = joules_cg_get_reader(cgrp);
	if (IS_ERR_OR_NULL(cg))
		return cg ? PTR_ERR(cg) : -ENOMEM;
	joules_cg_stats(cg, cs);
	joules_cg_put(cg);
	joules_stats_lag(&cs->st, joules_reader_lag_ms(&opener, &sender, lagged));
	cs->path = path;
	return 0;
}

static int joules_nl_get_cgroup(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *ia = info->attrs[JOULES_A_CGROUP_ID];
	struct nlattr *pa = info->attrs[JOULES_A_CGROUP_PATH];
	struct cgroup *root = joules_cg_ns_root(), *cgrp;
	struct joules_cg_stats cs;
	struct sk_buff *msg;
	char *path;
	void *hdr;
	int err;

	if (!ia == !pa) {
		GENL_SET_ERR_MSG(info,
				 "exactly one of JOULES_A_CGROUP_ID or JOULES_A_CGROUP_PATH is required");
		return -EINVAL;
	}
	if (ia) {
		cgrp = cgroup_get_from_id(nla_get_u64(ia));
		/* Outside the sender's cgroup namespace is as good as absent. */
		if (!IS_ERR_OR_NULL(cgrp) && !cgroup_is_descendant(cgrp, root)) {
			cgroup_put(cgrp);
			cgrp = NULL;
		}
	} else {
		cgrp = joules_cg_by_path(nla_data(pa));
	}
	if (IS_ERR_OR_NULL(cgrp)) {
		NL_SET_ERR_MSG_ATTR(info->extack, ia ? ia : pa, "no such cgroup (v2)");
		return -ENOENT;
	}
	path = kmalloc(PATH_MAX, GFP_KERNEL);
	err = path ? joules_nl_cgroup_stats(skb, cgrp, root, path,
					    info->attrs[JOULES_A_LAGGED], &cs) : -ENOMEM;
	cgroup_put(cgrp);
	if (err == -EPERM)
		NL_SET_ERR_MSG_ATTR(info->extack, ia ? ia : pa,
				    "a cgroup's energy needs CAP_PERFMON or CAP_SYS_ADMIN, or owning its directory");
	if (err)
		goto out;
	err = -ENOMEM;
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		goto out;
	hdr = genlmsg_put_reply(msg, info, &joules_nl_family, 0, JOULES_CMD_CGROUP);
	if (!hdr || joules_nl_fill_cgroup(msg, &cs)) {
		nlmsg_free(msg);
		err = -EMSGSIZE;
		goto out;
	}
	genlmsg_end(msg, hdr);
	err = genlmsg_reply(msg, info);
out:
	kfree(path);
	return err;
}

/*
 * A cgroup dump works from the ids of every cgroup in the sender's cgroup
 * namespace (or below the directory it names), taken at its start (a
 * cgroup removed meanwhile is skipped), so that later parts of it need no
 * cursor into a changing tree.
 */
struct joules_nl_cg_ctx {
	/*
	 * Below the sender's namespace root, ids: cgroup_get_from_id() finds
	 * them again. Below a root by descriptor, the cgroups themselves,
	 * each referenced until sent or skipped: that lookup refuses a
	 * cgroup outside the caller's namespace (6.0, "cgroup: Honor
	 * caller's cgroup NS when resolving cgroup id").
	 */
	union {
		u64 *ids;
		struct cgroup **held;
	};
	u32 n, next;
	struct cgroup *root;	/* referenced: paths are relative to it */
	bool lagged, by_fd;
};
static_assert(sizeof(struct joules_nl_cg_ctx) <= sizeof_field(struct netlink_callback, ctx));
static_assert(sizeof(struct cgroup *) <= sizeof(u64));	/* one array, either */

static struct joules_nl_cg_ctx *joules_nl_cg_ctx(struct netlink_callback *cb)
{
	return (struct joules_nl_cg_ctx *)cb->ctx;
}

/* The cgroup at next is sent or skipped: a held one is let go. */
static void joules_nl_cg_done_one(struct joules_nl_cg_ctx *ctx)
{
	if (ctx->by_fd && ctx->held[ctx->next]) {
		cgroup_put(ctx->held[ctx->next]);
		ctx->held[ctx->next] = NULL;
	}
}

static int joules_nl_cg_dump_start(struct netlink_callback *cb)
{
	struct joules_nl_cg_ctx *ctx = joules_nl_cg_ctx(cb);
	struct nlattr **attrs = jl_dumpit_attrs(cb);
	struct nlattr *fa = attrs ? attrs[JOULES_A_CGROUP_ROOT_FD] : NULL;
	struct joules_reader opener, sender;
	struct cgroup_subsys_state *pos;
	struct cgroup *root;
	u32 n = 0, cap = 256;
	u64 *ids;

	/*
	 * A directory the sender could open stands for the tree below it:
	 * its cgroup.* files it can read already. start() runs in the
	 * sender's context, so the descriptor is its own.
	 */
	if (fa) {
		/*
		 * Node readers only: the dump holds a reference on every
		 * cgroup below the root until it is read, and a removed
		 * cgroup held is memory its owner cannot free.
		 */
		if (!joules_nl_node_reader(cb->skb, &opener, &sender)) {
			NL_SET_ERR_MSG_ATTR(cb->extack, fa,
					    "a root by descriptor needs CAP_PERFMON or CAP_SYS_ADMIN");
			return -EPERM;
		}
		root = cgroup_get_from_fd(nla_get_u32(fa));
		if (IS_ERR(root)) {
			NL_SET_ERR_MSG_ATTR(cb->extack, fa,
					    "not a descriptor of a cgroup v2 directory");
			return PTR_ERR(root);
		}
	} else {
		root = joules_cg_ns_root();
		cgroup_get(root);
	}
	for (;;) {
		/* Held until the dump is read or closed: the requester's memory. */
		ids = kvmalloc_array(cap, sizeof(*ids), GFP_KERNEL_ACCOUNT);
		if (!ids) {
			cgroup_put(root);
			return -ENOMEM;
		}
		n = 0;
		rcu_read_lock();
		css_for_each_descendant_pre(pos, &root->self) {
			if (n == cap)
				break;
			if (!fa)
				ids[n++] = cgroup_id(pos->cgroup);
			else if (css_tryget_online(pos))	/* not removed ones */
				((struct cgroup **)ids)[n++] = pos->cgroup;
		}
		rcu_read_unlock();
		if (n < cap)
			break;
		/* More cgroups than room: twice the room, walk again. */
		while (fa && n)
			cgroup_put(((struct cgroup **)ids)[--n]);
		kvfree(ids);
		cap *= 2;
	}
	ctx->by_fd = fa != NULL;
	ctx->root = root;
	ctx->lagged = attrs && attrs[JOULES_A_LAGGED];
	ctx->ids = ids;
	ctx->n = n;
	ctx->next = 0;
	return 0;
}

static int joules_nl_cg_dump_done(struct netlink_callback *cb)
{
	struct joules_nl_cg_ctx *ctx = joules_nl_cg_ctx(cb);

	for (; ctx->by_fd && ctx->ids && ctx->next < ctx->n; ctx->next++)
		joules_nl_cg_done_one(ctx);
	kvfree(ctx->ids);
	ctx->ids = NULL;
	if (ctx->root)
		cgroup_put(ctx->root);
	ctx->root = NULL;
	return 0;
}

static int joules_nl_cg_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct joules_nl_cg_ctx *ctx = joules_nl_cg_ctx(cb);
	struct joules_cg_stats cs;
	struct cgroup *cgrp;
	bool more = false;
	char *path;
	void *hdr;
	int err;

	path = kmalloc(PATH_MAX, GFP_KERNEL);
	if (!path)
		return -ENOMEM;
	for (; ctx->next < ctx->n; ctx->next++) {
		if (ctx->by_fd) {
			cgrp = ctx->held[ctx->next];
			/* Removed since the dump began: skipped, as by id. */
			if (!(READ_ONCE(cgrp->self.flags) & CSS_ONLINE)) {
				joules_nl_cg_done_one(ctx);
				continue;
			}
			cgroup_get(cgrp);
		} else {
			cgrp = cgroup_get_from_id(ctx->ids[ctx->next]);
		}
		if (IS_ERR_OR_NULL(cgrp))
			continue;	/* removed since the dump began */
		err = joules_nl_cgroup_stats(cb->skb, cgrp, ctx->root, path, ctx->lagged, &cs);
		cgroup_put(cgrp);
		/* Unreadable cgroups are skipped, not reported. */
		if (err) {
			joules_nl_cg_done_one(ctx);
			continue;
		}
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
				  &joules_nl_family, NLM_F_MULTI, JOULES_CMD_CGROUP);
		if (!hdr) {
			more = true;
			break;
		}
		if (joules_nl_fill_cgroup(skb, &cs)) {
			genlmsg_cancel(skb, hdr);
			more = true;
			break;
		}
		genlmsg_end(skb, hdr);
		joules_nl_cg_done_one(ctx);
	}
	kfree(path);
	if (more && !skb->len)
		return -EMSGSIZE;
	return skb->len;
}

/* Multicast one message built by fill(); nothing is built without listeners. */
static void joules_nl_multicast(unsigned int group, u8 cmd,
				int (*fill)(struct sk_buff *skb,
					    const void *arg),
				const void *arg)
{
	struct sk_buff *msg;
	void *hdr;

	might_sleep();
	mutex_lock(&joules_nl_lock);
	if (!joules_nl_up || group >= JOULES_NL_NR_MCGRPS ||
	    !genl_has_listeners(&joules_nl_family, &init_net, group))
		goto out;
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		goto out;
	hdr = genlmsg_put(msg, 0, 0, &joules_nl_family, 0, cmd);
	if (!hdr || fill(msg, arg)) {
		nlmsg_free(msg);
		goto out;
	}
	genlmsg_end(msg, hdr);
	/* -ESRCH (every listener left meanwhile) is not an error here. */
	genlmsg_multicast(&joules_nl_family, msg, 0, group, GFP_KERNEL);
out:
	mutex_unlock(&joules_nl_lock);
}

static int joules_nl_sample_fill(struct sk_buff *skb, const void *arg)
{
	return joules_nl_fill_sample(skb, arg);
}

static int joules_nl_exit_fill(struct sk_buff *skb, const void *arg)
{
	const struct joules_stats *st = arg;

	/* Exit records are the totals of one task (like taskstats' per-pid). */
	return joules_nl_fill_stats(skb, st, false, true);
}

static void joules_nl_sample(const struct joules_node_sample *s)
{
	joules_nl_multicast(JOULES_NL_GRP_SAMPLES, JOULES_CMD_SAMPLE,
			    joules_nl_sample_fill, s);
}

/* Worth building exit records? Unlocked: a listener may join just after. */
static bool joules_nl_exits_wanted(void)
{
	return JOULES_NL_NR_MCGRPS &&
	       genl_has_listeners(&joules_nl_family, &init_net,
				  JOULES_NL_GRP_EXITS);
}

static void joules_nl_exit_record(const struct joules_stats *st)
{
	joules_nl_multicast(JOULES_NL_GRP_EXITS, JOULES_CMD_EXIT,
			    joules_nl_exit_fill, st);
}

static int joules_nl_cgroup_exit_fill(struct sk_buff *skb, const void *arg)
{
	return joules_nl_fill_cgroup(skb, arg);
}

/* A removed cgroup's final totals (worker). */
static void joules_nl_cgroup_exit(const struct joules_cg_stats *cs)
{
	joules_nl_multicast(JOULES_NL_GRP_EXITS, JOULES_CMD_CGROUP_EXIT,
			    joules_nl_cgroup_exit_fill, cs);
}

static const struct joules_report_ops joules_nl_report = {
	.sample = joules_nl_sample,
	.exit_record = joules_nl_exit_record,
	.cgroup_exit = joules_nl_cgroup_exit,
	.exits_wanted = joules_nl_exits_wanted,
};

int joules_nl_init(void)
{
	int err;

	err = genl_register_family(&joules_nl_family);
	if (err) {
		pr_err("cannot register generic netlink family '%s': %d\n",
		       JOULES_GENL_NAME, err);
		return err;
	}
	if (!JOULES_NL_NR_MCGRPS)
		pr_warn("kernel cannot restrict multicast groups: samples and exits not offered\n");
	mutex_lock(&joules_nl_lock);
	joules_nl_up = true;
	mutex_unlock(&joules_nl_lock);
	joules_report_register(&joules_nl_report);
	return 0;
}

void joules_nl_exit(void)
{
	joules_report_unregister();
	mutex_lock(&joules_nl_lock);
	joules_nl_up = false;
	mutex_unlock(&joules_nl_lock);
	genl_unregister_family(&joules_nl_family);
}
