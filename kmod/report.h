/* SPDX-License-Identifier: GPL-2.0 */
/*
 * report.c: what the worker and the cgroup code finish (node samples and
 * totals, exit records) goes here; a listener (netlink) registers to be
 * told. The worker and cgroup.c never call netlink, and netlink reads the
 * node's totals here, not from the worker: no file calls back into one
 * that calls it.
 */
#ifndef JOULES_REPORT_H
#define JOULES_REPORT_H

#include "joules.h"

/* A listener; every callback runs in process context and may sleep. */
struct joules_report_ops {
	void (*sample)(const struct joules_node_sample *s);
	void (*exit_record)(const struct joules_stats *st);
	void (*cgroup_exit)(const struct joules_cg_stats *cs);
	/* Worth building exit records? */
	bool (*exits_wanted)(void);
};

void joules_report_init(void);
/* One listener at a time; after unregister no callback is running. */
void joules_report_register(const struct joules_report_ops *ops);
void joules_report_unregister(void);

/* Worker: one closed interval; it gets its sequence number here. */
void joules_report_sample(struct joules_node_sample *s);
bool joules_report_exits_wanted(void);
void joules_report_exit(const struct joules_stats *st);
void joules_report_cgroup_exit(const struct joules_cg_stats *cs);

/* Cumulative node totals since load (GET_NODE, sysfs). */
void joules_node_get(struct joules_node_totals *nt);

#endif /* JOULES_REPORT_H */
