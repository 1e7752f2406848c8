// SPDX-License-Identifier: GPL-2.0
/*
 * The cgroup collector (joules_cgroup_*): per-cgroup (v2) energy, idle
 * share, CPU time and bytes, labelled with what the path names (container
 * id, pod UID, ...), from netlink DUMP_CGROUPS; --cgroups and
 * --cgroups.match choose which.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/magic.h>

#include "cgname.h"
#include "nl.h"
#include "parse.h"
#include "collector.h"

/* Families. Names in base units; counters get _total from the writer. */
/* clang-format off */
static const struct prom_family
f_cg_energy = { "joules_cgroup_energy_joules", PROM_COUNTER, "joules",
	"Energy charged to the cgroup and its descendants since the module loaded, exited tasks included" },
f_cg_idle = { "joules_cgroup_idle_energy_joules", PROM_COUNTER, "joules",
	"Idle share of the cgroup's energy: the node's idle energy split evenly among live tasks (with idle_split=1)" },
f_cg_cpu = { "joules_cgroup_cpu_seconds", PROM_COUNTER, "seconds",
	"On-CPU time of the cgroup's tasks and its descendants', exited ones included" },
f_cg_read = { "joules_cgroup_storage_read_bytes", PROM_COUNTER, "bytes",
	"Storage bytes read by the cgroup's tasks and its descendants'" },
f_cg_write = { "joules_cgroup_storage_written_bytes", PROM_COUNTER, "bytes",
	"Storage bytes written by the cgroup's tasks and its descendants'" },
f_cg_net_tx = { "joules_cgroup_network_transmit_bytes", PROM_COUNTER, "bytes",
	"IPv4/IPv6 socket bytes sent by the cgroup's tasks and its descendants' (kernels with sock_send_length, 6.3+)" },
f_cg_net_rx = { "joules_cgroup_network_receive_bytes", PROM_COUNTER, "bytes",
	"IPv4/IPv6 socket bytes received by the cgroup's tasks and its descendants' (kernels with sock_recv_length, 6.3+)" },
f_cg_pagecache = { "joules_cgroup_pagecache_read_bytes", PROM_COUNTER, "bytes",
	"Bytes the cgroup's tasks and its descendants' read(2) without storage reads (page-cache hits)" },
f_cgroups_seen = { "joules_exporter_cgroups_seen", PROM_GAUGE, NULL,
	"Cgroups in the module's dump this scrape (those the exporter may read, in its cgroup namespace)" };
/* clang-format on */

int jm_set_cgroups(struct jm_state *s, int depth, const char *match, char *why,
		   size_t size)
{
	regex_t re;
	int err;

	if (match) {
		err = regcomp(&re, match, REG_EXTENDED | REG_NOSUB);
		if (err) {
			regerror(err, &re, why, size);
			return -EINVAL;
		}
	}
	if (s->cg_have_match)
		regfree(&s->cg_match);
	s->cg_have_match = match != NULL;
	if (match)
		s->cg_match = re;
	s->cg_depth = depth;
	return 0;
}

int jm_set_cgroup_root(struct jm_state *s, const char *dir, char *why,
		       size_t size)
{
	struct statfs sf;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), err;

	if (fd < 0) {
		err = errno;
		snprintf(why, size, "%s", strerror(err));
		return -err;
	}
	if (fstatfs(fd, &sf) || sf.f_type != CGROUP2_SUPER_MAGIC) {
		snprintf(why, size, "not a cgroup v2 directory");
		close(fd);
		return -EINVAL;
	}
	if (s->cg_root_fd >= 0)
		close(s->cg_root_fd);
	s->cg_root_fd = fd;
	if (s->nl)
		jnl_set_cgroup_root(s->nl, fd);
	return 0;
}

void jm_set_cgroup_root_failed(struct jm_state *s, const char *why)
{
	snprintf(s->cg_root_err, sizeof(s->cg_root_err), "%s", why);
}

int jm_parse_cgroups(const char *arg, int *depth)
{
	const char *why;
	uint64_t n;

	if (!strcmp(arg, "all")) {
		*depth = JM_CG_ALL;
		return 0;
	}
	if (!strcmp(arg, "off")) {
		*depth = JM_CG_OFF;
		return 0;
	}
	if (strncmp(arg, "depth=", 6) || parse_u64(arg + 6, &n, &why) ||
	    n >= JM_CG_ALL)
		return -EINVAL;
	*depth = (int)n;
	return 0;
}

