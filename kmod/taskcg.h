/* SPDX-License-Identifier: GPL-2.0 */
/*
 * taskcg.c: which cgroup a task entry is charged to, and its charges
 * there. The worker's side of cgroup.c; it keeps cgroup.c free of task
 * entries and the task table free of cgroups.
 */
#ifndef JOULES_TASKCG_H
#define JOULES_TASKCG_H

#include "tasks.h"

/*
 * Pass 1 of a tick, and the scan: the cgroup e's task is in now. The
 * worker's only (taskcg.c's memo of the last cgroup found is unlocked).
 */
void joules_taskcg_update(struct joules_entry *e);
/* Every tick: tasks moved while asleep, to their cgroup (a share of them). */
void joules_taskcg_scan(void);
/* After the tick's last update: the memo of the last cgroup found goes. */
void joules_taskcg_tick_end(void);
/* e's task died: no longer a live task of its cgroup. */
void joules_taskcg_gone(struct joules_entry *e);
/* Before e is folded: drop its cgroup. */
void joules_taskcg_release(struct joules_entry *e);
/*
 * The charge e just got (d: its feature deltas, missed: counters they
 * missed; lag: lagged view, a model's), to its cgroup.
 */
void joules_taskcg_charge(struct joules_entry *e, const struct jl_feat *d,
			  u32 missed, u64 uj, u64 lag, const u64 *part,
			  u32 domains, u32 source, u64 generation);
/* An idle share e just got (and its lagged view), to its cgroup. */
void joules_taskcg_charge_idle(struct joules_entry *e, u64 uj, u64 lag);
/* Measured energy e was settled in the lagged view (lpart: by domain). */
void joules_taskcg_charge_lag(struct joules_entry *e, u64 lag, const u64 *lpart);

#endif /* JOULES_TASKCG_H */
