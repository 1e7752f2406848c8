// SPDX-License-Identifier: GPL-2.0
/*
 * joules_testmeter: a synthetic energy source for the selftests, registered
 * through the same joules_meter interface as the RAPL MSRs (QEMU has no
 * RAPL). Built by `make testmod`, never installed.
 *
 * It has nr_pkgs packages (default 1), all alike: they share one set of
 * counters, so each package reads what a one-package meter would. Each
 * domain draws a constant power, settable at runtime in
 * /sys/module/joules_testmeter/parameters/<domain>_uw, and its energy is
 * exactly power x elapsed time on the ktime clock: no rounding anywhere but
 * the final floor to whole counts and whole microjoules, with remainders
 * carried. The counters are 32 bits wide with a tiny unit (default ESU 28:
 * 3.7 nJ a count, a wrap every 16 J, i.e. every 2 s at 8 W) and start just
 * below the wrap, so tests see wraps within seconds. `energy_uj` gives the
 * exact energy since load in rapl/energy_uj's layout, for comparing the
 * two.
 *
 * Loaded with freq_mhz > 0 it is also the node's frequency source (QEMU
 * has no PMU and no cpufreq): the frequency it reports is the parameter's
 * value at each interval, settable at runtime; 0 then means unknown.
 *
 * kernel_socket_request: writing joules' generic netlink family id sends
 * GET_NODE on a kernel socket, which has no file and so no opener; reading
 * it gives the answer: 0 (answered) or the error, a negative errno.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/net.h>
#include <linux/netlink.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>

#include "freq.h"
#include "source.h"
#include "uapi/joules_netlink.h"

#define FJ_PER_UJ 1000000000ULL
#define FJ_PER_J 1000000000000000ULL
/* 100 W for at most 100 s is 1e19 fJ: the largest step that fits a u64. */
#define TM_POWER_LIMIT_UW 100000000ULL
#define TM_STEP_NS (100ULL * NSEC_PER_SEC)

struct tm_dom {
	u64 power_uw; /* in force since seg_ns */
	u64 cnt; /* counts since the origin; the counter is the low 32 bits */
	u64 crem; /* remainder of cnt, in 2^-esu fJ (< 1e15) */
	u64 uj; /* exact energy since load: uj + rem_fj */
	u64 rem_fj; /* < 1e9 */
};

static DEFINE_SPINLOCK(tm_lock); /* everything below */
static struct tm_dom dom[JL_NR_DOMAINS] = {
	[JL_D_PKG] = { .power_uw = 8000000 },
	[JL_D_CORE] = { .power_uw = 3000000 },
	[JL_D_DRAM] = { .power_uw = 2000000 },
	[JL_D_PSYS] = { .power_uw = 12000000 },
};
static u64 seg_ns; /* last time the energy was brought up to date */
static bool started;
static unsigned long reads;
/* Reads joules made of this module once it had begun to unload. */
static atomic_t late_reads = ATOMIC_INIT(0);

/*
 * A provider that misbehaves as it unloads, for 32-source-owner: one that
 * takes its time before unregistering, and one that never does.
 */
static unsigned int exit_delay_ms;
module_param(exit_delay_ms, uint, 0644);
MODULE_PARM_DESC(exit_delay_ms, "Sleep this long in exit before unregistering");
static unsigned int read_delay_us;
module_param(read_delay_us, uint, 0644);
MODULE_PARM_DESC(read_delay_us, "Busy-wait this long in every read (at most 5000)");
static bool forget_on_exit;
module_param(forget_on_exit, bool, 0644);
MODULE_PARM_DESC(forget_on_exit, "Leave the meter and frequency source registered at exit");

/* Every read: count it if it comes while unloading, and take its time. */
static void count_late(void)
{
	unsigned int us = min(READ_ONCE(read_delay_us), 5000U);

	if (!module_is_live(THIS_MODULE))
		atomic_inc(&late_reads);
	if (us)
		udelay(us);
}

static unsigned int nr_pkgs = 1;
module_param(nr_pkgs, uint, 0444);
MODULE_PARM_DESC(nr_pkgs, "Packages, all alike (default 1, at most 4)");
static unsigned int nr_domains = 2;
module_param(nr_domains, uint, 0444);
MODULE_PARM_DESC(nr_domains,
		 "1: pkg; 2: + dram (default); 3: + core; 4: + psys");
