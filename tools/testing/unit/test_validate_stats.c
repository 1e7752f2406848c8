// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of joules-validate's statistics and report
 * (user/joules-validate/stats.c). Oracles: values worked out by hand for
 * small tables, the report's text written out in full, and, for random
 * series, a two-pass mean and standard deviation in long double computed
 * here. Randomized: VALIDATE_SEED=N replays a run.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "check.h"

static struct vstat of(const double *x, size_t n)
{
	struct vstat s = { 0 };

	for (size_t i = 0; i < n; i++)
		vstat_add(&s, x[i]);
	return s;
}

static bool near(double a, double b, double rel)
{
	return fabs(a - b) <= rel * fmax(1.0, fmax(fabs(a), fabs(b)));
}

/* By hand: mean 5, squares of deviations 9+1+1+1+0+0+4+16 = 32, 32/7. */
TEST(hand_table)
{
	static const double x[] = { 2, 4, 4, 4, 5, 5, 7, 9 };
	struct vstat s = of(x, 8);
	char buf[64];

	CHECK(s.n == 8, "n %zu", s.n);
	CHECK(vstat_mean(&s) == 5.0, "mean %.17g", vstat_mean(&s));
	CHECK(near(vstat_sd(&s), 2.1380899352993950, 1e-15), "sd %.17g",
	      vstat_sd(&s));
	vstat_fmt(buf, sizeof(buf), &s, 3);
	CHECK(!strcmp(buf, "5.000 ± 2.138"), "'%s'", buf);
}

TEST(small_and_empty)
{
	static const double one[] = { 1.5 }, same[] = { 10, 10, 10 };
	struct vstat e = { 0 }, s1 = of(one, 1), s3 = of(same, 3);
	char buf[64];

	CHECK(isnan(vstat_mean(&e)), "empty mean %g", vstat_mean(&e));
	CHECK(isnan(vstat_sd(&e)), "empty sd %g", vstat_sd(&e));
	vstat_fmt(buf, sizeof(buf), &e, 3);
	CHECK(!strcmp(buf, "-"), "'%s'", buf);
	CHECK(vstat_mean(&s1) == 1.5, "mean %g", vstat_mean(&s1));
	CHECK(isnan(vstat_sd(&s1)), "one value: sd %g, not a number",
	      vstat_sd(&s1));
	vstat_fmt(buf, sizeof(buf), &s1, 2);
	CHECK(!strcmp(buf, "1.50 ± -"), "'%s'", buf);
	CHECK(vstat_sd(&s3) == 0.0, "equal values: sd %.17g", vstat_sd(&s3));
}

/* Large, close values (a node's joules): no cancellation. sd of 1, 2, 3 is 1. */
TEST(large_offset)
{
	static const double x[] = { 1e12 + 1, 1e12 + 2, 1e12 + 3 };
	struct vstat s = of(x, 3);

	CHECK(vstat_mean(&s) == 1e12 + 2, "mean %.17g", vstat_mean(&s));
	CHECK(near(vstat_sd(&s), 1.0, 1e-6), "sd %.17g", vstat_sd(&s));
}

TEST(ratio)
{
	CHECK(vstat_ratio(3, 4) == 0.75, "%g", vstat_ratio(3, 4));
	CHECK(vstat_ratio(-1, 2) == -0.5, "%g", vstat_ratio(-1, 2));
	CHECK(isnan(vstat_ratio(1, 0)), "1/0: %g", vstat_ratio(1, 0));
	CHECK(isnan(vstat_ratio(NAN, 1)), "NaN/1: %g", vstat_ratio(NAN, 1));
	CHECK(isnan(vstat_ratio(1, NAN)), "1/NaN: %g", vstat_ratio(1, NAN));
}

static char *report(const struct vreport *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	vreport_print(fp, r);
	fclose(fp);
	return buf;
}

/*
 * The whole report for two workloads over two repetitions, by hand: cpu
 * measured 10, 12 (11 ± 1.414, sd = sqrt(2)), attributed alone 9, 11
 * (10 ± 1.414, 10/11 = 0.909), together 5, 6 (5.5 ± 0.707, 5.5/11 =
 * 0.500); network measured once (no sd, nothing to divide).
 */
