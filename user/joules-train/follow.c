// SPDX-License-Identifier: GPL-2.0
/*
 * joules-train --follow: recalibrate continuously. Samples and meter
 * readings stream in; every refit period the last window is fitted (all but
 * its newest part) and the candidate is compared with the set in force on
 * that newest part, which the fit did not see. A new set is installed only
 * when it is better by the margin, plausible, and the meter was healthy.
 *
 * Time is the data's: refits happen at sample timestamps, and a refit at T
 * waits until the meter has reached T (or ended, or went silent for
 * --pdu-timeout of wall time), so a replayed recording decides exactly as
 * the live stream did.
 *
 * Input lines are parsed by the one-shot readers (jt_read_samples(),
 * jt_read_meter()) a chunk of complete lines at a time; netlink samples
 * are turned into the `joulesctl record` line first (out_record_row()).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nl.h"
#include "out.h"
#include "train.h"

static volatile sig_atomic_t stop_sig;

static void on_signal(int sig)
{
	stop_sig = sig;
}

/* Bytes read from a descriptor, cut into complete lines. */
struct lbuf {
	int fd;
	char *buf;
	size_t len, cap;
	int eof;
	double last_data; /* CLOCK_MONOTONIC of the last bytes */
	char *header; /* samples: the header line, put before every chunk */
	unsigned long lines; /* lines handed to the reader so far */
	unsigned long header_lines; /* in header */
};

