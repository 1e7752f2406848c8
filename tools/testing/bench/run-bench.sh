#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# joules.ko benchmarks, one command: each benchmark alternates runs with the
# module unloaded and loaded (or runs loaded only, where there is nothing to
# compare with) and prints median and spread; ctxsw and forkexit also run
# with joules-bpf's collector attached instead, in the same rounds. A
# summary of the RESULT lines, and the module and the collector side by
# side, ends the output. Needs root: it loads and unloads the module and
# attaches the collector.
#
#   run-bench.sh [BENCH...]      (ctxsw forkexit pidread nldump idle exporter cgroups
#                                 rtlat; default all, rtlat where cyclictest is)
#
# In the QEMU guest (make bench: modes bench and bench-icount) the module is
# /lib/joules/joules.ko and the counts are scaled down for software
# emulation; on bare metal it is $JOULES_KO (default: the joules.ko of this
# tree, else `modprobe joules`) and the counts are the full ones. Override any count from the environment:
#   CTXSW_N CTXSW_REPS FORK_N FORK_REPS PIDREAD_BATCH PIDREAD_BATCHES
#   PIDREAD_REPS DUMP_N DUMP_REPS IDLE_N IDLE_SECS IDLE_REPS EXP_N EXP_CGROUPS
#   EXP_SCRAPES EXP_REPS CG_N CG_SECS CG_REPS CG_DUMPS
#   CG_MODE (worker, dump, flush, deep, or both: worker and dump; see
#   bench/cgroups.c; deep takes CG_N as the depth of one chain)
#   RT_THREADS RT_READERS RT_SECS RT_REPS (bench/rtlat.c)
#   JOULES_BPF (the joules-bpf to attach: default the one on PATH, else this
#               tree's; JOULES_BPF=none leaves the collector out)
#   JOULES_MODULE_ARGS (parameters for each load, e.g. hw_counters=0, or
#               test_sw_counters=1 in the guest: see benchmarks.rst)
# The collector is attached with its maps in /sys/fs/bpf/joules-bench, so a
# collector already running on the machine is left alone. Where it cannot be
# attached (no joules-bpf, no BTF, no BPF in the kernel) its results are
# reported as skipped, with the reason, and the benchmarks still pass.
# Exit status: 0 when every benchmark ran (goals are reported, not enforced),
# 1 when one failed or the kernel logged a warning.
set -u
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
here=$(dirname "$self")

# The collector: a private pin directory, so that `status` and `stop` only
# ever see ours.
JOULES_BPF_PIN_DIR=/sys/fs/bpf/joules-bench
export JOULES_BPF_PIN_DIR
if [ -z "${JOULES_BPF:-}" ]; then
	JOULES_BPF=$(command -v joules-bpf 2>/dev/null) ||
		JOULES_BPF=$(cd "$here/../../.." 2>/dev/null && pwd)/user/build/joules-bpf
fi
export JOULES_BPF
jb_log=/tmp/run-bench.jb

# The module switch the benchmarks call back (JOULES_BENCH_LOAD/UNLOAD).
case ${1:-} in
--load)
	if [ -f /lib/joules/lib.sh ]; then
		. /lib/joules/lib.sh
		# shellcheck disable=SC2086 # one word per parameter
		joules_load ${JOULES_MODULE_ARGS:-}
		exit $?
	fi
	if ! [ -d /sys/module/joules ]; then
		ko=${JOULES_KO:-$(cd "$here/../../.." 2>/dev/null && pwd)/joules.ko}
		# shellcheck disable=SC2086 # one word per parameter
		if [ -f "$ko" ]; then
			insmod "$ko" ${JOULES_MODULE_ARGS:-} || exit 1
		else
			modprobe joules ${JOULES_MODULE_ARGS:-} || exit 1
		fi
	fi
	if [ -d /proc/energy ] && ! grep -q ' /proc/energy ' /proc/mounts; then
		mount -t joulesfs joulesfs /proc/energy || exit 1
	fi
	exit 0 ;;
--unload)
	if [ -f /lib/joules/lib.sh ]; then
		. /lib/joules/lib.sh
		joules_unload
		exit $?
	fi
	if grep -q ' /proc/energy ' /proc/mounts; then umount /proc/energy || exit 1; fi
	! [ -d /sys/module/joules ] || rmmod joules
	exit $? ;;
