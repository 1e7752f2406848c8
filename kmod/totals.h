/* SPDX-License-Identifier: GPL-2.0 */
/* totals.c: what has been charged to a task, a thread group or a cgroup. */
#ifndef JOULES_TOTALS_H
#define JOULES_TOTALS_H

#include "joules.h"

/* Energy charged so far (worker side, under the owner's lock). */
struct joules_sums {
	u64 energy_uj;
	u64 domain_uj[JL_NR_DOMAINS];
	u64 idle_uj;
	/*
	 * The same charges with measured energy settled per epoch
	 * (worker.c): what readers who may not read node energy see.
	 */
	u64 lag_uj;
	u64 lag_domain_uj[JL_NR_DOMAINS];
	u64 lag_idle_uj;
	u64 model_rem_fj;	/* model energy below 1 uJ, carried */
	u64 model_generation;
	u32 source_mask;
	u32 domains;
};

/* Everything a reader reports, summed over threads or cgroups when needed. */
struct joules_totals {
	struct joules_sums s;
	u64 feat[JL_NR_FEATURES];
	u64 read_bytes;
	u64 write_bytes;
	u32 opt_present;
	u32 opt_missed;	/* counters some part of the sum missed: absent */
};

void joules_totals_add(struct joules_totals *a, const struct joules_totals *b);
/* The energy and counter fields of *st from t; identity is the caller's. */
void joules_totals_stats(const struct joules_totals *t, struct joules_stats *st);
/* Show *st as a reader without node rights sees it (lag_ms > 0), perm.c. */
void joules_stats_lag(struct joules_stats *st, unsigned int lag_ms);

#endif /* JOULES_TOTALS_H */
