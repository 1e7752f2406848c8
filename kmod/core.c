// SPDX-License-Identifier: GPL-2.0
/*
 * joules attribution core: see core.h for the contract of each function.
 *
 * This file is built three ways (joules.ko, host unit tests, userspace
 * tools), so it includes nothing but core.h, calls no library function and
 * uses no floating point. 128-bit integers are used for products only: the
 * kernel has no __udivti3/__umodti3, so every 128-by-64 division below goes
 * through div128_64(), which works on 32-bit digits.
 */
#include "core.h"

typedef unsigned __int128 jl_u128;

#define JL_U64_MAX (~(jl_u64)0)
#define FJ_PER_UJ 1000000000ULL
#define UJ_PER_J 1000000ULL
#define FJ_PER_PJ 1000ULL

const char *const jl_feature_names[JL_NR_FEATURES] = {
	[JL_F_CPU_NS] = "cpu_ns",      [JL_F_CYCLES] = "cycles",
	[JL_F_INSTR] = "instructions", [JL_F_MISSES] = "cache_misses",
	[JL_F_DISK] = "disk_bytes",    [JL_F_NET_TX] = "net_tx_bytes",
	[JL_F_NET_RX] = "net_rx_bytes", [JL_F_PAGECACHE] = "pagecache_bytes",
};

const char *const jl_coef_names[JL_NR_COEF] = {
	"cpu_time_uw",	  "cycles_pj",	    "instructions_pj",
	"cache_miss_pj",  "disk_byte_pj",   "net_tx_byte_pj",
	"net_rx_byte_pj", "pagecache_byte_pj", "idle_uw",
};

const char *const jl_domain_names[JL_NR_DOMAINS] = {
	[JL_D_PKG] = "pkg",
	[JL_D_CORE] = "core",
	[JL_D_DRAM] = "dram",
	[JL_D_PSYS] = "psys",
};

const char *jl_version(void)
{
	return JL_VERSION;
}

unsigned int jl_abi_version(void)
{
	return JL_ABI_VERSION;
}

/* ---- saturating and 128-bit helpers ---------------------------------- */

jl_u64 jl_add_sat(jl_u64 a, jl_u64 b)
{
	jl_u64 r;

	return __builtin_add_overflow(a, b, &r) ? JL_U64_MAX : r;
}

jl_u64 jl_mul_sat(jl_u64 a, jl_u64 b)
{
	jl_u64 r;

	return __builtin_mul_overflow(a, b, &r) ? JL_U64_MAX : r;
}

/*
 * floor((hi:lo) / d) for d != 0 and hi < d (so the quotient fits 64 bits).
 * Schoolbook division in base 2^32 (Knuth's algorithm D for a 4-digit
 * dividend and a normalised 2-digit divisor): each quotient digit is
 * estimated from the top digits and corrected at most twice.
 */
static jl_u64 div128_64(jl_u64 hi, jl_u64 lo, jl_u64 d)
{
	const jl_u64 b = 1ULL << 32;
	jl_u64 dh, dl, nh, nl1, nl0, q1, q0, rhat, mid;
	int s;

	if (!hi)
		return lo / d;
	/* Normalise: divisor's top bit set makes each digit estimate close. */
	s = __builtin_clzll(d);
	d <<= s;
	dh = d >> 32;
	dl = d & 0xffffffffULL;
	nh = s ? (hi << s) | (lo >> (64 - s)) : hi;
	lo <<= s;
	nl1 = lo >> 32;
	nl0 = lo & 0xffffffffULL;

	q1 = nh / dh;
	rhat = nh - q1 * dh;
	while (q1 >= b || q1 * dl > ((rhat << 32) | nl1)) {
		q1--;
		rhat += dh;
		if (rhat >= b)
			break;
	}
	/* Partial remainder (nh:nl1) - q1 * d; it is < d, so it fits. */
	mid = (nh << 32) + nl1 - q1 * d;

	q0 = mid / dh;
	rhat = mid - q0 * dh;
	while (q0 >= b || q0 * dl > ((rhat << 32) | nl0)) {
		q0--;
		rhat += dh;
		if (rhat >= b)
			break;
	}
	return (q1 << 32) | q0;
}

/* floor(n / d), saturating at U64 max (also for d == 0). */
static jl_u64 div_u128_sat(jl_u128 n, jl_u64 d)
{
	jl_u64 hi = (jl_u64)(n >> 64);

	if (!d || hi >= d)
		return JL_U64_MAX;
	return div128_64(hi, (jl_u64)n, d);
}

jl_u64 jl_muldiv(jl_u64 a, jl_u64 b, jl_u64 c)
{
	return div_u128_sat((jl_u128)a * b, c);
}

/* ---- coefficient set ------------------------------------------------- */

