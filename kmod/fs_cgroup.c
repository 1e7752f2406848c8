// SPDX-License-Identifier: GPL-2.0
/*
 * The cgroup side of joulesfs: the cgroup v2 tree as the reader's cgroup
 * namespace sees it, each cgroup a directory that holds energy.stat (its
 * totals and its descendants', as kmod/cgroup.c keeps them) and its child
 * cgroups. Dentries are shared by all readers, so each namespace has its
 * own tree, /proc/energy/cgroupns/<inode number of the namespace>/, which
 * only readers in that namespace find; /proc/energy/cgroup is a link to
 * the reader's. So `cat /proc/energy/cgroup/system.slice/energy.stat`
 * names a cgroup the way the reader's /sys/fs/cgroup does, and a reader
 * in a container sees nothing above its namespace's root. Every path is
 * an ordinary file, directory or link. A child cgroup named energy.stat
 * is shadowed.
 *
 * Reading energy.stat: CAP_PERFMON or CAP_SYS_ADMIN (it holds other
 * users' work), or the owner of the cgroup's directory (delegation); see
 * perm.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cgroup.h>
#include <linux/kernfs.h>
#include <linux/namei.h>
#include <linux/nsproxy.h>
#include <linux/slab.h>

#include "cgroup.h"
#include "compat.h"
#include "fs_cgroup.h"
#include "fs_inode.h"
#include "perm.h"
#include "totals.h"

#define STAT_NAME "energy.stat"

static const struct inode_operations jf_cg_dir_iops;
static const struct file_operations jf_cg_dir_fops, jf_cg_stat_fops;

static struct cgroup_namespace *reader_ns(void)
{
	return current->nsproxy->cgroup_ns;
}

/* The inode's cgroup lives in i_private (a counted reference). */
static inline struct cgroup *inode_cgroup(const struct inode *inode)
{
	return inode->i_private;
}

/*
 * Good while its cgroup is online (not removed); a namespace's root only
 * for readers in that namespace.
 */
static int jf_cg_revalidate(struct dentry *dentry, struct inode *inode,
			    unsigned int flags)
{
	struct dentry *parent;
	bool ns_root;

	if (!(READ_ONCE(inode_cgroup(inode)->self.flags) & CSS_ONLINE))
		return 0;
	if (flags & LOOKUP_RCU)
		return -ECHILD;
	parent = dget_parent(dentry);
	ns_root = d_inode(parent)->i_op == &jf_cg_ns_iops;
	dput(parent);
	return !ns_root || inode_cgroup(inode) == reader_ns()->root_cset->dfl_cgrp;
}

/* Not kept once unused: each holds its cgroup. */
static bool jf_cg_drop(const struct dentry *dentry, struct inode *inode)
{
	return true;
}

static void jf_cg_release(void *cgrp)
{
	cgroup_put(cgrp);
}

/* Inodes that stand for a cgroup (a counted reference in i_private). */
static const struct jf_kind jf_cg_kind = {
	.release = jf_cg_release,
	.revalidate = jf_cg_revalidate,
	.drop = jf_cg_drop,
};

/* An inode for cgrp, taking over the caller's reference on it. */
static struct inode *cg_inode(struct super_block *sb, struct cgroup *cgrp, bool dir)
{
	struct inode *inode = jf_inode(sb, dir ? S_IFDIR | 0555 : S_IFREG | 0444,
				       &jf_cg_kind, cgrp, NULL);

	if (!inode)
		return NULL;
	if (dir) {
		inode->i_op = &jf_cg_dir_iops;
		inode->i_fop = &jf_cg_dir_fops;
		set_nlink(inode, 2);
	} else {
		inode->i_fop = &jf_cg_stat_fops;
	}
	return inode;
}



/* ---- energy.stat ---- */

static int jf_cg_show(struct seq_file *m, void *v)
{
	struct cgroup *cgrp = inode_cgroup(m->private);
	struct joules_cg_stats cs;
	struct joules_cg *cg;
	char *path;

	cg = joules_cg_get_reader(cgrp);
	if (IS_ERR_OR_NULL(cg))
		return cg ? PTR_ERR(cg) : -ENOMEM;
	joules_cg_stats(cg, &cs);
	joules_cg_put(cg);
	joules_stats_lag(&cs.st, jf_lag_ms(m));
	path = kmalloc(PATH_MAX, GFP_KERNEL);
	if (!path)
		return -ENOMEM;
	/*
	 * As the reader's cgroup namespace names it, whole or not at all (a
	 * file opened before the reader left for a namespace below it: "?").
	 */
	if (joules_cgroup_path(cgrp, joules_cg_ns_root(), path, PATH_MAX) < 0)
		strscpy(path, "?", PATH_MAX);
	seq_puts(m, "path: ");
	seq_puts(m, path);
	kfree(path);
	seq_put_decimal_ull(m, "\nid: ", cs.id);
	seq_put_decimal_ull(m, "\ntasks: ", cs.nr_tasks);
	seq_putc(m, '\n');
	jf_print_energy(m, &cs.st);
	return 0;
}

