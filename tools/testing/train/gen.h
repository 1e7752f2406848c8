/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Synthetic joules-train inputs from known coefficients: a samples CSV in
 * the `joulesctl record` format and a meter CSV. Shared by gen-train (the
 * command) and the host unit test, so both exercise the same recordings.
 *
 * The node's true power is constant within each sample row (the load
 * changes at row boundaries) and equal to the linear model of the row's
 * features. The meter either
 *  - legacy (meter_ms == 0): two readings 1 ms inside each row's ends, so
 *    the piecewise-linear trace integrates to the row's energy; noise is on
 *    the row's energy; or
 *  - a real meter with its own period: readings every meter_ms (phase not
 *    tied to the rows), each the instantaneous power at its time
 *    (GEN_INSTANT) or the mean power over the preceding period
 *    (GEN_AVERAGE, what most PDUs report); noise is on each reading.
 */
#ifndef JOULES_GEN_H
#define JOULES_GEN_H

#include <stdint.h>
#include <stdio.h>

#include "core.h"

#define GEN_MAX_BANDS 4

/* Index of idle_uw in truth[] (the coefficient text order). */
#define GEN_IDLE (JL_NR_COEF - 1)

enum gen_ts { GEN_TS_S, GEN_TS_MS, GEN_TS_ISO };
enum gen_meter { GEN_INSTANT, GEN_AVERAGE };

struct gen_opts {
	long n; /* sample rows */
	double ivl_ms; /* row length (each row varies by +-5%) */
	/* In the coefficient text order (kmod/core.h), idle_uw last. */
	double truth[JL_NR_COEF];
	int pmu; /* 0: cycles, instructions, cache misses are empty */
	/*
	 * 1: socket bytes and page-cache reads are generated; 0: their columns
	 * are empty (a 6.1 kernel), and the load is the same as before they
	 * existed (same random sequence).
	 */
	int extra;
	double noise; /* relative gaussian noise (row energy or reading) */
	enum gen_ts ts;
	uint64_t seed;
	double meter_ms; /* 0: legacy trace; else the meter's period */
	enum gen_meter meter;
	/*
	 * Relative spread of the clock frequency and of instructions per
	 * cycle between load phases; small values make cpu_ns, cycles and
	 * instructions nearly collinear. < 0: the wide default (1.0-3.5 GHz,
	 * IPC 0.3-2.5 per row).
	 */
	double spread;
	/* Rows a load phase lasts on average (1: every row independent). */
	double phase_rows;
	int64_t t0_ns; /* start of the first row, CLOCK_REALTIME */
	/*
	 * A frequency-dependent truth: with nbands >= 2, a row whose effective
	 * frequency (cycles per ns of CPU time, in whole MHz) is below
	 * band_upper[b] (and not below the previous edge) follows
	 * band_truth[b]; the last band has no upper edge. A row without CPU
	 * time stays in the previous row's band, as the module does. truth[]
	 * then only sets the idle power outside the rows.
	 */
	int nbands;
	double band_upper[GEN_MAX_BANDS];
	double band_truth[GEN_MAX_BANDS][JL_NR_COEF];
	/* From row change_row on (> 0), the node follows truth2 instead. */
	long change_row;
	double truth2[JL_NR_COEF];
	/*
	 * Meter faults (legacy meter): the readings of rows [bogus_row,
	 * bogus_row + bogus_n) read bogus_w watts, or (stall) are missing.
	 */
	long bogus_row, bogus_n;
	double bogus_w;
	int stall;
};

/* The defaults of gen-train (a varied, independent load, legacy meter). */
void gen_defaults(struct gen_opts *o);

/* Write both files; returns 0 or -1 (errno set by stdio). */
int gen_write(const struct gen_opts *o, FILE *samples, FILE *pdu);

/* The truth a fit can find: 0 for the features whose columns are empty. */
void gen_effective_truth(const struct gen_opts *o, double *truth);

/*
 * Parse "UPPER c0 .. c8;UPPER ..;max c0 .. c8" into o's bands: 0 or -1.
 * (No core.c here: gen-train builds from this file alone.)
 */
int gen_parse_bands(struct gen_opts *o, const char *spec);

/* The coefficient line the trainer should find (the nine-field form). */
void gen_truth_line(const struct gen_opts *o, char *buf, size_t len);

#endif /* JOULES_GEN_H */
