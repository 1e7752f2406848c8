#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# End to end: joules-exporter in a QEMU guest with the module, a real
# Prometheus (Debian's package) on the host scraping it every second
# through a port QEMU forwards from 127.0.0.1, PromQL over Prometheus'
# HTTP API.
#
#   e2e.sh [KERNEL-NAME]   (a name of tools/testing/kernels.conf; default:
#                           the first one installed)
#
# Checks: promtool on the real exposition; the rate() of energy of a
# burner's cgroup (named like a docker container) in Prometheus within 5%
# of its power from the cgroup's energy.stat, and the burner's own within
# 5% of its /proc/energy/PID; a module reload
# is a counter reset to Prometheus, with no impossible rate; bad HTTP
# clients (huge headers, 500 connections, unfinished requests) leave the
# exporter serving with bounded memory. Everything started is stopped; all
# listeners are on 127.0.0.1 (the guest is isolated: restrict=on).
# Prints TAP; exit 0 when everything passed, 4 when it cannot run here.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
testing=$top/tools/testing
work=$(mktemp -d)
. "$here"/lib.sh
qemu_pid=
finish() {
	[ -n "$qemu_pid" ] && kill "$qemu_pid" 2>/dev/null && wait "$qemu_pid" 2>/dev/null
	stop_all
	rm -rf "$work"
}
trap finish EXIT
trap 'exit 1' INT TERM

echo "TAP version 13"
skip() { echo "1..0 # SKIP $*"; exit 4; }
for c in qemu-system-x86_64 prometheus promtool busybox; do
	command -v $c >/dev/null || skip "$c not installed"
done
[ -x "$top/user/build/joules-exporter" ] || skip "joules-exporter not built (make user; needs libmicrohttpd-dev)"
[ -f "$testing/selftests/build/56-exporter.sh" ] || skip "selftests not built (make tests)"
[ -x "$here/build/http-check" ] || skip "make -C tools/testing/exporter first"
jk_testing=$testing
. "$testing"/kernels.sh
name=${1:-$(jk_default)}
[ -n "$name" ] || skip "no kernel of kernels.conf is installed"
image=$(jk_image "$name")
kdir=$(jk_kdir "$name")
[ -n "$image" ] && [ -n "$kdir" ] || skip "kernel $name not installed"
echo "1..11"

"$testing"/build-module.sh "$kdir" "$work/mod" > "$work/build.log" 2>&1
t $? "module built for $name"

# The guest: 56-exporter.sh in its e2e role (exporter on 9764, control on 9765).
port=$(free_port)
ctlport=$(free_port)
while [ "$ctlport" = "$port" ]; do ctlport=$(free_port); done
timeout -k 10 1500 "$testing"/qemu/run-qemu.sh --mode tests --only '^56-exporter' \
	--kernel "$image" --modules "$work/mod" --timeout 1200 --log "$work/serial.log" \
	--hostfwd "tcp:127.0.0.1:$port-:9764" --hostfwd "tcp:127.0.0.1:$ctlport-:9765" \
	--append "jexporter_e2e=9764,9765" > "$work/qemu.out" 2>&1 &
qemu_pid=$!
# ctl COMMAND...: one line to the guest's control port, its answer back
# (tried again if no answer came: the guest listens between commands).
ctl() {
	for _try in 1 2 3 4 5; do
		_ans=$(echo "$*" | timeout 120 busybox nc 127.0.0.1 "$ctlport" 2>/dev/null)
		[ -n "$_ans" ] && { echo "$_ans"; return 0; }
		sleep 1
	done
	return 1
}
# Boot, or wait for another guest to finish first (run-qemu.sh's lock).
i=0
while ! ctl info > "$work/info" 2>/dev/null || ! grep -q '^burner ' "$work/info"; do
	i=$((i + 1))
	if ! kill -0 $qemu_pid 2>/dev/null || [ $i -gt 1200 ]; then
		break
	fi
	sleep 1
done
set -- $(cat "$work/info" 2>/dev/null)
burner=${2:-}
cgroup=${6:-}
[ -n "$burner" ] && [ -n "$cgroup" ] && hget "$port" / >/dev/null
t $? "guest booted, exporter reachable on 127.0.0.1:$port (burner pid $burner in $cgroup)"
if [ -z "$burner" ]; then
	diag "guest output:"; tail -n 40 "$work/serial.log" 2>/dev/null | nest; tail -n 5 "$work/qemu.out" | nest
	exit 1
