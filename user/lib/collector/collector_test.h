/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the collectors' host tests (collector/NAME_test.c) and
 * tools/testing/exporter/test_render.c share: made-up snapshots as a node
 * has them, a render into a string and a line search, a made-up sysfs tree
 * and the fixture on it. Test code only.
 */
#ifndef JOULES_COLLECTOR_TEST_H
#define JOULES_COLLECTOR_TEST_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>

#include "kselftest_harness.h"
#include "metrics.h"

/* The exposition of snap (jm_render() and prom_finish()), malloc()ed; NULL on error. */
static inline char *ct_render(const struct jm_state *s,
			      const struct jm_snapshot *snap,
			      enum prom_format fmt)
{
	struct prom_writer w;
	size_t len;

	prom_init(&w, fmt, 0);
	jm_render(s, snap, &w);
	if (prom_finish(&w)) {
		prom_free(&w);
		return NULL;
	}
	return prom_take(&w, &len);
}

/* Collector c's families alone (its render function), malloc()ed text format. */
static inline char *ct_render_one(const struct jm_state *s,
				  const struct jm_snapshot *snap,
				  enum jm_collector c)
{
	struct prom_writer w;
	size_t len;

	prom_init(&w, PROM_FMT_TEXT, 0);
	jm_collectors[c]->render(s, snap, &w);
	if (prom_finish(&w)) {
		prom_free(&w);
		return NULL;
	}
	return prom_take(&w, &len);
}

/*
 * Does every sample and HELP/TYPE line of text name a family starting
 * with prefix or (if not NULL) also?
 */
static inline bool ct_only(const char *text, const char *prefix,
			   const char *also)
{
	for (const char *p = text; p && *p;
	     p = strchr(p, '\n'), p = p ? p + 1 : p) {
		const char *name = p;

		if (!strncmp(p, "# HELP ", 7) || !strncmp(p, "# TYPE ", 7))
			name = p + 7;
		if (strncmp(name, prefix, strlen(prefix)) &&
		    (!also || strncmp(name, also, strlen(also))))
			return false;
	}
	return true;
}

/* A scratch directory standing in for /sys/kernel/joules; NULL on error. */
static inline char *ct_sysfs(void)
{
	char tmpl[] = "/tmp/joules-sysfs-XXXXXX";
	char *d = mkdtemp(tmpl);

	return d ? strdup(d) : NULL;
}

/* Write text to dir/name (creating dir/name's directory); 0 or -1. */
static inline int ct_write(const char *dir, const char *name, const char *text)
{
	char path[512], *slash;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	slash = strrchr(path, '/');
	if (slash > path + strlen(dir)) {
		*slash = 0;
		mkdir(path, 0755);
		*slash = '/';
	}
	fp = fopen(path, "w");
	if (!fp)
		return -1;
	fputs(text, fp);
	return fclose(fp) ? -1 : 0;
}

/* Remove a ct_sysfs() tree (two levels at most) and free its name. */
static inline void ct_sysfs_remove(char *dir)
{
	char cmd[600];

	if (!dir)
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "# could not remove %s\n", dir);
	free(dir);
}

/*
 * FIXTURE(sysfs) of the collectors' tests: a scratch directory standing in
 * for /sys/kernel/joules (self->dir), a state reading it (self->s) and an
 * empty snapshot (self->snap). A test file that wants it says
 * CT_SYSFS_FIXTURE() once, then TEST_F(sysfs, name).
 */
#define CT_SYSFS_FIXTURE()                                  \
	FIXTURE(sysfs)                                      \
	{                                                   \
		char *dir;                                  \
		struct jm_state s;                          \
		struct jm_snapshot snap;                    \
	};                                                  \
	FIXTURE_SETUP(sysfs)                                \
	{                                                   \
		self->dir = ct_sysfs();                     \
		ASSERT_NE(NULL, self->dir);                 \
		jm_init(&self->s, 0, self->dir, NULL);      \
		memset(&self->snap, 0, sizeof(self->snap)); \
	}                                                   \
	FIXTURE_TEARDOWN(sysfs)                             \
	{                                                   \
		jm_close(&self->s);                         \
		ct_sysfs_remove(self->dir);                 \
	}

