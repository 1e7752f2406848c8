// SPDX-License-Identifier: GPL-2.0
/*
 * Predicted-vs-measured scatter plot, drawn by gnuplot run as a child
 * process with the script and the data on its stdin.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "train.h"

/* More points than this make a slow, unreadable plot: take every k-th. */
#define JT_PLOT_MAX 20000

static const char *ext_of(const char *file)
{
	const char *dot = strrchr(file, '.');

	return dot && !strchr(dot, '/') ? dot + 1 : "";
}

/* A gnuplot single-quoted string: '' stands for one quote. */
static void put_quoted(FILE *fp, const char *s)
{
	fputc('\'', fp);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', fp);
		fputc(*s, fp);
	}
	fputc('\'', fp);
}

/* In the child: gnuplot reading its script from the pipe. */
static void __attribute__((noreturn)) plot_exec(const char *gp, const int *fd)
{
	close(fd[1]);
	dup2(fd[0], STDIN_FILENO);
	close(fd[0]);
	/* gnuplot's messages belong on stderr; our stdout may be the result. */
	dup2(STDERR_FILENO, STDOUT_FILENO);
	execl(gp, "gnuplot", (char *)NULL);
	_exit(127);
}

/* The gnuplot script, with the points inline (at most JT_PLOT_MAX). */
static void plot_script(FILE *fp, const char *file, const char *term,
			const char *title, const double *measured,
			const double *model, const double *base, size_t n)
{
	size_t i, step;

	fprintf(fp, "set terminal %s\nset output ", term);
	put_quoted(fp, file);
	fputs("\nset title ", fp);
	put_quoted(fp, title);
	fputs("\nset xlabel 'measured power (W)'\nset ylabel 'predicted power (W)'\n"
	      "set grid\nset key top left\nset size ratio -1\n$d << EOD\n",
	      fp);
	step = n > JT_PLOT_MAX ? (n + JT_PLOT_MAX - 1) / JT_PLOT_MAX : 1;
	for (i = 0; i < n; i += step)
		fprintf(fp, "%.6g %.6g %.6g\n", measured[i], model[i], base[i]);
	fputs("EOD\nplot $d using 1:3 with points pt 7 ps 0.3 lc rgb '#a0a0a0' "
	      "title 'CPU-time only', \\\n"
	      "     $d using 1:2 with points pt 7 ps 0.3 lc rgb '#d04010' "
	      "title 'multi-feature model', \\\n"
	      "     x with lines lc rgb 'black' dt 2 title 'predicted = measured'\n"
	      "unset output\nquit\n",
	      fp);
}

/* gnuplot's exit, and the file it should have written. */
static int plot_result(const char *file, int status, char *err, size_t errlen)
{
	struct stat st;

	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		snprintf(err, errlen, "gnuplot failed (%s %d) writing %s",
			 WIFEXITED(status) ? "exit status" : "signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) :
					     WTERMSIG(status),
			 file);
		return -EIO;
	}
	if (stat(file, &st) || !st.st_size) {
		snprintf(err, errlen, "gnuplot wrote no %s", file);
		return -EIO;
	}
	return 0;
}

int jt_plot(const char *file, const double *measured, const double *model,
	    const double *base, size_t n, const char *title, char *err,
	    size_t errlen)
{
	const char *ext = ext_of(file), *term;
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	char gp[4096];
	int fd[2], status, e;
	pid_t pid;
	FILE *fp;

	if (!strcasecmp(ext, "svg"))
		term = "svg size 900,700 dynamic background rgb 'white'";
	else if (!strcasecmp(ext, "png"))
		term = "pngcairo size 900,700";
	else {
		snprintf(err, errlen, "%s: plot file must end in .svg or .png",
			 file);
		return -EINVAL;
	}
	if (jt_which("gnuplot", gp, sizeof(gp))) {
		snprintf(
			err, errlen,
			"gnuplot not found in PATH (needed for --plot; Debian: "
			"apt-get install gnuplot-nox)");
		return -ENOENT;
	}
	if (pipe(fd)) {
		e = errno;
		snprintf(err, errlen, "pipe: %s", strerror(e));
		return -e;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		e = errno;
		close(fd[0]);
		close(fd[1]);
		snprintf(err, errlen, "fork: %s", strerror(e));
		return -e;
	}
	if (!pid)
		plot_exec(gp, fd);
	close(fd[0]);
	/* If gnuplot dies early, writing must fail with EPIPE, not kill us. */
	sigaction(SIGPIPE, &ign, &old);
	fp = fdopen(fd[1], "w");
	if (!fp) {
		close(fd[1]);
	} else {
		plot_script(fp, file, term, title, measured, model, base, n);
		fclose(fp);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			e = errno;
			sigaction(SIGPIPE, &old, NULL);
			snprintf(err, errlen, "waitpid: %s", strerror(e));
			return -e;
		}
	}
	sigaction(SIGPIPE, &old, NULL);
	return plot_result(file, status, err, errlen);
}
