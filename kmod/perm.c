// SPDX-License-Identifier: GPL-2.0
/*
 * Who may read what. Energy counters are a side channel (PLATYPUS,
 * CVE-2020-8694), so per-task counters follow the rule of /proc/<pid>/io
 * and node-wide measured energy needs CAP_PERFMON or CAP_SYS_ADMIN, as
 * the kernel's own RAPL counters do. Documentation/admin-guide.rst,
 * "Security model", states the rules for each interface.
 *
 * /proc/<pid>/io asks ptrace_may_access(PTRACE_MODE_READ_FSCREDS), which a
 * module cannot call (not exported), and it ends in the LSM ptrace hook,
 * which a module cannot call either. The LSMs' say comes from the kernel
 * itself (joules_lsm_may_read() below); the rest is stricter where it
 * cannot be equal:
 *  - capabilities count in the initial user namespace only (a user
 *    namespace's root reads only what its ids allow);
 *  - a reader with matching ids must also share the target's mount
 *    namespace: AppArmor and SELinux deny a container (own mount
 *    namespace, own profile) reading the host's tasks of the same uid,
 *    which is what an unconfined reader in another mount namespace is
 *    most likely to be;
 *  - a non-dumpable target (setuid, prctl(PR_SET_DUMPABLE, 0)) is
 *    readable only with CAP_SYS_PTRACE.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cgroup.h>
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <linux/namei.h>
#include <linux/slab.h>
#include <linux/mount.h>
#include <linux/nsproxy.h>
#include <linux/pid_namespace.h>
#include <linux/proc_fs.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/uidgid.h>
#include <linux/workqueue.h>

#include "cgroup.h"
#include "compat.h"
#include "perm.h"

static bool reader_capable(const struct joules_reader *r, int cap)
{
	return r->file ? file_ns_capable(r->file, &init_user_ns, cap) :
			 ns_capable_noaudit(&init_user_ns, cap);
}

/* The reader's and t's ids match as ptrace's read check wants them. */
static bool ids_match(const struct cred *c, struct task_struct *t)
{
	const struct cred *tc;
	bool ok;

	rcu_read_lock();
	tc = __task_cred(t);
	ok = uid_eq(c->fsuid, tc->euid) && uid_eq(c->fsuid, tc->suid) &&
	     uid_eq(c->fsuid, tc->uid) && gid_eq(c->fsgid, tc->egid) &&
	     gid_eq(c->fsgid, tc->sgid) && gid_eq(c->fsgid, tc->gid);
	rcu_read_unlock();
	return ok;
}

/*
 * May the reader read t's counters? Process context. For a decision that
 * holds while the counters are read (no setuid exec in between), call it
 * between joules_read_lock() and joules_read_unlock().
 */
bool joules_may_read(struct task_struct *t, const struct joules_reader *r)
{
	struct mnt_namespace *mine;
	bool ok;

	/*
	 * A task reads its own process; through a socket only if it opened
	 * it itself, as far as ids tell (a setuid program handed another
	 * user's socket does not qualify).
	 */
	if (same_thread_group(t, current) &&
	    (!r->file || (uid_eq(r->cred->fsuid, current_fsuid()) &&
			  gid_eq(r->cred->fsgid, current_fsgid()))))
		return true;
	if (reader_capable(r, CAP_SYS_PTRACE))
		return true;
	if (!ids_match(r->cred, t))
		return false;
	/* current's own nsproxy changes only under current. */
	mine = current->nsproxy ? current->nsproxy->mnt_ns : NULL;
	/* The ids read before the dumpability, as commit_creds() wrote them. */
	smp_rmb();
	task_lock(t);
	ok = jl_dumpable_by_owner(t) && t->nsproxy && mine && t->nsproxy->mnt_ns == mine;
	task_unlock(t);
	return ok;
}

/*
 * What an LSM verdict about t was about: the program its group runs (exec
 * bumps the leader's self_exec_id under exec_update_lock, and de_thread()
 * makes the execing thread the leader) and t's credentials (a new label
 * without an exec: AppArmor's change_profile, SELinux's setcon). Noted
 * under the lock, so that an exec is either before or after it.
 */
static int jl_verdict_note(struct task_struct *t, struct joules_verdict *v)
{
	struct task_struct *leader;
	int err = joules_read_lock(t);

	if (err)
		return err;
	rcu_read_lock();
	leader = READ_ONCE(t->group_leader);
	v->leader = leader;
	v->exec_id = READ_ONCE(leader->self_exec_id);
	rcu_read_unlock();
	v->cred = get_task_cred(t);
	joules_read_unlock(t);
	return 0;
}

