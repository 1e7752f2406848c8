#!/bin/sh
# The runner fails a program whose dmesg holds a report of the kernel's
# checkers; that proves something only if the kernel prints them. A
# tinyconfig build has BUG() support off, which silences every WARN_ON()
# (lockdep's asserts among them), and a lockdep report turns lockdep off
# for the rest of the boot. Where the kernel has its crash-test module
# (LKDTM: the source-built debug kernels), provoke a WARNING and check
# that the runner's pattern sees it, and where lockdep is built in, that
# it is still on.
. /lib/joules/lib.sh
n=0
failed=0
t() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; failed=1; fi; }
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }
echo "TAP version 13"
echo "1..3"
dbg=/sys/kernel/debug
[ -d $dbg/provoke-crash ] || mount -t debugfs debugfs $dbg 2>/dev/null
lkdtm=$dbg/provoke-crash/DIRECT
if [ -w $lkdtm ]; then
	dmesg -c > /dev/null
	echo WARNING > $lkdtm
	# Taken out of dmesg here: the runner's own check must stay clean.
	dmesg -c > /tmp/lkdtm.dmesg
	grep -E "$JOULES_CHECKERS" /tmp/lkdtm.dmesg | head -n 3 | sed 's/^/# /'
	grep -qE "$JOULES_CHECKERS" /tmp/lkdtm.dmesg
	t $? "a WARN_ON() reaches dmesg and the runner's pattern"
	# DEBUG_BUGVERBOSE: the report names the file it came from.
	grep -q "lkdtm" /tmp/lkdtm.dmesg
	t $? "the report says where it came from"
else
	skip "no LKDTM in this kernel (Debian's kernels build without it)"
	skip "no LKDTM in this kernel"
fi
if [ -r /proc/lockdep_stats ]; then
	grep -q 'debug_locks: *1$' /proc/lockdep_stats
	t $? "lockdep still on (no report since boot turned it off)"
else
	skip "no lockdep in this kernel"
fi
exit $failed
