#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Build a test kernel from a Debian kernel source package:
#
#   build-kernel.sh FLAVOUR            build it (or find it in the cache)
#   build-kernel.sh --print-dir FLAVOUR  print its cache directory if built
#
# FLAVOUR.config (next to this script) is a config fragment merged over
# tinyconfig plus base.config; FLAVOUR.patches, if present, lists patches
# (paths relative to the repository) applied to the source first.
# FLAVOUR.source, if present, names the source package as "PACKAGE VERSION
# SUITE", fetched without installing it (fetch-source.sh); without it the
# installed linux-source-6.12 is used. The result is cached outside any
# clone in $JOULES_KERNEL_CACHE (default /var/cache/joules/kernels)/
# FLAVOUR-HASH, HASH covering the source package and its version, the
# fragments, the patches, the compiler and linker and this script, so a
# second run costs nothing. Builds of one flavour are serialised by a lock
# in the cache: a second caller (make check while .ci/run's background
# build runs) waits for the first and then finds its result.
# The directory holds bzImage, the kernel's config and build/ (the tree
# out-of-tree modules are built against).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
cache=${JOULES_KERNEL_CACHE:-/var/cache/joules/kernels}
tarball=${JOULES_KERNEL_SOURCE:-/usr/src/linux-source-6.12.tar.xz}
print=0
if [ "${1:-}" = --print-dir ]; then
	print=1
	shift
fi
flavour=${1:?usage: build-kernel.sh [--print-dir] FLAVOUR}
frag=$here/$flavour.config
[ -r "$frag" ] || { echo "build-kernel: no config fragment $frag" >&2; exit 2; }
patches=
if [ -r "$here/$flavour.patches" ]; then
	for p in $(grep -v '^#' "$here/$flavour.patches"); do
		[ -r "$top/$p" ] || { echo "build-kernel: patch $p not found" >&2; exit 2; }
		patches="$patches $top/$p"
	done
fi
if [ -r "$here/$flavour.source" ]; then
	read -r srcpkg pinned suite < "$here/$flavour.source"
	if [ $print = 1 ]; then
		fetched=$("$here"/fetch-source.sh --cached "$srcpkg")
	else
		fetched=$("$here"/fetch-source.sh "$srcpkg" "$pinned" "$suite") || exit 1
	fi
	srcver=${fetched%% *}
	tarball=${fetched#* }
else
	srcpkg=linux-source-6.12
	srcver=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null || true)
fi
if [ -z "$srcver" ] || ! [ -r "$tarball" ]; then
	[ $print = 1 ] && exit 0
	echo "build-kernel: $srcpkg is not there (apt-get install linux-source-6.12, or $flavour.source)" >&2
	exit 1
fi
# The toolchain is an input too: a kernel built by another gcc or binutils
# is another kernel (and another module ABI).
toolchain="$(gcc --version 2>&1 | sed -n 1p) / $(ld --version 2>&1 | sed -n 1p)"
key=$( { echo "$srcpkg $srcver"; echo "$toolchain"; cat "$here/base.config" "$frag" "$0" $patches; } |
	sha256sum | cut -c1-16)
dir=$cache/$flavour-$key
if [ $print = 1 ]; then
	[ -r "$dir/bzImage" ] && echo "$dir"
	exit 0
fi
mkdir -p "$cache"
# One build of a flavour at a time; a waiter then finds it cached.
exec 9> "$cache/.$flavour.lock"
if ! flock -n 9; then
	echo "build-kernel: waiting for another build of $flavour"
	flock 9
fi
if [ -r "$dir/bzImage" ]; then
	echo "build-kernel: $flavour is cached in $dir"
	exit 0
fi

tmp=$(mktemp -d "$cache/.$flavour-$key.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# dash runs the EXIT trap on exit, not on a signal: make signals exit.
trap 'exit 130' INT
trap 'exit 143' TERM
echo "build-kernel: building $flavour from $srcpkg $srcver in $tmp"
start=$(date +%s)
tar -xf "$tarball" -C "$tmp"
top_dir=$(basename "$tarball" .tar.xz)
mv "$tmp/$top_dir" "$tmp"/build
src=$tmp/build
for p in $patches; do
	echo "build-kernel: applying $(basename "$p")"
	patch -d "$src" -p1 --quiet --forward < "$p"
done
make -s -C "$src" tinyconfig > /dev/null
"$src"/scripts/kconfig/merge_config.sh -m -O "$src" "$src"/.config "$here"/base.config "$frag" > "$tmp/merge.log"
make -s -C "$src" olddefconfig > /dev/null
# Every option asked for must be in the result: Kconfig drops what it
# cannot satisfy silently, and a debug kernel without its checkers would
# pass everything.
missing=$(cat "$here"/base.config "$frag" | grep -E '^(CONFIG_[A-Z0-9_]+=|# CONFIG_[A-Z0-9_]+ is not set)' |
	while read -r line; do grep -qxF "$line" "$src/.config" || echo "$line"; done)
if [ -n "$missing" ]; then
	echo "build-kernel: Kconfig did not keep:" >&2
	echo "$missing" | sed 's/^/  /' >&2
	exit 1
fi
make -s -C "$src" -j"$(nproc)" bzImage modules
cp "$src"/arch/x86/boot/bzImage "$src"/.config "$tmp"/
# Out-of-tree builds need the tree, not the kernel's own objects (vmlinux
# stays: scripts/decode_stacktrace.sh reads it).
find "$src" -name '*.o' ! -path "$src/scripts/*" ! -path "$src/tools/*" -delete
trap - EXIT
mv "$tmp" "$dir"
echo "build-kernel: $flavour built in $(($(date +%s) - start)) s: $dir"
