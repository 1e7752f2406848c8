// SPDX-License-Identifier: GPL-2.0
/*
 * Reader for external meter (PDU) readings: "timestamp,watts" lines from a
 * file or from the stdout of a user's reader program.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "csv.h"
#include "train.h"

void jt_meter_init(struct jt_meter *m, enum parse_ts_unit unit, int ts_flags)
{
	memset(m, 0, sizeof(*m));
	m->unit = unit;
	m->ts_flags = ts_flags;
}

void jt_meter_free(struct jt_meter *m)
{
	free(m->t);
	free(m->w);
	m->t = NULL;
	m->w = NULL;
	m->n = m->cap = 0;
}

static const char *kind_name(enum parse_ts_kind k)
{
	return k == PARSE_TS_KIND_MS ? "Unix milliseconds" :
	       k == PARSE_TS_KIND_S  ? "Unix seconds" :
				       "ISO 8601";
}

int jt_read_meter(FILE *fp, const char *name, struct jt_meter *m,
		  struct jt_progress *pr)
{
	unsigned long long total = jt_file_size(fp);
	unsigned long prev_line = 0;
	struct csv_reader r;
	char what[256];
	int n, first = 1, ret = 0;

	snprintf(what, sizeof(what), "reading %s", name);
	csv_init(&r, fp, name, CSV_SKIP_COMMENTS);
	while ((n = csv_next(&r)) != 0) {
		const char *why_t = NULL, *why_w = NULL;
		enum parse_ts_kind kind;
		int rt, rw, was_first = first;
		int64_t t;
		double w;

		first = 0;
		if (n == -EINVAL) {
			m->st.records++;
			jt_bad_line(&m->st, name, r.lineno, "%s", r.why);
			continue;
		}
		if (n < 0) {
			fprintf(jt_diag ? jt_diag : stderr,
				"%s: read error: %s\n", name, strerror(-n));
			ret = n;
			break;
		}
		if (r.nfield != 2) {
			m->st.records++;
			jt_bad_line(&m->st, name, r.lineno,
				    "%u fields, want 2 (timestamp,watts)",
				    r.nfield);
			continue;
		}
		rt = parse_timestamp(r.field[0], m->unit, m->ts_flags, &t,
				     &kind, &why_t);
		rw = parse_double(r.field[1], &w, &why_w);
		/* A header is optional: a first line where neither field is a value. */
		if (was_first && rt && rw)
			continue;
		m->st.records++;
		if ((m->st.records & 4095) == 0)
			jt_progress(pr, what, total ? r.bytes : m->st.records,
				    total);
		if (rt) {
			jt_bad_line(&m->st, name, r.lineno,
				    "timestamp '%s': %s", r.field[0], why_t);
			continue;
		}
		if (rw) {
			jt_bad_line(&m->st, name, r.lineno, "watts '%s': %s",
				    r.field[1], why_w);
			continue;
		}
		if (w < 0) {
			jt_bad_line(&m->st, name, r.lineno,
				    "watts '%s': negative power", r.field[1]);
			continue;
		}
		if (kind != PARSE_TS_KIND_ISO) {
			if (!m->kind_set) {
				m->kind_set = 1;
				m->kind = kind;
				if (m->unit == PARSE_TS_AUTO &&
				    kind == PARSE_TS_KIND_MS)
					fprintf(jt_diag ? jt_diag : stderr,
						"%s:%lu: timestamps look like Unix milliseconds "
						"(%s); reading them so (--pdu-ms says it "
						"explicitly)\n",
						name, r.lineno, r.field[0]);
			} else if (kind != m->kind) {
				/* Only AUTO can see both kinds: a mix is a broken file. */
				jt_bad_line(
					&m->st, name, r.lineno,
					"timestamp '%s' looks like %s, earlier ones were %s",
					r.field[0], kind_name(kind),
					kind_name(m->kind));
				continue;
			}
		}
		if (m->n && t <= m->t[m->n - 1]) {
			jt_bad_line(
				&m->st, name, r.lineno,
				"timestamp '%s' is not after the reading on line %lu",
				r.field[0], prev_line);
			continue;
		}
		if (m->n == m->cap) {
			size_t cap = m->cap ? m->cap * 2 : 4096;
			int64_t *nt = realloc(m->t, cap * sizeof(*nt));
			double *nw;

			if (nt)
				m->t = nt;
			nw = nt ? realloc(m->w, cap * sizeof(*nw)) : NULL;
			if (!nw) {
				ret = -ENOMEM;
				break;
			}
			m->w = nw;
			m->cap = cap;
		}
		m->t[m->n] = t;
		m->w[m->n++] = w;
		prev_line = r.lineno;
	}
	jt_progress_end(pr);
	jt_bad_summary(&m->st, name);
	csv_free(&r);
	return ret;
}

int jt_read_meter_cmd(const char *cmd, struct jt_meter *m,
		      struct jt_progress *pr)
{
	FILE *diag = jt_diag ? jt_diag : stderr;
	int fd[2], status, ret;
	pid_t pid;
	FILE *fp;

	if (pipe(fd)) {
		ret = -errno;
		fprintf(diag, "pdu-cmd: pipe: %s\n", strerror(errno));
		return ret;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		fprintf(diag, "pdu-cmd: fork: %s\n", strerror(errno));
		close(fd[0]);
		close(fd[1]);
		return ret;
	}
	if (!pid) {
		/* The reader gets our stderr for its own messages, /dev/null-free. */
		close(fd[0]);
		if (fd[1] != STDOUT_FILENO) {
			dup2(fd[1], STDOUT_FILENO);
			close(fd[1]);
		}
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	fp = fdopen(fd[0], "r");
	if (!fp) {
		ret = -errno;
		close(fd[0]);
		waitpid(pid, &status, 0);
		return ret;
	}
	ret = jt_read_meter(fp, "pdu-cmd", m, pr);
	fclose(fp);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			fprintf(diag, "pdu-cmd: waitpid: %s\n",
				strerror(errno));
			return -errno;
		}
	}
	if (ret)
		return ret;
	if (WIFSIGNALED(status)) {
		fprintf(diag, "pdu-cmd: '%s' was killed by signal %d\n", cmd,
			WTERMSIG(status));
		return -EIO;
	}
	if (WEXITSTATUS(status)) {
		fprintf(diag, "pdu-cmd: '%s' exited with status %d%s\n", cmd,
			WEXITSTATUS(status),
			WEXITSTATUS(status) == 127 ? " (command not found?)" :
						     "");
		return -EIO;
	}
	return 0;
}
