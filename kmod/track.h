/* SPDX-License-Identifier: GPL-2.0 */
/* track.c: how tasks enter the table (the fork hook's pool, the sweep). */
#ifndef JOULES_TRACK_H
#define JOULES_TRACK_H

#include <linux/atomic.h>
#include <linux/sched.h>

int joules_track_init(void);
void joules_track_exit(void);
void joules_track_new(struct task_struct *t);	/* new-task hook */
void joules_track_exiting(struct task_struct *t);	/* exit hook */
void joules_track_lost(struct task_struct *t);	/* free hook, t untracked */
void joules_track_exec(struct task_struct *t);	/* exec hook, de_thread() */
void joules_track_loaded(void);	/* the free hook is registered */
void joules_sweep(void);	/* track every untracked task; may sleep */
void joules_sweep_request(void);	/* from any context but sched_switch */
extern u64 joules_load_ns;	/* tasks started since are charged from start; 0 before */
extern atomic64_t joules_fork_deferred;
extern atomic64_t joules_exits_untracked;

#endif /* JOULES_TRACK_H */
