// SPDX-License-Identifier: GPL-2.0
/*
 * joulesfs building blocks shared by its pid tree (fs.c) and its cgroup
 * tree (fs_cgroup.c): inodes, and the energy lines of a file.
 */
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/pid.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "compat.h"
#include "fs_inode.h"
#include "perm.h"
#include "worker.h"

static struct kmem_cache *jf_inode_cache;

static void jf_inode_init_once(void *p)
{
	struct jf_inode *ji = p;

	inode_init_once(&ji->vfs_inode);
}

struct inode *jf_alloc_inode(struct super_block *sb)
{
	struct jf_inode *ji = alloc_inode_sb(sb, jf_inode_cache, GFP_KERNEL);

	if (!ji)
		return NULL;
	ji->kind = NULL;
	return &ji->vfs_inode;
}

void jf_free_inode(struct inode *inode)
{
	kmem_cache_free(jf_inode_cache, container_of(inode, struct jf_inode, vfs_inode));
}

void jf_evict_inode(struct inode *inode)
{
	const struct jf_kind *kind = jf_kind_of(inode);

	truncate_inode_pages_final(&inode->i_data);
	clear_inode(inode);
	if (kind)
		kind->release(inode->i_private);
}

/*
 * @ref is a counted reference the inode takes over (released here on
 * failure). Callers take it where the object is known to be live: a pid
 * under the RCU read lock in which they found it, or from an inode that
 * holds one. A task reference does not keep a pid alive: once the task is
 * reaped its pid is freed after a grace period, task_struct or not.
 */
struct inode *jf_inode(struct super_block *sb, umode_t mode,
		       const struct jf_kind *kind, void *ref, struct task_struct *t)
{
	struct inode *inode = new_inode(sb);

	if (!inode) {
		if (kind)
			kind->release(ref);
		return NULL;
	}
	inode->i_ino = get_next_ino();
	inode->i_mode = mode;
	jl_inode_init_ts(inode);
	inode->i_private = ref;
	container_of(inode, struct jf_inode, vfs_inode)->kind = kind;
	if (t) {
		/* Owned by the task's effective ids, like /proc/<pid>. */
		const struct cred *c;

		rcu_read_lock();
		c = __task_cred(t);
		inode->i_uid = c->euid;
		inode->i_gid = c->egid;
		rcu_read_unlock();
	}
	return inode;
}

static int jf_d_revalidate(JL_D_REVALIDATE_PROTO(dentry, flags))
{
	struct inode *inode = d_inode_rcu(dentry);
	const struct jf_kind *kind;

	if (!inode)
		return 0;
	kind = jf_kind_of(inode);
	return kind ? kind->revalidate(dentry, inode, flags) : 1;
}

static int jf_d_delete(const struct dentry *dentry)
{
	struct inode *inode = d_inode(dentry);
	const struct jf_kind *kind;

	if (!inode)
		return 1;
	kind = jf_kind_of(inode);
	return kind && kind->drop(dentry, inode);
}

const struct dentry_operations jf_dops = {
	.d_revalidate = jf_d_revalidate,
	.d_delete = jf_d_delete,
};

int jf_inode_init(void)
{
	jf_inode_cache = kmem_cache_create("joulesfs_inode", sizeof(struct jf_inode), 0,
					   SLAB_RECLAIM_ACCOUNT | SLAB_ACCOUNT,
					   jf_inode_init_once);
	return jf_inode_cache ? 0 : -ENOMEM;
}

/* After unregister_filesystem(): inodes are freed after a grace period. */
void jf_inode_exit(void)
{
	rcu_barrier();
	kmem_cache_destroy(jf_inode_cache);
}

/* One "key: value" line; cheaper than seq_printf, the file is read often. */
static void put_u64(struct seq_file *m, const char *key, u64 v)
{
	seq_put_decimal_ull(m, key, v);
	seq_putc(m, '\n');
}

/* An optional counter: its value, or "absent" where nothing counted it. */
static void put_opt(struct seq_file *m, const struct joules_stats *st,
		    const char *key, unsigned int feature, u64 v)
{
	if (st->opt_present & (1U << feature)) {
		put_u64(m, key, v);
	} else {
		seq_puts(m, key);
		seq_puts(m, "absent\n");
	}
}

/* The lines every energy file has, from source: to pagecache_bytes. */
/* The file's opener and its reader: how they are shown energy (perm.c). */
unsigned int jf_lag_ms(struct seq_file *m)
{
	struct joules_reader opener = { .cred = m->file->f_cred, .file = m->file };
	struct joules_reader r;

	joules_reader_current(&r);
	return joules_reader_lag_ms(&opener, &r, false);
}

void jf_print_energy(struct seq_file *m, const struct joules_stats *st)
{
	static const char *const dnames[JL_NR_DOMAINS] = {
		"energy_pkg_uj: ", "energy_core_uj: ", "energy_dram_uj: ",
		"energy_psys_uj: "
	};
	const struct {
		const char *name;
		unsigned int feature;
		u64 v;
	} hw[] = {
		{ "cycles: ", JL_F_CYCLES, st->cycles },
		{ "instructions: ", JL_F_INSTR, st->instructions },
		{ "cache_misses: ", JL_F_MISSES, st->cache_misses },
	}, later[] = {
		{ "net_tx_bytes: ", JL_F_NET_TX, st->net_tx_bytes },
		{ "net_rx_bytes: ", JL_F_NET_RX, st->net_rx_bytes },
		{ "pagecache_bytes: ", JL_F_PAGECACHE, st->pagecache_bytes },
	};
	unsigned int i;

	if (!st->source_mask) {
		/* Nothing has charged it: no meter and no model set. */
		seq_puts(m, "source: none\nenergy_uj: absent\n");
	} else {
		/* Every source that charged it, in this order: "rapl,model". */
		static const char *const names[] = { "rapl", "model", "meter" };
		static const u32 bits[] = { JOULES_SRC_RAPL, JOULES_SRC_MODEL,
					    JOULES_SRC_METER };
		const char *sep = "source: ";

		for (i = 0; i < ARRAY_SIZE(bits); i++) {
			if (!(st->source_mask & bits[i]))
				continue;
			seq_puts(m, sep);
			seq_puts(m, names[i]);
			sep = ",";
		}
		seq_putc(m, '\n');
		put_u64(m, "energy_uj: ", st->energy_uj);
	}
	for (i = 0; i < JL_NR_DOMAINS; i++)
		if (st->domains & (1U << i))
			put_u64(m, dnames[i], st->domain_uj[i]);
	if (joules_idle_split || st->idle_uj)
		put_u64(m, "idle_uj: ", st->idle_uj);
	put_u64(m, "model_generation: ", st->model_generation);
	put_u64(m, "cpu_time_ns: ", st->cpu_ns);
	/* Counters no PMU counted are absent, not 0. */
	for (i = 0; i < ARRAY_SIZE(hw); i++)
		put_opt(m, st, hw[i].name, hw[i].feature, hw[i].v);
	put_u64(m, "read_bytes: ", st->read_bytes);
	put_u64(m, "write_bytes: ", st->write_bytes);
	/* Added after the first layout: appended, so old parsers still work. */
	for (i = 0; i < ARRAY_SIZE(later); i++)
		put_opt(m, st, later[i].name, later[i].feature, later[i].v);
	/* Energy (and per domain) settled per epoch this long (perm.c). */
	if (st->lag_ms)
		put_u64(m, "energy_lag_ms: ", st->lag_ms);
}
