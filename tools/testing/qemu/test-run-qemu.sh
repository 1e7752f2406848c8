#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Host test of run-qemu.sh's judge and its one retry, with a stand-in for
# QEMU that writes a scripted console: which boots are retried (a kernel
# oops before init only), what counts, and what is said; and how many
# guests its slots let run at once. TAP on stdout.
set -u
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. "$here"/../tap.sh

# The stand-in: boot K of a run plays word K of $FAKE_BOOTS into the
# file of -serial file:PATH, and exits as QEMU would after it.
mkdir -p "$work/bin" "$work/mods"
cat > "$work/bin/qemu-system-x86_64" <<'EOF'
#!/bin/sh
serial=
while [ $# -gt 0 ]; do
	[ "$1" = -serial ] && serial=${2#file:}
	shift
done
k=$(($(cat "$FAKE_DIR/boots" 2>/dev/null || echo 0) + 1))
echo $k > "$FAKE_DIR/boots"
what=$(echo $FAKE_BOOTS | cut -d' ' -f$k)
case $what in
oops)
	printf '[    2.857614] Oops: int3: 0000 [#1] PREEMPT SMP NOPTI\n' > "$serial"
	printf '[    2.860000] Kernel panic - not syncing: Fatal exception\n' >> "$serial"
	exit 0 ;;
oops61)
	# 6.1 names a trap's oops by the trap alone.
	printf '[    2.857614] int3: 0000 [#1] PREEMPT SMP NOPTI\n' > "$serial"
	printf '[    2.860000] Kernel panic - not syncing: Fatal exception\n' >> "$serial"
	exit 0 ;;
panic)
	printf '[    3.100000] Kernel panic - not syncing: No working init found.\n' > "$serial"
	exit 0 ;;
good)
	printf 'JOULES-GUEST-INIT\nJOULES-GUEST-START mode=tests kernel=fake cpus=2\n' > "$serial"
	printf 'ok 1 selftests: joules: 00-load.sh\nJOULES-GUEST-END rc=0\n' >> "$serial"
	exit 1 ;;
oops-after-init)
	printf 'JOULES-GUEST-INIT\n[    5.000000] Oops: int3: 0000 [#1] SMP\n' > "$serial"
	printf '[    5.100000] Kernel panic - not syncing: Fatal exception\n' >> "$serial"
	exit 0 ;;
quit)
	echo "qemu: could not open something" >&2
	exit 1 ;;
hang)
	echo $$ > "$FAKE_DIR/qemu.pid"
	exec sleep 60 ;;
slow)
	# How many guests run at once: each says how many it saw beside it.
	mkdir "$FAKE_SHARED/running.$$"
	sleep 1
	ls -d "$FAKE_SHARED"/running.* | wc -l >> "$FAKE_SHARED/seen"
	sleep 1
	rmdir "$FAKE_SHARED/running.$$"
	printf 'JOULES-GUEST-INIT\nJOULES-GUEST-START mode=tests kernel=fake cpus=2\n' > "$serial"
	printf 'ok 1 selftests: joules: 00-load.sh\nJOULES-GUEST-END rc=0\n' >> "$serial"
	exit 1 ;;
esac
EOF
chmod +x "$work/bin/qemu-system-x86_64"
: > "$work/kernel"
: > "$work/mods/joules.ko"

# run BOOTS: run-qemu.sh once; its status in $rc, counts in $counts,
# stderr in $work/err, the number of boots in $boots.
run() {
	rm -f "$work/boots" "$work/counts" "$work/log" "$work/log.boot1"
	FAKE_DIR=$work FAKE_BOOTS=$1 PATH="$work/bin:$PATH" JOULES_QEMU_LOCK=$work/lock \
		"$here"/run-qemu.sh --mode tests --kernel "$work/kernel" --modules "$work/mods" \
		--counts "$work/counts" --log "$work/log" > /dev/null 2> "$work/err"
	rc=$?
	counts=$(cat "$work/counts" 2>/dev/null)
	boots=$(cat "$work/boots" 2>/dev/null)
}

