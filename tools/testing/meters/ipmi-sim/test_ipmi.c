// SPDX-License-Identifier: GPL-2.0
/*
 * joules-meterd's IPMI backend (user/joules-meterd/ipmi.c, linked in
 * directly) against a real BMC simulator: openipmi's ipmi_sim on
 * 127.0.0.1, one per test, on a free UDP port, over RMCP+ (cipher suite 3,
 * FreeIPMI's "opensesspriv" workaround). Its sensors poll their raw value
 * from files the test writes; their SDR records (built in sim-conf.h,
 * shared with the guest selftest 57-meterd-ipmi) give each a
 * linearization, so the watts expected for a raw count are computed here,
 * independently of FreeIPMI's conversion (see sim-conf.h for the sensors).
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
#include "sim-conf.h"

#define SETTLE_US \
	(4 * SIM_POLL_MS * 1000) /* a written value is served after this */
#define TIMEOUT_MS 1000 /* the input's timeout in the fault tests */
#define MARGIN_MS 250 /* what a timed-out read may take beyond it */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
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

#define SESSION                                                          \
	"host", "127.0.0.1", "username", SIM_USER, "password", SIM_PASS, \
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
