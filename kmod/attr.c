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

#include "tasks.h"

unsigned int joules_interval_ms = 100;
enum joules_source_mode joules_source_mode = JOULES_MODE_AUTO;
bool joules_idle_split;
/* EnergAt's non-linear scaling exponents, in thousandths; 1000 = off. */
unsigned int joules_gamma_milli = 1000;
unsigned int joules_delta_milli = 1000;
/* Static power per measured domain, charged to idle first (uW, per package). */
u64 joules_meter_idle_uw[JL_NR_DOMAINS];

static struct delayed_work tick_work;
static DEFINE_MUTEX(tick_lock);
/*
 * No tick to move until joules_attr_init() has set it up: sysfs (and so
 * interval_ms) appears earlier in module init.
 */
static bool stopping = true;
static u64 last_tick_ns, load_ns;
static u64 idle_rem_fj;
static u64 misses_seen;

static DEFINE_SPINLOCK(totals_lock);
static struct joules_node_totals totals;

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
};

/* Per package, between the two passes of a tick. */
struct pkg_work {
	struct llist_node *list;
	u64 wsum, msum;		/* CPU-time and memory weight sums */
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

static void take_deltas(struct joules_entry *e, unsigned int pkg,
			struct jl_feat *d)
{
	struct joules_slot *s = &e->slot[pkg];
	unsigned int f;
	u64 c;

