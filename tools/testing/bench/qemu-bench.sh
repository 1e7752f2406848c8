#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make bench: the benchmarks in one QEMU-booted kernel, the one KVER names
# (or KDIR's), with joules.ko built for that kernel in a scratch copy of
# the sources; wall clock on 2 CPUs (--mode bench), then instruction
# counts on one (--mode bench-icount).
#
#   KVER=RELEASE [KDIR=DIR] qemu-bench.sh [run-qemu.sh options, e.g. --only 'ctxsw|forkexit']
#   KVER=build:FLAVOUR qemu-bench.sh ...   (a kernel tools/testing/kbuild/
#                                          builds, or finds in its cache:
#                                          build:bench is 7.2 without checkers)
#
# Environment: JOULES_BENCH_IMAGE (the kernel image; default the one of
# kernels.conf for RELEASE, else /boot/vmlinuz-RELEASE), JOULES_BENCH_MODES
# (default "bench bench-icount"), JOULES_QEMU_TIMEOUT (per boot, default
# 3600 s). With several kernels installed nothing is guessed: the image's
# release and the module's vermagic must both be RELEASE, or nothing boots.
set -u
here=$(cd "$(dirname "$0")" && pwd)
testing=$(cd "$here/.." && pwd)
kver=${KVER:-}
kdir=${KDIR:-}

# A kernel built from source: its tree and image, and its release from them.
case $kver in
build:*)
	flavour=${kver#build:}
	"$testing"/kbuild/build-kernel.sh "$flavour" >&2 || exit 1
	built=$("$testing"/kbuild/build-kernel.sh --print-dir "$flavour")
	[ -n "$built" ] || { echo "bench: no kernel for $kver" >&2; exit 1; }
	kdir=$built/build
	kver=$(cat "$kdir/include/config/kernel.release")
	: "${JOULES_BENCH_IMAGE:=$built/bzImage}"
	;;
esac

# KDIR= alone: the release is the tree's own.
if [ -z "$kver" ] && [ -n "$kdir" ] && [ -r "$kdir/include/config/kernel.release" ]; then
	kver=$(cat "$kdir/include/config/kernel.release")
fi
[ -n "$kver" ] || { echo "bench: no kernel chosen: make bench KVER=RELEASE (see /boot/vmlinuz-*)" >&2; exit 1; }
[ -n "$kdir" ] || kdir=/lib/modules/$kver/build
[ -d "$kdir" ] || { echo "bench: no build tree for $kver at $kdir (apt-get install linux-headers-$kver)" >&2; exit 1; }

image=${JOULES_BENCH_IMAGE:-}
if [ -z "$image" ]; then
	# shellcheck disable=SC2034 # kernels.sh reads it
	jk_testing=$testing
	. "$testing"/kernels.sh
	name=$(jk_name_of "$kver")
	[ -n "$name" ] && image=$(jk_image "$name")
	[ -n "$image" ] || image=/boot/vmlinuz-$kver
fi
[ -r "$image" ] || { echo "bench: no kernel image for $kver at $image (apt-get install linux-image-$kver, or JOULES_BENCH_IMAGE=)" >&2; exit 1; }
# A bzImage names its release in its header; file(1) reads it.
rel=$(file -bL "$image" 2>/dev/null | sed -n 's/.*, version \([^ ]*\) .*/\1/p')
if [ -z "$rel" ]; then
	echo "bench: cannot read the release of $image; booting it as $kver" >&2
elif [ "$rel" != "$kver" ]; then
	echo "bench: $image is $rel, not $kver" >&2
	exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "bench: building joules.ko for $kver against $kdir" >&2
"$testing"/build-module.sh "$kdir" "$work/modules" || exit 1
vm=$(modinfo -F vermagic "$work/modules/joules.ko" 2>/dev/null | cut -d' ' -f1)
if [ "$vm" != "$kver" ]; then
	echo "bench: joules.ko was built for '$vm', not $kver" >&2
	exit 1
fi

rc=0
for mode in ${JOULES_BENCH_MODES:-bench bench-icount}; do
	echo "bench: kernel $kver ($image), mode $mode" >&2
	"$testing"/qemu/run-qemu.sh --mode "$mode" --kernel "$image" --modules "$work/modules" \
		--timeout "${JOULES_QEMU_TIMEOUT:-3600}" "$@" || rc=1
done
exit $rc
