// SPDX-License-Identifier: GPL-2.0
/*
 * Energy per cgroup (v2, the default hierarchy), kept in the kernel: every
 * charge the worker makes to a task also goes to the task's cgroup and
 * all its ancestors, so a cgroup's totals include its descendants (like
 * cpu.stat's usage_usec) and keep the work of tasks that exited, and of
 * child cgroups that were removed.
 *
 * A task is charged to the cgroup it is in when the worker closes the
 * interval: a task that moves is charged where it was at each interval's
 * end, at interval granularity. A task that exited is charged to its last
 * cgroup.
 *
 * Lifetime: an entry is made the first time a task of the cgroup is
 * charged, or a reader asks for it. It holds a reference on its struct
 * cgroup and on its parent's entry; task entries and readers hold
 * references on it. When the cgroup is removed (its CSS_ONLINE cleared by
 * rmdir, which the worker's scan of the table sees within CG_SCAN_TICKS
 * ticks), the worker unhashes it; once nothing refers to it any more (the
 * last exited task folded), its final totals go out once on the exits
 * multicast group and it is freed.
 *
 * Not the cgroup_rmdir tracepoint: with a probe attached, every rmdir
 * formats the cgroup's path (TRACE_CGROUP_PATH) under a spinlock with
 * interrupts off, and kernfs_path_from_node() walks up the tree once per
 * component, O(depth^2). A user with a delegated subtree could make each
 * rmdir hold interrupts off for as long as they like (2,000 levels: 1 s
 * per rmdir on the KASAN kernel) merely because joules was loaded.
 *
 * Charges are summed per cgroup (pend) and marked there, the way the
 * kernel's rstat keeps cpu.stat: the worker pays one addition per task
 * charged, whatever the depth, and the sums go up the tree only when
 * someone reads a cgroup (or one is freed), once per cgroup charged since
 * the last read. Totals, pending sums and the list of charged cgroups
 * are under cg_seq's writer lock; readers flush, then read and retry.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cgroup.h>
#include <linux/hash.h>
#include <linux/kernfs.h>
#include <linux/mutex.h>
#include <linux/random.h>
#include <linux/seqlock.h>
#include <linux/siphash.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

#include "compat.h"
#include "cgroup.h"
#include "report.h"

#define CG_HASH_BITS 10
/*
 * Entries the worker's scan for removed cgroups visits per tick: a whole
 * pass each tick up to CG_SCAN_BUDGET entries, beyond that 1/CG_SCAN_TICKS
 * of them, so a removal is seen within CG_SCAN_TICKS ticks however many
 * cgroups there are.
 */
#define CG_SCAN_BUDGET 4096
#define CG_SCAN_TICKS 16

enum {
	CG_REMOVED,	/* its cgroup seen offline (rmdir) */
	CG_UNHASHED,	/* the worker has taken it out of the table */
};

struct joules_cg {
	struct hlist_node hnode;
	u64 id;
	struct cgroup *cgrp;		/* referenced until freed */
	struct joules_cg *parent;	/* referenced; NULL for the root */
	refcount_t ref;
	unsigned long flags;		/* CG_* */
	struct llist_node rmnode;	/* cg_removed */
	struct llist_node dnode;	/* cg_dead */
	char *path;			/* as of removal, for the exit record */
	u32 nr_tasks;			/* live tasks here and below */
	struct joules_totals t;		/* under cg_seq, as of the last flush */
	struct joules_totals pend;	/* charged here, not yet in any t */
	/*
	 * The updated tree, as the kernel's rstat keeps it: a cgroup with
	 * pending sums, or with such a descendant, is dirty and linked into
	 * its parent's dirty_kids (or cg_dirty_top), so a flush visits each
	 * of them once, children before parents. Under cg_seq.
	 */
	struct joules_cg *dirty_kids;
	struct joules_cg *dirty_next;
	bool dirty;
	struct rcu_head rcu;
};