static unsigned int esu = 28;
module_param(esu, uint, 0444);
MODULE_PARM_DESC(
	esu, "One count is 2^-esu J (default 28: 3.7 nJ, a wrap every 16 J)");
static unsigned int dram_esu = 26;
module_param(dram_esu, uint, 0444);
MODULE_PARM_DESC(
	dram_esu,
	"DRAM's own unit, as on Intel servers (default 26; = esu: none)");
static unsigned long long max_power_uw = 20000000;
module_param(max_power_uw, ullong, 0444);
MODULE_PARM_DESC(
	max_power_uw,
	"Plausibility bound per domain, uW (default 20 W, at most 100 W)");
static unsigned int start_ms = 300;
module_param(start_ms, uint, 0444);
MODULE_PARM_DESC(
	start_ms,
	"Counters start this long (at the load-time power) before their wrap");

/* jl_domain_names[] is not exported; the same names, for the text files. */
static const char *const dnames[JL_NR_DOMAINS] = {
	[JL_D_PKG] = "pkg",
	[JL_D_CORE] = "core",
	[JL_D_DRAM] = "dram",
	[JL_D_PSYS] = "psys",
};

static unsigned int esu_of(unsigned int d)
{
	return d == JL_D_DRAM ? dram_esu : esu;
}

static u32 domain_bits(void)
{
	static const u32 order[] = { 1U << JL_D_PKG, 1U << JL_D_DRAM,
				     1U << JL_D_CORE, 1U << JL_D_PSYS };
	u32 m = 0;
	unsigned int i;

	for (i = 0; i < nr_domains && i < ARRAY_SIZE(order); i++)
		m |= order[i];
	return m;
}

/* fJ * 2^e / 1e15 counts, remainder in *rem (2^-e fJ units, < 1e15). */
static u64 fj_to_counts(u64 fj, unsigned int e, u64 *rem)
{
	u64 q = mul_u64_u64_div_u64(fj, 1ULL << e, FJ_PER_J);

	/* The true remainder is below 1e15, so u64 wrap-around gets it exactly. */
	*rem = (fj << e) - q * FJ_PER_J;
	return q;
}

static void add_energy(struct tm_dom *x, u64 fj, unsigned int e)
{
	u64 q, r;
	u32 rfj;

	x->uj += div_u64_rem(fj, FJ_PER_UJ, &rfj);
	x->rem_fj += rfj;
	if (x->rem_fj >= FJ_PER_UJ) {
		x->rem_fj -= FJ_PER_UJ;
		x->uj++;
	}
	q = fj_to_counts(fj, e, &r);
	x->crem += r;
	if (x->crem >= FJ_PER_J) {
		x->crem -= FJ_PER_J;
		q++;
	}
	x->cnt += q;
}

/* Bring every domain's energy up to `now`; tm_lock held. */
static void advance(u64 now)
{
	u32 doms = domain_bits();
	u64 dt = now - seg_ns;
	unsigned int d;

	seg_ns = now;
	while (dt) {
		u64 step = min_t(u64, dt, TM_STEP_NS);

		dt -= step;
		for (d = 0; d < JL_NR_DOMAINS; d++)
			if (doms & (1U << d))
				add_energy(&dom[d], dom[d].power_uw * step,
					   esu_of(d));
	}
}

static int tm_read(struct joules_meter *m, unsigned int pkg, u64 *raw)
{
	unsigned int d;

	count_late();
	spin_lock(&tm_lock);
	advance(ktime_get_ns());
	for (d = 0; d < JL_NR_DOMAINS; d++)
		if (m->domains & (1U << d))
			raw[d] = dom[d].cnt & 0xffffffffULL;
	reads++;
	spin_unlock(&tm_lock);
	return 0;
}

static struct joules_meter tm = {
	.name = "joules_testmeter",
	.owner = THIS_MODULE,
	.bits = 32,
	.read = tm_read,
};

/* <domain>_uw: the energy so far stays at the old power, the rest at the new. */
static int power_set(const char *val, const struct kernel_param *kp)
{
	u64 *p = kp->arg, v;
	int err = kstrtou64(val, 0, &v);

	if (err)
		return err;
	spin_lock(&tm_lock);
	/* Above the meter's bound source.c would call it a bogus read. */
	if (v > (started ? max_power_uw : TM_POWER_LIMIT_UW)) {
		spin_unlock(&tm_lock);
		return -EINVAL;
	}
	if (started)
		advance(ktime_get_ns());
	*p = v;
	spin_unlock(&tm_lock);
	return 0;
}

