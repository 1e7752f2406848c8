// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of the attribution core (kmod/core.c, linked in as is).
 * Reference values come from unsigned __int128 arithmetic, libm, or hand
 * calculation from the Intel SDM / AMD PPR register layouts.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core.h"
#include "check.h"

typedef unsigned __int128 u128;

#define U64MAX ((jl_u64)UINT64_MAX)

/* Deterministic PRNG (splitmix64), so failures reproduce. */
static uint64_t rng_state = 0x6a6f756c6573ULL;

static jl_u64 rnd(void)
{
	return ck_splitmix64(&rng_state);
}

/* Random value of random magnitude: exercises small and huge numbers. */
static jl_u64 rnd_mag(void)
{
	return rnd() >> (rnd() % 64);
}

static jl_u64 rnd_below(jl_u64 n)
{
	return n ? rnd() % n : 0;
}

/* ---- names and ABI --------------------------------------------------- */

TEST(names)
{
	static const char *const feat[] = {
		"cpu_ns",     "cycles",	      "instructions", "cache_misses",
		"disk_bytes", "net_tx_bytes", "net_rx_bytes", "pagecache_bytes",
	};
	static const char *const coef[] = {
		"cpu_time_uw",	  "cycles_pj",	       "instructions_pj",
		"cache_miss_pj",  "disk_byte_pj",      "net_tx_byte_pj",
		"net_rx_byte_pj", "pagecache_byte_pj", "idle_uw",
	};
	static const char *const dom[] = { "pkg", "core", "dram", "psys" };
	unsigned int i;

	CHECK(JL_NR_FEATURES == ARRAY_SIZE(feat), "%d", JL_NR_FEATURES);
	CHECK(JL_NR_COEF == ARRAY_SIZE(coef), "%d", JL_NR_COEF);
	CHECK(JL_NR_DOMAINS == ARRAY_SIZE(dom), "%d", JL_NR_DOMAINS);
	for (i = 0; i < ARRAY_SIZE(feat); i++)
		CHECK(jl_feature_names[i] &&
			      !strcmp(jl_feature_names[i], feat[i]),
		      "feature %u: %s", i, jl_feature_names[i]);
	for (i = 0; i < ARRAY_SIZE(coef); i++)
		CHECK(jl_coef_names[i] && !strcmp(jl_coef_names[i], coef[i]),
		      "coef %u: %s", i, jl_coef_names[i]);
	for (i = 0; i < ARRAY_SIZE(dom); i++)
		CHECK(jl_domain_names[i] && !strcmp(jl_domain_names[i], dom[i]),
		      "domain %u: %s", i, jl_domain_names[i]);
	CHECK(JL_F_CPU_NS == 0 && JL_F_DISK == 4 && JL_D_PSYS == 3, "enums");
}

/* version 0.1.0, ABI 1, errno constants */
TEST(version)
{
	CHECK(!strcmp(JL_VERSION, "0.1.0"), "%s", JL_VERSION);
	CHECK(JL_ABI_VERSION == 2, "%d", JL_ABI_VERSION);
	CHECK(!strcmp(jl_version(), "0.1.0"), "%s", jl_version());
	CHECK(jl_abi_version() == 2, "%u", jl_abi_version());
	CHECK(JL_EINVAL == 22 && JL_ERANGE == 34, "errno values");
	CHECK(JL_COEF_MAX == 1000000000000ULL, "coef max");
}

/* ---- CHECK() self-test ----------------------------------------------- */

/*
 * Run fn in a child with stdout and stderr on a pipe, a test of its own
 * (fresh metadata named "inner"); its output, and its exit status, which
 * is the inner test's exit code.
 */
static int run_child(void (*fn)(struct __test_metadata *), char *out,
		     size_t size, int *status)
{
	size_t len = 0;
	int fd[2];
	pid_t pid;
	ssize_t r;

	fflush(stdout);
	fflush(stderr);
	if (pipe(fd))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		struct __test_metadata inner = { .name = "inner",
						 .exit_code = KSFT_PASS };

		close(fd[0]);
		dup2(fd[1], STDOUT_FILENO);
		dup2(fd[1], STDERR_FILENO);
		close(fd[1]);
		fn(&inner);
		fflush(stdout);
		fflush(stderr);
		_exit(inner.exit_code);
	}
	close(fd[1]);
	while (len + 1 < size &&
	       (r = read(fd[0], out + len, size - 1 - len)) > 0)
		len += (size_t)r;
	out[len] = '\0';
	close(fd[0]);
	if (waitpid(pid, status, 0) != pid)
		return -1;
	return 0;
}

/* Line of the failing CHECK() below: keep the two in step. */
enum { CHILD_FAIL_LINE = __LINE__ + 5 };
static void child_one_failure(struct __test_metadata *_metadata)
{
	int a, b;

	a = CHECK(1 == 2, "x=%d", 5);
	b = CHECK(2 == 2, "never printed");
	printf("values %d %d\n", a, b);
}

static void child_all_pass(struct __test_metadata *_metadata)
{
	printf("value %d\n", CHECK(1, "fine"));
}

/* CHECK(): a false condition fails the test with its text and reason, a true one is silent */
TEST(check_selftest)
{
	char out[2048], want[256];
	int st = 0;

	CHECK(run_child(child_one_failure, out, sizeof(out), &st) == 0, "fork");
	snprintf(want, sizeof(want),
		 "# %s:%d:inner:check failed: 1 == 2: x=5\n", __FILE__,
		 CHILD_FAIL_LINE);
	CHECK(!strncmp(out, want, strlen(want)), "got:\n%s--- want:\n%s", out,
	      want);
	CHECK(!strstr(out, "never printed"), "got:\n%s", out);
	CHECK(strstr(out, "values 0 1\n") != NULL, "got:\n%s", out);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == KSFT_FAIL, "status %#x", st);

	CHECK(run_child(child_all_pass, out, sizeof(out), &st) == 0, "fork");
	CHECK(!strcmp(out, "value 1\n"), "got:\n%s", out);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == KSFT_PASS, "status %#x", st);
}

/* ---- coefficient get/set, parse, format ------------------------------ */

TEST(coef_getset)
{
	struct jl_coef c;
	unsigned int i;

	memset(&c, 0, sizeof(c));
	for (i = 0; i < JL_NR_COEF; i++)
		jl_coef_set(&c, i, 1000 + i);
	CHECK(c.cpu_time_uw == 1000 && c.cycles_pj == 1001 &&
		      c.instructions_pj == 1002 && c.cache_miss_pj == 1003 &&
		      c.disk_byte_pj == 1004 && c.net_tx_byte_pj == 1005 &&
		      c.net_rx_byte_pj == 1006 && c.pagecache_byte_pj == 1007 &&
		      c.idle_uw == 1008,
	      "fields in text order");
	for (i = 0; i < JL_NR_COEF; i++)
		CHECK(jl_coef_get(&c, i) == 1000 + i, "get %u", i);
	jl_coef_set(&c, JL_NR_COEF, 7);
	jl_coef_set(&c, ~0U, 7);
	for (i = 0; i < JL_NR_COEF; i++)
		CHECK(jl_coef_get(&c, i) == 1000 + i, "set %u clobbered", i);
	CHECK(jl_coef_get(&c, JL_NR_COEF) == 0, "out of range get");
	CHECK(jl_coef_get(&c, ~0U) == 0, "out of range get");
}

/* Parse from an exactly sized heap copy, so ASan/valgrind see over-reads. */
static int parse_exact(const char *s, size_t len, struct jl_coef *out)
{
	char *b = malloc(len ? len : 1);
	int r;

	memcpy(b, s, len);
	r = jl_coef_parse(b, len, out);
	free(b);
	return r;
}

static int parse_u64_exact(const char *s, size_t len, jl_u64 max, jl_u64 *out)
{
	char *b = malloc(len ? len : 1);
	jl_u64 v = *out;
	int r;

	memcpy(b, s, len);
	r = jl_parse_u64(b, len, max, &v);
	*out = v;
	free(b);
	return r;
}

static void set_sentinel(struct jl_coef *c)
{
	memset(c, 0xa5, sizeof(*c));
}

static int is_sentinel(const struct jl_coef *c)
{
	struct jl_coef s;

	set_sentinel(&s);
	return !memcmp(c, &s, sizeof(s));
}

struct bad_input {
	const char *s;
	size_t len; /* 0: strlen(s) */
	int err;
};

