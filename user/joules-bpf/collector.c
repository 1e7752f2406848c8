// SPDX-License-Identifier: GPL-2.0
/*
 * The collector's life: load the skeleton, open the perf events, attach,
 * pin the maps for other joules-bpf processes; or open a running
 * collector's pinned maps; and read everything into a snapshot.
 *
 * Why a process holds the collector (joules-bpf run) rather than pinned
 * links alone: a perf event array drops the events a process put in it
 * when that process's map file is closed, so without a holder the hardware
 * counters would silently stop; and a collector that dies with its holder
 * cannot be forgotten attached.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "joules.skel.h"
#include "jb.h"

#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC 0xcafe4a11
#endif

static const char *const map_names[] = { "tasks", "procs", "cpus", "stats",
					 "meta" };
#define NR_PINNED (sizeof(map_names) / sizeof(map_names[0]))

static const char *const hw_names[JB_NR_HW] = { "cycles", "instructions",
						"cache_misses" };
static const uint64_t hw_config[JB_NR_HW] = {
	PERF_COUNT_HW_CPU_CYCLES,
	PERF_COUNT_HW_INSTRUCTIONS,
	PERF_COUNT_HW_CACHE_MISSES,
};

static bool libbpf_verbose;

/* libbpf's own messages already start with "libbpf: ". */
static int print_libbpf(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (level == LIBBPF_DEBUG || (level == LIBBPF_INFO && !libbpf_verbose))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static void libbpf_setup(const struct jb_opts *o)
{
	libbpf_verbose = o->verbose;
	libbpf_set_print(print_libbpf);
}

static const char *lberr(int err)
{
	static char buf[128];

	libbpf_strerror(err, buf, sizeof(buf));
	return buf;
}

static int *fd_slot(struct jb_coll *c, unsigned int i)
{
	int *fds[NR_PINNED] = { &c->tasks_fd, &c->procs_fd, &c->cpus_fd,
				&c->stats_fd, &c->meta_fd };

	return fds[i];
}

static void coll_init(struct jb_coll *c, const struct jb_opts *o)
{
	memset(c, 0, sizeof(*c));
	for (unsigned int i = 0; i < NR_PINNED; i++)
		*fd_slot(c, i) = -1;
	c->pin_dir = o->pin_dir;
}

/* CPUs in /sys/devices/system/cpu/online ("0-3,5"): a bool per possible CPU. */
static int online_cpus(bool *on, unsigned int n)
{
	char buf[4096], *p = buf, *end;
	FILE *fp = fopen("/sys/devices/system/cpu/online", "r");

	memset(on, 0, n * sizeof(*on));
	if (!fp)
		return -errno;
	if (!fgets(buf, sizeof(buf), fp)) {
		fclose(fp);
		return -EIO;
	}
	fclose(fp);
	while (*p && *p != '\n') {
		unsigned long a = strtoul(p, &end, 10), b = a;

		if (end == p)
			return -EINVAL;
		p = end;
		if (*p == '-') {
			b = strtoul(p + 1, &end, 10);
			p = end;
		}
		for (unsigned long i = a; i <= b && i < n; i++)
			on[i] = true;
		if (*p == ',')
			p++;
	}
	return 0;
}

static int perf_open(struct perf_event_attr *attr, int cpu)
{
	return (int)syscall(__NR_perf_event_open, attr, -1, cpu, -1,
			    PERF_FLAG_FD_CLOEXEC);
}

static int keep_fd(struct jb_coll *c, int fd)
{
	int *n = realloc(c->perf_fds, (c->nperf + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	c->perf_fds = n;
	c->perf_fds[c->nperf++] = fd;
	return 0;
}

static int keep_link(struct jb_coll *c, struct bpf_link *l)
{
	struct bpf_link **n = realloc(c->links, (c->nlinks + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	c->links = n;
	c->links[c->nlinks++] = l;
	return 0;
}

static bool counting(int fd)
{
	uint64_t v[3];

	return read(fd, v, sizeof(v)) == (ssize_t)sizeof(v);
}

/*
 * One pinned counting event per online CPU for each hardware counter; a
 * counter is present only if every online CPU has it (a CPU without would
 * silently undercount the tasks that run there).
 */
static uint32_t open_hw(struct jb_coll *c, const bool *on)
{
	int hw_fd = bpf_map__fd(c->skel->maps.hw_events);
	uint32_t present = 0;

	for (unsigned int i = 0; i < JB_NR_HW; i++) {
		struct perf_event_attr attr = {
			.type = PERF_TYPE_HARDWARE,
			.size = sizeof(attr),
			.config = hw_config[i],
			.pinned = 1,
			.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
				       PERF_FORMAT_TOTAL_TIME_RUNNING,
		};
		size_t first = c->nperf;
		bool ok = true;
		int err = 0;

		for (unsigned int cpu = 0; cpu < c->nr_cpus && ok; cpu++) {
			uint32_t key = i * c->nr_cpus + cpu;
			int fd;

			if (!on[cpu])
				continue;
			fd = perf_open(&attr, (int)cpu);
			if (fd < 0) {
				err = errno;
				ok = false;
				break;
			}
			/*
			 * A pinned event the PMU has no room for (other users,
			 * the module's own events) is in error state and reads
			 * EOF: it would count nothing, so the counter is absent.
			 */
			if (!counting(fd) || keep_fd(c, fd)) {
				close(fd);
				err = EBUSY;
				ok = false;
				break;
			}
			if (bpf_map_update_elem(hw_fd, &key, &fd, BPF_ANY)) {
				err = errno;
				ok = false;
			}
		}
		if (ok) {
			present |= 1u << i;
			continue;
		}
		/* Take this counter out entirely: none of its events stay. */
		for (unsigned int cpu = 0; cpu < c->nr_cpus; cpu++) {
			uint32_t key = i * c->nr_cpus + cpu;

			bpf_map_delete_elem(hw_fd, &key);
		}
		while (c->nperf > first)
			close(c->perf_fds[--c->nperf]);
		if (libbpf_verbose)
			fprintf(stderr, "joules-bpf: %s absent: %s\n",
				hw_names[i], strerror(err));
	}
	return present;
}

/* The per-CPU tick; 0 and a warning if its events cannot be had. */
static uint64_t open_tick(struct jb_coll *c, const bool *on)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = JB_TICK_NS,
	};

	for (unsigned int cpu = 0; cpu < c->nr_cpus; cpu++) {
		struct bpf_link *l;
		int fd, err;

		if (!on[cpu])
			continue;
		fd = perf_open(&attr, (int)cpu);
		if (fd < 0) {
			cli_err("warning: no tick on CPU %u (%s): a task's time shows at its "
				"next context switch only",
				cpu, strerror(errno));
			return 0;
		}
		if (keep_fd(c, fd)) {
			close(fd);
			return 0;
		}
		l = bpf_program__attach_perf_event(c->skel->progs.jb_tick, fd);
		err = libbpf_get_error(l);
		if (err || keep_link(c, l)) {
			cli_err("warning: cannot attach the tick on CPU %u: %s",
				cpu, lberr(err ? (int)err : -ENOMEM));
			if (!err)
				bpf_link__destroy(l);
			return 0;
		}
	}
	return JB_TICK_NS;
}

int jb_coll_write_meta(struct jb_coll *c)
{
	uint32_t zero = 0;

	if (bpf_map_update_elem(c->meta_fd, &zero, &c->meta, BPF_ANY))
		return -errno;
	return 0;
}

static int attach_one(struct jb_coll *c, struct bpf_program *p,
		      const char *what)
{
	struct bpf_link *l = bpf_program__attach(p);
	long err = libbpf_get_error(l);

	if (err) {
		cli_err("cannot attach to %s: %s", what, lberr((int)err));
		return (int)err;
	}
	if (keep_link(c, l)) {
		bpf_link__destroy(l);
		return -ENOMEM;
	}
	return 0;
}

/* Open the skeleton (not loaded yet) and fill in its read-only settings. */
static int coll_open(struct jb_coll *c, const struct jb_opts *o)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo);
	struct joules_bpf *skel;
	uint64_t salt;
	int ncpu, err;

	/* CO-RE against another BTF than the running kernel's (tests, debugging). */
	if (strcmp(o->btf, JB_BTF_DEFAULT))
		oo.btf_custom_path = o->btf;
	ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0) {
		cli_err("cannot count the possible CPUs: %s", lberr(ncpu));
		return ncpu ? ncpu : -EINVAL;
	}
	c->nr_cpus = (unsigned int)ncpu;
	skel = joules_bpf__open_opts(&oo);
	if (!skel) {
		err = -errno;
		cli_err("cannot open the BPF collector: %s", lberr(err));
		return err;
	}
	c->skel = skel;
	skel->rodata->nr_cpus = c->nr_cpus;
	/* Entries name their task by a salted address; no need to fail without. */
	if (getrandom(&salt, sizeof(salt), 0) != sizeof(salt))
		salt = cli_now_ns() * 0x9e3779b97f4a7c15ull;
	skel->rodata->ident_salt = salt;
	return 0;
}

