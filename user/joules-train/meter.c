// SPDX-License-Identifier: GPL-2.0
/*
 * Reader for external meter (PDU) readings: "timestamp,watts" lines from a
 * file or from the stdout of a user's reader program.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
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
	free(m->line);
	m->t = NULL;
	m->w = NULL;
	m->line = NULL;
	m->n = m->cap = 0;
}

static const char *kind_name(enum parse_ts_kind k)
{
	return k == PARSE_TS_KIND_MS ? "Unix milliseconds" :
	       k == PARSE_TS_KIND_S  ? "Unix seconds" :
				       "ISO 8601";
}

/* The fields' values as read; nonzero when one is bad (said, counted). */
static int meter_bad_value(struct jt_meter *m, const struct csv_reader *r,
			   const char *name, int rt, const char *why_t, int rw,
			   const char *why_w, const double *w)
{
	if (rt) {
		jt_bad_line(&m->st, name, r->lineno, "timestamp '%s': %s",
			    r->field[0], why_t);
		return 1;
	}
	if (rw) {
		jt_bad_line(&m->st, name, r->lineno, "watts '%s': %s",
			    r->field[1], why_w);
		return 1;
	}
	if (*w < 0) {
		jt_bad_line(&m->st, name, r->lineno,
			    "watts '%s': negative power", r->field[1]);
		return 1;
	}
	if (*w > JT_MAX_WATTS) {
		jt_bad_line(&m->st, name, r->lineno,
			    "watts '%s': above %g W, not the power of one node",
			    r->field[1], JT_MAX_WATTS);
		return 1;
	}
	return 0;
}

/*
 * The first numeric timestamp sets the kind (seconds or milliseconds);
 * nonzero when this one is of the other kind (said, counted).
 */
static int meter_bad_kind(struct jt_meter *m, const struct csv_reader *r,
			  const char *name, enum parse_ts_kind kind)
{
	if (kind == PARSE_TS_KIND_ISO)
		return 0;
	if (!m->kind_set) {
		m->kind_set = 1;
		m->kind = kind;
		if (m->unit == PARSE_TS_AUTO && kind == PARSE_TS_KIND_MS)
			jt_diagf(
				"%s:%lu: timestamps look like Unix milliseconds "
				"(%s); reading them so (--pdu-ms says it "
				"explicitly)\n",
				name, r->lineno, r->field[0]);
	} else if (kind != m->kind) {
		/* Only AUTO can see both kinds: a mix is a broken file. */
		jt_bad_line(
			&m->st, name, r->lineno,
			"timestamp '%s' looks like %s, earlier ones were %s",
			r->field[0], kind_name(kind), kind_name(m->kind));
		return 1;
	}
	return 0;
}

/* Room for one more reading: 0 or -ENOMEM. */
static int meter_grow(struct jt_meter *m)
{
	size_t cap = m->cap ? m->cap * 2 : 4096;
	int64_t *nt;
	unsigned long *nl;
	double *nw;

	if (m->n < m->cap)
		return 0;
	nt = realloc(m->t, cap * sizeof(*nt));
	if (nt)
		m->t = nt;
	nw = nt ? realloc(m->w, cap * sizeof(*nw)) : NULL;
	if (nw)
		m->w = nw;
	nl = nw ? realloc(m->line, cap * sizeof(*nl)) : NULL;
	if (!nl)
		return -ENOMEM;
	m->line = nl;
	m->cap = cap;
	return 0;
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
	r.lineno = m->st.line_base;
	while (!m->st.stopped && (n = csv_next(&r)) != 0) {
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
			/* A reader's timeout is explained by the caller. */
			if (n != -ETIMEDOUT)
				jt_diagf("%s: read error: %s\n", name,
					 strerror(-n));
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
		if (meter_bad_value(m, &r, name, rt, why_t, rw, why_w, &w) ||
		    meter_bad_kind(m, &r, name, kind))
			continue;
		if (m->n && t <= m->t[m->n - 1]) {
			jt_bad_line(
				&m->st, name, r.lineno,
				"timestamp '%s' is not after the reading on line %lu",
				r.field[0], prev_line);
			continue;
		}
		ret = meter_grow(m);
		if (ret)
			break;
		m->t[m->n] = t;
		m->line[m->n] = r.lineno;
		m->w[m->n++] = w;
		prev_line = r.lineno;
	}
	jt_progress_end(pr);
	jt_bad_summary(&m->st, name);
	csv_free(&r);
	return ret;
}

/*
 * The reader's process group, for the signal handler: joules-train being
 * terminated must not leave the reader (and whatever it started) running.
 */
static volatile sig_atomic_t reader_pgid;

static void reader_signal(int sig)
{
	if (reader_pgid > 0)
		kill(-(pid_t)reader_pgid, SIGTERM);
	signal(sig, SIG_DFL);
	raise(sig);
}

static const int reader_sigs[] = { SIGTERM, SIGINT, SIGHUP };

/* stdio reads the pipe through this, so a silent reader times out. */
struct cmd_in {
	int fd;
	int timeout_ms; /* -1: none */
	int timed_out;
};

