#!/bin/sh
# joules-validate in the booted kernel, against a simulated PDU (snmpd on
# the guest's 127.0.0.1) whose power follows the CPU load, read by
# joules-meterd every 0.5 s. Under QEMU the figures show that the tool
# works, not how accurate attribution is: no assertion here is about
# shares of wall-clock time (vCPUs are host threads). Checked: the run
# and its table, the CSV (one row per run, its deltas the difference of
# what the tool read), conservation of every together run against the
# module's node total to the microjoule (the root cgroup's tasks plus
# the node's idle line), SIGTERM in the middle of a run (children killed,
# cgroups gone), and the refusals: a node whose energy is the model's,
# and a user who is not root.
. /lib/joules/lib.sh
n=0
failed=0
t() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; failed=1; fi; }
diag() { echo "# $*"; }
echo "TAP version 13"
if ! command -v joules-validate >/dev/null || ! command -v stress-ng >/dev/null ||
	! command -v joules-meterd >/dev/null || ! command -v snmpd >/dev/null ||
	! [ -x /lib/joules/pdu-handler.sh ]; then
	echo "1..0 # SKIP joules-validate, stress-ng, joules-meterd, snmpd or the PDU handler not in the initramfs"
	exit 4
fi
sys=/sys/kernel/joules
cg=/sys/fs/cgroup
port=16173
conf=/tmp/validate-meterd.conf
csv=/tmp/v.csv
out=/tmp/validate.out
err=/tmp/validate.err
meterd=
follow=
vpid=
mounted=
# The settings this test changes, as it found them ("auto [model] rapl"
# reads back as the one in brackets).
old_source=$(sed -n 's/.*\[\([a-z]*\)\].*/\1/p' $sys/source)
old_coef=$(cat $sys/model/coefficients)
old_timeout=$(cat $sys/wallmeter/timeout_ms)
old_interval=$(cat $sys/interval_ms)
cleanup() {
	[ -z "$vpid" ] || kill "$vpid" 2>/dev/null
	[ -z "$meterd" ] || kill "$meterd" 2>/dev/null
	[ -z "$follow" ] || kill "$follow" 2>/dev/null
	joules_pdu_stop
	wait 2>/dev/null
	# The meter out of force before the next test, as 55 leaves it.
	echo 100 > $sys/wallmeter/timeout_ms 2>/dev/null
	sleep 1
	echo "$old_timeout" > $sys/wallmeter/timeout_ms 2>/dev/null
	[ -z "$old_source" ] || echo "$old_source" > $sys/source 2>/dev/null
	echo "$old_coef" > $sys/model/coefficients 2>/dev/null
	echo "$old_interval" > $sys/interval_ms 2>/dev/null
	[ -z "$mounted" ] || umount $cg 2>/dev/null
}
trap cleanup EXIT
# wait_status PATTERN SECONDS [STEP_MS]: until the meter's status matches,
# read every STEP_MS (200); 1 if it never did.
wait_status() {
	i=0
	step=${3:-200}
	while ! grep -q "$1" $sys/wallmeter/status; do
		i=$((i + 1))
		[ $i -lt $(($2 * 1000 / step)) ] || return 1
		usleep $((step * 1000))
	done
}
# col NAME: the CSV column's number.
col() { head -n 1 $csv | tr ',' '\n' | grep -n -x "$1" | cut -d: -f1; }

echo "1..16"
if ! grep -q " $cg cgroup2 " /proc/mounts; then
	mount -t cgroup2 none $cg && mounted=1
fi
grep -q " $cg cgroup2 " /proc/mounts
t $? "cgroup v2 at $cg"

# The PDU: 60 W idle, 45 W per busy CPU, fed through joules-meterd.
joules_pdu_watts 60
joules_pdu_start $port
# (joules_pdu_follow is guest-lib.sh's; without it the PDU stays at 60 W.)
if type joules_pdu_follow > /dev/null 2>&1; then
	joules_pdu_follow 60 45 &
	follow=$!
else
	diag "no joules_pdu_follow in lib.sh: the PDU's power does not follow the load"