/* Collector c's gather on s into snap, then its render (text format), malloc()ed. */
static inline char *ct_gather_render(struct __test_metadata *_metadata,
				     struct jm_state *s,
				     struct jm_snapshot *snap,
				     enum jm_collector c)
{
	char *t;

	jm_collectors[c]->gather(s, snap);
	t = ct_render_one(s, snap, c);
	EXPECT_NE(NULL, t);
	return t ? t : strdup("");
}

/*
 * Lose the capabilities that read any file (root's CAP_DAC_*), in the
 * calling test's own process (the harness forks one per test): a file of
 * mode 0 then fails with EACCES, as a file the module keeps from an
 * exporter without CAP_PERFMON does with EPERM (jm_reason_of() takes both
 * as "permission"). 0 or -1.
 */
static inline int ct_drop_dac(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3
	};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -1;
	d[0].effective &=
		~((1u << CAP_DAC_OVERRIDE) | (1u << CAP_DAC_READ_SEARCH));
	return (int)syscall(SYS_capset, &h, d);
}

/* Does the exposition have a line starting with `line`? */
static inline bool has(const char *buf, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = buf; p && *p;
	     p = strchr(p, '\n'), p = p ? p + 1 : p)
		if (!strncmp(p, line, n))
			return true;
	return false;
}

static inline void base_state(struct jm_state *s, unsigned int top)
{
	jm_init(s, top, "/nonexistent", NULL);
}

#define ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define DID "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
#define POD                                                               \
	"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" \
	"1a2b3c4d_5e6f_7a8b_9c0d_1e2f3a4b5c6d.slice"
#define CTR POD "/cri-containerd-" ID ".scope"
#define UID "1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d"

/* Cgroups as a node has them: the root, a pod and its container, docker. */
static struct jm_cgroup cgroups[6] __attribute__((unused));
static char cg_paths[6][512] __attribute__((unused));

static inline void cgroup_snapshot(struct jm_snapshot *snap)
{
	static const struct {
		const char *path;
		uint32_t source;
		uint64_t uj, idle, cpu, rd, wr;
	} c[] = {
		{ "/", REC_SRC_RAPL, 100000000000, 20000000000, 9000000000000,
		  1, 2 },
		{ POD, REC_SRC_RAPL, 3000000, 500000, 2000000000, 4096, 0 },
		{ CTR, REC_SRC_RAPL, 2500000, 400000, 1500000000, 4096, 0 },
		{ "/system.slice/docker-" DID ".scope", REC_SRC_RAPL, 7, 1, 3,
		  0, 512 },
		/* Nothing charged it yet: CPU time and bytes, no energy. */
		{ "/system.slice/quiet.service", 0, 0, 0, 5, 0, 0 },
		/* Bytes a label must not carry raw. */
		{ "/odd \"name\\\n\xff", REC_SRC_RAPL, 1, 0, 1, 0, 0 },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		snprintf(cg_paths[i], sizeof(cg_paths[i]), "%s", c[i].path);
		cgroups[i] = (struct jm_cgroup){ .path = cg_paths[i],
						 .source = c[i].source,
						 .present = REC_F(JL_F_CPU_NS),
						 .energy_uj = c[i].uj,
						 .idle_uj = c[i].idle,
						 .cpu_ns = c[i].cpu,
						 .read_bytes = c[i].rd,
						 .write_bytes = c[i].wr };
	}
	/* The container on a 6.3+ kernel: socket bytes counted, page-cache reads not. */
	cgroups[2].present |= REC_F(JL_F_NET_TX) | REC_F(JL_F_NET_RX);
	cgroups[2].net_tx_bytes = 1500;
	cgroups[2].net_rx_bytes = 9000;
	snap->cgroups = cgroups;
	snap->ncgroups = sizeof(c) / sizeof(c[0]);
	snap->cgroups_seen = 40;
	snap->idle_split = true;
}

/*
 * Everything present: RAPL with all domains, PMU, a model, a wall meter,
 * static power, processes, cgroups.
 */
