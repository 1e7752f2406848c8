// SPDX-License-Identifier: GPL-2.0
/*
 * The node's wall meter (a PDU outlet, the BMC), read by joules-meterd in
 * user space and fed here over netlink (METER_FEED, CAP_SYS_ADMIN). The
 * readings are stamped on receipt (with the feeder's age of each for its
 * rates, METER_AGE_NS); the arithmetic (what a tick charges,
 * the difference found at a reading and its spreading) is the core's
 * (jl_wall_*, host-tested). A meter silent for longer than timeout_ms is
 * out of force: the node's energy is RAPL's or the model's again, said
 * once in the kernel log and in wallmeter/status, and its next reading is
 * a new baseline.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mutex.h>
#include <linux/netlink.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/timekeeping.h>

#include "baseline.h"
#include "core.h"
#include "perm.h"
#include "wallmeter.h"

static DEFINE_MUTEX(wall_lock);
static struct jl_wall wall;		/* under wall_lock */
static char wall_name[32];
/* Boot time: a suspend longer than the timeout is a silence too. */
static u64 last_feed_boot_ns;
static bool fed, silent;
static u64 nr_readings, nr_refused;
/*
 * Settings (sysfs, root): the silence after which the meter is out of
 * force (three of the slowest meter's 10 s periods), plausible power.
 */
static unsigned int timeout_ms = 30000;
static unsigned int max_power_w = 20000;

/* wall_lock held: has the meter been silent for longer than timeout_ms? */
static bool wall_silent_now(void)
{
	return fed && (silent || ktime_get_boottime_ns() - last_feed_boot_ns >
				 (u64)timeout_ms * NSEC_PER_MSEC);
}

bool joules_wall_name_ok(const char *name)
{
	const char *c;

	for (c = name; *c; c++)
		if (*c <= ' ' || *c > '~')
			return false;
	return c != name;
}

int joules_wall_feed(const char *name, bool power, u64 value, u64 age_ns,
		     bool reset, struct netlink_ext_ack *extack)
{
	unsigned int flags = (power ? JL_WALL_POWER : 0) | (reset ? JL_WALL_RESET : 0);
	bool was_silent;
	int rc;

	mutex_lock(&wall_lock);
	/*
	 * After a silence (whether or not the worker has noticed it yet), or
	 * from another meter: a new baseline. Stamped under the lock, so that
	 * concurrent feeders' stamps are in their order.
	 */
	was_silent = wall_silent_now();
	if (was_silent || strncmp(name, wall_name, sizeof(wall_name)))
		flags |= JL_WALL_RESET;
	rc = jl_wall_reading_aged(&wall, ktime_get_ns(), age_ns, value, flags,
				  (u64)max_power_w * 1000000);
	if (rc) {
		nr_refused++;
		mutex_unlock(&wall_lock);
		if (rc == -JL_EINVAL)
			NL_SET_ERR_MSG(extack, "reading stamped before the last one");
		else if (age_ns > JL_WALL_MAX_AGE_NS)
			NL_SET_ERR_MSG(extack, "METER_AGE_NS above 60 s");
		else if (power)
			NL_SET_ERR_MSG(extack, "power above wallmeter/max_power_w");
		else
			NL_SET_ERR_MSG(extack,
				       "energy went back without METER_RESET, or rose faster than wallmeter/max_power_w");
		return rc == -JL_EINVAL ? -EINVAL : -ERANGE;
	}
	if (strncmp(name, wall_name, sizeof(wall_name))) {
		pr_info_ratelimited("wall meter %s feeds the node's energy\n", name);
		strscpy(wall_name, name, sizeof(wall_name));
		joules_base_wall_forget();
	} else if (was_silent) {
		pr_info_ratelimited("wall meter %s resumed\n", wall_name);
	}
	silent = false;
	fed = true;
	last_feed_boot_ns = ktime_get_boottime_ns();
	nr_readings++;
	mutex_unlock(&wall_lock);
	return 0;
}

bool joules_wall_in_force(u64 *power_uw)
{
	bool in;

	mutex_lock(&wall_lock);
	if (fed && !silent && wall_silent_now()) {
		silent = true;
		pr_warn("wall meter %s silent for %u ms: node energy from RAPL or the model until it resumes\n",
			wall_name, timeout_ms);
	}
	in = fed && !silent;
	*power_uw = wall.power_uw;
	mutex_unlock(&wall_lock);
	return in;
}

u64 joules_wall_tick(u64 t0_ns, u64 t1_ns, u64 shape_uj, bool in_force,
		     u64 busy_ns)
{
	u64 uj, windows;

	mutex_lock(&wall_lock);
	windows = wall.windows;
	uj = jl_wall_tick(&wall, t0_ns, t1_ns, shape_uj, in_force, busy_ns);
	/* A reading window closed: the meter's static power, if it was idle. */
	if (wall.windows != windows)
		joules_base_wall_window(wall.read_ns, wall.window_ns,
					wall.window_uj, wall.window_idle);
	mutex_unlock(&wall_lock);
	return uj;
}

