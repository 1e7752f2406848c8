/* SPDX-License-Identifier: GPL-2.0 */
/* cgroup.c: energy per cgroup (v2), hierarchical, kept across exits. */
#ifndef JOULES_CGROUP_H
#define JOULES_CGROUP_H

#include "totals.h"

struct cgroup;
struct joules_cg;

int joules_cg_init(void);
void joules_cg_exit(void);
/* The entry of cgrp, made with its ancestors if need be; may sleep. */
struct joules_cg *joules_cg_get(struct cgroup *cgrp);
/* For a reader: as joules_cg_get(), ERR_PTR(-ENODEV) for a cgroup gone. */
struct joules_cg *joules_cg_get_reader(struct cgroup *cgrp);
/* Another reference to cg, for a holder of one. */
void joules_cg_hold(struct joules_cg *cg);
void joules_cg_put(struct joules_cg *cg);
/* Worker: live tasks in cg (n may be negative), and charges. */
void joules_cg_count(struct joules_cg *cg, int n);
void joules_cg_charge(struct joules_cg *cg, const struct joules_totals *d);
void joules_cg_tick(void);
/* Its totals as a reader sees them (cs->path is the caller's). */
void joules_cg_stats(struct joules_cg *cg, struct joules_cg_stats *cs);
u64 joules_cg_id(const struct joules_cg *cg);
struct cgroup *joules_cg_cgroup(const struct joules_cg *cg);
bool joules_cg_removed(const struct joules_cg *cg);
u64 joules_cg_objects(void);
/* The longest stretch a flush held its lock since load, in ns. */
u64 joules_cg_flush_max_ns(void);
struct cgroup *joules_cg_ns_root(void);
/* cgrp's path below root (NULL: the top), O(depth); its length or -errno. */
int joules_cgroup_path(struct cgroup *cgrp, struct cgroup *root, char *buf,
		       size_t size);
/* By path in the current task's cgroup namespace: a reference or ERR_PTR. */
struct cgroup *joules_cg_by_path(const char *path);

#endif /* JOULES_CGROUP_H */
