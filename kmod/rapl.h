/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RAPL model table and register decoding: pure C on core.h's types, shared
 * by kmod/rapl.c (the MSR meter) and the host unit test
 * tools/testing/unit/test_rapl.c, so the table and the decoding rules are
 * tested where no RAPL hardware exists.
 *
 * Which Intel models have which RAPL domains follows the kernel's own
 * drivers (arch/x86/events/rapl.c, drivers/powercap/intel_rapl_common.c);
 * the table itself is ours. A domain listed for a model is only a
 * candidate: rapl.c still drops it when its counter faults or reads 0.
 */
#ifndef JOULES_RAPL_H
#define JOULES_RAPL_H

#include "core.h"

/* clang-format off */
/* Intel MSRs (Intel SDM vol. 3B, "Platform Specific Power Management"). */
#define JL_MSR_RAPL_POWER_UNIT		0x606
#define JL_MSR_PKG_ENERGY_STATUS	0x611
#define JL_MSR_PKG_POWER_INFO		0x614
#define JL_MSR_DRAM_ENERGY_STATUS	0x619
#define JL_MSR_PP0_ENERGY_STATUS	0x639
#define JL_MSR_PLATFORM_ENERGY_STATUS	0x64d
/* AMD family 17h+ (and Hygon 18h): same unit layout as Intel's 0x606. */
#define JL_MSR_AMD_RAPL_POWER_UNIT	0xc0010299
#define JL_MSR_AMD_CORE_ENERGY_STATUS	0xc001029a	/* per core */
#define JL_MSR_AMD_PKG_ENERGY_STATUS	0xc001029b	/* per package */

/* Domain bits of a model's data word (the low byte, = 1 << JL_D_*). */
#define JL_RAPL_PKG	(1U << JL_D_PKG)
#define JL_RAPL_CORE	(1U << JL_D_CORE)	/* Intel PP0, AMD core sum */
#define JL_RAPL_DRAM	(1U << JL_D_DRAM)
#define JL_RAPL_PSYS	(1U << JL_D_PSYS)
#define JL_RAPL_DOMAINS	0xffU

/*
 * Unit quirks: some domains ignore the ESU of the unit register.
 * Haswell-and-later Xeon E5/E7, Xeon Scalable up to Ice Lake and Xeon Phi
 * count DRAM energy in fixed 15.3 uJ steps (ESU 16); Sapphire/Emerald
 * Rapids count platform (psys) energy in whole joules (ESU 0).
 */
#define JL_RAPL_Q_DRAM_FIXED	0x100U
#define JL_RAPL_Q_PSYS_1J	0x200U
#define JL_RAPL_DRAM_FIXED_ESU	16
#define JL_RAPL_PSYS_1J_ESU	0

/* Model classes. */
#define JL_RAPL_SNB_CLIENT (JL_RAPL_PKG | JL_RAPL_CORE)
#define JL_RAPL_SNB_SERVER (JL_RAPL_PKG | JL_RAPL_CORE | JL_RAPL_DRAM)
#define JL_RAPL_HSW_CLIENT (JL_RAPL_PKG | JL_RAPL_CORE | JL_RAPL_DRAM)
#define JL_RAPL_HSW_SERVER (JL_RAPL_PKG | JL_RAPL_CORE | JL_RAPL_DRAM | JL_RAPL_Q_DRAM_FIXED)
#define JL_RAPL_XEON_PHI   (JL_RAPL_PKG | JL_RAPL_DRAM | JL_RAPL_Q_DRAM_FIXED)
#define JL_RAPL_SKL_CLIENT (JL_RAPL_PKG | JL_RAPL_CORE | JL_RAPL_DRAM | JL_RAPL_PSYS)
#define JL_RAPL_SPR_SERVER \
	(JL_RAPL_PKG | JL_RAPL_CORE | JL_RAPL_DRAM | JL_RAPL_PSYS | JL_RAPL_Q_PSYS_1J)
#define JL_RAPL_AMD	   (JL_RAPL_PKG | JL_RAPL_CORE)

