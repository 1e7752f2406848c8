// SPDX-License-Identifier: GPL-2.0
/*
 * The RAPL MSR energy source: a joules_meter over the energy-status MSRs of
 * Intel (family 6 models in rapl.h's table) and AMD/Hygon (family 17h and
 * later, with X86_FEATURE_RAPL) CPUs. source.c samples it and accumulates
 * wrap-safe deltas; this file only finds out whether the counters exist and
 * reads them.
 *
 * Detection needs all of: a known vendor/family/model, a unit register
 * that decodes to a sane energy unit (QEMU and some hypervisors return 0
 * for MSRs they do not know, so "the read did not fault" proves nothing),
 * and a package counter that is non-zero and advances. Anything less is
 * "no RAPL: <why>", said once in dmesg and in /sys/kernel/joules/rapl/status,
 * and joules falls back to the model.
 *
 * One reader per package: every read runs on a CPU of that package
 * (topology_logical_package_id), all of the package's MSRs in one IPI. AMD
 * has a core counter per physical core: its "core" domain is the sum over
 * the package's online cores, read with one IPI to the first thread of each
 * core. The sum of 32-bit wrapping counters, taken mod 2^32, is itself a
 * 32-bit wrapping counter, so source.c's wrap handling applies unchanged
 * (a core going offline makes the sum jump; the jump is dropped as a bogus
 * read). The platform (psys) domain exists once per system: it is read on
 * package 0 only.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/topology.h>
#include <asm/cpu_device_id.h>
#include <asm/msr.h>
#include <asm/processor.h>

#include "compat.h"
#include "rapl.h"
#include "source.h"

static bool rapl_msr = true;
module_param(rapl_msr, bool, 0444);
MODULE_PARM_DESC(rapl_msr,
		 "Use the RAPL energy MSRs where the CPU has them (default 1)");

/* clang-format off */
#define JL_INTEL_MODEL(m, d, n) JL_X86_MATCH_INTEL6(m, d),
static const struct x86_cpu_id rapl_cpus[] = {
	JL_RAPL_INTEL_MODELS(JL_INTEL_MODEL)
	X86_MATCH_VENDOR_FAM_FEATURE(AMD, 0x17, X86_FEATURE_RAPL, JL_RAPL_AMD),
	X86_MATCH_VENDOR_FAM_FEATURE(AMD, 0x19, X86_FEATURE_RAPL, JL_RAPL_AMD),
	X86_MATCH_VENDOR_FAM_FEATURE(AMD, 0x1a, X86_FEATURE_RAPL, JL_RAPL_AMD),
	X86_MATCH_VENDOR_FAM_FEATURE(HYGON, 0x18, X86_FEATURE_RAPL, JL_RAPL_AMD),
	{}
};
/* clang-format on */

static struct joules_meter rapl_meter;
static bool registered;
static bool is_amd;
/* MSR of each domain, read on every package; 0: none. */
static u32 dom_msr[JL_NR_DOMAINS];
/* Per package: the CPU that reads it; -1: pick one. */
static int *pkg_cpu;
/* Serialises reads: pkg_cpu[], core_mask. */
static DEFINE_MUTEX(msr_lock);
static cpumask_var_t core_mask;
static bool have_core_mask;
static DEFINE_PER_CPU(u64, core_raw);
static DEFINE_PER_CPU(int, core_err);
static char reason[160] = "no RAPL: not probed";

static int first_cpu_of(unsigned int pkg)
{
	unsigned int cpu;

	for_each_online_cpu(cpu)
		if (topology_logical_package_id(cpu) == pkg)
			return cpu;
	return -1;
}

/*
 * More dies than packages? Logical die ids are numbered across the system,
 * so a die id at or above the package count means several dies in some
 * package. (topology_max_die_per_package() was renamed in 6.9; this is not.)
 */
static bool several_dies(unsigned int nr_pkgs)
{
	unsigned int cpu;

	for_each_online_cpu(cpu)
		if (topology_logical_die_id(cpu) >= (int)nr_pkgs)
			return true;
	return false;
}

struct msr_batch {
	const u32 *msr; /* per domain; 0: skip */
	u64 *val;
	int err;
};

/* On the target CPU, irqs off: rdmsr_safe so a missing MSR is -EIO, not #GP. */
static void read_batch(void *info)
{
	struct msr_batch *b = info;
	unsigned int d;

	for (d = 0; d < JL_NR_DOMAINS; d++)
		if (b->msr[d] && jl_rdmsr_safe(b->msr[d], &b->val[d]))
			b->err = -EIO;
}

