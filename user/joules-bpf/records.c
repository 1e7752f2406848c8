// SPDX-License-Identifier: GPL-2.0
/*
 * From the collector's maps to out.h's records: threads are task entries;
 * a process sums its living threads' entries and its `procs` entry (the
 * folded totals of threads that exited). Energy, when coefficients were
 * given, is the attribution core's model of those totals.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jb.h"

uint64_t jb_model_uj(const struct jl_coef *c, const struct jl_feat *f)
{
	/*
	 * jl_model_fj() saturates at 2^64 fJ (18 kJ), which a long-lived
	 * process passes. The model is linear: split each count into
	 * (count >> s) << s plus the low s bits, with the smallest s whose
	 * high part does not saturate, and scale the high part back up.
	 */
	for (unsigned int s = 0; s < 64; s++) {
		struct jl_feat hi = *f, lo = *f;
		jl_u64 mhi, mlo, rem = 0;

		for (int i = 0; i < JL_NR_FEATURES; i++) {
			hi.v[i] = f->v[i] >> s;
			lo.v[i] = f->v[i] - (hi.v[i] << s);
		}
		mhi = jl_model_fj(c, &hi);
		if (mhi == UINT64_MAX)
			continue;
		if (!s)
			return jl_fj_to_uj(mhi, &rem);
		mlo = jl_model_fj(c, &lo);
		if (mlo == UINT64_MAX)
			return UINT64_MAX;
		return jl_add_sat(jl_muldiv(mhi, 1ull << s, 1000000000ull),
				  jl_fj_to_uj(mlo, &rem));
	}
	return UINT64_MAX;
}

void jb_node_feat(const struct jb_counts *cur, const struct jb_counts *prev,
		  uint32_t hw_present, struct jl_feat *f)
{
	memset(f, 0, sizeof(*f));
	f->present = (1u << JL_F_CPU_NS) | (1u << JL_F_DISK);
	f->v[JL_F_CPU_NS] = cur->cpu_ns - prev->cpu_ns;
	f->v[JL_F_DISK] = cur->read_bytes + cur->write_bytes -
			  prev->read_bytes - prev->write_bytes;
	for (int h = 0; h < JB_NR_HW; h++) {
		if (!(hw_present & (1u << h)))
			continue;
		f->v[JL_F_CYCLES + h] = cur->hw[h] - prev->hw[h];
		f->present |= 1u << (JL_F_CYCLES + h);
	}
}

static void counts_add(struct jb_counts *a, const struct jb_counts *b)
{
	a->cpu_ns += b->cpu_ns;
	a->read_bytes += b->read_bytes;
	a->write_bytes += b->write_bytes;
	for (int i = 0; i < JB_NR_HW; i++)
		a->hw[i] += b->hw[i];
}

/* Counters (hw[i] valid for bits in hw_bits) and, with coefficients, energy. */
static void rec_fill(struct task_rec *r, const struct jb_counts *c,
		     uint32_t hw_bits, const struct jb_opts *o)
{
	struct jl_feat f;

	r->feat[JL_F_CPU_NS] = c->cpu_ns;
	for (int i = 0; i < JB_NR_HW; i++)
		if (hw_bits & (1u << i))
			r->feat[JL_F_CYCLES + i] = c->hw[i];
	r->feat[JL_F_DISK] = c->read_bytes + c->write_bytes;
	r->read_bytes = c->read_bytes;
	r->write_bytes = c->write_bytes;
	r->present = REC_F(JL_F_CPU_NS) | REC_F(JL_F_DISK) |
		     (hw_bits << JL_F_CYCLES);
	if (!o->have_coef)
		return; /* source none: energy absent */
	/* out.h's features are the core's, in the same order. */
	for (int i = 0; i < JL_NR_FEATURES; i++)
		f.v[i] = r->feat[i];
	f.present = r->present;
	r->energy_uj = jb_model_uj(&o->coef, &f);
	r->source = REC_SRC_MODEL;
	/* One coefficient set for the whole run of the tool. */
	r->model_generation = 1;
}

static void thread_rec(const struct jb_task_ent *t, const struct jb_opts *o,
		       struct task_rec *r)
{
	memset(r, 0, sizeof(*r));
	r->pid = t->tid;
	r->tgid = t->v.tgid;
	r->uid = t->v.uid;
	r->nr_threads = 1;
	memcpy(r->comm, t->v.comm, JB_COMM_LEN);
	r->comm[JB_COMM_LEN - 1] = 0;
	rec_fill(r, &t->v.c, t->v.hw_seen, o);
}

/*
 * A process from its living threads (tasks[0..n), all of tgid) and its
 * folded exited threads (p, may be NULL).
 */
static void proc_rec(uint32_t tgid, const struct jb_task_ent *const *t,
		     size_t n, const struct jb_proc *p, const struct jb_opts *o,
		     struct task_rec *r)
{
	const struct jb_task_ent *leader = NULL;
	struct jb_counts sum;
	uint32_t hw = 0;
	const char *comm = NULL;

