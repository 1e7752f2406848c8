/* SPDX-License-Identifier: GPL-2.0 */
/* fs_inode.c: joulesfs inodes and file lines, shared by fs.c and fs_cgroup.c. */
#ifndef JOULES_FS_INODE_H
#define JOULES_FS_INODE_H

#include <linux/fs.h>
#include <linux/seq_file.h>

#include "joules.h"

/* jf_info.set: the options given at mount or remount. */
#define JF_SET_HIDEPID	1
#define JF_SET_GID	2
#define JF_SET_ALL	(JF_SET_HIDEPID | JF_SET_GID)

/*
 * Per mount: whose pids, and who sees which (proc's hidepid rules). An
 * option not given follows, at each access, the /proc the mounter had
 * (held: its superblock stays, whatever is mounted on /proc later).
 */
struct jf_info {
	struct pid_namespace *ns;
	struct path proc;	/* the mounter's /proc; empty with every option given */
	unsigned int set;	/* JF_SET_*; written last, acquire to read */
	int hidepid;		/* enum proc_hidepid */
	kgid_t gid;		/* exempt from hidepid but for ptraceable */
};

static inline struct jf_info *sb_info(struct super_block *sb)
{
	return sb->s_fs_info;
}

/*
 * A kind of inode: what its i_private holds (a counted reference) and how
 * its dentries behave. fs.c has pids, fs_cgroup.c cgroups; an inode of no
 * kind (the root, links, fixed directories) holds nothing and its dentry
 * stays good.
 */
struct jf_kind {
	void (*release)(void *ref);
	/* ->d_revalidate(); flags may hold LOOKUP_RCU. */
	int (*revalidate)(struct dentry *dentry, struct inode *inode, unsigned int flags);
	/* Drop the dentry once unused? */
	bool (*drop)(const struct dentry *dentry, struct inode *inode);
};

struct jf_inode {
	const struct jf_kind *kind;	/* NULL: none */
	struct inode vfs_inode;
};

static inline const struct jf_kind *jf_kind_of(const struct inode *inode)
{
	return container_of(inode, struct jf_inode, vfs_inode)->kind;
}

/*
 * A new inode of kind holding ref (a reference it takes over: released
 * here on failure), or of no kind (NULL, NULL); owner from t if given.
 */
struct inode *jf_inode(struct super_block *sb, umode_t mode,
		       const struct jf_kind *kind, void *ref, struct task_struct *t);

/* joulesfs' inode and dentry operations, by kind. */
struct inode *jf_alloc_inode(struct super_block *sb);
void jf_free_inode(struct inode *inode);
void jf_evict_inode(struct inode *inode);
extern const struct dentry_operations jf_dops;
int jf_inode_init(void);
void jf_inode_exit(void);
/* The energy and counter lines of a per-pid or cgroup file. */
void jf_print_energy(struct seq_file *m, const struct joules_stats *st);
/* 0: m's reader sees energy live; else its lag (joules_stats_lag()). */
unsigned int jf_lag_ms(struct seq_file *m);

#endif /* JOULES_FS_INODE_H */
