// SPDX-License-Identifier: GPL-2.0
/* Host test of --compat kepler (kepler.c): names, zones, watts over a window. */
#include "kselftest_harness.h"
#include "collector_test.h"
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#endif
#include "collector.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#define S(x) ((uint64_t)(x)*1000000000ull)

static char *kp_render(const struct jm_state *s, const struct jm_snapshot *snap)
{
	struct prom_writer w;
	size_t len;

	prom_init(&w, PROM_FMT_TEXT, 0);
	jm_kepler_render(s, snap, &w);
	if (prom_finish(&w)) {
		prom_free(&w);
		return NULL;
	}
	return prom_take(&w, &len);
}

/* The full snapshot with RAPL domains on the cgroups and processes. */
static void rapl_snapshot(struct jm_snapshot *snap, uint64_t add_uj)
{
	full_snapshot(snap);
	snap->node.domain_uj[JL_D_PKG] += add_uj;
	for (size_t i = 0; i < snap->ncgroups; i++) {
		snap->cgroups[i].domains =
			snap->cgroups[i].source ? 1u << JL_D_PKG : 0;
		snap->cgroups[i].domain_uj[JL_D_PKG] =
			snap->cgroups[i].energy_uj + add_uj;
	}
	for (size_t i = 0; i < snap->nprocs; i++) {
		struct task_rec *t = &snap->procs[i];

		t->domains = t->source ? 1u << JL_D_PKG | 1u << JL_D_DRAM : 0;
		t->domain_uj[JL_D_PKG] = t->energy_uj + add_uj;
		t->domain_uj[JL_D_DRAM] = 1000000;
	}
	snap->node.feat[JL_F_CPU_NS] += add_uj * 100;
}

/*
 * One exporter with --compat=kepler (node name, window) and the snapshot
 * its scrapes render: kp_scrape() builds the Kepler series at `now` and
 * renders them, kp_drop() frees one scrape, kp_close() all of it.
 */
struct kp {
	struct jm_state s;
	struct jm_snapshot snap;
	char *t;
};

static int kp_open(struct kp *k, const char *node, uint64_t window)
{
	memset(k, 0, sizeof(*k));
	base_state(&k->s, 3);
	return jm_set_compat_kepler(&k->s, node, window);
}

static char *kp_scrape(struct kp *k, uint64_t now, int cpus)
{
	free(k->t);
	k->t = NULL;
	if (jm_kepler_build(&k->s, &k->snap, now, cpus))
		return NULL;
	return k->t = kp_render(&k->s, &k->snap);
}

static void kp_drop(struct kp *k)
{
	free(k->t);
	k->t = NULL;
	jm_kepler_free(&k->snap);
}

static void kp_close(struct kp *k)
{
	kp_drop(k);
	jm_close(&k->s);
}

/* Off unless asked: joules' own names only. */
TEST(off_by_default)
{
	struct jm_snapshot snap;
	struct jm_state s;
	char *t;

	base_state(&s, 3);
	rapl_snapshot(&snap, 0);
	t = ct_render(&s, &snap, PROM_FMT_TEXT);
	ASSERT_NE(NULL, t);
	EXPECT_FALSE(strstr(t, "kepler_"));
	EXPECT_FALSE(strstr(t, "compat_window"));
	free(t);
}

/* The first scrape: counters, and no watts (no window yet), not 0. */
TEST(first_scrape_no_watts)
{
	struct kp k;
	char *t;

	ASSERT_EQ(0, kp_open(&k, "node-1", S(5)));
	rapl_snapshot(&k.snap, 0);
	t = kp_scrape(&k, S(100), 4);
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(has(
		t,
		"kepler_node_cpu_joules_total{zone=\"package\",node_name=\"node-1\"} 1.000001\n"));
	EXPECT_TRUE(has(
		t,
		"kepler_node_cpu_joules_total{zone=\"psys\",node_name=\"node-1\"} 4.000001\n"));
	EXPECT_FALSE(strstr(t, "_watts"));
	EXPECT_FALSE(strstr(t, "usage_ratio"));
	EXPECT_FALSE(strstr(t, "compat_window"));
	/* RAPL: no active/idle per zone (joules splits idle from the total). */
	EXPECT_FALSE(strstr(t, "_active_"));
	kp_close(&k);
}

