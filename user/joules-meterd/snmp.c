// SPDX-License-Identifier: GPL-2.0
/*
 * Backend "snmp": a PDU's active power or energy per outlet or inlet over
 * SNMPv2c or SNMPv3 (USM), on net-snmp's library with its single-session
 * API and synchronous requests bounded by the input's timeout (no retry:
 * the next interval is the retry). The OIDs of the common PDU families are
 * built in; any other OID can be given with its kind and scale.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <net-snmp/net-snmp-config.h>
#include <net-snmp/net-snmp-includes.h>

#include "jmd.h"
#include "parse.h"

/*
 * One built-in object: OID = base.INDEX.suffix, where INDEX is
 * "prefix.N" for `outlet = N` / `inlet = N` (a dotted value is used as
 * the whole index). The value times scale is W (power) or J (energy);
 * wrap is the counter's modulus in its own units (0: none known).
 */
struct jsnmp_obj {
	const char *family;
	bool inlet;
	enum jmd_kind kind;
	const char *base;
	const char *prefix;
	const char *suffix;
	double scale;
	double wrap;
};

#define WRAP32 4294967296.0

static const struct jsnmp_obj jsnmp_objs[] = {
	/* Raritan PDU2-MIB: measurementsOutletSensorValue.pduId.outletId.type */
	{ "raritan", false, JMD_POWER, "1.3.6.1.4.1.13742.6.5.4.3.1.4", "1",
	  ".5", 1, 0 }, /* activePower(5), W */
	{ "raritan", false, JMD_ENERGY, "1.3.6.1.4.1.13742.6.5.4.3.1.4", "1",
	  ".8", 3600, WRAP32 }, /* activeEnergy(8), Wh, Unsigned32 */
	/* Raritan PDU2-MIB: measurementsInletSensorValue.pduId.inletId.type */
	{ "raritan", true, JMD_POWER, "1.3.6.1.4.1.13742.6.5.2.3.1.4", "1",
	  ".5", 1, 0 }, /* activePower(5), W */
	{ "raritan", true, JMD_ENERGY, "1.3.6.1.4.1.13742.6.5.2.3.1.4", "1",
	  ".8", 3600, WRAP32 }, /* activeEnergy(8), Wh, Unsigned32 */
	/* APC PowerNet-MIB: rPDU2OutletMeteredStatusPower.index, W */
	{ "apc", false, JMD_POWER, "1.3.6.1.4.1.318.1.1.26.9.4.3.1.7", "", "",
	  1, 0 },
	/* APC PowerNet-MIB: rPDU2OutletMeteredStatusEnergy.index, 0.1 kWh */
	{ "apc", false, JMD_ENERGY, "1.3.6.1.4.1.318.1.1.26.9.4.3.1.11", "", "",
	  360000, 0 },
	/* APC PowerNet-MIB: rPDU2PhaseStatusPower.index, 0.01 kW (per phase) */
	{ "apc", true, JMD_POWER, "1.3.6.1.4.1.318.1.1.26.6.3.1.7", "", "", 10,
	  0 },
	/* ServerTech Sentry4-MIB: st4OutletActivePower.unit.cord.outlet, W */
	{ "servertech", false, JMD_POWER, "1.3.6.1.4.1.1718.4.1.8.3.1.7", "1.1",
	  "", 1, 0 },
	/* ServerTech Sentry4-MIB: st4OutletEnergy.unit.cord.outlet, Wh */
	{ "servertech", false, JMD_ENERGY, "1.3.6.1.4.1.1718.4.1.8.3.1.14",
	  "1.1", "", 3600, 0 },
	/* ServerTech Sentry4-MIB: st4InputCordActivePower.unit.cord, W */
	{ "servertech", true, JMD_POWER, "1.3.6.1.4.1.1718.4.1.3.3.1.3", "1",
	  "", 1, 0 },
	/* Eaton EATON-EPDU-MIB: outletWatts.strappingIndex.outletIndex, W */
	{ "eaton", false, JMD_POWER, "1.3.6.1.4.1.534.6.6.7.6.5.1.3", "0", "",
	  1, 0 },
	/* Eaton EATON-EPDU-MIB: outletWh.strappingIndex.outletIndex, Wh */
	{ "eaton", false, JMD_ENERGY, "1.3.6.1.4.1.534.6.6.7.6.5.1.4", "0", "",
	  3600, 0 },
	/* Eaton EATON-EPDU-MIB: inputWatts.strappingIndex.inputIndex, W */
	{ "eaton", true, JMD_POWER, "1.3.6.1.4.1.534.6.6.7.3.5.1.4", "0", "", 1,
	  0 },
};

