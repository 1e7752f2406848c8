// SPDX-License-Identifier: GPL-2.0
/*
 * joules-meterd's IPMI backend: a BMC's power over an RMCP+ (IPMI 2.0 LAN)
 * session, on FreeIPMI's libfreeipmi. Either DCMI Get Power Reading (one
 * figure for the node, label "DCMI") or the power sensors of the BMC's SDR
 * repository, chosen by name ("sensor = PSU1 Power", several summed) or
 * all of them whose unit is watts ("sensor_type = power"), one sample each.
 *
 * The session opens on the first read and is kept: a reading is then one
 * command per sensor (DCMI: one). The SDR records of the chosen sensors are
 * fetched at the first connection and kept across reconnections as long as
 * the repository's timestamps stay the same. A failed command closes the
 * session; a kept session that fails (the BMC was reset or expired it) is
 * reopened within the same read if half the timeout is left, or else by
 * the next read.
 *
 * Time: every command gives up within half of the input's timeout_ms
 * (FreeIPMI's session timeout is timeout_ms / 2 less two retransmission
 * intervals of timeout_ms / 10: it notices the timeout at a retransmission,
 * up to two late on a loaded machine),
 * so a read that reopens a session still ends within timeout_ms; a read
 * also stops when timeout_ms has passed between two commands. Only the
 * fetch of the SDR records at the first connection may take longer (one
 * command per record, each bounded as above, at most SDR_FETCH_MS in
 * all).
 *
 * Links with -lfreeipmi (pkg-config libfreeipmi).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <freeipmi/freeipmi.h>

#include "meterd.h"

#define IPMI_DEFAULT_PORT 623
#define IPMI_USER_MAX 16 /* IPMI 2.0 user name */
#define IPMI_PASS_MAX 20 /* IPMI 2.0 password */
#define SDR_ID_MAX 16 /* an SDR's ID string */
#define SDR_FETCH_MS 30000 /* the SDR fetch at the first connection */
#define SDR_REC_MAX (5 + 255)

enum ipmi_dcmi { DCMI_DEFAULT, DCMI_NO, DCMI_YES, DCMI_AUTO };
enum ipmi_src { SRC_NONE, SRC_DCMI, SRC_SENSORS };

struct ipmi_rec {
	uint8_t data[SDR_REC_MAX];
	unsigned int len;
	char id[SDR_ID_MAX + 1];
};

struct ipmi_priv {
	/* The configuration. */
	char host[256];
	unsigned int port;
	char user[IPMI_USER_MAX + 1];
	char pass[IPMI_PASS_MAX + 1];
	bool have_host;
	uint8_t privilege;
	uint8_t cipher;
	unsigned int workarounds;
	char sensor[JMD_MAX_SAMPLES][SDR_ID_MAX + 1];
	size_t nsensor;
	bool type_power;
	enum ipmi_dcmi dcmi;

	/* The session and what it found. */
	ipmi_ctx_t ctx;
	ipmi_sensor_read_ctx_t sread;
	ipmi_sdr_ctx_t sdr;
	enum ipmi_src src; /* what the reads use, once known */
	struct ipmi_rec rec[JMD_MAX_SAMPLES];
	size_t nrec;
	bool have_recs;
	bool fresh; /* a new session: check the SDR repository */
	uint32_t sdr_added, sdr_erased; /* the repository's timestamps */
};

