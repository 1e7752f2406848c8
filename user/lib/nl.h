/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Client of the joules generic netlink family (kmod/uapi/joules_netlink.h,
 * Documentation/netlink.rst), on libnl-3 / libnl-genl-3. Replies and events
 * are parsed into the plain records of out.h.
 *
 * Every function returns 0 (or a count) on success and a negative errno on
 * failure; jnl_strerror() turns it into a sentence that says why, and
 * jnl_kernel_msg() gives the module's own explanation (netlink extended
 * ack) of the last refused request, if it sent one.
 *
 * One handle may both make requests and receive events: events that arrive
 * while a request waits for its reply are queued for jnl_next_event().
 */
#ifndef JOULES_NL_H
#define JOULES_NL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "rec.h"

struct jnl;

/* Event groups for jnl_subscribe(). */
#define JNL_GRP_SAMPLES 0x1
#define JNL_GRP_EXITS 0x2

/*
 * Connect and resolve the family. -ENOENT: the family does not exist (the
 * module is not loaded); other errors are socket errors.
 */
int jnl_open(struct jnl **out);
/*
 * The same on a generic netlink socket opened elsewhere (inherited or
 * passed over a unix socket); jnl_close() closes it. The module answers
 * with the rights of whoever opened it, as well as the caller's.
 */
int jnl_open_fd(struct jnl **out, int fd);
void jnl_close(struct jnl *nl);

/* Family version the module reports (JOULES_GENL_VERSION of its build). */
unsigned int jnl_version(const struct jnl *nl);
/* Socket descriptor, for poll(). */
int jnl_fd(const struct jnl *nl);

/* What failed, for jnl_strerror(). */
enum jnl_op {
	JNL_OP_OPEN,
	JNL_OP_GET_TASK,
	JNL_OP_DUMP,
	JNL_OP_GET_NODE,
	JNL_OP_SUBSCRIBE,
	JNL_OP_GET_CGROUP,
	JNL_OP_METER_FEED,
};

/*
 * A sentence saying why `op` failed with err (a negative errno), e.g. for
 * JNL_OP_OPEN and -ENOENT: "joules module not loaded (no generic netlink
 * family 'joules')"; strerror() for errors without a special meaning.
 */
const char *jnl_strerror(enum jnl_op op, int err);
/* The module's extack message for the last failed request, or NULL. */
const char *jnl_kernel_msg(const struct jnl *nl);

/*
 * Ask for the lagged view in every later task and cgroup request (on =
 * true): measured energy settled per epoch, as readers without
 * CAP_PERFMON always get it (records then carry lag_ms). For serving
 * energy to others: the exporter, joules-meterd's guests.
 */
void jnl_set_lagged(struct jnl *nl, bool on);

/*
 * GET_TASK: the process with tgid `id` (thread = false) or the thread with
 * tid `id` (thread = true), in the caller's pid namespace. -ESRCH: no such
 * task; -EPERM: another user's task; -ENOENT: not tracked by joules;
 * -EAGAIN: it exec'd or changed credentials at each of the module's tries.
 */
int jnl_get_task(struct jnl *nl, pid_t id, bool thread, struct task_rec *out);

/*
 * DUMP_TASKS: every process (or thread) the caller may read. On success
 * *recs is a malloc()ed array of *n records, sorted by pid; free() it.
 */
int jnl_dump_tasks(struct jnl *nl, bool threads, struct task_rec **recs,
		   size_t *n);

/*
 * GET_CGROUP: the cgroup (v2) at path (relative to the caller's cgroup
 * namespace; "/" is its root), or, with path NULL, the one with this id.
 * -ENOENT: no such cgroup; -EPERM: neither CAP_PERFMON/CAP_SYS_ADMIN nor
 * the owner of its directory.
 */
int jnl_get_cgroup(struct jnl *nl, const char *path, uint64_t id,
		   struct cgroup_rec *out);
/* DUMP_CGROUPS: every cgroup the caller may read, sorted by path; free(). */
int jnl_dump_cgroups(struct jnl *nl, struct cgroup_rec **recs, size_t *n);
/*
 * Later cgroup dumps hold the cgroups below the cgroup v2 directory open
 * at fd (-1: the caller's cgroup namespace, the default), with paths
 * relative to it: for an agent in a container given the host's cgroup2
 * mount. The caller keeps fd open.
 */
void jnl_set_cgroup_root(struct jnl *nl, int fd);

