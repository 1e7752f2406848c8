#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The model's coefficients as the documentation and the tools name them
# must be the code's: jl_coef_names[] of kmod/core.c, in its order. Checked
# in every man page (Documentation/man/*), every .rst of Documentation/ and
# the --help of every tool and every command of it (user/build/*):
#  - a paragraph that names three or more coefficients names all of them
#    (a list that forgot the newer ones is out of date);
#  - the text form ("cpu_time_uw cycles_pj ...") is the whole line, in order;
#  - a count of values ("six numbers", "all six values") is the code's.
# Prints TAP; run by tools/testing/run-tests (make check's host stage).
#
#   coef-names.sh [TOP]   (TOP: the source tree, default this script's ../..)
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=${1:-$(cd "$here/../.." && pwd)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
n=0
failed=0

t() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; failed=$((failed + 1)); fi
}

# The oracle: the quoted names of jl_coef_names[] in kmod/core.c.
names=$(awk '/jl_coef_names\[JL_NR_COEF\] = \{/ { on = 1; next }
	on && /^\};/ { exit }
	on { while (match($0, /"[a-z_]+"/)) { printf "%s ", substr($0, RSTART + 1, RLENGTH - 2); $0 = substr($0, RSTART + RLENGTH) } }' \
	"$top/kmod/core.c")
count=$(echo $names | wc -w)

echo "TAP version 13"
if [ "$count" -lt 2 ]; then
	echo "1..1"
	t 1 "jl_coef_names[] read from kmod/core.c (found '$names')"
	exit 1
fi

# check MODE FILE: print one line per finding. MODE man: troff paragraphs
# (.PP, .TP, .SH, ...); text: paragraphs end at blank lines.
check() {
	awk -v names="$names" -v mode="$1" -v file="$2" '
	BEGIN {
		nn = split(names, nm, " ")
		for (i = 1; i <= nn; i++) isname[nm[i]] = i
		line = ""
		for (i = 1; i <= nn; i++) line = line (i > 1 ? " " : "") nm[i]
		split("one two three four five six seven eight nine ten eleven twelve", w, " ")
		for (i = 1; i <= 12; i++) num[w[i]] = i
	}
	function para_end(   i, k, found, miss, s, rest, c) {
		if (text == "") return
		gsub(/[ \t]+/, " ", text)
		s = text " "
		# Names in the paragraph.
		k = 0
		delete seen
		rest = s
		while (match(rest, /[a-z][a-z_]*_(uw|pj)/)) {
			c = substr(rest, RSTART, RLENGTH)
			if (c in isname && !(c in seen)) { seen[c] = 1; k++ }
			rest = substr(rest, RSTART + RLENGTH)
		}
		if (k >= 3 && k < nn) {
			miss = ""
			for (i = 1; i <= nn; i++) if (!(nm[i] in seen)) miss = miss " " nm[i]
			printf "%s:%d: names %d of the %d coefficients, not:%s\n", file, start, k, nn, miss
		}
		# The text form starts with the first two names: all of it, in order.
		if (index(s, nm[1] " " nm[2]) && !index(s, line))
			printf "%s:%d: the coefficient line is not \"%s\"\n", file, start, line
		# Counts of values.
		rest = tolower(s)
		while (match(rest, /[^a-z0-9-](one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|[0-9]+)( (unsigned|decimal|model))* (values|numbers|integers|coefficients)[^a-z]/)) {
			c = substr(rest, RSTART + 1, RLENGTH - 2)
			split(c, f, " ")
			k = (f[1] in num) ? num[f[1]] : f[1] + 0
			if (k != nn)
				printf "%s:%d: \"%s\": there are %d coefficients\n", file, start, c, nn
			rest = substr(rest, RSTART + RLENGTH - 1)
		}
		text = ""
	}
	{
		l = $0
		if (mode == "man") {
			if (l ~ /^\.(PP|LP|P|TP|IP|SH|SS|HP)( |$)/ || l ~ /^\.\\"/) { para_end(); start = NR + 1; next }
			gsub(/\\f[BIRP]/, "", l)
			gsub(/\\-/, "-", l)
			gsub(/\\\(mu/, "*", l)
			sub(/^\.[A-Za-z]+ ?/, "", l)
			gsub(/"/, "", l)
		} else if (l ~ /^[ \t]*$/) {
			para_end(); start = NR + 1; next
		}
		if (text == "") start = NR
		text = text " " l
	}
	END { para_end() }
	' "$2" | sed 's/\t/ /g' | tr -s ' '
}

# report NAME FILE MODE
report() {
	check "$3" "$2" > "$work/found"
	sed 's/^/# /' "$work/found"
	[ ! -s "$work/found" ]
	t $? "$1"
}

pages=$(ls "$top"/Documentation/man/* "$top"/Documentation/*.rst 2>/dev/null)
tools=
for tool in joulesctl joules-bpf joules-exporter joules-train; do
	[ -x "$top/user/build/$tool" ] && tools="$tools $tool"
done
# Each tool's --help, and each command's: "label file" lines.
: > "$work/helps"
for tool in $tools; do
	"$top/user/build/$tool" --help > "$work/$tool.help" 2>&1
	echo "$tool --help|$work/$tool.help" >> "$work/helps"
	for cmd in $(awk '/^Commands:/ { on = 1; next } on && /^$/ { exit } on && /^  [a-z]/ { print $1 }' "$work/$tool.help"); do
		"$top/user/build/$tool" "$cmd" --help > "$work/$tool-$cmd.help" 2>&1
		echo "$tool $cmd --help|$work/$tool-$cmd.help" >> "$work/helps"
	done
done

echo "1..$(( $(echo $pages | wc -w) + $(wc -l < "$work/helps") + 1 ))"
t 0 "the code's $count coefficients (kmod/core.c): $names"
for p in $pages; do
	case $p in *.rst) mode=text ;; *) mode=man ;; esac
	report "${p#"$top"/}: coefficient names and count" "$p" $mode
done
while IFS='|' read -r label file; do
	report "$label: coefficient names and count" "$file" text
done < "$work/helps"
if [ -z "$tools" ]; then
	echo "# no tools in $top/user/build (make user): their --help not checked"
fi
echo "# coefficient names: $((n - failed)) passed, $failed failed"
[ $failed = 0 ]