/* coef parse rejects N bad inputs, *out unchanged */
TEST(coef_parse_bad)
{
	static const struct bad_input bad[] = {
		{ "", 0, -JL_EINVAL },
		{ "\n", 0, -JL_EINVAL },
		{ " \t \n", 0, -JL_EINVAL },
		{ "1 2 3 4 5", 0, -JL_EINVAL },
		{ "1 2 3 4 5\n", 0, -JL_EINVAL },
		{ "1 2 3 4 5 6 7", 0, -JL_EINVAL },
		{ "1 2 3 4 5 6 7\n", 0, -JL_EINVAL },
		{ "1 2 3 4 5 6 7 8", 0, -JL_EINVAL },
		{ "1 2 3 4 5 6 7 8 9 10", 0, -JL_EINVAL },
		{ "1 2 3 4 5 6 7 8 9 10\n", 0, -JL_EINVAL },
		{ "1 2 3 4 5 6 7 8 9 junk", 0, -JL_EINVAL },
		{ "1 2 3 4 5 6 7 8 9\n10", 0, -JL_EINVAL },
		{ "-1 2 3 4 5 6", 0, -JL_EINVAL },
		{ "+1 2 3 4 5 6", 0, -JL_EINVAL },
		{ "1 2 3 4 5 -6", 0, -JL_EINVAL },
		{ "0x10 2 3 4 5 6", 0, -JL_EINVAL },
		{ "1 2 3 4 5 0x6", 0, -JL_EINVAL },
		{ "1 2 3 4 5 6a", 0, -JL_EINVAL },
		{ "a 2 3 4 5 6", 0, -JL_EINVAL },
		{ "1 2 3 4 5 6 junk", 0, -JL_EINVAL },
		{ "1,2,3,4,5,6", 0, -JL_EINVAL },
		{ "1, 2, 3, 4, 5, 6", 0, -JL_EINVAL },
		{ "1.5 2 3 4 5 6", 0, -JL_EINVAL },
		{ "1e3 2 3 4 5 6", 0, -JL_EINVAL },
		{ "1 2 3 4 5 6\n\n", 0, -JL_EINVAL },
		{ "1 2 3 4 5 6\r\n", 0, -JL_EINVAL },
		{ "1 2 3 4 5 6\n7", 0, -JL_EINVAL },
		{ "1 2 3 4 5 6\n# late comment\n", 0, -JL_EINVAL },
		{ "1\n2 3 4 5 6", 0, -JL_EINVAL },
		{ "1 2 3\0 4 5 6", 12, -JL_EINVAL },
		{ "1 2 3 4 5 6\0", 12, -JL_EINVAL },
		{ "\0001 2 3 4 5 6", 12,
		  -JL_EINVAL }, /* octal \000, then '1' */
		{ "# comment\0x\n1 2 3 4 5 6", 23, -JL_EINVAL },
		{ "# only a comment\n", 0, -JL_EINVAL },
		{ "# comment without newline", 0, -JL_EINVAL },
		{ "# c\n\n1 2 3 4 5 6", 0, -JL_EINVAL },
		{ " # c\n1 2 3 4 5 6", 0, -JL_EINVAL },
		{ "1 2 3 4 5 6 # trailing comment", 0, -JL_EINVAL },
		{ "\xef\xbc\x91 2 3 4 5 6", 0, -JL_EINVAL },
		{ "1000000000001 2 3 4 5 6", 0, -JL_ERANGE },
		{ "1 2 3 4 5 1000000000001", 0, -JL_ERANGE },
		{ "1 2 3 4 5 18446744073709551615", 0, -JL_ERANGE },
		{ "1 2 3 4 5 18446744073709551616", 0, -JL_ERANGE },
		{ "1 2 3 4 5 6 7 8 1000000000001", 0, -JL_ERANGE },
		{ "1 2 3 4 5 1000000000001 7 8 9", 0, -JL_ERANGE },
		{ "1 2 3 4 5 1000000000001 7 8", 0, -JL_EINVAL },
		{ "1 2 3 4 5 99999999999999999999999999999999", 0, -JL_ERANGE },
		/* malformed wins over out of range */
		{ "99999999999999999999 2 3 4 5", 0, -JL_EINVAL },
		{ "99999999999999999999x 2 3 4 5 6", 0, -JL_EINVAL },
	};
	struct jl_coef c;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		size_t len = bad[i].len ? bad[i].len : strlen(bad[i].s);
		int r;

		set_sentinel(&c);
		r = parse_exact(bad[i].s, len, &c);
		CHECK(r == bad[i].err, "input %u \"%s\": got %d want %d", i,
		      bad[i].s, r, bad[i].err);
		CHECK(is_sentinel(&c), "input %u: *out modified", i);
	}
	/* A NULL buffer with len 0 is simply empty input. */
	set_sentinel(&c);
	CHECK(jl_coef_parse(NULL, 0, &c) == -JL_EINVAL, "NULL, 0");
	CHECK(is_sentinel(&c), "NULL: *out modified");
	DIAG("%zu malformed inputs", ARRAY_SIZE(bad));
	TH_LOG("coef parse rejects %zu bad inputs, *out unchanged",
	       ARRAY_SIZE(bad));
}

struct good_input {
	const char *s;
	size_t len;
	jl_u64 v[JL_NR_COEF];
};

/* coef parse accepts N good inputs */
TEST(coef_parse_good)
{
	/* The six-field form fills the five features and idle_uw. */
	static const struct good_input good[] = {
		{ "1 2 3 4 5 6", 0, { 1, 2, 3, 4, 5, 0, 0, 0, 6 } },
		{ "1 2 3 4 5 6\n", 0, { 1, 2, 3, 4, 5, 0, 0, 0, 6 } },
		{ "1 2 3 4 5 6 7 8 9", 0, { 1, 2, 3, 4, 5, 6, 7, 8, 9 } },
		{ "1 2 3 4 5 6 7 8 9\n", 0, { 1, 2, 3, 4, 5, 6, 7, 8, 9 } },
		{ "0 0 0 0 0 0\n", 0, { 0 } },
		{ "0 0 0 0 0 0 0 0 0\n", 0, { 0 } },
		{ "007 0 00 1 010 0000000000000000000000000042",
		  0,
		  { 7, 0, 0, 1, 10, 0, 0, 0, 42 } },
		{ "1\t2 \t 3\t\t4  5   6", 0, { 1, 2, 3, 4, 5, 0, 0, 0, 6 } },
		{ "  1 2 3 4 5 6 7 8 9 \t\n",
		  0,
		  { 1, 2, 3, 4, 5, 6, 7, 8, 9 } },
		{ "# trained 2024-01-01, MAPE 7.1%\n# cpu cyc ins miss disk idle\n"
		  "4200000 12 80 31000 5 3500000\n",
		  0,
		  { 4200000, 12, 80, 31000, 5, 0, 0, 0, 3500000 } },
		{ "#\n1 2 3 4 5 6 7 8 9", 0, { 1, 2, 3, 4, 5, 6, 7, 8, 9 } },
		{ "1000000000000 1000000000000 1000000000000 1000000000000 "
		  "1000000000000 1000000000000 1000000000000 1000000000000 "
		  "1000000000000\n",
		  0,
		  { JL_COEF_MAX, JL_COEF_MAX, JL_COEF_MAX, JL_COEF_MAX,
		    JL_COEF_MAX, JL_COEF_MAX, JL_COEF_MAX, JL_COEF_MAX,
		    JL_COEF_MAX } },
		/* len stops before the junk: bytes past len are never read */
		{ "1 2 3 4 5 6 7", 11, { 1, 2, 3, 4, 5, 0, 0, 0, 6 } },
		{ "1 2 3 4 5 6 7 8 9 10", 17, { 1, 2, 3, 4, 5, 6, 7, 8, 9 } },
		{ "1 2 3 4 5 6\nxyz", 12, { 1, 2, 3, 4, 5, 0, 0, 0, 6 } },
	};
	struct jl_coef c;
	unsigned int i, k;

	for (i = 0; i < ARRAY_SIZE(good); i++) {
		size_t len = good[i].len ? good[i].len : strlen(good[i].s);
		int r;

		set_sentinel(&c);
		r = parse_exact(good[i].s, len, &c);
		CHECK(r == 0, "input %u \"%s\": %d", i, good[i].s, r);
		for (k = 0; k < JL_NR_COEF; k++)
			CHECK(jl_coef_get(&c, k) == good[i].v[k],
			      "input %u field %u: %llu", i, k,
			      (unsigned long long)jl_coef_get(&c, k));
	}
	TH_LOG("coef parse accepts %zu good inputs", ARRAY_SIZE(good));
}

/* coef format: exact text, size limits, 5000 round trips */
TEST(coef_format)
{
	char buf[JL_COEF_TEXT_MAX], small[64];
	struct jl_coef c, back;
	int n, i, k, fails = 0;

	for (k = 0; k < JL_NR_COEF; k++)
		jl_coef_set(&c, (unsigned int)k, (jl_u64)k * 10 + 1);
	n = jl_coef_format(&c, buf, sizeof(buf));
	CHECK(n == 26 && !strcmp(buf, "1 11 21 31 41 51 61 71 81\n"),
	      "%d \"%s\"", n, buf);

	/* Longest form: every field 20 digits. */
	for (k = 0; k < JL_NR_COEF; k++)
		jl_coef_set(&c, (unsigned int)k, U64MAX);
	n = jl_coef_format(&c, buf, sizeof(buf));
	CHECK(n == JL_COEF_TEXT_MAX - 1, "%d", n);
	CHECK(!strncmp(buf, "18446744073709551615 18446744073709551615 ", 42),
	      "%s", buf);
	CHECK(n > 0 && buf[n - 1] == '\n' && buf[n] == '\0', "newline, NUL");
	/* ... which parses back as out of range. */
	set_sentinel(&back);
	CHECK(jl_coef_parse(buf, (size_t)n, &back) == -JL_ERANGE, "u64 max");

	/* Exact fit vs one byte short; nothing written when short. */
	for (k = 0; k < JL_NR_COEF; k++)
		jl_coef_set(&c, (unsigned int)k, 0);
	memset(small, 'x', sizeof(small));
	CHECK(jl_coef_format(&c, small, 18) == -JL_ERANGE, "too small");
	CHECK(small[0] == 'x', "written on error");
	CHECK(jl_coef_format(&c, small, 19) == 18, "exact fit");
	CHECK(!strcmp(small, "0 0 0 0 0 0 0 0 0\n"), "%s", small);
	CHECK(jl_coef_format(&c, NULL, 0) == -JL_ERANGE, "NULL");

	/* Round trip of random sets in range. */
	for (i = 0; i < 5000; i++) {
		for (k = 0; k < JL_NR_COEF; k++)
			jl_coef_set(&c, (unsigned int)k,
				    i == 0 ? JL_COEF_MAX :
					     rnd_mag() % (JL_COEF_MAX + 1));
		n = jl_coef_format(&c, buf, sizeof(buf));
		set_sentinel(&back);
		if (n <= 0 || jl_coef_parse(buf, (size_t)n, &back) ||
		    memcmp(&c, &back, sizeof(c))) {
			if (!fails++)
				CHECK(0, "round trip of \"%s\"", buf);
		}
	}
	CHECK(fails == 0, "%d round-trip failures", fails);
}

/* parse_u64: N cases incl. max bound, overflow, newline */
TEST(parse_u64)
{
	static const struct {
		const char *s;
		size_t len;
		jl_u64 max;
		int err;
		jl_u64 v;
	} cases[] = {
		{ "0", 0, U64MAX, 0, 0 },
		{ "42\n", 0, U64MAX, 0, 42 },
		{ "0042", 0, 100, 0, 42 },
		{ "100", 0, 100, 0, 100 },
		{ "101", 0, 100, -JL_ERANGE, 0 },
		{ "0", 0, 0, 0, 0 },
		{ "1", 0, 0, -JL_ERANGE, 0 },
		{ "18446744073709551615", 0, U64MAX, 0, U64MAX },
		{ "18446744073709551615\n", 0, U64MAX, 0, U64MAX },
		{ "18446744073709551616", 0, U64MAX, -JL_ERANGE, 0 },
		{ "99999999999999999999999", 0, U64MAX, -JL_ERANGE, 0 },
		{ "1000000000000", 0, JL_COEF_MAX, 0, JL_COEF_MAX },
		{ "1000000000001", 0, JL_COEF_MAX, -JL_ERANGE, 0 },
		{ "", 0, U64MAX, -JL_EINVAL, 0 },
		{ "\n", 0, U64MAX, -JL_EINVAL, 0 },
		{ "-1", 0, U64MAX, -JL_EINVAL, 0 },
		{ "+1", 0, U64MAX, -JL_EINVAL, 0 },
		{ " 1", 0, U64MAX, -JL_EINVAL, 0 },
		{ "1 ", 0, U64MAX, -JL_EINVAL, 0 },
		{ "1\n\n", 0, U64MAX, -JL_EINVAL, 0 },
		{ "0x10", 0, U64MAX, -JL_EINVAL, 0 },
		{ "12abc", 0, U64MAX, -JL_EINVAL, 0 },
		{ "1 2", 0, U64MAX, -JL_EINVAL, 0 },
		{ "5\0", 2, U64MAX, -JL_EINVAL, 0 },
		{ "99999999999999999999999x", 0, U64MAX, -JL_EINVAL, 0 },
		{ "77", 1, U64MAX, 0, 7 },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		size_t len = cases[i].len ? cases[i].len : strlen(cases[i].s);
		jl_u64 v = 0xdeadbeef;
		int r = parse_u64_exact(cases[i].s, len, cases[i].max, &v);

		CHECK(r == cases[i].err, "case %u \"%s\": %d", i, cases[i].s,
		      r);
		if (cases[i].err)
			CHECK(v == 0xdeadbeef, "case %u: *out modified", i);
		else
			CHECK(v == cases[i].v, "case %u: %llu", i,
			      (unsigned long long)v);
	}
	TH_LOG("parse_u64: %zu cases incl. max bound, overflow, newline",
	       ARRAY_SIZE(cases));
}

