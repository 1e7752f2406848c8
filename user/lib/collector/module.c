// SPDX-License-Identifier: GPL-2.0
/*
 * The module collector (joules_module_*): is the module loaded, which
 * version, and the reloads this exporter noticed. Netlink and sysfs.
 */
#include <errno.h>
#include <stdio.h>

#include "nl.h"
#include "collector.h"

/* Families. Names in base units; counters get _total from the writer. */
/* clang-format off */
static const struct prom_family
f_module_loaded = { "joules_module_loaded", PROM_GAUGE, NULL,
	"1 if the joules module answers on generic netlink, 0 if it is not loaded" },
f_module = { "joules_module", PROM_INFO, NULL,
	"Version of the loaded joules module and of its interfaces" },
f_reloads = { "joules_exporter_module_reloads", PROM_COUNTER, NULL,
	"Module reloads this exporter noticed; each restarts the module's counters from zero" };
/* clang-format on */

static void module_gather(struct jm_state *s, struct jm_snapshot *snap)
{
	struct jm_status *st = &snap->st[JM_C_MODULE];
	int err = jm_open(s);

	if (jm_read(s, "version", snap->version, sizeof(snap->version)) < 0)
		snap->version[0] = 0;
	if (jm_read(s, "abi_version", snap->abi, sizeof(snap->abi)) < 0)
		snap->abi[0] = 0;
	/* Not loaded is a state to report, not a failure to gather. */
	if (err && err != -ENOENT)
		jm_fail(st, jm_reason_of(err), err, "netlink: %s",
			jnl_strerror(JNL_OP_OPEN, err));
}

static void module_render(const struct jm_state *s,
			  const struct jm_snapshot *snap, struct prom_writer *w)
{
	char nlv[16];

	prom_family(w, &f_module_loaded);
	prom_u64(w, NULL, 0, snap->loaded);
	if (snap->loaded) {
		struct prom_label l[] = { { "version", snap->version },
					  { "abi_version", snap->abi },
					  { "netlink_version", nlv } };

		snprintf(nlv, sizeof(nlv), "%u", snap->nl_version);
		prom_family(w, &f_module);
		prom_u64(w, l, NL(l), 1);
	}
	prom_family(w, &f_reloads);
	prom_u64(w, NULL, 0, s->reloads);
}

const struct jm_collector_info jm_module_collector = {
	.name = "module",
	.what = "module loaded, version, reloads",
	.gather = module_gather,
	.render = module_render,
	.shown = JM_SHOWN_ALWAYS,
};