bool jm_cgroup_wanted(const struct jm_state *s, const char *path)
{
	if ((int)cgname_depth(path) > s->cg_depth)
		return false;
	return !s->cg_have_match || !regexec(&s->cg_match, path, 0, NULL, 0);
}

struct cgroup_dump {
	struct cgroup_rec *recs;
	size_t n;
};

static int cgroup_request(struct jnl *nl, void *arg)
{
	struct cgroup_dump *d = arg;

	return jnl_dump_cgroups(nl, &d->recs, &d->n);
}

static void cgroup_gather(struct jm_state *s, struct jm_snapshot *snap)
{
	struct jm_status *st = &snap->st[JM_C_CGROUP];
	enum jnl_op op = JNL_OP_DUMP;
	struct cgroup_dump d;
	struct cgroup_rec *recs;
	size_t n, k = 0;
	int err;

	if (s->cg_root_err[0]) {
		jm_fail(st, JM_FAILED, -EINVAL, "%s", s->cg_root_err);
		return;
	}
	err = jm_request(s, cgroup_request, &d, &op);
	/* A module from before cgroups does not know the command. */
	if (err == -EOPNOTSUPP && op != JNL_OP_OPEN) {
		jm_fail(st, JM_UNSUPPORTED, err,
			"DUMP_CGROUPS: the loaded module has no cgroup "
			"interface (older than the exporter?)");
		return;
	}
	if (err) {
		jm_request_fail(st, "DUMP_CGROUPS", op, err,
				s->nl ? jnl_kernel_msg(s->nl) : NULL);
		return;
	}
	recs = d.recs;
	n = d.n;
	/* Without it idle energy is the node's alone: a cgroup has no share. */
	{
		uint64_t v = 0;

		snap->idle_split = !jm_read_u64(s, "idle_split", &v) && v;
	}
	snap->cgroups_seen = n;
	snap->cgroups = malloc((n ? n : 1) * sizeof(*snap->cgroups));
	if (!snap->cgroups)
		goto nomem;
	for (size_t i = 0; i < n; i++) {
		const struct cgroup_rec *r = &recs[i];
		struct jm_cgroup *c = &snap->cgroups[k];

		if (!jm_cgroup_wanted(s, r->path))
			continue;
		c->path = strdup(r->path);
		if (!c->path)
			goto nomem;
		c->source = r->source;
		c->present = r->present;
		c->energy_uj = r->energy_uj;
		c->idle_uj = r->idle_uj;
		c->cpu_ns = r->feat[JL_F_CPU_NS];
		c->read_bytes = r->read_bytes;
		c->write_bytes = r->write_bytes;
		c->net_tx_bytes = r->feat[JL_F_NET_TX];
		c->net_rx_bytes = r->feat[JL_F_NET_RX];
		c->pagecache_bytes = r->feat[JL_F_PAGECACHE];
		c->domains = r->domains;
		memcpy(c->domain_uj, r->domain_uj, sizeof(c->domain_uj));
		snap->ncgroups = ++k;
	}
	free(recs);
	/*
	 * Without CAP_PERFMON or CAP_SYS_ADMIN the dump holds only the
	 * cgroups whose directories the exporter owns: shown, but flagged
	 * as a part that must not pass for the whole.
	 */
	if (!jm_capable(CAP_PERFMON) && !jm_capable(CAP_SYS_ADMIN))
		jm_fail(st, JM_PERMISSION, -EPERM,
			"DUMP_CGROUPS: without CAP_PERFMON or CAP_SYS_ADMIN "
			"only cgroups whose directories uid %u owns are "
			"visible (%zu)",
			(unsigned int)getuid(), n);
	return;
nomem:
	free(recs);
	jm_snapshot_free(snap);
	jm_fail(st, JM_FAILED, -ENOMEM, "out of memory");
}

/*
 * Labels of a cgroup: its path, and what the path names (cgname); empty
 * ones are left out, which Prometheus reads the same as "".
 */
#define JM_CG_LABELS 6
static size_t cg_labels(const struct jm_cgroup *c, const struct cgname *n,
			struct prom_label *l)
{
	size_t k = 0;

