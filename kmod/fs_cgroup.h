/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fs_cgroup.c: /proc/energy/cgroupns/<ns>/<path>/energy.stat and the
 * cgroup link, within joulesfs.
 */
#ifndef JOULES_FS_CGROUP_H
#define JOULES_FS_CGROUP_H

#include <linux/fs.h>

extern const struct inode_operations jf_cg_link_iops, jf_cg_ns_iops;
extern const struct file_operations jf_cg_ns_fops;

#endif /* JOULES_FS_CGROUP_H */