static struct hlist_head cg_table[1 << CG_HASH_BITS];
static DEFINE_MUTEX(cg_lock);	/* table inserts and removals */
static DEFINE_SEQLOCK(cg_seq);	/* totals and task counts */
static LLIST_HEAD(cg_removed);
static LLIST_HEAD(cg_dead);
static struct joules_cg *cg_dirty_top;	/* dirty entries without a parent */
static DEFINE_MUTEX(cg_flush_lock);	/* one flush at a time */
static atomic64_t cg_objects;
/*
 * Longest stretch a flush held cg_seq, in ktime_get_ns(): local_clock()
 * may stand still across a short stretch once the TSC is marked unstable
 * (sched_clock_cpu() caps it at the last tick plus one tick), and a
 * stretch measured as 0 ns is a wrong figure.
 */
static u64 cg_flush_max_ns;
static bool cg_up;

u64 joules_cg_objects(void)
{
	return atomic64_read(&cg_objects);
}

u64 joules_cg_flush_max_ns(void)
{
	return READ_ONCE(cg_flush_max_ns);
}

/*
 * Keyed: cgroup ids are visible to their owners (the directory's inode
 * number), and an unkeyed hash would let a user with a delegated subtree
 * keep only the cgroups that land in one bucket.
 */
static siphash_key_t cg_hash_key;

static struct hlist_head *bucket_of(u64 id)
{
	return &cg_table[siphash_1u64(id, &cg_hash_key) & (ARRAY_SIZE(cg_table) - 1)];
}

/* An entry with a reference, or NULL; caller holds RCU. */
static struct joules_cg *cg_find(u64 id)
{
	struct joules_cg *cg;

	hlist_for_each_entry_rcu(cg, bucket_of(id), hnode)
		if (cg->id == id && !test_bit(CG_UNHASHED, &cg->flags) &&
		    refcount_inc_not_zero(&cg->ref))
			return cg;
	return NULL;
}

/* Another reference, for the holder of one. */
void joules_cg_hold(struct joules_cg *cg)
{
	refcount_inc(&cg->ref);
}

/* Drop a reference; the last one hands the entry to the worker. */
void joules_cg_put(struct joules_cg *cg)
{
	if (cg && refcount_dec_and_test(&cg->ref))
		llist_add(&cg->dnode, &cg_dead);
}

/* Removed: the entry goes to the worker, with a reference of its own. */
static void cg_mark_removed(struct joules_cg *cg)
{
	if (!test_and_set_bit(CG_REMOVED, &cg->flags))
		llist_add(&cg->rmnode, &cg_removed);
	else
		joules_cg_put(cg);
}

/*
 * A new entry for cgrp below parent, whose reference it keeps: in the
 * table, with the table's reference and the caller's. cg_lock held.
 */
static struct joules_cg *cg_new(struct cgroup *cgrp, struct joules_cg *parent)
{
	struct joules_cg *cg = kzalloc(sizeof(*cg), GFP_KERNEL);

	if (!cg)
		return NULL;
	cg->id = cgroup_id(cgrp);
	cgroup_get(cgrp);
	cg->cgrp = cgrp;
	cg->parent = parent;
	refcount_set(&cg->ref, 2);
	atomic64_inc(&cg_objects);
	hlist_add_head_rcu(&cg->hnode, bucket_of(cg->id));
	/*
	 * An entry made for a cgroup already removed (a reader of a file
	 * opened before the rmdir, a task that died there) is marked at
	 * once; the worker's scan would find it too, a tick later.
	 */
	if (!(READ_ONCE(cgrp->self.flags) & CSS_ONLINE)) {
		refcount_inc(&cg->ref);
		cg_mark_removed(cg);
	}
	return cg;
}

/*
 * The entry of cgrp and, where missing, its ancestors', made top-down from
 * the nearest ancestor that has one, in a loop: cgroup v2's depth is
 * unbounded by default and any delegated subtree can be deeper than a
 * kernel stack could recurse. A reference, or NULL without memory.
 */
static struct joules_cg *cg_make(struct cgroup *cgrp)
{
	struct joules_cg *cg, *parent = NULL;
	struct cgroup *a;
	int level;

	mutex_lock(&cg_lock);
	rcu_read_lock();
	for (a = cgrp; a; a = cgroup_parent(a)) {
		parent = cg_find(cgroup_id(a));
		if (parent)
			break;
	}
	rcu_read_unlock();
	cg = parent;		/* cgrp's own, if someone made it meanwhile */
	for (level = a ? a->level + 1 : 0; level <= cgrp->level; level++) {
		cg = cg_new(cgroup_ancestor(cgrp, level), parent);
		if (!cg)
			break;
		parent = cg;	/* the child made next keeps this reference */
	}
	mutex_unlock(&cg_lock);
	if (!cg)
		joules_cg_put(parent);
	return cg;
}

