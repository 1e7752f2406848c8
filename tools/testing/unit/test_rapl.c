// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of the RAPL model table and register decoding
 * (kmod/rapl.h), with the core (kmod/core.c) linked in as is. Register
 * values are built by hand from the Intel SDM / AMD PPR layouts; the model
 * expectations follow the kernel's RAPL drivers.
 */
#define _GNU_SOURCE /* strcasestr */
#include <stdint.h>
#include <string.h>

#include "core.h"
#include "rapl.h"
#include "check.h"

/* The table as data, from the same X-macro the module's x86_cpu_id table uses. */
struct model {
	unsigned int model;
	jl_u32 data;
	const char *name;
};
#define AS_ROW(m, d, n) { m, d, n },
static const struct model models[] = { JL_RAPL_INTEL_MODELS(AS_ROW) };

/* A unit register: power units 3:0, ESU 12:8, time units 19:16. */
static jl_u64 unit_reg(unsigned int pu, unsigned int esu, unsigned int tu)
{
	return (jl_u64)pu | ((jl_u64)esu << 8) | ((jl_u64)tu << 16);
}

/* unit register: sane ESU accepted; 0, faults, junk and Atom units rejected */
TEST(unit)
{
	/* Typical Intel (1/8 W, 61 uJ, 976 us) and AMD Zen (15.3 uJ) values. */
	CHECK(jl_rapl_check_unit(0, 0xa0e03) == 14, "%d",
	      jl_rapl_check_unit(0, 0xa0e03));
	CHECK(jl_rapl_check_unit(0, unit_reg(3, 16, 10)) == 16, "AMD");
	CHECK(jl_rapl_check_unit(0, unit_reg(3, 14, 10)) == 14, "built");
	/* The read faulted: the value read means nothing, even a good one. */
	CHECK(jl_rapl_check_unit(-5, 0xa0e03) == -JL_RAPL_NO_UNIT_FAULT,
	      "fault");
	/* QEMU's answer for an MSR it does not know. */
	CHECK(jl_rapl_check_unit(0, 0) == -JL_RAPL_NO_UNIT_ZERO, "zero");
	CHECK(jl_rapl_check_unit(0, ~0ULL) == -JL_RAPL_NO_UNIT_BAD, "all ones");
	CHECK(jl_rapl_check_unit(0, 0xa0e03 | (1ULL << 32)) ==
		      -JL_RAPL_NO_UNIT_BAD,
	      "reserved bit");
	/* Silvermont encodes 2^ESU uJ (ESU 5): rejected, not misread as 31 mJ. */
	CHECK(jl_rapl_check_unit(0, unit_reg(0, 5, 0)) == -JL_RAPL_NO_UNIT_BAD,
	      "atom");
	CHECK(jl_rapl_check_unit(0, unit_reg(3, 25, 10)) ==
		      -JL_RAPL_NO_UNIT_BAD,
	      "ESU 25");
}

/* model table: N Intel models, each with a package domain, no duplicates */
TEST(table)
{
	unsigned int i, j, dup = 0, nopkg = 0, names = 0;

	for (i = 0; i < ARRAY_SIZE(models); i++) {
		const struct model *m = &models[i];

		for (j = i + 1; j < ARRAY_SIZE(models); j++)
			dup += models[j].model == m->model;
		nopkg += !(m->data & JL_RAPL_PKG);
		names += m->name && m->name[0] &&
			 jl_rapl_intel_name(m->model) == m->name;
		CHECK(jl_rapl_intel_data(m->model) == m->data, "model 0x%x",
		      m->model);
		CHECK(!(m->data & ~(JL_RAPL_DOMAINS | JL_RAPL_Q_DRAM_FIXED |
				    JL_RAPL_Q_PSYS_1J)),
		      "model 0x%x: stray bits 0x%x", m->model, m->data);
		/* A unit quirk for a domain the model does not have is a typo. */
		CHECK(!(m->data & JL_RAPL_Q_DRAM_FIXED) ||
			      (m->data & JL_RAPL_DRAM),
		      "model 0x%x", m->model);
		CHECK(!(m->data & JL_RAPL_Q_PSYS_1J) ||
			      (m->data & JL_RAPL_PSYS),
		      "model 0x%x", m->model);
	}
	CHECK(ARRAY_SIZE(models) >= 45, "%zu models", ARRAY_SIZE(models));
	CHECK(!dup, "%u duplicate models", dup);
	CHECK(!nopkg, "%u models without a package domain", nopkg);
	CHECK(names == ARRAY_SIZE(models), "%u names", names);
	TH_LOG("model table: %zu Intel models, each with a package domain, no duplicates",
	       ARRAY_SIZE(models));
}

