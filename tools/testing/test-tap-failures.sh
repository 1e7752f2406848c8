#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Host test of tap-failures: from a scripted kselftest log, every failed
# test's own lines and nothing of the tests that passed. TAP on stdout.
set -u
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. "$here"/tap.sh

# A harness program with one failed test of three, a shell script that
# fails without harness lines, and a program that passes.
printf '%s\r\n' \
	'# selftests: joules: 58-cgroups' \
	'# #  RUN           global.first ...' \
	'# # first says: fine' \
	'# ok 1 global.first' \
	'# #  RUN           global.second ...' \
	'# # second says: 2.1 J' \
	'# # 58-cgroups.c:206:second:Expected a (1) > b (2)' \
	'# not ok 2 global.second' \
	'# #  RUN           global.third ...' \
	'# # third says: fine' \
	'# ok 3 global.third' \
	'not ok 58 selftests: joules: 58-cgroups # exit=1' \
	'# selftests: joules: 55-meterd.sh' \
	'# meterd: no socket after 5 s' \
	'not ok 46 selftests: joules: 55-meterd.sh # exit=1' \
	'# selftests: joules: 59-cgroup-tools' \
	'# # 59 says: fine' \
	'ok 61 selftests: joules: 59-cgroup-tools' > "$work/log"
"$here"/tap-failures -v label=guest "$work/log" > "$work/out"
grep -q '^guest: not ok 2 global.second$' "$work/out"
t $? "a failed harness test is named"
grep -q '^  # # 58-cgroups.c:206:second:Expected a (1) > b (2)$' "$work/out"
t $? "with its assertion, without carriage returns"
grep -q 'second says: 2.1 J' "$work/out"
t $? "and what it printed"
! grep -q 'fine' "$work/out"
t $? "nothing of the tests that passed"
! grep -q 'not ok 58 selftests' "$work/out"
t $? "a program whose failure was shown by its test is not repeated"
grep -q '^guest: not ok 46 selftests: joules: 55-meterd.sh' "$work/out" &&
	grep -q '^  # meterd: no socket after 5 s$' "$work/out"
t $? "a script failing without harness lines shows its last lines"

# A test that printed more than 60 lines: its last 60, said so.
{
	echo '# selftests: joules: 87-differential'
	echo '# #  RUN           diff.long ...'
	i=0
	while [ $i -lt 100 ]; do echo "# # line $i"; i=$((i + 1)); done
	echo '# not ok 1 diff.long'
} > "$work/long"
"$here"/tap-failures "$work/long" > "$work/out"
grep -q '(42 earlier lines left out)' "$work/out" && grep -q '# # line 99$' "$work/out" &&
	! grep -q '# # line 40$' "$work/out"
t $? "a long failure keeps its end"

echo "1..$n"
[ $failed -eq 0 ]
