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
	struct file *file;
};
void joules_reader_current(struct joules_reader *r);
int joules_perm_init(void);
void joules_perm_exit(void);
/* The /proc/<pid>/io rule, stricter where a module cannot ask (perm.c). */
bool joules_may_read(struct task_struct *t, const struct joules_reader *r);
/*
 * The kernel's check of it, LSMs included, for the current task; may
 * sleep. Not under joules_read_lock(): compare a joules_exec from before
 * the check under the lock.
 */
bool joules_lsm_may_read(struct task_struct *t);
struct joules_exec {
	const struct task_struct *task;	/* compared, never dereferenced */
	u64 id;
};
void joules_exec_id(struct task_struct *t, struct joules_exec *x);
bool joules_exec_same(struct task_struct *t, const struct joules_exec *x);
int joules_read_lock(struct task_struct *t);	/* exec's lock; -EINTR */
void joules_read_unlock(struct task_struct *t);
/* Node-wide measured energy: CAP_PERFMON or CAP_SYS_ADMIN. */
bool joules_may_read_node(const struct joules_reader *r);
/* Feeding the wall meter (METER_FEED): CAP_SYS_ADMIN. */
bool joules_may_feed(const struct joules_reader *r);
struct cgroup;
/* A cgroup's totals: as node energy, or the owner of its directory. */
bool joules_may_read_cgroup(struct cgroup *cgrp, const struct joules_reader *r);

#endif /* JOULES_PERM_H */
