// SPDX-License-Identifier: GPL-2.0
/*
 * joules-meterd's IPMI backend (user/joules-meterd/ipmi.c, linked in
 * directly) against a real BMC simulator: openipmi's ipmi_sim on
 * 127.0.0.1, one per test, on a free UDP port, over RMCP+ (cipher suite 3,
 * FreeIPMI's "opensesspriv" workaround). Its sensors poll their raw value
 * from files the test writes; their SDR records (built here) give each a
 * linearization, so the watts expected for a raw count are computed here,
 * independently of FreeIPMI's conversion:
 *
 *   PSU1  watts, M = 25, B = 4,   B exp = 1, R exp = -1: 2.5 raw + 4
 *   PSU2  watts, M = 3,  B = -20, B exp = 0, R exp = 0:  3 raw - 20
 *   Inlet Temp  degrees C (not watts)
 *
 * A read is checked within one raw count's worth of the expected watts
 * (M * 10^Rexp: 2.5 W, 3 W). DCMI Get Power Reading, which ipmi_sim lacks,
 * comes from dcmi_ext.so loaded by ipmi_sim's "loadlib" (its path is
 * DCMI_EXT), answering the watts in a file.
 *
 * The simulator is a child of the test's process with PR_SET_PDEATHSIG,
 * so it ends with the test even on a crash; run.sh bounds the whole run.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "meterd.h"

#ifndef DCMI_EXT
#define DCMI_EXT "build/dcmi_ext.so"
#endif

#define USER "jmeter"
#define PASS "s3cret"
#define POLL_MS 50 /* ipmi_sim's poll of the value files */
#define SETTLE_US \
	(4 * POLL_MS * 1000) /* a written value is served after this */
#define TIMEOUT_MS 1000 /* the input's timeout in the fault tests */
#define MARGIN_MS 250 /* what a timed-out read may take beyond it */

/* The SDR linearization of a sensor: y = (M x + B 10^Bexp) 10^Rexp. */
struct lin {
	int m, b, bexp, rexp;
};

static const struct lin PSU1 = { 25, 4, 1, -1 };
static const struct lin PSU2 = { 3, -20, 0, 0 };

static double watts(const struct lin *l, int raw)
{
	return (l->m * (double)raw + l->b * pow(10, l->bexp)) *
	       pow(10, l->rexp);
}

static double one_count(const struct lin *l)
{
	return fabs(l->m * pow(10, l->rexp));
}

struct sim {
	pid_t pid;
	int port;
	char dir[256];
	bool dcmi;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int free_udp_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_DGRAM, 0), port = -1;

	if (fd < 0)
		return -1;
	if (!bind(fd, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(fd, (struct sockaddr *)&a, &len))
		port = ntohs(a.sin_port);
	close(fd);
	return port;
}

/* Whether 127.0.0.1:port has a UDP socket bound (ipmi_sim is up). */
static bool udp_bound(int port)
{
	char line[512], want[32];
	bool found = false;
	FILE *f = fopen("/proc/net/udp", "r");

	if (!f)
		return false;
	snprintf(want, sizeof(want), "0100007F:%04X", port);
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, want) != NULL;
	fclose(f);
	return found;
}

/*
 * The inode of the one socket this process has open (the session's), 0 if
 * none, -1 if more than one: the same inode over reads is the same session.
 */
static long session_socket(void)
{
	char path[300], link[64];
	long ino = 0, v;
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = 0;
		if (sscanf(link, "socket:[%ld]", &v) == 1)
			ino = ino ? -1 : v;
	}
	closedir(d);
	return ino;
}

static void path_of(const struct sim *s, const char *name, char *buf,
		    size_t len)
{
	snprintf(buf, len, "%s/%s", s->dir, name);
}

/* Write a file whole: a temporary then rename(), never half a value. */
static int put_file(const struct sim *s, const char *name, const char *text)
{
	char path[400], tmp[420];
	FILE *f;

	path_of(s, name, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	fputs(text, f);
	if (fclose(f))
		return -1;
	return rename(tmp, path);
}

static int put_raw(const struct sim *s, const char *name, int raw)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%d\n", raw);
	return put_file(s, name, buf);
}

