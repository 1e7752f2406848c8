// SPDX-License-Identifier: GPL-2.0
/*
 * joulesfs: the per-pid energy files. An out-of-tree module cannot add to
 * /proc/<pid>/ (fs/proc/base.c is static), so joules creates an empty
 * directory /proc/energy and serves a small pseudo filesystem there, like
 * binfmt_misc on /proc/sys/fs/binfmt_misc; the installed udev rule mounts
 * it when the module loads:
 *
 *   /proc/energy/<tgid>                 a process (all its threads, living
 *                                       and exited): a file, cat(1) reads it
 *   /proc/energy/threads/<tgid>/<tid>   one thread: a file
 *   /proc/energy/self                   -> <tgid> of the reader
 *   /proc/energy/thread-self            -> threads/<tgid>/<tid> of the reader
 *   /proc/energy/cgroup/<path>/energy.stat  a cgroup (v2), with its
 *                                       descendants (fs_cgroup.c);
 *                                       cgroup -> cgroupns/<reader's cgroup ns>
 *
 * Every path is an ordinary file, directory or link. Pids, in names and in
 * the files, are those of the pid namespace of whoever mounted it, as in
 * /proc; uids are printed in the reader's user namespace. Only the task's
 * owner and root may read a file (perm.c: the /proc/<pid>/io rule). The
 * mount takes proc's hidepid= and gid= options, at mount and remount; an
 * option not given follows the mounter's /proc (held) at each access. A name
 * stays in the dentry cache while its task lives and the reader may see
 * it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/fs_parser.h>
#include <linux/magic.h>
#include <linux/module.h>
#include <linux/namei.h>
#include <linux/pid_namespace.h>
#include <linux/proc_fs.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "compat.h"
#include "fs.h"
#include "fs_cgroup.h"
#include "fs_inode.h"
#include "perm.h"
#include "tasks.h"
#include "totals.h"
#include "worker.h"

#define JOULESFS_MAGIC 0x4a4f554c	/* "JOUL" */

static struct proc_dir_entry *mount_point;

static const struct inode_operations jf_root_iops, jf_threads_iops, jf_tgdir_iops;
static const struct file_operations jf_root_fops, jf_threads_fops, jf_tgdir_fops;

/* The pid an inode stands for lives in i_private (a counted reference). */
static inline struct pid *inode_pid(struct inode *inode)
{
	return inode->i_private;
}

/* The hidepid= and gid= in force for one reader's access. */
struct jf_opts {
	int hidepid;
	kgid_t gid;
};

/*
 * The mount's options, and for those it was not given the mounter's /proc
 * as it is now (remounted or not). No path walk: a reader chooses its own
 * root, and a walk from inside a joulesfs operation could come back into
 * joulesfs. Safe in RCU walk: the procfs superblock is held by the mount.
 */
static void jf_opts(struct super_block *sb, struct jf_opts *o)
{
	struct jf_info *fi = sb_info(sb);
	/* Pairs with jf_reconfigure(): a set bit's value is there. */
	unsigned int set = smp_load_acquire(&fi->set);

	if (fi->proc.dentry) {
		struct proc_fs_info *pi = proc_sb_info(fi->proc.dentry->d_sb);

		o->hidepid = READ_ONCE(pi->hide_pid);
		o->gid = KGIDT_INIT(READ_ONCE(pi->pid_gid.val));
	} else {
		/* Every option was given at mount: these are not read. */
		o->hidepid = HIDEPID_INVISIBLE;
		o->gid = INVALID_GID;
	}
	if (set & JF_SET_HIDEPID)
		o->hidepid = READ_ONCE(fi->hidepid);
	if (set & JF_SET_GID)
		o->gid = KGIDT_INIT(READ_ONCE(fi->gid.val));
}

/*
 * May the current reader see t at all (hidepid at or above level)? As
 * proc's has_pid_permissions(): ptraceable checks everyone, gid= exempts
 * from the other levels. Not about t's content: that is joules_may_read()
 * at open and read.
 */
