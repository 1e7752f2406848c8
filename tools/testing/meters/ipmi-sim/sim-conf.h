/* SPDX-License-Identifier: GPL-2.0 */
/*
 * openipmi's ipmi_sim as a BMC on 127.0.0.1, shared by the host test of
 * joules-meterd's IPMI backend (test_ipmi.c) and the guest selftest
 * (tools/testing/selftests/57-meterd-ipmi.c): its lan.conf (a user
 * SIM_USER/SIM_PASS with admin as its highest privilege, RMCP+) and its
 * emulator commands (a BMC with two PSU power sensors and a temperature,
 * each polling its raw value from a file in the simulator's directory,
 * with SDR Full Sensor Records built here), started as a child of the
 * caller with PR_SET_PDEATHSIG. Needs no FreeIPMI.
 *
 *   PSU1  watts, M = 25, B = 4,   B exp = 1, R exp = -1: 2.5 raw + 4
 *   PSU2  watts, M = 3,  B = -20, B exp = 0, R exp = 0:  3 raw - 20
 *   Inlet Temp  degrees C (not watts)
 */
#ifndef JOULES_IPMI_SIM_CONF_H
#define JOULES_IPMI_SIM_CONF_H

#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* dcmi_ext.so, loaded by ipmi_sim for SIM_DCMI (the host test only). */
#ifndef DCMI_EXT
#define DCMI_EXT "build/dcmi_ext.so"
#endif

#define SIM_USER "jmeter"
#define SIM_PASS "s3cret"
#define SIM_POLL_MS 50 /* ipmi_sim's poll of the value files */
#define SIM_START_MS 20000 /* how long sim_start waits for its socket */

/* The SDR linearization of a sensor: y = (M x + B 10^Bexp) 10^Rexp. */
struct lin {
	int m, b, bexp, rexp;
};

static const struct lin PSU1 = { 25, 4, 1, -1 };
static const struct lin PSU2 = { 3, -20, 0, 0 };

static inline double watts(const struct lin *l, int raw)
{
	return (l->m * (double)raw + l->b * pow(10, l->bexp)) *
	       pow(10, l->rexp);
}

static inline double one_count(const struct lin *l)
{
	return fabs(l->m * pow(10, l->rexp));
}

struct sim {
	pid_t pid;
	int port;
	char dir[256];
	bool dcmi;
};

static inline int free_udp_port(void)
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
static inline bool udp_bound(int port)
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

static inline void path_of(const struct sim *s, const char *name, char *buf,
			   size_t len)
{
	snprintf(buf, len, "%s/%s", s->dir, name);
}

/* Write a file whole: a temporary then rename(), never half a value. */
static inline int put_file(const struct sim *s, const char *name,
			   const char *text)
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

static inline int put_raw(const struct sim *s, const char *name, int raw)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%d\n", raw);
	return put_file(s, name, buf);
}

/* A Full Sensor Record (IPMI 2.0 table 43-1) as main_sdr_add's arguments. */
static inline void sdr_full(FILE *f, int num, int stype, int unit,
			    const struct lin *l, const char *id)
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

static inline void sensor(FILE *f, const struct sim *s, int num, int stype,
			  const char *file, bool scanning)
{
	fprintf(f, "sensor_add 0x20 0 %d 0x%02x 0x01 poll %d file \"%s/%s\"\n",
		num, stype, SIM_POLL_MS, s->dir, file);
	fprintf(f,
		"sensor_set_event_support 0x20 0 %d enable %s per-state "
		"000000000000000 000000000000000 000000000000000 000000000000000\n",
		num, scanning ? "scanning" : "no-scanning");
}

#define SIM_DCMI 1 /* dcmi_ext.so answers DCMI from the file "dcmi" */
#define SIM_PSU2_OFF 2 /* PSU2's scanning disabled: no reading */

/*
 * Start ipmi_sim under base/ (a directory of its own): user SIM_USER/SIM_PASS with
 * admin as its highest privilege, two PSU power sensors and a temperature.
 * port 0: a free one.
 */
static inline int sim_start(struct sim *s, const char *base, int flags,
			    int port)
{
	bool dcmi = flags & SIM_DCMI;

	static const struct lin temp = { 1, 0, 0, 0 };
	char conf[400], emu[400], state[400], log[400];
	pid_t parent;
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
		SIM_USER, SIM_PASS);
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

	parent = getpid();
	s->pid = fork();
	if (s->pid < 0)
		return -1;
	if (!s->pid) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);

		/* Not if the parent is already gone: it would never be signalled. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
			_exit(126);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execlp("ipmi_sim", "ipmi_sim", "-n", "-c", conf, "-f", emu,
		       "-s", state, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < SIM_START_MS / 10; i++) {
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

static inline void sim_stop(struct sim *s)
{
	if (s->pid > 0) {
		kill(s->pid, SIGTERM);
		waitpid(s->pid, NULL, 0);
	}
	s->pid = 0;
}

#endif /* JOULES_IPMI_SIM_CONF_H */
