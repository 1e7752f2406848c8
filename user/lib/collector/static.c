// SPDX-License-Identifier: GPL-2.0
/*
 * The static power collector (joules_static_power_*): the module's
 * estimates of the node's static (idle) power, measured over the intervals
 * in which almost nothing ran, one per RAPL domain of each package and one
 * for the wall meter, from sysfs static_power, a line an estimate:
 *
 *   pkg0 pkg power_uw 4999926 age_ms 45 idle_ms 6000 in_force measured
 *   wall meter power_uw 39999999 age_ms 49 idle_ms 5800 in_force measured
 *   pkg1 core power_uw - age_ms - idle_ms 0 in_force none
 *
 * A figure of "-" (nothing measured yet) is left out, never 0, and so is
 * hardware without a line (no RAPL, no wall meter: an empty file). The
 * file needs CAP_PERFMON or CAP_SYS_ADMIN, and an older module has none.
 * A line that does not parse is left out and the collector's status says
 * why; the other lines are still exported, as the wall meter collector
 * exports the figures it could read.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parse.h"
#include "collector.h"

/* Families. Names in base units. */
/* clang-format off */
static const struct prom_family
f_static_power = { "joules_static_power_watts", PROM_GAUGE, "watts",
	"The module's static (idle) power estimate per RAPL domain and for the wall meter, from the intervals in which almost nothing ran; in_force: measured (what idle is charged), set (an operator's value is charged instead) or none" },
f_static_age = { "joules_static_power_age_seconds", PROM_GAUGE, "seconds",
	"Time since the last idle interval that fed the static power estimate" },
f_static_idle = { "joules_static_power_idle_seconds", PROM_GAUGE, "seconds",
	"Idle time the static power estimate rests on" };
/* clang-format on */

/*
 * The longest line taken: the module's longest, with 20-digit numbers, is
 * 125 bytes. A file longer than the buffer is cut, but it then holds more
 * than JM_STATIC_MAX lines or an overlong one, a failure either way, and
 * a cut line cannot parse (in_force, its last field, is gone).
 */
#define STATIC_LINE_MAX 160
#define STATIC_BUF (1u << 14)
/* scope, domain, then power_uw, age_ms, idle_ms and in_force, each with its value */
#define STATIC_FIELDS 10

static const char *const static_keys[] = { "power_uw", "age_ms", "idle_ms",
					   "in_force" };
static const char *const static_domains[] = { "pkg", "core", "dram", "psys",
					      "meter" };
static const char *const static_in_force[] = { "measured", "set", "none" };

static bool static_one_of(const char *s, const char *const *set, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(s, set[i]))
			return true;
	return false;
}

/* "wall", or "pkg" and digits, short enough for jm_static.scope. */
static bool static_scope_ok(const char *s)
{
	size_t n;

	if (!strcmp(s, "wall"))
		return true;
	if (strncmp(s, "pkg", 3))
		return false;
	n = strspn(s + 3, "0123456789");
	return n && !s[3 + n] && 3 + n < sizeof(((struct jm_static *)0)->scope);
}

/* A figure: a number, or "-" where dash is allowed (*have false). 0 or -EINVAL. */
static int static_number(const char *s, bool dash, uint64_t *v, bool *have)
{
	const char *why;

	*have = false;
	if (dash && !strcmp(s, "-"))
		return 0;
	if (parse_u64(s, v, &why))
		return -EINVAL;
	*have = true;
	return 0;
}

/* Split line at single spaces into f[STATIC_FIELDS]: true if it has exactly that many. */
static bool static_split(char *line, char **f)
{
	size_t n = 0;

	for (char *p = line;;) {
		char *sp = strchr(p, ' ');

		if (n == STATIC_FIELDS)
			return false;
		f[n++] = p;
		if (!sp)
			break;
		*sp = 0;
		p = sp + 1;
	}
	return n == STATIC_FIELDS;
}

/* One line of static_power into *e: NULL, or why it is refused. */
static const char *static_line(const char *text, struct jm_static *e)
{
	char line[STATIC_LINE_MAX + 1], *f[STATIC_FIELDS];
	bool have_idle;

	if (strlen(text) > STATIC_LINE_MAX)
		return "overlong";
	strcpy(line, text);
	if (!static_split(line, f))
		return "not 10 fields";
	for (size_t k = 0; k < NL(static_keys); k++)
		if (strcmp(f[2 + 2 * k], static_keys[k]))
			return "unknown field";
	if (!static_scope_ok(f[0]))
		return "bad scope";
	if (!static_one_of(f[1], static_domains, NL(static_domains)) ||
	    !strcmp(f[0], "wall") != !strcmp(f[1], "meter"))
		return "bad domain";
	if (!static_one_of(f[9], static_in_force, NL(static_in_force)))
		return "bad in_force";
	if (static_number(f[3], true, &e->power_uw, &e->have_power) ||
	    static_number(f[5], true, &e->age_ms, &e->have_age) ||
	    static_number(f[7], false, &e->idle_ms, &have_idle))
		return "not a number";
	snprintf(e->scope, sizeof(e->scope), "%s", f[0]);
	snprintf(e->domain, sizeof(e->domain), "%s", f[1]);
	snprintf(e->in_force, sizeof(e->in_force), "%s", f[9]);
	return NULL;
}

