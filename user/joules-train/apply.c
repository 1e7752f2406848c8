// SPDX-License-Identifier: GPL-2.0
/*
 * Installing a trained set in the running module: one write of the whole
 * set to model/coefficients, or of a banded model to model/bands (the
 * module swaps it in atomically and bumps model/generation), then a check that the generation moved, so a write
 * that was silently ignored cannot pass for success.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "train.h"

static int read_gen(const char *path, uint64_t *gen, char *err, size_t errlen)
{
	char buf[64];
	const char *why;
	ssize_t n;
	int fd, e;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		snprintf(err, errlen, "%s: %s%s", path, strerror(e),
			 e == ENOENT ? " (is the joules module loaded?)" : "");
		return -e;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	e = errno;
	close(fd);
	if (n < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	if (parse_u64(buf, gen, &why)) {
		snprintf(err, errlen, "%s: '%s': %s", path, buf, why);
		return -EINVAL;
	}
	return 0;
}

/*
 * Write text to DIR/model/ATTR in one write(2) and check that the
 * generation moved: the one path by which every model is installed.
 */
static int apply_text(const char *dir, const char *attr, const char *line,
		      int len, char *err, size_t errlen)
{
	char coef_path[4096], gen_path[4096];
	uint64_t before, after;
	struct stat st;
	ssize_t n;
	int fd, ret, e;

	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen,
			 "%s: not there: the joules module is not loaded", dir);
		return -ENOENT;
	}
	snprintf(coef_path, sizeof(coef_path), "%s/model/%s", dir, attr);
	snprintf(gen_path, sizeof(gen_path), "%s/model/generation", dir);
	ret = read_gen(gen_path, &before, err, errlen);
	if (ret)
		return ret;
	/* O_TRUNC as a shell's "echo >" would; sysfs ignores it. */
	fd = open(coef_path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		snprintf(
			err, errlen, "%s: %s%s", coef_path, strerror(e),
			e == EACCES || e == EPERM ?
				" (setting coefficients needs root)" :
			e == ENOENT && !strcmp(attr, "bands") ?
				" (a module without frequency bands? wrong --sysfs?)" :
			e == ENOENT ?
				" (module without a model? wrong --sysfs?)" :
				"");
		return -e;
	}
	/* One write(2): the module parses and swaps the whole set at once. */
	n = write(fd, line, (size_t)len);
	e = errno;
	if (close(fd) && n >= 0) {
		n = -1;
		e = errno;
	}
	if (n < 0) {
		snprintf(
			err, errlen, "%s: %s%s", coef_path, strerror(e),
			e == EINVAL ?
				" (the module rejected the set; the old one stays)" :
			e == EACCES || e == EPERM ?
				" (setting coefficients needs root)" :
				"");
		return -e;
	}
	if (n != len) {
		snprintf(err, errlen, "%s: short write (%zd of %d bytes)",
			 coef_path, n, len);
		return -EIO;
	}
	ret = read_gen(gen_path, &after, err, errlen);
	if (ret)
		return ret;
	if (after == before) {
		snprintf(
			err, errlen,
			"%s stayed at %llu: the module did not take the new set",
			gen_path, (unsigned long long)before);
		return -EAGAIN;
	}
	return 0;
}

int jt_apply(const char *dir, const struct jl_coef *c, char *err, size_t errlen)
{
	char line[JL_COEF_TEXT_MAX];
	int len = jl_coef_format(c, line, sizeof(line));

	if (len < 0) {
		snprintf(err, errlen, "coefficients out of range");
		return -ERANGE;
	}
	return apply_text(dir, "coefficients", line, len, err, errlen);
}

int jt_apply_bands(const char *dir, const struct jl_bands *b, char *err,
		   size_t errlen)
{
	char text[JL_BANDS_TEXT_MAX];
	int len;

	/* One band is the single-set model: keep the attribute every module has. */
	if (b->nr == 1)
		return jt_apply(dir, &b->set[0], err, errlen);
	len = jl_bands_format(b, text, sizeof(text));
	if (len < 0) {
		snprintf(err, errlen, "banded model out of range");
		return -ERANGE;
	}
	return apply_text(dir, "bands", text, len, err, errlen);
}

/* Read DIR/model/NAME whole (a sysfs file is one page at most). */
static int read_model_file(const char *dir, const char *name, char *buf,
			   size_t size)
{
	char path[4096];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/model/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n < 0)
		return (int)n;
	buf[n] = '\0';
	return (int)n;
}

int jt_read_model(const char *dir, struct jl_bands *b, char *err, size_t errlen)
{
	char gen_path[4096], text[4096];
	struct jl_coef c;
	uint64_t gen;
	int n, ret;

	snprintf(gen_path, sizeof(gen_path), "%s/model/generation", dir);
	ret = read_gen(gen_path, &gen, err, errlen);
	if (ret)
		return ret;
	if (!gen)
		return 0; /* no model set: nothing in force */
	n = read_model_file(dir, "bands", text, sizeof(text));
	if (n >= 0 && !jl_bands_parse(text, (size_t)n, b))
		return 1;
	/* A module from before frequency bands has only the one set. */
	n = read_model_file(dir, "coefficients", text, sizeof(text));
	if (n >= 0 && !jl_coef_parse(text, (size_t)n, &c)) {
		jl_bands_single(b, &c);
		return 1;
	}
	snprintf(err, errlen,
		 "%s/model: the model in force cannot be read (%s)", dir,
		 n < 0 ? strerror(-n) : "it does not parse");
	return n < 0 ? n : -EINVAL;
}