/*
 * The entry of cgrp (on the default hierarchy), made if need be (the
 * worker charging a task, which may have died in a cgroup removed since);
 * a reference. Process context, may sleep.
 */
struct joules_cg *joules_cg_get(struct cgroup *cgrp)
{
	struct joules_cg *cg;

	rcu_read_lock();
	cg = cg_find(cgroup_id(cgrp));
	rcu_read_unlock();
	return cg ? cg : cg_make(cgrp);
}

/*
 * For readers: the entry, or -ENODEV for a removed cgroup that has none
 * any more (its final totals went out; a fresh empty entry would read
 * zero and send a second final record on every read), as the kernel's
 * own files of a removed cgroup answer; NULL without memory.
 */
struct joules_cg *joules_cg_get_reader(struct cgroup *cgrp)
{
	struct joules_cg *cg;

	rcu_read_lock();
	cg = cg_find(cgroup_id(cgrp));
	rcu_read_unlock();
	if (cg)
		return cg;
	/* Gone offline after this test: cg_new() marks it removed at once. */
	if (!(READ_ONCE(cgrp->self.flags) & CSS_ONLINE))
		return ERR_PTR(-ENODEV);
	return cg_make(cgrp);
}

/*
 * Worker: mark the entries whose cgroup went offline (rmdir clears
 * CSS_ONLINE under cgroup_mutex; a racy read only delays the mark by a
 * tick). Nothing to look for while the hierarchy has no dying cgroup: an
 * entry pins its cgroup, and a removed one counts in the root's
 * nr_dying_descendants until released. Otherwise a share of the table
 * (see CG_SCAN_BUDGET), resuming where the last call stopped.
 */
static void cg_scan_removed(void)
{
	static unsigned int next_bucket;
	u64 budget = max_t(u64, CG_SCAN_BUDGET, atomic64_read(&cg_objects) / CG_SCAN_TICKS + 1);
	unsigned int n;
	u64 seen = 0;
	struct joules_cg *cg;

	if (!READ_ONCE(cgrp_dfl_root.cgrp.nr_dying_descendants))
		return;
	for (n = 0; n < ARRAY_SIZE(cg_table) && seen < budget; n++) {
		unsigned int b = next_bucket;

		next_bucket = (next_bucket + 1) % ARRAY_SIZE(cg_table);
		if (n % 64 == 63)
			cond_resched();
		if (hlist_empty(&cg_table[b]))
			continue;
		rcu_read_lock();
		hlist_for_each_entry_rcu(cg, &cg_table[b], hnode) {
			seen++;
			if (test_bit(CG_REMOVED, &cg->flags) ||
			    test_bit(CG_UNHASHED, &cg->flags) ||
			    (READ_ONCE(cg->cgrp->self.flags) & CSS_ONLINE))
				continue;
			if (refcount_inc_not_zero(&cg->ref))
				cg_mark_removed(cg);	/* the reference goes along */
		}
		rcu_read_unlock();
	}
}

/* Add n live tasks (n may be negative) to cg and its ancestors. */
void joules_cg_count(struct joules_cg *cg, int n)
{
	write_seqlock(&cg_seq);
	for (; cg; cg = cg->parent)
		cg->nr_tasks += n;
	write_sequnlock(&cg_seq);
}

/* Worker: a charge to a task of cg, pending in cg until someone reads. */
void joules_cg_charge(struct joules_cg *cg, const struct joules_totals *d)
{
	struct joules_cg *c;

	write_seqlock(&cg_seq);
	joules_totals_add(&cg->pend, d);
	/* Up to the first ancestor already dirty: amortised O(1) a charge. */
	for (c = cg; c && !c->dirty; c = c->parent) {
		struct joules_cg **head = c->parent ? &c->parent->dirty_kids : &cg_dirty_top;

		c->dirty = true;
		c->dirty_next = *head;
		*head = c;
	}
	write_sequnlock(&cg_seq);
}

/* Steps of a flush (down to a charged cgroup, or up) between breaks. */
#define CG_FLUSH_BATCH 64