static int jf_cg_open(struct inode *inode, struct file *file)
{
	struct joules_reader r;

	joules_reader_current(&r);
	if (!joules_may_read_cgroup(inode_cgroup(inode), &r))
		return -EACCES;
	return single_open(file, jf_cg_show, inode);
}

static const struct file_operations jf_cg_stat_fops = {
	.open = jf_cg_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
};

/* ---- a cgroup's directory ---- */

static struct dentry *jf_cg_lookup(struct inode *dir, struct dentry *dentry,
				   unsigned int flags)
{
	struct cgroup *parent = inode_cgroup(dir), *child = NULL;
	struct kernfs_node *kn;
	struct inode *inode;

	if (!strcmp(dentry->d_name.name, STAT_NAME)) {
		cgroup_get(parent);
		inode = cg_inode(dir->i_sb, parent, false);
		return inode ? d_splice_alias(inode, dentry) : ERR_PTR(-ENOMEM);
	}
	/* A child cgroup is a directory of the parent's kernfs node. */
	kn = kernfs_find_and_get_ns(parent->kn, dentry->d_name.name, NULL);
	if (!kn)
		return ERR_PTR(-ENOENT);
	/* As cgroup_get_from_id() does, without its namespace check: the
	 * directory we are in is already inside the reader's namespace.
	 */
	if (kernfs_type(kn) == KERNFS_DIR) {
		rcu_read_lock();
		child = rcu_dereference(*(void __rcu __force **)&kn->priv);
		if (child && (cgroup_parent(child) != parent || !cgroup_tryget(child)))
			child = NULL;
		rcu_read_unlock();
	}
	kernfs_put(kn);
	if (!child)
		return ERR_PTR(-ENOENT);
	inode = cg_inode(dir->i_sb, child, true);
	return inode ? d_splice_alias(inode, dentry) : ERR_PTR(-ENOMEM);
}

#define BATCH 16

/*
 * Where a listing stopped: the position after the last child emitted, and
 * that child (a reference). A sequential listing resumes there, so listing
 * a directory is linear in its children; a seek counts from the first.
 */
struct cg_cursor {
	loff_t pos;
	struct cgroup *last;
};

static void cursor_set(struct cg_cursor *cur, loff_t pos, struct cgroup *last)
{
	if (cur->last)
		cgroup_put(cur->last);
	cur->pos = pos;
	cur->last = last;
}

static int jf_cg_dir_open(struct inode *inode, struct file *file)
{
	file->private_data = kzalloc(sizeof(struct cg_cursor), GFP_KERNEL);
	return file->private_data ? 0 : -ENOMEM;
}

static int jf_cg_dir_release(struct inode *inode, struct file *file)
{
	cursor_set(file->private_data, 0, NULL);
	kfree(file->private_data);
	return 0;
}

struct cg_name {
	char name[NAME_MAX + 1];
	struct cgroup *cgrp;	/* a reference, for the cursor */
};

/*
 * Up to BATCH online children of cgrp under RCU: after the cursor's child,
 * else from the first, skipping skip of them. Names are copied here and emitted outside RCU.
 */
static unsigned int cg_children(struct cgroup *cgrp, struct cgroup *after, loff_t skip,
				struct cg_name *batch)
{
	struct list_head *head = &cgrp->self.children;
	struct cgroup_subsys_state *pos;
	unsigned int n = 0;

	rcu_read_lock();
	/*
	 * The cursor's reference keeps its child from being released, and
	 * only release takes a child off the list: go on from it, online
	 * or not.
	 */
	if (after) {
		pos = &after->self;
		skip = 0;
	} else {
		pos = list_entry_rcu(head, struct cgroup_subsys_state, sibling);
	}
	list_for_each_entry_continue_rcu(pos, head, sibling) {
		if (!(READ_ONCE(pos->flags) & CSS_ONLINE) || skip-- > 0)
			continue;
		if (!cgroup_tryget(pos->cgroup))
			continue;
		strscpy(batch[n].name, jl_kn_name(pos->cgroup->kn), sizeof(batch[n].name));
		batch[n].cgrp = pos->cgroup;
		if (++n == BATCH)
			break;
	}
	rcu_read_unlock();
	return n;
}

