// SPDX-License-Identifier: GPL-2.0
/*
 * Test only: user/lib/nl.c's interface answered without a kernel, for a
 * joules-exporter built with it (build/joules-exporter-fakenl) that
 * run-host.sh scrapes with a real Prometheus. The host never loads the
 * module, so this is how the node, cgroup and process families -- and
 * every dashboard query and Kepler name built on them -- reach Prometheus
 * on the host. The numbers are those of a steady node: each counter is a
 * constant power times the time since the first open, so rate() in
 * Prometheus must come out at that power.
 *
 * $JOULES_FAKE_NL: "rapl" (default; package 15 W, dram 5 W) or "model"
 * (20 W, no domain). Idle is 5 W of the 20. Nothing here reaches a
 * socket.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nl.h"

#define NL(a) (sizeof(a) / sizeof((a)[0]))

struct jnl {
	int unused;
};

#define FAKE_ID \
	"f00d0000000000000000000000000000000000000000000000000000000000aa"
#define FAKE_DOCKER \
	"d0c00000000000000000000000000000000000000000000000000000000000bb"
#define FAKE_UID "0a0b0c0d-0000-4000-8000-00000000abcd"
#define FAKE_POD \
	"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0a0b0c0d_0000_4000_8000_00000000abcd.slice"

static uint64_t fake_t0;

static uint64_t fake_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Seconds since the first open, in ns. */
static uint64_t fake_up(void)
{
	return fake_t0 ? fake_mono() - fake_t0 : 0;
}

static bool fake_model(void)
{
	const char *e = getenv("JOULES_FAKE_NL");

	return e && !strcmp(e, "model");
}

/* Energy of a constant power over up_ns, in uJ (W x ns / 1000). */
static uint64_t fake_uj(double watts, uint64_t up_ns)
{
	return (uint64_t)(watts * (double)up_ns / 1000.0);
}

/* Source, domains and energy of something drawing watts (pkg 3/4, dram 1/4). */
static void fake_energy(double watts, uint64_t up, uint32_t *source,
			uint32_t *domains, uint64_t *energy, uint64_t *dom)
{
	*energy = fake_uj(watts, up);
	if (fake_model()) {
		*source = REC_SRC_MODEL;
		*domains = 0;
		return;
	}
	*source = REC_SRC_RAPL;
	*domains = 1u << JL_D_PKG | 1u << JL_D_DRAM;
	dom[JL_D_PKG] = fake_uj(watts * 0.75, up);
	dom[JL_D_DRAM] = *energy - dom[JL_D_PKG];
}

int fake_nl_cg_root_fd = -1;

int jnl_open(struct jnl **out)
{
	fake_nl_cg_root_fd = -1; /* a new handle has none until it is set */
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	if (!fake_t0)
		fake_t0 = fake_mono();
	return 0;
}

int jnl_open_fd(struct jnl **out, int fd)
{
	(void)fd;
	return jnl_open(out);
}

void jnl_close(struct jnl *nl)
{
	free(nl);
}

unsigned int jnl_version(const struct jnl *nl)
{
	(void)nl;
	return 1;
}

int jnl_fd(const struct jnl *nl)
{
	(void)nl;
	return -1;
}

/*
 * fake_nl_fail(): the next n GET_NODE requests fail with err, and each bumps
 * the family id, as a module reload does (test_retry.c).
 */
static int fake_fails, fake_err, fake_family = 42;

void fake_nl_fail(int n, int err);
void fake_nl_fail(int n, int err)
{
	fake_fails = n;
	fake_err = err;
}

int jnl_family_id(const struct jnl *nl)
{
	(void)nl;
	return fake_family;
}

int jnl_group_id(const struct jnl *nl, unsigned int group)
{
	(void)nl;
	(void)group;
	return -EOPNOTSUPP;
}

const char *jnl_kernel_msg(const struct jnl *nl)
{
	(void)nl;
	return NULL;
}

const char *jnl_strerror(enum jnl_op op, int err)
{
	(void)op;
	return strerror(-err);
}

/* The view asked for: recorded for the tests, the figures are the same. */
bool fake_nl_lagged;

void jnl_set_lagged(struct jnl *nl, bool on)
{
	(void)nl;
	fake_nl_lagged = on;
}

void jnl_set_cgroup_root(struct jnl *nl, int fd)
{
	(void)nl;
	fake_nl_cg_root_fd = fd;
}

int jnl_get_node_view(struct jnl *nl, bool lagged, struct node_rec *n)
{
	int err = jnl_get_node(nl, n);

	if (!err && lagged) {
		n->domains = 0;
		n->lag_ms = 1000;
	}
	return err;
}

