// SPDX-License-Identifier: GPL-2.0
/*
 * The model collector (joules_model_*): the model's generation and
 * coefficients, from sysfs model/.
 */
#include <errno.h>

#include "collector.h"

/* Families. Names in base units; counters get _total from the writer. */
/* clang-format off */
static const struct prom_family
f_model_gen = { "joules_model_generation", PROM_GAUGE, NULL,
	"Coefficient sets written since the module loaded; 0: no model set, the model source charges nothing" },
f_model_power = { "joules_model_power_watts", PROM_GAUGE, "watts",
	"Model coefficients in watts: per busy CPU (cpu_time) and of the idle node (idle)" },
f_model_event = { "joules_model_event_energy_joules", PROM_GAUGE, "joules",
	"Model coefficients in joules per event" };
/* clang-format on */

static void model_gather(struct jm_state *s, struct jm_snapshot *snap)
{
	struct jm_status *st = &snap->st[JM_C_MODEL];
	char buf[JL_COEF_TEXT_MAX + 1];
	ssize_t n;
	int err;

	err = jm_read_u64(s, "model/generation", &snap->model_generation);
	if (err) {
		jm_sysfs_fail(s, st, "model/generation", err);
		return;
	}
	n = jm_read(s, "model/coefficients", buf, sizeof(buf));
	if (n < 0) {
		jm_sysfs_fail(s, st, "model/coefficients", (int)n);
		return;
	}
	if (jl_coef_parse(buf, (jl_size)n, &snap->coef))
		jm_fail(st, JM_FAILED, -EINVAL,
			"%s/model/coefficients: cannot parse '%s'", s->sysfs,
			buf);
}

static void model_render(const struct jm_state *s,
			 const struct jm_snapshot *snap, struct prom_writer *w)
{
	const struct jl_coef *c = &snap->coef;
	static const char *const events[] = {
		"cycle",       "instruction", "cache_miss",	"disk_byte",
		"net_tx_byte", "net_rx_byte", "pagecache_byte",
	};
	const uint64_t pj[] = { c->cycles_pj,	     c->instructions_pj,
				c->cache_miss_pj,    c->disk_byte_pj,
				c->net_tx_byte_pj,   c->net_rx_byte_pj,
				c->pagecache_byte_pj };
	struct prom_label cpu[] = { { "term", "cpu_time" } };
	struct prom_label idle[] = { { "term", "idle" } };

	(void)s;
	prom_family(w, &f_model_gen);
	prom_u64(w, NULL, 0, snap->model_generation);
	/* Generation 0: no model is set; its zeros are not coefficients. */
	if (!snap->model_generation)
		return;
	prom_family(w, &f_model_power);
	prom_fixed(w, cpu, NL(cpu), c->cpu_time_uw, 6);
	prom_fixed(w, idle, NL(idle), c->idle_uw, 6);
	prom_family(w, &f_model_event);
	for (size_t i = 0; i < NL(events); i++) {
		struct prom_label l[] = { { "event", events[i] } };

		prom_fixed(w, l, NL(l), pj[i], 12);
	}
}

const struct jm_collector_info jm_model_collector = {
	.name = "model",
	.what = "model generation and coefficients (sysfs)",
	.gather = model_gather,
	.render = model_render,
	.shown = JM_SHOWN_OK,
};
