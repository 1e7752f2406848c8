// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of the exposition writer (user/lib/prom.c), the Accept
 * header negotiation, --web.listen-address and --processes parsing.
 */
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "prom.h"
#include "metrics.h"
#include "exporter.h"

static const struct prom_family f_cnt = { "t_energy_joules", PROM_COUNTER,
					  "joules", "Energy." };
static const struct prom_family f_gauge = { "t_gauge", PROM_GAUGE, NULL,
					    "A gauge." };
static const struct prom_family f_info = { "t_build", PROM_INFO, NULL,
					   "Build." };

/* Render with fn into a string (static buffer), returning prom_finish(). */
static int render(enum prom_format fmt, size_t limit,
		  void (*fn)(struct prom_writer *w), char *out, size_t size)
{
	struct prom_writer w;
	int err;

	prom_init(&w, fmt, limit);
	fn(&w);
	err = prom_finish(&w);
	snprintf(out, size, "%s", w.buf ? w.buf : "");
	prom_free(&w);
	return err;
}

static uint64_t g_v;
static unsigned int g_dec;

static void one_fixed(struct prom_writer *w)
{
	prom_family(w, &f_gauge);
	prom_fixed(w, NULL, 0, g_v, g_dec);
}

/* fixed-point values are printed exactly */
TEST(fixed)
{
	static const struct {
		uint64_t v;
		unsigned int dec;
		const char *want;
	} c[] = {
		{ 0, 6, "t_gauge 0\n" },
		{ 1234567, 6, "t_gauge 1.234567\n" },
		{ 1000000, 6, "t_gauge 1\n" },
		{ 1500000, 6, "t_gauge 1.5\n" },
		{ 5, 12, "t_gauge 0.000000000005\n" },
		{ 1000000000000ull, 12, "t_gauge 1\n" },
		{ 18446744073709551615ull, 0,
		  "t_gauge 18446744073709551615\n" },
		{ 18446744073709551615ull, 6,
		  "t_gauge 18446744073709.551615\n" },
		{ 1, 9, "t_gauge 0.000000001\n" },
	};
	char out[4096];

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		const char *body;

		g_v = c[i].v;
		g_dec = c[i].dec;
		CHECK(!render(PROM_FMT_TEXT, 0, one_fixed, out, sizeof(out)),
		      "render %zu", i);
		body = strstr(out, "\nt_gauge ");
		CHECK(body && !strcmp(body + 1, c[i].want),
		      "%" PRIu64 "/10^%u: got '%s', want '%s'", c[i].v,
		      c[i].dec, body ? body + 1 : out, c[i].want);
	}
}

static int64_t g_s;

static void one_sfixed(struct prom_writer *w)
{
	prom_family(w, &f_gauge);
	prom_sfixed(w, NULL, 0, g_s, g_dec);
}

/* signed fixed-point values too, down to INT64_MIN */
TEST(sfixed)
{
	static const struct {
		int64_t v;
		unsigned int dec;
		const char *want;
	} c[] = {
		{ 0, 6, "t_gauge 0\n" },
		{ -1, 6, "t_gauge -0.000001\n" },
		{ -500000, 6, "t_gauge -0.5\n" },
		{ -1500000, 6, "t_gauge -1.5\n" },
		{ -2000000, 6, "t_gauge -2\n" },
		{ 1234567, 6, "t_gauge 1.234567\n" },
		{ -7, 0, "t_gauge -7\n" },
		{ INT64_MAX, 6, "t_gauge 9223372036854.775807\n" },
		{ INT64_MIN, 6, "t_gauge -9223372036854.775808\n" },
		{ INT64_MIN, 0, "t_gauge -9223372036854775808\n" },
	};
	char out[4096];

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		const char *body;

		g_s = c[i].v;
		g_dec = c[i].dec;
		CHECK(!render(PROM_FMT_TEXT, 0, one_sfixed, out, sizeof(out)),
		      "render %zu", i);
		body = strstr(out, "\nt_gauge ");
		CHECK(body && !strcmp(body + 1, c[i].want),
		      "%" PRId64 "/10^%u: got '%s', want '%s'", c[i].v,
		      c[i].dec, body ? body + 1 : out, c[i].want);
	}
}

static void families(struct prom_writer *w)
{
	struct prom_label l[] = { { "domain", "pkg" } };

	prom_family(w, &f_cnt);
	prom_fixed(w, l, 1, 2500000, 6);
	prom_family(w, &f_info);
	prom_u64(w, (struct prom_label[]){ { "version", "1.0" } }, 1, 1);
	prom_family(w, &f_gauge);
	prom_double(w, NULL, 0, 0.25);
}

