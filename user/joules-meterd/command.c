// SPDX-License-Identifier: GPL-2.0
/*
 * Backend "command": a program for meters nothing else reads. Each reading
 * runs `command` with /bin/sh -c in a process group of its own, bounded by
 * the input's timeout (the whole group is killed when it runs over), and
 * parses its standard output, one sample per line:
 *   W                    power in watts
 *   power W              the same
 *   energy J [WRAP_J]    a cumulative energy counter in joules, with the
 *                        modulus it wraps at (absent or 0: it does not)
 * Blank lines and lines starting with '#' are skipped; anything else, no
 * sample at all, a nonzero exit status or a signal is a failed reading.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "jmd.h"
#include "parse.h"

#define CMD_OUT_MAX 4096

struct cmd_priv {
	char *command;
};

static int cmd_set(struct jmd_input *in, const char *key, const char *val,
		   char *err, size_t errlen)
{
	struct cmd_priv *p = in->priv;

	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		in->priv = p;
	}
	if (strcmp(key, "command")) {
		snprintf(err, errlen, "unknown key '%s' (want command)", key);
		return -1;
	}
	if (p->command) {
		snprintf(err, errlen, "command: given twice");
		return -1;
	}
	p->command = strdup(val);
	if (!p->command) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

static int cmd_open(struct jmd_input *in, char *err, size_t errlen)
{
	struct cmd_priv *p = in->priv;

	if (!p || !p->command) {
		snprintf(err, errlen, "no 'command'");
		return -1;
	}
	return 0;
}

static void cmd_close(struct jmd_input *in)
{
	struct cmd_priv *p = in->priv;

	if (p) {
		free(p->command);
		free(p);
	}
	in->priv = NULL;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Parse one output line into a sample: 0, or -1 with err set. */
static int cmd_line(char *line, unsigned int lineno, struct jmd_sample *s,
		    char *err, size_t errlen)
{
	char *f[4], *save = NULL, *t;
	const char *why = NULL;
	unsigned int nf = 0;
	double v;

	for (t = strtok_r(line, " \t\r", &save); t && nf < 4;
	     t = strtok_r(NULL, " \t\r", &save))
		f[nf++] = t;
	memset(s, 0, sizeof(*s));
	snprintf(s->label, sizeof(s->label), "line %u", lineno);
	if (nf == 1 && !parse_double(f[0], &v, &why)) {
		s->kind = JMD_POWER;
		s->value = v;
		return 0;
	}
	if (nf == 2 && !strcmp(f[0], "power")) {
		if (parse_double(f[1], &v, &why))
			goto bad_num;
		s->kind = JMD_POWER;
		s->value = v;
		return 0;
	}
	if ((nf == 2 || nf == 3) && !strcmp(f[0], "energy")) {
		if (parse_double(f[1], &v, &why))
			goto bad_num;
		s->kind = JMD_ENERGY;
		s->value = v;
		if (nf == 3) {
			if (parse_double(f[2], &s->wrap_j, &why) ||
			    s->wrap_j < 0) {
				snprintf(err, errlen,
					 "output line %u: wrap '%s': %s",
					 lineno, f[2], why ? why : "negative");
				return -1;
			}
		}
		return 0;
	}
	snprintf(err, errlen,
		 "output line %u: want 'W', 'power W' or 'energy J [WRAP_J]'",
		 lineno);
	return -1;
bad_num:
	snprintf(err, errlen, "output line %u: '%s': %s", lineno, f[1], why);
	return -1;
}

/*
 * Read the child's output until EOF or the deadline: bytes, -1 on timeout,
 * -2 when poll() or read() failed (errno says why).
 */
static ssize_t cmd_collect(int fd, char *buf, size_t cap, uint64_t deadline,
			   bool *overflow)
{
	size_t len = 0;

	*overflow = false;
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		uint64_t now = now_ms();
		char junk[512];
		ssize_t n;
		int r;

		if (now >= deadline)
			return -1;
		r = poll(&pfd, 1, (int)(deadline - now));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r == 0 ? -1 : -2;
		if (len < cap)
			n = read(fd, buf + len, cap - len);
		else
			n = read(fd, junk, sizeof(junk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -2;
		if (n == 0)
			return (ssize_t)len;
		if (len < cap)
			len += (size_t)n;
		else
			*overflow = true;
	}
}

/* Wait for pid up to deadline; kill its group when it runs over. */
static int cmd_reap(pid_t pid, uint64_t deadline, int *status, bool *killed)
{
	*killed = false;
	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -1;
		if (now_ms() >= deadline && !*killed) {
			kill(-pid, SIGKILL);
			*killed = true;
			deadline = now_ms() + 1000;
			continue;
		}
		if (*killed && now_ms() >= deadline)
			return -1;
		usleep(2000);
	}
}