	memset(r, 0, sizeof(*r));
	memset(&sum, 0, sizeof(sum));
	r->pid = r->tgid = tgid;
	r->process = true;
	r->nr_threads = (uint32_t)n;
	r->exited = n == 0;
	for (size_t i = 0; i < n; i++) {
		counts_add(&sum, &t[i]->v.c);
		hw |= t[i]->v.hw_seen;
		if (t[i]->tid == tgid)
			leader = t[i];
	}
	if (p) {
		counts_add(&sum, &p->c);
		for (int i = 0; i < JB_NR_HW; i++)
			if (p->hw_threads[i])
				hw |= 1u << i;
	}
	/* The process's name is its leader's, living, else exited, else any. */
	if (leader || (n && !(p && p->leader_dead))) {
		comm = (leader ? leader : t[0])->v.comm;
		r->uid = (leader ? leader : t[0])->v.uid;
	} else if (p) {
		comm = p->comm;
		r->uid = p->uid;
	}
	if (comm) {
		memcpy(r->comm, comm, JB_COMM_LEN);
		r->comm[JB_COMM_LEN - 1] = 0;
	}
	rec_fill(r, &sum, hw, o);
}

static int cmp_tgid_tid(const void *a, const void *b)
{
	const struct jb_task_ent *x = *(const struct jb_task_ent *const *)a;
	const struct jb_task_ent *y = *(const struct jb_task_ent *const *)b;

	if (x->v.tgid != y->v.tgid)
		return x->v.tgid < y->v.tgid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static const struct jb_proc *find_proc(const struct jb_snap *s, uint32_t tgid)
{
	size_t lo = 0, hi = s->nprocs;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s->procs[mid].tgid == tgid)
			return &s->procs[mid].v;
		if (s->procs[mid].tgid < tgid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static const struct jb_task_ent *find_task(const struct jb_snap *s,
					   uint32_t tid)
{
	size_t lo = 0, hi = s->ntasks;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s->tasks[mid].tid == tid)
			return &s->tasks[mid];
		if (s->tasks[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

int jb_records(const struct jb_snap *s, const struct jb_opts *o, bool threads,
	       struct task_rec **recs)
{
	const struct jb_task_ent **by = NULL;
	struct task_rec *r;
	size_t n = 0, i, j, k;

	r = calloc(s->ntasks + s->nprocs + 1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	if (threads) {
		for (i = 0; i < s->ntasks; i++)
			thread_rec(&s->tasks[i], o, &r[n++]);
		*recs = r;
		return (int)n;
	}
	by = malloc((s->ntasks + 1) * sizeof(*by));
	if (!by) {
		free(r);
		return -ENOMEM;
	}
	for (i = 0; i < s->ntasks; i++)
		by[i] = &s->tasks[i];
	qsort(by, s->ntasks, sizeof(*by), cmp_tgid_tid);
	/* Merge the tgid-sorted threads with the tgid-sorted procs. */
	for (i = 0, k = 0; i < s->ntasks || k < s->nprocs;) {
		uint32_t tgid;
		const struct jb_proc *p = NULL;

		if (i < s->ntasks &&
		    (k >= s->nprocs || by[i]->v.tgid <= s->procs[k].tgid))
			tgid = by[i]->v.tgid;
		else
			tgid = s->procs[k].tgid;
		for (j = i; j < s->ntasks && by[j]->v.tgid == tgid; j++)
			;
		if (k < s->nprocs && s->procs[k].tgid == tgid)
			p = &s->procs[k++].v;
		proc_rec(tgid, by + i, j - i, p, o, &r[n++]);
		i = j;
	}
	free(by);
	*recs = r;
	return (int)n;
}

int jb_record_one(const struct jb_snap *s, const struct jb_opts *o, pid_t id,
		  bool thread, struct task_rec *out)
{
	const struct jb_task_ent *t = find_task(s, (uint32_t)id), **mine;
	const struct jb_proc *p;
	uint32_t tgid = (uint32_t)id;
	size_t n = 0;

	if (thread) {
		if (!t)
			return -ESRCH;
		thread_rec(t, o, out);
		return 0;
	}
	/* A thread id names its process, as /proc/<tid> does. */
	if (t)
		tgid = t->v.tgid;
	mine = malloc((s->ntasks + 1) * sizeof(*mine));
	if (!mine)
		return -ENOMEM;
	for (size_t i = 0; i < s->ntasks; i++)
		if (s->tasks[i].v.tgid == tgid)
			mine[n++] = &s->tasks[i];
	p = find_proc(s, tgid);
	if (!n && !p) {
		free(mine);
		return -ESRCH;
	}
	proc_rec(tgid, mine, n, p, o, out);
	free(mine);
	return 0;
}
