// SPDX-License-Identifier: GPL-2.0
/*
 * The attribution worker. Every interval it closes the interval on every
 * CPU (an IPI that charges the running task and advances that CPU's
 * generation), takes the tasks that ran on each package, and charges them
 * energy: the model's prediction, or a meter's measured energy split by
 * weight. Idle energy is the node's own line unless idle_split is set.
 *
 * Conservation: per interval, idle + sum of task charges equals the node
 * energy exactly; fractions of a microjoule are carried, never dropped.
 *
 * A model with frequency bands uses one band per interval for the whole
 * node, picked from the node's effective frequency after every package's
 * deltas are taken and before anything is charged: the trainer fits node
 * power against node-level samples, so the band must be a function of
 * what a sample records (its freq_mhz), not of any one package.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/mutex.h>
#include <linux/cred.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/timekeeping.h>
#include <linux/workqueue.h>

#include "baseline.h"
#include "cgroup.h"
#include "compat.h"
#include "freq.h"
#include "model.h"
#include "perm.h"
#include "pmu.h"
#include "report.h"
#include "source.h"
#include "taskcg.h"
#include "tasks.h"
#include "track.h"
#include "wallmeter.h"
#include "worker.h"

unsigned int joules_interval_ms = 100;
enum joules_source_mode joules_source_mode = JOULES_MODE_AUTO;
bool joules_idle_split;
/* EnergAt's non-linear scaling exponents, in thousandths; 1000 = off. */
unsigned int joules_gamma_milli = 1000;
unsigned int joules_delta_milli = 1000;

static struct delayed_work tick_work;
static DEFINE_MUTEX(tick_lock);
/*
 * No tick to move until joules_worker_start() has queued it: sysfs (and so
 * interval_ms) appears earlier in module init.
 */
static bool stopping = true;
static u64 last_tick_ns;
static u64 idle_rem_fj;
static u64 wall_rem_fj;		/* a wall meter's power as the shape */
static u64 wall_static_rem_fj;	/* the wall's static power, sub-uJ */
static u64 misses_seen;
/* The last tick's own time, and its package: not a task's, for idleness. */
static u64 tick_cost_ns;
static unsigned int tick_cost_pkg;
/*
 * The lagged view (perm.c): each epoch's measured energy is settled among
 * the tasks that ran in it by their weights of the epoch when it ends
 * (lag_roll(); the packages' in pkg_work, the wall meter's here); idle is
 * the last epoch's static power (per ns). Worker only.
 */
static u64 epoch_ns;
static struct jl_settle wall_settle;
static struct jl_rate idle_rate;
/* What the epoch's splits did not hand out: lagged idle of the next tick. */
static u64 lag_back;
/*
 * What the dying took beyond their shares, paid from lagged idle and by
 * the next dying out of what they take (lag_leave()), so that it never
 * grows past one epoch's overdraft and nobody else pays it.
 */
static u64 lag_debt;
/* The epoch is void (lag_wall_changes()): what it makes idle's, and owes. */
static bool epoch_void;
static u64 lag_carry, lag_carry_over;
/* The epoch's node energy is a wall meter's, and how it splits. */
static bool epoch_wall;
static int epoch_wall_by;

/* Worker-private: entries waiting to become final or to be folded. */
static LIST_HEAD(dying_wait);
static LIST_HEAD(reaped_wait);

/* Per-interval scratch, worker only. */
struct pkg_pass {
	struct joules_node_sample *smp;
	struct jl_coef coef;	/* the band's set */
	u64 generation;
	bool have_model;
	/* Read once per tick, so that every charge of the tick agrees. */
	enum joules_source_mode mode;
	unsigned int gamma, delta;
	/*
	 * A wall meter in force: the node's energy this tick is wall_uj
	 * (wallmeter.c), handed to the tasks in proportion to what the shape
	 * gave each (RAPL's parts), the model's weights, or CPU time out of
	 * the node's CPU time without a shape; idle keeps the rest.
	 */
	bool wall;
	u64 power_uw;		/* the wall meter's power */
	enum { WALL_BY_PARTS, WALL_BY_MODEL, WALL_BY_CPU } wall_by;
	struct jl_splitter wall_split;
	u64 wall_uj, wall_given;
	u64 lag_given;		/* lagged energy charged to tasks */
	u64 lag_static;		/* the node's static energy this tick */
	u64 busy_ns;		/* CPU time that ran, the worker's not counted */
	u32 hw_missed;		/* counters some slice missed lately: unused */
};

/* A package's measured energy this interval, and how it is split. */
struct pkg_meter {
	struct joules_meter_take mt;
	struct jl_splitter split[JL_NR_DOMAINS];
	u32 edoms;		/* domains that make up energy_uj */
	u64 idle_uj;		/* of those, what idle got first */
	bool by_model;		/* weights are the model's (split_w) */
};

/* Per package, between the passes of a tick. */
struct pkg_work {
	struct llist_node *list;
	u64 wsum, msum;		/* CPU-time and memory weight sums */
	u64 model_wsum;		/* the model's weights (split_w) summed */
	u64 busy_ns;		/* CPU time its tasks used */
	struct pkg_meter meter;	/* its meter's energy this tick (meter.mt) */
	bool measured;		/* meter.mt is charged (not mode model) */
	/* The lagged view: this epoch's energy, and the slots it is owed to. */
	struct jl_settle settle[JL_NR_DOMAINS];
	struct hlist_head lag_pending;
	u32 lag_domains;	/* the meter's domains this epoch */
};
static struct pkg_work *pkg_work;	/* joules_nr_pkgs of them */

/*
 * On every awake CPU, after the generation moved on (interrupts off, so no
 * probe is running here): the closed interval gets the PMU counts of the
 * task running here so far, and that task is queued for the new interval,
 * which it is already running in. A task that was running when the module
 * loaded is found here (every CPU starts awake).
 */
static void flush_cpu(void *unused)
{
	struct joules_cpu *jc = this_cpu_ptr(&joules_cpus);
	struct task_struct *t = current;
	struct joules_entry *e = jc->cur;

	if (is_idle_task(t)) {
		e = NULL;
		/* Nothing to flush here until a task runs (switch_in()). */
		WRITE_ONCE(jc->awake, false);
	} else if (!e || e->task != t) {
		e = joules_lookup(t);
		jc->cur = e;
	}
	if (static_branch_unlikely(&joules_hw_on))
		joules_count_hw(e, jc);
	if (e)
		joules_enter(e, jc, READ_ONCE(joules_gen));
}

