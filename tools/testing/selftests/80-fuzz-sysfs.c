// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz every writable sysfs attribute of joules with random and boundary
 * inputs. An oracle written here, independently of the module's parser,
 * says which inputs are valid: valid ones must be accepted and read back,
 * invalid ones must fail with EINVAL and leave the value (and the model
 * generation) unchanged. The runner checks dmesg for oops/WARN afterwards.
 */
#include <stdbool.h>
#include <stdint.h>

#include "selftest.h"

#define MAXV 1000000000000ULL /* JL_COEF_MAX */
#define MAX_MHZ 100000ULL /* JL_MHZ_MAX */
#define MAX_BANDS 4 /* JL_MAX_BANDS */
#define NR_COEF 9

enum kind { K_UINT, K_WORD, K_FIELDS, K_BANDS };

struct attr {
	const char *path;
	enum kind kind;
	unsigned long long lo, hi; /* K_UINT bounds; K_FIELDS per-field max */
	bool zero_ok; /* K_UINT: 0 taken too, below lo */
	unsigned int fields; /* K_FIELDS count */
	unsigned int alt_fields; /* another accepted count (0: none) */
	bool comments; /* K_FIELDS: '#' lines allowed first */
	const char *const *words; /* K_WORD */
	unsigned long tried, good, bad, wrong;
};

static const char *const source_words[] = { "auto", "rapl", "model", NULL };

static struct attr attrs[] = {
	{ .path = JOULES_SYSFS "/interval_ms",
	  .kind = K_UINT,
	  .lo = 10,
	  .hi = 60000 },
	{ .path = JOULES_SYSFS "/idle_split",
	  .kind = K_UINT,
	  .lo = 0,
	  .hi = 1 },
	{ .path = JOULES_SYSFS "/gamma_milli",
	  .kind = K_UINT,
	  .lo = 1,
	  .hi = 1000 },
	{ .path = JOULES_SYSFS "/delta_milli",
	  .kind = K_UINT,
	  .lo = 1,
	  .hi = 1000 },
	/* 100..3600000, or 0 (off). */
	{ .path = JOULES_SYSFS "/unpriv_interval_ms",
	  .kind = K_UINT,
	  .lo = 100,
	  .hi = 3600000,
	  .zero_ok = true },
	{ .path = JOULES_SYSFS "/source",
	  .kind = K_WORD,
	  .words = source_words },
	/* "pkg core dram psys wall", or the four of the first layout ("auto": 31-static-power). */
	{ .path = JOULES_SYSFS "/meter_idle_uw",
	  .kind = K_FIELDS,
	  .hi = MAXV,
	  .fields = 5,
	  .alt_fields = 4 },
	{ .path = JOULES_SYSFS "/wallmeter/timeout_ms",
	  .kind = K_UINT,
	  .lo = 100,
	  .hi = 600000 },
	{ .path = JOULES_SYSFS "/wallmeter/max_power_w",
	  .kind = K_UINT,
	  .lo = 1,
	  .hi = 1000000 },
	/* Nine fields, or the six of the first layout. */
	{ .path = JOULES_SYSFS "/model/coefficients",
	  .kind = K_FIELDS,
	  .hi = MAXV,
	  .fields = 9,
	  .alt_fields = 6,
	  .comments = true },
	{ .path = JOULES_SYSFS "/model/cpu_time_uw",
	  .kind = K_UINT,
	  .hi = MAXV },
	{ .path = JOULES_SYSFS "/model/cycles_pj", .kind = K_UINT, .hi = MAXV },
	{ .path = JOULES_SYSFS "/model/instructions_pj",
	  .kind = K_UINT,
	  .hi = MAXV },
	{ .path = JOULES_SYSFS "/model/cache_miss_pj",
	  .kind = K_UINT,
	  .hi = MAXV },
	{ .path = JOULES_SYSFS "/model/disk_byte_pj",
	  .kind = K_UINT,
	  .hi = MAXV },
	{ .path = JOULES_SYSFS "/model/net_tx_byte_pj",
	  .kind = K_UINT,
	  .hi = MAXV },
	{ .path = JOULES_SYSFS "/model/net_rx_byte_pj",
	  .kind = K_UINT,
	  .hi = MAXV },
	{ .path = JOULES_SYSFS "/model/pagecache_byte_pj",
	  .kind = K_UINT,
	  .hi = MAXV },
	{ .path = JOULES_SYSFS "/model/idle_uw", .kind = K_UINT, .hi = MAXV },
	/* Last: its value is several lines (see snapshot()). */
	{ .path = JOULES_SYSFS "/model/bands", .kind = K_BANDS, .hi = MAXV },
};
#define NR_ATTRS (sizeof(attrs) / sizeof(attrs[0]))
/* The settings, through model/coefficients: what is put back at the end. */
#define NR_RESTORE 10

