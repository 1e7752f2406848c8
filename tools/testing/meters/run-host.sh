#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Host tests of joules-meterd, no module needed (nothing is loaded into
# this machine's kernel; the feed's message is checked by test_meterd):
# the core's unit tests, the command backend with scripts, the SNMP
# backend against Debian's real snmpd on 127.0.0.1 (a pass_persist handler
# serves the PDU's OIDs from files this script writes), and the CSV read
# back by joules-train's own reader. Prints TAP; exit status 0 when
# everything passed, 4 when it could not run at all.
#
#   run-host.sh            (make -C tools/testing/meters check)
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
work=$(mktemp -d)
md=$top/user/build/joules-meterd
snmpd_pid=
agent=
# snmpd and the net-snmp tools keep state in a persistent directory: ours.
export SNMP_PERSISTENT_DIR="$work/snmp-persist" MIBS=

stop_snmpd() {
	if [ -n "$snmpd_pid" ]; then
		[ -n "$agent" ] && kill -CONT "$agent" 2>/dev/null
		kill "$snmpd_pid" 2>/dev/null
		_i=0
		while kill -0 "$snmpd_pid" 2>/dev/null && [ $_i -lt 50 ]; do sleep 0.1; _i=$((_i + 1)); done
		kill -9 "$snmpd_pid" 2>/dev/null
		wait "$snmpd_pid" 2>/dev/null
		snmpd_pid=
	fi
}
trap 'stop_snmpd; rm -rf "$work"' EXIT
trap 'exit 1' INT TERM

n=0
failed=0
t() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; failed=$((failed + 1)); fi
}
skip() { n=$((n + 1)); echo "ok $n $1 # SKIP $2"; }
diag() { echo "# $*"; }
nest() { sed 's/^/# /'; }

# A configuration file as the daemon wants it: 0600.
conf() {
	cat > "$work/$1"
	chmod 0600 "$work/$1"
}

# $1 = expected text, $2 = file: the file contains the text (else say so).
has() {
	grep -qF -- "$1" "$2" && return 0
	diag "expected '$1' in $(basename "$2"):"; nest < "$2"; return 1
}

# Milliseconds since the epoch.
now_ms() { date +%s%3N; }

echo "TAP version 13"
for f in "$md" "$here/build/test_meterd" "$here/build/test_vm" "$here/build/test_feed" \
	"$here/build/csv_check" "$here/build/qemu-system-x86_64"; do
	if ! [ -x "$f" ]; then
		echo "1..0 # SKIP $f not built (make -C tools/testing/meters)"
		exit 4
	fi
done
echo "1..39"

# ---- 1: the core's unit tests ----
"$here"/build/test_meterd > "$work/out" 2>&1; rc=$?
nest < "$work/out"; t $rc "core: configuration, sums, wraps, resets, refusals, METER_FEED message (test_meterd)"

"$here"/build/test_vm > "$work/out" 2>&1; rc=$?
nest < "$work/out"; t $rc "VM channel: the line, QEMU's and libvirt's command lines, the guest's input (test_vm)"

"$here"/build/test_feed > "$work/out" 2>&1; rc=$?
nest < "$work/out"; t $rc "feed: module absent, loaded, reloaded under the daemon, refused (test_feed)"

# ---- 3-5: the command line ----
"$md" --help > "$work/help" 2>&1; rc=$?
[ $rc = 0 ] && has "never taken from" "$work/help" && has "the command line" "$work/help" &&
	! grep -qi -- "--community\|--password\|--user" "$work/help"
t $? "--help: credentials only in the configuration file, no option for them"

"$md" --password x > "$work/out" 2>&1; rc=$?
[ $rc = 2 ] && has "invalid option '--password'" "$work/out"
t $? "a credential on the command line is a usage error"

conf bad.conf <<'EOF'
name = n
interval = 0.5
[command c]
command = echo 1
bogus = 2
EOF
"$md" -c "$work/bad.conf" --check > "$work/out" 2>&1; rc=$?
[ $rc = 1 ] && has "$work/bad.conf:5: unknown key 'bogus' (want command)" "$work/out"
t $? "a bad line: file:line and the reason, exit 1"

chmod 0644 "$work/bad.conf"
"$md" -c "$work/bad.conf" --check > "$work/out" 2>&1; rc=$?
[ $rc = 1 ] && has "readable by others: it holds credentials (chmod 0600" "$work/out"
t $? "a configuration readable by others is refused before it is read"