static bool cpu_awake(int cpu, void *unused)
{
	return READ_ONCE(per_cpu(joules_cpus, cpu).awake);
}

static inline struct joules_entry *slot_entry(struct joules_slot *s,
					      unsigned int pkg)
{
	return container_of(s - pkg, struct joules_entry, slot[0]);
}

/*
 * Weight for splitting measured CPU-side energy: the model's prediction
 * when one is set (model_w), CPU time otherwise (and whenever the model
 * predicts nothing for every task, e.g. an idle-only model).
 */
static u64 scale_gamma(const struct pkg_pass *pp, u64 w)
{
	return pp->gamma < 1000 ? jl_pow_milli(w, pp->gamma) : w;
}

/* Memory-side weight: cache misses where a PMU counts them, else CPU time. */
static u64 mem_weight(const struct pkg_pass *pp, const struct jl_feat *d)
{
	u64 w = (d->present & (1U << JL_F_MISSES)) ? d->v[JL_F_MISSES] :
						      d->v[JL_F_CPU_NS];

	return pp->delta < 1000 ? jl_pow_milli(w, pp->delta) : w;
}

/* Domains that make up a task's energy_uj: package + DRAM (PSYS if alone). */
static u32 energy_domains(u32 domains)
{
	u32 d = domains & ((1U << JL_D_PKG) | (1U << JL_D_DRAM));

	if (!(domains & (1U << JL_D_PKG)) && (domains & (1U << JL_D_PSYS)))
		d |= 1U << JL_D_PSYS;
	return d;
}

/*
 * The unit of a rate's weights: CPU ns or model nJ, scaled by gamma and
 * delta, under one coefficient set. A rate of another unit starts over.
 */
static u64 lag_kind(const struct pkg_pass *pp, bool by_model, unsigned int extra)
{
	return ((by_model ? pp->generation + 1 : 0) << 24) |
	       ((u64)extra << 20) | ((u64)pp->gamma << 10) | pp->delta;
}

/*
 * A counter some slice missed lately is absent from every task's deltas,
 * so that no weight, prediction or sample is built on partial counts; the
 * task's own miss goes to its cgroup's charge (delta_missed).
 */
static void take_deltas(struct joules_entry *e, unsigned int pkg,
			struct jl_feat *d, u32 hw_missed)
{
	struct joules_slot *s = &e->slot[pkg];
	unsigned int f;
	u64 c;

	d->present = ((1U << JL_F_CPU_NS) | (1U << JL_F_DISK) |
		      READ_ONCE(e->hw_seen) | joules_opt_avail) &
		     ~(hw_missed | s->delta_missed);
	for (f = 0; f < JL_NR_FEATURES; f++) {
		c = READ_ONCE(s->cum[f]);
		d->v[f] = c - s->charged[f];
		s->charged[f] = c;
	}
}

static inline struct joules_slot *node_slot(struct llist_node *n,
					    unsigned int par)
{
	return par ? container_of(n, struct joules_slot, lnode[1]) :
		     container_of(n, struct joules_slot, lnode[0]);
}

/* Pass 1: count and take every queued task's deltas; no charge yet. */
static void take_pkg(struct pkg_pass *pp, unsigned int pkg, unsigned int par)
{
	struct joules_node_sample *smp = pp->smp;
	struct pkg_work *pw = &pkg_work[pkg];
	struct llist_node *n;
	unsigned int f;

	pw->wsum = 0;
	pw->msum = 0;
	pw->busy_ns = 0;
	for (n = pw->list; n; n = n->next) {
		struct joules_entry *e = slot_entry(node_slot(n, par), pkg);
		struct jl_feat d;

		joules_count(e);
		joules_taskcg_update(e);
		take_deltas(e, pkg, &d, pp->hw_missed);
		for (f = 0; f < JL_NR_FEATURES; f++)
			smp->feat.v[f] += d.v[f];
		smp->feat.present |= d.present;
		pw->busy_ns = jl_add_sat(pw->busy_ns, d.v[JL_F_CPU_NS]);
		pw->wsum = jl_add_sat(pw->wsum, scale_gamma(pp, d.v[JL_F_CPU_NS]));
		pw->msum = jl_add_sat(pw->msum, mem_weight(pp, &d));
		memcpy(e->slot[pkg].delta, d.v, sizeof(d.v));
		e->slot[pkg].delta_present = d.present;
		smp->nr_tasks++;
	}
}

/*
 * The counters no task's deltas may use this tick: every queued task's
 * own misses first, then those of any slice anywhere (read after, so that
 * a miss in between is in one or the other). A slice that ends after this
 * and before its deltas are taken is masked from the next tick on only.
 */
static u32 hw_missed_now(unsigned int par)
{
	u32 m = 0;
	unsigned int pkg;
	struct llist_node *n;

	if (!joules_pmu_present())
		return 0;
	for (pkg = 0; pkg < joules_nr_pkgs; pkg++) {
		for (n = pkg_work[pkg].list; n; n = n->next) {
			struct joules_slot *s = node_slot(n, par);

			s->delta_missed = xchg(&s->iv_missed, 0);
			m |= s->delta_missed;
		}
	}
	return m | joules_pmu_take_missed();
}

static inline void entry_deltas(struct joules_entry *e, unsigned int pkg,
				struct jl_feat *d)
{
	memcpy(d->v, e->slot[pkg].delta, sizeof(d->v));
	d->present = e->slot[pkg].delta_present;
}

/* The model's weight of every task on the package; 0 if none predicts. */
static u64 model_weights(struct pkg_pass *pp, unsigned int pkg, unsigned int par)
{
	struct llist_node *n;
	u64 wsum = 0;

	for (n = pkg_work[pkg].list; pp->have_model && n; n = n->next) {
		struct joules_entry *e = slot_entry(node_slot(n, par), pkg);
		struct jl_feat d;

		entry_deltas(e, pkg, &d);
		e->split_w = scale_gamma(pp, jl_model_weight(&pp->coef, &d));
		wsum = jl_add_sat(wsum, e->split_w);
	}
	return wsum;
}

