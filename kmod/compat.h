/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every difference between the kernels joules builds against in one
 * place. Each guard names the upstream change that made it.
 *
 * Compile-tested here: Debian's 6.1 and 6.12 (plain and PREEMPT_RT), a
 * 6.12 PREEMPT_RT built from linux-source-6.12 and a 7.2 built from
 * linux-source-7.2: both sides of a guard between 6.12 and 7.2 are
 * compiled. A guard for a version outside those is written from the
 * upstream change and marked "not compile-tested here"; an operator on
 * such a kernel is the first to build it.
 */
#ifndef JOULES_COMPAT_H
#define JOULES_COMPAT_H

#include <linux/version.h>

#define JL_KV(a, b) (LINUX_VERSION_CODE >= KERNEL_VERSION(a, b, 0))

/* ---- scheduler tracepoints ---- */

/*
 * sched_switch gained prev_state in 5.18 (fa2c3254d7cf, "sched/tracing:
 * Don't re-read p->state when emitting sched_switch event"); before it the
 * state is read from the task, whose field was renamed to __state in 5.14
 * (2f064a59a11f, "sched: Change task_struct::state"; 5.14-5.17 not
 * compile-tested here, nor is 5.10-5.13).
 */
#if JL_KV(5, 18)
#define JL_TP_SWITCH_PROTO                                                  \
	void *data, bool preempt, struct task_struct *prev,                 \
		struct task_struct *next, unsigned int prev_state
#define jl_prev_state(prev) ((void)(prev), prev_state)
#elif JL_KV(5, 14)
#define JL_TP_SWITCH_PROTO                                                  \
	void *data, bool preempt, struct task_struct *prev,                 \
		struct task_struct *next
#define jl_prev_state(prev) READ_ONCE((prev)->__state)
#else
#define JL_TP_SWITCH_PROTO                                                  \
	void *data, bool preempt, struct task_struct *prev,                 \
		struct task_struct *next
#define jl_prev_state(prev) READ_ONCE((prev)->state)
#endif

/*
 * sched_process_exit gained group_dead in 6.16 ("sched: Add group_dead to
 * sched_process_exit tracepoint"); a probe of the wrong type is an
 * indirect call kCFI traps. Its new side is compiled on 7.2.
 */
#if JL_KV(6, 16)
#define JL_TP_EXIT_PROTO(t) void *data, struct task_struct *t, bool group_dead
#else
#define JL_TP_EXIT_PROTO(t) void *data, struct task_struct *t
#endif

/*
 * task_newtask's clone_flags became u64 in 6.18 ("copy_process: pass
 * clone_flags as u64 across calltree"); same width on x86-64, but kCFI
 * hashes the probe's type. Its new side is compiled on 7.2.
 */
#if JL_KV(6, 18)
#define JL_TP_NEWTASK_PROTO(t) void *data, struct task_struct *t, u64 clone_flags
#else
#define JL_TP_NEWTASK_PROTO(t)                                              \
	void *data, struct task_struct *t, unsigned long clone_flags
#endif

/*
 * A tracepoint's probes ran with preemption off until tracepoints came to
 * be guarded by SRCU-fast instead ("tracing: Guard __DECLARE_TRACE() use
 * of __DO_TRACE_CALL() with SRCU-fast", after 6.12; 7.2's
 * include/linux/tracepoint.h): there, only the kernel's own trace events
 * disable it themselves. The hooks other than sched_switch (which runs
 * under the runqueue lock) rely on it: per-CPU data, a pool sized by
 * CPUs, RCU-protected lookups. They take it themselves on every kernel;
 * on the older ones it nests.
 */
#define jl_probe_enter() preempt_disable()
#define jl_probe_exit() preempt_enable()
/* In the notrace probes (the socket ones, on every send and receive). */
#define jl_probe_enter_notrace() preempt_disable_notrace()
#define jl_probe_exit_notrace() preempt_enable_notrace()

/*
 * Socket byte counts: the sock_send_length and sock_recv_length events
 * (include/trace/events/sock.h, fired from sock_sendmsg_nosec() and
 * sock_recvmsg_nosec()) were added in 6.3. They are looked up by name at
 * load, so on an older kernel (6.1 here) the two features are absent; the
 * prototype is the same in every kernel that has them (6.12 checked).
 */
#define JL_TP_SOCK_LEN_PROTO(sk, ret, flags)                                \
	void *data, struct sock *sk, int ret, int flags

/*
 * exec's lock against readers of a task's counters: exec_update_mutex
 * became the rw_semaphore exec_update_lock in 5.11 (f7cfd871ae0c,
 * "exec: Transform exec_update_mutex into a rw_semaphore"). 5.10 is not
 * compile-tested here.
 */
#if JL_KV(5, 11)
#define jl_exec_lock_killable(sig) down_read_killable(&(sig)->exec_update_lock)
#define jl_exec_unlock(sig) up_read(&(sig)->exec_update_lock)
#else
#define jl_exec_lock_killable(sig) mutex_lock_killable(&(sig)->exec_update_mutex)
#define jl_exec_unlock(sig) mutex_unlock(&(sig)->exec_update_mutex)
#endif

