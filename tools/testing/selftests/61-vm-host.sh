#!/bin/sh
# joules-meterd --vm-host, with this guest as the host of stand-in VMs
# (/lib/joules/qemu-system-x86_64, tools/testing/meters/vm-standin.c: named
# as QEMU is, listening on its channel's socket like QEMU's server=on
# chardev). A VM's lines carry exactly the energy the host's joules gives
# its process, or its libvirt machine scope's cgroup; a VM that stops
# reading never holds up another; VMs that come and go are followed; a
# process that only looks like QEMU cannot point root's connect at a socket
# its owner could not write to; the host's module reloaded starts a new
# epoch; an idle share asked for without idle_split writes nothing.
. /lib/joules/lib.sh
n=0
failed=0
t() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; failed=1; fi; }
diag() { echo "# $*"; }
nest() { sed 's/^/# /'; }
echo "TAP version 13"
standin=/lib/joules/qemu-system-x86_64
if ! command -v joules-meterd >/dev/null || ! [ -x $standin ]; then
	echo "1..0 # SKIP joules-meterd or the stand-in VM not in the initramfs"
	exit 4
fi
sys=/sys/kernel/joules
tm=/sys/module/joules_testmeter/parameters
cg=/sys/fs/cgroup
scope="machine.slice/machine-qemu\\x2d2\\x2dvm2.scope"
w=/tmp/vmhost
pids=
daemon=
# As found, put back at the end (the module stays loaded for the next test).
old_static=$(cat $sys/meter_idle_uw)
old_split=$(cat $sys/idle_split)
cleanup() {
	[ -z "$daemon" ] || kill "$daemon" 2>/dev/null
	for p in $pids; do kill -CONT "$p" 2>/dev/null; kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rmdir "$cg/$scope" "$cg/machine.slice" 2>/dev/null
	rmmod joules_testmeter 2>/dev/null
	echo "$old_static" > $sys/meter_idle_uw
	echo "$old_split" > $sys/idle_split
	rm -rf $w
}
trap cleanup EXIT
mkdir -p $w/rootonly
chmod 0700 $w/rootonly
grep -q "^cgroup2 $cg " /proc/mounts || mount -t cgroup2 none $cg

# The host's energy: the synthetic RAPL meter at 20 W, no static power
# held back, so that what runs is charged.
insmod /lib/joules/joules_testmeter.ko || { echo "1..0 # SKIP no test meter"; exit 4; }
echo 20000000 > $tm/pkg_uw
echo "0 0 0 0" > $sys/meter_idle_uw