/*
 * Static power first (to idle: baseline.c's, measured or set), the rest
 * split by weight; a domain where nobody ran is all idle.
 */
static void meter_split(struct pkg_pass *pp, struct pkg_meter *pm,
			struct pkg_work *pw, unsigned int pkg, u64 wsum,
			u64 dt)
{
	struct joules_node_sample *smp = pp->smp;
	u64 kind, cpu_kind = lag_kind(pp, pm->by_model, 0);
	unsigned int i;

	pm->edoms = energy_domains(pm->mt.domains);
	pm->idle_uj = 0;
	/* Another meter's domains: the slots' weights fit no split. */
	if (pw->lag_domains && pw->lag_domains != pm->mt.domains)
		for (i = 0; i < JL_NR_DOMAINS; i++)
			jl_settle_void(&pw->settle[i]);
	pw->lag_domains |= pm->mt.domains;
	smp->source |= JOULES_SRC_RAPL;
	smp->domains |= pm->mt.domains;
	for (i = 0; i < JL_NR_DOMAINS; i++) {
		u64 idle, stat, w, uj = pm->mt.uj[i];

		if (!(pm->mt.domains & (1U << i)))
			continue;
		idle = jl_max_energy_uj(joules_base_pkg_uw(pkg, i), dt);
		stat = min(idle, uj);
		w = i == JL_D_DRAM ? pw->msum : wsum;
		if (idle > uj || !w)
			idle = uj;
		jl_splitter_init(&pm->split[i], uj - idle, w);
		/*
		 * The epoch's: this tick's energy above static, whether anyone
		 * ran or not, so that the split is the whole epoch's (DRAM's
		 * weights keep their unit).
		 */
		kind = i == JL_D_DRAM ? lag_kind(pp, false, 1) : cpu_kind;
		jl_settle_add(&pw->settle[i], uj - stat, w, kind);
		if (pm->edoms & (1U << i))
			pp->lag_static += stat;
		smp->domain_uj[i] += uj;
		if (pm->edoms & (1U << i)) {
			smp->energy_uj += uj;
			smp->idle_uj += idle;
			pm->idle_uj += idle;
		}
	}
}

/*
 * e's parts of the measured energy (part[]), and their sum in energy_uj;
 * its weights are the epoch's too (slot s, settled by lag_roll()).
 */
static u64 measured_parts(struct pkg_pass *pp, struct pkg_meter *pm,
			  struct joules_entry *e, struct joules_slot *s,
			  const struct jl_feat *d, u64 *part)
{
	u64 uj = 0, w, side[JOULES_LAG_SIDES] = { 0 };
	unsigned int i;

	for (i = 0; i < JL_NR_DOMAINS; i++) {
		if (!(pm->mt.domains & (1U << i)))
			continue;
		w = i == JL_D_DRAM ? mem_weight(pp, d) :
		    pm->by_model ? e->split_w : scale_gamma(pp, d->v[JL_F_CPU_NS]);
		part[i] = jl_splitter_next(&pm->split[i], w);
		side[joules_lag_side(i)] = w;
		if (pm->edoms & (1U << i))
			uj += part[i];
	}
	/* Every CPU-side domain has the same weight; DRAM its own. */
	for (i = 0; i < JOULES_LAG_SIDES; i++)
		s->lag_w[i] = jl_add_sat(s->lag_w[i], side[i]);
	return uj;
}

/* Charge one task its measured parts, or the model's prediction. */
static void charge_entry(struct pkg_pass *pp, struct pkg_meter *pm,
			 struct joules_entry *e, unsigned int pkg)
{
	struct joules_group *g = e->group;
	struct joules_slot *s = &e->slot[pkg];
	u64 part[JL_NR_DOMAINS] = { 0 };
	u64 uj = 0, lag = 0, w;
	bool modelled = !pm && pp->have_model && pp->mode != JOULES_MODE_RAPL;
	struct jl_feat d;
	unsigned int i;

	u32 src = pm ? JOULES_SRC_RAPL : modelled ? JOULES_SRC_MODEL : 0;

	entry_deltas(e, pkg, &d);
	if (pm)
		uj = measured_parts(pp, pm, e, s, &d, part);
	raw_spin_lock(&g->lock);
	if (pm) {
		for (i = 0; i < JL_NR_DOMAINS; i++)
			e->sums.domain_uj[i] += part[i];
		e->sums.domains |= pm->mt.domains;
		if (pp->have_model)
			e->sums.model_generation = pp->generation;
	} else if (modelled) {
		uj = jl_model_uj(&pp->coef, &d, &e->sums.model_rem_fj);
		e->sums.model_generation = pp->generation;
		lag = uj;	/* a prediction from its own counters */
	}
	if (modelled) {
		pp->smp->energy_uj += uj;
		pp->smp->source |= JOULES_SRC_MODEL;
	}
	if (pp->wall) {
		/*
		 * Its share of the meter's energy, by the weight wall_start()
		 * summed; in the lagged view, by its settled parts or the
		 * same weight of the epoch (lag_roll()).
		 */
		if (pp->wall_by == WALL_BY_PARTS) {
			uj = jl_splitter_next(&pp->wall_split, uj);
		} else {
			w = pp->wall_by == WALL_BY_CPU ? scale_gamma(pp, d.v[JL_F_CPU_NS]) :
							 e->split_w;
			uj = jl_splitter_next(&pp->wall_split, w);
			s->lag_wall_w = jl_add_sat(s->lag_wall_w, w);
		}
		lag = 0;
		pp->wall_given += uj;
		src = JOULES_SRC_METER;
	}
	pp->lag_given += lag;
	e->sums.energy_uj += uj;
	e->sums.lag_uj += lag;
	e->sums.source_mask |= src;
	raw_spin_unlock(&g->lock);
	/* Owed a share of the epoch's measured energy: settled at its end. */
	if ((pm || pp->wall) && hlist_unhashed(&s->lag_node))
		hlist_add_head(&s->lag_node, &pkg_work[pkg].lag_pending);
	/* A cgroup's source: whoever charged it energy (a model's 0 is none). */
	joules_taskcg_charge(e, &d, s->delta_missed, uj, lag, part,
			     pm ? pm->mt.domains : 0,
			     src == JOULES_SRC_MODEL && !uj ? 0 : src, pp->generation);
}