static void seterr(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* FreeIPMI's names for its IPMI 2.0 workarounds (ipmi-sensors -W). */
static const struct {
	const char *name;
	unsigned int flag;
} ipmi_workarounds[] = {
	{ "authcap",
	  IPMI_WORKAROUND_FLAGS_OUTOFBAND_2_0_AUTHENTICATION_CAPABILITIES },
	{ "intel20", IPMI_WORKAROUND_FLAGS_OUTOFBAND_2_0_INTEL_2_0_SESSION },
	{ "supermicro20",
	  IPMI_WORKAROUND_FLAGS_OUTOFBAND_2_0_SUPERMICRO_2_0_SESSION },
	{ "sun20", IPMI_WORKAROUND_FLAGS_OUTOFBAND_2_0_SUN_2_0_SESSION },
	{ "opensesspriv",
	  IPMI_WORKAROUND_FLAGS_OUTOFBAND_2_0_OPEN_SESSION_PRIVILEGE },
	{ "integritycheckvalue",
	  IPMI_WORKAROUND_FLAGS_OUTOFBAND_2_0_NON_EMPTY_INTEGRITY_CHECK_VALUE },
	{ "nochecksumcheck",
	  IPMI_WORKAROUND_FLAGS_OUTOFBAND_2_0_NO_CHECKSUM_CHECK },
};

static int parse_workarounds(const char *val, unsigned int *flags, char *err,
			     size_t errlen)
{
	char buf[256], *save = NULL, *tok;
	unsigned int f = 0;

	if (strlen(val) >= sizeof(buf)) {
		seterr(err, errlen, "workarounds: too long");
		return -1;
	}
	strcpy(buf, val);
	for (tok = strtok_r(buf, ", \t", &save); tok;
	     tok = strtok_r(NULL, ", \t", &save)) {
		size_t i;

		if (!strcasecmp(tok, "none"))
			continue;
		for (i = 0;
		     i < sizeof(ipmi_workarounds) / sizeof(ipmi_workarounds[0]);
		     i++)
			if (!strcasecmp(tok, ipmi_workarounds[i].name))
				break;
		if (i ==
		    sizeof(ipmi_workarounds) / sizeof(ipmi_workarounds[0])) {
			seterr(err, errlen,
			       "workarounds: unknown '%s' (authcap, intel20, supermicro20, sun20, opensesspriv, integritycheckvalue, nochecksumcheck)",
			       tok);
			return -1;
		}
		f |= ipmi_workarounds[i].flag;
	}
	*flags = f;
	return 0;
}

static int parse_uint(const char *key, const char *val, unsigned long max,
		      unsigned long *out, char *err, size_t errlen)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(val, &end, 10);
	if (errno || end == val || *end || val[0] == '-' || v > max) {
		seterr(err, errlen, "%s: not a number up to %lu '%s'", key, max,
		       val);
		return -1;
	}
	*out = v;
	return 0;
}

static struct ipmi_priv *priv_of(struct jmd_input *in)
{
	if (!in->priv) {
		struct ipmi_priv *p = calloc(1, sizeof(*p));

		if (!p)
			return NULL;
		p->port = IPMI_DEFAULT_PORT;
		p->privilege = IPMI_PRIVILEGE_LEVEL_USER;
		p->cipher = 3;
		in->priv = p;
	}
	return in->priv;
}

static int set_privilege(struct ipmi_priv *p, const char *val, char *err,
			 size_t errlen)
{
	if (!strcasecmp(val, "user"))
		p->privilege = IPMI_PRIVILEGE_LEVEL_USER;
	else if (!strcasecmp(val, "operator"))
		p->privilege = IPMI_PRIVILEGE_LEVEL_OPERATOR;
	else if (!strcasecmp(val, "admin"))
		p->privilege = IPMI_PRIVILEGE_LEVEL_ADMIN;
	else {
		seterr(err, errlen,
		       "privilege: user, operator or admin, not '%s'", val);
		return -1;
	}
	return 0;
}

/* One more "sensor = NAME": summed with the others, each named once. */
static int add_sensor(struct ipmi_priv *p, const char *val, char *err,
		      size_t errlen)
{
	if (!*val || strlen(val) > SDR_ID_MAX) {
		seterr(err, errlen, "sensor: a name of 1 to %d bytes, not '%s'",
		       SDR_ID_MAX, val);
		return -1;
	}
	if (p->nsensor == JMD_MAX_SAMPLES) {
		seterr(err, errlen, "sensor: more than %d", JMD_MAX_SAMPLES);
		return -1;
	}
	for (size_t i = 0; i < p->nsensor; i++)
		if (!strcmp(p->sensor[i], val)) {
			seterr(err, errlen, "sensor: '%s' twice", val);
			return -1;
		}
	strcpy(p->sensor[p->nsensor++], val);
	return 0;
}

static int set_dcmi(struct ipmi_priv *p, const char *val, char *err,
		    size_t errlen)
{
	if (!strcasecmp(val, "yes"))
		p->dcmi = DCMI_YES;
	else if (!strcasecmp(val, "no"))
		p->dcmi = DCMI_NO;
	else if (!strcasecmp(val, "auto"))
		p->dcmi = DCMI_AUTO;
	else {
		seterr(err, errlen, "dcmi: yes, no or auto, not '%s'", val);
		return -1;
	}
	return 0;
}

