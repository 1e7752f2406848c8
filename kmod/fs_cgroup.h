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
bool jf_cg_inode(const struct inode *inode);	/* a cgroup dir or file? */
int jf_cg_revalidate(struct dentry *dentry, struct inode *inode, unsigned int flags);
void jf_cg_evict(struct inode *inode);

#endif /* JOULES_FS_CGROUP_H */
