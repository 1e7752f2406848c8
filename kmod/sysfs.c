// SPDX-License-Identifier: GPL-2.0
/* /sys/kernel/joules/: version and module-wide settings. */
#include <linux/kobject.h>
#include <linux/sysfs.h>

#include "joules.h"

struct kobject *joules_kobj;

static ssize_t version_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%s\n", JL_VERSION);
}
static struct kobj_attribute version_attr = __ATTR_RO(version);

static ssize_t abi_version_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", JL_ABI_VERSION);
}
static struct kobj_attribute abi_version_attr = __ATTR_RO(abi_version);

static struct attribute *joules_attrs[] = {
	&version_attr.attr,
	&abi_version_attr.attr,
	NULL,
};

static const struct attribute_group joules_group = {
	.attrs = joules_attrs,
};

int joules_sysfs_init(void)
{
	int err;

	joules_kobj = kobject_create_and_add(JOULES_NAME, kernel_kobj);
	if (!joules_kobj)
		return -ENOMEM;
	err = sysfs_create_group(joules_kobj, &joules_group);
	if (err) {
		kobject_put(joules_kobj);
		joules_kobj = NULL;
	}
	return err;
}

void joules_sysfs_exit(void)
{
	kobject_put(joules_kobj);
	joules_kobj = NULL;
}
