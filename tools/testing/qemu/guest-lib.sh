# Helpers shared by the guest runner and the shell selftests.
JOULES_KO=/lib/joules/joules.ko

# What the kernel's checkers print (BUG, WARNING, Oops, KASAN, UBSAN,
# lockdep, RCU stalls, hung tasks, sleeping in atomic context; and the
# workqueue's warning for a queue it deprecates, as 7.2 does): the runner
# fails a program whose dmesg matches, and 01-checkers shows it would.
JOULES_CHECKERS='BUG|WARNING|Oops|general protection|Call Trace|list_del corruption|refcount_t|KASAN|UBSAN|DEBUG_LOCKS_WARN_ON|possible (recursive|circular) locking|suspicious RCU|rcu.*(stall|detected)|INFO: task .* blocked|scheduling while atomic|invalid context|kmemleak|enqueued on deprecated'

joules_loaded() { [ -d /sys/module/joules ]; }

# Load the module and mount its per-pid files, as the installed udev rule does.
joules_load() {
	joules_loaded || insmod "$JOULES_KO" "$@" || return 1
	if [ -d /proc/energy ] && ! grep -q ' /proc/energy ' /proc/mounts; then
		if grep -q joulesfs /proc/filesystems; then
			mount -t joulesfs joulesfs /proc/energy || return 1
		fi
	fi
	return 0
}

joules_unload() {
	if grep -q ' /proc/energy ' /proc/mounts; then
		umount /proc/energy || return 1
	fi
	! joules_loaded || rmmod joules
}

# A simulated PDU inside the guest: Debian's snmpd on 127.0.0.1:PORT, its
# Raritan outlet 1's active power (PDU2-MIB measurementsOutletSensorValue,
# index pdu 1, outlet 1, activePower 5) served by a pass_persist handler
# from /tmp/pdu/1.1.5, which joules_pdu_watts sets. Sets JOULES_PDU_PID.
JOULES_RARITAN=.1.3.6.1.4.1.13742.6.5.4.3.1.4
joules_pdu_start() {
	command -v snmpd >/dev/null || return 1
	ip link set lo up 2>/dev/null
	mkdir -p /tmp/pdu /tmp/snmp
	[ -f /tmp/pdu/1.1.5 ] || echo 0 > /tmp/pdu/1.1.5
	cat > /tmp/snmpd.conf <<CONF
rocommunity public 127.0.0.1
pass_persist $JOULES_RARITAN /lib/joules/pdu-handler.sh $JOULES_RARITAN /tmp/pdu gauge
CONF
	SNMP_PERSISTENT_DIR=/tmp/snmp MIBS= timeout 600 snmpd -f -Lo -C -c /tmp/snmpd.conf \
		"udp:127.0.0.1:$1" > /tmp/snmpd.log 2>&1 &
	JOULES_PDU_PID=$!
}
joules_pdu_watts() { mkdir -p /tmp/pdu && echo "$1" > /tmp/pdu/1.1.5; }
# A PDU whose power follows the load, as a real one's does: every 0.5 s,
# IDLE_W plus W_PER_CPU for each CPU's worth of busy time in /proc/stat
# (not joules' figures). Runs until killed; start it with &.
joules_pdu_follow() {
	set -- "$1" "$2" 0 0
	while :; do
		read -r _ u n s i w q sq _ < /proc/stat
		busy=$((u + n + s + q + sq)) total=$((u + n + s + i + w + q + sq))
		if [ "$4" -gt 0 ] && [ "$total" -gt "$4" ]; then
			joules_pdu_watts $(($1 + $2 * $(nproc) * (busy - $3) / (total - $4)))
		fi
		set -- "$1" "$2" "$busy" "$total"
		sleep 0.5
	done
}
joules_pdu_stop() {
	[ -n "${JOULES_PDU_PID:-}" ] || return 0
	kill "$JOULES_PDU_PID" 2>/dev/null
	wait "$JOULES_PDU_PID" 2>/dev/null
	JOULES_PDU_PID=
}

# joules-meterd's configuration for that PDU (name NAME, reading every
# INTERVAL s) in FILE, mode 0600 as its credentials require.
joules_meterd_conf() {
	umask 077
	cat > "$1" <<CONF
name = $2
interval = $3
timeout = 1
[snmp pdu]
host = 127.0.0.1
port = $4
community = public
family = raritan
outlet = 1
CONF
	umask 022
}

# Wait up to 20 s for the PDU to answer joules-meterd (CONF).
joules_pdu_wait() {
	i=0
	while ! joules-meterd -c "$1" --once --no-feed > /dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt 40 ] || return 1
		sleep 0.5
	done
}