/* The coefficients in text order: index i of the text form. */
static jl_u64 *coef_slot(struct jl_coef *c, unsigned int i)
{
	jl_u64 *const slots[JL_NR_COEF] = {
		&c->cpu_time_uw,    &c->cycles_pj,	&c->instructions_pj,
		&c->cache_miss_pj,  &c->disk_byte_pj,	&c->net_tx_byte_pj,
		&c->net_rx_byte_pj, &c->pagecache_byte_pj, &c->idle_uw,
	};

	return i < JL_NR_COEF ? slots[i] : (jl_u64 *)0;
}

jl_u64 jl_coef_get(const struct jl_coef *c, unsigned int i)
{
	jl_u64 *p = coef_slot((struct jl_coef *)c, i);

	return p ? *p : 0;
}

void jl_coef_set(struct jl_coef *c, unsigned int i, jl_u64 v)
{
	jl_u64 *p = coef_slot(c, i);

	if (p)
		*p = v;
}

/* ---- parsing --------------------------------------------------------- */

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * One run of decimal digits at buf[*pos]. Values above max (this includes
 * u64 overflow, as max <= U64 max) set *range but the digits are still
 * consumed, so that a malformed line is reported as -EINVAL rather than
 * -ERANGE whatever comes after a long number.
 */
static int parse_digits(const char *buf, jl_size len, jl_size *pos, jl_u64 max,
			jl_u64 *val, int *range)
{
	jl_size p = *pos;
	jl_u64 v = 0;

	if (p >= len || !is_digit(buf[p]))
		return -JL_EINVAL;
	for (; p < len && is_digit(buf[p]); p++) {
		jl_u64 d = (jl_u64)(buf[p] - '0');

		if (d > max || v > (max - d) / 10)
			*range = 1;
		else
			v = v * 10 + d;
	}
	*pos = p;
	*val = v;
	return 0;
}

int jl_coef_parse(const char *buf, jl_size len, struct jl_coef *out)
{
	jl_u64 v[JL_NR_COEF];
	jl_size pos = 0;
	int range = 0;
	unsigned int i, n;

	/* Comment lines: '#' in column 0, each closed by a newline. */
	while (pos < len && buf[pos] == '#') {
		for (; pos < len && buf[pos] != '\n'; pos++)
			if (!buf[pos])
				return -JL_EINVAL;
		if (pos == len)
			return -JL_EINVAL; /* no data line after it */
		pos++;
	}

	for (n = 0; n < JL_NR_COEF; n++) {
		jl_size start = pos;

		while (pos < len && is_blank(buf[pos]))
			pos++;
		if (pos == len || buf[pos] == '\n')
			break;
		if (n && pos == start)
			return -JL_EINVAL; /* fields must be blank-separated */
		if (parse_digits(buf, len, &pos, JL_COEF_MAX, &v[n], &range))
			return -JL_EINVAL;
	}
	while (pos < len && is_blank(buf[pos]))
		pos++;
	if (pos < len && buf[pos] == '\n')
		pos++;
	if (pos != len)
		return -JL_EINVAL; /* junk, a 10th field, NUL, a second line */
	if (n != JL_NR_COEF && n != JL_NR_COEF_V1)
		return -JL_EINVAL;
	if (range)
		return -JL_ERANGE;

	/* The six-field form: five features, then idle_uw; the rest 0. */
	for (i = 0; i < JL_NR_COEF; i++)
		jl_coef_set(out, i, n == JL_NR_COEF ? v[i] :
				    i < JL_NR_COEF_V1 - 1 ? v[i] :
				    i == JL_NR_COEF - 1 ? v[JL_NR_COEF_V1 - 1] : 0);
	return 0;
}

int jl_parse_u64(const char *buf, jl_size len, jl_u64 max, jl_u64 *out)
{
	jl_size pos = 0;
	int range = 0;
	jl_u64 v;

	if (parse_digits(buf, len, &pos, max, &v, &range))
		return -JL_EINVAL;
	if (pos < len && buf[pos] == '\n')
		pos++;
	if (pos != len)
		return -JL_EINVAL;
	if (range)
		return -JL_ERANGE;
	*out = v;
	return 0;
}

/* Append v in decimal at buf[pos]; buf has room for 20 more digits. */
static jl_size put_u64(char *buf, jl_size pos, jl_u64 v)
{
	char tmp[20];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		buf[pos++] = tmp[--n];
	return pos;
}

int jl_coef_format(const struct jl_coef *c, char *buf, jl_size size)
{
	/* JL_NR_COEF fields of at most 20 digits, blanks, the newline. */
	char tmp[JL_NR_COEF * 21];
	jl_size len = 0, i;

	for (i = 0; i < JL_NR_COEF; i++) {
		if (i)
			tmp[len++] = ' ';
		len = put_u64(tmp, len, jl_coef_get(c, (unsigned int)i));
	}
	tmp[len++] = '\n';
	if (!buf || size < len + 1)
		return -JL_ERANGE;
	for (i = 0; i < len; i++)
		buf[i] = tmp[i];
	buf[len] = '\0';
	return (int)len;
}