# The collector switch (JOULES_BENCH_BPF_ON/OFF). --bpf-on exits 0 with the
# collector attached, else non-zero with the reason as the last line of its
# stdout (the benchmark reports it when it skips the collector's side).
--bpf-on)
	[ "$JOULES_BPF" != none ] || { echo "left out (JOULES_BPF=none)"; exit 1; }
	[ -x "$JOULES_BPF" ] || { echo "no joules-bpf (not built: it needs clang, bpftool and libbpf-dev)"; exit 1; }
	[ -r /sys/kernel/btf/vmlinux ] ||
		{ echo "kernel $(uname -r) has no BTF (/sys/kernel/btf/vmlinux, CONFIG_DEBUG_INFO_BTF)"; exit 1; }
	! "$JOULES_BPF" status >/dev/null 2>&1 || exit 0
	# A holder process waits for the collector and records how it ended,
	# so that a failed start is seen at once; its files are this start's
	# own ($$), out of reach of an earlier holder still finishing. Every
	# descriptor of both is redirected: the benchmark reads this script's
	# stdout to its end.
	st=$jb_log.$$
	(
		"$JOULES_BPF" run -q &
		echo $! > "$st.pid"
		wait $!
		echo $? > "$st.rc"
	) < /dev/null > "$st.log" 2>&1 &
	# Loading and verifying takes seconds under emulation.
	i=0
	while [ $i -lt 600 ]; do
		if [ -f "$st.rc" ]; then
			echo "joules-bpf run failed (exit $(cat "$st.rc")): $(grep -v '^$' "$st.log" | tail -n 1)"
			exit 1
		fi
		"$JOULES_BPF" status >/dev/null 2>&1 && exit 0
		sleep 0.1
		i=$((i + 1))
	done
	[ -f "$st.pid" ] && kill "$(cat "$st.pid")" 2>/dev/null
	echo "joules-bpf run did not attach within 60 s"
	exit 1 ;;
--bpf-off)
	[ -x "$JOULES_BPF" ] || exit 0
	"$JOULES_BPF" status > "$jb_log.status" 2>/dev/null || exit 0
	# A full task map would make the collector look cheaper than it is.
	grep -E '^(tasks_dropped|exits_dropped): [1-9]' "$jb_log.status" |
		sed 's/^/run-bench: collector warning: /' >&2
	"$JOULES_BPF" stop
	exit $? ;;
-h|--help)
	sed -n '2,29p' "$self" | sed 's/^# \{0,1\}//'
	exit 0 ;;
esac

export JOULES_BENCH_LOAD="sh '$self' --load"
export JOULES_BENCH_UNLOAD="sh '$self' --unload"
export JOULES_BENCH_BPF_ON="sh '$self' --bpf-on"
export JOULES_BENCH_BPF_OFF="sh '$self' --bpf-off"

# Programs: next to this script (guest /bench) or in build/ (source tree).
bin=$here
[ -x "$bin/bench-ctxsw" ] || bin=$here/build
[ -x "$bin/bench-ctxsw" ] || { echo "run-bench: benchmarks not built (make -C tools/testing/bench)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "run-bench: must run as root (loads and unloads joules.ko)" >&2; exit 1; }

mode=$(cat /etc/joules-mode 2>/dev/null)
case $mode in
bench-icount)
	# QEMU -icount shift=0 on one CPU: the guest clock advances 1 ns per
	# instruction, so every time below is an instruction count, free of
	# host noise (idle time still passes in real time).
	where="QEMU guest (TCG -icount shift=0, 1 CPU: 1 ns = 1 instruction)"
	: "${CTXSW_N:=20000}" "${CTXSW_REPS:=5}" "${FORK_N:=10000}" "${FORK_REPS:=3}"
	: "${PIDREAD_BATCH:=100}" "${PIDREAD_BATCHES:=11}" "${PIDREAD_REPS:=5}"
	: "${DUMP_N:=10000}" "${DUMP_REPS:=3}" "${IDLE_N:=1000}" "${IDLE_SECS:=10}" "${IDLE_REPS:=3}" ;;
bench)
	# QEMU software emulation, 2 CPUs, wall clock: 10-50x slower than the
	# host and noisy (other guests share the host): short trials, many pairs.
	where="QEMU guest (TCG, 2 CPUs, wall clock)"
	: "${CTXSW_N:=10000}" "${CTXSW_REPS:=20}" "${FORK_N:=10000}" "${FORK_REPS:=7}"
	: "${PIDREAD_BATCH:=100}" "${PIDREAD_BATCHES:=21}" "${PIDREAD_REPS:=7}"
	: "${DUMP_N:=10000}" "${DUMP_REPS:=5}" "${IDLE_N:=1000}" "${IDLE_SECS:=10}" "${IDLE_REPS:=5}" ;;
*)
	where="bare metal"
	: "${CTXSW_N:=200000}" "${CTXSW_REPS:=10}" "${FORK_N:=100000}" "${FORK_REPS:=5}"
	: "${PIDREAD_BATCH:=1000}" "${PIDREAD_BATCHES:=21}" "${PIDREAD_REPS:=7}"
	: "${DUMP_N:=10000}" "${DUMP_REPS:=5}" "${IDLE_N:=1000}" "${IDLE_SECS:=10}" "${IDLE_REPS:=5}" ;;
esac

# cyclictest is rt-tests' (tools/testing/install-deps installs it).
all_benches="ctxsw forkexit pidread nldump idle exporter cgroups"
if command -v cyclictest >/dev/null 2>&1; then
	all_benches="$all_benches rtlat"
else
	echo "run-bench: rtlat left out: no cyclictest (Debian's rt-tests)"