	d->present = (1U << JL_F_CPU_NS) | (1U << JL_F_DISK) |
		     READ_ONCE(e->hw_seen) | joules_opt_avail;
	for (f = 0; f < JL_NR_FEATURES; f++) {
		c = READ_ONCE(s->cum[f]);
		d->v[f] = c - s->charged[f];
		s->charged[f] = c;
	}
}

/* The same charge to e's cgroup and its ancestors. */
static void charge_cgroup(struct joules_entry *e, const struct jl_feat *d, u64 uj,
			  const u64 *part, u32 domains, u32 source, u64 generation)
{
	struct joules_totals c = { 0 };
	u64 rd = READ_ONCE(e->io_read), wr = READ_ONCE(e->io_write);
	unsigned int i;

	if (!e->cg)
		return;
	c.s.energy_uj = uj;
	for (i = 0; i < JL_NR_DOMAINS; i++)
		c.s.domain_uj[i] = part[i];
	c.s.domains = domains;
	c.s.source_mask = source;
	if (source)
		c.s.model_generation = generation;
	memcpy(c.feat, d->v, sizeof(c.feat));
	c.opt_present = d->present & ~((1U << JL_F_CPU_NS) | (1U << JL_F_DISK));
	c.read_bytes = rd - e->cg_read;
	c.write_bytes = wr - e->cg_write;
	e->cg_read = rd;
	e->cg_write = wr;
	joules_cg_charge(e, &c);
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
	for (n = pw->list; n; n = n->next) {
		struct joules_entry *e = slot_entry(node_slot(n, par), pkg);
		struct jl_feat d;

		joules_count(e);
		joules_cg_update(e);
		take_deltas(e, pkg, &d);
		for (f = 0; f < JL_NR_FEATURES; f++)
			smp->feat.v[f] += d.v[f];
		smp->feat.present |= d.present;
		pw->wsum = jl_add_sat(pw->wsum, scale_gamma(pp, d.v[JL_F_CPU_NS]));
		pw->msum = jl_add_sat(pw->msum, mem_weight(pp, &d));
		memcpy(e->slot[pkg].delta, d.v, sizeof(d.v));
		e->slot[pkg].delta_present = d.present;
		smp->nr_tasks++;
	}
}

/* Pass 2, once the band is known: weigh, then charge, in the same order. */
static void charge_pkg(struct pkg_pass *pp, unsigned int pkg, unsigned int par,
		       u64 dt)
{
	struct joules_node_sample *smp = pp->smp;
	struct pkg_work *pw = &pkg_work[pkg];
	struct jl_splitter split[JL_NR_DOMAINS];
	struct joules_meter_take mt;
	struct llist_node *n;
	u64 wsum = pw->wsum, model_wsum = 0, msum = pw->msum, share[JL_NR_DOMAINS];
	bool by_model;
	bool measured = false;
	u32 edoms = 0;
	unsigned int i;

	/* Always take the meter, so each interval gets only its own energy. */
	measured = joules_meter_take(pkg, &mt) && pp->mode != JOULES_MODE_MODEL;

	for (n = pw->list; pp->have_model && n; n = n->next) {
		struct joules_entry *e = slot_entry(node_slot(n, par), pkg);
		struct jl_feat d;

		memcpy(d.v, e->slot[pkg].delta, sizeof(d.v));
		d.present = e->slot[pkg].delta_present;
		e->split_w = scale_gamma(pp, jl_model_weight(&pp->coef, &d));
		model_wsum = jl_add_sat(model_wsum, e->split_w);
	}
	by_model = model_wsum > 0;
	if (by_model)
		wsum = model_wsum;
	if (measured) {
		edoms = energy_domains(mt.domains);
		smp->source |= JOULES_SRC_RAPL;
		smp->domains |= mt.domains;
		for (i = 0; i < JL_NR_DOMAINS; i++) {
			u64 idle, w;

			if (!(mt.domains & (1U << i)))
				continue;
			idle = jl_max_energy_uj(joules_meter_idle_uw[i], dt);
			w = i == JL_D_DRAM ? msum : wsum;
			if (idle > mt.uj[i] || !w)
				idle = mt.uj[i];	/* nobody ran: all of it is idle */
			share[i] = mt.uj[i] - idle;
			jl_splitter_init(&split[i], share[i], w);
			smp->domain_uj[i] += mt.uj[i];
			if (edoms & (1U << i)) {
				smp->energy_uj += mt.uj[i];
				smp->idle_uj += idle;
			}
		}
	}

	for (n = pw->list; n; n = n->next) {
		struct joules_entry *e = slot_entry(node_slot(n, par), pkg);
		struct joules_group *g = e->group;
		struct jl_feat d;
		u64 part[JL_NR_DOMAINS] = { 0 }, uj = 0;

		memcpy(d.v, e->slot[pkg].delta, sizeof(d.v));
		d.present = e->slot[pkg].delta_present;
		if (measured) {
			for (i = 0; i < JL_NR_DOMAINS; i++) {
				if (!(mt.domains & (1U << i)))
					continue;
				part[i] = jl_splitter_next(&split[i],
							   i == JL_D_DRAM ? mem_weight(pp, &d) :
							   by_model ? e->split_w :
							   scale_gamma(pp, d.v[JL_F_CPU_NS]));
				if (edoms & (1U << i))
					uj += part[i];
			}
		}
		raw_spin_lock(&g->lock);
		if (measured) {
			for (i = 0; i < JL_NR_DOMAINS; i++)
				e->sums.domain_uj[i] += part[i];
			e->sums.energy_uj += uj;
			e->sums.domains |= mt.domains;
			e->sums.source_mask |= JOULES_SRC_RAPL;
			if (pp->have_model)
				e->sums.model_generation = pp->generation;
		} else if (pp->have_model && pp->mode != JOULES_MODE_RAPL) {
			uj = jl_model_uj(&pp->coef, &d, &e->sums.model_rem_fj);
			e->sums.energy_uj += uj;
			e->sums.source_mask |= JOULES_SRC_MODEL;
			e->sums.model_generation = pp->generation;
		}
		raw_spin_unlock(&g->lock);
		if (!measured && pp->have_model && pp->mode != JOULES_MODE_RAPL) {
			smp->energy_uj += uj;
			smp->source |= JOULES_SRC_MODEL;
		}
		charge_cgroup(e, &d, uj, part, measured ? mt.domains : 0,
			      measured ? JOULES_SRC_RAPL : uj ? JOULES_SRC_MODEL : 0,
			      pp->generation);
	}
	/*
	 * The parts add up to each share exactly when the weights are the
	 * same in both walks (they are); whatever a saturated weight sum left
	 * unhanded is idle energy, so idle + tasks still equals the measured.
	 */
	if (measured)
		for (i = 0; i < JL_NR_DOMAINS; i++)
			if ((edoms & (1U << i)) && (mt.domains & (1U << i)))
				smp->idle_uj += jl_splitter_rest(&split[i]);
}

struct idle_pass {
	struct jl_splitter sp;
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
	u64 part;

