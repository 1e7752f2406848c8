/* SPDX-License-Identifier: GPL-2.0 */
/*
 * joules attribution core: pure C, no kernel or libc headers, no floating
 * point. The same file is compiled into joules.ko, into the host unit tests
 * and into the userspace BPF loader, so every rule about turning counters
 * into energy lives here exactly once.
 *
 * Units: energy in microjoules (uJ) at the interfaces, femtojoules (fJ)
 * inside sums so that nothing below a microjoule is lost; time in ns.
 */
#ifndef JOULES_CORE_H
#define JOULES_CORE_H

typedef __UINT8_TYPE__ jl_u8;
typedef __UINT32_TYPE__ jl_u32;
/* unsigned long long is 64 bits on every Linux ABI and matches the kernel's u64. */
typedef unsigned long long jl_u64;
typedef long long jl_s64;
typedef __SIZE_TYPE__ jl_size;

/* ABI constants shared by the module, the tools and the docs. */
#define JL_VERSION "0.1.0"
#define JL_ABI_VERSION 2

/* The same constants as compiled into this copy of the core. */
const char *jl_version(void);
unsigned int jl_abi_version(void);

/* Error codes: functions return them negated (-JL_EINVAL), like errno. */
#define JL_EINVAL 22
#define JL_ERANGE 34

/* Model features, in the order of the `coefficients` sysfs line. */
enum jl_feature {
	JL_F_CPU_NS,	/* on-CPU time, ns */
	JL_F_CYCLES,	/* CPU cycles */
	JL_F_INSTR,	/* retired instructions */
	JL_F_MISSES,	/* last-level cache misses */
	JL_F_DISK,	/* storage bytes read + written */
	JL_F_NET_TX,	/* bytes sent on sockets (6.3+: sock_send_length) */
	JL_F_NET_RX,	/* bytes received on sockets (sock_recv_length) */
	JL_F_PAGECACHE,	/* bytes read(2) from files without storage I/O */
	JL_NR_FEATURES
};

/*
 * Coefficients, one per feature, plus the node's idle power. The on-wire
 * text form (sysfs `coefficients`, trainer output files) is these nine
 * unsigned decimal integers, in this order, separated by blanks:
 *   cpu_time_uw cycles_pj instructions_pj cache_miss_pj disk_byte_pj
 *   net_tx_byte_pj net_rx_byte_pj pagecache_byte_pj idle_uw
 * The six-field form of earlier versions (the first five and idle_uw) is
 * still read, the three newer ones then 0. Lines starting with '#' are
 * comments.
 */
struct jl_coef {
	jl_u64 cpu_time_uw;	/* uW while on a CPU: uJ per CPU-second */
	jl_u64 cycles_pj;	/* pJ per cycle */
	jl_u64 instructions_pj;	/* pJ per instruction */
	jl_u64 cache_miss_pj;	/* pJ per cache miss */
	jl_u64 disk_byte_pj;	/* pJ per byte of storage I/O */
	jl_u64 net_tx_byte_pj;	/* pJ per byte sent */
	jl_u64 net_rx_byte_pj;	/* pJ per byte received */
	jl_u64 pagecache_byte_pj;	/* pJ per byte read from the page cache */
	jl_u64 idle_uw;		/* node idle (static) power, uW */
};
#define JL_NR_COEF (JL_NR_FEATURES + 1)
#define JL_NR_COEF_V1 6	/* the six-field form: five features and idle_uw */

/* Largest accepted coefficient: 1e12 (1 MW, or 1 J per event). */
#define JL_COEF_MAX 1000000000000ULL

/* Feature deltas over one interval; `present` has bit (1 << jl_feature). */
struct jl_feat {
	jl_u64 v[JL_NR_FEATURES];
	jl_u32 present;
};

/* RAPL-style domains. */
enum jl_domain {
	JL_D_PKG,
	JL_D_CORE,
	JL_D_DRAM,
	JL_D_PSYS,
	JL_NR_DOMAINS
};