/* Watts: the change over the window, the window stated; kept until the next. */
TEST(watts_over_window)
{
	struct kp k;
	char *t;

	ASSERT_EQ(0, kp_open(&k, "node-1", S(5)));
	rapl_snapshot(&k.snap, 0);
	ASSERT_NE(NULL, kp_scrape(&k, S(100), 4));
	kp_drop(&k);
	/* 20 J more in 10 s: 2 W. */
	rapl_snapshot(&k.snap, 20000000);
	t = kp_scrape(&k, S(110), 4);
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(has(
		t,
		"kepler_node_cpu_watts{zone=\"package\",node_name=\"node-1\"} 2\n"));
	/* Unchanged zones draw 0 W: measured, not absent. */
	EXPECT_TRUE(has(
		t,
		"kepler_node_cpu_watts{zone=\"dram\",node_name=\"node-1\"} 0\n"));
	EXPECT_TRUE(has(
		t, "kepler_container_cpu_watts{container_id=\"" ID
		   "\",runtime=\"containerd\",state=\"running\",pod_id=\"" UID
		   "\",zone=\"package\",node_name=\"node-1\"} 2\n"));
	EXPECT_TRUE(has(
		t,
		"kepler_pod_cpu_watts{pod_id=\"" UID
		"\",state=\"running\",zone=\"package\",node_name=\"node-1\"} 2\n"));
	EXPECT_TRUE(has(
		t,
		"kepler_process_cpu_watts{pid=\"4242\",comm=\"burner\",state=\"running\",zone=\"package\",node_name=\"node-1\"} 2\n"));
	/* 2 s of CPU time in 10 s on 4 CPUs: 0.05. */
	EXPECT_TRUE(has(
		t, "kepler_node_cpu_usage_ratio{node_name=\"node-1\"} 0.05\n"));
	EXPECT_TRUE(has(t, "joules_exporter_compat_window_seconds 10\n"));
	kp_drop(&k);
	/* 2 s later: too short a window; the last one is served again. */
	rapl_snapshot(&k.snap, 90000000);
	t = kp_scrape(&k, S(112), 4);
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(has(
		t,
		"kepler_node_cpu_watts{zone=\"package\",node_name=\"node-1\"} 2\n"));
	EXPECT_TRUE(has(
		t,
		"kepler_node_cpu_joules_total{zone=\"package\",node_name=\"node-1\"} 91.000001\n"));
	kp_close(&k);
}

/* A counter that fell (module reload): no watts for that window. */
TEST(reset_no_watts)
{
	struct kp k;
	char *t;

	ASSERT_EQ(0, kp_open(&k, "", S(1)));
	rapl_snapshot(&k.snap, 50000000);
	ASSERT_NE(NULL, kp_scrape(&k, S(100), 2));
	kp_drop(&k);
	rapl_snapshot(&k.snap, 0);
	t = kp_scrape(&k, S(101), 2);
	ASSERT_NE(NULL, t);
	EXPECT_FALSE(strstr(t, "kepler_node_cpu_watts{zone=\"package\""));
	EXPECT_TRUE(has(t, "kepler_node_cpu_watts{zone=\"dram\"} 0\n"));
	/* No node name: no node_name label rather than an empty one. */
	EXPECT_FALSE(strstr(t, "node_name"));
	kp_close(&k);
}

/*
 * Without the window's state (freed by jm_close(), which a netlink retry
 * once called): counters still, no watts, no crash.
 */
