// SPDX-License-Identifier: GPL-2.0
/*
 * joules: per-process energy attribution. Module entry points: bring the
 * parts up in dependency order and take them down in reverse.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/init.h>

#include "joules.h"

static int __init joules_init(void)
{
	int err;

	err = joules_sysfs_init();
	if (err)
		return err;

	pr_info("version %s loaded (abi %d)\n", JL_VERSION, JL_ABI_VERSION);
	return 0;
}

static void __exit joules_exit(void)
{
	joules_sysfs_exit();
	pr_info("unloaded\n");
}

module_init(joules_init);
module_exit(joules_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("joules developers");
MODULE_DESCRIPTION("Per-process energy attribution (RAPL and trained model)");
MODULE_VERSION(JL_VERSION);