extern const char *const jl_feature_names[JL_NR_FEATURES];
extern const char *const jl_coef_names[JL_NR_COEF];
extern const char *const jl_domain_names[JL_NR_DOMAINS];

/*
 * Coefficient set <-> array view (index = position in the text form; index
 * i < JL_NR_FEATURES is the coefficient of feature i). Out-of-range indexes
 * read as 0 and are ignored on write.
 */
jl_u64 jl_coef_get(const struct jl_coef *c, unsigned int i);
void jl_coef_set(struct jl_coef *c, unsigned int i, jl_u64 v);

/*
 * Parse the text form. Returns 0 and fills *out, or -JL_EINVAL (not a
 * number, sign, junk, wrong field count, embedded NUL) / -JL_ERANGE (above
 * JL_COEF_MAX or u64 overflow). *out is untouched on error. buf need not be
 * NUL-terminated; len bytes are examined.
 * Accepted: any number of comment lines ('#' in column 0, each ending in
 * '\n'), then one data line of exactly nine (or, the earlier form, six)
 * decimal fields separated by
 * spaces/tabs (blanks before the first and after the last are allowed),
 * then at most one '\n'. Leading zeros are fine. A malformed line gives
 * -JL_EINVAL even if it also holds an out-of-range number.
 */
int jl_coef_parse(const char *buf, jl_size len, struct jl_coef *out);

/*
 * Parse one unsigned decimal integer in [0, max] (sysfs single values):
 * digits only, then at most one '\n' (as `echo` writes). -JL_EINVAL or
 * -JL_ERANGE (above max, or u64 overflow); *out is untouched on error.
 */
int jl_parse_u64(const char *buf, jl_size len, jl_u64 max, jl_u64 *out);

/*
 * Write the text form with a trailing newline and a terminating NUL;
 * returns the length without the NUL, or -JL_ERANGE if buf cannot hold it
 * (JL_COEF_TEXT_MAX bytes always suffice). Nothing is written on error.
 */
#define JL_COEF_TEXT_MAX 190
int jl_coef_format(const struct jl_coef *c, char *buf, jl_size size);

/*
 * Frequency bands: up to JL_MAX_BANDS coefficient sets, each for a band of
 * the node's effective clock frequency. Band i covers [upper_mhz[i - 1],
 * upper_mhz[i]) (band 0 from 0); the last band has no upper edge. One set
 * is a one-band model: every frequency, and no frequency at all.
 *
 * Text form (sysfs `model/bands`, trainer output): optional '#' comment
 * lines, then one line per band, lowest first:
 *   UPPER_MHZ cpu_time_uw cycles_pj ... idle_uw     (nine coefficients)
 * where UPPER_MHZ is the band's upper edge, 1..JL_MHZ_MAX, strictly
 * ascending, and is the word "max" on the last line (only there).
 */
#define JL_MAX_BANDS 4
#define JL_MHZ_MAX 100000ULL	/* 100 GHz: far above any clock */
struct jl_bands {
	unsigned int nr;			/* 1..JL_MAX_BANDS */
	jl_u64 upper_mhz[JL_MAX_BANDS];		/* [nr - 1] unused */
	struct jl_coef set[JL_MAX_BANDS];
};

/* A one-band model of c. */
void jl_bands_single(struct jl_bands *b, const struct jl_coef *c);

/*
 * Parse the text form into *out: 0, -JL_EINVAL (malformed: a line not of
 * ten fields, edges not ascending, "max" missing or early, more than
 * JL_MAX_BANDS lines, junk) or -JL_ERANGE (a coefficient above
 * JL_COEF_MAX, an edge above JL_MHZ_MAX or 0). *out is untouched on error.
 */
int jl_bands_parse(const char *buf, jl_size len, struct jl_bands *out);