fi
joules_meterd_conf $conf pdu-validate 0.5 $port
joules_pdu_wait $conf && {
	joules-meterd -c $conf > /tmp/validate-meterd.log 2>&1 &
	meterd=$!
	wait_status '^pdu-validate$' 20
}
rc=$?
[ $rc = 0 ] || { diag "status: $(cat $sys/wallmeter/status)"; sed 's/^/# /' /tmp/snmpd.log /tmp/validate-meterd.log; }
t $rc "the simulated PDU is the module's wall meter"

# The run: 2 repetitions of an idle run, three alone, one together.
R=2
WL="cpu matrix network"
NW=3
joules-validate --duration 3 --repeat $R --workloads cpu,matrix,network --csv $csv \
	> $out 2> $err
rc=$?
sed 's/^/# /' $out
[ $rc = 0 ] || sed 's/^/# stderr: /' $err
t $rc "joules-validate --duration 3 --repeat $R: exit status $rc"

bad=
for w in $WL; do grep -q "^$w  *[0-9-]" $out || bad="$bad $w"; done
t $([ -z "$bad" ] && echo 0 || echo 1) "the table has a row per workload${bad:+ (missing:$bad)}"

grep -q '^note: running under a hypervisor' $out
t $? "under QEMU the report says the figures show the tool works, not accuracy"

want='repeat,run,workloads,elapsed_s,node_uj_before,node_uj_after,node_de_uj,idle_de_uj,tasks_de_uj,idle_w,measured_j,cpu_uj,matrix_uj,memory_uj,io_uj,network_uj,source'
[ "$(head -n 1 $csv 2>/dev/null)" = "$want" ]
t $? "the CSV has the documented columns"

rows=$(($(wc -l < $csv) - 1))
idle=$(grep -c '^[0-9]*,idle,' $csv)
alone=$(grep -c '^[0-9]*,alone,' $csv)
together=$(grep -c '^[0-9]*,together,' $csv)
[ "$rows" = $((R * (1 + NW + 1))) ] && [ "$idle" = $R ] && [ "$alone" = $((R * NW)) ] &&
	[ "$together" = $R ]
t $? "the CSV has repeat x (1 + workloads + 1) runs: $rows ($idle idle, $alone alone, $together together)"

# Each run's node delta is the difference of the two readings of the node.
awk -F, -v b="$(col node_uj_before)" -v a="$(col node_uj_after)" -v d="$(col node_de_uj)" '
	NR > 1 && $a - $b != $d { print "# row " NR ": " $a " - " $b " != " $d; bad = 1 }
	NR > 1 && $d <= 0 { print "# row " NR ": node delta " $d; bad = 1 }
	END { exit bad }' $csv
t $? "every run's node_de_uj is node_uj_after - node_uj_before, and positive"

# Conservation, the module's node total as the oracle: in every together
# run the tasks' energy (the root cgroup's, the workloads' within it)
# plus the node's idle energy is the node's, to the microjoule; the
# workloads' sum is within the tasks'.
awk -F, -v ta="$(col tasks_de_uj)" -v id="$(col idle_de_uj)" -v d="$(col node_de_uj)" \
	-v c0="$(col cpu_uj)" -v c1="$(col matrix_uj)" -v c2="$(col network_uj)" '
	NR > 1 && $2 == "together" {
		w = $c0 + $c1 + $c2
		if ($ta + $id != $d) { print "# row " NR ": tasks " $ta " + idle " $id " != node " $d; bad = 1 }
		if (w > $ta) { print "# row " NR ": workloads " w " > tasks " $ta; bad = 1 }
		k++
	}
	END { exit bad || k == 0 }' $csv
t $? "together runs: tasks + idle = node, to the microjoule"
grep -q '^conservation, 2 together runs: .* difference 0 uJ$' $out
t $? "the report's conservation line: difference 0 uJ"

# Every workload was charged, alone and together (positive, no share asserted).
awk -F, -v c0="$(col cpu_uj)" -v c1="$(col matrix_uj)" -v c2="$(col network_uj)" '
	NR > 1 && $2 != "idle" {
		for (i = 0; i < 3; i++) {
			c = i == 0 ? c0 : i == 1 ? c1 : c2
			if ($c != "" && $c <= 0) { print "# row " NR ": column " c " = " $c; bad = 1 }
		}
		if ($2 == "alone" && $3 != "cpu" && $3 != "matrix" && $3 != "network") bad = 1
	}
	END { exit bad }' $csv
