# SPDX-License-Identifier: GPL-2.0
# The kernel matrix (tools/testing/kernels.conf), for the scripts that boot,
# build against or install its kernels. Source it; it defines:
#
#   jk_names                 every NAME, in order (or those in $JOULES_KERNELS)
#   jk_get NAME FIELD        release | suffix | boots | scale
#   jk_image NAME            the kernel image to boot ("" if there is none)
#   jk_kdir NAME             the kbuild tree modules are built against ("" if none)
#   jk_name_of RELEASE       the NAME whose release field is RELEASE
#   jk_default               the first installed kernel's NAME ("" if none)
#
# Set jk_testing to the tools/testing directory before sourcing.
jk_conf=${JOULES_KERNELS_CONF:-$jk_testing/kernels.conf}
jk_top=$(cd "$jk_testing/../.." && pwd)
# Kernels built from source live outside any clone, keyed by their inputs.
jk_cache=${JOULES_KERNEL_CACHE:-/var/cache/joules/kernels}

jk_lines() {
	grep -v '^[[:space:]]*\(#\|$\)' "$jk_conf"
}

jk_names() {
	if [ -n "${JOULES_KERNELS:-}" ]; then
		echo "$JOULES_KERNELS" | tr ', ' '\n\n' | grep -v '^$'
	else
		jk_lines | awk '{ print $1 }'
	fi
}

jk_get() {
	jk_lines | awk -v n="$1" -v f="$2" '
		$1 == n {
			if (f == "release") print $2
			else if (f == "suffix") print ($3 == "-" ? "" : $3)
			else if (f == "boots") print $4
			else if (f == "scale") print $5
			found = 1
		}
		END { exit !found }'
}

# A built kernel's directory (tools/testing/kbuild/build-kernel.sh prints it).
jk_built_dir() {
	"$jk_testing"/kbuild/build-kernel.sh --print-dir "${1#build:}" 2>/dev/null
}

jk_image() {
	rel=$(jk_get "$1" release) || return 1
	case $rel in
	build:*)
		d=$(jk_built_dir "$rel")
		[ -n "$d" ] && [ -r "$d/bzImage" ] && echo "$d/bzImage" ;;
	*)
		[ -r "/boot/vmlinuz-$rel" ] && echo "/boot/vmlinuz-$rel" ;;
	esac
	return 0
}

jk_kdir() {
	rel=$(jk_get "$1" release) || return 1
	case $rel in
	build:*)
		d=$(jk_built_dir "$rel")
		[ -n "$d" ] && [ -d "$d/build" ] && echo "$d/build" ;;
	*)
		[ -d "/lib/modules/$rel/build" ] && echo "/lib/modules/$rel/build" ;;
	esac
	return 0
}

jk_name_of() {
	jk_lines | awk -v r="$1" '$2 == r { print $1; exit }'
}

jk_default() {
	for n in $(jk_lines | awk '{ print $1 }'); do
		if [ -n "$(jk_image "$n")" ] && [ -n "$(jk_kdir "$n")" ]; then
			echo "$n"
			return 0
		fi
	done
	return 0
}
