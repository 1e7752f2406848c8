#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Boot Debian's kernel under QEMU (software emulation, serial console) with
# an initramfs holding the module and the selftests; bring their TAP back
# over the serial line and judge it.
#
#   run-qemu.sh [--mode tests|demo|bench|bench-icount] [--timeout SEC] [--log FILE] [--counts FILE]
#               [--only REGEX]   (run only the selftests whose names match)
#               [--skip REGEX]   (and of those, not the ones whose names match)
#               [--sockets N]    (spread the 2 CPUs over N packages)
#               [--kernel IMAGE] (default /boot/vmlinuz-$KVER, or the first
#                                 installed kernel of tools/testing/kernels.conf)
#               [--modules DIR]  (joules.ko and the test modules; default: the tree's)
#               [--scale PCT]    (the long tests' sizes, percent of their defaults)
#               [--hostfwd tcp:127.0.0.1:HOSTPORT-:GUESTPORT]  (repeatable: a user-mode
#                                 virtio NIC, isolated (restrict=on) but for these
#                                 forwards from the host's loopback; the guest gets the
#                                 NIC driver from the booted kernel's /lib/modules)
#               [--append ARGS]  (more kernel command line, e.g. for one test)
#
# Exit status: 0 when every test passed; 1 on any failure, on a kernel panic,
# on a hang (no end marker within the timeout) or on missing output.
# Those apply to the boot that counts: a tests guest whose kernel oopsed
# before init's first line boots once more (said on stderr, in LOG.boot1
# and as --counts' 4th field), and the second boot alone counts.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
mode=tests
tmo=${JOULES_QEMU_TIMEOUT:-1800}
log=
counts=
only=
skip=
sockets=1
kernel=
modules=
scale=100
fwds=
append=
while [ $# -gt 0 ]; do
	case $1 in
	--mode) mode=$2; shift 2 ;;
	--timeout) tmo=$2; shift 2 ;;
	--log) log=$2; shift 2 ;;
	--counts) counts=$2; shift 2 ;;
	--only) only=$2; shift 2 ;;
	--skip) skip=$2; shift 2 ;;
	--sockets) sockets=$2; shift 2 ;;
	--kernel) kernel=$2; shift 2 ;;
	--modules) modules=$2; shift 2 ;;
	--scale) scale=$2; shift 2 ;;
	--hostfwd)
		# Loopback only: nothing outside this machine reaches the guest.
		case $2 in
		tcp:127.0.0.1:[0-9]*-:[0-9]*) fwds="$fwds,hostfwd=$2"; shift 2 ;;
		*) echo "run-qemu: --hostfwd takes tcp:127.0.0.1:HOSTPORT-:GUESTPORT" >&2; exit 2 ;;
		esac ;;
	--append) append="$append $2"; shift 2 ;;
	-h|--help)
		sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'
		exit 0 ;;
	*) echo "run-qemu: unknown argument '$1'" >&2; exit 2 ;;
	esac
done

if [ -z "$kernel" ]; then
	if [ -n "${KVER:-}" ]; then
		kernel=/boot/vmlinuz-$KVER
	else
		jk_testing=$here/..
		. "$here"/../kernels.sh
		name=$(jk_default)
		[ -n "$name" ] && kernel=$(jk_image "$name")
		[ -n "$kernel" ] && echo "run-qemu: no KVER given: booting $name from kernels.conf" >&2
	fi
fi
if [ -z "$kernel" ] || ! [ -r "$kernel" ]; then
	echo "run-qemu: no kernel image '${kernel}' (apt-get install linux-image-amd64, or pass --kernel/KVER)" >&2
	exit 1
fi
# joules.ko must be the booted kernel's: a module built for another kernel
# (the tree's last build, with several kernels installed) fails only inside
# the guest, late. Checked where both releases can be read.
ko=${modules:-$here/../../..}/joules.ko
img_rel=$(file -bL "$kernel" 2>/dev/null | sed -n 's/.*, version \([^ ]*\) .*/\1/p')
ko_rel=$(modinfo -F vermagic "$ko" 2>/dev/null | cut -d' ' -f1)
if [ -n "$img_rel" ] && [ -n "$ko_rel" ] && [ "$img_rel" != "$ko_rel" ]; then
	echo "run-qemu: $ko is built for $ko_rel, $kernel is $img_rel (make KVER=$img_rel, or --modules)" >&2
	exit 1
