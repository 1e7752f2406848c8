#!/bin/sh
# End to end in the booted kernel: record joules' samples while a workload
# runs, make a meter trace from known coefficients (what a PDU would have
# read), train with joules-train, --apply, and check the per-pid energy
# follows the trained model.
. /lib/joules/lib.sh
n=0
failed=0
t() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; failed=1; fi; }
echo "TAP version 13"
if ! command -v joulesctl >/dev/null || ! command -v joules-train >/dev/null; then
	echo "1..0 # SKIP joulesctl or joules-train not installed"
	exit 4
fi
echo "1..6"
# The truth the trainer must find: 7 W per busy CPU on top of 15 W idle.
CPU_UW=7000000
IDLE_UW=15000000
dir=/tmp/train-e2e
rm -rf $dir && mkdir -p $dir
# The model and interval as found, put back at the end: the trainer's
# --apply replaces the model, and the module stays loaded after the test.
old_coef=$(cat /sys/kernel/joules/model/coefficients)
old_interval=$(cat /sys/kernel/joules/interval_ms)
trap 'echo "$old_coef" > /sys/kernel/joules/model/coefficients;
	echo "$old_interval" > /sys/kernel/joules/interval_ms' EXIT
echo 100 > /sys/kernel/joules/interval_ms

# A workload whose CPU use varies from interval to interval.
(
	k=0
	while [ $k -lt 24 ]; do
		i=0
		lim=$(( (k % 6) * 2500 ))
		while [ $i -lt $lim ]; do i=$((i + 1)); done
		sleep 0.1
		k=$((k + 1))
	done
) &
work=$!
joulesctl record --count 80 $dir/samples.csv > $dir/record.out 2>&1
rc=$?
kill $work 2>/dev/null
wait $work 2>/dev/null
rows=$(($(grep -vc '^#' $dir/samples.csv) - 1))
[ $rc -eq 0 ] && [ $rows -ge 60 ]; t $? "joulesctl record wrote $rows samples"

# The meter: for each interval, the known model's average power, held flat
# over the interval (two readings 1 us inside its ends).
awk -F, -v cu=$CPU_UW -v iu=$IDLE_UW '
/^#/ { next }
!hdr { for (i = 1; i <= NF; i++) col[$i] = i; hdr = 1; next }
{
	end = $col["realtime_ns"]; dt = $col["interval_ns"]; cpu = $col["cpu_ns"]
	if (dt <= 0) next
	w = (iu * dt / 1e9 + cu * cpu / 1e9) / (dt / 1e9) / 1e6
	# The interval starts where the last one ended (clocks differ by us).
	start = prev ? prev : end - dt
	printf "%.6f,%.6f\n", start / 1e9 + 1e-6, w
	printf "%.6f,%.6f\n", end / 1e9 - 1e-6, w
	prev = end
}' $dir/samples.csv > $dir/pdu.csv
[ "$(wc -l < $dir/pdu.csv)" -ge 100 ]; t $? "synthetic meter trace ($(wc -l < $dir/pdu.csv) readings)"

gen0=$(cat /sys/kernel/joules/model/generation)
joules-train --samples $dir/samples.csv --pdu $dir/pdu.csv --apply -o $dir/coef.txt > $dir/train.out 2>&1
rc=$?
sed 's/^/# /' $dir/train.out | head -n 30
gen1=$(cat /sys/kernel/joules/model/generation)
[ $rc -eq 0 ] && [ "$gen1" -gt "$gen0" ]; t $? "joules-train fitted and applied (generation $gen0 -> $gen1)"

set -- $(cat /sys/kernel/joules/model/coefficients)
cpu=$1 idle=$9
echo "# applied: $*"
awk -v got=$cpu -v want=$CPU_UW 'BEGIN { d = got - want; if (d < 0) d = -d; exit !(d <= want * 0.02) }'
t $? "cpu_time_uw $cpu within 2% of $CPU_UW"
awk -v got=$idle -v want=$IDLE_UW 'BEGIN { d = got - want; if (d < 0) d = -d; exit !(d <= want * 0.02) }'
t $? "idle_uw $idle within 2% of $IDLE_UW"

# A new busy process is charged by the trained model.
sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i + 1)); done; sleep 5' &
busy=$!
sleep 2
body=$(cat /proc/energy/$busy)
kill $busy
e=$(echo "$body" | sed -n 's/^energy_uj: //p')
c=$(echo "$body" | sed -n 's/^cpu_time_ns: //p')
g=$(echo "$body" | sed -n 's/^model_generation: //p')
echo "# busy: energy_uj=$e cpu_time_ns=$c generation=$g"
case $e in ''|*[!0-9]*) e=-1 ;; esac
awk -v e="$e" -v c="$c" -v k=$cpu 'BEGIN { want = k * c / 1e9; d = e - want; if (d < 0) d = -d; exit !(e > 0 && k > 0 && c > 0 && d <= want * 0.01 + 1) }' && [ "$g" = "$gen1" ]
t $? "per-pid energy follows the trained model"
exit $failed
