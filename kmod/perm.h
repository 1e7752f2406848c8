/* SPDX-License-Identifier: GPL-2.0 */
/* perm.c: who may read what. */
#ifndef JOULES_PERM_H
#define JOULES_PERM_H

#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/sched.h>

/* Documentation/admin-guide.rst has the rules. */
struct joules_reader {
	const struct cred *cred;	/* whose ids */
	/* Capabilities of its opener (a netlink socket), or NULL: current's. */
	const struct file *file;
};
void joules_reader_current(struct joules_reader *r);
int joules_perm_init(void);
void joules_perm_exit(void);
/* The /proc/<pid>/io rule, stricter where a module cannot ask (perm.c). */
bool joules_may_read(struct task_struct *t, const struct joules_reader *r);
/*
 * The kernel's check of it, LSMs included, for the current task; may
 * sleep. Not under joules_read_lock(): joules_lsm_verdict() asks it and
 * notes what it was about, joules_verdict_holds() tells under the lock
 * whether that is still so (no exec, no new credentials since).
 */
bool joules_lsm_may_read(struct task_struct *t);
struct joules_verdict {
	const struct task_struct *leader;	/* compared, never dereferenced */
	u64 exec_id;				/* the leader's self_exec_id */
	const struct cred *cred;		/* t's, referenced; compared */
};
int joules_lsm_verdict(struct task_struct *t, struct joules_verdict *v);
bool joules_verdict_holds(struct task_struct *t, const struct joules_verdict *v);
void joules_verdict_put(struct joules_verdict *v);
/* read() under the lock with a verdict that holds; -EAGAIN if t kept changing. */
int joules_read_judged(struct task_struct *t, struct joules_verdict *v,
		       int (*read)(struct task_struct *t, void *arg), void *arg);
int joules_read_lock(struct task_struct *t);	/* exec's lock; -EINTR */
void joules_read_unlock(struct task_struct *t);
/* Node-wide measured energy: CAP_PERFMON or CAP_SYS_ADMIN. */
bool joules_may_read_node(const struct joules_reader *r);
/*
 * The lagged view's epoch: the setting (sysfs unpriv_interval_ms; 0: every
 * reader live) and the length in force (the worker's, ms).
 */
extern unsigned int joules_unpriv_interval_ms;
extern unsigned int joules_lag_epoch_ms;
/* 0: a and b see energy live; else its lag in ms (perm.c). */
unsigned int joules_reader_lag_ms(const struct joules_reader *a,
				  const struct joules_reader *b, bool lagged);
/* Feeding the wall meter (METER_FEED): CAP_SYS_ADMIN. */
bool joules_may_feed(const struct joules_reader *r);
struct cgroup;
/* A cgroup's totals: as node energy, or the owner of its directory. */
bool joules_may_read_cgroup(struct cgroup *cgrp, const struct joules_reader *r);

#endif /* JOULES_PERM_H */