static unsigned long count_lines(const char *p, size_t len)
{
	unsigned long n = 0;
	const char *e = p + len;

	while ((p = memchr(p, '\n', (size_t)(e - p)))) {
		n++;
		p++;
	}
	return n;
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int lbuf_fill(struct lbuf *b)
{
	ssize_t n;

	if (b->cap - b->len < 65536) {
		size_t cap = b->cap ? b->cap * 2 : 131072;
		char *nb = realloc(b->buf, cap);

		if (!nb)
			return -ENOMEM;
		b->buf = nb;
		b->cap = cap;
	}
	n = read(b->fd, b->buf + b->len, b->cap - b->len - 1);
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : -errno;
	if (!n)
		b->eof = 1;
	b->len += (size_t)n;
	b->last_data = mono_s();
	return 0;
}

/*
 * Hand the complete lines (all at EOF) to the reader as one stream, with
 * the header first for samples.
 */
static int lbuf_parse(struct lbuf *b, const char *name, struct jt_samples *s,
		      struct jt_meter *m)
{
	size_t end = b->len, hl;
	char *text;
	FILE *fp;
	int ret;

	while (end && b->buf[end - 1] != '\n')
		end--;
	if (b->eof)
		end = b->len;
	if (!end)
		return 0;
	if (s && !b->header) {
		/* The header, with the comments before it (the node's facts). */
		size_t at = 0;
		char *nl;

		for (;;) {
			nl = memchr(b->buf + at, '\n', end - at);
			if (!nl || b->buf[at] != '#')
				break;
			at = (size_t)(nl - b->buf) + 1;
		}
		if (!nl && !b->eof)
			return 0; /* the header line is not complete yet */
		hl = nl ? (size_t)(nl - b->buf) + 1 : end;
		b->header = strndup(b->buf, hl);
		if (!b->header)
			return -ENOMEM;
		b->header_lines = count_lines(b->buf, hl) + !nl;
		b->lines += b->header_lines;
		memmove(b->buf, b->buf + hl, b->len - hl);
		b->len -= hl;
		end -= hl;
	}
	hl = s ? strlen(b->header) : 0;
	/* The file's own line numbers: the header copy stands before them. */
	if (s)
		s->st.line_base = b->lines - b->header_lines;
	else
		m->st.line_base = b->lines;
	b->lines += count_lines(b->buf, end) +
		    (b->eof && end && b->buf[end - 1] != '\n');
	text = malloc(hl + end + 1);
	if (!text)
		return -ENOMEM;
	if (hl)
		memcpy(text, b->header, hl);
	memcpy(text + hl, b->buf, end);
	text[hl + end] = '\0';
	memmove(b->buf, b->buf + end, b->len - end);
	b->len -= end;
	fp = fmemopen(text, hl + end, "r");
	if (!fp) {
		free(text);
		return -errno;
	}
	ret = s ? jt_read_samples(fp, name, s, NULL) :
		  jt_read_meter(fp, name, m, NULL);
	fclose(fp);
	free(text);
	return ret;
}

/* The meter command in its own process group; its stdout into *fd. */
static pid_t spawn(const char *cmd, int *fd)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (!pid) {
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		dup2(p[1], STDOUT_FILENO);
		if (!freopen("/dev/null", "r", stdin))
			_exit(127);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	setpgid(pid, pid);
	close(p[1]);
	*fd = p[0];
	return pid;
}

/* Drop samples and readings older than keep_ns (they left the window). */
static void trim(struct jt_samples *s, struct jt_meter *m, int64_t keep_ns)
{
	size_t i = 0, j = 0;

	while (i < s->n && s->s[i].end_ns < keep_ns)
		i++;
	/* Amortised: only when a good part is stale. */
	if (i > 4096 && i > s->n / 2) {
		memmove(s->s, s->s + i, (s->n - i) * sizeof(*s->s));
		s->n -= i;
	}
	while (j + 1 < m->n &&
	       m->t[j + 1] < keep_ns) /* meter clock: near enough */
		j++;
	if (j > 4096 && j > m->n / 2) {
		memmove(m->t, m->t + j, (m->n - j) * sizeof(*m->t));
		memmove(m->w, m->w + j, (m->n - j) * sizeof(*m->w));
		memmove(m->line, m->line + j, (m->n - j) * sizeof(*m->line));
		m->n -= j;
	}
}

/* Power of every row under a banded model, into metrics. */
static void eval_bands(const struct jt_row *rows, size_t n,
		       unsigned int present, const struct jl_bands *b,
		       double *mhz, struct fit_metrics *out)
{
	struct fit_acc a;
	size_t i;

	jt_rows_freq(rows, n, present, mhz);
	fit_acc_init(&a);
	for (i = 0; i < n; i++) {
		const struct jl_coef *c =
			&b->set[mhz[i] > 0 ? jl_band_pick(b, (jl_u64)mhz[i]) :
					     0];

		fit_acc_add(&a, jt_row_watts(&rows[i]),
			    jt_predict_uj(c, &rows[i]) * 1e3 /
				    rows[i].interval_ns);
	}
	fit_acc_result(&a, out);
}

static void iso(int64_t ns, char *buf, size_t len)
{
	time_t t = (time_t)(ns / 1000000000LL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Write the model where it goes: sysfs, or a file replaced atomically. */
static int install(const struct jt_follow_opts *o, const struct jt_report *rep,
		   const struct jt_band_result *br, char *err, size_t len)
{
	char tmp[4096];
	FILE *fp;

	if (o->sysfs)
		return jt_apply_bands(o->sysfs, &br->model, err, len);
	snprintf(tmp, sizeof(tmp), "%s.tmp", o->output);
	fp = fopen(tmp, "w");
	if (!fp) {
		snprintf(err, len, "%.400s: %s", tmp, strerror(errno));
		return -errno;
	}
	if (jt_write_bands_report(fp, rep, br, 1) | fclose(fp) ||
	    rename(tmp, o->output)) {
		snprintf(err, len, "writing %.400s: %s", o->output,
			 strerror(errno));
		unlink(tmp);
		return -EIO;
	}
	return 0;
}

/*
 * The set in force at start: the module's (with --apply), else the output
 * file's, if it parses. A new set must beat it before it replaces it.
 */
static int load_current(const struct jt_follow_opts *o, struct jl_bands *cur)
{
	char *text = NULL, err[512];
	size_t len = 0;
	FILE *fp;
	int ok = 0;

	if (o->sysfs) {
		ok = jt_read_model(o->sysfs, cur, err, sizeof(err));
		if (ok < 0)
			jt_diagf("joules-train: %s\n", err);
		return ok;
	}
	if (!o->output)
		return 0;
	fp = fopen(o->output, "r");
	if (!fp)
		return 0;
	if (getdelim(&text, &len, '\0', fp) > 0) {
		struct jl_coef c;
		/* The comment lines of the report are allowed by both forms. */
		if (!jl_bands_parse(text, strlen(text), cur)) {
			ok = 1;
		} else {
			char *last = strrchr(text, '\n'), *p = text;

			/* The single form: the last line that is not a comment. */
			while ((last = strchr(p, '\n')) && last[1])
				p = last + 1;
			if (*p != '#' && !jl_coef_parse(p, strlen(p), &c)) {
				jl_bands_single(cur, &c);
				ok = 1;
			}
		}
	}
	free(text);
	fclose(fp);
	return ok;
}

struct follow {
	const struct jt_follow_opts *o;
	FILE *log;
	struct jt_samples s;
	struct jt_meter m;
	struct jl_bands cur;
	int have_cur;
	unsigned long refits, applied;
};

static void logf_(struct follow *f, int64_t t, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void logf_(struct follow *f, int64_t t, const char *fmt, ...)
{
	char ts[32];
	va_list ap;

	iso(t, ts, sizeof(ts));
	fprintf(f->log, "%s refit %lu: ", ts, f->refits);
	va_start(ap, fmt);
	vfprintf(f->log, fmt, ap);
	va_end(ap);
	fputc('\n', f->log);
	fflush(f->log);
}

/*
 * Meter health over the newest refit period (T - refit, T]: a reading
 * missing for longer than max_gap (or the meter silent in wall time) is a
 * stall; a reading at or below 0 W, or outside [1/JT_GLITCH_RATIO,
 * JT_GLITCH_RATIO] x the window's median, is a glitch. 0 or -1 with why.
 */
static int meter_health(struct follow *f, int64_t lo_win, int64_t t,
			int wall_stalled, char *why, size_t len)
{
	const struct jt_follow_opts *o = f->o;
	int64_t lo = t - o->refit_ns, prev = INT64_MIN, gap = o->max_gap_ns;
	size_t i, nw = 0, bad = 0;
	double *w, med, worst = 0;

	if (wall_stalled) {
		snprintf(why, len, "meter stalled: nothing read for %.0f s",
			 (double)o->pdu_timeout_ns * 1e-9);
		return -1;
	}
	if (gap <= 0)
		gap = o->refit_ns;
	w = malloc((f->m.n ? f->m.n : 1) * sizeof(*w));
	if (!w) {
		snprintf(why, len, "out of memory");
		return -1;
	}
	for (i = 0; i < f->m.n; i++) {
		int64_t ti = f->m.t[i] + o->offset_ns;

		if (ti > t)
			break;
		if (ti >= lo_win)
			w[nw++] = f->m.w[i];
		if (ti > lo && prev != INT64_MIN && ti - prev > gap) {
			free(w);
			snprintf(
				why, len,
				"meter stalled: no reading for %.1f s (--max-gap %g s)",
				(double)(ti - prev) * 1e-9, (double)gap * 1e-9);
			return -1;
		}
		prev = ti;
	}
	if (prev == INT64_MIN || t - prev > gap) {
		free(w);
		snprintf(why, len,
			 "meter stalled: last reading %.1f s before the refit",
			 prev == INT64_MIN ? INFINITY :
					     (double)(t - prev) * 1e-9);
		return -1;
	}
	med = nw ? jt_median(w, nw) : 0;
	free(w);
	for (i = 0; i < f->m.n; i++) {
		int64_t ti = f->m.t[i] + o->offset_ns;
		double x = f->m.w[i];

		if (ti <= lo || ti > t)
			continue;
		if (x <= 0 || x > med * JT_GLITCH_RATIO ||
		    x < med / JT_GLITCH_RATIO) {
			if (!bad++ || fabs(x - med) > fabs(worst - med))
				worst = x;
		}
	}
	if (bad) {
		snprintf(
			why, len,
			"meter glitch: %zu reading%s implausible (e.g. %.4g W, window "
			"median %.4g W)",
			bad, bad == 1 ? "" : "s", worst, med);
		return -1;
	}
	return 0;
}

/* The window's samples: (T - window, T]; a view into f->s, not a copy. */
static struct jt_samples window_samples(const struct follow *f, int64_t lo,
					int64_t t)
{
	struct jt_samples ws = f->s;
	size_t a = 0, b;

	while (a < f->s.n &&
	       f->s.s[a].end_ns - (int64_t)f->s.s[a].interval_ns < lo)
		a++;
	b = a;
	while (b < f->s.n && f->s.s[b].end_ns <= t)
		b++;
	ws.s = f->s.s + a;
	ws.n = b - a;
	return ws;
}

/* Single and banded fits on the older part of the window; 0 or logged. */
static int refit_fit(struct follow *f, int64_t t, struct jt_row *rows,
		     size_t nfit, const struct jt_align_stats *st, double *w,
		     struct jt_report *rep, struct jt_band_result *br)
{
	const struct jt_follow_opts *o = f->o;
	struct jt_train_opts to = o->train;

	to.weights = w;
	to.pr = NULL;
	rep->samples_name = "samples";
	rep->pdu_name = "meter";
	rep->al = *st;
	if (jt_train(rows, nfit, f->s.present, &to, rep, NULL, NULL)) {
		logf_(f, t, "rejected: the fit failed");
		return -1;
	}
	to.weights = NULL;
	if (jt_train_bands(rows, nfit, f->s.present, &to, &o->bands, rep, w,
			   br)) {
		logf_(f, t, "rejected: the banded fit failed");
		return -1;
	}
	return 0;
}

/*
 * Install the new set, or say why not: a sick meter (health, else NULL), an
 * implausible set, or not better on the held-out part by --margin.
 */
static void refit_judge(struct follow *f, int64_t t,
			const struct jt_report *rep,
			const struct jt_band_result *br,
			const struct jt_row *rows, size_t n, size_t nfit,
			const char *health, const struct fit_metrics *mnew,
			const struct fit_metrics *mcur)
{
	const struct jt_follow_opts *o = f->o;
	char why[384], err[512];
	int bad;

	bad = br->banded ? 0 : jt_model_check(rep, why, sizeof(why));
	if (!bad && jt_refuse(rep, br, rows, nfit, f->s.cpus, &o->lim, why,
			      sizeof(why)))
		bad = -1;
	if (health) {
		logf_(f, t,
		      "rejected: %s; held-out MAPE new %.3f%% in force %s%.3f%s",
		      health, mnew->mape, f->have_cur ? "" : "(none) ",
		      f->have_cur ? mcur->mape : NAN, f->have_cur ? "%" : "");
	} else if (bad) {
		logf_(f, t,
		      "rejected: implausible: %s; held-out MAPE new %.3f%%",
		      why, mnew->mape);
	} else if (!isfinite(mnew->mape)) {
		logf_(f, t, "rejected: held-out MAPE not finite");
	} else if (f->have_cur &&
		   !(mnew->mape < mcur->mape * (1 - o->margin))) {
		logf_(f, t,
		      "kept: held-out MAPE new %.3f%% in force %.3f%% "
		      "(needs %.0f%% lower; %zu intervals)",
		      mnew->mape, mcur->mape, o->margin * 100, n - nfit);
	} else if (install(o, rep, br, err, sizeof(err))) {
		logf_(f, t, "rejected: install failed: %s", err);
	} else {
		if (f->have_cur)
			logf_(f, t,
			      "applied: %s; held-out MAPE new %.3f%% in force "
			      "%.3f%% (%zu intervals)",
			      br->banded ? "banded" : "single set", mnew->mape,
			      mcur->mape, n - nfit);
		else
			logf_(f, t,
			      "applied: %s; held-out MAPE new %.3f%%, no set in "
			      "force (%zu intervals)",
			      br->banded ? "banded" : "single set", mnew->mape,
			      n - nfit);
		f->cur = br->model;
		f->have_cur = 1;
		f->applied++;
	}
}

static void refit(struct follow *f, int64_t t, int wall_stalled)
{
	const struct jt_follow_opts *o = f->o;
	static struct jt_band_result br;
	struct jt_samples ws;
	struct jt_report rep = { 0 };
	struct jt_align_stats st;
	struct jt_row *rows = NULL;
	struct fit_metrics mnew, mcur;
	int64_t lo = t - o->window_ns;
	size_t n = 0, nfit;
	double *w = NULL, *mhz = NULL;
	char health[256];
	int sick;

	f->refits++;
	ws = window_samples(f, lo, t);
	sick = meter_health(f, lo, t, wall_stalled, health, sizeof(health));
	if (jt_align(&ws, &f->m, o->offset_ns, o->max_gap_ns, &rows, &n, &st)) {
		logf_(f, t, "rejected: out of memory");
		return;
	}
	nfit = (size_t)((double)n * (1 - o->holdout));
	if (nfit < o->train.min_samples || n - nfit < 2) {
		logf_(f, t,
		      "kept: %zu aligned intervals in the window, too few to "
		      "fit and judge (--min-samples %zu)",
		      n, o->train.min_samples);
		goto out;
	}
	w = malloc(n * sizeof(*w));
	mhz = malloc(n * sizeof(*mhz));
	if (!w || !mhz) {
		logf_(f, t, "rejected: out of memory");
		goto out;
	}
	if (refit_fit(f, t, rows, nfit, &st, w, &rep, &br))
		goto out;
	/* Both sets on the newest part of the window, which neither saw. */
	eval_bands(rows + nfit, n - nfit, f->s.present, &br.model, mhz, &mnew);
	if (f->have_cur)
		eval_bands(rows + nfit, n - nfit, f->s.present, &f->cur, mhz,
			   &mcur);
	refit_judge(f, t, &rep, &br, rows, n, nfit, sick ? health : NULL, &mnew,
		    &mcur);
out:
	free(rows);
	free(w);
	free(mhz);
}

/* A netlink sample as the line `joulesctl record` writes. */
static int nl_lines(struct jnl *nl, struct lbuf *b)
{
	struct jnl_event ev;
	char *text = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&text, &len);
	int rc, ret = 0;

	if (!fp)
		return -ENOMEM;
	if (!b->header)
		out_record_header(fp);
	while ((rc = jnl_next_event(nl, &ev, 0)) != 0) {
		if (rc == -ENOBUFS) {
			jt_diagf("joules-train: samples lost (receive buffer "
				 "full)\n");
			continue;
		}
		if (rc < 0) {
			ret = rc == -EINTR ? 0 : rc;
			break;
		}
		if (ev.type == JNL_EV_SAMPLE)
			out_record_row(fp, &ev.sample);
		jnl_event_free(&ev);
	}
	fclose(fp);
	if (len) {
		char *nb = realloc(b->buf, b->len + len + 1);

		if (!nb) {
			free(text);
			return -ENOMEM;
		}
		b->buf = nb;
		memcpy(b->buf + b->len, text, len);
		b->len += len;
		b->cap = b->len + 1;
		b->last_data = mono_s();
	}
	free(text);
	return ret;
}

/* path, or standard input for "-", for reading into *fd. */
static int open_input(const char *path, int *fd)
{
	int err;

	if (!strcmp(path, "-")) {
		*fd = STDIN_FILENO;
		return 0;
	}
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0) {
		err = errno;
		jt_diagf("joules-train: %s: %s\n", path, strerror(err));
		return -err;
	}
	return 0;
}

/* The samples: the module's netlink group, stdin or a file. */
static int open_samples(const struct jt_follow_opts *o, struct lbuf *sb,
			struct jnl **nl)
{
	int rc;

	if (!o->samples) {
		rc = jnl_open(nl);
		if (!rc)
			rc = jnl_subscribe(*nl, JNL_GRP_SAMPLES);
		if (rc) {
			jt_diagf("joules-train: samples: %s\n",
				 jnl_strerror(*nl ? JNL_OP_SUBSCRIBE :
						    JNL_OP_OPEN,
					      rc));
			return rc;
		}
		sb->fd = jnl_fd(*nl);
		return 0;
	}
	return open_input(o->samples, &sb->fd);
}

/* The meter: a command's stdout, stdin or a file. */
static int open_meter(const struct jt_follow_opts *o, struct lbuf *mb,
		      pid_t *pid)
{
	int err;

	if (o->pdu_cmd) {
		*pid = spawn(o->pdu_cmd, &mb->fd);
		if (*pid < 0) {
			err = errno;
			jt_diagf("joules-train: pdu-cmd: %s\n", strerror(err));
			return -err;
		}
		return 0;
	}
	return open_input(o->pdu, &mb->fd);
}

/* Read what is ready on either input; nonzero ends the loop (the error). */
static int follow_read(struct follow *f, struct jnl *nl, struct lbuf *sb,
		       struct lbuf *mb)
{
	const struct jt_follow_opts *o = f->o;
	struct pollfd p[2] = {
		{ .fd = sb->eof ? -1 : sb->fd, .events = POLLIN },
		{ .fd = mb->eof ? -1 : mb->fd, .events = POLLIN },
	};
	int rc;

	rc = poll(p, 2, 1000);
	if (rc < 0 && errno != EINTR)
		return -errno;
	if (rc > 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR))) {
		rc = nl ? nl_lines(nl, sb) : lbuf_fill(sb);
		if (!rc)
			rc = lbuf_parse(sb, o->samples ? o->samples : "netlink",
					&f->s, NULL);
		if (rc)
			return rc;
	}
	if (rc >= 0 && p[1].fd >= 0 &&
	    (p[1].revents & (POLLIN | POLLHUP | POLLERR))) {
		rc = lbuf_fill(mb);
		if (!rc)
			rc = lbuf_parse(mb, o->pdu_cmd ? "pdu-cmd" : o->pdu,
					NULL, &f->m);
		if (rc)
			return rc;
		if (mb->eof && o->pdu_cmd)
			fprintf(f->log, "meter: pdu-cmd ended; refits are "
					"rejected from now on\n");
	}
	return 0;
}