# ---- 7-15: the command backend ----
echo 250 > "$work/watts"
conf cmd.conf <<EOF
name = cmd-node
interval = 0.2
timeout = 1
[command psu]
command = cat '$work/watts'; echo power 50.25
EOF
"$md" -c "$work/cmd.conf" --once > "$work/out" 2>&1; rc=$?
[ $rc = 0 ] && has "psu	line 1	power	250" "$work/out" && has "psu	line 2	power	50.25" "$work/out" &&
	has "sum	-	power	300.25" "$work/out"
t $? "command: 'W' and 'power W' lines, summed"

# A counter of 1000 J a call that wraps at 4000 J: every reading is
# +1000 J, whatever the wrap; the mean power is 1000 J over the interval.
echo 0 > "$work/ctr"
cat > "$work/ctr.sh" <<EOF
#!/bin/sh
v=\$(( (\$(cat '$work/ctr') + 1000) % 4000 ))
echo \$v > '$work/ctr'
echo "energy \$v 4000"
EOF
chmod +x "$work/ctr.sh"
conf ctr.conf <<EOF
name = ctr-node
interval = 0.5
[command bmc]
command = '$work/ctr.sh'
EOF
"$md" -c "$work/ctr.conf" --no-feed --count 9 --csv "$work/ctr.csv" -v > "$work/out" 2>&1; rc=$?
# 9 readings: the first a baseline, then 8 of 1000 J each, two wraps among them.
rows=$(grep -c '^[0-9]' "$work/ctr.csv")
last=$(grep 'reading:' "$work/out" | tail -n 1)
[ $rc = 0 ] && [ "$rows" = 8 ] && has "energy counter wrapped at 4000 J" "$work/out" &&
	echo "$last" | grep -qF "8000000000 uJ" && ! grep -q refused "$work/out" ||
	{ diag "rows $rows, last '$last'"; nest < "$work/out"; false; }
t $? "command: an energy counter through two wraps adds exactly 8 x 1000 J"
# Each row's watts is 1000 J over the time between readings: 0.5 s, give
# or take how long the command took each time (a reading is stamped in
# the middle of its inputs' answers) and the scheduler on a busy host:
# 2000 W within 10% (the test above is the exact one).
awk -F, 'NR > 1 && ($2 < 1800 || $2 > 2200) { bad = 1; print "# bad row: " $0 } END { exit bad }' "$work/ctr.csv"
t $? "command: the counter's mean power in the CSV (2000 W within 10%)"

# Two inputs of one node; the second fails at its 2nd and 3rd reading:
# those intervals feed nothing (never the first input alone), the failure
# is logged once, and the next reading is a new baseline.
echo 0 > "$work/calls"
cat > "$work/flaky.sh" <<EOF
#!/bin/sh
c=\$((\$(cat '$work/calls') + 1))
echo \$c > '$work/calls'
[ \$c = 2 ] || [ \$c = 3 ] && exit 1
echo 50
EOF
chmod +x "$work/flaky.sh"
conf flaky.conf <<EOF
name = flaky-node
interval = 0.2
[command steady]
command = echo 100
[command flaky]
command = '$work/flaky.sh'
EOF
"$md" -c "$work/flaky.conf" --no-feed --count 5 --csv "$work/flaky.csv" -v > "$work/out" 2>&1; rc=$?
[ $rc = 0 ] && [ "$(tail -n +2 "$work/flaky.csv" | cut -d, -f2 | tr '\n' ' ')" = "150.000 150.000 150.000 " ] &&
	[ "$(grep -c "exited with status 1" "$work/out")" = 1 ] && has "[command flaky]: answers again" "$work/out" &&
	[ "$(grep -c "new baseline" "$work/out")" = 2 ] ||
	{ nest < "$work/out"; nest < "$work/flaky.csv"; false; }
t $? "an input failing feeds nothing (no partial sum), logged once, then a new baseline"

# systemctl stop: SIGTERM ends the wait for the next interval at once.
conf slow.conf <<EOF
name = slow
interval = 10
[command c]
command = echo 100
EOF
"$md" -c "$work/slow.conf" --no-feed > "$work/out" 2>&1 &
mdpid=$!
sleep 0.5
t0=$(now_ms)
kill -TERM $mdpid
wait $mdpid; rc=$?
dt=$(($(now_ms) - t0))
[ $rc = 0 ] && [ $dt -lt 1000 ] || diag "exit $rc after $dt ms"
t $? "SIGTERM during a 10 s interval: exit 0 at once ($dt ms)"