/*
 * Pass 2, once the band is known: the model's weights, and how the
 * package's measured energy splits (static power first).
 */
static void weigh_pkg(struct pkg_pass *pp, unsigned int pkg, unsigned int par,
		      u64 dt)
{
	struct pkg_work *pw = &pkg_work[pkg];
	u64 wsum = model_weights(pp, pkg, par);

	pw->model_wsum = wsum;
	pw->meter.by_model = wsum > 0;
	if (!pw->meter.by_model)
		wsum = pw->wsum;
	if (pw->measured)
		meter_split(pp, &pw->meter, pw, pkg, wsum, dt);
}

/* Pass 3: charge, in the order weigh_pkg() weighed. */
static void charge_pkg(struct pkg_pass *pp, unsigned int pkg, unsigned int par)
{
	struct pkg_work *pw = &pkg_work[pkg];
	struct pkg_meter *pm = pw->measured ? &pw->meter : NULL;
	struct llist_node *n;
	unsigned int i;

	for (n = pw->list; n; n = n->next)
		charge_entry(pp, pm, slot_entry(node_slot(n, par), pkg), pkg);
	/*
	 * The parts add up to each share exactly when the weights are the
	 * same in both walks (they are); whatever a saturated weight sum left
	 * unhanded is idle energy, so idle + tasks still equals the measured.
	 */
	if (pm)
		for (i = 0; i < JL_NR_DOMAINS; i++)
			if (pm->edoms & pm->mt.domains & (1U << i))
				pp->smp->idle_uj += jl_splitter_rest(&pm->split[i]);
}

/*
 * The node's shape this tick, before anything is charged: the measured
 * packages' energy (WALL_BY_PARTS; *idle_uj their static power), else the
 * model's prediction for the node's features (linear: the sum of the
 * tasks', to within a microjoule each) and its idle power (WALL_BY_MODEL),
 * else 0 (WALL_BY_CPU: the wall meter's recent power then shapes it).
 */
static int node_shape(struct pkg_pass *pp, u64 dt, u64 *shape, u64 *idle_uj)
{
	u64 uj = 0, idle = 0, rem = 0, idle_rem = idle_rem_fj;
	unsigned int pkg, i;
	bool measured = false;

	for (pkg = 0; pkg < joules_nr_pkgs; pkg++) {
		struct pkg_meter *pm = &pkg_work[pkg].meter;

		if (!pkg_work[pkg].measured)
			continue;
		measured = true;
		idle += pm->idle_uj;
		for (i = 0; i < JL_NR_DOMAINS; i++)
			if (pm->edoms & pm->mt.domains & (1U << i))
				uj += pm->mt.uj[i];
	}
	*shape = uj;
	*idle_uj = idle;
	if (measured)
		return uj ? WALL_BY_PARTS : WALL_BY_CPU;
	if (!pp->have_model || pp->mode == JOULES_MODE_RAPL)
		return WALL_BY_CPU;
	*idle_uj = jl_power_uj(pp->coef.idle_uw, dt, &idle_rem);
	*shape = jl_model_uj(&pp->coef, &pp->smp->feat, &rem) + *idle_uj;
	/* A model that predicts nothing shapes nothing either. */
	return *shape ? WALL_BY_MODEL : WALL_BY_CPU;
}

/*
 * The lagged view of the wall's split: the meter's energy of the epoch,
 * settled by the tasks' weights of the epoch in the view's own terms: the
 * same model weights or CPU time, or RAPL's parts once they are settled
 * (live parts would tell the energy of the ticks a task chose to run in),
 * which lag_roll() adds then; RAPL's static energy is idle's share of the
 * weight while the wall's own is unknown, as in the live split.
 */
static void wall_lag(struct pkg_pass *pp, u64 total, u64 wsum, bool known)
{
	u64 kind = lag_kind(pp, pp->wall_by == WALL_BY_MODEL,
			    pp->wall_by * 2 + known);

	epoch_wall_by = pp->wall_by;
	if (pp->wall_by == WALL_BY_PARTS) {
		jl_settle_kind(&wall_settle, kind);
		wsum = known ? 0 : pp->lag_static;
	}
	jl_settle_add(&wall_settle, total, wsum, kind);
}

/*
 * A wall meter in force: the node's energy this tick from wallmeter.c.
 * Its static power (baseline.c) goes to idle first; the rest is split
 * among the tasks by weight, summed here as charge_entry() will pass
 * them: RAPL's parts, the model's weights (nJ) or CPU time. Before the
 * wall's static power is known, idle takes the share the shape gave it
 * instead: RAPL's static power, the model's idle power (as nJ of weight),
 * or, with no shape, the CPU time nobody used out of what the node's CPUs
 * had. Without a meter, the meter's books still follow the node.
 */
static void wall_start(struct pkg_pass *pp, u64 t0, u64 t1)
{
	u64 power_uw = pp->power_uw, static_uw, shape, idle_uj, wsum = 0;
	u64 dt = t1 - t0, total;
	bool known = joules_base_wall_uw(&static_uw);
	unsigned int pkg;

	if (!pp->wall)
		return;
	pp->wall_by = node_shape(pp, dt, &shape, &idle_uj);
	switch (pp->wall_by) {
	case WALL_BY_CPU:
		shape = jl_power_uj(power_uw, dt, &wall_rem_fj);
		for (pkg = 0; pkg < joules_nr_pkgs; pkg++)
			wsum = jl_add_sat(wsum, pkg_work[pkg].wsum);
		if (!known)
			wsum = max(wsum, jl_mul_sat(num_online_cpus(), scale_gamma(pp, dt)));
		break;
	case WALL_BY_MODEL:
		for (pkg = 0; pkg < joules_nr_pkgs; pkg++)
			wsum = jl_add_sat(wsum, pkg_work[pkg].model_wsum);
		if (!known)
			wsum = jl_add_sat(wsum, jl_muldiv(pp->coef.idle_uw, dt, 1000000));
		break;
	default:
		wsum = known ? shape - idle_uj : shape;
		break;
	}
	pp->wall_uj = joules_wall_tick(t0, t1, shape, true, pp->busy_ns);
	total = pp->wall_uj;
	if (known)
		total -= min(total, jl_power_uj(static_uw, dt, &wall_static_rem_fj));
	pp->wall_given = 0;
	jl_splitter_init(&pp->wall_split, total, wsum);
	wall_lag(pp, total, wsum, known);
	/* The node's energy is the wall's: its static part is idle's. */
	pp->lag_static = pp->wall_uj - total;
}