/* Text form, as jl_coef_format(); JL_BANDS_TEXT_MAX bytes always suffice. */
#define JL_BANDS_TEXT_MAX (JL_MAX_BANDS * (JL_COEF_TEXT_MAX + 7))
int jl_bands_format(const struct jl_bands *b, char *buf, jl_size size);

/* The band of a frequency (MHz): the first whose upper edge is above it. */
unsigned int jl_band_pick(const struct jl_bands *b, jl_u64 mhz);

/*
 * Effective frequency in MHz from cycles counted over cpu_ns of on-CPU
 * time (cycles per ns are GHz); 0 (unknown) when cpu_ns is 0 or the result
 * is above JL_MHZ_MAX (a bogus count).
 */
jl_u64 jl_freq_mhz(jl_u64 cycles, jl_u64 cpu_ns);

/*
 * Model energy of one interval's feature deltas, in fJ:
 *   cpu_time_uw * ns + 1000 * (sum of pJ coefficients * counts)
 * Absent features contribute nothing. Saturates at UINT64_MAX (never wraps).
 */
jl_u64 jl_model_fj(const struct jl_coef *c, const struct jl_feat *d);

/*
 * The same, exactly, as whole microjoules: the sub-uJ rest is carried in
 * *rem_fj (< 1e9 after the call); what the kernel charges. Computed in
 * 128 bits: it saturates only at 2^64 uJ (18 TJ), which no interval of
 * any coefficient set within JL_COEF_MAX and real counts reaches.
 */
jl_u64 jl_model_uj(const struct jl_coef *c, const struct jl_feat *d, jl_u64 *rem_fj);

/*
 * The model's prediction as a splitting weight, in nJ (saturating at
 * 2^64 nJ, 18 GJ, which no interval reaches).
 */
jl_u64 jl_model_weight(const struct jl_coef *c, const struct jl_feat *d);

/*
 * Energy of power_uw over ns in whole microjoules, the rest carried in
 * *rem_fj: exact for every power and interval (jl_power_fj() saturates
 * at 2^64 fJ, e.g. above 307 W over 60 s).
 */
jl_u64 jl_power_uj(jl_u64 power_uw, jl_u64 ns, jl_u64 *rem_fj);

/*
 * Add fJ to an accumulator that carries the sub-uJ remainder: returns the
 * whole microjoules now due and keeps the rest in *rem_fj (< 1e9).
 */
jl_u64 jl_fj_to_uj(jl_u64 fj, jl_u64 *rem_fj);

/* Saturating u64 arithmetic (e.g. for a jl_splitter_init() weight sum). */
jl_u64 jl_add_sat(jl_u64 a, jl_u64 b);
jl_u64 jl_mul_sat(jl_u64 a, jl_u64 b);

/*
 * floor(a * b / c) with a 128-bit intermediate product and no 128-bit
 * division instruction or helper; UINT64_MAX if the quotient does not fit
 * or c == 0.
 */
jl_u64 jl_muldiv(jl_u64 a, jl_u64 b, jl_u64 c);

/* Energy of `power_uw` over `ns`, in fJ (saturating). */
jl_u64 jl_power_fj(jl_u64 power_uw, jl_u64 ns);

/*
 * Split `total` among n recipients in proportion to w[i] so that the parts
 * add up to `total` exactly and each part is within 1 of its exact share
 * (cumulative rounding: part i = floor(total * C_i / W) - floor(total *
 * C_(i-1) / W), C_i the running weight sum, W the weight sum, computed
 * exactly with a 128-bit product). If every weight is 0 (or n == 0) nothing
 * is split and the function returns 0 with out[] zeroed; otherwise returns
 * 1. Weights whose sum exceeds 2^64 are fine: the running sums are kept in
 * 128 bits and scaled (rounded) by the same shift as W, so the parts still
 * add up to total exactly, but each is then only within 6 of its exact share.
 */