fi
case $scale in
''|*[!0-9]*) echo "run-qemu: --scale takes a percentage" >&2; exit 2 ;;
esac
qemu=$(command -v qemu-system-x86_64 || true)
[ -n "$qemu" ] || { echo "run-qemu: qemu-system-x86_64 not found (apt-get install qemu-system-x86)" >&2; exit 1; }

net="-net none"
if [ -n "$fwds" ]; then
	net="-nic user,model=virtio-net-pci,restrict=on$fwds"
	# Debian's images are vmlinuz-RELEASE; their modules are in /lib/modules.
	case $(basename "$kernel") in
	vmlinuz-*) JOULES_NET_MODULES=/lib/modules/$(basename "$kernel" | sed 's/^vmlinuz-//')
		export JOULES_NET_MODULES ;;
	esac
fi

work=$(mktemp -d)
relay=
qpid=
# Killed, QEMU goes too: timeout(1) runs it in a process group of its own,
# where a signal to ours does not reach it, and it would hold its slot.
trap '[ -z "$qpid" ] || kill "$qpid" 2>/dev/null; [ -z "$relay" ] || kill "$relay" 2>/dev/null; rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# The tests get two virtio-serial ports: org.joules.meter, which a VM host's
# joules-meterd --vm-host writes, and org.joules.test, whose input
# tools/testing/meters/vm-relay copies into the first (62-vm-guest writes
# its trace through it). Their drivers, on kernels that have them as
# modules, go in the initramfs (/lib/joules/console/order).
vmchan=
relay_bin=$top/tools/testing/meters/build/vm-relay
# The tests' runner keeps two other probes on sched_switch (the event and
# ftrace's comm recorder; guest-run-tests says why). Enabled on the command
# line they are registered at boot, before the second CPU is up: enabling
# them from the runner patched __schedule's static calls with both vCPUs
# running, and QEMU's emulation livelocked on it once (6.1, 2026-12-05).
[ "$mode" = tests ] && append=" trace_event=sched:sched_switch$append"
if [ "$mode" = tests ] && [ -x "$relay_bin" ]; then
	vmchan="-device virtio-serial-pci
		-chardev socket,id=jmeter,path=$work/meter.sock,server=on,wait=off
		-device virtserialport,chardev=jmeter,name=org.joules.meter
		-chardev socket,id=jctl,path=$work/ctl.sock,server=on,wait=off
		-device virtserialport,chardev=jctl,name=org.joules.test"
	case $(basename "$kernel") in
	vmlinuz-*) JOULES_CONSOLE_MODULES=/lib/modules/$(basename "$kernel" | sed 's/^vmlinuz-//')
		export JOULES_CONSOLE_MODULES ;;
	esac
fi
[ -n "$log" ] || log=$work/serial.log
JOULES_MODULES_DIR=$modules "$here"/mkinitramfs.sh "$work"/initrd.cpio.gz "$mode" || exit 1

# bench-icount: one CPU with -icount shift=0, so that the guest's clock
# counts instructions (1 ns = 1 instruction): benchmarks free of host noise.
case $sockets in
1|2) ;;
*) echo "run-qemu: --sockets takes 1 or 2 (the guest has 2 CPUs)" >&2; exit 2 ;;
esac
smp=2
[ "$sockets" -gt 1 ] && smp="2,sockets=$sockets,cores=$((2 / sockets)),threads=1"
[ "$mode" = bench-icount ] && smp="1 -icount shift=0"

