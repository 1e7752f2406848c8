// SPDX-License-Identifier: GPL-2.0
/* Host test of the static power collector (static.c), on a made-up sysfs. */
#include "kselftest_harness.h"
#include "collector_test.h"

/* The families' header lines, as the text format writes them. */
#define H_WATTS                                                                           \
	"# HELP joules_static_power_watts The module's static (idle) power estimate per " \
	"RAPL domain and for the wall meter, from the intervals in which almost nothing " \
	"ran; in_force: measured (what idle is charged), set (an operator's value is "    \
	"charged instead) or none\n"                                                      \
	"# TYPE joules_static_power_watts gauge\n"
#define H_AGE                                                              \
	"# HELP joules_static_power_age_seconds Time since the last idle " \
	"interval that fed the static power estimate\n"                    \
	"# TYPE joules_static_power_age_seconds gauge\n"
#define H_IDLE                                                                \
	"# HELP joules_static_power_idle_seconds Idle time the static power " \
	"estimate rests on\n"                                                 \
	"# TYPE joules_static_power_idle_seconds gauge\n"

/* The file as the module prints it (Documentation/metrics.rst). */
static const char node_file[] =
	"pkg0 pkg power_uw 4999926 age_ms 45 idle_ms 6000 in_force measured\n"
	"pkg0 dram power_uw 1999970 age_ms 45 idle_ms 6000 in_force measured\n"
	"wall meter power_uw 39999999 age_ms 49 idle_ms 5800 in_force measured\n"
	"pkg1 core power_uw - age_ms - idle_ms 0 in_force none\n";

/* Its exposition, whole: full_snapshot() has the same four estimates. */
static const char node_text[] = H_WATTS
	"joules_static_power_watts{scope=\"pkg0\",domain=\"pkg\",in_force=\"measured\"} 4.999926\n"
	"joules_static_power_watts{scope=\"pkg0\",domain=\"dram\",in_force=\"measured\"} 1.99997\n"
	"joules_static_power_watts{scope=\"wall\",domain=\"meter\",in_force=\"measured\"} 39.999999\n" H_AGE
	"joules_static_power_age_seconds{scope=\"pkg0\",domain=\"pkg\"} 0.045\n"
	"joules_static_power_age_seconds{scope=\"pkg0\",domain=\"dram\"} 0.045\n"
	"joules_static_power_age_seconds{scope=\"wall\",domain=\"meter\"} 0.049\n" H_IDLE
	"joules_static_power_idle_seconds{scope=\"pkg0\",domain=\"pkg\"} 6\n"
	"joules_static_power_idle_seconds{scope=\"pkg0\",domain=\"dram\"} 6\n"
	"joules_static_power_idle_seconds{scope=\"wall\",domain=\"meter\"} 5.8\n"
	"joules_static_power_idle_seconds{scope=\"pkg1\",domain=\"core\"} 0\n";

#define GOOD1 \
	"pkg0 pkg power_uw 5000000 age_ms 100 idle_ms 60000 in_force measured"
#define GOOD2 \
	"wall meter power_uw 40000000 age_ms 200 idle_ms 30000 in_force set"

TEST(render_full)
{
	struct jm_snapshot snap;
	struct jm_state s;
	char *t;

	base_state(&s, 0);
	full_snapshot(&snap);
	t = ct_render_one(&s, &snap, JM_C_STATIC);
	ASSERT_NE(NULL, t);
	EXPECT_STREQ(node_text, t);
	free(t);
}

/* OpenMetrics: the units, and no _total (these are gauges). */
TEST(render_openmetrics)
{
	struct jm_snapshot snap;
	struct jm_state s;
	char *t;

	base_state(&s, 0);
	full_snapshot(&snap);
	t = ct_render(&s, &snap, PROM_FMT_OPENMETRICS);
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(has(t, "# UNIT joules_static_power_watts watts\n"));
	EXPECT_TRUE(has(t, "# UNIT joules_static_power_age_seconds seconds\n"));
	EXPECT_TRUE(
		has(t, "# UNIT joules_static_power_idle_seconds seconds\n"));
	EXPECT_TRUE(has(
		t,
		"joules_static_power_watts{scope=\"wall\",domain=\"meter\",in_force=\"measured\"} 39.999999\n"));
	EXPECT_TRUE(has(
		t,
		"joules_exporter_collector_success{collector=\"static\"} 1\n"));
	free(t);
}

/* Nothing read (no RAPL, no wall meter, or the file not read): no family at all. */
TEST(render_nothing)
{
	struct jm_snapshot snap;
	struct jm_state s;
	char *t;

	base_state(&s, 0);
	memset(&snap, 0, sizeof(snap));
	t = ct_render_one(&s, &snap, JM_C_STATIC);
	ASSERT_NE(NULL, t);
	EXPECT_STREQ("", t);
	free(t);
}