/*
 * Ask the LSMs about t for the current task (joules_lsm_may_read()), and
 * note what they were asked about: 0, -EACCES, -ESRCH, or -EINTR. Not
 * under joules_read_lock(); v is released with joules_verdict_put().
 */
int joules_lsm_verdict(struct task_struct *t, struct joules_verdict *v)
{
	int err = jl_verdict_note(t, v);

	if (err)
		return err;
	if (joules_lsm_may_read(t))
		return 0;
	joules_verdict_put(v);
	/*
	 * A task released meanwhile has no /proc/<tid> left to ask about
	 * (proc_ns_get_link() says EACCES then): gone, not refused.
	 */
	return pid_alive(t) ? -EACCES : -ESRCH;
}

/* Under joules_read_lock(t): is t still what the verdict was about? */
bool joules_verdict_holds(struct task_struct *t, const struct joules_verdict *v)
{
	struct task_struct *leader;
	bool same;

	rcu_read_lock();
	leader = READ_ONCE(t->group_leader);
	same = leader == v->leader &&
	       READ_ONCE(leader->self_exec_id) == v->exec_id &&
	       rcu_access_pointer(t->real_cred) == v->cred;
	rcu_read_unlock();
	return same;
}

void joules_verdict_put(struct joules_verdict *v)
{
	if (v->cred)
		put_cred(v->cred);
	v->cred = NULL;
}

/* How often a task that keeps changing is asked about before -EAGAIN. */
#define JOULES_ASK_AGAIN 3

/*
 * read(t, arg) under joules_read_lock(t), while v, the LSMs' verdict, is
 * about t's program and credentials as they are. After an exec or new
 * credentials they are asked again (v replaced), should t keep changing
 * a few times; then -EAGAIN: nothing refused the reader, t changed under
 * it (a daemon dropping privileges after its fork). read() checks the
 * rest of the rule: it may change with the credentials too. v, put or
 * held, is the caller's to put.
 */
int joules_read_judged(struct task_struct *t, struct joules_verdict *v,
		       int (*read)(struct task_struct *t, void *arg), void *arg)
{
	int err, tries = 0;

	for (;;) {
		err = joules_read_lock(t);
		if (err)
			return err;
		if (joules_verdict_holds(t, v)) {
			err = read(t, arg);
			joules_read_unlock(t);
			return err;
		}
		joules_read_unlock(t);
		joules_verdict_put(v);
		if (++tries > JOULES_ASK_AGAIN)
			return -EAGAIN;
		err = joules_lsm_verdict(t, v);
		if (err)
			return err;
	}
}

/* As /proc/<pid>/io: no exec (a setuid one) changes t while it is read. */
int joules_read_lock(struct task_struct *t)
{
	return jl_exec_lock_killable(t->signal);
}

void joules_read_unlock(struct task_struct *t)
{
	jl_exec_unlock(t->signal);
}

/* Node-wide measured energy: as perf and the kernel's RAPL counters. */
bool joules_may_read_node(const struct joules_reader *r)
{
	return reader_capable(r, CAP_PERFMON) || reader_capable(r, CAP_SYS_ADMIN);
}

/* sysfs unpriv_interval_ms (0: every reader live). */
unsigned int joules_unpriv_interval_ms = 1000;
/* The epoch's length in force, as the worker last set it (worker.c). */
unsigned int joules_lag_epoch_ms = 1000;

/*
 * How a reader is shown energy: 0 live, else the epoch (ms) its figures
 * are settled by (worker.c). In RAPL or wall-meter mode a
 * lone task's share is its package's measured energy every tick, the
 * channel (PLATYPUS, CVE-2020-8694) the kernel closed by making powercap's
 * energy_uj root-only: who may read node energy sees it live, others in
 * epochs of unpriv_interval_ms. a and b (a file's or socket's
 * opener and the task reading) must both be such readers; lagged asks for
 * the lagged view anyway (the exporter serving others).
 */
unsigned int joules_reader_lag_ms(const struct joules_reader *a,
				  const struct joules_reader *b, bool lagged)
{
	if (!lagged && (!READ_ONCE(joules_unpriv_interval_ms) ||
			(joules_may_read_node(a) && joules_may_read_node(b))))
		return 0;
	return READ_ONCE(joules_lag_epoch_ms);
}

/* Feeding the node's wall meter: its figures become everyone's energy. */
bool joules_may_feed(const struct joules_reader *r)
{
	return reader_capable(r, CAP_SYS_ADMIN);
}

