/* SPDX-License-Identifier: GPL-2.0 */
/* joulesfs internals shared by its pid tree (fs.c) and cgroup tree (fs_cgroup.c). */
#ifndef JOULES_FS_H
#define JOULES_FS_H

#include <linux/fs.h>
#include <linux/seq_file.h>

#include "joules.h"

/* Per mount: whose pids, and who sees which (proc's hidepid rules). */
struct jf_info {
	struct pid_namespace *ns;
	int hidepid;		/* enum proc_hidepid */
	kgid_t gid;		/* exempt from hidepid */
};

static inline struct jf_info *sb_info(struct super_block *sb)
{
	return sb->s_fs_info;
}

/* A new inode; pid (a reference it takes over) or NULL, owner from t. */
struct inode *jf_inode(struct super_block *sb, umode_t mode, struct pid *pid,
		       struct task_struct *t);
void jf_print_energy(struct seq_file *m, const struct joules_stats *st);

/* fs_cgroup.c: /proc/energy/cgroupns/<ns>/<path>/energy.stat, the link cgroup. */
extern const struct inode_operations jf_cg_link_iops, jf_cg_ns_iops;
extern const struct file_operations jf_cg_ns_fops;
bool jf_cg_inode(const struct inode *inode);	/* a cgroup dir or file? */
int jf_cg_revalidate(struct dentry *dentry, struct inode *inode, unsigned int flags);
void jf_cg_evict(struct inode *inode);

#endif /* JOULES_FS_H */
