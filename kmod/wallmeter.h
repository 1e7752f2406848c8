/* SPDX-License-Identifier: GPL-2.0 */
/* wallmeter.c: the node's wall meter, fed from user space over netlink. */
#ifndef JOULES_WALLMETER_H
#define JOULES_WALLMETER_H

#include <linux/kobject.h>
#include <linux/types.h>

struct netlink_ext_ack;

/* A meter's name goes to the kernel log and sysfs: printable ASCII, no blanks. */
bool joules_wall_name_ok(const char *name);
/*
 * A reading (METER_FEED), stamped now, taken age_ns before (for its
 * rates): 0, -ERANGE (implausible) or -EINVAL (stamped before the last),
 * with the reason in extack.
 */
int joules_wall_feed(const char *name, bool power, u64 value, u64 age_ns,
		     bool reset, struct netlink_ext_ack *extack);

/*
 * The worker, once per tick, before charging: is a meter in force (fed
 * within timeout_ms of boot time), and its last power for a node without
 * another shape.
 */
bool joules_wall_in_force(u64 *power_uw);
/*
 * The node's energy for the tick (t0, t1] whose shape is shape_uj; busy_ns:
 * the CPU time that ran in it, the worker's not counted (a reading window
 * with almost none gives the meter's static power, baseline.c).
 */
u64 joules_wall_tick(u64 t0_ns, u64 t1_ns, u64 shape_uj, bool in_force,
		     u64 busy_ns);

/* For NODE records: the meter's name ("" without one), totals, pending. */
struct joules_wall_totals {
	char name[32];
	u64 meter_uj;
	s64 pending_uj;
};
void joules_wall_get(struct joules_wall_totals *wt);

/* sysfs: /sys/kernel/joules/wallmeter/ */
int joules_wall_sysfs(struct kobject *parent);

#endif /* JOULES_WALLMETER_H */
