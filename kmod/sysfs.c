// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/joules/: version, settings, counters of the module itself,
 * and model/ with the coefficients. Writes are root-only (mode 0644 and a
 * CAP_SYS_ADMIN check, so a user-namespace root cannot write either); bad
 * input is -EINVAL and leaves the old value in force.
 */
#include <linux/capability.h>
#include <linux/kobject.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "baseline.h"
#include "cgroup.h"
#include "freq.h"
#include "model.h"
#include "perm.h"
#include "pmu.h"
#include "procpid.h"
#include "source.h"
#include "sysfs.h"
#include "tasks.h"
#include "track.h"
#include "wallmeter.h"
#include "worker.h"

struct kobject *joules_kobj;
static struct kobject *model_kobj;
static DEFINE_MUTEX(settings_lock);

static int may_write(void)
{
	return capable(CAP_SYS_ADMIN) ? 0 : -EPERM;
}

/* Map core.c's negative codes onto errno: every parse failure is EINVAL. */
static int parse_u64(const char *buf, size_t len, u64 max, u64 *v)
{
	return jl_parse_u64(buf, len, max, v) ? -EINVAL : 0;
}

#define RO_U64(name, expr)                                                   \
	static ssize_t name##_show(struct kobject *k, struct kobj_attribute *a, \
				   char *buf)                                \
	{                                                                    \
		return sysfs_emit(buf, "%llu\n", (unsigned long long)(expr)); \
	}                                                                    \
	static struct kobj_attribute name##_attr = __ATTR_RO(name)

static ssize_t version_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%s\n", JL_VERSION);
}
static struct kobj_attribute version_attr = __ATTR_RO(version);

RO_U64(abi_version, JL_ABI_VERSION);
RO_U64(tasks_tracked, joules_tasks_tracked());
RO_U64(objects, atomic64_read(&joules_objects));
RO_U64(lookup_misses, atomic64_read(&joules_lookup_misses));
RO_U64(alloc_failures, atomic64_read(&joules_alloc_failures));
RO_U64(fork_deferred, atomic64_read(&joules_fork_deferred));
RO_U64(exits_untracked, atomic64_read(&joules_exits_untracked));
RO_U64(walk_retries, atomic64_read(&joules_walk_retries));
RO_U64(cgroups, joules_cg_objects());
RO_U64(cgroup_flush_max_ns, joules_cg_flush_max_ns());
RO_U64(packages, joules_nr_pkgs);

static ssize_t hw_counters_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	u32 p = joules_pmu_present();
	unsigned int f;
	ssize_t n = 0;

	if (!p)
		return sysfs_emit(buf, "absent\n");
	for (f = 0; f < JL_NR_FEATURES; f++)
		if (p & (1U << f))
			n += sysfs_emit_at(buf, n, "%s%s", n ? " " : "", jl_feature_names[f]);
	return n + sysfs_emit_at(buf, n, "\n");
}
static struct kobj_attribute hw_counters_attr = __ATTR_RO(hw_counters);

static ssize_t hw_counters_missing_show(struct kobject *k, struct kobj_attribute *a,
					char *buf)
{
	return joules_pmu_missing(buf, PAGE_SIZE);
}
static struct kobj_attribute hw_counters_missing_attr = __ATTR_RO(hw_counters_missing);

static ssize_t proc_pid_energy_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return joules_procpid_status(buf);
}
static struct kobj_attribute proc_pid_energy_attr = __ATTR_RO(proc_pid_energy);

/* A u32 setting with bounds; changed(old) runs after a successful write. */
#define RW_UINT_Z(name, var, lo, hi, changed, zero_ok)                      \
	static ssize_t name##_show(struct kobject *k, struct kobj_attribute *a, \
				   char *buf)                                \
	{                                                                    \
		return sysfs_emit(buf, "%u\n", READ_ONCE(var));              \
	}                                                                    \
	static ssize_t name##_store(struct kobject *k, struct kobj_attribute *a, \
				    const char *buf, size_t len)             \
	{                                                                    \
		unsigned int old;                                            \
		u64 v;                                                       \
		int err = may_write();                                       \
		if (!err)                                                    \
			err = parse_u64(buf, len, hi, &v);                   \
		if (!err && v < (lo) && v != (zero_ok))                      \
			err = -EINVAL;                                       \
		if (err)                                                     \
			return err;                                          \
		old = READ_ONCE(var);                                        \
		WRITE_ONCE(var, v);                                          \
		changed(old);                                                \
		return len;                                                  \
	}                                                                    \
	static struct kobj_attribute name##_attr = __ATTR_RW(name)
/* lo..hi (zero_ok: one value below lo also taken, as 0 = off). */
#define RW_UINT(name, var, lo, hi, changed) RW_UINT_Z(name, var, lo, hi, changed, lo)

/* The worker reads these once per tick: nothing to do on a write. */
static inline void read_per_tick(unsigned int old)
{
}