static int power_get(char *buf, const struct kernel_param *kp)
{
	u64 v;

	spin_lock(&tm_lock);
	v = *(u64 *)kp->arg;
	spin_unlock(&tm_lock);
	return sysfs_emit(buf, "%llu\n", v);
}

static const struct kernel_param_ops power_ops = {
	.set = power_set,
	.get = power_get,
};
module_param_cb(pkg_uw, &power_ops, &dom[JL_D_PKG].power_uw, 0644);
MODULE_PARM_DESC(pkg_uw, "Package power, uW (default 8 W)");
module_param_cb(core_uw, &power_ops, &dom[JL_D_CORE].power_uw, 0644);
MODULE_PARM_DESC(core_uw, "Core power, uW (default 3 W)");
module_param_cb(dram_uw, &power_ops, &dom[JL_D_DRAM].power_uw, 0644);
MODULE_PARM_DESC(dram_uw, "DRAM power, uW (default 2 W)");
module_param_cb(psys_uw, &power_ops, &dom[JL_D_PSYS].power_uw, 0644);
MODULE_PARM_DESC(psys_uw, "Platform power, uW (default 12 W)");

/*
 * energy_uj (read-only): exact energy since load, like rapl/energy_uj, a
 * line per package; counters (read-only): the raw 32-bit values a read
 * would return now, and the number of reads of all packages.
 */
static int show(char *buf, bool raw)
{
	u32 doms = domain_bits();
	unsigned int d, p;
	int n = 0;

	spin_lock(&tm_lock);
	if (started)
		advance(ktime_get_ns());
	for (p = 0; p < nr_pkgs; p++) {
		n += sysfs_emit_at(buf, n, "package %u:", p);
		for (d = 0; d < JL_NR_DOMAINS; d++) {
			if (!(doms & (1U << d)))
				continue;
			if (raw)
				n += sysfs_emit_at(buf, n, " %s=0x%08llx",
						   dnames[d],
						   dom[d].cnt & 0xffffffffULL);
			else
				n += sysfs_emit_at(buf, n, " %s=%llu",
						   dnames[d], dom[d].uj);
		}
		if (raw && p == nr_pkgs - 1)
			n += sysfs_emit_at(buf, n, " reads=%lu", reads);
		n += sysfs_emit_at(buf, n, "\n");
	}
	spin_unlock(&tm_lock);
	return n;
}

static int energy_get(char *buf, const struct kernel_param *kp)
{
	return show(buf, false);
}

static int counters_get(char *buf, const struct kernel_param *kp)
{
	return show(buf, true);
}

static int ro_set(const char *val, const struct kernel_param *kp)
{
	return -EPERM;
}

static const struct kernel_param_ops energy_ops = {
	.set = ro_set,
	.get = energy_get,
};
static const struct kernel_param_ops counters_ops = {
	.set = ro_set,
	.get = counters_get,
};
module_param_cb(energy_uj, &energy_ops, NULL, 0444);
MODULE_PARM_DESC(energy_uj, "Exact energy since load, uJ (read-only)");
module_param_cb(counters, &counters_ops, NULL, 0444);
MODULE_PARM_DESC(counters, "Raw 32-bit counters and read count (read-only)");

static int ks_result = 1;	/* 1: nothing asked yet */

/* The first answer to GET_NODE sent on a kernel socket: 0 or -errno. */
static int ks_request(u16 family)
{
	struct {
		struct nlmsghdr n;
		struct genlmsghdr g;
	} req = {
		.n = { .nlmsg_len = sizeof(req), .nlmsg_type = family,
		       .nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK, .nlmsg_seq = 1 },
		.g = { .cmd = JOULES_CMD_GET_NODE, .version = JOULES_GENL_VERSION },
	};
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	struct msghdr msg = { .msg_name = &kernel, .msg_namelen = sizeof(kernel) };
	struct kvec iov = { .iov_base = &req, .iov_len = sizeof(req) };
	struct nlmsghdr *nh;
	struct socket *sock;
	int err, n;

	err = sock_create_kern(&init_net, AF_NETLINK, SOCK_RAW, NETLINK_GENERIC, &sock);
	if (err)
		return err;
	err = kernel_sendmsg(sock, &msg, &iov, 1, sizeof(req));
	if (err < 0)
		goto out;
	nh = kmalloc(8192, GFP_KERNEL);
	err = -ENOMEM;
	if (!nh)
		goto out;
	/* The request ran in sendmsg(): its answer is queued already. */
	memset(&msg, 0, sizeof(msg));
	iov.iov_base = nh;
	iov.iov_len = 8192;
	n = kernel_recvmsg(sock, &msg, &iov, 1, 8192, MSG_DONTWAIT);
	if (n < 0)
		err = n;
	else if (n < (int)sizeof(*nh) || nh->nlmsg_len > n)
		err = -EBADMSG;
	else if (nh->nlmsg_type == NLMSG_ERROR)
		err = ((struct nlmsgerr *)nlmsg_data(nh))->error;
	else
		err = 0;
	kfree(nh);
out:
	sock_release(sock);
	return err;
}