/* GET_NODE (needs CAP_PERFMON or CAP_SYS_ADMIN: -EPERM otherwise). */
int jnl_get_node(struct jnl *nl, struct node_rec *out);
/* The same, in the lagged view (no per-domain figures, no meter's books). */
int jnl_get_node_view(struct jnl *nl, bool lagged, struct node_rec *out);

/*
 * Join the groups in `groups` (JNL_GRP_*). -EPERM: not CAP_SYS_ADMIN;
 * -EOPNOTSUPP: the module offers no such group on this kernel. Also raises
 * the socket's receive buffer (as far as allowed) so bursts of exit
 * records are not dropped.
 */
int jnl_subscribe(struct jnl *nl, unsigned int groups);

enum jnl_event_type {
	JNL_EV_SAMPLE = 1,
	JNL_EV_EXIT,
	JNL_EV_CGROUP_EXIT, /* a removed cgroup's final totals */
};

struct jnl_event {
	enum jnl_event_type type;
	union {
		struct sample_rec sample;
		struct task_rec exit;
		/* JNL_EV_CGROUP_EXIT: jnl_event_free() */
		struct cgroup_rec *cgroup;
	};
};

/* Frees what an event holds (a cgroup record); safe for every event. */
void jnl_event_free(struct jnl_event *ev);

/*
 * Wait up to timeout_ms (< 0: forever) for the next event. Returns 1 and
 * fills *ev, 0 on timeout, -EINTR when a signal arrived, or -ENOBUFS once
 * after events were lost to a full receive buffer (call again to go on;
 * jnl_events_lost() counts such overflows).
 */
int jnl_next_event(struct jnl *nl, struct jnl_event *ev, int timeout_ms);
unsigned long jnl_events_lost(const struct jnl *nl);

/*
 * Send a request built by the caller and wait for its answer: for tests
 * that need malformed messages. `buf` is the genetlink payload after the
 * genlmsghdr (attributes, possibly garbage), cmd/version go in the
 * genlmsghdr, `flags` are extra nlmsg flags (NLM_F_DUMP). Returns the
 * number of data messages received, or the negative errno the kernel
 * answered with.
 */
int jnl_raw_request(struct jnl *nl, uint8_t cmd, uint8_t version,
		    uint16_t flags, const void *buf, size_t len);
/* Family id, for tests that build whole messages themselves. */
int jnl_family_id(const struct jnl *nl);
/* Multicast group id of JNL_GRP_SAMPLES or JNL_GRP_EXITS, or -errno. */
int jnl_group_id(const struct jnl *nl, unsigned int group);

/*
 * METER_FEED (CAP_SYS_ADMIN): one reading of the node's wall meter `name`
 * (<= 31 bytes): its cumulative energy in uJ, in the feeder's own origin,
 * never decreasing unless `reset` (a new baseline: nothing is charged for
 * it). The message: genlmsghdr { cmd JOULES_CMD_METER_FEED, version
 * JOULES_GENL_VERSION }, then JOULES_A_METER_NAME (NUL-terminated string),
 * JOULES_A_METER_UJ (u64, as libnl's nla_put_u64 puts it: 4-byte aligned,
 * no JOULES_A_PAD, as every u64 the tools send), and the flag
 * JOULES_A_METER_RESET when reset. -EPERM: not CAP_SYS_ADMIN; -ERANGE: the
 * module refused the reading as implausible, -EINVAL: the request
 * (jnl_kernel_msg() says why; a module without meter support refuses the
 * command too).
 */
int jnl_meter_feed(struct jnl *nl, const char *name, uint64_t uj, bool reset);
/*
 * The same, taken age_ns before this call (JOULES_A_METER_AGE_NS when not
 * 0): the module's rates go by when the readings were taken. A module
 * before the attribute refuses it with -EINVAL.
 */
int jnl_meter_feed_aged(struct jnl *nl, const char *name, uint64_t uj,
			uint64_t age_ns, bool reset);
/* The same for a meter that gives power (uW) only: the module integrates it. */
int jnl_meter_feed_power(struct jnl *nl, const char *name, uint64_t uw,
			 bool reset);

/*
 * The attributes of that request, for tests: the genetlink payload after
 * the genlmsghdr into buf (cap bytes). Returns its length or -errno.
 */
int jnl_meter_payload(const char *name, uint64_t uj, bool reset, void *buf,
		      size_t cap);

#endif /* JOULES_NL_H */
