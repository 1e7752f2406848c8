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
# and data directory under DIR, scraping TARGET (host:port; several,
# separated by spaces) every second. Sets $prom_pid.
start_prometheus() {
	_pd=$1 _pp=$2 _pt=$(echo "$3" | sed "s/ /', '/g")
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

# The JSON of an instant query, whatever it returns.
prom_json() {
	hget "$1" "/api/v1/query?query=$(urlencode "$2")${3:+&time=$3}"
}

# Every query of a Grafana dashboard (FILE), one a line, with Grafana's
# variables as the tests set them: rate windows of 1m, every instance.
dashboard_queries() {
	jq -r '.. | objects | select(has("targets")) | .targets[].expr' "$1" |
		sed -e 's/\$__rate_interval/1m/g' -e 's/\$__range/1m/g' -e 's/\$instance/.*/g'
}

# Queries on stdin, one a line, against Prometheus on PORT: each must run
# without error and return at least one series. The failures are printed
# as TAP diagnostics; $qn is the number of queries. 0 if all passed.
queries_with_series() {
	_qrc=0 qn=0
	while IFS= read -r _q; do
		[ -n "$_q" ] || continue
		qn=$((qn + 1))
		_qj=$(prom_json "$1" "$_q")
		_qs=$(printf '%s' "$_qj" | jq -r '.status' 2>/dev/null)
		_qc=$(printf '%s' "$_qj" | jq -r '.data.result | length' 2>/dev/null)
		if [ "$_qs" != success ] || [ "${_qc:-0}" -lt 1 ]; then
			diag "query ${_qs:-failed}, ${_qc:-no} series: $_q"
			printf '%s\n' "$_qj" | head -c 300 | nest
			_qrc=1
		fi
	done
	return $_qrc
}
