#!/bin/sh
# joules-meterd feeding the module from a real SNMP agent: Debian's snmpd
# on the guest's 127.0.0.1 serves a Raritan PDU outlet's power from a file.
# The module takes the readings (wallmeter/status, readings), a burner is
# charged "meter", the node's power is the PDU's (60 W, then 180 W), a
# PDU that stops answering makes the meter silent and its return resumes
# it, and a module reload under the running daemon is fed again.
. /lib/joules/lib.sh
n=0
failed=0
t() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; failed=1; fi; }
diag() { echo "# $*"; }
echo "TAP version 13"
if ! command -v joules-meterd >/dev/null || ! command -v snmpd >/dev/null ||
	! [ -x /lib/joules/pdu-handler.sh ]; then
	echo "1..0 # SKIP joules-meterd, snmpd or the PDU handler not in the initramfs"
	exit 4
fi
sys=/sys/kernel/joules
port=16161
conf=/tmp/meterd.conf
meterd=
burner=
cleanup() {
	[ -z "$meterd" ] || kill "$meterd" 2>/dev/null
	[ -z "$burner" ] || kill "$burner" 2>/dev/null
	# The PDU first: a bare wait would wait for snmpd's time bound.
	joules_pdu_stop
	wait 2>/dev/null
	# Out of force before the next test.
	echo 100 > $sys/wallmeter/timeout_ms 2>/dev/null
	sleep 1
	echo 30000 > $sys/wallmeter/timeout_ms 2>/dev/null
}
trap cleanup EXIT
# node_uj: the node's energy; meter_uj: the meter's total (joulesctl node).
node_uj() { joulesctl node 2>/dev/null | awk '$1 == "energy_uj:" { print $2 }'; }
# wait_status PATTERN SECONDS
wait_status() {
	i=0
	while ! grep -q "$1" $sys/wallmeter/status; do
		i=$((i + 1))
		[ $i -lt $(($2 * 5)) ] || return 1
		sleep 0.2
	done
}

echo "1..10"
joules_pdu_watts 60
joules_pdu_start $port
joules_meterd_conf $conf pdu-guest 0.5 $port
joules_pdu_wait $conf
rc=$?
[ $rc = 0 ] || { diag "snmpd log:"; sed 's/^/# /' /tmp/snmpd.log; }
t $rc "the simulated PDU answers joules-meterd --once"

joules-meterd -c $conf > /tmp/meterd.log 2>&1 &
meterd=$!
wait_status '^pdu-guest$' 20
rc=$?
[ $rc = 0 ] || { diag "status: $(cat $sys/wallmeter/status)"; sed 's/^/# /' /tmp/meterd.log; }
t $rc "the module's wall meter is joules-meterd's (wallmeter/status)"

# A burner: charged by the meter.
sh -c 'while :; do :; done' &
burner=$!
r0=$(cat $sys/wallmeter/readings)
sleep 3
r1=$(cat $sys/wallmeter/readings)
t $([ "$r1" -ge $((r0 + 3)) ] && echo 0 || echo 1) "readings come at the meter's rate ($r0 -> $r1 in 3 s)"
grep -q '^source: .*meter' /proc/energy/$burner
t $? "a burner is charged by the meter ($(grep '^source:' /proc/energy/$burner))"

# The node's power follows the PDU's: 60 W, then 180 W. Rates over 6 s of
# the guest's own clock (a busy host stretches sleeps, not the rate); the
# node is charged per tick and set right per reading, so at a steady power
# each end of a span is off by at most a reading (0.5 s): 2 x 0.5 / 6 =
# 17%, checked within 20%.
up() { awk '{ print $1 }' /proc/uptime; }
rate() { awk -v e="$1" -v t0="$2" -v t1="$3" 'BEGIN { printf "%.1f", e / 1e6 / (t1 - t0) }'; }
within() { awk -v v="$1" -v w="$2" 'BEGIN { exit !(v >= w * 0.8 && v <= w * 1.2) }'; }
sleep 2
a=$(node_uj); ta=$(up)
sleep 6
b=$(node_uj); tb=$(up)
joules_pdu_watts 180
sleep 3
c=$(node_uj); tc=$(up)
sleep 6
d=$(node_uj); td=$(up)
w1=$(rate $((b - a)) "$ta" "$tb")
w2=$(rate $((d - c)) "$tc" "$td")
within "$w1" 60
t $? "node power at the PDU's 60 W: $w1 W"
within "$w2" 180
t $? "node power at the PDU's 180 W: $w2 W"

# The PDU stops answering: the meter goes silent in the module, then resumes.
echo 1500 > $sys/wallmeter/timeout_ms
joules_pdu_stop
wait_status '^silent: pdu-guest' 20
t $? "a PDU that stops answering: the meter is silent ($(cat $sys/wallmeter/status))"
joules_pdu_start $port
wait_status '^pdu-guest$' 30
t $? "the PDU back: the meter is fed again"
echo 30000 > $sys/wallmeter/timeout_ms

# The module reloaded under the running daemon.
kill "$burner"
wait "$burner" 2>/dev/null
burner=
joules_unload && joules_load
t $? "module reloaded under the running daemon"
wait_status '^pdu-guest$' 30
rc=$?
[ $rc = 0 ] || { diag "status: $(cat $sys/wallmeter/status)"; tail -n 20 /tmp/meterd.log | sed 's/^/# /'; }
t $rc "joules-meterd feeds the reloaded module"
exit $failed