CT_SYSFS_FIXTURE();

static char *gather_render(struct __test_metadata *_metadata,
			   FIXTURE_DATA(sysfs) * self, const char *file)
{
	EXPECT_EQ(0, ct_write(self->dir, "static_power", file));
	return ct_gather_render(_metadata, &self->s, &self->snap, JM_C_STATIC);
}

TEST_F(sysfs, node)
{
	char *t = gather_render(_metadata, self, node_file);

	EXPECT_EQ(JM_OK, self->snap.st[JM_C_STATIC].reason);
	EXPECT_EQ(4, self->snap.nstatics);
	EXPECT_STREQ(node_text, t);
	free(t);
}

/* "-": that figure is left out, not 0; the idle time behind it stays. */
TEST_F(sysfs, not_measured_yet)
{
	char *t = gather_render(
		_metadata, self,
		"pkg0 pkg power_uw - age_ms - idle_ms 1200 in_force none\n"
		"pkg0 core power_uw 700000 age_ms - idle_ms 5 in_force set\n");

	EXPECT_EQ(JM_OK, self->snap.st[JM_C_STATIC].reason);
	EXPECT_EQ(2, self->snap.nstatics);
	EXPECT_STREQ(
		H_WATTS
		"joules_static_power_watts{scope=\"pkg0\",domain=\"core\",in_force=\"set\"} 0.7\n" H_IDLE
		"joules_static_power_idle_seconds{scope=\"pkg0\",domain=\"pkg\"} 1.2\n"
		"joules_static_power_idle_seconds{scope=\"pkg0\",domain=\"core\"} 0.005\n",
		t);
	free(t);
}

/* No RAPL, no wall meter: an empty file, no series and no failure. */
TEST_F(sysfs, empty)
{
	static const char *const empty[] = { "", "\n" };

	for (size_t i = 0; i < sizeof(empty) / sizeof(empty[0]); i++) {
		char *t = gather_render(_metadata, self, empty[i]);

		EXPECT_EQ(JM_OK, self->snap.st[JM_C_STATIC].reason);
		EXPECT_EQ(0, self->snap.nstatics);
		EXPECT_STREQ("", t);
		free(t);
	}
}

/*
 * Without CAP_PERFMON the module refuses the file (EPERM); a file without
 * read permission stands in for it (EACCES, the same reason), unless the
 * test keeps root's CAP_DAC_*.
 */
TEST_F(sysfs, refused)
{
	char path[600], *t;

	ASSERT_EQ(0, ct_drop_dac());
	ASSERT_EQ(0, ct_write(self->dir, "static_power", node_file));
	snprintf(path, sizeof(path), "%s/static_power", self->dir);
	ASSERT_EQ(0, chmod(path, 0));
	t = ct_gather_render(_metadata, &self->s, &self->snap, JM_C_STATIC);
	EXPECT_EQ(JM_PERMISSION, self->snap.st[JM_C_STATIC].reason);
	EXPECT_EQ(-EACCES, self->snap.st[JM_C_STATIC].err);
	EXPECT_TRUE(strstr(self->snap.st[JM_C_STATIC].msg,
			   "static_power: Permission denied: the static power "
			   "estimates need CAP_PERFMON or CAP_SYS_ADMIN"));
	EXPECT_EQ(0, self->snap.nstatics);
	EXPECT_STREQ("", t);
	free(t);
}

/* A loaded module from before the estimates: unsupported, nothing shown. */
TEST_F(sysfs, older_module)
{
	char *t;

	ASSERT_EQ(0, ct_write(self->dir, "version", "0.1.0\n"));
	t = ct_gather_render(_metadata, &self->s, &self->snap, JM_C_STATIC);
	EXPECT_EQ(JM_UNSUPPORTED, self->snap.st[JM_C_STATIC].reason);
	EXPECT_EQ(-ENOENT, self->snap.st[JM_C_STATIC].err);
	EXPECT_TRUE(strstr(self->snap.st[JM_C_STATIC].msg,
			   "static_power: absent: the module has no static "
			   "power estimates"));
	EXPECT_STREQ("", t);
	free(t);
}

/*
 * A line that does not parse: left out, the collector fails saying which
 * line and why, the lines around it still exported.
 */
