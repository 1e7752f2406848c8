// SPDX-License-Identifier: GPL-2.0
/* joules-validate's statistics and report table (stats.h). */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "stats.h"

void vstat_add(struct vstat *s, double x)
{
	double d = x - s->mean;

	s->n++;
	s->mean += d / (double)s->n;
	s->m2 += d * (x - s->mean);
}

double vstat_mean(const struct vstat *s)
{
	return s->n ? s->mean : NAN;
}

double vstat_sd(const struct vstat *s)
{
	/* Rounding can leave m2 a hair below 0 for equal values. */
	if (s->n < 2 || isnan(s->m2))
		return NAN;
	return sqrt(fmax(s->m2, 0.0) / (double)(s->n - 1));
}

double vstat_ratio(double num, double den)
{
	if (isnan(num) || isnan(den) || den == 0.0)
		return NAN;
	return num / den;
}

int vstat_fmt(char *buf, size_t len, const struct vstat *s, int prec)
{
	double sd = vstat_sd(s);

	if (!s->n)
		return snprintf(buf, len, "-");
	if (isnan(sd))
		return snprintf(buf, len, "%.*f ± -", prec, vstat_mean(s));
	return snprintf(buf, len, "%.*f ± %.*f", prec, vstat_mean(s), prec, sd);
}

/* Exact microjoules as joules with six decimals (no rounding through double). */
static void fmt_uj(char *buf, size_t len, int64_t uj)
{
	uint64_t a = uj < 0 ? -(uint64_t)uj : (uint64_t)uj;

	snprintf(buf, len, "%s%" PRIu64 ".%06" PRIu64, uj < 0 ? "-" : "",
		 a / 1000000, a % 1000000);
}

static void fmt_ratio(char *buf, size_t len, double r)
{
	if (isnan(r))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.3f", r);
}

/*
 * Column widths: display width, not bytes ("±" is two bytes in UTF-8);
 * printf pads by bytes, so pad by hand.
 */
static size_t display_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

static void cell(FILE *fp, const char *s, size_t width, bool last)
{
	size_t w = display_width(s);

	fputs(s, fp);
	if (last)
		return;
	for (; w < width + 2; w++)
		fputc(' ', fp);
}

#define NCOLS 6

/* Row i's cells (i == nrows: the header). */
static void row_cells(const struct vreport *r, size_t i, char cells[NCOLS][64])
{
	static const char *const head[NCOLS] = {
		"workload",
		"measured alone (J)",
		"attributed alone (J)",
		"attributed together (J)",
		"alone/measured",
		"together/measured",
	};
	const struct vreport_row *w = &r->rows[i];
	double m;

	if (i == r->nrows) {
		for (size_t k = 0; k < NCOLS; k++)
			snprintf(cells[k], 64, "%s", head[k]);
		return;
	}
	m = vstat_mean(&w->measured);
	snprintf(cells[0], 64, "%s", w->name);
	vstat_fmt(cells[1], 64, &w->measured, 3);
	vstat_fmt(cells[2], 64, &w->alone, 3);
	vstat_fmt(cells[3], 64, &w->together, 3);
	fmt_ratio(cells[4], 64, vstat_ratio(vstat_mean(&w->alone), m));
	fmt_ratio(cells[5], 64, vstat_ratio(vstat_mean(&w->together), m));
}

void vreport_print(FILE *fp, const struct vreport *r)
{
	char cells[NCOLS][64], a[32], b[32], d[32], e[32], f[32];
	size_t width[NCOLS] = { 0 };
	int64_t sum;

	fprintf(fp,
		"joules-validate: %u repetition%s of %u s per run; node energy from: %s\n",
		r->repeat, r->repeat == 1 ? "" : "s", r->duration_s,
		r->source ? r->source : "?");
	vstat_fmt(a, sizeof(a), &r->idle_w, 3);
	fprintf(fp, "idle power: %s W\n\n", a);

	/* Two passes: the widths, then the cells padded to them. */
	for (size_t i = 0; i <= r->nrows; i++) {
		row_cells(r, i, cells);
		for (size_t k = 0; k < NCOLS; k++)
			if (display_width(cells[k]) > width[k])
				width[k] = display_width(cells[k]);
	}
	for (size_t i = 0; i <= r->nrows; i++) {
		/* The header first. */
		row_cells(r, i ? i - 1 : r->nrows, cells);
		for (size_t k = 0; k < NCOLS; k++)
			cell(fp, cells[k], width[k], k == NCOLS - 1);
		fputc('\n', fp);
	}

	fputs("\nmeasured alone: the node's energy over the workload's run minus idle power\n"
	      "times its duration; attributed: what joules charged the workload's cgroup\n"
	      "(its idle share excluded); ratios of the means.\n",
	      fp);
	sum = r->cons.workloads_uj + r->cons.others_uj + r->cons.idle_uj;
	fmt_uj(a, sizeof(a), r->cons.workloads_uj);
	fmt_uj(b, sizeof(b), r->cons.others_uj);
	fmt_uj(d, sizeof(d), r->cons.idle_uj);
	fmt_uj(e, sizeof(e), sum);
	fmt_uj(f, sizeof(f), r->cons.node_uj);
	fprintf(fp,
		"conservation, %" PRIu64
		" together run%s: workloads %s J + other tasks %s J"
		" + idle %s J = %s J; node %s J; difference %" PRId64 " uJ\n",
		r->cons.runs, r->cons.runs == 1 ? "" : "s", a, b, d, e, f,
		sum - r->cons.node_uj);
	if (r->hypervisor)
		fprintf(fp,
			"note: running under a hypervisor (%s): these figures show that the\n"
			"tool works, not how accurate attribution is.\n",
			r->hypervisor);
}