/* text 0.0.4: counters and info named as their samples */
TEST(text_format)
{
	char out[4096];
	const char *want = "# HELP t_energy_joules_total Energy.\n"
			   "# TYPE t_energy_joules_total counter\n"
			   "t_energy_joules_total{domain=\"pkg\"} 2.5\n"
			   "# HELP t_build_info Build.\n"
			   "# TYPE t_build_info gauge\n"
			   "t_build_info{version=\"1.0\"} 1\n"
			   "# HELP t_gauge A gauge.\n"
			   "# TYPE t_gauge gauge\n"
			   "t_gauge 0.25\n";

	CHECK(!render(PROM_FMT_TEXT, 0, families, out, sizeof(out)), "render");
	CHECK(!strcmp(out, want), "got:\n%s", out);
}

/* OpenMetrics: family names without suffix, UNIT, # EOF */
TEST(openmetrics_format)
{
	char out[4096];
	const char *want = "# HELP t_energy_joules Energy.\n"
			   "# TYPE t_energy_joules counter\n"
			   "# UNIT t_energy_joules joules\n"
			   "t_energy_joules_total{domain=\"pkg\"} 2.5\n"
			   "# HELP t_build Build.\n"
			   "# TYPE t_build info\n"
			   "t_build_info{version=\"1.0\"} 1\n"
			   "# HELP t_gauge A gauge.\n"
			   "# TYPE t_gauge gauge\n"
			   "t_gauge 0.25\n"
			   "# EOF\n";

	CHECK(!render(PROM_FMT_OPENMETRICS, 0, families, out, sizeof(out)),
	      "render");
	CHECK(!strcmp(out, want), "got:\n%s", out);
}

static const char *g_label;

static void one_label(struct prom_writer *w)
{
	prom_family(w, &f_gauge);
	prom_u64(w, (struct prom_label[]){ { "comm", g_label } }, 1, 7);
}

/* label values escaped, invalid UTF-8 replaced */
TEST(escaping)
{
	static const struct {
		const char *in, *want;
	} c[] = {
		{ "plain", "t_gauge{comm=\"plain\"} 7\n" },
		{ "a\\b", "t_gauge{comm=\"a\\\\b\"} 7\n" },
		{ "say \"hi\"", "t_gauge{comm=\"say \\\"hi\\\"\"} 7\n" },
		{ "two\nlines", "t_gauge{comm=\"two\\nlines\"} 7\n" },
		/* Valid UTF-8 stays, invalid bytes become U+FFFD. */
		{ "caf\xc3\xa9", "t_gauge{comm=\"caf\xc3\xa9\"} 7\n" },
		{ "bad\xff", "t_gauge{comm=\"bad\xef\xbf\xbd\"} 7\n" },
		{ "cut\xe2\x82",
		  "t_gauge{comm=\"cut\xef\xbf\xbd\xef\xbf\xbd\"} 7\n" },
		{ "overlong\xc0\xaf",
		  "t_gauge{comm=\"overlong\xef\xbf\xbd\xef\xbf\xbd\"} 7\n" },
		{ "surrogate\xed\xa0\x80",
		  "t_gauge{comm=\"surrogate\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"} 7\n" },
		{ "", "t_gauge{comm=\"\"} 7\n" },
	};
	char out[4096];

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		const char *body;

		g_label = c[i].in;
		CHECK(!render(PROM_FMT_TEXT, 0, one_label, out, sizeof(out)),
		      "render %zu", i);
		body = strstr(out, "\nt_gauge{");
		CHECK(body && !strcmp(body + 1, c[i].want),
		      "case %zu: got '%s'", i, body ? body + 1 : out);
	}
}

static const struct prom_family f_help = { "t_help", PROM_GAUGE, NULL,
					   "back\\slash \"quoted\"\nnext" };

static void help_fam(struct prom_writer *w)
{
	prom_family(w, &f_help);
	prom_u64(w, NULL, 0, 1);
}

/* HELP text escaped per format */
TEST(help_escaping)
{
	char out[4096];

	render(PROM_FMT_TEXT, 0, help_fam, out, sizeof(out));
	CHECK(strstr(out, "# HELP t_help back\\\\slash \"quoted\"\\nnext\n"),
	      "text: %s", out);
	render(PROM_FMT_OPENMETRICS, 0, help_fam, out, sizeof(out));
	CHECK(strstr(out,
		     "# HELP t_help back\\\\slash \\\"quoted\\\"\\nnext\n"),
	      "openmetrics: %s", out);
}

static void empty_family(struct prom_writer *w)
{
	prom_family(w, &f_cnt); /* no samples: absent, not zero */
	prom_family(w, &f_gauge);
	prom_u64(w, NULL, 0, 3);
}