/*
 * A cgroup's totals hold every task's in it: CAP_PERFMON or CAP_SYS_ADMIN,
 * as node energy, or the owner of the cgroup's directory (a delegated
 * cgroup). Ownership is read from that directory where the reader's mount
 * namespace has it, /sys/fs/cgroup/<path in the reader's cgroup
 * namespace>, and counts only if it is that very cgroup (cgroup2, inode
 * number = cgroup id): kernfs keeps owners private. May sleep.
 */
bool joules_may_read_cgroup(struct cgroup *cgrp, const struct joules_reader *r)
{
	static const char mnt[] = "/sys/fs/cgroup";
	struct inode *inode;
	struct path path;
	bool ok = false;
	char *buf;

	if (joules_may_read_node(r))
		return true;
	buf = kmalloc(PATH_MAX, GFP_KERNEL);
	if (!buf)
		return false;
	memcpy(buf, mnt, sizeof(mnt));
	if (joules_cgroup_path(cgrp, joules_cg_ns_root(), buf + sizeof(mnt) - 1,
			       PATH_MAX - sizeof(mnt) + 1) > 0 &&
	    !kern_path(buf, LOOKUP_FOLLOW, &path)) {
		inode = d_inode(path.dentry);
		ok = inode->i_sb->s_magic == CGROUP2_SUPER_MAGIC &&
		     inode->i_ino == cgroup_id(cgrp) &&
		     uid_eq(inode->i_uid, r->cred->fsuid);
		path_put(&path);
	}
	kfree(buf);
	return ok;
}

/*
 * A procfs of joules' own (no hidepid), where joules_lsm_may_read() asks
 * for what /proc/<pid>/io's check is made on. Its pids are those of the
 * initial pid namespace, whoever loads the module: it is mounted from a
 * kworker, since procfs takes the mounting task's pid namespace.
 */
static struct vfsmount *jl_proc;

static void jl_proc_mount(struct work_struct *w)
{
	struct file_system_type *proc = get_fs_type("proc");

	/* procfs is built in: it has no module reference to put. */
	jl_proc = proc ? kern_mount(proc) : ERR_PTR(-ENODEV);
}

int joules_perm_init(void)
{
	struct work_struct w;

	INIT_WORK_ONSTACK(&w, jl_proc_mount);
	schedule_work(&w);
	flush_work(&w);
	destroy_work_on_stack(&w);
	if (IS_ERR(jl_proc)) {
		pr_err("cannot mount procfs for the LSM check: %ld\n",
		       PTR_ERR(jl_proc));
		return PTR_ERR(jl_proc);
	}
	return 0;
}

void joules_perm_exit(void)
{
	kern_unmount(jl_proc);
}

/*
 * Does the kernel's own check, LSMs included, let the current task read
 * t? /proc/<pid>/io makes ptrace_may_access(PTRACE_MODE_READ_FSCREDS) when
 * read; following the link /proc/<pid>/ns/user makes the very same call
 * (proc_ns_get_link() in fs/proc/namespaces.c), for any task, a zombie or
 * a kernel thread too, and opens no file of the task's: so the link is
 * followed as the reader (O_PATH: a path, no open hook asked) on a procfs
 * of joules' own, and let go. The number is t's if t still has it after:
 * a pid is not given to another task while t holds it.
 * Takes exec_update_lock on some kernels: never between joules_read_lock()
 * and _unlock(), so an exec may come between: callers use
 * joules_lsm_verdict() and check joules_verdict_holds() under the lock.
 * May sleep.
 */
bool joules_lsm_may_read(struct task_struct *t)
{
	struct pid_namespace *ns = proc_sb_info(jl_proc->mnt_sb)->pid_ns;
	char name[32];
	struct file *f;
	pid_t tid;
	bool ok;

	if (same_thread_group(t, current))
		return true;
	rcu_read_lock();
	tid = task_pid_nr_ns(t, ns);
	rcu_read_unlock();
	if (!tid)
		return false;
	snprintf(name, sizeof(name), "%d/ns/user", tid);
	f = file_open_root_mnt(jl_proc, name, O_PATH, 0);
	if (IS_ERR(f))
		return false;
	fput(f);
	rcu_read_lock();
	ok = task_pid_nr_ns(t, ns) == tid;
	rcu_read_unlock();
	return ok;
}

/* The reader of a file (or a sysfs attribute): the current task. */
void joules_reader_current(struct joules_reader *r)
{
	r->cred = current_cred();
	r->file = NULL;
}
