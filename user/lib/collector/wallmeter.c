// SPDX-License-Identifier: GPL-2.0
/*
 * The wall meter collector (joules_wall_meter_*): the node's wall meter (a
 * PDU outlet, the BMC, fed by joules-meterd) in force, silent or absent
 * and why, its readings, and its figures -- energy, what is still to
 * spread, the model's (or RAPL's) error against it over the last reading
 * window, power -- from sysfs wallmeter/ (Documentation/admin-guide.rst,
 * "The wall meter").
 *
 * The figures need CAP_PERFMON or CAP_SYS_ADMIN and read "absent" before
 * the first reading. Each family stands alone: a figure the exporter may
 * not read, or a file it cannot parse, is left out (never 0) and the
 * collector's status says why; the others are still exported, as the
 * process and cgroup collectors export what they can see.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "parse.h"
#include "collector.h"

/* Families. Names in base units; counters get _total from the writer. */
/* clang-format off */
static const struct prom_family
f_wall_present = { "joules_wall_meter_present", PROM_GAUGE, NULL,
	"1 if a wall meter (PDU, BMC) has fed the module, with its name and state (in_force, silent); 0 with the reason it is absent" },
f_wall_readings = { "joules_wall_meter_readings", PROM_COUNTER, NULL,
	"Wall meter readings the module accepted since it loaded" },
f_wall_refused = { "joules_wall_meter_refused", PROM_COUNTER, NULL,
	"Wall meter readings the module refused (going back, or above wallmeter/max_power_w)" },
f_wall_energy = { "joules_wall_meter_energy_joules", PROM_COUNTER, "joules",
	"The wall meter's energy on the node's scale since the module loaded" },
f_wall_pending = { "joules_wall_meter_pending_joules", PROM_GAUGE, "joules",
	"Energy found at the wall meter's readings and not yet spread over the node's intervals (negative: held back)" },
f_wall_residual = { "joules_wall_meter_residual_joules", PROM_GAUGE, "joules",
	"The last reading window's wall meter energy minus the shape's (RAPL's or the model's): the model's live error against the wall" },
f_wall_window = { "joules_wall_meter_window_seconds", PROM_GAUGE, "seconds",
	"Length of the reading window the residual is over" },
f_wall_power = { "joules_wall_meter_power_watts", PROM_GAUGE, "watts",
	"The wall meter's power: its last reading, or an energy meter's mean over its recent readings" };
/* clang-format on */

/*
 * The first failure is the one said, except that a missing privilege (the
 * same for every figure, and lasting) gives way to any other failure, which
 * would otherwise never be seen on an unprivileged exporter.
 */
static bool wall_first(const struct jm_status *st, enum jm_reason r)
{
	return st->reason == JM_OK ||
	       (st->reason == JM_PERMISSION && r != JM_PERMISSION);
}

/* A failed read of wallmeter/name (err < 0). */
static void wall_read_fail(const struct jm_state *s, struct jm_status *st,
			   const char *name, int err)
{
	enum jm_reason r = jm_reason_of(err);
	char path[64];

	snprintf(path, sizeof(path), "wallmeter/%s", name);
	if (!wall_first(st, r))
		return;
	if (r == JM_PERMISSION)
		jm_fail(st, r, err,
			"%s/%s: %s: the wall meter's figures need "
			"CAP_PERFMON or CAP_SYS_ADMIN",
			s->sysfs, path, strerror(-err));
	else
		jm_sysfs_fail(s, st, path, err);
}

static void wall_parse_fail(const struct jm_state *s, struct jm_status *st,
			    const char *name, const char *text)
{
	if (wall_first(st, JM_FAILED))
		jm_fail(st, JM_FAILED, -EINVAL,
			"%s/wallmeter/%s: cannot parse '%.64s'", s->sysfs, name,
			text);
}

/*
 * wallmeter/name as a number (signed if sv, else into uv): true when read.
 * "absent" (no reading yet) is left out without a failure.
 */
static bool wall_number(const struct jm_state *s, struct jm_status *st,
			const char *name, uint64_t *uv, int64_t *sv)
{
	char path[64], buf[64];
	const char *why;
	ssize_t n;

	snprintf(path, sizeof(path), "wallmeter/%s", name);
	n = jm_read(s, path, buf, sizeof(buf));
	if (n < 0) {
		wall_read_fail(s, st, name, (int)n);
		return false;
	}
	if (!strcmp(buf, "absent"))
		return false;
	if (sv ? parse_s64(buf, sv, &why) : parse_u64(buf, uv, &why)) {
		wall_parse_fail(s, st, name, buf);
		return false;
	}
	return true;
}

/* The kernel's names: 1 to 31 bytes (METER_FEED's NLA_NUL_STRING). */
#define WALL_NAME_MAX 31

/* A meter's name as the kernel can hold it: n bytes, no control characters. */
static bool wall_name_ok(const char *name, size_t n)
{
	if (!n || n > WALL_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f)
			return false;
	return true;
}

/*
 * wallmeter/status: the meter's name (in force), "silent: NAME, no
 * reading for N ms", or "absent: WHY". 0, or -EINVAL for anything else.
 */