#define SNMP_MAX_ELEMS JMD_MAX_SAMPLES

struct jsnmp_elem {
	bool inlet; /* family element: inlet, else outlet */
	char index[64]; /* family element: its number or dotted index */
	char oid_text[160]; /* explicit oid, or the built-in one's text */
	oid oid[MAX_OID_LEN];
	size_t oid_len;
	double scale, wrap;
	enum jmd_kind kind;
	char label[48];
};

struct jsnmp_priv {
	char host[256];
	unsigned int port;
	long version; /* SNMP_VERSION_2c or SNMP_VERSION_3 */
	char *community;
	char *user;
	int level; /* SNMP_SEC_LEVEL_* , 0: from what is given */
	char auth_proto[16], priv_proto[16];
	char *auth_pass, *priv_pass;
	char family[16];
	bool kind_set;
	enum jmd_kind kind;
	double scale, wrap;
	bool scale_set, wrap_set;
	struct jsnmp_elem el[SNMP_MAX_ELEMS];
	size_t nel;
	void *sess; /* snmp_sess_open()'s handle, opened on the first read */
};

static bool jsnmp_lib_ready;

/* net-snmp's global state, once: no config files, MIBs or persistence. */
static void jsnmp_lib_init(void)
{
	if (jsnmp_lib_ready)
		return;
	jsnmp_lib_ready = true;
	setenv("MIBS", "", 0);
	setenv("MIBDIRS", "/nonexistent", 0);
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID,
			       NETSNMP_DS_LIB_DONT_READ_CONFIGS, 1);
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID,
			       NETSNMP_DS_LIB_DISABLE_PERSISTENT_LOAD, 1);
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID,
			       NETSNMP_DS_LIB_DISABLE_PERSISTENT_SAVE, 1);
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID,
			       NETSNMP_DS_LIB_DONT_PERSIST_STATE, 1);
	netsnmp_ds_set_int(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_MIB_WARNINGS,
			   0);
	/*
	 * Nothing is kept, but the library still makes a cert_indexes/ in
	 * its persistent directory: the service's own runtime directory
	 * (systemd's RuntimeDirectory=), else a path that cannot exist,
	 * never /var/lib/snmp of the system's agent.
	 */
	netsnmp_ds_set_string(
		NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_PERSISTENT_DIR,
		getenv("RUNTIME_DIRECTORY") ? getenv("RUNTIME_DIRECTORY") :
					      "/dev/null/joules-meterd");
	init_snmp("joules-meterd");
}

static struct jsnmp_priv *jsnmp_priv(struct jmd_input *in)
{
	struct jsnmp_priv *p = in->priv;

	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p)
			return NULL;
		p->port = 161;
		p->version = SNMP_VERSION_2c;
		p->scale = 1;
		p->kind = JMD_POWER;
		in->priv = p;
	}
	return p;
}

