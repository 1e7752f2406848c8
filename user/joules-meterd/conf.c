// SPDX-License-Identifier: GPL-2.0
/*
 * The configuration file (joules-meterd(8)): top-level keys, then one
 * "[TYPE NAME]" section per input whose lines go to its backend. It holds
 * credentials, so its permissions are checked before a byte is read.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jmd.h"
#include "parse.h"

#define CONF_LINE_MAX 1024

const char *jmd_kind_name(enum jmd_kind k)
{
	return k == JMD_POWER ? "power" : k == JMD_ENERGY ? "energy" : "?";
}

int jmd_parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "1", "yes", "true", "on" };
	static const char *const no[] = { "0", "no", "false", "off" };

	for (size_t i = 0; i < 4; i++) {
		if (!strcmp(s, yes[i])) {
			*out = true;
			return 0;
		}
		if (!strcmp(s, no[i])) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

int jmd_conf_check_perms(int fd, const char *name, char *err, size_t errlen)
{
	struct stat st;

	if (fstat(fd, &st)) {
		snprintf(err, errlen, "%s: %s", name, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", name);
		return -1;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		snprintf(
			err, errlen,
			"%s: owned by uid %u, neither root nor the user running "
			"joules-meterd: it holds credentials (chown root %s)",
			name, (unsigned int)st.st_uid, name);
		return -1;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(err, errlen,
			 "%s: writable by %s: it holds credentials "
			 "(chmod 0600 %s)",
			 name, st.st_mode & S_IWOTH ? "others" : "its group",
			 name);
		return -1;
	}
	if (st.st_mode & S_IROTH) {
		snprintf(err, errlen,
			 "%s: readable by others: it holds credentials "
			 "(chmod 0600 %s)",
			 name, name);
		return -1;
	}
	return 0;
}

/* Blanks off both ends, in place. */
static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

/* Seconds in [min, max] as ns. */
static int conf_secs(const char *k, const char *v, double min, double max,
		     uint64_t *ns, char *why, size_t whylen)
{
	const char *w = NULL;
	double d;

	if (parse_double(v, &d, &w)) {
		snprintf(why, whylen, "%s '%s': %s", k, v,
			 w ? w : "not a number");
		return -1;
	}
	if (d < min || d > max) {
		snprintf(why, whylen, "%s '%s': want %g to %g seconds", k, v,
			 min, max);
		return -1;
	}
	*ns = (uint64_t)llround(d * 1e9);
	return 0;
}

/* A per-read timeout: 0.01 .. 60 s, as ms. */
static int conf_timeout(const char *v, unsigned int *ms, char *why,
			size_t whylen)
{
	uint64_t ns;

	if (conf_secs("timeout", v, 0.01, 60, &ns, why, whylen))
		return -1;
	*ms = (unsigned int)(ns / 1000000);
	return 0;
}

static int conf_top(struct jmd_conf *c, const char *k, const char *v, char *why,
		    size_t whylen)
{
	if (!strcmp(k, "name")) {
		if (!*v || strlen(v) > 31) {
			snprintf(why, whylen,
				 "name: want 1 to 31 bytes, not %zu",
				 strlen(v));
			return -1;
		}
		for (const char *p = v; *p; p++)
			if (!isgraph((unsigned char)*p)) {
				snprintf(
					why, whylen,
					"name '%s': blanks or control characters",
					v);
				return -1;
			}
		snprintf(c->name, sizeof(c->name), "%s", v);
		return 0;
	}
	if (!strcmp(k, "interval"))
		return conf_secs(k, v, 0.1, 10, &c->interval_ns, why, whylen);
	if (!strcmp(k, "timeout"))
		return conf_timeout(v, &c->timeout_ms, why, whylen);
	if (!strcmp(k, "max_power")) {
		const char *w = NULL;

		if (parse_double(v, &c->max_power, &w) || !(c->max_power > 0)) {
			snprintf(
				why, whylen,
				"max_power '%s': want a positive number of watts",
				v);
			return -1;
		}
		return 0;
	}
	if (!strcmp(k, "silent_after"))
		return conf_secs(k, v, 0.1, 86400, &c->silent_after_ns, why,
				 whylen);
	snprintf(why, whylen, "unknown key '%s'", k);
	return -1;
}

/* "[TYPE NAME]" (line is the text between the brackets). */
static int conf_section(struct jmd_conf *c, char *line, char *why,
			size_t whylen)
{
	char *type = trim(line), *name = type;
	struct jmd_input *in;
	const struct jmd_backend *be;

	while (*name && !isspace((unsigned char)*name))
		name++;
	if (*name)
		*name++ = 0;
	name = trim(name);
	if (!*type || !*name) {
		snprintf(
			why, whylen,
			"section: want [TYPE NAME] (TYPE snmp, ipmi or command)");
		return -1;
	}
	if (strlen(name) >= sizeof(in->name) || strpbrk(name, " \t")) {
		snprintf(why, whylen,
			 "section name '%s': one word of up to %zu bytes", name,
			 sizeof(in->name) - 1);
		return -1;
	}
	be = jmd_backend_find(type, why, whylen);
	if (!be)
		return -1;
	if (c->nin == JMD_MAX_INPUTS) {
		snprintf(why, whylen, "more than %d inputs", JMD_MAX_INPUTS);
		return -1;
	}
	for (size_t i = 0; i < c->nin; i++)
		if (!strcmp(c->in[i].name, name)) {
			snprintf(why, whylen, "a second input named '%s'",
				 name);
			return -1;
		}
	in = &c->in[c->nin++];
	memset(in, 0, sizeof(*in));
	in->be = be;
	snprintf(in->name, sizeof(in->name), "%s", name);
	in->timeout_ms = 0; /* 0: the top-level default, set at the end */
	return 0;
}