/* ---- arithmetic helpers ---------------------------------------------- */

static jl_u64 sat128(u128 v)
{
	return v > U64MAX ? U64MAX : (jl_u64)v;
}

/* saturating add/mul, muldiv vs __int128 (edge grid, 300000 random) */
TEST(sat_muldiv)
{
	static const jl_u64 edge[] = { 0,
				       1,
				       2,
				       3,
				       999999999,
				       1000000000,
				       0xffffffffULL,
				       0x100000000ULL,
				       0x100000001ULL,
				       JL_COEF_MAX,
				       1ULL << 63,
				       U64MAX - 1,
				       U64MAX };
	unsigned int i, j, k;
	int fails = 0;

	CHECK(jl_add_sat(U64MAX, 1) == U64MAX, "add");
	CHECK(jl_add_sat(U64MAX - 1, 1) == U64MAX, "add");
	CHECK(jl_add_sat(5, 7) == 12, "add");
	CHECK(jl_mul_sat(1ULL << 32, 1ULL << 32) == U64MAX, "mul");
	CHECK(jl_mul_sat(0xffffffffULL, 0x100000001ULL) == U64MAX, "mul");
	CHECK(jl_mul_sat(0, U64MAX) == 0, "mul");

	/* Hand values: 2^64-1 squared over 2^64-1; 1e24 / 7e5 = 1e19 / 7. */
	CHECK(jl_muldiv(U64MAX, U64MAX, U64MAX) == U64MAX, "max");
	CHECK(jl_muldiv(JL_COEF_MAX, JL_COEF_MAX, 700000) ==
		      1428571428571428571ULL,
	      "%llu",
	      (unsigned long long)jl_muldiv(JL_COEF_MAX, JL_COEF_MAX, 700000));
	CHECK(jl_muldiv(JL_COEF_MAX, JL_COEF_MAX, 7) == U64MAX,
	      "1e24 / 7 saturates");
	CHECK(jl_muldiv(1ULL << 63, 4, 2) == U64MAX, "quotient 2^64");
	CHECK(jl_muldiv(1ULL << 63, 4, 3) == 12297829382473034410ULL, "%llu",
	      (unsigned long long)jl_muldiv(1ULL << 63, 4, 3));
	CHECK(jl_muldiv(5, 5, 0) == U64MAX && jl_muldiv(0, 5, 0) == U64MAX,
	      "c == 0");

	/* Edge grid and random operands against 128-bit division. */
	for (i = 0; i < ARRAY_SIZE(edge); i++)
		for (j = 0; j < ARRAY_SIZE(edge); j++)
			for (k = 1; k < ARRAY_SIZE(edge); k++) {
				u128 p = (u128)edge[i] * edge[j];
				jl_u64 want = sat128(p / edge[k]);
				jl_u64 got =
					jl_muldiv(edge[i], edge[j], edge[k]);

				if (got != want && !fails++)
					CHECK(0, "%llu*%llu/%llu = %llu",
					      (unsigned long long)edge[i],
					      (unsigned long long)edge[j],
					      (unsigned long long)edge[k],
					      (unsigned long long)got);
			}
	for (i = 0; i < 300000; i++) {
		jl_u64 a = rnd_mag(), b = rnd_mag(), c = rnd_mag() | 1;
		jl_u64 want, got;

		/* Bias towards quotients that fit and divisors with a low top half. */
		if (i & 1)
			c = a > c ? a - rnd_below(a / 2 + 1) : c;
		if (!c)
			c = 1;
		want = sat128((u128)a * b / c);
		got = jl_muldiv(a, b, c);
		if (got != want && !fails++)
			CHECK(0, "%llu*%llu/%llu = %llu want %llu",
			      (unsigned long long)a, (unsigned long long)b,
			      (unsigned long long)c, (unsigned long long)got,
			      (unsigned long long)want);
		CHECK(jl_add_sat(a, b) == sat128((u128)a + b), "add %llu",
		      (unsigned long long)a);
		CHECK(jl_mul_sat(a, b) == sat128((u128)a * b), "mul %llu",
		      (unsigned long long)a);
	}
	CHECK(fails == 0, "%d muldiv mismatches", fails);
}

/* ---- model, fJ/uJ ---------------------------------------------------- */

static jl_u64 model_ref(const struct jl_coef *c, const struct jl_feat *d)
{
	u128 fj = 0, pj = 0;
	int f;

	for (f = 0; f < JL_NR_FEATURES; f++) {
		if (!(d->present & (1U << f)))
			continue;
		if (f == JL_F_CPU_NS)
			fj += (u128)c->cpu_time_uw * d->v[f];
		else
			pj += (u128)jl_coef_get(c, (unsigned int)f) * d->v[f];
	}
	/* Each term < 2^104, so the sums and 1000 * pj fit in 128 bits. */
	return sat128(fj + pj * 1000);
}

/* model fJ: hand values, presence mask, saturation, 200000 random */
TEST(model)
{
	struct jl_coef c = { .cpu_time_uw = 5000000, /* 5 W on CPU */
			     .cycles_pj = 100,
			     .instructions_pj = 20,
			     .cache_miss_pj = 30000,
			     .disk_byte_pj = 7,
			     .idle_uw = 123 };
	struct jl_feat d = { .v = { 1000000000, 3000000000ULL, 4000000000ULL,
				    1000000, 1 << 20 },
			     .present = 0x1f };
	int i, fails = 0;
	unsigned int f;

	/*
	 * 5 W * 1 s = 5 J = 5e15 fJ; 3e9 cycles * 100 pJ = 0.3 J;
	 * 4e9 * 20 pJ = 0.08 J; 1e6 * 30 nJ = 0.03 J; 1 MiB * 7 pJ = 7340032 pJ.
	 * Total 5.41 J + 7340032 pJ = 5410000000000000 + 7340032000 fJ.
	 */
	CHECK(jl_model_fj(&c, &d) == 5410007340032000ULL, "%llu",
	      (unsigned long long)jl_model_fj(&c, &d));
	d.present = 1U << JL_F_CPU_NS;
	CHECK(jl_model_fj(&c, &d) == 5000000000000000ULL, "cpu only");
	d.present = (1U << JL_F_CYCLES) | (1U << JL_F_DISK);
	CHECK(jl_model_fj(&c, &d) == 300000000000000ULL + 7340032000ULL,
	      "cycles+disk %llu", (unsigned long long)jl_model_fj(&c, &d));
	d.present = 0;
	CHECK(jl_model_fj(&c, &d) == 0, "nothing present");
	d.present = 0xffffffe0; /* bits past the features mean nothing */
	CHECK(jl_model_fj(&c, &d) == 0, "unknown bits");

	/* Extremes. */
	for (f = 0; f < JL_NR_COEF; f++)
		jl_coef_set(&c, f, JL_COEF_MAX);
	for (f = 0; f < JL_NR_FEATURES; f++)
		d.v[f] = U64MAX;
	d.present = 0x1f;
	CHECK(jl_model_fj(&c, &d) == U64MAX, "saturates");
	for (f = 0; f < JL_NR_FEATURES; f++) {
		d.present = 1U << f;
		CHECK(jl_model_fj(&c, &d) == U64MAX, "feature %u saturates", f);
	}
	/* Just below saturation: 18446 * 1e12 pJ = 18446e15 fJ < 2^64. */
	d.present = 1U << JL_F_INSTR;
	d.v[JL_F_INSTR] = 18446;
	CHECK(jl_model_fj(&c, &d) == 18446000000000000000ULL, "%llu",
	      (unsigned long long)jl_model_fj(&c, &d));
	d.v[JL_F_INSTR] = 18447;
	CHECK(jl_model_fj(&c, &d) == U64MAX, "just above");
	for (f = 0; f < JL_NR_COEF; f++)
		jl_coef_set(&c, f, 0);
	d.present = 0x1f;
	CHECK(jl_model_fj(&c, &d) == 0, "zero coefficients");

	for (i = 0; i < 200000; i++) {
		jl_u64 got, want;

		for (f = 0; f < JL_NR_COEF; f++)
			jl_coef_set(&c, f, rnd_mag() % (JL_COEF_MAX + 1));
		for (f = 0; f < JL_NR_FEATURES; f++)
			d.v[f] = rnd_mag() >> (rnd() % 40);
		d.present = (jl_u32)rnd();
		got = jl_model_fj(&c, &d);
		want = model_ref(&c, &d);
		if (got != want && !fails++)
			CHECK(0, "random %d: %llu want %llu", i,
			      (unsigned long long)got,
			      (unsigned long long)want);
	}
	CHECK(fails == 0, "%d mismatches", fails);
}

