#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# snmpd's pass_persist handler for a simulated PDU (the host tests in
# run-host.sh, the guest's selftests/55-meterd and the meter demo):
# arguments BASE DIR TYPE. GET BASE.SUFFIX answers the first
# line of DIR/SUFFIX; with DIR/SUFFIX.seq, each GET takes that file's next
# line (the last one stays), for a trace with one value per reading.
# Usage (snmpd.conf): pass_persist BASE pdu-handler.sh BASE DIR TYPE
base=$1 dir=$2 type=$3
while read -r cmd; do
	case $cmd in
	PING) echo PONG ;;
	get)
		read -r oid
		suf=${oid#"$base".}
		if [ "$suf" != "$oid" ] && [ -f "$dir/$suf.seq" ]; then
			v=$(head -n 1 "$dir/$suf.seq")
			[ "$(wc -l < "$dir/$suf.seq")" -gt 1 ] && sed -i 1d "$dir/$suf.seq"
			printf '%s\n%s\n%s\n' "$oid" "$type" "$v"
		elif [ "$suf" != "$oid" ] && [ -f "$dir/$suf" ]; then
			printf '%s\n%s\n%s\n' "$oid" "$type" "$(head -n 1 "$dir/$suf")"
		else
			echo NONE
		fi ;;
	getnext) read -r oid; echo NONE ;;
	set) read -r oid; read -r val; echo not-writable ;;
	*) echo NONE ;;
	esac
done