	if (test_bit(JE_DEAD, &e->flags) || !ip->count)
		return;
	ip->count--;	/* the set may have grown since counting: stop at n */
	part = jl_splitter_next(&ip->sp, 1);
	raw_spin_lock(&g->lock);
	e->sums.idle_uj += part;
	e->sums.energy_uj += part;
	raw_spin_unlock(&g->lock);
	if (e->cg) {
		struct joules_totals c = { .s = { .energy_uj = part, .idle_uj = part } };

		joules_cg_charge(e, &c);
	}
}

/* GreenPipe's rule: idle energy split evenly by the number of live tasks. */
static void split_idle(u64 idle_uj)
{
	struct idle_pass ip = { 0 };

	joules_for_each_entry(count_entry, &ip);
	if (!ip.count || !idle_uj)
		return;
	jl_splitter_init(&ip.sp, idle_uj, ip.count);
	joules_for_each_entry(give_idle, &ip);
	/*
	 * Tasks that died between the two passes leave their parts unhanded;
	 * those stay on the node's idle line only (the node's idle_uj always
	 * holds all idle energy, split or not).
	 */
}

static void emit_exit(struct joules_entry *e)
{
	struct joules_group *g = e->group;
	struct joules_totals t;
	struct joules_stats st;

	/* Most exits have no listener: build nothing for them. */
	if (!joules_nl_exits_wanted())
		return;
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
	joules_nl_exit_record(&st);
}

static void tick(struct work_struct *work)
{
	struct joules_node_sample smp = { 0 };
	struct joules_entry *e, *tmp;
	struct pkg_pass pp;
	struct llist_node *n, *next;
	LIST_HEAD(ready);
	unsigned long closed;
	unsigned int pkg, i, band;
	u64 now, realtime, dt, idle_uj = 0, misses;
	const struct joules_model *m;

	/*
	 * Dead tasks whose final switch-out is complete (off every CPU) before
	 * the generation flip have their last counts in the interval closed
	 * now; the flip and drain below charge them, then they are final.
	 */
	for (n = llist_del_all(&joules_dying); n; n = next) {
		next = n->next;
		e = container_of(n, struct joules_entry, dnode);
		list_add_tail(&e->wnode, &dying_wait);
	}
	list_for_each_entry_safe(e, tmp, &dying_wait, wnode)
		if (joules_off_cpu(e) && !joules_leader_waits(e))
			list_move_tail(&e->wnode, &ready);
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
		joules_cg_task_gone(e);
	}

	/* A task ran that joules does not know: have the sweep find it. */
	misses = atomic64_read(&joules_lookup_misses);
	if (misses != misses_seen) {
		misses_seen = misses;
		joules_sweep_request();
	}

	/*
	 * Close the interval. Probes read joules_gen with interrupts off, so
	 * once every awake CPU has taken the flush IPI none still queues on
	 * the closed lists: a CPU idle now reads the new generation when it
	 * leaves idle (switch_in()). Idle CPUs are left asleep, which is also
	 * what they cost least energy doing. Hotplug is held off so that no
	 * CPU is missed.
	 */
	cpus_read_lock();
	closed = joules_gen;
	WRITE_ONCE(joules_gen, closed + 1);
	smp_mb(); /* the flip before reading awake; pairs with switch_in() */
	on_each_cpu_cond(cpu_awake, flush_cpu, NULL, true);
	cpus_read_unlock();
	/* Both clocks at the same instant: consecutive samples tile time. */
	now = ktime_get_ns();
	realtime = ktime_get_real_ns();
	dt = now - last_tick_ns;
	last_tick_ns = now;

	pp.mode = READ_ONCE(joules_source_mode);
	pp.gamma = READ_ONCE(joules_gamma_milli);
	pp.delta = READ_ONCE(joules_delta_milli);
	pp.smp = &smp;

	for (pkg = 0; pkg < joules_nr_pkgs; pkg++) {
		pkg_work[pkg].list = llist_del_all(&joules_pkgs[pkg].list[closed & 1]);
		take_pkg(&pp, pkg, closed & 1);
	}

	/*
	 * The band: from this interval's frequency; when it is unknown (no
	 * CPU time to measure it by) the band in force stays.
	 */
	smp.freq_mhz = joules_freq_now(&smp.feat);
	WRITE_ONCE(joules_freq_mhz_now, smp.freq_mhz);
	rcu_read_lock();
	m = joules_model_get();
	band = smp.freq_mhz ? jl_band_pick(&m->bands, smp.freq_mhz) :
			      READ_ONCE(joules_band_now);
	if (band >= m->bands.nr)
		band = 0;
	pp.coef = m->bands.set[band];
	pp.generation = m->generation;
	rcu_read_unlock();
	pp.have_model = pp.generation > 0;
	smp.band = band;
	WRITE_ONCE(joules_band_now, band);

