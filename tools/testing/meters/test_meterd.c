// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of joules-meterd's core (user/joules-meterd): the
 * configuration file, the accumulator (sums, wraps, resets, refusals)
 * against an independent integer computation, and the METER_FEED message
 * as libnl encodes it. No network, no module.
 *
 *   SEED=N build/test_meterd    replays the randomized trace of seed N
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <netlink/attr.h>

#include "check.h"
#include "jmd.h"
#include "nl.h"
#include "uapi/joules_netlink.h"

/* ---- configuration ---- */

static int parse_text(const char *text, struct jmd_conf *c, char *err,
		      size_t errlen)
{
	FILE *fp = fmemopen((void *)text, strlen(text), "r");
	int r;

	if (!fp)
		return -2;
	r = jmd_conf_parse(fp, "t.conf", c, err, errlen);
	fclose(fp);
	return r;
}

TEST(conf_good)
{
	static struct jmd_conf c;
	char err[512] = "";
	const char *text =
		"# a meter\n"
		"name = rack4-node7\n"
		"interval = 0.5\n"
		"timeout = 0.25\n"
		"max_power = 3000\n"
		"silent_after = 20\n"
		"\n"
		"[snmp pdu1]\n"
		"  host = 127.0.0.1   # comments end lines too? no: a value\n"
		"community = public\n"
		"family = raritan\n"
		"outlet = 4\n"
		"outlet = 5\n"
		"timeout = 1.5\n"
		"[command psu]\n"
		"command = echo 100\n";

	/* '#' starts a comment only at the start of a line: values may hold it. */
	ASSERT_EQ(-1, parse_text(text, &c, err, sizeof(err)));
	CHECK(strstr(err,
		     "t.conf:9: host '127.0.0.1   # comments end lines too? no: a value'"),
	      "err: %s", err);
	text = "# a meter\n"
	       "name = rack4-node7\n"
	       "interval = 0.5\n"
	       "timeout = 0.25\n"
	       "max_power = 3000\n"
	       "silent_after = 20\n"
	       "\n"
	       "[snmp pdu1]\n"
	       "  host = 127.0.0.1\n"
	       "community = public\n"
	       "family = raritan\n"
	       "outlet = 4\n"
	       "outlet = 5\n"
	       "timeout = 1.5\n"
	       "[command psu]\n"
	       "command = echo 100 # not a comment: sh sees it\n";
	ASSERT_EQ(0, parse_text(text, &c, err, sizeof(err)))
	TH_LOG("%s", err);
	EXPECT_STREQ("rack4-node7", c.name);
	EXPECT_EQ(500000000ull, c.interval_ns);
	EXPECT_EQ(3000.0, c.max_power);
	EXPECT_EQ(20000000000ull, c.silent_after_ns);
	ASSERT_EQ(2, c.nin);
	EXPECT_STREQ("pdu1", c.in[0].name);
	EXPECT_STREQ("snmp", c.in[0].be->type);
	EXPECT_EQ(1500, c.in[0].timeout_ms);
	EXPECT_STREQ("psu", c.in[1].name);
	EXPECT_STREQ("command", c.in[1].be->type);
	EXPECT_EQ(250, c.in[1].timeout_ms); /* the top-level default */
	jmd_conf_free(&c);
}

