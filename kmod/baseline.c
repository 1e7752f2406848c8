// SPDX-License-Identifier: GPL-2.0
/*
 * Static (idle) power: measured by default, EnergAt's way (core.c's
 * jl_base_*: energy over the intervals in which almost nothing ran), per
 * package and RAPL domain from the worker's idle intervals, and for the
 * wall meter from its idle reading windows (the meter's own energy between
 * two readings, never the shape the node spread between them); or set by
 * the operator in meter_idle_uw. The worker charges it to idle first each
 * interval, so that static power is the node's own line and not smeared
 * onto whatever ran. Before the first idle interval there is no estimate
 * and nothing is held back: /sys/kernel/joules/static_power says so.
 */
#include <linux/capability.h>
#include <linux/kobject.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/timekeeping.h>

#include "baseline.h"
#include "core.h"
#include "perm.h"

struct pkg_base {
	struct jl_base dom[JL_NR_DOMAINS];
	u32 domains;		/* seen in a take */
};

/* The worker writes, sysfs reads: a spinlock held for a few words. */
static DEFINE_SPINLOCK(base_lock);
static struct pkg_base *pkgs;
static unsigned int nr_pkgs;
static struct jl_base wall;
static bool wall_seen;
/* meter_idle_uw: set, or measured; under base_lock. */
static bool set_by_admin;
static u64 set_uw[JL_NR_DOMAINS];
static u64 set_wall_uw;
/* The worker's copy, taken once per tick: every charge of a tick agrees. */
static struct {
	bool set;
	u64 uw[JL_NR_DOMAINS];
	u64 wall_uw;
} now_in_force;

static const char *const dom_names[JL_NR_DOMAINS] = { "pkg", "core", "dram", "psys" };

int joules_base_init(unsigned int nr)
{
	struct pkg_base *p = kcalloc(nr, sizeof(*p), GFP_KERNEL);

	if (!p)
		return -ENOMEM;
	spin_lock(&base_lock);
	pkgs = p;
	nr_pkgs = nr;
	memset(&wall, 0, sizeof(wall));
	wall_seen = false;
	spin_unlock(&base_lock);
	return 0;
}

void joules_base_exit(void)
{
	struct pkg_base *p;

	spin_lock(&base_lock);
	p = pkgs;
	pkgs = NULL;
	nr_pkgs = 0;
	spin_unlock(&base_lock);
	kfree(p);
}

void joules_base_tick(void)
{
	spin_lock(&base_lock);
	now_in_force.set = set_by_admin;
	memcpy(now_in_force.uw, set_uw, sizeof(set_uw));
	now_in_force.wall_uw = set_wall_uw;
	spin_unlock(&base_lock);
}

void joules_base_pkg(unsigned int pkg, const struct joules_meter_take *mt,
		     u64 t1, u64 dt, bool idle)
{
	unsigned int i;

	spin_lock(&base_lock);
	if (pkgs && pkg < nr_pkgs) {
		pkgs[pkg].domains |= mt->domains;
		for (i = 0; idle && i < JL_NR_DOMAINS; i++)
			if (mt->domains & (1U << i))
				jl_base_add(&pkgs[pkg].dom[i], t1, dt, mt->uj[i]);
	}
	spin_unlock(&base_lock);
}

/* A package without a meter (gone, or not yet primed): no estimate. */
void joules_base_pkg_forget(unsigned int pkg)
{
	spin_lock(&base_lock);
	if (pkgs && pkg < nr_pkgs)
		memset(&pkgs[pkg], 0, sizeof(pkgs[pkg]));
	spin_unlock(&base_lock);
}

/* The worker only (the writer), so without the lock. */
u64 joules_base_pkg_uw(unsigned int pkg, unsigned int dom)
{
	u64 uw = 0;

	if (now_in_force.set)
		return now_in_force.uw[dom];
	if (pkgs && pkg < nr_pkgs)
		jl_base_uw(&pkgs[pkg].dom[dom], &uw);
	return uw;
}

void joules_base_wall_window(u64 t1, u64 dt, u64 uj, bool idle)
{
	spin_lock(&base_lock);
	wall_seen = true;
	if (idle)
		jl_base_add(&wall, t1, dt, uj);
	spin_unlock(&base_lock);
}

/* Another wall meter: its static power is its own. */
void joules_base_wall_forget(void)
{
	spin_lock(&base_lock);
	memset(&wall, 0, sizeof(wall));
	wall_seen = false;
	spin_unlock(&base_lock);
}

/* A set 0 is no static term: idle keeps what the weights leave it. */
bool joules_base_wall_uw(u64 *uw)
{
	bool known;

	if (now_in_force.set) {
		*uw = now_in_force.wall_uw;
		return *uw > 0;
	}
	spin_lock(&base_lock);
	known = jl_base_uw(&wall, uw);
	spin_unlock(&base_lock);
	return known && *uw > 0;
}