static bool jf_visible(const struct jf_opts *o, struct task_struct *t, int level)
{
	struct joules_reader r;

	if (o->hidepid != HIDEPID_NOT_PTRACEABLE) {
		if (o->hidepid < level)
			return true;
		if (in_group_p(o->gid))
			return true;
	}
	joules_reader_current(&r);
	return joules_may_read(t, &r) && joules_lsm_may_read(t);
}

static const struct constant_table jf_hidepid_names[] = {
	{ "off", HIDEPID_OFF },
	{ "noaccess", HIDEPID_NO_ACCESS },
	{ "invisible", HIDEPID_INVISIBLE },
	{ "ptraceable", HIDEPID_NOT_PTRACEABLE },
	{}
};

/* As proc shows them, but only those given: the others are /proc's. */
static int jf_show_options(struct seq_file *m, struct dentry *root)
{
	struct jf_info *fi = sb_info(root->d_sb);
	/* Pairs with jf_reconfigure(), as in jf_opts(). */
	unsigned int set = smp_load_acquire(&fi->set);
	const struct constant_table *c = jf_hidepid_names;
	int hidepid = READ_ONCE(fi->hidepid);

	if (set & JF_SET_GID)
		seq_printf(m, ",gid=%u", from_kgid_munged(&init_user_ns,
							   KGIDT_INIT(READ_ONCE(fi->gid.val))));
	if (set & JF_SET_HIDEPID) {
		while (c->name && c->value != hidepid)
			c++;
		seq_printf(m, ",hidepid=%s", c->name ? c->name : "?");
	}
	return 0;
}

static const struct super_operations jf_sops = {
	.alloc_inode = jf_alloc_inode,
	.free_inode = jf_free_inode,
	.statfs = simple_statfs,
	.drop_inode = jl_drop_inode,
	.evict_inode = jf_evict_inode,
	.show_options = jf_show_options,
};

/*
 * A pid dentry is good while its task is alive (zombies included) and,
 * under hidepid, while the reader may see it: dentries are shared by all
 * readers, so a name another reader looked up is checked again here. A
 * file read again and again is looked up once, not on every open. The
 * inode's owner follows the task's effective ids, like /proc/<pid>.
 * Safe in RCU walk: the inode and its pid outlive the walk (the inode is
 * freed after a grace period and holds its pid until then), and the task
 * is not dereferenced but for its credentials, under RCU.
 */
static int jf_pid_revalidate(struct dentry *dentry, struct inode *inode,
			     unsigned int flags)
{
	struct task_struct *t;
	const struct cred *c;
	struct jf_opts o;
	int alive = 0;

	rcu_read_lock();
	t = pid_task(inode_pid(inode), PIDTYPE_PID);
	if (t) {
		c = __task_cred(t);
		WRITE_ONCE(inode->i_uid, c->euid);
		WRITE_ONCE(inode->i_gid, c->egid);
		alive = 1;
	}
	rcu_read_unlock();
	if (!alive)
		return 0;
	jf_opts(dentry->d_sb, &o);
	if (o.hidepid < HIDEPID_INVISIBLE)
		return 1;
	/* hidepid: the permission check may sleep. */
	if (flags & LOOKUP_RCU)
		return -ECHILD;
	t = get_pid_task(inode_pid(inode), PIDTYPE_PID);
	if (!t)
		return 0;
	alive = jf_visible(&o, t, HIDEPID_INVISIBLE);
	put_task_struct(t);
	return alive;
}

/* Dentries whose task is gone are not kept once unused. */
static bool jf_pid_drop(const struct dentry *dentry, struct inode *inode)
{
	return !pid_has_task(inode_pid(inode), PIDTYPE_PID);
}

static void jf_pid_release(void *pid)
{
	put_pid(pid);
}