/* What the tasks did not get is idle: idle + tasks = the meter's, exactly. */
static void wall_end(struct pkg_pass *pp, u64 t0, u64 t1)
{
	struct joules_node_sample *smp = pp->smp;

	if (!pp->wall) {
		joules_wall_tick(t0, t1, smp->energy_uj, false, pp->busy_ns);
		return;
	}
	smp->energy_uj = pp->wall_uj;
	smp->idle_uj = pp->wall_uj - pp->wall_given;
	smp->source |= JOULES_SRC_METER;
}

struct idle_pass {
	struct jl_splitter sp, lag;
	u64 count;
};

static void count_entry(struct joules_entry *e, void *arg)
{
	if (!test_bit(JE_DEAD, &e->flags))
		((struct idle_pass *)arg)->count++;
}

static void give_idle(struct joules_entry *e, void *arg)
{
	struct idle_pass *ip = arg;
	struct joules_group *g = e->group;
	u64 part, lag;

	if (test_bit(JE_DEAD, &e->flags) || !ip->count)
		return;
	ip->count--;	/* the set may have grown since counting: stop at n */
	part = jl_splitter_next(&ip->sp, 1);
	lag = jl_splitter_next(&ip->lag, 1);
	raw_spin_lock(&g->lock);
	e->sums.idle_uj += part;
	e->sums.energy_uj += part;
	e->sums.lag_idle_uj += lag;
	e->sums.lag_uj += lag;
	raw_spin_unlock(&g->lock);
	joules_taskcg_charge_idle(e, part, lag);
}

/*
 * GreenPipe's rule: idle energy split evenly by the number of live tasks;
 * lag_uj, idle in the lagged view, alike.
 */
static noinline_for_stack void split_idle(u64 idle_uj, u64 lag_uj)
{
	struct idle_pass ip = { 0 };

	joules_visit_entries(count_entry, &ip);
	if (!ip.count || (!idle_uj && !lag_uj))
		return;
	jl_splitter_init(&ip.sp, idle_uj, ip.count);
	jl_splitter_init(&ip.lag, lag_uj, ip.count);
	joules_visit_entries(give_idle, &ip);
	/*
	 * Tasks that died between the two passes leave their parts unhanded;
	 * those stay on the node's idle line only (the node's idle_uj always
	 * holds all idle energy, split or not).
	 */
}

/* Out of line: its totals would otherwise sit in tick()'s frame. */
static noinline_for_stack void emit_exit(struct joules_entry *e)
{
	struct joules_group *g = e->group;
	struct joules_totals t;
	struct joules_stats st;

	memset(&st, 0, sizeof(st));
	raw_spin_lock(&g->lock);
	joules_entry_totals(e, &t);
	raw_spin_unlock(&g->lock);
	joules_fill_stats(e, &t, &st);
	/* Identity as of its exit (probe_exit), like taskstats. */
	st.pid = READ_ONCE(e->pid);
	st.tgid = READ_ONCE(e->tgid);
	st.uid = from_kuid_munged(&init_user_ns, READ_ONCE(e->uid));
	st.nr_threads = 1;
	st.exited = true;
	joules_report_exit(&st);
}

/*
 * Entries that become final this tick go on ready. Dead tasks whose final
 * switch-out is complete (off every CPU) before the generation flip have
 * their last counts in the interval closed now; the flip and drain charge
 * them, then they are final.
 */
static void collect_final(struct list_head *ready)
{
	struct joules_entry *e, *tmp;
	struct llist_node *n, *next;

	for (n = llist_del_all(&joules_dying); n; n = next) {
		next = n->next;
		e = container_of(n, struct joules_entry, dnode);
		list_add_tail(&e->wnode, &dying_wait);
	}
	list_for_each_entry_safe(e, tmp, &dying_wait, wnode)
		if (joules_off_cpu(e) && !joules_leader_waits(e))
			list_move_tail(&e->wnode, ready);
	for (n = llist_del_all(&joules_reaped); n; n = next) {
		next = n->next;
		e = container_of(n, struct joules_entry, rnode);
		list_add_tail(&e->rwait, &reaped_wait);
	}
	/*
	 * A released task is off its CPU for good. One whose final switch-out
	 * went unseen (JE_DEAD never set: it died before the hooks saw it) is
	 * final now; this must be decided here, before the flip, so that every
	 * list it was queued on is drained by this tick before it is folded
	 * and freed. One seen dying is the dying path's.
	 */
	list_for_each_entry(e, &reaped_wait, rwait) {
		if (test_bit(JE_FINAL, &e->flags) || test_bit(JE_DEAD, &e->flags))
			continue;
		set_bit(JE_DEAD, &e->flags);
		set_bit(JE_FINAL, &e->flags);
		joules_taskcg_gone(e);
	}
}

/*
 * Close the interval; returns the generation closed. Probes read joules_gen
 * with interrupts off, so once every awake CPU has taken the flush IPI none
 * still queues on the closed lists: a CPU idle now reads the new generation
 * when it leaves idle (switch_in()). Idle CPUs are left asleep, which is
 * also what they cost least energy doing. Hotplug is held off so that no
 * CPU is missed.
 */
static unsigned long close_interval(void)
{
	unsigned long closed;

	cpus_read_lock();
	closed = joules_gen;
	WRITE_ONCE(joules_gen, closed + 1);
	smp_mb(); /* the flip before reading awake; pairs with switch_in() */
	on_each_cpu_cond(cpu_awake, flush_cpu, NULL, true);
	cpus_read_unlock();
	return closed;
}

/*
 * The band: from this interval's frequency; when it is unknown (no CPU
 * time to measure it by) the band in force stays.
 */
