#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Write vmlinux.h (the kernel's types as C, for CO-RE) from the BTF of the
# kernel the collector is built for, not necessarily the build host's:
#
#   gen-vmlinux-h.sh OUT KVER
#
# Source, first that works:
#   1. $VMLINUX_BTF: an ELF with a .BTF section or a raw BTF file;
#   2. /boot/vmlinuz-KVER: the vmlinux ELF inside the bzImage, found the
#      way the kernel's scripts/extract-vmlinux does it (look for each
#      compressor's magic, decompress from there, keep the first ELF);
#   3. /sys/kernel/btf/vmlinux of the build host, unless
#      JOULES_BTF_NO_HOST=1 (a package build: its output must not depend
#      on the kernel the builder happens to run).
# CO-RE relocates every field access at load time, so any of them gives an
# object that runs on every BTF kernel that has the fields it reads; the
# target's own BTF just catches a missing field at build time already.
# The source used is printed and written to OUT.src.
set -eu
out=$1
kver=${2:-}
bpftool=${BPFTOOL:-bpftool}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

dump() {
	"$bpftool" btf dump file "$1" format c > "$tmp/vmlinux.h" 2> "$tmp/err" &&
		grep -q 'struct task_struct {' "$tmp/vmlinux.h"
}

# extract IMAGE: the vmlinux ELF in a compressed kernel image, in $tmp/vmlinux.
extract() {
	img=$1
	for fmt in '\037\213\010:gzip -dc' '\3757zXZ\000:xz -dc' 'BZh:bzip2 -dc' \
		'\135\000\000\000:xz -dc --format=lzma' '\211LZO:lzop -dc' \
		'\002!L\030:lz4 -dc' '(\265/\375:zstd -dc'; do
		magic=$(printf "${fmt%%:*}")
		cmd=${fmt#*:}
		command -v "${cmd%% *}" >/dev/null 2>&1 || continue
		# Offsets of the magic (the first few: short magics also match by
		# chance); stop at the first that decompresses to an ELF.
		for off in $(LC_ALL=C grep -abo -F -- "$magic" "$img" 2>/dev/null | cut -d: -f1 | head -n 8); do
			tail -c "+$((off + 1))" "$img" | $cmd > "$tmp/vmlinux" 2>/dev/null || true
			if [ "$(head -c 4 "$tmp/vmlinux" | od -An -c | tr -d ' ')" = '177ELF' ]; then
				return 0
			fi
		done
	done
	return 1
}

src=
if [ -n "${VMLINUX_BTF:-}" ]; then
	dump "$VMLINUX_BTF" || { echo "gen-vmlinux-h: no BTF in VMLINUX_BTF=$VMLINUX_BTF: $(cat "$tmp/err")" >&2; exit 1; }
	src=$VMLINUX_BTF
fi
if [ -z "$src" ] && [ -n "$kver" ] && [ -r "/boot/vmlinuz-$kver" ]; then
	if extract "/boot/vmlinuz-$kver" && dump "$tmp/vmlinux"; then
		src="/boot/vmlinuz-$kver (extracted vmlinux)"
	else
		echo "gen-vmlinux-h: no BTF found in /boot/vmlinuz-$kver; trying the build host's" >&2
	fi
fi
if [ -z "$src" ] && [ "${JOULES_BTF_NO_HOST:-0}" = 1 ]; then
	echo "gen-vmlinux-h: no BTF from KVER='$kver' or VMLINUX_BTF, and the build host's" \
		"/sys/kernel/btf/vmlinux is refused (JOULES_BTF_NO_HOST=1)" >&2
	exit 1
fi
if [ -z "$src" ] && [ -r /sys/kernel/btf/vmlinux ]; then
	dump /sys/kernel/btf/vmlinux || { echo "gen-vmlinux-h: $(cat "$tmp/err")" >&2; exit 1; }
	src="/sys/kernel/btf/vmlinux of $(uname -r) (build host)"
fi
if [ -z "$src" ]; then
	echo "gen-vmlinux-h: no kernel BTF: set VMLINUX_BTF=, install /boot/vmlinuz-$kver of a" \
		"CONFIG_DEBUG_INFO_BTF=y kernel, or build on a kernel with /sys/kernel/btf/vmlinux" >&2
	exit 1
fi
echo "gen-vmlinux-h: vmlinux.h from $src" >&2
# Rename into place: a parallel make of the same target never sees half a file.
mv -f "$tmp/vmlinux.h" "$out.$$" && mv -f "$out.$$" "$out"
echo "$src" > "$out.src.$$" && mv -f "$out.src.$$" "$out.src"
