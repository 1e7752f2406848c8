/* SPDX-License-Identifier: GPL-2.0 */
/* pmu.c: per-CPU kernel counters for cycles, instructions, cache misses. */
#ifndef JOULES_PMU_H
#define JOULES_PMU_H

#include <linux/jump_label.h>
#include <linux/types.h>

/* Hardware counters read per CPU at each switch (a subset of features). */
#define JOULES_NR_HW 3	/* JL_F_CYCLES, JL_F_INSTR, JL_F_MISSES */

/* Hardware counters exist: the probe reads them at every switch. */
DECLARE_STATIC_KEY_FALSE(joules_hw_on);

int joules_pmu_init(void);
void joules_pmu_exit(void);
/*
 * This CPU's deltas since its last call (irqs off); returns the JL_F_*
 * bits read, and in *missed those this CPU should have counted and did
 * not (the slice that ends here is partial in them).
 */
u32 joules_pmu_read(u64 *hw, u32 *missed);
/* Worker, once a tick: counters some slice missed lately, anywhere. */
u32 joules_pmu_take_missed(void);
/* Counters in use: those some CPU had at the load. */
u32 joules_pmu_present(void);
/* sysfs hw_counters_missing: online CPUs lacking one in use, a cpulist. */
ssize_t joules_pmu_missing(char *buf, size_t size);

#endif /* JOULES_PMU_H */
