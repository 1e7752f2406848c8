// SPDX-License-Identifier: GPL-2.0
/*
 * The node collector (joules_node_*): the node's energy by source and
 * RAPL domain, its idle share and the features counted, from netlink
 * GET_NODE; the module's load time.
 */
#include <errno.h>
#include <time.h>

#include "nl.h"
#include "out.h"
#include "collector.h"

/* Families. Names in base units; counters get _total from the writer. */
/* clang-format off */
static const struct prom_family
f_load_time = { "joules_module_load_time_seconds", PROM_GAUGE, "seconds",
	"Unix time the module was loaded (now minus its uptime); its counters start from zero then" },
f_node_energy = { "joules_node_energy_joules", PROM_COUNTER, "joules",
	"Node energy since the module loaded, idle plus tasks, by the source of the latest interval" },
f_node_idle = { "joules_node_idle_energy_joules", PROM_COUNTER, "joules",
	"Idle share of the node energy since the module loaded" },
f_node_rapl = { "joules_node_rapl_energy_joules", PROM_COUNTER, "joules",
	"Measured energy per RAPL domain since the module loaded (measured domains only)" },
f_node_cpu = { "joules_node_cpu_seconds", PROM_COUNTER, "seconds",
	"On-CPU time of the tasks joules charged, since the module loaded" },
f_node_cycles = { "joules_node_cpu_cycles", PROM_COUNTER, NULL,
	"CPU cycles of the tasks joules charged (only where a PMU counts them)" },
f_node_instr = { "joules_node_instructions", PROM_COUNTER, NULL,
	"Retired instructions of the tasks joules charged (only where a PMU counts them)" },
f_node_misses = { "joules_node_cache_misses", PROM_COUNTER, NULL,
	"Last-level cache misses of the tasks joules charged (only where a PMU counts them)" },
f_node_disk = { "joules_node_storage_bytes", PROM_COUNTER, "bytes",
	"Storage bytes read and written by the tasks joules charged" },
f_node_net_tx = { "joules_node_network_transmit_bytes", PROM_COUNTER, "bytes",
	"IPv4/IPv6 socket bytes sent by the tasks joules charged (kernels with the sock_send_length tracepoint, 6.3+)" },
f_node_net_rx = { "joules_node_network_receive_bytes", PROM_COUNTER, "bytes",
	"IPv4/IPv6 socket bytes received by the tasks joules charged (kernels with the sock_recv_length tracepoint, 6.3+)" },
f_node_pagecache = { "joules_node_pagecache_read_bytes", PROM_COUNTER, "bytes",
	"Bytes the tasks joules charged read(2) without storage reads (page-cache hits)" },
f_node_intervals = { "joules_node_attribution_intervals", PROM_COUNTER, NULL,
	"Attribution intervals closed since the module loaded" },
f_node_tasks = { "joules_node_tasks_tracked", PROM_GAUGE, NULL,
	"Live task entries the module keeps" };
/* clang-format on */

static int node_request(struct jnl *nl, void *arg)
{
	return jnl_get_node(nl, arg);
}

static void node_gather(struct jm_state *s, struct jm_snapshot *snap)
{
	struct jm_status *st = &snap->st[JM_C_NODE];
	enum jnl_op op = JNL_OP_GET_NODE;
	struct timespec ts;
	int err = jm_request(s, node_request, &snap->node, &op);
	uint64_t up;

	if (err) {
		jm_request_fail(st, "GET_NODE", op, err,
				s->nl ? jnl_kernel_msg(s->nl) : NULL);
		return;
	}
	if (s->seen_node && snap->node.uptime_ns < s->last_uptime_ns)
		s->reload_seen = true;
	s->seen_node = true;
	s->last_uptime_ns = snap->node.uptime_ns;
	/*
	 * Load time = now - uptime moves by the request's latency from one
	 * scrape to the next. Keep the first estimate until the module is
	 * reloaded or the clock is stepped, so that changes() of it counts
	 * reloads, not jitter.
	 */
	clock_gettime(CLOCK_REALTIME, &ts);
	up = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	up = up > snap->node.uptime_ns / 1000000 ?
		     up - snap->node.uptime_ns / 1000000 :
		     0;
	if (s->reload_seen || !s->load_time_ms || up > s->load_time_ms + 1000 ||
	    up + 1000 < s->load_time_ms)
		s->load_time_ms = up;
	snap->load_time_ms = s->load_time_ms;
}

static void node_render(const struct jm_state *s,
			const struct jm_snapshot *snap, struct prom_writer *w)
{
	const struct node_rec *n = &snap->node;
	struct prom_label src[] = { { "source", out_source_name(n->source) } };
	static const struct {
		const struct prom_family *f;
		int feat;
		unsigned int decimals;
	} feats[] = {
		{ &f_node_cpu, JL_F_CPU_NS, 9 },
		{ &f_node_cycles, JL_F_CYCLES, 0 },
		{ &f_node_instr, JL_F_INSTR, 0 },
		{ &f_node_misses, JL_F_MISSES, 0 },
		{ &f_node_disk, JL_F_DISK, 0 },
		{ &f_node_net_tx, JL_F_NET_TX, 0 },
		{ &f_node_net_rx, JL_F_NET_RX, 0 },
		{ &f_node_pagecache, JL_F_PAGECACHE, 0 },
	};

	(void)s;
	if (snap->load_time_ms) {
		prom_family(w, &f_load_time);
		prom_fixed(w, NULL, 0, snap->load_time_ms, 3);
	}
	/* No source has charged anything yet: no energy to show. */
	if (n->source) {
		prom_family(w, &f_node_energy);
		prom_fixed(w, src, NL(src), n->energy_uj, 6);
		prom_family(w, &f_node_idle);
		prom_fixed(w, src, NL(src), n->idle_uj, 6);
	}
	prom_family(w, &f_node_rapl);
	for (int d = 0; d < JL_NR_DOMAINS; d++) {
		struct prom_label l[] = { { "domain", jl_domain_names[d] } };

		if (n->domains & (1u << d))
			prom_fixed(w, l, NL(l), n->domain_uj[d], 6);
	}
	for (size_t i = 0; i < NL(feats); i++) {
		if (!(n->present & REC_F(feats[i].feat)))
			continue;
		prom_family(w, feats[i].f);
		prom_fixed(w, NULL, 0, n->feat[feats[i].feat],
			   feats[i].decimals);
	}
	prom_family(w, &f_node_intervals);
	prom_u64(w, NULL, 0, n->intervals);
	prom_family(w, &f_node_tasks);
	prom_u64(w, NULL, 0, n->tasks_tracked);
}

const struct jm_collector_info jm_node_collector = {
	.name = "node",
	.what = "node energy by source and RAPL domain, idle energy, "
		"CPU time (netlink GET_NODE)",
	.gather = node_gather,
	.render = node_render,
	.shown = JM_SHOWN_OK,
};
