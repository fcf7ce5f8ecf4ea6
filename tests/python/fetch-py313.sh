#!/bin/sh
# `make deps`: a real CPython 3.13 for tests/python/test-py-313.sh: Debian
# 13's python3.13 (and libunwind8, which libncclwatch.so needs) in a
# `debootstrap --variant=minbase trixie` directory (about 260 MB, 1-2 min).
# Kept where it is: nothing is done when DIR already holds both. Not root,
# or no network: says so; the 3.13 test then skips.
# usage: fetch-py313.sh DIR   (make deps: /opt/ncclwatch-trixie)
dir=${1:?usage: fetch-py313.sh DIR}
mirror=${NW_DEBIAN_MIRROR:-http://deb.debian.org/debian}
[ -x "$dir/usr/bin/python3.13" ] && [ -e "$dir/usr/lib/x86_64-linux-gnu/libunwind.so.8" ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v debootstrap > /dev/null; then
	echo "make deps: no CPython 3.13 in $dir; as root (with debootstrap): debootstrap --variant=minbase --include=python3.13,libunwind8 trixie $dir $mirror" >&2
	exit 0
fi
echo "make deps: CPython 3.13 (Debian trixie, minbase) into $dir"
rm -rf "$dir.tmp"
if debootstrap --variant=minbase --include=python3.13,libunwind8 trixie "$dir.tmp" "$mirror" > "$dir.log" 2>&1; then
	rm -rf "$dir" && mv "$dir.tmp" "$dir" && rm -f "$dir.log"
else
	echo "make deps: debootstrap of trixie failed (see $dir.log); the CPython 3.13 test will skip" >&2
	rm -rf "$dir.tmp"
fi
exit 0