/* Size the maps, load the programs into the kernel, keep the maps' fds. */
static int coll_load(struct jb_coll *c, const struct jb_opts *o)
{
	struct joules_bpf *skel = c->skel;
	int err;

	if ((err = bpf_map__set_max_entries(skel->maps.tasks, o->max_tasks)) ||
	    (err = bpf_map__set_max_entries(skel->maps.procs, o->max_tasks)) ||
	    (err = bpf_map__set_max_entries(skel->maps.hw_events,
					    JB_NR_HW * c->nr_cpus))) {
		cli_err("cannot size the maps: %s", lberr(err));
		return err;
	}
	err = joules_bpf__load(skel);
	if (err) {
		cli_err("cannot load the BPF collector into the kernel: %s%s",
			lberr(err),
			err == -EPERM ? " (locked down, or memlock limit)" :
					"");
		return err;
	}
	c->tasks_fd = bpf_map__fd(skel->maps.tasks);
	c->procs_fd = bpf_map__fd(skel->maps.procs);
	c->cpus_fd = bpf_map__fd(skel->maps.cpus);
	c->stats_fd = bpf_map__fd(skel->maps.stats);
	c->meta_fd = bpf_map__fd(skel->maps.meta);
	c->max_tasks = o->max_tasks;
	return 0;
}

