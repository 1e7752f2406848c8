/* SPDX-License-Identifier: GPL-2.0 */
/* source.c: energy sources (meters), registered by rapl.c and test modules. */
#ifndef JOULES_SOURCE_H
#define JOULES_SOURCE_H

#include <linux/kobject.h>
#include <linux/module.h>

#include "core.h"

/*
 * Energy sources (source.c). A meter gives per-package, per-domain energy
 * counters: the RAPL MSRs (rapl.c) or, in tests, a synthetic meter module.
 * joules samples each package often enough that a counter of `bits` bits
 * cannot wrap twice between samples at max_power_uw, and accumulates wrap-
 * safe deltas in 64 bits.
 */
struct joules_meter {
	const char *name;
	struct module *owner;	/* THIS_MODULE, required; no reference is held */
	u32 domains;		/* JL_D_* bits this meter has */
	unsigned int nr_pkgs;
	unsigned int bits;	/* counter width, 1..64 (RAPL: 32) */
	unsigned int esu;	/* one count is 1/2^esu J */
	/*
	 * Optional per-domain units: where bit (1 << JL_D_*) of esu_mask is
	 * set, that domain counts in 1/2^domain_esu[d] J instead of esu
	 * (Intel server DRAM: fixed 15.3 uJ; SPR platform: 1 J). A meter
	 * that leaves both zero uses esu for every domain.
	 */
	u32 esu_mask;
	unsigned int domain_esu[JL_NR_DOMAINS];
	u64 max_power_uw;	/* per domain; larger deltas are bogus */
	/* Read the raw counters of package pkg into raw[JL_D_*]; may sleep. */
	int (*read)(struct joules_meter *m, unsigned int pkg, u64 *raw);
	void *priv;
};
/*
 * Its read() is not called once its module has begun to unload, and no
 * reference is held on that module, not even for a call (rmmod refuses
 * a module with references). A call in flight is waited out by
 * unregister, which must come first in the module's exit, before
 * anything read() uses is torn down.
 */
int joules_meter_register(struct joules_meter *m);
void joules_meter_unregister(struct joules_meter *m);
/* No meter found: why, for the status file ("no RAPL: ..."). */
void joules_meter_absent(const char *why);

/* For the worker: is a meter registered, and the energy since last take. */
struct joules_meter_take {
	u64 uj[JL_NR_DOMAINS];
	u32 domains;
};
bool joules_meter_take(unsigned int pkg, struct joules_meter_take *t);
int joules_source_init(void);
void joules_source_exit(void);
/* sysfs: RAPL/meter status under /sys/kernel/joules/rapl/ */
int joules_source_sysfs(struct kobject *parent);

#endif /* JOULES_SOURCE_H */