/* A Full Sensor Record (IPMI 2.0 table 43-1) as main_sdr_add's arguments. */
static void sdr_full(FILE *f, int num, int stype, int unit, const struct lin *l,
		     const char *id)
{
	unsigned char r[64];
	int n = 0, b = l->b & 0x3ff, m = l->m & 0x3ff;

	r[n++] = 0;
	r[n++] = 0; /* record id: the repository assigns */
	r[n++] = 0x51; /* SDR version */
	r[n++] = 0x01; /* full sensor record */
	r[n++] = 0; /* length, below */
	r[n++] = 0x20;
	r[n++] = 0;
	r[n++] = num; /* owner, LUN, number */
	r[n++] = 0x0a;
	r[n++] = num; /* entity: power supply, instance */
	r[n++] = 0x67; /* init: scanning, events, type; scanning on */
	r[n++] = 0x40; /* capabilities: auto re-arm, no thresholds */
	r[n++] = stype;
	r[n++] = 0x01; /* sensor type; threshold-based */
	for (int i = 0; i < 6; i++)
		r[n++] = 0; /* event masks, readable thresholds */
	r[n++] = 0x00; /* unsigned, no rate, no modifier */
	r[n++] = unit;
	r[n++] = 0; /* base unit, modifier unit */
	r[n++] = 0x00; /* linear */
	r[n++] = m & 0xff;
	r[n++] = (m >> 8) << 6;
	r[n++] = b & 0xff;
	r[n++] = (b >> 8) << 6;
	r[n++] = 0; /* accuracy, direction */
	r[n++] = ((l->rexp & 0xf) << 4) | (l->bexp & 0xf);
	r[n++] = 0; /* analog flags */
	r[n++] = 0;
	r[n++] = 0;
	r[n++] = 0; /* nominal, normal max, min */
	r[n++] = 0xff;
	r[n++] = 0; /* sensor max, min */
	for (int i = 0; i < 8; i++)
		r[n++] = 0; /* thresholds, hystereses */
	r[n++] = 0;
	r[n++] = 0;
	r[n++] = 0; /* reserved, OEM */
	r[n++] = 0xc0 | strlen(id); /* 8-bit ASCII id */
	for (const char *c = id; *c; c++)
		r[n++] = *c;
	r[4] = n - 5;
	fprintf(f, "main_sdr_add 0x20");
	for (int i = 0; i < n; i++)
		fprintf(f, " 0x%02x", r[i]);
	fprintf(f, "\n");
}

static void sensor(FILE *f, const struct sim *s, int num, int stype,
		   const char *file, bool scanning)
{
	fprintf(f, "sensor_add 0x20 0 %d 0x%02x 0x01 poll %d file \"%s/%s\"\n",
		num, stype, POLL_MS, s->dir, file);
	fprintf(f,
		"sensor_set_event_support 0x20 0 %d enable %s per-state "
		"000000000000000 000000000000000 000000000000000 000000000000000\n",
		num, scanning ? "scanning" : "no-scanning");
}

#define SIM_DCMI 1 /* dcmi_ext.so answers DCMI from the file "dcmi" */
#define SIM_PSU2_OFF 2 /* PSU2's scanning disabled: no reading */

/*
 * Start ipmi_sim under base/ (a directory of its own): user USER/PASS with
 * admin as its highest privilege, two PSU power sensors and a temperature.
 * port 0: a free one.
 */
static int sim_start(struct sim *s, const char *base, int flags, int port)
{
	bool dcmi = flags & SIM_DCMI;

	static const struct lin temp = { 1, 0, 0, 0 };
	char conf[400], emu[400], state[400], log[400];
	FILE *f;

	if (!s->dir[0]) {
		snprintf(s->dir, sizeof(s->dir), "%s/sim.XXXXXX", base);
		if (!mkdtemp(s->dir))
			return -1;
	}
	s->dcmi = dcmi;
	s->port = port ? port : free_udp_port();
	if (s->port <= 0)
		return -1;
	path_of(s, "lan.conf", conf, sizeof(conf));
	path_of(s, "sim.emu", emu, sizeof(emu));
	path_of(s, "state", state, sizeof(state));
	path_of(s, "sim.log", log, sizeof(log));
	mkdir(state, 0700);
	if (put_raw(s, "psu1", 0) || put_raw(s, "psu2", 10) ||
	    put_raw(s, "temp", 25) || put_file(s, "dcmi", "0\n"))
		return -1;

	f = fopen(conf, "w");
	if (!f)
		return -1;
	fprintf(f, "name \"joules\"\n");
	if (dcmi)
		fprintf(f, "loadlib \"%s\" \"%s/dcmi\"\n", DCMI_EXT, s->dir);
	fprintf(f, "startlan 1\n  addr 127.0.0.1 %d\n  priv_limit admin\n",
		s->port);
	fprintf(f, "  allowed_auths_callback none md2 md5 straight\n"
		   "  allowed_auths_user none md2 md5 straight\n"
		   "  allowed_auths_operator none md2 md5 straight\n"
		   "  allowed_auths_admin none md2 md5 straight\n"
		   "  guid a123456789abcdefa123456789abcdef\nendlan\n");
	fprintf(f, "user 2 true \"%s\" \"%s\" admin 10 none md2 md5 straight\n",
		USER, PASS);
	if (fclose(f))
		return -1;

	f = fopen(emu, "w");
	if (!f)
		return -1;
	fprintf(f, "mc_setbmc 0x20\n"
		   "mc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02\n"
		   "sel_enable 0x20 1000 0x0a\n");
	sensor(f, s, 1, 0x03, "psu1", true); /* current-type sensor in watts */
	sdr_full(f, 1, 0x03, 6, &PSU1, "PSU1");
	sensor(f, s, 2, 0x03, "psu2", !(flags & SIM_PSU2_OFF));
	sdr_full(f, 2, 0x03, 6, &PSU2, "PSU2");
	sensor(f, s, 3, 0x01, "temp", true);
	sdr_full(f, 3, 0x01, 1, &temp, "Inlet Temp");
	fprintf(f, "mc_enable 0x20\n");
	if (fclose(f))
		return -1;

	s->pid = fork();
	if (s->pid < 0)
		return -1;
	if (!s->pid) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execlp("ipmi_sim", "ipmi_sim", "-n", "-c", conf, "-f", emu,
		       "-s", state, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 500; i++) {
		int st;

		if (udp_bound(s->port))
			return 0;
		if (waitpid(s->pid, &st, WNOHANG) == s->pid) {
			s->pid = 0;
			return -1;
		}
		usleep(10000);
	}
	return -1;
}