/*
 * One line: scope, domain, the measured estimate, its age, the idle time
 * behind it, and what is charged: it (measured), meter_idle_uw's value
 * (set), or nothing yet (none).
 */
static int emit(char *buf, int n, const char *scope, const char *dom,
		const struct jl_base *b, u64 now)
{
	u64 uw;

	if (!jl_base_uw(b, &uw))
		return n + sysfs_emit_at(buf, n,
			"%s %s power_uw - age_ms - idle_ms 0 in_force %s\n",
			scope, dom, set_by_admin ? "set" : "none");
	return n + sysfs_emit_at(buf, n,
		"%s %s power_uw %llu age_ms %llu idle_ms %llu in_force %s\n",
		scope, dom, uw, (now - min(now, b->last_ns)) / NSEC_PER_MSEC,
		b->ns / NSEC_PER_MSEC, set_by_admin ? "set" : "measured");
}

/*
 * Measured node power, however averaged, is a side channel (PLATYPUS):
 * readable as rapl/energy_uj is.
 */
static ssize_t static_power_show(struct kobject *k, struct kobj_attribute *a,
				 char *buf)
{
	struct joules_reader r;
	unsigned int p, i;
	u64 now;
	char scope[16];
	int n = 0;

	joules_reader_current(&r);
	if (!joules_may_read_node(&r))
		return -EPERM;
	spin_lock(&base_lock);
	now = ktime_get_ns();	/* not before the last stamp */
	for (p = 0; pkgs && p < nr_pkgs; p++) {
		snprintf(scope, sizeof(scope), "pkg%u", p);
		for (i = 0; i < JL_NR_DOMAINS; i++)
			if (pkgs[p].domains & (1U << i))
				n = emit(buf, n, scope, dom_names[i], &pkgs[p].dom[i], now);
	}
	if (wall_seen)
		n = emit(buf, n, "wall", "meter", &wall, now);
	spin_unlock(&base_lock);
	return n;
}

static ssize_t meter_idle_uw_show(struct kobject *k, struct kobj_attribute *a,
				  char *buf)
{
	u64 v[JL_NR_DOMAINS + 1];
	bool set;

	spin_lock(&base_lock);
	set = set_by_admin;
	memcpy(v, set_uw, sizeof(set_uw));
	v[JL_NR_DOMAINS] = set_wall_uw;
	spin_unlock(&base_lock);
	if (!set)
		return sysfs_emit(buf, "auto\n");
	return sysfs_emit(buf, "%llu %llu %llu %llu %llu\n", v[0], v[1], v[2],
			  v[3], v[4]);
}

/*
 * "auto", or blank-separated values "pkg core dram psys [wall]" (the wall
 * meter's 0 when left out); one optional trailing newline.
 */
static ssize_t meter_idle_uw_store(struct kobject *k, struct kobj_attribute *a,
				   const char *buf, size_t len)
{
	u64 v[JL_NR_DOMAINS + 1] = { 0 };
	size_t i = 0, n = len, start;
	unsigned int f = 0;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (n && buf[n - 1] == '\n')
		n--;
	if (memchr(buf, '\n', n))
		return -EINVAL;
	if (n == 4 && !memcmp(buf, "auto", 4)) {
		spin_lock(&base_lock);
		set_by_admin = false;
		spin_unlock(&base_lock);
		return len;
	}
	for (;;) {
		while (i < n && (buf[i] == ' ' || buf[i] == '\t'))
			i++;
		if (i == n)
			break;
		start = i;
		while (i < n && buf[i] != ' ' && buf[i] != '\t')
			i++;
		if (f == JL_NR_DOMAINS + 1 ||
		    jl_parse_u64(buf + start, i - start, JL_COEF_MAX, &v[f]))
			return -EINVAL;
		f++;
	}
	if (f < JL_NR_DOMAINS)
		return -EINVAL;
	/* The worker copies them once per interval (joules_base_tick()). */
	spin_lock(&base_lock);
	memcpy(set_uw, v, sizeof(set_uw));
	set_wall_uw = v[JL_NR_DOMAINS];
	set_by_admin = true;
	spin_unlock(&base_lock);
	return len;
}

static struct kobj_attribute static_power_attr = __ATTR_RO(static_power);
static struct kobj_attribute meter_idle_uw_attr = __ATTR_RW(meter_idle_uw);

static struct attribute *base_attrs[] = {
	&static_power_attr.attr,
	&meter_idle_uw_attr.attr,
	NULL,
};

static const struct attribute_group base_group = {
	.attrs = base_attrs,
};

/* Removed with its parent (sysfs.c's kobject_put()). */
int joules_base_sysfs(struct kobject *parent)
{
	return sysfs_create_group(parent, &base_group);
}
