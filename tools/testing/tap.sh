# SPDX-License-Identifier: GPL-2.0
# Sourced by the host's TAP-printing test scripts: t RC NAME prints the
# line of one check (RC 0: ok) and counts it in n and failed.
n=0
failed=0
t() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; failed=$((failed + 1)); fi
}