fi
benches=${*:-$all_benches}
# joules-exporter's scrape cost with 10,000 processes in 1,000 cgroups (bench/exporter.c).
: "${EXP_N:=10000}" "${EXP_CGROUPS:=1000}" "${EXP_SCRAPES:=20}" "${EXP_REPS:=5}"
# Per-cgroup totals: the worker with 1,000 busy cgroups, a dump of them (bench/cgroups.c).
: "${CG_N:=1000}" "${CG_SECS:=5}" "${CG_REPS:=5}" "${CG_DUMPS:=20}" "${CG_MODE:=both}"
# Latency under readers of a 5,000-thread process (bench/rtlat.c).
: "${RT_THREADS:=5000}" "${RT_READERS:=2}" "${RT_SECS:=10}" "${RT_REPS:=3}"
# In the guest, run-qemu.sh --only REGEX narrows the set (jtests= on the command line).
only=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^jtests=//p')
[ -n "$only" ] && benches=$(echo "$benches" | tr ' ' '\n' | grep -E "$only" | tr '\n' ' ')

echo "run-bench: $where, kernel $(uname -r), $(nproc) CPUs, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "run-bench: clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)"
echo "run-bench: benchmarks: $benches"
echo "run-bench: BPF collector: $JOULES_BPF"
# Start from a known state: not loaded, not attached.
sh "$self" --bpf-off >/dev/null 2>&1
sh "$self" --unload >/dev/null 2>&1
dmesg -c >/dev/null 2>&1

out=/tmp/run-bench.$$
rc=0
for b in $benches; do
	case $b in
	ctxsw) set -- -n "$CTXSW_N" -r "$CTXSW_REPS" ;;
	forkexit) set -- -n "$FORK_N" -r "$FORK_REPS" ;;
	pidread) set -- -b "$PIDREAD_BATCH" -k "$PIDREAD_BATCHES" -r "$PIDREAD_REPS" ;;
	nldump) set -- -n "$DUMP_N" -r "$DUMP_REPS" ;;
	exporter) set -- -n "$EXP_N" -g "$EXP_CGROUPS" -k "$EXP_SCRAPES" -r "$EXP_REPS" ;;
	cgroups) set -- -n "$CG_N" -s "$CG_SECS" -r "$CG_REPS" -d "$CG_DUMPS" -m "$CG_MODE" ;;
	idle) set -- -n "$IDLE_N" -s "$IDLE_SECS" -r "$IDLE_REPS" ;;
	rtlat) set -- -t "$RT_THREADS" -R "$RT_READERS" -s "$RT_SECS" -r "$RT_REPS" ;;
	*) echo "run-bench: unknown benchmark '$b'" >&2; rc=1; continue ;;
	esac
	echo
	start=$(date +%s)
	{ "$bin/bench-$b" "$@"; echo $? > "$out.rc"; } | tee -a "$out"
	brc=$(cat "$out.rc")
	# bench-cgroups -m dump reports as cgroups-dump only.
	grep -Eq "^RESULT $b(-[a-z0-9]+)? " "$out" || brc=1
	echo "run-bench: $b took $(($(date +%s) - start)) s"
	[ "$brc" -eq 0 ] || { echo "run-bench: $b FAILED"; rc=1; }
done
sh "$self" --bpf-off >/dev/null 2>&1
sh "$self" --unload >/dev/null 2>&1

if dmesg 2>/dev/null | grep -E 'BUG|WARNING|Oops|general protection|Call Trace' > /tmp/run-bench.dmesg; then
	echo "run-bench: the kernel logged problems:"
	sed 's/^/dmesg: /' /tmp/run-bench.dmesg
	rc=1
fi

echo
echo "== summary ($where) =="
[ -f "$out" ] && sed -n 's/^RESULT //p' "$out"
# The module and the collector side by side: each <bench>-bpf line next to
# its <bench> line, ratios to nothing attached.
if [ -f "$out" ] && grep -q '^RESULT [a-z0-9]*-bpf ' "$out"; then
	echo
	echo "== module and BPF collector ($where) =="
	awk '
	function val(k,   i) {
		for (i = 5; i <= NF; i++)
			if (index($i, k "=") == 1) return substr($i, length(k) + 2)
		return "?"
	}
	$1 != "RESULT" { next }
	$2 !~ /-bpf$/ { key = $2 " " $3; off[key] = val("off"); on[key] = val("on"); r[key] = val("ratio"); next }
	{
		b = substr($2, 1, length($2) - 4); key = b " " $3
		line = sprintf("%s %s (%s): off %s, module %s (x%s)", b, $3, $4, off[key], on[key], r[key])
		if (val("status") == "skipped") {
			why = $0; sub(/.* reason=/, "", why)
			print line ", bpf skipped: " why
		} else
			print line ", bpf " val("bpf") " (x" val("ratio") ", x" val("vs_module") " of the module)"
	}' "$out"
fi
rm -f "$out" "$out.rc" /tmp/run-bench.dmesg "$jb_log".*
exit $rc
