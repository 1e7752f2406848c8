/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the collectors (collector/NAME.c) share (metrics.c defines it), and
 * their table entries. Not for the tools: they use metrics.h.
 *
 * A collector's gather fills its part of the snapshot and, when it
 * cannot, says why with jm_fail() (the status's reason, errno and log
 * message); its render writes its families from the snapshot, without
 * I/O. Every collector file has a host test next to it, NAME_test.c.
 */
#ifndef JOULES_COLLECTOR_H
#define JOULES_COLLECTOR_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "metrics.h"
#include "nl.h"

#define NL(a) (sizeof(a) / sizeof((a)[0]))

extern const struct jm_collector_info jm_module_collector;
extern const struct jm_collector_info jm_node_collector;
extern const struct jm_collector_info jm_model_collector;
extern const struct jm_collector_info jm_meter_collector;
extern const struct jm_collector_info jm_wallmeter_collector;
extern const struct jm_collector_info jm_static_collector;
extern const struct jm_collector_info jm_process_collector;
extern const struct jm_collector_info jm_cgroup_collector;

/* CLOCK_MONOTONIC in ns. */
uint64_t jm_now(void);

/* The collector failed: reason, negative errno, and why (for the log). */
void jm_fail(struct jm_status *st, enum jm_reason r, int err, const char *fmt,
	     ...) __attribute__((format(printf, 4, 5)));
/* The reason a failed netlink request or file read stands for. */
enum jm_reason jm_reason_of(int err);
/* A sysfs read failed; without the directory the module is not loaded. */
void jm_sysfs_fail(const struct jm_state *s, struct jm_status *st,
		   const char *name, int err);

/* A small file of the module's sysfs, trailing newline dropped: its length or -errno. */
ssize_t jm_read(const struct jm_state *s, const char *name, char *buf,
		size_t size);
/* The same, one unsigned number: 0 or -errno (-EINVAL: not a number). */
int jm_read_u64(const struct jm_state *s, const char *name, uint64_t *v);

/* Is cap in this process's effective set? */
bool jm_capable(int cap);

/* Open the netlink handle if it is closed (a new family id: a reload). */
int jm_open(struct jm_state *s);

/*
 * A netlink request: req(s->nl, arg), and once more on a reopened handle
 * if it fails with anything but -EPERM (the module may have been
 * reloaded). 0 or -errno; *op becomes JNL_OP_OPEN when the module cannot
 * be reached (also when the handle was closed to begin with).
 */
int jm_request(struct jm_state *s, int (*req)(struct jnl *nl, void *arg),
	       void *arg, enum jnl_op *op);
/*
 * The status of a failed jm_request(): "REQUEST: why (module: kmsg)", or
 * just why when the module could not be reached. kmsg may be NULL.
 */
void jm_request_fail(struct jm_status *st, const char *request, enum jnl_op op,
		     int err, const char *kmsg);

/*
 * --compat kepler (kepler.c): after the collectors, the series under
 * Kepler's names and the window their watts are over; render them; free
 * the snapshot's part and the state's. jm_kepler_build() is the gather
 * without I/O, at time now with ncpus online (for the tests).
 */
void jm_kepler_gather(struct jm_state *s, struct jm_snapshot *snap);
int jm_kepler_build(struct jm_state *s, struct jm_snapshot *snap, uint64_t now,
		    long ncpus);
void jm_kepler_render(const struct jm_state *s, const struct jm_snapshot *snap,
		      struct prom_writer *w);
void jm_kepler_free(struct jm_snapshot *snap);
void jm_kepler_state_free(struct jm_state *s);

#endif /* JOULES_COLLECTOR_H */
