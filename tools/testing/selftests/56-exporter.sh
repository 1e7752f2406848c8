#!/bin/sh
# joules-exporter and `joulesctl export` against the real module: every
# family agrees with the module's own numbers (netlink, /proc/energy, a
# cgroup's energy.stat), absent hardware stays absent, a removed cgroup
# stops being exported, an unprivileged exporter reports the missing
# privilege instead of zeros, a module reload is noticed and the exporter
# keeps serving.
#
# With jexporter_e2e=PORT,CTLPORT on the kernel command line (set by
# tools/testing/exporter/e2e.sh through run-qemu.sh) it is instead the
# guest half of the end-to-end test: network up, a burner in a container's
# cgroup and the exporter on PORT, and a control port for the host (see
# e2e_guest below).
. /lib/joules/lib.sh
n=0
failed=0
t() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; failed=1; fi; }
echo "TAP version 13"
if ! command -v joules-exporter >/dev/null; then
	echo "1..0 # SKIP joules-exporter not installed (libmicrohttpd-dev missing at build time)"
	exit 4
fi
sys=/sys/kernel/joules
# 10 W per busy CPU, 5 W idle: a burner's power is known.
COEF="10000000 0 0 0 0 5000000"
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	for p in $pids; do wait "$p" 2>/dev/null; done
	pids=
}
trap cleanup EXIT

ip link set lo up 2>/dev/null

# get PORT PATH [ACCEPT]: the body on stdout; fails unless the status is
# 200. busybox nc, not wget: the static wget crashes in the guest, which
# has no NSS setup.
get() {
	{
		printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n' "$2"
		[ -z "${3:-}" ] || printf 'Accept: %s\r\n' "$3"
		printf '\r\n'
	} | timeout 20 nc 127.0.0.1 "$1" | tr -d '\r' > /tmp/http.$$ || return 1
	head -n 1 /tmp/http.$$ | grep -q '^HTTP/1\.[01] 200 ' || return 1
	sed '1,/^$/d' /tmp/http.$$
}
# scrape PORT [ACCEPT]: the exposition on stdout.
scrape() { get "$1" /metrics "${2:-}"; }
# val FILE SERIES: the value of the series (name and labels exactly).
val() { awk -v s="$2" '$1 == s { print $2; f = 1 } END { exit !f }' "$1"; }
# le A B [C]: A <= B (<= C), as numbers.
le() { awk -v a="$1" -v b="$2" -v c="${3:-}" 'BEGIN { exit !(a + 0 <= b + 0 && (c == "" || b + 0 <= c + 0)) }'; }
# Energy in joules of a /proc/energy file ("" if unreadable).
pid_j() { awk '/^energy_uj:/ { printf "%.6f\n", $2 / 1e6 }' "/proc/energy/$1" 2>/dev/null; }
node_j() { joulesctl node 2>/dev/null | awk '$1 == "energy_uj:" { printf "%.6f\n", $2 / 1e6 }'; }
up() { get "$1" / >/dev/null 2>&1; }
wait_up() {
	i=0
	while ! up "$1"; do
		i=$((i + 1)); [ $i -gt 100 ] && return 1; sleep 0.1
	done
}
set_model() {
	echo model > $sys/source && echo "$COEF" > $sys/model/coefficients
}
# A docker-named cgroup for a burner: what container_id, runtime and kind come
# from; under system.slice, where Docker puts it (--compat=kepler takes
# containers only under a runtime's top-level cgroup).
CGROOT=/sys/fs/cgroup
CTRID=e2e0000000000000000000000000000000000000000000000000000000000056
CGREL=system.slice/docker-$CTRID.scope
mount_cgroup2() {
	grep -q " $CGROOT cgroup2 " /proc/mounts || mount -t cgroup2 none $CGROOT
}
# Energy in joules of a cgroup's energy.stat ("" if unreadable).
cg_j() { awk '/^energy_uj:/ { printf "%.6f\n", $2 / 1e6 }' "/proc/energy/cgroup/$1/energy.stat" 2>/dev/null; }