printf 'hello\n' > "$work/garbage"
conf garbage.conf <<EOF
name = g
[command junk]
command = cat '$work/garbage'
EOF
"$md" -c "$work/garbage.conf" --once > "$work/out" 2>&1; rc=$?
[ $rc = 1 ] && has "output line 1: want 'W', 'power W' or 'energy J [WRAP_J]'" "$work/out"
t $? "command: garbage output is a failed reading with the reason"

conf exit.conf <<'EOF'
name = g
[command fails]
command = echo 100; exit 3
EOF
"$md" -c "$work/exit.conf" --once > "$work/out" 2>&1; rc=$?
[ $rc = 1 ] && has "command exited with status 3" "$work/out"
t $? "command: a nonzero exit status is a failed reading"

# A command that hangs, with a child of its own: both killed at the timeout.
marker="sleep 29.$$"
conf hang.conf <<EOF
name = g
timeout = 0.3
[command hangs]
command = $marker & echo 100; wait
EOF
t0=$(now_ms)
"$md" -c "$work/hang.conf" --once > "$work/out" 2>&1; rc=$?
dt=$(($(now_ms) - t0))
sleep 0.2
left=$(pgrep -f "$marker" | wc -l)
[ $rc = 1 ] && has "command timed out after 300 ms (its process group killed)" "$work/out" &&
	[ "$dt" -lt 2000 ] && [ "$left" = 0 ] || diag "took $dt ms, $left left running"
t $? "command: a timeout kills the command's process group, bounded ($dt ms)"

echo 150000 > "$work/watts"
"$md" -c "$work/cmd.conf" --once > "$work/out" 2>&1; rc=$?
[ $rc = 1 ] && has "refused: input 1 'line 1': power 150000 refused: above max_power" "$work/out"
t $? "command: an absurd power (above max_power) is refused with the reason"

# ---- 16: the feed ----
# The daemon alone, its module absent or not: it never hangs on the feed
# and says what it could not do. (Nothing is loaded here; with the module
# loaded and root, the reading is fed.)
conf feed.conf <<EOF
name = feed-node
interval = 0.2
[command c]
command = echo 100
EOF
timeout 20 "$md" -c "$work/feed.conf" --count 3 > "$work/out" 2>&1; rc=$?
if grep -q "feed:" "$work/out"; then
	[ $rc = 0 ] && [ "$(grep -c "feed:" "$work/out")" = 1 ] && has "retrying every interval" "$work/out"
	t $? "feed without the module: said once, retried, the daemon goes on"
else
	[ $rc = 0 ]
	t $? "feed: the module took the readings"
fi


# ---- 17-33: SNMP against Debian's snmpd on 127.0.0.1 ----
snmpd=/usr/sbin/snmpd
if ! [ -x "$snmpd" ] || ! command -v snmpget >/dev/null; then
	for i in $(seq 17 33); do skip "snmp test $i" "no snmpd/snmpget (apt-get install snmpd snmp)"; done
	[ $failed = 0 ]; exit
fi

port=$(python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null ||
	echo $((20000 + $$ % 10000)))
raritan=.1.3.6.1.4.1.13742.6.5.4.3.1.4 # PDU2-MIB measurementsOutletSensorValue
apc=.1.3.6.1.4.1.318.1.1.26.9.4.3.1.7  # PowerNet-MIB rPDU2OutletMeteredStatusPower
mkdir -p "$work/raritan" "$work/apc"
# pass_persist handler (pdu-handler.sh, also the guest's simulated PDU).
handler=$(cd "$(dirname "$0")" && pwd)/pdu-handler.sh
# Only 127.0.0.1: the listening address is the command line's, the
# communities and the user are for 127.0.0.1 only.
cat > "$work/snmpd.conf" <<EOF
rocommunity public 127.0.0.1
pass_persist $raritan $handler $raritan $work/raritan gauge
pass_persist $apc $handler $apc $work/apc integer
createUser meteruser SHA "authpass123" AES "privpass123"
rouser meteruser authpriv
createUser meteruser256 SHA-256 "authpass256" AES "privpass256"
rouser meteruser256 authpriv
EOF
mkdir -p "$SNMP_PERSISTENT_DIR"
timeout 300 "$snmpd" -f -Lo -C -c "$work/snmpd.conf" "udp:127.0.0.1:$port" > "$work/snmpd.log" 2>&1 &
snmpd_pid=$! # timeout(1)'s: it passes TERM on to snmpd
agent=
echo 0 > "$work/raritan/1.4.5"
ready=1
for i in $(seq 50); do
	if snmpget -v2c -c public -t 1 -r 0 "127.0.0.1:$port" "$raritan.1.4.5" > /dev/null 2>&1; then
		ready=0; break
	fi
	kill -0 "$snmpd_pid" 2>/dev/null || break
	sleep 0.1