static int read_on(int cpu, const u32 *msr, u64 *val)
{
	struct msr_batch b = { .msr = msr, .val = val };
	int err;

	if (cpu < 0)
		return -ENODEV;
	err = smp_call_function_single(cpu, read_batch, &b, 1);
	return err ? err : b.err;
}

static int read_one(int cpu, u32 msr, unsigned int d, u64 *v)
{
	u32 m[JL_NR_DOMAINS] = { 0 };
	u64 val[JL_NR_DOMAINS] = { 0 };
	int err;

	m[d] = msr;
	err = read_on(cpu, m, val);
	*v = val[d];
	return err;
}

static void read_core(void *unused)
{
	u64 v;

	if (jl_rdmsr_safe(JL_MSR_AMD_CORE_ENERGY_STATUS, &v))
		return; /* core_err stays set */
	this_cpu_write(core_raw, v);
	this_cpu_write(core_err, 0);
}

/* AMD: sum of the per-core counters of package pkg; msr_lock held. */
static int amd_core_sum(unsigned int pkg, u64 *sum)
{
	unsigned int cpu;
	int err = 0;

	cpus_read_lock();
	cpumask_clear(core_mask);
	for_each_online_cpu(cpu) {
		if (topology_logical_package_id(cpu) != pkg ||
		    cpumask_first_and(topology_sibling_cpumask(cpu),
				      cpu_online_mask) != cpu)
			continue;
		cpumask_set_cpu(cpu, core_mask);
		per_cpu(core_err, cpu) = 1;
	}
	on_each_cpu_mask(core_mask, read_core, NULL, true);
	*sum = 0;
	for_each_online_cpu(cpu) {
		if (!cpumask_test_cpu(cpu, core_mask))
			continue;
		if (per_cpu(core_err, cpu))
			err = -EIO;
		else
			*sum += per_cpu(core_raw, cpu) & 0xffffffffULL;
	}
	cpus_read_unlock();
	if (cpumask_empty(core_mask))
		err = -ENODEV;
	return err;
}

/* joules_meter.read: raw counters of package pkg (may sleep). */
static int rapl_read(struct joules_meter *m, unsigned int pkg, u64 *raw)
{
	u32 msr[JL_NR_DOMAINS];
	int err;

	memcpy(msr, dom_msr, sizeof(msr));
	/* One platform domain per system, counted on package 0. */
	if (pkg)
		msr[JL_D_PSYS] = 0;
	mutex_lock(&msr_lock);
	/* The CPU picked last time may have gone offline. */
	if (pkg_cpu[pkg] < 0 || !cpu_online(pkg_cpu[pkg]))
		pkg_cpu[pkg] = first_cpu_of(pkg);
	err = read_on(pkg_cpu[pkg], msr, raw);
	if (!err && is_amd && (m->domains & JL_RAPL_CORE))
		err = amd_core_sum(pkg, &raw[JL_D_CORE]);
	if (err)
		pkg_cpu[pkg] = -1;
	mutex_unlock(&msr_lock);
	return err;
}

static void free_state(void)
{
	kfree(pkg_cpu);
	pkg_cpu = NULL;
	if (have_core_mask)
		free_cpumask_var(core_mask);
	have_core_mask = false;
}

/* "No RAPL" is -ENODEV with the reason set, so callers see one convention. */
static int absent(int code, const char *detail)
{
	snprintf(reason, sizeof(reason), "no RAPL: %s%s",
		 jl_rapl_absent_text(code), detail ? detail : "");
	return -ENODEV;
}

/* Domains for the load message, e.g. "pkg core dram(esu 16)". */
static void domain_list(const struct joules_meter *m, char *buf, size_t size)
{
	unsigned int d;
	size_t n = 0;

	buf[0] = 0;
	for (d = 0; d < JL_NR_DOMAINS; d++) {
		if (!(m->domains & (1U << d)))
			continue;
		n += scnprintf(buf + n, size - n, "%s%s", n ? " " : "",
			       jl_domain_names[d]);
		if (m->esu_mask & (1U << d))
			n += scnprintf(buf + n, size - n, "(esu %u)",
				       m->domain_esu[d]);
	}
}