# The guest half of tools/testing/exporter/e2e.sh.
e2e_guest() {
	port=${1%,*}
	ctl=${1#*,}
	echo "1..1"
	# The NIC's driver from the booted kernel's own modules (mkinitramfs).
	if [ -f /lib/joules/net/order ]; then
		while read -r m; do insmod "/lib/joules/net/$m" 2>/dev/null; done < /lib/joules/net/order
	fi
	i=0
	while ! [ -d /sys/class/net/eth0 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	ip link set eth0 up && ip addr add 10.0.2.15/24 dev eth0 || { t 1 "network up"; return 1; }
	set_model || { t 1 "model coefficients"; return 1; }
	mount_cgroup2 && mkdir -p "$CGROOT/$CGREL" || { t 1 "cgroup2 and $CGREL"; return 1; }
	sh -c 'while :; do :; done' &
	burner=$!
	pids="$pids $burner"
	# The burner is the container's only task.
	echo "$burner" > "$CGROOT/$CGREL/cgroup.procs" || { t 1 "burner into $CGREL"; return 1; }
	# Every address of the guest: QEMU forwards to 10.0.2.15. Kepler's
	# names too, for e2e.sh to query on the module's series.
	joules-exporter --web.listen-address=":$port" --processes=top=5 --web.timeout=5 \
		--compat=kepler --compat.window=1 \
		> /tmp/exporter.log 2>&1 &
	exporter=$!
	pids="$pids $exporter"
	wait_up "$port" || { cat /tmp/exporter.log; t 1 "exporter up"; return 1; }
	# One command per connection; the host says "done" at the end.
	cat > /tmp/e2e-ctl.sh <<'EOF'
#!/bin/sh
read -r cmd arg
case $cmd in
info) echo "burner $(cat /tmp/e2e-burner) exporter $(cat /tmp/e2e-exporter) cgroup /$(cat /tmp/e2e-cgroup)" ;;
power)
	# The burner's cgroup's power from its energy.stat, and the burner's
	# from its own energy file, over ARG seconds.
	p=$(cat /tmp/e2e-burner)
	f=/proc/energy/cgroup/$(cat /tmp/e2e-cgroup)/energy.stat
	c0=$(sed -n 's/^energy_uj: //p' $f); e0=$(sed -n 's/^energy_uj: //p' /proc/energy/$p)
	t0=$(cut -d' ' -f1 /proc/uptime)
	sleep "$arg"
	c1=$(sed -n 's/^energy_uj: //p' $f); e1=$(sed -n 's/^energy_uj: //p' /proc/energy/$p)
	t1=$(cut -d' ' -f1 /proc/uptime)
	awk -v c0="$c0" -v c1="$c1" -v e0="$e0" -v e1="$e1" -v t0="$t0" -v t1="$t1" \
		'BEGIN { printf "power %.6f %.6f over %.2f s\n", (c1 - c0) / 1e6 / (t1 - t0), (e1 - e0) / 1e6 / (t1 - t0), t1 - t0 }' ;;
reload)
	# The module's counters restart from zero; the model is set again.
	. /lib/joules/lib.sh
	if joules_unload && joules_load && echo model > /sys/kernel/joules/source &&
		cat /tmp/e2e-coef > /sys/kernel/joules/model/coefficients; then
		echo reloaded
	else
		echo "reload failed"
	fi ;;
mem) awk '/^VmRSS/ { r = $2 } /^VmHWM/ { h = $2 } END { print "mem", r, h }' /proc/$(cat /tmp/e2e-exporter)/status ;;
alive) kill -0 "$(cat /tmp/e2e-exporter)" && echo alive || echo dead ;;
done) touch /tmp/e2e-done; echo bye ;;
*) echo "unknown '$cmd'" ;;
esac
EOF
	chmod 0755 /tmp/e2e-ctl.sh
	echo "$COEF" > /tmp/e2e-coef
	echo "$burner" > /tmp/e2e-burner
	echo "$exporter" > /tmp/e2e-exporter
	echo "$CGREL" > /tmp/e2e-cgroup
	rm -f /tmp/e2e-done
	echo "# e2e: exporter on :$port (pid $exporter), burner pid $burner in /$CGREL, control on :$ctl"
	# Bounded even if the host goes away: at most 15 minutes.
	start=$(cut -d. -f1 /proc/uptime)
	while ! [ -f /tmp/e2e-done ] && [ $(($(cut -d. -f1 /proc/uptime) - start)) -lt 900 ]; do
		timeout 60 nc -l -p "$ctl" -e /tmp/e2e-ctl.sh 2>/dev/null
	done
	kill -0 "$exporter"; rc=$?
	sed 's/^/# exporter: /' /tmp/exporter.log | head -n 40
	[ -f /tmp/e2e-done ] && [ $rc = 0 ]; t $? "e2e guest: the host finished, the exporter served throughout"
	cleanup
	joules_unload
	return $failed
}

