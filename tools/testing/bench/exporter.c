// SPDX-License-Identifier: GPL-2.0
/*
 * joules-exporter's cost with N sleeping processes (default 10,000) spread
 * over G cgroups (default 1,000; -g 0 for none): the exporter is started
 * on 127.0.0.1, scraped K times per trial (GET
 * /metrics, one connection each, like Prometheus without keep-alive), and
 * its own CPU time is read from /proc/<pid>/task/<tid>/schedstat (ns, all
 * its threads). Per trial:
 *   scrape_cpu  - exporter CPU time per scrape (goal: <= 50 ms);
 *   scrape_wall - wall time per scrape, as the client sees it;
 *   rss         - exporter resident memory after the trial (goal: < 20 MB);
 *   peak        - its peak resident memory (VmHWM) so far;
 *   body        - bytes per exposition.
 * Run three times: the defaults (node, and every cgroup: five series each,
 * eight on 6.3+ kernels; per-process series off; where the goals apply),
 * --cgroups=off (node only, for comparison), and --processes=top=100 (a
 * dump of every process each scrape as well; no goal).
 *
 *   bench-exporter [-n TASKS] [-g CGROUPS] [-k SCRAPES] [-r TRIALS] [-x EXPORTER] [-q]
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

struct xb {
	unsigned long n;
	unsigned long cgroups;
	const char *cg; /* --cgroups= value */
	unsigned int scrapes;
	const char *exe;
	const char *procs; /* --processes= value */
	unsigned short port;
	pid_t pid;
};

/* CPU time of every thread of pid, ns; -1 if unreadable. */
static double proc_cpu_ns(pid_t pid)
{
	char path[64];
	struct dirent *de;
	double sum = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char f[400], buf[128];

		if (de->d_name[0] == '.')
			continue;
		snprintf(f, sizeof(f), "%s/%s/schedstat", path, de->d_name);
		if (bench_read_file(f, buf, sizeof(buf)) > 0)
			sum += strtod(buf, NULL);
	}
	closedir(d);
	return sum;
}

/* VmRSS and VmHWM of pid, kB. */
static int proc_mem_kb(pid_t pid, long *rss, long *hwm)
{
	char path[64], buf[4096], *p;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (bench_read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	p = strstr(buf, "VmRSS:");
	*rss = p ? strtol(p + 6, NULL, 10) : -1;
	p = strstr(buf, "VmHWM:");
	*hwm = p ? strtol(p + 6, NULL, 10) : -1;
	return *rss < 0 || *hwm < 0 ? -1 : 0;
}

/* One GET /metrics; the body's size, or -1. */
static long scrape(unsigned short port)
{
	static char buf[1 << 16];
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port) };
	const char req[] = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n"
			   "Connection: close\r\n\r\n";
	long total = 0, hdr = -1;
	ssize_t n;
	int fd;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL) < 0) {
		close(fd);
		return -1;
	}
	while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) {
		if (hdr < 0) {
			char *e = memmem(buf, (size_t)n, "\r\n\r\n", 4);

			if (strncmp(buf, "HTTP/1.1 200", 12)) {
				close(fd);
				return -1;
			}
			if (e)
				hdr = (e + 4 - buf) + total;
		}
		total += n;
	}
	close(fd);
	return hdr < 0 ? -1 : total - hdr;
}

static int start_exporter(struct xb *x)
{
	char listen[64], procs[64], cg[64];

	snprintf(listen, sizeof(listen), "--web.listen-address=127.0.0.1:%u",
		 x->port);
	snprintf(procs, sizeof(procs), "--processes=%s", x->procs);
	snprintf(cg, sizeof(cg), "--cgroups=%s", x->cg);
	x->pid = fork();
	if (x->pid < 0)
		return -1;
	if (!x->pid) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd >= 0)
			dup2(fd, STDERR_FILENO);
		execl(x->exe, x->exe, listen, procs, cg, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 200; i++) {
		if (scrape(x->port) >= 0)
			return 0;
		usleep(50000);
	}
	fprintf(stderr, "bench-exporter: %s does not answer on port %u\n",
		x->exe, x->port);
	return -1;
}

static void stop_exporter(struct xb *x)
{
	if (x->pid > 0) {
		kill(x->pid, SIGTERM);
		waitpid(x->pid, NULL, 0);
	}
	x->pid = 0;
}