/* ---- frequency bands ------------------------------------------------- */

void jl_bands_single(struct jl_bands *b, const struct jl_coef *c)
{
	unsigned int i;

	b->nr = 1;
	for (i = 0; i < JL_MAX_BANDS; i++)
		b->upper_mhz[i] = 0;
	b->set[0] = *c;
	for (i = 1; i < JL_MAX_BANDS; i++)
		b->set[i] = *c;
}

/* "max" at buf[*pos], as a whole word. */
static int is_max_word(const char *buf, jl_size len, jl_size pos)
{
	return pos + 3 <= len && buf[pos] == 'm' && buf[pos + 1] == 'a' &&
	       buf[pos + 2] == 'x' && (pos + 3 == len || is_blank(buf[pos + 3]) ||
				       buf[pos + 3] == '\n');
}

int jl_bands_parse(const char *buf, jl_size len, struct jl_bands *out)
{
	struct jl_bands b;
	jl_size pos = 0;
	int range = 0, open = 0;
	unsigned int n = 0, f;

	while (pos < len && buf[pos] == '#') {
		for (; pos < len && buf[pos] != '\n'; pos++)
			if (!buf[pos])
				return -JL_EINVAL;
		if (pos == len)
			return -JL_EINVAL;
		pos++;
	}
	while (pos < len && !open) {
		jl_u64 v[JL_NR_COEF];

		if (n == JL_MAX_BANDS)
			return -JL_EINVAL;
		while (pos < len && is_blank(buf[pos]))
			pos++;
		if (is_max_word(buf, len, pos)) {
			open = 1;
			pos += 3;
			b.upper_mhz[n] = 0;
		} else {
			if (parse_digits(buf, len, &pos, JL_MHZ_MAX, &b.upper_mhz[n],
					 &range))
				return -JL_EINVAL;
			if (!b.upper_mhz[n])
				range = 1;	/* no band ends at 0 MHz */
		}
		for (f = 0; f < JL_NR_COEF; f++) {
			jl_size start = pos;

			while (pos < len && is_blank(buf[pos]))
				pos++;
			if (pos == start)
				return -JL_EINVAL;
			if (parse_digits(buf, len, &pos, JL_COEF_MAX, &v[f], &range))
				return -JL_EINVAL;
		}
		while (pos < len && is_blank(buf[pos]))
			pos++;
		if (pos < len && buf[pos] != '\n')
			return -JL_EINVAL;	/* an 11th field, junk, NUL */
		if (pos < len)
			pos++;
		for (f = 0; f < JL_NR_COEF; f++)
			jl_coef_set(&b.set[n], f, v[f]);
		n++;
	}
	if (pos != len || !open)
		return -JL_EINVAL;	/* a line after "max", or no "max" */
	if (range)
		return -JL_ERANGE;
	for (f = 1; f + 1 < n; f++)
		if (b.upper_mhz[f] <= b.upper_mhz[f - 1])
			return -JL_EINVAL;	/* edges must ascend */
	b.nr = n;
	for (f = n; f < JL_MAX_BANDS; f++) {
		b.upper_mhz[f] = 0;
		b.set[f] = b.set[n - 1];
	}
	*out = b;
	return 0;
}

int jl_bands_format(const struct jl_bands *b, char *buf, jl_size size)
{
	char line[JL_COEF_TEXT_MAX], edge[21];
	jl_size len = 0, need = 0, k;
	unsigned int i;
	int n;

	if (b->nr < 1 || b->nr > JL_MAX_BANDS)
		return -JL_EINVAL;
	/* Measure first: nothing is written unless all of it fits. */
	for (i = 0; i < b->nr; i++) {
		n = jl_coef_format(&b->set[i], line, sizeof(line));
		if (n < 0)
			return n;
		need += (i + 1 < b->nr ? put_u64(edge, 0, b->upper_mhz[i]) : 3) +
			1 + (jl_size)n;
	}
	if (!buf || size < need + 1)
		return -JL_ERANGE;
	for (i = 0; i < b->nr; i++) {
		if (i + 1 < b->nr) {
			len = put_u64(buf, len, b->upper_mhz[i]);
		} else {
			buf[len++] = 'm';
			buf[len++] = 'a';
			buf[len++] = 'x';
		}
		buf[len++] = ' ';
		n = jl_coef_format(&b->set[i], line, sizeof(line));
		for (k = 0; k < (jl_size)n; k++)
			buf[len++] = line[k];
	}
	buf[len] = '\0';
	return (int)len;
}

unsigned int jl_band_pick(const struct jl_bands *b, jl_u64 mhz)
{
	unsigned int i;

	for (i = 0; i + 1 < b->nr; i++)
		if (mhz < b->upper_mhz[i])
			return i;
	return b->nr ? b->nr - 1 : 0;
}

jl_u64 jl_freq_mhz(jl_u64 cycles, jl_u64 cpu_ns)
{
	jl_u64 mhz;

	if (!cpu_ns)
		return 0;
	mhz = jl_muldiv(cycles, 1000, cpu_ns);
	return mhz > JL_MHZ_MAX ? 0 : mhz;
}