/* The CPU's RAPL flavour (driver_data), or -ENODEV with the reason set. */
static int probe_cpu(unsigned long *data)
{
	struct cpuinfo_x86 *c = &boot_cpu_data;
	const struct x86_cpu_id *id;
	char detail[96];

	if (!rapl_msr)
		return absent(JL_RAPL_NO_DISABLED, NULL);
	is_amd = c->x86_vendor == X86_VENDOR_AMD ||
		 c->x86_vendor == X86_VENDOR_HYGON;
	id = x86_match_cpu(rapl_cpus);
	if (!id) {
		/* AMD 17h+ without the flag: say so, it is the likely question. */
		bool noflag = is_amd && c->x86 >= 0x17 &&
			      !boot_cpu_has(X86_FEATURE_RAPL);

		snprintf(detail, sizeof(detail),
			 " (%.16s family 0x%x model 0x%x%s)",
			 c->x86_vendor_id[0] ? c->x86_vendor_id :
					       "unknown vendor",
			 c->x86, c->x86_model,
			 noflag ? ", no RAPL feature flag" : "");
		return absent(JL_RAPL_NO_MODEL, detail);
	}
	*data = id->driver_data;
	return 0;
}

/* The energy status unit (esu) from the unit MSR, or -ENODEV. */
static int probe_unit(int cpu0, u64 *unit)
{
	u32 unit_msr = is_amd ? JL_MSR_AMD_RAPL_POWER_UNIT : JL_MSR_RAPL_POWER_UNIT;
	char detail[96];
	int esu;

	*unit = 0;
	esu = jl_rapl_check_unit(jl_rdmsr_safe_on_cpu(cpu0, unit_msr, unit), *unit);
	if (esu >= 0)
		return esu;
	if (esu == -JL_RAPL_NO_UNIT_BAD)
		snprintf(detail, sizeof(detail), " (MSR 0x%x = 0x%llx)", unit_msr, *unit);
	else
		snprintf(detail, sizeof(detail), " (MSR 0x%x)", unit_msr);
	return absent(-esu, detail);
}

/* The package counter must exist on every package, and count. */
static int probe_pkg_counter(unsigned int nr_pkgs, u32 pkg_msr, int cpu0)
{
	char detail[96];
	unsigned int p;
	u64 v, v2;

	for (p = 0; p < nr_pkgs; p++) {
		snprintf(detail, sizeof(detail), " (MSR 0x%x, package %u)", pkg_msr, p);
		if (read_one(pkg_cpu[p], pkg_msr, JL_D_PKG, &v))
			return absent(JL_RAPL_NO_PKG_FAULT, detail);
		if (!(v & 0xffffffffULL))
			return absent(JL_RAPL_NO_PKG_ZERO, detail);
	}
	read_one(cpu0, pkg_msr, JL_D_PKG, &v);
	msleep(30); /* RAPL counters update about every millisecond */
	if (read_one(cpu0, pkg_msr, JL_D_PKG, &v2) || v2 == v) {
		snprintf(detail, sizeof(detail), " (MSR 0x%x)", pkg_msr);
		return absent(JL_RAPL_NO_PKG_STUCK, detail);
	}
	return 0;
}

/* Other domains: candidates of the model whose counter reads non-zero. */
static int probe_domains(unsigned long data, u32 pkg_msr, int cpu0)
{
	static const u32 intel_msr[JL_NR_DOMAINS] = {
		[JL_D_CORE] = JL_MSR_PP0_ENERGY_STATUS,
		[JL_D_DRAM] = JL_MSR_DRAM_ENERGY_STATUS,
		[JL_D_PSYS] = JL_MSR_PLATFORM_ENERGY_STATUS,
	};
	u32 cand = data & JL_RAPL_DOMAINS;
	unsigned int d;
	u64 v;

	memset(dom_msr, 0, sizeof(dom_msr));
	dom_msr[JL_D_PKG] = pkg_msr;
	rapl_meter.domains = JL_RAPL_PKG;
	if (is_amd) {
		if (!zalloc_cpumask_var(&core_mask, GFP_KERNEL))
			return -ENOMEM;
		have_core_mask = true;
		mutex_lock(&msr_lock);
		if ((cand & JL_RAPL_CORE) && !amd_core_sum(0, &v) && v)
			rapl_meter.domains |= JL_RAPL_CORE;
		mutex_unlock(&msr_lock);
		return 0;
	}
	for (d = 0; d < JL_NR_DOMAINS; d++) {
		if (d == JL_D_PKG || !(cand & (1U << d)))
			continue;
		if (read_one(cpu0, intel_msr[d], d, &v) || !(v & 0xffffffffULL))
			continue;
		dom_msr[d] = intel_msr[d];
		rapl_meter.domains |= 1U << d;
	}
	return 0;
}