int jl_split(jl_u64 total, const jl_u64 *w, jl_u32 n, jl_u64 *out);

/*
 * Streaming form of jl_split for callers that walk a list twice without
 * storing it: init with the weight sum, then call next() per recipient in
 * the same order; the parts add up to total exactly and equal jl_split()'s.
 * wsum should be summed with jl_add_sat(): if the true sum passes 2^64 the
 * running sum is clamped to wsum, so the recipients after that point get 0
 * and the total is still conserved (the shares are then skewed). If the
 * weights passed to next() add up to less than wsum (the list shrank
 * between the walks), jl_splitter_rest() is what was not handed out; next()
 * never hands out more than total in all. wsum == 0 gives 0 to everyone.
 */
struct jl_splitter {
	jl_u64 total;
	jl_u64 wsum;	/* weight sum announced at init */
	jl_u64 cum;	/* cumulative weight so far (clamped to wsum) */
	jl_u64 given;	/* sum of parts handed out so far */
	jl_u32 shift;	/* always 0: exact 128-bit arithmetic needs no scaling */
};
void jl_splitter_init(struct jl_splitter *s, jl_u64 total, jl_u64 wsum);
jl_u64 jl_splitter_next(struct jl_splitter *s, jl_u64 w);
jl_u64 jl_splitter_rest(const struct jl_splitter *s);

/*
 * Energy per unit of weight over the last completed epoch: the lagged
 * view's idle (static power per ns) and its dying tasks (jl_settle) are
 * charged at it (worker.c; Documentation/admin-guide.rst, "Measured
 * energy"). add() sums every tick of an epoch, weight or not, so the rate is the
 * whole epoch's energy over its weight: no subset of its ticks can be
 * told. roll() ends the epoch and returns what the rate will not hand
 * out: the last epoch's energy left over, and an epoch's energy with no
 * weight or weights of two kinds (units: CPU ns, model nJ), which makes
 * no rate. uj() is the energy of weight w at the rate, the remainder
 * carried, 0 for another kind or before any rate, and never more in all
 * than the epoch's energy: a rate over little weight cannot run away.
 */
struct jl_rate {
	jl_u64 acc_uj, acc_w;	/* this epoch so far */
	jl_u64 acc_kind;
	int mixed;		/* this epoch had weights of two kinds */
	jl_u64 uj, w;		/* the rate: uj per w; w 0: none */
	jl_u64 left;		/* of uj, not handed out yet */
	jl_u64 rem;		/* carried by uj(), below w */
	jl_u64 kind;
};
void jl_rate_add(struct jl_rate *r, jl_u64 uj, jl_u64 w, jl_u64 kind);
jl_u64 jl_rate_roll(struct jl_rate *r);
jl_u64 jl_rate_uj(struct jl_rate *r, jl_u64 w, jl_u64 kind);

/*
 * An epoch's measured energy settled among those who ran in it (worker.c's
 * lagged view): each recipient gets its weight of the epoch times the
 * epoch's energy over its weight, once, when the epoch ends. Readers learn
 * an epoch's rate only, whatever ticks they ran in, and a load that runs
 * in some epochs only is charged at its own epochs' rates.
 * add() sums a tick's energy (weight or not) and weight; kind() notes the
 * epoch's unit of weight where a tick adds none; void() makes the epoch
 * split nothing. roll() ends the epoch and sets up next(), each
 * recipient's share of it, in any order; end(), once they all had theirs,
 * returns what is idle's: the energy that made no split (no weight,
 * weights of two kinds, void) and the shares of those who left before the
 * end, less what they took; and in *over what they took beyond their
 * shares. A recipient that leaves (a task that died) takes prov(): its
 * weight at the last epoch's rate, at most that epoch's energy in all. So
 * no recipient's share depends on who left; the caller pays the overdraft
 * back from what is idle's later.
 */
