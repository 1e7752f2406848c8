#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# What can be checked of packaging/kubernetes without a cluster or a
# container runtime: the YAML is clean (yamllint), and everything the
# manifests and the Dockerfile name exists in the built tools and
# packages -- the command and its path, every option (accepted by the
# exporter's parser, listed in --help), ports and their names across
# DaemonSet, Service and ServiceMonitor, the telemetry path, the
# capabilities (known to Linux; none but the named ones, never
# privileged), and a memory limit that holds --web.max-requests responses
# at their bound and twice the exporter's measured peak (given, or fail).
# Nothing here starts a pod or builds an image.
#
#   k8s-check.sh EXPORTER [PEAK_RSS_KB]
# Prints TAP; exit 0 when everything passed, 4 when it cannot run here.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
k8s=$top/packaging/kubernetes
exporter=$1
peak_kb=${2:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. "$here"/lib.sh

echo "TAP version 13"
for c in yamllint /usr/bin/python3; do
	command -v $c >/dev/null || { echo "1..0 # SKIP $c not installed (apt-get install yamllint)"; exit 4; }
done
/usr/bin/python3 -c 'import yaml' 2>/dev/null || { echo "1..0 # SKIP python3-yaml missing"; exit 4; }
echo "1..9"

yamllint -s -c "$here/yamllint.yml" "$k8s"/*.yaml > "$work/out" 2>&1
rc=$?
nest < "$work/out"
t $rc "yamllint (strict) on $(ls "$k8s"/*.yaml | wc -l) manifests"

# The facts the manifests state, as shell assignments (Debian's python3
# and python3-yaml, which yamllint depends on).
/usr/bin/python3 - "$k8s" > "$work/facts" <<'EOF'
import glob, shlex, sys
docs = [d for f in sorted(glob.glob(sys.argv[1] + "/*.yaml"))
        for d in __import__("yaml").safe_load_all(open(f)) if d]
kind = {d["kind"]: d for d in docs}
ds, svc, sm = kind["DaemonSet"], kind["Service"], kind["ServiceMonitor"]
pod = ds["spec"]["template"]["spec"]
(c,) = pod["containers"]
sc = c["securityContext"]
out = {
    "command": " ".join(c["command"]),
    "args": "\n".join(c["args"]),
    "env": " ".join("%s=%s" % (e["name"], "node-1" if "Name" in e["valueFrom"]["fieldRef"]["fieldPath"] else "127.0.0.1")
                    for e in c.get("env", [])),
    "cport": c["ports"][0]["containerPort"],
    "cportname": c["ports"][0]["name"],
    "probeport": c["livenessProbe"]["httpGet"]["port"],
    "probepath": c["livenessProbe"]["httpGet"]["path"],
    "svcport": svc["spec"]["ports"][0]["port"],
    "svctarget": svc["spec"]["ports"][0]["targetPort"],
    "svcportname": svc["spec"]["ports"][0]["name"],
    "smport": sm["spec"]["endpoints"][0]["port"],
    "smpath": sm["spec"]["endpoints"][0]["path"],
    "capadd": " ".join(sc["capabilities"].get("add", [])),
    "capdrop": " ".join(sc["capabilities"].get("drop", [])),
    "privileged": str(sc.get("privileged", False)).lower(),
    "escalation": str(sc.get("allowPrivilegeEscalation", True)).lower(),
    "hostpid": str(pod.get("hostPID", False)).lower(),
    "anyprivileged": str("'privileged': True" in repr(docs)).lower(),
    "memlimit": c["resources"]["limits"]["memory"],
    # --cgroups.root's directory: the mount of a read-only hostPath of the host's cgroup2.
    "cgmounts": " ".join("%s:%s:%s:%s" % (m["mountPath"], v["hostPath"]["path"], str(m.get("readOnly", False)).lower(),
                                          v["hostPath"].get("type", ""))
                         for m in c.get("volumeMounts", []) for v in pod.get("volumes", [])
                         if v["name"] == m["name"] and "hostPath" in v),
    "labels_ok": str(ds["spec"]["selector"]["matchLabels"].items() <= ds["spec"]["template"]["metadata"]["labels"].items()
                     and svc["spec"]["selector"].items() <= ds["spec"]["template"]["metadata"]["labels"].items()
                     and sm["spec"]["selector"]["matchLabels"].items() <= svc["metadata"]["labels"].items()
                     and svc["metadata"]["namespace"] in sm["spec"]["namespaceSelector"]["matchNames"]).lower(),
}
for k, v in out.items():
    print("%s=%s" % (k, shlex.quote(str(v))))
EOF
rc=$?
[ $rc = 0 ] || nest < "$work/facts"
. "$work/facts"
t $rc "the manifests parse: a DaemonSet, a Service and a ServiceMonitor"

# The command: what the joules-exporter package installs and the image runs.
bin=${command#/}
grep -qx "$bin" "$top/packaging/debian/joules-exporter.install" &&
	grep -q "^ENTRYPOINT \[\"$command\"\]" "$k8s/Dockerfile" &&
	grep -q '^COPY joules-exporter_\*\.deb ' "$k8s/Dockerfile" &&
	grep -q '^Package: joules-exporter$' "$top/packaging/debian/control"
t $? "command $command is what the joules-exporter package installs and the image's ENTRYPOINT"

# The DaemonSet's args with the env substituted, the node's IP being $1;
# exit status 0 when the parser and the server accept them (rc 2 is a
# usage error; 1 only for a port already taken).
run_args() {
	set -- "$1"
	ip=$1
	set --
	while IFS= read -r a; do
		for kv in $env; do
			v=${kv#*=}
			[ "${kv%%=*}" = NODE_IP ] && v=$ip
			a=$(echo "$a" | sed "s|\$(${kv%%=*})|$v|g")
		done
		# The container's mount of the host's cgroup2: this host's
		# (not cgroup2 on a v1 host: the exporter serves on, without
		# cgroup series; checked on its own below).
		case $a in --cgroups.root=*) a=--cgroups.root=/sys/fs/cgroup ;; esac
		set -- "$@" "$a"
	done < "$work/args"
	diag "joules-exporter $*"
	JOULES_SYSFS=/nonexistent timeout 3 "$exporter" "$@" > "$work/run" 2>&1
	erc=$?
	nest < "$work/run"
	[ $erc = 124 ] || { [ $erc = 1 ] && grep -q 'cannot listen' "$work/run"; }
}

# Every option: listed in --help, and the whole set accepted.
"$exporter" --help > "$work/help"
rc=0
echo "$args" > "$work/args"
while IFS= read -r a; do
	o=${a%%=*}
	# The dots literal: --web.max-requests must not match --webXmax-requests.
	ore=$(printf '%s\n' "$o" | sed 's/\./\\./g')
	grep -q -- "^ *$ore[= ]" "$work/help" || { diag "$o not in joules-exporter --help"; rc=1; }
done < "$work/args"
run_args 127.0.0.1 || rc=1
t $rc "every option of the DaemonSet's args is in --help and accepted (exit $erc)"

# --cgroups.root names the read-only mount of the host's /sys/fs/cgroup
# (a directory); on a node where that is not cgroup2 (v1) the exporter
# serves on and its cgroup collector says why it has no series.
root=$(echo "$args" | sed -n 's/^--cgroups\.root=//p')
diag "--cgroups.root=$root; mounts (path:hostPath:readOnly:type): $cgmounts"
rc=1
if [ -n "$root" ] && echo " $cgmounts " | grep -q " $root:/sys/fs/cgroup:true:Directory "; then
	JOULES_SYSFS=/nonexistent timeout 3 "$exporter" --cgroups.root=/tmp \
		--web.listen-address=127.0.0.1:9764 > "$work/run" 2>&1
	erc=$?
	nest < "$work/run"
	[ $erc = 124 ] &&
		grep -q "collector=cgroup msg=\"--cgroups.root '/tmp': not a cgroup v2 directory: no cgroup series\"" "$work/run" &&
		rc=0
fi
t $rc "--cgroups.root is the read-only mount of the host's /sys/fs/cgroup; not cgroup2: served on, the cgroup collector says why"

# status.hostIP is an IPv6 address on an IPv6 node: it must reach the
# exporter in brackets.
run_args ::1
t $? "the DaemonSet's args on an IPv6 node (NODE_IP ::1) are accepted (exit $erc)"

# Ports and paths agree from the container to the ServiceMonitor.
lport=$(echo "$args" | sed -n 's/^--web\.listen-address=.*:\([0-9]*\)$/\1/p')
tpath=$(echo "$args" | sed -n 's/^--web\.telemetry-path=//p')
tpath=${tpath:-$(sed -n 's/.*where metrics are served (default \([^)]*\)).*/\1/p' "$work/help")}
diag "listen port $lport, containerPort $cport ($cportname), Service $svcport -> $svctarget ($svcportname), ServiceMonitor $smport $smpath, telemetry path $tpath"
[ "$lport" = "$cport" ] && [ "$svctarget" = "$cportname" ] && [ "$probeport" = "$cportname" ] &&
	[ "$smport" = "$svcportname" ] && [ "$smpath" = "$tpath" ] && [ "$probepath" = / ] &&
	[ "$labels_ok" = true ]
t $? "ports, port names, labels and the metrics path agree across DaemonSet, Service, ServiceMonitor"

# Capabilities: known to Linux, all others dropped, never privileged.
rc=0
for c in $capadd; do
	grep -q "^#define CAP_$c[[:space:]]" /usr/include/linux/capability.h || { diag "CAP_$c unknown"; rc=1; }
done
diag "capabilities: drop $capdrop, add $capadd; privileged $privileged, escalation $escalation, hostPID $hostpid"
[ $rc = 0 ] && [ "$capdrop" = ALL ] && [ "$capadd" = PERFMON ] && [ "$privileged" = false ] &&
	[ "$anyprivileged" = false ] && [ "$escalation" = false ] && [ "$hostpid" = false ]
t $? "capabilities: ALL dropped, only PERFMON added; not privileged, no escalation, no hostPID"

# The memory limit: every response --web.max-requests lets it hold at
# once, at their bound (EXP_MAX_RESPONSE in exporter.h), on top of twice
# the measured peak RSS. No measured peak is a failure: the limit would
# then be checked against nothing.
lim_kb=$(echo "$memlimit" | awk '/Mi$/ { print $0 * 1024 } /Gi$/ { print $0 * 1048576 }')
maxreq=$(echo "$args" | sed -n 's/^--web\.max-requests=//p')
resp_mib=$(sed -n 's/^#define EXP_MAX_RESPONSE (\([0-9]*\)u << 20)$/\1/p' "$top/user/joules-exporter/exporter.h")
diag "memory limit $memlimit (${lim_kb:-?} kB), --web.max-requests=${maxreq:-unset}, responses up to ${resp_mib:-?} MiB, measured peak RSS ${peak_kb:-none} kB"
[ "${peak_kb:-0}" -gt 0 ] && [ -n "$maxreq" ] && [ -n "$resp_mib" ] &&
	[ "${lim_kb:-0}" -ge $((maxreq * resp_mib * 1024 + 2 * peak_kb)) ]
t $? "memory limit $memlimit holds $maxreq responses of ${resp_mib:-?} MiB and twice the measured peak RSS (${peak_kb:-none} kB)"
[ $failed = 0 ]
