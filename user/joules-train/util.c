// SPDX-License-Identifier: GPL-2.0
/* joules-train helpers: bad-line reporting, progress, PATH lookup. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "train.h"

FILE *jt_diag;

/* The progress line on screen, if any (there is one terminal). */
static struct jt_progress *active;

static FILE *diag(void)
{
	return jt_diag ? jt_diag : stderr;
}

static FILE *progress_fp(const struct jt_progress *p)
{
	return p->fp ? p->fp : stderr;
}

void jt_progress_clear(void)
{
	if (!active || !active->shown || !active->tty)
		return;
	/* The cursor is at the start of the line after the progress' \r. */
	fputs("\033[K", progress_fp(active));
	fflush(progress_fp(active));
	active->shown = 0; /* the next update redraws at once */
}

void jt_diagf(const char *fmt, ...)
{
	va_list ap;

	jt_progress_clear();
	va_start(ap, fmt);
	vfprintf(diag(), fmt, ap);
	va_end(ap);
}

int jt_bad_line(struct jt_input_stats *st, const char *name, unsigned long line,
		const char *fmt, ...)
{
	va_list ap;

	if (!st->bad) {
		st->first_bad_line = line;
		va_start(ap, fmt);
		vsnprintf(st->first_bad_why, sizeof(st->first_bad_why), fmt,
			  ap);
		va_end(ap);
	}
	st->bad++;
	if (st->bad <= JT_BAD_SHOWN) {
		jt_progress_clear();
		fprintf(diag(), "%s:%lu: ", name, line);
		va_start(ap, fmt);
		vfprintf(diag(), fmt, ap);
		va_end(ap);
		fputc('\n', diag());
	}
	if (st->stop_after && st->bad >= st->stop_after) {
		st->stopped = 1;
		return 1;
	}
	return 0;
}

void jt_bad_summary(const struct jt_input_stats *st, const char *name)
{
	if (st->stopped)
		jt_diagf("%s: stopped reading after %lu bad lines\n", name,
			 st->bad);
	else if (st->bad > JT_BAD_SHOWN)
		jt_diagf("%s: %lu more bad lines not shown (%lu bad in all)\n",
			 name, st->bad - JT_BAD_SHOWN, st->bad);
}

double jt_median(double *v, size_t n)
{
	double a = fit_kth(v, n, n / 2), b;
	size_t i;

	if (n & 1)
		return a;
	/* Even n: the mean of the two middle values; the lower is the max below. */
	b = v[0];
	for (i = 1; i < n / 2; i++)
		if (v[i] > b)
			b = v[i];
	return (a + b) / 2;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void jt_progress_init(struct jt_progress *p, int on, int tty)
{
	memset(p, 0, sizeof(*p));
	p->on = on;
	p->tty = tty;
}

void jt_progress(struct jt_progress *p, const char *what,
		 unsigned long long done, unsigned long long total)
{
	double t;

	if (!p || !p->on)
		return;
	t = now_s();
	/* A tty gets 5 redraws a second; a log gets one line every 2 s. */
	if (p->shown && t - p->last < (p->tty ? 0.2 : 2.0))
		return;
	p->last = t;
	p->shown = 1;
	active = p;
	if (total)
		fprintf(progress_fp(p), "joules-train: %s %5.1f%%%s", what,
			100.0 * (double)done / (double)total,
			p->tty ? "\r" : "\n");
	else if (done)
		fprintf(progress_fp(p), "joules-train: %s %llu%s", what, done,
			p->tty ? "\r" : "\n");
	else
		fprintf(progress_fp(p), "joules-train: %s...%s", what,
			p->tty ? "\r" : "\n");
	fflush(progress_fp(p));
}

void jt_progress_end(struct jt_progress *p)
{
	if (!p || !p->on)
		return;
	if (p->shown && p->tty)
		fputs("\033[K",
		      progress_fp(p)); /* erase the last progress line */
	p->shown = 0;
	if (active == p)
		active = NULL;
}

int jt_which(const char *prog, char *buf, size_t len)
{
	const char *path = getenv("PATH"), *p, *e;

	if (strchr(prog, '/')) {
		snprintf(buf, len, "%s", prog);
		return access(buf, X_OK) ? -ENOENT : 0;
	}
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; *p; p = *e ? e + 1 : e) {
		e = strchr(p, ':');
		if (!e)
			e = p + strlen(p);
		if (e == p)
			continue;
		if ((size_t)snprintf(buf, len, "%.*s/%s", (int)(e - p), p,
				     prog) < len &&
		    !access(buf, X_OK))
			return 0;
	}
	return -ENOENT;
}