/* fJ -> uJ carry: 10^6 small adds exact, extremes */
TEST(fj_to_uj)
{
	jl_u64 rem = 0, uj = 0, total = 0;
	int i;

	/* 10^6 small adds: exact sum and carry. */
	for (i = 0; i < 1000000; i++) {
		jl_u64 fj = rnd() % 3000000000ULL; /* 0..3 uJ */

		total += fj;
		uj += jl_fj_to_uj(fj, &rem);
		if (rem >= 1000000000ULL)
			break;
	}
	CHECK(i == 1000000, "carry out of range at %d", i);
	CHECK(uj == total / 1000000000ULL, "%llu vs %llu",
	      (unsigned long long)uj,
	      (unsigned long long)(total / 1000000000ULL));
	CHECK(rem == total % 1000000000ULL, "rem %llu",
	      (unsigned long long)rem);

	/* 10^6 adds of 1 fJ stay below 1 uJ, but none is lost. */
	rem = 0;
	uj = 0;
	for (i = 0; i < 1000000; i++)
		uj += jl_fj_to_uj(1, &rem);
	CHECK(uj == 0 && rem == 1000000, "1 fJ x 1e6: %llu %llu",
	      (unsigned long long)uj, (unsigned long long)rem);
	/* The rest of the first uJ, then the fJ that completes it. */
	uj += jl_fj_to_uj(999000000 - 1, &rem);
	CHECK(uj == 0 && rem == 999999999, "just below");
	uj += jl_fj_to_uj(1, &rem);
	CHECK(uj == 1 && rem == 0, "carry to 1 uJ");

	rem = 999999999;
	CHECK(jl_fj_to_uj(U64MAX, &rem) == U64MAX / 1000000000ULL + 1, "max");
	/* (2^64-1) % 1e9 = 709551615, + 999999999 - 1e9 */
	CHECK(rem == 709551614, "rem %llu", (unsigned long long)rem);
	rem = 5000000001ULL; /* out of range carry is normalised, not lost */
	CHECK(jl_fj_to_uj(0, &rem) == 5 && rem == 1, "normalise");
	CHECK(jl_fj_to_uj(2999999999ULL, NULL) == 2, "NULL rem");
	CHECK(jl_fj_to_uj(0, NULL) == 0, "zero");
}

/* power * time in fJ, saturating */
TEST(power_fj)
{
	/* 1 W for 1 s = 1e6 uW * 1e9 ns = 1e15 fJ = 1 J. */
	CHECK(jl_power_fj(1000000, 1000000000) == 1000000000000000ULL, "1 W s");
	CHECK(jl_power_fj(0, U64MAX) == 0, "0 W");
	CHECK(jl_power_fj(U64MAX, 0) == 0, "0 ns");
	CHECK(jl_power_fj(JL_COEF_MAX, 18446744) == 18446744000000000000ULL,
	      "near max");
	CHECK(jl_power_fj(JL_COEF_MAX, 18446745) == U64MAX, "saturates");
	CHECK(jl_power_fj(U64MAX, U64MAX) == U64MAX, "max");
}

/* The model's fJ without saturation, for the exact functions. */
static u128 model_ref128(const struct jl_coef *c, const struct jl_feat *d)
{
	u128 fj = 0;
	int f;

	for (f = 0; f < JL_NR_FEATURES; f++) {
		if (!(d->present & (1U << f)))
			continue;
		if (f == JL_F_CPU_NS)
			fj += (u128)c->cpu_time_uw * d->v[f];
		else
			fj += (u128)jl_coef_get(c, (unsigned int)f) * d->v[f] *
			      1000;
	}
	return fj;
}

/*
 * What the kernel charges: idle power over long intervals and the model
 * of big counts, exact in uJ with the sub-uJ rest carried (the fJ path
 * saturated above 307 W over a 60 s interval).
 */
TEST(exact_energy)
{
	struct jl_coef c = { 0 };
	struct jl_feat d = { 0 };
	jl_u64 rem = 0, uj, sum = 0, want;
	int i, fails = 0;

	/* 1 kW of idle power over the longest interval, 60 s. */
	CHECK(jl_power_fj(1000000000ULL, 60000000000ULL) == U64MAX,
	      "the fJ path saturates here");
	uj = jl_power_uj(1000000000ULL, 60000000000ULL, &rem);
	CHECK(uj == 60000000000ULL && rem == 0, "1 kW x 60 s = %llu uJ",
	      (unsigned long long)uj);
	uj = jl_power_uj(JL_COEF_MAX, 60000000000ULL, &rem);
	CHECK(uj == 60000000000000ULL, "JL_COEF_MAX x 60 s = %llu uJ",
	      (unsigned long long)uj);
	/* The rest carries: 999999999 fJ, then 1 fJ more, is 1 uJ. */
	rem = 0;
	CHECK(jl_power_uj(3, 333333333, &rem) == 0 && rem == 999999999,
	      "rest %llu", (unsigned long long)rem);
	CHECK(jl_power_uj(1, 1, &rem) == 1 && rem == 0, "carried");
	/* An out-of-range carry is normalised, not lost. */
	rem = 2500000000ULL;
	CHECK(jl_power_uj(0, 0, &rem) == 2 && rem == 500000000, "normalised");
	/* 10^5 intervals of 1.5 uJ each: exactly 150000 uJ. */
	rem = 0;
	for (i = 0; i < 100000; i++)
		sum += jl_power_uj(1500, 1000000, &rem);
	CHECK(sum == 150000 && rem == 0, "sum %llu", (unsigned long long)sum);

	/* The model, exact against a 128-bit reference, with the carry. */
	for (i = 0, rem = 0, sum = 0; i < 200000; i++) {
		u128 ref;
		jl_u64 r0 = rem, w;
		unsigned int f;

		for (f = 0; f < JL_NR_COEF; f++)
			jl_coef_set(&c, f, rnd_mag() % (JL_COEF_MAX + 1));
		for (f = 0; f < JL_NR_FEATURES; f++)
			d.v[f] = rnd_mag() >> (rnd() % 44 + 20);
		d.present = (jl_u32)rnd();
		ref = model_ref128(&c, &d);
		uj = jl_model_uj(&c, &d, &rem);
		want = sat128((ref + r0) / 1000000000ULL);
		if ((uj != want ||
		     (want != U64MAX &&
		      rem != (jl_u64)((ref + r0) % 1000000000ULL))) &&
		    !fails++)
			CHECK(0, "model %d: %llu want %llu", i,
			      (unsigned long long)uj, (unsigned long long)want);
		w = jl_model_weight(&c, &d);
		if (w != sat128(ref / 1000000) && !fails++)
			CHECK(0, "weight %d: %llu", i, (unsigned long long)w);
	}
	CHECK(fails == 0, "%d mismatches", fails);
}

/* ---- splitting ------------------------------------------------------- */

/* 192-bit unsigned numbers, only for the error bound of huge weight sums. */
struct u192 {
	jl_u64 w[3]; /* little endian */
};

static struct u192 mul_64_128(jl_u64 a, u128 b)
{
	u128 p0 = (u128)a * (jl_u64)b, p1 = (u128)a * (jl_u64)(b >> 64);
	u128 mid = (p0 >> 64) + (jl_u64)p1;
	struct u192 r = { { (jl_u64)p0, (jl_u64)mid,
			    (jl_u64)(p1 >> 64) + (jl_u64)(mid >> 64) } };
	return r;
}

static int cmp192(struct u192 a, struct u192 b)
{
	int i;

	for (i = 2; i >= 0; i--)
		if (a.w[i] != b.w[i])
			return a.w[i] < b.w[i] ? -1 : 1;
	return 0;
}

static struct u192 sub192(struct u192 a, struct u192 b) /* a >= b */
{
	struct u192 r;
	unsigned int borrow = 0;
	int i;

	for (i = 0; i < 3; i++) {
		jl_u64 x = a.w[i] - b.w[i] - borrow;

		borrow = a.w[i] < b.w[i] || (a.w[i] == b.w[i] && borrow);
		r.w[i] = x;
	}
	return r;
}

/*
 * Check one split: parts add up to total, each part is within `bound` of
 * its exact share total * w / S (|part * S - total * w| < bound * S, in
 * exact arithmetic), and, when S fits in 64 bits, each part is exactly the
 * cumulative-rounding value. Returns 0 when all holds.
 */
static int check_split(jl_u64 total, const jl_u64 *w, jl_u32 n,
		       const jl_u64 *out, jl_u64 bound, int *worst)
{
	u128 sum = 0, cum = 0, given = 0;
	jl_u64 prev = 0;
	jl_u32 i;

	for (i = 0; i < n; i++)
		sum += w[i];
	for (i = 0; i < n; i++)
		given += out[i];
	if (given != total)
		return 1;
	for (i = 0; i < n; i++) {
		struct u192 ps = mul_64_128(out[i], sum);
		struct u192 tw = mul_64_128(total, w[i]);
		struct u192 d =
			cmp192(ps, tw) >= 0 ? sub192(ps, tw) : sub192(tw, ps);
		jl_u64 e;

		/* Largest e with e * S <= |d|, found by trying the bound. */
		for (e = 0; e <= bound; e++)
			if (cmp192(d, mul_64_128(e + 1, sum)) < 0)
				break;
		if (e >= bound)
			return 2;
		if ((int)e > *worst)
			*worst = (int)e;
		if (sum >> 64)
			continue;
		cum += w[i];
		{
			jl_u64 q = (jl_u64)((u128)total * (jl_u64)cum /
					    (jl_u64)sum);

			if (out[i] != q - prev)
				return 3;
			prev = q;
		}
	}
	return 0;
}

static jl_u64 rnd_total(void)
{
	switch (rnd() % 8) {
	case 0:
		return 0;
	case 1:
		return 1;
	case 2:
		return U64MAX;
	case 3:
		return rnd() % 1000;
	default:
		return rnd_mag();
	}
}

/* split: hand cases, all-zero, n = 0, single recipient */
TEST(split_hand)
{
	jl_u64 out[8];
	static const jl_u64 w3[] = { 1, 1, 1 }, w4[] = { 1, 2, 3, 4 };
	static const jl_u64 wz[] = { 0, 5, 0, 2 }, wmax[] = { U64MAX - 5, 5 };
	static const jl_u64 zero[] = { 0, 0, 0 };
	jl_u64 w1 = 12345, w0 = 0;

	CHECK(jl_split(10, w3, 3, out) == 1, "ret");
	CHECK(out[0] == 3 && out[1] == 3 && out[2] == 4, "%llu %llu %llu",
	      (unsigned long long)out[0], (unsigned long long)out[1],
	      (unsigned long long)out[2]);
	CHECK(jl_split(100, w4, 4, out) == 1, "ret");
	CHECK(out[0] == 10 && out[1] == 20 && out[2] == 30 && out[3] == 40,
	      "1:2:3:4");
	CHECK(jl_split(7, wz, 4, out) == 1, "ret");
	CHECK(out[0] == 0 && out[1] == 5 && out[2] == 0 && out[3] == 2,
	      "zero weights get 0");
	/* Weight sum exactly 2^64 - 1, total 2^64 - 1: shares are the weights. */
	CHECK(jl_split(U64MAX, wmax, 2, out) == 1, "ret");
	CHECK(out[0] == U64MAX - 5 && out[1] == 5, "max sum");

	memset(out, 0x5a, sizeof(out));
	CHECK(jl_split(1000, zero, 3, out) == 0, "all zero returns 0");
	CHECK(out[0] == 0 && out[1] == 0 && out[2] == 0, "zeroed");
	CHECK(out[3] == 0x5a5a5a5a5a5a5a5aULL, "wrote past n");

	memset(out, 0x5a, sizeof(out));
	CHECK(jl_split(1000, w3, 0, out) == 0, "n = 0 returns 0");
	CHECK(out[0] == 0x5a5a5a5a5a5a5a5aULL, "n = 0 wrote");

	CHECK(jl_split(U64MAX, &w1, 1, out) == 1 && out[0] == U64MAX,
	      "single recipient gets all");
	CHECK(jl_split(0, &w1, 1, out) == 1 && out[0] == 0, "total 0");
	CHECK(jl_split(77, &w0, 1, out) == 0 && out[0] == 0,
	      "single zero weight");
}

