// SPDX-License-Identifier: GPL-2.0
/*
 * joulesctl set: change some model coefficients. The whole set is read,
 * the named keys replaced and the set written back in one write(2) to
 * model/coefficients, so the module swaps all nine values at once (one new
 * generation) instead of passing through a mixed set key by key.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"
#include "parse.h"
#include "joulesctl.h"

static void set_usage(FILE *fp)
{
	fprintf(fp,
		"Usage: joulesctl set KEY=VALUE...\n\n"
		"Replace the named model coefficients and install the new set atomically\n"
		"(one write of %s/model/coefficients); prints the\n"
		"new set and its generation. Needs root. KEY is one of:\n",
		getenv("JOULES_SYSFS") ? getenv("JOULES_SYSFS") :
					 "/sys/kernel/joules");
	for (int i = 0; i < JL_NR_COEF; i++)
		fprintf(fp, "  %s\n", jl_coef_names[i]);
	fprintf(fp,
		"VALUE is an unsigned integer up to %llu.\n\n"
		"  -h, --help     this help\n",
		(unsigned long long)JL_COEF_MAX);
}

static const char *sysfs_root(void)
{
	const char *r = getenv("JOULES_SYSFS");

	return r && *r ? r : "/sys/kernel/joules";
}

/* Read a small sysfs file; returns its length or -errno. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		n = -errno;
	else
		buf[n] = 0;
	close(fd);
	return n;
}

static int coef_index(const char *key, size_t len)
{
	for (int i = 0; i < JL_NR_COEF; i++)
		if (strlen(jl_coef_names[i]) == len &&
		    !strncmp(key, jl_coef_names[i], len))
			return i;
	return -1;
}

/* The KEY=VALUE operands into given[] and val[]; CLI_OK or a usage error. */
static int set_parse_args(int argc, char **argv, bool *given, uint64_t *val)
{
	for (int a = optind; a < argc; a++) {
		const char *eq = strchr(argv[a], '='), *why;
		int i;

		if (!eq)
			return cli_usage("set", "'%s' is not KEY=VALUE",
					 argv[a]);
		i = coef_index(argv[a], (size_t)(eq - argv[a]));
		if (i < 0)
			return cli_usage("set", "unknown coefficient '%.*s'",
					 (int)(eq - argv[a]), argv[a]);
		if (given[i])
			return cli_usage("set", "%s given twice",
					 jl_coef_names[i]);
		if (parse_u64(eq + 1, &val[i], &why))
			return cli_usage("set", "%s: bad value '%s': %s",
					 jl_coef_names[i], eq + 1, why);
		if (val[i] > JL_COEF_MAX)
			return cli_usage("set",
					 "%s: %s is above the maximum %llu",
					 jl_coef_names[i], eq + 1,
					 (unsigned long long)JL_COEF_MAX);
		given[i] = true;
	}
	return CLI_OK;
}

/*
 * A model of several frequency bands has no one set to edit, and
 * writing `coefficients` would silently make it a one-band model.
 */
static int set_check_bands(void)
{
	char path[512], bbuf[JL_BANDS_TEXT_MAX + 1];
	struct jl_bands bands;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/model/bands", sysfs_root());
	n = read_small(path, bbuf, sizeof(bbuf));
	if (n > 0 && !jl_bands_parse(bbuf, (jl_size)n, &bands) &&
	    bands.nr > 1) {
		cli_err("the model has %u frequency bands: one coefficient is ambiguous; "
			"write %s whole (joules-train --apply)",
			bands.nr, path);
		return CLI_FAIL;
	}
	return CLI_OK;
}

/* The set in force, from path; CLI_OK or CLI_FAIL, said. */
static int set_read_current(const char *path, char *buf, size_t size,
			    struct jl_coef *coef)
{
	ssize_t n = read_small(path, buf, size);

	if (n < 0) {
		if (n == -ENOENT)
			cli_err("joules module not loaded (no %s)", path);
		else
			cli_err("%s: %s", path, strerror((int)-n));
		return CLI_FAIL;
	}
	if (jl_coef_parse(buf, (jl_size)n, coef)) {
		cli_err("%s: cannot parse the current set '%s'", path, buf);
		return CLI_FAIL;
	}
	return CLI_OK;
}

/* One write: the module parses and installs the nine values together. */
static int set_write(const char *path, const char *buf, ssize_t n)
{
	int fd = open(path, O_WRONLY | O_TRUNC);

	if (fd < 0) {
		if (errno == EACCES || errno == EPERM)
			cli_err("%s: permission denied: changing coefficients needs root",
				path);
		else
			cli_err("%s: %s", path, strerror(errno));
		return CLI_FAIL;
	}
	if (write(fd, buf, (size_t)n) != n) {
		int e = errno;

		close(fd);
		if (e == EINVAL)
			cli_err("%s: the module rejected the new set: %s", path,
				strerror(e));
		else if (e == EACCES || e == EPERM)
			cli_err("%s: permission denied: changing coefficients needs root",
				path);
		else
			cli_err("%s: %s", path, strerror(e));
		return CLI_FAIL;
	}
	if (close(fd)) {
		cli_err("%s: %s", path, strerror(errno));
		return CLI_FAIL;
	}
	return CLI_OK;
}

/* The set installed, and the generation the module gave it. */
static int set_print(const struct jl_coef *coef)
{
	char path[512], gen[64];
	ssize_t n;

	printf("coefficients:");
	for (int i = 0; i < JL_NR_COEF; i++)
		printf(" %s=%" PRIu64, jl_coef_names[i],
		       (uint64_t)jl_coef_get(coef, (unsigned int)i));
	putchar('\n');
	snprintf(path, sizeof(path), "%s/model/generation", sysfs_root());
	n = read_small(path, gen, sizeof(gen));
	if (n > 0) {
		gen[strcspn(gen, "\n")] = 0;
		printf("generation: %s\n", gen);
	} else {
		cli_err("%s: %s", path, n < 0 ? strerror((int)-n) : "empty");
		return CLI_FAIL;
	}
	return fflush(stdout) ? CLI_FAIL : CLI_OK;
}

int cmd_set(int argc, char **argv)
{
	/* Options only before the first KEY=VALUE. */
	static const struct cli_cmdline cl = {
		.cmd = "set",
		.help = set_usage,
		.min_args = 1,
		.max_args = -1,
		.operand = "KEY=VALUE",
		.in_order = true,
	};
	char path[512], buf[JL_COEF_TEXT_MAX + 1];
	bool given[JL_NR_COEF] = { false };
	uint64_t val[JL_NR_COEF];
	struct jl_coef coef;
	ssize_t n;
	int rc;

	rc = cli_getopt(&cl, argc, argv);
	if (rc != CLI_GO)
		return rc;
	rc = set_parse_args(argc, argv, given, val);
	if (rc)
		return rc;
	rc = set_check_bands();
	if (rc)
		return rc;
	snprintf(path, sizeof(path), "%s/model/coefficients", sysfs_root());
	rc = set_read_current(path, buf, sizeof(buf), &coef);
	if (rc)
		return rc;
	for (int i = 0; i < JL_NR_COEF; i++)
		if (given[i])
			jl_coef_set(&coef, (unsigned int)i, val[i]);
	n = jl_coef_format(&coef, buf, sizeof(buf));
	if (n < 0) {
		cli_err("cannot format the new set");
		return CLI_FAIL;
	}
	rc = set_write(path, buf, n);
	if (rc)
		return rc;
	return set_print(&coef);
}