/*
 * The settings the programs read, then the programs attached and the
 * per-CPU events opened on the online CPUs (on[] of nr_cpus).
 */
static int coll_start(struct jb_coll *c, const struct jb_opts *o, bool *on)
{
	struct joules_bpf *skel = c->skel;
	int err;

	err = online_cpus(on, c->nr_cpus);
	if (err) {
		cli_err("/sys/devices/system/cpu/online: %s", strerror(-err));
		return err;
	}
	c->meta = (struct jb_meta){
		.abi = JB_ABI,
		.loader_pid = (uint32_t)getpid(),
		.max_tasks = o->max_tasks,
		.nr_cpus = c->nr_cpus,
		.epoch = 1,
		.start_ns = cli_now_ns(),
	};
	c->meta.hw_present = open_hw(c, on);
	/* The programs read hw_present from here, so before they run. */
	err = jb_coll_write_meta(c);
	if (err) {
		cli_err("cannot write the collector's settings: %s",
			strerror(-err));
		return err;
	}
	/* fork/exec/free first, so no task is born or released unseen. */
	if ((err = attach_one(c, skel->progs.jb_fork, "sched_process_fork")) ||
	    (err = attach_one(c, skel->progs.jb_exec, "sched_process_exec")) ||
	    (err = attach_one(c, skel->progs.jb_free, "sched_process_free")) ||
	    (err = attach_one(c, skel->progs.jb_switch, "sched_switch")))
		return err;
	c->meta.tick_ns = open_tick(c, on);
	c->meta.start_ns = cli_now_ns();
	return jb_coll_write_meta(c);
}

int jb_coll_load(struct jb_coll *c, const struct jb_opts *o)
{
	bool *on = NULL;
	int err;

	coll_init(c, o);
	libbpf_setup(o);
	err = coll_open(c, o);
	if (err)
		return err;
	err = coll_load(c, o);
	if (err)
		goto fail;
	on = calloc(c->nr_cpus, sizeof(*on));
	if (!on) {
		err = -ENOMEM;
		goto fail;
	}
	err = coll_start(c, o, on);
	if (err)
		goto fail;
	free(on);
	return 0;
fail:
	free(on);
	jb_coll_close(c);
	return err ? err : -EINVAL;
}

static void pin_path(const struct jb_coll *c, unsigned int i, char *buf,
		     size_t size)
{
	snprintf(buf, size, "%s/%s", c->pin_dir, map_names[i]);
}

/* A bpffs at /sys/fs/bpf (minimal systems, like the test guest, have none). */
static int ensure_bpffs(const char *dir)
{
	const char *root = "/sys/fs/bpf";
	struct statfs sf;

	if (strncmp(dir, root, strlen(root)))
		return 0; /* the caller's own place: their business */
	if (!statfs(root, &sf) && sf.f_type == BPF_FS_MAGIC)
		return 0;
	if (mount("bpf", root, "bpf", 0, "mode=0700")) {
		cli_err("cannot mount the BPF filesystem on %s: %s", root,
			strerror(errno));
		return -errno;
	}
	return 0;
}