/* split: 20000 random cases conserve and are within 1 of exact */
TEST(split_random)
{
	jl_u64 w[64], out[64];
	int i, worst = 0, fails = 0, ret_fails = 0;
	jl_u32 n, k;

	for (i = 0; i < 20000; i++) {
		jl_u64 total = rnd_total();
		int any = 0, r, c;

		n = 1 + (jl_u32)(rnd() % 64);
		for (k = 0; k < n; k++) {
			switch (i % 4) {
			case 0: /* mixed magnitudes, sum < 2^63 */
				w[k] = rnd_mag() >> 7;
				break;
			case 1: /* small weights: many ties */
				w[k] = rnd() % 4;
				break;
			case 2: /* sparse */
				w[k] = rnd() % 3 ? 0 : rnd_mag() >> 7;
				break;
			default: /* sum close to 2^64 */
				w[k] = (U64MAX / n) - rnd() % 1000;
				break;
			}
			any |= w[k] != 0;
		}
		r = jl_split(total, w, n, out);
		if (r != any)
			ret_fails++;
		if (!any)
			continue;
		c = check_split(total, w, n, out, 1, &worst);
		if (c && !fails++)
			CHECK(0, "case %d (n %u, total %llu): check %d", i, n,
			      (unsigned long long)total, c);
	}
	CHECK(fails == 0, "%d failing splits", fails);
	CHECK(ret_fails == 0, "%d wrong return values", ret_fails);
	CHECK(worst == 0, "|part - exact| reached %d", worst);
}

/* split: 5000 weight sums past 2^64 conserve, within 6 */
TEST(split_overflow)
{
	jl_u64 w[16], out[16];
	static const jl_u64 three[] = { U64MAX, U64MAX, U64MAX };
	int i, worst = 0, fails = 0;
	jl_u32 n, k;

	CHECK(jl_split(3, three, 3, out) == 1, "ret");
	CHECK(out[0] == 1 && out[1] == 1 && out[2] == 1, "equal thirds");
	CHECK(jl_split(U64MAX, three, 3, out) == 1, "ret");
	CHECK(out[0] + out[1] + out[2] == U64MAX && out[0] == U64MAX / 3 &&
		      out[2] == U64MAX / 3,
	      "thirds of max");

	for (i = 0; i < 5000; i++) {
		jl_u64 total = rnd_total();
		int c;

		n = 2 + (jl_u32)(rnd() % 15);
		for (k = 0; k < n; k++)
			w[k] = rnd() % 4 ? U64MAX - rnd_mag() : rnd_mag();
		CHECK(jl_split(total, w, n, out) == 1, "ret");
		c = check_split(total, w, n, out, 6, &worst);
		if (c && !fails++)
			CHECK(0, "case %d: check %d", i, c);
	}
	CHECK(fails == 0, "%d failing splits", fails);
	DIAG("weight sums past 2^64: worst |part - exact| floor %d", worst);
}

/*
 * Lagged rate: the parts of a run of weights add up to min(floor(sum w *
 * uj / W), uj) exactly (the remainder carried, the epoch's energy the
 * most), against 128-bit arithmetic; energy without weight counts; roll()
 * returns what was left and epochs that make no rate; no rate before an
 * epoch with weight, nor after one with weights of two kinds.
 */
TEST(rate)
{
	struct jl_rate r;
	int i, fails = 0;

	for (i = 0; i < 3000; i++) {
		/* Below 2^38 uJ and 2^20 a weight: no part saturates. */
		jl_u64 uj = rnd_mag() >> 26, W = 2 + (rnd_mag() >> 8), left;
		u128 sumw = 0, given = 0, want;
		jl_u32 k, n = 1 + (jl_u32)(rnd() % 50);

		memset(&r, 0, sizeof(r));
		jl_rate_add(&r, uj / 2, W / 2, 7);
		jl_rate_add(&r, uj / 4, 0, 7);
		jl_rate_add(&r, uj - uj / 2 - uj / 4, W - W / 2, 7);
		if (jl_rate_uj(&r, 5, 7)) {
			if (!fails++)
				CHECK(0,
				      "case %d: a rate before the epoch ended",
				      i);
			continue;
		}
		if (jl_rate_roll(&r) != 0) {
			if (!fails++)
				CHECK(0,
				      "case %d: a first roll returned energy",
				      i);
			continue;
		}
		for (k = 0; k < n; k++) {
			jl_u64 w = rnd_mag() >> 44;

			sumw += w;
			given += jl_rate_uj(&r, w, 7);
		}
		want = sumw * uj / W;
		if (want > uj)
			want = uj;
		left = jl_rate_roll(&r);
		if (given != want || left != uj - given) {
			if (!fails++)
				CHECK(0,
				      "case %d: uj %llu W %llu: %llu given, %llu left",
				      i, (unsigned long long)uj,
				      (unsigned long long)W,
				      (unsigned long long)given,
				      (unsigned long long)left);
		}
	}
	CHECK(!fails, "%d of 3000 runs off", fails);

	memset(&r, 0, sizeof(r));
	jl_rate_add(&r, 1000, 10, 1);
	jl_rate_add(&r, 500, 0, 1); /* a tick nobody ran in counts too */
	CHECK(jl_rate_roll(&r) == 0, "nothing left of no rate");
	CHECK(jl_rate_uj(&r, 3, 1) == 450, "150 per unit");
	CHECK(jl_rate_uj(&r, 3, 2) == 0, "another kind: no rate");
	CHECK(jl_rate_uj(&r, 10, 1) == 1050, "at most the epoch's energy");
	CHECK(jl_rate_uj(&r, 1, 1) == 0, "and then nothing");
	jl_rate_add(&r, 700, 0, 1); /* an epoch without weight */
	CHECK(jl_rate_roll(&r) == 700, "its energy is handed back");
	CHECK(jl_rate_uj(&r, 1, 1) == 0, "and it makes no rate");
	jl_rate_add(&r, 100, 10, 1);
	jl_rate_add(&r, 100, 10, 2); /* weights of two kinds */
	CHECK(jl_rate_roll(&r) == 200, "a mixed epoch is handed back");
	CHECK(jl_rate_uj(&r, 1, 1) == 0 && jl_rate_uj(&r, 1, 2) == 0,
	      "and makes no rate");
	jl_rate_add(&r, 100, 10, 2);
	CHECK(jl_rate_roll(&r) == 0, "a rate of kind 2");
	CHECK(jl_rate_uj(&r, 4, 2) == 40, "10 per unit");
	CHECK(jl_rate_roll(&r) == 60, "what was left comes back");
	memset(&r, 0, sizeof(r));
	jl_rate_add(&r, U64MAX, 1, 3);
	jl_rate_roll(&r);
	CHECK(jl_rate_uj(&r, U64MAX, 3) == U64MAX, "saturates");
	CHECK(r.rem == 0, "a saturated part carries nothing");
}

/*
 * Settlement: the parts of an epoch add up to its energy exactly and each
 * is its weight's share of it (within the cumulative rounding's 1 uJ), on
 * random epochs against 128-bit arithmetic; a load that ran in one epoch
 * only is charged that epoch's energy, not its quiet neighbour's rate;
 * energy of no split is idle's; the dying take the last epoch's rate, the
 * rest of their share is idle's, and what they took beyond it is reported
 * as an overdraft; no one's share depends on who left, nor on what the
 * dying of an earlier epoch took.
 */
