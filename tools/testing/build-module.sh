#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Build joules.ko and the test-only modules against one kernel, in a scratch
# copy of the sources, so that several kernels' builds never mix:
#
#   build-module.sh KDIR OUTDIR [W=1 ...]
#
# Leaves OUTDIR/joules.ko and OUTDIR/joules_testmeter.ko; prints the
# compiler's output; exits non-zero when either does not build.
set -eu
kdir=$1
out=$2
shift 2
# Run from a make recipe (make -j check), the outer make's jobserver and
# variables are not the kernel build's: its own -j, nothing inherited.
unset MAKEFLAGS MFLAGS MAKELEVEL
top=$(cd "$(dirname "$0")/../.." && pwd)
[ -d "$kdir" ] || { echo "build-module: no kernel build tree at $kdir" >&2; exit 1; }
src=$(mktemp -d)
trap 'rm -rf "$src"' EXIT
mkdir -p "$src"/tools/testing "$out"
cp -r "$top"/Kbuild "$top"/kmod "$src"/
cp -r "$top"/tools/testing/kmod "$src"/tools/testing/
find "$src" \( -name '*.o' -o -name '*.ko' -o -name '.*.cmd' -o -name '*.mod*' \) -delete
make -s -j"$(nproc)" -C "$kdir" M="$src" "$@" modules
make -s -j"$(nproc)" -C "$kdir" M="$src"/tools/testing/kmod KBUILD_EXTRA_SYMBOLS="$src"/Module.symvers "$@" modules
cp "$src"/joules.ko "$src"/tools/testing/kmod/*.ko "$out"/