done
agent=$(pgrep -P "$snmpd_pid" snmpd) # the agent itself, for SIGSTOP
[ $ready = 0 ] && [ -n "$agent" ] || { ready=1; diag "snmpd log:"; nest < "$work/snmpd.log"; }
t $ready "snmpd on 127.0.0.1:$port answers (pass_persist handler)"

conf snmp.conf <<EOF
name = pdu-node
interval = 0.2
timeout = 1
[snmp pdu]
host = 127.0.0.1
port = $port
community = public
family = raritan
outlet = 4
EOF
rc=0
for w in 0 87 1234 412 99999; do
	echo "$w" > "$work/raritan/1.4.5"
	"$md" -c "$work/snmp.conf" --once > "$work/out" 2>&1 || rc=1
	has "pdu	outlet 4	power	$w" "$work/out" || rc=1
done
t $rc "v2c, Raritan outlet 4: a trace of 5 values read exactly (--once)"

conf apc.conf <<EOF
name = apc-node
[snmp apc1]
host = 127.0.0.1
port = $port
community = public
family = apc
outlet = 1
outlet = 2
EOF
echo 100 > "$work/apc/1"; echo 250 > "$work/apc/2"
"$md" -c "$work/apc.conf" --once > "$work/out" 2>&1; rc=$?
[ $rc = 0 ] && has "apc1	outlet 1	power	100" "$work/out" && has "apc1	outlet 2	power	250" "$work/out" &&
	has "sum	-	power	350" "$work/out"
t $? "v2c, APC outlets 1 and 2 summed"

# Two inputs of one node (two PSUs on two PDUs): their sum.
conf two.conf <<EOF
name = two-psu
[snmp a]
host = 127.0.0.1
port = $port
community = public
family = raritan
outlet = 4
[snmp b]
host = 127.0.0.1
port = $port
community = public
family = apc
outlet = 2
EOF
echo 300 > "$work/raritan/1.4.5"
"$md" -c "$work/two.conf" --once > "$work/out" 2>&1; rc=$?
[ $rc = 0 ] && has "sum	-	power	550" "$work/out"
t $? "two PDUs of one node summed"

# A trace through the running daemon: one value per reading, to the CSV.
printf '%s\n' 110 220 330 440 550 > "$work/raritan/1.4.5.seq"
"$md" -c "$work/snmp.conf" --no-feed --count 5 --csv "$work/trace.csv" > "$work/out" 2>&1; rc=$?
rm -f "$work/raritan/1.4.5.seq"
[ $rc = 0 ] && [ "$(grep -c '^[0-9]' "$work/trace.csv")" = 5 ] &&
	[ "$(cut -d, -f2 "$work/trace.csv" | tail -n +2 | tr '\n' ' ')" = "110.000 220.000 330.000 440.000 550.000 " ] ||
	{ diag "daemon:"; nest < "$work/out"; diag "csv:"; nest < "$work/trace.csv"; false; }
t $? "daemon: a trace of 5 values through snmpd, each exact in --csv"

"$here"/build/csv_check "$work/trace.csv" > "$work/parsed" 2> "$work/out"; rc=$?
[ $rc = 0 ] && [ "$(cut -d' ' -f2 "$work/parsed" | tr '\n' ' ')" = "110.000000 220.000000 330.000000 440.000000 550.000000 " ] &&
	awk 'NR > 1 && $1 <= p { exit 1 } { p = $1 }' "$work/parsed" ||
	{ nest < "$work/out"; nest < "$work/parsed"; false; }