echo "1..16"
# vm NAME SOCK [ARGS...]: a stand-in with its lines in SOCK.lines.
vm() {
	_name=$1 _sock=$2
	shift 2
	STANDIN_SOCK=$_sock STANDIN_LOG=$_sock.lines $standin -name "guest=$_name" "$@" &
	pids="$pids $!"
	last=$!
}
chan() {
	echo "-chardev socket,id=jm,path=$1,server=on,wait=off" \
		"-device virtserialport,chardev=jm,name=org.joules.meter"
}
# lines FILE: how many; field FILE KEY: the last line's KEY
lines() { if [ -f "$1" ]; then grep -c '^joules-vm 1 ' "$1"; else echo 0; fi; }
field() { tail -n 1 "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
# wait_lines FILE N SECONDS
wait_lines() {
	_i=0
	while [ "$(lines "$1")" -lt "$2" ]; do
		_i=$((_i + 1)); [ $_i -lt $(($3 * 10)) ] || return 1; sleep 0.1
	done
}
# wait_log TEXT SECONDS
wait_log() {
	_i=0
	while ! grep -qF -- "$1" $w/daemon.log; do
		_i=$((_i + 1)); [ $_i -lt $(($2 * 10)) ] || return 1; sleep 0.1
	done
}
# What a VM's channel carries by default: the lagged view (--vm-energy).
pid_uj() { joulesctl show --lagged "$1" | awk '$1 == "energy_uj:" { print $2 }'; }
cg_uj() { joulesctl show --lagged --cgroup "/$scope" | awk '$1 == "energy_uj:" { print $2 }'; }
pid_live() { awk '$1 == "energy_uj:" { print $2 }' /proc/energy/"$1"; }

# VM 1: its QEMU process, burning. VM 2: in a libvirt machine scope with a
# second process (as vhost and I/O threads would be). VM 3: no channel.
STANDIN_BURN=1 vm vm1 $w/vm1.sock $(chan $w/vm1.sock)
vm1=$last
mkdir -p "$cg/$scope"
sh -c "echo \$\$ > '$cg/$scope/cgroup.procs'; exec env STANDIN_SOCK=$w/vm2.sock STANDIN_LOG=$w/vm2.sock.lines $standin -name guest=vm2 $(chan $w/vm2.sock)" &
vm2=$!
pids="$pids $vm2"
sh -c "echo \$\$ > '$cg/$scope/cgroup.procs'; exec sh -c 'while :; do :; done'" &
vm2b=$!
pids="$pids $vm2b"
vm vm3 $w/vm3.sock -m 512
vm3=$last
sleep 0.5

# An idle share without idle_split: said, and nothing written.
echo 0 > $sys/idle_split
joules-meterd --vm-host --vm-idle include --interval 0.2 --count 4 > $w/idle.log 2>&1
[ "$(lines $w/vm1.sock.lines)" = 0 ] && grep -q "idle_split is not 1" $w/idle.log ||
	{ nest < $w/idle.log; false; }
t $? "--vm-idle include with idle_split 0: said, nothing written"

joules-meterd --vm-host --interval 0.2 > $w/daemon.log 2>&1 &
daemon=$!
wait_lines $w/vm1.sock.lines 3 20 && wait_lines $w/vm2.sock.lines 3 20 &&
	grep -q "VM vm3 (pid $vm3): not served: no virtserialport" $w/daemon.log ||
	{ nest < $w/daemon.log; false; }
t $? "both VMs with a channel get lines, the one without is said not to"
grep -qF "VM vm2 (pid $vm2): channel org.joules.meter at $w/vm2.sock; its energy: cgroup /$scope" $w/daemon.log &&
	grep -qF "VM vm1 (pid $vm1): channel org.joules.meter at $w/vm1.sock; its energy: process" $w/daemon.log ||
	{ nest < $w/daemon.log; false; }
t $? "vm2's energy is its machine scope's, vm1's its process's"
bad=$(grep -vc '^joules-vm 1 epoch=[0-9]* seq=[0-9]* time_ns=[0-9]* energy_uj=[0-9]*$' $w/vm1.sock.lines)
t $([ "$bad" = 0 ] && echo 0 || echo 1) "every line whole and well-formed ($bad not)"

# Exactness: a frozen VM's energy stands still, and its lines then carry
# that number to the microjoule. Frozen = every task of it stopped; the
# interval that held their last run is charged within two ticks.
# frozen_check NAME LINES GETTER PIDS...
frozen_check() {
	_n=$1 _f=$2 _get=$3
	shift 3
	kill -STOP "$@"
	sleep 1
	_e=$($_get)
	_live=$(pid_live "$1")
	sleep 1.5
	_e2=$($_get)
	kill -CONT "$@"
	sleep 0.5
	_hits=$(grep -c " energy_uj=$_e\$" "$_f")
	[ "$_e" = "$_e2" ] && [ "$_hits" -ge 3 ] ||
		{ diag "$_n: energy $_e then $_e2; $_hits lines with it; the last lines:"; tail -n 12 "$_f" | nest; false; }
}
frozen_check vm1 $w/vm1.sock.lines "pid_uj $vm1" $vm1 && [ "$_live" != "$_e" ]
t $? "vm1 frozen: its lines carry its process's lagged energy exactly ($_e uJ, $_hits lines; live $_live)"
frozen_check vm2 $w/vm2.sock.lines cg_uj $vm2 $vm2b
rc=$?
vm2_own=$(pid_uj $vm2)
[ $rc = 0 ] && [ "$_e" -gt "$vm2_own" ]
t $? "vm2 frozen: its lines carry its scope's energy exactly ($_e uJ, more than its QEMU's $vm2_own)"
e1=$(field $w/vm1.sock.lines epoch)
[ -n "$e1" ] && [ "$(grep -vc " epoch=$e1 " $w/vm1.sock.lines)" = 0 ]
t $? "one epoch throughout ($e1)"
# The burners have done their part: the rest runs on a quiet guest.
kill -USR1 $vm1
kill $vm2b

# A VM that stops reading: the daemon says so and keeps serving vm2.
kill -USR2 $vm1
n2=$(lines $w/vm2.sock.lines)
wait_log "VM vm1 (pid $vm1): the guest is not reading" 30
rc=$?
[ $rc = 0 ] && wait_lines $w/vm2.sock.lines $((n2 + 5)) 10 || { nest < $w/daemon.log; false; }
t $? "vm1 not reading: said, and vm2 still gets its lines"
kill -USR2 $vm1
n1=$(lines $w/vm1.sock.lines)
wait_log "VM vm1 (pid $vm1): the guest reads again" 20 && wait_lines $w/vm1.sock.lines $((n1 + 3)) 10 &&
	[ "$(grep -vc '^joules-vm 1 epoch=[0-9]* seq=[0-9]* time_ns=[0-9]* energy_uj=[0-9]*$' $w/vm1.sock.lines)" = 0 ] ||
	{ nest < $w/daemon.log; false; }
t $? "vm1 reads again: lines resume, none torn"

# VMs come and go.
kill $vm1
wait_log "VM vm1 (pid $vm1): gone" 10
t $? "a VM that stops is dropped"
vm vm4 $w/vm4.sock $(chan $w/vm4.sock)
vm4=$last
wait_lines $w/vm4.sock.lines 2 20 || nest < $w/daemon.log
t $? "a VM that starts later is served"

# libvirt's way: QEMU is given the listening socket as fd=N; the daemon
# takes it from the process (pidfd_getfd) to learn its path.
STANDIN_FD=33 STANDIN_SOCK=$w/vm6.sock STANDIN_LOG=$w/vm6.sock.lines $standin -name guest=vm6 \
	-chardev socket,id=charchannel0,fd=33,server=on,wait=off \
	-device '{"driver":"virtserialport","bus":"virtio-serial0.0","nr":1,"chardev":"charchannel0","id":"channel0","name":"org.joules.meter"}' &
vm6=$!
pids="$pids $vm6"
wait_lines $w/vm6.sock.lines 2 20 && grep -qF "VM vm6 (pid $vm6): channel org.joules.meter at $w/vm6.sock" $w/daemon.log ||
	nest < $w/daemon.log
t $? "libvirt's fd=33 and JSON -device: the socket found from the process, lines written"
kill $vm6

# A guest that floods its port: what it writes is dropped a little per
# turn, the others are served, and the daemon still stops at once.
STANDIN_FLOOD=2 vm vm5 $w/vm5.sock $(chan $w/vm5.sock)
vm5=$last
wait_log "VM vm5 (pid $vm5): channel" 10
n4=$(lines $w/vm4.sock.lines)
sleep 3
wait_lines $w/vm4.sock.lines $((n4 + 5)) 10
t $? "a VM flooding its port holds up no other (vm4: $n4 -> $(lines $w/vm4.sock.lines) lines)"
kill $vm5

# The host's module reloaded under the daemon: lines resume under a new
# epoch (the count restarted).
ep4=$(field $w/vm4.sock.lines epoch)
rmmod joules_testmeter && joules_unload && joules_load && insmod /lib/joules/joules_testmeter.ko &&
	echo 20000000 > $tm/pkg_uw && echo "0 0 0 0" > $sys/meter_idle_uw
rc=$?
n4=$(lines $w/vm4.sock.lines)
[ $rc = 0 ] && wait_lines $w/vm4.sock.lines $((n4 + 3)) 20 && [ "$(field $w/vm4.sock.lines epoch)" != "$ep4" ] ||
	{ diag "epoch $ep4 -> $(field $w/vm4.sock.lines epoch)"; nest < $w/daemon.log; false; }
t $? "the host's module reloaded: lines resume under a new epoch"

# Not QEMU's to give: a process run by nobody names a socket only root may
# reach; the daemon's connect is nobody's, and is refused.
STANDIN_SOCK=$w/rootonly/svc.sock STANDIN_LOG=$w/svc.lines $standin -name guest=svc &
pids="$pids $!"
ln -sf $standin $w/launch
STANDIN_UID=65534 STANDIN_EXEC=$standin STANDIN_EXEC2=$w/qemu-suid STANDIN_SOCK=/tmp/evil.sock \
	$w/launch -name guest=evil \
	$(chan $w/rootonly/svc.sock) &
evil=$!
pids="$pids $evil"
wait_log "VM evil (pid $evil): $w/rootonly/svc.sock: Permission denied" 10
rc=$?
sleep 1
[ $rc = 0 ] && ! [ -s $w/svc.lines ] || { nest < $w/daemon.log; false; }
t $? "a fake QEMU of nobody's cannot make root write into root's socket"

# The same process then runs a setuid-root program (same pid, same start):
# it is probed again, its ids differ, and it is not served.
cp $standin $w/qemu-suid && chmod 4755 $w/qemu-suid
kill -HUP $evil
wait_log "its user or group ids differ" 10
rc=$?
sleep 1
[ $rc = 0 ] && ! [ -s $w/svc.lines ] && ! grep -q "connected to $w/rootonly" $w/daemon.log ||
	{ nest < $w/daemon.log; false; }
t $? "after it execs a setuid program: not served, root's socket never reached"
exit $failed