/*
 * Position: dots, then energy.stat (2), then the online children in the
 * order the cgroup keeps them (3 on). dir_emit() may fault and sleep, so
 * names are copied a batch at a time. v2 cgroups are never renamed, so a
 * live child's kernfs name is stable under RCU.
 */
static int jf_cg_readdir(struct file *file, struct dir_context *ctx)
{
	struct cgroup *cgrp = inode_cgroup(file_inode(file));
	struct cg_cursor *cur = file->private_data;
	struct cg_name *batch;
	unsigned int n, i;
	bool more = true;

	if (!dir_emit_dots(file, ctx))
		return 0;
	if (ctx->pos == 2) {
		if (!dir_emit(ctx, STAT_NAME, strlen(STAT_NAME), 2, DT_REG))
			return 0;
		ctx->pos++;
	}
	if (cur->pos != ctx->pos)
		cursor_set(cur, ctx->pos, NULL);	/* a seek */
	batch = kmalloc_array(BATCH, sizeof(*batch), GFP_KERNEL);
	if (!batch)
		return -ENOMEM;
	do {
		n = cg_children(cgrp, cur->last, ctx->pos - 3, batch);
		for (i = 0; i < n; i++) {
			more = dir_emit(ctx, batch[i].name, strlen(batch[i].name), 3, DT_DIR);
			if (!more)
				break;
			ctx->pos++;
			cursor_set(cur, ctx->pos, batch[i].cgrp);
			batch[i].cgrp = NULL;
		}
		for (; i < n; i++)
			if (batch[i].cgrp)
				cgroup_put(batch[i].cgrp);
	} while (more && n == BATCH);
	kfree(batch);
	return 0;
}

static const struct inode_operations jf_cg_dir_iops = {
	.lookup = jf_cg_lookup,
};

static const struct file_operations jf_cg_dir_fops = {
	.open = jf_cg_dir_open,
	.release = jf_cg_dir_release,
	.read = generic_read_dir,
	.iterate_shared = jf_cg_readdir,
	.llseek = generic_file_llseek,
};

/* ---- /proc/energy/cgroupns/<ns> and the link /proc/energy/cgroup ---- */

/* Only the reader's own namespace is there. */
static struct dentry *jf_cg_ns_lookup(struct inode *dir, struct dentry *dentry,
				      unsigned int flags)
{
	struct cgroup_namespace *ns = reader_ns();
	struct cgroup *root = ns->root_cset->dfl_cgrp;
	struct inode *inode;
	unsigned int inum;

	if (kstrtouint(dentry->d_name.name, 10, &inum) || inum != ns->ns.inum)
		return ERR_PTR(-ENOENT);
	cgroup_get(root);
	inode = cg_inode(dir->i_sb, root, true);
	return inode ? d_splice_alias(inode, dentry) : ERR_PTR(-ENOMEM);
}

static int jf_cg_ns_readdir(struct file *file, struct dir_context *ctx)
{
	char name[16];
	int len;

	if (!dir_emit_dots(file, ctx))
		return 0;
	if (ctx->pos == 2) {
		len = snprintf(name, sizeof(name), "%u", reader_ns()->ns.inum);
		if (!dir_emit(ctx, name, len, 2, DT_DIR))
			return 0;
		ctx->pos++;
	}
	return 0;
}

const struct inode_operations jf_cg_ns_iops = {
	.lookup = jf_cg_ns_lookup,
};

const struct file_operations jf_cg_ns_fops = {
	.read = generic_read_dir,
	.iterate_shared = jf_cg_ns_readdir,
	.llseek = generic_file_llseek,
};

static const char *jf_cg_get_link(struct dentry *dentry, struct inode *inode,
				  struct delayed_call *done)
{
	char *buf = kasprintf(dentry ? GFP_KERNEL : GFP_ATOMIC, "cgroupns/%u",
			      reader_ns()->ns.inum);

	if (!buf)
		return dentry ? ERR_PTR(-ENOMEM) : ERR_PTR(-ECHILD);
	set_delayed_call(done, kfree_link, buf);
	return buf;
}

const struct inode_operations jf_cg_link_iops = {
	.get_link = jf_cg_get_link,
};