TEST(settle)
{
	struct jl_settle s;
	jl_u64 over;
	int i, fails = 0;

	for (i = 0; i < 3000; i++) {
		jl_u64 w[40] = { 0 }, uj = 0, back, part, given = 0;
		u128 W = 0, want;
		jl_u32 k, t, n = 1 + (jl_u32)(rnd() % 40);
		jl_u32 ticks = 1 + (jl_u32)(rnd() % 20);

		memset(&s, 0, sizeof(s));
		for (t = 0; t < ticks; t++) {
			jl_u64 e = rnd_mag() >> 30, tw = 0;

			for (k = 0; k < n; k++) {
				jl_u64 x = rnd() % 3 ? rnd_mag() >> 40 : 0;

				w[k] += x;
				tw += x;
			}
			jl_settle_add(&s, e, tw, 5);
			uj += e;
			W += tw;
		}
		jl_settle_roll(&s);
		for (k = 0; k < n; k++) {
			part = jl_settle_next(&s, w[k]);
			want = W ? (u128)w[k] * uj / W : 0;
			if ((part + 1 < want || part > want + 1) && !fails++)
				CHECK(0, "case %d: part %llu, share %llu", i,
				      (unsigned long long)part,
				      (unsigned long long)want);
			given += part;
		}
		back = jl_settle_end(&s, &over);
		if ((W ? back || given != uj : back != uj || given || over) &&
		    !fails++)
			CHECK(0, "case %d: %llu of %llu given, %llu back", i,
			      (unsigned long long)given, (unsigned long long)uj,
			      (unsigned long long)back);
	}
	CHECK(!fails, "%d of 3000 epochs off", fails);

	/*
	 * A quiet epoch (10 uJ over kernel threads' 100 ns), then the load's
	 * (10000 uJ, its 1000 ns beside their 100): the load gets 10000 *
	 * 1000 / 1100, where the last epoch's rate capped it at 10.
	 */
	memset(&s, 0, sizeof(s));
	jl_settle_add(&s, 10, 100, 1);
	jl_settle_roll(&s);
	CHECK(jl_settle_next(&s, 100) == 10, "a quiet epoch to its weight");
	CHECK(jl_settle_end(&s, &over) == 0 && !over, "all of it");
	jl_settle_add(&s, 6000, 600, 1);
	jl_settle_add(&s, 4000, 500, 1);
	jl_settle_roll(&s);
	CHECK(jl_settle_next(&s, 1000) == 9090, "the load: its own epoch's");
	CHECK(jl_settle_next(&s, 100) == 910, "the rest: the others'");
	CHECK(jl_settle_end(&s, &over) == 0 && !over, "all of it");

	/*
	 * 1000 of 1100 leave at 10000 / 1100 per unit; the one left gets its
	 * share of the epoch's 300 all the same, and the leavers' 273 do not
	 * cover the 9090 they took: 8817 over.
	 */
	jl_settle_add(&s, 300, 1100, 1);
	CHECK(jl_settle_prov(&s, 1000) == 9090, "the dying: the last rate");
	jl_settle_roll(&s);
	CHECK(jl_settle_next(&s, 100) == 27, "the one left: its share");
	CHECK(jl_settle_end(&s, &over) == 0 && over == 8817, "the overdraft");
	jl_settle_add(&s, 10000, 2000, 1);
	CHECK(jl_settle_prov(&s, 1100) == 300, "the last epoch's 300 per 1100");
	CHECK(jl_settle_prov(&s, 50) == 0,
	      "no more than the last epoch's energy in all");
	jl_settle_roll(&s);
	CHECK(jl_settle_next(&s, 850) == 4250,
	      "a share of the whole epoch: the last one's leavers owe nothing here");
	CHECK(jl_settle_end(&s, &over) == 10000 - 4250 - 300 && !over,
	      "the leavers' share less what they took: idle's");

	/* No split: no weight, two kinds (also by kind()), void(); no rate. */
	jl_settle_add(&s, 700, 0, 1);
	jl_settle_roll(&s);
	CHECK(jl_settle_next(&s, 1) == 0 && jl_settle_end(&s, &over) == 700,
	      "an epoch without weight is idle's");
	jl_settle_add(&s, 100, 10, 1);
	jl_settle_add(&s, 100, 10, 2);
	jl_settle_roll(&s);
	CHECK(jl_settle_next(&s, 10) == 0, "a mixed epoch splits nothing");
	CHECK(jl_settle_end(&s, &over) == 200, "it is idle's");
	jl_settle_add(&s, 100, 10, 1);
	CHECK(jl_settle_prov(&s, 5) == 0, "a mixed epoch makes no rate");
	jl_settle_kind(&s, 2);
	jl_settle_add(&s, 100, 10, 2);
	jl_settle_roll(&s);
	CHECK(jl_settle_end(&s, &over) == 200, "kind() mixes too");
	jl_settle_add(&s, 100, 10, 2);
	jl_settle_roll(&s);
	CHECK(jl_settle_next(&s, 10) == 100 && jl_settle_end(&s, &over) == 0,
	      "a rate of kind 2");
	jl_settle_add(&s, 100, 10, 3);
	CHECK(jl_settle_prov(&s, 5) == 0, "the last rate is of another kind");
	jl_settle_roll(&s);
	CHECK(jl_settle_next(&s, 5) == 50 && jl_settle_end(&s, &over) == 50,
	      "the leaver's share it did not take is idle's");
	jl_settle_add(&s, 100, 10, 3);
	jl_settle_roll(&s);
	jl_settle_next(&s, 10);
	jl_settle_end(&s, &over);
	jl_settle_add(&s, 80, 10, 3);
	CHECK(jl_settle_prov(&s, 4) == 40, "10 per unit");
	jl_settle_void(&s);
	jl_settle_roll(&s);
	CHECK(jl_settle_next(&s, 6) == 0, "a void epoch splits nothing");
	CHECK(jl_settle_end(&s, &over) == 40 && !over,
	      "it is idle's, less what the dying took");
	jl_settle_add(&s, 80, 10, 3);
	CHECK(jl_settle_prov(&s, 1) == 0, "and makes no rate");
	jl_settle_roll(&s);
	jl_settle_next(&s, 9);
	jl_settle_end(&s, &over);

	memset(&s, 0, sizeof(s));
	jl_settle_add(&s, U64MAX, 1, 3);
	jl_settle_add(&s, 5, 1, 3);
	jl_settle_roll(&s);
	CHECK(jl_settle_next(&s, 2) == U64MAX, "saturates");
}

/* splitter equals jl_split on 10000 cases; clamp and rest */
TEST(splitter)
{
	jl_u64 w[64], out[64];
	struct jl_splitter s;
	int i, fails = 0;
	jl_u32 n, k;

	for (i = 0; i < 10000; i++) {
		jl_u64 total = rnd_total(), wsum = 0, given = 0;

		n = 1 + (jl_u32)(rnd() % 64);
		for (k = 0; k < n; k++) {
			w[k] = i % 2 ? rnd_mag() >> 7 : rnd() % 3;
			wsum = jl_add_sat(wsum, w[k]);
		}
		jl_split(total, w, n, out);
		jl_splitter_init(&s, total, wsum);
		for (k = 0; k < n; k++) {
			jl_u64 p = jl_splitter_next(&s, w[k]);

			given += p;
			if (wsum ? p != out[k] : p != 0) {
				if (!fails++)
					CHECK(0, "case %d part %u", i, k);
				break;
			}
		}
		if (given != (wsum ? total : 0) ||
		    jl_splitter_rest(&s) != total - given) {
			if (!fails++)
				CHECK(0, "case %d given %llu", i,
				      (unsigned long long)given);
		}
	}
	CHECK(fails == 0, "%d mismatches with jl_split", fails);
	CHECK(s.shift == 0, "shift %u", s.shift);

	/* Weights beyond the announced sum are clamped. */
	jl_splitter_init(&s, 100, 10);
	CHECK(jl_splitter_next(&s, 6) == 60, "60");
	CHECK(jl_splitter_next(&s, 6) == 40, "clamped to the rest");
	CHECK(jl_splitter_next(&s, 5) == 0, "nothing left");
	CHECK(jl_splitter_rest(&s) == 0, "rest");
	/* Weights short of it leave a rest. */
	jl_splitter_init(&s, 100, 20);
	CHECK(jl_splitter_next(&s, 5) == 25, "25");
	CHECK(jl_splitter_next(&s, 5) == 25, "25");
	CHECK(jl_splitter_rest(&s) == 50, "rest %llu",
	      (unsigned long long)jl_splitter_rest(&s));
	/* wsum 0: nobody gets anything. */
	jl_splitter_init(&s, 100, 0);
	CHECK(jl_splitter_next(&s, 5) == 0, "wsum 0");
	CHECK(jl_splitter_rest(&s) == 100, "rest");
	/* Sum saturated by the caller: total still conserved. */
	jl_splitter_init(&s, U64MAX, jl_add_sat(jl_add_sat(U64MAX, U64MAX), 3));
	CHECK(jl_splitter_next(&s, U64MAX) == U64MAX, "first takes all");
	CHECK(jl_splitter_next(&s, U64MAX) == 0, "clamped");
	CHECK(jl_splitter_next(&s, 3) == 0, "clamped");
	CHECK(jl_splitter_rest(&s) == 0, "rest");
	jl_splitter_init(&s, 1000, U64MAX);
	CHECK(jl_splitter_next(&s, U64MAX / 2) == 499, "half of max");
	CHECK(jl_splitter_next(&s, U64MAX / 2) == 500, "%llu",
	      (unsigned long long)s.given);
	CHECK(jl_splitter_next(&s, 1) == 1, "last unit");
}

/* ---- w^(milli/1000) -------------------------------------------------- */

/* Relative error beyond the integer rounding, or 0 if within it. */
static double pow_excess(jl_u64 w, jl_u32 milli, jl_u64 got)
{
	double want = pow((double)w, milli / 1000.0);
	double err = fabs((double)got - want) - 0.5;

	/* double itself carries ~1e-16 relative error on 64-bit values */
	err -= want * 4e-16;
	return err > 0 ? err / want : 0;
}

/* pow_milli vs libm: 200000 samples < 1e-4, monotone sweeps */
TEST(pow_fixed_point)
{
	static const jl_u32 gammas[] = { 1, 2, 100, 200, 300, 500, 700, 999 };
	double worst = 0, e;
	jl_u64 prev, w;
	int i, fails = 0, mono = 0;
	unsigned int g;

	CHECK(jl_pow_milli(0, 300) == 0, "0 -> 0");
	CHECK(jl_pow_milli(1, 300) == 1, "1 -> 1");
	CHECK(jl_pow_milli(U64MAX, 1000) == U64MAX, "identity");
	CHECK(jl_pow_milli(123456789, 1000) == 123456789, "identity");
	CHECK(jl_pow_milli(123456789, 5000) == 123456789, "milli > 1000");
	CHECK(jl_pow_milli(123456789, 0) == 1, "milli 0");
	CHECK(jl_pow_milli(0, 0) == 0, "0^0 stays 0");
	/* Exact powers: 2^60^(1/2) = 2^30, 1e12^0.5 = 1e6, 2^63^0.2... */
	CHECK(jl_pow_milli(1ULL << 60, 500) == 1ULL << 30, "%llu",
	      (unsigned long long)jl_pow_milli(1ULL << 60, 500));
	CHECK(jl_pow_milli(1000000000000ULL, 500) == 1000000, "%llu",
	      (unsigned long long)jl_pow_milli(1000000000000ULL, 500));
	CHECK(jl_pow_milli(1000000000ULL, 200) == 63, "%llu",
	      (unsigned long long)jl_pow_milli(1000000000ULL, 200));
	CHECK(jl_pow_milli(U64MAX, 500) == 4294967296ULL, "%llu",
	      (unsigned long long)jl_pow_milli(U64MAX, 500));
	/* (2^64 - 1)^0.999 = 2^63.936 = 1.7646e19 */
	CHECK(jl_pow_milli(U64MAX, 999) > 17640000000000000000ULL &&
		      jl_pow_milli(U64MAX, 999) < 17650000000000000000ULL,
	      "%llu", (unsigned long long)jl_pow_milli(U64MAX, 999));

	for (i = 0; i < 200000; i++) {
		jl_u32 milli = i % 3 ? gammas[i % ARRAY_SIZE(gammas)] :
				       1 + (jl_u32)(rnd() % 999);

		w = rnd_mag();
		e = pow_excess(w, milli, jl_pow_milli(w, milli));
		if (e > worst)
			worst = e;
		if (e >= 1e-4 && !fails++)
			CHECK(0, "%llu^%u/1000 = %llu (rel. err %g)",
			      (unsigned long long)w, milli,
			      (unsigned long long)jl_pow_milli(w, milli), e);
	}
	CHECK(fails == 0, "%d results off by >= 1e-4", fails);
	DIAG("pow: worst relative error beyond rounding %.3g", worst);
	/* The contract is 1e-4; the fixed point gives far more: keep it. */
	CHECK(worst < 1e-12, "precision regressed: %g", worst);

	/* Monotone: dense sweeps at the bottom, around powers of 2, at the top. */
	for (g = 0; g < ARRAY_SIZE(gammas); g++) {
		prev = 0;
		for (w = 0; w < 200000; w++) {
			jl_u64 r = jl_pow_milli(w, gammas[g]);

			mono += r < prev;
			prev = r;
		}
		for (i = 18; i < 64; i++) {
			jl_u64 lo = (1ULL << i) - 2000, hi = (1ULL << i) + 2000;

			prev = jl_pow_milli(lo, gammas[g]);
			for (w = lo; w < hi; w++) {
				jl_u64 r = jl_pow_milli(w, gammas[g]);

				mono += r < prev;
				prev = r;
			}
		}
		prev = jl_pow_milli(U64MAX - 100000, gammas[g]);
		for (w = U64MAX - 100000; w != 0; w++) {
			jl_u64 r = jl_pow_milli(w, gammas[g]);

			mono += r < prev;
			prev = r;
		}
	}
	CHECK(mono == 0, "%d decreasing steps", mono);
}