static void unpin_all(struct jb_coll *c)
{
	char path[4096];

	for (unsigned int i = 0; i < NR_PINNED; i++) {
		pin_path(c, i, path, sizeof(path));
		unlink(path);
	}
	rmdir(c->pin_dir);
}

int jb_coll_pin(struct jb_coll *c, const struct jb_opts *o)
{
	char path[4096];
	int err;

	c->pin_dir = o->pin_dir;
	err = ensure_bpffs(o->pin_dir);
	if (err)
		return err;
	/* Only owner access: the counters are a side channel (see procfs-energy). */
	if (mkdir(o->pin_dir, 0700) && errno != EEXIST) {
		err = -errno;
		cli_err("%s: %s", o->pin_dir, strerror(errno));
		return err;
	}
	unpin_all(
		c); /* a dead collector's leftovers; the caller checked it is dead */
	if (mkdir(o->pin_dir, 0700) && errno != EEXIST) {
		err = -errno;
		cli_err("%s: %s", o->pin_dir, strerror(errno));
		return err;
	}
	for (unsigned int i = 0; i < NR_PINNED; i++) {
		pin_path(c, i, path, sizeof(path));
		if (bpf_obj_pin(*fd_slot(c, i), path)) {
			err = -errno;
			cli_err("cannot pin %s: %s", path, strerror(errno));
			unpin_all(c);
			return err;
		}
	}
	c->pinned = true;
	return 0;
}

/* Is the collector's loader still there (and still joules-bpf)? */
static bool loader_alive(pid_t pid)
{
	char path[64], comm[32] = "";
	FILE *fp;

	if (pid <= 0 || (kill(pid, 0) && errno != EPERM))
		return false;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	fp = fopen(path, "r");
	if (!fp)
		return false;
	if (!fgets(comm, sizeof(comm), fp))
		comm[0] = 0;
	fclose(fp);
	return !strncmp(comm, "joules-bpf", 10);
}

int jb_coll_open_pinned(struct jb_coll *c, const struct jb_opts *o,
			pid_t *stale_pid)
{
	struct bpf_map_info info;
	uint32_t len = sizeof(info), zero = 0;
	char path[4096];
	int err;

	coll_init(c, o);
	libbpf_setup(o);
	if (stale_pid)
		*stale_pid = 0;
	for (unsigned int i = 0; i < NR_PINNED; i++) {
		pin_path(c, i, path, sizeof(path));
		*fd_slot(c, i) = bpf_obj_get(path);
		if (*fd_slot(c, i) < 0) {
			err = -errno;
			if (err != -ENOENT)
				cli_err("%s: %s", path, strerror(-err));
			jb_coll_close(c);
			return err;
		}
	}
	if (bpf_map_lookup_elem(c->meta_fd, &zero, &c->meta)) {
		err = -errno;
		cli_err("%s/meta: %s", c->pin_dir, strerror(-err));
		goto fail;
	}
	if (c->meta.abi != JB_ABI) {
		cli_err("the collector pinned in %s speaks map abi %u, this joules-bpf %d",
			c->pin_dir, c->meta.abi, JB_ABI);
		err = -EPROTO;
		goto fail;
	}
	if (!loader_alive((pid_t)c->meta.loader_pid)) {
		if (stale_pid)
			*stale_pid = (pid_t)c->meta.loader_pid;
		err = -ENOENT;
		goto fail;
	}
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(c->tasks_fd, &info, &len)) {
		err = -errno;
		cli_err("%s/tasks: %s", c->pin_dir, strerror(-err));
		goto fail;
	}
	c->max_tasks = info.max_entries;
	c->nr_cpus = c->meta.nr_cpus;
	return 0;
fail:
	jb_coll_close(c);
	return err;
}

int jb_coll_open_running(struct jb_coll *c, const struct jb_opts *o,
			 bool say_where)
{
	pid_t stale;
	int err;

	if (jb_check_root())
		return CLI_FAIL;
	err = jb_coll_open_pinned(c, o, &stale);
	if (err != -ENOENT)
		return err ? CLI_FAIL : CLI_OK;
	if (stale && say_where)
		cli_err("no collector running (its loader, pid %d, is gone; maps left in %s)",
			(int)stale, o->pin_dir);
	else if (stale)
		cli_err("no collector running (its loader, pid %d, is gone)",
			(int)stale);
	else
		cli_err("no collector running (start one with 'joules-bpf run')");
	return CLI_FAIL;
}

