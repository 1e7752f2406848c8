#!/bin/sh
# Runs inside the demo guest (make demo): load joules, set a model, run a
# small workload and show what each process was charged.
. /lib/joules/lib.sh
say() { printf '\n== %s\n' "$*"; }

say "loading joules.ko and mounting /proc/energy"
joules_load || { echo "demo: cannot load joules" >&2; exit 1; }
echo "version $(cat /sys/kernel/joules/version), tracking $(cat /sys/kernel/joules/tasks_tracked) tasks"
echo "source: $(cat /sys/kernel/joules/source)   RAPL: $(cat /sys/kernel/joules/rapl/status)   hardware counters: $(cat /sys/kernel/joules/hw_counters)"

say "QEMU has no RAPL, so energy comes from a model; setting demo coefficients"
# 8 W per busy CPU, 1 nJ per storage byte, 20 W idle: a made-up model for
# the demo. On a real machine joules-train learns these from a power meter.
echo "8000000 0 0 0 1000 0 0 0 20000000" > /sys/kernel/joules/model/coefficients
printf 'coefficients (cpu_time_uw cycles_pj instructions_pj cache_miss_pj disk_byte_pj net_tx_byte_pj net_rx_byte_pj pagecache_byte_pj idle_uw): %s\n' \
	"$(cat /sys/kernel/joules/model/coefficients)"
echo "generation: $(cat /sys/kernel/joules/model/generation)"

if grep -q 'jmeter=snmp' /proc/cmdline; then
	say "the wall meter: a simulated PDU (snmpd on 127.0.0.1:16161, a Raritan outlet drawing 60 W idle and 45 W per busy CPU) read by joules-meterd"
	joules_pdu_watts 60
	joules_pdu_follow 60 45 &
	follow=$!
	joules_pdu_start 16161 || { echo "demo: no snmpd in the initramfs" >&2; exit 1; }
	joules_meterd_conf /tmp/meterd.conf pdu-demo 0.5 16161
	joules_pdu_wait /tmp/meterd.conf || { echo "demo: the PDU does not answer" >&2; exit 1; }
	joules-meterd -c /tmp/meterd.conf --once
	joules-meterd -c /tmp/meterd.conf > /tmp/meterd.log 2>&1 &
	meterd=$!
	sleep 3
	echo "wallmeter/status: $(cat /sys/kernel/joules/wallmeter/status), readings: $(cat /sys/kernel/joules/wallmeter/readings)"
	echo "static power, measured while the node was idle (static_power; '-': no interval"
	echo "was idle enough yet, and under emulation the daemons alone may keep it busy):"
	cat /sys/kernel/joules/static_power
fi

say "workload: 'heavy' runs three times the busy loop of 'light'; 'sleeper' sleeps"
for w in heavy:60000 light:20000; do
	name=${w%:*}
	n=${w#*:}
	cat > /tmp/$name <<SCRIPT
#!/bin/sh
i=0
while [ \$i -lt $n ]; do i=\$((i + 1)); done
sleep 30
SCRIPT
	chmod +x /tmp/$name
done
/tmp/heavy &
heavy=$!
/tmp/light &
light=$!
sleep 30 &
sleeper=$!
sleep 4

say "per-process energy (cat /proc/energy/<pid>)"
for p in $heavy $light $sleeper; do
	echo "--- /proc/energy/$p"
	cat /proc/energy/$p
done

if [ -x /usr/bin/joulesctl ]; then
	say "joulesctl top -n 1 (top processes by power)"
	joulesctl top -n 1 -d 1 2>&1 | head -n 15
	say "joulesctl node"
	joulesctl node 2>&1
fi
kill $heavy $light $sleeper ${meterd:-} ${follow:-} 2>/dev/null
joules_pdu_stop
wait 2>/dev/null
say "done"