static int ipmi_set(struct jmd_input *in, const char *key, const char *val,
		    char *err, size_t errlen)
{
	struct ipmi_priv *p = priv_of(in);
	unsigned long v;

	if (!p) {
		seterr(err, errlen, "out of memory");
		return -1;
	}
	if (!strcmp(key, "host")) {
		if (!*val || strlen(val) >= sizeof(p->host)) {
			seterr(err, errlen, "host: empty or too long");
			return -1;
		}
		strcpy(p->host, val);
		p->have_host = true;
	} else if (!strcmp(key, "port")) {
		if (parse_uint(key, val, 65535, &v, err, errlen))
			return -1;
		if (!v) {
			seterr(err, errlen, "port: 0");
			return -1;
		}
		p->port = v;
	} else if (!strcmp(key, "username")) {
		if (strlen(val) > IPMI_USER_MAX) {
			seterr(err, errlen, "username: longer than %d bytes",
			       IPMI_USER_MAX);
			return -1;
		}
		strcpy(p->user, val);
	} else if (!strcmp(key, "password")) {
		if (strlen(val) > IPMI_PASS_MAX) {
			seterr(err, errlen, "password: longer than %d bytes",
			       IPMI_PASS_MAX);
			return -1;
		}
		strcpy(p->pass, val);
	} else if (!strcmp(key, "privilege")) {
		return set_privilege(p, val, err, errlen);
	} else if (!strcmp(key, "cipher_suite_id")) {
		if (parse_uint(key, val, 255, &v, err, errlen))
			return -1;
		if (!IPMI_CIPHER_SUITE_ID_SUPPORTED(v)) {
			seterr(err, errlen,
			       "cipher_suite_id: %lu not supported (0-3, 6-8, 11, 12, 15-17)",
			       v);
			return -1;
		}
		p->cipher = v;
	} else if (!strcmp(key, "workarounds")) {
		return parse_workarounds(val, &p->workarounds, err, errlen);
	} else if (!strcmp(key, "sensor")) {
		return add_sensor(p, val, err, errlen);
	} else if (!strcmp(key, "sensor_type")) {
		if (strcasecmp(val, "power")) {
			seterr(err, errlen,
			       "sensor_type: only 'power', not '%s'", val);
			return -1;
		}
		p->type_power = true;
	} else if (!strcmp(key, "dcmi")) {
		return set_dcmi(p, val, err, errlen);
	} else {
		seterr(err, errlen, "unknown key '%s'", key);
		return -1;
	}
	return 0;
}

static int ipmi_open(struct jmd_input *in, char *err, size_t errlen)
{
	struct ipmi_priv *p = priv_of(in);
	bool sensors;

	if (!p) {
		seterr(err, errlen, "out of memory");
		return -1;
	}
	sensors = p->nsensor || p->type_power;
	if (!p->have_host) {
		seterr(err, errlen, "host: required");
		return -1;
	}
	if (p->nsensor && p->type_power) {
		seterr(err, errlen, "sensor and sensor_type: one or the other");
		return -1;
	}
	if (p->dcmi == DCMI_DEFAULT)
		p->dcmi = sensors ? DCMI_NO : DCMI_AUTO;
	if (p->dcmi == DCMI_NO && !sensors) {
		seterr(err, errlen,
		       "dcmi = no and no sensor: set sensor = NAME or sensor_type = power");
		return -1;
	}
	if (p->dcmi == DCMI_YES && sensors) {
		seterr(err, errlen,
		       "dcmi = yes reads no sensor: drop sensor/sensor_type or say dcmi = auto");
		return -1;
	}
	if (in->timeout_ms < 10) {
		seterr(err, errlen, "timeout: %u ms is too short for IPMI",
		       in->timeout_ms);
		return -1;
	}
	p->src = p->dcmi == DCMI_YES ? SRC_DCMI :
		 p->dcmi == DCMI_NO  ? SRC_SENSORS :
				       SRC_NONE;
	return 0;
}

static void disconnect(struct ipmi_priv *p)
{
	if (p->sread)
		ipmi_sensor_read_ctx_destroy(p->sread);
	if (p->ctx) {
		ipmi_ctx_close(p->ctx);
		ipmi_ctx_destroy(p->ctx);
	}
	p->sread = NULL;
	p->ctx = NULL;
}

/* Why a command failed: the session's error, or the BMC's completion code. */
static void cmd_err(struct ipmi_priv *p, fiid_obj_t rs, uint8_t netfn,
		    const char *what, char *err, size_t errlen)
{
	int e = ipmi_ctx_errnum(p->ctx);
	uint64_t cc;

	if (e == IPMI_ERR_BAD_COMPLETION_CODE && rs &&
	    fiid_obj_get(rs, "comp_code", &cc) > 0) {
		char msg[128];

		if (ipmi_completion_code_strerror_cmd_r(rs, netfn, msg,
							sizeof(msg)) < 0)
			snprintf(msg, sizeof(msg), "?");
		seterr(err, errlen, "%s: completion code 0x%02x (%s)", what,
		       (unsigned int)cc, msg);
		return;
	}
	if (e == IPMI_ERR_SESSION_TIMEOUT || e == IPMI_ERR_MESSAGE_TIMEOUT ||
	    e == IPMI_ERR_CONNECTION_TIMEOUT)
		seterr(err, errlen, "%s: timeout (no answer from the BMC)",
		       what);
	else
		seterr(err, errlen, "%s: %s", what, ipmi_ctx_errormsg(p->ctx));
}

static bool cc_is(fiid_obj_t rs, uint8_t code)
{
	uint64_t cc;

	return fiid_obj_get(rs, "comp_code", &cc) > 0 && cc == code;
}

