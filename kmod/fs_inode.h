/* SPDX-License-Identifier: GPL-2.0 */
/* fs_inode.c: joulesfs inodes and file lines, shared by fs.c and fs_cgroup.c. */
#ifndef JOULES_FS_INODE_H
#define JOULES_FS_INODE_H

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
/* The energy and counter lines of a per-pid or cgroup file. */
void jf_print_energy(struct seq_file *m, const struct joules_stats *st);

#endif /* JOULES_FS_INODE_H */