/*
 * Every pending sum into its cgroup's totals and, through its parent's
 * pending sum, its ancestors': a post-order walk of the updated tree
 * that settles each dirty cgroup once, O(dirty + their ancestors), and
 * lets go of cg_seq every CG_FLUSH_BATCH steps. Charges may come in
 * during a break: they mark the tree as they would anyway, and the walk
 * (which resumes from a parent, still dirty) finds them. Process
 * context; readers flush, then read.
 */
/* A stretch of a flush ends: keep the longest. */
static void cg_flush_note(u64 since)
{
	u64 held = ktime_get_ns() - since;

	/* Written under cg_flush_lock only; sysfs reads it without. */
	if (held > cg_flush_max_ns)
		WRITE_ONCE(cg_flush_max_ns, held);
}

static void __cg_flush(void)
{
	struct joules_cg *n, *c;
	unsigned int done = 0;
	u64 since;

	lockdep_assert_held(&cg_flush_lock);
	/* Nothing charged since the last flush: no writer lock for readers. */
	if (!READ_ONCE(cg_dirty_top))
		return;
	write_seqlock(&cg_seq);
	since = ktime_get_ns();
	while ((n = cg_dirty_top)) {
		cg_dirty_top = n->dirty_next;
		while (n) {
			/*
			 * Every step counts, down as well as up: a charged
			 * leaf 2,000 levels down is 2,000 steps before its
			 * first settle. n stays dirty across the break.
			 */
			if (++done % CG_FLUSH_BATCH == 0) {
				cg_flush_note(since);
				write_sequnlock(&cg_seq);
				cond_resched();
				write_seqlock(&cg_seq);
				since = ktime_get_ns();
			}
			c = n->dirty_kids;
			if (c) {
				n->dirty_kids = c->dirty_next;
				n = c;
				continue;
			}
			joules_totals_add(&n->t, &n->pend);
			if (n->parent)
				joules_totals_add(&n->parent->pend, &n->pend);
			memset(&n->pend, 0, sizeof(n->pend));
			n->dirty = false;
			n = n->parent;
		}
	}
	cg_flush_note(since);
	write_sequnlock(&cg_seq);
}

/*
 * Always under the mutex, also when the top list looks empty: a flush in
 * progress has taken the root off it, and what it has not settled yet is
 * neither in the totals a reader is about to read nor safe to free.
 */
static void cg_flush(void)
{
	mutex_lock(&cg_flush_lock);
	__cg_flush();
	mutex_unlock(&cg_flush_lock);
}

/* cg's totals as of the last flush. */
static void cg_read(struct joules_cg *cg, struct joules_cg_stats *cs)
{
	struct joules_totals t;
	unsigned int seq;

	do {
		seq = read_seqbegin(&cg_seq);
		t = cg->t;
		cs->nr_tasks = cg->nr_tasks;
	} while (read_seqretry(&cg_seq, seq));
	memset(&cs->st, 0, sizeof(cs->st));
	joules_totals_stats(&t, &cs->st);
	cs->id = cg->id;
}

/* Totals of cg, consistent with each other. */
void joules_cg_stats(struct joules_cg *cg, struct joules_cg_stats *cs)
{
	cg_flush();
	cg_read(cg, cs);
}

u64 joules_cg_id(const struct joules_cg *cg)
{
	return cg->id;
}

struct cgroup *joules_cg_cgroup(const struct joules_cg *cg)
{
	return cg->cgrp;
}

bool joules_cg_removed(const struct joules_cg *cg)
{
	return test_bit(CG_REMOVED, &cg->flags);
}

/* The root of the current task's cgroup namespace, on the default hierarchy. */
struct cgroup *joules_cg_ns_root(void)
{
	return current->nsproxy->cgroup_ns->root_cset->dfl_cgrp;
}

/*
 * The cgroup at path, relative to the current task's cgroup namespace root
 * ("/" or "" is that root; ".." is just a name, which no cgroup has): a
 * reference, or an ERR_PTR.
 */
struct cgroup *joules_cg_by_path(const char *path)
{
	struct cgroup *cgrp, *root = joules_cg_ns_root();
	char *buf;
	int n;

