// SPDX-License-Identifier: GPL-2.0
/*
 * joules: per-process energy attribution. Module entry points: bring the
 * parts up in dependency order and take them down in reverse.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/init.h>

#include "tasks.h"

/*
 * Take down the parts that read task entries, then the hooks, in an order
 * that keeps tasks' memory valid: entries hold no task reference, and once
 * the free hook is gone a task can be freed unseen. So the readers and the
 * worker stop first, then the hooks, and only then is anything folded.
 */
static void joules_stop(void)
{
	joules_nl_exit();
	joules_attr_stop();
	joules_hooks_exit();
	joules_track_exit();
	joules_attr_exit();
}

static int __init joules_init(void)
{
	int err;

	err = joules_model_init();
	if (err)
		return err;
	err = joules_tasks_init();
	if (err)
		goto out_model;
	err = joules_cg_init();
	if (err)
		goto out_tasks;
	err = joules_track_init();
	if (err)
		goto out_cg;
	err = joules_pmu_init();
	if (err)
		goto out_track;
	err = joules_source_init();
	if (err)
		goto out_pmu;
	err = joules_rapl_init();
	if (err)
		goto out_source;
	err = joules_sysfs_init();
	if (err)
		goto out_rapl;
	err = joules_nl_init();
	if (err)
		goto out_sysfs;
	/* Hooks walk the existing tasks; the worker starts charging after. */
	err = joules_hooks_init();
	if (err)
		goto out_nl;
	err = joules_attr_init();
	if (err)
		goto out_hooks;
	err = joules_fs_init();
	if (err)
		goto out_attr;
	joules_procpid_init();

	pr_info("version %s loaded (abi %d)\n", JL_VERSION, JL_ABI_VERSION);
	return 0;

out_attr:
	joules_stop();
	goto out_sysfs;
out_hooks:
	joules_nl_exit();
	joules_hooks_exit();
	goto out_sysfs;
out_nl:
	joules_nl_exit();
out_sysfs:
	joules_sysfs_exit();
out_rapl:
	joules_rapl_exit();
out_source:
	joules_source_exit();
out_pmu:
	joules_pmu_exit();
out_track:
	/* A second call after joules_stop() is a no-op. */
	joules_track_exit();
out_cg:
	joules_tasks_exit();
	joules_cg_exit();
	goto out_model;
out_tasks:
	joules_tasks_exit();
out_model:
	joules_model_exit();
	return err;
}

static void __exit joules_exit(void)
{
	joules_procpid_exit();
	joules_fs_exit();
	joules_stop();
	joules_sysfs_exit();
	joules_rapl_exit();
	joules_source_exit();
	joules_pmu_exit();
	joules_tasks_exit();
	joules_cg_exit();
	joules_model_exit();
	pr_info("unloaded\n");
}

module_init(joules_init);
module_exit(joules_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("joules developers");
MODULE_DESCRIPTION("Per-process energy attribution (RAPL and trained model)");
MODULE_VERSION(JL_VERSION);
