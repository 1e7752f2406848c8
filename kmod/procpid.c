// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/<pid>/energy on kernels that carry the patch in
 * packaging/kernel-patches/ (CONFIG_PROC_PID_ENERGY): the kernel serves
 * the file and checks the reader with ptrace_may_access(), like
 * /proc/<pid>/io; joules registers as its provider and prints the same
 * lines as /proc/energy/<pid>. Stock kernels have neither the header nor
 * the hook, and only /proc/energy/<pid> exists there.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/module.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/sysfs.h>

#include "compat.h"
#include "fs.h"
#include "perm.h"
#include "procpid.h"
#include "tasks.h"

#if JL_HAVE_PROC_ENERGY
/* Pids as the /proc mount being read sees them (ns), like /proc/<pid>/status. */
static int jp_show(struct seq_file *m, struct pid_namespace *ns,
		   struct task_struct *task, bool whole)
{
	return joules_print_stats(m, task, whole, ns);
}

static const struct proc_energy_ops jp_ops = {
	.owner = THIS_MODULE,
	.show = jp_show,
};

static bool registered;
#endif

static const char *why = "absent: this kernel has no /proc/<pid>/energy hook (stock kernel)";

void joules_procpid_init(void)
{
#if JL_HAVE_PROC_ENERGY
	int err = proc_energy_register(&jp_ops);

	if (!err) {
		registered = true;
		why = "served";
		pr_info("serving /proc/<pid>/energy\n");
	} else if (err == -EOPNOTSUPP) {
		why = "absent: the kernel was built without CONFIG_PROC_PID_ENERGY";
	} else if (err == -EBUSY) {
		why = "absent: another module provides /proc/<pid>/energy";
		pr_warn("/proc/<pid>/energy has another provider; /proc/energy/<pid> only\n");
	} else {
		why = "absent: registration failed";
		pr_warn("cannot provide /proc/<pid>/energy: %d\n", err);
	}
#endif
}

void joules_procpid_exit(void)
{
#if JL_HAVE_PROC_ENERGY
	if (registered)
		proc_energy_unregister(&jp_ops);
	registered = false;
#endif
}

/* sysfs proc_pid_energy: "served", or "absent: <why>". */
ssize_t joules_procpid_status(char *buf)
{
	return sysfs_emit(buf, "%s\n", why);
}