static int connect_bmc(struct ipmi_priv *p, unsigned int timeout_ms, char *err,
		       size_t errlen)
{
	char host[300];
	unsigned int retrans = timeout_ms / 10 ? timeout_ms / 10 : 1;
	unsigned int session = timeout_ms / 2 - 2 * retrans;

	p->ctx = ipmi_ctx_create();
	if (!p->ctx) {
		seterr(err, errlen, "ipmi_ctx_create: %s", strerror(errno));
		return -1;
	}
	if (p->port == IPMI_DEFAULT_PORT)
		snprintf(host, sizeof(host), "%s", p->host);
	else if (strchr(p->host, ':'))
		snprintf(host, sizeof(host), "[%s]:%u", p->host, p->port);
	else
		snprintf(host, sizeof(host), "%s:%u", p->host, p->port);
	if (ipmi_ctx_open_outofband_2_0(
		    p->ctx, host, p->user[0] ? p->user : NULL,
		    p->pass[0] ? p->pass : NULL, NULL, 0, p->privilege,
		    p->cipher, session, retrans, p->workarounds,
		    IPMI_FLAGS_DEFAULT) < 0) {
		int e = ipmi_ctx_errnum(p->ctx);

		switch (e) {
		case IPMI_ERR_USERNAME_INVALID:
		case IPMI_ERR_PASSWORD_INVALID:
		case IPMI_ERR_PASSWORD_VERIFICATION_TIMEOUT:
		case IPMI_ERR_K_G_INVALID:
			seterr(err, errlen, "%s: authentication failed: %s",
			       host, ipmi_ctx_errormsg(p->ctx));
			break;
		case IPMI_ERR_PRIVILEGE_LEVEL_INSUFFICIENT:
		case IPMI_ERR_PRIVILEGE_LEVEL_CANNOT_BE_OBTAINED:
			seterr(err, errlen, "%s: privilege refused: %s", host,
			       ipmi_ctx_errormsg(p->ctx));
			break;
		case IPMI_ERR_SESSION_TIMEOUT:
		case IPMI_ERR_CONNECTION_TIMEOUT:
			seterr(err, errlen,
			       "%s: timeout (no answer from the BMC within %u ms)",
			       host, timeout_ms);
			break;
		default:
			seterr(err, errlen, "%s: %s", host,
			       ipmi_ctx_errormsg(p->ctx));
		}
		ipmi_ctx_destroy(p->ctx);
		p->ctx = NULL;
		return -1;
	}
	p->sread = ipmi_sensor_read_ctx_create(p->ctx);
	if (!p->sread) {
		seterr(err, errlen, "ipmi_sensor_read_ctx_create: %s",
		       strerror(errno));
		disconnect(p);
		return -1;
	}
	p->fresh = true;
	return 0;
}

/* One whole SDR record: its header, then the rest (all at once, or 16 bytes a time). */
static int get_record(struct ipmi_priv *p, fiid_obj_t rs, uint16_t resv,
		      uint16_t id, uint16_t *next, struct ipmi_rec *r,
		      char *err, size_t errlen)
{
	uint8_t buf[SDR_REC_MAX];
	uint64_t v;
	unsigned int len, off;
	int n;

	fiid_obj_clear(rs);
	if (ipmi_cmd_get_sdr(p->ctx, resv, id, 0, 5, rs) < 0) {
		cmd_err(p, rs, IPMI_NET_FN_STORAGE_RQ, "Get SDR", err, errlen);
		return -1;
	}
	n = fiid_obj_get_data(rs, "record_data", buf, 5);
	if (n != 5 || fiid_obj_get(rs, "next_record_id", &v) <= 0) {
		seterr(err, errlen, "Get SDR: short record header");
		return -1;
	}
	*next = v;
	len = 5 + buf[4];
	for (off = 5; off < len;) {
		unsigned int want = len - off > 16 ? 16 : len - off;

		fiid_obj_clear(rs);
		if (ipmi_cmd_get_sdr(p->ctx, resv, id, off, want, rs) < 0) {
			cmd_err(p, rs, IPMI_NET_FN_STORAGE_RQ, "Get SDR", err,
				errlen);
			return -1;
		}
		n = fiid_obj_get_data(rs, "record_data", buf + off, want);
		if (n <= 0) {
			seterr(err, errlen, "Get SDR: short record");
			return -1;
		}
		off += n;
	}
	memcpy(r->data, buf, len);
	r->len = len;
	r->id[0] = 0;
	return 0;
}

