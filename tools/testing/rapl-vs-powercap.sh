#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# On a machine with RAPL: does joules' package (and DRAM) energy agree with
# the kernel's own powercap driver over the same few seconds?
#
#   rapl-vs-powercap.sh [SECONDS] [TOLERANCE_PERCENT]     (default 5 s, 3 %)
#
# Needs root (both energy files are root-only: PLATYPUS) and joules.ko
# loaded with its RAPL MSR meter registered (rapl/status is not "absent"),
# plus intel_rapl_msr's powercap zones (AMD's are named intel-rapl too).
# Packages are compared as a sum, because powercap names zones by physical
# package and joules counts logical packages. powercap's energy_uj wraps at
# max_energy_range_uj; joules' never does (64-bit accumulation).
#
# Prints TAP. Exit 0: agree; 1: disagree; 4 with "# SKIP <reason>" where
# RAPL, powercap, root or the module is missing.
# JOULES_SYSFS and POWERCAP override /sys/kernel/joules and
# /sys/class/powercap (for testing this script against fake files).
set -u
secs=${1:-5}
tol=${2:-3}
jsys=${JOULES_SYSFS:-/sys/kernel/joules}
pc=${POWERCAP:-/sys/class/powercap}

skip() {
	echo "1..0 # SKIP $*"
	exit 4
}

case $secs in '' | *[!0-9]*) echo "usage: $0 [SECONDS] [TOLERANCE_PERCENT]" >&2; exit 2 ;; esac
case $tol in '' | *[!0-9.]*) echo "usage: $0 [SECONDS] [TOLERANCE_PERCENT]" >&2; exit 2 ;; esac
[ "$secs" -ge 1 ] || { echo "$0: SECONDS must be at least 1" >&2; exit 2; }

[ -d "$jsys" ] || skip "joules module not loaded (no $jsys)"
status=$(cat "$jsys/rapl/status" 2>/dev/null) || skip "no $jsys/rapl/status"
case $status in
absent*) skip "joules has no RAPL meter here: $status" ;;
joules_testmeter) skip "the synthetic test meter is registered, not RAPL" ;;
esac
[ -r "$jsys/rapl/energy_uj" ] && cat "$jsys/rapl/energy_uj" >/dev/null 2>&1 ||
	skip "cannot read $jsys/rapl/energy_uj (root only)"

# Package zones: top-level intel-rapl:N whose name is package-*.
zones=
for z in "$pc"/intel-rapl:*; do
	[ -d "$z" ] || continue
	case ${z##*/} in intel-rapl:*:*) continue ;; esac
	case $(cat "$z/name" 2>/dev/null) in package-*) zones="$zones $z" ;; esac
done
[ -n "$zones" ] || skip "no powercap package zones under $pc (intel_rapl_msr not loaded?)"
for z in $zones; do
	cat "$z/energy_uj" >/dev/null 2>&1 || skip "cannot read $z/energy_uj (root only)"
done
# DRAM subzones, compared only when joules measures DRAM too.
dzones=
if grep -q ' dram=' "$jsys/rapl/energy_uj"; then
	for z in $zones; do
		for s in "$z"/intel-rapl:*:*; do
			[ -d "$s" ] && [ "$(cat "$s/name" 2>/dev/null)" = dram ] && dzones="$dzones $s"
		done
	done
fi

# Sum of one domain over every "package N:" line of rapl/energy_uj.
joules_sum() {
	awk -v d="$1" '{ for (i = 2; i <= NF; i++) if (index($i, d "=") == 1) s += substr($i, length(d) + 2) }
		END { printf "%.0f\n", s }' "$jsys/rapl/energy_uj"
}

# Raw energy_uj of each zone, on one line.
pc_read() {
	for z in "$@"; do cat "$z/energy_uj"; done | tr '\n' ' '
}

# Sum over zones of the wrap-safe delta between two pc_read lines.
pc_delta() {
	a=$1
	b=$2
	shift 2
	i=0
	for z in "$@"; do
		i=$((i + 1))
		echo "$(echo "$a" | cut -d' ' -f$i) $(echo "$b" | cut -d' ' -f$i) $(cat "$z/max_energy_range_uj")"
	done | awk '{ d = $2 - $1; if (d < 0) d += $3; s += d } END { printf "%.0f\n", s }'
}

# Same interval on both sides: each pair of reads is back to back.
p1=$(pc_read $zones)
d1=$(pc_read $dzones)
j1=$(joules_sum pkg)
jd1=$(joules_sum dram)
t1=$(date +%s.%N)
sleep "$secs"
p2=$(pc_read $zones)
d2=$(pc_read $dzones)
j2=$(joules_sum pkg)
jd2=$(joules_sum dram)
t2=$(date +%s.%N)

# compare NAME JOULES_UJ POWERCAP_UJ: ok if within tol % (or 20 mJ when nearly idle).
n=0
failed=0
compare() {
	n=$((n + 1))
	if awk -v j="$2" -v p="$3" -v tol="$tol" 'BEGIN {
		d = j - p; if (d < 0) d = -d
		exit !(p > 0 && (d <= p * tol / 100 || d <= 20000)) }'; then
		echo "ok $n $1: joules $2 uJ, powercap $3 uJ, within $tol%"
	else
		echo "not ok $n $1: joules $2 uJ, powercap $3 uJ, beyond $tol%"
		failed=1
	fi
}

echo "TAP version 13"
if [ -n "$dzones" ]; then echo "1..2"; else echo "1..1"; fi
echo "# joules: $status; $(cat "$jsys/rapl/domains"); $(cat "$jsys/rapl/units")"
echo "# window $(awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.2f", b - a }') s, powercap zones:$zones"
compare "package energy" $((j2 - j1)) "$(pc_delta "$p1" "$p2" $zones)"
[ -n "$dzones" ] && compare "dram energy" $((jd2 - jd1)) "$(pc_delta "$d1" "$d2" $dzones)"
exit $failed
