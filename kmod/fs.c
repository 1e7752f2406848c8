// SPDX-License-Identifier: GPL-2.0
/*
 * joulesfs: the per-pid energy files. An out-of-tree module cannot add to
 * /proc/<pid>/ (fs/proc/base.c is static), so joules creates an empty
 * directory /proc/energy and serves a small pseudo filesystem there, like
 * binfmt_misc on /proc/sys/fs/binfmt_misc; the installed udev rule mounts
 * it when the module loads:
 *
 *   /proc/energy/<tgid>             the process (all its threads, living
 *                                   and exited); cat(1) reads it
 *   /proc/energy/<tgid>/task/<tid>  one thread
 *   /proc/energy/self               -> the reader's own process
 *
 * <tgid> is a directory (it holds task/) that also answers read(2) with
 * the process's key: value lines, so `cat /proc/energy/<pid>` works. Names
 * are resolved on lookup in the pid namespace of whoever mounted it; a
 * name stays in the dentry cache while its task lives. Only the task's
 * owner and root may read it (the /proc/<pid>/io rule: energy counters are
 * a side channel).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/module.h>
#include <linux/namei.h>
#include <linux/pid_namespace.h>
#include <linux/proc_fs.h>
#include <linux/sched/task.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "compat.h"
#include "tasks.h"

#define JOULESFS_MAGIC 0x4a4f554c	/* "JOUL" */

enum jf_kind { JF_ROOT, JF_PROC, JF_TASKDIR, JF_THREAD, JF_SELF };

static struct proc_dir_entry *mount_point;

static const struct inode_operations jf_proc_iops, jf_taskdir_iops, jf_root_iops,
	jf_self_iops;
static const struct file_operations jf_proc_fops, jf_taskdir_fops, jf_thread_fops,
	jf_root_fops;
static const struct dentry_operations jf_pid_dops;

static inline struct pid_namespace *sb_ns(struct super_block *sb)
{
	return sb->s_fs_info;
}

/* The pid an inode stands for lives in i_private (a counted reference). */
static inline struct pid *inode_pid(struct inode *inode)
{
	return inode->i_private;
}

/*
 * @pid is a counted reference the inode takes over (put here on failure).
 * Callers take it where the pid is known to be live: under the RCU read
 * lock in which they found it, or from an inode that holds one. A task
 * reference does not keep a pid alive: once the task is reaped its pid is
 * freed after a grace period, task_struct or not.
 */
static struct inode *jf_inode(struct super_block *sb, umode_t mode,
			      struct pid *pid, struct task_struct *t)
{
	struct inode *inode = new_inode(sb);

	if (!inode) {
		put_pid(pid);
		return NULL;
	}
	inode->i_ino = get_next_ino();
	inode->i_mode = mode;
	jl_inode_init_ts(inode);
	inode->i_private = pid;
	if (t) {
		/* Owned by the task's effective ids, like /proc/<pid>. */
		const struct cred *c;

		rcu_read_lock();
		c = __task_cred(t);
		inode->i_uid = c->euid;
		inode->i_gid = c->egid;
		rcu_read_unlock();
	}
	return inode;
}

static void jf_evict(struct inode *inode)
{
	truncate_inode_pages_final(&inode->i_data);
	clear_inode(inode);
	put_pid(inode_pid(inode));
}

static const struct super_operations jf_sops = {
	.statfs = simple_statfs,
	.drop_inode = jl_drop_inode,
	.evict_inode = jf_evict,
};

/*
 * A pid dentry is good while its task is alive (zombies included), so a
 * file read again and again is looked up once, not on every open. The
 * inode's owner follows the task's effective ids, like /proc/<pid>.
 * Safe in RCU walk: the inode and its pid outlive the walk (the inode is
 * freed after a grace period and holds its pid until then), and the task
 * is not dereferenced but for its credentials, under RCU.
 */