int jnl_get_node(struct jnl *nl, struct node_rec *n)
{
	uint64_t up = fake_up();

	(void)nl;
	if (fake_fails > 0) {
		fake_fails--;
		fake_family++;
		return fake_err;
	}
	memset(n, 0, sizeof(*n));
	n->version = 1;
	fake_energy(20, up, &n->source, &n->domains, &n->energy_uj,
		    n->domain_uj);
	n->idle_uj = fake_uj(5, up);
	n->task_uj = n->energy_uj - n->idle_uj;
	/* One CPU busy half the time. */
	n->present = REC_F(JL_F_CPU_NS) | REC_F(JL_F_DISK);
	n->feat[JL_F_CPU_NS] = up / 2;
	n->feat[JL_F_DISK] = up / 1000;
	n->intervals = up / 100000000;
	n->tasks_tracked = 3;
	n->uptime_ns = up;
	return 0;
}

/* The cgroups of a small Kubernetes node: a pod and its container, docker, a service. */
int jnl_dump_cgroups(struct jnl *nl, struct cgroup_rec **recs, size_t *n)
{
	static const struct {
		const char *path;
		double watts;
	} c[] = {
		{ "/", 15 },
		{ "/kubepods.slice", 6 },
		{ "/kubepods.slice/kubepods-burstable.slice", 6 },
		{ FAKE_POD, 6 },
		{ FAKE_POD "/cri-containerd-" FAKE_ID ".scope", 4 },
		{ "/system.slice", 9 },
		{ "/system.slice/docker-" FAKE_DOCKER ".scope", 2 },
		{ "/system.slice/sshd.service", 1 },
	};
	uint64_t up = fake_up();

	(void)nl;
	*recs = calloc(NL(c), sizeof(**recs));
	if (!*recs)
		return -ENOMEM;
	for (size_t i = 0; i < NL(c); i++) {
		struct cgroup_rec *r = &(*recs)[i];

		r->id = i + 1;
		snprintf(r->path, sizeof(r->path), "%s", c[i].path);
		fake_energy(c[i].watts, up, &r->source, &r->domains,
			    &r->energy_uj, r->domain_uj);
		r->present = REC_F(JL_F_CPU_NS);
		r->feat[JL_F_CPU_NS] = (uint64_t)(c[i].watts / 30 * up);
		r->nr_tasks = 1;
	}
	*n = NL(c);
	return 0;
}

/* Three processes; the first is this one, so /proc/PID/cgroup is real. */
int jnl_dump_tasks(struct jnl *nl, bool threads, struct task_rec **recs,
		   size_t *n)
{
	static const char *const comm[] = { "joules-exporter", "burner",
					    "sshd" };
	static const double watts[] = { 0.5, 8, 1 };
	uint64_t up = fake_up();

	(void)nl;
	(void)threads;
	*recs = calloc(3, sizeof(**recs));
	if (!*recs)
		return -ENOMEM;
	for (size_t i = 0; i < 3; i++) {
		struct task_rec *t = &(*recs)[i];

		t->pid = t->tgid =
			i ? 4000000 + (uint32_t)i : (uint32_t)getpid();
		snprintf(t->comm, sizeof(t->comm), "%s", comm[i]);
		t->process = true;
		fake_energy(watts[i], up, &t->source, &t->domains,
			    &t->energy_uj, t->domain_uj);
		t->present = REC_F(JL_F_CPU_NS);
		t->feat[JL_F_CPU_NS] = (uint64_t)(watts[i] / 30 * up);
	}
	*n = 3;
	return 0;
}

/* What the exporter never asks for. */
int jnl_get_task(struct jnl *nl, pid_t id, bool thread, struct task_rec *out)
{
	(void)nl, (void)id, (void)thread, (void)out;
	return -EOPNOTSUPP;
}

int jnl_get_cgroup(struct jnl *nl, const char *path, uint64_t id,
		   struct cgroup_rec *out)
{
	(void)nl, (void)path, (void)id, (void)out;
	return -EOPNOTSUPP;
}

int jnl_subscribe(struct jnl *nl, unsigned int groups)
{
	(void)nl, (void)groups;
	return -EOPNOTSUPP;
}

void jnl_event_free(struct jnl_event *ev)
{
	(void)ev;
}

int jnl_next_event(struct jnl *nl, struct jnl_event *ev, int timeout_ms)
{
	(void)nl, (void)ev, (void)timeout_ms;
	return -EOPNOTSUPP;
}

unsigned long jnl_events_lost(const struct jnl *nl)
{
	(void)nl;
	return 0;
}

int jnl_raw_request(struct jnl *nl, uint8_t cmd, uint8_t version,
		    uint16_t flags, const void *buf, size_t len)
{
	(void)nl, (void)cmd, (void)version, (void)flags, (void)buf, (void)len;
	return -EOPNOTSUPP;
}
