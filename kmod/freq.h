/* SPDX-License-Identifier: GPL-2.0 */
/* freq.c: the node's effective frequency. */
#ifndef JOULES_FREQ_H
#define JOULES_FREQ_H

#include <linux/types.h>

#include "core.h"

/*
 * freq.c: the node's effective frequency, which picks the band. A module
 * may register a source (the selftests' test meter); otherwise the PMU's
 * cycles, or cpufreq.
 */
struct joules_freq_source {
	const char *name;
	struct module *owner;	/* THIS_MODULE, required; no reference is held */
	/* MHz now, or an error (the frequency is then unknown); may sleep. */
	int (*read_mhz)(struct joules_freq_source *s, u32 *mhz);
	void *priv;
};
/* As a meter (source.h): not called once its module is going; no reference. */
int joules_freq_register(struct joules_freq_source *s);
void joules_freq_unregister(struct joules_freq_source *s);
bool joules_freq_source(char *buf, size_t size);
/* Worker: this interval's frequency (MHz, 0: unknown), node deltas given. */
u64 joules_freq_now(const struct jl_feat *node);
struct module;
void joules_freq_module_going(struct module *mod);

#endif /* JOULES_FREQ_H */