/* Does the node have a frequency source (else several bands are refused)? */
static bool have_freq;

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* ---- the oracle ---- */

/* Decimal digits only, value <= max; no sign, no blanks. */
static bool valid_uint(const char *s, size_t n, unsigned long long max,
		       unsigned long long *out)
{
	unsigned long long v = 0;
	size_t i;

	if (!n)
		return false;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		if ((unsigned long long)(s[i] - '0') > max ||
		    v > (max - (s[i] - '0')) / 10)
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return true;
}

static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

/*
 * model/bands: '#' lines first, then 1..MAX_BANDS lines of ten blank-
 * separated tokens: an upper edge in MHz (1..MAX_MHZ, ascending) or, on
 * the last line only, "max"; then NR_COEF coefficients. Every line but the
 * last ends in a newline; the last may. *nr: the number of bands.
 */
static bool oracle_bands(const char *buf, size_t len, unsigned int *nr)
{
	unsigned long long edge, prev = 0, v;
	size_t i = 0;
	unsigned int n = 0;

	while (i < len && buf[i] == '#') {
		const char *nl = memchr(buf + i, '\n', len - i);

		if (!nl)
			return false;
		i = nl - buf + 1;
	}
	for (;;) {
		const char *nl = memchr(buf + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - buf) : len;
		unsigned int t = 0;
		bool max = false;

		if (n == MAX_BANDS)
			return false;
		while (i < end) {
			size_t s;

			while (i < end && blank(buf[i]))
				i++;
			if (i == end)
				break;
			s = i;
			while (i < end && !blank(buf[i]))
				i++;
			if (t == 0 && i - s == 3 && !memcmp(buf + s, "max", 3))
				max = true;
			else if (t == 0 &&
				 !(valid_uint(buf + s, i - s, MAX_MHZ, &edge) &&
				   edge > prev))
				return false;
			else if (t > 0 && !valid_uint(buf + s, i - s, MAXV, &v))
				return false;
			if (t == 0 && !max)
				prev = edge;
			t++;
		}
		if (t != NR_COEF + 1)
			return false;
		n++;
		i = end + (nl ? 1 : 0);
		if (max) {
			*nr = n;
			return i == len;
		}
		if (!nl)
			return false; /* no "max" line */
	}
}

/* What a write must give: 0, or the error it must fail with. */
static int expected(const struct attr *a, const char *buf, size_t len);

static bool oracle(const struct attr *a, const char *buf, size_t len)
{
	unsigned long long v;
	size_t n = len, i = 0;
	unsigned int f = 0;

	if (memchr(buf, 0, len))
		return false;
	if (a->kind == K_FIELDS && a->comments) {
		while (i < n && buf[i] == '#') {
			const char *nl = memchr(buf + i, '\n', n - i);

			if (!nl)
				return false;
			i = nl - buf + 1;
		}
	}
	if (n > i && buf[n - 1] == '\n')
		n--;
	if (memchr(buf + i, '\n', n - i) || memchr(buf + i, '\r', n - i))
		return false;
	switch (a->kind) {
	case K_BANDS:
		return false; /* expected() */
	case K_UINT:
		return valid_uint(buf, n, a->hi, &v) &&
		       (v >= a->lo || (a->zero_ok && v == 0));
	case K_WORD:
		for (f = 0; a->words[f]; f++)
			if (strlen(a->words[f]) == n &&
			    !memcmp(buf, a->words[f], n))
				return true;
		return false;
	case K_FIELDS:
		for (;;) {
			size_t s;

			while (i < n && blank(buf[i]))
				i++;
			if (i == n)
				break;
			s = i;
			while (i < n && !blank(buf[i]))
				i++;
			if (!valid_uint(buf + s, i - s, a->hi, &v))
				return false;
			f++;
		}
		return f == a->fields || (a->alt_fields && f == a->alt_fields);
	}
	return false;
}