struct jl_settle {
	jl_u64 acc_uj, acc_w, acc_kind;	/* this epoch so far */
	int kinded, mixed;
	jl_u64 prov_uj;			/* given by prov() this epoch */
	struct jl_rate prev;		/* the last epoch's rate, for prov() */
	struct jl_splitter sp;		/* the last roll's split */
	jl_u64 unsplit, gave;		/* the last roll's: no split; prov()'s */
};
void jl_settle_add(struct jl_settle *s, jl_u64 uj, jl_u64 w, jl_u64 kind);
void jl_settle_kind(struct jl_settle *s, jl_u64 kind);
void jl_settle_void(struct jl_settle *s);
jl_u64 jl_settle_prov(struct jl_settle *s, jl_u64 w);
void jl_settle_roll(struct jl_settle *s);
jl_u64 jl_settle_next(struct jl_settle *s, jl_u64 w);
jl_u64 jl_settle_end(struct jl_settle *s, jl_u64 *over);

/*
 * EnergAt non-linear scaling: w^(milli/1000), milli in [1, 1000]; 1000 is
 * the identity (so is any milli above it), milli 0 gives 1 for w >= 1.
 * Result in the same scale as the input weight, rounded to the nearest
 * integer (monotone in w, 0 -> 0, 1 -> 1). Fixed-point log2/exp2: relative
 * error < 1e-4 guaranteed (the host tests hold it below 1e-12) besides that
 * rounding.
 */
jl_u64 jl_pow_milli(jl_u64 w, jl_u32 milli);

/*
 * Wrap-safe delta of a counter that is `bits` wide (1..64): (cur - prev)
 * mod 2^bits, so bits above the width are ignored. 0 is taken as 64.
 */
jl_u64 jl_wrap_delta(jl_u64 prev, jl_u64 cur, unsigned int bits);

/*
 * RAPL energy unit. Intel MSR_RAPL_POWER_UNIT (0x606) and AMD
 * MSR_AMD_RAPL_POWER_UNIT (0xc0010299) share one layout: power units 3:0,
 * energy status units (ESU) 12:8, time units 19:16, every other bit
 * reserved (0). One counter step is 1 / 2^ESU joules. Returns the ESU, or
 * -JL_EINVAL for a register that cannot be a real unit register: a reserved
 * bit set (e.g. an all-ones bogus read) or an ESU outside
 * [JL_RAPL_ESU_MIN, JL_RAPL_ESU_MAX] (e.g. QEMU's zero read).
 * Shipped parts use 14 (Intel, 61 uJ), 16 (AMD Zen, 15.3 uJ) and nearby
 * values; 8 (3.9 mJ a step) and 24 (60 nJ, a 32-bit counter wraps after
 * 256 J) bracket them widely. Silvermont-class Atoms encode 2^ESU uJ
 * instead (default 5) and are rejected rather than misread.
 */
#define JL_RAPL_ESU_MIN 8
#define JL_RAPL_ESU_MAX 24
int jl_rapl_esu(jl_u64 unit_msr);

/*
 * Convert a counter delta in energy-status units to uJ: delta * 1e6 / 2^esu,
 * carrying the remainder (in units of 1/2^esu uJ) in *rem, so converting
 * many small deltas gives the same sum as converting their total. rem may
 * be NULL (no carry). Saturates; esu > 63 gives 0.
 */
jl_u64 jl_rapl_to_uj(jl_u64 delta, unsigned int esu, jl_u64 *rem);

/*
 * Longest safe sampling period for a 32-bit counter: the time (ns) the
 * counter takes to wrap at max_power_uw, halved for margin:
 * 2^(31 - esu) * 1e15 / max_power_uw. Saturates (max_power_uw == 0 gives
 * UINT64_MAX).
 */
jl_u64 jl_rapl_wrap_period_ns(unsigned int esu, jl_u64 max_power_uw);