void joules_wall_get(struct joules_wall_totals *wt)
{
	mutex_lock(&wall_lock);
	strscpy(wt->name, wall_name, sizeof(wt->name));
	wt->meter_uj = wall.meter_uj;
	wt->pending_uj = wall.pending_uj;
	mutex_unlock(&wall_lock);
}

/* ---- /sys/kernel/joules/wallmeter/ ---------------------------------- */

static ssize_t status_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	ssize_t n;

	mutex_lock(&wall_lock);
	if (!fed)
		n = sysfs_emit(buf, "absent: never fed\n");
	else if (wall_silent_now())
		n = sysfs_emit(buf, "silent: %s, no reading for %llu ms\n", wall_name,
			       (ktime_get_boottime_ns() - last_feed_boot_ns) / NSEC_PER_MSEC);
	else
		n = sysfs_emit(buf, "%s\n", wall_name);
	mutex_unlock(&wall_lock);
	return n;
}

static ssize_t readings_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%llu\n", READ_ONCE(nr_readings));
}

static ssize_t refused_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%llu\n", READ_ONCE(nr_refused));
}

/*
 * The meter's figures are measured node energy: a side channel (PLATYPUS),
 * so CAP_PERFMON or CAP_SYS_ADMIN, as rapl/energy_uj.
 */
enum wall_figure { W_ENERGY, W_PENDING, W_RESIDUAL, W_WINDOW_MS, W_POWER };

static ssize_t figure_show(char *buf, enum wall_figure f)
{
	struct joules_reader r;
	ssize_t n;

	joules_reader_current(&r);
	if (!joules_may_read_node(&r))
		return -EPERM;
	mutex_lock(&wall_lock);
	if (!fed) {
		n = sysfs_emit(buf, "absent\n");
	} else {
		switch (f) {
		case W_ENERGY:
			n = sysfs_emit(buf, "%llu\n", wall.meter_uj);
			break;
		case W_PENDING:
			n = sysfs_emit(buf, "%lld\n", wall.pending_uj);
			break;
		case W_RESIDUAL:
			n = sysfs_emit(buf, "%lld\n", wall.residual_uj);
			break;
		case W_WINDOW_MS:
			n = sysfs_emit(buf, "%llu\n", wall.window_ns / NSEC_PER_MSEC);
			break;
		default:
			n = sysfs_emit(buf, "%llu\n", wall.power_uw);
			break;
		}
	}
	mutex_unlock(&wall_lock);
	return n;
}

#define FIGURE(name, f)							\
static ssize_t name##_show(struct kobject *k, struct kobj_attribute *a,	\
			   char *buf)					\
{									\
	return figure_show(buf, f);					\
}									\
static struct kobj_attribute name##_attr = __ATTR_RO(name)

FIGURE(energy_uj, W_ENERGY);
FIGURE(pending_uj, W_PENDING);
FIGURE(residual_uj, W_RESIDUAL);
FIGURE(window_ms, W_WINDOW_MS);
FIGURE(power_uw, W_POWER);

static int store_uint(const char *buf, size_t len, unsigned int min,
		      unsigned int max, unsigned int *v)
{
	u64 x;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	/* As every joules setting: digits, at most a newline (no sign, no blanks). */
	if (jl_parse_u64(buf, len, max, &x) || x < min)
		return -EINVAL;
	mutex_lock(&wall_lock);
	WRITE_ONCE(*v, x);
	mutex_unlock(&wall_lock);
	return 0;
}

static ssize_t timeout_ms_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(timeout_ms));
}

/* 100 ms .. 10 min: set it to a few of the meter's periods (0.1-10 s). */
static ssize_t timeout_ms_store(struct kobject *k, struct kobj_attribute *a,
				const char *buf, size_t len)
{
	int err = store_uint(buf, len, 100, 600000, &timeout_ms);

	return err ? err : len;
}

static ssize_t max_power_w_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(max_power_w));
}

static ssize_t max_power_w_store(struct kobject *k, struct kobj_attribute *a,
				 const char *buf, size_t len)
{
	int err = store_uint(buf, len, 1, 1000000, &max_power_w);

	return err ? err : len;
}

static struct kobj_attribute status_attr = __ATTR_RO(status);
static struct kobj_attribute readings_attr = __ATTR_RO(readings);
static struct kobj_attribute refused_attr = __ATTR_RO(refused);
static struct kobj_attribute timeout_ms_attr = __ATTR_RW(timeout_ms);
static struct kobj_attribute max_power_w_attr = __ATTR_RW(max_power_w);

static struct attribute *wall_attrs[] = {
	&status_attr.attr,
	&readings_attr.attr,
	&refused_attr.attr,
	&energy_uj_attr.attr,
	&pending_uj_attr.attr,
	&residual_uj_attr.attr,
	&window_ms_attr.attr,
	&power_uw_attr.attr,
	&timeout_ms_attr.attr,
	&max_power_w_attr.attr,
	NULL,
};

static const struct attribute_group wall_group = {
	.name = "wallmeter",
	.attrs = wall_attrs,
};

/* Removed with its parent (sysfs.c's kobject_put()), as rapl/ is. */
int joules_wall_sysfs(struct kobject *parent)
{
	return sysfs_create_group(parent, &wall_group);
}
