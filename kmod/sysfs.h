/* SPDX-License-Identifier: GPL-2.0 */
/* sysfs.c: /sys/kernel/joules/. */
#ifndef JOULES_SYSFS_H
#define JOULES_SYSFS_H

#include <linux/kobject.h>

extern struct kobject *joules_kobj;
int joules_sysfs_init(void);
void joules_sysfs_exit(void);

#endif /* JOULES_SYSFS_H */
