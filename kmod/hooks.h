/* SPDX-License-Identifier: GPL-2.0 */
/* hooks.c: the scheduler, process and socket tracepoints. */
#ifndef JOULES_HOOKS_H
#define JOULES_HOOKS_H


int joules_hooks_init(void);
void joules_hooks_exit(void);

#endif /* JOULES_HOOKS_H */
