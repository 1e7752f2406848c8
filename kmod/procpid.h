/* SPDX-License-Identifier: GPL-2.0 */
/* procpid.c: /proc/<pid>/energy of patched kernels. */
#ifndef JOULES_PROCPID_H
#define JOULES_PROCPID_H

#include <linux/types.h>

/* procpid.c: /proc/<pid>/energy of patched kernels. */
void joules_procpid_init(void);
void joules_procpid_exit(void);
ssize_t joules_procpid_status(char *buf);

#endif /* JOULES_PROCPID_H */
