#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# joules-validate on the build host, where it must never start anything:
# --help and --version, usage errors (exit 2 with the reason), and the
# refusal without the module (exit 2: this only looks for
# /sys/module/joules, so it is safe on any machine; skipped where the
# module is loaded, since the tool would then go on). Prints TAP; run by
# tools/testing/run-tests (make check's host stage).
#
#   host-test.sh [TOP]   (TOP: the source tree, default this script's ../../..)
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=${1:-$(cd "$here/../../.." && pwd)}
v=$top/user/build/joules-validate
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
n=0
failed=0
t() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; failed=1; fi; }
echo "TAP version 13"
if ! [ -x "$v" ]; then
	echo "1..0 # SKIP $v not built (make user)"
	exit 4
fi
echo "1..10"

"$v" --help > "$work/out" 2> "$work/err"
rc=$?
[ $rc = 0 ] && grep -q '^Usage: joules-validate' "$work/out" && ! [ -s "$work/err" ]
t $? "--help: exit 0, usage on stdout"
for o in --duration --repeat --workloads --stress-ng --cgroup-root --csv --tmpdir; do
	grep -q -- "$o" "$work/out" || { t 1 "--help names $o"; break; }
done
[ $n = 1 ] && t 0 "--help names every option"

"$v" --version > "$work/out" 2>&1
[ $? = 0 ] && grep -q '^joules-validate [0-9]' "$work/out"
t $? "--version: exit 0 ($(cat "$work/out"))"

# usage ARGS... WANT: exit 2, one line of reason naming WANT, the hint.
usage() {
	want=$1
	shift
	"$v" "$@" > "$work/out" 2> "$work/err"
	rc=$?
	[ $rc = 2 ] && ! [ -s "$work/out" ] && grep -q -- "$want" "$work/err" &&
		grep -q "^Try 'joules-validate --help'" "$work/err"
	t $? "$* : exit $rc, '$(head -n 1 "$work/err")'"
}
usage "invalid option '--bogus'" --bogus
usage "unknown workload 'disk'" --workloads cpu,disk
usage "no workload" --workloads ,
usage "want a whole number" --duration 1.5
usage "want a positive number" --repeat 0
usage "unexpected argument 'now'" now

if [ -d /sys/module/joules ]; then
	echo "ok $((n + 1)) # SKIP the joules module is loaded here: not run"
	n=$((n + 1))
else
	"$v" --duration 1 --repeat 1 > "$work/out" 2> "$work/err"
	rc=$?
	[ $rc = 2 ] && [ "$(wc -l < "$work/err")" = 1 ] &&
		grep -q 'joules module is not loaded' "$work/err"
	t $? "without the module: exit $rc, '$(cat "$work/err")'"
fi
exit $failed