/* A line left out: the first one is said. */
static void static_line_fail(const struct jm_state *s, struct jm_status *st,
			     unsigned int lineno, const char *why,
			     const char *text)
{
	if (st->reason == JM_OK)
		jm_fail(st, JM_FAILED, -EINVAL,
			"%s/static_power: line %u: %s: '%.64s'", s->sysfs,
			lineno, why, text);
}

static void static_read_fail(const struct jm_state *s, struct jm_status *st,
			     int err)
{
	/* Loaded, but a module from before the static power estimates. */
	if (err == -ENOENT && !access(s->sysfs, F_OK))
		jm_fail(st, JM_UNSUPPORTED, err,
			"%s/static_power: absent: the module has no static "
			"power estimates",
			s->sysfs);
	else if (jm_reason_of(err) == JM_PERMISSION)
		jm_fail(st, JM_PERMISSION, err,
			"%s/static_power: %s: the static power estimates need "
			"CAP_PERFMON or CAP_SYS_ADMIN",
			s->sysfs, strerror(-err));
	else
		jm_sysfs_fail(s, st, "static_power", err);
}

/* Is there an estimate for e's scope and domain before it? */
static bool static_dup(const struct jm_snapshot *snap,
		       const struct jm_static *e)
{
	for (size_t i = 0; i < snap->nstatics; i++)
		if (!strcmp(snap->statics[i].scope, e->scope) &&
		    !strcmp(snap->statics[i].domain, e->domain))
			return true;
	return false;
}

static void static_gather(struct jm_state *s, struct jm_snapshot *snap)
{
	struct jm_status *st = &snap->st[JM_C_STATIC];
	unsigned int lineno = 0;
	char *buf = malloc(STATIC_BUF), *line, *next;
	ssize_t n;

	if (!buf) {
		jm_fail(st, JM_FAILED, -ENOMEM, "static_power: %s",
			strerror(ENOMEM));
		return;
	}
	n = jm_read(s, "static_power", buf, STATIC_BUF);
	if (n < 0) {
		static_read_fail(s, st, (int)n);
		free(buf);
		return;
	}
	for (line = buf; n > 0 && line; line = next) {
		struct jm_static *e = &snap->statics[snap->nstatics];
		const char *why;

		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		lineno++;
		if (snap->nstatics == JM_STATIC_MAX) {
			static_line_fail(s, st, lineno,
					 "more lines than the exporter keeps",
					 line);
			break;
		}
		why = static_line(line, e);
		if (!why && static_dup(snap, e))
			why = "a second line for its scope and domain";
		if (why) {
			memset(e, 0, sizeof(*e));
			static_line_fail(s, st, lineno, why, line);
			continue;
		}
		snap->nstatics++;
	}
	free(buf);
}

static void static_render(const struct jm_state *s,
			  const struct jm_snapshot *snap, struct prom_writer *w)
{
	struct prom_label l[3] = { { "scope", NULL },
				   { "domain", NULL },
				   { "in_force", NULL } };

	(void)s;
	prom_family(w, &f_static_power);
	for (size_t i = 0; i < snap->nstatics; i++) {
		const struct jm_static *e = &snap->statics[i];

		if (!e->have_power)
			continue;
		l[0].value = e->scope;
		l[1].value = e->domain;
		l[2].value = e->in_force;
		prom_fixed(w, l, 3, e->power_uw, 6);
	}
	prom_family(w, &f_static_age);
	for (size_t i = 0; i < snap->nstatics; i++) {
		const struct jm_static *e = &snap->statics[i];

		if (!e->have_age)
			continue;
		l[0].value = e->scope;
		l[1].value = e->domain;
		prom_fixed(w, l, 2, e->age_ms, 3);
	}
	prom_family(w, &f_static_idle);
	for (size_t i = 0; i < snap->nstatics; i++) {
		l[0].value = snap->statics[i].scope;
		l[1].value = snap->statics[i].domain;
		prom_fixed(w, l, 2, snap->statics[i].idle_ms, 3);
	}
}

/*
 * Rendered whatever its status: only the lines that parsed are there, so
 * a bad line leaves out itself alone, and a file that could not be read
 * (no privilege, an older module, no module) leaves out everything.
 */
const struct jm_collector_info jm_static_collector = {
	.name = "static",
	.what = "static (idle) power estimated per RAPL domain and for the "
		"wall meter, its age and the idle time behind it (sysfs)",
	.gather = static_gather,
	.render = static_render,
	.shown = JM_SHOWN_ALWAYS,
};
