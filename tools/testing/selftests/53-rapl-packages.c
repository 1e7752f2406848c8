// SPDX-License-Identifier: GPL-2.0
/*
 * Measured energy on every package: the synthetic meter registered with as
 * many packages as the machine has (one in the usual guest, two in the
 * two-socket boot), each drawing 8 W. Samples carry the sum of all
 * packages; a task pinned to a package is charged that package's energy;
 * node totals conserve (idle + tasks = measured) to the microjoule.
 */
#include <sched.h>

#include "selftest.h"
#include "nl.h"

#define PKG_W 8.0
#define MAX_PKGS 4

/* First online CPU of each package, in package order; returns the count. */
static int package_cpus(int *cpu_of)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int ids[MAX_PKGS], n = 0;
	char path[96], b[32];

	for (int c = 0; c < ncpu; c++) {
		int id, k;

		snprintf(
			path, sizeof(path),
			"/sys/devices/system/cpu/cpu%d/topology/physical_package_id",
			c);
		if (st_read(path, b, sizeof(b)) <= 0)
			return -1;
		id = atoi(b);
		for (k = 0; k < n && ids[k] != id; k++)
			;
		if (k == n) {
			if (n == MAX_PKGS)
				return -1;
			ids[n] = id;
			cpu_of[n++] = c;
		}
	}
	return n;
}

static int npkg, cpu_of[MAX_PKGS];

/*
 * Every test: the synthetic meter on every package, 8 W each, and a socket
 * subscribed to samples; the meter unloaded afterwards, from the parent
 * (also after a crash).
 */
FIXTURE(meter)
{
	struct jnl *nl;
};

FIXTURE_SETUP(meter)
{
	char args[64];

	snprintf(args, sizeof(args), "nr_domains=1 nr_pkgs=%d", npkg);
	ASSERT_EQ(0, st_meter_subscribe(args, &self->nl));
}

FIXTURE_TEARDOWN_PARENT(meter)
{
	EXPECT_EQ(0, st_meter_unload());
}

/* samples: the energy of all packages */
TEST_F(meter, samples)
{
	struct jnl *nl = self->nl;
	double lo = 0.95 * PKG_W * npkg, hi = 1.05 * PKG_W * npkg;
	struct sample_rec s[4];
	int got = st_samples(nl, s, 4);

	/* The first one may straddle the meter's arrival. */
	for (int i = 1; i < got; i++) {
		double w = (double)s[i].domain_uj[JL_D_PKG] * 1e3 /
			   (double)s[i].interval_ns;

		CHECK(s[i].source == REC_SRC_RAPL, "source %u", s[i].source);
		CHECK(w > lo && w < hi, "pkg %.3f W, meter draws %d x %.0f W",
		      w, npkg, PKG_W);
	}
	CHECK(got == 4, "%d samples", got);
	TH_LOG("samples: the energy of all %d package(s)", npkg);
}

/*
 * A child pinned to `cpu` burns `sec` of CPU, then blocks: while it runs
 * it is nearly alone on its package, so it is charged about its package's
 * power times its CPU time, and never more than the package drew over the
 * intervals it ran in.
 */
static void pinned(struct __test_metadata *_metadata, int p, int cpu)
{
	const double sec = 0.4;
	unsigned long long ns = 0, uj = 0;
	char path[64], b[1024], src[32] = "";
	int done[2], go[2];
	double lo, hi;
	bool have;
	pid_t pid;
	char c;

	ASSERT_EQ(0, pipe(done));
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	if (pid == 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			_exit(1);
		st_burn_cpu(sec);
		if (write(done[1], "x", 1) != 1 || read(go[0], &c, 1) < 0)
			_exit(2);
		_exit(0);
	}
	close(done[1]);
	close(go[0]);
	CHECK(read(done[0], &c, 1) == 1, "child on CPU %d burned %.1f s", cpu,
	      sec);
	usleep(3 * st_interval_ms() * 1000 + 50000);
	snprintf(path, sizeof(path), "/proc/energy/%d", pid);
	if (CHECK(st_read(path, b, sizeof(b)) > 0, "read %s", path)) {
		st_kv(b, "cpu_time_ns", &ns);
		st_kvs(b, "source", src, sizeof(src));
		lo = 0.7 * PKG_W * ns / 1e3;
		hi = PKG_W * (ns / 1e3 + 3e3 * st_interval_ms());
		have = st_kv(b, "energy_pkg_uj", &uj) == 0;
		DIAG("package %d: energy_pkg_uj %llu for %llu ns on CPU (%.2f W)",
		     p, uj, ns, ns ? uj * 1e3 / ns : 0.0);
		CHECK(!strcmp(src, "rapl"), "source '%s'", src);
		CHECK(have && uj > lo && uj < hi,
		      "energy_pkg_uj %llu for %llu ns on CPU: within %.0f..%.0f",
		      uj, ns, lo, hi);
	}
	if (write(go[1], "x", 1) < 0)
		DIAG("release write failed");
	close(go[1]);
	close(done[0]);
	waitpid(pid, NULL, 0);
	TH_LOG("a task on package %d (CPU %d) is charged that package's energy",
	       p, cpu);
}

/* a task on each package is charged that package's energy */
TEST_F(meter, pinned)
{
	for (int p = 0; p < npkg; p++)
		pinned(_metadata, p, cpu_of[p]);
}

/* node totals: idle + tasks = measured, to the microjoule */
TEST_F(meter, conservation)
{
	struct node_rec n;
	struct jnl *nl;
	int err;

	/* Some work under the meter, as the tests before left. */
	st_burn_cpu(0.2);
	usleep(3 * st_interval_ms() * 1000 + 50000);
	ASSERT_EQ(0, jnl_open(&nl));
	err = jnl_get_node(nl, &n);
	if (CHECK(err == 0, "GET_NODE: %d", err)) {
		CHECK(n.energy_uj == n.idle_uj + n.task_uj,
		      "energy %llu = idle %llu + tasks %llu",
		      (unsigned long long)n.energy_uj,
		      (unsigned long long)n.idle_uj,
		      (unsigned long long)n.task_uj);
		CHECK(n.task_uj > 0, "tasks were charged");
	}
	jnl_close(nl);
}

int main(int argc, char **argv)
{
	char b[64];

	if (access(JOULES_SYSFS, F_OK)) {
		printf("1..0 # SKIP joules module not loaded\n");
		return KSFT_SKIP;
	}
	if (access(ST_METER, F_OK)) {
		printf("1..0 # SKIP no %s\n", ST_METER);
		return KSFT_SKIP;
	}
	npkg = package_cpus(cpu_of);
	if (npkg < 1) {
		printf("1..0 # SKIP cannot read the CPU topology\n");
		return KSFT_SKIP;
	}
	if (st_read(JOULES_SYSFS "/packages", b, sizeof(b)) > 0)
		DIAG("%d package(s) in the topology; joules: %s", npkg, b);
	return test_harness_run(argc, argv);
}