static const char *unit_name(uint8_t u)
{
	switch (u) {
	case IPMI_SENSOR_UNIT_DEGREES_C:
		return "degrees C";
	case IPMI_SENSOR_UNIT_VOLTS:
		return "volts";
	case IPMI_SENSOR_UNIT_AMPS:
		return "amps";
	case IPMI_SENSOR_UNIT_WATTS:
		return "watts";
	case IPMI_SENSOR_UNIT_JOULES:
		return "joules";
	case IPMI_SENSOR_UNIT_RPM:
		return "RPM";
	case IPMI_SENSOR_UNIT_UNSPECIFIED:
		return "unspecified";
	}
	return "not watts";
}

/*
 * Whether a full or compact record reads watts: threshold-based, analog,
 * base unit watts, no modifier or rate, not a percentage.
 */
static bool is_watts(struct ipmi_priv *p, const struct ipmi_rec *r,
		     uint8_t *unit)
{
	uint8_t pct, mod, rate, base, modunit, evt;

	if (ipmi_sdr_parse_sensor_units(p->sdr, r->data, r->len, &pct, &mod,
					&rate, &base, &modunit) < 0)
		return false;
	*unit = base;
	if (ipmi_sdr_parse_event_reading_type_code(p->sdr, r->data, r->len,
						   &evt) < 0)
		return false;
	return base == IPMI_SENSOR_UNIT_WATTS && !pct && !rate &&
	       mod == IPMI_SDR_MODIFIER_UNIT_NONE && evt == 0x01;
}

/* What one walk of the SDR repository found (fetch_records). */
struct sdr_walk {
	struct ipmi_rec all[JMD_MAX_SAMPLES];
	bool found[JMD_MAX_SAMPLES]; /* sensor[i]'s record is all[i] */
	uint8_t unit[JMD_MAX_SAMPLES];
	size_t nall; /* sensor_type = power: the records in all */
	char seen[256]; /* the sensors' names, for the errors */
};

/* The repository's timestamps: while they stay, so do its records. */
static int repo_timestamps(struct ipmi_priv *p, uint64_t *added,
			   uint64_t *erased, char *err, size_t errlen)
{
	fiid_obj_t rs = fiid_obj_create(tmpl_cmd_get_sdr_repository_info_rs);
	int ret = -1;

	if (!rs) {
		seterr(err, errlen, "out of memory");
		return -1;
	}
	if (ipmi_cmd_get_sdr_repository_info(p->ctx, rs) < 0) {
		cmd_err(p, rs, IPMI_NET_FN_STORAGE_RQ,
			"Get SDR Repository Info", err, errlen);
		goto out;
	}
	if (fiid_obj_get(rs, "most_recent_addition_timestamp", added) <= 0 ||
	    fiid_obj_get(rs, "most_recent_erase_timestamp", erased) <= 0) {
		seterr(err, errlen, "Get SDR Repository Info: short answer");
		goto out;
	}
	ret = 0;
out:
	fiid_obj_destroy(rs);
	return ret;
}

/* *resv: the walk's reservation; left as it was if the BMC names none. */
static int reserve_repository(struct ipmi_priv *p, uint16_t *resv, char *err,
			      size_t errlen)
{
	fiid_obj_t rs = fiid_obj_create(tmpl_cmd_reserve_sdr_repository_rs);
	uint64_t v;
	int ret = 0;

	if (!rs) {
		seterr(err, errlen, "out of memory");
		return -1;
	}
	if (ipmi_cmd_reserve_sdr_repository(p->ctx, rs) < 0) {
		/* Reservation is optional: 0 works where it is not supported. */
		if (ipmi_ctx_errnum(p->ctx) != IPMI_ERR_BAD_COMPLETION_CODE) {
			cmd_err(p, rs, IPMI_NET_FN_STORAGE_RQ,
				"Reserve SDR Repository", err, errlen);
			ret = -1;
		} else {
			*resv = 0;
		}
	} else if (fiid_obj_get(rs, "reservation_id", &v) > 0) {
		*resv = v;
	}
	fiid_obj_destroy(rs);
	return ret;
}

/*
 * One record of the walk: a full or compact sensor record is named in
 * w->seen, and kept when "sensor" names it or, for "sensor_type = power",
 * when it reads watts.
 */
static int keep_record(struct ipmi_priv *p, struct ipmi_rec *r,
		       struct sdr_walk *w, char *err, size_t errlen)
{
	uint8_t type;
	int idlen;

