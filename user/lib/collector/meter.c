// SPDX-License-Identifier: GPL-2.0
/*
 * The meter collector (joules_meter_*): the energy meter (RAPL) present
 * or absent and why, its wraps and dropped readings, from sysfs rapl/.
 */
#include <stdio.h>
#include <string.h>

#include "collector.h"

/* Families. Names in base units; counters get _total from the writer. */
/* clang-format off */
static const struct prom_family
f_meter_present = { "joules_meter_present", PROM_GAUGE, NULL,
	"1 if an energy meter (RAPL) is registered, with its name; 0 with the reason it is absent" },
f_meter_wraps = { "joules_meter_wraps", PROM_COUNTER, NULL,
	"Energy counter wraps the module handled since the meter registered" },
f_meter_bogus = { "joules_meter_bogus_reads", PROM_COUNTER, NULL,
	"Meter readings dropped as implausible (above the maximum plausible power)" };
/* clang-format on */

static void meter_gather(struct jm_state *s, struct jm_snapshot *snap)
{
	struct jm_status *st = &snap->st[JM_C_METER];
	char buf[256];
	ssize_t n = jm_read(s, "rapl/status", buf, sizeof(buf));

	if (n < 0) {
		jm_sysfs_fail(s, st, "rapl/status", (int)n);
		return;
	}
	if (!strncmp(buf, "absent", 6)) {
		const char *r = buf + 6;

		while (*r == ':' || *r == ' ')
			r++;
		/* Long reasons are cut: a label, not a log. */
		snprintf(snap->meter_reason, sizeof(snap->meter_reason), "%.*s",
			 (int)sizeof(snap->meter_reason) - 1,
			 *r ? r : "unknown");
		return;
	}
	snap->meter_present = true;
	snprintf(snap->meter, sizeof(snap->meter), "%.*s",
		 (int)sizeof(snap->meter) - 1, buf);
	snap->have_wraps = !jm_read_u64(s, "rapl/wraps", &snap->wraps);
	snap->have_bogus =
		!jm_read_u64(s, "rapl/bogus_reads", &snap->bogus_reads);
}

static void meter_render(const struct jm_state *s,
			 const struct jm_snapshot *snap, struct prom_writer *w)
{
	struct prom_label l[] = { { "meter", snap->meter },
				  { "reason", snap->meter_reason } };

	(void)s;
	prom_family(w, &f_meter_present);
	prom_u64(w, snap->meter_present ? l : l + 1, 1, snap->meter_present);
	if (snap->have_wraps) {
		prom_family(w, &f_meter_wraps);
		prom_u64(w, NULL, 0, snap->wraps);
	}
	if (snap->have_bogus) {
		prom_family(w, &f_meter_bogus);
		prom_u64(w, NULL, 0, snap->bogus_reads);
	}
}

const struct jm_collector_info jm_meter_collector = {
	.name = "meter",
	.what = "energy meter present or absent and why (sysfs)",
	.gather = meter_gather,
	.render = meter_render,
	.shown = JM_SHOWN_OK,
};
