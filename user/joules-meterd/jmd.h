/* SPDX-License-Identifier: GPL-2.0 */
/*
 * joules-meterd's core (jmd.h; kmod/core.h is the module's), beyond the backends' contract (meterd.h): the
 * configuration file, the backend table, and the accumulator that turns
 * each interval's samples into one cumulative energy for the module.
 * Everything here is pure (no network, no netlink), so the host tests
 * (tools/testing/meters) drive it directly.
 */
#ifndef JOULES_METERD_JMD_H
#define JOULES_METERD_JMD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "meterd.h"

#define JMD_CONF_DEFAULT "/etc/joules/meterd.conf"
#define JMD_MAX_INPUTS 16
#define JMD_DEFAULT_TIMEOUT_MS 2000
#define JMD_DEFAULT_MAX_POWER 100000.0 /* W: no single node draws more */

/* ---- backends (backends.c) ---- */

/*
 * The backend of a section keyword, or NULL with err set: "unknown section
 * type 'x'" or, for a backend left out of this build, "ipmi: not built in".
 */
const struct jmd_backend *jmd_backend_find(const char *type, char *err,
					   size_t errlen);

/* ---- configuration (conf.c) ---- */

struct jmd_conf {
	char name[32]; /* the meter's name for the module */
	uint64_t interval_ns; /* "interval", 0.1 .. 10 s, default 1 s */
	unsigned int timeout_ms; /* "timeout": default of every input */
	double max_power; /* "max_power", W */
	/* "silent_after": say so when silent longer */
	uint64_t silent_after_ns;
	struct jmd_input in[JMD_MAX_INPUTS];
	size_t nin;
	bool opened[JMD_MAX_INPUTS]; /* open() succeeded: close() on free */
};

/*
 * The file may hold credentials: it must be a regular file owned by root
 * or by the user running the daemon, writable by nobody else and not
 * readable by others. 0, or -1 with err saying what is wrong and how to
 * fix it.
 */
int jmd_conf_check_perms(int fd, const char *name, char *err, size_t errlen);

/*
 * Parse fp (named `name` in messages) into c, handing each section's lines
 * to its backend's set() and then open(). 0, or -1 with err set to
 * "NAME:LINE: reason" (or "NAME: reason" for what no line says). On
 * failure c holds nothing to free.
 */
int jmd_conf_parse(FILE *fp, const char *name, struct jmd_conf *c, char *err,
		   size_t errlen);

/* Open `path`, check its permissions, parse it. */
int jmd_conf_load(const char *path, struct jmd_conf *c, char *err,
		  size_t errlen);

/* Close the inputs. */
void jmd_conf_free(struct jmd_conf *c);

/* ---- accumulator (acc.c) ---- */

/* The energy counters' baselines of one input, matched by label. */
struct jmd_counter {
	char label[48];
	double last; /* J */
	bool seen; /* in this interval's reading */
};

struct jmd_acc {
	double max_power; /* W */
	uint64_t max_gap_ns; /* a longer time between readings is a gap */
	/* Cumulative energy, uJ (fractional part kept, never decreasing). */
	long double total_uj;
	bool have_prev; /* a good reading before this one, no gap */
	uint64_t prev_ns;
	double prev_power; /* sum of the power samples then, W */
	struct jmd_counter ctr[JMD_MAX_INPUTS][JMD_MAX_SAMPLES];
	size_t nctr[JMD_MAX_INPUTS];
	size_t nin;
	/* Called with one line (no newline) for what the log should say. */
	void (*log)(void *ctx, const char *msg);
	void *log_ctx;
};

/* What one interval gave. */
struct jmd_step {
	bool feed; /* a reading for the module */
	bool reset; /* ... that starts a new baseline (JOULES_A_METER_RESET) */
	uint64_t uj; /* cumulative energy, uJ */
	uint64_t t_ns; /* when it was read (CLOCK_MONOTONIC) */
	bool have_watts; /* watts is known (not on a new baseline of counters) */
	double watts; /* power sum now plus energy counters' mean power */
	char why[512]; /* !feed: why nothing is fed */
};

void jmd_acc_init(struct jmd_acc *a, size_t nin, double max_power,
		  uint64_t max_gap_ns);

/*
 * One interval's readings at monotonic time t_ns: s[i][0..n[i]) of input
 * i, every input read. Power samples are summed and integrated over the
 * time since the previous reading (trapezoid); energy counters add their
 * increase (wrap-safe with wrap_j; a decrease without wrap_j is a reset:
 * new baseline, logged). A negative, non-finite or implausible (above
 * max_power, directly or as an energy jump over the interval) value
 * refuses the whole reading: nothing is fed and the next good reading
 * starts a new baseline.
 */
void jmd_acc_step(struct jmd_acc *a, uint64_t t_ns,
		  const struct jmd_sample *const *s, const size_t *n,
		  struct jmd_step *out);

/*
 * An interval without a complete reading (an input failed, or the feed
 * was lost): the next good reading starts a new baseline.
 */
void jmd_acc_gap(struct jmd_acc *a);

/* ---- feeding the module (feed.c) ---- */

struct jnl;

struct jmd_feeder {
	char name[32];
	struct jnl *nl; /* NULL: resolve the family at the next feed */
	bool need_reset; /* the next feed starts a new baseline */
	bool no_age; /* the module refused METER_AGE_NS: readings without it */
	int err; /* the last error (0: fed), logged when it changes */
	unsigned long fed, failed;
	void (*log)(void *ctx, const char *msg);
	void *log_ctx;
};

void jmd_feeder_init(struct jmd_feeder *f, const char *name);
/*
 * Feed the cumulative uj read at t_ns (CLOCK_MONOTONIC; 0: now), reset: a
 * new baseline. 0, or the negative errno (logged if it is new); after any
 * error the socket is closed and the next feed resolves the family again
 * and is sent as a new baseline.
 */
int jmd_feed(struct jmd_feeder *f, uint64_t uj, uint64_t t_ns, bool reset,
	     bool verbose);
void jmd_feeder_close(struct jmd_feeder *f);

/* ---- serving VMs (vmhost.c) ---- */

/*
 * joules-meterd --vm-host: every interval, each QEMU VM's energy into its
 * virtio-serial channel (vm.h). account: "auto", "cgroup" or "process";
 * idle: "exclude" or "include" (the VM's idle share, with the host's
 * idle_split on); per_user: VMs served of one user but root (0: 256).
 * Returns the exit status.
 */
int jmd_vm_host(const char *channel, const char *account, const char *idle,
		const char *energy, uint64_t interval_ns, uint64_t count,
		uint64_t per_user, bool verbose);

/* ---- command-line helpers shared by the backends (util in conf.c) ---- */

/* "1", "yes", "true", "on" / "0", "no", "false", "off". */
int jmd_parse_bool(const char *s, bool *out);
const char *jmd_kind_name(enum jmd_kind k);

#endif /* JOULES_METERD_JMD_H */
