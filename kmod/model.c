// SPDX-License-Identifier: GPL-2.0
/*
 * The model's coefficient sets, one per frequency band. Readers (the
 * attribution worker, sysfs, netlink) see either the old or the new model,
 * never a mix: a writer builds a new copy and publishes it with RCU; the
 * old one is freed after a grace period. Writers are serialised by a mutex
 * so generation numbers are dense: one per write, however many bands.
 */
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>

#include "model.h"

static struct joules_model __rcu *cur_model;
static DEFINE_MUTEX(model_lock);

const struct joules_model *joules_model_get(void)
{
	return rcu_dereference(cur_model);
}

unsigned int joules_band_now;
u32 joules_freq_mhz_now;

const struct jl_coef *joules_model_coef(const struct joules_model *m)
{
	unsigned int b = READ_ONCE(joules_band_now);

	return &m->bands.set[b < m->bands.nr ? b : 0];
}

/*
 * Publish a new model: edit(), under the lock, fills it from the one in
 * force (and may refuse).
 */
static int model_update(int (*edit)(struct jl_bands *b, const void *arg),
			const void *arg)
{
	struct joules_model *m, *old;
	int err;

	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m)
		return -ENOMEM;
	mutex_lock(&model_lock);
	old = rcu_dereference_protected(cur_model,
					lockdep_is_held(&model_lock));
	m->bands = old->bands;
	err = edit(&m->bands, arg);
	if (err) {
		mutex_unlock(&model_lock);
		kfree(m);
		return err;
	}
	m->generation = old->generation + 1;
	rcu_assign_pointer(cur_model, m);
	mutex_unlock(&model_lock);
	kfree_rcu(old, rcu);
	return 0;
}

static int edit_single(struct jl_bands *b, const void *arg)
{
	jl_bands_single(b, arg);
	return 0;
}

int joules_model_set(const struct jl_coef *c)
{
	return model_update(edit_single, c);
}

static int edit_bands(struct jl_bands *b, const void *arg)
{
	*b = *(const struct jl_bands *)arg;
	return 0;
}

int joules_model_set_bands(const struct jl_bands *b)
{
	return model_update(edit_bands, b);
}

struct coef_edit {
	unsigned int i;
	u64 v;
};

/* Which band's set would one value change? Ambiguous with several. */
static int edit_coef(struct jl_bands *b, const void *arg)
{
	const struct coef_edit *ce = arg;

	if (b->nr > 1)
		return -EBUSY;
	jl_coef_set(&b->set[0], ce->i, ce->v);
	jl_bands_single(b, &b->set[0]);
	return 0;
}

int joules_model_set_coef(unsigned int i, u64 v)
{
	struct coef_edit ce = { .i = i, .v = v };

	return model_update(edit_coef, &ce);
}

int joules_model_init(void)
{
	/* Generation 0: no model set yet; the model source charges nothing. */
	struct joules_model *m = kzalloc(sizeof(*m), GFP_KERNEL);

	if (!m)
		return -ENOMEM;
	m->bands.nr = 1;
	joules_band_now = 0;
	joules_freq_mhz_now = 0;
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
