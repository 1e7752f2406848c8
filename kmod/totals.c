// SPDX-License-Identifier: GPL-2.0
/* Sums of charges: one rule for thread groups and cgroups alike. */
#include <linux/string.h>

#include "totals.h"

void joules_totals_add(struct joules_totals *a, const struct joules_totals *b)
{
	unsigned int i;

	a->s.energy_uj += b->s.energy_uj;
	for (i = 0; i < JL_NR_DOMAINS; i++)
		a->s.domain_uj[i] += b->s.domain_uj[i];
	a->s.idle_uj += b->s.idle_uj;
	a->s.lag_uj += b->s.lag_uj;
	for (i = 0; i < JL_NR_DOMAINS; i++)
		a->s.lag_domain_uj[i] += b->s.lag_domain_uj[i];
	a->s.lag_idle_uj += b->s.lag_idle_uj;
	if (b->s.model_generation > a->s.model_generation)
		a->s.model_generation = b->s.model_generation;
	a->s.source_mask |= b->s.source_mask;
	a->s.domains |= b->s.domains;
	for (i = 0; i < JL_NR_FEATURES; i++)
		a->feat[i] += b->feat[i];
	a->read_bytes += b->read_bytes;
	a->write_bytes += b->write_bytes;
	a->opt_present |= b->opt_present;
	a->opt_missed |= b->opt_missed;
}

void joules_totals_stats(const struct joules_totals *t, struct joules_stats *st)
{
	unsigned int i;

	st->energy_uj = t->s.energy_uj;
	for (i = 0; i < JL_NR_DOMAINS; i++)
		st->domain_uj[i] = t->s.domain_uj[i];
	st->idle_uj = t->s.idle_uj;
	st->lag_energy_uj = t->s.lag_uj;
	for (i = 0; i < JL_NR_DOMAINS; i++)
		st->lag_domain_uj[i] = t->s.lag_domain_uj[i];
	st->lag_idle_uj = t->s.lag_idle_uj;
	st->cpu_ns = t->feat[JL_F_CPU_NS];
	st->cycles = t->feat[JL_F_CYCLES];
	st->instructions = t->feat[JL_F_INSTR];
	st->cache_misses = t->feat[JL_F_MISSES];
	st->net_tx_bytes = t->feat[JL_F_NET_TX];
	st->net_rx_bytes = t->feat[JL_F_NET_RX];
	st->pagecache_bytes = t->feat[JL_F_PAGECACHE];
	st->read_bytes = t->read_bytes;
	st->write_bytes = t->write_bytes;
	st->opt_present = t->opt_present & ~t->opt_missed;
	st->domains = t->s.domains;
	st->source_mask = t->s.source_mask;
	st->model_generation = t->s.model_generation;
}

/* The lagged figures in place of the measured ones. */
void joules_stats_lag(struct joules_stats *st, unsigned int lag_ms)
{
	if (!lag_ms)
		return;
	st->energy_uj = st->lag_energy_uj;
	memcpy(st->domain_uj, st->lag_domain_uj, sizeof(st->domain_uj));
	st->idle_uj = st->lag_idle_uj;
	st->lag_ms = lag_ms;
}