e2e=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^jexporter_e2e=//p')
if [ -n "$e2e" ]; then
	e2e_guest "$e2e"
	exit $?
fi

echo "1..14"
joules_load || { echo "# cannot load the module"; exit 1; }
set_model; t $? "model source, coefficients set"
mount_cgroup2 && mkdir -p "$CGROOT/$CGREL"
sh -c 'while :; do :; done' &
burner=$!
pids="$pids $burner"
echo "$burner" > "$CGROOT/$CGREL/cgroup.procs"
P=9764
joules-exporter --web.listen-address=127.0.0.1:$P --processes=top=5 --web.timeout=3 \
	> /tmp/exporter.log 2>&1 &
exporter=$!
pids="$pids $exporter"
wait_up $P; t $? "exporter serving on 127.0.0.1:$P"
sleep 2

# Sandwiched between the module's own numbers read before and after.
n0=$(node_j); b0=$(pid_j $burner); c0=$(cg_j $CGREL)
scrape $P > /tmp/m1
n1=$(node_j); b1=$(pid_j $burner); c1=$(cg_j $CGREL)
ok=0
[ "$(val /tmp/m1 joules_module_loaded)" = 1 ] || ok=1
grep -q "^joules_module_info{version=\"$(cat $sys/version)\",abi_version=\"$(cat $sys/abi_version)\",netlink_version=\"1\"} 1$" /tmp/m1 || ok=1
ne=$(val /tmp/m1 'joules_node_energy_joules_total{source="model"}') || ok=1
echo "# node energy: netlink $n0 <= exported $ne <= netlink $n1 J"
le "$n0" "$ne" "$n1" || ok=1
ni=$(val /tmp/m1 'joules_node_idle_energy_joules_total{source="model"}') && le 0 "$ni" "$ne" || ok=1
val /tmp/m1 joules_node_cpu_seconds_total >/dev/null || ok=1
lt=$(val /tmp/m1 joules_module_load_time_seconds) && le "$lt" "$(date +%s)" || ok=1
t $ok "module and node families agree with netlink GET_NODE"

# QEMU has no RAPL: no domain series, the meter absent with the module's reason.
ok=0
! grep -q '^joules_node_rapl_energy' /tmp/m1 || ok=1
reason=$(sed -n 's/^absent: //p' $sys/rapl/status)
grep -qF "joules_meter_present{reason=\"$reason\"} 0" /tmp/m1 || ok=1
! grep -q '^joules_meter_wraps' /tmp/m1 || ok=1
if [ "$(cat $sys/hw_counters)" = absent ]; then
	! grep -qE '^joules_node_(cpu_cycles|instructions|cache_misses)_total' /tmp/m1 || ok=1
else
	grep -q '^joules_node_cpu_cycles_total' /tmp/m1 || ok=1
fi
# The wall meter as wallmeter/status has it; its figures only once fed.
wall=$(cat $sys/wallmeter/status)
case $wall in
absent*)
	grep -qF "joules_wall_meter_present{reason=\"${wall#absent: }\"} 0" /tmp/m1 || ok=1
	! grep -q '^joules_wall_meter_energy_joules_total' /tmp/m1 || ok=1 ;;
*)
	grep -q '^joules_wall_meter_present{meter=' /tmp/m1 || ok=1
	grep -q '^joules_wall_meter_energy_joules_total ' /tmp/m1 || ok=1 ;;
esac
grep -q '^joules_exporter_collector_success{collector="wallmeter"} 1$' /tmp/m1 || ok=1
t $ok "absent meter and PMU are absent (meter: $reason), the wall meter as its status says ($wall)"

ok=0
[ "$(val /tmp/m1 joules_model_generation)" = "$(cat $sys/model/generation)" ] || ok=1
[ "$(val /tmp/m1 'joules_model_power_watts{term="cpu_time"}')" = 10 ] || ok=1
[ "$(val /tmp/m1 'joules_model_power_watts{term="idle"}')" = 5 ] || ok=1
t $ok "model generation and coefficients in watts"