/* ---- counters -------------------------------------------------------- */

TEST(wrap)
{
	/* 32-bit RAPL counter wraps: hand-computed deltas. */
	CHECK(jl_wrap_delta(0xfffffff0, 0x10, 32) == 0x20, "wrap 32");
	CHECK(jl_wrap_delta(0xffffffff, 0, 32) == 1, "wrap by 1");
	CHECK(jl_wrap_delta(0, 0xffffffff, 32) == 0xffffffff, "no wrap");
	CHECK(jl_wrap_delta(1000, 1000, 32) == 0, "equal");
	CHECK(jl_wrap_delta(1000, 999, 32) == 0xffffffff, "full turn");
	CHECK(jl_wrap_delta(0x12345678, 0x9abcdef0, 32) == 0x88888878,
	      "forward");
	/* High garbage above the width is ignored (0xffffffff-ish reads). */
	CHECK(jl_wrap_delta(0xdead0000fffffff0ULL, 0xbeef000000000010ULL, 32) ==
		      0x20,
	      "bits above 32");
	/* 64-bit counters. */
	CHECK(jl_wrap_delta(U64MAX, 0, 64) == 1, "wrap 64");
	CHECK(jl_wrap_delta(U64MAX - 9, 5, 64) == 15, "wrap 64 by 15");
	CHECK(jl_wrap_delta(5, U64MAX, 64) == U64MAX - 5, "no wrap 64");
	CHECK(jl_wrap_delta(7, 7, 64) == 0, "equal 64");
	CHECK(jl_wrap_delta(U64MAX, 0, 0) == 1, "0 means 64");
	/* Odd widths: 48-bit (perf PMC) and 1-bit. */
	CHECK(jl_wrap_delta(0xfffffffffff0ULL, 0x10, 48) == 0x20, "48");
	CHECK(jl_wrap_delta(1, 0, 1) == 1 && jl_wrap_delta(0, 1, 1) == 1 &&
		      jl_wrap_delta(1, 1, 1) == 0,
	      "1 bit");
	CHECK(jl_wrap_delta(0x7fffffff, 0, 31) == 1, "31");
}

/* rapl_esu: SDM/PPR values decode, zero and reserved bits rejected */
TEST(rapl_esu)
{
	static const jl_u64 bad[] = {
		0, /* QEMU: the MSR reads as zero */
		0xa0003, /* ESU 0 with sane power/time units */
		0xa0703, /* ESU 7 */
		0xa1903, /* ESU 25 */
		0xa1f03, /* ESU 31 */
		0x505, /* Silvermont Atom: 2^5 uJ encoding */
		0xa0e13, /* bit 4 (reserved 7:4) */
		0xa0e83, /* bit 7 */
		0xa2e03, /* bit 13 (reserved 15:13) */
		0xa8e03, /* bit 15 */
		0x1a0e03, /* bit 20 (reserved 63:20) */
		0x800a0e03ULL, /* bit 31 */
		0x1000a0e03ULL, /* bit 32 */
		0x80000000000a0e03ULL, /* bit 63 */
		0xffffffffULL, /* all-ones 32-bit read */
		U64MAX,
	};
	unsigned int i, e;
	jl_u64 rem = 0;

	/*
	 * Intel SDM vol. 3B, MSR_RAPL_POWER_UNIT on Sandy Bridge and later:
	 * 0xA0E03 = time units 0xA (1/1024 s), ESU 0x0E (1/16384 J = 61.035
	 * uJ), power units 3 (1/8 W).
	 */
	CHECK(jl_rapl_esu(0xa0e03) == 14, "%d", jl_rapl_esu(0xa0e03));
	/* One step at ESU 14: 1e6 / 16384 = 61.03515625 uJ. */
	CHECK(jl_rapl_to_uj(1, 14, &rem) == 61 && rem == 576, "61.035 uJ");
	/* AMD PPR family 17h: 0xA1003, ESU 0x10 = 1/65536 J = 15.26 uJ. */
	CHECK(jl_rapl_esu(0xa1003) == 16, "%d", jl_rapl_esu(0xa1003));
	/* Haswell-EP class server part: 0xA0E03 too; some clients 0xA1003. */
	CHECK(jl_rapl_esu(0x000e00) == 14, "only ESU set");
	CHECK(jl_rapl_esu(0xf1f0fULL & ~0x1f00ULL) == -JL_EINVAL,
	      "all used bits but ESU 0");
	for (e = 0; e < 32; e++) {
		jl_u64 msr = 0xa0003ULL | ((jl_u64)e << 8);
		int want = e >= 8 && e <= 24 ? (int)e : -JL_EINVAL;

		CHECK(jl_rapl_esu(msr) == want, "ESU %u: %d", e,
		      jl_rapl_esu(msr));
	}
	CHECK(JL_RAPL_ESU_MIN == 8 && JL_RAPL_ESU_MAX == 24, "bounds");
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		CHECK(jl_rapl_esu(bad[i]) == -JL_EINVAL, "%#llx accepted",
		      (unsigned long long)bad[i]);
}

/* rapl_to_uj: 1 J checks, saturation, carried sums */
TEST(rapl_to_uj)
{
	jl_u64 rem = 0, sum = 0, uj = 0, d;
	unsigned int esu;
	int i;

	/* 16384 units at ESU 14 = 1 J; 65536 at ESU 16 = 1 J. */
	CHECK(jl_rapl_to_uj(16384, 14, &rem) == 1000000 && rem == 0,
	      "1 J at ESU 14");
	CHECK(jl_rapl_to_uj(65536, 16, &rem) == 1000000 && rem == 0,
	      "1 J at ESU 16");
	/* 2^32 - 1 units (a full 32-bit counter) at ESU 14: 262143.99994 J. */
	rem = 0;
	CHECK(jl_rapl_to_uj(0xffffffffULL, 14, &rem) == 262143999938ULL, "%llu",
	      (unsigned long long)jl_rapl_to_uj(0xffffffffULL, 14, NULL));
	/* (2^32-1) * 1e6 mod 2^14 = 2^14 - 1e6 mod 2^14 = 16384 - 576 */
	CHECK(rem == 15808, "rem %llu", (unsigned long long)rem);
	CHECK(jl_rapl_to_uj(3, 0, NULL) == 3000000, "ESU 0");
	CHECK(jl_rapl_to_uj(U64MAX, 8, NULL) == U64MAX, "saturates");
	CHECK(jl_rapl_to_uj(U64MAX, 20, NULL) == 17592186044415999999ULL,
	      "%llu", (unsigned long long)jl_rapl_to_uj(U64MAX, 20, NULL));
	rem = 7;
	CHECK(jl_rapl_to_uj(5, 64, &rem) == 0 && rem == 7, "esu > 63");
	CHECK(jl_rapl_to_uj(0, 14, NULL) == 0, "zero");

	/* Many small deltas give what their sum gives. */
	for (esu = 8; esu <= 24; esu += 2) {
		rem = 0;
		sum = 0;
		uj = 0;
		for (i = 0; i < 100000; i++) {
			d = rnd() % 5000;
			sum += d;
			uj += jl_rapl_to_uj(d, esu, &rem);
		}
		d = 0;
		CHECK(uj == jl_rapl_to_uj(sum, esu, &d) && rem == d,
		      "ESU %u: %llu vs %llu", esu, (unsigned long long)uj,
		      (unsigned long long)jl_rapl_to_uj(sum, esu, NULL));
		CHECK(rem < (1ULL << esu), "rem range");
	}
}

/* rapl wrap period and plausibility bound */
TEST(rapl_bounds)
{
	jl_u64 prev = U64MAX, p;
	unsigned int watts;

	/* ESU 14, 100 W: 2^32 / 2^14 J = 262144 J / 100 W = 2621.44 s, /2. */
	CHECK(jl_rapl_wrap_period_ns(14, 100000000) == 1310720000000ULL, "%llu",
	      (unsigned long long)jl_rapl_wrap_period_ns(14, 100000000));
	/* ESU 16, 280 W: 65536 J / 280 W / 2 = 117.0285714... s */
	CHECK(jl_rapl_wrap_period_ns(16, 280000000) == 117028571428ULL, "%llu",
	      (unsigned long long)jl_rapl_wrap_period_ns(16, 280000000));
	/* ESU 0, 1 uW: 2^31 * 1e15 ns does not fit: saturate. */
	CHECK(jl_rapl_wrap_period_ns(0, 1) == U64MAX, "saturate");
	CHECK(jl_rapl_wrap_period_ns(14, 0) == U64MAX, "0 W");
	/* ESU 24, 1 MW: 2^8 J / 1e6 W / 2 = 128 us. */
	CHECK(jl_rapl_wrap_period_ns(24, 1000000000000ULL) == 128000, "%llu",
	      (unsigned long long)jl_rapl_wrap_period_ns(24, 1000000000000ULL));
	for (watts = 1; watts < 2000; watts++) {
		p = jl_rapl_wrap_period_ns(14, (jl_u64)watts * 1000000);
		CHECK(p <= prev, "not decreasing at %u W", watts);
		prev = p;
	}

	/* 100 W for 1 s = 1e8 uJ. */
	CHECK(jl_max_energy_uj(100000000, 1000000000) == 100000000, "100 J");
	CHECK(jl_max_energy_uj(1, 999999999) == 0, "floor");
	CHECK(jl_max_energy_uj(3, 1000000000) == 3, "3 uJ");
	CHECK(jl_max_energy_uj(U64MAX, U64MAX) == U64MAX, "saturates");
	CHECK(jl_max_energy_uj(U64MAX, 1000000000) == U64MAX, "max * 1 s");
	CHECK(jl_max_energy_uj(JL_COEF_MAX, U64MAX) == U64MAX,
	      "1 MW * max ns saturates");
	/* 1 MW for 1e15 ns (11.6 days) = 1e18 uJ; 3 uW * (2^64-1) ns. */
	CHECK(jl_max_energy_uj(JL_COEF_MAX, 1000000000000000ULL) ==
		      1000000000000000000ULL,
	      "1 MW * 1e6 s");
	CHECK(jl_max_energy_uj(3, U64MAX) == 55340232221ULL, "%llu",
	      (unsigned long long)jl_max_energy_uj(3, U64MAX));
	CHECK(jl_max_energy_uj(0, U64MAX) == 0, "0 W");
}