static int set_str(char **dst, const char *key, const char *val, char *err,
		   size_t errlen)
{
	if (*dst) {
		snprintf(err, errlen, "%s: given twice", key);
		return -1;
	}
	*dst = strdup(val);
	if (!*dst) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

/* A dotted numeric OID (leading dot optional), checked. */
static int jsnmp_parse_numeric(const char *s, oid *o, size_t *len)
{
	const char *p = *s == '.' ? s + 1 : s;
	size_t n = 0;

	if (!*p)
		return -1;
	while (*p) {
		unsigned long long v = 0;
		int digits = 0;

		while (*p >= '0' && *p <= '9') {
			v = v * 10 + (unsigned long long)(*p++ - '0');
			if (++digits > 10 || v > 0xffffffffull)
				return -1;
		}
		if (!digits || n == MAX_OID_LEN)
			return -1;
		o[n++] = (oid)v;
		if (*p == '.' && p[1])
			p++;
		else if (*p)
			return -1;
	}
	*len = n;
	return n >= 2 ? 0 : -1;
}

static int jsnmp_add_elem(struct jsnmp_priv *p, const char *key,
			  const char *val, char *err, size_t errlen)
{
	struct jsnmp_elem *e;

	if (p->nel == SNMP_MAX_ELEMS) {
		snprintf(err, errlen, "more than %d outlets, inlets and oids",
			 SNMP_MAX_ELEMS);
		return -1;
	}
	e = &p->el[p->nel];
	memset(e, 0, sizeof(*e));
	if (!strcmp(key, "oid")) {
		if (jsnmp_parse_numeric(val, e->oid, &e->oid_len)) {
			snprintf(err, errlen,
				 "oid '%s': want a numeric OID (1.3.6.1...)",
				 val);
			return -1;
		}
		snprintf(e->oid_text, sizeof(e->oid_text), "%s", val);
		snprintf(e->label, sizeof(e->label), "%s", val);
	} else {
		const char *q = val;

		while (*q == '.' || (*q >= '0' && *q <= '9'))
			q++;
		if (*q || !*val || *val == '.' || val[strlen(val) - 1] == '.' ||
		    strstr(val, "..") || strlen(val) >= sizeof(e->index)) {
			snprintf(
				err, errlen,
				"%s '%s': want a number (or a dotted table index)",
				key, val);
			return -1;
		}
		e->inlet = !strcmp(key, "inlet");
		snprintf(e->index, sizeof(e->index), "%s", val);
		snprintf(e->label, sizeof(e->label), "%s %s", key, val);
	}
	p->nel++;
	return 0;
}

static int jsnmp_set_version(struct jsnmp_priv *p, const char *val, char *err,
			     size_t errlen)
{
	if (!strcmp(val, "2c") || !strcmp(val, "2"))
		p->version = SNMP_VERSION_2c;
	else if (!strcmp(val, "3"))
		p->version = SNMP_VERSION_3;
	else {
		snprintf(err, errlen, "version '%s': want 2c or 3", val);
		return -1;
	}
	return 0;
}

static int jsnmp_set_level(struct jsnmp_priv *p, const char *val, char *err,
			   size_t errlen)
{
	if (!strcmp(val, "noAuthNoPriv"))
		p->level = SNMP_SEC_LEVEL_NOAUTH;
	else if (!strcmp(val, "authNoPriv"))
		p->level = SNMP_SEC_LEVEL_AUTHNOPRIV;
	else if (!strcmp(val, "authPriv"))
		p->level = SNMP_SEC_LEVEL_AUTHPRIV;
	else {
		snprintf(
			err, errlen,
			"security_level '%s': want noAuthNoPriv, authNoPriv or authPriv",
			val);
		return -1;
	}
	return 0;
}

/* A family whose OIDs are built in (jsnmp_objs). */
static int jsnmp_set_family(struct jsnmp_priv *p, const char *val, char *err,
			    size_t errlen)
{
	bool known = false;

	for (size_t i = 0; i < sizeof(jsnmp_objs) / sizeof(jsnmp_objs[0]); i++)
		known |= !strcmp(jsnmp_objs[i].family, val);
	if (!known) {
		snprintf(err, errlen,
			 "family '%s': want raritan, apc, servertech or eaton",
			 val);
		return -1;
	}
	snprintf(p->family, sizeof(p->family), "%s", val);
	return 0;
}

static int jsnmp_set_kind(struct jsnmp_priv *p, const char *val, char *err,
			  size_t errlen)
{
	if (!strcmp(val, "power"))
		p->kind = JMD_POWER;
	else if (!strcmp(val, "energy"))
		p->kind = JMD_ENERGY;
	else {
		snprintf(err, errlen, "kind '%s': want power or energy", val);
		return -1;
	}
	p->kind_set = true;
	return 0;
}

/* "scale" or "wrap" (key): a positive number. */
static int jsnmp_set_scale(struct jsnmp_priv *p, const char *key,
			   const char *val, char *err, size_t errlen)
{
	const char *why = NULL;
	double d;

	if (parse_double(val, &d, &why) || !(d > 0)) {
		snprintf(err, errlen, "%s '%s': want a positive number", key,
			 val);
		return -1;
	}
	if (key[0] == 's') {
		p->scale = d;
		p->scale_set = true;
	} else {
		p->wrap = d;
		p->wrap_set = true;
	}
	return 0;
}

static int jsnmp_set(struct jmd_input *in, const char *key, const char *val,
		     char *err, size_t errlen)
{
	struct jsnmp_priv *p = jsnmp_priv(in);
	const char *why = NULL;
	uint64_t u;

	if (!p) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (!strcmp(key, "host")) {
		if (strlen(val) >= sizeof(p->host) || strpbrk(val, " \t/")) {
			snprintf(err, errlen, "host '%s': not a host name",
				 val);
			return -1;
		}
		snprintf(p->host, sizeof(p->host), "%s", val);
		return 0;
	}
	if (!strcmp(key, "port")) {
		if (parse_u64(val, &u, &why) || !u || u > 65535) {
			snprintf(err, errlen, "port '%s': want 1 to 65535",
				 val);
			return -1;
		}
		p->port = (unsigned int)u;
		return 0;
	}
	if (!strcmp(key, "version"))
		return jsnmp_set_version(p, val, err, errlen);
	if (!strcmp(key, "community"))
		return set_str(&p->community, key, val, err, errlen);
	if (!strcmp(key, "user"))
		return set_str(&p->user, key, val, err, errlen);
	if (!strcmp(key, "auth_password"))
		return set_str(&p->auth_pass, key, val, err, errlen);
	if (!strcmp(key, "priv_password"))
		return set_str(&p->priv_pass, key, val, err, errlen);
	if (!strcmp(key, "security_level"))
		return jsnmp_set_level(p, val, err, errlen);
	if (!strcmp(key, "auth_protocol")) {
		if (strcmp(val, "MD5") && strcmp(val, "SHA") &&
		    strcmp(val, "SHA-256")) {
			snprintf(err, errlen,
				 "auth_protocol '%s': want SHA, SHA-256 or MD5",
				 val);
			return -1;
		}
		snprintf(p->auth_proto, sizeof(p->auth_proto), "%s", val);
		return 0;
	}
	if (!strcmp(key, "priv_protocol")) {
		if (strcmp(val, "AES") && strcmp(val, "DES")) {
			snprintf(err, errlen,
				 "priv_protocol '%s': want AES or DES", val);
			return -1;
		}
		snprintf(p->priv_proto, sizeof(p->priv_proto), "%s", val);
		return 0;
	}
	if (!strcmp(key, "family"))
		return jsnmp_set_family(p, val, err, errlen);
	if (!strcmp(key, "kind"))
		return jsnmp_set_kind(p, val, err, errlen);
	if (!strcmp(key, "scale") || !strcmp(key, "wrap"))
		return jsnmp_set_scale(p, key, val, err, errlen);
	if (!strcmp(key, "outlet") || !strcmp(key, "inlet") ||
	    !strcmp(key, "oid"))
		return jsnmp_add_elem(p, key, val, err, errlen);
	snprintf(err, errlen, "unknown key '%s'", key);
	return -1;
}

static const struct jsnmp_obj *jsnmp_find_obj(const char *family, bool inlet,
					      enum jmd_kind kind)
{
	for (size_t i = 0; i < sizeof(jsnmp_objs) / sizeof(jsnmp_objs[0]); i++)
		if (!strcmp(jsnmp_objs[i].family, family) &&
		    jsnmp_objs[i].inlet == inlet && jsnmp_objs[i].kind == kind)
			return &jsnmp_objs[i];
	return NULL;
}

/* Version 2c: a community, and nothing of version 3. */
static int jsnmp_check_v2c(const struct jsnmp_priv *p, char *err, size_t errlen)
{
	if (!p->community) {
		snprintf(err, errlen, "version 2c needs a 'community'");
		return -1;
	}
	if (p->user || p->auth_pass || p->priv_pass) {
		snprintf(err, errlen,
			 "user and passwords are for version 3, not 2c");
		return -1;
	}
	return 0;
}

/*
 * Version 3: a user, the passwords its security level needs (the level
 * from the passwords given when not set), and the protocols' defaults.
 */
static int jsnmp_check_v3(struct jsnmp_priv *p, char *err, size_t errlen)
{
	if (!p->user) {
		snprintf(err, errlen, "version 3 needs a 'user'");
		return -1;
	}
	if (p->community) {
		snprintf(err, errlen, "community is for version 2c, not 3");
		return -1;
	}
	if (!p->level)
		p->level = p->priv_pass ? SNMP_SEC_LEVEL_AUTHPRIV :
			   p->auth_pass ? SNMP_SEC_LEVEL_AUTHNOPRIV :
					  SNMP_SEC_LEVEL_NOAUTH;
	if (p->level >= SNMP_SEC_LEVEL_AUTHNOPRIV && !p->auth_pass) {
		snprintf(err, errlen,
			 "security level needs an 'auth_password'");
		return -1;
	}
	if (p->level == SNMP_SEC_LEVEL_AUTHPRIV && !p->priv_pass) {
		snprintf(err, errlen, "authPriv needs a 'priv_password'");
		return -1;
	}
	if ((p->auth_pass && strlen(p->auth_pass) < 8) ||
	    (p->priv_pass && strlen(p->priv_pass) < 8)) {
		snprintf(err, errlen,
			 "SNMPv3 passwords have at least 8 characters");
		return -1;
	}
	if (!p->auth_proto[0])
		snprintf(p->auth_proto, sizeof(p->auth_proto), "SHA");
	if (!p->priv_proto[0])
		snprintf(p->priv_proto, sizeof(p->priv_proto), "AES");
	return 0;
}

/* An element's OID, kind, scale and wrap: its own oid, or its family's. */
static int jsnmp_elem_oid(const struct jsnmp_priv *p, struct jsnmp_elem *e,
			  char *err, size_t errlen)
{
	const struct jsnmp_obj *o;
	char text[160];

	e->kind = p->kind;
	if (e->oid_len) { /* explicit oid */
		e->scale = p->scale;
		e->wrap = p->wrap_set ? p->wrap * p->scale : 0;
		return 0;
	}
	if (!p->family[0]) {
		snprintf(err, errlen, "%s: needs a 'family' (or give an oid)",
			 e->label);
		return -1;
	}
	o = jsnmp_find_obj(p->family, e->inlet, p->kind);
	if (!o) {
		snprintf(err, errlen,
			 "family %s has no %s %s built in "
			 "(give its oid with kind and scale)",
			 p->family, e->inlet ? "inlet" : "outlet",
			 jmd_kind_name(p->kind));
		return -1;
	}
	if (strchr(e->index, '.') || !o->prefix[0])
		snprintf(text, sizeof(text), "%s.%s%s", o->base, e->index,
			 o->suffix);
	else
		snprintf(text, sizeof(text), "%s.%s.%s%s", o->base, o->prefix,
			 e->index, o->suffix);
	if (jsnmp_parse_numeric(text, e->oid, &e->oid_len)) {
		snprintf(err, errlen, "%s: bad OID %s", e->label, text);
		return -1;
	}
	snprintf(e->oid_text, sizeof(e->oid_text), "%s", text);
	e->scale = p->scale_set ? p->scale : o->scale;
	e->wrap = o->wrap * e->scale;
	return 0;
}

static int jsnmp_open(struct jmd_input *in, char *err, size_t errlen)
{
	struct jsnmp_priv *p = jsnmp_priv(in);

	if (!p) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (!p->host[0]) {
		snprintf(err, errlen, "no 'host'");
		return -1;
	}
	if (!p->nel) {
		snprintf(err, errlen,
			 "nothing to read: no outlet, inlet or oid");
		return -1;
	}
	if (p->version == SNMP_VERSION_2c) {
		if (jsnmp_check_v2c(p, err, errlen))
			return -1;
	} else if (jsnmp_check_v3(p, err, errlen)) {
		return -1;
	}
	for (size_t i = 0; i < p->nel; i++)
		if (jsnmp_elem_oid(p, &p->el[i], err, errlen))
			return -1;
	return 0;
}

static void jsnmp_close(struct jmd_input *in)
{
	struct jsnmp_priv *p = in->priv;

	if (!p)
		return;
	if (p->sess)
		snmp_sess_close(p->sess);
	free(p->community);
	free(p->user);
	if (p->auth_pass)
		explicit_bzero(p->auth_pass, strlen(p->auth_pass));
	if (p->priv_pass)
		explicit_bzero(p->priv_pass, strlen(p->priv_pass));
	free(p->auth_pass);
	free(p->priv_pass);
	free(p);
	in->priv = NULL;
}

/* Open the session (SNMPv3: engine discovery, bounded by the timeout). */
static int jsnmp_connect(struct jmd_input *in, struct jsnmp_priv *p, char *err,
			 size_t errlen)
{
	netsnmp_session s;
	char peer[300];

	jsnmp_lib_init();
	snmp_sess_init(&s);
	snprintf(peer, sizeof(peer), "udp:%s:%u", p->host, p->port);
	s.peername = peer;
	s.version = p->version;
	s.timeout = (long)in->timeout_ms * 1000L;
	s.retries = 0;
	if (p->version == SNMP_VERSION_2c) {
		s.community = (u_char *)p->community;
		s.community_len = strlen(p->community);
	} else {
		s.securityName = p->user;
		s.securityNameLen = strlen(p->user);
		s.securityLevel = p->level;
		if (p->level >= SNMP_SEC_LEVEL_AUTHNOPRIV) {
			if (!strcmp(p->auth_proto, "MD5")) {
				s.securityAuthProto = usmHMACMD5AuthProtocol;
				s.securityAuthProtoLen =
					OID_LENGTH(usmHMACMD5AuthProtocol);
			} else if (!strcmp(p->auth_proto, "SHA-256")) {
				s.securityAuthProto =
					usmHMAC192SHA256AuthProtocol;
				s.securityAuthProtoLen = OID_LENGTH(
					usmHMAC192SHA256AuthProtocol);
			} else {
				s.securityAuthProto = usmHMACSHA1AuthProtocol;
				s.securityAuthProtoLen =
					OID_LENGTH(usmHMACSHA1AuthProtocol);
			}
			s.securityAuthKeyLen = USM_AUTH_KU_LEN;
			if (generate_Ku(
				    s.securityAuthProto, s.securityAuthProtoLen,
				    (u_char *)p->auth_pass,
				    strlen(p->auth_pass), s.securityAuthKey,
				    &s.securityAuthKeyLen) != SNMPERR_SUCCESS) {
				snprintf(err, errlen,
					 "cannot derive the auth key");
				return -1;
			}
		}
		if (p->level == SNMP_SEC_LEVEL_AUTHPRIV) {
			if (!strcmp(p->priv_proto, "DES")) {
				s.securityPrivProto = usmDESPrivProtocol;
				s.securityPrivProtoLen =
					OID_LENGTH(usmDESPrivProtocol);
			} else {
				s.securityPrivProto = usmAESPrivProtocol;
				s.securityPrivProtoLen =
					OID_LENGTH(usmAESPrivProtocol);
			}
			s.securityPrivKeyLen = USM_PRIV_KU_LEN;
			if (generate_Ku(
				    s.securityAuthProto, s.securityAuthProtoLen,
				    (u_char *)p->priv_pass,
				    strlen(p->priv_pass), s.securityPrivKey,
				    &s.securityPrivKeyLen) != SNMPERR_SUCCESS) {
				snprintf(err, errlen,
					 "cannot derive the privacy key");
				return -1;
			}
		}
	}
	p->sess = snmp_sess_open(&s);
	explicit_bzero(s.securityAuthKey, sizeof(s.securityAuthKey));
	explicit_bzero(s.securityPrivKey, sizeof(s.securityPrivKey));
	if (!p->sess) {
		int cerr = 0, serr = 0;
		char *msg = NULL;

		snmp_error(&s, &cerr, &serr, &msg);
		snprintf(err, errlen, "%s:%u: cannot open an SNMP session: %s",
			 p->host, p->port, msg ? msg : "unknown error");
		free(msg);
		return -1;
	}
	return 0;
}

/* One value as a double, or -1 with the reason. */
static int jsnmp_value(const struct variable_list *v, double *out,
		       const char **why)
{
	switch (v->type) {
	case ASN_INTEGER:
		*out = (double)*v->val.integer;
		return 0;
	case ASN_GAUGE: /* Unsigned32 too */
	case ASN_COUNTER:
	case ASN_TIMETICKS:
		*out = (double)(unsigned long)*v->val.integer;
		return 0;
	case ASN_COUNTER64:
		*out = (double)v->val.counter64->high * 4294967296.0 +
		       (double)v->val.counter64->low;
		return 0;
	case ASN_OCTET_STR: {
		char buf[64];
		size_t n = v->val_len < sizeof(buf) - 1 ? v->val_len :
							  sizeof(buf) - 1;

		memcpy(buf, v->val.string, n);
		buf[n] = 0;
		return parse_double(buf, out, why) ? -1 : 0;
	}
	case SNMP_NOSUCHOBJECT:
		*why = "no such object";
		return -1;
	case SNMP_NOSUCHINSTANCE:
		*why = "no such instance (outlet or inlet number?)";
		return -1;
	case SNMP_ENDOFMIBVIEW:
		*why = "end of MIB view";
		return -1;
	default:
		*why = "not a number";
		return -1;
	}
}

/*
 * One GET of every element's OID: the agent's answer without an error in
 * it, or NULL with err set (a failed session is closed for the next read).
 */
static netsnmp_pdu *jsnmp_get(struct jmd_input *in, struct jsnmp_priv *p,
			      char *err, size_t errlen)
{
	netsnmp_pdu *pdu, *resp = NULL;
	int st;

	pdu = snmp_pdu_create(SNMP_MSG_GET);
	if (!pdu) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	for (size_t i = 0; i < p->nel; i++)
		snmp_add_null_var(pdu, p->el[i].oid, p->el[i].oid_len);
	st = snmp_sess_synch_response(p->sess, pdu, &resp);
	if (st == STAT_TIMEOUT) {
		snprintf(err, errlen, "%s:%u: no answer within %u ms", p->host,
			 p->port, in->timeout_ms);
		if (resp)
			snmp_free_pdu(resp);
		return NULL;
	}
	if (st != STAT_SUCCESS || !resp) {
		int cerr = 0, serr = 0;
		char *msg = NULL;

		snmp_sess_error(p->sess, &cerr, &serr, &msg);
		if (serr == SNMPERR_TIMEOUT)
			snprintf(err, errlen,
				 "%s:%u: no answer within %u ms (SNMPv3 engine "
				 "discovery)",
				 p->host, p->port, in->timeout_ms);
		else
			snprintf(err, errlen, "%s:%u: %s", p->host, p->port,
				 msg ? msg : "SNMP request failed");
		free(msg);
		if (resp)
			snmp_free_pdu(resp);
		/* A fresh session next time (v3: engine boots, time). */
		snmp_sess_close(p->sess);
		p->sess = NULL;
		return NULL;
	}
	if (resp->errstat != SNMP_ERR_NOERROR) {
		long idx = resp->errindex;

		snprintf(err, errlen, "%s:%u: agent error: %s%s%s", p->host,
			 p->port, snmp_errstring((int)resp->errstat),
			 idx > 0 && (size_t)idx <= p->nel ? " at " : "",
			 idx > 0 && (size_t)idx <= p->nel ?
				 p->el[idx - 1].oid_text :
				 "");
		snmp_free_pdu(resp);
		return NULL;
	}
	return resp;
}

static int jsnmp_read(struct jmd_input *in, struct jmd_sample *out, size_t *n,
		      char *err, size_t errlen)
{
	struct jsnmp_priv *p = in->priv;
	netsnmp_pdu *resp;
	netsnmp_variable_list *v;
	size_t k = 0;

	*n = 0;
	if (!p->sess && jsnmp_connect(in, p, err, errlen))
		return -1;
	resp = jsnmp_get(in, p, err, errlen);
	if (!resp)
		return -1;
	for (v = resp->variables; v && k < p->nel; v = v->next_variable, k++) {
		struct jsnmp_elem *e = &p->el[k];
		const char *why = NULL;
		double val;

		if (jsnmp_value(v, &val, &why)) {
			snprintf(err, errlen, "%s (%s): %s", e->label,
				 e->oid_text, why ? why : "bad value");
			snmp_free_pdu(resp);
			return -1;
		}
		memset(&out[k], 0, sizeof(out[k]));
		out[k].kind = e->kind;
		out[k].value = val * e->scale;
		out[k].wrap_j = e->kind == JMD_ENERGY ? e->wrap : 0;
		snprintf(out[k].label, sizeof(out[k].label), "%s", e->label);
	}
	snmp_free_pdu(resp);
	if (k != p->nel) {
		snprintf(err, errlen, "%s:%u: %zu values for %zu objects",
			 p->host, p->port, k, p->nel);
		return -1;
	}
	*n = k;
	return 0;
}

const struct jmd_backend jmd_snmp_backend = {
	.type = "snmp",
	.set = jsnmp_set,
	.open = jsnmp_open,
	.read = jsnmp_read,
	.close = jsnmp_close,
};