static int expected(const struct attr *a, const char *buf, size_t len)
{
	unsigned int nr;

	if (a->kind != K_BANDS)
		return oracle(a, buf, len) ? 0 : -EINVAL;
	if (memchr(buf, 0, len) || !oracle_bands(buf, len, &nr))
		return -EINVAL;
	/* Several bands need a frequency to choose by. */
	return nr > 1 && !have_freq ? -EOPNOTSUPP : 0;
}

/* ---- input generators ---- */

static size_t gen_number(char *b, size_t cap)
{
	static const char *const edge[] = {
		"0",
		"1",
		"9",
		"10",
		"1000",
		"1001",
		"60000",
		"60001",
		"999999999999",
		"1000000000000",
		"1000000000001",
		"4294967295",
		"4294967296",
		"18446744073709551615",
		"18446744073709551616",
		"99999999999999999999999",
		"007",
		"-1",
		"+1",
		"0x10",
		"1e3",
		"1.5",
		" 5",
		"5 ",
		"",
	};
	size_t n;

	if (rnd() % 3 == 0) {
		const char *e = edge[rnd() % (sizeof(edge) / sizeof(edge[0]))];

		n = strlen(e);
		memcpy(b, e, n);
		return n;
	}
	n = 1 + rnd() % 22;
	if (n > cap)
		n = cap;
	for (size_t i = 0; i < n; i++)
		b[i] = '0' + rnd() % 10;
	if (n > 1 && rnd() % 2)
		b[0] = '1' + rnd() % 9;
	return n;
}

static size_t gen_valid_like(const struct attr *a, char *b, size_t cap)
{
	size_t n = 0;
	unsigned int f, fields;

	switch (a->kind) {
	case K_UINT:
		if (rnd() % 2) {
			unsigned long long span = a->hi - a->lo + 1;

			n = snprintf(b, cap, "%llu", a->lo + rnd() % span);
		} else {
			n = gen_number(b, cap);
		}
		break;
	case K_WORD:
		n = snprintf(b, cap, "%s", a->words[rnd() % 3]);
		break;
	case K_BANDS: {
		unsigned int nr = rnd() % 2 ? 1 : 1 + rnd() % (MAX_BANDS + 1);
		unsigned long long edge = 0;

		if (rnd() % 4 == 0)
			n += snprintf(b + n, cap - n, "# fuzz\n");
		for (unsigned int l = 0; l < nr && n + 260 < cap; l++) {
			if (rnd() % 8 == 0)
				b[n++] = ' ';
			if (l + 1 == nr && rnd() % 6)
				n += snprintf(b + n, cap - n, "max");
			else if (rnd() % 5)
				n += snprintf(b + n, cap - n, "%llu",
					      edge += 1 + rnd() % 3000);
			else
				n += gen_number(b + n, cap - n - 1);
			fields = NR_COEF +
				 (rnd() % 6 == 0 ? (rnd() % 3) - 1 : 0);
			for (f = 0; f < fields; f++) {
				b[n++] = rnd() % 6 ? ' ' : '\t';
				if (rnd() % 3)
					n += snprintf(
						b + n, cap - n, "%llu",
						(unsigned long long)(rnd() %
								     (MAXV +
								      1)));
				else
					n += gen_number(b + n, cap - n - 1);
			}
			if (l + 1 < nr)
				b[n++] = '\n';
		}
		break;
	}
	case K_FIELDS:
		if (a->comments && rnd() % 4 == 0)
			n += snprintf(b + n, cap - n, "# fuzz %llu\n",
				      (unsigned long long)(rnd() % 1000));
		fields = a->alt_fields && rnd() % 2 ? a->alt_fields : a->fields;
		fields += rnd() % 5 == 0 ? (rnd() % 3) - 1 : 0;
		for (f = 0; f < fields && n + 30 < cap; f++) {
			if (f || rnd() % 8 == 0)
				b[n++] = rnd() % 6 ? ' ' : '\t';
			if (rnd() % 3)
				n += snprintf(b + n, cap - n, "%llu",
					      (unsigned long long)(rnd() %
								   (MAXV + 1)));
			else
				n += gen_number(b + n, cap - n - 1);
		}
		break;
	}
	if (rnd() % 2 && n < cap)
		b[n++] = '\n';
	return n;
}

