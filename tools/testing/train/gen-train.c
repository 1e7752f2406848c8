// SPDX-License-Identifier: GPL-2.0
/*
 * gen-train: synthetic joules-train inputs from known coefficients (see
 * gen.h for the node and meter it simulates). Prints the true coefficient
 * line.
 *
 *   gen-train -n N -s SAMPLES.csv -p PDU.csv [--no-pmu] [--extra] [--ts s|ms|iso]
 *             [--noise FRACTION] [--seed N] [--interval-ms MS]
 *             [--meter-ms MS] [--meter instant|average] [--spread S]
 *             [--phase-rows R] [--truth "CPU CYC INS MISS DISK [TX RX PC] IDLE"]
 *             [--bands "MHZ c0 .. c8;..;max c0 .. c8"]
 *             [--change-row ROW --truth2 "c0 .. c8"] [--bogus ROW:N:WATTS]
 *             [--stall ROW:N]
 * --extra also generates socket bytes and page-cache reads. --bands makes
 * the truth depend on the row's clock frequency (one set per band, the
 * jl_bands text form with ';' for newlines) and prints that form.
 * For --follow tests: --change-row switches the truth to --truth2 from
 * that row on; --bogus makes the meter read WATTS for N rows, --stall
 * drops their readings.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

static void usage(void)
{
	fputs("usage: gen-train -n N -s SAMPLES.csv -p PDU.csv [--no-pmu] [--extra] "
	      "[--ts s|ms|iso] [--noise F] [--seed N] [--interval-ms MS] "
	      "[--meter-ms MS] [--meter instant|average] [--spread S] "
	      "[--phase-rows R] [--truth \"CPU CYC INS MISS DISK [TX RX PC] IDLE\"] "
	      "[--bands \"MHZ c0 .. c8;..;max c0 .. c8\"]\n",
	      stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	const char *sname = NULL, *pname = NULL;
	struct gen_opts o;
	char line[256];
	FILE *s, *p;
	int a;

	gen_defaults(&o);
	for (a = 1; a < argc; a++) {
		const char *opt = argv[a],
			   *v = a + 1 < argc ? argv[a + 1] : NULL;

		if (!strcmp(opt, "--no-pmu")) {
			o.pmu = 0;
			continue;
		}
		if (!strcmp(opt, "--extra")) {
			o.extra = 1;
			continue;
		}
		if (!v)
			usage();
		a++;
		if (!strcmp(opt, "-n"))
			o.n = strtol(v, NULL, 10);
		else if (!strcmp(opt, "-s"))
			sname = v;
		else if (!strcmp(opt, "-p"))
			pname = v;
		else if (!strcmp(opt, "--noise"))
			o.noise = strtod(v, NULL);
		else if (!strcmp(opt, "--seed"))
			o.seed = strtoull(v, NULL, 10);
		else if (!strcmp(opt, "--interval-ms"))
			o.ivl_ms = strtod(v, NULL);
		else if (!strcmp(opt, "--meter-ms"))
			o.meter_ms = strtod(v, NULL);
		else if (!strcmp(opt, "--meter"))
			o.meter = !strcmp(v, "average") ? GEN_AVERAGE :
							  GEN_INSTANT;
		else if (!strcmp(opt, "--spread"))
			o.spread = strtod(v, NULL);
		else if (!strcmp(opt, "--phase-rows"))
			o.phase_rows = strtod(v, NULL);
		else if (!strcmp(opt, "--change-row"))
			o.change_row = strtol(v, NULL, 10);
		else if (!strcmp(opt, "--truth2")) {
			double *t = o.truth2;

			if (sscanf(v, "%lf %lf %lf %lf %lf %lf %lf %lf %lf",
				   &t[0], &t[1], &t[2], &t[3], &t[4], &t[5],
				   &t[6], &t[7], &t[8]) != JL_NR_COEF)
				usage();
		} else if (!strcmp(opt, "--bogus")) {
			if (sscanf(v, "%ld:%ld:%lf", &o.bogus_row, &o.bogus_n,
				   &o.bogus_w) != 3)
				usage();
		} else if (!strcmp(opt, "--stall")) {
			if (sscanf(v, "%ld:%ld", &o.bogus_row, &o.bogus_n) != 2)
				usage();
			o.stall = 1;
		} else if (!strcmp(opt, "--bands")) {
			if (gen_parse_bands(&o, v))
				usage();
		} else if (!strcmp(opt, "--truth")) {
			double t[JL_NR_COEF];
			int k = sscanf(v, "%lf %lf %lf %lf %lf %lf %lf %lf %lf",
				       &t[0], &t[1], &t[2], &t[3], &t[4], &t[5],
				       &t[6], &t[7], &t[8]);

			/* Nine fields, or the six of the first layout. */
			if (k == JL_NR_COEF) {
				memcpy(o.truth, t, sizeof(t));
			} else if (k == JL_NR_COEF_V1) {
				memcpy(o.truth, t, 5 * sizeof(t[0]));
				o.truth[GEN_IDLE] = t[5];
			} else {
				usage();
			}
		} else if (!strcmp(opt, "--ts"))
			o.ts = !strcmp(v, "ms")	 ? GEN_TS_MS :
			       !strcmp(v, "iso") ? GEN_TS_ISO :
						   GEN_TS_S;
		else
			usage();
	}
	if (!sname || !pname || o.n < 1 || o.ivl_ms < 10)
		usage();
	s = fopen(sname, "w");
	p = fopen(pname, "w");
	if (!s || !p) {
		perror("gen-train");
		return 1;
	}
	if (gen_write(&o, s, p) | fclose(s) | fclose(p)) {
		perror("gen-train");
		return 1;
	}
	if (o.nbands >= 2) {
		/* The truth as the trainer writes it. */
		for (a = 0; a < o.nbands; a++) {
			if (a + 1 < o.nbands)
				printf("%.0f", o.band_upper[a]);
			else
				fputs("max", stdout);
			for (int i = 0; i < JL_NR_COEF; i++)
				printf(" %.0f", o.band_truth[a][i]);
			putchar('\n');
		}
		return 0;
	}
	gen_truth_line(&o, line, sizeof(line));
	puts(line);
	return 0;
}
