#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# joules-train benchmark, on one core:
#  1. the fitter on 1,000,000 in-memory samples x 8 feature columns (fit time
#     and samples per second, OLS and NNLS with 5-fold CV);
#  2. end to end: joules-train on 1,000,000 recorded samples (all 8
#     features: 9 coefficients) and 2,000,000 meter readings, CSV parsing
#     included, with every default, and a single fit alone; wall and user
#     time and peak RSS (GNU time).
# Usage: tools/testing/bench/bench-train.sh [SAMPLES] [FEATURES]
set -eu

N=${1:-1000000}
P=${2:-8}
top=$(cd "$(dirname "$0")/../../.." && pwd)
work=$(mktemp -d /tmp/bench-train.XXXXXX)
trap 'rm -rf "$work"' EXIT INT TERM

CC=${CC:-cc}
CFLAGS="-O2 -std=gnu11 -D_GNU_SOURCE $(pkg-config --cflags gsl)"
GSL_LIBS=$(pkg-config --libs gsl)

# One core: taskset where it exists, else whatever the scheduler gives.
pin=""
if command -v taskset >/dev/null 2>&1; then
	pin="taskset -c 0"
fi

echo "== fitter: $N samples x $P features, 5-fold CV, one core =="
$CC $CFLAGS -I"$top/user/joules-train" -o "$work/bench_train" \
	"$top/tools/testing/bench/bench_train.c" "$top/user/joules-train/fit.c" \
	$GSL_LIBS -lm
$pin "$work/bench_train" -n "$N" -p "$P" -k 5 --direct

echo
echo "== joules-train end to end: $N samples, CSV in, coefficients out =="
make -s -C "$top/user" build/joules-train >/dev/null
$CC -O2 -std=gnu11 -D_GNU_SOURCE -I"$top/kmod" -o "$work/gen-train" \
	"$top/tools/testing/train/gen-train.c" "$top/tools/testing/train/gen.c" -lm
printf 'true coefficients: '
"$work/gen-train" -n "$N" --extra -s "$work/samples.csv" -p "$work/pdu.csv"
ls -l "$work/samples.csv" "$work/pdu.csv" | awk '{ printf "%s: %d MB\n", $NF, $5 / 1048576 }'
# Every default (robust fitting, band search, nested CV headline); then the
# single fit alone (--bands 1 -k 0) for comparison. GNU time gives the peak
# resident set size.
run() {
	what=$1
	shift
	/usr/bin/time -f '%e %U %M' -o "$work/time" $pin \
		"$top/user/build/joules-train" -s "$work/samples.csv" \
		-p "$work/pdu.csv" -o "$work/coef.txt" -q "$@"
	read -r wall user rss < "$work/time"
	awk -v w="$wall" -v u="$user" -v r="$rss" -v n="$N" -v what="$what" 'BEGIN {
		printf "%s: %.2f s wall, %.2f s user, peak RSS %.0f MB, %.3g samples/s\n",
			what, w, u, r / 1024, n / u }'
}
run "end to end, every default"
tail -n 1 "$work/coef.txt" | sed 's/^/fitted coefficients: /'
grep '^# node MAPE' "$work/coef.txt" || true
run "end to end, one set without cross-validation (--bands 1 -k 0)" --bands 1 -k 0
