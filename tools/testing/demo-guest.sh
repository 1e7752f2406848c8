#!/bin/sh
# Runs inside the demo guest: load joules, show its sysfs.
. /lib/joules/lib.sh
echo "# loading joules"
joules_load || exit 1
echo "# /sys/kernel/joules:"
for f in /sys/kernel/joules/*; do
	[ -f "$f" ] && printf '  %-24s %s\n' "$(basename "$f")" "$(cat "$f" 2>/dev/null)"
done
joules_unload