static void pick_band(struct pkg_pass *pp)
{
	struct joules_node_sample *smp = pp->smp;
	const struct joules_model *m;
	unsigned int band;

	smp->freq_mhz = joules_freq_now(&smp->feat);
	WRITE_ONCE(joules_freq_mhz_now, smp->freq_mhz);
	rcu_read_lock();
	m = joules_model_get();
	band = smp->freq_mhz ? jl_band_pick(&m->bands, smp->freq_mhz) :
			       READ_ONCE(joules_band_now);
	if (band >= m->bands.nr)
		band = 0;
	pp->coef = m->bands.set[band];
	pp->generation = m->generation;
	rcu_read_unlock();
	pp->have_model = pp->generation > 0;
	smp->band = band;
	smp->model_generation = pp->generation;
	WRITE_ONCE(joules_band_now, band);
}

/*
 * Idle in the lagged view: measured static energy at the last epoch's
 * static power, and what the epoch's splits did not hand out (lag_roll()),
 * less what the dying owe; a model's idle as it is. The node's lagged
 * energy is what the tasks got in that view plus its idle: conserved, and
 * the measured energy of the epochs ended, but for a debt still owed.
 */
static void lag_idle(struct pkg_pass *pp, u64 dt)
{
	struct joules_node_sample *smp = pp->smp;
	u32 src = smp->source & (JOULES_SRC_RAPL | JOULES_SRC_METER);
	u64 pay;

	if (src) {
		smp->lag_idle_uj = jl_rate_uj(&idle_rate, dt, src);
		jl_rate_add(&idle_rate, pp->lag_static, dt, src);
	} else {
		smp->lag_idle_uj = smp->idle_uj;
	}
	smp->lag_idle_uj += lag_back;
	lag_back = 0;
	pay = min(lag_debt, smp->lag_idle_uj);
	smp->lag_idle_uj -= pay;
	lag_debt -= pay;
}

/* Slot s of e settled: part[] by domain, lag its energy in the view. */
static void lag_charge(struct pkg_pass *pp, struct joules_entry *e,
		       struct joules_slot *s, const u64 *part, u64 lag)
{
	struct joules_group *g = e->group;
	unsigned int i;

	raw_spin_lock(&g->lock);
	for (i = 0; i < JL_NR_DOMAINS; i++)
		e->sums.lag_domain_uj[i] += part[i];
	e->sums.lag_uj += lag;
	raw_spin_unlock(&g->lock);
	pp->lag_given += lag;
	if (lag || memchr_inv(part, 0, JL_NR_DOMAINS * sizeof(*part)))
		joules_taskcg_charge_lag(e, lag, part);
	memset(s->lag_w, 0, sizeof(s->lag_w));
	s->lag_wall_w = 0;
}

/*
 * Slot s's share of its package's epoch (part[] by domain; prov: it leaves
 * before the end, at the last epoch's rates) and of the wall's; returns
 * its energy in the view.
 */
static u64 lag_share(struct pkg_work *pw, struct joules_slot *s, bool prov,
		     u64 *part)
{
	u32 edoms = pw->meter.edoms;
	unsigned int i;
	u64 p = 0, w;

	for (i = 0; i < JL_NR_DOMAINS; i++) {
		w = s->lag_w[joules_lag_side(i)];
		if (!w)
			continue;
		part[i] = prov ? jl_settle_prov(&pw->settle[i], w) :
				 jl_settle_next(&pw->settle[i], w);
		if (edoms & (1U << i))
			p += part[i];
	}
	if (!epoch_wall)
		return p;
	w = epoch_wall_by == WALL_BY_PARTS ? p : s->lag_wall_w;
	return prov ? jl_settle_prov(&wall_settle, w) :
		      jl_settle_next(&wall_settle, w);
}

/*
 * What a dying slot took (lag, and part[] by domain) less the debt it pays
 * (lag_debt): its node energy first, and the same of its node domains'
 * parts, so that they still add up to it.
 */
static u64 lag_pay(struct pkg_work *pw, u64 lag, u64 *part)
{
	u64 pay = min(lag_debt, lag), left;
	unsigned int i;

	lag_debt -= pay;
	for (i = 0, left = epoch_wall ? 0 : pay; i < JL_NR_DOMAINS && left; i++) {
		u64 p = (pw->meter.edoms & (1U << i)) ? min(part[i], left) : 0;

		part[i] -= p;
		left -= p;
	}
	return lag - pay;
}

/*
 * e is final before its epoch ends: settled now at the last epoch's rates
 * (jl_settle_prov()), so that its exit record and its group's dead totals
 * hold its share, and it is off the lists before it is freed. A debt the
 * dying before it left is paid out of that first.
 */
static void lag_leave(struct pkg_pass *pp, struct joules_entry *e)
{
	unsigned int pkg;

	for (pkg = 0; pkg < joules_nr_pkgs; pkg++) {
		struct joules_slot *s = &e->slot[pkg];
		u64 part[JL_NR_DOMAINS] = { 0 }, lag;

		if (hlist_unhashed(&s->lag_node))
			continue;
		hlist_del_init(&s->lag_node);
		lag = lag_share(&pkg_work[pkg], s, true, part);
		lag = lag_pay(&pkg_work[pkg], lag, part);
		lag_charge(pp, e, s, part, lag);
	}
}

/*
 * The epoch's energy split among the slots of its packages by their
 * weights of the epoch (jl_settle), then the wall's, which with RAPL's
 * parts as weights needs those splits first; unless void (split false),
 * when nothing is split. Only the energy the node's is made of counts for
 * idle (a CORE domain is inside PKG's, RAPL's is not the node's under a
 * wall meter): what made no split and the dying's shares less what they
 * took. At the epoch's scheduled end (scheduled) that is lagged idle, or
 * if the dying took more, a debt (lag_debt) that lagged idle and the next
 * dying (lag_pay()) pay: no other task's share depends on who died. At a
 * wall meter's switch it waits for the end (lag_carry).
 */
