// SPDX-License-Identifier: GPL-2.0
/*
 * The model's coefficient set. Readers (the attribution worker, procfs,
 * netlink) see either the old or the new set, never a mix: a writer builds
 * a new copy and publishes it with RCU; the old one is freed after a grace
 * period. Writers are serialised by a mutex so generation numbers are dense.
 */
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>

#include "joules.h"

static struct joules_model __rcu *cur_model;
static DEFINE_MUTEX(model_lock);

const struct joules_model *joules_model_get(void)
{
	return rcu_dereference(cur_model);
}

int joules_model_set(const struct jl_coef *c)
{
	struct joules_model *m, *old;

	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m)
		return -ENOMEM;
	m->coef = *c;
	mutex_lock(&model_lock);
	old = rcu_dereference_protected(cur_model,
					lockdep_is_held(&model_lock));
	m->generation = old->generation + 1;
	rcu_assign_pointer(cur_model, m);
	mutex_unlock(&model_lock);
	kfree_rcu(old, rcu);
	return 0;
}

int joules_model_init(void)
{
	/* Generation 0: no model set yet; the model source charges nothing. */
	struct joules_model *m = kzalloc(sizeof(*m), GFP_KERNEL);

	if (!m)
		return -ENOMEM;
	RCU_INIT_POINTER(cur_model, m);
	return 0;
}

void joules_model_exit(void)
{
	struct joules_model *m = rcu_dereference_protected(cur_model, 1);

	RCU_INIT_POINTER(cur_model, NULL);
	synchronize_rcu();
	kfree(m);
}