/*
 * X(model, data, name): Intel family 6 models whose RAPL energy MSRs use
 * the 1/2^ESU J unit. Left out on purpose: Silvermont/Airmont Atoms (their
 * unit is 2^ESU uJ; jl_rapl_esu() would reject them anyway), and parts
 * whose energy counters moved out of MSRs (Granite Rapids, Sierra Forest:
 * TPMI). Broadwell-DE is taken as a Broadwell server (fixed DRAM unit), as
 * perf's RAPL PMU does; the powercap driver disagrees.
 */
#define JL_RAPL_INTEL_MODELS(X)						\
	X(0x2a, JL_RAPL_SNB_CLIENT, "Sandy Bridge")			\
	X(0x2d, JL_RAPL_SNB_SERVER, "Sandy Bridge-EP")			\
	X(0x3a, JL_RAPL_SNB_CLIENT, "Ivy Bridge")			\
	X(0x3e, JL_RAPL_SNB_SERVER, "Ivy Bridge-EP")			\
	X(0x3c, JL_RAPL_HSW_CLIENT, "Haswell")				\
	X(0x45, JL_RAPL_HSW_CLIENT, "Haswell-ULT")			\
	X(0x46, JL_RAPL_HSW_CLIENT, "Haswell-GT3e")			\
	X(0x3f, JL_RAPL_HSW_SERVER, "Haswell-EP")			\
	X(0x3d, JL_RAPL_HSW_CLIENT, "Broadwell")			\
	X(0x47, JL_RAPL_HSW_CLIENT, "Broadwell-GT3e")			\
	X(0x4f, JL_RAPL_HSW_SERVER, "Broadwell-EP")			\
	X(0x56, JL_RAPL_HSW_SERVER, "Broadwell-DE")			\
	X(0x57, JL_RAPL_XEON_PHI, "Knights Landing")			\
	X(0x85, JL_RAPL_XEON_PHI, "Knights Mill")			\
	X(0x4e, JL_RAPL_SKL_CLIENT, "Skylake-U/Y")			\
	X(0x5e, JL_RAPL_SKL_CLIENT, "Skylake")				\
	X(0x55, JL_RAPL_HSW_SERVER, "Skylake-SP/Cascade Lake")		\
	X(0x8e, JL_RAPL_SKL_CLIENT, "Kaby Lake-U/Y")			\
	X(0x9e, JL_RAPL_SKL_CLIENT, "Kaby Lake/Coffee Lake")		\
	X(0x66, JL_RAPL_SKL_CLIENT, "Cannon Lake")			\
	X(0xa5, JL_RAPL_SKL_CLIENT, "Comet Lake")			\
	X(0xa6, JL_RAPL_SKL_CLIENT, "Comet Lake-U")			\
	X(0x7d, JL_RAPL_SKL_CLIENT, "Ice Lake")				\
	X(0x7e, JL_RAPL_SKL_CLIENT, "Ice Lake-U/Y")			\
	X(0x9d, JL_RAPL_SKL_CLIENT, "Ice Lake NNP-I")			\
	X(0x6a, JL_RAPL_HSW_SERVER, "Ice Lake-SP")			\
	X(0x6c, JL_RAPL_HSW_SERVER, "Ice Lake-D")			\
	X(0x8a, JL_RAPL_SKL_CLIENT, "Lakefield")			\
	X(0x8c, JL_RAPL_SKL_CLIENT, "Tiger Lake-U")			\
	X(0x8d, JL_RAPL_SKL_CLIENT, "Tiger Lake-H")			\
	X(0xa7, JL_RAPL_SKL_CLIENT, "Rocket Lake")			\
	X(0x97, JL_RAPL_SKL_CLIENT, "Alder Lake")			\
	X(0x9a, JL_RAPL_SKL_CLIENT, "Alder Lake-P")			\
	X(0xbe, JL_RAPL_SKL_CLIENT, "Alder Lake-N")			\
	X(0xb7, JL_RAPL_SKL_CLIENT, "Raptor Lake")			\
	X(0xba, JL_RAPL_SKL_CLIENT, "Raptor Lake-P")			\
	X(0xbf, JL_RAPL_SKL_CLIENT, "Raptor Lake-S")			\
	X(0xac, JL_RAPL_SKL_CLIENT, "Meteor Lake")			\
	X(0xaa, JL_RAPL_SKL_CLIENT, "Meteor Lake-H/U")			\
	X(0xbd, JL_RAPL_SKL_CLIENT, "Lunar Lake")			\
	X(0xc5, JL_RAPL_SKL_CLIENT, "Arrow Lake-H")			\
	X(0xc6, JL_RAPL_SKL_CLIENT, "Arrow Lake")			\
	X(0x8f, JL_RAPL_SPR_SERVER, "Sapphire Rapids")			\
	X(0xcf, JL_RAPL_SPR_SERVER, "Emerald Rapids")			\
	X(0x5c, JL_RAPL_HSW_CLIENT, "Goldmont (Apollo Lake)")		\
	X(0x5f, JL_RAPL_HSW_CLIENT, "Goldmont-D (Denverton)")		\
	X(0x7a, JL_RAPL_HSW_CLIENT, "Goldmont Plus (Gemini Lake)")	\
	X(0x86, JL_RAPL_HSW_CLIENT, "Tremont-D (Snow Ridge)")		\
	X(0x96, JL_RAPL_HSW_CLIENT, "Tremont (Elkhart Lake)")		\
	X(0x9c, JL_RAPL_HSW_CLIENT, "Tremont-L (Jasper Lake)")