/* a family without samples is left out entirely */
TEST(empty_family_rendered)
{
	char out[4096];

	render(PROM_FMT_TEXT, 0, empty_family, out, sizeof(out));
	CHECK(!strstr(out, "t_energy"), "got %s", out);
	CHECK(strstr(out, "t_gauge 3\n"), "got %s", out);
}

static void many(struct prom_writer *w)
{
	prom_family(w, &f_gauge);
	for (int i = 0; i < 1000; i++)
		prom_u64(w, NULL, 0, (uint64_t)i);
}

static void bad_name(struct prom_writer *w)
{
	static const struct prom_family f = { "bad-name", PROM_GAUGE, NULL,
					      "x" };

	prom_family(w, &f);
	prom_u64(w, NULL, 0, 1);
}

static void bad_label(struct prom_writer *w)
{
	prom_family(w, &f_gauge);
	prom_u64(w, (struct prom_label[]){ { "1st", "x" } }, 1, 1);
}

/* limit, bad names */
TEST(errors)
{
	char out[8192];
	struct prom_writer w;

	CHECK(render(PROM_FMT_TEXT, 4096, many, out, sizeof(out)) == -E2BIG,
	      "over the limit");
	prom_init(&w, PROM_FMT_TEXT, 4096);
	many(&w);
	CHECK(w.cap <= 4096, "buffer grew to %zu", w.cap);
	prom_free(&w);
	CHECK(render(PROM_FMT_TEXT, 0, bad_name, out, sizeof(out)) == -EINVAL,
	      "bad metric name");
	CHECK(render(PROM_FMT_TEXT, 0, bad_label, out, sizeof(out)) == -EINVAL,
	      "bad label name");
	CHECK(prom_valid_name("a:b_c9", false), "colon in metric name");
	CHECK(!prom_valid_name("a:b", true), "no colon in label name");
	CHECK(!prom_valid_name("9a", false), "no leading digit");
}

/* Accept header negotiation */
TEST(negotiate)
{
	static const struct {
		const char *accept;
		enum prom_format want;
	} c[] = {
		{ NULL, PROM_FMT_TEXT },
		{ "", PROM_FMT_TEXT },
		/* Prometheus 2.42's header. */
		{ "application/openmetrics-text;version=1.0.0,"
		  "application/openmetrics-text;version=0.0.1;q=0.75,"
		  "text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
		  PROM_FMT_OPENMETRICS },
		{ "text/plain", PROM_FMT_TEXT },
		{ "text/plain;version=0.0.4", PROM_FMT_TEXT },
		{ "application/openmetrics-text", PROM_FMT_OPENMETRICS },
		{ "Application/OpenMetrics-Text; Version=\"1.0.0\"",
		  PROM_FMT_OPENMETRICS },
		{ "application/openmetrics-text;version=0.0.1", PROM_FMT_TEXT },
		{ "application/openmetrics-text;q=0", PROM_FMT_TEXT },
		{ "*/*", PROM_FMT_TEXT },
		{ "text/plain, application/openmetrics-text", PROM_FMT_TEXT },
		{ "application/openmetrics-text, text/plain",
		  PROM_FMT_OPENMETRICS },
		{ "text/plain;q=0.4, application/openmetrics-text;q=0.5",
		  PROM_FMT_OPENMETRICS },
		{ "application/openmetrics-text;q=0.3, */*;q=0.9",
		  PROM_FMT_TEXT },
		{ "application/openmetrics-text;q=junk", PROM_FMT_TEXT },
		{ "application/openmetrics-text;q=2", PROM_FMT_TEXT },
		{ ",,,;;;===", PROM_FMT_TEXT },
		{ "application/json", PROM_FMT_TEXT },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		CHECK(prom_negotiate(c[i].accept) == c[i].want, "'%s': got %d",
		      c[i].accept ? c[i].accept : "(none)",
		      prom_negotiate(c[i].accept));
	CHECK(strstr(prom_content_type(PROM_FMT_OPENMETRICS),
		     "application/openmetrics-text; version=1.0.0"),
	      "OM content type");
	CHECK(strstr(prom_content_type(PROM_FMT_TEXT),
		     "text/plain; version=0.0.4"),
	      "text content type");
}

/* --web.listen-address parsing */
TEST(listen_addresses)
{
	static const char *const bad[] = {
		"9764",
		"127.0.0.1",
		"127.0.0.1:",
		"127.0.0.1:0",
		"127.0.0.1:70000",
		"::1:9764",
		"[::1]9764",
		"[::1",
		"127.0.0.1:12ab",
		"no.such.host.invalid:80",
	};
	struct exp_addr a;
	const char *why;

	CHECK(!exp_parse_listen("127.0.0.1:9764", &a, &why), "v4");
	CHECK(a.ss.ss_family == AF_INET &&
		      ntohs(((struct sockaddr_in *)&a.ss)->sin_port) == 9764,
	      "v4 port");
	CHECK(!strcmp(a.text, "127.0.0.1:9764"), "text %s", a.text);
	CHECK(!exp_parse_listen(":9764", &a, &why) && a.dual_stack &&
		      a.ss.ss_family == AF_INET6,
	      "every address");
	CHECK(!exp_parse_listen("[::1]:9764", &a, &why) &&
		      a.ss.ss_family == AF_INET6 && !a.dual_stack,
	      "v6 loopback");
	CHECK(!strcmp(a.text, "[::1]:9764"), "text %s", a.text);
	CHECK(!exp_parse_listen("localhost:9764", &a, &why), "localhost");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		CHECK(exp_parse_listen(bad[i], &a, &why) == -EINVAL && why,
		      "'%s' accepted", bad[i]);
	}
}

