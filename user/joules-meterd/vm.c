// SPDX-License-Identifier: GPL-2.0
/*
 * The VM channel's line format and finding the channel in a QEMU command
 * line (vm.h). Pure: no I/O, so the host tests drive it with made-up
 * command lines and lines.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vm.h"

#define PREFIX "joules-vm 1 "

int jmd_vm_format(char *buf, size_t len, const struct jmd_vm_line *l)
{
	int n = snprintf(buf, len,
			 PREFIX "epoch=%" PRIu64 " seq=%" PRIu64
				" time_ns=%" PRIu64 " energy_uj=%" PRIu64 "\n",
			 l->epoch, l->seq, l->time_ns, l->energy_uj);

	return n < 0 || (size_t)n >= len || n > JMD_VM_LINE_MAX ? -1 : n;
}

/* "KEY=DIGITS" at *p, then a blank or the end; advances *p. */
static int take_u64(const char **p, const char *key, uint64_t *v)
{
	size_t kl = strlen(key);
	const char *s = *p;
	char *end;

	if (strncmp(s, key, kl) || s[kl] != '=' || s[kl + 1] < '0' ||
	    s[kl + 1] > '9')
		return -1;
	errno = 0;
	*v = strtoull(s + kl + 1, &end, 10);
	if (errno || (*end && *end != ' '))
		return -1;
	*p = *end ? end + 1 : end;
	return 0;
}

int jmd_vm_parse(const char *line, struct jmd_vm_line *out, char *err,
		 size_t errlen)
{
	static const char *const keys[] = { "epoch", "seq", "time_ns",
					    "energy_uj" };
	uint64_t *vals[] = { &out->epoch, &out->seq, &out->time_ns,
			     &out->energy_uj };
	const char *p = line;

	if (strlen(line) > JMD_VM_LINE_MAX) {
		snprintf(err, errlen, "a line longer than %d bytes",
			 JMD_VM_LINE_MAX);
		return -1;
	}
	if (strncmp(p, PREFIX, strlen(PREFIX))) {
		snprintf(err, errlen, "not a joules-vm 1 line: '%.40s'", line);
		return -1;
	}
	p += strlen(PREFIX);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (take_u64(&p, keys[i], vals[i])) {
			snprintf(err, errlen,
				 "%s: missing or not a number in '%.80s'",
				 keys[i], line);
			return -1;
		}
	}
	return 0;
}

/* ---- QEMU's command line ---- */

/*
 * The value of key in QEMU's "type,key=value,..." option text, commas in
 * values doubled (",,"); the last one when the key repeats, as QEMU takes
 * it. 0 and the value in out, or -1 (absent, or longer than out). A bare
 * "key" (the old "server" for "server=on") gives "on".
 */
static int kv_get(const char *opt, const char *key, char *out, size_t outlen)
{
	size_t kl = strlen(key);
	const char *p = opt;
	int rc = -1;

	while (p && *p) {
		const char *f = p;

		/* The field's end: a single comma. */
		while (*p && !(*p == ',' && p[1] != ',')) {
			if (*p == ',')
				p++; /* ",," */
			p++;
		}
		if (!strncmp(f, key, kl) && (f[kl] == '=' || f + kl == p)) {
			const char *v = f[kl] == '=' ? f + kl + 1 : "on";
			const char *e = f[kl] == '=' ? p : v + 2;
			size_t o = 0;

			while (v < e && o + 1 < outlen) {
				if (*v == ',' && v + 1 < e && v[1] == ',')
					v++;
				out[o++] = *v++;
			}
			out[o] = 0;
			rc = v < e ? -1 : 0;
		}
		p = *p ? p + 1 : NULL;
	}
	return rc;
}

/* The option text's type: its first field when that has no '='. */
static bool kv_type_is(const char *opt, const char *type)
{
	size_t tl = strlen(type);

	return !strncmp(opt, type, tl) && (opt[tl] == ',' || !opt[tl]);
}

