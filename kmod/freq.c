// SPDX-License-Identifier: GPL-2.0
/*
 * The node's effective clock frequency, which picks the model's band each
 * interval. In order of preference:
 *  - a source another module registered (the selftests' test meter, since
 *    QEMU has neither of the others);
 *  - the PMU: cycles over on-CPU time of every task charged this interval,
 *    the frequency the work actually ran at (turbo and throttling
 *    included, as APERF/MPERF would say);
 *  - cpufreq: the mean current frequency of the online CPUs.
 * With none of them there is no frequency: the model has one band and
 * sysfs `model/frequency_source` says "none".
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/cpufreq.h>
#include <linux/module.h>
#include <linux/mutex.h>

#include "freq.h"
#include "pmu.h"

static DEFINE_MUTEX(freq_lock);
static struct joules_freq_source *registered;

int joules_freq_register(struct joules_freq_source *s)
{
	int err = 0;

	/* Without its owner it could not be dropped as its module goes. */
	if (WARN_ON_ONCE(!s->owner) || !s->name || !s->read_mhz)
		return -EINVAL;
	mutex_lock(&freq_lock);
	if (registered)
		err = -EBUSY;
	else
		registered = s;
	mutex_unlock(&freq_lock);
	if (!err)
		pr_info("frequency source %s registered\n", s->name);
	return err;
}
EXPORT_SYMBOL_GPL(joules_freq_register);

void joules_freq_unregister(struct joules_freq_source *s)
{
	mutex_lock(&freq_lock);
	if (registered == s)
		registered = NULL;
	mutex_unlock(&freq_lock);
}
EXPORT_SYMBOL_GPL(joules_freq_unregister);

/* Its module goes (source.c's notifier): a source its exit left registered is dropped. */
void joules_freq_module_going(struct module *mod)
{
	mutex_lock(&freq_lock);
	if (registered && registered->owner == mod) {
		pr_warn("frequency source %s of module %s left registered; dropped\n",
			registered->name, mod->name);
		registered = NULL;
	}
	mutex_unlock(&freq_lock);
}

/* Mean current frequency of the online CPUs cpufreq knows, kHz; 0: none. */
static u64 cpufreq_mean_khz(void)
{
	u64 sum = 0;
	unsigned int n = 0, cpu;

	cpus_read_lock();
	for_each_online_cpu(cpu) {
		unsigned int khz = cpufreq_quick_get(cpu);

		if (khz) {
			sum += khz;
			n++;
		}
	}
	cpus_read_unlock();
	return n ? div_u64(sum, n) : 0;
}

static bool have_cpufreq(void)
{
	return cpufreq_get_current_driver() != NULL;
}

/*
 * The source that would be used now, as a line for sysfs (its name, or
 * "none"); returns whether there is one (a banded model needs it).
 */
bool joules_freq_source(char *buf, size_t size)
{
	bool have = true;

	mutex_lock(&freq_lock);
	if (registered)
		strscpy(buf, registered->name, size);
	else if (joules_pmu_present() & (1U << JL_F_CYCLES))
		strscpy(buf, "pmu", size);
	else if (have_cpufreq())
		strscpy(buf, "cpufreq", size);
	else
		have = false;
	mutex_unlock(&freq_lock);
	if (!have)
		strscpy(buf, "none", size);
	return have;
}

u64 joules_freq_now(const struct jl_feat *node)
{
	u32 mhz = 0;
	int err = -ENODEV;

	mutex_lock(&freq_lock);
	/* Not into a module that has begun to unload (freq.h). */
	if (registered && module_is_live(registered->owner))
		err = registered->read_mhz(registered, &mhz);
	mutex_unlock(&freq_lock);
	if (!err)
		return mhz <= JL_MHZ_MAX ? mhz : 0;
	if (node->present & (1U << JL_F_CYCLES))
		return jl_freq_mhz(node->v[JL_F_CYCLES], node->v[JL_F_CPU_NS]);
	if (have_cpufreq())
		return div_u64(cpufreq_mean_khz(), 1000);
	return 0;
}