TEST(report_text)
{
	static const char want[] =
		"joules-validate: 2 repetitions of 3 s per run; node energy from: model,meter\n"
		"idle power: 61.000 ± 1.414 W\n"
		"\n"
		"workload  measured alone (J)  attributed alone (J)  attributed together (J)  alone/measured  together/measured\n"
		"cpu       11.000 ± 1.414      10.000 ± 1.414        5.500 ± 0.707            0.909           0.500\n"
		"network   0.500 ± -           -                     -                        -               -\n"
		"\n"
		"measured alone: the node's energy over the workload's run minus idle power\n"
		"times its duration; attributed: what joules charged the workload's cgroup\n"
		"(its idle share excluded); ratios of the means.\n"
		"conservation, 2 together runs: workloads 11.000001 J + other tasks -0.000002 J"
		" + idle 123.456789 J = 134.456788 J; node 134.456788 J; difference 0 uJ\n"
		"note: running under a hypervisor (QEMU): these figures show that the\n"
		"tool works, not how accurate attribution is.\n";
	struct vreport_row rows[2] = { { .name = "cpu" },
				       { .name = "network" } };
	struct vreport r = {
		.repeat = 2,
		.duration_s = 3,
		.source = "model,meter",
		.rows = rows,
		.nrows = 2,
		.hypervisor = "QEMU",
		.cons = { .runs = 2,
			  .workloads_uj = 11000001,
			  .others_uj = -2,
			  .idle_uj = 123456789,
			  .node_uj = 134456788 },
	};
	char *got;

	vstat_add(&rows[0].measured, 10);
	vstat_add(&rows[0].measured, 12);
	vstat_add(&rows[0].alone, 9);
	vstat_add(&rows[0].alone, 11);
	vstat_add(&rows[0].together, 5);
	vstat_add(&rows[0].together, 6);
	vstat_add(&rows[1].measured, 0.5);
	vstat_add(&r.idle_w, 60);
	vstat_add(&r.idle_w, 62);
	got = report(&r);
	CHECK(!strcmp(got, want), "got:\n%s", got);
	free(got);

	/* Off by 3 uJ, bare metal, one repetition: said, and no note. */
	r.cons.node_uj = 134456791;
	r.cons.runs = 1;
	r.hypervisor = NULL;
	got = report(&r);
	CHECK(strstr(got, "conservation, 1 together run: ") != NULL, "%s", got);
	CHECK(strstr(got, "; node 134.456791 J; difference -3 uJ\n") != NULL,
	      "%s", got);
	CHECK(strstr(got, "hypervisor") == NULL, "%s", got);
	free(got);
}

static uint64_t rng;

static uint64_t rnd(void)
{
	return ck_splitmix64(&rng);
}

/* Uniform in [0, 1). */
static double unif(void)
{
	return (double)(rnd() >> 11) / 9007199254740992.0;
}

/* Random series against a two-pass computation in long double. */
TEST(random_vs_two_pass)
{
	const char *env = getenv("VALIDATE_SEED");
	uint64_t seed = env && *env ? strtoull(env, NULL, 0) : 0x76616c69;
	unsigned int bad = 0;
	double x[64];

	DIAG("seed %#llx (VALIDATE_SEED=%#llx replays)",
	     (unsigned long long)seed, (unsigned long long)seed);
	rng = seed;
	for (int run = 0; run < 2000 && bad < 5; run++) {
		size_t n = 1 + rnd() % 64;
		/* Offsets up to a TJ, spreads from a uJ to a kJ, either sign. */
		double off = (unif() - 0.5) * pow(10, (double)(rnd() % 13));
		double spread = pow(10, (double)(rnd() % 10) - 6);
		long double sum = 0, ss = 0, mean, sd;
		struct vstat s;

		for (size_t i = 0; i < n; i++)
			x[i] = off + (unif() - 0.5) * spread;
		s = of(x, n);
		for (size_t i = 0; i < n; i++)
			sum += x[i];
		mean = sum / n;
		for (size_t i = 0; i < n; i++)
			ss += (x[i] - mean) * (x[i] - mean);
		sd = n > 1 ? sqrtl(ss / (n - 1)) : NAN;
		/*
		 * The mean to double precision of the offset; the sd to a
		 * relative 1e-6 of the spread (rounding of each x is up to
		 * half an ulp of the offset, which the spread must exceed).
		 */
		if (!near(vstat_mean(&s), (double)mean, 1e-13) ||
		    (n > 1 && fabsl(vstat_sd(&s) - sd) >
				      1e-6L * spread + 1e-12L * fabsl(off)) ||
		    (n == 1 && !isnan(vstat_sd(&s)))) {
			bad++;
			DIAG("run %d: n %zu: mean %.17g vs %.17Lg, sd %.17g vs %.17Lg",
			     run, n, vstat_mean(&s), mean, vstat_sd(&s), sd);
		}
	}
	CHECK(!bad, "%u mismatches (seed %#llx)", bad,
	      (unsigned long long)seed);
}

/* A NaN among the values is not hidden as a spread of 0. */
TEST(nan_not_hidden)
{
	const double x[] = { NAN, 1.0 };
	struct vstat s = of(x, 2);

	CHECK(isnan(vstat_sd(&s)), "sd %g with a NaN among the values",
	      vstat_sd(&s));
}

TEST_HARNESS_MAIN