static void lag_roll(struct pkg_pass *pp, bool split, bool scheduled)
{
	u64 back = 0, owed = 0, parts = 0, left, over;
	struct hlist_node *tmp;
	struct joules_slot *s;
	unsigned int pkg, i;
	u32 edoms;

	for (pkg = 0; pkg < joules_nr_pkgs; pkg++) {
		struct pkg_work *pw = &pkg_work[pkg];

		edoms = energy_domains(pw->lag_domains);
		for (i = 0; i < JL_NR_DOMAINS; i++) {
			struct jl_settle *st = &pw->settle[i];
			bool voided = !split || st->mixed;

			if (!split)
				jl_settle_void(st);
			jl_settle_roll(st);
			if (!(edoms & (1U << i)))
				continue;
			/*
			 * The wall's weight: every share, the dying's too; a
			 * void domain's energy is nobody's share, so its part
			 * of the wall is idle's.
			 */
			parts = jl_add_sat(parts, st->sp.total);
			if (voided)
				parts = jl_add_sat(parts, st->unsplit);
		}
	}
	if (epoch_wall && epoch_wall_by == WALL_BY_PARTS)
		jl_settle_add(&wall_settle, 0, parts, wall_settle.acc_kind);
	if (!split)
		jl_settle_void(&wall_settle);
	jl_settle_roll(&wall_settle);
	for (pkg = 0; pkg < joules_nr_pkgs; pkg++) {
		struct pkg_work *pw = &pkg_work[pkg];

		hlist_for_each_entry_safe(s, tmp, &pw->lag_pending, lag_node) {
			u64 part[JL_NR_DOMAINS] = { 0 }, lag;

			hlist_del_init(&s->lag_node);
			lag = lag_share(pw, s, false, part);
			lag_charge(pp, slot_entry(s, pkg), s, part, lag);
		}
		/* Every domain the epoch had counts, not the last tick's. */
		edoms = energy_domains(pw->lag_domains);
		for (i = 0; i < JL_NR_DOMAINS; i++) {
			left = jl_settle_end(&pw->settle[i], &over);
			if (!epoch_wall && (edoms & (1U << i))) {
				back = jl_add_sat(back, left);
				owed = jl_add_sat(owed, over);
			}
		}
		pw->lag_domains = 0;
	}
	left = jl_settle_end(&wall_settle, &over);
	if (epoch_wall) {
		back = jl_add_sat(back, left);
		owed = jl_add_sat(owed, over);
	}
	lag_carry = jl_add_sat(lag_carry, back);
	lag_carry_over = jl_add_sat(lag_carry_over, owed);
	if (!scheduled)
		return;
	if (lag_carry >= lag_carry_over)
		lag_back = jl_add_sat(lag_back, lag_carry - lag_carry_over);
	else
		lag_debt = jl_add_sat(lag_debt, lag_carry_over - lag_carry);
	lag_carry = 0;
	lag_carry_over = 0;
	lag_back = jl_add_sat(lag_back, jl_rate_roll(&idle_rate));
	epoch_ns = 0;
	epoch_void = false;
}

/*
 * An epoch ends at the first tick unpriv_interval_ms after it began, void
 * if a wall meter started or stopped being in force in it.
 */
static void lag_epoch(struct pkg_pass *pp, u64 dt)
{
	unsigned int ms = READ_ONCE(joules_unpriv_interval_ms);

	/* 0 (every reader live): the view still exists, on request. */
	ms = max(ms ? ms : 1000, READ_ONCE(joules_interval_ms));
	WRITE_ONCE(joules_lag_epoch_ms, ms);
	epoch_ns += dt;
	if (epoch_ns >= (u64)ms * NSEC_PER_MSEC)
		lag_roll(pp, !epoch_void, true);
}

/*
 * Before anything of a tick is charged: is a wall meter in force? If that
 * changed, the epoch is void: the old source's energy so far is put aside
 * for its end, unsplit, and the new source's is not split either. A split
 * or a lump of idle at the switch would tell less than an epoch's energy,
 * at a time a reader can tell (wallmeter/status) and may sway (a feeder
 * made late); the epoch ends on schedule, whole.
 */
static void lag_wall_changes(struct pkg_pass *pp)
{
	pp->wall = joules_wall_in_force(&pp->power_uw);
	if (pp->wall == epoch_wall)
		return;
	lag_roll(pp, false, false);
	epoch_wall = pp->wall;
	epoch_void = true;
}

/* Exit records of the final entries, then fold what the kernel released. */
static void finish_entries(struct list_head *ready, struct pkg_pass *pp)
{
	struct joules_entry *e, *tmp;
	LIST_HEAD(held);
	/*
	 * Most exits have no listener: build nothing for them. Asked once a
	 * tick, not per exit (a mutex and a multicast group test each): a
	 * listener that joins meanwhile gets records from the next tick on.
	 */
	bool wanted = !list_empty(ready) && joules_report_exits_wanted();

	list_for_each_entry_safe(e, tmp, ready, wnode) {
		list_del_init(&e->wnode);
		lag_leave(pp, e);
		if (wanted)
			emit_exit(e);
		set_bit(JE_FINAL, &e->flags);
		joules_taskcg_gone(e);
	}
	list_for_each_entry_safe(e, tmp, &reaped_wait, rwait) {
		if (!test_bit(JE_FINAL, &e->flags) || joules_fold_held(e))
			continue;
		list_del(&e->rwait);
		/* Released unseen dying (collect_final()): its share, before its cgroup goes. */
		lag_leave(pp, e);
		/* Outside the group's raw lock: cgroup.c may sleep on RT. */
		joules_taskcg_release(e);
		/* A reader came meanwhile: the next tick (release is idempotent). */
		if (!joules_fold(e))
			list_add(&e->rwait, &held);
	}
	list_splice(&held, &reaped_wait);
}

/*
 * Was the package idle this interval, and what ran on the node, for
 * static power (baseline.c)? The last tick's own time is left out, for
 * the package it ran on and for the node: the worker runs every interval.
 */
static bool pkg_idle(unsigned int pkg, u64 dt)
{
	u64 busy = pkg_work[pkg].busy_ns;

	if (pkg == tick_cost_pkg)
		busy -= min(busy, tick_cost_ns);
	return jl_base_idle(dt, busy);
}

static u64 node_busy(void)
{
	u64 busy = 0;
	unsigned int pkg;

	for (pkg = 0; pkg < joules_nr_pkgs; pkg++)
		busy = jl_add_sat(busy, pkg_work[pkg].busy_ns);
	return busy - min(busy, tick_cost_ns);
}