static void sim_stop(struct sim *s)
{
	if (s->pid > 0) {
		kill(s->pid, SIGTERM);
		waitpid(s->pid, NULL, 0);
	}
	s->pid = 0;
}

static const char *base_dir(void)
{
	const char *d = getenv("IPMI_SIM_TMP");

	return d ? d : "/tmp";
}

FIXTURE(ipmi)
{
	struct sim sim;
	struct jmd_input in;
	char err[256];
};

FIXTURE_SETUP(ipmi)
{
	memset(&self->sim, 0, sizeof(self->sim));
	memset(&self->in, 0, sizeof(self->in));
	self->in.be = &jmd_ipmi_backend;
	snprintf(self->in.name, sizeof(self->in.name), "bmc");
	self->in.timeout_ms = 2000;
	self->err[0] = 0;
}

FIXTURE_TEARDOWN(ipmi)
{
	char cmd[300];

	jmd_ipmi_backend.close(&self->in);
	sim_stop(&self->sim);
	if (self->sim.dir[0] && !getenv("IPMI_SIM_KEEP")) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", self->sim.dir);
		if (system(cmd))
			TH_LOG("could not remove %s", self->sim.dir);
	}
}

/* "key = value" lines, as the core hands them over; stops at NULL. */
static int configure(struct jmd_input *in, char *err, size_t errlen, ...)
{
	va_list ap;
	const char *k, *v;
	int ret = 0;

	va_start(ap, errlen);
	while (!ret && (k = va_arg(ap, const char *))) {
		v = va_arg(ap, const char *);
		ret = in->be->set(in, k, v, err, errlen);
	}
	va_end(ap);
	return ret;
}

static int set_port(struct jmd_input *in, int port, char *err, size_t errlen)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%d", port);
	return in->be->set(in, "port", buf, err, errlen);
}

#define SESSION                                                  \
	"host", "127.0.0.1", "username", USER, "password", PASS, \
		"cipher_suite_id", "3", "workarounds", "opensesspriv"

TEST_F(ipmi, power_trace_one_sensor)
{
	static const int trace[] = { 0, 1, 100, 173, 254, 255, 37 };
	struct jmd_sample out[JMD_MAX_SAMPLES];
	long sock = 0;
	size_t n;

	ASSERT_EQ(0, sim_start(&self->sim, base_dir(), 0, 0));
	ASSERT_EQ(0, configure(&self->in, self->err, sizeof(self->err), SESSION,
			       "sensor", "PSU1", NULL))
	TH_LOG("%s", self->err);
	ASSERT_EQ(0, set_port(&self->in, self->sim.port, self->err,
			      sizeof(self->err)));
	ASSERT_EQ(0, jmd_ipmi_backend.open(&self->in, self->err,
					   sizeof(self->err)))
	TH_LOG("%s", self->err);
	for (size_t i = 0; i < sizeof(trace) / sizeof(trace[0]); i++) {
		double want = watts(&PSU1, trace[i]);
		uint64_t t0;
		int r;

		ASSERT_EQ(0, put_raw(&self->sim, "psu1", trace[i]));
		usleep(SETTLE_US);
		t0 = now_ms();
		r = jmd_ipmi_backend.read(&self->in, out, &n, self->err,
					  sizeof(self->err));
		TH_LOG("raw %d: read in %llu ms", trace[i],
		       (unsigned long long)(now_ms() - t0));
		if (!CHECK(r == 0 && n == 1, "raw %d: %s (n %zu)", trace[i],
			   self->err, n))
			continue;
		/* One session, opened by the first read and kept. */
		if (!sock)
			sock = session_socket();
		CHECK(sock > 0 && session_socket() == sock,
		      "read %zu: socket %ld, the first read's %ld", i,
		      session_socket(), sock);
		CHECK(out[0].kind == JMD_POWER, "kind %d", out[0].kind);
		CHECK(!strcmp(out[0].label, "PSU1"), "label '%s'",
		      out[0].label);
		CHECK(fabs(out[0].value - want) <= one_count(&PSU1),
		      "raw %d: %.3f W, expected %.3f W +- %.1f", trace[i],
		      out[0].value, want, one_count(&PSU1));
	}
}