/* clang-format on */

/* Data word (domains | quirks) of an Intel family 6 model; 0: no RAPL. */
static inline jl_u32 jl_rapl_intel_data(unsigned int model)
{
	switch (model) {
#define JL_RAPL_X_DATA(m, d, n) \
	case m:                 \
		return d;
		JL_RAPL_INTEL_MODELS(JL_RAPL_X_DATA)
#undef JL_RAPL_X_DATA
	}
	return 0;
}

static inline const char *jl_rapl_intel_name(unsigned int model)
{
	switch (model) {
#define JL_RAPL_X_NAME(m, d, n) \
	case m:                 \
		return n;
		JL_RAPL_INTEL_MODELS(JL_RAPL_X_NAME)
#undef JL_RAPL_X_NAME
	}
	return (const char *)0;
}

/* Unit (ESU) of domain d on a model with data word `data`, given the unit register's ESU. */
static inline unsigned int jl_rapl_domain_esu(jl_u32 data, unsigned int d,
					      unsigned int esu)
{
	if (d == JL_D_DRAM && (data & JL_RAPL_Q_DRAM_FIXED))
		return JL_RAPL_DRAM_FIXED_ESU;
	if (d == JL_D_PSYS && (data & JL_RAPL_Q_PSYS_1J))
		return JL_RAPL_PSYS_1J_ESU;
	return esu;
}

/*
 * Maximum plausible power of one domain (uW), the bound above which a
 * counter delta is a bogus read. From the unit register (power unit
 * 1/2^PU W in bits 3:0) and MSR_PKG_POWER_INFO (thermal spec power in bits
 * 14:0, maximum power in bits 46:32, both in power units):
 *   max(5 x TDP, the part's maximum power, JL_RAPL_BOUND_MIN_UW)
 * Five times TDP because short-term turbo limits reach about 4x TDP on
 * low-power parts; the floor because DRAM and platform domains share the
 * bound and a 15 W laptop's platform draws more than 75 W while charging.
 * Returns 0 when the register is not sane (no TDP, or TDP above
 * JL_RAPL_TDP_MAX_UW): the caller then uses JL_RAPL_FALLBACK_UW.
 */