static int jf_revalidate(JL_D_REVALIDATE_PROTO(dentry, flags))
{
	struct inode *inode = d_inode_rcu(dentry);
	struct task_struct *t;
	const struct cred *c;
	int alive = 0;

	if (!inode)
		return 0;
	/* Not a pid (the self link): nothing to go stale. */
	if (!inode_pid(inode))
		return 1;
	rcu_read_lock();
	t = pid_task(inode_pid(inode), PIDTYPE_PID);
	if (t) {
		c = __task_cred(t);
		WRITE_ONCE(inode->i_uid, c->euid);
		WRITE_ONCE(inode->i_gid, c->egid);
		alive = 1;
	}
	rcu_read_unlock();
	return alive;
}

/* Dentries whose task is gone are not kept once unused. */
static int jf_delete(const struct dentry *dentry)
{
	struct inode *inode = d_inode(dentry);

	return !inode ||
	       (inode_pid(inode) && !pid_has_task(inode_pid(inode), PIDTYPE_PID));
}

static const struct dentry_operations jf_pid_dops = {
	.d_revalidate = jf_revalidate,
	.d_delete = jf_delete,
};

/* Parse a decimal pid; names like "0", "007" or "1x" are not pids. */
static int name_to_nr(const struct qstr *q)
{
	unsigned int i;
	int nr = 0;

	if (!q->len || q->len > 10 || q->name[0] == '0')
		return -1;
	for (i = 0; i < q->len; i++) {
		if (q->name[i] < '0' || q->name[i] > '9')
			return -1;
		nr = nr * 10 + (q->name[i] - '0');
		if (nr < 0 || nr > PID_MAX_LIMIT)
			return -1;
	}
	return nr;
}

/* Get the task of pid (type: PIDTYPE_TGID for a process, PIDTYPE_PID). */
static struct task_struct *pid_to_task(struct pid *pid, enum pid_type type)
{
	return get_pid_task(pid, type);
}

/* One "key: value" line; cheaper than seq_printf, the file is read often. */
static void put_u64(struct seq_file *m, const char *key, u64 v)
{
	seq_put_decimal_ull(m, key, v);
	seq_putc(m, '\n');
}

static int show_stats(struct seq_file *m, struct task_struct *t, bool process)
{
	static const char *const dnames[JL_NR_DOMAINS] = {
		"energy_pkg_uj: ", "energy_core_uj: ", "energy_dram_uj: ",
		"energy_psys_uj: "
	};
	static const struct {
		const char *name;
		unsigned int feature;
	} hw[] = {
		{ "cycles: ", JL_F_CYCLES },
		{ "instructions: ", JL_F_INSTR },
		{ "cache_misses: ", JL_F_MISSES },
	};
	struct joules_stats st;
	unsigned int i;
	int err;

	if (!joules_may_read(t))
		return -EACCES;
	err = joules_task_stats(t, process, &st);
	if (err)
		return err;
	seq_put_decimal_ll(m, "pid: ", st.pid);
	seq_put_decimal_ll(m, "\ntgid: ", st.tgid);
	seq_puts(m, "\ncomm: ");
	seq_puts(m, st.comm);
	if (process)
		seq_put_decimal_ull(m, "\nthreads: ", st.nr_threads);
	seq_puts(m, st.exited ? "\nstate: exited\n" : "\nstate: alive\n");
	if (!st.source_mask) {
		/* Nothing has charged this task: no meter and no model set. */
		seq_puts(m, "source: none\nenergy_uj: absent\n");
	} else {
		seq_puts(m, st.source_mask == (JOULES_SRC_RAPL | JOULES_SRC_MODEL) ?
			 "source: rapl,model\n" : st.source_mask & JOULES_SRC_RAPL ?
			 "source: rapl\n" : "source: model\n");
		put_u64(m, "energy_uj: ", st.energy_uj);
	}
	for (i = 0; i < JL_NR_DOMAINS; i++)
		if (st.domains & (1U << i))
			put_u64(m, dnames[i], st.domain_uj[i]);
	if (joules_idle_split || st.idle_uj)
		put_u64(m, "idle_uj: ", st.idle_uj);
	put_u64(m, "model_generation: ", st.model_generation);
	put_u64(m, "cpu_time_ns: ", st.cpu_ns);
	/* Counters this task's CPUs had no PMU for are absent, not 0. */
	for (i = 0; i < ARRAY_SIZE(hw); i++) {
		if (st.hw_present & (1U << hw[i].feature)) {
			put_u64(m, hw[i].name, i == 0 ? st.cycles :
					       i == 1 ? st.instructions : st.cache_misses);
		} else {
			seq_puts(m, hw[i].name);
			seq_puts(m, "absent\n");
		}
	}
	put_u64(m, "read_bytes: ", st.read_bytes);
	put_u64(m, "write_bytes: ", st.write_bytes);
	return 0;
}

