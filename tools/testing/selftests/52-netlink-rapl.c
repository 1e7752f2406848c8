// SPDX-License-Identifier: GPL-2.0
/*
 * Netlink records on the measured path: with the synthetic meter
 * (joules_testmeter: pkg 8 W, dram 2 W) registered, samples say rapl,
 * carry exactly the measured domains (absent ones are absent, not zero),
 * and task records and `joulesctl record` rows say rapl too.
 */
#include "selftest.h"
#include "nl.h"


static void test_samples(struct jnl *nl)
{
	const uint32_t want_dom = (1u << JL_D_PKG) | (1u << JL_D_DRAM);
	struct sample_rec s[4];
	int got = st_samples(nl, s, 4);

	/* The first one may straddle the meter's arrival. */
	for (int i = 1; i < got; i++) {
		double pkg_w = (double)s[i].domain_uj[JL_D_PKG] * 1e3 /
			       (double)s[i].interval_ns;
		double dram_w = (double)s[i].domain_uj[JL_D_DRAM] * 1e3 /
				(double)s[i].interval_ns;

		tap_check(s[i].source == REC_SRC_RAPL, "source %u",
			  s[i].source);
		tap_check(s[i].domains == want_dom, "domains %#x",
			  s[i].domains);
		tap_check(!s[i].domain_uj[JL_D_CORE] &&
				  !s[i].domain_uj[JL_D_PSYS],
			  "unmeasured domains carry values");
		tap_check(s[i].energy_uj == s[i].domain_uj[JL_D_PKG] +
						    s[i].domain_uj[JL_D_DRAM],
			  "energy %llu vs pkg %llu + dram %llu",
			  (unsigned long long)s[i].energy_uj,
			  (unsigned long long)s[i].domain_uj[JL_D_PKG],
			  (unsigned long long)s[i].domain_uj[JL_D_DRAM]);
		tap_check(pkg_w > 7.6 && pkg_w < 8.4,
			  "pkg %.3f W, meter draws 8 W", pkg_w);
		tap_check(dram_w > 1.9 && dram_w < 2.1,
			  "dram %.3f W, meter draws 2 W", dram_w);
		if (i == 1)
			tap_diag(
				"sample: energy %llu uJ in %llu ns (pkg %.3f W, dram %.3f W)",
				(unsigned long long)s[i].energy_uj,
				(unsigned long long)s[i].interval_ns, pkg_w,
				dram_w);
	}
	tap_check(got == 4, "%d samples", got);
	tap_done(
		"samples with a meter: source rapl, exactly the pkg and dram domains, right power");
}

static void test_task(struct jnl *nl)
{
	struct task_rec t;
	int err;

	st_burn_cpu(0.2);
	usleep(3 * st_interval_ms() * 1000);
	err = jnl_get_task(nl, getpid(), false, &t);
	tap_check(err == 0, "GET_TASK: %d", err);
	if (!err) {
		tap_check(t.source & REC_SRC_RAPL, "source %u", t.source);
		tap_check(t.domains & (1u << JL_D_PKG), "domains %#x",
			  t.domains);
		tap_check(
			!(t.domains & ((1u << JL_D_CORE) | (1u << JL_D_PSYS))),
			"domains %#x", t.domains);
		tap_check(t.domain_uj[JL_D_PKG] > 0, "pkg share %llu",
			  (unsigned long long)t.domain_uj[JL_D_PKG]);
	}
	tap_done(
		"task record after burning CPU under the meter: rapl source, a pkg share");
}

static void test_record_csv(void)
{
	char buf[4096], *row, *f;
	int rc, fields = 0;

	rc = st_sh(
		"/usr/bin/joulesctl record --count 3 /tmp/rapl.csv 2>/dev/null");
	tap_check(rc == 0, "record exit %d", rc);
	if (st_read("/tmp/rapl.csv", buf, sizeof(buf)) <= 0) {
		tap_done("record under the meter");
		return;
	}
	/* Last row: its source column (the 4th) says rapl. */
	buf[strlen(buf) - 1] = 0;
	row = strrchr(buf, '\n');
	row = row ? row + 1 : buf;
	for (f = row; f && fields < 3; fields++)
		f = strchr(f, ',') ? strchr(f, ',') + 1 : NULL;
	tap_check(f && !strncmp(f, "rapl,", 5), "row '%s'", row);
	tap_done("record under the meter: source column is rapl");
}

int main(void)
{
	struct jnl *nl;
	int err;

	if (access(JOULES_SYSFS, F_OK)) {
		printf("1..0 # SKIP joules module not loaded\n");
		return KSFT_SKIP;
	}
	if (access(ST_METER, F_OK)) {
		printf("1..0 # SKIP no %s\n", ST_METER);
		return KSFT_SKIP;
	}
	tap_plan(3);
	if (st_meter_subscribe("nr_domains=2", &nl)) {
		tap_finish();
		return 1;
	}
	test_samples(nl);
	jnl_close(nl);
	err = jnl_open(&nl);
	if (!err) {
		test_task(nl);
		jnl_close(nl);
	} else {
		tap_ok(0, "task record (open: %d)", err);
	}
	test_record_csv();
	if (st_sh("rmmod joules_testmeter"))
		tap_diag("rmmod joules_testmeter failed");
	return tap_finish();
}