static int wall_status(const char *buf, struct jm_wallmeter *w)
{
	static const char no_reading[] = ", no reading for ";
	const char *name, *end = NULL, *p;
	const char *why;
	char num[24];
	uint64_t ms;
	size_t k;

	if (!strncmp(buf, "absent", 6) && (!buf[6] || buf[6] == ':')) {
		const char *r = buf + 6;

		while (*r == ':' || *r == ' ')
			r++;
		w->state = JM_WALL_ABSENT;
		/* Long reasons are cut: a label, not a log. */
		snprintf(w->reason, sizeof(w->reason), "%.*s",
			 (int)sizeof(w->reason) - 1, *r ? r : "unknown");
		return 0;
	}
	if (!strncmp(buf, "silent: ", 8)) {
		name = buf + 8;
		/* The last one: a name may hold the words too. */
		for (p = strstr(name, no_reading); p;
		     p = strstr(p + 1, no_reading))
			end = p;
		if (!end || !wall_name_ok(name, (size_t)(end - name)))
			return -EINVAL;
		p = end + strlen(no_reading);
		k = strlen(p);
		if (k < 4 || k - 3 >= sizeof(num) || strcmp(p + k - 3, " ms"))
			return -EINVAL;
		memcpy(num, p, k - 3);
		num[k - 3] = 0;
		if (parse_u64(num, &ms, &why))
			return -EINVAL;
		w->state = JM_WALL_SILENT;
		snprintf(w->meter, sizeof(w->meter), "%.*s", (int)(end - name),
			 name);
		return 0;
	}
	if (!wall_name_ok(buf, strlen(buf)))
		return -EINVAL;
	w->state = JM_WALL_IN_FORCE;
	snprintf(w->meter, sizeof(w->meter), "%s", buf);
	return 0;
}

static void wallmeter_gather(struct jm_state *s, struct jm_snapshot *snap)
{
	struct jm_status *st = &snap->st[JM_C_WALLMETER];
	struct jm_wallmeter *w = &snap->wall;
	char buf[256], dir[512];
	ssize_t n = jm_read(s, "wallmeter/status", buf, sizeof(buf));

	if (n < 0) {
		snprintf(dir, sizeof(dir), "%s/wallmeter", s->sysfs);
		/* Loaded, but a module from before the wall meter. */
		if (n == -ENOENT && !access(s->sysfs, F_OK) &&
		    access(dir, F_OK))
			jm_fail(st, JM_UNSUPPORTED, (int)n,
				"%s: absent: the module has no wall meter",
				dir);
		else
			jm_sysfs_fail(s, st, "wallmeter/status", (int)n);
		return;
	}
	if (wall_status(buf, w)) {
		w->state = JM_WALL_UNREAD;
		wall_parse_fail(s, st, "status", buf);
	}
	w->have_readings = wall_number(s, st, "readings", &w->readings, NULL);
	w->have_refused = wall_number(s, st, "refused", &w->refused, NULL);
	w->have_energy = wall_number(s, st, "energy_uj", &w->energy_uj, NULL);
	w->have_pending =
		wall_number(s, st, "pending_uj", NULL, &w->pending_uj);
	w->have_residual =
		wall_number(s, st, "residual_uj", NULL, &w->residual_uj);
	w->have_window = wall_number(s, st, "window_ms", &w->window_ms, NULL);
	w->have_power = wall_number(s, st, "power_uw", &w->power_uw, NULL);
}

static void wallmeter_render(const struct jm_state *s,
			     const struct jm_snapshot *snap,
			     struct prom_writer *w)
{
	const struct jm_wallmeter *m = &snap->wall;
	struct prom_label l[] = {
		{ "meter", m->meter },
		{ "state", m->state == JM_WALL_SILENT ? "silent" : "in_force" }
	};
	struct prom_label r[] = { { "reason", m->reason } };

	(void)s;
	prom_family(w, &f_wall_present);
	if (m->state == JM_WALL_ABSENT)
		prom_u64(w, r, NL(r), 0);
	else if (m->state != JM_WALL_UNREAD)
		prom_u64(w, l, NL(l), 1);
	if (m->have_readings) {
		prom_family(w, &f_wall_readings);
		prom_u64(w, NULL, 0, m->readings);
	}
	if (m->have_refused) {
		prom_family(w, &f_wall_refused);
		prom_u64(w, NULL, 0, m->refused);
	}
	if (m->have_energy) {
		prom_family(w, &f_wall_energy);
		prom_fixed(w, NULL, 0, m->energy_uj, 6);
	}
	if (m->have_pending) {
		prom_family(w, &f_wall_pending);
		prom_sfixed(w, NULL, 0, m->pending_uj, 6);
	}
	if (m->have_residual) {
		prom_family(w, &f_wall_residual);
		prom_sfixed(w, NULL, 0, m->residual_uj, 6);
	}
	if (m->have_window) {
		prom_family(w, &f_wall_window);
		prom_fixed(w, NULL, 0, m->window_ms, 3);
	}
	if (m->have_power) {
		prom_family(w, &f_wall_power);
		prom_fixed(w, NULL, 0, m->power_uw, 6);
	}
}

/*
 * Rendered whatever its status: each family is there only when it was
 * read (the have_* flags), so a failure leaves out what failed, and a
 * module not loaded leaves out everything.
 */
const struct jm_collector_info jm_wallmeter_collector = {
	.name = "wallmeter",
	.what = "wall meter (PDU, BMC) in force, silent or absent, its "
		"energy, power and residual against the model (sysfs)",
	.gather = wallmeter_gather,
	.render = wallmeter_render,
	.shown = JM_SHOWN_ALWAYS,
};