/* ---- energy arithmetic ----------------------------------------------- */

/* The model's energy of d in fJ, exactly: each term < 2^104, eight of them. */
static jl_u128 model_fj128(const struct jl_coef *c, const struct jl_feat *d)
{
	jl_u128 fj = 0;
	unsigned int f;

	/* Coefficient index f: the text order follows the features. */
	for (f = 0; f < JL_NR_FEATURES; f++) {
		if (!(d->present & (1U << f)))
			continue;
		if (f == JL_F_CPU_NS)
			fj += (jl_u128)c->cpu_time_uw * d->v[f];
		else
			fj += (jl_u128)jl_coef_get(c, f) * d->v[f] * FJ_PER_PJ;
	}
	return fj;
}

/*
 * Whole uJ of fj plus the carried *rem_fj (normalised if out of range);
 * the new remainder in *rem_fj. Saturates at 2^64 uJ (18 TJ).
 */
static jl_u64 fj128_to_uj(jl_u128 fj, jl_u64 *rem_fj)
{
	jl_u64 old = *rem_fj, q;

	fj += old % FJ_PER_UJ;
	q = div_u128_sat(fj, FJ_PER_UJ);
	if (q == JL_U64_MAX) {
		*rem_fj = 0;
		return q;
	}
	/* The remainder is below 1e9: the low 64 bits hold it exactly. */
	*rem_fj = (jl_u64)fj - q * FJ_PER_UJ;
	return jl_add_sat(q, old / FJ_PER_UJ);
}

jl_u64 jl_model_uj(const struct jl_coef *c, const struct jl_feat *d, jl_u64 *rem_fj)
{
	return fj128_to_uj(model_fj128(c, d), rem_fj);
}

jl_u64 jl_model_weight(const struct jl_coef *c, const struct jl_feat *d)
{
	return div_u128_sat(model_fj128(c, d), 1000000ULL);
}

jl_u64 jl_power_uj(jl_u64 power_uw, jl_u64 ns, jl_u64 *rem_fj)
{
	return fj128_to_uj((jl_u128)power_uw * ns, rem_fj);
}

jl_u64 jl_model_fj(const struct jl_coef *c, const struct jl_feat *d)
{
	jl_u64 fj = 0, pj = 0;
	unsigned int f;

	if (d->present & (1U << JL_F_CPU_NS))
		fj = jl_mul_sat(c->cpu_time_uw, d->v[JL_F_CPU_NS]);
	/* Coefficient index f: the text order follows the features. */
	for (f = 0; f < JL_NR_FEATURES; f++)
		if (f != JL_F_CPU_NS && (d->present & (1U << f)))
			pj = jl_add_sat(pj, jl_mul_sat(jl_coef_get(c, f), d->v[f]));
	/* A saturated pJ sum is >= 2^64 pJ, so the fJ sum saturates too. */
	return jl_add_sat(fj, jl_mul_sat(pj, FJ_PER_PJ));
}

jl_u64 jl_fj_to_uj(jl_u64 fj, jl_u64 *rem_fj)
{
	jl_u64 uj = fj / FJ_PER_UJ, r = fj % FJ_PER_UJ;

	if (rem_fj) {
		jl_u64 old = *rem_fj;

		/* Normalise a carry that is out of range instead of losing it. */
		uj += old / FJ_PER_UJ;
		r += old % FJ_PER_UJ;
		if (r >= FJ_PER_UJ) {
			r -= FJ_PER_UJ;
			uj++;
		}
		*rem_fj = r;
	}
	return uj;
}

jl_u64 jl_power_fj(jl_u64 power_uw, jl_u64 ns)
{
	return jl_mul_sat(power_uw, ns); /* uW * ns = 1e-15 J */
}

/* ---- splitting ------------------------------------------------------- */

int jl_split(jl_u64 total, const jl_u64 *w, jl_u32 n, jl_u64 *out)
{
	jl_u128 sum = 0, cum = 0, half = 0;
	jl_u64 wsum, given = 0;
	unsigned int shift = 0;
	jl_u32 i;

	/* n < 2^32 weights < 2^64 each: the 128-bit sum cannot overflow. */
	for (i = 0; i < n; i++)
		sum += w[i];
	if (!sum) {
		for (i = 0; i < n; i++)
			out[i] = 0;
		return 0;
	}
	/*
	 * A sum past 2^64 is scaled down by 2^shift. The *cumulative* sums
	 * are scaled (rounded to nearest), not the weights, so the last one
	 * still equals the scaled total and the parts still add up to total
	 * exactly. Rounding keeps each scaled sum within 1/2 of its true
	 * value and wsum >= 2^63 - 1, which bounds each part's error by
	 * 1 + 2 * total / wsum <= 5 + 2^-61.
	 */
	while ((sum + half) >> shift >> 64) {
		shift++;
		half = (jl_u128)1 << (shift - 1);
	}
	wsum = (jl_u64)((sum + half) >> shift);
	for (i = 0; i < n; i++) {
		jl_u64 q;

		cum += w[i];
		/* cum <= sum, so q <= total: no saturation. */
		q = jl_muldiv(total, (jl_u64)((cum + half) >> shift), wsum);
		out[i] = q - given;
		given = q;
	}
	return 1;
}