	if (r->len < 5)
		return 0;
	type = r->data[3];
	if (type != IPMI_SDR_FORMAT_FULL_SENSOR_RECORD &&
	    type != IPMI_SDR_FORMAT_COMPACT_SENSOR_RECORD)
		return 0;
	memset(r->id, 0, sizeof(r->id));
	idlen = ipmi_sdr_parse_id_string(p->sdr, r->data, r->len, r->id,
					 SDR_ID_MAX);
	if (idlen < 0)
		return 0;
	r->id[idlen < SDR_ID_MAX ? idlen : SDR_ID_MAX] = 0;
	if (strlen(w->seen) + strlen(r->id) + 5 < sizeof(w->seen)) {
		if (w->seen[0])
			strcat(w->seen, ", ");
		strcat(w->seen, r->id);
	}
	if (p->type_power) {
		uint8_t u;

		if (!is_watts(p, r, &u))
			return 0;
		if (w->nall == JMD_MAX_SAMPLES) {
			seterr(err, errlen,
			       "sensor_type = power: more than %d sensors in watts",
			       JMD_MAX_SAMPLES);
			return -1;
		}
		w->all[w->nall++] = *r;
		return 0;
	}
	for (size_t i = 0; i < p->nsensor; i++)
		if (!w->found[i] && !strcmp(p->sensor[i], r->id)) {
			w->found[i] = true;
			w->all[i] = *r;
			is_watts(p, r, &w->unit[i]);
			break;
		}
	return 0;
}

/*
 * One walk of the whole repository under the reservation resv: 0, 1 when
 * the BMC cancelled the reservation (walk again), or -1.
 */
static int walk_repository(struct ipmi_priv *p, uint16_t resv, uint64_t t0,
			   struct sdr_walk *w, char *err, size_t errlen)
{
	fiid_obj_t rs = fiid_obj_create(tmpl_cmd_get_sdr_rs);
	struct ipmi_rec r;
	uint16_t id, next;
	int ret = -1;

	if (!rs) {
		seterr(err, errlen, "out of memory");
		return -1;
	}
	w->nall = 0;
	memset(w->found, 0, sizeof(w->found));
	w->seen[0] = 0;
	for (id = 0; id != 0xffff; id = next) {
		if (now_ms() - t0 > SDR_FETCH_MS) {
			seterr(err, errlen,
			       "SDR repository: fetch longer than %d ms",
			       SDR_FETCH_MS);
			goto out;
		}
		if (get_record(p, rs, resv, id, &next, &r, err, errlen) < 0) {
			if (ipmi_ctx_errnum(p->ctx) ==
				    IPMI_ERR_BAD_COMPLETION_CODE &&
			    cc_is(rs, IPMI_COMP_CODE_RESERVATION_CANCELLED))
				ret = 1;
			goto out;
		}
		if (keep_record(p, &r, w, err, errlen) < 0)
			goto out;
	}
	ret = 0;
out:
	fiid_obj_destroy(rs);
	return ret;
}

/*
 * Whether the walk found what the configuration asks for: every sensor
 * named, each in plain watts; for "sensor_type = power", at least one.
 */
static int check_records(struct ipmi_priv *p, struct sdr_walk *w, char *err,
			 size_t errlen)
{
	if (p->type_power) {
		if (!w->nall) {
			seterr(err, errlen,
			       "sensor_type = power: no sensor in watts (the BMC has: %s)",
			       w->seen[0] ? w->seen : "none");
			return -1;
		}
		return 0;
	}
	for (size_t i = 0; i < p->nsensor; i++) {
		if (!w->found[i]) {
			seterr(err, errlen,
			       "sensor '%s' not found (the BMC has: %s)",
			       p->sensor[i], w->seen[0] ? w->seen : "none");
			return -1;
		}
		if (!is_watts(p, &w->all[i], &w->unit[i])) {
			if (w->unit[i] == IPMI_SENSOR_UNIT_WATTS)
				seterr(err, errlen,
				       "sensor '%s': not a reading in plain watts (a rate, a percentage, a modifier unit or a discrete sensor)",
				       p->sensor[i]);
			else
				seterr(err, errlen,
				       "sensor '%s': unit is %s, not watts",
				       p->sensor[i], unit_name(w->unit[i]));
			return -1;
		}
	}
	w->nall = p->nsensor;
	return 0;
}

/*
 * The chosen sensors' records: walk the repository once, keep the full and
 * compact records named by "sensor" (in the configuration's order) or, for
 * "sensor_type = power", those reading watts.
 */
static int fetch_records(struct ipmi_priv *p, char *err, size_t errlen)
{
	struct sdr_walk w = { 0 };
	uint64_t t0 = now_ms(), added, erased;
	uint16_t resv = 0;
	int attempts = 0, r;

	if (repo_timestamps(p, &added, &erased, err, errlen) < 0)
		return -1;
	if (p->have_recs && added == p->sdr_added && erased == p->sdr_erased)
		return 0;
	do {
		if (++attempts > 3) {
			seterr(err, errlen,
			       "SDR repository: reservation cancelled 3 times");
			return -1;
		}
		if (reserve_repository(p, &resv, err, errlen) < 0)
			return -1;
		r = walk_repository(p, resv, t0, &w, err, errlen);
	} while (r > 0);
	if (r < 0 || check_records(p, &w, err, errlen) < 0)
		return -1;
	memcpy(p->rec, w.all, sizeof(w.all));
	p->nrec = w.nall;
	p->have_recs = true;
	p->sdr_added = added;
	p->sdr_erased = erased;
	return 0;
}