/*
 * Plausibility bound: largest energy (uJ) a domain can use in `ns` at
 * max_power_uw, floor(max_power_uw * ns / 1e9), saturating. Deltas above
 * it are treated as bogus reads.
 */
jl_u64 jl_max_energy_uj(jl_u64 max_power_uw, jl_u64 ns);

/*
 * A wall meter (PDU, BMC; joules-meterd feeds it) held against the node's
 * charges. Readings come at the meter's rate (0.1-10 s), stamped on
 * receipt; the worker's ticks charge the node. Between readings a shape
 * (RAPL, the model, or the meter's recent power) sets each tick's energy. At
 * the first tick after a reading, the meter's total is compared with the
 * node's at the reading's instant (the tick's shape interpolated to it);
 * the difference is spread over the ticks of one meter period. A tick's
 * charge never goes below 0: what it cannot hold back stays pending. So
 * after every tick that saw a reading, node_uj + pending_uj == meter_uj
 * plus the tick's shape after the reading, to the microjoule; no counter
 * goes backwards. Out of force (a silent meter, none yet), a tick is its
 * shape; what was found stays owed across a silence and a new baseline.
 */
struct jl_wall {
	jl_u64 meter_uj;	/* the meter's total, on the node's scale */
	jl_u64 node_uj;		/* the node's total (every tick's charge) */
	jl_u64 shape_uj;	/* every tick's shape */
	jl_s64 pending_uj;	/* still to spread: + to give, - to hold back */
	jl_s64 residual_uj;	/* last window: meter minus shape */
	jl_u64 window_uj;	/* last window's meter energy */
	jl_u64 window_ns;	/* its length */
	jl_u64 power_uw;	/* at the last reading (read, or of pw_uj / pw_ns) */
	jl_u64 period_ns;	/* between the last two readings */
	jl_u64 pw_uj;		/* energy meter: its latest energy, over */
	jl_u64 pw_ns;		/* the latest pw_win_ns at most */
	jl_u64 pw_win_ns;	/* twice its longest interval, JL_WALL_PW_* bounded */
	jl_u64 raw;		/* the feeder's last value (uJ or uW) */
	jl_u64 read_ns;		/* the last reading's stamp (its receipt) */
	jl_u64 taken_ns;	/* when the feeder took it, for rates */
	jl_u64 base_ns;		/* a baseline's stamp, for the next tick */
	jl_u64 unseen_uj;	/* meter energy not yet seen by a tick */
	jl_u64 rem_fj;		/* power integration's sub-uJ rest */
	jl_u64 win_meter_uj;	/* meter_uj at the last reading a tick saw */
	jl_u64 win_shape_uj;	/* the shape, interpolated to that reading */
	jl_u64 win_ns;		/* and its stamp */
	jl_u64 win_busy_ns;	/* CPU time that ran in the open window */
	jl_u32 ticks_left;	/* ticks to spread pending_uj over */
	jl_u8 primed;		/* a baseline was taken */
	jl_u8 power;		/* readings are power, not energy */
	jl_u8 rebase;		/* a baseline the next tick is to place */
	jl_u8 fresh;		/* a reading the next tick is to compare */
	jl_u8 windowed;		/* win_* hold a reading */
	jl_u8 window_idle;	/* the last window was idle (jl_base_idle()) */
	jl_u64 windows;		/* windows closed: a new one when this moves */
};

/*
 * An energy meter's power is its mean over a window of twice the longest
 * interval in it, at least 2 s, at most 60 s (older energy leaks out at
 * the window's mean power). Readings are stamped on receipt, and a reading
 * delivered late shortens the intervals after it by as much as it
 * lengthened its own: over the window the delay moves the power by at most
 * delay / window, instead of making one interval look tiny.
 */
#define JL_WALL_PW_MIN_NS (2ULL * 1000000000ULL)
#define JL_WALL_PW_MAX_NS (60ULL * 1000000000ULL)
/* A reading's age (METER_AGE_NS) beyond this is refused: no meter is that slow. */
#define JL_WALL_MAX_AGE_NS (60ULL * 1000000000ULL)