	if (JL_CGROUP_PATH_IN_NS) {
		cgrp = cgroup_get_from_path(path);
		return cgrp ? cgrp : ERR_PTR(-ENOENT);
	}
	buf = kmalloc(PATH_MAX, GFP_KERNEL);
	if (!buf)
		return ERR_PTR(-ENOMEM);
	n = joules_cgroup_path(root, NULL, buf, PATH_MAX);
	if (n < 0 || n + 1 + strlen(path) >= PATH_MAX) {
		kfree(buf);
		return ERR_PTR(-ENAMETOOLONG);
	}
	strcat(buf, "/");
	strcat(buf, path);
	cgrp = cgroup_get_from_path(buf);
	kfree(buf);
	return cgrp ? cgrp : ERR_PTR(-ENOENT);	/* before 6.0: NULL */
}

static void cg_free_rcu(struct rcu_head *rcu)
{
	struct joules_cg *cg = container_of(rcu, struct joules_cg, rcu);

	kfree(cg->path);
	kfree(cg);
}

/*
 * cg's path from the hierarchy's root into buf (PATH_MAX), cut at the end
 * if longer, from the names along the entries' parent chain: O(depth).
 * kernfs_path_from_node() walks up once per component, O(depth^2), which
 * a deep chain removed at once makes O(n * depth^2) for the worker (and,
 * before 6.15, under kernfs' global rename lock with interrupts off).
 */
static void cg_path(const struct joules_cg *cg, char *buf)
{
	size_t total = 0, end, len, i;
	const struct joules_cg *c;
	const char *name;

	rcu_read_lock();	/* kernfs names (compat.h) */
	for (c = cg; c->parent; c = c->parent)
		total += 1 + strlen(jl_kn_name(c->cgrp->kn));
	for (c = cg, end = total; c->parent; c = c->parent) {
		name = jl_kn_name(c->cgrp->kn);
		len = strlen(name);
		end -= len + 1;
		/* "/name" at [end, end + len + 1), the part below PATH_MAX - 1. */
		for (i = 0; i <= len && end + i < PATH_MAX - 1; i++)
			buf[end + i] = i ? name[i - 1] : '/';
	}
	rcu_read_unlock();
	if (!total)
		buf[total++] = '/';
	buf[min_t(size_t, total, PATH_MAX - 1)] = '\0';
}

/*
 * cgrp's path below root ("/" for root itself; root NULL: the hierarchy's
 * top) into buf, from the names along the parent chain: O(depth), under
 * RCU only. cgroup_path_ns() and kernfs_path_from_node() walk up once per
 * component, O(depth^2), with interrupts off under css_set_lock or
 * kernfs_rename_lock: a delegated user's 2,000-deep chain would make each
 * read of it, and a dump of it, hold them for milliseconds. Names do not
 * change (the default hierarchy has no rename) and a cgroup pins its
 * parent. -ENOENT if cgrp is not root or below it, -ENAMETOOLONG if the
 * path does not fit in size with its NUL, found without walking a chain
 * too deep to fit and without walking further than size (a privileged
 * dump would otherwise pay O(depth) for each cgroup of a chain it cannot
 * show, O(depth^2) for the chain).
 */
int joules_cgroup_path(struct cgroup *cgrp, struct cgroup *root, char *buf,
		       size_t size)
{
	int depth = cgrp->level - (root ? root->level : 0);
	size_t total = 0, end, len;
	const char *name;
	struct cgroup *c;
	int ret;

	if (root && !cgroup_is_descendant(cgrp, root))
		return -ENOENT;
	/* Each component takes "/x" at least; "/" alone takes 2 with its NUL. */
	if ((size_t)depth * 2 + 1 > size || size < 2)
		return -ENAMETOOLONG;
	rcu_read_lock();	/* kernfs names (compat.h) */
	for (c = cgrp; c != root && cgroup_parent(c); c = cgroup_parent(c)) {
		total += 1 + strlen(jl_kn_name(c->kn));
		if (total + 1 > size) {
			ret = -ENAMETOOLONG;
			goto out;
		}
	}
	if (!total) {
		strscpy(buf, "/", size);
		ret = 1;
		goto out;
	}
	buf[total] = '\0';
	for (c = cgrp, end = total; end; c = cgroup_parent(c)) {
		/* Names do not change; were one to, stop rather than overrun. */
		if (c == root || !cgroup_parent(c)) {
			ret = -EAGAIN;
			goto out;
		}
		name = jl_kn_name(c->kn);
		len = strlen(name);
		if (len + 1 > end) {
			ret = -EAGAIN;
			goto out;
		}
		end -= len;
		memcpy(buf + end, name, len);
		buf[--end] = '/';
	}
	ret = total;
out:
	rcu_read_unlock();
	return ret;
}