/*
 * DCMI Get Power Reading, system power statistics: the current power in
 * watts. 1 when read; 0 when the BMC has no DCMI or no active power
 * measurement (*why says which); -1 on a failed command.
 */
static int read_dcmi(struct ipmi_priv *p, double *w, char *why, size_t whylen,
		     char *err, size_t errlen)
{
	fiid_obj_t rs = fiid_obj_create(tmpl_cmd_dcmi_get_power_reading_rs);
	uint64_t cur, active;
	int ret = -1;

	if (!rs) {
		seterr(err, errlen, "out of memory");
		return -1;
	}
	if (ipmi_cmd_dcmi_get_power_reading(
		    p->ctx,
		    IPMI_DCMI_POWER_READING_MODE_SYSTEM_POWER_STATISTICS, 0,
		    rs) < 0) {
		if (ipmi_ctx_errnum(p->ctx) == IPMI_ERR_BAD_COMPLETION_CODE ||
		    ipmi_ctx_errnum(p->ctx) ==
			    IPMI_ERR_COMMAND_INVALID_OR_UNSUPPORTED ||
		    ipmi_ctx_errnum(p->ctx) ==
			    IPMI_ERR_PRIVILEGE_LEVEL_INSUFFICIENT) {
			cmd_err(p, rs, IPMI_NET_FN_GROUP_EXTENSION_RQ,
				"DCMI Get Power Reading", why, whylen);
			ret = 0;
		} else {
			cmd_err(p, rs, IPMI_NET_FN_GROUP_EXTENSION_RQ,
				"DCMI Get Power Reading", err, errlen);
		}
		goto out;
	}
	if (fiid_obj_get(rs, "current_power", &cur) <= 0 ||
	    fiid_obj_get(rs, "power_reading_state.power_measurement",
			 &active) <= 0) {
		seterr(err, errlen, "DCMI Get Power Reading: short answer");
		goto out;
	}
	if (!active) {
		seterr(why, whylen,
		       "DCMI Get Power Reading: reading unavailable (power measurement not active)");
		ret = 0;
		goto out;
	}
	*w = cur;
	ret = 1;
out:
	fiid_obj_destroy(rs);
	return ret;
}

static int read_sensor(struct ipmi_priv *p, const struct ipmi_rec *r, double *w,
		       bool *fatal, char *err, size_t errlen)
{
	uint8_t raw = 0;
	double *val = NULL;
	uint16_t mask = 0;
	int ret, e;

	*fatal = false;
	ret = ipmi_sensor_read(p->sread, r->data, r->len, 0, &raw, &val, &mask);
	if (ret == 1 && val) {
		*w = *val;
		free(val);
		return 0;
	}
	free(val);
	e = ipmi_sensor_read_ctx_errnum(p->sread);
	if (ret < 0 && e == IPMI_SENSOR_READ_ERR_IPMI_ERROR) {
		char what[SDR_ID_MAX + 16];

		*fatal = true;
		snprintf(what, sizeof(what), "sensor '%s'", r->id);
		cmd_err(p, NULL, 0, what, err, errlen);
		return -1;
	}
	if (ret < 0 && e != IPMI_SENSOR_READ_ERR_SENSOR_READING_UNAVAILABLE &&
	    e != IPMI_SENSOR_READ_ERR_SENSOR_SCANNING_DISABLED &&
	    e != IPMI_SENSOR_READ_ERR_SENSOR_READING_CANNOT_BE_OBTAINED &&
	    e != IPMI_SENSOR_READ_ERR_NODE_BUSY)
		*fatal = true;
	switch (e) {
	case IPMI_SENSOR_READ_ERR_SENSOR_READING_UNAVAILABLE:
	case IPMI_SENSOR_READ_ERR_SENSOR_READING_CANNOT_BE_OBTAINED:
		seterr(err, errlen, "sensor '%s': reading unavailable", r->id);
		break;
	case IPMI_SENSOR_READ_ERR_SENSOR_SCANNING_DISABLED:
		seterr(err, errlen,
		       "sensor '%s': reading unavailable (scanning disabled)",
		       r->id);
		break;
	default:
		seterr(err, errlen, "sensor '%s': %s", r->id,
		       ipmi_sensor_read_ctx_errormsg(p->sread));
	}
	return -1;
}

/*
 * The sensors, one sample each into out, their records fetched first on a
 * new session: how many, or -1 (*fatal: the session failed).
 */
