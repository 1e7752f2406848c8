/* SPDX-License-Identifier: GPL-2.0 */
/* baseline.c: static (idle) power, measured or set. */
#ifndef JOULES_BASELINE_H
#define JOULES_BASELINE_H

#include <linux/kobject.h>
#include <linux/types.h>

#include "source.h"

/* The worker's: per-package state for nr packages, and its release. */
int joules_base_init(unsigned int nr);
void joules_base_exit(void);
/* The worker, at the start of each tick: the settings it charges by. */
void joules_base_tick(void);
/*
 * A package's measured energy for the interval (t1 - dt, t1], and whether
 * it was idle (core.c's jl_base_idle()).
 */
void joules_base_pkg(unsigned int pkg, const struct joules_meter_take *mt,
		     u64 t1, u64 dt, bool idle);
/* A wall meter's reading window (t1 - dt, t1]: its energy, and if idle. */
void joules_base_wall_window(u64 t1, u64 dt, u64 uj, bool idle);
/*
 * The static power in force (worker only): set in meter_idle_uw, else
 * measured; 0 (false for the wall) while there is none.
 */
u64 joules_base_pkg_uw(unsigned int pkg, unsigned int dom);
/* Forget an estimate: the package lost its meter; another wall meter. */
void joules_base_pkg_forget(unsigned int pkg);
void joules_base_wall_forget(void);
bool joules_base_wall_uw(u64 *uw);

/* sysfs: /sys/kernel/joules/static_power and meter_idle_uw */
int joules_base_sysfs(struct kobject *parent);

#endif /* JOULES_BASELINE_H */