TEST_F(ipmi, two_sensors_summed)
{
	static const int trace[][2] = {
		{ 10, 10 }, { 100, 7 }, { 200, 150 }, { 255, 255 }
	};
	struct jmd_sample out[JMD_MAX_SAMPLES];
	size_t n;

	ASSERT_EQ(0, sim_start(&self->sim, base_dir(), 0, 0));
	ASSERT_EQ(0, configure(&self->in, self->err, sizeof(self->err), SESSION,
			       "sensor", "PSU1", "sensor", "PSU2", NULL))
	TH_LOG("%s", self->err);
	ASSERT_EQ(0, set_port(&self->in, self->sim.port, self->err,
			      sizeof(self->err)));
	ASSERT_EQ(0, jmd_ipmi_backend.open(&self->in, self->err,
					   sizeof(self->err)))
	TH_LOG("%s", self->err);
	for (size_t i = 0; i < sizeof(trace) / sizeof(trace[0]); i++) {
		double w1 = watts(&PSU1, trace[i][0]),
		       w2 = watts(&PSU2, trace[i][1]);

		ASSERT_EQ(0, put_raw(&self->sim, "psu1", trace[i][0]));
		ASSERT_EQ(0, put_raw(&self->sim, "psu2", trace[i][1]));
		usleep(SETTLE_US);
		if (!CHECK(jmd_ipmi_backend.read(&self->in, out, &n, self->err,
						 sizeof(self->err)) == 0 &&
				   n == 2,
			   "%s (n %zu)", self->err, n))
			continue;
		CHECK(!strcmp(out[0].label, "PSU1") &&
			      !strcmp(out[1].label, "PSU2"),
		      "labels '%s' '%s'", out[0].label, out[1].label);
		CHECK(fabs(out[0].value - w1) <= one_count(&PSU1),
		      "PSU1 %.3f, expected %.3f", out[0].value, w1);
		CHECK(fabs(out[1].value - w2) <= one_count(&PSU2),
		      "PSU2 %.3f, expected %.3f", out[1].value, w2);
		CHECK(fabs(out[0].value + out[1].value - (w1 + w2)) <=
			      one_count(&PSU1) + one_count(&PSU2),
		      "sum %.3f, expected %.3f", out[0].value + out[1].value,
		      w1 + w2);
	}
}

/*
 * sensor_type = power: every sensor in watts, not the temperature. The
 * host by name: localhost (127.0.0.1 here).
 */
TEST_F(ipmi, sensor_type_power)
{
	struct jmd_sample out[JMD_MAX_SAMPLES];
	size_t n;

	ASSERT_EQ(0, sim_start(&self->sim, base_dir(), 0, 0));
	ASSERT_EQ(0,
		  configure(&self->in, self->err, sizeof(self->err), SESSION,
			    "host", "localhost", "sensor_type", "power", NULL))
	TH_LOG("%s", self->err);
	ASSERT_EQ(0, set_port(&self->in, self->sim.port, self->err,
			      sizeof(self->err)));
	ASSERT_EQ(0, jmd_ipmi_backend.open(&self->in, self->err,
					   sizeof(self->err)));
	ASSERT_EQ(0, put_raw(&self->sim, "psu1", 80));
	ASSERT_EQ(0, put_raw(&self->sim, "psu2", 90));
	usleep(SETTLE_US);
	ASSERT_EQ(0, jmd_ipmi_backend.read(&self->in, out, &n, self->err,
					   sizeof(self->err)))
	TH_LOG("%s", self->err);
	ASSERT_EQ(2, n);
	CHECK(!strcmp(out[0].label, "PSU1") && !strcmp(out[1].label, "PSU2"),
	      "labels '%s' '%s'", out[0].label, out[1].label);
	CHECK(fabs(out[0].value - watts(&PSU1, 80)) <= one_count(&PSU1),
	      "PSU1 %.3f", out[0].value);
	CHECK(fabs(out[1].value - watts(&PSU2, 90)) <= one_count(&PSU2),
	      "PSU2 %.3f", out[1].value);
}