# loglevel=1 keeps kernel chatter off the console; panics still print.
# Software emulation only: -enable-kvm hangs on these machines.
echo "run-qemu: booting $kernel (mode $mode, $sockets package(s), timeout ${tmo}s)" >&2
# Guests take slots: JOULES_QEMU_SLOTS test guests at once (default 1;
# run-tests sets one per lane), each slot a lock file. A guest uses under
# one host CPU on average (its vCPUs wait on timers and on each other), so
# two fill a 2-CPU host better; no test asserts a wall-clock share. The
# benchmarks take every slot: their figures need the machine to
# themselves.
# Not in /tmp: there any local user could plant a symlink that root's
# open truncates, or hold the lock. /run is root's; others get their own.
if [ -w /run ]; then
	lock=${JOULES_QEMU_LOCK:-/run/joules-qemu.lock}
else
	lock=${JOULES_QEMU_LOCK:-${XDG_RUNTIME_DIR:-/tmp}/joules-qemu-$(id -u).lock}
fi
slots=${JOULES_QEMU_SLOTS:-1}
case $slots in
[1-4]) ;;
*) echo "run-qemu: JOULES_QEMU_SLOTS takes 1 to 4" >&2; exit 2 ;;
esac
slot_file() { if [ "$1" = 0 ]; then echo "$lock"; else echo "$lock.$1"; fi; }
case $mode in
bench*)
	# In order, as every benchmark does: none holds one slot another waits on.
	for i in 0 1 2 3; do
		eval "exec $((9 - i))>\"\$(slot_file $i)\""
		flock -n $((9 - i)) && continue
		echo "run-qemu: waiting for the guests running to finish ($lock)" >&2
		flock $((9 - i))
	done ;;
*)
	waited=
	while :; do
		i=0
		while [ $i -lt "$slots" ]; do
			exec 9>"$(slot_file $i)"
			flock -n 9 && break 2
			i=$((i + 1))
		done
		[ -n "$waited" ] || echo "run-qemu: waiting for another guest to finish ($lock)" >&2
		waited=1
		sleep 1
	done ;;
esac
# The serial line goes to a file: QEMU's stdio backend has stalled guests'
# output for good once its pipe filled (seen with the tinyconfig kernels).
raw=$work/serial.raw
boot() {
	: > "$raw"
	timeout -k 10 "$tmo" "$qemu" -m 1024 -smp $smp -display none -monitor none \
		-serial file:"$raw" -no-reboot $net \
		-cpu max -kernel "$kernel" -initrd "$work"/initrd.cpio.gz $vmchan \
		-append "console=ttyS0 panic=-1 oops=panic softlockup_panic=1 softlockup_all_cpu_backtrace=1 hung_task_panic=1 loglevel=${JOULES_QEMU_LOGLEVEL:-1} quiet slab_nomerge jscale=$scale${only:+ jtests=$only}${skip:+ jskip=$skip}$append" \
		-device isa-debug-exit,iobase=0xf4,iosize=0x04 </dev/null > "$work"/qemu.out 2>&1 &
	qpid=$!
	if [ -n "$vmchan" ]; then
		"$relay_bin" "$work/ctl.sock" "$work/meter.sock" > "$work/relay.log" 2>&1 &
		relay=$!
	fi
	# The log grows as the guest writes (a test may read it meanwhile); the
	# demo and the benchmarks are shown as they run. tail ends with QEMU.
	tail -n +1 -s 0.2 --pid=$qpid -f "$raw" 2>/dev/null | tr -d '\r' |
		sed -u 's/\x1b\[[0-9;?]*[a-zA-Z]//g' | tee "$log" |
		if [ "$mode" != tests ]; then sed -un '/JOULES-GUEST-START/,$p'; else cat >/dev/null; fi
	wait $qpid
	qrc=$?
	qpid=
	cat "$work"/qemu.out >> "$log"
	if [ -n "$relay" ]; then
		kill "$relay" 2>/dev/null
		wait "$relay" 2>/dev/null
		relay=
	fi
}
rm -f "$log.boot1"
retried=0
boot
# A kernel that oopsed before init's first line did so before the module
# or any test ran. One boot in ten here did so under emulation, "Oops:
# int3" in sched_clock_cpu at 2.9 s (the late initcall switched
# __sched_clock_stable with both vCPUs up). Its console is shown whole and
# the guest boots once more; the second boot alone counts. An oops is
# known by the panic oops=panic makes of it ("Fatal exception"): 6.1
# names a trap's oops by the trap alone ("int3: 0000 [#1]"). Not retried:
# a panic without an oops (no init, no root, a bad initramfs: what this
# tree gives the kernel), QEMU's own failures (exit 1) and timeouts (124,
# 137).
if [ "$mode" = tests ] && [ $qrc -eq 0 ] &&
	grep -q 'Kernel panic - not syncing: Fatal exception' "$log" &&
	! grep -q JOULES-GUEST-INIT "$log"; then
	echo "run-qemu: the kernel oopsed before the guest's init ran; its console:" >&2
	cat "$log" >&2
	echo "run-qemu: booting once more (the console above is kept in $log.boot1)" >&2
	mv "$log" "$log.boot1"
	retried=1
	boot