TEST(no_state_no_watts)
{
	struct jm_snapshot snap;
	struct jm_state s;
	char *t;

	base_state(&s, 3);
	ASSERT_EQ(0, jm_set_compat_kepler(&s, "", S(1)));
	jm_close(&s);
	s.compat = JM_COMPAT_KEPLER;
	rapl_snapshot(&snap, 0);
	ASSERT_EQ(0, jm_kepler_build(&s, &snap, S(100), 2));
	jm_kepler_free(&snap);
	rapl_snapshot(&snap, 50000000);
	ASSERT_EQ(0, jm_kepler_build(&s, &snap, S(102), 2));
	t = kp_render(&s, &snap);
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(has(t, "kepler_node_cpu_joules_total{zone=\"package\"} "));
	EXPECT_FALSE(strstr(t, "_watts"));
	free(t);
	jm_kepler_free(&snap);
}

/*
 * A process directory under the fake proc root dir: its comm (as the
 * kernel writes it, with a newline), its cgroup file's v2 path (NULL: no
 * file) and its exe link's target (NULL: no link, as for a kernel thread
 * or another user's process).
 */
static int fake_proc(const char *dir, int pid, const char *comm,
		     const char *cgroup, const char *exe)
{
	char path[256];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%d", dir, pid);
	if (mkdir(path, 0700))
		return -1;
	snprintf(path, sizeof(path), "%s/%d/comm", dir, pid);
	fp = fopen(path, "w");
	if (!fp)
		return -1;
	fprintf(fp, "%s\n", comm);
	fclose(fp);
	if (cgroup) {
		snprintf(path, sizeof(path), "%s/%d/cgroup", dir, pid);
		fp = fopen(path, "w");
		if (!fp)
			return -1;
		fprintf(fp, "0::%s\n", cgroup);
		fclose(fp);
	}
	snprintf(path, sizeof(path), "%s/%d/exe", dir, pid);
	return exe ? symlink(exe, path) : 0;
}

/*
 * A fake proc root (fake_proc() fills it) and one --compat=kepler scrape
 * of the processes read from it, as JOULES_PROC points the exporter.
 */
FIXTURE(procs)
{
	char dir[32];
	struct kp k;
};