/* ---- frequency bands ------------------------------------------------- */

static int bands_parse_exact(const char *s, size_t len, struct jl_bands *out)
{
	char *b = malloc(len ? len : 1);
	int r;

	memcpy(b, s, len);
	r = jl_bands_parse(b, len, out);
	free(b);
	return r;
}

/* bands parse: N bad inputs refused with *out unchanged, 1-4 bands read */
TEST(bands_parse)
{
	static const struct {
		const char *s;
		int err;
	} bad[] = {
		{ "", -JL_EINVAL },
		{ "\n", -JL_EINVAL },
		{ "# only a comment\n", -JL_EINVAL },
		/* no "max" line, or "max" not last */
		{ "1800 1 2 3 4 5 6 7 8 9\n", -JL_EINVAL },
		{ "max 1 2 3 4 5 6 7 8 9\n2000 1 2 3 4 5 6 7 8 9\n",
		  -JL_EINVAL },
		/* field counts: the six-field form is not a band */
		{ "max 1 2 3 4 5 6\n", -JL_EINVAL },
		{ "max 1 2 3 4 5 6 7 8\n", -JL_EINVAL },
		{ "max 1 2 3 4 5 6 7 8 9 10\n", -JL_EINVAL },
		{ "max\n", -JL_EINVAL },
		{ "1 2 3 4 5 6 7 8 9\n", -JL_EINVAL },
		/* words */
		{ "maxi 1 2 3 4 5 6 7 8 9\n", -JL_EINVAL },
		{ "MAX 1 2 3 4 5 6 7 8 9\n", -JL_EINVAL },
		{ "inf 1 2 3 4 5 6 7 8 9\n", -JL_EINVAL },
		{ "1.8e3 1 2 3 4 5 6 7 8 9\nmax 1 2 3 4 5 6 7 8 9\n",
		  -JL_EINVAL },
		{ "-1800 1 2 3 4 5 6 7 8 9\nmax 1 2 3 4 5 6 7 8 9\n",
		  -JL_EINVAL },
		/* edges must ascend strictly */
		{ "2000 1 2 3 4 5 6 7 8 9\n1800 1 2 3 4 5 6 7 8 9\nmax 1 2 3 4 5 6 7 8 9\n",
		  -JL_EINVAL },
		{ "2000 1 2 3 4 5 6 7 8 9\n2000 1 2 3 4 5 6 7 8 9\nmax 1 2 3 4 5 6 7 8 9\n",
		  -JL_EINVAL },
		/* five bands */
		{ "1 1 2 3 4 5 6 7 8 9\n2 1 2 3 4 5 6 7 8 9\n3 1 2 3 4 5 6 7 8 9\n"
		  "4 1 2 3 4 5 6 7 8 9\nmax 1 2 3 4 5 6 7 8 9\n",
		  -JL_EINVAL },
		/* layout */
		{ "max 1 2 3 4 5 6 7 8 9\n\n", -JL_EINVAL },
		{ "max 1 2 3 4 5 6 7 8 9\r\n", -JL_EINVAL },
		{ "max 1 2 3 4 5 6 7 8 9 # c\n", -JL_EINVAL },
		{ "1800 1 2 3 4 5 6 7 8 9\n# c\nmax 1 2 3 4 5 6 7 8 9\n",
		  -JL_EINVAL },
		{ "1800,1 2 3 4 5 6 7 8 9\nmax 1 2 3 4 5 6 7 8 9\n",
		  -JL_EINVAL },
		/* out of range, once well formed */
		{ "0 1 2 3 4 5 6 7 8 9\nmax 1 2 3 4 5 6 7 8 9\n", -JL_ERANGE },
		{ "100001 1 2 3 4 5 6 7 8 9\nmax 1 2 3 4 5 6 7 8 9\n",
		  -JL_ERANGE },
		{ "max 1 2 3 4 5 6 7 8 1000000000001\n", -JL_ERANGE },
		{ "1800 1000000000001 2 3 4 5 6 7 8 9\nmax 1 2 3 4 5 6 7 8 9\n",
		  -JL_ERANGE },
		/* malformed wins over out of range */
		{ "0 1 2 3 4 5 6 7 8\nmax 1 2 3 4 5 6 7 8 9\n", -JL_EINVAL },
	};
	struct jl_bands b, s;
	unsigned int i;
	int r;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		memset(&b, 0xa5, sizeof(b));
		s = b;
		r = bands_parse_exact(bad[i].s, strlen(bad[i].s), &b);
		CHECK(r == bad[i].err, "bad %u \"%s\": %d want %d", i, bad[i].s,
		      r, bad[i].err);
		CHECK(!memcmp(&b, &s, sizeof(b)), "bad %u: *out modified", i);
	}

	/* One band; comments; blanks; no final newline. */
	{
		static const char one[] =
			"# trained\n  max\t1 2 3 4 5 6 7 8 9 ";

		r = bands_parse_exact(one, strlen(one), &b);
	}
	CHECK(r == 0 && b.nr == 1 && b.set[0].cpu_time_uw == 1 &&
		      b.set[0].pagecache_byte_pj == 8 && b.set[0].idle_uw == 9,
	      "one band: %d nr %u", r, b.nr);
	/* Four bands, the limit; each set in its place. */
	{
		static const char four[] = "1200 10 0 0 0 0 0 0 0 1\n"
					   "2000 20 0 0 0 0 0 0 0 2\n"
					   "2800 30 0 0 0 0 0 0 0 3\n"
					   "max 40 0 0 0 0 0 0 0 4\n";

		r = bands_parse_exact(four, strlen(four), &b);
	}
	CHECK(r == 0 && b.nr == 4 && b.upper_mhz[0] == 1200 &&
		      b.upper_mhz[1] == 2000 && b.upper_mhz[2] == 2800,
	      "four bands: %d nr %u", r, b.nr);
	for (i = 0; i < 4 && r == 0; i++)
		CHECK(b.set[i].cpu_time_uw == 10 * (i + 1) &&
			      b.set[i].idle_uw == i + 1,
		      "band %u set", i);
	/* len stops before a second "max": bytes past len are never read. */
	r = bands_parse_exact("max 1 2 3 4 5 6 7 8 9\nmax 1", 22, &b);
	CHECK(r == 0 && b.nr == 1, "len respected: %d", r);
	TH_LOG("bands parse: %zu bad inputs refused with *out unchanged, 1-4 bands read",
	       ARRAY_SIZE(bad));
}

/* bands format, pick at the edges, round trips, effective frequency */
TEST(bands_format_pick)
{
	char buf[JL_BANDS_TEXT_MAX], small[64];
	struct jl_bands b, back;
	struct jl_coef c;
	unsigned int i, k, fails = 0;
	int n;

	memset(&c, 0, sizeof(c));
	c.cpu_time_uw = 5;
	c.idle_uw = 7;
	jl_bands_single(&b, &c);
	n = jl_bands_format(&b, buf, sizeof(buf));
	CHECK(n == 22 && !strcmp(buf, "max 5 0 0 0 0 0 0 0 7\n"), "%d '%s'", n,
	      buf);
	CHECK(jl_band_pick(&b, 0) == 0 && jl_band_pick(&b, 99999) == 0,
	      "one band covers everything");

	/* Longest text: four bands, top edges, every coefficient 20 digits. */
	b.nr = JL_MAX_BANDS;
	for (i = 0; i < JL_MAX_BANDS; i++) {
		b.upper_mhz[i] = JL_MHZ_MAX - (JL_MAX_BANDS - 1 - i);
		for (k = 0; k < JL_NR_COEF; k++)
			jl_coef_set(&b.set[i], k, U64MAX);
	}
	n = jl_bands_format(&b, buf, sizeof(buf));
	CHECK(n > 0 && n < JL_BANDS_TEXT_MAX, "longest %d of %d", n,
	      JL_BANDS_TEXT_MAX);
	memset(small, 'x', sizeof(small));
	CHECK(jl_bands_format(&b, small, sizeof(small)) == -JL_ERANGE &&
		      small[0] == 'x',
	      "too small: nothing written");

	/* Edges: [0, 1200) [1200, 2000) [2000, 2800) [2800, ...). */
	b.upper_mhz[0] = 1200;
	b.upper_mhz[1] = 2000;
	b.upper_mhz[2] = 2800;
	CHECK(jl_band_pick(&b, 0) == 0 && jl_band_pick(&b, 1199) == 0 &&
		      jl_band_pick(&b, 1200) == 1 &&
		      jl_band_pick(&b, 1999) == 1 &&
		      jl_band_pick(&b, 2000) == 2 &&
		      jl_band_pick(&b, 2800) == 3 &&
		      jl_band_pick(&b, ~0ULL) == 3,
	      "pick at and around every edge");
	b.nr = 2;
	CHECK(jl_band_pick(&b, 5000) == 1 && jl_band_pick(&b, 100) == 0,
	      "two bands: the second edge unused");

	/* Round trips of random banded models. */
	for (i = 0; i < 3000; i++) {
		unsigned int nr = 1 + (unsigned int)rnd_below(JL_MAX_BANDS);
		jl_u64 e = 0;

		memset(&b, 0, sizeof(b));
		b.nr = nr;
		for (k = 0; k + 1 < nr; k++) {
			e += 1 + rnd_below(20000);
			b.upper_mhz[k] = e;
		}
		for (k = 0; k < nr; k++)
			for (unsigned int f = 0; f < JL_NR_COEF; f++)
				jl_coef_set(&b.set[k], f,
					    rnd_mag() % (JL_COEF_MAX + 1));
		n = jl_bands_format(&b, buf, sizeof(buf));
		memset(&back, 0, sizeof(back));
		if (n <= 0 || bands_parse_exact(buf, (size_t)n, &back) ||
		    back.nr != nr ||
		    memcmp(back.upper_mhz, b.upper_mhz,
			   (nr - 1) * sizeof(jl_u64)) ||
		    memcmp(back.set, b.set, nr * sizeof(struct jl_coef))) {
			if (!fails++)
				DIAG("round trip %u failed: '%s'", i, buf);
		}
	}
	CHECK(!fails, "%u of 3000 round trips failed", fails);

	/* Effective frequency: cycles per ns are GHz. */
	CHECK(jl_freq_mhz(2400000000ULL, 1000000000ULL) == 2400, "2.4 GHz");
	CHECK(jl_freq_mhz(123, 0) == 0, "no CPU time: unknown");
	CHECK(jl_freq_mhz(~0ULL, 1) == 0, "bogus count: unknown");
	CHECK(jl_freq_mhz(999, 1000000) == 0,
	      "under 1 MHz rounds to 0 (unknown)");
}

TEST_HARNESS_MAIN
