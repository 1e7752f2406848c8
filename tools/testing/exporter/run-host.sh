#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Host tests of joules-exporter and `joulesctl export`, no module needed
# (nothing is ever loaded into this machine's kernel): unit tests, promtool
# on rendered expositions, the exporter's HTTP behaviour under bad clients
# with its memory watched, a real Prometheus scraping it, the textfile
# writer. A fake sysfs tree ($JOULES_SYSFS) stands in for the module's.
# Prints TAP; exit status 0 when everything passed.
#
#   run-host.sh            (make -C tools/testing/exporter check)
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
work=$(mktemp -d)
. "$here"/lib.sh
trap 'stop_all; rm -rf "$work"' EXIT INT TERM
exporter=$top/user/build/joules-exporter
joulesctl=$top/user/build/joulesctl

echo "TAP version 13"
for f in "$exporter" "$joulesctl" "$here/build/test_prom" "$here/build/http-check"; do
	if ! [ -x "$f" ]; then
		echo "1..0 # SKIP $f not built (make user; make -C tools/testing/exporter)"
		exit 4
	fi
done
# The collectors' own tests (user/lib/collector/NAME_test.c), one line each.
coltests=$(ls "$here"/build/collector/*_test 2>/dev/null)
echo "1..$((23 + $(echo "$coltests" | grep -c .)))"

"$here"/build/test_prom > "$work/out" 2>&1; rc=$?
nest < "$work/out"; t $rc "writer, negotiation, flag parsing (test_prom)"

mkdir -p "$work/render"
"$here"/build/test_render "$work/render" > "$work/out" 2>&1; rc=$?
nest < "$work/out"; t $rc "metric families from made-up snapshots (test_render)"

"$here"/build/test_retry > "$work/out" 2>&1; rc=$?
nest < "$work/out"; t $rc "a netlink retry keeps --cgroups.match and --compat kepler; the lagged view's hold (test_retry)"

for c in $coltests; do
	"$c" > "$work/out" 2>&1; rc=$?
	nest < "$work/out"; t $rc "collector: $(basename "$c")"
done

# The same under AddressSanitizer + UBSan, when built (make check does).
if [ -x "$here/build-san/test_prom" ] && [ -x "$here/build-san/test_render" ] &&
	[ -x "$here/build-san/test_retry" ]; then
	rc=0
	for p in "$here"/build-san/test_prom "$here"/build-san/test_render "$here"/build-san/test_retry \
		"$here"/build-san/collector/*_test; do
		"$p" > "$work/out" 2>&1 || { rc=1; nest < "$work/out"; }
	done
	t $rc "test_prom, test_render, test_retry and the collector tests under ASan + UBSan"
else
	echo "ok $((n = n + 1)) sanitizers # SKIP build-san/ not built (make check builds it)"
fi

if command -v promtool >/dev/null; then
	rc=0
	for f in "$work"/render/*.prom; do
		if ! promtool check metrics < "$f" > "$work/lint" 2>&1; then
			rc=1; diag "promtool on $(basename "$f"):"; nest < "$work/lint"
		fi
	done
	t $rc "promtool check metrics on every rendering ($(ls "$work"/render/*.prom | wc -l) files)"
else
	echo "ok $((n = n + 1)) promtool check metrics # SKIP promtool not installed (apt-get install prometheus)"
fi

# A fake /sys/kernel/joules: a model is set, no meter.
sys=$work/sysfs
mkdir -p "$sys/model" "$sys/rapl"
echo 0.1.0 > "$sys/version"
echo 1 > "$sys/abi_version"
echo 3 > "$sys/model/generation"
echo "7000000 0 0 2000 0 15000000" > "$sys/model/coefficients"
echo "absent: no RAPL: CPU vendor/model not supported (fake sysfs of the host test)" > "$sys/rapl/status"
# A wall meter in force, the model 0.25 J under it over the last 1 s window.
mkdir -p "$sys/wallmeter"
echo pdu-host-test > "$sys/wallmeter/status"
echo 42 > "$sys/wallmeter/readings"
echo 0 > "$sys/wallmeter/refused"
echo 123456789 > "$sys/wallmeter/energy_uj"
echo -1500 > "$sys/wallmeter/pending_uj"
echo 250000 > "$sys/wallmeter/residual_uj"
echo 1000 > "$sys/wallmeter/window_ms"
echo 180000000 > "$sys/wallmeter/power_uw"
echo 10000 > "$sys/wallmeter/timeout_ms"
echo 20000 > "$sys/wallmeter/max_power_w"
# Static power: package 0 measured, its cores not yet, the wall meter's set by hand.
printf '%s\n' \
	'pkg0 pkg power_uw 4999926 age_ms 45 idle_ms 6000 in_force measured' \
	'pkg0 core power_uw - age_ms - idle_ms 0 in_force none' \
	'wall meter power_uw 39999999 age_ms 49 idle_ms 5800 in_force set' > "$sys/static_power"
export JOULES_SYSFS=$sys

# Start the exporter; retry on another port if one was taken meanwhile.
start_exporter() {
	for try in 1 2 3 4 5; do
		port=$(free_port)
		"$exporter" --web.listen-address="127.0.0.1:$port" --web.timeout=3 "$@" \
			> "$work/exporter.log" 2>&1 &
		exp_pid=$!
		if wait_for 5 hget "$port" /; then track $exp_pid; return 0; fi
		kill $exp_pid 2>/dev/null; wait $exp_pid 2>/dev/null
	done
	return 1
}

start_exporter --processes=top=5; t $? "exporter starts on 127.0.0.1"
hget "$port" /metrics > "$work/metrics.txt"
rc=$?
grep -q '^joules_model_power_watts{term="cpu_time"} 7$' "$work/metrics.txt" &&
	grep -q '^joules_meter_present{reason="no RAPL: CPU vendor/model not supported (fake sysfs of the host test)"} 0$' "$work/metrics.txt" &&
	grep -q '^joules_wall_meter_present{meter="pdu-host-test",state="in_force"} 1$' "$work/metrics.txt" &&
	grep -q '^joules_wall_meter_residual_joules 0.25$' "$work/metrics.txt" &&
	grep -q '^joules_wall_meter_pending_joules -0.0015$' "$work/metrics.txt" &&
	grep -q '^joules_exporter_collector_success{collector="wallmeter"} 1$' "$work/metrics.txt" &&
	grep -q '^joules_static_power_watts{scope="pkg0",domain="pkg",in_force="measured"} 4.999926$' "$work/metrics.txt" &&
	grep -q '^joules_static_power_watts{scope="wall",domain="meter",in_force="set"} 39.999999$' "$work/metrics.txt" &&
	grep -q '^joules_static_power_idle_seconds{scope="pkg0",domain="core"} 0$' "$work/metrics.txt" &&
	! grep -q '^joules_static_power_watts{scope="pkg0",domain="core"' "$work/metrics.txt" &&
	grep -q '^joules_exporter_collector_success{collector="static"} 1$' "$work/metrics.txt" &&
	grep -q '^joules_exporter_collector_error{collector="node",reason="module_not_loaded"} 1$' "$work/metrics.txt" &&
	grep -q '^joules_exporter_collector_error{collector="cgroup",reason="module_not_loaded"} 1$' "$work/metrics.txt" &&
	! grep -q '^joules_node_' "$work/metrics.txt" && ! grep -q '^joules_cgroup_' "$work/metrics.txt"
t $(( rc | $? )) "model, meter, wall meter and static power from sysfs, node and cgroups absent with their reason"
grep -q 'level=error collector=node msg="joules module not loaded' "$work/exporter.log"
t $? "the missing module is logged"
if command -v promtool >/dev/null; then
	promtool check metrics < "$work/metrics.txt" > "$work/lint" 2>&1; rc=$?
	nest < "$work/lint"; t $rc "promtool check metrics on the exporter's output"
else
	echo "ok $((n = n + 1)) promtool # SKIP promtool not installed"
fi

# Bad clients, five rounds: still serving, peak memory under the bound of
# max_connections pools (valgrind below checks that nothing is kept).
set -- $(mem_kb $exp_pid); rss0=$1
rc=0
for round in 1 2 3 4 5; do
	"$here"/build/http-check -t 3 127.0.0.1 "$port" > "$work/out" 2>&1 || { rc=1; nest < "$work/out"; }
	set -- $(mem_kb $exp_pid); eval "rss$round=\$1 hwm$round=\$2"
done
diag "exporter RSS: start $rss0 kB, after rounds of bad clients 1: $rss1 kB (peak $hwm1), 2: $rss2 ($hwm2), 3: $rss3 ($hwm3), 4: $rss4 ($hwm4), 5: $rss5 ($hwm5)"
t $rc "bad clients (huge headers, 500 connections, unfinished requests): still serving"
# Peak RSS is not a leak detector: it follows how many connections happened
# to be open at once. Only its bound is asserted here.
[ "$hwm5" -lt 32768 ]
t $? "memory bounded: peak $hwm5 kB < 32 MiB over five rounds"
kill -0 $exp_pid 2>/dev/null && hget "$port" /metrics | grep -q '^joules_module_loaded 0$'
t $? "the exporter is alive and answering"

# A real Prometheus scrapes it; 2.42 asks for OpenMetrics.
if command -v prometheus >/dev/null; then
	pport=$(free_port)
	if start_prometheus "$work/prom" "$pport" "127.0.0.1:$port"; then
		wait_for 20 sh -c "[ \"\$(. '$here/lib.sh'; here='$here'; prom_query $pport 'joules_model_generation')\" = 3 ]"
		rc=$?
		hget "$pport" /api/v1/targets > "$work/targets.json"
		grep -q '"health":"up"' "$work/targets.json" && grep -q '"lastError":""' "$work/targets.json"
		rc2=$?
		[ $rc2 = 0 ] || nest < "$work/targets.json"
		t $(( rc | rc2 )) "Prometheus scrapes it (OpenMetrics) without errors"
	else
		nest < "$work/prom/prometheus.log"
		t 1 "Prometheus starts"
	fi
else
	echo "ok $((n = n + 1)) Prometheus scrape # SKIP prometheus not installed"
fi
stop_all

# Nothing is kept: the heap in use (valgrind's count of live blocks, exact
# to the byte) is the same after every round of bad clients as after the
# first, and everything is freed at exit.
# heap_in_use PID: "BYTES BLOCKS" of every live allocation, via vgdb (at
# most 60 s: vgdb reaches an idle process through ptrace).
heap_in_use() {
	timeout 60 vgdb --pid="$1" v.set gdb_output -c leak_check summary 2>&1 | awk '
		/(definitely|indirectly|possibly) lost:|still reachable:/ {
			s = $0; sub(/.*: /, "", s); gsub(/,/, "", s)
			n = split(s, f, " "); b += f[1]
			for (i = 1; i < n; i++) if (f[i] == "in") k += f[i + 1]
			seen++
		}
		END { if (seen == 4) print b, k; else print "none" }'
}
# heap_settled PID: heap_in_use once two readings a second apart agree
# (the exporter may still be closing the last connections), or "none".
heap_settled() {
	_hs_prev=$(heap_in_use "$1")
	for _hs_i in 1 2 3 4 5 6 7 8 9 10; do
		sleep 1
		_hs_now=$(heap_in_use "$1")
		[ "$_hs_now" = "$_hs_prev" ] && [ "$_hs_now" != none ] && { echo "$_hs_now"; return; }
		_hs_prev=$_hs_now
	done
	echo none
}
if command -v valgrind >/dev/null && command -v vgdb >/dev/null; then
	vport=$(free_port)
	valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=9 \
		"$exporter" --web.listen-address="127.0.0.1:$vport" --web.timeout=3 --processes=top=3 \
		> "$work/valgrind.log" 2>&1 &
	vg=$!
	track $vg
	wait_for 30 hget "$vport" /
	rc=0 heap=
	for round in 1 2 3; do
		"$here"/build/http-check -t 3 -n 100 127.0.0.1 "$vport" > "$work/out" 2>&1 ||
			{ rc=1; nest < "$work/out"; }
		heap="$heap$(heap_settled $vg | tr ' ' /) "
	done
	kill $vg; wait $vg; vrc=$?
	pids=
	set -- $heap
	diag "heap in use after rounds 1-3 (bytes/blocks): $*"
	[ $rc = 0 ] && [ $vrc = 0 ] && [ "$1" != none ] && [ "$1" = "${1%/0}" ] &&
		[ "$2" = "$1" ] && [ "$3" = "$1" ] ||
		{ rc=1; grep '^==' "$work/valgrind.log" | nest; }
	t $rc "under valgrind: no memory errors, no leaks (exit $vrc), heap in use the same after every round"
else
	echo "ok $((n = n + 1)) valgrind # SKIP valgrind not installed"
fi

# The exporter built with fake-nl.c (a steady node: package 15 W, dram
# 5 W, a pod of 6 W holding a container of 4 W) and once more with a
# model node (20 W, idle 5 W), scraped by a real Prometheus: every query
# of the Grafana dashboard and Kepler's names (--compat kepler) against
# the node, cgroup and process series the host has no module for.
fakenl=$here/build/joules-exporter-fakenl
dash=$top/packaging/grafana/joules.json
if [ -x "$fakenl" ] && command -v prometheus >/dev/null && command -v jq >/dev/null; then
	rc=0
	exporter_was=$exporter exporter=$fakenl
	start_exporter --compat=kepler --compat.node-name=fake-rapl --compat.window=1 \
		--processes=top=5 || rc=1
	port_rapl=$port pid_rapl=$exp_pid
	JOULES_FAKE_NL=model start_exporter --compat=kepler --compat.node-name=fake-model \
		--compat.window=1 || rc=1
	port_model=$port
	exporter=$exporter_was
	hget "$port_rapl" /metrics > "$work/fake-rapl.txt" || rc=1
	hget "$port_model" /metrics > "$work/fake-model.txt" || rc=1
	for f in "$work"/fake-rapl.txt "$work"/fake-model.txt; do
		{ ! command -v promtool >/dev/null || promtool check metrics < "$f" > "$work/lint" 2>&1; } ||
			{ rc=1; nest < "$work/lint"; }
	done
	grep -q '^kepler_node_cpu_joules_total{zone="package",node_name="fake-rapl"} ' "$work/fake-rapl.txt" &&
		grep -q '^kepler_node_cpu_idle_joules_total{zone="model",node_name="fake-model"} ' "$work/fake-model.txt" &&
		grep -q '^joules_cgroup_energy_joules_total{cgroup="/system.slice/sshd.service",kind="service"} ' "$work/fake-rapl.txt" || rc=1
	t $rc "fake-netlink exporters (RAPL and model nodes) with --compat kepler: series there, promtool clean"
	pport=$(free_port)
	if start_prometheus "$work/prom-fake" "$pport" "127.0.0.1:$port_rapl 127.0.0.1:$port_model"; then
		# Enough samples for rate() over 1m, and several windows of watts.
		wait_for 40 sh -c "n=\$(. '$here/lib.sh'; here='$here'; prom_query $pport 'min(count_over_time(kepler_node_cpu_watts[1m]))'); [ \"\${n:-0}\" -ge 8 ]"
		dashboard_queries "$dash" > "$work/dash.q"
		queries_with_series "$pport" < "$work/dash.q"; rc=$?
		[ "$qn" -ge 15 ] || rc=1
		t $rc "Grafana dashboard: all $qn panel queries run in Prometheus and return series"
		printf '%s\n' \
			'rate(kepler_container_cpu_joules_total[1m])' \
			'sum by (zone) (rate(kepler_node_cpu_joules_total[1m]))' \
			'sum by (pod_id) (rate(kepler_pod_cpu_joules_total[1m]))' \
			'kepler_container_cpu_watts' \
			'sum by (zone) (kepler_node_cpu_watts)' \
			'sum by (pod_id) (kepler_pod_cpu_watts)' \
			'rate(kepler_node_cpu_active_joules_total[1m])' \
			'kepler_node_cpu_idle_watts' \
			'kepler_node_cpu_usage_ratio' \
			'rate(kepler_process_cpu_joules_total[1m])' \
			'kepler_process_cpu_watts' \
			'rate(kepler_process_cpu_seconds_total[1m])' > "$work/kepler.q"
		queries_with_series "$pport" < "$work/kepler.q"
		t $? "Kepler's names: all $qn queries (rate, sum by zone and pod_id, watts) return series"
		# rate() of the counters (over 5 s: 1m would reach back before the
		# first sample) and the exporter's watts against the fake node's power.
		v1=$(prom_query "$pport" 'sum(rate(kepler_node_cpu_joules_total{zone="package"}[5s]))')
		v2=$(prom_query "$pport" 'sum(kepler_node_cpu_watts{zone="package"})')
		v3=$(prom_query "$pport" 'sum(kepler_node_cpu_watts{zone="model"})')
		v4=$(prom_query "$pport" 'sum(kepler_node_cpu_idle_watts{zone="model"})')
		v5=$(prom_query "$pport" 'sum(kepler_pod_cpu_watts{zone="package"})')
		v6=$(prom_query "$pport" 'sum(rate(kepler_pod_cpu_joules_total{zone="package"}[5s]))')
		diag "package: rate() ${v1:-none} W, watts ${v2:-none} W (15); model node ${v3:-none} W (20), idle ${v4:-none} W (5); pod package: rate() ${v6:-none} W, watts ${v5:-none} W (4.5)"
		near() { awk -v a="${1:-0}" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 0.05 * b) }'; }
		near "$v1" 15 && near "$v2" 15 && near "$v3" 20 && near "$v4" 5 && near "$v5" 4.5 && near "$v6" 4.5
		t $? "Kepler watts and rate() of Kepler's counters match the fake node's power within 5%"
		# Its memory after a minute of scrapes, for the DaemonSet's limit below.
		set -- $(mem_kb $pid_rapl); hwm_fake=$2
		diag "fake-netlink exporter with --compat kepler --processes=top=5: RSS $1 kB, peak $2 kB"
	else
		nest < "$work/prom-fake/prometheus.log"
		t 1 "Prometheus starts (fake-netlink exporters)"
		t 1 "Kepler queries"
		t 1 "Kepler values"
	fi
	stop_all
else
	for what in "fake-netlink exporters" "dashboard queries" "Kepler queries" "Kepler values"; do
		echo "ok $((n = n + 1)) $what # SKIP needs build/joules-exporter-fakenl (libmicrohttpd-dev), prometheus and jq"
	done
fi

# packaging/kubernetes without a cluster: yamllint, and every command,
# option, port and capability the manifests use against the built exporter;
# the memory limit against the peak RSS measured above.
peak=${hwm5:-0}
[ "${hwm_fake:-0}" -gt "$peak" ] && peak=$hwm_fake
"$here"/k8s-check.sh "$exporter" "$peak" > "$work/out" 2>&1; rc=$?
nest < "$work/out"
if [ $rc = 4 ]; then
	echo "ok $((n = n + 1)) packaging/kubernetes # SKIP $(sed -n 's/^1\.\.0 # SKIP //p' "$work/out")"
else
	t $rc "packaging/kubernetes: yamllint, commands, options, ports, capabilities, memory limit (k8s-check.sh)"
fi

# Flags: errors say why.
"$exporter" --web.listen-address=nonsense > "$work/out" 2>&1; rc=$?
[ $rc = 2 ] && grep -q "bad --web.listen-address 'nonsense'" "$work/out"; r1=$?
"$exporter" --processes=top=5000 > "$work/out" 2>&1; rc=$?
[ $rc = 2 ] && grep -q "at most top=1000" "$work/out"; r2=$?
"$exporter" --cgroups=depth=x > "$work/out" 2>&1; rc=$?
[ $rc = 2 ] && grep -q "bad --cgroups 'depth=x' (all, off or depth=N)" "$work/out" || r2=1
"$exporter" --cgroups.match='(' > "$work/out" 2>&1; rc=$?
[ $rc = 2 ] && grep -q "bad --cgroups.match '(': " "$work/out" || r2=1
for o in --compat.node-name=n --compat.window=9; do
	"$exporter" "$o" > "$work/out" 2>&1; rc=$?
	[ $rc = 2 ] && grep -q -- "${o%%=*} needs --compat=kepler" "$work/out" || r2=1
done
ss -Hltn | awk '{ print $4 }' | sed -n 's/^127\.0\.0\.1:\([0-9]*\)$/\1/p' | head -n 1 > "$work/busy"
busy=$(cat "$work/busy")
if [ -n "$busy" ]; then
	"$exporter" --web.listen-address="127.0.0.1:$busy" > "$work/out" 2>&1; rc=$?
	[ $rc = 1 ] && grep -q "cannot listen on 127.0.0.1:$busy: Address already in use" "$work/out"; r3=$?
else
	r3=0
fi
t $(( r1 | r2 | r3 )) "bad flags and a busy port are refused with the reason"

# joulesctl export: the same families; the textfile appears whole or not at all.
"$joulesctl" export --cgroups off > "$work/export-off.txt" 2>/dev/null
grep -q 'collector="node"' "$work/export-off.txt" && ! grep -q 'collector="cgroup"' "$work/export-off.txt"
roff=$?
"$joulesctl" export --processes top=3 > "$work/export.txt" 2> "$work/export.err"; rc=$?
[ $rc = 1 ] && [ $roff = 0 ] && grep -q '^joules_model_generation 3$' "$work/export.txt" &&
	grep -q 'node: joules module not loaded' "$work/export.err" &&
	{ ! command -v promtool >/dev/null || promtool check metrics < "$work/export.txt" >/dev/null 2>&1; }
t $? "joulesctl export: same metrics, exit 1 while a collector fails; --cgroups off"

tf=$work/textfile
mkdir -p "$tf"
"$joulesctl" export --textfile "$tf" --interval 0.1 2>/dev/null &
writer=$!
track $writer
# Read it while it is being replaced ten times a second: never partial.
bad=0 reads=0
end=$(($(date +%s) + 3))
while [ "$(date +%s)" -lt $end ]; do
	if [ -f "$tf/joules.prom" ]; then
		reads=$((reads + 1))
		tail -n 1 "$tf/joules.prom" | grep -q '^joules_exporter_scrape_errors_total{collector="cgroup"} [0-9]*$' || bad=$((bad + 1))
	fi
done
stop_all
mode=$(stat -c %a "$tf/joules.prom" 2>/dev/null)
left=$(ls -A "$tf" | grep -vc '^joules.prom$')
diag "textfile: $reads reads, $bad partial, mode $mode, $left stray files"
[ $reads -gt 10 ] && [ $bad = 0 ] && [ "$mode" = 644 ] && [ "$left" = 0 ]
t $? "joulesctl export --textfile: atomic replacement, mode 0644, no stray temporary files"

# The systemd unit: valid, and hardened (systemd's exposure score <= 2.0).
if command -v systemd-analyze >/dev/null; then
	mkdir -p "$work/unit" "$work/man/man8"
	sed "s|/usr/local/bin/joules-exporter|$exporter|" "$top/packaging/joules-exporter.service" \
		> "$work/unit/joules-exporter.service"
	cp "$top/Documentation/man/joules-exporter.8" "$work/man/man8/"
	MANPATH=$work/man systemd-analyze verify "$work/unit/joules-exporter.service" > "$work/out" 2>&1; rc=$?
	nest < "$work/out"
	score=$(systemd-analyze security --offline=yes "$work/unit/joules-exporter.service" 2>/dev/null |
		sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
	awk -v s="${score:-99}" 'BEGIN { exit !(s <= 2.0) }'; rc2=$?
	t $(( rc | rc2 )) "packaging/joules-exporter.service verifies, exposure ${score:-unknown} <= 2.0"
else
	echo "ok $((n = n + 1)) systemd unit # SKIP systemd-analyze not installed"
fi

echo "# exporter tests: $((n - failed)) passed, $failed failed"
[ $failed = 0 ]
