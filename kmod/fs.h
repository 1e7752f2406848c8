/* SPDX-License-Identifier: GPL-2.0 */
/* fs.c: joulesfs, the per-pid files, mounted on /proc/energy. */
#ifndef JOULES_FS_H
#define JOULES_FS_H

#include <linux/sched.h>

struct seq_file;
struct pid_namespace;

int joules_fs_init(void);
void joules_fs_exit(void);
/* The per-pid file's lines, pids as seen in ns; the caller checked the reader. */
int joules_print_stats(struct seq_file *m, struct task_struct *t, bool process,
		       struct pid_namespace *ns);

#endif /* JOULES_FS_H */
