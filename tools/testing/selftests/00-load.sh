#!/bin/sh
# Load, sysfs version, unload, hw_counters=0, and 20 reload cycles with a
# clean dmesg.
. /lib/joules/lib.sh
n=0
t() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; failed=1; fi; }
failed=0
echo "TAP version 13"
echo "1..7"
joules_unload >/dev/null 2>&1
# The plain path first: nothing else on sched_switch (the runner keeps
# the trace event on for everyone else).
tr=/sys/kernel/tracing
echo 0 > $tr/events/sched/sched_switch/enable 2>/dev/null
dmesg -c >/dev/null
insmod "$JOULES_KO"; t $? "insmod joules.ko"
v=$(cat /sys/kernel/joules/version 2>/dev/null)
want=$(modinfo -F version "$JOULES_KO" 2>/dev/null)
[ -n "$v" ] && { [ -z "$want" ] || [ "$v" = "$want" ]; }; t $? "sysfs version readable ($v)"
dmesg | grep -q "joules: version $v loaded"; t $? "one load line in dmesg"
joules_unload; t $? "unload"
[ ! -d /sys/kernel/joules ]; t $? "sysfs directory gone after unload"
# Keep two other probes on sched_switch (the trace event and the comm
# recorder it starts) for the loads below, so that adding and removing ours
# does not rewrite the static call in __schedule each time: under QEMU's
# software emulation that patching has livelocked the guest (see
# Documentation/testing.rst and 82-reload-stress). The loads above and the
# harness's own, one per test program, still take the patching path.
[ -d $tr/events ] || mount -t tracefs tracefs $tr 2>/dev/null
echo 64 > $tr/buffer_size_kb 2>/dev/null
echo 1 > $tr/events/sched/sched_switch/enable 2>/dev/null ||
	echo "# cannot enable the sched_switch trace event"
# With the counters switched off they are absent, and dmesg says why (not
# "no PMU", which is what QEMU's emulation gets otherwise).
echo "joules-selftest: hw_counters=0" > /dev/kmsg
ok=1
if insmod "$JOULES_KO" hw_counters=0; then
	hw=$(cat /sys/kernel/joules/hw_counters 2>/dev/null)
	echo "# hw_counters=0: sysfs hw_counters '$hw'"
	since=$(dmesg | sed -n '/joules-selftest: hw_counters=0/,$p')
	[ "$hw" = absent ] && echo "$since" | grep -q "hardware counters off (hw_counters=0)" &&
		! echo "$since" | grep -q "no hardware counters (no PMU)" && ok=0
	joules_unload || ok=1
fi
t $ok "hw_counters=0: counters absent, dmesg says they are off"
ok=0
i=0
while [ $i -lt 20 ]; do
	joules_load || { ok=1; echo "# load $i failed"; break; }
	[ -r /sys/kernel/joules/version ] || { ok=1; echo "# no version after load $i"; break; }
	joules_unload || { ok=1; echo "# unload $i failed"; break; }
	i=$((i + 1))
done
if dmesg | grep -Ei 'error|fail|BUG|WARNING' | grep -v 'module verification failed' | grep -v 'loading out-of-tree'; then ok=1; fi
t $ok "reload 20 times, no error in dmesg"
echo 0 > $tr/events/sched/sched_switch/enable 2>/dev/null
exit $failed
