// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of the joules metric families (user/lib/metrics.c): made-up
 * snapshots rendered in both formats and checked for what must and must
 * not be there. With a directory argument, every rendering is also
 * written there (NAME.prom in text format, NAME.om in OpenMetrics) for
 * run-host.sh to check with promtool.
 *
 * Every rendering is also compared byte for byte with golden/NAME.prom
 * and golden/NAME.om: the exposition as it was before the collectors were
 * split into their own files. A change to the output is then a visible
 * change to those files (regenerate them with `test_render DIR` and copy
 * DIR's files over, after checking the difference is the one intended).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "metrics.h"
#include "collector/collector_test.h"
#include "collector/collector.h"

static const char *outdir;

#ifndef GOLDEN_DIR
#define GOLDEN_DIR "golden"
#endif

/* Does buf equal the file GOLDEN_DIR/name.ext, byte for byte? */
static bool golden(const char *name, const char *ext, const char *buf)
{
	char path[512], *want = NULL;
	size_t len = 0, n = strlen(buf);
	bool same;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s.%s", GOLDEN_DIR, name, ext);
	fp = fopen(path, "r");
	if (!fp) {
		DIAG("%s: %s", path, strerror(errno));
		return false;
	}
	if (getdelim(&want, &len, 0, fp) < 0) {
		want = NULL;
		len = 0;
	} else {
		len = strlen(want);
	}
	fclose(fp);
	same = want && len == n && !memcmp(want, buf, n);
	if (!same) {
		size_t i = 0;

		while (want && i < len && i < n && want[i] == buf[i])
			i++;
		DIAG("%s differs from the rendering at byte %zu", path, i);
	}
	free(want);
	return same;
}

static void save(const char *name, const char *ext, const char *buf)
{
	char path[512];
	FILE *fp;

	if (!outdir)
		return;
	snprintf(path, sizeof(path), "%s/%s.%s", outdir, name, ext);
	fp = fopen(path, "w");
	if (!fp || fputs(buf, fp) < 0 || fclose(fp))
		DIAG("cannot write %s", path);
}

/* Render snap in both formats; *text and *om are malloc()ed. */
static void render(struct __test_metadata *_metadata, const char *name,
		   const struct jm_state *s, const struct jm_snapshot *snap,
		   char **text, char **om)
{
	struct prom_writer w;
	size_t len;

	prom_init(&w, PROM_FMT_TEXT, 0);
	jm_render(s, snap, &w);
	CHECK(!prom_finish(&w), "%s: text render failed", name);
	*text = prom_take(&w, &len);
	prom_init(&w, PROM_FMT_OPENMETRICS, 0);
	jm_render(s, snap, &w);
	CHECK(!prom_finish(&w), "%s: openmetrics render failed", name);
	*om = prom_take(&w, &len);
	save(name, "prom", *text);
	save(name, "om", *om);
	CHECK(golden(name, "prom", *text), "%s: text not as golden", name);
	CHECK(golden(name, "om", *om), "%s: openmetrics not as golden", name);
}

/* everything present: every family, in base units */
TEST(full)
{
	struct jm_snapshot snap;
	struct jm_state s;
	char *t, *o;

	base_state(&s, 3);
	s.reloads = 2;
	s.errors[JM_C_NODE] = 5;
	full_snapshot(&snap);
	render(_metadata, "full", &s, &snap, &t, &o);
	CHECK(has(t,
		  "joules_node_energy_joules_total{source=\"rapl\"} 123456.789012"),
	      "node energy");
	CHECK(has(t,
		  "joules_node_idle_energy_joules_total{source=\"rapl\"} 23456.789012"),
	      "idle energy");
	CHECK(has(t,
		  "joules_node_rapl_energy_joules_total{domain=\"pkg\"} 1.000001"),
	      "pkg");
	CHECK(has(t,
		  "joules_node_rapl_energy_joules_total{domain=\"psys\"} 4.000001"),
	      "psys");
	CHECK(has(t, "joules_node_cpu_seconds_total 1\n"), "cpu seconds");
	CHECK(has(t, "joules_node_cpu_cycles_total 2000000000"), "cycles");
	CHECK(has(t, "joules_node_storage_bytes_total 5000000000"), "disk");
	CHECK(has(t, "joules_module_load_time_seconds 1799996400.123"),
	      "load time");
	CHECK(has(t, "joules_model_power_watts{term=\"cpu_time\"} 7"), "cpu W");
	CHECK(has(t, "joules_model_power_watts{term=\"idle\"} 15"), "idle W");
	CHECK(has(t,
		  "joules_model_event_energy_joules{event=\"cache_miss\"} 0.000000002"),
	      "pJ as J");
	CHECK(has(t, "joules_meter_present{meter=\"intel-rapl-msr\"} 1"),
	      "meter");
	CHECK(has(t, "joules_meter_wraps_total 3"), "wraps");
	CHECK(has(t,
		  "joules_wall_meter_present{meter=\"pdu-rack4-outlet7\",state=\"in_force\"} 1\n"),
	      "wall meter");
	CHECK(has(t, "joules_wall_meter_residual_joules -1.234567\n"),
	      "residual, signed");
	CHECK(has(o, "# UNIT joules_wall_meter_window_seconds seconds"),
	      "OM unit of the window");
	CHECK(has(t,
		  "joules_static_power_watts{scope=\"pkg0\",domain=\"pkg\",in_force=\"measured\"} 4.999926\n") &&
		      has(t,
			  "joules_static_power_watts{scope=\"wall\",domain=\"meter\",in_force=\"measured\"} 39.999999\n"),
	      "static power");
	CHECK(!strstr(t, "joules_static_power_watts{scope=\"pkg1\"") &&
		      !strstr(t,
			      "joules_static_power_age_seconds{scope=\"pkg1\"") &&
		      has(t,
			  "joules_static_power_idle_seconds{scope=\"pkg1\",domain=\"core\"} 0\n"),
	      "static power not measured yet: no watts, no age");
	CHECK(has(o, "# UNIT joules_static_power_age_seconds seconds"),
	      "OM unit of the static power's age");
	CHECK(has(t,
		  "joules_process_energy_joules_total{pid=\"4242\",comm=\"burner\"} 9"),
	      "process energy");
	CHECK(has(t,
		  "joules_process_cpu_seconds_total{pid=\"4242\",comm=\"burner\"} 1.5"),
	      "process cpu");
	CHECK(has(t,
		  "joules_process_energy_joules_total{pid=\"17\",comm=\"we\\\"ird\\\\\\n\xef\xbf\xbd\"} 0.0001"),
	      "escaped comm");
	CHECK(!has(t, "joules_process_energy_joules_total{pid=\"18\""),
	      "no energy without a source");
	CHECK(has(t, "joules_process_cpu_seconds_total{pid=\"18\""),
	      "cpu of the unpowered process");
	CHECK(has(t, "joules_exporter_processes_seen 10000"), "seen");
	CHECK(has(t, "joules_exporter_module_reloads_total 2"), "reloads");
	CHECK(has(t,
		  "joules_exporter_scrape_errors_total{collector=\"node\"} 5"),
	      "errors");
	CHECK(has(t, "joules_exporter_scrape_duration_seconds 0.001234567"),
	      "duration");
	CHECK(!strstr(t, "collector_error{"), "no error series");
	CHECK(has(o, "# TYPE joules_node_energy_joules counter"),
	      "OM counter family");
	CHECK(has(o, "# UNIT joules_node_energy_joules joules"), "OM unit");
	CHECK(has(o, "# TYPE joules_module info"), "OM info");
	CHECK(has(o,
		  "joules_module_info{version=\"0.1.0\",abi_version=\"1\",netlink_version=\"1\"} 1"),
	      "module info");
	CHECK(strlen(o) > 6 && !strcmp(o + strlen(o) - 6, "# EOF\n"),
	      "OM ends with # EOF");
	free(t);
	free(o);
}

/* The cgroup families: labels from the path, hierarchy, absent energy. */
TEST(cgroup_families)
{
	struct jm_snapshot snap;
	struct jm_state s;
	char *t, *o;

	base_state(&s, 0);
	full_snapshot(&snap);
	snap.st[JM_C_PROCESS].enabled = false;
	render(_metadata, "cgroups", &s, &snap, &t, &o);
	CHECK(has(t,
		  "joules_cgroup_energy_joules_total{cgroup=\"/\",kind=\"root\"} 100000\n"),
	      "root");
	CHECK(has(t,
		  "joules_cgroup_energy_joules_total{cgroup=\"" POD
		  "\",kind=\"pod\",pod_uid=\"" UID "\",qos=\"burstable\"} 3\n"),
	      "pod");
	CHECK(has(t,
		  "joules_cgroup_energy_joules_total{cgroup=\"" CTR
		  "\",kind=\"container\",runtime=\"containerd\",container_id=\"" ID
		  "\",pod_uid=\"" UID "\",qos=\"burstable\"} 2.5\n"),
	      "container");
	CHECK(has(t,
		  "joules_cgroup_idle_energy_joules_total{cgroup=\"" CTR
		  "\",kind=\"container\",runtime=\"containerd\",container_id=\"" ID
		  "\",pod_uid=\"" UID "\",qos=\"burstable\"} 0.4\n"),
	      "container idle");
	CHECK(has(t,
		  "joules_cgroup_cpu_seconds_total{cgroup=\"" CTR
		  "\",kind=\"container\",runtime=\"containerd\",container_id=\"" ID
		  "\",pod_uid=\"" UID "\",qos=\"burstable\"} 1.5\n"),
	      "container cpu");
	CHECK(has(t,
		  "joules_cgroup_storage_read_bytes_total{cgroup=\"" CTR
		  "\",kind=\"container\",runtime=\"containerd\",container_id=\"" ID
		  "\",pod_uid=\"" UID "\",qos=\"burstable\"} 4096\n"),
	      "container read");
	CHECK(has(t,
		  "joules_cgroup_storage_written_bytes_total{cgroup=\"/system.slice/docker-" DID
		  ".scope\",kind=\"container\",runtime=\"docker\",container_id=\"" DID
		  "\"} 512\n"),
	      "docker written");
	CHECK(has(t,
		  "joules_cgroup_network_transmit_bytes_total{cgroup=\"" CTR
		  "\",kind=\"container\",runtime=\"containerd\",container_id=\"" ID
		  "\",pod_uid=\"" UID "\",qos=\"burstable\"} 1500\n") &&
		      has(t,
			  "joules_cgroup_network_receive_bytes_total{cgroup=\"" CTR
			  "\",kind=\"container\",runtime=\"containerd\",container_id=\"" ID
			  "\",pod_uid=\"" UID "\",qos=\"burstable\"} 9000\n"),
	      "container network bytes");
	/* Absent is not zero: only the container counted sockets; nobody page-cache reads. */
	CHECK(!strstr(t,
		      "joules_cgroup_network_transmit_bytes_total{cgroup=\"/\"") &&
		      !strstr(t, "joules_cgroup_pagecache_read_bytes_total{"),
	      "absent network and page-cache bytes have no series");
	CHECK(has(t,
		  "joules_cgroup_energy_joules_total{cgroup=\"/system.slice/docker-" DID
		  ".scope\",kind=\"container\",runtime=\"docker\",container_id=\"" DID
		  "\"} 0.000007\n"),
	      "docker energy, exact");
	/* Nothing charged it: no energy series, the rest still there. */
	CHECK(!strstr(t,
		      "energy_joules_total{cgroup=\"/system.slice/quiet.service\""),
	      "no energy without a source");
	CHECK(has(t,
		  "joules_cgroup_cpu_seconds_total{cgroup=\"/system.slice/quiet.service\",kind=\"service\"} 0.000000005\n"),
	      "cpu of the unpowered cgroup");
	CHECK(has(t,
		  "joules_cgroup_energy_joules_total{cgroup=\"/odd \\\"name\\\\\\n\xef\xbf\xbd\",kind=\"other\"} 0.000001\n"),
	      "odd path escaped");
	CHECK(has(t, "joules_exporter_cgroups_seen 40\n"), "seen");
	/* Idle shared out: a cgroup's share, 0 included ("odd" had none yet). */
	CHECK(has(t,
		  "joules_cgroup_idle_energy_joules_total{cgroup=\"/odd \\\"name\\\\\\n\xef\xbf\xbd\",kind=\"other\"} 0\n"),
	      "idle 0 while split");
	CHECK(has(o, "# TYPE joules_cgroup_energy_joules counter\n"),
	      "OM type");
	CHECK(has(o,
		  "joules_cgroup_energy_joules_total{cgroup=\"/\",kind=\"root\"} 100000\n"),
	      "OM sample");
	/* Every family's samples are together, after its one HELP line. */
	{
		const char *first =
			strstr(t, "joules_cgroup_energy_joules_total{");
		const char *other =
			strstr(t, "joules_cgroup_idle_energy_joules_total{");
		const char *last = NULL;

		for (const char *p = t;
		     (p = strstr(p, "\njoules_cgroup_energy_joules_total{"));
		     p++)
			last = p;
		CHECK(first && other && last && last < other, "grouped");
	}
	free(t);
	free(o);

	/* Idle not shared (the default): no idle series where there is no share. */
	snap.idle_split = false;
	render(_metadata, "cgroups-idle-unsplit", &s, &snap, &t, &o);
	CHECK(!strstr(t,
		      "joules_cgroup_idle_energy_joules_total{cgroup=\"/odd") &&
		      has(t,
			  "joules_cgroup_idle_energy_joules_total{cgroup=\"/\",kind=\"root\"} 20000\n"),
	      "idle unsplit: only nonzero shares");
	free(t);
	free(o);
	snap.idle_split = true;

	/* Off: the collector is not run and nothing of it shows. */
	snap.st[JM_C_CGROUP].enabled = false;
	render(_metadata, "cgroups-off", &s, &snap, &t, &o);
	CHECK(!strstr(t, "joules_cgroup_") && !strstr(t, "cgroups_seen") &&
		      !strstr(t, "collector=\"cgroup\""),
	      "off");
	free(t);
	free(o);

	/* Without the capability: what is visible, flagged. */
	snap.st[JM_C_CGROUP].enabled = true;
	snap.st[JM_C_CGROUP].reason = JM_PERMISSION;
	render(_metadata, "cgroups-permission", &s, &snap, &t, &o);
	CHECK(has(t,
		  "joules_cgroup_energy_joules_total{cgroup=\"/\",kind=\"root\"}") &&
		      has(t,
			  "joules_exporter_collector_error{collector=\"cgroup\",reason=\"permission\"} 1\n"),
	      "permission: shown and flagged");
	free(t);
	free(o);

	/* The module lacks the interface: no series, the reason says so. */
	snap.st[JM_C_CGROUP].reason = JM_UNSUPPORTED;
	render(_metadata, "cgroups-unsupported", &s, &snap, &t, &o);
	CHECK(!strstr(t, "joules_cgroup_") &&
		      has(t,
			  "joules_exporter_collector_error{collector=\"cgroup\",reason=\"unsupported\"} 1\n"),
	      "unsupported");
	free(t);
	free(o);
}

/* QEMU-like: model source, no meter, no PMU, no model set yet. */
TEST(absent)
{
	struct jm_snapshot snap;
	struct jm_state s;
	char *t, *o;

	base_state(&s, 0);
	full_snapshot(&snap);
	snap.st[JM_C_PROCESS].enabled = false;
	snap.procs = NULL;
	snap.nprocs = 0;
	snap.st[JM_C_CGROUP].enabled = false;
	snap.node.source = REC_SRC_MODEL;
	snap.node.domains = 0;
	snap.node.present = REC_F(JL_F_CPU_NS) | REC_F(JL_F_DISK);
	snap.model_generation = 0;
	memset(&snap.coef, 0, sizeof(snap.coef));
	snap.meter_present = false;
	snap.meter[0] = 0;
	strcpy(snap.meter_reason,
	       "no RAPL: CPU vendor/model not supported (AuthenticAMD family 0xf model 0x6b)");
	snap.have_wraps = snap.have_bogus = false;
	snap.wall = (struct jm_wallmeter){ .state = JM_WALL_ABSENT,
					   .reason = "never fed",
					   .have_readings = true,
					   .have_refused = true };
	/* No RAPL, no wall meter: static_power is empty. */
	snap.nstatics = 0;
	render(_metadata, "absent", &s, &snap, &t, &o);
	CHECK(has(t, "joules_node_energy_joules_total{source=\"model\"}"),
	      "model energy");
	CHECK(!strstr(t, "joules_node_rapl_energy"), "no domains");
	CHECK(!strstr(t, "cycles") && !strstr(t, "instructions_total") &&
		      !strstr(t, "cache_misses"),
	      "no PMU counters");
	CHECK(has(t, "joules_model_generation 0"), "generation 0");
	CHECK(!strstr(t, "joules_model_power_watts") &&
		      !strstr(t, "joules_model_event"),
	      "no coefficients without a model");
	CHECK(has(t,
		  "joules_meter_present{reason=\"no RAPL: CPU vendor/model not supported (AuthenticAMD family 0xf model 0x6b)\"} 0"),
	      "meter absent with its reason");
	CHECK(!strstr(t, "joules_meter_wraps"), "no wraps without a meter");
	CHECK(has(t, "joules_wall_meter_present{reason=\"never fed\"} 0\n") &&
		      has(t, "joules_wall_meter_readings_total 0\n") &&
		      !strstr(t, "joules_wall_meter_energy") &&
		      !strstr(t, "joules_wall_meter_residual"),
	      "wall meter never fed: no figures");
	CHECK(!strstr(t, "joules_static_power_") &&
		      has(t,
			  "joules_exporter_collector_success{collector=\"static\"} 1\n"),
	      "no static power estimates, no failure");
	CHECK(!strstr(t, "joules_process_"), "no per-process series");
	free(t);
	free(o);
}

/* GET_NODE refused (no CAP_PERFMON), processes only partly visible. */
TEST(permission)
{
	struct jm_snapshot snap;
	struct jm_state s;
	char *t, *o;

	base_state(&s, 3);
	full_snapshot(&snap);
	snap.st[JM_C_NODE].reason = JM_PERMISSION;
	snap.st[JM_C_PROCESS].reason = JM_PERMISSION;
	/* The wall meter's figures refused, its state and counters shown. */
	snap.st[JM_C_WALLMETER].reason = JM_PERMISSION;
	snap.wall.have_energy = snap.wall.have_pending = false;
	snap.wall.have_residual = snap.wall.have_window = false;
	snap.wall.have_power = false;
	/* static_power refused: nothing of it read. */
	snap.st[JM_C_STATIC].reason = JM_PERMISSION;
	snap.nstatics = 0;
	s.errors[JM_C_NODE] = 1;
	render(_metadata, "permission", &s, &snap, &t, &o);
	CHECK(!strstr(t, "joules_node_"), "no node series");
	CHECK(!strstr(t, "joules_module_load_time"), "no load time");
	CHECK(has(t, "joules_exporter_collector_success{collector=\"node\"} 0"),
	      "node failed");
	CHECK(has(t,
		  "joules_exporter_collector_error{collector=\"node\",reason=\"permission\"} 1"),
	      "node: permission");
	CHECK(has(t,
		  "joules_exporter_collector_error{collector=\"process\",reason=\"permission\"} 1"),
	      "process: permission");
	CHECK(has(t, "joules_process_energy_joules_total{pid=\"4242\""),
	      "visible processes still shown");
	CHECK(has(t, "joules_model_generation 2"), "model from sysfs");
	CHECK(has(t,
		  "joules_exporter_collector_error{collector=\"wallmeter\",reason=\"permission\"} 1") &&
		      has(t,
			  "joules_wall_meter_present{meter=\"pdu-rack4-outlet7\",state=\"in_force\"} 1\n") &&
		      has(t, "joules_wall_meter_readings_total 3600\n") &&
		      !strstr(t, "joules_wall_meter_residual") &&
		      !strstr(t, "joules_wall_meter_energy"),
	      "wall meter: figures left out, the rest shown");
	CHECK(has(t,
		  "joules_exporter_collector_error{collector=\"static\",reason=\"permission\"} 1\n") &&
		      !strstr(t, "joules_static_power_"),
	      "static power: refused, left out");
	free(t);
	free(o);
}

/* module not loaded */
TEST(not_loaded)
{
	struct jm_snapshot snap;
	struct jm_state s;
	char *t, *o;

	base_state(&s, 0);
	memset(&snap, 0, sizeof(snap));
	snap.st[JM_C_MODULE].enabled = true;
	for (int c = JM_C_NODE; c <= JM_C_STATIC; c++) {
		snap.st[c].enabled = true;
		snap.st[c].reason = JM_NOT_LOADED;
	}
	render(_metadata, "not-loaded", &s, &snap, &t, &o);
	CHECK(has(t, "joules_module_loaded 0"), "loaded 0");
	CHECK(!strstr(t, "joules_module_info"), "no version");
	CHECK(!strstr(t, "joules_node_") && !strstr(t, "joules_model_") &&
		      !strstr(t, "joules_meter_") &&
		      !strstr(t, "joules_wall_meter_") &&
		      !strstr(t, "joules_static_power_"),
	      "no module series");
	CHECK(has(t,
		  "joules_exporter_collector_error{collector=\"meter\",reason=\"module_not_loaded\"} 1"),
	      "reason");
	free(t);
	free(o);
}

/*
 * --compat kepler over a RAPL node: Kepler's names next to joules' own,
 * watts over a 10 s window in which the package drew 2 W and the CPUs
 * were busy 5% of the time.
 */
TEST(kepler)
{
	struct jm_snapshot snap;
	struct jm_state s;
	char *t, *o;

	base_state(&s, 3);
	CHECK(!jm_set_compat_kepler(&s, "node-1", 5000000000ull), "compat");
	full_snapshot(&snap);
	for (size_t i = 0; i < snap.ncgroups; i++) {
		snap.cgroups[i].domains =
			snap.cgroups[i].source ? 1u << JL_D_PKG : 0;
		snap.cgroups[i].domain_uj[JL_D_PKG] = snap.cgroups[i].energy_uj;
	}
	snap.procs[0].domains = 1u << JL_D_PKG | 1u << JL_D_DRAM;
	snap.procs[0].domain_uj[JL_D_PKG] = 8000000;
	snap.procs[0].domain_uj[JL_D_DRAM] = 1000000;
	CHECK(!jm_kepler_build(&s, &snap, 100000000000ull, 4), "first");
	jm_kepler_free(&snap);
	snap.node.domain_uj[JL_D_PKG] += 20000000;
	snap.node.feat[JL_F_CPU_NS] += 2000000000;
	snap.cgroups[1].domain_uj[JL_D_PKG] += 5000000;
	snap.cgroups[2].domain_uj[JL_D_PKG] += 5000000;
	snap.procs[0].domain_uj[JL_D_PKG] += 5000000;
	CHECK(!jm_kepler_build(&s, &snap, 110000000000ull, 4), "second");
	render(_metadata, "kepler", &s, &snap, &t, &o);
	CHECK(has(t,
		  "kepler_node_cpu_watts{zone=\"package\",node_name=\"node-1\"} 2\n"),
	      "node watts");
	CHECK(has(t, "kepler_container_cpu_watts{container_id=\"" ID
		     "\",runtime=\"containerd\",state=\"running\",pod_id=\"" UID
		     "\",zone=\"package\",node_name=\"node-1\"} 0.5\n"),
	      "container watts");
	CHECK(has(t,
		  "kepler_node_cpu_usage_ratio{node_name=\"node-1\"} 0.05\n"),
	      "usage");
	CHECK(has(t,
		  "joules_node_energy_joules_total{source=\"rapl\"} 123456.789012\n"),
	      "joules' own names too");
	CHECK(has(o, "# TYPE kepler_node_cpu_joules counter"), "OM counter");
	CHECK(has(o, "# UNIT kepler_node_cpu_watts watts"), "OM unit");
	free(t);
	free(o);
	jm_kepler_free(&snap);
	jm_close(&s);
}

/* --compat kepler without a meter: zone model, its active and idle parts. */
TEST(kepler_model)
{
	struct jm_snapshot snap;
	struct jm_state s;
	char *t, *o;

	base_state(&s, 0);
	CHECK(!jm_set_compat_kepler(&s, "node-1", 5000000000ull), "compat");
	full_snapshot(&snap);
	snap.st[JM_C_PROCESS].enabled = false;
	snap.nprocs = 0;
	snap.node.source = REC_SRC_MODEL;
	snap.node.domains = 0;
	snap.meter_present = false;
	strcpy(snap.meter_reason, "no RAPL: CPU vendor/model not supported");
	for (size_t i = 0; i < snap.ncgroups; i++)
		snap.cgroups[i].source =
			snap.cgroups[i].source ? REC_SRC_MODEL : 0;
	CHECK(!jm_kepler_build(&s, &snap, 100000000000ull, 2), "first");
	jm_kepler_free(&snap);
	snap.node.energy_uj += 150000000;
	snap.node.idle_uj += 100000000;
	snap.cgroups[1].energy_uj += 20000000;
	CHECK(!jm_kepler_build(&s, &snap, 110000000000ull, 2), "second");
	render(_metadata, "kepler-model", &s, &snap, &t, &o);
	CHECK(has(t,
		  "kepler_node_cpu_watts{zone=\"model\",node_name=\"node-1\"} 15\n"),
	      "node watts");
	CHECK(has(t,
		  "kepler_node_cpu_idle_watts{zone=\"model\",node_name=\"node-1\"} 10\n"),
	      "idle watts");
	CHECK(has(t,
		  "kepler_node_cpu_active_watts{zone=\"model\",node_name=\"node-1\"} 5\n"),
	      "active watts");
	CHECK(has(t,
		  "kepler_pod_cpu_watts{pod_id=\"" UID
		  "\",state=\"running\",zone=\"model\",node_name=\"node-1\"} 2\n"),
	      "pod watts");
	CHECK(!strstr(t, "kepler_process_"),
	      "no processes without --processes");
	free(t);
	free(o);
	jm_kepler_free(&snap);
	jm_close(&s);
}

/* The real gather with nothing there: every collector says why. */
TEST(gather_nothing)
{
	struct jm_snapshot snap;
	struct jm_state s;

	jm_init(&s, 5, "/nonexistent/joules", NULL);
	jm_gather(&s, &snap);
	/* The host has no joules module loaded (never loaded by tests). */
	CHECK(!snap.loaded, "module seen as loaded on the host?");
	CHECK(snap.st[JM_C_MODEL].reason == JM_NOT_LOADED, "model %d",
	      snap.st[JM_C_MODEL].reason);
	CHECK(strstr(snap.st[JM_C_MODEL].msg, "not loaded"), "msg '%s'",
	      snap.st[JM_C_MODEL].msg);
	CHECK(snap.st[JM_C_PROCESS].enabled &&
		      snap.st[JM_C_PROCESS].reason == JM_NOT_LOADED,
	      "process");
	CHECK(snap.st[JM_C_CGROUP].enabled &&
		      snap.st[JM_C_CGROUP].reason == JM_NOT_LOADED,
	      "cgroup");
	CHECK(snap.st[JM_C_STATIC].reason == JM_NOT_LOADED, "static %d",
	      snap.st[JM_C_STATIC].reason);
	CHECK(s.errors[JM_C_NODE] == 1, "errors counted");
	jm_snapshot_free(&snap);
	jm_close(&s);
}

int main(int argc, char **argv)
{
	/* The renderings are also written to this directory, for promtool. */
	outdir = argc > 1 ? argv[1] : NULL;
	return test_harness_run(argc, argv);
}