/* --processes parsing and cap */
TEST(processes)
{
	unsigned int top = 99;

	CHECK(!jm_parse_processes("top=5", &top) && top == 5, "top=5");
	CHECK(!jm_parse_processes("top=1000", &top) && top == 1000, "top=1000");
	CHECK(jm_parse_processes("top=1001", &top) == -ERANGE, "cap");
	CHECK(!jm_parse_processes("off", &top) && top == 0, "off");
	CHECK(!jm_parse_processes("0", &top) && top == 0, "0");
	CHECK(jm_parse_processes("top=0", &top) == -EINVAL, "top=0");
	CHECK(jm_parse_processes("5", &top) == -EINVAL, "bare 5");
	CHECK(jm_parse_processes("top=", &top) == -EINVAL, "top=");
	CHECK(jm_parse_processes("top=-1", &top) == -EINVAL, "top=-1");
}

/* --cgroups parsing, depth and match filters */
TEST(cgroup_families)
{
	struct jm_state s;
	char why[128] = "";
	int d = 7;

	CHECK(!jm_parse_cgroups("all", &d) && d == JM_CG_ALL, "all");
	CHECK(!jm_parse_cgroups("off", &d) && d == JM_CG_OFF, "off");
	CHECK(!jm_parse_cgroups("depth=0", &d) && d == 0, "depth=0");
	CHECK(!jm_parse_cgroups("depth=4", &d) && d == 4, "depth=4");
	CHECK(jm_parse_cgroups("depth=", &d) == -EINVAL, "depth=");
	CHECK(jm_parse_cgroups("depth=-1", &d) == -EINVAL, "depth=-1");
	CHECK(jm_parse_cgroups("4", &d) == -EINVAL, "bare 4");
	CHECK(jm_parse_cgroups("depth=99999999999", &d) == -EINVAL, "huge");

	jm_init(&s, 0, "/nonexistent", NULL);
	CHECK(s.cg_depth == JM_CG_ALL, "default all");
	CHECK(jm_cgroup_wanted(&s, "/a/b/c/d/e/f"), "all: deep");
	CHECK(!jm_set_cgroups(&s, 2, NULL, why, sizeof(why)), "depth 2");
	CHECK(jm_cgroup_wanted(&s, "/") && jm_cgroup_wanted(&s, "/a/b") &&
		      !jm_cgroup_wanted(&s, "/a/b/c"),
	      "depth 2 filter");
	CHECK(!jm_set_cgroups(&s, JM_CG_ALL, "^/kubepods", why, sizeof(why)),
	      "match");
	CHECK(jm_cgroup_wanted(&s, "/kubepods.slice/x") &&
		      !jm_cgroup_wanted(&s, "/system.slice/kubepods") &&
		      !jm_cgroup_wanted(&s, "/"),
	      "match filter");
	/* A bad expression leaves the old settings in force. */
	CHECK(jm_set_cgroups(&s, 1, "(", why, sizeof(why)) == -EINVAL && why[0],
	      "bad regex accepted");
	CHECK(s.cg_depth == JM_CG_ALL &&
		      jm_cgroup_wanted(&s, "/kubepods.slice/x") &&
		      !jm_cgroup_wanted(&s, "/x"),
	      "old settings kept");
	CHECK(!jm_set_cgroups(&s, JM_CG_ALL, NULL, why, sizeof(why)) &&
		      jm_cgroup_wanted(&s, "/x"),
	      "match removed");
	jm_close(&s);
}

/* collector names are valid label values */
TEST(collector_names)
{
	/* The HELP lines of every planned family are valid. */
	for (int c = 0; c < JM_NR_COLLECTORS; c++)
		CHECK(prom_valid_name(jm_collectors[c]->name, true),
		      "collector %d", c);
}

TEST_HARNESS_MAIN