# together SLOTS: two slow guests started at once; how many ran at a time.
together() {
	rm -rf "$work/shared" "$work/g1" "$work/g2"
	mkdir -p "$work/shared" "$work/g1" "$work/g2"
	for g in g1 g2; do
		FAKE_DIR=$work/$g FAKE_SHARED=$work/shared FAKE_BOOTS=slow PATH="$work/bin:$PATH" \
			JOULES_QEMU_LOCK=$work/lock JOULES_QEMU_SLOTS=$1 \
			"$here"/run-qemu.sh --mode tests --kernel "$work/kernel" --modules "$work/mods" \
			--counts "$work/$g/counts" --log "$work/$g/log" > /dev/null 2>&1 &
	done
	wait
	seen=$(sort -n "$work/shared/seen" | tr '\n' ' ')
	counts=$(cat "$work/g1/counts" "$work/g2/counts" 2>/dev/null | tr '\n' ' ')
}

echo "1..8"
run "oops good"
[ $rc = 0 ] && [ "$counts" = "2 0 0 1" ] && [ "$boots" = 2 ] &&
	grep -q 'Oops: int3' "$work/log.boot1" && grep -q 'Oops: int3' "$work/err" &&
	grep -q "second boot's results" "$work/err"
t $? "an oops before init: shown, kept, booted once more, said (rc $rc, counts '$counts')"

run "oops61 good"
[ $rc = 0 ] && [ "$counts" = "2 0 0 1" ] && [ "$boots" = 2 ]
t $? "an oops before init as 6.1 prints it: booted once more (rc $rc, counts '$counts')"

run "oops oops"
[ $rc = 1 ] && [ "$boots" = 2 ] && [ "${counts#* * * }" = 1 ] && [ "${counts%% *}" = 0 ]
t $? "an oops before init twice: fails after two boots (rc $rc, counts '$counts')"

run "panic good"
[ $rc = 1 ] && [ "$boots" = 1 ] && [ "${counts#* * * }" = 0 ] && [ ! -e "$work/log.boot1" ]
t $? "a panic without an oops (no init) is not retried (rc $rc, counts '$counts')"

run "oops-after-init good"
rc1=$rc c1=$counts b1=$boots
run "quit good"
[ $rc1 = 1 ] && [ "$b1" = 1 ] && [ $rc = 1 ] && [ "$boots" = 1 ]
t $? "an oops after init, and QEMU failing to start, are not retried (rc $rc1/$rc, counts '$c1'/'$counts')"

together 1
[ "$seen" = "1 1 " ] && [ "$counts" = "2 0 0 0 2 0 0 0 " ]
t $? "one slot: two guests run one after the other (seen '$seen', counts '$counts')"

together 2
[ "$seen" = "2 2 " ] && [ "$counts" = "2 0 0 0 2 0 0 0 " ]
t $? "two slots: two guests run at once (seen '$seen', counts '$counts')"

# Killed while its guest runs: QEMU goes too, and with it the slot.
rm -f "$work/qemu.pid" "$work/boots"
FAKE_DIR=$work FAKE_BOOTS=hang PATH="$work/bin:$PATH" JOULES_QEMU_LOCK=$work/lock \
	"$here"/run-qemu.sh --mode tests --kernel "$work/kernel" --modules "$work/mods" \
	--log "$work/log" > /dev/null 2>&1 &
rq=$!
i=0
while [ ! -s "$work/qemu.pid" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
qp=$(cat "$work/qemu.pid" 2>/dev/null)
kill -TERM $rq
wait $rq
i=0
while [ -n "$qp" ] && kill -0 "$qp" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
alive=no
[ -n "$qp" ] && kill -0 "$qp" 2>/dev/null && alive=yes
[ -n "$qp" ] && kill "$qp" 2>/dev/null
[ -n "$qp" ] && [ $alive = no ] && flock -n "$work/lock" true
t $? "run-qemu.sh killed: its QEMU is gone and the slot free (QEMU pid ${qp:-none}, alive $alive)"

echo "# run-qemu judge: $((n - failed)) passed, $failed failed"
[ $failed = 0 ]