void jl_splitter_init(struct jl_splitter *s, jl_u64 total, jl_u64 wsum)
{
	s->total = total;
	s->wsum = wsum;
	s->cum = 0;
	s->given = 0;
	s->shift = 0;
}

jl_u64 jl_splitter_next(struct jl_splitter *s, jl_u64 w)
{
	jl_u64 cum, q, part;

	if (!s->wsum)
		return 0;
	/* Weights past the announced sum are clamped: never give > total. */
	cum = jl_add_sat(s->cum, w);
	if (cum > s->wsum)
		cum = s->wsum;
	q = jl_muldiv(s->total, cum, s->wsum);
	part = q - s->given;
	s->cum = cum;
	s->given = q;
	return part;
}

jl_u64 jl_splitter_rest(const struct jl_splitter *s)
{
	return s->total - s->given;
}

/* ---- lagged rate ------------------------------------------------------ */

void jl_rate_add(struct jl_rate *r, jl_u64 uj, jl_u64 w, jl_u64 kind)
{
	r->acc_uj = jl_add_sat(r->acc_uj, uj);
	if (!w)
		return;
	if (r->acc_w && r->acc_kind != kind)
		r->mixed = 1;
	r->acc_kind = kind;
	r->acc_w = jl_add_sat(r->acc_w, w);
}

jl_u64 jl_rate_roll(struct jl_rate *r)
{
	jl_u64 out = r->left;

	if (r->acc_w && !r->mixed) {
		r->uj = r->acc_uj;
		r->w = r->acc_w;
		r->kind = r->acc_kind;
		r->left = r->acc_uj;
	} else {
		out = jl_add_sat(out, r->acc_uj);
		r->uj = 0;
		r->w = 0;
		r->left = 0;
	}
	r->rem = 0;
	r->acc_uj = 0;
	r->acc_w = 0;
	r->mixed = 0;
	return out;
}

jl_u64 jl_rate_uj(struct jl_rate *r, jl_u64 w, jl_u64 kind)
{
	jl_u128 n;
	jl_u64 q;

	if (r->kind != kind || !r->w || !w)
		return 0;
	n = (jl_u128)w * r->uj + r->rem;
	q = div_u128_sat(n, r->w);
	/* Below w, so the low 64 bits hold it; a saturated part carries none. */
	r->rem = q == JL_U64_MAX ? 0 : (jl_u64)n - q * r->w;
	if (q > r->left)
		q = r->left;
	r->left -= q;
	return q;
}

/* ---- epoch settlement ------------------------------------------------ */

void jl_settle_kind(struct jl_settle *s, jl_u64 kind)
{
	if (s->kinded && s->acc_kind != kind)
		s->mixed = 1;
	s->acc_kind = kind;
	s->kinded = 1;
}

void jl_settle_add(struct jl_settle *s, jl_u64 uj, jl_u64 w, jl_u64 kind)
{
	s->acc_uj = jl_add_sat(s->acc_uj, uj);
	if (!w)
		return;
	jl_settle_kind(s, kind);
	s->acc_w = jl_add_sat(s->acc_w, w);
}

void jl_settle_void(struct jl_settle *s)
{
	s->mixed = 1;
}

jl_u64 jl_settle_prov(struct jl_settle *s, jl_u64 w)
{
	jl_u64 q;

	/* The last epoch's rate is for weights of its own kind only. */
	if (s->mixed || !s->kinded)
		return 0;
	q = jl_rate_uj(&s->prev, w, s->acc_kind);
	s->prov_uj = jl_add_sat(s->prov_uj, q);
	return q;
}

void jl_settle_roll(struct jl_settle *s)
{
	s->gave = s->prov_uj;
	if (s->mixed || !s->acc_w) {
		s->unsplit = s->acc_uj;
		jl_splitter_init(&s->sp, 0, 0);
	} else {
		s->unsplit = 0;
		jl_splitter_init(&s->sp, s->acc_uj, s->acc_w);
	}
	/* The rate of the dying in the next epoch: this one's, whole. */
	s->prev.uj = s->acc_uj;
	s->prev.w = s->mixed ? 0 : s->acc_w;
	s->prev.kind = s->acc_kind;
	s->prev.left = s->acc_uj;
	s->prev.rem = 0;
	s->acc_uj = 0;
	s->acc_w = 0;
	s->acc_kind = 0;
	s->kinded = 0;
	s->mixed = 0;
	s->prov_uj = 0;
}

