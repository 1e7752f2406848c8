// SPDX-License-Identifier: GPL-2.0
/*
 * joules: per-process energy attribution. Module entry points.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/init.h>

#include "cgroup.h"
#include "fs.h"
#include "hooks.h"
#include "model.h"
#include "netlink.h"
#include "perm.h"
#include "pmu.h"
#include "procpid.h"
#include "rapl.h"
#include "report.h"
#include "source.h"
#include "sysfs.h"
#include "taskcg.h"
#include "tasks.h"
#include "track.h"
#include "worker.h"

/*
 * Up in dependency order, down in exactly the reverse: every step below
 * has one undo, and a failed step unwinds what came before it.
 *
 * The order keeps tasks' memory valid on the way down: entries hold no
 * task reference, and once the free hook is gone a task can be freed
 * unseen. So readers (fs, netlink) and the worker stop first, then the
 * hooks, and only then is anything folded (the worker's lists, the
 * table, then the cgroups their entries referred to).
 */
static int __init joules_init(void)
{
	int err;

	joules_report_init();
	err = joules_perm_init();
	if (err)
		return err;
	err = joules_model_init();
	if (err)
		goto out_perm;
	err = joules_cg_init();
	if (err)
		goto out_model;
	err = joules_tasks_init();
	if (err)
		goto out_cg;
	err = joules_pmu_init();
	if (err)
		goto out_tasks;
	err = joules_source_init();
	if (err)
		goto out_pmu;
	err = joules_rapl_init();
	if (err)
		goto out_source;
	err = joules_sysfs_init();
	if (err)
		goto out_rapl;
	err = joules_worker_init();
	if (err)
		goto out_sysfs;
	err = joules_track_init();
	if (err)
		goto out_worker;
	/* Hooks walk the existing tasks; the worker starts charging after. */
	err = joules_hooks_init();
	if (err)
		goto out_track;
	joules_worker_start();
	err = joules_nl_init();
	if (err)
		goto out_worker_start;
	err = joules_fs_init();
	if (err)
		goto out_nl;
	joules_procpid_init();

	pr_info("version %s loaded (abi %d)\n", JL_VERSION, JL_ABI_VERSION);
	return 0;

out_nl:
	joules_nl_exit();
out_worker_start:
	joules_worker_stop();
	joules_hooks_exit();
out_track:
	joules_track_exit();
out_worker:
	joules_worker_exit();
out_sysfs:
	joules_sysfs_exit();
out_rapl:
	joules_rapl_exit();
out_source:
	joules_source_exit();
out_pmu:
	joules_pmu_exit();
out_tasks:
	joules_tasks_exit(joules_taskcg_release);
out_cg:
	joules_cg_exit();
out_model:
	joules_model_exit();
out_perm:
	joules_perm_exit();
	return err;
}

static void __exit joules_exit(void)
{
	joules_procpid_exit();
	joules_fs_exit();
	joules_nl_exit();
	joules_worker_stop();
	joules_hooks_exit();
	joules_track_exit();
	joules_worker_exit();
	joules_sysfs_exit();
	joules_rapl_exit();
	joules_source_exit();
	joules_pmu_exit();
	joules_tasks_exit(joules_taskcg_release);
	joules_cg_exit();
	joules_model_exit();
	joules_perm_exit();
	pr_info("unloaded\n");
}

module_init(joules_init);
module_exit(joules_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("joules developers");
MODULE_DESCRIPTION("Per-process energy attribution (RAPL and trained model)");
MODULE_VERSION(JL_VERSION);
