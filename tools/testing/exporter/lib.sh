# SPDX-License-Identifier: GPL-2.0
# Helpers of the exporter tests (run-host.sh, e2e.sh). Source it after
# setting $work (a scratch directory) and $here (this directory).
# Results are TAP lines, counted in $n and $failed. The helpers' own
# variables start with an underscore: sh has no locals, and a helper that
# set $port would redirect the caller's next request.
n=0
failed=0
pids=

t() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; failed=$((failed + 1)); fi
}
diag() { echo "# $*"; }
# Indent a program's own TAP under ours.
nest() { sed 's/^/# /'; }

# Percent-encode every byte (valid in any query string).
urlencode() { printf '%s' "$1" | od -An -tx1 -v | tr -d ' \n' | sed 's/../%&/g'; }

# GET on 127.0.0.1:PORT (http-check -g): the body on stdout.
hget() { "$here"/build/http-check -g "$2" ${3:+-a "$3"} 127.0.0.1 "$1"; }

# A port nobody uses, below the ephemeral range that clients bind (the
# caller retries if it loses a race).
free_port() {
	while :; do
		_fp=$((20000 + $(od -An -tu2 -N2 /dev/urandom | tr -d ' ') % 12000))
		ss -Htan "sport = :$_fp" 2>/dev/null | grep -q . || { echo "$_fp"; return; }
	done
}

# Remember a pid to stop at the end.
track() { pids="$pids $1"; }

stop_all() {
	for _sp in $pids; do kill "$_sp" 2>/dev/null; done
	for _sp in $pids; do
		_si=0
		while kill -0 "$_sp" 2>/dev/null && [ $_si -lt 50 ]; do sleep 0.1; _si=$((_si + 1)); done
		kill -9 "$_sp" 2>/dev/null
	done
	pids=
}

# Resident and peak memory of a pid in kB: "RSS HWM".
mem_kb() { awk '/^VmRSS/ { r = $2 } /^VmHWM/ { h = $2 } END { print r + 0, h + 0 }' "/proc/$1/status"; }

# Wait up to $2 s for a command (the rest of the arguments) to succeed.
wait_for() {
	_wf_n=$(($1 * 10)); shift
	while [ $_wf_n -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
		_wf_n=$((_wf_n - 1))
	done
	return 1
}

# Prometheus from Debian's package on 127.0.0.1:PORT with its own config
# and data directory under DIR, scraping TARGET (host:port) every second.
# Sets $prom_pid.
start_prometheus() {
	_pd=$1 _pp=$2 _pt=$3
	mkdir -p "$_pd/data"
	cat > "$_pd/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: joules
    static_configs:
      - targets: ['$_pt']
EOF
	prometheus --config.file="$_pd/prometheus.yml" --storage.tsdb.path="$_pd/data" \
		--web.listen-address="127.0.0.1:$_pp" --log.level=warn \
		--storage.tsdb.retention.time=1h > "$_pd/prometheus.log" 2>&1 &
	prom_pid=$!
	track $prom_pid
	wait_for 30 hget "$_pp" /-/ready
}

# The value of a single-result instant query ("" if none).
prom_query() {
	hget "$1" "/api/v1/query?query=$(urlencode "$2")${3:+&time=$3}" |
		sed -n 's/.*"value":\[[^,]*,"\([^"]*\)"\].*/\1/p'
}