int jb_coll_get(struct jb_coll *c, const struct jb_opts *o, bool *own)
{
	int err;

	*own = false;
	if (jb_check_root())
		return -EPERM;
	/* Before a collector of our own is loaded: SIGINT must detach it. */
	cli_catch_signals();
	err = jb_coll_open_pinned(c, o, NULL);
	if (err != -ENOENT)
		return err;
	if (jb_check_btf(o))
		return -ENOENT;
	*own = true;
	return jb_coll_load(c, o);
}

void jb_coll_close(struct jb_coll *c)
{
	/* Detach first: nothing writes the maps while they go. */
	for (size_t i = c->nlinks; i > 0; i--)
		bpf_link__destroy(c->links[i - 1]);
	free(c->links);
	c->links = NULL;
	c->nlinks = 0;
	for (size_t i = 0; i < c->nperf; i++)
		close(c->perf_fds[i]);
	free(c->perf_fds);
	c->perf_fds = NULL;
	c->nperf = 0;
	if (c->pinned) {
		unpin_all(c);
		c->pinned = false;
	}
	if (c->skel) {
		joules_bpf__destroy(c->skel); /* closes the map fds too */
		c->skel = NULL;
	} else {
		for (unsigned int i = 0; i < NR_PINNED; i++)
			if (*fd_slot(c, i) >= 0)
				close(*fd_slot(c, i));
	}
	for (unsigned int i = 0; i < NR_PINNED; i++)
		*fd_slot(c, i) = -1;
}

/* --- snapshots --- */

/*
 * All entries of a hash map with u32 keys. Batch lookup walks buckets, so
 * entries added or deleted meanwhile do not upset it (get_next_key restarts
 * from the first key when the current one was deleted); the key-by-key walk
 * is the fallback for kernels without batch ops (< 5.6).
 */
struct dump {
	uint32_t *keys;
	char *vals;
	size_t n, cap, vsz;
};

static int dump_grow(struct dump *d, size_t want)
{
	void *k, *v;
	size_t cap = d->cap;

	while (cap - d->n < want)
		cap = cap ? cap * 2 : 256;
	if (cap == d->cap)
		return 0;
	k = realloc(d->keys, cap * sizeof(*d->keys));
	if (!k)
		return -ENOMEM;
	d->keys = k;
	v = realloc(d->vals, cap * d->vsz);
	if (!v)
		return -ENOMEM;
	d->vals = v;
	d->cap = cap;
	return 0;
}

/* Kernel-internal "operation not supported" that reaches user space. */
#define KERNEL_ENOTSUPP 524

/* Key by key, for kernels without batch lookup (< 5.6). */
static int dump_walk(int fd, struct dump *d, size_t hint)
{
	uint32_t key, next;
	int err, r = bpf_map_get_next_key(fd, NULL, &next);

	d->n = 0;
	while (!r) {
		err = dump_grow(d, 1);
		if (err)
			return err;
		key = next;
		if (!bpf_map_lookup_elem(fd, &key, d->vals + d->n * d->vsz))
			d->keys[d->n++] = key;
		/* A deleted key restarts the walk: bound it, do not loop forever. */
		if (d->n > 4 * hint + 1024)
			break;
		r = bpf_map_get_next_key(fd, &key, &next);
	}
	return 0;
}

/*
 * All entries of a hash map with u32 keys. Batch lookup walks buckets, so
 * entries added or deleted meanwhile do not upset it (get_next_key restarts
 * from the first key when the current one was deleted).
 */
static int dump_hash(int fd, size_t vsz, size_t hint, struct dump *d)
{
	uint32_t in = 0, out = 0;
	bool first = true;
	int err;

	memset(d, 0, sizeof(*d));
	d->vsz = vsz;
	err = dump_grow(d, hint + 64);
	for (; !err;) {
		uint32_t count = (uint32_t)(d->cap - d->n);

		err = bpf_map_lookup_batch(fd, first ? NULL : &in, &out,
					   d->keys + d->n, d->vals + d->n * vsz,
					   &count, NULL);
		if (err == -ENOSPC) {
			/* The next bucket does not fit in what is left. */
			err = dump_grow(d, d->cap - d->n + 1);
			continue;
		}
		if (first && (err == -EINVAL || err == -EOPNOTSUPP ||
			      err == -KERNEL_ENOTSUPP))
			return dump_walk(fd, d, hint);
		if (err && err != -ENOENT)
			break;
		d->n += count;
		if (err == -ENOENT)
			return 0;
		in = out;
		first = false;
		err = dump_grow(d, 64);
	}
	free(d->keys);
	free(d->vals);
	memset(d, 0, sizeof(*d));
	return err;
}