/* A wrong password: an authentication error within the timeout, not a hang. */
TEST_F(ipmi, wrong_password)
{
	struct jmd_sample out[JMD_MAX_SAMPLES];
	size_t n = 99;
	uint64_t t0, dt;

	ASSERT_EQ(0, sim_start(&self->sim, base_dir(), 0, 0));
	self->in.timeout_ms = TIMEOUT_MS;
	ASSERT_EQ(0, configure(&self->in, self->err, sizeof(self->err), SESSION,
			       "password", "wrong", "sensor", "PSU1", NULL));
	ASSERT_EQ(0, set_port(&self->in, self->sim.port, self->err,
			      sizeof(self->err)));
	ASSERT_EQ(0, jmd_ipmi_backend.open(&self->in, self->err,
					   sizeof(self->err)));
	t0 = now_ms();
	CHECK(jmd_ipmi_backend.read(&self->in, out, &n, self->err,
				    sizeof(self->err)) == -1,
	      "read succeeded with a wrong password");
	dt = now_ms() - t0;
	TH_LOG("%llu ms: %s", (unsigned long long)dt, self->err);
	CHECK(n == 0, "n %zu", n);
	CHECK(strstr(self->err, "authentication failed") != NULL, "error '%s'",
	      self->err);
	CHECK(dt <= TIMEOUT_MS + MARGIN_MS, "%llu ms > %d + %d",
	      (unsigned long long)dt, TIMEOUT_MS, MARGIN_MS);
}

/* A wrong user name: refused at once. */
TEST_F(ipmi, unknown_user)
{
	struct jmd_sample out[JMD_MAX_SAMPLES];
	size_t n;

	ASSERT_EQ(0, sim_start(&self->sim, base_dir(), 0, 0));
	self->in.timeout_ms = TIMEOUT_MS;
	ASSERT_EQ(0, configure(&self->in, self->err, sizeof(self->err), SESSION,
			       "username", "nobody", "sensor", "PSU1", NULL));
	ASSERT_EQ(0, set_port(&self->in, self->sim.port, self->err,
			      sizeof(self->err)));
	ASSERT_EQ(0, jmd_ipmi_backend.open(&self->in, self->err,
					   sizeof(self->err)));
	CHECK(jmd_ipmi_backend.read(&self->in, out, &n, self->err,
				    sizeof(self->err)) == -1,
	      "read succeeded as an unknown user");
	CHECK(strstr(self->err, "authentication failed") != NULL, "error '%s'",
	      self->err);
}

/*
 * The BMC gone: a timeout error within timeout_ms + MARGIN_MS, when the
 * kept session fails (and a new one is tried in the same read) and when a
 * new one is opened; back, the next read reconnects.
 */
TEST_F(ipmi, bmc_stopped_then_back)
{
	struct jmd_sample out[JMD_MAX_SAMPLES];
	size_t n;
	int port;

	ASSERT_EQ(0, sim_start(&self->sim, base_dir(), 0, 0));
	self->in.timeout_ms = TIMEOUT_MS;
	ASSERT_EQ(0, configure(&self->in, self->err, sizeof(self->err), SESSION,
			       "sensor", "PSU1", NULL));
	ASSERT_EQ(0, set_port(&self->in, self->sim.port, self->err,
			      sizeof(self->err)));
	ASSERT_EQ(0, jmd_ipmi_backend.open(&self->in, self->err,
					   sizeof(self->err)));
	ASSERT_EQ(0, put_raw(&self->sim, "psu1", 40));
	usleep(SETTLE_US);
	ASSERT_EQ(0, jmd_ipmi_backend.read(&self->in, out, &n, self->err,
					   sizeof(self->err)))
	TH_LOG("%s", self->err);

	sim_stop(&self->sim);
	for (int i = 0; i < 2; i++) {
		uint64_t t0 = now_ms(), dt;

		CHECK(jmd_ipmi_backend.read(&self->in, out, &n, self->err,
					    sizeof(self->err)) == -1,
		      "read %d succeeded with the BMC stopped", i);
		dt = now_ms() - t0;
		TH_LOG("%s session: %llu ms: %s", i ? "new" : "kept",
		       (unsigned long long)dt, self->err);
		CHECK(strstr(self->err, "timeout") != NULL, "error '%s'",
		      self->err);
		CHECK(dt <= TIMEOUT_MS + MARGIN_MS, "%llu ms > %d + %d",
		      (unsigned long long)dt, TIMEOUT_MS, MARGIN_MS);
	}

	CHECK(session_socket() == 0, "socket %ld left after the timeout",
	      session_socket());
	port = self->sim.port;
	ASSERT_EQ(0, sim_start(&self->sim, base_dir(), 0, port));
	ASSERT_EQ(0, put_raw(&self->sim, "psu1", 120));
	usleep(SETTLE_US);
	ASSERT_EQ(0, jmd_ipmi_backend.read(&self->in, out, &n, self->err,
					   sizeof(self->err)))
	TH_LOG("%s", self->err);
	CHECK(n == 1 && fabs(out[0].value - watts(&PSU1, 120)) <=
				one_count(&PSU1),
	      "after the restart: %.3f W", out[0].value);
}

/*
 * The BMC restarted between two reads (a BMC reset): the kept session is
 * unknown to it. The read reopens a session and reads, within the timeout.
 */