/* domains and unit quirks of N known models (and 11 without RAPL) */
TEST(known_models)
{
	static const struct {
		unsigned int model;
		jl_u32 data;
	} want[] = {
		{ 0x2a,
		  JL_RAPL_PKG | JL_RAPL_CORE }, /* Sandy Bridge: no DRAM */
		{ 0x2d,
		  JL_RAPL_PKG | JL_RAPL_CORE | JL_RAPL_DRAM }, /* SNB-EP */
		{ 0x3f, JL_RAPL_PKG | JL_RAPL_CORE | JL_RAPL_DRAM |
				JL_RAPL_Q_DRAM_FIXED },
		{ 0x4f, JL_RAPL_PKG | JL_RAPL_CORE | JL_RAPL_DRAM |
				JL_RAPL_Q_DRAM_FIXED },
		{ 0x55, JL_RAPL_PKG | JL_RAPL_CORE | JL_RAPL_DRAM |
				JL_RAPL_Q_DRAM_FIXED },
		{ 0x6a, JL_RAPL_PKG | JL_RAPL_CORE | JL_RAPL_DRAM |
				JL_RAPL_Q_DRAM_FIXED },
		{ 0x57, JL_RAPL_PKG | JL_RAPL_DRAM |
				JL_RAPL_Q_DRAM_FIXED }, /* KNL: no PP0 */
		{ 0x5e,
		  JL_RAPL_PKG | JL_RAPL_CORE | JL_RAPL_DRAM | JL_RAPL_PSYS },
		{ 0x97,
		  JL_RAPL_PKG | JL_RAPL_CORE | JL_RAPL_DRAM | JL_RAPL_PSYS },
		{ 0x8f, JL_RAPL_PKG | JL_RAPL_CORE | JL_RAPL_DRAM |
				JL_RAPL_PSYS | JL_RAPL_Q_PSYS_1J },
		{ 0xcf, JL_RAPL_PKG | JL_RAPL_CORE | JL_RAPL_DRAM |
				JL_RAPL_PSYS | JL_RAPL_Q_PSYS_1J },
		/* Not (MSR) RAPL: Silvermont/Airmont units, TPMI parts, QEMU, Core 2. */
		{ 0x37, 0 },
		{ 0x4c, 0 },
		{ 0x4d, 0 },
		{ 0x5a, 0 },
		{ 0xad, 0 },
		{ 0xaf, 0 },
		{ 0x06, 0 },
		{ 0x6b, 0 },
		{ 0x17, 0 },
		{ 0x1a, 0 },
		{ 0x2e, 0 },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(want); i++)
		CHECK(jl_rapl_intel_data(want[i].model) == want[i].data,
		      "model 0x%x: 0x%x, want 0x%x", want[i].model,
		      jl_rapl_intel_data(want[i].model), want[i].data);
	CHECK(jl_rapl_intel_name(0x06) == NULL, "QEMU's model has a name");
	CHECK(!strcmp(jl_rapl_intel_name(0x55), "Skylake-SP/Cascade Lake"),
	      "name");
	TH_LOG("domains and unit quirks of %zu known models (and 11 without RAPL)",
	       ARRAY_SIZE(want) - 11);
}

/* per-domain units: fixed DRAM (ESU 16) and SPR psys (1 J) quirks */
TEST(domain_esu)
{
	jl_u32 hsx = jl_rapl_intel_data(0x3f), spr = jl_rapl_intel_data(0x8f);
	jl_u32 skl = jl_rapl_intel_data(0x5e);
	jl_u64 rem = 0;
	unsigned int d;

	/* Haswell-EP: DRAM is 15.3 uJ whatever 0x606 says; the rest follows 0x606. */
	CHECK(jl_rapl_domain_esu(hsx, JL_D_DRAM, 14) == 16, "hsx dram");
	CHECK(jl_rapl_domain_esu(hsx, JL_D_DRAM, 10) == 16, "hsx dram");
	CHECK(jl_rapl_domain_esu(hsx, JL_D_PKG, 14) == 14, "hsx pkg");
	CHECK(jl_rapl_domain_esu(hsx, JL_D_CORE, 14) == 14, "hsx core");
	CHECK(jl_rapl_domain_esu(spr, JL_D_PSYS, 14) == 0, "spr psys");
	CHECK(jl_rapl_domain_esu(spr, JL_D_DRAM, 14) == 14, "spr dram");
	for (d = 0; d < JL_NR_DOMAINS; d++)
		CHECK(jl_rapl_domain_esu(skl, d, 14) == 14, "skl domain %u", d);
	/*
	 * What the quirk is worth: 65536 DRAM counts on a Haswell-EP are 1 J;
	 * taken at 0x606's ESU 14 they would read as 4 J.
	 */
	CHECK(jl_rapl_to_uj(65536, jl_rapl_domain_esu(hsx, JL_D_DRAM, 14),
			    &rem) == 1000000,
	      "dram 1 J");
	CHECK(jl_rapl_to_uj(65536, 14, NULL) == 4000000, "4 J");
	CHECK(jl_rapl_to_uj(3, jl_rapl_domain_esu(spr, JL_D_PSYS, 14), NULL) ==
		      3000000,
	      "psys 3 J");
	/* A 32-bit counter across its wrap. */
	CHECK(jl_wrap_delta(0xfffffff0ULL, 0x10ULL, 32) == 0x20, "wrap");
}

