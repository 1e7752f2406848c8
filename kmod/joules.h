/* SPDX-License-Identifier: GPL-2.0 */
/* Internal interfaces between the files of joules.ko. */
#ifndef JOULES_H
#define JOULES_H

#include <linux/types.h>
#include <linux/kobject.h>
#include "core.h"

#define JOULES_NAME "joules"

/* sysfs.c: /sys/kernel/joules/ */
extern struct kobject *joules_kobj;
int joules_sysfs_init(void);
void joules_sysfs_exit(void);

#endif /* JOULES_H */