/* Read and refit until the inputs end or a signal; 0 or the error. */
static int follow_loop(struct follow *f, struct jnl *nl, struct lbuf *sb,
		       struct lbuf *mb)
{
	const struct jt_follow_opts *o = f->o;
	int64_t next = 0;
	int ret;

	while (!stop_sig) {
		int wall_stalled;

		if (sb->eof && !f->s.n)
			break;
		ret = follow_read(f, nl, sb, mb);
		if (ret)
			return ret;
		if (!f->s.n)
			continue;
		if (!next)
			next = f->s.s[0].end_ns -
			       (int64_t)f->s.s[0].interval_ns + o->refit_ns;
		wall_stalled = !mb->eof &&
			       mono_s() - mb->last_data >
				       (double)o->pdu_timeout_ns * 1e-9 &&
			       o->pdu_timeout_ns > 0;
		/* Refits that are due, once the meter has caught up. */
		while (f->s.s[f->s.n - 1].end_ns >= next &&
		       ((f->m.n && f->m.t[f->m.n - 1] + o->offset_ns >= next) ||
			mb->eof || wall_stalled)) {
			refit(f, next, wall_stalled);
			next += o->refit_ns;
			trim(&f->s, &f->m,
			     next - o->window_ns - 2 * o->refit_ns);
		}
		/* At the samples' end, wait for the meter to catch up (or end). */
		if (sb->eof && (mb->eof || wall_stalled ||
				(f->m.n && f->m.t[f->m.n - 1] + o->offset_ns >=
						   f->s.s[f->s.n - 1].end_ns)))
			break;
	}
	return 0;
}