/*
 * Start the command in a process group of its own, its standard output on
 * a pipe whose reading end goes to *fd: its pid, or -1 with err set.
 */
static pid_t cmd_spawn(const char *command, int *fd, char *err, size_t errlen)
{
	int pfd[2];
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDONLY);

		setpgid(0, 0);
		signal(SIGPIPE, SIG_DFL);
		if (devnull >= 0)
			dup2(devnull, STDIN_FILENO);
		dup2(pfd[1], STDOUT_FILENO);
		execl("/bin/sh", "sh", "-c", command, (char *)NULL);
		_exit(127);
	}
	setpgid(pid, pid); /* also here: no race with a kill of its group */
	close(pfd[1]);
	*fd = pfd[0];
	return pid;
}

/*
 * Run the command to its end within the input's timeout: its output into
 * buf (CMD_OUT_MAX bytes and a NUL), its length; or -1 with err set when
 * it timed out, was killed, failed, wrote too much or wrote a NUL byte.
 */
static ssize_t cmd_run(struct jmd_input *in, char *buf, char *err,
		       size_t errlen)
{
	struct cmd_priv *p = in->priv;
	uint64_t deadline = now_ms() + in->timeout_ms;
	int fd, status = 0;
	bool overflow, killed;
	ssize_t len;
	pid_t pid;

	pid = cmd_spawn(p->command, &fd, err, errlen);
	if (pid < 0)
		return -1;
	len = cmd_collect(fd, buf, CMD_OUT_MAX, deadline, &overflow);
	if (len == -2)
		snprintf(err, errlen, "reading the command's output: %s",
			 strerror(errno));
	close(fd);
	if (len < 0) {
		kill(-pid, SIGKILL);
		cmd_reap(pid, now_ms() + 1000, &status, &killed);
		if (len == -1)
			snprintf(err, errlen,
				 "command timed out after %u ms (its process "
				 "group killed)",
				 in->timeout_ms);
		return -1;
	}
	if (cmd_reap(pid, deadline, &status, &killed)) {
		snprintf(err, errlen, "command: cannot reap it: %s",
			 strerror(errno));
		return -1;
	}
	if (killed) {
		snprintf(
			err, errlen,
			"command timed out after %u ms (its process group killed)",
			in->timeout_ms);
		return -1;
	}
	/* Whatever the command left in its group goes with it. */
	kill(-pid, SIGKILL);
	if (WIFSIGNALED(status)) {
		snprintf(err, errlen, "command killed by signal %d",
			 WTERMSIG(status));
		return -1;
	}
	if (WEXITSTATUS(status)) {
		snprintf(err, errlen, "command exited with status %d%s",
			 WEXITSTATUS(status),
			 WEXITSTATUS(status) == 127 ? " (not found?)" : "");
		return -1;
	}
	if (overflow) {
		snprintf(err, errlen, "command wrote more than %d bytes",
			 CMD_OUT_MAX);
		return -1;
	}
	buf[len] = 0;
	if (memchr(buf, 0, (size_t)len)) {
		snprintf(err, errlen, "command wrote a NUL byte");
		return -1;
	}
	return len;
}

/* The output's lines into samples: 0, or -1 with err set. */
static int cmd_parse(char *buf, struct jmd_sample *out, size_t *n, char *err,
		     size_t errlen)
{
	unsigned int lineno = 0;
	char *line, *save = NULL;

	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *l = line;

		lineno++;
		while (*l == ' ' || *l == '\t')
			l++;
		if (!*l || *l == '#' || *l == '\r')
			continue;
		if (*n == JMD_MAX_SAMPLES) {
			snprintf(err, errlen, "more than %d samples",
				 JMD_MAX_SAMPLES);
			return -1;
		}
		if (cmd_line(l, lineno, &out[*n], err, errlen))
			return -1;
		(*n)++;
	}
	if (!*n) {
		snprintf(err, errlen, "command printed no reading");
		return -1;
	}
	return 0;
}

static int cmd_read(struct jmd_input *in, struct jmd_sample *out, size_t *n,
		    char *err, size_t errlen)
{
	char buf[CMD_OUT_MAX + 1];

	*n = 0;
	if (cmd_run(in, buf, err, errlen) < 0)
		return -1;
	return cmd_parse(buf, out, n, err, errlen);
}

const struct jmd_backend jmd_command_backend = {
	.type = "command",
	.set = cmd_set,
	.open = cmd_open,
	.read = cmd_read,
	.close = cmd_close,
};