/* MSR_PKG_POWER_INFO: TDP 14:0, minimum 30:16, maximum 46:32, in power units. */
static jl_u64 power_info(jl_u64 tdp, jl_u64 min, jl_u64 max)
{
	return (tdp & 0x7fff) | ((min & 0x7fff) << 16) | ((max & 0x7fff) << 32);
}

/* maximum plausible power from MSR_PKG_POWER_INFO: 5 x TDP, the part's max, 200 W floor */
TEST(max_power)
{
	jl_u64 unit = 0xa0e03; /* 1/8 W power units */

	/* 95 W desktop part, no maximum given: 5 x TDP. */
	CHECK(jl_rapl_max_power_uw(unit, power_info(95 * 8, 0, 0)) ==
		      475000000ULL,
	      "%llu", jl_rapl_max_power_uw(unit, power_info(95 * 8, 0, 0)));
	/* 15 W laptop part: 75 W is below the 200 W floor. */
	CHECK(jl_rapl_max_power_uw(unit, power_info(15 * 8, 0, 0)) ==
		      200000000ULL,
	      "floor");
	/* 165 W server with a 1200 W maximum: the part's maximum wins. */
	CHECK(jl_rapl_max_power_uw(unit, power_info(165 * 8, 70 * 8,
						    1200 * 8)) == 1200000000ULL,
	      "max field");
	/* A maximum below 5 x TDP does not lower the bound. */
	CHECK(jl_rapl_max_power_uw(unit, power_info(125 * 8, 0, 250 * 8)) ==
		      625000000ULL,
	      "low max");
	/* Fractional power units: TDP 28.125 W = 225 eighths. */
	CHECK(jl_rapl_max_power_uw(unit, power_info(225, 0, 0)) == 200000000ULL,
	      "28 W");
	CHECK(jl_rapl_max_power_uw(unit, power_info(300 * 8, 0, 0)) ==
		      1500000000ULL,
	      "300 W");
	/* No TDP, or one no package has: the caller falls back. */
	CHECK(jl_rapl_max_power_uw(unit, 0) == 0, "zero");
	CHECK(jl_rapl_max_power_uw(unit_reg(0, 14, 10),
				   power_info(0x7fff, 0, 0)) == 0,
	      "32 kW TDP");
	/* A maximum of 32 kW (1 W units) is garbage: 5 x TDP stays. */
	CHECK(jl_rapl_max_power_uw(unit_reg(0, 14, 10),
				   power_info(100, 0, 0x7fff)) == 500000000ULL,
	      "garbage max");
	/*
	 * Every bound keeps the sampling period at source.c's 1 s cap: a
	 * 32-bit counter at ESU 14 or 16 cannot wrap twice in a second even at
	 * the highest bound, 5 x 1 kW.
	 */
	CHECK(jl_rapl_wrap_period_ns(16, 5 * JL_RAPL_TDP_MAX_UW) >
		      1000000000ULL,
	      "period");
	CHECK(jl_rapl_wrap_period_ns(14, JL_RAPL_AMD_BOUND_UW) > 1000000000ULL,
	      "period");
}

/* every 'no RAPL' reason is distinct and reads as information, not an error */
TEST(reasons)
{
	int c, d;

	for (c = JL_RAPL_NO_MODEL; c <= JL_RAPL_NO_DISABLED; c++) {
		const char *t = jl_rapl_absent_text(c);

		CHECK(t && t[0] && strcmp(t, "unknown reason"), "code %d", c);
		/* 00-load.sh fails on these words in dmesg after a clean load. */
		CHECK(!strcasestr(t, "fail") && !strcasestr(t, "error") &&
			      !strcasestr(t, "warning") &&
			      !strcasestr(t, "bug"),
		      "code %d: '%s'", c, t);
		for (d = JL_RAPL_NO_MODEL; d < c; d++)
			CHECK(strcmp(t, jl_rapl_absent_text(d)),
			      "codes %d and %d", c, d);
	}
	CHECK(!strcmp(jl_rapl_absent_text(JL_RAPL_NO_MODEL),
		      "CPU vendor/model not supported"),
	      "model text");
	CHECK(!strcmp(jl_rapl_absent_text(JL_RAPL_NO_UNIT_ZERO),
		      "unit register reads 0"),
	      "zero text");
}

TEST_HARNESS_MAIN