#define JL_RAPL_TDP_MAX_UW 1000000000ULL /* 1 kW */
#define JL_RAPL_BOUND_MIN_UW 200000000ULL /* 200 W */
#define JL_RAPL_FALLBACK_UW 500000000ULL /* 500 W per package and domain */
#define JL_RAPL_AMD_BOUND_UW 1000000000ULL /* AMD: no power-info MSR */
static inline jl_u64 jl_rapl_max_power_uw(jl_u64 unit_msr, jl_u64 power_info)
{
	unsigned int pu = (unsigned int)(unit_msr & 0xf);
	jl_u64 tdp = ((power_info & 0x7fff) * 1000000ULL) >> pu;
	jl_u64 max = (((power_info >> 32) & 0x7fff) * 1000000ULL) >> pu;
	jl_u64 b;

	if (!tdp || tdp > JL_RAPL_TDP_MAX_UW)
		return 0;
	b = 5 * tdp;
	/* A maximum below TDP or far above any package is garbage: ignore it. */
	if (max > b && max <= 5 * JL_RAPL_TDP_MAX_UW)
		b = max;
	return b < JL_RAPL_BOUND_MIN_UW ? JL_RAPL_BOUND_MIN_UW : b;
}

/*
 * Decide from the unit register read whether RAPL is there: returns the
 * ESU, or a negative JL_RAPL_NO_* code. `fault` is the rdmsr result (0:
 * read fine). A read that did not fault proves nothing: QEMU and some
 * hypervisors return 0 for MSRs they do not know.
 */
enum jl_rapl_absent {
	JL_RAPL_NO_MODEL = 1, /* vendor/family/model not in the tables */
	JL_RAPL_NO_UNIT_FAULT, /* the unit register faults */
	JL_RAPL_NO_UNIT_ZERO, /* the unit register reads 0 */
	JL_RAPL_NO_UNIT_BAD, /* reserved bits set or ESU out of range */
	JL_RAPL_NO_PKG_FAULT, /* the package counter faults */
	JL_RAPL_NO_PKG_ZERO, /* the package counter reads 0 */
	JL_RAPL_NO_PKG_STUCK, /* the package counter does not advance */
	JL_RAPL_NO_MULTI_DIE, /* Intel packages with several dies */
	JL_RAPL_NO_DISABLED, /* module parameter rapl_msr=0 */
};

static inline int jl_rapl_check_unit(int fault, jl_u64 unit_msr)
{
	int esu;

	if (fault)
		return -JL_RAPL_NO_UNIT_FAULT;
	if (!unit_msr)
		return -JL_RAPL_NO_UNIT_ZERO;
	esu = jl_rapl_esu(unit_msr);
	return esu < 0 ? -JL_RAPL_NO_UNIT_BAD : esu;
}

/* The sentence after "no RAPL: " for a JL_RAPL_NO_* code. */
static inline const char *jl_rapl_absent_text(int code)
{
	switch (code) {
	case JL_RAPL_NO_MODEL:
		return "CPU vendor/model not supported";
	case JL_RAPL_NO_UNIT_FAULT:
		return "unit register not readable";
	case JL_RAPL_NO_UNIT_ZERO:
		return "unit register reads 0";
	case JL_RAPL_NO_UNIT_BAD:
		return "unit register holds no valid energy unit";
	case JL_RAPL_NO_PKG_FAULT:
		return "package energy counter not readable";
	case JL_RAPL_NO_PKG_ZERO:
		return "package energy counter reads 0";
	case JL_RAPL_NO_PKG_STUCK:
		return "package energy counter does not advance";
	case JL_RAPL_NO_MULTI_DIE:
		return "packages with several dies are not supported";
	case JL_RAPL_NO_DISABLED:
		return "disabled by the module parameter rapl_msr=0";
	}
	return "unknown reason";
}

#ifdef __KERNEL__
/*
 * rapl.c: the RAPL MSR meter, registered at load where the CPU has RAPL.
 * joules_rapl_init() fails only on allocation failure; a CPU without RAPL
 * is not an error: the reason goes to joules_meter_absent().
 */
int joules_rapl_init(void);
void joules_rapl_exit(void);
#endif

#endif /* JOULES_RAPL_H */