fi

sleep 2
hget "$port" /metrics > "$work/metrics.txt" &&
	promtool check metrics < "$work/metrics.txt" > "$work/lint" 2>&1 &&
	grep -q '^joules_node_energy_joules_total{source="model"} ' "$work/metrics.txt" &&
	grep -q "^joules_process_energy_joules_total{pid=\"$burner\"," "$work/metrics.txt" &&
	grep -q "^joules_cgroup_energy_joules_total{cgroup=\"$cgroup\",kind=\"container\",runtime=\"docker\",container_id=\"[0-9a-f]\{64\}\"} " "$work/metrics.txt"
rc=$?
nest < "$work/lint"
[ $rc = 0 ] || grep -v '^#' "$work/metrics.txt" | head -n 40 | nest
t $rc "promtool check metrics passes on the module's real exposition"

pport=$(free_port)
start_prometheus "$work/prom" "$pport" "127.0.0.1:$port"
rc=$?
# Ten scrapes in before measuring.
wait_for 60 sh -c "n=\$(. '$here/lib.sh'; here='$here'; prom_query $pport 'count_over_time(joules_module_loaded[1m])'); [ \"\${n:-0}\" -ge 10 ]"
t $(( rc | $? )) "Prometheus on 127.0.0.1:$pport scrapes the guest every second"

# Every query of the Grafana dashboard on the module's real series. What
# the guest cannot have must return nothing (checked, not skipped): QEMU
# has no RAPL, the guest runs no pod and no systemd service, and nothing
# feeds its wall meter (no joules-meterd: the meter's figures are absent),
# so it has no static power estimate either (static_power is empty).
# Every other query must return series.
absent='joules_node_rapl_energy_joules_total|kind="pod"|kind="service"|joules_wall_meter_|joules_static_power_'
if command -v jq >/dev/null; then
	dashboard_queries "$top/packaging/grafana/joules.json" > "$work/dash.all"
	grep -Ev "$absent" "$work/dash.all" > "$work/dash.q"
	grep -E "$absent" "$work/dash.all" > "$work/dash.rapl"
	queries_with_series "$pport" < "$work/dash.q"; rc=$?
	dn=$qn
	while IFS= read -r q; do
		c=$(prom_json "$pport" "$q" | jq -r '.status + " " + (.data.result | length | tostring)' 2>/dev/null)
		[ "$c" = "success 0" ] || { diag "expected success and no series in the guest, got '$c': $q"; rc=1; }
	done < "$work/dash.rapl"
	t $rc "Grafana dashboard: $dn panel queries return series, $(grep -c . "$work/dash.rapl") (RAPL, pods, services, wall meter, static power) none in the guest"
else
	echo "ok $((n = n + 1)) dashboard queries # SKIP jq not installed"
fi

# Kepler's names: the guest's exporter runs with --compat=kepler
# (tools/testing/selftests/56-exporter.sh), so their absence is a failure.
if grep -q '^kepler_node_cpu_joules_total{' "$work/metrics.txt"; then
	printf '%s\n' \
		'rate(kepler_container_cpu_joules_total[1m])' \
		'sum by (zone) (rate(kepler_node_cpu_joules_total[1m]))' \
		'sum by (zone) (kepler_node_cpu_watts)' \
		'kepler_container_cpu_watts' \
		'kepler_node_cpu_usage_ratio' > "$work/kepler.q"
	queries_with_series "$pport" < "$work/kepler.q"; rc=$?
	# No pods in the guest: the pod queries must run and return nothing.
	for q in 'sum by (pod_id) (rate(kepler_pod_cpu_joules_total[1m]))' 'sum by (pod_id) (kepler_pod_cpu_watts)'; do
		[ "$(prom_json "$pport" "$q" | jq -r '.status + " " + (.data.result | length | tostring)')" = "success 0" ] ||
			{ diag "expected success and no series (no pod in the guest): $q"; rc=1; }
	done
	t $rc "Kepler's names on the module's series: node and container queries return series (zone model)"
else
	diag "no kepler_node_cpu_joules_total: 56-exporter.sh starts the exporter with --compat=kepler"
	t 1 "Kepler's names on the module's series"
fi