t $? "the CSV as joules-train's reader (--pdu) takes it: 5 readings, same watts, increasing times"

# The interval is kept: 5 readings at 0.2 s span about 0.8 s.
span=$(awk 'NR == 1 { a = $1 } { b = $1 } END { printf "%d", (b - a) / 1e6 }' "$work/parsed")
[ "$span" -ge 750 ] && [ "$span" -le 1000 ] || diag "span $span ms"
t $? "daemon: readings 0.2 s apart ($span ms for 4 intervals)"

# The outlet's energy counter (activeEnergy, Wh, 32 bits) goes 1 Wh a
# reading, then back to 0 (reset by the PDU's user): as a 32-bit wrap that
# would be 4294966294 Wh in 0.2 s, refused; the next reading is a new
# baseline. Fed: 3 x 1 Wh = 10800 J, never less, never a jump.
printf '%s\n' 1000 1001 1002 0 1 2 > "$work/raritan/1.4.8.seq"
conf energy.conf <<EOF
name = energy-node
interval = 0.2
[snmp pdu]
host = 127.0.0.1
port = $port
community = public
family = raritan
kind = energy
outlet = 4
EOF
"$md" -c "$work/energy.conf" --no-feed --count 6 -v > "$work/out" 2>&1; rc=$?
rm -f "$work/raritan/1.4.8.seq"
last=$(grep 'reading:' "$work/out" | tail -n 1)
[ $rc = 0 ] && [ "$(grep -c 'reading:' "$work/out")" = 5 ] &&
	[ "$(grep -c 'reading refused (nothing fed): .*energy jump of 1.54619e+13 J' "$work/out")" = 1 ] &&
	[ "$(grep -c 'new baseline' "$work/out")" = 2 ] && echo "$last" | grep -qF " 10800000000 uJ" ||
	{ diag "last '$last'"; nest < "$work/out"; false; }
t $? "v2c energy counter that goes back to 0: refused once, a new baseline, 3 x 3600 J fed"

echo 150000 > "$work/raritan/1.4.5"
"$md" -c "$work/snmp.conf" --once > "$work/out" 2>&1; rc=$?
[ $rc = 1 ] && has "power 150000 refused: above max_power" "$work/out"
t $? "v2c: an absurd value from the PDU is refused with the reason"

echo 200 > "$work/raritan/1.4.5"
conf v3.conf <<EOF
name = v3-node
[snmp pdu3]
host = 127.0.0.1
port = $port
version = 3
user = meteruser
security_level = authPriv
auth_protocol = SHA
auth_password = authpass123
priv_protocol = AES
priv_password = privpass123
family = raritan
outlet = 4
EOF
"$md" -c "$work/v3.conf" --once > "$work/out" 2>&1; rc=$?
[ $rc = 0 ] && has "pdu3	outlet 4	power	200" "$work/out"
t $? "v3 authPriv SHA/AES: read"

sed -e 's/^user = .*/user = meteruser256/' -e 's/^auth_protocol = .*/auth_protocol = SHA-256/' \
	-e 's/^auth_password = .*/auth_password = authpass256/' \
	-e 's/^priv_password = .*/priv_password = privpass256/' "$work/v3.conf" | conf v3sha256.conf
"$md" -c "$work/v3sha256.conf" --once > "$work/out" 2>&1; rc=$?
[ $rc = 0 ] && has "pdu3	outlet 4	power	200" "$work/out"
t $? "v3 authPriv SHA-256/AES: read"

sed 's/^auth_password = .*/auth_password = wrongpass1/' "$work/v3.conf" | conf v3bad.conf
"$md" -c "$work/v3bad.conf" --once > "$work/out" 2>&1; rc=$?
[ $rc = 1 ] && has "Authentication failure" "$work/out"
t $? "v3: a wrong password is a clear error"

conf nosuch.conf <<EOF
name = n
[snmp pdu]
host = 127.0.0.1
port = $port
community = public
family = raritan
outlet = 9
EOF
"$md" -c "$work/nosuch.conf" --once > "$work/out" 2>&1; rc=$?
[ $rc = 1 ] && has "outlet 9 (${raritan#.}.1.9.5): no such" "$work/out"
t $? "v2c: an outlet the PDU does not have: 'no such ...'"