jl_u64 jl_settle_next(struct jl_settle *s, jl_u64 w)
{
	return jl_splitter_next(&s->sp, w);
}

jl_u64 jl_settle_end(struct jl_settle *s, jl_u64 *over)
{
	jl_u64 rest = jl_add_sat(s->unsplit, jl_splitter_rest(&s->sp));

	*over = 0;
	if (rest >= s->gave) {
		rest -= s->gave;
	} else {
		*over = s->gave - rest;
		rest = 0;
	}
	s->unsplit = 0;
	s->gave = 0;
	jl_splitter_init(&s->sp, 0, 0);
	return rest;
}

/* ---- w^(milli/1000) -------------------------------------------------- */

/* Fraction bits of a log2 value: log2 of a u64 is < 64 = 2^6. */
#define LOG_FB 56
/* floor(ln(2) * 2^62) */
#define LN2_Q62 3196577161300663914ULL

/*
 * log2(w) for w >= 1, as Q6.56. The integer part is the top bit's index;
 * the fraction is found one bit at a time: squaring the mantissa m in
 * [1, 2) doubles its log, so the next bit is 1 iff m^2 >= 2. Each step is
 * monotone in m, which makes the whole result monotone in w.
 */
static jl_u64 log2_fix(jl_u64 w)
{
	unsigned int e = 63 - (unsigned int)__builtin_clzll(w);
	jl_u64 m = w << (63 - e); /* Q1.63 */
	jl_u64 frac = 0;
	int i;

	for (i = 0; i < LOG_FB; i++) {
		jl_u128 sq = (jl_u128)m * m; /* Q2.126 */

		frac <<= 1;
		if (sq >> 127) {
			m = (jl_u64)(sq >> 64); /* m^2 / 2 */
			frac |= 1;
		} else {
			m = (jl_u64)(sq >> 63);
		}
	}
	return ((jl_u64)e << LOG_FB) | frac;
}

/*
 * 2^y for y in Q6.56, rounded to the nearest integer. 2^frac is the
 * Taylor series of e^(frac * ln 2) in Q.62: every step truncates, so the
 * sum stays below 2 and is monotone in y.
 */
static jl_u64 exp2_fix(jl_u64 y)
{
	unsigned int ip = (unsigned int)(y >> LOG_FB);
	jl_u64 f = (y & ((1ULL << LOG_FB) - 1)) << (62 - LOG_FB);
	jl_u64 x = (jl_u64)(((jl_u128)f * LN2_Q62) >> 62);
	jl_u64 term = 1ULL << 62, sum = 1ULL << 62;
	unsigned int k, sh;

	/* x < 0.7: x^k / k! < 2^-62 well before k = 24. */
	for (k = 1; k < 24 && term; k++) {
		term = (jl_u64)(((jl_u128)term * x) >> 62) / k;
		sum += term;
	}
	if (ip >= 64)
		return JL_U64_MAX;
	if (ip == 63)
		return sum << 1; /* sum < 2^63 */
	sh = 62 - ip;
	if (!sh)
		return sum;
	return (sum + (1ULL << (sh - 1))) >> sh;
}

jl_u64 jl_pow_milli(jl_u64 w, jl_u32 milli)
{
	if (w <= 1 || milli >= 1000)
		return w;
	if (!milli)
		return 1;
	/* y = log2(w) * milli / 1000 <= log2(w) < 64: no saturation. */
	return exp2_fix(jl_muldiv(log2_fix(w), milli, 1000));
}

/* ---- counters and RAPL ----------------------------------------------- */

jl_u64 jl_wrap_delta(jl_u64 prev, jl_u64 cur, unsigned int bits)
{
	if (!bits || bits >= 64)
		return cur - prev;
	return (cur - prev) & ((1ULL << bits) - 1);
}

/* Power units 3:0, energy status units 12:8, time units 19:16. */
#define RAPL_UNIT_USED 0x000f1f0fULL

int jl_rapl_esu(jl_u64 unit_msr)
{
	unsigned int esu = (unsigned int)(unit_msr >> 8) & 0x1f;

	if (unit_msr & ~RAPL_UNIT_USED)
		return -JL_EINVAL;
	if (esu < JL_RAPL_ESU_MIN || esu > JL_RAPL_ESU_MAX)
		return -JL_EINVAL;
	return (int)esu;
}

jl_u64 jl_rapl_to_uj(jl_u64 delta, unsigned int esu, jl_u64 *rem)
{
	jl_u128 p = (jl_u128)delta * UJ_PER_J;
	jl_u128 uj;

	if (esu > 63)
		return 0;
	if (rem) {
		p += *rem;
		*rem = (jl_u64)p & ((1ULL << esu) - 1);
	}
	uj = p >> esu;
	return (uj >> 64) ? JL_U64_MAX : (jl_u64)uj;
}