TEST_F(sysfs, malformed)
{
	static const struct {
		const char *line, *why;
	} bad[] = {
		{ "pkg1 pkg power_uw 1 age_ms 2 idle_ms 3", "not 10 fields" },
		{ "pkg1 pkg power_uw 1 age_ms 2 idle_ms 3 in_force set x",
		  "not 10 fields" },
		{ "pkg1 pkg power_uw 1 age_ms 2 idle_ms 3 in_force  set",
		  "not 10 fields" },
		{ "pkg1 pkg power_uw 1 age_ms 2 idle_ms 3 in_force set ",
		  "not 10 fields" },
		{ "pkg1\tpkg power_uw 1 age_ms 2 idle_ms 3 in_force set",
		  "not 10 fields" },
		{ "", "not 10 fields" },
		{ "pkg1 pkg energy_uj 1 age_ms 2 idle_ms 3 in_force set",
		  "unknown field" },
		{ "pkg1 pkg power_uw 1 idle_ms 2 age_ms 3 in_force set",
		  "unknown field" },
		{ "pkg1 pkg power_uw 12x age_ms 2 idle_ms 3 in_force set",
		  "not a number" },
		{ "pkg1 pkg power_uw -1 age_ms 2 idle_ms 3 in_force set",
		  "not a number" },
		{ "pkg1 pkg power_uw 1.5 age_ms 2 idle_ms 3 in_force set",
		  "not a number" },
		{ "pkg1 pkg power_uw 18446744073709551616 age_ms 2 idle_ms 3 in_force set",
		  "not a number" },
		{ "pkg1 pkg power_uw 1 age_ms -- idle_ms 3 in_force set",
		  "not a number" },
		{ "pkg1 pkg power_uw 1 age_ms 2 idle_ms - in_force set",
		  "not a number" },
		{ "cpu0 pkg power_uw 1 age_ms 2 idle_ms 3 in_force set",
		  "bad scope" },
		{ "pkg pkg power_uw 1 age_ms 2 idle_ms 3 in_force set",
		  "bad scope" },
		{ "pkg-1 pkg power_uw 1 age_ms 2 idle_ms 3 in_force set",
		  "bad scope" },
		{ "pkg1x pkg power_uw 1 age_ms 2 idle_ms 3 in_force set",
		  "bad scope" },
		{ "wall0 meter power_uw 1 age_ms 2 idle_ms 3 in_force set",
		  "bad scope" },
		{ "pkg0000000000001 pkg power_uw 1 age_ms 2 idle_ms 3 in_force set",
		  "bad scope" },
		{ "pkg1 gpu power_uw 1 age_ms 2 idle_ms 3 in_force set",
		  "bad domain" },
		{ "pkg1 PKG power_uw 1 age_ms 2 idle_ms 3 in_force set",
		  "bad domain" },
		{ "pkg1 meter power_uw 1 age_ms 2 idle_ms 3 in_force set",
		  "bad domain" },
		{ "wall pkg power_uw 1 age_ms 2 idle_ms 3 in_force set",
		  "bad domain" },
		{ "pkg1 pkg power_uw 1 age_ms 2 idle_ms 3 in_force maybe",
		  "bad in_force" },
		{ "pkg1 pkg power_uw 1 age_ms 2 idle_ms 3 in_force -",
		  "bad in_force" },
		/* The same line as GOOD1's: a second series would break the scrape. */
		{ "pkg0 pkg power_uw 1 age_ms 2 idle_ms 3 in_force set",
		  "a second line for its scope and domain" },
		{ "pkg1 pkg power_uw 1000000000000000000000000000000000000000000000"
		  "0000000000000000000000000000000000000000000000000000000000000000"
		  "00000000000000000000000000000000000000 age_ms 2 idle_ms 3 in_force set",
		  "overlong" },
	};
	char file[512], want[256], *t;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&self->snap, 0, sizeof(self->snap));
		snprintf(file, sizeof(file), "%s\n%s\n%s\n", GOOD1, bad[i].line,
			 GOOD2);
		t = gather_render(_metadata, self, file);
		snprintf(want, sizeof(want),
			 "/static_power: line 2: %s: '%.64s'", bad[i].why,
			 bad[i].line);
		EXPECT_EQ(JM_FAILED, self->snap.st[JM_C_STATIC].reason)
		TH_LOG("line '%s'", bad[i].line);
		EXPECT_EQ(-EINVAL, self->snap.st[JM_C_STATIC].err);
		EXPECT_TRUE(strstr(self->snap.st[JM_C_STATIC].msg, want))
		TH_LOG("'%s' is not '%s'", self->snap.st[JM_C_STATIC].msg,
		       want);
		EXPECT_EQ(2, self->snap.nstatics);
		EXPECT_TRUE(has(
			t,
			"joules_static_power_watts{scope=\"pkg0\",domain=\"pkg\",in_force=\"measured\"} 5\n"));
		EXPECT_TRUE(has(
			t,
			"joules_static_power_watts{scope=\"wall\",domain=\"meter\",in_force=\"set\"} 40\n"));
		EXPECT_TRUE(has(
			t,
			"joules_static_power_idle_seconds{scope=\"wall\",domain=\"meter\"} 30\n"));
		EXPECT_FALSE(strstr(t, "scope=\"pkg1\""));
		/* GOOD1's series once, not the refused line's figures. */
		EXPECT_FALSE(strstr(t, "} 0.000001\n"));
		free(t);
	}
}

