#!/bin/sh
# The runner fails a program whose dmesg holds a report of the kernel's
# checkers; that proves something only if the kernel prints them. A
# tinyconfig build has BUG() support off, which silences every WARN_ON()
# (lockdep's asserts among them), and a lockdep report turns lockdep off
# for the rest of the boot. Where the kernel has its crash-test module
# (LKDTM: the source-built debug kernels), provoke a WARNING and check
# that the runner's pattern sees the report itself, not LKDTM's own
# announcement of it, and where lockdep is built in, that it is still on.
. /lib/joules/lib.sh
n=0
failed=0
t() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; failed=1; fi; }
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }
echo "TAP version 13"
echo "1..5"
# What came before the provocation is the runner's to judge: a report
# here fails this program, since the dmesg this takes is not checked again.
dmesg -c > /tmp/checkers.before
if grep -qE "$JOULES_CHECKERS" /tmp/checkers.before; then
	sed 's/^/# before: /' /tmp/checkers.before | head -n 100
	t 1 "no report before the provocation"
else
	t 0 "no report before the provocation"
fi
dbg=/sys/kernel/debug
[ -d $dbg/provoke-crash ] || mount -t debugfs debugfs $dbg 2>/dev/null
lkdtm=$dbg/provoke-crash/DIRECT
if [ -w $lkdtm ]; then
	echo WARNING > $lkdtm
	dmesg -c > /tmp/checkers.lkdtm
	# "lkdtm: Performing direct entry WARNING" matches too: not counted.
	grep -v 'lkdtm: Performing direct entry' /tmp/checkers.lkdtm |
		grep -E "$JOULES_CHECKERS" > /tmp/checkers.hits
	head -n 3 /tmp/checkers.hits | sed 's/^/# /'
	[ -s /tmp/checkers.hits ]
	t $? "a WARN_ON() reaches dmesg and the runner's pattern"
	# DEBUG_BUGVERBOSE: the report names the file and line it came from.
	grep -qE 'WARNING: .*drivers/misc/lkdtm/bugs\.c:[0-9]+' /tmp/checkers.lkdtm
	t $? "the report names drivers/misc/lkdtm/bugs.c and its line"
	# Anything else in that dmesg is another report, not ours to drop.
	awk '/cut here/ { skip = 1 }
	     !skip && !/lkdtm: Performing direct entry/ { print }
	     /---\[ end trace/ { skip = 0 }' /tmp/checkers.lkdtm > /tmp/checkers.rest
	if grep -qE "$JOULES_CHECKERS" /tmp/checkers.rest; then
		sed 's/^/# beside: /' /tmp/checkers.rest | head -n 100
		t 1 "no other report beside it"
	else
		t 0 "no other report beside it"
	fi
elif [ -d /sys/module/lkdtm ]; then
	for i in 1 2 3; do t 1 "LKDTM is built in but $lkdtm is not writable"; done
else
	skip "no LKDTM in this kernel (Debian's kernels build without it)"
	skip "no LKDTM in this kernel"
	skip "no LKDTM in this kernel"
fi
if [ -r /proc/lockdep_stats ]; then
	grep -q 'debug_locks: *1$' /proc/lockdep_stats
	on=$?
	if [ $on -ne 0 ]; then
		# Why: the boot's and each program's kernel log, as the
		# runner kept them, and the taint flags.
		echo "# tainted: $(cat /proc/sys/kernel/tainted)"
		grep -i -E 'lock debugging|lockdep|taint|too low' /tmp/dmesg.* 2>/dev/null |
			head -n 20 | sed 's/^/# /'
		dmesg | grep -i -E 'lock debugging|lockdep|taint|too low' |
			head -n 20 | sed 's/^/# /'
	fi
	t $on "lockdep still on (no report since boot turned it off)"
else
	skip "no lockdep in this kernel"
fi
exit $failed