FIXTURE_SETUP(procs)
{
	memset(&self->k, 0, sizeof(self->k));
	snprintf(self->dir, sizeof(self->dir), "/tmp/kepler_test.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
}

FIXTURE_TEARDOWN(procs)
{
	char cmd[64];

	kp_close(&self->k);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", self->dir);
	EXPECT_EQ(0, system(cmd));
}

static char *procs_scrape(const char *dir, struct kp *k)
{
	int err;

	setenv("JOULES_PROC", dir, 1);
	err = kp_open(k, "", S(1));
	unsetenv("JOULES_PROC");
	if (err)
		return NULL;
	rapl_snapshot(&k->snap, 0);
	jm_kepler_gather(&k->s, &k->snap);
	return k->t = kp_render(&k->s, &k->snap);
}

/* Gather and render again with the same state: the exporter's next scrape. */
static char *procs_rescrape(struct kp *k)
{
	kp_drop(k);
	jm_kepler_gather(&k->s, &k->snap);
	return k->t = kp_render(&k->s, &k->snap);
}

/*
 * A process's type and container from $JOULES_PROC/PID/cgroup: container
 * when its cgroup names one, regular when it names none, and no type at
 * all when the file cannot be read (a guess would be a lie).
 */
TEST_F(procs, process_type)
{
	char *t;

	ASSERT_EQ(0, fake_proc(self->dir, 4242, "burner", CTR, NULL));
	/* A user's own cgroup, named like a container: regular. */
	ASSERT_EQ(0, fake_proc(self->dir, 17, "we\"ird\\\n\xff",
			       "/user.slice/user-1000.slice/user@1000.service/"
			       "cri-containerd-" DID ".scope",
			       NULL));
	/* pid 18 has no directory: gone, or in another PID namespace. */
	t = procs_scrape(self->dir, &self->k);
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(has(
		t,
		"kepler_process_cpu_seconds_total{pid=\"4242\",comm=\"burner\",type=\"container\",container_id=\"" ID
		"\"} "));
	/* pid 17's comm is made to be escaped: only it is regular. */
	EXPECT_TRUE(strstr(t, "\",type=\"regular\"} "));
	EXPECT_FALSE(strstr(t, "type=\"container\",container_id=\"" DID));
	EXPECT_TRUE(has(
		t,
		"kepler_process_cpu_seconds_total{pid=\"18\",comm=\"quiet\"} "));
}

/*
 * Kepler's exe label: the link of PROC/PID/exe where it can be read, left
 * out where not (a kernel thread, another user's process). A pid whose
 * comm is no longer the record's went to another process after the dump:
 * neither its type, container nor executable is said.
 */
#define IMP "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"

TEST_F(procs, process_exe_and_a_reused_pid)
{
	char *t;

	ASSERT_EQ(0, fake_proc(self->dir, 4242, "burner", CTR,
			       "/usr/bin/burn er"));
	ASSERT_EQ(0, fake_proc(self->dir, 17, "we\"ird\\\n\xff", "/user.slice",
			       NULL));
	ASSERT_EQ(0, fake_proc(self->dir, 18, "impostor",
			       "/system.slice/docker-" IMP ".scope",
			       "/usr/bin/impostor"));
	t = procs_scrape(self->dir, &self->k);
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(has(
		t,
		"kepler_process_cpu_seconds_total{pid=\"4242\",comm=\"burner\",exe=\"/usr/bin/burn er\",type=\"container\",container_id=\"" ID
		"\"} "));
	EXPECT_TRUE(strstr(t, "\",type=\"regular\"} "));
	EXPECT_TRUE(has(
		t,
		"kepler_process_cpu_seconds_total{pid=\"18\",comm=\"quiet\"} "));
	EXPECT_FALSE(strstr(t, "impostor"));
	EXPECT_FALSE(strstr(t, IMP));
}

/*
 * A scrape's snapshot is freed by jm_snapshot_free(), which empties the
 * process list before the Kepler part: every exe it copied goes too
 * (LeakSanitizer in the SANITIZE=1 run says otherwise).
 */
TEST_F(procs, snapshot_free_frees_every_exe)
{
	struct task_rec *procs;
	char *t;

	ASSERT_EQ(0,
		  fake_proc(self->dir, 4242, "burner", CTR, "/usr/bin/burner"));
	t = procs_scrape(self->dir, &self->k);
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(strstr(t, "exe=\"/usr/bin/burner\""));
	/* The snapshot's own arrays as a scrape has them: on the heap. */
	procs = malloc(self->k.snap.nprocs * sizeof(*procs));
	ASSERT_NE(NULL, procs);
	memcpy(procs, self->k.snap.procs, self->k.snap.nprocs * sizeof(*procs));
	self->k.snap.procs = procs;
	self->k.snap.cgroups = NULL;
	self->k.snap.ncgroups = 0;
	jm_snapshot_free(&self->k.snap);
	EXPECT_EQ(NULL, self->k.snap.kepler);
#ifdef __SANITIZE_ADDRESS__
	/* The harness ends a test with _exit(): no leak check of its own. */
	EXPECT_EQ(0, __lsan_do_recoverable_leak_check());
#endif
}

/*
 * Since 5.17 /proc/PID/comm gives a kernel thread its whole name and a
 * kworker its workqueue (kworker/u8:0-events_unbound) where the module has
 * the task's 15-byte comm: one that begins with the module's is the same
 * process. A process's exe stays what it was first read as, while the pid
 * keeps its comm: an upgrade's "(deleted)" or a zombie's unreadable link
 * would otherwise start a new series.
 */
TEST_F(procs, kernel_thread_names_and_a_steady_exe)
{
	char path[128], *t;

	ASSERT_EQ(0,
		  fake_proc(self->dir, 4242, "burner", CTR, "/usr/bin/burner"));
	ASSERT_EQ(0,
		  fake_proc(self->dir, 18, "quiet-events_unbound", "/", NULL));
	t = procs_scrape(self->dir, &self->k);
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(has(
		t,
		"kepler_process_cpu_seconds_total{pid=\"18\",comm=\"quiet\",type=\"regular\"} "));
	snprintf(path, sizeof(path), "%s/4242/exe", self->dir);
	ASSERT_EQ(0, unlink(path));
	ASSERT_EQ(0, symlink("/usr/bin/burner (deleted)", path));
	t = procs_rescrape(&self->k);
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(strstr(t, "exe=\"/usr/bin/burner\","));
	EXPECT_FALSE(strstr(t, "(deleted)"));
	ASSERT_EQ(0, unlink(path));
	t = procs_rescrape(&self->k);
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(strstr(t, "exe=\"/usr/bin/burner\","));
}

/*
 * A user's delegated cgroups can be named like anything: a pod or a
 * container there is forged, and gets no Kepler series. Only the runtimes'
 * top-level trees are believed.
 */
#define FORGED_POD                                                        \
	"/user.slice/user-1000.slice/user@1000.service/x-kubepods.slice/" \
	"x-kubepods-pod1a2b3c4d_5e6f_7a8b_9c0d_1e2f3a4b5c6d.slice"
#define FORGED_CTR                                                          \
	"/user.slice/user-1000.slice/user@1000.service/cri-containerd-" DID \
	".scope"

TEST(forged_pod)
{
	struct kp k;
	char *t;

	ASSERT_EQ(0, kp_open(&k, "", S(1)));
	rapl_snapshot(&k.snap, 0);
	/* The real pod and docker container become a user's forgeries. */
	snprintf(k.snap.cgroups[1].path, sizeof(cg_paths[1]), "%s", FORGED_POD);
	snprintf(k.snap.cgroups[3].path, sizeof(cg_paths[3]), "%s", FORGED_CTR);
	t = kp_scrape(&k, S(1), 2);
	ASSERT_NE(NULL, t);
	EXPECT_FALSE(strstr(t, "kepler_pod_cpu_joules_total{"));
	EXPECT_FALSE(strstr(t, DID));
	/* The real container under /kubepods.slice still has its series. */
	EXPECT_TRUE(strstr(
		t, "kepler_container_cpu_joules_total{container_id=\"" ID));
	kp_close(&k);
}

/*
 * A module reload inside a window: the counters restarted from 0 and may
 * have climbed past their old values by the window's end, so no counter
 * falling proves nothing. The whole window has no watts when the exporter
 * noticed a reload or the node's uptime went down.
 */
static void reset_window(struct __test_metadata *_metadata, bool reload)
{
	struct kp k;
	char *t;

	ASSERT_EQ(0, kp_open(&k, "", S(1)));
	rapl_snapshot(&k.snap, 0);
	ASSERT_NE(NULL, kp_scrape(&k, S(100), 2));
	kp_drop(&k);
	rapl_snapshot(&k.snap, 50000000);
	if (reload)
		k.s.reloads++;
	else
		k.snap.node.uptime_ns = S(1);
	t = kp_scrape(&k, S(102), 2);
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(has(t, "kepler_node_cpu_joules_total{zone=\"package\"} "));
	EXPECT_FALSE(strstr(t, "_watts"));
	EXPECT_FALSE(strstr(t, "usage_ratio"));
	kp_close(&k);
}

TEST(reload_no_watts)
{
	reset_window(_metadata, true);
}

TEST(uptime_fell_no_watts)
{
	reset_window(_metadata, false);
}

/*
 * The module charges whole intervals (sysfs interval_ms): a window of a
 * few intervals would swing by one interval's energy. It is at least 10
 * intervals, whatever --compat.window says.
 */
TEST(window_ten_intervals)
{
	char dir[] = "/tmp/kepler_test.XXXXXX", path[128];
	struct jm_snapshot snap;
	struct jm_state s;
	FILE *fp;
	char *t;

	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/interval_ms", dir);
	fp = fopen(path, "w");
	ASSERT_NE(NULL, fp);
	fprintf(fp, "1000\n");
	fclose(fp);
	jm_init(&s, 3, dir, NULL);
	ASSERT_EQ(0, jm_set_compat_kepler(&s, "", S(1)));
	rapl_snapshot(&snap, 0);
	ASSERT_EQ(0, jm_kepler_build(&s, &snap, S(100), 2));
	jm_kepler_free(&snap);
	/* 5 s: past --compat.window, short of 10 intervals. */
	rapl_snapshot(&snap, 10000000);
	ASSERT_EQ(0, jm_kepler_build(&s, &snap, S(105), 2));
	t = kp_render(&s, &snap);
	ASSERT_NE(NULL, t);
	EXPECT_FALSE(strstr(t, "_watts"));
	free(t);
	jm_kepler_free(&snap);
	rapl_snapshot(&snap, 20000000);
	ASSERT_EQ(0, jm_kepler_build(&s, &snap, S(110), 2));
	t = kp_render(&s, &snap);
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(has(t, "kepler_node_cpu_watts{zone=\"package\"} 2\n"));
	EXPECT_TRUE(has(t, "joules_exporter_compat_window_seconds 10\n"));
	free(t);
	jm_kepler_free(&snap);
	jm_close(&s);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	EXPECT_EQ(0, system(path));
}

/* Without a meter: zone model, with its active and idle parts. */
TEST(model_zone)
{
	struct kp k;
	char *t;

	ASSERT_EQ(0, kp_open(&k, "n", S(5)));
	full_snapshot(&k.snap);
	k.snap.node.source = REC_SRC_MODEL;
	k.snap.node.domains = 0;
	for (size_t i = 0; i < k.snap.ncgroups; i++)
		k.snap.cgroups[i].source =
			k.snap.cgroups[i].source ? REC_SRC_MODEL : 0;
	t = kp_scrape(&k, S(1), 2);
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(has(
		t,
		"kepler_node_cpu_joules_total{zone=\"model\",node_name=\"n\"} 123456.789012\n"));
	EXPECT_TRUE(has(
		t,
		"kepler_node_cpu_active_joules_total{zone=\"model\",node_name=\"n\"} 100000\n"));
	EXPECT_TRUE(has(
		t,
		"kepler_node_cpu_idle_joules_total{zone=\"model\",node_name=\"n\"} 23456.789012\n"));
	EXPECT_FALSE(strstr(t, "zone=\"package\""));
	EXPECT_TRUE(has(
		t, "kepler_pod_cpu_joules_total{pod_id=\"" UID
		   "\",state=\"running\",zone=\"model\",node_name=\"n\"} 3\n"));
	/* Nothing charged pid 18: CPU time, and no energy in any zone. */
	EXPECT_FALSE(strstr(t, "kepler_process_cpu_joules_total{pid=\"18\""));
	EXPECT_TRUE(has(
		t,
		"kepler_process_cpu_seconds_total{pid=\"18\",comm=\"quiet\",node_name=\"n\"} 0.000000005\n"));
	EXPECT_FALSE(strstr(t, "quiet.service"));
	kp_close(&k);
}

/* Two cgroups naming one container: one series, or the scrape is lost. */
TEST(duplicate_container)
{
	struct kp k;
	char *t, *p;
	int n = 0;

	ASSERT_EQ(0, kp_open(&k, "n", S(5)));
	rapl_snapshot(&k.snap, 0);
	snprintf(cg_paths[4], sizeof(cg_paths[4]), "/docker/%s", DID);
	k.snap.cgroups[4].source = REC_SRC_RAPL;
	k.snap.cgroups[4].domains = 1u << JL_D_PKG;
	t = kp_scrape(&k, S(1), 2);
	ASSERT_NE(NULL, t);
	for (p = t; (p = strstr(p, "container_id=\"" DID "\"")); p++)
		n++;
	EXPECT_EQ(1, n);
	EXPECT_TRUE(has(
		t,
		"kepler_container_cpu_joules_total{container_id=\"" DID
		"\",runtime=\"docker\",state=\"running\",zone=\"package\",node_name=\"n\"} 0.000007\n"));
	kp_close(&k);
}

/*
 * The cgroupfs driver names no CRI runtime: Kepler's runtime label is then
 * "kubernetes" (its KubePodsRuntime for /kubepods/<class>/pod<uid>/<id>),
 * not "unknown". A guaranteed pod sits directly in /kubepods; Kepler's own
 * pattern misses those, joules labels them the same way.
 */
static void cgroupfs_runtime(struct __test_metadata *_metadata, const char *pod)
{
	struct kp k;
	char *t;

	ASSERT_EQ(0, kp_open(&k, "n", S(5)));
	rapl_snapshot(&k.snap, 0);
	snprintf(cg_paths[1], sizeof(cg_paths[1]), "/kubepods/%spod" UID, pod);
	snprintf(cg_paths[2], sizeof(cg_paths[2]), "/kubepods/%spod" UID "/" ID,
		 pod);
	t = kp_scrape(&k, S(1), 2);
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(has(
		t, "kepler_container_cpu_joules_total{container_id=\"" ID
		   "\",runtime=\"kubernetes\",state=\"running\",pod_id=\"" UID
		   "\",zone=\"package\",node_name=\"n\"} "))
	TH_LOG("%s", t);
	/* And the pod keeps its own series. */
	EXPECT_TRUE(has(t, "kepler_pod_cpu_joules_total{pod_id=\"" UID "\""));
	kp_close(&k);
}

TEST(cgroupfs_burstable_runtime_kubernetes)
{
	cgroupfs_runtime(_metadata, "burstable/");
}

TEST(cgroupfs_guaranteed_runtime_kubernetes)
{
	cgroupfs_runtime(_metadata, "");
}

/*
 * Only a bare id directly in a cgroupfs pod is Kepler's "kubernetes": one
 * directly in a systemd-driver pod's slice names no runtime ("unknown").
 */
static void runtime_of(struct __test_metadata *_metadata, const char *ctr,
		       const char *want)
{
	char line[512];
	struct kp k;
	char *t;

	ASSERT_EQ(0, kp_open(&k, "n", S(5)));
	rapl_snapshot(&k.snap, 0);
	snprintf(cg_paths[2], sizeof(cg_paths[2]), "%s", ctr);
	t = kp_scrape(&k, S(1), 2);
	ASSERT_NE(NULL, t);
	snprintf(line, sizeof(line),
		 "kepler_container_cpu_joules_total{container_id=\"" ID
		 "\",runtime=\"%s\",state=\"running\",pod_id=\"" UID "\",",
		 want);
	EXPECT_TRUE(has(t, line))
	TH_LOG("%s", t);
	kp_close(&k);
}

TEST(systemd_pod_bare_id_runtime_unknown)
{
	runtime_of(_metadata, POD "/" ID, "unknown");
}

/* A container made inside another's cgroup is not where runtimes put one. */
TEST(container_in_container_not_served)
{
	struct kp k;
	char *t;

	ASSERT_EQ(0, kp_open(&k, "n", S(5)));
	rapl_snapshot(&k.snap, 0);
	snprintf(cg_paths[2], sizeof(cg_paths[2]),
		 POD "/cri-containerd-" DID ".scope/" ID);
	t = kp_scrape(&k, S(1), 2);
	ASSERT_NE(NULL, t);
	EXPECT_FALSE(strstr(t, "container_id=\"" ID "\""));
	kp_close(&k);
}

/*
 * A pod or container is believed only where the kubelet and the runtimes
 * put them: a pod directly in a top-level kubepods tree or its class, a
 * container directly in a pod or a runtime's top-level cgroup. Cgroups a
 * privileged container or a delegated service makes inside its own
 * cgroup (a kubepods tree of its own, or a pod), named after another pod
 * or container, neither show nor replace the real series (the walk may
 * meet them first): host/podname and its container ID, then the victim.
 */
#define VUID "99999999-5e6f-7a8b-9c0d-1e2f3a4b5c6d"
#define HOST "/kubepods/besteffort/pod" VUID "/" DID
#define AUID_ "99999999_5e6f_7a8b_9c0d_1e2f3a4b5c6d"
#define UID_ "1a2b3c4d_5e6f_7a8b_9c0d_1e2f3a4b5c6d"

static void forged_flat(struct __test_metadata *_metadata, const char *host,
			const char *podname)
{
	struct kp k;
	char *t;

	ASSERT_EQ(0, kp_open(&k, "n", S(5)));
	rapl_snapshot(&k.snap, 0);
	snprintf(cg_paths[1], sizeof(cg_paths[1]), "%s/%s", host, podname);
	snprintf(cg_paths[2], sizeof(cg_paths[2]), "%s/%s/" ID, host, podname);
	k.snap.cgroups[1].domain_uj[JL_D_PKG] = 1;
	k.snap.cgroups[2].domain_uj[JL_D_PKG] = 1;
	/* The victim, later in the walk. */
	snprintf(cg_paths[4], sizeof(cg_paths[4]),
		 "/kubepods/burstable/pod" UID);
	k.snap.cgroups[4].source = REC_SRC_RAPL;
	k.snap.cgroups[4].domains = 1u << JL_D_PKG;
	k.snap.cgroups[4].domain_uj[JL_D_PKG] = 9000000;
	t = kp_scrape(&k, S(1), 2);
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(has(
		t,
		"kepler_pod_cpu_joules_total{pod_id=\"" UID
		"\",state=\"running\",zone=\"package\",node_name=\"n\"} 9\n"))
	TH_LOG("%s", t);
	EXPECT_FALSE(strstr(t, "container_id=\"" ID "\""));
	kp_close(&k);
}

TEST(forged_nested_kubepods)
{
	forged_flat(_metadata, HOST "/kubepods/burstable", "pod" UID);
}

TEST(forged_pod_in_a_container_cgroupfs)
{
	forged_flat(_metadata, HOST, "pod" UID);
}

TEST(forged_pod_in_a_container_systemd)
{
	forged_flat(
		_metadata,
		"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" AUID_
		".slice/cri-containerd-" DID ".scope",
		"kubepods-burstable-pod" UID_ ".slice");
}

static void forged_container(struct __test_metadata *_metadata,
			     const char *forged)
{
	struct kp k;
	char *t;

	ASSERT_EQ(0, kp_open(&k, "n", S(5)));
	rapl_snapshot(&k.snap, 0);
	/* Met first in the walk; the real one is cgroups[2] (CTR). */
	snprintf(cg_paths[1], sizeof(cg_paths[1]), "%s", forged);
	t = kp_scrape(&k, S(1), 2);
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(has(
		t, "kepler_container_cpu_joules_total{container_id=\"" ID
		   "\",runtime=\"containerd\",state=\"running\",pod_id=\"" UID
		   "\","))
	TH_LOG("%s", t);
	EXPECT_FALSE(strstr(t, "container_id=\"" ID "\",runtime=\"unknown\""));
	kp_close(&k);
}

TEST(forged_container_in_a_container)
{
	forged_container(_metadata,
			 "/kubepods/besteffort/pod" VUID "/" DID "/" ID);
}

TEST(forged_container_in_a_service)
{
	forged_container(_metadata, "/system.slice/x.service/" ID);
}

TEST(parse_compat)
{
	enum jm_compat c = JM_COMPAT_NONE;

	EXPECT_EQ(0, jm_parse_compat("kepler", &c));
	EXPECT_EQ(JM_COMPAT_KEPLER, c);
	EXPECT_EQ(0, jm_parse_compat("none", &c));
	EXPECT_EQ(JM_COMPAT_NONE, c);
	EXPECT_EQ(-EINVAL, jm_parse_compat("scaphandre", &c));
}

TEST_HARNESS_MAIN