jl_u64 jl_rapl_wrap_period_ns(unsigned int esu, jl_u64 max_power_uw)
{
	/*
	 * 2^32 steps of 2^-esu J = 2^(32 - esu) J; at P uW that lasts
	 * 2^(32 - esu) * 1e15 / P ns; half of it is 2^(31 - esu) * 1e15 / P.
	 * 1e15 * 2^31 < 2^81.
	 */
	jl_u128 n = (jl_u128)1000000000000000ULL << 31;

	if (esu > 81)
		return 0;
	return div_u128_sat(n >> esu, max_power_uw);
}

jl_u64 jl_max_energy_uj(jl_u64 max_power_uw, jl_u64 ns)
{
	return jl_muldiv(max_power_uw, ns, 1000000000ULL); /* uW * ns / 1e9 */
}

/* ---- static power -------------------------------------------------------- */

int jl_base_idle(jl_u64 dt_ns, jl_u64 busy_ns)
{
	return dt_ns && busy_ns <= jl_muldiv(dt_ns, JL_BASE_BUSY_PERMILLE, 1000);
}

/*
 * Energy *uj over time *ns, at most win_ns of it: uj more over dt_ns. The
 * oldest leaks out at the window's mean power to make room.
 */
static void window_add(jl_u64 *w_uj, jl_u64 *w_ns, jl_u64 win_ns, jl_u64 uj,
		       jl_u64 dt_ns)
{
	jl_u64 keep;

	if (dt_ns >= win_ns) {
		/* One interval longer than the window: its mean power alone. */
		*w_uj = jl_muldiv(uj, win_ns, dt_ns);
		*w_ns = win_ns;
		return;
	}
	if (*w_ns + dt_ns > win_ns) {
		keep = win_ns - dt_ns;
		*w_uj = jl_muldiv(*w_uj, keep, *w_ns);
		*w_ns = keep;
	}
	*w_uj = jl_add_sat(*w_uj, uj);
	*w_ns += dt_ns;
}

void jl_base_add(struct jl_base *b, jl_u64 t1_ns, jl_u64 dt_ns, jl_u64 uj)
{
	if (!dt_ns)
		return;
	window_add(&b->uj, &b->ns, JL_BASE_WINDOW_NS, uj, dt_ns);
	b->last_ns = t1_ns;
	b->intervals++;
}

int jl_base_uw(const struct jl_base *b, jl_u64 *uw)
{
	if (!b->intervals || !b->ns)
		return 0;
	*uw = jl_muldiv(b->uj, 1000000000ULL, b->ns); /* uJ / ns * 1e9 */
	return 1;
}

/* ---- the wall meter ---------------------------------------------------- */

/*
 * An energy meter's interval: its power over the window (JL_WALL_PW_*).
 * The window is twice the longest interval it holds: a long one widens
 * it, and it narrows again as that interval passes out of it.
 */
static void wall_power_add(struct jl_wall *w, jl_u64 uj, jl_u64 dt_ns)
{
	jl_u64 win = dt_ns < JL_WALL_PW_MAX_NS / 2 ? 2 * dt_ns : JL_WALL_PW_MAX_NS;
	jl_u64 left = w->pw_win_ns > dt_ns ? w->pw_win_ns - dt_ns : 0;

	if (win < left)
		win = left;
	w->pw_win_ns = win > JL_WALL_PW_MIN_NS ? win : JL_WALL_PW_MIN_NS;
	window_add(&w->pw_uj, &w->pw_ns, w->pw_win_ns, uj, dt_ns);
	if (w->pw_ns)
		w->power_uw = jl_muldiv(w->pw_uj, 1000000000ULL, w->pw_ns);
}

static void wall_baseline(struct jl_wall *w, jl_u64 now_ns, jl_u64 value,
			  unsigned int flags)
{
	w->primed = 1;
	w->power = !!(flags & JL_WALL_POWER);
	w->raw = value;
	w->power_uw = w->power ? value : 0;
	w->read_ns = now_ns;
	w->base_ns = now_ns;
	w->period_ns = 0;
	w->pw_uj = 0;
	w->pw_ns = 0;
	w->pw_win_ns = JL_WALL_PW_MIN_NS;
	w->unseen_uj = 0;
	w->rem_fj = 0;
	w->rebase = 1;
	w->fresh = 0;
}

int jl_wall_reading(struct jl_wall *w, jl_u64 now_ns, jl_u64 value,
		    unsigned int flags, jl_u64 max_power_uw)
{
	return jl_wall_reading_aged(w, now_ns, 0, value, flags, max_power_uw);
}