#define JL_WALL_POWER 0x1	/* value is power (uW), not cumulative energy (uJ) */
#define JL_WALL_RESET 0x2	/* a new baseline: nothing counted from it */

/*
 * One reading at now_ns. Returns 0 (counted, or taken as the baseline: the
 * first one, a reset, a change between energy and power), -JL_ERANGE for
 * energy that went back without a reset or power above max_power_uw (also
 * as implied by two energies), -JL_EINVAL for a stamp before the last one.
 * A refused reading changes nothing.
 */
int jl_wall_reading(struct jl_wall *w, jl_u64 now_ns, jl_u64 value,
		    unsigned int flags, jl_u64 max_power_uw);

/*
 * The same, for a reading the feeder took age_ns before now_ns: it is
 * still stamped on receipt (the node's books), but its energy, power and
 * plausibility are over the time between when the readings were taken
 * (never before the last one was), so that one delivered late neither
 * stretches its own interval nor squeezes the next. -JL_ERANGE for an age
 * above JL_WALL_MAX_AGE_NS.
 */
int jl_wall_reading_aged(struct jl_wall *w, jl_u64 now_ns, jl_u64 age_ns,
			 jl_u64 value, unsigned int flags,
			 jl_u64 max_power_uw);

/*
 * The node's energy for the tick (t0_ns, t1_ns] whose shape is shape_uj.
 * With in_force 0 (no meter, a silent one), the shape itself; the next
 * reading is then to be a baseline (the caller sets JL_WALL_RESET).
 * busy_ns is the CPU time that ran in the tick; a tick that holds a
 * reading gives each side its part pro rata, as with the shape. A window
 * (between two readings) is idle when its CPU time passes jl_base_idle()
 * over its length, and its measured energy is then the meter's static
 * power (window_idle). The whole window is judged, not each tick: a meter
 * daemon that wakes once per reading is one short burst per window.
 */
jl_u64 jl_wall_tick(struct jl_wall *w, jl_u64 t0_ns, jl_u64 t1_ns,
		    jl_u64 shape_uj, int in_force, jl_u64 busy_ns);

/*
 * Static (baseline) power, EnergAt's way: the energy of intervals in which
 * almost nothing ran, over their length. Idle means the tasks used at most
 * JL_BASE_BUSY_PERMILLE of one CPU over the interval, however many CPUs
 * the node has (the attribution worker's own time is not counted: it runs
 * every interval). A bound on one CPU, not a share of the node: a share
 * would let a whole busy CPU pass for idle on a large node. A leaky window
 * keeps about the last JL_BASE_WINDOW_NS of idle time: the estimate
 * follows drift (temperature, fans) and one odd interval moves it little.
 * Between idle intervals the estimate stays; last_ns gives its age.
 */
#define JL_BASE_BUSY_PERMILLE 20
#define JL_BASE_WINDOW_NS (60ULL * 1000000000ULL)

struct jl_base {
	jl_u64 uj;		/* energy of the idle time kept */
	jl_u64 ns;		/* idle time kept, at most JL_BASE_WINDOW_NS */
	jl_u64 last_ns;		/* end of the last idle interval */
	jl_u64 intervals;	/* idle intervals seen */
};

/* Is an interval of dt_ns in which tasks ran busy_ns idle? */
int jl_base_idle(jl_u64 dt_ns, jl_u64 busy_ns);
/* An idle interval (t1_ns - dt_ns, t1_ns] that had energy uj. */
void jl_base_add(struct jl_base *b, jl_u64 t1_ns, jl_u64 dt_ns, jl_u64 uj);
/* The estimate in uW; 0 and *uw untouched while no idle interval was seen. */
int jl_base_uw(const struct jl_base *b, jl_u64 *uw);

#endif /* JOULES_CORE_H */
