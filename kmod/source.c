// SPDX-License-Identifier: GPL-2.0
/*
 * Energy sources: one registered meter at a time (the RAPL MSRs, or the
 * test-only synthetic meter). Each package is sampled by a delayed work
 * whose period comes from the counter's unit and width and the maximum
 * plausible power, so a counter cannot wrap twice unseen; the attribution
 * worker takes the energy accumulated since its last take.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/workqueue.h>

#include "compat.h"
#include "freq.h"
#include "perm.h"
#include "source.h"

struct pkg_meter {
	u64 last[JL_NR_DOMAINS];	/* raw counter at the last sample */
	u64 rem[JL_NR_DOMAINS];		/* sub-uJ remainder, in counter units */
	u64 acc_uj[JL_NR_DOMAINS];	/* energy not yet taken */
	u64 total_uj[JL_NR_DOMAINS];	/* since registration */
	u64 last_ns;
	bool primed;
};

static DEFINE_MUTEX(meter_lock);
static struct joules_meter *meter;	/* under meter_lock */
static struct pkg_meter *pkgs;
static struct delayed_work sample_work;
static u64 period_ns;
static u64 wraps, bogus, samples;

/* Unit of domain d: its own where the meter gives one, else the meter's. */
static inline unsigned int dom_esu(const struct joules_meter *m, unsigned int d)
{
	return (m->esu_mask & (1U << d)) ? m->domain_esu[d] : m->esu;
}

/* Sample one package; meter_lock held. */
static void sample_pkg(unsigned int p)
{
	struct pkg_meter *pm = &pkgs[p];
	u64 raw[JL_NR_DOMAINS], now, dt;
	unsigned int d;
	int err;

	memset(raw, 0, sizeof(raw));
	now = ktime_get_ns();
	/* Not into a module that has begun to unload (source.h). */
	if (!module_is_live(meter->owner))
		return;
	err = meter->read(meter, p, raw);
	if (err)
		return;	/* read failed: try again next period */
	/* The read happened somewhere in [now, after]: bound by the longest. */
	dt = ktime_get_ns() - pm->last_ns;
	samples++;
	for (d = 0; d < JL_NR_DOMAINS; d++) {
		u64 delta, uj, mask;

		if (!(meter->domains & (1U << d)))
			continue;
		mask = meter->bits >= 64 ? ~0ULL : (1ULL << meter->bits) - 1;
		raw[d] &= mask;
		if (!pm->primed)
			continue;
		delta = jl_wrap_delta(pm->last[d], raw[d], meter->bits);
		if (raw[d] < pm->last[d])
			wraps++;
		uj = jl_rapl_to_uj(delta, dom_esu(meter, d), &pm->rem[d]);
		/*
		 * More than max power allows is a bogus read (all-ones, a
		 * reset): keep the new baseline, charge nothing.
		 */
		if (uj > jl_max_energy_uj(meter->max_power_uw, dt) + 1) {
			bogus++;
			pm->rem[d] = 0;
			continue;
		}
		pm->acc_uj[d] += uj;
		pm->total_uj[d] += uj;
	}
	memcpy(pm->last, raw, sizeof(raw));
	pm->last_ns = now;
	pm->primed = true;
}

/* Sample every package once; meter_lock held. */
static void sample_all(void)
{
	unsigned int p;

	for (p = 0; p < meter->nr_pkgs; p++)
		sample_pkg(p);
}

static void sample_fn(struct work_struct *w)
{
	mutex_lock(&meter_lock);
	if (meter) {
		sample_all();
		queue_delayed_work(jl_unbound_wq, &sample_work,
				   nsecs_to_jiffies(period_ns));
	}
	mutex_unlock(&meter_lock);
}

bool joules_meter_take(unsigned int pkg, struct joules_meter_take *t)
{
	bool ok = false;
	unsigned int d;

	memset(t, 0, sizeof(*t));
	mutex_lock(&meter_lock);
	if (meter && pkg < meter->nr_pkgs) {
		/* Bring this package up to now before taking. */
		sample_pkg(pkg);
		for (d = 0; d < JL_NR_DOMAINS; d++) {
			t->uj[d] = pkgs[pkg].acc_uj[d];
			pkgs[pkg].acc_uj[d] = 0;
		}
		t->domains = meter->domains;
		ok = pkgs[pkg].primed;
	}
	mutex_unlock(&meter_lock);
	return ok;
}

