/* SPDX-License-Identifier: GPL-2.0 */
/* worker.c: the periodic attribution worker and its settings. */
#ifndef JOULES_WORKER_H
#define JOULES_WORKER_H

#include <linux/types.h>

#include "joules.h"

int joules_worker_init(void);
void joules_worker_start(void);	/* the first tick is queued */
void joules_worker_stop(void);	/* the worker stops; hooks may still run */
void joules_worker_exit(void);	/* hooks gone: fold what the worker held */

/* Settings the sysfs files change. */
void joules_worker_interval_changed(unsigned int old_ms);
extern unsigned int joules_interval_ms;
extern enum joules_source_mode joules_source_mode;
extern bool joules_idle_split;
extern unsigned int joules_gamma_milli;
extern unsigned int joules_delta_milli;

#endif /* JOULES_WORKER_H */