/* "key": "string" of a flat JSON object; 0 and the string in out, or -1. */
static int json_get(const char *obj, const char *key, char *out, size_t outlen)
{
	size_t kl = strlen(key);
	const char *p = obj;

	while ((p = strchr(p, '"'))) {
		const char *q = p + 1;
		size_t o = 0;

		if (!strncmp(q, key, kl) && q[kl] == '"') {
			q += kl + 1;
			while (*q == ' ')
				q++;
			if (*q == ':') {
				q++;
				while (*q == ' ')
					q++;
				if (*q != '"')
					return -1;
				for (q++; *q && *q != '"'; q++) {
					if (*q == '\\' && q[1])
						q++;
					if (o + 1 >= outlen)
						return -1;
					out[o++] = *q;
				}
				out[o] = 0;
				return *q == '"' ? 0 : -1;
			}
		}
		/* Past this string, escapes included. */
		for (q = p + 1; *q && *q != '"'; q++)
			if (*q == '\\' && q[1])
				q++;
		if (!*q)
			return -1;
		p = q + 1;
	}
	return -1;
}

static bool is_opt(const char *arg, const char *name)
{
	/* QEMU takes -name and --name alike. */
	if (arg[0] == '-' && arg[1] == '-')
		arg++;
	return arg[0] == '-' && !strcmp(arg + 1, name);
}

/* A -device's driver, chardev and name, in either form; each sized. */
struct dev_fields {
	char drv[64], chr[128], name[128];
};

static void device_fields(const char *dev, struct dev_fields *d)
{
	int (*get)(const char *, const char *, char *, size_t) =
		dev[0] == '{' ? json_get : kv_get;

	if (get(dev, "driver", d->drv, sizeof(d->drv)))
		d->drv[0] = 0;
	/* "-device virtserialport,...": the type is the driver. */
	if (dev[0] != '{' && kv_type_is(dev, "virtserialport"))
		snprintf(d->drv, sizeof(d->drv), "virtserialport");
	if (get(dev, "chardev", d->chr, sizeof(d->chr)))
		d->chr[0] = 0;
	if (get(dev, "name", d->name, sizeof(d->name)))
		d->name[0] = 0;
}

/* The virtserialport named channel: its chardev's id into d->chr. */
static int find_port(int argc, char *const *argv, const char *channel,
		     struct dev_fields *d, char *err, size_t errlen)
{
	for (int i = 0; i + 1 < argc; i++) {
		if (!is_opt(argv[i], "device"))
			continue;
		device_fields(argv[i + 1], d);
		if (strcmp(d->drv, "virtserialport") ||
		    strcmp(d->name, channel))
			continue;
		if (!d->chr[0]) {
			snprintf(err, errlen, "its port %s has no chardev",
				 channel);
			return -1;
		}
		return 0;
	}
	snprintf(err, errlen, "no virtserialport named %s", channel);
	return -1;
}

/*
 * The port's -chardev (option text c, id chr) is QEMU's server side of a
 * socket that is not abstract. 0, or -1 with err.
 */
static int check_socket(const char *c, const char *chr, const char *channel,
			char *err, size_t errlen)
{
	char v[4096];

	if (!kv_type_is(c, "socket")) {
		snprintf(err, errlen, "the chardev %s of %s is not a socket",
			 chr, channel);
		return -1;
	}
	if (kv_get(c, "server", v, sizeof(v)) ||
	    (strcmp(v, "on") && strcmp(v, "yes") && strcmp(v, "true"))) {
		snprintf(
			err, errlen,
			"the socket of %s is not QEMU's server side (server=on)",
			channel);
		return -1;
	}
	/* An abstract name has no owner or mode to check a connect against. */
	if (!kv_get(c, "abstract", v, sizeof(v)) && strcmp(v, "off") &&
	    strcmp(v, "no") && strcmp(v, "false")) {
		snprintf(err, errlen,
			 "the socket of %s is abstract (abstract=%s): not "
			 "served, it has no permissions to check",
			 channel, v);
		return -1;
	}
	return 0;
}

