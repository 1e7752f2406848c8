// SPDX-License-Identifier: GPL-2.0
/* Synthetic joules-train recordings from known coefficients (see gen.h). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gen.h"

/*
 * The defaults: 6 W per busy CPU, 40 W idle, every feature mattering; the
 * later features' costs apply only with extra set.
 */
static const double default_truth[JL_NR_COEF] = {
	[0] = 6e6,
	[JL_F_CYCLES] = 1000,
	[JL_F_INSTR] = 500,
	[JL_F_MISSES] = 50000,
	[JL_F_DISK] = 10000,
	[JL_F_NET_TX] = 20000,
	[JL_F_NET_RX] = 15000,
	[JL_F_PAGECACHE] = 2000,
	[GEN_IDLE] = 40e6,
};

struct rng {
	uint64_t s;
};

static double unif(struct rng *r, double lo, double hi)
{
	/* xorshift64*: fast, and the same sequence on every machine */
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return lo + (hi - lo) *
			    (double)((r->s * 2685821657736338717ULL) >> 11) *
			    0x1.0p-53;
}

static double gauss(struct rng *r)
{
	return sqrt(-2 * log(unif(r, 1e-12, 1))) *
	       cos(2 * M_PI * unif(r, 0, 1));
}

void gen_defaults(struct gen_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->n = 1000;
	o->ivl_ms = 1000;
	memcpy(o->truth, default_truth, sizeof(o->truth));
	o->pmu = 1;
	o->noise = 0.01;
	o->ts = GEN_TS_S;
	o->seed = 0;
	o->meter = GEN_INSTANT;
	o->spread = -1;
	o->phase_rows = 1;
	o->t0_ns = 1796220916000000000LL;
}

/* Whether feature f's column has values. */
static int has_feat(const struct gen_opts *o, int f)
{
	if (f == JL_F_CYCLES || f == JL_F_INSTR || f == JL_F_MISSES)
		return o->pmu;
	if (f >= JL_F_NET_TX)
		return o->extra;
	return 1;
}

void gen_effective_truth(const struct gen_opts *o, double *truth)
{
	int i;

	for (i = 0; i < JL_NR_COEF; i++)
		truth[i] = i == GEN_IDLE || has_feat(o, i) ? o->truth[i] : 0;
}

void gen_truth_line(const struct gen_opts *o, char *buf, size_t len)
{
	double t[JL_NR_COEF];
	size_t pos = 0;
	int i;

	gen_effective_truth(o, t);
	buf[0] = 0;
	for (i = 0; i < JL_NR_COEF && pos < len; i++)
		pos += (size_t)snprintf(buf + pos, len - pos, "%s%.0f",
					i ? " " : "", t[i]);
}

int gen_parse_bands(struct gen_opts *o, const char *spec)
{
	const char *p = spec;
	int nb = 0, k, used;

	while (*p) {
		double *t;
		char edge[32];

		if (nb == GEN_MAX_BANDS)
			return -1;
		t = o->band_truth[nb];
		k = sscanf(p, " %31s %lf %lf %lf %lf %lf %lf %lf %lf %lf%n",
			   edge, &t[0], &t[1], &t[2], &t[3], &t[4], &t[5],
			   &t[6], &t[7], &t[8], &used);
		if (k != 1 + JL_NR_COEF)
			return -1;
		o->band_upper[nb] =
			strcmp(edge, "max") ? strtod(edge, NULL) : 0;
		nb++;
		p += used;
		while (*p == ' ' || *p == ';' || *p == '\n')
			p++;
		if (!strcmp(edge, "max"))
			break;
	}
	if (nb < 2 || *p || o->band_upper[nb - 1] != 0)
		return -1;
	o->nbands = nb;
	/* Idle between and around the rows: the lowest band's. */
	o->truth[GEN_IDLE] = o->band_truth[0][GEN_IDLE];
	return 0;
}