static int cmp_task_ent(const void *a, const void *b)
{
	const struct jb_task_ent *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int cmp_proc_ent(const void *a, const void *b)
{
	const struct jb_proc_ent *x = a, *y = b;

	return x->tgid < y->tgid ? -1 : x->tgid > y->tgid;
}

int jb_node_read(struct jb_coll *c, struct jb_snap *s)
{
	size_t stride = (sizeof(struct jb_cpu) + 7) & ~(size_t)7;
	char *buf = calloc(c->nr_cpus, stride);
	uint32_t zero = 0;

	if (!buf)
		return -ENOMEM;
	if (bpf_map_lookup_elem(c->cpus_fd, &zero, buf)) {
		int err = -errno;

		free(buf);
		return err;
	}
	memset(&s->node, 0, sizeof(s->node));
	s->node_hw_seen = 0;
	s->ran = s->switches = 0;
	for (unsigned int i = 0; i < c->nr_cpus; i++) {
		const struct jb_cpu *p = (const void *)(buf + i * stride);

		s->node.cpu_ns += p->c.cpu_ns;
		s->node.read_bytes += p->c.read_bytes;
		s->node.write_bytes += p->c.write_bytes;
		for (int h = 0; h < JB_NR_HW; h++)
			s->node.hw[h] += p->c.hw[h];
		s->node_hw_seen |= p->hw_seen;
		s->ran += p->ran;
		s->switches += p->switches;
	}
	free(buf);
	for (uint32_t k = 0; k < JB_NR_STATS; k++)
		if (bpf_map_lookup_elem(c->stats_fd, &k, &s->stats[k]))
			s->stats[k] = 0;
	s->mono_ns = cli_now_ns();
	return 0;
}

/*
 * A hash map's entries as a sorted array of `esz`-byte structs that start
 * with the u32 key and hold the vsz-byte value at voff; *out is malloc()ed.
 */
static int dump_sorted(int fd, size_t vsz, size_t hint, size_t esz, size_t voff,
		       int (*cmp)(const void *, const void *), void **out,
		       size_t *n)
{
	struct dump d;
	char *e;
	int err = dump_hash(fd, vsz, hint, &d);

	if (err)
		return err;
	e = calloc(d.n ? d.n : 1, esz);
	for (size_t i = 0; e && i < d.n; i++) {
		memcpy(e + i * esz, &d.keys[i], sizeof(d.keys[i]));
		memcpy(e + i * esz + voff, d.vals + i * d.vsz, vsz);
	}
	free(d.keys);
	free(d.vals);
	if (!e)
		return -ENOMEM;
	qsort(e, d.n, esz, cmp);
	*out = e;
	*n = d.n;
	return 0;
}

int jb_snap_take(struct jb_coll *c, struct jb_snap *s, bool with_tasks)
{
	void *p;
	int err;

	memset(s, 0, sizeof(*s));
	err = jb_node_read(c, s);
	if (err || !with_tasks)
		return err;

	err = dump_sorted(c->tasks_fd, sizeof(struct jb_task),
			  c->max_tasks < 4096 ? c->max_tasks : 4096,
			  sizeof(*s->tasks), offsetof(struct jb_task_ent, v),
			  cmp_task_ent, &p, &s->ntasks);
	if (err)
		return err;
	s->tasks = p;
	err = dump_sorted(c->procs_fd, sizeof(struct jb_proc), 256,
			  sizeof(*s->procs), offsetof(struct jb_proc_ent, v),
			  cmp_proc_ent, &p, &s->nprocs);
	if (err) {
		jb_snap_free(s);
		return err;
	}
	s->procs = p;
	return 0;
}

void jb_snap_free(struct jb_snap *s)
{
	free(s->tasks);
	free(s->procs);
	s->tasks = NULL;
	s->procs = NULL;
	s->ntasks = s->nprocs = 0;
}
