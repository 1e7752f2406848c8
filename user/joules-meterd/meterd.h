/* SPDX-License-Identifier: GPL-2.0 */
/*
 * joules-meterd: reads the node's wall meters (BMC over IPMI, PDU over
 * SNMP, or a command) and feeds the sum to joules.ko (METER_FEED) and/or
 * writes the trainer's meter CSV. This header is the contract between the
 * daemon's core (main.c, conf.c, feed.c) and its backends (ipmi.c,
 * snmp.c, command.c): one backend per kind of configuration section.
 */
#ifndef JOULES_METERD_H
#define JOULES_METERD_H

#include <stddef.h>

/* What one sensor or counter of an input gave. */
enum jmd_kind {
	JMD_POWER, /* value: watts now */
	JMD_ENERGY, /* value: joules, cumulative as the meter counts them */
};

struct jmd_sample {
	enum jmd_kind kind;
	double value;
	/*
	 * JMD_ENERGY: the counter's modulus in joules when it wraps (a 32-bit
	 * Wh counter: 2^32 * 3600), 0 when it does not or is unknown (then a
	 * decrease is a reset, never a wrap).
	 */
	double wrap_j;
	/* which sensor, outlet or inlet ("PSU1 Power", "outlet 4") */
	char label[48];
};

#define JMD_MAX_SAMPLES 16 /* sensors or outlets summed per input */

struct jmd_input;

struct jmd_backend {
	/* the section keyword: "ipmi", "snmp", "command", "virtio" */
	const char *type;
	/*
	 * One "key = value" line of the input's section. Returns 0, or -1
	 * with err set ("unknown key 'x'", "port: not a number 'y'").
	 */
	int (*set)(struct jmd_input *in, const char *key, const char *val,
		   char *err, size_t errlen);
	/*
	 * The section is complete: check it (required keys, conflicts) and
	 * set up. Never blocks on the network: connect on the first read.
	 */
	int (*open)(struct jmd_input *in, char *err, size_t errlen);
	/*
	 * One reading now, bounded by in->timeout_ms: up to JMD_MAX_SAMPLES
	 * samples into out, their number into *n. -1 with err set on
	 * failure (the core logs it and counts the input as silent).
	 */
	int (*read)(struct jmd_input *in, struct jmd_sample *out, size_t *n,
		    char *err, size_t errlen);
	void (*close)(struct jmd_input *in);
};

/* One configured input: a "[TYPE NAME]" section of the configuration. */
struct jmd_input {
	const struct jmd_backend *be;
	char name[32];
	unsigned int timeout_ms; /* per read, from "timeout" (default 2000) */
	void *priv; /* the backend's */
};

extern const struct jmd_backend jmd_ipmi_backend;
extern const struct jmd_backend jmd_snmp_backend;
extern const struct jmd_backend jmd_command_backend;
extern const struct jmd_backend jmd_virtio_backend;

#endif /* JOULES_METERD_H */