ok=0
be=$(val /tmp/m1 "joules_process_energy_joules_total{pid=\"$burner\",comm=\"sh\"}") || ok=1
echo "# burner energy: /proc/energy $b0 <= exported $be <= /proc/energy $b1 J"
le "$b0" "$be" "$b1" || ok=1
val /tmp/m1 "joules_process_cpu_seconds_total{pid=\"$burner\",comm=\"sh\"}" >/dev/null || ok=1
np=$(grep -c '^joules_process_energy_joules_total' /tmp/m1)
seen=$(val /tmp/m1 joules_exporter_processes_seen)
[ "$np" -le 5 ] && [ "$seen" -ge "$np" ] || ok=1
sum=$(awk '/^joules_process_energy_joules_total/ { s += $2 } END { printf "%.6f", s }' /tmp/m1)
le "$sum" "$ne" || ok=1
echo "# $np process series of $seen processes, summing to $sum J of the node's $ne J"
t $ok "per-process: the burner's energy agrees with /proc/energy, top 5 only"

# The burner's container: energy.stat's numbers, the names from its path.
ok=0
labels="cgroup=\"/$CGREL\",kind=\"container\",runtime=\"docker\",container_id=\"$CTRID\""
ce=$(val /tmp/m1 "joules_cgroup_energy_joules_total{$labels}") || ok=1
echo "# burner's cgroup: energy.stat $c0 <= exported $ce <= energy.stat $c1 J"
le "$c0" "$ce" "$c1" || ok=1
# Hierarchical: the slice holds it, the root holds everything.
se=$(val /tmp/m1 'joules_cgroup_energy_joules_total{cgroup="/system.slice",kind="slice"}') && le "$ce" "$se" || ok=1
re=$(val /tmp/m1 'joules_cgroup_energy_joules_total{cgroup="/",kind="root"}') && le "$se" "$re" "$ne" || ok=1
val /tmp/m1 "joules_cgroup_cpu_seconds_total{$labels}" >/dev/null || ok=1
# An idle series only where idle energy is shared out (idle_split=1).
if [ "$(cat /sys/kernel/joules/idle_split)" = 1 ]; then
	val /tmp/m1 "joules_cgroup_idle_energy_joules_total{$labels}" >/dev/null || ok=1
elif val /tmp/m1 "joules_cgroup_idle_energy_joules_total{$labels}" >/dev/null; then
	echo "# an idle series without idle_split"; ok=1
fi
val /tmp/m1 "joules_cgroup_storage_read_bytes_total{$labels}" >/dev/null || ok=1
[ "$(val /tmp/m1 joules_exporter_cgroups_seen)" -ge 3 ] || ok=1
[ "$(val /tmp/m1 'joules_exporter_collector_success{collector="cgroup"}')" = 1 ] || ok=1
[ $ok = 0 ] || grep '^joules_cgroup_energy' /tmp/m1 | sed 's/^/# /'
t $ok "per-cgroup: the burner's container agrees with its energy.stat, names from its path"

# A removed cgroup is no longer exported; its energy stays in its parent.
ok=0
mkdir -p "$CGROOT/system.slice/short.scope" || ok=1
sh -c "echo \$\$ > $CGROOT/system.slice/short.scope/cgroup.procs; i=0; while [ \$i -lt 20000 ]; do i=\$((i + 1)); done" || ok=1
sleep 1
scrape $P > /tmp/m5 || ok=1
se0=$(val /tmp/m5 'joules_cgroup_energy_joules_total{cgroup="/system.slice",kind="slice"}') || ok=1
sh0=$(val /tmp/m5 'joules_cgroup_energy_joules_total{cgroup="/system.slice/short.scope",kind="scope"}') || ok=1
for i in 1 2 3 4 5 6 7 8 9 10; do rmdir "$CGROOT/system.slice/short.scope" 2>/dev/null && break; sleep 0.2; done
! [ -d "$CGROOT/system.slice/short.scope" ] || ok=1
scrape $P > /tmp/m6 || ok=1
! grep -q 'short.scope' /tmp/m6 || ok=1
se1=$(val /tmp/m6 'joules_cgroup_energy_joules_total{cgroup="/system.slice",kind="slice"}') && le "$se0" "$se1" || ok=1
echo "# short.scope had $sh0 J; system.slice $se0 -> $se1 J after its removal"
t $ok "a removed cgroup is no longer exported, its parent keeps its energy"

scrape $P application/openmetrics-text > /tmp/m-om
tail -n 1 /tmp/m-om | grep -q '^# EOF$' && grep -q '^# TYPE joules_node_energy_joules counter$' /tmp/m-om
t $? "OpenMetrics when asked"