/* Model idle power: the node's own line, once per node. */
static void model_idle(struct pkg_pass *pp, u64 dt)
{
	struct joules_node_sample *smp = pp->smp;
	u64 idle_uj;

	if ((smp->source & JOULES_SRC_RAPL) || !pp->have_model ||
	    pp->mode == JOULES_MODE_RAPL)
		return;
	idle_uj = jl_power_uj(pp->coef.idle_uw, dt, &idle_rem_fj);
	smp->idle_uj += idle_uj;
	smp->energy_uj += idle_uj;
	smp->source |= JOULES_SRC_MODEL;
}

static void tick(struct work_struct *work)
{
	struct joules_node_sample smp = { 0 };
	struct pkg_pass pp = { .smp = &smp };
	u64 now, dt, misses, start = ktime_get_ns();
	LIST_HEAD(ready);
	unsigned long closed;
	unsigned int pkg;

	collect_final(&ready);
	/* A task ran that joules does not know: have the sweep find it. */
	misses = atomic64_read(&joules_lookup_misses);
	if (misses != misses_seen) {
		misses_seen = misses;
		joules_sweep_request();
	}
	closed = close_interval();
	/* Both clocks at the same instant: consecutive samples tile time. */
	now = ktime_get_ns();
	smp.realtime_ns = ktime_get_real_ns();
	smp.monotonic_ns = now;
	dt = now - last_tick_ns;
	smp.interval_ns = dt;
	last_tick_ns = now;

	pp.mode = READ_ONCE(joules_source_mode);
	pp.gamma = READ_ONCE(joules_gamma_milli);
	pp.delta = READ_ONCE(joules_delta_milli);
	for (pkg = 0; pkg < joules_nr_pkgs; pkg++)
		pkg_work[pkg].list = llist_del_all(&joules_pkgs[pkg].list[closed & 1]);
	pp.hw_missed = hw_missed_now(closed & 1);
	for (pkg = 0; pkg < joules_nr_pkgs; pkg++)
		take_pkg(&pp, pkg, closed & 1);
	pick_band(&pp);
	joules_base_tick();
	pp.busy_ns = node_busy();
	/* Every package's meter first: a wall meter needs the node's shape. */
	for (pkg = 0; pkg < joules_nr_pkgs; pkg++) {
		struct pkg_work *pw = &pkg_work[pkg];

		/* Always take, so that each interval gets only its own energy. */
		pw->measured = joules_meter_take(pkg, &pw->meter.mt);
		/* Static power is measured whatever the mode (baseline.c). */
		if (pw->measured)
			joules_base_pkg(pkg, &pw->meter.mt, now, dt, pkg_idle(pkg, dt));
		else
			joules_base_pkg_forget(pkg);
		pw->measured &= pp.mode != JOULES_MODE_MODEL;
	}
	lag_wall_changes(&pp);
	for (pkg = 0; pkg < joules_nr_pkgs; pkg++)
		weigh_pkg(&pp, pkg, closed & 1, dt);
	wall_start(&pp, now - dt, now);
	for (pkg = 0; pkg < joules_nr_pkgs; pkg++)
		charge_pkg(&pp, pkg, closed & 1);

	model_idle(&pp, dt);
	wall_end(&pp, now - dt, now);
	lag_idle(&pp, dt);
	/* Before the idle split, which charges each task's cgroup. */
	joules_taskcg_scan();
	joules_taskcg_tick_end();
	if (joules_idle_split)
		split_idle(smp.idle_uj, smp.lag_idle_uj);
	/* Before the exit records: a task dead in the epoch's last tick is settled. */
	lag_epoch(&pp, dt);
	finish_entries(&ready, &pp);
	smp.lag_uj = pp.lag_given + smp.lag_idle_uj;
	joules_report_sample(&smp);
	joules_cg_tick();

	tick_cost_ns = ktime_get_ns() - start;
	tick_cost_pkg = this_cpu_read(joules_cpus.pkg);
	if (!READ_ONCE(stopping))
		queue_delayed_work(jl_unbound_wq, &tick_work,
				   msecs_to_jiffies(READ_ONCE(joules_interval_ms)));
}

int joules_worker_init(void)
{
	pkg_work = kcalloc(joules_nr_pkgs, sizeof(*pkg_work), GFP_KERNEL);
	if (!pkg_work)
		return -ENOMEM;
	if (joules_base_init(joules_nr_pkgs)) {
		kfree(pkg_work);
		pkg_work = NULL;
		return -ENOMEM;
	}
	INIT_DELAYED_WORK(&tick_work, tick);
	return 0;
}

void joules_worker_start(void)
{
	last_tick_ns = ktime_get_ns();
	mutex_lock(&tick_lock);
	stopping = false;
	queue_delayed_work(jl_unbound_wq, &tick_work,
			   msecs_to_jiffies(READ_ONCE(joules_interval_ms)));
	mutex_unlock(&tick_lock);
}

/*
 * A shorter interval is in force at once: the tick queued with the old one
 * (up to 60 s away) is brought forward. A longer one starts with the next
 * tick, so that a stream of writes cannot keep postponing it. The lock
 * keeps this from requeueing the tick after joules_worker_stop() cancelled it.
 */
void joules_worker_interval_changed(unsigned int old_ms)
{
	if (READ_ONCE(joules_interval_ms) >= old_ms)
		return;
	mutex_lock(&tick_lock);
	if (!stopping)
		mod_delayed_work(jl_unbound_wq, &tick_work,
				 msecs_to_jiffies(READ_ONCE(joules_interval_ms)));
	mutex_unlock(&tick_lock);
}

void joules_worker_stop(void)
{
	mutex_lock(&tick_lock);
	WRITE_ONCE(stopping, true);
	mutex_unlock(&tick_lock);
	cancel_delayed_work_sync(&tick_work);
}

/* Hooks are already unregistered. */
void joules_worker_exit(void)
{
	struct joules_entry *e, *tmp;

	list_for_each_entry_safe(e, tmp, &dying_wait, wnode)
		list_del_init(&e->wnode);
	list_for_each_entry_safe(e, tmp, &reaped_wait, rwait) {
		list_del(&e->rwait);
		joules_taskcg_release(e);
		WARN_ON_ONCE(!joules_fold(e));	/* no reader is left */
	}
	joules_base_exit();
	kfree(pkg_work);
	pkg_work = NULL;
}
