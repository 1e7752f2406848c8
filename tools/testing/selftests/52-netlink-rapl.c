// SPDX-License-Identifier: GPL-2.0
/*
 * Netlink records on the measured path: with the synthetic meter
 * (joules_testmeter: pkg 8 W, dram 2 W) registered, samples say rapl,
 * carry exactly the measured domains (absent ones are absent, not zero),
 * and task records and `joulesctl record` rows say rapl too; a request on
 * a kernel socket is refused.
 */
#include "selftest.h"
#include "nl.h"

/*
 * Every test: the synthetic meter loaded with two domains, a socket
 * subscribed to samples; the meter unloaded afterwards, from the parent
 * (also after a crash).
 */
FIXTURE(meter)
{
	struct jnl *nl;
};

FIXTURE_SETUP(meter)
{
	ASSERT_EQ(0, st_meter_subscribe("nr_domains=2", &self->nl));
}

FIXTURE_TEARDOWN_PARENT(meter)
{
	EXPECT_EQ(0, st_meter_unload());
}

/*
 * A request on a kernel socket (no file, so no opener whose rights to
 * check) is refused, not followed into a NULL file: the test meter sends
 * GET_NODE on one and keeps the answer.
 */
TEST_F(meter, a_kernel_socket_is_refused)
{
	static const char ks[] =
		"/sys/module/joules_testmeter/parameters/kernel_socket_request";
	char b[32];
	int n;

	n = snprintf(b, sizeof(b), "%d", jnl_family_id(self->nl));
	ASSERT_EQ(0, st_write(ks, b, n));
	ASSERT_LT(0, st_read(ks, b, sizeof(b)));
	EXPECT_EQ(-EPERM, atoi(b));
}

/* samples with a meter: source rapl, exactly the pkg and dram domains, right power */
TEST_F(meter, samples)
{
	struct jnl *nl = self->nl;
	const uint32_t want_dom = (1u << JL_D_PKG) | (1u << JL_D_DRAM);
	struct sample_rec s[4];
	int got = st_samples(nl, s, 4);

	/* The first one may straddle the meter's arrival. */
	for (int i = 1; i < got; i++) {
		double pkg_w = (double)s[i].domain_uj[JL_D_PKG] * 1e3 /
			       (double)s[i].interval_ns;
		double dram_w = (double)s[i].domain_uj[JL_D_DRAM] * 1e3 /
				(double)s[i].interval_ns;

		CHECK(s[i].source == REC_SRC_RAPL, "source %u", s[i].source);
		CHECK(s[i].domains == want_dom, "domains %#x", s[i].domains);
		CHECK(!s[i].domain_uj[JL_D_CORE] && !s[i].domain_uj[JL_D_PSYS],
		      "unmeasured domains carry values");
		CHECK(s[i].energy_uj == s[i].domain_uj[JL_D_PKG] +
						s[i].domain_uj[JL_D_DRAM],
		      "energy %llu vs pkg %llu + dram %llu",
		      (unsigned long long)s[i].energy_uj,
		      (unsigned long long)s[i].domain_uj[JL_D_PKG],
		      (unsigned long long)s[i].domain_uj[JL_D_DRAM]);
		CHECK(pkg_w > 7.6 && pkg_w < 8.4, "pkg %.3f W, meter draws 8 W",
		      pkg_w);
		CHECK(dram_w > 1.9 && dram_w < 2.1,
		      "dram %.3f W, meter draws 2 W", dram_w);
		if (i == 1)
			DIAG("sample: energy %llu uJ in %llu ns (pkg %.3f W, dram %.3f W)",
			     (unsigned long long)s[i].energy_uj,
			     (unsigned long long)s[i].interval_ns, pkg_w,
			     dram_w);
	}
	CHECK(got == 4, "%d samples", got);
}

/* task record after burning CPU under the meter: rapl source, a pkg share */
TEST_F(meter, task)
{
	struct task_rec t;
	struct jnl *nl;
	int err;

	ASSERT_EQ(0, jnl_open(&nl));

	st_burn_cpu(0.2);
	usleep(3 * st_interval_ms() * 1000);
	err = jnl_get_task(nl, getpid(), false, &t);
	CHECK(err == 0, "GET_TASK: %d", err);
	if (!err) {
		CHECK(t.source & REC_SRC_RAPL, "source %u", t.source);
		CHECK(t.domains & (1u << JL_D_PKG), "domains %#x", t.domains);
		CHECK(!(t.domains & ((1u << JL_D_CORE) | (1u << JL_D_PSYS))),
		      "domains %#x", t.domains);
		CHECK(t.domain_uj[JL_D_PKG] > 0, "pkg share %llu",
		      (unsigned long long)t.domain_uj[JL_D_PKG]);
	}
	jnl_close(nl);
}

/* record under the meter: the source column is rapl */
TEST_F(meter, record_csv)
{
	char buf[4096], *row, *f;
	int rc, fields = 0;

	rc = st_sh(
		"/usr/bin/joulesctl record --count 3 /tmp/rapl.csv 2>/dev/null");
	CHECK(rc == 0, "record exit %d", rc);
	if (st_read("/tmp/rapl.csv", buf, sizeof(buf)) <= 0)
		return;
	/* Last row: its source column (the 4th) says rapl. */
	buf[strlen(buf) - 1] = 0;
	row = strrchr(buf, '\n');
	row = row ? row + 1 : buf;
	for (f = row; f && fields < 3; fields++)
		f = strchr(f, ',') ? strchr(f, ',') + 1 : NULL;
	CHECK(f && !strncmp(f, "rapl,", 5), "row '%s'", row);
}

int main(int argc, char **argv)
{
	if (access(JOULES_SYSFS, F_OK)) {
		printf("1..0 # SKIP joules module not loaded\n");
		return KSFT_SKIP;
	}
	if (access(ST_METER, F_OK)) {
		printf("1..0 # SKIP no %s\n", ST_METER);
		return KSFT_SKIP;
	}
	return test_harness_run(argc, argv);
}
