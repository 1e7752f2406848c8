/* SPDX-License-Identifier: GPL-2.0 */
/* model.c: the coefficient sets in force. */
#ifndef JOULES_MODEL_H
#define JOULES_MODEL_H

#include <linux/rcupdate.h>

#include "core.h"

/*
 * model.c: the coefficient sets (one per frequency band), swapped
 * atomically for readers (RCU); every set bumps the generation once.
 */
struct joules_model {
	struct jl_bands bands;
	u64 generation;
	struct rcu_head rcu;
};
int joules_model_init(void);
void joules_model_exit(void);
/* Caller holds rcu_read_lock(); never NULL. */
const struct joules_model *joules_model_get(void);
int joules_model_set(const struct jl_coef *c);	/* a one-band model */
int joules_model_set_bands(const struct jl_bands *b);
/* One coefficient of a one-band model; -EBUSY with several bands. */
int joules_model_set_coef(unsigned int i, u64 v);
/*
 * The set of the band the worker used last (the one in force now): what
 * the single-set files show. Caller holds rcu_read_lock().
 */
const struct jl_coef *joules_model_coef(const struct joules_model *m);
extern unsigned int joules_band_now;	/* written by the worker */
extern u32 joules_freq_mhz_now;		/* 0: unknown */

#endif /* JOULES_MODEL_H */
