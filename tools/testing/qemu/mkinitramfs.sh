#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Assemble the guest's initramfs: busybox-static, the freshly built modules,
# the selftests, the user tools and every shared library they link against.
#
#   mkinitramfs.sh OUT.cpio.gz MODE   (MODE: tests | demo | bench | bench-icount)
set -eu
out=$1
mode=${2:-tests}
top=$(cd "$(dirname "$0")/../../.." && pwd)
bb=$(command -v busybox || true)
[ -n "$bb" ] && file -L "$bb" 2>/dev/null | grep -q static || bb=/bin/busybox
if ! [ -x "$bb" ]; then
	echo "mkinitramfs: busybox-static is not installed (apt-get install busybox-static)" >&2
	exit 1
fi

root=$(mktemp -d)
chmod 0755 "$root"	# the initramfs root: everyone must traverse it
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/bin "$root"/sbin "$root"/lib/joules "$root"/tests "$root"/usr/bin \
	"$root"/proc "$root"/sys "$root"/dev "$root"/tmp "$root"/etc "$root"/root
cp "$bb" "$root"/bin/busybox

# Modules: joules.ko and, for tests, the synthetic energy source, built for
# the kernel being booted ($JOULES_MODULES_DIR), or the tree's own build.
if [ -n "${JOULES_MODULES_DIR:-}" ]; then
	kos="$JOULES_MODULES_DIR/*.ko"
else
	kos="$top/joules.ko $top/tools/testing/kmod/*.ko"
fi
for ko in $kos; do
	[ -f "$ko" ] && cp "$ko" "$root"/lib/joules/
done
[ -f "$root"/lib/joules/joules.ko ] || { echo "mkinitramfs: joules.ko is not built" >&2; exit 1; }

# Modules of the booted kernel (its /lib/modules/RELEASE) with what they
# need, decompressed for busybox insmod, with the order to load them in:
# kmods DIR SUBDIR MODULE... into /lib/joules/SUBDIR/ (and its order file).
kmods() {
	_dir=$1 _sub=$2
	shift 2
	_dep=$_dir/modules.dep
	mkdir -p "$root/lib/joules/$_sub"
	: > "$root/lib/joules/$_sub/order"
	kmod_deps() {
		for d in $(grep "^$1:" "$_dep" | cut -d: -f2); do kmod_deps "$d"; done
		echo "$1"
	}
	[ -f "$_dep" ] || return 0
	for want in "$@"; do
		m=$(grep -oE "^[^:]*/$want\.ko(\.xz|\.gz|\.zst)?:" "$_dep" | tr -d :)
		[ -n "$m" ] && kmod_deps "$m"
	done | awk '!seen[$0]++' | while read -r m; do
		name=$(basename "$m" | sed 's/\.\(xz\|gz\|zst\)$//')
		case $m in
		*.xz) xz -dc "$_dir/$m" ;;
		*.gz) gzip -dc "$_dir/$m" ;;
		*.zst) zstd -qdc "$_dir/$m" ;;
		*) cat "$_dir/$m" ;;
		esac > "$root/lib/joules/$_sub/$name" && echo "$name" >> "$root/lib/joules/$_sub/order"
	done
}
# The virtio NIC's driver (run-qemu.sh --hostfwd): /lib/joules/net/.
if [ -n "${JOULES_NET_MODULES:-}" ]; then
	kmods "$JOULES_NET_MODULES" net virtio_pci virtio_net
	[ -s "$root"/lib/joules/net/order ] ||
		echo "mkinitramfs: no virtio_net module under $JOULES_NET_MODULES (built in?)" >&2
fi
# virtio-serial's driver (the tests' VM ports), where it is a module (6.1;
# 6.12 has it built in): /lib/joules/console/.
if [ -n "${JOULES_CONSOLE_MODULES:-}" ]; then
	kmods "$JOULES_CONSOLE_MODULES" console virtio_pci virtio_console
fi

