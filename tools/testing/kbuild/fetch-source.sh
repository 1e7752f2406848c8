#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Fetch a Debian kernel source package that this machine's release cannot
# install (linux-source-7.2 from unstable on Debian 12) without touching
# the machine's own apt setup:
#
#   fetch-source.sh PACKAGE VERSION SUITE     fetch (or find it cached)
#   fetch-source.sh --cached PACKAGE          print what was fetched, if any
#
# apt-get runs with a private configuration (its own sources list, lists
# and cache under the cache directory) naming SUITE of the same Debian
# archive the machine uses, signed with the machine's Debian archive
# keyring; the .deb is unpacked with dpkg-deb -x, never installed. When
# the archive no longer has VERSION, the newest PACKAGE there is taken and
# the log says so; when the package itself is gone it fails and says so
# (Documentation/testing.rst: moving the pin).
#
# Prints "VERSION TARBALL" on stdout; the source tarball stays in
# $JOULES_SOURCE_CACHE (default /var/cache/joules/sources)/PACKAGE_VERSION.
set -eu
cache=${JOULES_SOURCE_CACHE:-/var/cache/joules/sources}
log() { echo "fetch-source: $*" >&2; }

if [ "${1:-}" = --cached ]; then
	pkg=${2:?usage: fetch-source.sh --cached PACKAGE}
	[ -r "$cache/$pkg.fetched" ] && cat "$cache/$pkg.fetched"
	exit 0
fi
pkg=${1:?usage: fetch-source.sh PACKAGE VERSION SUITE}
want=${2:?usage: fetch-source.sh PACKAGE VERSION SUITE}
suite=${3:?usage: fetch-source.sh PACKAGE VERSION SUITE}
pin=$pkg

tarball_of() { find "$cache/${pkg}_$1" -maxdepth 1 -name 'linux-source-*.tar.xz' 2>/dev/null | head -n 1; }

# Record what was fetched (for --cached) atomically, only when it changed.
record() {
	[ "$(cat "$cache/$pin.fetched" 2>/dev/null)" = "$1" ] && return 0
	echo "$1" > "$cache/.$pin.fetched.$$" && mv -f "$cache/.$pin.fetched.$$" "$cache/$pin.fetched"
}

t=$(tarball_of "$want")
if [ -n "$t" ]; then
	record "$want $t" || true
	echo "$want $t"
	exit 0
fi

# The machine's Debian archive, as apt itself knows it (not a third-party
# repository whose path happens to end in /debian), else the default.
uri=$(apt-get indextargets --format '$(REPO_URI)' 'Origin: Debian' 'Label: Debian' \
	'Created-By: Packages' 2>/dev/null | head -n 1)
[ -n "$uri" ] || uri=http://deb.debian.org/debian
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -r "$keyring" ] || { log "no $keyring (apt-get install debian-archive-keyring)"; exit 1; }

mkdir -p "$cache"
apt=$(mktemp -d "$cache/.apt.XXXXXX")
trap 'rm -rf "$apt"' EXIT
trap 'exit 130' INT TERM HUP	# so that the EXIT trap runs (dash)
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial"
# apt downloads and checks signatures as its unprivileged _apt user.
chmod 755 "$apt"
chown -R _apt "$apt" 2>/dev/null || true
echo "deb [signed-by=$keyring] $uri $suite main" > "$apt/sources.list"
set -- -o Dir::Etc::sourcelist="$apt/sources.list" -o Dir::Etc::sourceparts=/dev/null \
	-o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache" \
	-o Dir::State::status=/dev/null -o APT::Get::List-Cleanup=false \
	-o APT::Get::AllowUnauthenticated=false -o Acquire::AllowInsecureRepositories=false \
	-o Acquire::AllowDowngradeToInsecureRepositories=false
log "reading $suite of $uri (private apt configuration)"
apt-get "$@" -qq update >&2 || { log "apt-get update of $suite failed"; exit 1; }
# apt-get update may exit 0 when an index failed to download.
ls "$apt"/lists/*_Packages* > /dev/null 2>&1 ||
	{ log "no package index for $suite from $uri (network?)"; exit 1; }
have=$(apt-cache "$@" madison "$pkg" | awk '{print $3}')
got=$want
if ! echo "$have" | grep -qxF "$want"; then
	got=$(echo "$have" | sort -V | tail -n 1)
	if [ -z "$got" ]; then
		# Another series needs its own patches: moving there is a change
		# of the repository, not something to do behind its back.
		newest=$(apt-cache "$@" pkgnames linux-source- | grep -E '^linux-source-[0-9.]+$' | sort -V | tail -n 1)
		log "$pkg is no longer in $suite (newest there: ${newest:-none}); move the pin (Documentation/testing.rst)"
		exit 1
	fi
	log "the pinned $pin $want is not in $suite; taking $pkg $got (move the pin: Documentation/testing.rst)"
fi
dir=$cache/${pkg}_$got
if [ -z "$(tarball_of "$got")" ]; then
	(cd "$apt" && apt-get "$@" -qq download "$pkg=$got") >&2 || { log "apt-get download $pkg=$got failed"; exit 1; }
	mkdir -p "$apt/x"
	dpkg-deb -x "$apt"/"$pkg"_*.deb "$apt/x"
	mkdir -p "$dir"
	mv "$apt"/x/usr/src/linux-source-*.tar.xz "$dir"/
fi
t=$(tarball_of "$got")
[ -n "$t" ] || { log "no source tarball in $pkg $got"; exit 1; }
record "$got $t"
log "$pkg $got: $t"
echo "$got $t"