static int ks_set(const char *val, const struct kernel_param *kp)
{
	u16 family;
	int err = kstrtou16(val, 0, &family);

	if (err)
		return err;
	ks_result = ks_request(family);
	return 0;
}

static int ks_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", ks_result);
}

static const struct kernel_param_ops ks_ops = {
	.set = ks_set,
	.get = ks_get,
};
module_param_cb(kernel_socket_request, &ks_ops, NULL, 0600);
MODULE_PARM_DESC(kernel_socket_request,
		 "Write the family id: GET_NODE on a kernel socket; read: 0 or -errno");

static unsigned int freq_mhz;
module_param(freq_mhz, uint, 0644);
MODULE_PARM_DESC(freq_mhz,
		 "Node frequency to report, MHz (0 at load: not a frequency source)");
static bool freq_registered;

static int tm_read_mhz(struct joules_freq_source *s, u32 *mhz)
{
	count_late();
	*mhz = READ_ONCE(freq_mhz);
	return *mhz ? 0 : -ENODATA;
}

static struct joules_freq_source tm_freq = {
	.name = "joules_testmeter",
	.owner = THIS_MODULE,
	.read_mhz = tm_read_mhz,
};

static int __init tm_init(void)
{
	u64 now, r;
	unsigned int d;
	u32 doms;
	int err;

	if (!nr_pkgs || nr_pkgs > 4 || !nr_domains ||
	    nr_domains > JL_NR_DOMAINS || esu > 31 ||
	    dram_esu > 31 || !max_power_uw ||
	    max_power_uw > TM_POWER_LIMIT_UW || start_ms > 10000)
		return -EINVAL;
	doms = domain_bits();
	for (d = 0; d < JL_NR_DOMAINS; d++)
		if ((doms & (1U << d)) && dom[d].power_uw > max_power_uw)
			return -EINVAL;
	tm.nr_pkgs = nr_pkgs;
	tm.domains = doms;
	tm.esu = esu;
	if ((doms & (1U << JL_D_DRAM)) && dram_esu != esu) {
		tm.esu_mask = 1U << JL_D_DRAM;
		tm.domain_esu[JL_D_DRAM] = dram_esu;
	}
	tm.max_power_uw = max_power_uw;

	spin_lock(&tm_lock);
	now = ktime_get_ns();
	for (d = 0; d < JL_NR_DOMAINS; d++) {
		/* Counts of start_ms at this power, clamped to one wrap. */
		u64 c = fj_to_counts(dom[d].power_uw * start_ms * NSEC_PER_MSEC,
				     esu_of(d), &r);

		c = clamp_t(u64, c, 1, 0xffffffffULL);
		dom[d].cnt = (1ULL << 32) - c;
		dom[d].crem = 0;
		dom[d].uj = 0;
		dom[d].rem_fj = 0;
	}
	seg_ns = now;
	started = true;
	spin_unlock(&tm_lock);

	err = joules_meter_register(&tm);
	if (err) {
		spin_lock(&tm_lock);
		started = false;
		spin_unlock(&tm_lock);
		return err;
	}
	if (freq_mhz) {
		err = joules_freq_register(&tm_freq);
		if (err) {
			joules_meter_unregister(&tm);
			return err;
		}
		freq_registered = true;
	}
	return 0;
}

static void __exit tm_exit(void)
{
	if (exit_delay_ms)
		msleep(exit_delay_ms);
	if (!forget_on_exit) {
		if (freq_registered)
			joules_freq_unregister(&tm_freq);
		joules_meter_unregister(&tm);
	}
	pr_info("%d read(s) while unloading\n", atomic_read(&late_reads));
}

module_init(tm_init);
module_exit(tm_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("joules developers");
MODULE_DESCRIPTION("joules test-only synthetic energy meter");