/* Each bad line: the file, its line and the reason. */
TEST(conf_bad_lines)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{ "name = a\nbogus = 1\n", "t.conf:2: unknown key 'bogus'" },
		{ "name = a\ninterval = 0.05\n",
		  "t.conf:2: interval '0.05': want 0.1 to 10 seconds" },
		{ "name = a\ninterval = 11\n",
		  "t.conf:2: interval '11': want 0.1 to 10 seconds" },
		{ "name = a\ninterval = fast\n",
		  "t.conf:2: interval 'fast': " },
		{ "name = a\nmax_power = -5\n",
		  "t.conf:2: max_power '-5': want a positive number of watts" },
		{ "name = 0123456789012345678901234567890123\n",
		  "t.conf:1: name: want 1 to 31 bytes, not 34" },
		{ "name = a\njust words\n", "t.conf:2: want key = value" },
		{ "name = a\n= 5\n", "t.conf:2: a value without its key" },
		{ "name = a\ntimeout =\n", "t.conf:2: timeout: empty value" },
		{ "name = a\n[snmp\n",
		  "t.conf:2: section header without its ']'" },
		{ "name = a\n[modbus m]\n",
		  "t.conf:2: unknown section type 'modbus'" },
		{ "name = a\n[command]\n",
		  "t.conf:2: section: want [TYPE NAME]" },
		{ "name = a\n[command x]\ncommand = true\n[command x]\ncommand = true\n",
		  "t.conf:4: a second input named 'x'" },
		{ "name = a\n[command x]\nprogram = true\n",
		  "t.conf:3: unknown key 'program' (want command)" },
		{ "name = a\n[command x]\n\n# nothing\n[command y]\ncommand = true\n",
		  "t.conf:2: [command x]: no 'command'" },
		{ "name = a\n[command x]\ncommand = true\ntimeout = 99\n",
		  "t.conf:4: timeout '99': want 0.01 to 60 seconds" },
		{ "name = a\n[snmp p]\nhost = h\nport = 70000\n",
		  "t.conf:4: port '70000': want 1 to 65535" },
		{ "name = a\n[snmp p]\nhost = h\nversion = 1\n",
		  "t.conf:4: version '1': want 2c or 3" },
		{ "name = a\n[snmp p]\nhost = h\nfamily = cisco\n",
		  "t.conf:4: family 'cisco': want raritan, apc, servertech or eaton" },
		{ "name = a\n[snmp p]\nhost = h\noutlet = four\n",
		  "t.conf:4: outlet 'four': want a number" },
		{ "name = a\n[snmp p]\nhost = h\noid = 1.3.x\n",
		  "t.conf:4: oid '1.3.x': want a numeric OID" },
		{ "name = a\n[snmp p]\nhost = h\nkind = volts\n",
		  "t.conf:4: kind 'volts': want power or energy" },
		{ "name = a\n[snmp p]\nhost = h\nscale = 0\n",
		  "t.conf:4: scale '0': want a positive number" },
		{ "name = a\n[snmp p]\nhost = h\ncommunity = c\ncommunity = d\n",
		  "t.conf:5: community: given twice" },
		{ "name = a\n[snmp p]\nhost = h\nfamily = apc\noutlet = 1\n",
		  "t.conf:2: [snmp p]: version 2c needs a 'community'" },
		{ "name = a\n[snmp p]\nhost = h\ncommunity = c\noutlet = 1\n",
		  "t.conf:2: [snmp p]: outlet 1: needs a 'family'" },
		{ "name = a\n[snmp p]\nhost = h\ncommunity = c\nfamily = apc\ninlet = 1\nkind = energy\n",
		  "t.conf:2: [snmp p]: family apc has no inlet energy built in" },
		{ "name = a\n[snmp p]\nhost = h\nversion = 3\nuser = u\nauth_password = short\noutlet = 1\nfamily = apc\n",
		  "t.conf:2: [snmp p]: SNMPv3 passwords have at least 8 characters" },
		{ "name = a\n[snmp p]\nhost = h\nversion = 3\nuser = u\nsecurity_level = authPriv\n"
		  "auth_password = 12345678\noutlet = 1\nfamily = apc\n",
		  "t.conf:2: [snmp p]: authPriv needs a 'priv_password'" },
		{ "name = a\n[snmp p]\nhost = h\nauth_protocol = SHA1\n",
		  "t.conf:4: auth_protocol 'SHA1': want SHA, SHA-256 or MD5" },
		{ "name = a\n", "t.conf: no input" },
		{ "[command x]\ncommand = true\n", "t.conf: no 'name'" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		static struct jmd_conf c;
		char err[512] = "";
		int r = parse_text(cases[i].text, &c, err, sizeof(err));

		CHECK(r == -1, "case %zu accepted", i);
		CHECK(!strncmp(err, cases[i].want, strlen(cases[i].want)),
		      "case %zu: got '%s', want '%s...'", i, err,
		      cases[i].want);
	}
}