int jl_wall_reading_aged(struct jl_wall *w, jl_u64 now_ns, jl_u64 age_ns,
			 jl_u64 value, unsigned int flags,
			 jl_u64 max_power_uw)
{
	jl_u64 dt, uj, taken = age_ns < now_ns ? now_ns - age_ns : 0;

	if (w->primed && now_ns < w->read_ns)
		return -JL_EINVAL;
	if (age_ns > JL_WALL_MAX_AGE_NS ||
	    ((flags & JL_WALL_POWER) && value > max_power_uw))
		return -JL_ERANGE;
	if (!w->primed || (flags & JL_WALL_RESET) ||
	    !(flags & JL_WALL_POWER) != !w->power) {
		wall_baseline(w, now_ns, value, flags);
		w->taken_ns = taken;
		return 0;
	}
	if (taken < w->taken_ns)
		taken = w->taken_ns;
	dt = taken - w->taken_ns;
	if (w->power) {
		/* Trapezoid: the two readings' mean over the time between them. */
		uj = jl_power_uj(w->raw / 2 + value / 2 + (w->raw & value & 1),
				 dt, &w->rem_fj);
		w->power_uw = value;
	} else {
		if (value < w->raw)
			return -JL_ERANGE;
		uj = value - w->raw;
		/*
		 * Plausible over the window, as the power is taken: a reading
		 * delivered late makes the next interval short. One microjoule
		 * of slack: the feeder's counter is in whole uJ.
		 */
		if (jl_add_sat(uj, w->pw_uj) >
		    jl_max_energy_uj(max_power_uw, dt + w->pw_ns) + 1)
			return -JL_ERANGE;
		wall_power_add(w, uj, dt);
	}
	w->raw = value;
	w->unseen_uj += uj;
	w->period_ns = dt;
	w->read_ns = now_ns;
	w->taken_ns = taken;
	w->fresh = 1;
	return 0;
}

/* The shape of (t0, t1] up to at (clamped to the tick), rounded down. */
static jl_u64 shape_until(jl_u64 shape_uj, jl_u64 t0, jl_u64 t1, jl_u64 at)
{
	if (at <= t0 || t1 <= t0)
		return 0;
	if (at >= t1)
		return shape_uj;
	return jl_muldiv(shape_uj, at - t0, t1 - t0);
}

jl_u64 jl_wall_tick(struct jl_wall *w, jl_u64 t0_ns, jl_u64 t1_ns,
		    jl_u64 shape_uj, int in_force, jl_u64 busy_ns)
{
	jl_s64 c;

	if (!in_force || !w->primed) {
		/*
		 * The shape alone. What a reading found stays owed (or held
		 * back) for when a meter is in force again; a window does not
		 * span the silence.
		 */
		w->node_uj += shape_uj;
		w->shape_uj += shape_uj;
		w->windowed = 0;
		return shape_uj;
	}
	if (w->rebase) {
		/*
		 * The meter takes up from where the node is at the baseline,
		 * plus what is still owed: its total then grew by the shape
		 * since its last reading, and never goes back.
		 */
		jl_u64 s = shape_until(shape_uj, t0_ns, t1_ns, w->base_ns);

		w->meter_uj = w->node_uj + s + w->pending_uj;
		w->win_meter_uj = w->meter_uj;
		w->win_shape_uj = w->shape_uj + s;
		w->win_ns = w->base_ns;
		w->windowed = 1;
		w->rebase = 0;
		/* The tick's part after the baseline. */
		w->win_busy_ns = busy_ns - shape_until(busy_ns, t0_ns, t1_ns, w->base_ns);
	}
	w->meter_uj += w->unseen_uj;
	w->unseen_uj = 0;
	if (w->fresh) {
		jl_u64 s = shape_until(shape_uj, t0_ns, t1_ns, w->read_ns);
		jl_u64 b = shape_until(busy_ns, t0_ns, t1_ns, w->read_ns);
		jl_u64 dt = t1_ns - t0_ns;

		w->pending_uj = (jl_s64)(w->meter_uj - (w->node_uj + s));
		w->ticks_left = dt && w->period_ns > dt ? w->period_ns / dt : 1;
		if (w->windowed) {
			w->window_uj = w->meter_uj - w->win_meter_uj;
			w->window_ns = w->read_ns - w->win_ns;
			w->residual_uj = (jl_s64)(w->window_uj -
						  (w->shape_uj + s - w->win_shape_uj));
			/* This tick's part up to the reading is in the window too. */
			w->window_idle = jl_base_idle(w->window_ns,
						      jl_add_sat(w->win_busy_ns, b));
			w->windows++;
		}
		w->win_busy_ns = busy_ns - b;	/* and its part after it in the next */
		w->win_meter_uj = w->meter_uj;
		w->win_shape_uj = w->shape_uj + s;
		w->win_ns = w->read_ns;
		w->windowed = 1;
		w->fresh = 0;
	} else {
		w->win_busy_ns = jl_add_sat(w->win_busy_ns, busy_ns);
	}
	c = w->ticks_left > 1 ? w->pending_uj / (jl_s64)w->ticks_left : w->pending_uj;
	if (c < 0 && (jl_u64)-c > shape_uj)
		c = -(jl_s64)shape_uj;
	w->pending_uj -= c;
	if (w->ticks_left > 1)
		w->ticks_left--;
	w->shape_uj += shape_uj;
	w->node_uj += shape_uj + c;
	return shape_uj + c;
}