static ssize_t cmd_read(void *cookie, char *buf, size_t size)
{
	struct cmd_in *c = cookie;
	struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
	ssize_t n;
	int rc;

	for (;;) {
		rc = poll(&pfd, 1, c->timeout_ms);
		if (rc > 0)
			break;
		if (rc == 0) {
			c->timed_out = 1;
			errno = ETIMEDOUT;
			return -1;
		}
		if (errno != EINTR)
			return -1;
	}
	do
		n = read(c->fd, buf, size);
	while (n < 0 && errno == EINTR);
	return n;
}

static int cmd_close(void *cookie)
{
	return close(((struct cmd_in *)cookie)->fd);
}

/*
 * Wait (up to ms, -1: for ever) for the reader to exit without reaping it:
 * while its zombie holds the pid, the group id cannot be reused, so killing
 * the group afterwards cannot hit an unrelated process.
 */
static void wait_exit(pid_t pid, int ms)
{
	siginfo_t si;

	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)pid, &si,
			   WEXITED | WNOWAIT | (ms >= 0 ? WNOHANG : 0))) {
			if (errno == EINTR)
				continue;
			return;
		}
		if (si.si_pid == pid || ms <= 0)
			return;
		usleep(10000);
		ms -= 10;
	}
}

/* In the child: the reader, in its own group, its stdout the pipe. */
static void __attribute__((noreturn))
reader_exec(const char *cmd, const int *fd, const struct sigaction *old)
{
	int null = open("/dev/null", O_RDONLY);
	unsigned int i;

	for (i = 0; i < 3; i++)
		sigaction(reader_sigs[i], &old[i], NULL);
	/* Its own group, so that it and its children can be killed at once. */
	setpgid(0, 0);
	/* If joules-train dies by SIGKILL, at least the shell hears of it. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	/* Not our stdin: the samples may be coming from there. */
	if (null >= 0 && null != STDIN_FILENO) {
		dup2(null, STDIN_FILENO);
		close(null);
	}
	/* The reader gets our stderr for its own messages. */
	dup2(fd[1], STDOUT_FILENO);
	execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
	_exit(127);
}

/*
 * At EOF the reader is done; otherwise (error, timeout, too many bad
 * lines) it is asked to stop, and given a second. Then nothing of its
 * group may outlive the reading. Returns ret, or the waitpid error.
 */
static int reader_reap(pid_t pid, int ret, int stopped, int timeout_ms,
		       int *status)
{
	if (ret || stopped) {
		kill(-pid, SIGTERM);
		wait_exit(pid, 1000);
	} else {
		/* It closed its output: it should be exiting now. */
		wait_exit(pid, timeout_ms);
	}
	kill(-pid, SIGKILL);
	while (waitpid(pid, status, 0) < 0) {
		if (errno != EINTR) {
			jt_diagf("pdu-cmd: waitpid: %s\n", strerror(errno));
			if (!ret)
				ret = -errno;
			break;
		}
	}
	reader_pgid = 0;
	return ret;
}

/* A reader that failed is an error even when its output looked whole. */
static int reader_status(const char *cmd, int status)
{
	if (WIFSIGNALED(status)) {
		jt_diagf("pdu-cmd: '%s' was killed by signal %d\n", cmd,
			 WTERMSIG(status));
		return -EIO;
	}
	if (WEXITSTATUS(status)) {
		jt_diagf("pdu-cmd: '%s' exited with status %d%s\n", cmd,
			 WEXITSTATUS(status),
			 WEXITSTATUS(status) == 127 ? " (command not found?)" :
						      "");
		return -EIO;
	}
	return 0;
}

int jt_read_meter_cmd(const char *cmd, struct jt_meter *m,
		      struct jt_progress *pr, double timeout_s)
{
	struct sigaction sa = { .sa_handler = reader_signal }, old[3];
	struct cmd_in in = { .fd = -1 };
	int fd[2], status = 0, ret;
	unsigned int i;
	pid_t pid;
	FILE *fp;

	if (pipe2(fd, O_CLOEXEC)) {
		ret = -errno;
		jt_diagf("pdu-cmd: pipe: %s\n", strerror(errno));
		return ret;
	}
	fflush(NULL);
	/* Handlers first: a SIGTERM right after fork must take the reader too. */
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < 3; i++)
		sigaction(reader_sigs[i], &sa, &old[i]);
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		jt_diagf("pdu-cmd: fork: %s\n", strerror(errno));
		close(fd[0]);
		close(fd[1]);
		goto restore;
	}
	if (!pid)
		reader_exec(cmd, fd, old);
	setpgid(pid, pid); /* also here: no race with the child's own call */
	reader_pgid = pid;
	close(fd[1]);
	in.fd = fd[0];
	in.timeout_ms = timeout_s > 0 ? (int)(timeout_s * 1000 + 0.5) : -1;
	fp = fopencookie(&in, "r",
			 (cookie_io_functions_t){ .read = cmd_read,
						  .close = cmd_close });
	if (!fp) {
		ret = -errno;
		close(fd[0]);
	} else {
		ret = jt_read_meter(fp, "pdu-cmd", m, pr);
		fclose(fp);
		if (in.timed_out)
			jt_diagf("pdu-cmd: no output for %g s (--pdu-timeout); "
				 "stopped '%s'\n",
				 timeout_s, cmd);
	}
	ret = reader_reap(pid, ret, m->st.stopped, in.timeout_ms, &status);
	if (!ret && !m->st.stopped)
		ret = reader_status(cmd, status);
restore:
	for (i = 0; i < 3; i++)
		sigaction(reader_sigs[i], &old[i], NULL);
	return ret;
}