int jmd_vm_find_channel(int argc, char *const *argv, const char *channel,
			char *path, size_t pathlen, int *fd, char *err,
			size_t errlen)
{
	struct dev_fields d;
	char id[128], v[4096];
	int i;

	/* The port first: its chardev's id. */
	if (find_port(argc, argv, channel, &d, err, errlen))
		return -1;
	for (i = 0; i + 1 < argc; i++) {
		const char *c = argv[i + 1];

		if (!is_opt(argv[i], "chardev") ||
		    kv_get(c, "id", id, sizeof(id)) || strcmp(id, d.chr))
			continue;
		if (check_socket(c, d.chr, channel, err, errlen))
			return -1;
		if (!kv_get(c, "path", v, sizeof(v))) {
			/* Relative to QEMU's directory, not ours: not served. */
			if (v[0] != '/') {
				snprintf(
					err, errlen,
					"the socket path of %s is not absolute: "
					"'%.64s'",
					channel, v);
				return -1;
			}
			if (strlen(v) >= pathlen) {
				snprintf(err, errlen,
					 "the socket path of %s is too long",
					 channel);
				return -1;
			}
			snprintf(path, pathlen, "%s", v);
			*fd = -1;
			return 0;
		}
		if (!kv_get(c, "fd", v, sizeof(v))) {
			char *end;
			long n = strtol(v, &end, 10);

			if (*end || n < 0 || n > 65535) {
				snprintf(err, errlen,
					 "fd=%s of %s: not a descriptor", v,
					 channel);
				return -1;
			}
			path[0] = 0;
			*fd = (int)n;
			return 0;
		}
		snprintf(err, errlen,
			 "the socket of %s has neither path= nor fd=", channel);
		return -1;
	}
	snprintf(err, errlen, "no -chardev with id %s (the port %s's)", d.chr,
		 channel);
	return -1;
}

/* "Uid:" or "Gid:" with four equal ids; 0, or -1. */
static int same_ids(const char *status, const char *key, unsigned long *id)
{
	unsigned long v[4];
	const char *p = strstr(status, key);

	if (p && p != status && p[-1] != '\n')
		p = NULL;
	if (!p || sscanf(p + strlen(key), "%lu %lu %lu %lu", &v[0], &v[1],
			 &v[2], &v[3]) != 4)
		return -1;
	if (v[0] != v[1] || v[1] != v[2] || v[2] != v[3])
		return -1;
	*id = v[0];
	return 0;
}

int jmd_vm_owner(const char *status, uid_t *uid, gid_t *gid)
{
	unsigned long u, g;

	if (same_ids(status, "Uid:", &u) || same_ids(status, "Gid:", &g))
		return -1;
	*uid = (uid_t)u;
	*gid = (gid_t)g;
	return 0;
}

uint64_t jmd_vm_load_latch(uint64_t prev, uint64_t est)
{
	uint64_t d = est > prev ? est - prev : prev - est;

	return prev && d <= 1000000000ULL ? prev : est;
}

void jmd_vm_printable(char *out, size_t len, const char *src)
{
	size_t o = 0;

	for (; *src && len; src++) {
		unsigned char c = (unsigned char)*src;
		char e[8];
		size_t n;

		if (c >= 0x20 && c < 0x7f)
			n = (size_t)snprintf(e, sizeof(e), "%c", c);
		else if (c == '\n')
			n = (size_t)snprintf(e, sizeof(e), "\\n");
		else
			n = (size_t)snprintf(e, sizeof(e), "\\x%02x", c);
		if (o + n >= len)
			break;
		memcpy(out + o, e, n);
		o += n;
	}
	if (len)
		out[o] = 0;
}
