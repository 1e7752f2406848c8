// SPDX-License-Identifier: GPL-2.0
/* The state of the top and top --cgroups tables (top.h): no output here. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "top.h"

/* --- top --- */

void top_init(struct top_state *ts)
{
	memset(ts, 0, sizeof(*ts));
}

void top_free(struct top_state *ts)
{
	free(ts->rows);
	free(ts->prev);
	memset(ts, 0, sizeof(*ts));
}

static int cmp_rec_pid(const void *a, const void *b)
{
	const struct task_rec *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int cmp_row(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;

	if (x->power_w != y->power_w)
		return x->power_w > y->power_w ? -1 : 1;
	if (x->cpu_pct != y->cpu_pct)
		return x->cpu_pct > y->cpu_pct ? -1 : 1;
	if (x->rec.energy_uj != y->rec.energy_uj)
		return x->rec.energy_uj > y->rec.energy_uj ? -1 : 1;
	return x->rec.pid < y->rec.pid ? -1 : x->rec.pid > y->rec.pid;
}

/* The previous record of the same task: same pid and tgid, counters not gone back. */
static const struct task_rec *top_find_prev(const struct top_state *ts,
					    const struct task_rec *r)
{
	const struct task_rec *p;

	p = bsearch(r, ts->prev, ts->nprev, sizeof(*ts->prev), cmp_rec_pid);
	if (!p || p->tgid != r->tgid || p->energy_uj > r->energy_uj ||
	    p->feat[JL_F_CPU_NS] > r->feat[JL_F_CPU_NS])
		return NULL; /* new task, or the pid was reused */
	return p;
}

int top_update(struct top_state *ts, const struct task_rec *recs, size_t n,
	       uint64_t now_ns)
{
	struct top_row *rows = malloc((n ? n : 1) * sizeof(*rows));
	struct task_rec *snap = malloc((n ? n : 1) * sizeof(*snap));
	double dt;

	if (!rows || !snap) {
		free(rows);
		free(snap);
		return -ENOMEM;
	}
	memcpy(snap, recs, n * sizeof(*snap));
	qsort(snap, n, sizeof(*snap), cmp_rec_pid);
	dt = ts->frames && now_ns > ts->prev_ns ?
		     (double)(now_ns - ts->prev_ns) / 1e9 :
		     0;
	for (size_t i = 0; i < n; i++) {
		const struct task_rec *p =
			dt > 0 ? top_find_prev(ts, &snap[i]) : NULL;

		rows[i].rec = snap[i];
		if (p) {
			rows[i].power_w =
				(double)(snap[i].energy_uj - p->energy_uj) /
				1e6 / dt;
			rows[i].cpu_pct = (double)(snap[i].feat[JL_F_CPU_NS] -
						   p->feat[JL_F_CPU_NS]) /
					  1e7 / dt;
		} else {
			rows[i].power_w = -1;
			rows[i].cpu_pct = -1;
		}
	}
	qsort(rows, n, sizeof(*rows), cmp_row);
	free(ts->rows);
	free(ts->prev);
	ts->rows = rows;
	ts->nrows = n;
	ts->prev = snap;
	ts->nprev = n;
	ts->prev_ns = now_ns;
	ts->now_ns = now_ns;
	ts->frames++;
	return 0;
}

/* --- top --cgroups --- */

void cgtop_init(struct cgtop_state *ts, unsigned int max_depth)
{
	memset(ts, 0, sizeof(*ts));
	ts->max_depth = max_depth;
}

void cgtop_free(struct cgtop_state *ts)
{
	if (ts->match_src)
		regfree(&ts->match);
	free(ts->match_src);
	free(ts->snap);
	free(ts->rows);
	memset(ts, 0, sizeof(*ts));
}

int cgtop_set_match(struct cgtop_state *ts, const char *re, char *why,
		    size_t size)
{
	char *src = strdup(re);
	regex_t r;
	int err;

	if (!src)
		return -ENOMEM;
	err = regcomp(&r, re, REG_EXTENDED | REG_NOSUB);
	if (err) {
		regerror(err, &r, why, size);
		free(src);
		return -EINVAL;
	}
	if (ts->match_src)
		regfree(&ts->match);
	free(ts->match_src);
	ts->match = r;
	ts->match_src = src;
	return 0;
}

bool cgtop_wanted(const struct cgtop_state *ts, const char *path)
{
	if (cgname_depth(path) > ts->max_depth)
		return false;
	return !ts->match_src || !regexec(&ts->match, path, 0, NULL, 0);
}

static int cmp_cg_id(const void *a, const void *b)
{
	const struct cgroup_rec *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_cg_row(const void *a, const void *b)
{
	const struct cgtop_row *x = a, *y = b;

	if (x->power_w != y->power_w)
		return x->power_w > y->power_w ? -1 : 1;
	if (x->cpu_pct != y->cpu_pct)
		return x->cpu_pct > y->cpu_pct ? -1 : 1;
	if (x->rec->energy_uj != y->rec->energy_uj)
		return x->rec->energy_uj > y->rec->energy_uj ? -1 : 1;
	return strcmp(x->rec->path, y->rec->path);
}

int cgtop_update(struct cgtop_state *ts, const struct cgroup_rec *recs,
		 size_t n, uint64_t now_ns)
{
	struct cgroup_rec *snap;
	struct cgtop_row *rows;
	size_t k = 0, kmax;
	double dt;

	/* Only the rows to show are kept: records are 4 KiB each. */
	for (size_t i = 0; i < n; i++)
		if (cgtop_wanted(ts, recs[i].path))
			k++;
	snap = malloc((k ? k : 1) * sizeof(*snap));
	rows = malloc((k ? k : 1) * sizeof(*rows));
	if (!snap || !rows) {
		free(snap);
		free(rows);
		return -ENOMEM;
	}
	kmax = k;
	k = 0;
	for (size_t i = 0; i < n && k < kmax; i++)
		if (cgtop_wanted(ts, recs[i].path))
			snap[k++] = recs[i];
	qsort(snap, k, sizeof(*snap), cmp_cg_id);
	dt = ts->frames && now_ns > ts->prev_ns ?
		     (double)(now_ns - ts->prev_ns) / 1e9 :
		     0;
	for (size_t i = 0; i < k; i++) {
		const struct cgroup_rec *c = &snap[i], *p = NULL;

		/* ts->snap is still the previous snapshot. */
		if (dt > 0 && ts->nsnap)
			p = bsearch(c, ts->snap, ts->nsnap, sizeof(*ts->snap),
				    cmp_cg_id);
		/* Ids are not reused while a cgroup lives; counters never go back. */
		if (p && (p->energy_uj > c->energy_uj ||
			  p->feat[JL_F_CPU_NS] > c->feat[JL_F_CPU_NS]))
			p = NULL;
		rows[i].rec = c;
		cgname_parse(c->path, &rows[i].name);
		/* Nothing charged it: no energy to take a rate of. */
		rows[i].power_w =
			p && c->source ? (double)(c->energy_uj - p->energy_uj) /
						 1e6 / dt :
					 -1;
		rows[i].cpu_pct = p ? (double)(c->feat[JL_F_CPU_NS] -
					       p->feat[JL_F_CPU_NS]) /
						  1e7 / dt :
				      -1;
	}
	qsort(rows, k, sizeof(*rows), cmp_cg_row);
	free(ts->snap);
	free(ts->rows);
	ts->snap = snap;
	ts->nsnap = k;
	ts->rows = rows;
	ts->nrows = k;
	ts->seen = n;
	ts->prev_ns = now_ns;
	ts->now_ns = now_ns;
	ts->frames++;
	return 0;
}