/* Open the last section's input (its lines are all read). */
static int conf_open(struct jmd_conf *c, char *why, size_t whylen)
{
	struct jmd_input *in = &c->in[c->nin - 1];
	char e[200] = "";

	if (!in->timeout_ms)
		in->timeout_ms = c->timeout_ms;
	if (in->be->open(in, e, sizeof(e))) {
		snprintf(why, whylen, "[%s %s]: %s", in->be->type, in->name,
			 e[0] ? e : "cannot set up");
		return -1;
	}
	c->opened[c->nin - 1] = true;
	return 0;
}

/*
 * A "[" line: cut at its ']', which only blanks may follow. 0, or -1 with
 * why.
 */
static int conf_header_end(char *line, char *why, size_t whylen)
{
	char *end = strchr(line, ']');

	if (!end || trim(end + 1)[0]) {
		snprintf(why, whylen,
			 "section header without its ']' (or text after it)");
		return -1;
	}
	*end = 0;
	return 0;
}

/*
 * A "key = value" line: a top-level key before the first section, then
 * the input's timeout or a key of its backend. 0, or -1 with why.
 */
static int conf_keyval(struct jmd_conf *c, char *line, char *why, size_t whylen)
{
	char *eq = strchr(line, '='), *k, *v;
	struct jmd_input *in;
	char e[200] = "";

	if (!eq) {
		snprintf(why, whylen, "want key = value, not '%s'", line);
		return -1;
	}
	*eq = 0;
	k = trim(line);
	v = trim(eq + 1);
	if (!*k) {
		snprintf(why, whylen, "a value without its key");
		return -1;
	}
	if (!*v) {
		snprintf(why, whylen, "%s: empty value", k);
		return -1;
	}
	if (!c->nin)
		return conf_top(c, k, v, why, whylen);
	in = &c->in[c->nin - 1];
	/* The core's own key in a section: the input's timeout. */
	if (!strcmp(k, "timeout"))
		return conf_timeout(v, &in->timeout_ms, why, whylen);
	if (in->be->set(in, k, v, e, sizeof(e))) {
		snprintf(why, whylen, "%s", e[0] ? e : "refused");
		return -1;
	}
	return 0;
}

void jmd_conf_free(struct jmd_conf *c)
{
	for (size_t i = 0; i < c->nin; i++) {
		if (c->in[i].be && c->in[i].be->close &&
		    (c->opened[i] || c->in[i].priv))
			c->in[i].be->close(&c->in[i]);
		c->opened[i] = false;
	}
	c->nin = 0;
}

int jmd_conf_parse(FILE *fp, const char *name, struct jmd_conf *c, char *err,
		   size_t errlen)
{
	char buf[CONF_LINE_MAX + 2], why[256];
	unsigned long lineno = 0, sect_line = 0;

	memset(c, 0, sizeof(*c));
	c->interval_ns = 1000000000ull;
	c->timeout_ms = JMD_DEFAULT_TIMEOUT_MS;
	c->max_power = JMD_DEFAULT_MAX_POWER;
	c->silent_after_ns = 30000000000ull;

	while (fgets(buf, sizeof(buf), fp)) {
		char *line;

		lineno++;
		why[0] = 0;
		if (!strchr(buf, '\n') && !feof(fp)) {
			snprintf(why, sizeof(why), "line longer than %d bytes",
				 CONF_LINE_MAX);
			goto bad;
		}
		line = trim(buf);
		if (!*line || *line == '#' || *line == ';')
			continue;
		if (*line == '[') {
			if (conf_header_end(line, why, sizeof(why)))
				goto bad;
			if (c->nin && conf_open(c, why, sizeof(why))) {
				lineno = sect_line;
				goto bad;
			}
			if (conf_section(c, line + 1, why, sizeof(why)))
				goto bad;
			sect_line = lineno;
			continue;
		}
		if (conf_keyval(c, line, why, sizeof(why)))
			goto bad;
	}
	if (ferror(fp)) {
		snprintf(err, errlen, "%s: read error: %s", name,
			 strerror(errno));
		jmd_conf_free(c);
		return -1;
	}
	if (c->nin && conf_open(c, why, sizeof(why))) {
		lineno = sect_line;
		goto bad;
	}
	if (!c->name[0]) {
		snprintf(err, errlen,
			 "%s: no 'name' (the meter's name for the module)",
			 name);
		jmd_conf_free(c);
		return -1;
	}
	if (!c->nin) {
		snprintf(
			err, errlen,
			"%s: no input ([snmp NAME], [ipmi NAME] or [command NAME])",
			name);
		jmd_conf_free(c);
		return -1;
	}
	return 0;
bad:
	snprintf(err, errlen, "%s:%lu: %s", name, lineno, why);
	jmd_conf_free(c);
	return -1;
}

int jmd_conf_load(const char *path, struct jmd_conf *c, char *err,
		  size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	FILE *fp;
	int r;

	if (fd < 0) {
		snprintf(err, errlen, "%s: %s%s", path, strerror(errno),
			 errno == ELOOP ? " (a symbolic link: refused)" : "");
		return -1;
	}
	if (jmd_conf_check_perms(fd, path, err, errlen)) {
		close(fd);
		return -1;
	}
	fp = fdopen(fd, "r");
	if (!fp) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	r = jmd_conf_parse(fp, path, c, err, errlen);
	fclose(fp);
	return r;
}