/* ---- joulesfs ---- */

/*
 * Inode times became accessors: i_ctime in 6.6 (inode_set_ctime_current(),
 * "fs: add ctime accessors infrastructure"), i_atime and i_mtime in 6.7,
 * which also added simple_inode_init_ts() ("fs: new accessor methods for
 * atime and mtime"). 6.6 is not compile-tested here.
 */
#if JL_KV(6, 7)
#define jl_inode_init_ts(inode) simple_inode_init_ts(inode)
#elif JL_KV(6, 6)
#define jl_inode_init_ts(inode)                                             \
	((inode)->i_atime = (inode)->i_mtime = inode_set_ctime_current(inode))
#else
#define jl_inode_init_ts(inode)                                             \
	((inode)->i_atime = (inode)->i_mtime = (inode)->i_ctime =           \
		 current_time(inode))
#endif

/*
 * ->d_revalidate() is passed the parent directory and the name looked up
 * since 6.14 (5be1fa8abd7b, "Pass parent directory inode and expected name
 * to ->d_revalidate()"). Its new side is compiled on 7.2.
 */
#if JL_KV(6, 14)
#define JL_D_REVALIDATE_PROTO(d, f)                                         \
	struct inode *jl_dir, const struct qstr *jl_name, struct dentry *d, \
		unsigned int f
#else
#define JL_D_REVALIDATE_PROTO(d, f) struct dentry *d, unsigned int f
#endif

/*
 * A superblock's default dentry operations: set_default_d_op() since 6.17,
 * which also made d_set_d_op() private ("new helper: set_default_d_op()");
 * before it, s_d_op is read by d_alloc(). Its new side is compiled on 7.2.
 */
#if JL_KV(6, 17)
#define jl_set_default_d_op(sb, ops) set_default_d_op(sb, ops)
#else
#define jl_set_default_d_op(sb, ops) ((sb)->s_d_op = (ops))
#endif

/*
 * generic_delete_inode() was renamed inode_just_drop() in 6.18 ("fs:
 * rename generic_delete_inode() and generic_drop_inode()"). Not
 * compile-tested here.
 */
#if JL_KV(6, 18)
#define jl_drop_inode inode_just_drop
#else
#define jl_drop_inode generic_delete_inode
#endif

/*
 * /proc/<pid>/energy exists only in kernels patched with
 * packaging/kernel-patches/ (include/linux/proc_energy.h); a module built
 * against such a tree registers as its provider at load (kmod/procpid.c).
 * Kbuild looks for the header (sparse has no __has_include) and defines
 * JL_HAVE_PROC_ENERGY=1 where it exists.
 */
#ifdef JL_HAVE_PROC_ENERGY
#include <linux/proc_energy.h>
#else
#define JL_HAVE_PROC_ENERGY 0
#endif

/* ---- cgroups ---- */

/*
 * kernfs_node::name became __rcu in 6.15 ("kernfs: Use RCU
 * to access kernfs_node::name"); the caller is inside rcu_read_lock().
 * Compile-tested against linux-source-7.2.
 */
#if JL_KV(6, 15)
#define jl_kn_name(kn) rcu_dereference((kn)->name)
#else
#define jl_kn_name(kn) ((kn)->name)
#endif

/* ---- task accounting ---- */

/*
 * Storage bytes (ioac.read_bytes, write_bytes) exist only with
 * CONFIG_TASK_IO_ACCOUNTING (include/linux/task_io_accounting.h). Every
 * kernel joules is tested on has it; a kernel without it is refused at
 * build time with the reason, rather than built with disk energy faked
 * as zero. It depends on CONFIG_TASK_XACCT, so rchar (page-cache reads)
 * is always there too.
 */
#if defined(__KERNEL__) && !defined(CONFIG_TASK_IO_ACCOUNTING)
#error "joules needs CONFIG_TASK_IO_ACCOUNTING (per-task storage bytes) in the kernel it is built for"
#endif

/* ---- permissions ---- */

/*
 * Dumpability moved from the mm (get_dumpable(), SUID_DUMP_USER) to the
 * task's exec state (include/linux/sched/exec_state.h, enum task_dumpable,
 * "exec_state" by Christian Brauner, in linux-source-7.2; the source
 * package carries no commit id). Its accessor is not exported, so the
 * field is read under task_lock(t), which every replacement of the exec
 * state holds (task_exec_state_replace()). Kbuild defines
 * JL_HAVE_EXEC_STATE=1 where the header exists. The exec state outlives
 * the mm, and the kernel's own rule (/proc/<pid>/io) asks it whether or not
 * the task still has an mm: so does joules. Built and run on 7.2 (debug).
 */