static size_t mutate(char *b, size_t n, size_t cap)
{
	static const char junk[] = " \t\n\r-+x#.,0123456789aZ\0\377";
	unsigned int k = 1 + rnd() % 3;

	while (k--) {
		size_t pos = n ? rnd() % (n + 1) : 0;

		switch (rnd() % 3) {
		case 0: /* insert */
			if (n < cap) {
				memmove(b + pos + 1, b + pos, n - pos);
				b[pos] = junk[rnd() % (sizeof(junk) - 1)];
				n++;
			}
			break;
		case 1: /* delete */
			if (n && pos < n) {
				memmove(b + pos, b + pos + 1, n - pos - 1);
				n--;
			}
			break;
		default: /* replace */
			if (pos < n)
				b[pos] = junk[rnd() % (sizeof(junk) - 1)];
		}
	}
	return n;
}

static size_t gen_input(const struct attr *a, char *b, size_t cap)
{
	size_t n;

	switch (rnd() % 10) {
	case 0: /* random bytes */
		n = 1 + rnd() % 64;
		for (size_t i = 0; i < n; i++)
			b[i] = rnd();
		return n;
	case 1: /* very long */
		n = 200 + rnd() % (cap - 200);
		memset(b, rnd() % 2 ? '9' : ' ', n);
		return n;
	case 2:
	case 3:
	case 4: /* valid-looking, mutated */
		n = gen_valid_like(a, b, cap / 2);
		return mutate(b, n, cap / 2);
	default: /* valid-looking */
		return gen_valid_like(a, b, cap);
	}
}

/* ---- driver ---- */

static int write_attr(const char *path, const char *b, size_t n)
{
	int fd = open(path, O_WRONLY);
	ssize_t r;

	if (fd < 0)
		return -errno;
	r = write(fd, b, n);
	r = r < 0 ? -errno : (size_t)r == n ? 0 : -EIO;
	close(fd);
	return r;
}

/* The attribute's value and the model generation, which any write to the
 * model would bump. */
static void state_of(const struct attr *a, char *state, size_t size)
{
	ssize_t n = st_read(a->path, state, size);

	if (n < 0)
		n = snprintf(state, size, "?\n");
	st_read(JOULES_SYSFS "/model/generation", state + n, size - n);
}

static void snapshot(char *state, size_t size)
{
	size_t off = 0;
	unsigned int i;

	for (i = 0; i < NR_ATTRS; i++) {
		char v[256];

		if (st_read(attrs[i].path, v, sizeof(v)) < 0)
			strcpy(v, "?\n");
		off += snprintf(state + off, size - off, "%s", v);
	}
	st_read(JOULES_SYSFS "/model/generation", state + off, size - off);
}

/* Every writable file under /sys/kernel/joules must have an oracle here. */
static int unknown_writable(void)
{
	FILE *p = popen("find " JOULES_SYSFS " -type f -perm -u+w", "r");
	char line[256];
	int unknown = 0;
	unsigned int i;

	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		bool known = false;

		line[strcspn(line, "\n")] = 0;
		for (i = 0; i < NR_ATTRS; i++)
			known |= !strcmp(line, attrs[i].path);
		if (!known) {
			DIAG("writable attribute without an oracle: %s", line);
			unknown++;
		}
	}
	pclose(p);
	return unknown;
}

static unsigned long per;