	l[k++] = (struct prom_label){ "cgroup", c->path };
	l[k++] = (struct prom_label){ "kind", cgn_kind_names[n->kind] };
	if (n->runtime)
		l[k++] = (struct prom_label){ "runtime", n->runtime };
	if (n->container_id[0])
		l[k++] = (struct prom_label){ "container_id", n->container_id };
	if (n->pod_uid[0])
		l[k++] = (struct prom_label){ "pod_uid", n->pod_uid };
	if (n->qos)
		l[k++] = (struct prom_label){ "qos", n->qos };
	return k;
}

static void cgroup_render(const struct jm_state *s,
			  const struct jm_snapshot *snap, struct prom_writer *w)
{
	/* Absent is not zero: energy needs a source, counters a count. */
	static const struct {
		const struct prom_family *f;
		size_t off;
		unsigned int decimals;
		uint32_t needs_source, needs_present;
	} fams[] = {
		{ &f_cg_energy, offsetof(struct jm_cgroup, energy_uj), 6, ~0u,
		  0 },
		{ &f_cg_idle, offsetof(struct jm_cgroup, idle_uj), 6, ~0u, 0 },
		{ &f_cg_cpu, offsetof(struct jm_cgroup, cpu_ns), 9, 0,
		  REC_F(JL_F_CPU_NS) },
		{ &f_cg_read, offsetof(struct jm_cgroup, read_bytes), 0, 0, 0 },
		{ &f_cg_write, offsetof(struct jm_cgroup, write_bytes), 0, 0,
		  0 },
		/* Kernels without the tracepoints or TASK_XACCT: no series. */
		{ &f_cg_net_tx, offsetof(struct jm_cgroup, net_tx_bytes), 0, 0,
		  REC_F(JL_F_NET_TX) },
		{ &f_cg_net_rx, offsetof(struct jm_cgroup, net_rx_bytes), 0, 0,
		  REC_F(JL_F_NET_RX) },
		{ &f_cg_pagecache, offsetof(struct jm_cgroup, pagecache_bytes),
		  0, 0, REC_F(JL_F_PAGECACHE) },
	};
	struct cgname *names;

	(void)s;
	prom_family(w, &f_cgroups_seen);
	prom_u64(w, NULL, 0, snap->cgroups_seen);
	if (!snap->ncgroups)
		return;
	/* Each family's samples are contiguous: name every cgroup once first. */
	names = malloc(snap->ncgroups * sizeof(*names));
	if (!names) {
		if (!w->err)
			w->err = -ENOMEM;
		return;
	}
	for (size_t i = 0; i < snap->ncgroups; i++)
		cgname_parse(snap->cgroups[i].path, &names[i]);
	for (size_t f = 0; f < NL(fams); f++) {
		prom_family(w, fams[f].f);
		for (size_t i = 0; i < snap->ncgroups; i++) {
			const struct jm_cgroup *c = &snap->cgroups[i];
			struct prom_label l[JM_CG_LABELS];
			size_t nl;

			if ((fams[f].needs_source && !c->source) ||
			    (c->present & fams[f].needs_present) !=
				    fams[f].needs_present)
				continue;
			/* As energy.stat: an idle share only where idle is shared. */
			if (fams[f].f == &f_cg_idle && !snap->idle_split &&
			    !c->idle_uj)
				continue;
			nl = cg_labels(c, &names[i], l);
			prom_fixed(w, l, nl,
				   *(const uint64_t *)((const char *)c +
						       fams[f].off),
				   fams[f].decimals);
		}
	}
	free(names);
}

/* Unless --cgroups=off. */
static bool cgroup_wanted(const struct jm_state *s)
{
	return s->cg_depth != JM_CG_OFF;
}

/* A partial view (no CAP_PERFMON) is still shown, flagged. */
const struct jm_collector_info jm_cgroup_collector = {
	.name = "cgroup",
	.what = "per-cgroup (v2) energy, idle share, CPU time, storage "
		"bytes, with container id and pod UID (--cgroups)",
	.gather = cgroup_gather,
	.render = cgroup_render,
	.shown = JM_SHOWN_PARTIAL,
	.wanted = cgroup_wanted,
};