static int jf_show(struct seq_file *m, void *v)
{
	struct inode *inode = m->private;
	bool process = S_ISDIR(inode->i_mode);
	struct task_struct *t;
	int err;

	t = pid_to_task(inode_pid(inode), process ? PIDTYPE_TGID : PIDTYPE_PID);
	if (!t)
		return -ESRCH;
	err = show_stats(m, t, process);
	put_task_struct(t);
	return err;
}

static int jf_open(struct inode *inode, struct file *file)
{
	bool process = S_ISDIR(inode->i_mode);
	struct task_struct *t;
	bool ok;

	t = pid_to_task(inode_pid(inode), process ? PIDTYPE_TGID : PIDTYPE_PID);
	if (!t)
		return -ESRCH;
	ok = joules_may_read(t);
	put_task_struct(t);
	if (!ok)
		return -EACCES;
	return single_open(file, jf_show, inode);
}

/* ---- /proc/energy/<tgid>/task/<tid> ---- */

static struct dentry *jf_taskdir_lookup(struct inode *dir, struct dentry *dentry,
					unsigned int flags)
{
	struct pid_namespace *ns = sb_ns(dir->i_sb);
	struct task_struct *leader, *t = NULL;
	struct inode *inode = NULL;
	struct pid *pid;
	int nr = name_to_nr(&dentry->d_name);

	if (nr < 0)
		goto out;
	leader = pid_to_task(inode_pid(dir), PIDTYPE_TGID);
	if (!leader)
		goto out;
	rcu_read_lock();
	pid = find_pid_ns(nr, ns);
	if (pid) {
		t = pid_task(pid, PIDTYPE_PID);
		if (t && same_thread_group(t, leader)) {
			get_task_struct(t);
			get_pid(pid);
		} else {
			t = NULL;
		}
	}
	rcu_read_unlock();
	put_task_struct(leader);
	if (!t)
		goto out;
	inode = jf_inode(dir->i_sb, S_IFREG | 0444, pid, t);
	put_task_struct(t);
	if (!inode)
		return ERR_PTR(-ENOMEM);
	inode->i_fop = &jf_thread_fops;
out:
	return d_splice_alias(inode, dentry);
}

static int jf_taskdir_readdir(struct file *file, struct dir_context *ctx)
{
	struct inode *dir = file_inode(file);
	struct pid_namespace *ns = sb_ns(dir->i_sb);
	struct task_struct *leader, *t;
	loff_t i = 2;
	int nr;

	if (!dir_emit_dots(file, ctx))
		return 0;
	leader = pid_to_task(inode_pid(dir), PIDTYPE_TGID);
	if (!leader)
		return 0;
	/* Threads come and go: emit by position, re-walking the list. */
	rcu_read_lock();
	for_each_thread(leader, t) {
		char name[12];
		int len;

		if (i++ < ctx->pos)
			continue;
		nr = task_pid_nr_ns(t, ns);
		if (nr <= 0) {
			ctx->pos++;
			continue;
		}
		len = snprintf(name, sizeof(name), "%d", nr);
		if (!dir_emit(ctx, name, len, 1, DT_REG))
			break;
		ctx->pos++;
	}
	rcu_read_unlock();
	put_task_struct(leader);
	return 0;
}