/* Several bad lines: the first is said, every good one is exported. */
TEST_F(sysfs, first_failure_said)
{
	char *t = gather_render(
		_metadata, self,
		"pkg0 gpu power_uw 1 age_ms 2 idle_ms 3 in_force set\n" GOOD1
		"\n"
		"pkg9 pkg power_uw x age_ms 2 idle_ms 3 in_force set\n" GOOD2
		"\n");

	EXPECT_EQ(JM_FAILED, self->snap.st[JM_C_STATIC].reason);
	EXPECT_TRUE(strstr(self->snap.st[JM_C_STATIC].msg,
			   "line 1: bad domain: 'pkg0 gpu "));
	EXPECT_EQ(2, self->snap.nstatics);
	EXPECT_TRUE(has(
		t,
		"joules_static_power_age_seconds{scope=\"pkg0\",domain=\"pkg\"} 0.1\n"));
	EXPECT_TRUE(has(
		t,
		"joules_static_power_age_seconds{scope=\"wall\",domain=\"meter\"} 0.2\n"));
	free(t);
}

/* More lines than any node has: the first JM_STATIC_MAX are kept, the collector fails. */
TEST_F(sysfs, too_many_lines)
{
	static const char *const dom[] = { "pkg", "core", "dram", "psys" };
	size_t n = 0, len = 0;
	char file[8192], *t;

	for (int pkg = 0; n <= JM_STATIC_MAX; pkg++)
		for (size_t d = 0; d < sizeof(dom) / sizeof(dom[0]); d++, n++)
			len += (size_t)snprintf(
				file + len, sizeof(file) - len,
				"pkg%d %s power_uw 1 age_ms 1 idle_ms 1 in_force measured\n",
				pkg, dom[d]);
	ASSERT_GT(sizeof(file), len);
	t = gather_render(_metadata, self, file);
	EXPECT_EQ(JM_FAILED, self->snap.st[JM_C_STATIC].reason);
	EXPECT_TRUE(strstr(
		self->snap.st[JM_C_STATIC].msg,
		"line 65: more lines than the exporter keeps: 'pkg16 pkg "));
	EXPECT_EQ(JM_STATIC_MAX, self->snap.nstatics);
	EXPECT_TRUE(has(
		t,
		"joules_static_power_idle_seconds{scope=\"pkg15\",domain=\"psys\"} 0.001\n"));
	EXPECT_FALSE(strstr(t, "pkg16"));
	free(t);
}

/* A file longer than the collector reads: the line cut short fails, the first stays. */
TEST_F(sysfs, overlong_file)
{
	size_t len = strlen(GOOD1) + 1 + 40000;
	char *file = malloc(len + 2), *t;

	ASSERT_NE(NULL, file);
	snprintf(file, len + 2, "%s\n", GOOD1);
	memset(file + strlen(GOOD1) + 1, 'x', 40000);
	strcpy(file + len, "\n");
	t = gather_render(_metadata, self, file);
	free(file);
	EXPECT_EQ(JM_FAILED, self->snap.st[JM_C_STATIC].reason);
	EXPECT_TRUE(strstr(self->snap.st[JM_C_STATIC].msg,
			   "line 2: overlong: 'xxxx"));
	EXPECT_EQ(1, self->snap.nstatics);
	EXPECT_TRUE(has(
		t,
		"joules_static_power_idle_seconds{scope=\"pkg0\",domain=\"pkg\"} 60\n"));
	free(t);
}

TEST(not_loaded)
{
	struct jm_snapshot snap;
	struct jm_state s;

	jm_init(&s, 0, "/nonexistent/joules", NULL);
	memset(&snap, 0, sizeof(snap));
	jm_collectors[JM_C_STATIC]->gather(&s, &snap);
	EXPECT_EQ(JM_NOT_LOADED, snap.st[JM_C_STATIC].reason);
	EXPECT_TRUE(strstr(snap.st[JM_C_STATIC].msg, "not loaded"));
	EXPECT_EQ(0, snap.nstatics);
	jm_close(&s);
}

TEST_HARNESS_MAIN