static inline void full_snapshot(struct jm_snapshot *snap)
{
	static struct task_rec procs[3];
	struct node_rec *n = &snap->node;

	memset(snap, 0, sizeof(*snap));
	for (int c = 0; c < JM_NR_COLLECTORS; c++)
		snap->st[c].enabled = !jm_collectors[c]->planned;
	cgroup_snapshot(snap);
	snap->ns = 1234567;
	snap->load_time_ms = 1799996400123ull;
	snap->loaded = true;
	snap->nl_version = 1;
	strcpy(snap->version, "0.1.0");
	strcpy(snap->abi, "1");
	n->source = REC_SRC_RAPL;
	n->energy_uj = 123456789012;
	n->idle_uj = 23456789012;
	n->domains = 0xf;
	for (int d = 0; d < JL_NR_DOMAINS; d++)
		n->domain_uj[d] = 1000000ull * (uint64_t)(d + 1) + 1;
	n->present = 0x1f;
	for (int f = 0; f < JL_NR_FEATURES; f++)
		n->feat[f] = 1000000000ull * (uint64_t)(f + 1);
	n->intervals = 4242;
	n->tasks_tracked = 321;
	n->uptime_ns = 3600ull * 1000000000ull;
	snap->model_generation = 2;
	snap->coef = (struct jl_coef){ .cpu_time_uw = 7000000,
				       .cycles_pj = 5,
				       .instructions_pj = 3,
				       .cache_miss_pj = 2000,
				       .disk_byte_pj = 10,
				       .idle_uw = 15000000 };
	snap->meter_present = true;
	strcpy(snap->meter, "intel-rapl-msr");
	snap->have_wraps = snap->have_bogus = true;
	snap->wraps = 3;
	snap->bogus_reads = 1;
	/* A PDU outlet in force: the node's total is the meter's but what is pending. */
	snap->wall = (struct jm_wallmeter){ .state = JM_WALL_IN_FORCE,
					    .meter = "pdu-rack4-outlet7",
					    .have_readings = true,
					    .have_refused = true,
					    .have_energy = true,
					    .have_pending = true,
					    .have_residual = true,
					    .have_window = true,
					    .have_power = true,
					    .readings = 3600,
					    .refused = 2,
					    .energy_uj = 123456539012,
					    .pending_uj = -250000,
					    .residual_uj = -1234567,
					    .window_ms = 1000,
					    .power_uw = 412345678 };
	/*
	 * Static power: two RAPL domains of package 0 and the wall meter
	 * measured, package 1's cores not yet.
	 */
	snap->statics[0] = (struct jm_static){ .scope = "pkg0",
					       .domain = "pkg",
					       .in_force = "measured",
					       .have_power = true,
					       .have_age = true,
					       .power_uw = 4999926,
					       .age_ms = 45,
					       .idle_ms = 6000 };
	snap->statics[1] = snap->statics[0];
	strcpy(snap->statics[1].domain, "dram");
	snap->statics[1].power_uw = 1999970;
	snap->statics[2] = (struct jm_static){ .scope = "wall",
					       .domain = "meter",
					       .in_force = "measured",
					       .have_power = true,
					       .have_age = true,
					       .power_uw = 39999999,
					       .age_ms = 49,
					       .idle_ms = 5800 };
	snap->statics[3] = (struct jm_static){ .scope = "pkg1",
					       .domain = "core",
					       .in_force = "none" };
	snap->nstatics = 4;
	memset(procs, 0, sizeof(procs));
	procs[0] = (struct task_rec){ .pid = 4242,
				      .comm = "burner",
				      .process = true,
				      .source = REC_SRC_RAPL,
				      .energy_uj = 9000000,
				      .present = REC_F(JL_F_CPU_NS),
				      .feat = { [JL_F_CPU_NS] = 1500000000 } };
	procs[1] = (struct task_rec){ .pid = 17,
				      .comm = "we\"ird\\\n\xff",
				      .process = true,
				      .source = REC_SRC_RAPL,
				      .energy_uj = 100,
				      .present = REC_F(JL_F_CPU_NS),
				      .feat = { [JL_F_CPU_NS] = 1000 } };
	/* Charged by no source: no energy series, CPU time still shown. */
	procs[2] = (struct task_rec){ .pid = 18,
				      .comm = "quiet",
				      .process = true,
				      .present = REC_F(JL_F_CPU_NS),
				      .feat = { [JL_F_CPU_NS] = 5 } };
	snap->procs = procs;
	snap->nprocs = 3;
	snap->procs_seen = 10000;
}

#endif /* JOULES_COLLECTOR_TEST_H */