/* ---- /proc/energy/<tgid> ---- */

static struct dentry *jf_proc_lookup(struct inode *dir, struct dentry *dentry,
				     unsigned int flags)
{
	struct inode *inode = NULL;
	struct task_struct *t;

	if (dentry->d_name.len == 4 && !memcmp(dentry->d_name.name, "task", 4)) {
		t = pid_to_task(inode_pid(dir), PIDTYPE_TGID);
		if (t) {
			inode = jf_inode(dir->i_sb, S_IFDIR | 0555,
					 get_pid(inode_pid(dir)), t);
			put_task_struct(t);
			if (!inode)
				return ERR_PTR(-ENOMEM);
			inode->i_op = &jf_taskdir_iops;
			inode->i_fop = &jf_taskdir_fops;
			set_nlink(inode, 2);
		}
	}
	return d_splice_alias(inode, dentry);
}

static int jf_proc_readdir(struct file *file, struct dir_context *ctx)
{
	if (!dir_emit_dots(file, ctx))
		return 0;
	if (ctx->pos == 2) {
		if (!dir_emit(ctx, "task", 4, 2, DT_DIR))
			return 0;
		ctx->pos++;
	}
	return 0;
}

/* ---- /proc/energy ---- */

static const char *jf_self_get_link(struct dentry *dentry, struct inode *inode,
				    struct delayed_call *done)
{
	struct pid_namespace *ns = sb_ns(inode->i_sb);
	pid_t tgid = task_tgid_nr_ns(current, ns);
	char *name;

	if (!tgid)
		return ERR_PTR(-ENOENT);
	name = kasprintf(dentry ? GFP_KERNEL : GFP_ATOMIC, "%d", tgid);
	if (!name)
		return dentry ? ERR_PTR(-ENOMEM) : ERR_PTR(-ECHILD);
	set_delayed_call(done, kfree_link, name);
	return name;
}

static struct dentry *jf_root_lookup(struct inode *dir, struct dentry *dentry,
				     unsigned int flags)
{
	struct pid_namespace *ns = sb_ns(dir->i_sb);
	struct inode *inode = NULL;
	struct task_struct *t = NULL;
	struct pid *pid;
	int nr;

	if (dentry->d_name.len == 4 && !memcmp(dentry->d_name.name, "self", 4)) {
		inode = jf_inode(dir->i_sb, S_IFLNK | 0777, NULL, NULL);
		if (!inode)
			return ERR_PTR(-ENOMEM);
		inode->i_op = &jf_self_iops;
		return d_splice_alias(inode, dentry);
	}
	nr = name_to_nr(&dentry->d_name);
	if (nr < 0)
		goto out;
	rcu_read_lock();
	pid = find_pid_ns(nr, ns);
	/* Processes only, named by their tgid (the thread group leader). */
	if (pid)
		t = pid_task(pid, PIDTYPE_TGID);
	if (t) {
		get_task_struct(t);
		get_pid(pid);
	}
	rcu_read_unlock();
	if (!t)
		goto out;
	inode = jf_inode(dir->i_sb, S_IFDIR | 0555, pid, t);
	put_task_struct(t);
	if (!inode)
		return ERR_PTR(-ENOMEM);
	inode->i_op = &jf_proc_iops;
	inode->i_fop = &jf_proc_fops;
	set_nlink(inode, 3);
out:
	return d_splice_alias(inode, dentry);
}