TEST_F(ipmi, bmc_restarted_between_reads)
{
	struct jmd_sample out[JMD_MAX_SAMPLES];
	size_t n;
	uint64_t t0, dt;
	long sock;
	int port, r;

	ASSERT_EQ(0, sim_start(&self->sim, base_dir(), 0, 0));
	self->in.timeout_ms = TIMEOUT_MS;
	ASSERT_EQ(0, configure(&self->in, self->err, sizeof(self->err), SESSION,
			       "sensor", "PSU1", NULL));
	ASSERT_EQ(0, set_port(&self->in, self->sim.port, self->err,
			      sizeof(self->err)));
	ASSERT_EQ(0, jmd_ipmi_backend.open(&self->in, self->err,
					   sizeof(self->err)));
	ASSERT_EQ(0, jmd_ipmi_backend.read(&self->in, out, &n, self->err,
					   sizeof(self->err)))
	TH_LOG("%s", self->err);
	sock = session_socket();
	port = self->sim.port;
	sim_stop(&self->sim);
	ASSERT_EQ(0, sim_start(&self->sim, base_dir(), 0, port));
	ASSERT_EQ(0, put_raw(&self->sim, "psu1", 99));
	usleep(SETTLE_US);
	t0 = now_ms();
	r = jmd_ipmi_backend.read(&self->in, out, &n, self->err,
				  sizeof(self->err));
	dt = now_ms() - t0;
	TH_LOG("the read after the restart: %llu ms", (unsigned long long)dt);
	CHECK(r == 0 && n == 1 &&
		      fabs(out[0].value - watts(&PSU1, 99)) <= one_count(&PSU1),
	      "%s", r ? self->err : "wrong value");
	CHECK(dt <= TIMEOUT_MS + MARGIN_MS, "%llu ms", (unsigned long long)dt);
	CHECK(session_socket() > 0 && session_socket() != sock,
	      "socket %ld, before the restart %ld", session_socket(), sock);
}

TEST_F(ipmi, sensor_not_found)
{
	struct jmd_sample out[JMD_MAX_SAMPLES];
	size_t n;

	ASSERT_EQ(0, sim_start(&self->sim, base_dir(), 0, 0));
	ASSERT_EQ(0, configure(&self->in, self->err, sizeof(self->err), SESSION,
			       "sensor", "PSU1", "sensor", "PSU9", NULL));
	ASSERT_EQ(0, set_port(&self->in, self->sim.port, self->err,
			      sizeof(self->err)));
	ASSERT_EQ(0, jmd_ipmi_backend.open(&self->in, self->err,
					   sizeof(self->err)));
	CHECK(jmd_ipmi_backend.read(&self->in, out, &n, self->err,
				    sizeof(self->err)) == -1,
	      "read succeeded with a missing sensor");
	TH_LOG("%s", self->err);
	CHECK(strstr(self->err, "sensor 'PSU9' not found") != NULL,
	      "error '%s'", self->err);
	CHECK(strstr(self->err, "PSU1, PSU2, Inlet Temp") != NULL, "error '%s'",
	      self->err);
}

TEST_F(ipmi, sensor_not_watts)
{
	struct jmd_sample out[JMD_MAX_SAMPLES];
	size_t n;

	ASSERT_EQ(0, sim_start(&self->sim, base_dir(), 0, 0));
	ASSERT_EQ(0, configure(&self->in, self->err, sizeof(self->err), SESSION,
			       "sensor", "Inlet Temp", NULL));
	ASSERT_EQ(0, set_port(&self->in, self->sim.port, self->err,
			      sizeof(self->err)));
	ASSERT_EQ(0, jmd_ipmi_backend.open(&self->in, self->err,
					   sizeof(self->err)));
	CHECK(jmd_ipmi_backend.read(&self->in, out, &n, self->err,
				    sizeof(self->err)) == -1,
	      "read succeeded from a temperature");
	CHECK(strstr(self->err, "unit is degrees C, not watts") != NULL,
	      "error '%s'", self->err);
}

/* A sensor whose scanning is disabled: "reading unavailable", the session kept. */
TEST_F(ipmi, reading_unavailable)
{
	struct jmd_sample out[JMD_MAX_SAMPLES];
	size_t n;

	ASSERT_EQ(0, sim_start(&self->sim, base_dir(), SIM_PSU2_OFF, 0));
	ASSERT_EQ(0, configure(&self->in, self->err, sizeof(self->err), SESSION,
			       "sensor", "PSU1", "sensor", "PSU2", NULL));
	ASSERT_EQ(0, set_port(&self->in, self->sim.port, self->err,
			      sizeof(self->err)));
	ASSERT_EQ(0, jmd_ipmi_backend.open(&self->in, self->err,
					   sizeof(self->err)));
	usleep(SETTLE_US);
	CHECK(jmd_ipmi_backend.read(&self->in, out, &n, self->err,
				    sizeof(self->err)) == -1,
	      "read succeeded from a sensor not scanning");
	TH_LOG("%s", self->err);
	CHECK(n == 0, "n %zu", n);
	CHECK(strstr(self->err, "sensor 'PSU2': reading unavailable") != NULL,
	      "error '%s'", self->err);
}

