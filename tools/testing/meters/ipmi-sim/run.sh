#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs the IPMI backend's tests (test_ipmi, each test with its own ipmi_sim
# on 127.0.0.1) bounded in time, in a directory of their own removed at the
# end; every ipmi_sim is a child of its test with PR_SET_PDEATHSIG and ends
# with it. TAP on stdout; the exit status is the test program's.
set -u
PROG=${1:-build/test_ipmi}
LIMIT=${IPMI_SIM_LIMIT:-300}

for t in ipmi_sim pkg-config; do
	command -v "$t" >/dev/null 2>&1 || { echo "1..0 # SKIP $t missing (apt-get install openipmi)"; exit 4; }
done

dir=$(mktemp -d /tmp/joules-ipmi-sim.XXXXXX) || exit 1
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null
	[ -n "$pid" ] && wait "$pid" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

IPMI_SIM_TMP=$dir timeout -k 5 "$LIMIT" nice -n 10 "$PROG" &
pid=$!
wait "$pid"
rc=$?
pid=
[ "$rc" = 124 ] && echo "not ok - timed out after ${LIMIT}s"
exit "$rc"
