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
 * values doubled (",,"). 0 and the value in out, or -1. A bare "key" (the
 * old "server" for "server=on") gives "on".
 */
static int kv_get(const char *opt, const char *key, char *out, size_t outlen)
{
	size_t kl = strlen(key);
	const char *p = opt;

	/* The first field is the type (or a key=value of its own). */
	while (p && *p) {
		const char *f = p;
		size_t o = 0;

		/* The field's end: a single comma. */
		while (*p && !(*p == ',' && p[1] != ',')) {
			if (*p == ',')
				p++; /* ",," */
			p++;
		}
		if (!strncmp(f, key, kl) && (f[kl] == '=' || f + kl == p)) {
			const char *v = f[kl] == '=' ? f + kl + 1 : "on";
			const char *e = f[kl] == '=' ? p : v + 2;

			while (v < e && o + 1 < outlen) {
				if (*v == ',' && v + 1 < e && v[1] == ',')
					v++;
				out[o++] = *v++;
			}
			out[o] = 0;
			return v < e ? -1 : 0;
		}
		p = *p ? p + 1 : NULL;
	}
	return -1;
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

/* A -device's driver, chardev and name, in either form. */
static int device_fields(const char *dev, char *drv, char *chr, char *name,
			 size_t len)
{
	if (dev[0] == '{') {
		if (json_get(dev, "driver", drv, len))
			return -1;
		if (json_get(dev, "chardev", chr, len))
			chr[0] = 0;
		if (json_get(dev, "name", name, len))
			name[0] = 0;
		return 0;
	}
	if (kv_type_is(dev, "virtserialport"))
		snprintf(drv, len, "virtserialport");
	else if (kv_get(dev, "driver", drv, len))
		drv[0] = 0;
	if (kv_get(dev, "chardev", chr, len))
		chr[0] = 0;
	if (kv_get(dev, "name", name, len))
		name[0] = 0;
	return 0;
}

int jmd_vm_find_channel(int argc, char *const *argv, const char *channel,
			char *path, size_t pathlen, int *fd, char *err,
			size_t errlen)
{
	char drv[64], chr[128] = "", name[128], id[128], v[4096];
	int i;

	/* The port first: its chardev's id. */
	for (i = 0; i + 1 < argc; i++) {
		char c[128];

		if (!is_opt(argv[i], "device"))
			continue;
		if (device_fields(argv[i + 1], drv, c, name, sizeof(c)) ||
		    strcmp(drv, "virtserialport") || strcmp(name, channel))
			continue;
		if (!c[0]) {
			snprintf(err, errlen, "its port %s has no chardev",
				 channel);
			return -1;
		}
		snprintf(chr, sizeof(chr), "%s", c);
		break;
	}
	if (!chr[0]) {
		snprintf(err, errlen, "no virtserialport named %s", channel);
		return -1;
	}
	for (i = 0; i + 1 < argc; i++) {
		const char *c = argv[i + 1];

		if (!is_opt(argv[i], "chardev") ||
		    kv_get(c, "id", id, sizeof(id)) || strcmp(id, chr))
			continue;
		if (!kv_type_is(c, "socket")) {
			snprintf(err, errlen,
				 "the chardev %s of %s is not a socket", chr,
				 channel);
			return -1;
		}
		if (kv_get(c, "server", v, sizeof(v)) ||
		    (strcmp(v, "on") && strcmp(v, "yes") &&
		     strcmp(v, "true"))) {
			snprintf(
				err, errlen,
				"the socket of %s is not QEMU's server side (server=on)",
				channel);
			return -1;
		}
		if (!kv_get(c, "path", v, sizeof(v))) {
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
	snprintf(err, errlen, "no -chardev with id %s (the port %s's)", chr,
		 channel);
	return -1;
}

int jmd_vm_unix_path(const char *table, unsigned long ino, char *path,
		     size_t pathlen)
{
	const char *l = table;

	/* "Num: RefCount Protocol Flags Type St Inode [Path]" */
	for (; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		unsigned long in;
		int off = 0;
		size_t n;

		if (sscanf(l, "%*s %*s %*s %*s %*s %*s %lu%n", &in, &off) !=
			    1 ||
		    in != ino)
			continue;
		l += off;
		while (*l == ' ')
			l++;
		n = strcspn(l, "\n");
		if (!n || n >= pathlen)
			return -1;
		memcpy(path, l, n);
		path[n] = 0;
		return 0;
	}
	return -1;
}