/*
 * DCMI through dcmi_ext.so. ipmi_sim's privilege table asks admin for any
 * group extension command (the DCMI specification asks user for Get Power
 * Reading), hence privilege = admin here.
 */
TEST_F(ipmi, dcmi_trace)
{
	static const int trace[] = { 0, 1, 250, 999, 4321, 65535 };
	struct jmd_sample out[JMD_MAX_SAMPLES];
	size_t n;

	ASSERT_EQ(0, sim_start(&self->sim, base_dir(), SIM_DCMI, 0));
	ASSERT_EQ(0, configure(&self->in, self->err, sizeof(self->err), SESSION,
			       "privilege", "admin", "dcmi", "yes", NULL));
	ASSERT_EQ(0, set_port(&self->in, self->sim.port, self->err,
			      sizeof(self->err)));
	ASSERT_EQ(0, jmd_ipmi_backend.open(&self->in, self->err,
					   sizeof(self->err)))
	TH_LOG("%s", self->err);
	for (size_t i = 0; i < sizeof(trace) / sizeof(trace[0]); i++) {
		char buf[16];

		snprintf(buf, sizeof(buf), "%d\n", trace[i]);
		ASSERT_EQ(0, put_file(&self->sim, "dcmi", buf));
		if (!CHECK(jmd_ipmi_backend.read(&self->in, out, &n, self->err,
						 sizeof(self->err)) == 0 &&
				   n == 1,
			   "%d W: %s", trace[i], self->err))
			continue;
		CHECK(!strcmp(out[0].label, "DCMI"), "label '%s'",
		      out[0].label);
		CHECK(out[0].value == trace[i], "%.3f W, expected %d",
		      out[0].value, trace[i]);
	}
	ASSERT_EQ(0, put_file(&self->sim, "dcmi", "inactive\n"));
	CHECK(jmd_ipmi_backend.read(&self->in, out, &n, self->err,
				    sizeof(self->err)) == -1,
	      "read with the power measurement inactive");
	CHECK(strstr(self->err, "reading unavailable") != NULL, "error '%s'",
	      self->err);
}

/* dcmi = auto: DCMI where the BMC answers it, its label says so. */
TEST_F(ipmi, dcmi_auto_uses_dcmi)
{
	struct jmd_sample out[JMD_MAX_SAMPLES];
	size_t n;

	ASSERT_EQ(0, sim_start(&self->sim, base_dir(), SIM_DCMI, 0));
	ASSERT_EQ(0, configure(&self->in, self->err, sizeof(self->err), SESSION,
			       "privilege", "admin", "dcmi", "auto", "sensor",
			       "PSU1", NULL));
	ASSERT_EQ(0, set_port(&self->in, self->sim.port, self->err,
			      sizeof(self->err)));
	ASSERT_EQ(0, jmd_ipmi_backend.open(&self->in, self->err,
					   sizeof(self->err)));
	ASSERT_EQ(0, put_file(&self->sim, "dcmi", "777\n"));
	ASSERT_EQ(0, jmd_ipmi_backend.read(&self->in, out, &n, self->err,
					   sizeof(self->err)))
	TH_LOG("%s", self->err);
	CHECK(n == 1 && !strcmp(out[0].label, "DCMI") && out[0].value == 777,
	      "n %zu '%s' %.3f", n, out[0].label, out[0].value);
}

/* dcmi = auto on a BMC without DCMI (plain ipmi_sim): the sensors. */
TEST_F(ipmi, dcmi_auto_falls_back)
{
	struct jmd_sample out[JMD_MAX_SAMPLES];
	size_t n;

	ASSERT_EQ(0, sim_start(&self->sim, base_dir(), 0, 0));
	ASSERT_EQ(0, configure(&self->in, self->err, sizeof(self->err), SESSION,
			       "privilege", "admin", "dcmi", "auto", "sensor",
			       "PSU1", NULL));
	ASSERT_EQ(0, set_port(&self->in, self->sim.port, self->err,
			      sizeof(self->err)));
	ASSERT_EQ(0, jmd_ipmi_backend.open(&self->in, self->err,
					   sizeof(self->err)));
	ASSERT_EQ(0, put_raw(&self->sim, "psu1", 64));
	usleep(SETTLE_US);
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(0,
			  jmd_ipmi_backend.read(&self->in, out, &n, self->err,
						sizeof(self->err)))
		TH_LOG("%s", self->err);
		CHECK(n == 1 && !strcmp(out[0].label, "PSU1") &&
			      fabs(out[0].value - watts(&PSU1, 64)) <=
				      one_count(&PSU1),
		      "n %zu '%s' %.3f", n, out[0].label, out[0].value);
	}
}