/* Units and the plausible-power bound of the meter found. */
static void fill_meter(unsigned long data, int esu, u64 unit, int cpu0,
		       unsigned int nr_pkgs)
{
	unsigned int d;
	u64 info, bound = 0;

	rapl_meter.esu = esu;
	rapl_meter.esu_mask = 0;
	for (d = 0; d < JL_NR_DOMAINS; d++) {
		unsigned int e = jl_rapl_domain_esu(data, d, esu);

		if ((rapl_meter.domains & (1U << d)) && e != (unsigned int)esu) {
			rapl_meter.esu_mask |= 1U << d;
			rapl_meter.domain_esu[d] = e;
		}
	}
	if (is_amd) {
		bound = JL_RAPL_AMD_BOUND_UW;
	} else {
		if (!jl_rdmsr_safe_on_cpu(cpu0, JL_MSR_PKG_POWER_INFO, &info))
			bound = jl_rapl_max_power_uw(unit, info);
		if (!bound)
			bound = JL_RAPL_FALLBACK_UW;
	}
	rapl_meter.name = is_amd ? "amd-rapl-msr" : "intel-rapl-msr";
	rapl_meter.owner = THIS_MODULE;
	rapl_meter.nr_pkgs = nr_pkgs;
	rapl_meter.bits = 32;
	rapl_meter.max_power_uw = bound;
	rapl_meter.read = rapl_read;
}

/* 0 with rapl_meter filled in; -ENODEV (reason set) or -ENOMEM. */
static int probe(void)
{
	unsigned long data;
	unsigned int p, nr_pkgs;
	u32 pkg_msr;
	int err, esu, cpu0;
	u64 unit;

	err = probe_cpu(&data);
	if (err)
		return err;
	nr_pkgs = topology_max_packages() ?: 1;
	/* Intel multi-die packages (Cascade Lake-AP) have RAPL per die. */
	if (!is_amd && several_dies(nr_pkgs))
		return absent(JL_RAPL_NO_MULTI_DIE, NULL);
	pkg_cpu = kcalloc(nr_pkgs, sizeof(*pkg_cpu), GFP_KERNEL);
	if (!pkg_cpu)
		return -ENOMEM;
	for (p = 0; p < nr_pkgs; p++)
		pkg_cpu[p] = first_cpu_of(p);
	cpu0 = pkg_cpu[0] < 0 ? 0 : pkg_cpu[0];
	esu = probe_unit(cpu0, &unit);
	if (esu < 0)
		return esu;
	pkg_msr = is_amd ? JL_MSR_AMD_PKG_ENERGY_STATUS : JL_MSR_PKG_ENERGY_STATUS;
	err = probe_pkg_counter(nr_pkgs, pkg_msr, cpu0);
	if (!err)
		err = probe_domains(data, pkg_msr, cpu0);
	if (!err)
		fill_meter(data, esu, unit, cpu0, nr_pkgs);
	return err;
}

int joules_rapl_init(void)
{
	struct cpuinfo_x86 *c = &boot_cpu_data;
	const char *model = NULL;
	char doms[80];
	int err;

	registered = false;
	err = probe();
	if (err == -ENODEV) {
		/* Not an error: joules runs on the model. Say why, once. */
		pr_info("%s; energy comes from the model\n", reason);
		joules_meter_absent(reason);
		err = 0;
		goto out_free;
	}
	if (err)
		goto out_free; /* -ENOMEM */
	err = joules_meter_register(&rapl_meter);
	if (err) {
		snprintf(reason, sizeof(reason),
			 "no RAPL: meter not registered (error %d)", err);
		pr_info("%s\n", reason);
		joules_meter_absent(reason);
		err = err == -ENOMEM ? err : 0;
		goto out_free;
	}
	WRITE_ONCE(registered, true);
	if (!is_amd)
		model = jl_rapl_intel_name(c->x86_model);
	domain_list(&rapl_meter, doms, sizeof(doms));
	pr_info("RAPL on %s%s%s: %u package(s), domains %s, esu %u, bound %llu W per domain\n",
		c->x86_vendor_id, model ? " " : "", model ? model : "",
		rapl_meter.nr_pkgs, doms, rapl_meter.esu,
		rapl_meter.max_power_uw / 1000000);
	return 0;

out_free:
	free_state();
	return err;
}

void joules_rapl_exit(void)
{
	if (registered) {
		joules_meter_unregister(&rapl_meter);
		WRITE_ONCE(registered, false);
	}
	free_state();
}