int joules_meter_register(struct joules_meter *m)
{
	struct pkg_meter *p;
	unsigned int d, esu_max = m->esu;
	u64 wrap;

	/* Without its owner a provider could not be dropped as its module goes. */
	if (WARN_ON_ONCE(!m->owner))
		return -EINVAL;
	if (!m->read || !m->nr_pkgs || !m->bits || m->bits > 64 || m->esu > 31 ||
	    !m->max_power_uw || !(m->domains & ((1U << JL_NR_DOMAINS) - 1)) ||
	    (m->esu_mask & ~((1U << JL_NR_DOMAINS) - 1)))
		return -EINVAL;
	for (d = 0; d < JL_NR_DOMAINS; d++) {
		if (!(m->domains & (1U << d)))
			continue;
		if (dom_esu(m, d) > 31)
			return -EINVAL;
		/* The finest unit wraps first: it sets the sampling period. */
		esu_max = max(esu_max, dom_esu(m, d));
	}
	p = kcalloc(m->nr_pkgs, sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	mutex_lock(&meter_lock);
	if (meter) {
		mutex_unlock(&meter_lock);
		kfree(p);
		return -EBUSY;
	}
	/* Sample at least twice per wrap at max power, and at most 10 Hz... */
	wrap = m->bits >= 64 ? ~0ULL : jl_rapl_wrap_period_ns(esu_max, m->max_power_uw);
	if (m->bits < 32)
		wrap >>= 32 - m->bits;
	period_ns = min_t(u64, wrap, 1000ULL * NSEC_PER_MSEC);
	/* ...but no faster than the jiffy clock can schedule. */
	period_ns = max_t(u64, period_ns, jiffies_to_nsecs(1));
	pkgs = p;
	meter = m;
	wraps = bogus = samples = 0;
	sample_all();	/* baseline */
	INIT_DELAYED_WORK(&sample_work, sample_fn);
	queue_delayed_work(jl_unbound_wq, &sample_work,
			   nsecs_to_jiffies(period_ns));
	mutex_unlock(&meter_lock);
	pr_info("energy source %s registered: %u package(s), domains 0x%x, esu %u, sampled every %llu ms\n",
		m->name, m->nr_pkgs, m->domains, m->esu, period_ns / NSEC_PER_MSEC);
	return 0;
}
EXPORT_SYMBOL_GPL(joules_meter_register);

void joules_meter_unregister(struct joules_meter *m)
{
	mutex_lock(&meter_lock);
	if (meter != m) {
		mutex_unlock(&meter_lock);
		return;
	}
	meter = NULL;
	mutex_unlock(&meter_lock);
	/* sample_fn sees meter == NULL and does not requeue. */
	cancel_delayed_work_sync(&sample_work);
	mutex_lock(&meter_lock);
	kfree(pkgs);
	pkgs = NULL;
	mutex_unlock(&meter_lock);
	pr_info("energy source %s unregistered\n", m->name);
}
EXPORT_SYMBOL_GPL(joules_meter_unregister);

/*
 * Why no meter is registered, as the meter that was looked for says it
 * ("no RAPL: ..."); shown in status while none is.
 */
static char absent_why[160];

void joules_meter_absent(const char *why)
{
	mutex_lock(&meter_lock);
	strscpy(absent_why, why, sizeof(absent_why));
	mutex_unlock(&meter_lock);
}

/* ---- /sys/kernel/joules/rapl/ (status; raw counters root-only) ---- */

static ssize_t status_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	ssize_t n;

	mutex_lock(&meter_lock);
	if (meter)
		n = sysfs_emit(buf, "%s\n", meter->name);
	else if (*absent_why)
		/* Say why: "absent" alone reads like a broken counter. */
		n = sysfs_emit(buf, "absent: %s\n", absent_why);
	else
		n = sysfs_emit(buf, "absent\n");
	mutex_unlock(&meter_lock);
	return n;
}

static ssize_t domains_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	unsigned int d;
	ssize_t n = 0;

	mutex_lock(&meter_lock);
	if (!meter) {
		n = sysfs_emit(buf, "absent\n");
	} else {
		for (d = 0; d < JL_NR_DOMAINS; d++)
			if (meter->domains & (1U << d))
				n += sysfs_emit_at(buf, n, "%s%s", n ? " " : "",
						   jl_domain_names[d]);
		n += sysfs_emit_at(buf, n, "\n");
	}
	mutex_unlock(&meter_lock);
	return n;
}

