// SPDX-License-Identifier: GPL-2.0
/*
 * The process collector (joules_process_*): the top N processes by
 * energy (--processes top=N), from netlink DUMP_TASKS.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/capability.h>

#include "nl.h"
#include "parse.h"
#include "collector.h"

/* Families. Names in base units; counters get _total from the writer. */
/* clang-format off */
static const struct prom_family
f_proc_energy = { "joules_process_energy_joules", PROM_COUNTER, "joules",
	"Energy charged to the process (all its threads, living and exited), top N by energy" },
f_proc_cpu = { "joules_process_cpu_seconds", PROM_COUNTER, "seconds",
	"On-CPU time of the process (all its threads), top N by energy" },
f_procs_seen = { "joules_exporter_processes_seen", PROM_GAUGE, NULL,
	"Processes in the module's dump this scrape (those the exporter may read)" };
/* clang-format on */

int jm_parse_processes(const char *arg, unsigned int *top)
{
	const char *why;
	uint64_t n;

	if (!strcmp(arg, "off") || !strcmp(arg, "0")) {
		*top = 0;
		return 0;
	}
	if (strncmp(arg, "top=", 4) || parse_u64(arg + 4, &n, &why) || !n)
		return -EINVAL;
	if (n > JM_MAX_TOP)
		return -ERANGE;
	*top = (unsigned int)n;
	return 0;
}

struct process_dump {
	struct task_rec *recs;
	size_t n;
};

static int process_request(struct jnl *nl, void *arg)
{
	struct process_dump *d = arg;

	return jnl_dump_tasks(nl, false, &d->recs, &d->n);
}

/* Energy descending, then pid, so the top N is stable between scrapes. */
static int jm_cmp_energy(const void *a, const void *b)
{
	const struct task_rec *x = *(const struct task_rec *const *)a;
	const struct task_rec *y = *(const struct task_rec *const *)b;

	if (x->energy_uj != y->energy_uj)
		return x->energy_uj > y->energy_uj ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static void process_gather(struct jm_state *s, struct jm_snapshot *snap)
{
	struct jm_status *st = &snap->st[JM_C_PROCESS];
	struct process_dump d;
	struct task_rec *recs, **idx;
	enum jnl_op op = JNL_OP_DUMP;
	size_t n, keep;
	int err = jm_request(s, process_request, &d, &op);

	if (err) {
		jm_request_fail(st, "DUMP_TASKS", op, err, NULL);
		return;
	}
	recs = d.recs;
	n = d.n;
	snap->procs_seen = n;
	keep = n < s->top ? n : s->top;
	idx = malloc((n ? n : 1) * sizeof(*idx));
	snap->procs = malloc((keep ? keep : 1) * sizeof(*snap->procs));
	if (!idx || !snap->procs) {
		free(idx);
		free(recs);
		jm_snapshot_free(snap);
		jm_fail(st, JM_FAILED, -ENOMEM, "out of memory");
		return;
	}
	/* Sort pointers: the records are large, 10,000 of them are common. */
	for (size_t i = 0; i < n; i++)
		idx[i] = &recs[i];
	qsort(idx, n, sizeof(*idx), jm_cmp_energy);
	for (size_t i = 0; i < keep; i++)
		snap->procs[i] = *idx[i];
	snap->nprocs = keep;
	free(idx);
	free(recs);
	/*
	 * Without CAP_SYS_PTRACE the dump leaves out other users' processes:
	 * the series are then the top of a part, which must not pass for
	 * the whole. Reported as a permission failure; the visible
	 * processes are still exported.
	 */
	if (!jm_capable(CAP_SYS_PTRACE))
		jm_fail(st, JM_PERMISSION, -EPERM,
			"DUMP_TASKS: without CAP_SYS_PTRACE only this user's "
			"(uid %u) processes are visible; the top %u is of "
			"those",
			(unsigned int)getuid(), s->top);
}

static void process_render(const struct jm_state *s,
			   const struct jm_snapshot *snap,
			   struct prom_writer *w)
{
	char pid[16];
	struct prom_label l[] = { { "pid", pid }, { "comm", NULL } };

	(void)s;
	prom_family(w, &f_procs_seen);
	prom_u64(w, NULL, 0, snap->procs_seen);
	prom_family(w, &f_proc_energy);
	for (size_t i = 0; i < snap->nprocs; i++) {
		const struct task_rec *t = &snap->procs[i];

		if (!t->source)
			continue; /* nothing charged it: no energy to show */
		snprintf(pid, sizeof(pid), "%" PRIu32, t->pid);
		l[1].value = t->comm;
		prom_fixed(w, l, NL(l), t->energy_uj, 6);
	}
	prom_family(w, &f_proc_cpu);
	for (size_t i = 0; i < snap->nprocs; i++) {
		const struct task_rec *t = &snap->procs[i];

		if (!(t->present & REC_F(JL_F_CPU_NS)))
			continue;
		snprintf(pid, sizeof(pid), "%" PRIu32, t->pid);
		l[1].value = t->comm;
		prom_fixed(w, l, NL(l), t->feat[JL_F_CPU_NS], 9);
	}
}

/* Only with --processes top=N. */
static bool process_wanted(const struct jm_state *s)
{
	return s->top;
}

/* A partial view (no CAP_SYS_PTRACE) is still shown, flagged. */
const struct jm_collector_info jm_process_collector = {
	.name = "process",
	.what = "top N processes by energy (--processes top=N)",
	.gather = process_gather,
	.render = process_render,
	.shown = JM_SHOWN_PARTIAL,
	.wanted = process_wanted,
};