#ifdef JL_HAVE_EXEC_STATE
#include <linux/sched/exec_state.h>
static inline bool jl_dumpable_by_owner(struct task_struct *t)
{
	struct task_exec_state *es;

	es = rcu_dereference_protected(t->exec_state, lockdep_is_held(&t->alloc_lock));
	return es && READ_ONCE(es->dumpable) == TASK_DUMPABLE_OWNER;
}
#else
#include <linux/sched/coredump.h>
static inline bool jl_dumpable_by_owner(struct task_struct *t)
{
	/* A task without an mm (exiting, a kernel thread) has nothing to say. */
	return !t->mm || get_dumpable(t->mm) == SUID_DUMP_USER;
}
#endif

/* ---- netlink ---- */

/*
 * <asm/unaligned.h> moved to <linux/unaligned.h> in 6.12 (5f60d5f6bbc1,
 * "move asm/unaligned.h to linux/unaligned.h").
 */
#if JL_KV(6, 12)
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/*
 * A dump's parsed request attributes moved into a struct genl_info in 6.2
 * ("genetlink: use a genl_info in the dumpit info").
 */
#if JL_KV(6, 2)
#define jl_dumpit_attrs(cb) (genl_dumpit_info(cb)->info.attrs)
#else
#define jl_dumpit_attrs(cb) (genl_dumpit_info(cb)->attrs)
#endif

/*
 * Per-group capability checks for multicast came in 6.7 ("genetlink: add
 * CAP_NET_ADMIN test for multicast bind" and, for the flag joules uses,
 * "drop_monitor: Require 'CAP_SYS_ADMIN' when joining "events" group",
 * which added GENL_MCAST_CAP_SYS_ADMIN) and were backported to the 6.1
 * and 6.6 stable series, so they are tested by the flag, not a version:
 * include <net/genetlink.h> first. Without it the groups would be open to
 * every user, so joules offers none.
 */
#ifdef GENL_MCAST_CAP_SYS_ADMIN
#define JL_HAVE_GENL_MCAST_CAP 1
#else
#define JL_HAVE_GENL_MCAST_CAP 0
#endif

/* ---- workqueues ---- */

/*
 * The workers' unbound queue: system_dfl_wq since 6.17 ("workqueue: Add
 * system_percpu_wq and system_dfl_wq"); later kernels flag
 * system_unbound_wq deprecated and warn when it is used (64d8eae3f895,
 * "workqueue: Add warnings and fallback if system_{unbound}_wq is used";
 * 7.2 prints it). Debian's 6.12 carries the new name too, from stable.
 */
#if JL_KV(6, 17)
#define jl_unbound_wq system_dfl_wq
#else
#define jl_unbound_wq system_unbound_wq
#endif

/* ---- x86 ---- */

/*
 * The 64-bit MSR accessors were renamed rdmsrl*() -> rdmsrq*() in 6.16
 * ("x86/msr: Rename 'rdmsrl()' to 'rdmsrq()'"). Its new side is compiled on 7.2.
 */
#if JL_KV(6, 16)
#define jl_rdmsr_safe rdmsrq_safe
#define jl_rdmsr_safe_on_cpu rdmsrq_safe_on_cpu
#else
#define jl_rdmsr_safe rdmsrl_safe
#define jl_rdmsr_safe_on_cpu rdmsrl_safe_on_cpu
#endif

/*
 * CPU match tables by vendor/family/model: X86_MATCH_VFM() since 6.10
 * ("x86/cpu/vfm: Add new macros to work with (vendor/family/model)
 * values"); X86_MATCH_VENDOR_FAM_MODEL() is gone by 6.12. 6.10 and 6.11
 * are not compile-tested here.
 */
#if JL_KV(6, 10)
#define JL_X86_MATCH_INTEL6(model, data)                                    \
	X86_MATCH_VFM(VFM_MAKE(X86_VENDOR_INTEL, 6, model), data)
#else
#define JL_X86_MATCH_INTEL6(model, data)                                    \
	X86_MATCH_VENDOR_FAM_MODEL(INTEL, 6, model, data)
#endif

/*
 * Filesystem inodes are charged to the memcg of the mount since 5.18
 * (8b9f3ac5b01d, "fs: introduce alloc_inode_sb() to allocate filesystems
 * specific inode"); before it, a plain cache allocation.
 */
#if !JL_KV(5, 18)
#define alloc_inode_sb(sb, cache, gfp) ((void)(sb), kmem_cache_alloc(cache, gfp))
#endif

/*
 * cgroup_get_from_path() walks from the caller's cgroup namespace root
 * since 6.1 (74e4b956eb1c, "cgroup: Honor caller's cgroup NS when
 * resolving path"; checked in Debian's 6.1 and 6.12 sources); before, from the
 * hierarchy's root, so the namespace root's path goes first.
 */
#define JL_CGROUP_PATH_IN_NS JL_KV(6, 1)

/* A task's state word: task_struct::state became __state in 5.14 (2f064a59a11f). */
#if JL_KV(5, 14)
#define jl_task_state(t) READ_ONCE((t)->__state)
#else
#define jl_task_state(t) READ_ONCE((t)->state)
#endif

#endif /* JOULES_COMPAT_H */