fi

if [ "$mode" != tests ]; then
	grep -q 'JOULES-GUEST-END rc=0' "$log"
	exit $?
fi

# Count results: nested program results ("# ok"/"# not ok") are the tests;
# a program that failed without a nested failure (crash, plan mismatch)
# counts as one failure; every dmesg and settings check counts as a test,
# and any other top-level result too. A guest that ends with a failure
# status and nothing counted as failed fails once.
# The guest must run on every CPU it was given: a kernel that finds one
# (the debug kernels without ACPI did) never shows its checkers SMP.
want_cpus=${smp%%[ ,]*}
awk -v counts="$counts" -v want_cpus="$want_cpus" -v retried=$retried '
/^JOULES-GUEST-START / {
	started = 1
	for (i = 2; i <= NF; i++)
		if ($i ~ /^cpus=/) cpus = substr($i, 6)
	if (cpus == want_cpus) pass++
	else { fail++; print "run-qemu: the guest runs on " cpus " CPU(s) of the " want_cpus " it was given" > "/dev/stderr" }
	next
}
/^# (not )?ok [0-9]+ / {
	if ($0 ~ /# SKIP/) { skip++; next }
	if ($2 == "not") { fail++; pfail++ } else { pass++; ppass++ }
	next
}
/^not ok [0-9]+ selftests: / {
	if (pfail == 0) { fail++; print "run-qemu: program failed without a failing test: " $0 > "/dev/stderr" }
	ppass = pfail = 0; next
}
/^ok [0-9]+ selftests: / {
	if (ppass == 0 && pfail == 0 && $0 !~ /# SKIP/) pass++
	if ($0 ~ /# SKIP/ && ppass == 0) skip++
	ppass = pfail = 0; next
}
/^ok [0-9]+ / { pass++; next }
/^not ok [0-9]+ / { fail++; next }
/^JOULES-GUEST-END/ {
	ended = 1
	if ($2 != "rc=0") end_failed = 1
}
/Kernel panic/ { panic = 1 }
END {
	if (!started) { fail++; print "run-qemu: no JOULES-GUEST-START line: the CPU count is unchecked" > "/dev/stderr" }
	if (!ended) { fail++; print "run-qemu: guest did not finish (hang, panic or timeout)" > "/dev/stderr" }
	if (panic) { fail++; print "run-qemu: kernel panic" > "/dev/stderr" }
	if (end_failed && !fail) { fail++; print "run-qemu: the guest ended with a failure no result line showed" > "/dev/stderr" }
	printf "guest: %d passed, %d failed, %d skipped\n", pass, fail, skip > "/dev/stderr"
	if (retried) print "run-qemu: these are the second boot'"'"'s results: the first oopsed before init" > "/dev/stderr"
	if (counts != "") printf "%d %d %d %d\n", pass, fail, skip, retried > counts
	exit fail ? 1 : 0
}' "$log"
arc=$?
if [ $arc -ne 0 ] || [ "${JOULES_VERBOSE:-0}" = 1 ]; then
	# Show the whole TAP so a failure can be read from the CI log.
	sed -n '/JOULES-GUEST-START/,$p' "$log" >&2
	grep -q JOULES-GUEST-START "$log" || tail -n 60 "$log" >&2
fi
[ $qrc -eq 124 ] && echo "run-qemu: QEMU timed out after ${tmo}s" >&2
exit $arc