int jt_follow(const struct jt_follow_opts *o)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct lbuf sb = { .fd = -1 }, mb = { .fd = -1 };
	struct follow f = { .o = o };
	struct jnl *nl = NULL;
	pid_t pid = -1;
	int ret;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	f.log = stderr;
	if (o->log) {
		f.log = fopen(o->log, "a");
		if (!f.log) {
			jt_diagf("joules-train: %s: %s\n", o->log,
				 strerror(errno));
			return -errno;
		}
	}
	f.have_cur = load_current(o, &f.cur);
	if (f.have_cur < 0) {
		/* Never replace a model it cannot compare with. */
		if (f.log != stderr)
			fclose(f.log);
		return f.have_cur;
	}
	jt_meter_init(&f.m, o->unit, o->ts_flags);
	f.m.sem = o->sem;
	ret = open_samples(o, &sb, &nl);
	if (!ret)
		ret = open_meter(o, &mb, &pid);
	if (ret)
		goto out;
	sb.last_data = mb.last_data = mono_s();

	ret = follow_loop(&f, nl, &sb, &mb);
	if (stop_sig)
		fprintf(f.log,
			"stopped by signal %d after %lu refits, %lu applied\n",
			(int)stop_sig, f.refits, f.applied);
	else
		fprintf(f.log, "end of input after %lu refits, %lu applied\n",
			f.refits, f.applied);
out:
	if (pid > 0) {
		kill(-pid, SIGTERM);
		waitpid(pid, NULL, 0);
	}
	if (nl)
		jnl_close(nl);
	else if (sb.fd > STDIN_FILENO)
		close(sb.fd);
	if (mb.fd > STDIN_FILENO)
		close(mb.fd);
	free(sb.buf);
	free(sb.header);
	free(mb.buf);
	jt_samples_free(&f.s);
	jt_meter_free(&f.m);
	if (f.log && f.log != stderr)
		fclose(f.log);
	return ret;
}
