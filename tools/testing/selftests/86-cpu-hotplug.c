// SPDX-License-Identifier: GPL-2.0
/*
 * CPU hotplug: a CPU goes offline and comes back (joules' hotplug state
 * drops and recreates its counters and looks up its package again).
 * Intervals go on meanwhile, a task that ran on the offlined CPU and then
 * on the same CPU back online has all its CPU time counted and exactly the
 * model's energy for it, and no checker complains (the runner reads
 * dmesg after every program).
 *
 * A CPU that comes back in a package the module did not size for at its
 * load (test_pkg_beyond_cpu stands in for firmware that did not list it)
 * is refused with the reason, not counted as package 0's, and comes up
 * once the module is unloaded.
 */
#include <sched.h>

#include "kselftest_harness.h"
#include "selftest.h"

#define CPU1 "/sys/devices/system/cpu/cpu1/online"

static int set_online(int on)
{
	return st_write(CPU1, on ? "1" : "0", 1);
}

TEST(offline_and_back)
{
	char coef[128], src[64], b[2048], path[64], hw0[64], hw1[64], c;
	unsigned long long cpu = 0, energy = 0, want;
	int go[2], ready[2];
	struct sample_rec s[3];
	struct jnl *nl;
	pid_t p;

	if (access(CPU1, W_OK))
		SKIP(return, "CPU 1 cannot go offline here");
	ASSERT_LT(0, st_read(JOULES_SYSFS "/hw_counters", hw0, sizeof(hw0)));
	ASSERT_LT(0, st_read(JOULES_SYSFS "/model/coefficients", coef,
			     sizeof(coef)));
	ASSERT_EQ(0, st_write(JOULES_SYSFS "/model/coefficients",
			      "10000000 0 0 0 0 0", 18));
	/* The model's energy whatever an earlier program left (rapl: none here). */
	ASSERT_LT(0, st_read(JOULES_SYSFS "/source", src, sizeof(src)));
	ASSERT_EQ(0, st_write(JOULES_SYSFS "/source", "model", 5));
	ASSERT_EQ(0, jnl_open(&nl));
	ASSERT_EQ(0, jnl_subscribe(nl, JNL_GRP_SAMPLES));
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(ready));
	p = fork();
	if (p == 0) {
		cpu_set_t one;

		close(go[1]);
		/* Runs anywhere while CPU 1 goes and comes back ... */
		st_burn_cpu(0.4);
		if (write(ready[1], "a", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(1);
		/* ... then on CPU 1, back online. */
		CPU_ZERO(&one);
		CPU_SET(1, &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			_exit(2);
		st_burn_cpu(0.3);
		if (write(ready[1], "b", 1) != 1 || read(go[0], &c, 1) < 0)
			_exit(3);
		_exit(0);
	}
	close(go[0]);
	close(ready[1]);
	EXPECT_EQ(0, set_online(0));
	/* Intervals go on with one CPU. */
	EXPECT_EQ(2, st_fresh_samples(nl, s, 2));
	EXPECT_EQ(1, read(ready[0], &c, 1));
	EXPECT_EQ(0, set_online(1));
	EXPECT_EQ(1, write(go[1], "g", 1));
	EXPECT_EQ(1, read(ready[0], &c, 1));
	/* Blocked now: let the worker charge what it has not yet. */
	EXPECT_EQ(3, st_fresh_samples(nl, s, 3));

	snprintf(path, sizeof(path), "/proc/energy/%d", p);
	ASSERT_LT(0, st_read(path, b, sizeof(b)));
	EXPECT_EQ(0, st_kv(b, "cpu_time_ns", &cpu));
	EXPECT_EQ(0, st_kv(b, "energy_uj", &energy));
	/* 10 W per CPU-second, charged interval by interval, rests carried. */
	want = cpu / 100;
	TH_LOG("cpu_time_ns %llu, energy_uj %llu (model: %llu)", cpu, energy,
	       want);
	EXPECT_LE(690000000ULL, cpu);
	EXPECT_LE(want > energy ? want - energy : energy - want, 1);
	/* The counters' presence is what it was (absent under QEMU). */
	ASSERT_LT(0, st_read(JOULES_SYSFS "/hw_counters", hw1, sizeof(hw1)));
	EXPECT_STREQ(hw0, hw1);

	close(go[1]);
	waitpid(p, NULL, 0);
	jnl_close(nl);
	set_online(1);
	st_write(JOULES_SYSFS "/model/coefficients", coef, strlen(coef));
	/* "auto [model] rapl" reads back; the bracketed word is the setting. */
	if (strchr(src, '[') && strchr(src, ']')) {
		*strchr(src, ']') = 0;
		st_write(JOULES_SYSFS "/source", strchr(src, '[') + 1,
			 strlen(strchr(src, '[') + 1));
	}
}

TEST(unknown_package_refused)
{
	char on[8] = "";
	int err;

	if (access(CPU1, W_OK))
		SKIP(return, "CPU 1 cannot go offline here");
	ASSERT_EQ(0, st_sh(". /lib/joules/lib.sh; joules_unload"));
	ASSERT_EQ(0, st_sh("echo joules-selftest: 86 beyond > /dev/kmsg"));
	/* With counters (software ones), so the PMU state is in the rollback. */
	ASSERT_EQ(
		0,
		st_sh(". /lib/joules/lib.sh; joules_load test_pkg_beyond_cpu=1 test_sw_counters=1"));
	EXPECT_EQ(0, set_online(0));
	err = set_online(1);
	EXPECT_EQ(-ERANGE, err);
	EXPECT_LT(0, st_read(CPU1, on, sizeof(on)));
	EXPECT_STREQ("0\n", on);
	EXPECT_EQ(
		0,
		st_sh("dmesg | sed -n '/joules-selftest: 86 beyond/,$p' | "
		      "grep -q 'CPU 1 is in package .*not brought online while joules is loaded'"));
	/* Without joules CPU 1 comes up; then a module loaded as usual. */
	EXPECT_EQ(0, st_sh(". /lib/joules/lib.sh; joules_unload"));
	EXPECT_EQ(0, set_online(1));
	EXPECT_EQ(0, st_sh(". /lib/joules/lib.sh; joules_load"));
	ASSERT_LT(0, st_read(CPU1, on, sizeof(on)));
	EXPECT_STREQ("1\n", on);
}

TEST_HARNESS_MAIN