static ssize_t units_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	unsigned int d;
	ssize_t n;

	mutex_lock(&meter_lock);
	if (meter) {
		/* One count = 1/2^esu J; print it in picojoules. */
		n = sysfs_emit(buf, "esu %u (%llu pJ per count), %u-bit counters",
			       meter->esu, 1000000000000ULL >> meter->esu, meter->bits);
		/* Domains with a unit of their own, e.g. "; dram esu 16 (...)". */
		for (d = 0; d < JL_NR_DOMAINS; d++)
			if (meter->domains & meter->esu_mask & (1U << d))
				n += sysfs_emit_at(buf, n, "; %s esu %u (%llu pJ per count)",
						   jl_domain_names[d], meter->domain_esu[d],
						   1000000000000ULL >> meter->domain_esu[d]);
		n += sysfs_emit_at(buf, n, "\n");
	} else {
		n = sysfs_emit(buf, "absent\n");
	}
	mutex_unlock(&meter_lock);
	return n;
}

static ssize_t wraps_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%llu\n", READ_ONCE(wraps));
}

static ssize_t bogus_reads_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%llu\n", READ_ONCE(bogus));
}

static ssize_t period_ms_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	ssize_t n;

	mutex_lock(&meter_lock);
	n = meter ? sysfs_emit(buf, "%llu\n", period_ns / NSEC_PER_MSEC) :
		    sysfs_emit(buf, "absent\n");
	mutex_unlock(&meter_lock);
	return n;
}

/*
 * Cumulative energy per domain and package, uJ: a side channel (PLATYPUS),
 * so CAP_PERFMON or CAP_SYS_ADMIN, like GET_NODE and the samples.
 */
static ssize_t energy_uj_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	struct joules_reader r;
	unsigned int p, d;
	ssize_t n = 0;

	joules_reader_current(&r);
	if (!joules_may_read_node(&r))
		return -EPERM;
	mutex_lock(&meter_lock);
	if (!meter) {
		n = sysfs_emit(buf, "absent\n");
		goto out;
	}
	sample_all();
	for (p = 0; p < meter->nr_pkgs; p++) {
		n += sysfs_emit_at(buf, n, "package %u:", p);
		for (d = 0; d < JL_NR_DOMAINS; d++)
			if (meter->domains & (1U << d))
				n += sysfs_emit_at(buf, n, " %s=%llu", jl_domain_names[d],
						   pkgs[p].total_uj[d]);
		n += sysfs_emit_at(buf, n, "\n");
	}
out:
	mutex_unlock(&meter_lock);
	return n;
}

static struct kobj_attribute rapl_attrs[] = {
	__ATTR(status, 0444, status_show, NULL),
	__ATTR(domains, 0444, domains_show, NULL),
	__ATTR(units, 0444, units_show, NULL),
	__ATTR(wraps, 0444, wraps_show, NULL),
	__ATTR(bogus_reads, 0444, bogus_reads_show, NULL),
	__ATTR(sampling_period_ms, 0444, period_ms_show, NULL),
	__ATTR(energy_uj, 0444, energy_uj_show, NULL),
};

static struct attribute *rapl_attr_ptrs[ARRAY_SIZE(rapl_attrs) + 1];
static struct attribute_group rapl_group = {
	.name = "rapl",
	.attrs = rapl_attr_ptrs,
};

int joules_source_sysfs(struct kobject *parent)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(rapl_attrs); i++)
		rapl_attr_ptrs[i] = &rapl_attrs[i].attr;
	return sysfs_create_group(parent, &rapl_group);
}

/*
 * A provider's module (a meter's, a frequency source's) must unregister
 * it in its exit. Holding a reference while it is registered would make
 * its rmmod fail for good (the exit that unregisters never runs), so the
 * module is instead watched as it goes: GOING is notified after its exit
 * ran (or its init failed), while its memory is still there; a provider
 * still registered then is dropped rather than called once that memory
 * is freed.
 */
static int source_module_cb(struct notifier_block *nb, unsigned long action, void *data)
{
	struct module *mod = data;
	struct joules_meter *m;

	if (action != MODULE_STATE_GOING)
		return NOTIFY_DONE;
	mutex_lock(&meter_lock);
	m = meter && meter->owner == mod ? meter : NULL;
	mutex_unlock(&meter_lock);
	if (m) {
		pr_warn("energy source %s of module %s left registered; dropped\n",
			m->name, mod->name);
		joules_meter_unregister(m);
	}
	joules_freq_module_going(mod);
	return NOTIFY_OK;
}

static struct notifier_block source_module_nb = {
	.notifier_call = source_module_cb,
};

int joules_source_init(void)
{
	return register_module_notifier(&source_module_nb);
}

void joules_source_exit(void)
{
	unregister_module_notifier(&source_module_nb);
	/* A meter module holds a reference on us (its symbols): none is left. */
	WARN_ON(meter);
}