/* ipmi.c may not be in this build: then its sections say so. */
TEST(conf_ipmi_absent_or_present)
{
	extern const struct jmd_backend jmd_ipmi_backend __attribute__((weak));
	static struct jmd_conf c;
	char err[512] = "";
	int r = parse_text("name = a\n[ipmi bmc]\n", &c, err, sizeof(err));

	if (!&jmd_ipmi_backend) {
		EXPECT_EQ(-1, r);
		CHECK(!strcmp(err, "t.conf:2: ipmi: not built in"), "err: %s",
		      err);
	} else {
		TH_LOG("ipmi backend built in: an empty section: %s",
		       r ? err : "accepted");
		if (!r)
			jmd_conf_free(&c);
	}
}

static int write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0)
		return -1;
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		close(fd);
		return -1;
	}
	close(fd);
	return chmod(path, mode);
}

TEST(conf_permissions)
{
	static const struct {
		mode_t mode;
		const char *want; /* NULL: accepted */
	} cases[] = {
		{ 0600, NULL },
		{ 0400, NULL },
		{ 0640, NULL },
		{ 0644, "readable by others" },
		{ 0604, "readable by others" },
		{ 0620, "writable by its group" },
		{ 0602, "writable by others" },
		{ 0666, "writable by others" },
	};
	char dir[] = "/tmp/jmd-conf-XXXXXX", path[64], link[80], err[512];
	const char *text = "name = a\n[command x]\ncommand = true\n";
	static struct jmd_conf c;

	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/meterd.conf", dir);
	snprintf(link, sizeof(link), "%s/link.conf", dir);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r;

		ASSERT_EQ(0, write_file(path, text, cases[i].mode));
		err[0] = 0;
		r = jmd_conf_load(path, &c, err, sizeof(err));
		if (!cases[i].want) {
			CHECK(r == 0, "mode %o refused: %s", cases[i].mode,
			      err);
			jmd_conf_free(&c);
		} else {
			CHECK(r == -1 && strstr(err, cases[i].want) &&
				      strstr(err, "holds credentials") &&
				      strstr(err, path),
			      "mode %o: '%s'", cases[i].mode, err);
		}
	}
	/* Someone else's file (needs root to make one). */
	ASSERT_EQ(0, write_file(path, text, 0600));
	if (geteuid() == 0) {
		ASSERT_EQ(0, chown(path, 65534, 65534));
		CHECK(jmd_conf_load(path, &c, err, sizeof(err)) == -1 &&
			      strstr(err, "owned by uid 65534"),
		      "err: %s", err);
		ASSERT_EQ(0, chown(path, 0, 0));
	} else {
		TH_LOG("not root: a file of another user cannot be made here");
	}
	/* A symbolic link is not followed. */
	ASSERT_EQ(0, symlink(path, link));
	CHECK(jmd_conf_load(link, &c, err, sizeof(err)) == -1 &&
		      strstr(err, "symbolic link"),
	      "err: %s", err);
	unlink(link);
	unlink(path);
	rmdir(dir);
}

/* ---- accumulator ---- */

static struct jmd_sample P(double w, const char *label) {
	struct jmd_sample s = { .kind = JMD_POWER, .value = w };

	snprintf(s.label, sizeof(s.label), "%s", label);
	return s;
}

static struct jmd_sample
E(double j, double wrap, const char *label) {
	struct jmd_sample s = { .kind = JMD_ENERGY,
				.value = j,
				.wrap_j = wrap };

	snprintf(s.label, sizeof(s.label), "%s", label);
	return s;
}