static void put_ts(FILE *fp, int64_t ns, enum gen_ts ts)
{
	if (ts == GEN_TS_S) {
		fprintf(fp, "%lld.%03lld", (long long)(ns / 1000000000),
			(long long)(ns % 1000000000 / 1000000));
	} else if (ts == GEN_TS_MS) {
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

/* One load phase: what the node is doing for a while. */
struct phase {
	double level; /* busy CPUs */
	double freq; /* cycles per busy ns */
	double ipc;
	double miss; /* cache misses per s */
	double disk; /* bytes per s */
};

static void new_phase(struct rng *r, const struct gen_opts *o, struct phase *p)
{
	p->level = unif(r, 0, 2);
	if (o->spread < 0) {
		p->freq = 0; /* drawn per row below */
		p->ipc = 0;
	} else {
		p->freq = 2.5 * (1 + o->spread * unif(r, -1, 1));
		p->ipc = 1.2 * (1 + o->spread * unif(r, -1, 1));
	}
	p->miss = unif(r, 0, 2e8);
	p->disk = unif(r, 0, 1) < 0.3 ? 0 : unif(r, 0, 5e8);
}

/* Row i spans [start[i], start[i + 1]] at power w[i] (W). */
struct trace {
	int64_t *start;
	double *w;
	long n;
	double idle_w;
};

/* Power at time t (idle outside the rows). */
static double power_at(const struct trace *tr, long *hint, int64_t t)
{
	long i = *hint;

	if (t < tr->start[0] || t >= tr->start[tr->n])
		return tr->idle_w;
	while (i + 1 < tr->n && tr->start[i + 1] <= t)
		i++;
	while (i > 0 && tr->start[i] > t)
		i--;
	*hint = i;
	return tr->w[i];
}

/* Energy (W ns) over [a, b]. */
static double energy(const struct trace *tr, long *hint, int64_t a, int64_t b)
{
	double e = 0;
	int64_t t = a;

	while (t < b) {
		int64_t next = b;
		long i;

		power_at(tr, hint, t);
		i = *hint;
		if (t < tr->start[0])
			next = tr->start[0] < b ? tr->start[0] : b;
		else if (t < tr->start[tr->n] && tr->start[i + 1] < b)
			next = tr->start[i + 1];
		e += power_at(tr, hint, t) * (double)(next - t);
		t = next;
	}
	return e;
}

int gen_write(const struct gen_opts *o, FILE *s, FILE *p)
{
	struct rng r = { o->seed * 0x9e3779b97f4a7c15ULL +
			 0x2545f4914f6cdd1dULL };
	struct trace tr = { .n = o->n, .idle_w = o->truth[GEN_IDLE] * 1e-6 };
	int64_t t = o->t0_ns;
	struct phase ph;
	long i, left = 0;
	int band = 0;

	if (o->meter_ms > 0) {
		tr.start = malloc((size_t)(o->n + 1) * sizeof(*tr.start));
		tr.w = malloc((size_t)o->n * sizeof(*tr.w));
		if (!tr.start || !tr.w) {
			free(tr.start);
			free(tr.w);
			return -1;
		}
	}
	fputs("realtime_ns,monotonic_ns,interval_ns,source,model_generation,"
	      "energy_uj,idle_uj,cpu_ns,cycles,instructions,cache_misses,"
	      "disk_bytes,tasks,net_tx_bytes,net_rx_bytes,pagecache_bytes,"
	      "freq_mhz,band\n",
	      s);
	fputs("timestamp,watts\n", p);
	for (i = 0; i < o->n; i++) {
		double len = nearbyint(o->ivl_ms * 1e6 * unif(&r, 0.95, 1.05));
		double busy, f[JL_NR_FEATURES] = { 0 }, e, w, freq, ipc, mhz;
		const double *c;
		int64_t end = t + (int64_t)len;
		int j;

		if (left <= 0) {
			new_phase(&r, o, &ph);
			/* geometric phase length with mean phase_rows */
			left = o->phase_rows <= 1 ?
				       1 :
				       1 + (long)(-log(unif(&r, 1e-12, 1)) *
						  (o->phase_rows - 1));
		}
		left--;
		busy = nearbyint(o->phase_rows <= 1 ?
					 unif(&r, 0, 2) * len :
					 ph.level * unif(&r, 0.8, 1.2) * len);
		freq = o->spread < 0 ? unif(&r, 1.0, 3.5) : ph.freq;
		ipc = o->spread < 0 ? unif(&r, 0.3, 2.5) : ph.ipc;
		f[0] = busy;
		f[1] = nearbyint(busy * freq);
		f[2] = nearbyint(f[1] * ipc);
		f[3] = nearbyint(
			(o->phase_rows <= 1 ? unif(&r, 0, 2e8) : ph.miss) *
			len * 1e-9);
		f[4] = o->phase_rows <= 1 ?
			       (unif(&r, 0, 1) < 0.3 ?
					0 :
					nearbyint(unif(&r, 0, 5e8) * len *
						  1e-9)) :
			       nearbyint(ph.disk * len * 1e-9);
		if (!o->pmu)
			f[1] = f[2] = f[3] = 0;
		if (o->extra) {
			/* Sockets busy in a third of the rows; reads cached. */
			int net = unif(&r, 0, 1) < 0.33;

			f[JL_F_NET_TX] =
				net ? nearbyint(unif(&r, 0, 2e8) * len * 1e-9) :
				      0;
			f[JL_F_NET_RX] =
				net ? nearbyint(unif(&r, 0, 3e8) * len * 1e-9) :
				      0;
			f[JL_F_PAGECACHE] =
				nearbyint(unif(&r, 0, 2e9) * len * 1e-9);
		}
		/* The node's clock, known when it ran at all (as the module's). */
		mhz = f[0] > 0 ? floor(nearbyint(busy * freq) * 1e3 / f[0]) : 0;
		if (o->nbands >= 2 && mhz > 0)
			for (band = 0;
			     band + 1 < o->nbands && mhz >= o->band_upper[band];
			     band++)
				;
		c = o->nbands >= 2 ? o->band_truth[band] :
		    o->change_row > 0 && i >= o->change_row ? o->truth2 :
							      o->truth;
		e = (c[GEN_IDLE] * len + c[0] * f[0]) * 1e-9;
		for (j = 1; j < JL_NR_FEATURES; j++)
			e += c[j] * f[j] * 1e-6;
		if (o->meter_ms <= 0)
			e *= 1 + o->noise * gauss(&r);
		w = e / len * 1e3;
		fprintf(s, "%lld,%lld,%.0f,%s,1,%.0f,0,%.0f,", (long long)end,
			(long long)(end - o->t0_ns), len,
			o->pmu ? "rapl" : "model", e / 2.5, f[0]);
		if (o->pmu)
			fprintf(s, "%.0f,%.0f,%.0f,", f[1], f[2], f[3]);
		else
			fputs(",,,", s);
		fprintf(s, "%.0f,%d", f[4], 3 + (int)(i % 5));
		if (o->extra)
			fprintf(s, ",%.0f,%.0f,%.0f", f[JL_F_NET_TX],
				f[JL_F_NET_RX], f[JL_F_PAGECACHE]);
		else
			fputs(",,,", s);
		if (mhz > 0)
			fprintf(s, ",%.0f,%d\n", mhz, band);
		else
			fprintf(s, ",,%d\n", band);
		if (o->meter_ms <= 0 && o->bogus_n > 0 && i >= o->bogus_row &&
		    i < o->bogus_row + o->bogus_n) {
			if (!o->stall) {
				put_ts(p, t + 1000000, o->ts);
				fprintf(p, ",%.4f\n", o->bogus_w);
				put_ts(p, end - 1000000, o->ts);
				fprintf(p, ",%.4f\n", o->bogus_w);
			}
		} else if (o->meter_ms <= 0) {
			put_ts(p, t + 1000000, o->ts);
			fprintf(p, ",%.4f\n", w);
			put_ts(p, end - 1000000, o->ts);
			fprintf(p, ",%.4f\n", w);
		} else {
			tr.start[i] = t;
			tr.w[i] = w;
		}
		t = end;
	}
	if (o->meter_ms > 0) {
		/* Ticks on whole ms, at a phase unrelated to the rows. */
		int64_t per = (int64_t)nearbyint(o->meter_ms * 1e6), k;
		int64_t first = o->t0_ns - per -
				(int64_t)(unif(&r, 0, 1) * (double)per) /
					1000000 * 1000000;
		long hint = 0;

		tr.start[o->n] = t;
		for (k = first; k <= t + 2 * per; k += per) {
			double w = o->meter == GEN_AVERAGE ?
					   energy(&tr, &hint, k - per, k) /
						   (double)per :
					   power_at(&tr, &hint, k);

			w *= 1 + o->noise * gauss(&r);
			put_ts(p, k, o->ts);
			fprintf(p, ",%.4f\n", w);
		}
	}
	free(tr.start);
	free(tr.w);
	return ferror(s) || ferror(p) ? -1 : 0;
}