# Without privileges: the refusal is reported, never zeros.
su -s /bin/sh -c 'exec /usr/bin/joules-exporter --web.listen-address=127.0.0.1:9766 --processes=top=5' \
	nobody > /tmp/exporter-nobody.log 2>&1 &
nobody=$!
pids="$pids $nobody"
ok=0
wait_up 9766 || ok=1
scrape 9766 > /tmp/m2 || ok=1
! grep -q '^joules_node_' /tmp/m2 || ok=1
grep -q '^joules_exporter_collector_error{collector="node",reason="permission"} 1$' /tmp/m2 || ok=1
grep -q '^joules_exporter_collector_success{collector="node"} 0$' /tmp/m2 || ok=1
grep -q '^joules_exporter_collector_error{collector="process",reason="permission"} 1$' /tmp/m2 || ok=1
grep -q '^joules_exporter_collector_error{collector="cgroup",reason="permission"} 1$' /tmp/m2 || ok=1
! grep -q '^joules_cgroup_' /tmp/m2 || ok=1
! grep -q "joules_process_energy_joules_total{pid=\"$burner\"" /tmp/m2 || ok=1
grep -q 'level=error collector=node msg="GET_NODE: permission denied' /tmp/exporter-nobody.log || ok=1
grep -q '^joules_model_generation ' /tmp/m2 || ok=1
# The wall meter's figures need CAP_PERFMON, fed or not; its state does not.
grep -q '^joules_exporter_collector_error{collector="wallmeter",reason="permission"} 1$' /tmp/m2 || ok=1
grep -q '^joules_wall_meter_present' /tmp/m2 || ok=1
! grep -qE '^joules_wall_meter_(energy|pending|residual|window|power)_' /tmp/m2 || ok=1
[ $ok = 0 ] || { sed 's/^/# nobody: /' /tmp/exporter-nobody.log; grep -E '^joules_(exporter_collector|node)' /tmp/m2 | sed 's/^/# /'; }
t $ok "unprivileged: node, others' processes, cgroups and the wall meter's figures reported as permission errors, not zeros"
kill $nobody

# A reload: counters restart from zero, the exporter notices and serves on.
ok=0
before=$ne
joules_unload || ok=1
scrape $P > /tmp/m3 || ok=1
[ "$(val /tmp/m3 joules_module_loaded)" = 0 ] || ok=1
grep -q '^joules_exporter_collector_error{collector="node",reason="module_not_loaded"} 1$' /tmp/m3 || ok=1
! grep -q '^joules_node_' /tmp/m3 || ok=1
joules_load && set_model || ok=1
sleep 1
scrape $P > /tmp/m4 || ok=1
after=$(val /tmp/m4 'joules_node_energy_joules_total{source="model"}') || ok=1
echo "# node energy before the reload $before J, after $after J"
le "$after" "$before" || ok=1
[ "$(val /tmp/m4 joules_exporter_module_reloads_total)" = 1 ] || ok=1
grep -q 'level=info collector=node msg="ok again"' /tmp/exporter.log || ok=1
t $ok "module reload: noticed, counters reset, still serving"

# joulesctl export: the same families, to a textfile.
rm -rf /tmp/tf && mkdir /tmp/tf
joulesctl export --textfile /tmp/tf > /tmp/export.out 2>&1; rc=$?
ok=0
[ $rc = 0 ] || { ok=1; sed 's/^/# /' /tmp/export.out; }
grep -q '^joules_node_energy_joules_total{source="model"} ' /tmp/tf/joules.prom || ok=1
grep -q "^joules_cgroup_energy_joules_total{cgroup=\"/$CGREL\"," /tmp/tf/joules.prom || ok=1
[ "$(ls -A /tmp/tf)" = joules.prom ] || ok=1
t $ok "joulesctl export --textfile writes the node and cgroup families"

kill $exporter; wait $exporter; rc=$?
grep -q 'msg="stopping on SIGTERM"' /tmp/exporter.log
t $(( rc | $? )) "exporter stops on SIGTERM (exit $rc)"
[ $failed = 0 ] || sed 's/^/# exporter: /' /tmp/exporter.log | head -n 40

cleanup
for i in 1 2 3 4 5 6 7 8 9 10; do rmdir "$CGROOT/$CGREL" 2>/dev/null && break; sleep 0.2; done
rmdir "$CGROOT/system.slice" 2>/dev/null
# Leave the module as the next test expects to find it: freshly loaded.
joules_unload
t $? "unload"
exit $failed
