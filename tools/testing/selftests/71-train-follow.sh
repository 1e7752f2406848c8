#!/bin/sh
# joules-train --follow in the booted kernel, on the module's own netlink
# samples: a wrong model is in force, a live synthetic meter reads what a
# known model (7 W per busy CPU on 15 W idle) draws, and the follower must
# replace the wrong set with the known one, logging every decision, and
# stop cleanly on SIGTERM.
. /lib/joules/lib.sh
n=0
failed=0
t() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; failed=1; fi; }
echo "TAP version 13"
if ! command -v joulesctl >/dev/null || ! command -v joules-train >/dev/null; then
	echo "1..0 # SKIP joulesctl or joules-train not installed"
	exit 4
fi
echo "1..4"
dir=/tmp/train-follow
rm -rf $dir && mkdir -p $dir
sys=/sys/kernel/joules
old_coef=$(cat $sys/model/coefficients)
echo 100 > $sys/interval_ms
# The wrong set in force: 1 W per busy CPU, 1 W idle.
echo "1000000 0 0 0 0 0 0 0 1000000" > $sys/model/coefficients
gen0=$(cat $sys/model/generation)

# The meter: each interval's mean power under the known model, stamped at
# the interval's end, as a PDU that reports the mean of its last period.
# joulesctl record writes "# node: ..." lines, then the header, then rows.
meter='joulesctl record - | awk -F, '\''/^#/ { next } !hdr { hdr = 1; next } $3 > 0 {
	printf "%.6f,%.6f\n", $1 / 1e9, (15e6 * $3 + 7e6 * $8) / $3 / 1e6; fflush() }'\'

# A workload whose CPU use varies from interval to interval.
(
	k=0
	while :; do
		i=0
		lim=$(( (k % 6) * 2500 ))
		while [ $i -lt $lim ]; do i=$((i + 1)); done
		sleep 0.1
		k=$((k + 1))
	done
) &
work=$!
joules-train --follow -c "$meter" --meter average --apply --window 20 --refit 5 \
	--log $dir/log > $dir/out 2>&1 &
tr=$!
sleep 24
kill -TERM $tr
i=0
while kill -0 $tr 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
kill -0 $tr 2>/dev/null && kill -KILL $tr
wait $tr
rc=$?
kill $work 2>/dev/null
wait $work 2>/dev/null
sed 's/^/# /' $dir/log | head -n 20
sed 's/^/# out: /' $dir/out | head -n 10

grep -q "applied:" $dir/log && grep -q "stopped by signal 15" $dir/log
t $? "the log has an applied set and the stop"
[ $rc -eq 0 ]; t $? "SIGTERM: exit status $rc"

set -- $(cat $sys/model/coefficients)
cpu=$1 idle=$9
gen1=$(cat $sys/model/generation)
echo "# in force: $* (generation $gen0 -> $gen1)"
awk -v c="$cpu" -v i="$idle" 'BEGIN {
	dc = c - 7e6; if (dc < 0) dc = -dc; di = i - 15e6; if (di < 0) di = -di
	exit !(dc <= 7e6 * 0.05 && di <= 15e6 * 0.05) }' && [ "$gen1" -gt "$gen0" ]
t $? "the known model replaced the wrong one: cpu_time_uw $cpu, idle_uw $idle"

# Every refit says what it decided, nothing else is logged per refit.
bad=$(grep " refit " $dir/log | grep -cv ": applied:\|: kept:\|: rejected:")
[ "$bad" -eq 0 ] && [ "$(grep -c ' refit ' $dir/log)" -ge 2 ]
t $? "one decision per refit ($(grep -c ' refit ' $dir/log) refits)"

echo "$old_coef" > $sys/model/coefficients
exit $failed