/*
 * dcmi = auto at user privilege where DCMI needs more (ipmi_sim asks admin):
 * the sensors, said by their labels.
 */
TEST_F(ipmi, dcmi_auto_privilege_falls_back)
{
	struct jmd_sample out[JMD_MAX_SAMPLES];
	size_t n;

	ASSERT_EQ(0, sim_start(&self->sim, base_dir(), SIM_DCMI, 0));
	ASSERT_EQ(0, configure(&self->in, self->err, sizeof(self->err), SESSION,
			       "privilege", "user", "dcmi", "auto", "sensor",
			       "PSU1", NULL));
	ASSERT_EQ(0, set_port(&self->in, self->sim.port, self->err,
			      sizeof(self->err)));
	ASSERT_EQ(0, jmd_ipmi_backend.open(&self->in, self->err,
					   sizeof(self->err)));
	ASSERT_EQ(0, put_file(&self->sim, "dcmi", "777\n"));
	ASSERT_EQ(0, put_raw(&self->sim, "psu1", 64));
	usleep(SETTLE_US);
	ASSERT_EQ(0, jmd_ipmi_backend.read(&self->in, out, &n, self->err,
					   sizeof(self->err)))
	TH_LOG("%s", self->err);
	CHECK(n == 1 && !strcmp(out[0].label, "PSU1") &&
		      fabs(out[0].value - watts(&PSU1, 64)) <= one_count(&PSU1),
	      "n %zu '%s' %.3f", n, out[0].label, out[0].value);
}

/* dcmi = yes on a BMC without DCMI: an error that says so. */
TEST_F(ipmi, dcmi_yes_without_dcmi)
{
	struct jmd_sample out[JMD_MAX_SAMPLES];
	size_t n;

	ASSERT_EQ(0, sim_start(&self->sim, base_dir(), 0, 0));
	ASSERT_EQ(0, configure(&self->in, self->err, sizeof(self->err), SESSION,
			       "privilege", "admin", "dcmi", "yes", NULL));
	ASSERT_EQ(0, set_port(&self->in, self->sim.port, self->err,
			      sizeof(self->err)));
	ASSERT_EQ(0, jmd_ipmi_backend.open(&self->in, self->err,
					   sizeof(self->err)));
	CHECK(jmd_ipmi_backend.read(&self->in, out, &n, self->err,
				    sizeof(self->err)) == -1,
	      "DCMI read from a BMC without it");
	TH_LOG("%s", self->err);
	CHECK(strstr(self->err, "DCMI Get Power Reading") != NULL, "error '%s'",
	      self->err);
}

/* The configuration's errors, without a BMC. */
TEST_F(ipmi, config_errors)
{
	struct jmd_input *in = &self->in;
	char *e = self->err;
	size_t el = sizeof(self->err);

	CHECK(in->be->set(in, "colour", "blue", e, el) == -1 &&
		      strstr(e, "unknown key 'colour'"),
	      "%s", e);
	CHECK(in->be->set(in, "port", "x", e, el) == -1 && strstr(e, "port:"),
	      "%s", e);
	CHECK(in->be->set(in, "port", "70000", e, el) == -1,
	      "port 70000 taken");
	CHECK(in->be->set(in, "privilege", "root", e, el) == -1 &&
		      strstr(e, "privilege"),
	      "%s", e);
	CHECK(in->be->set(in, "cipher_suite_id", "5", e, el) == -1,
	      "cipher suite 5 taken");
	CHECK(in->be->set(in, "workarounds", "opensesspriv,bogus", e, el) ==
			      -1 &&
		      strstr(e, "unknown 'bogus'"),
	      "%s", e);
	CHECK(in->be->set(in, "password", "123456789012345678901", e, el) == -1,
	      "a 21-byte password taken");
	CHECK(in->be->set(in, "dcmi", "maybe", e, el) == -1,
	      "dcmi maybe taken");
	CHECK(in->be->set(in, "sensor_type", "temperature", e, el) == -1,
	      "sensor_type temperature taken");
	CHECK(in->be->open(in, e, el) == -1 && strstr(e, "host: required"),
	      "%s", e);
	CHECK(in->be->set(in, "host", "127.0.0.1", e, el) == 0, "%s", e);
	CHECK(in->be->set(in, "dcmi", "no", e, el) == 0, "%s", e);
	CHECK(in->be->open(in, e, el) == -1 && strstr(e, "no sensor"), "%s", e);
	CHECK(in->be->set(in, "sensor", "PSU1", e, el) == 0, "%s", e);
	CHECK(in->be->set(in, "sensor", "PSU1", e, el) == -1 &&
		      strstr(e, "twice"),
	      "%s", e);
	CHECK(in->be->set(in, "sensor_type", "power", e, el) == 0, "%s", e);
	CHECK(in->be->open(in, e, el) == -1 && strstr(e, "one or the other"),
	      "%s", e);
}

TEST_HARNESS_MAIN