rc=$?
ls -d $cg/joules-validate.* > /dev/null 2>&1 && rc=1
t $rc "every workload charged in each of its runs; the tool's cgroups removed"

# SIGTERM while a workload runs: its stress-ng killed, the cgroups gone.
joules-validate --duration 5 --repeat 1 --workloads cpu > /tmp/validate-term.out 2>&1 &
vpid=$!
i=0
while ! grep -q . $cg/joules-validate.$vpid/cpu/cgroup.procs 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 200 ] || break
	sleep 0.1
done
started=$([ $i -lt 200 ] && echo 1 || echo 0)
kill -TERM $vpid
wait $vpid
rc=$?
vpid=
sleep 0.5
left=$(cat /proc/[0-9]*/comm 2>/dev/null | grep -c '^stress-ng')
# Only if stress-ng had started: a tool that failed before would pass.
[ "$started" = 1 ] && [ $rc = 1 ] && [ "$left" = 0 ] && ! ls -d $cg/joules-validate.* > /dev/null 2>&1
rc=$?
[ $rc = 0 ] || sed 's/^/# /' /tmp/validate-term.out
t $rc "SIGTERM in a run: exit 1, no stress-ng left ($left), cgroups removed"

# --csv through a symlink (root writing where another user points): refused,
# the file it points to untouched.
echo precious > /tmp/validate-victim
ln -sf /tmp/validate-victim /tmp/validate-link.csv
joules-validate --duration 1 --repeat 1 --workloads cpu --csv /tmp/validate-link.csv \
	> /tmp/validate-link.out 2>&1
rc=$?
sed 's/^/# /' /tmp/validate-link.out
[ $rc = 1 ] && [ "$(cat /tmp/validate-victim)" = precious ] &&
	! ls -d $cg/joules-validate.* > /dev/null 2>&1
t $? "--csv a symlink: exit status $rc, its target untouched"
rm -f /tmp/validate-victim /tmp/validate-link.csv

# Not root: refused (2), saying why.
su -s /bin/sh -c "exec $(command -v joules-validate) --duration 1 --repeat 1 --workloads cpu" nobody \
	> /tmp/validate-user.out 2>&1
rc=$?
sed 's/^/# /' /tmp/validate-user.out
[ $rc = 2 ] && grep -q 'root' /tmp/validate-user.out
t $? "as nobody: exit status $rc with the reason"

# The meter gone and the model in force: nothing measured, refused (2).
kill "$meterd" "$follow" 2>/dev/null
wait "$meterd" "$follow" 2>/dev/null
meterd= follow=
joules_pdu_stop
echo 1500 > $sys/wallmeter/timeout_ms
wait_status '^silent: pdu-validate' 20
rc=$?
echo "8000000 0 0 0 0 0 0 0 20000000" > $sys/model/coefficients &&
	echo model > $sys/source
sleep 1
joules-validate --duration 1 --repeat 1 --workloads cpu > /tmp/validate-model.out 2>&1
vrc=$?
sed 's/^/# /' /tmp/validate-model.out
[ $rc = 0 ] && [ $vrc = 2 ] && grep -q 'not measured' /tmp/validate-model.out &&
	! ls -d $cg/joules-validate.* > /dev/null 2>&1
t $? "source model, no meter: exit status $vrc, 'not measured', nothing created"

# The meter resumes just before a run. The module's last interval ended
# before its first reading (source model), the next one is the meter's:
# the tool judges the node on an interval that ended after it started.
# A 1 s interval and a status read every 50 ms put the run inside the
# interval of the first reading nearly every time. The meter's timeout
# as found: test 15's 1.5 s would end the run at a slow reading.
echo 1000 > $sys/interval_ms
echo "$old_timeout" > $sys/wallmeter/timeout_ms
joules_pdu_start $port
joules_pdu_wait $conf && {
	joules-meterd -c $conf > /tmp/validate-meterd.log 2>&1 &
	meterd=$!
	wait_status '^pdu-validate$' 20 50
}
joules-validate --duration 1 --repeat 1 --workloads cpu > /tmp/validate-resume.out 2>&1
rc=$?
echo "$old_interval" > $sys/interval_ms
[ $rc = 0 ] || sed 's/^/# /' /tmp/validate-resume.out /tmp/validate-meterd.log
t $rc "a meter that resumed just before the run: exit status $rc"
exit $failed