/* 10 ms .. 60 s: shorter intervals cost IPIs, longer ones lose detail. */
RW_UINT(interval_ms, joules_interval_ms, 10, 60000, joules_worker_interval_changed);
RW_UINT(gamma_milli, joules_gamma_milli, 1, 1000, read_per_tick);
RW_UINT(delta_milli, joules_delta_milli, 1, 1000, read_per_tick);
/*
 * 100 ms to an hour, or 0: every reader sees energy live (perm.c). Below
 * 100 ms an epoch would be a tick or two, which is what the lagged view is
 * there to hide.
 */
RW_UINT_Z(unpriv_interval_ms, joules_unpriv_interval_ms, 100, 3600000, read_per_tick, 0);

static ssize_t idle_split_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(joules_idle_split) ? 1 : 0);
}

static ssize_t idle_split_store(struct kobject *k, struct kobj_attribute *a,
				const char *buf, size_t len)
{
	u64 v;
	int err = may_write();

	if (!err)
		err = parse_u64(buf, len, 1, &v);
	if (err)
		return err;
	WRITE_ONCE(joules_idle_split, v == 1);
	return len;
}
static struct kobj_attribute idle_split_attr = __ATTR_RW(idle_split);

static const char *const mode_names[] = {
	[JOULES_MODE_AUTO] = "auto",
	[JOULES_MODE_RAPL] = "rapl",
	[JOULES_MODE_MODEL] = "model",
};

static ssize_t source_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	enum joules_source_mode cur = READ_ONCE(joules_source_mode);
	ssize_t n = 0;
	unsigned int i;

	/* Like the kernel's own choice files: the active one in brackets. */
	for (i = 0; i < ARRAY_SIZE(mode_names); i++)
		n += sysfs_emit_at(buf, n, i == cur ? "%s[%s]" : "%s%s",
				   i ? " " : "", mode_names[i]);
	return n + sysfs_emit_at(buf, n, "\n");
}

static ssize_t source_store(struct kobject *k, struct kobj_attribute *a,
			    const char *buf, size_t len)
{
	int err = may_write();
	unsigned int i;

	if (err)
		return err;
	for (i = 0; i < ARRAY_SIZE(mode_names); i++) {
		size_t l = strlen(mode_names[i]);

		if ((len == l || (len == l + 1 && buf[l] == '\n')) &&
		    !memcmp(buf, mode_names[i], l)) {
			WRITE_ONCE(joules_source_mode, i);
			return len;
		}
	}
	return -EINVAL;
}
static struct kobj_attribute source_attr = __ATTR_RW(source);

static struct attribute *joules_attrs[] = {
	&version_attr.attr,
	&abi_version_attr.attr,
	&interval_ms_attr.attr,
	&source_attr.attr,
	&idle_split_attr.attr,
	&gamma_milli_attr.attr,
	&delta_milli_attr.attr,
	&unpriv_interval_ms_attr.attr,
	&tasks_tracked_attr.attr,
	&objects_attr.attr,
	&lookup_misses_attr.attr,
	&fork_deferred_attr.attr,
	&exits_untracked_attr.attr,
	&walk_retries_attr.attr,
	&cgroups_attr.attr,
	&cgroup_flush_max_ns_attr.attr,
	&alloc_failures_attr.attr,
	&packages_attr.attr,
	&hw_counters_attr.attr,
	&hw_counters_missing_attr.attr,
	&proc_pid_energy_attr.attr,
	NULL,
};

static const struct attribute_group joules_group = {
	.attrs = joules_attrs,
};

/* ---- model/ ---- */

static ssize_t coefficients_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	struct jl_coef c;
	int n;

	rcu_read_lock();
	c = *joules_model_coef(joules_model_get());
	rcu_read_unlock();
	n = jl_coef_format(&c, buf, PAGE_SIZE);
	return n < 0 ? -EIO : n;
}

static ssize_t coefficients_store(struct kobject *k, struct kobj_attribute *a,
				  const char *buf, size_t len)
{
	struct jl_coef c;
	int err = may_write();

	if (err)
		return err;
	if (jl_coef_parse(buf, len, &c))
		return -EINVAL;
	mutex_lock(&settings_lock);
	err = joules_model_set(&c);
	mutex_unlock(&settings_lock);
	return err ? err : len;
}
static struct kobj_attribute coefficients_attr = __ATTR_RW(coefficients);

static ssize_t bands_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	struct jl_bands b;
	int n;

	rcu_read_lock();
	b = joules_model_get()->bands;
	rcu_read_unlock();
	n = jl_bands_format(&b, buf, PAGE_SIZE);
	return n < 0 ? -EIO : n;
}

/*
 * Every band's set and the edges in one write, one generation. Several
 * bands need a frequency to choose between them: without any source the
 * write is refused (EOPNOTSUPP) rather than silently using one band.
 */