# Power from the energy files, measured in the guest over 20 s, against
# Prometheus' rate() over the same 20 s. The cgroup is selected by the
# labels its path gives (kind, container_id), not by the path alone.
set -- $(ctl power 20)
t1=$(date +%s.%N)
c_file=${2:-0}
p_file=${3:-0}
sleep 3
c_prom=$(prom_query "$pport" "rate(joules_cgroup_energy_joules_total{cgroup=\"$cgroup\",kind=\"container\",container_id!=\"\"}[20s])" "$t1")
p_prom=$(prom_query "$pport" "rate(joules_process_energy_joules_total{pid=\"$burner\"}[20s])" "$t1")
p_node=$(prom_query "$pport" "rate(joules_node_energy_joules_total[20s])" "$t1")
diag "burner's cgroup: ${c_file} W from its energy.stat, ${c_prom:-none} W from rate() in Prometheus"
diag "burner: ${p_file} W from /proc/energy/$burner, ${p_prom:-none} W from rate(); node ${p_node:-none} W"
within5() { awk -v a="$1" -v b="${2:-0}" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a > 1 && d <= 0.05 * a) }'; }
within5 "$c_file" "$c_prom"
t $? "the burner's cgroup's rate() in Prometheus is within 5% of its power from energy.stat"
within5 "$p_file" "$p_prom"
t $? "the burner's rate() in Prometheus is within 5% of its power from its energy file"

# A reload: a counter reset to Prometheus, never a negative or huge rate.
ctl reload > "$work/reload" 2>&1
diag "guest: $(cat "$work/reload")"
sleep 12
now=$(date +%s)
resets=$(prom_query "$pport" 'resets(joules_node_energy_joules_total[30s])' "$now")
max=$(prom_query "$pport" 'max_over_time(rate(joules_node_energy_joules_total[3s])[30s:1s])' "$now")
min=$(prom_query "$pport" 'min_over_time(rate(joules_node_energy_joules_total[3s])[30s:1s])' "$now")
reloads=$(prom_query "$pport" 'joules_exporter_module_reloads_total' "$now")
loads=$(prom_query "$pport" 'changes(joules_module_load_time_seconds[30s])' "$now")
diag "after the reload: resets ${resets:-none}, node power ${min:-none}..${max:-none} W, reloads_total ${reloads:-none}, load time changed ${loads:-none} times"
# Idle 5 W plus 10 W per busy CPU: 25 W is the most two CPUs can draw.
[ "${resets:-0}" -ge 1 ] && [ "${reloads:-0}" = 1 ] && [ "${loads:-0}" = 1 ] &&
	awk -v lo="${min:--1}" -v hi="${max:-1e9}" 'BEGIN { exit !(lo >= 0 && hi <= 25 * 1.1) }'
t $? "module reload: a counter reset in Prometheus, rate() stays within the physical bound"

# Bad clients through the forwarded port; the guest reports the memory.
# Emulated, with a burner on one of two CPUs: 500 scrapes may take minutes.
"$here"/build/http-check -t 5 -m 512 -n 500 -l 300 127.0.0.1 "$port" > "$work/http" 2>&1
rc=$?
nest < "$work/http"
set -- $(ctl mem)
rss=${2:-0} hwm=${3:-999999}
diag "exporter in the guest: RSS $rss kB, peak $hwm kB"
sleep 3
up=$(prom_query "$pport" 'up{job="joules"}')
alive=$(ctl alive)
[ $rc = 0 ] && [ "$hwm" -lt 32768 ] && [ "$up" = 1 ] && [ "$alive" = alive ]
t $? "bad clients: exporter serving (up=$up), memory bounded (peak $hwm kB < 32 MiB)"

ctl done > /dev/null || diag "the guest did not take 'done'"
i=0
while kill -0 $qemu_pid 2>/dev/null && [ $i -lt 120 ]; do sleep 1; i=$((i + 1)); done
if kill -0 $qemu_pid 2>/dev/null; then
	diag "the guest did not finish within 120 s of 'done'"
	kill $qemu_pid
fi
wait $qemu_pid
rc=$?
qemu_pid=
[ $rc = 0 ] || { tail -n 30 "$work/qemu.out" | nest; }
grep 'second boot' "$work/qemu.out" | nest
t $rc "guest finished cleanly (56-exporter in e2e role, dmesg clean)"
stop_all
echo "# e2e: $((n - failed)) passed, $failed failed"
[ $failed = 0 ]