static int trial(void *arg, bool loaded, double *out)
{
	struct xb *x = arg;
	double c0, c1, t0, t1;
	long body = 0, rss, hwm;

	(void)loaded;
	if (!x->pid && start_exporter(x))
		return -1;
	c0 = proc_cpu_ns(x->pid);
	t0 = bench_now();
	for (unsigned int i = 0; i < x->scrapes; i++) {
		body = scrape(x->port);
		if (body < 0) {
			fprintf(stderr, "bench-exporter: scrape failed\n");
			return -1;
		}
	}
	t1 = bench_now();
	c1 = proc_cpu_ns(x->pid);
	if (c0 < 0 || c1 < 0 || proc_mem_kb(x->pid, &rss, &hwm))
		return -1;
	out[0] = (c1 - c0) / 1e6 / x->scrapes;
	out[1] = (t1 - t0) * 1e3 / x->scrapes;
	out[2] = (double)rss / 1024;
	out[3] = (double)hwm / 1024;
	out[4] = (double)body;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct bench_metric off_metrics[] = {
		{ "scrape_cpu", "ms", 50 }, { "scrape_wall", "ms", 0 },
		{ "rss", "MB", 20 },	    { "peak", "MB", 0 },
		{ "body", "bytes", 0 },
	};
	static const struct bench_metric nocg_metrics[] = {
		{ "scrape_cpu", "ms", 0 }, { "scrape_wall", "ms", 0 },
		{ "rss", "MB", 0 },	   { "peak", "MB", 0 },
		{ "body", "bytes", 0 },
	};
	static const struct bench_metric top_metrics[] = {
		{ "scrape_cpu", "ms", 0 }, { "scrape_wall", "ms", 0 },
		{ "rss", "MB", 0 },	   { "peak", "MB", 0 },
		{ "body", "bytes", 0 },
	};
	struct xb x = {
		.n = 10000, .cgroups = 1000, .scrapes = 50, .exe = NULL
	};
	unsigned int reps = 5;
	struct bench_limits old;
	int rc, rc2, rc3;
	double t0;

	const struct bench_opt opts[] = {
		{ 'n', BENCH_ULONG, &x.n, "TASKS" },
		{ 'g', BENCH_ULONG, &x.cgroups, "CGROUPS" },
		{ 'k', BENCH_UINT, &x.scrapes, "SCRAPES" },
		{ 'r', BENCH_UINT, &reps, "TRIALS" },
		{ 'x', BENCH_STR, &x.exe, "EXPORTER" },
		BENCH_OPT_QUIET,
	};
	int err;

	err = bench_parse_args(argc, argv, "bench-exporter", opts,
			       sizeof(opts) / sizeof(opts[0]));
	if (err)
		return err;
	if (!x.scrapes)
		x.scrapes = 1;
	/* The guest's loopback starts down; on a real machine this is a no-op. */
	if (system("ip link set lo up 2>/dev/null")) {
		/* not fatal: it is up already, or the connect below says why */
	}
	if (!x.exe) {
		static const char *const tries[] = {
			"/usr/bin/joules-exporter",
			"/usr/local/bin/joules-exporter",
			"../../../user/build/joules-exporter",
		};

		for (size_t i = 0; i < sizeof(tries) / sizeof(tries[0]); i++)
			if (!access(tries[i], X_OK)) {
				x.exe = tries[i];
				break;
			}
		if (!x.exe) {
			fprintf(stderr,
				"bench-exporter: no joules-exporter (-x PATH)\n");
			return 1;
		}
	}
	bench_task_room(x.n, &old);
	t0 = bench_now();
	if (bench_spawn_sleepers(x.n, false) ||
	    (x.cgroups && bench_cgroups_make(x.cgroups))) {
		bench_reap_sleepers();
		bench_cgroups_remove(x.cgroups);
		return 1;
	}
	/* The processes spread over the cgroups, as on a node's containers. */
	if (x.cgroups) {
		unsigned long np;
		const pid_t *pids = bench_sleeper_pids(&np);

		for (unsigned long i = 0; i < np; i++)
			if (bench_cgroup_move(pids[i], (long)(i % x.cgroups))) {
				bench_reap_sleepers();
				bench_cgroups_remove(x.cgroups);
				return 1;
			}
	}
	printf("== exporter: %s, %lu sleeping processes in %lu cgroups (set up in %.1f s), %u scrapes per trial ==\n",
	       x.exe, x.n, x.cgroups, bench_now() - t0, x.scrapes);
	fflush(stdout);

	x.port = 19764;
	x.procs = "off";
	x.cg = "all";
	{
		struct bench_def d = { .name = "exporter",
				       .metrics = off_metrics,
				       .nr_metrics = 5,
				       .reps = reps,
				       .trial = trial,
				       .arg = &x };

		rc = bench_run_loaded(&d);
	}
	stop_exporter(&x);
	x.port = 19766;
	x.cg = "off";
	{
		struct bench_def d = { .name = "exporter-nocgroups",
				       .metrics = nocg_metrics,
				       .nr_metrics = 5,
				       .reps = reps,
				       .trial = trial,
				       .arg = &x };

		rc3 = bench_run_loaded(&d);
	}
	stop_exporter(&x);
	x.port = 19765;
	x.procs = "top=100";
	x.cg = "all";
	{
		struct bench_def d = { .name = "exporter-top100",
				       .metrics = top_metrics,
				       .nr_metrics = 5,
				       .reps = reps,
				       .trial = trial,
				       .arg = &x };

		rc2 = bench_run_loaded(&d);
	}
	stop_exporter(&x);
	bench_set_loaded(false);
	bench_reap_sleepers();
	if (x.cgroups)
		bench_cgroups_remove(x.cgroups);
	bench_task_room_restore(&old);
	if (rc < 0 || rc2 < 0 || rc3 < 0)
		return 1;
	return rc;
}