static int read_sensors(struct jmd_input *in, uint64_t t0,
			struct jmd_sample *out, bool *fatal, char *err,
			size_t errlen)
{
	struct ipmi_priv *p = in->priv;
	double w;

	*fatal = false;
	if (now_ms() - t0 > in->timeout_ms) {
		seterr(err, errlen,
		       "timeout (%u ms) before the sensors were read",
		       in->timeout_ms);
		return -1;
	}
	if (p->fresh || !p->have_recs) {
		if (fetch_records(p, err, errlen) < 0) {
			*fatal = ipmi_ctx_errnum(p->ctx) != IPMI_ERR_SUCCESS &&
				 ipmi_ctx_errnum(p->ctx) !=
					 IPMI_ERR_BAD_COMPLETION_CODE;
			return -1;
		}
		p->fresh = false;
	}
	for (size_t i = 0; i < p->nrec; i++) {
		if (i && now_ms() - t0 > in->timeout_ms) {
			seterr(err, errlen,
			       "timeout (%u ms) after %zu of %zu sensors",
			       in->timeout_ms, i, p->nrec);
			return -1;
		}
		if (read_sensor(p, &p->rec[i], &w, fatal, err, errlen) < 0)
			return -1;
		out[i] = (struct jmd_sample){ .kind = JMD_POWER, .value = w };
		snprintf(out[i].label, sizeof(out[i].label), "%s",
			 p->rec[i].id);
	}
	return (int)p->nrec;
}

/*
 * One attempt at a reading, from t0 on. *dropped: the session failed (a
 * command without an answer, a transport error) and was closed.
 */
static int read_once(struct jmd_input *in, struct ipmi_priv *p, uint64_t t0,
		     struct jmd_sample *out, size_t *n, bool *dropped,
		     char *err, size_t errlen)
{
	char why[160] = "";
	bool fatal;
	double w;
	int r;

	*n = 0;
	*dropped = false;
	if (!p->ctx && connect_bmc(p, in->timeout_ms, err, errlen) < 0)
		return -1;
	if (!p->sdr && !(p->sdr = ipmi_sdr_ctx_create())) {
		seterr(err, errlen, "ipmi_sdr_ctx_create: %s", strerror(errno));
		return -1;
	}

	if (p->src == SRC_NONE || p->src == SRC_DCMI) {
		r = read_dcmi(p, &w, why, sizeof(why), err, errlen);
		if (r < 0)
			goto fail;
		if (r > 0) {
			p->src = SRC_DCMI;
			out[0] = (struct jmd_sample){ .kind = JMD_POWER,
						      .value = w };
			snprintf(out[0].label, sizeof(out[0].label), "DCMI");
			*n = 1;
			return 0;
		}
		if (p->dcmi == DCMI_YES || p->src == SRC_DCMI ||
		    (!p->nsensor && !p->type_power)) {
			seterr(err, errlen, "%s%s", why,
			       p->dcmi == DCMI_AUTO && !p->nsensor &&
					       !p->type_power ?
				       "; no sensor configured to fall back on" :
				       "");
			return -1;
		}
		/* dcmi = auto: the sensors from now on. */
		p->src = SRC_SENSORS;
	}

	r = read_sensors(in, t0, out, &fatal, err, errlen);
	if (r >= 0) {
		*n = r;
		return 0;
	}
	if (!fatal)
		return -1;
fail:
	disconnect(p);
	*dropped = true;
	return -1;
}

/*
 * A kept session that fails (the BMC was reset, or expired the session)
 * is reopened within the same read when at least half the timeout is
 * left: a command without an answer gives up after half of it.
 */
static int ipmi_read(struct jmd_input *in, struct jmd_sample *out, size_t *n,
		     char *err, size_t errlen)
{
	struct ipmi_priv *p = in->priv;
	uint64_t t0 = now_ms();
	bool kept, dropped;

	*n = 0;
	if (!p) {
		seterr(err, errlen, "not configured");
		return -1;
	}
	kept = p->ctx != NULL;
	if (!read_once(in, p, t0, out, n, &dropped, err, errlen))
		return 0;
	if (!kept || !dropped || now_ms() - t0 > in->timeout_ms / 2)
		return -1;
	return read_once(in, p, t0, out, n, &dropped, err, errlen);
}

static void ipmi_close(struct jmd_input *in)
{
	struct ipmi_priv *p = in->priv;

	if (!p)
		return;
	disconnect(p);
	if (p->sdr)
		ipmi_sdr_ctx_destroy(p->sdr);
	explicit_bzero(p->pass, sizeof(p->pass));
	free(p);
	in->priv = NULL;
}

const struct jmd_backend jmd_ipmi_backend = {
	.type = "ipmi",
	.set = ipmi_set,
	.open = ipmi_open,
	.read = ipmi_read,
	.close = ipmi_close,
};
