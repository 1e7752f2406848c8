// SPDX-License-Identifier: GPL-2.0
/* show, top and record for both tools (cmd.h): the source-free half. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"

int show_getopt(const struct cli_opt *opts, void (*help)(FILE *fp), int argc,
		char **argv)
{
	const struct cli_cmdline cl = {
		.cmd = "show",
		.opts = opts,
		.help = help,
		.min_args = 1,
		.max_args = -1,
		.operand = "PID",
	};
	int rc = cli_getopt(&cl, argc, argv);

	return rc == CLI_GO ? show_check_pids(optind, argc, argv) : rc;
}

int show_check_pids(int first, int argc, char **argv)
{
	/* All PIDs are checked before any is looked up. */
	for (int i = first; i < argc; i++) {
		pid_t pid;

		if (cli_parse_pid(argv[i], &pid))
			return cli_usage("show", "'%s' is not a process id",
					 argv[i]);
	}
	return CLI_GO;
}

int show_run(const struct show_args *a, int n, char **pids, show_get_fn get,
	     void *ctx)
{
	int rc = CLI_OK;

	for (int i = 0; i < n; i++) {
		struct task_rec t;
		pid_t pid;

		cli_parse_pid(pids[i], &pid);
		if (get(ctx, pid, a->thread, &t)) {
			rc = CLI_FAIL;
			continue;
		}
		if (a->json) {
			out_task_json(stdout, &t);
		} else {
			if (i > 0)
				putchar('\n');
			out_task_text(stdout, &t);
		}
	}
	if (fflush(stdout))
		rc = CLI_FAIL;
	return rc;
}

/* The exit status when a snapshot returned err. */
static int top_end(int err)
{
	return err > 0 ? CLI_OK : CLI_FAIL;
}

int top_run(const struct top_args *a, const struct top_source *src)
{
	return top_run_rows(a, src, NULL);
}

int top_run_rows(const struct top_args *a, const struct top_source *src,
		 top_print_fn print)
{
	bool interactive = !a->batch && isatty(STDOUT_FILENO);
	struct top_state ts;
	int err, rc = CLI_OK;

	top_init(&ts);
	err = src->snapshot(src->ctx, a->threads, &ts);
	if (err) {
		rc = top_end(err);
		goto out;
	}
	for (uint64_t i = 0; !a->iterations || i < a->iterations; i++) {
		char summary[200], clock[16];
		size_t rows = (size_t)a->max_rows;
		time_t now;
		int n;

		cli_sleep_ns(a->delay);
		if (cli_stop)
			break;
		err = src->snapshot(src->ctx, a->threads, &ts);
		if (err) {
			rc = top_end(err);
			break;
		}
		now = time(NULL);
		strftime(clock, sizeof(clock), "%H:%M:%S", localtime(&now));
		n = snprintf(summary, sizeof(summary),
			     "%s top - %s, every %.3g s", cli_prog, clock,
			     (double)a->delay / 1e9);
		if (n > 0 && (size_t)n < sizeof(summary))
			src->summary(src->ctx, summary + n,
				     sizeof(summary) - (size_t)n);
		if (interactive) {
			struct winsize ws;

			if (!rows && !ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) &&
			    ws.ws_row > 5)
				rows = ws.ws_row - 5;
			fputs("\033[H\033[2J", stdout);
		} else if (i) {
			putchar('\n');
		}
		if (print)
			print(src->ctx, stdout, rows, summary);
		else
			top_print(&ts, stdout, rows, summary);
		if (fflush(stdout)) {
			rc = cli_stop ? CLI_OK : CLI_FAIL;
			break;
		}
	}
out:
	top_free(&ts);
	return rc;
}

int record_getopt(const struct cli_opt *opts, void (*help)(FILE *fp), int argc,
		  char **argv)
{
	const struct cli_cmdline cl = {
		.cmd = "record",
		.opts = opts,
		.help = help,
		.min_args = 1,
		.max_args = 1,
		.operand = "FILE",
	};

	return cli_getopt(&cl, argc, argv);
}

int record_run(const struct record_args *a, const char *path,
	       const struct record_source *src)
{
	uint64_t rows = 0, end = 0, start;
	int err, rc = CLI_OK;
	FILE *fp;

	fp = strcmp(path, "-") ? fopen(path, "w") : stdout;
	if (!fp) {
		cli_err("%s: %s", path, strerror(errno));
		return CLI_FAIL;
	}
	err = out_node_facts(fp);
	if (!err)
		err = out_record_header(fp);
	if (!err)
		err = src->start(src->ctx, &start);
	if (err) {
		cli_err("%s: %s", path, strerror(-err));
		rc = CLI_FAIL;
		goto out;
	}
	if (a->duration)
		end = start + a->duration;
	while (!cli_stop && (!a->count || rows < a->count)) {
		struct sample_rec s;
		int r = src->next(src->ctx, end, &s);

		if (r == RECORD_NONE)
			continue;
		if (r == RECORD_END)
			break;
		if (r != RECORD_SAMPLE) {
			rc = CLI_FAIL;
			break;
		}
		err = out_record_row(fp, &s);
		if (err) {
			cli_err("%s: %s", path, strerror(-err));
			rc = CLI_FAIL;
			break;
		}
		rows++;
	}
	if (fp != stdout)
		fprintf(stderr, "%s: recorded %llu samples to %s\n", cli_prog,
			(unsigned long long)rows, path);
out:
	if (fp != stdout && fclose(fp) && rc == CLI_OK) {
		cli_err("%s: %s", path, strerror(errno));
		rc = CLI_FAIL;
	}
	return rc;
}