static ssize_t bands_store(struct kobject *k, struct kobj_attribute *a,
			   const char *buf, size_t len)
{
	struct jl_bands *b;
	char src[32];
	int err = may_write();

	if (err)
		return err;
	b = kmalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	/* Bad input is EINVAL, out of range too, as for `coefficients`. */
	err = jl_bands_parse(buf, len, b) ? -EINVAL : 0;
	if (!err && b->nr > 1 && !joules_freq_source(src, sizeof(src)))
		err = -EOPNOTSUPP;
	if (!err) {
		mutex_lock(&settings_lock);
		err = joules_model_set_bands(b);
		mutex_unlock(&settings_lock);
	}
	kfree(b);
	return err ? err : len;
}
static struct kobj_attribute bands_attr = __ATTR_RW(bands);

static ssize_t band_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(joules_band_now));
}
static struct kobj_attribute band_attr = __ATTR_RO(band);

static ssize_t frequency_source_show(struct kobject *k, struct kobj_attribute *a,
				     char *buf)
{
	char src[32];

	joules_freq_source(src, sizeof(src));
	return sysfs_emit(buf, "%s\n", src);
}
static struct kobj_attribute frequency_source_attr = __ATTR_RO(frequency_source);

/* The node's effective frequency in the last interval. */
static ssize_t frequency_mhz_show(struct kobject *k, struct kobj_attribute *a,
				  char *buf)
{
	u32 mhz = READ_ONCE(joules_freq_mhz_now);

	return mhz ? sysfs_emit(buf, "%u\n", mhz) : sysfs_emit(buf, "unknown\n");
}
static struct kobj_attribute frequency_mhz_attr = __ATTR_RO(frequency_mhz);

static ssize_t generation_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	u64 g;

	rcu_read_lock();
	g = joules_model_get()->generation;
	rcu_read_unlock();
	return sysfs_emit(buf, "%llu\n", g);
}
static struct kobj_attribute generation_attr = __ATTR_RO(generation);

static int coef_index(struct kobj_attribute *a)
{
	unsigned int i;

	for (i = 0; i < JL_NR_COEF; i++)
		if (!strcmp(a->attr.name, jl_coef_names[i]))
			return i;
	return -1;
}

static ssize_t coef_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	int i = coef_index(a);
	u64 v;

	if (i < 0)
		return -EINVAL;
	rcu_read_lock();
	v = jl_coef_get(joules_model_coef(joules_model_get()), i);
	rcu_read_unlock();
	return sysfs_emit(buf, "%llu\n", v);
}

/*
 * One coefficient: a new set with that value (and a new generation). With
 * several bands it is ambiguous which set is meant: EBUSY, write `bands`.
 */
static ssize_t coef_store(struct kobject *k, struct kobj_attribute *a,
			  const char *buf, size_t len)
{
	int i = coef_index(a), err = may_write();
	u64 v;

	if (err)
		return err;
	if (i < 0 || parse_u64(buf, len, JL_COEF_MAX, &v))
		return -EINVAL;
	mutex_lock(&settings_lock);
	err = joules_model_set_coef(i, v);
	mutex_unlock(&settings_lock);
	return err ? err : len;
}

static struct attribute *model_fixed_attrs[] = {
	&coefficients_attr.attr,
	&generation_attr.attr,
	&bands_attr.attr,
	&band_attr.attr,
	&frequency_source_attr.attr,
	&frequency_mhz_attr.attr,
};
static struct kobj_attribute coef_attrs[JL_NR_COEF];
static struct attribute *model_attrs[JL_NR_COEF + ARRAY_SIZE(model_fixed_attrs) + 1];
static const struct attribute_group model_group = {
	.attrs = model_attrs,
};

int joules_sysfs_init(void)
{
	unsigned int i;
	int err;

	joules_kobj = kobject_create_and_add(JOULES_NAME, kernel_kobj);
	if (!joules_kobj)
		return -ENOMEM;
	err = sysfs_create_group(joules_kobj, &joules_group);
	if (err)
		goto fail;
	model_kobj = kobject_create_and_add("model", joules_kobj);
	if (!model_kobj) {
		err = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < JL_NR_COEF; i++) {
		sysfs_attr_init(&coef_attrs[i].attr);
		coef_attrs[i].attr.name = jl_coef_names[i];
		coef_attrs[i].attr.mode = 0644;
		coef_attrs[i].show = coef_show;
		coef_attrs[i].store = coef_store;
		model_attrs[i] = &coef_attrs[i].attr;
	}
	for (i = 0; i < ARRAY_SIZE(model_fixed_attrs); i++)
		model_attrs[JL_NR_COEF + i] = model_fixed_attrs[i];
	model_attrs[JL_NR_COEF + i] = NULL;
	err = sysfs_create_group(model_kobj, &model_group);
	if (err)
		goto fail;
	err = joules_source_sysfs(joules_kobj);
	if (err)
		goto fail;
	err = joules_wall_sysfs(joules_kobj);
	if (err)
		goto fail;
	err = joules_base_sysfs(joules_kobj);
	if (err)
		goto fail;
	return 0;
fail:
	kobject_put(model_kobj);
	model_kobj = NULL;
	kobject_put(joules_kobj);
	joules_kobj = NULL;
	return err;
}

void joules_sysfs_exit(void)
{
	kobject_put(model_kobj);
	model_kobj = NULL;
	kobject_put(joules_kobj);
	joules_kobj = NULL;
}