/* Position: 0 and 1 are dots, 2 is self, then 3 + pid number. */
static int jf_root_readdir(struct file *file, struct dir_context *ctx)
{
	struct pid_namespace *ns = sb_ns(file_inode(file)->i_sb);
	struct pid *pid;
	int nr;

	if (!dir_emit_dots(file, ctx))
		return 0;
	if (ctx->pos == 2) {
		if (!dir_emit(ctx, "self", 4, 2, DT_LNK))
			return 0;
		ctx->pos++;
	}
	nr = ctx->pos - 3;
	for (;;) {
		char name[12];
		bool leader;
		int len;

		rcu_read_lock();
		pid = find_ge_pid(nr, ns);
		if (!pid) {
			rcu_read_unlock();
			break;
		}
		nr = pid_nr_ns(pid, ns);
		leader = pid_task(pid, PIDTYPE_TGID) != NULL;
		rcu_read_unlock();
		if (leader) {
			len = snprintf(name, sizeof(name), "%d", nr);
			ctx->pos = nr + 3;
			if (!dir_emit(ctx, name, len, nr + 3, DT_DIR))
				return 0;
		}
		nr++;
	}
	ctx->pos = PID_MAX_LIMIT + 3;
	return 0;
}

static const struct inode_operations jf_root_iops = {
	.lookup = jf_root_lookup,
};

static const struct file_operations jf_root_fops = {
	.read = generic_read_dir,
	.iterate_shared = jf_root_readdir,
	.llseek = generic_file_llseek,
};

static const struct inode_operations jf_self_iops = {
	.get_link = jf_self_get_link,
};

static const struct inode_operations jf_proc_iops = {
	.lookup = jf_proc_lookup,
};

/* A directory that also reads as the process's file (see the top). */
static const struct file_operations jf_proc_fops = {
	.open = jf_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.iterate_shared = jf_proc_readdir,
};

static const struct inode_operations jf_taskdir_iops = {
	.lookup = jf_taskdir_lookup,
};

static const struct file_operations jf_taskdir_fops = {
	.read = generic_read_dir,
	.iterate_shared = jf_taskdir_readdir,
	.llseek = generic_file_llseek,
};

static const struct file_operations jf_thread_fops = {
	.open = jf_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
};

static int jf_fill_super(struct super_block *sb, struct fs_context *fc)
{
	struct inode *root;

	sb->s_blocksize = PAGE_SIZE;
	sb->s_blocksize_bits = PAGE_SHIFT;
	sb->s_magic = JOULESFS_MAGIC;
	sb->s_op = &jf_sops;
	sb->s_time_gran = 1;
	sb->s_fs_info = get_pid_ns(task_active_pid_ns(current));
	/* Every name below the root is a pid (or self, or task) that can go. */
	jl_set_default_d_op(sb, &jf_pid_dops);
	root = jf_inode(sb, S_IFDIR | 0555, NULL, NULL);
	if (!root)
		return -ENOMEM;
	root->i_op = &jf_root_iops;
	root->i_fop = &jf_root_fops;
	set_nlink(root, 2);
	sb->s_root = d_make_root(root);
	return sb->s_root ? 0 : -ENOMEM;
}

/* No mount options: an unknown one fails the mount (fs_context's default). */
static int jf_get_tree(struct fs_context *fc)
{
	return get_tree_nodev(fc, jf_fill_super);
}

static const struct fs_context_operations jf_context_ops = {
	.get_tree = jf_get_tree,
};

static int jf_init_fs_context(struct fs_context *fc)
{
	fc->ops = &jf_context_ops;
	return 0;
}

static void jf_kill_sb(struct super_block *sb)
{
	struct pid_namespace *ns = sb_ns(sb);

	kill_anon_super(sb);
	if (ns)
		put_pid_ns(ns);
}

static struct file_system_type joules_fs_type = {
	.owner = THIS_MODULE,
	.name = "joulesfs",
	.init_fs_context = jf_init_fs_context,
	.kill_sb = jf_kill_sb,
};
MODULE_ALIAS_FS("joulesfs");

int joules_fs_init(void)
{
	int err;

	mount_point = proc_create_mount_point("energy");
	if (!mount_point)
		return -ENOMEM;
	err = register_filesystem(&joules_fs_type);
	if (err)
		proc_remove(mount_point);
	return err;
}

void joules_fs_exit(void)
{
	unregister_filesystem(&joules_fs_type);
	proc_remove(mount_point);
}
