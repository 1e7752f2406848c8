#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Reproduce the cases of issue 17 against joules-train with recordings from
# gen-train (known coefficients, realistic meter behaviour, one edited line)
# and print, per case, the exit status and the numbers that matter. It checks
# nothing itself: the host unit tests (test_train_*) asserts the behaviour; this
# is for measuring before and after a change.
#   tools/testing/train/scenarios.sh [JOULES_TRAIN]
set -u
top=$(cd "$(dirname "$0")/../../.." && pwd)
jt=${1:-$top/user/build/joules-train}
w=$(mktemp -d /tmp/jt-scen.XXXXXX)
trap 'rm -rf "$w"' EXIT INT TERM
cc -O2 -std=gnu11 -D_GNU_SOURCE -I"$top/kmod" -o "$w/gen" "$top/tools/testing/train/gen-train.c" \
	"$top/tools/testing/train/gen.c" -lm || exit 1
cd "$w" || exit 1

# run NAME ARGS...: joules-train, then status, coefficients and headline.
run() {
	name=$1
	shift
	timeout 20 "$jt" "$@" > out.txt 2> err.txt
	rc=$?
	coef=$(grep -v '^#' out.txt | tail -n 1)
	head=$(grep '^# node MAPE' out.txt | sed 's/^# //')
	echo "$name: exit $rc; coef [$coef]; $head"
	grep -E 'warning|reject|refus|outlier|aggregat|cannot|degenerate' out.txt err.txt |
		head -n 6 | sed 's/^/    /'
	[ $rc -ne 0 ] && head -n 3 err.txt | sed 's/^/    err: /'
	return 0
}

# edit FILE LINE FIELD VALUE: set one CSV field of one line.
edit() {
	awk -F, -v OFS=, -v l="$2" -v f="$3" -v v="$4" 'NR == l { $f = v } { print }' \
		"$1" > "$1.tmp" && mv "$1.tmp" "$1"
}

echo "== 1. one bad value (truth: $(./gen -n 4000 --interval-ms 250 -s s.csv -p p.csv))"
cp s.csv s0.csv; cp p.csv p0.csv
edit s.csv 2001 8 1000000000000000
run "1a cpu_ns 1e15" -s s.csv -p p.csv
cp s0.csv s.csv; edit s.csv 2001 9 18446744073709550616
run "1b cycles 2^64-1000" -s s.csv -p p.csv
cp s0.csv s.csv; edit s.csv 2001 8 40000000000
run "1c cpu_ns 160x (plausible)" -s s.csv -p p.csv
echo "   truth: $(./gen -n 4000 --interval-ms 250 --meter-ms 1000 --meter average \
	--truth '6e6 0 500 50000 10000 40e6' -s s.csv -p p.csv)"
cp p.csv p0.csv
edit p.csv 500 2 100000
run "1d one 100 kW reading" -s s.csv -p p.csv --meter average
cp p0.csv p.csv; edit p.csv 500 2 0
run "1e one 0 W dropout" -s s.csv -p p.csv --meter average
cp p0.csv p.csv; edit p.csv 500 2 100000
run "1f 100 kW, --robust off" -s s.csv -p p.csv --meter average --robust off

echo "== 2. meter reads 0 W throughout"
./gen -n 500 -s s.csv -p p.csv > /dev/null
awk -F, -v OFS=, 'NR > 1 { $2 = 0 } { print }' p.csv > p2.csv
mkdir -p fake/model; echo 1 > fake/model/generation; : > fake/model/coefficients
run "2 zero meter, --apply" -s s.csv -p p2.csv --apply --sysfs fake
echo "    sysfs got: [$(cat fake/model/coefficients)]"

echo "== 3. 100 ms rows, 1 Hz meter (truth: $(./gen -n 20000 --interval-ms 100 \
	--meter-ms 1000 --meter average --phase-rows 5 \
	--truth '6e6 300 500 50000 10000 40e6' -s s.csv -p p.csv))"
run "3 average meter" -s s.csv -p p.csv --meter average
./gen -n 20000 --interval-ms 100 --meter-ms 1000 --meter instant --phase-rows 5 \
	--truth '6e6 300 500 50000 10000 40e6' -s s.csv -p p.csv > /dev/null
run "3 instant meter" -s s.csv -p p.csv

echo "== 4. meter averages over the preceding 1 s, rows 1 s (truth: $(./gen -n 3000 \
	--meter-ms 1000 --meter average --phase-rows 3 -s s.csv -p p.csv))"
run "4 read as instant" -s s.csv -p p.csv --meter instant
run "4 read as average" -s s.csv -p p.csv --meter average

echo "== 5. collinear features (truth: $(./gen -n 5000 --spread 0.02 --phase-rows 10 \
	-s s.csv -p p.csv))"
run "5 nnls" -s s.csv -p p.csv
run "5 ols" -s s.csv -p p.csv -m ols
run "5 ols --apply" -s s.csv -p p.csv -m ols --apply --sysfs fake

echo "== 6. duplicate and overlapping rows"
./gen -n 1000 --interval-ms 100 -s s.csv -p p.csv > /dev/null
awk 'NR == 501 { print } { print }' s.csv > s6.csv
run "6a repeated row" -s s6.csv -p p.csv
awk -F, -v OFS=, 'NR == 501 { $3 = $3 * 10 } { print }' s.csv > s6.csv
run "6b 10x interval" -s s6.csv -p p.csv

echo "== 7. --pdu-cmd"
start=$(date +%s)
run "7a hanging reader" -s s.csv -c 'sleep 30' --pdu-timeout 2
echo "    took $(( $(date +%s) - start )) s"
run "7b bad lines forever" -s s.csv -c 'yes garbage' --max-bad 10
"$jt" -s s.csv -c 'sh -c "sleep 300 & echo \$! > kid.pid; wait"' > /dev/null 2>&1 &
jpid=$!
sleep 1
kill -TERM $jpid; wait $jpid 2>/dev/null
sleep 0.5
kid=$(cat kid.pid 2>/dev/null)
# A zombie is dead: whoever inherited it has not reaped it yet.
if [ -n "$kid" ] && ps -o stat= -p "$kid" 2>/dev/null | grep -qv Z; then
	echo "7c SIGTERM: reader's child $kid orphaned"; kill "$kid"
else
	echo "7c SIGTERM: reader's child gone"
fi

echo "== 8. small things"
printf '\357\273\277' > sb.csv; cat s.csv >> sb.csv
run "8a BOM" -s sb.csv -p p.csv
run "8b --clock-offset -9000000000" -s s.csv -p p.csv --clock-offset -9000000000
cp p.csv p8.csv; edit p8.csv 10 2 1e300
run "8c 1e300 W" -s s.csv -p p8.csv
run "8d offset 3 s (spans?)" -s s.csv -p p.csv --clock-offset 99.95 --min-samples 100