/* Inodes that stand for a pid (a counted reference in i_private). */
static const struct jf_kind jf_pid_kind = {
	.release = jf_pid_release,
	.revalidate = jf_pid_revalidate,
	.drop = jf_pid_drop,
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

/*
 * t's key: value lines (process: its whole thread group), pids as seen in
 * ns. The caller has decided that the reader may see them: joulesfs with
 * joules_may_read(), /proc/<pid>/energy of a patched kernel with the
 * kernel's own rule.
 */
int joules_print_stats(struct seq_file *m, struct task_struct *t, bool process,
		       struct pid_namespace *ns)
{
	struct joules_stats st;
	int err;

	err = joules_task_stats(t, process, ns, seq_user_ns(m), &st);
	if (err)
		return err;
	joules_stats_lag(&st, jf_lag_ms(m));
	seq_put_decimal_ll(m, "pid: ", st.pid);
	seq_put_decimal_ll(m, "\ntgid: ", st.tgid);
	seq_puts(m, "\ncomm: ");
	seq_puts(m, st.comm);
	if (process)
		seq_put_decimal_ull(m, "\nthreads: ", st.nr_threads);
	seq_puts(m, st.exited ? "\nstate: exited\n" : "\nstate: alive\n");
	jf_print_energy(m, &st);
	return 0;
}

/* A process file stands for its pid's thread group, a thread file for one task. */
static struct task_struct *jf_task(struct inode *inode, bool process)
{
	return get_pid_task(inode_pid(inode), process ? PIDTYPE_TGID : PIDTYPE_PID);
}

/* An open per-pid file, and what the LSMs were last asked about. */
struct jf_file {
	struct inode *inode;
	struct joules_verdict v;
};

/* What one read of a file needs under the task's lock. */
struct jf_read {
	struct seq_file *m;
	struct pid_namespace *ns;
	bool process;
};

static int jf_read_task(struct task_struct *t, void *arg)
{
	struct jf_read *a = arg;
	struct joules_reader r;

	joules_reader_current(&r);
	return joules_may_read(t, &r) ?
		joules_print_stats(a->m, t, a->process, a->ns) : -EACCES;
}

/*
 * The rule is checked at each read; the LSMs' verdict holds while the
 * task runs the program, with the credentials, it was asked about, and
 * is asked again after an exec or a change of credentials
 * (joules_read_judged()), as /proc/<pid>/io asks at each read.
 * Serialised per file by the seq_file's lock.
 */
static int jf_show(struct seq_file *m, bool process)
{
	struct jf_file *jf = m->private;
	struct jf_read a = {
		.m = m,
		.ns = sb_info(jf->inode->i_sb)->ns,
		.process = process,
	};
	struct task_struct *t;
	int err;

	t = jf_task(jf->inode, process);
	if (!t)
		return -ESRCH;
	err = joules_read_judged(t, &jf->v, jf_read_task, &a);
	put_task_struct(t);
	return err;
}

static int jf_show_process(struct seq_file *m, void *v)
{
	return jf_show(m, true);
}

static int jf_show_thread(struct seq_file *m, void *v)
{
	return jf_show(m, false);
}

/* Refused at open already, so that a reader learns it before reading. */
static int jf_open(struct inode *inode, struct file *file, bool process)
{
	struct joules_reader r;
	struct task_struct *t;
	struct jf_file *jf;
	int err = -EACCES;

	jf = kzalloc(sizeof(*jf), GFP_KERNEL);
	if (!jf)
		return -ENOMEM;
	jf->inode = inode;
	t = jf_task(inode, process);
	if (!t) {
		kfree(jf);
		return -ESRCH;
	}
	joules_reader_current(&r);
	if (joules_may_read(t, &r))
		err = joules_lsm_verdict(t, &jf->v);
	put_task_struct(t);
	if (!err) {
		err = single_open(file, process ? jf_show_process : jf_show_thread, jf);
		if (err)
			joules_verdict_put(&jf->v);
	}
	if (err)
		kfree(jf);
	return err;
}

static int jf_open_process(struct inode *inode, struct file *file)
{
	return jf_open(inode, file, true);
}

static int jf_open_thread(struct inode *inode, struct file *file)
{
	return jf_open(inode, file, false);
}

static int jf_release(struct inode *inode, struct file *file)
{
	struct jf_file *jf = ((struct seq_file *)file->private_data)->private;

	joules_verdict_put(&jf->v);
	kfree(jf);
	return single_release(inode, file);
}

static const struct file_operations jf_process_fops = {
	.open = jf_open_process,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = jf_release,
};

static const struct file_operations jf_thread_fops = {
	.open = jf_open_thread,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = jf_release,
};

/*
 * The pid numbered nr in the mount's namespace, if it has a task of type
 * (PIDTYPE_TGID: a process); a counted pid and task, or NULL.
 */
static struct pid *jf_find(struct super_block *sb, int nr, enum pid_type type,
			   struct task_struct **tp)
{
	struct task_struct *t = NULL;
	struct pid *pid;

	rcu_read_lock();
	pid = find_pid_ns(nr, sb_info(sb)->ns);
	if (pid)
		t = pid_task(pid, type);
	if (t) {
		get_task_struct(t);
		get_pid(pid);
	}
	rcu_read_unlock();
	*tp = t;
	return t ? pid : NULL;
}

/* A pid file or directory for lookup(); its task is put here. */
static struct dentry *jf_splice_pid(struct dentry *dentry, struct pid *pid,
				    struct task_struct *t, umode_t mode,
				    const struct inode_operations *iops,
				    const struct file_operations *fops)
{
	struct super_block *sb = dentry->d_sb;
	struct inode *inode;
	struct jf_opts o;

	jf_opts(sb, &o);
	if (!jf_visible(&o, t, HIDEPID_INVISIBLE)) {
		put_task_struct(t);
		put_pid(pid);
		return ERR_PTR(-ENOENT);
	}
	inode = jf_inode(sb, mode, &jf_pid_kind, pid, t);
	put_task_struct(t);
	if (!inode)
		return ERR_PTR(-ENOMEM);
	if (iops)
		inode->i_op = iops;
	inode->i_fop = fops;
	if (S_ISDIR(mode))
		set_nlink(inode, 2);
	return d_splice_alias(inode, dentry);
}

/* ---- /proc/energy/threads/<tgid>/<tid> ---- */

static struct dentry *jf_tgdir_lookup(struct inode *dir, struct dentry *dentry,
				      unsigned int flags)
{
	struct task_struct *leader, *t;
	struct pid *pid;
	int nr = name_to_nr(&dentry->d_name);
	bool same;

	if (nr < 0)
		return ERR_PTR(-ENOENT);
	leader = get_pid_task(inode_pid(dir), PIDTYPE_TGID);
	if (!leader)
		return ERR_PTR(-ENOENT);
	pid = jf_find(dir->i_sb, nr, PIDTYPE_PID, &t);
	same = pid && same_thread_group(t, leader);
	put_task_struct(leader);
	if (!same) {
		if (pid) {
			put_task_struct(t);
			put_pid(pid);
		}
		return ERR_PTR(-ENOENT);
	}
	return jf_splice_pid(dentry, pid, t, S_IFREG | 0444, NULL, &jf_thread_fops);
}

/*
 * The thread at position index of leader's group, with a reference; the
 * thread list is walked under RCU, never while emitting (dir_emit() copies
 * to user space and may fault and sleep).
 */
static struct task_struct *nth_thread(struct task_struct *leader, loff_t index)
{
	struct task_struct *t, *found = NULL;
	loff_t i = 0;

	rcu_read_lock();
	if (pid_alive(leader)) {
		for_each_thread(leader, t) {
			if (i++ == index) {
				found = get_task_struct(t);
				break;
			}
		}
	}
	rcu_read_unlock();
	return found;
}

/* The thread after t in its group, or NULL at the end (or if t is gone). */
static struct task_struct *next_thread_ref(struct task_struct *t)
{
	struct task_struct *n = NULL;

	rcu_read_lock();
	if (pid_alive(t)) {
		n = next_thread(t);
		if (thread_group_leader(n))
			n = NULL;	/* wrapped around */
		else
			get_task_struct(n);
	}
	rcu_read_unlock();
	return n;
}

/* Position: 0 and 1 are dots, then 2 + the thread's index in its group. */
static int jf_tgdir_readdir(struct file *file, struct dir_context *ctx)
{
	struct inode *dir = file_inode(file);
	struct pid_namespace *ns = sb_info(dir->i_sb)->ns;
	struct task_struct *leader, *t, *n;

	if (!dir_emit_dots(file, ctx))
		return 0;
	leader = get_pid_task(inode_pid(dir), PIDTYPE_TGID);
	if (!leader)
		return 0;
	/* Threads come and go: resume by position, then follow the list. */
	for (t = nth_thread(leader, ctx->pos - 2); t; t = n) {
		char name[12];
		int nr = task_pid_nr_ns(t, ns), len;

		if (nr > 0) {
			len = snprintf(name, sizeof(name), "%d", nr);
			if (!dir_emit(ctx, name, len, 1, DT_REG)) {
				put_task_struct(t);
				break;
			}
		}
		ctx->pos++;
		n = next_thread_ref(t);
		put_task_struct(t);
	}
	put_task_struct(leader);
	return 0;
}

/* hidepid=noaccess: another user's thread list is not listed or opened. */
static int jf_tgdir_open(struct inode *inode, struct file *file)
{
	struct task_struct *t = get_pid_task(inode_pid(inode), PIDTYPE_TGID);
	struct jf_opts o;
	bool ok;

	if (!t)
		return -ESRCH;
	jf_opts(inode->i_sb, &o);
	ok = jf_visible(&o, t, HIDEPID_NO_ACCESS);
	put_task_struct(t);
	return ok ? 0 : -EACCES;
}

static const struct inode_operations jf_tgdir_iops = {
	.lookup = jf_tgdir_lookup,
};

static const struct file_operations jf_tgdir_fops = {
	.open = jf_tgdir_open,
	.read = generic_read_dir,
	.iterate_shared = jf_tgdir_readdir,
	.llseek = generic_file_llseek,
};

/* ---- the process lists: /proc/energy and /proc/energy/threads ---- */

/*
 * Emit every process the reader may see, as regular files (the root) or
 * directories of threads (threads/), from position first + pid number on.
 * The pid is found under RCU; the visibility check and dir_emit() run
 * outside it.
 */
static int jf_emit_processes(struct file *file, struct dir_context *ctx,
			     loff_t first, unsigned int type)
{
	struct super_block *sb = file_inode(file)->i_sb;
	struct pid_namespace *ns = sb_info(sb)->ns;
	struct task_struct *t;
	struct jf_opts o;
	struct pid *pid;
	int nr = ctx->pos - first;

	jf_opts(sb, &o);
	for (;;) {
		char name[12];
		bool show;
		int len;

		rcu_read_lock();
		pid = find_ge_pid(nr, ns);
		if (!pid) {
			rcu_read_unlock();
			break;
		}
		nr = pid_nr_ns(pid, ns);
		t = pid_task(pid, PIDTYPE_TGID);
		if (t)
			get_task_struct(t);
		rcu_read_unlock();
		if (t) {
			show = jf_visible(&o, t, HIDEPID_INVISIBLE);
			put_task_struct(t);
			if (show) {
				len = snprintf(name, sizeof(name), "%d", nr);
				ctx->pos = nr + first;
				if (!dir_emit(ctx, name, len, nr + first, type))
					return 0;
			}
		}
		nr++;
	}
	ctx->pos = PID_MAX_LIMIT + first;
	return 0;
}

static struct dentry *jf_threads_lookup(struct inode *dir, struct dentry *dentry,
					unsigned int flags)
{
	struct task_struct *t;
	struct pid *pid;
	int nr = name_to_nr(&dentry->d_name);

	if (nr < 0)
		return ERR_PTR(-ENOENT);
	pid = jf_find(dir->i_sb, nr, PIDTYPE_TGID, &t);
	if (!pid)
		return ERR_PTR(-ENOENT);
	return jf_splice_pid(dentry, pid, t, S_IFDIR | 0555, &jf_tgdir_iops,
			     &jf_tgdir_fops);
}

static int jf_threads_readdir(struct file *file, struct dir_context *ctx)
{
	if (!dir_emit_dots(file, ctx))
		return 0;
	return jf_emit_processes(file, ctx, 2, DT_DIR);
}

static const struct inode_operations jf_threads_iops = {
	.lookup = jf_threads_lookup,
};

static const struct file_operations jf_threads_fops = {
	.read = generic_read_dir,
	.iterate_shared = jf_threads_readdir,
	.llseek = generic_file_llseek,
};

/* self -> <tgid>, thread-self -> threads/<tgid>/<tid>, in the mount's ns. */
static const char *jf_get_link(struct dentry *dentry, struct inode *inode,
			       struct delayed_call *done, bool thread)
{
	struct pid_namespace *ns = sb_info(inode->i_sb)->ns;
	pid_t tgid = task_tgid_nr_ns(current, ns);
	pid_t tid = task_pid_nr_ns(current, ns);
	gfp_t gfp = dentry ? GFP_KERNEL : GFP_ATOMIC;
	char *name;

	if (!tgid || !tid)
		return ERR_PTR(-ENOENT);
	if (thread)
		name = kasprintf(gfp, "threads/%d/%d", tgid, tid);
	else
		name = kasprintf(gfp, "%d", tgid);
	if (!name)
		return dentry ? ERR_PTR(-ENOMEM) : ERR_PTR(-ECHILD);
	set_delayed_call(done, kfree_link, name);
	return name;
}

static const char *jf_self_link(struct dentry *dentry, struct inode *inode,
				struct delayed_call *done)
{
	return jf_get_link(dentry, inode, done, false);
}

static const char *jf_thread_self_link(struct dentry *dentry, struct inode *inode,
				       struct delayed_call *done)
{
	return jf_get_link(dentry, inode, done, true);
}

static const struct inode_operations jf_self_iops = {
	.get_link = jf_self_link,
};

static const struct inode_operations jf_thread_self_iops = {
	.get_link = jf_thread_self_link,
};

/* Names in the root that are not pids. */
static const struct {
	const char *name;
	unsigned int type;
	const struct inode_operations *iops;
} jf_fixed[] = {
	{ "self", DT_LNK, &jf_self_iops },
	{ "thread-self", DT_LNK, &jf_thread_self_iops },
	{ "threads", DT_DIR, &jf_threads_iops },
	{ "cgroup", DT_LNK, &jf_cg_link_iops },
	{ "cgroupns", DT_DIR, &jf_cg_ns_iops },
};

static struct dentry *jf_root_lookup(struct inode *dir, struct dentry *dentry,
				     unsigned int flags)
{
	struct super_block *sb = dir->i_sb;
	struct task_struct *t;
	struct inode *inode;
	struct pid *pid;
	unsigned int i;
	int nr;

	for (i = 0; i < ARRAY_SIZE(jf_fixed); i++) {
		if (strcmp(dentry->d_name.name, jf_fixed[i].name))
			continue;
		inode = jf_inode(sb, jf_fixed[i].type == DT_DIR ? S_IFDIR | 0555 :
				 S_IFLNK | 0777, NULL, NULL, NULL);
		if (!inode)
			return ERR_PTR(-ENOMEM);
		inode->i_op = jf_fixed[i].iops;
		if (jf_fixed[i].type == DT_DIR) {
			inode->i_fop = jf_fixed[i].iops == &jf_cg_ns_iops ?
				       &jf_cg_ns_fops : &jf_threads_fops;
			set_nlink(inode, 2);
		}
		return d_splice_alias(inode, dentry);
	}
	nr = name_to_nr(&dentry->d_name);
	if (nr < 0)
		return ERR_PTR(-ENOENT);
	/* Processes only, named by their tgid (the thread group leader). */
	pid = jf_find(sb, nr, PIDTYPE_TGID, &t);
	if (!pid)
		return ERR_PTR(-ENOENT);
	return jf_splice_pid(dentry, pid, t, S_IFREG | 0444, NULL, &jf_process_fops);
}

/* Position: 0 and 1 are dots, then the fixed names, then first + pid. */
static int jf_root_readdir(struct file *file, struct dir_context *ctx)
{
	const loff_t first = 2 + ARRAY_SIZE(jf_fixed);

	if (!dir_emit_dots(file, ctx))
		return 0;
	for (; ctx->pos < first; ctx->pos++) {
		const char *name = jf_fixed[ctx->pos - 2].name;

		if (!dir_emit(ctx, name, strlen(name), 2, jf_fixed[ctx->pos - 2].type))
			return 0;
	}
	return jf_emit_processes(file, ctx, first, DT_REG);
}

static const struct inode_operations jf_root_iops = {
	.lookup = jf_root_lookup,
};

static const struct file_operations jf_root_fops = {
	.read = generic_read_dir,
	.iterate_shared = jf_root_readdir,
	.llseek = generic_file_llseek,
};

/* ---- mounting ---- */

enum { OPT_HIDEPID, OPT_GID };

static const struct fs_parameter_spec jf_params[] = {
	fsparam_string("hidepid", OPT_HIDEPID),
	fsparam_u32("gid", OPT_GID),
	{}
};

static int jf_parse_param(struct fs_context *fc, struct fs_parameter *param)
{
	struct jf_info *fi = fc->fs_private;
	struct fs_parse_result res;
	int opt, v;

	opt = fs_parse(fc, jf_params, param, &res);
	if (opt < 0)
		return opt;
	if (opt == OPT_GID) {
		fi->gid = make_kgid(current_user_ns(), res.uint_32);
		if (!gid_valid(fi->gid))
			return invalfc(fc, "gid %u is not mapped", res.uint_32);
		fi->set |= JF_SET_GID;
		return 0;
	}
	/* As proc: a number (0, 1, 2, 4) or a name. */
	if (!kstrtoint(param->string, 10, &v)) {
		if (v != HIDEPID_OFF && v != HIDEPID_NO_ACCESS &&
		    v != HIDEPID_INVISIBLE && v != HIDEPID_NOT_PTRACEABLE)
			return invalfc(fc, "hidepid=%s: not 0, 1, 2 or 4", param->string);
	} else {
		v = lookup_constant(jf_hidepid_names, param->string, -1);
		if (v < 0)
			return invalfc(fc, "hidepid=%s: not off, noaccess, invisible or ptraceable",
				       param->string);
	}
	fi->hidepid = v;
	fi->set |= JF_SET_HIDEPID;
	return 0;
}

static int jf_fill_super(struct super_block *sb, struct fs_context *fc)
{
	struct inode *root;

	sb->s_blocksize = PAGE_SIZE;
	sb->s_blocksize_bits = PAGE_SHIFT;
	sb->s_magic = JOULESFS_MAGIC;
	sb->s_op = &jf_sops;
	sb->s_time_gran = 1;
	sb->s_fs_info = fc->fs_private;
	fc->fs_private = NULL;
	/* Every name below the root is a pid, a link or threads/. */
	jl_set_default_d_op(sb, &jf_dops);
	root = jf_inode(sb, S_IFDIR | 0555, NULL, NULL, NULL);
	if (!root)
		return -ENOMEM;
	root->i_op = &jf_root_iops;
	root->i_fop = &jf_root_fops;
	set_nlink(root, 3);
	sb->s_root = d_make_root(root);
	return sb->s_root ? 0 : -ENOMEM;
}

/*
 * An option not given follows the mounter's /proc: hold it, or refuse
 * the mount if it is not procfs (nothing to follow, and no default that
 * would hide less than some /proc). A new pid namespace's mounter may
 * still have its parent's /proc: what that hides, it sees hidden.
 */
static int jf_hold_proc(struct fs_context *fc, struct jf_info *fi)
{
	struct path path;

	if (fi->set == JF_SET_ALL)
		return 0;
	if (kern_path("/proc", LOOKUP_FOLLOW, &path))
		return invalfc(fc, "no /proc to follow: give hidepid= and gid=");
	if (path.dentry->d_sb->s_magic != PROC_SUPER_MAGIC) {
		path_put(&path);
		return invalfc(fc, "/proc is not procfs, nothing to follow: give hidepid= and gid=");
	}
	fi->proc = path;
	return 0;
}

/* Unknown mount options fail the mount (fs_context's default). */
static int jf_get_tree(struct fs_context *fc)
{
	int err = jf_hold_proc(fc, fc->fs_private);

	return err ? err : get_tree_nodev(fc, jf_fill_super);
}

static void jf_free_info(struct jf_info *fi)
{
	if (fi) {
		path_put(&fi->proc);
		put_pid_ns(fi->ns);
		kfree(fi);
	}
}

static void jf_free_fc(struct fs_context *fc)
{
	jf_free_info(fc->fs_private);
}

/*
 * As proc_reconfigure(): the options given take effect, the others stay
 * as they were (given, or the mounter's /proc). Under s_umount; readers
 * see the values before the bits that make them count.
 */
static int jf_reconfigure(struct fs_context *fc)
{
	struct jf_info *fi = sb_info(fc->root->d_sb);
	struct jf_info *given = fc->fs_private;

	if (given->set & JF_SET_GID)
		WRITE_ONCE(fi->gid.val, given->gid.val);
	if (given->set & JF_SET_HIDEPID)
		WRITE_ONCE(fi->hidepid, given->hidepid);
	/* The values before the bits: pairs with jf_opts()' acquire. */
	smp_store_release(&fi->set, fi->set | given->set);
	return 0;
}

static const struct fs_context_operations jf_context_ops = {
	.parse_param = jf_parse_param,
	.get_tree = jf_get_tree,
	.reconfigure = jf_reconfigure,
	.free = jf_free_fc,
};

static int jf_init_fs_context(struct fs_context *fc)
{
	struct jf_info *fi = kzalloc(sizeof(*fi), GFP_KERNEL);

	if (!fi)
		return -ENOMEM;
	fi->ns = get_pid_ns(task_active_pid_ns(current));
	fi->hidepid = HIDEPID_OFF;
	fi->gid = GLOBAL_ROOT_GID;
	fc->fs_private = fi;
	fc->ops = &jf_context_ops;
	return 0;
}

static void jf_kill_sb(struct super_block *sb)
{
	struct jf_info *fi = sb_info(sb);

	kill_anon_super(sb);
	/* An RCU-walk revalidate may still read fi (and its procfs's info). */
	synchronize_rcu();
	jf_free_info(fi);
}

static struct file_system_type joules_fs_type = {
	.owner = THIS_MODULE,
	.name = "joulesfs",
	.init_fs_context = jf_init_fs_context,
	.parameters = jf_params,
	.kill_sb = jf_kill_sb,
};
/*
 * No MODULE_ALIAS_FS(): "mount -t joulesfs" in an unprivileged user
 * namespace would make the kernel run modprobe as root and load joules
 * for any user. Mounting needs the module loaded by name first.
 */

int joules_fs_init(void)
{
	int err;

	err = jf_inode_init();
	if (err)
		return err;
	mount_point = proc_create_mount_point("energy");
	if (!mount_point) {
		err = -ENOMEM;
		goto out_inode;
	}
	err = register_filesystem(&joules_fs_type);
	if (err)
		goto out_mount_point;
	return 0;

out_mount_point:
	proc_remove(mount_point);
out_inode:
	jf_inode_exit();
	return err;
}

void joules_fs_exit(void)
{
	unregister_filesystem(&joules_fs_type);
	proc_remove(mount_point);
	jf_inode_exit();
}