#define SEC 1000000000ull

/* Two PSUs summed; trapezoid between readings. */
TEST(acc_power_sum)
{
	struct jmd_sample a[2] = { P(100, "PSU1"), P(50.5, "PSU2") };
	const struct jmd_sample *s[1] = { a };
	size_t n[1] = { 2 };
	struct jmd_step st;
	struct jmd_acc acc;

	jmd_acc_init(&acc, 1, 1000, 0);
	jmd_acc_step(&acc, 10 * SEC, s, n, &st);
	EXPECT_TRUE(st.feed);
	EXPECT_TRUE(st.reset);
	EXPECT_EQ(0, st.uj);
	EXPECT_TRUE(st.have_watts);
	EXPECT_EQ(150.5, st.watts);
	a[0].value = 200; /* 150.5 W -> 250.5 W over 2 s: 401 J */
	jmd_acc_step(&acc, 12 * SEC, s, n, &st);
	EXPECT_TRUE(st.feed);
	EXPECT_FALSE(st.reset);
	EXPECT_EQ(401000000ull, st.uj);
	EXPECT_EQ(250.5, st.watts);
}

/* A counter that wraps at 1000 J; another that resets. */
TEST(acc_wrap_and_reset)
{
	struct jmd_sample a[2] = { E(990, 1000, "wraps"), E(500, 0, "resets") };
	const struct jmd_sample *s[1] = { a };
	size_t n[1] = { 2 };
	struct jmd_step st;
	struct jmd_acc acc;

	jmd_acc_init(&acc, 1, 1000, 0);
	jmd_acc_step(&acc, 1 * SEC, s, n, &st);
	EXPECT_TRUE(st.feed && st.reset);
	EXPECT_FALSE(st.have_watts); /* counters: no rate on a baseline */
	a[0].value = 10; /* +20 J through the wrap */
	a[1].value = 530; /* +30 J */
	jmd_acc_step(&acc, 2 * SEC, s, n, &st);
	EXPECT_TRUE(st.feed);
	EXPECT_FALSE(st.reset);
	EXPECT_EQ(50000000ull, st.uj);
	EXPECT_EQ(50.0, st.watts);
	a[0].value = 30; /* +20 J */
	a[1].value = 5; /* went back, no modulus: a reset, never negative */
	jmd_acc_step(&acc, 3 * SEC, s, n, &st);
	EXPECT_TRUE(st.feed);
	EXPECT_TRUE(st.reset);
	EXPECT_EQ(70000000ull, st.uj);
	EXPECT_FALSE(st.have_watts);
	a[0].value = 40; /* +10 J */
	a[1].value = 15; /* +10 J from the new baseline */
	jmd_acc_step(&acc, 4 * SEC, s, n, &st);
	EXPECT_TRUE(st.feed);
	EXPECT_FALSE(st.reset);
	EXPECT_EQ(90000000ull, st.uj);
}

