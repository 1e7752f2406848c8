// SPDX-License-Identifier: GPL-2.0
/*
 * Synthetic joules-train inputs from known coefficients: a samples CSV in
 * the `joulesctl record` format and a meter CSV whose piecewise-linear
 * power integrates to each interval's energy (flat within an interval,
 * 1 ms ramps between intervals). Prints the true coefficient line.
 *
 *   gen-train -n N -s SAMPLES.csv -p PDU.csv [--no-pmu] [--ts s|ms|iso]
 *             [--noise FRACTION] [--seed N] [--interval-ms MS]
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* cpu_time_uw cycles_pj instructions_pj cache_miss_pj disk_byte_pj idle_uw */
static const double truth[6] = { 6e6, 1000, 500, 50000, 10000, 40e6 };

static uint64_t rng = 0x2545f4914f6cdd1dULL;

static double unif(double lo, double hi)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return lo + (hi - lo) * (double)((rng * 2685821657736338717ULL) >> 11) *
			    0x1.0p-53;
}

static double gauss(void)
{
	return sqrt(-2 * log(unif(1e-12, 1))) * cos(2 * M_PI * unif(0, 1));
}

enum ts { TS_S, TS_MS, TS_ISO };

static void put_ts(FILE *fp, int64_t ns, enum ts ts)
{
	if (ts == TS_S) {
		fprintf(fp, "%lld.%03lld", (long long)(ns / 1000000000),
			(long long)(ns % 1000000000 / 1000000));
	} else if (ts == TS_MS) {
		fprintf(fp, "%lld", (long long)(ns / 1000000));
	} else {
		time_t t = (time_t)(ns / 1000000000);
		struct tm tm;
		char buf[32];

		gmtime_r(&t, &tm);
		strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
		fprintf(fp, "%s.%03lldZ", buf,
			(long long)(ns % 1000000000 / 1000000));
	}
}

static void usage(void)
{
	fputs("usage: gen-train -n N -s SAMPLES.csv -p PDU.csv [--no-pmu] "
	      "[--ts s|ms|iso] [--noise F] [--seed N] [--interval-ms MS]\n",
	      stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	const char *sname = NULL, *pname = NULL;
	double noise = 0.01, ivl_ms = 1000;
	int64_t t = 1796220916000000000LL, t0 = t;
	enum ts ts = TS_S;
	long n = 1000, i;
	int pmu = 1, a;
	FILE *s, *p;

	for (a = 1; a < argc; a++) {
		const char *v = a + 1 < argc ? argv[a + 1] : NULL;

		if (!strcmp(argv[a], "--no-pmu")) {
			pmu = 0;
			continue;
		}
		if (!v)
			usage();
		a++;
		if (!strcmp(argv[a - 1], "-n"))
			n = strtol(v, NULL, 10);
		else if (!strcmp(argv[a - 1], "-s"))
			sname = v;
		else if (!strcmp(argv[a - 1], "-p"))
			pname = v;
		else if (!strcmp(argv[a - 1], "--noise"))
			noise = strtod(v, NULL);
		else if (!strcmp(argv[a - 1], "--seed"))
			rng = strtoull(v, NULL, 10) * 0x9e3779b97f4a7c15ULL + 1;
		else if (!strcmp(argv[a - 1], "--interval-ms"))
			ivl_ms = strtod(v, NULL);
		else if (!strcmp(argv[a - 1], "--ts"))
			ts = !strcmp(v, "ms")  ? TS_MS :
			     !strcmp(v, "iso") ? TS_ISO :
						 TS_S;
		else
			usage();
	}
	if (!sname || !pname || n < 1 || ivl_ms < 10)
		usage();
	s = fopen(sname, "w");
	p = fopen(pname, "w");
	if (!s || !p) {
		perror("gen-train");
		return 1;
	}
	fputs("realtime_ns,monotonic_ns,interval_ns,source,model_generation,"
	      "energy_uj,idle_uj,cpu_ns,cycles,instructions,cache_misses,"
	      "disk_bytes,tasks\n",
	      s);
	fputs("timestamp,watts\n", p);
	for (i = 0; i < n; i++) {
		double len = nearbyint(ivl_ms * 1e6 * unif(0.95, 1.05));
		double busy = nearbyint(unif(0, 2) * len), f[5], e, w;
		int64_t end = t + (int64_t)len;
		int j;

		f[0] = busy;
		f[1] = nearbyint(busy * unif(1.0, 3.5));
		f[2] = nearbyint(f[1] * unif(0.3, 2.5));
		f[3] = nearbyint(unif(0, 2e8) * len * 1e-9);
		f[4] = unif(0, 1) < 0.3 ? 0 :
					  nearbyint(unif(0, 5e8) * len * 1e-9);
		if (!pmu)
			f[1] = f[2] = f[3] = 0;
		e = (truth[5] * len + truth[0] * f[0]) * 1e-9;
		for (j = 1; j < 5; j++)
			e += truth[j] * f[j] * 1e-6;
		e *= 1 + noise * gauss();
		w = e / len * 1e3;
		fprintf(s, "%lld,%lld,%.0f,%s,1,%.0f,0,%.0f,", (long long)end,
			(long long)(end - t0), len, pmu ? "rapl" : "model",
			e / 2.5, f[0]);
		if (pmu)
			fprintf(s, "%.0f,%.0f,%.0f,", f[1], f[2], f[3]);
		else
			fputs(",,,", s);
		fprintf(s, "%.0f,%d\n", f[4], 3 + (int)(i % 5));
		put_ts(p, t + 1000000, ts);
		fprintf(p, ",%.4f\n", w);
		put_ts(p, end - 1000000, ts);
		fprintf(p, ",%.4f\n", w);
		t = end;
	}
	if (fclose(s) || fclose(p)) {
		perror("gen-train");
		return 1;
	}
	printf("%.0f %.0f %.0f %.0f %.0f %.0f\n", truth[0], pmu ? truth[1] : 0,
	       pmu ? truth[2] : 0, pmu ? truth[3] : 0, truth[4], truth[5]);
	return 0;
}