# User tools.
for t in "$top"/user/build/*; do
	[ -f "$t" ] && [ -x "$t" ] && cp "$t" "$root"/usr/bin/
done
# The real servers joules-meterd's guest tests and the meter demo talk to,
# on the guest's 127.0.0.1, where the build host has them (net-snmp's
# snmpd; openipmi's BMC simulator). Their libraries come with them below.
if [ "$mode" = tests ] || [ "$mode" = demo ]; then
	for s in /usr/sbin/snmpd /usr/bin/ipmi_sim; do
		[ -x "$s" ] && cp "$s" "$root"/usr/bin/
	done
fi
# A stand-in QEMU VM for joules-meterd --vm-host (61-vm-host), outside
# /tests (everything there runs as a test).
if [ "$mode" = tests ] && [ -x "$top"/tools/testing/meters/build/qemu-system-x86_64 ]; then
	cp "$top"/tools/testing/meters/build/qemu-system-x86_64 "$root"/lib/joules/
fi
# stress-ng: joules-validate's workloads (73-validate); its libraries come
# with it below.
if [ "$mode" = tests ] && s=$(command -v stress-ng); then
	cp "$s" "$root"/usr/bin/
fi
# cyclictest (rt-tests): the benchmarks' latency under readers (bench/rtlat.c).
case $mode in
bench*) s=$(command -v cyclictest) && cp "$s" "$root"/usr/bin/ ;;
esac
# BPF objects, if built.
for o in "$top"/bpf/build/*.o; do
	[ -f "$o" ] && mkdir -p "$root"/lib/joules/bpf && cp "$o" "$root"/lib/joules/bpf/
done

# Selftests: executables and scripts from the selftests build directory.
if [ "$mode" = tests ]; then
	for t in "$top"/tools/testing/selftests/build/*; do
		[ -f "$t" ] && cp "$t" "$root"/tests/
	done
	# The runner's helpers (guest-run-tests).
	for t in "$top"/tools/testing/selftests/build/lib/*; do
		[ -f "$t" ] && cp "$t" "$root"/lib/joules/
	done
fi
cp "$top"/tools/testing/qemu/guest-init "$root"/init
cp "$top"/tools/testing/qemu/guest-run-tests "$root"/bin/joules-run-tests
cp "$top"/tools/testing/qemu/guest-lib.sh "$root"/lib/joules/lib.sh
# The simulated PDU's pass_persist handler (shared with the host tests).
if [ -f "$top"/tools/testing/meters/pdu-handler.sh ]; then
	cp "$top"/tools/testing/meters/pdu-handler.sh "$root"/lib/joules/pdu-handler.sh
	chmod 0755 "$root"/lib/joules/pdu-handler.sh
fi
[ -f "$top"/tools/testing/demo-guest.sh ] && cp "$top"/tools/testing/demo-guest.sh "$root"/bin/joules-demo
[ -d "$top"/tools/testing/bench ] && mkdir -p "$root"/bench && \
	for b in "$top"/tools/testing/bench/build/* "$top"/tools/testing/bench/*.sh; do
		[ -f "$b" ] && cp "$b" "$root"/bench/
	done
echo "$mode" > "$root"/etc/joules-mode
chmod 0755 "$root"/init "$root"/bin/joules-run-tests
[ -f "$root"/bin/joules-demo ] && chmod 0755 "$root"/bin/joules-demo

# Users: root and an unprivileged account for the permission tests.
cat > "$root"/etc/passwd <<PW
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
PW
cat > "$root"/etc/group <<GR
root:x:0:
nogroup:x:65534:
GR

# Shared libraries of every ELF we ship, with the dynamic loader.
for f in "$root"/usr/bin/* "$root"/tests/* "$root"/bench/*; do
	[ -f "$f" ] || continue
	head -c 4 "$f" | grep -q ELF || continue
	ldd "$f" 2>/dev/null | awk '/=>/ { print $3 } /^[ \t]*\// { print $1 }' | while read -r lib; do
		[ -f "$lib" ] || continue
		mkdir -p "$root$(dirname "$lib")"
		[ -f "$root$lib" ] || cp -L "$lib" "$root$lib"
	done
done
# Merged /usr: the loader is looked up at /lib64.
if [ -d "$root"/usr/lib64 ] && ! [ -e "$root"/lib64 ]; then ln -s usr/lib64 "$root"/lib64; fi

(cd "$root" && find . | cpio -o -H newc --quiet) | gzip -1 > "$out"