conf wrongcomm.conf <<EOF
name = n
timeout = 0.5
[snmp pdu]
host = 127.0.0.1
port = $port
community = private
family = raritan
outlet = 4
EOF
"$md" -c "$work/wrongcomm.conf" --once > "$work/out" 2>&1; rc=$?
[ $rc = 1 ] && has "no answer within 500 ms" "$work/out"
t $? "v2c: a wrong community is no answer, within the timeout"

# The daemon against a stopped agent: each interval times out within its
# bound, the failure is logged once, and the agent's return is noticed.
conf stall.conf <<EOF
name = stall
interval = 0.5
timeout = 0.3
[snmp pdu]
host = 127.0.0.1
port = $port
community = public
family = raritan
outlet = 4
EOF
kill -STOP "$agent"
t0=$(now_ms)
"$md" -c "$work/stall.conf" --once > "$work/out" 2>&1; rc=$?
dt=$(($(now_ms) - t0))
[ $rc = 1 ] && has "127.0.0.1:$port: no answer within 300 ms" "$work/out" && [ "$dt" -lt 1500 ] ||
	diag "took $dt ms"
t $? "a stopped snmpd: a clear timeout error within the bound ($dt ms), no hang"

"$md" -c "$work/stall.conf" --no-feed --count 8 --csv "$work/stall.csv" > "$work/out" 2>&1 &
mdpid=$!
sleep 1.6
kill -CONT "$agent"
wait $mdpid; rc=$?
fails=$(grep -c "no answer within 300 ms" "$work/out")
[ $rc = 0 ] && [ "$fails" = 1 ] && has "[snmp pdu]: answers again" "$work/out" &&
	[ "$(grep -c '^[0-9]' "$work/stall.csv")" -ge 3 ] ||
	{ diag "$fails failure lines"; nest < "$work/out"; false; }
t $? "daemon: the stall logged once, the agent's return noticed, readings resume"

stop_snmpd
"$md" -c "$work/stall.conf" --once > "$work/out" 2>&1; rc=$?
[ $rc = 1 ] && has "no answer within 300 ms" "$work/out"
t $? "no agent at all: the same clear error"

# ---- VMs: --vm-host finds them, writes nothing without the host's joules ----
"$md" --vm-host --once > "$work/out" 2>&1; rc=$?
[ $rc = 2 ] && has "--vm-host takes none of" "$work/out"
t $? "--vm-host with --once: a usage error"

"$md" --vm-host --vm-idle some > "$work/out" 2>&1; rc=$?
[ $rc = 2 ] && has "want exclude or include" "$work/out"
t $? "--vm-idle some: a usage error that says what it takes"

"$md" --vm-host --vm-energy fresh > "$work/out" 2>&1; rc=$?
[ $rc = 2 ] && has "want lagged or live" "$work/out"
t $? "--vm-energy fresh: a usage error that says what it takes"

# Two stand-ins named as QEMU is (the daemon finds VMs by that name): one
# with the channel on a socket, one without any.
vm_start() {
	_sock=$1
	shift
	STANDIN_SOCK=$_sock STANDIN_LOG=$_sock.lines "$here"/build/qemu-system-x86_64 "$@" &
}
jm="-device virtio-serial-pci -chardev socket,id=jm,path=$work/vm1.sock,server=on,wait=off"
vm_start "$work/vm1.sock" -name guest=hostvm1 $jm -device virtserialport,chardev=jm,name=org.joules.meter
vm1=$!
vm_start "$work/vm2.sock" -name guest=hostvm2 -m 512
vm2=$!
sleep 0.3
"$md" --vm-host --interval 0.2 --count 5 > "$work/out" 2>&1; rc=$?
[ $rc = 0 ] && has "VM hostvm1 (pid $vm1): channel org.joules.meter at $work/vm1.sock; its energy: process" "$work/out" &&
	has "VM hostvm2 (pid $vm2): not served: no virtserialport named org.joules.meter" "$work/out"
t $? "--vm-host: the VM with the channel found at its socket, the one without said so"
[ ! -s "$work/vm1.sock.lines" ] && [ "$(grep -c "the host.s joules: joules module not loaded" "$work/out")" = 1 ] ||
	{ diag "the VM got:"; nest < "$work/vm1.sock.lines"; false; }
t $? "--vm-host without the module: said once, nothing written to the VM"
kill $vm1 $vm2 2>/dev/null
wait $vm1 $vm2 2>/dev/null

[ $failed = 0 ]