/* A removed cgroup's final record, once nothing charges it any more. */
static void cg_report(struct joules_cg *cg)
{
	struct joules_cg_stats cs;

	if (!test_bit(CG_REMOVED, &cg->flags) || !READ_ONCE(cg_up) ||
	    !joules_report_exits_wanted())
		return;
	cg_read(cg, &cs);	/* the caller flushed, and holds the flush */
	cs.path = cg->path ? cg->path : "";
	cs.st.exited = true;
	joules_report_cgroup_exit(&cs);
}

/*
 * Worker, each tick: removed cgroups leave the table (their path noted
 * for the exit record); entries nothing refers to any more are reported
 * and freed, which may release their parents in turn.
 */
void joules_cg_tick(void)
{
	struct joules_cg *cg, *next;
	struct llist_node *n;
	char *buf;

	cg_scan_removed();
	n = llist_del_all(&cg_removed);
	/*
	 * The path is for the exit record only: O(depth) each, so a deep
	 * chain removed at once costs O(n * depth) when someone listens.
	 */
	buf = n && joules_report_exits_wanted() ? kmalloc(PATH_MAX, GFP_KERNEL) : NULL;
	llist_for_each_entry_safe(cg, next, n, rmnode) {
		/* The path from the hierarchy's root (init_cgroup_ns is not exported). */
		if (buf) {
			cg_path(cg, buf);
			cg->path = kstrdup(buf, GFP_KERNEL);
		}
		mutex_lock(&cg_lock);
		set_bit(CG_UNHASHED, &cg->flags);
		hlist_del_rcu(&cg->hnode);
		mutex_unlock(&cg_lock);
		joules_cg_put(cg);	/* rmdir's reference */
		joules_cg_put(cg);	/* the table's */
		cond_resched();
	}
	kfree(buf);
	/* Freeing a child may release its parent: until none is left. */
	while ((n = llist_del_all(&cg_dead))) {
		/*
		 * Their pending sums go up before they do, and no reader's
		 * flush may be walking them while they are freed.
		 */
		mutex_lock(&cg_flush_lock);
		__cg_flush();
		llist_for_each_entry_safe(cg, next, n, dnode) {
			WARN_ON_ONCE(cg->dirty);
			cg_report(cg);
			/* A cgroup never removed is only dropped at unload. */
			if (!test_bit(CG_UNHASHED, &cg->flags)) {
				mutex_lock(&cg_lock);
				hlist_del_rcu(&cg->hnode);
				mutex_unlock(&cg_lock);
			}
			joules_cg_put(cg->parent);
			cgroup_put(cg->cgrp);
			atomic64_dec(&cg_objects);
			call_rcu(&cg->rcu, cg_free_rcu);
			/* 100,000 leaves removed at once: one long batch. */
			cond_resched();
		}
		mutex_unlock(&cg_flush_lock);
	}
}

int joules_cg_init(void)
{
	unsigned int i;

	get_random_bytes(&cg_hash_key, sizeof(cg_hash_key));
	for (i = 0; i < ARRAY_SIZE(cg_table); i++)
		INIT_HLIST_HEAD(&cg_table[i]);
	WRITE_ONCE(cg_up, true);
	return 0;
}

/*
 * Hooks and worker are stopped, every task entry is folded: drop the
 * table's references; the entries go as their counts reach zero.
 */
void joules_cg_exit(void)
{
	struct joules_cg *cg;
	struct hlist_node *tmp;
	unsigned int i;

	WRITE_ONCE(cg_up, false);
	joules_cg_tick();
	for (i = 0; i < ARRAY_SIZE(cg_table); i++) {
		hlist_for_each_entry_safe(cg, tmp, &cg_table[i], hnode) {
			set_bit(CG_UNHASHED, &cg->flags);
			hlist_del_rcu(&cg->hnode);
			clear_bit(CG_REMOVED, &cg->flags);	/* no exit records now */
			joules_cg_put(cg);
		}
	}
	joules_cg_tick();
	rcu_barrier();
	WARN_ON(atomic64_read(&cg_objects));
}