/* Absurd readings are refused, never fed; the next good one is a baseline. */
TEST(acc_absurd)
{
	static const struct {
		struct jmd_sample s;
		const char *why;
	} bad[] = {
		{ { .kind = JMD_POWER, .value = NAN, .label = "x" },
		  "not a number" },
		{ { .kind = JMD_POWER, .value = INFINITY, .label = "x" },
		  "not a number" },
		{ { .kind = JMD_POWER, .value = -1, .label = "x" },
		  "negative power" },
		{ { .kind = JMD_POWER, .value = 1000.5, .label = "x" },
		  "above max_power" },
		{ { .kind = JMD_ENERGY, .value = -3, .label = "e" },
		  "negative energy" },
		/* 110 J + 1090 J in 1 s: 1090 W */
		{ { .kind = JMD_ENERGY, .value = 1200, .label = "e" },
		  "energy jump" },
		/* a wrap implying 900 J + 1e6 J in 1 s */
		{ { .kind = JMD_ENERGY,
		    .value = 1,
		    .wrap_j = 1e6,
		    .label = "w" },
		  "energy jump" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct jmd_sample a[3] = { P(300, "p"), E(100, 0, "e"),
					   E(900, 1e6, "w") };
		const struct jmd_sample *s[1] = { a };
		size_t n[1] = { 3 };
		struct jmd_step st;
		struct jmd_acc acc;
		uint64_t before;

		jmd_acc_init(&acc, 1, 1000, 0);
		jmd_acc_step(&acc, 1 * SEC, s, n, &st);
		a[1].value = 110;
		a[2].value = 910;
		jmd_acc_step(&acc, 2 * SEC, s, n, &st);
		ASSERT_TRUE(st.feed && !st.reset);
		before = st.uj;
		if (!strcmp(bad[i].s.label, "x"))
			a[0] = bad[i].s;
		else if (!strcmp(bad[i].s.label, "e"))
			a[1] = bad[i].s;
		else
			a[2] = bad[i].s;
		jmd_acc_step(&acc, 3 * SEC, s, n, &st);
		CHECK(!st.feed && strstr(st.why, bad[i].why),
		      "case %zu: feed %d '%s'", i, st.feed, st.why);
		/* Back to sane values: fed again, as a new baseline. */
		a[0] = P(300, "p");
		a[1] = E(130, 0, "e");
		a[2] = E(930, 1e6, "w");
		jmd_acc_step(&acc, 4 * SEC, s, n, &st);
		CHECK(st.feed && st.reset && st.uj == before,
		      "case %zu: after: feed %d reset %d uj %llu (was %llu)", i,
		      st.feed, st.reset, (unsigned long long)st.uj,
		      (unsigned long long)before);
	}
	/* The sum of PSUs each below max_power may still be above it. */
	{
		struct jmd_sample a[2] = { P(600, "1"), P(600, "2") };
		const struct jmd_sample *s[1] = { a };
		size_t n[1] = { 2 };
		struct jmd_step st;
		struct jmd_acc acc;

		jmd_acc_init(&acc, 1, 1000, 0);
		jmd_acc_step(&acc, 1 * SEC, s, n, &st);
		CHECK(!st.feed && strstr(st.why, "power sum 1200.000 W"),
		      "'%s'", st.why);
	}
}

/* Readings further apart than max_gap: a new baseline, not a slope. */
TEST(acc_gap)
{
	struct jmd_sample a[1] = { P(100, "p") };
	const struct jmd_sample *s[1] = { a };
	size_t n[1] = { 1 };
	struct jmd_step st;
	struct jmd_acc acc;

	jmd_acc_init(&acc, 1, 1000, 5 * SEC);
	jmd_acc_step(&acc, 1 * SEC, s, n, &st);
	jmd_acc_step(&acc, 2 * SEC, s, n, &st);
	EXPECT_EQ(100000000ull, st.uj);
	jmd_acc_step(&acc, 8 * SEC, s, n, &st);
	EXPECT_TRUE(st.feed && st.reset);
	EXPECT_EQ(100000000ull, st.uj);
	jmd_acc_gap(&acc); /* an input failed */
	jmd_acc_step(&acc, 9 * SEC, s, n, &st);
	EXPECT_TRUE(st.feed && st.reset);
	EXPECT_EQ(100000000ull, st.uj);
}

/*
 * A random trace of two inputs against integer uJ arithmetic: a PDU with
 * two outlets' power, and a BMC with a wrapping energy counter and a PDU
 * energy counter without modulus that now and then restarts from about 0;
 * with absurd readings and failed intervals. Integer watts, integer
 * joules and whole milliseconds make every true value an integer number
 * of uJ: (P0 + P1) * dt_ms * 500 for the trapezoid, dE * 1e6 for the
 * counters. The accumulator computes in long double from double seconds:
 * each step may be off by a few 1e-7 uJ of rounding, and the value fed is
 * truncated, so the tolerance is 1 uJ (below the oracle, never above).
 */
TEST(acc_random_trace)
{
	const char *env = getenv("SEED");
	unsigned int seed =
		env ? (unsigned int)strtoul(env, NULL, 0) :
		      (unsigned int)time(NULL) ^ (unsigned int)getpid();
	const uint64_t wrap = 1u << 20; /* J */
	uint64_t t_ms = 1000, bmc, pdu, oracle = 0, prev_p = 0;
	bool base = true;
	int fed = 0, resets = 0, refused = 0, gaps = 0, wraps = 0;
	struct jmd_acc acc;

	ksft_print_msg("acc_random_trace: SEED=%u (set SEED to replay)\n",
		       seed);
	srandom(seed);
	bmc = (uint64_t)random() % wrap;
	pdu = (uint64_t)random() % 100000;
	jmd_acc_init(&acc, 2, 5000, 0);
	for (int step = 0; step < 20000; step++) {
		struct jmd_sample a[2], b[2];
		const struct jmd_sample *s[2] = { a, b };
		size_t n[2] = { 2, 2 };
		uint64_t p0 = (uint64_t)random() % 1500,
			 p1 = (uint64_t)random() % 1500;
		uint64_t dt = 100 + (uint64_t)random() % 1900;
		uint64_t d_bmc = (uint64_t)random() % (2 * dt); /* < 2000 W */
		uint64_t d_pdu = (uint64_t)random() % (2 * dt);
		int ev = (int)(random() % 100);
		bool want_reset = base, absurd = false;
		struct jmd_step st;

		t_ms += dt;
		wraps += bmc + d_bmc >= wrap;
		bmc = (bmc + d_bmc) % wrap;
		if (ev < 3) { /* the PDU's counter restarts */
			uint64_t v = (uint64_t)random() % 10;

			/* Only a decrease can tell: not below, it counts. */
			if (v < pdu)
				want_reset = true;
			else
				d_pdu = v - pdu;
			pdu = v;
		} else {
			pdu += d_pdu;
		}
		a[0] = P((double)p0, "outlet 1");
		a[1] = P((double)p1, "outlet 2");
		b[0] = E((double)bmc, (double)wrap, "bmc");
		b[1] = E((double)pdu, 0, "pdu");
		if (ev >= 3 && ev < 5 && !base) {
			/*
			 * A glitch: half the modulus away, at least 262144 W
			 * over 2 s. (On a new baseline nothing tells a glitch
			 * from a value: it is not tried there.)
			 */
			b[0].value = (double)((bmc + wrap / 2) % wrap);
			absurd = true;
		} else if (ev == 5) {
			a[1].value = -1;
			absurd = true;
		} else if (ev == 6) {
			a[0].value = NAN;
			absurd = true;
		} else if (ev == 7) {
			b[1].value = 1e300;
			absurd = !base; /* on a baseline: nothing to compare */
			if (base) /* then it is a value: keep the oracle's */
				b[1].value = (double)pdu;
		}
		if (ev == 8) { /* an input failed: the core is not called */
			jmd_acc_gap(&acc);
			base = true;
			gaps++;
			continue;
		}
		jmd_acc_step(&acc, t_ms * 1000000ull, s, n, &st);
		if (absurd) {
			if (!CHECK(!st.feed,
				   "step %d: absurd reading fed (SEED=%u)",
				   step, seed))
				return;
			base = true;
			refused++;
			continue;
		}
		if (!CHECK(st.feed, "step %d: refused '%s' (SEED=%u)", step,
			   st.why, seed))
			return;
		if (!base) {
			oracle += (prev_p + p0 + p1) * dt * 500;
			oracle += d_bmc * 1000000;
			if (!want_reset)
				oracle += d_pdu * 1000000;
		}
		if (!CHECK(st.reset == want_reset,
			   "step %d: reset %d, want %d (SEED=%u)", step,
			   st.reset, want_reset, seed))
			return;
		if (!CHECK(st.uj + 1 >= oracle && st.uj <= oracle,
			   "step %d: %llu uJ, oracle %llu uJ (SEED=%u)", step,
			   (unsigned long long)st.uj,
			   (unsigned long long)oracle, seed))
			return;
		resets += st.reset;
		fed++;
		prev_p = p0 + p1;
		base = false;
	}
	ksft_print_msg(
		"%d readings fed (%d new baselines), %d refused, %d gaps, "
		"%d wraps; %llu uJ\n",
		fed, resets, refused, gaps, wraps, (unsigned long long)oracle);
}

/* ---- the METER_FEED message ---- */

TEST(feed_message)
{
	struct nla_policy pol[JOULES_A_MAX + 1] = {
		[JOULES_A_METER_NAME] = { .type = NLA_NUL_STRING,
					  .maxlen = 31 },
		[JOULES_A_METER_UJ] = { .type = NLA_U64 },
		[JOULES_A_METER_RESET] = { .type = NLA_FLAG },
	};
	struct nlattr *tb[JOULES_A_MAX + 1];
	unsigned char buf[256];
	int len, count = 0, rem;
	struct nlattr *a;

	len = jnl_meter_payload("rack4-node7", 123456789012345ull, true, buf,
				sizeof(buf));
	ASSERT_GT(len, 0);
	ASSERT_EQ(0,
		  nla_parse(tb, JOULES_A_MAX, (struct nlattr *)buf, len, pol));
	ASSERT_NE(NULL, tb[JOULES_A_METER_NAME]);
	EXPECT_STREQ("rack4-node7", nla_get_string(tb[JOULES_A_METER_NAME]));
	ASSERT_NE(NULL, tb[JOULES_A_METER_UJ]);
	EXPECT_EQ(123456789012345ull, nla_get_u64(tb[JOULES_A_METER_UJ]));
	EXPECT_NE(NULL, tb[JOULES_A_METER_RESET]);
	EXPECT_EQ(NULL, tb[JOULES_A_METER_POWER_UW]);
	/* Exactly three attributes, in this order; nothing else. */
	nla_for_each_attr(a, (struct nlattr *)buf, len, rem)
	{
		static const int order[] = { JOULES_A_METER_NAME,
					     JOULES_A_METER_UJ,
					     JOULES_A_METER_RESET };

		if (count < 3)
			EXPECT_EQ(order[count], nla_type(a));
		count++;
	}
	EXPECT_EQ(3, count);
	/* NAME: "rack4-node7" and its NUL; UJ: 8 bytes; RESET: empty. */
	EXPECT_EQ(4 + 12, nla_len(tb[JOULES_A_METER_NAME]) + 4);
	EXPECT_EQ(8, nla_len(tb[JOULES_A_METER_UJ]));
	EXPECT_EQ(0, nla_len(tb[JOULES_A_METER_RESET]));

	len = jnl_meter_payload("n", 7, false, buf, sizeof(buf));
	ASSERT_GT(len, 0);
	ASSERT_EQ(0,
		  nla_parse(tb, JOULES_A_MAX, (struct nlattr *)buf, len, pol));
	EXPECT_EQ(7ull, nla_get_u64(tb[JOULES_A_METER_UJ]));
	EXPECT_EQ(NULL, tb[JOULES_A_METER_RESET]);

	EXPECT_EQ(-EINVAL,
		  jnl_meter_payload("0123456789012345678901234567890123", 1,
				    false, buf, sizeof(buf)));
	EXPECT_EQ(-EINVAL, jnl_meter_payload("", 1, false, buf, sizeof(buf)));
	EXPECT_EQ(-ENOSPC, jnl_meter_payload("n", 1, false, buf, 8));
}

TEST_HARNESS_MAIN