	for (pkg = 0; pkg < joules_nr_pkgs; pkg++)
		charge_pkg(&pp, pkg, closed & 1, dt);

	/* Model idle power: the node's own line, once per node. */
	if (!(smp.source & JOULES_SRC_RAPL) && pp.have_model &&
	    pp.mode != JOULES_MODE_RAPL) {
		idle_uj = jl_power_uj(pp.coef.idle_uw, dt, &idle_rem_fj);
		smp.idle_uj += idle_uj;
		smp.energy_uj += idle_uj;
		smp.source |= JOULES_SRC_MODEL;
	}
	if (joules_idle_split)
		split_idle(smp.idle_uj);

	list_for_each_entry_safe(e, tmp, &ready, wnode) {
		list_del_init(&e->wnode);
		emit_exit(e);
		set_bit(JE_FINAL, &e->flags);
		joules_cg_task_gone(e);
	}
	list_for_each_entry_safe(e, tmp, &reaped_wait, rwait) {
		if (!test_bit(JE_FINAL, &e->flags))
			continue;
		list_del(&e->rwait);
		joules_fold(e);
	}

	smp.interval_ns = dt;
	smp.monotonic_ns = now;
	smp.realtime_ns = realtime;
	smp.model_generation = pp.generation;
	spin_lock(&totals_lock);
	smp.seq = ++totals.intervals;
	totals.energy_uj += smp.energy_uj;
	totals.idle_uj += smp.idle_uj;
	totals.task_uj += smp.energy_uj - smp.idle_uj;
	for (i = 0; i < JL_NR_DOMAINS; i++)
		totals.domain_uj[i] += smp.domain_uj[i];
	for (i = 0; i < JL_NR_FEATURES; i++)
		totals.feat.v[i] += smp.feat.v[i];
	totals.feat.present |= smp.feat.present;
	totals.source = smp.source;
	totals.domains = smp.domains;
	totals.model_generation = pp.generation;
	spin_unlock(&totals_lock);

	joules_nl_sample(&smp);
	joules_cg_tick();

	if (!READ_ONCE(stopping))
		queue_delayed_work(system_unbound_wq, &tick_work,
				   msecs_to_jiffies(READ_ONCE(joules_interval_ms)));
}

void joules_node_get(struct joules_node_totals *nt)
{
	spin_lock(&totals_lock);
	*nt = totals;
	spin_unlock(&totals_lock);
	nt->tasks_tracked = joules_tasks_tracked();
	nt->uptime_ns = ktime_get_ns() - load_ns;
}

int joules_attr_init(void)
{
	pkg_work = kcalloc(joules_nr_pkgs, sizeof(*pkg_work), GFP_KERNEL);
	if (!pkg_work)
		return -ENOMEM;
	load_ns = last_tick_ns = ktime_get_ns();
	INIT_DELAYED_WORK(&tick_work, tick);
	mutex_lock(&tick_lock);
	stopping = false;
	queue_delayed_work(system_unbound_wq, &tick_work,
			   msecs_to_jiffies(READ_ONCE(joules_interval_ms)));
	mutex_unlock(&tick_lock);
	return 0;
}

/*
 * A shorter interval is in force at once: the tick queued with the old one
 * (up to 60 s away) is brought forward. A longer one starts with the next
 * tick, so that a stream of writes cannot keep postponing it. The lock
 * keeps this from requeueing the tick after joules_attr_stop() cancelled it.
 */
void joules_attr_interval_changed(unsigned int old_ms)
{
	if (READ_ONCE(joules_interval_ms) >= old_ms)
		return;
	mutex_lock(&tick_lock);
	if (!stopping)
		mod_delayed_work(system_unbound_wq, &tick_work,
				 msecs_to_jiffies(READ_ONCE(joules_interval_ms)));
	mutex_unlock(&tick_lock);
}

void joules_attr_stop(void)
{
	mutex_lock(&tick_lock);
	WRITE_ONCE(stopping, true);
	mutex_unlock(&tick_lock);
	cancel_delayed_work_sync(&tick_work);
}

/* Hooks are already unregistered. */
void joules_attr_exit(void)
{
	struct joules_entry *e, *tmp;

	list_for_each_entry_safe(e, tmp, &dying_wait, wnode)
		list_del_init(&e->wnode);
	list_for_each_entry_safe(e, tmp, &reaped_wait, rwait) {
		list_del(&e->rwait);
		joules_fold(e);
	}
	kfree(pkg_work);
	pkg_work = NULL;
}