/*
 * The fuzz changes every setting: saved first, put back afterwards from
 * the parent (also after a crash), interval first so the rest settles
 * fast; then the module must still answer.
 */
FIXTURE(sysfs)
{
	char saved[4096];
};

FIXTURE_SETUP(sysfs)
{
	snapshot(self->saved, sizeof(self->saved));
}

FIXTURE_TEARDOWN_PARENT(sysfs)
{
	char *line = self->saved, b[4096], after[4096];

	for (unsigned int i = 0; i < NR_RESTORE; i++) {
		char *nl = strchr(line, '\n'), *l, *r;
		int err;

		if (!nl)
			break;
		*nl = 0;
		/* A word list reads back with the one in force in brackets, first or not. */
		if (attrs[i].kind == K_WORD && (l = strchr(line, '[')) &&
		    (r = strchr(l, ']'))) {
			*r = 0;
			err = write_attr(attrs[i].path, l + 1, strlen(l + 1));
		} else {
			err = write_attr(attrs[i].path, line, strlen(line));
		}
		CHECK(!err, "restoring %s: %s", attrs[i].path, strerror(-err));
		line = nl + 1;
	}
	CHECK(st_read(JOULES_SYSFS "/interval_ms", b, sizeof(b)) > 0 &&
		      st_read("/proc/energy/self", after, sizeof(after)) > 0,
	      "module still answers after the fuzz");
}

/* every attribute: valid input accepted, invalid refused with the old state kept */
TEST_F_TIMEOUT(sysfs, fuzz, 1800)
{
	static char before[4096], after[4096];
	unsigned long total = 0;
	char b[4096];
	unsigned int i;

	for (i = 0; i < NR_ATTRS; i++) {
		struct attr *a = &attrs[i];
		unsigned long k;

		state_of(a, before, sizeof(before));
		for (k = 0; k < per; k++) {
			size_t n = gen_input(a, b, sizeof(b) - 1);
			int want, r;

			if (!n)
				continue; /* a 0-byte write never reaches the kernel */
			want = expected(a, b, n);
			r = write_attr(a->path, b, n);
			a->tried++;
			if (!want) {
				a->good++;
				if (r != 0) {
					a->wrong++;
					if (a->wrong < 5)
						DIAG("%s: valid '%.*s' refused: %d",
						     a->path,
						     (int)(n > 60 ? 60 : n), b,
						     r);
				}
				state_of(a, before, sizeof(before));
			} else {
				a->bad++;
				state_of(a, after, sizeof(after));
				if (r != want || strcmp(before, after)) {
					a->wrong++;
					if (a->wrong < 5)
						DIAG("%s: invalid '%.*s' gave %d%s",
						     a->path,
						     (int)(n > 60 ? 60 : n), b,
						     r,
						     strcmp(before, after) ?
							     ", state changed" :
							     "");
				}
			}
		}
		total += a->tried;
		CHECK(a->wrong == 0 && a->bad > 0 && a->good > 0,
		      "%s: %lu inputs (%lu valid, %lu invalid), %lu wrong",
		      a->path, a->tried, a->good, a->bad, a->wrong);
	}
	/* At least 100,000 in all at full scale (8000 per attribute). */
	CHECK(total >= st_scaled(100000), "%lu inputs in all", total);
}

/* every writable attribute is fuzzed */
TEST(every_writable_attribute_is_fuzzed)
{
	CHECK(unknown_writable() == 0, "every writable attribute is fuzzed");
}

int main(int argc, char **argv)
{
	char b[4096];

	if (st_read(JOULES_SYSFS "/version", b, sizeof(b)) <= 0) {
		printf("1..0 # SKIP joules not loaded\n");
		return KSFT_SKIP;
	}
	/* A number (not an option) first: inputs per attribute. */
	per = argc > 1 && argv[1][0] != '-' ? strtoul(argv[1], NULL, 10) :
					      st_scaled(8000);
	have_freq = st_read(JOULES_SYSFS "/model/frequency_source", b,
			    sizeof(b)) > 0 &&
		    strcmp(b, "none\n");
	return test_harness_run(argc, argv);
}
