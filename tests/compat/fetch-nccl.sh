#!/bin/sh
# Fetches real NCCL libraries of other versions for the compatibility tests:
# each PyPI wheel (a zip) is downloaded once with `pip download` and only its
# libnccl.so.2 is kept, as DEST/<version>/libnccl.so.2. Pinned so that runs
# are reproducible: one old release and the newest one when this was written.
set -u
dest=${1:-build/nccl-wheels}
versions="nvidia-nccl-cu12==2.18.3 nvidia-nccl-cu13==2.32.3"
pip="python3 -m pip"
$pip --version >/dev/null 2>&1 || { echo "fetch-nccl: pip is not available (install python3-pip)" >&2; exit 1; }
mkdir -p "$dest"
for spec in $versions; do
	v=${spec#*==}
	[ -s "$dest/$v/libnccl.so.2" ] && continue
	tmp=$(mktemp -d)
	echo "fetch-nccl: downloading $spec"
	if $pip download --no-deps -q -d "$tmp" "$spec" >"$tmp/log" 2>&1 &&
	   mkdir -p "$dest/$v" &&
	   python3 -c 'import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
open(sys.argv[2], "wb").write(z.read("nvidia/nccl/lib/libnccl.so.2"))' "$tmp"/*.whl "$dest/$v/libnccl.so.2.part" &&
	   mv "$dest/$v/libnccl.so.2.part" "$dest/$v/libnccl.so.2"; then
		:
	else
		echo "fetch-nccl: could not fetch $spec:" >&2; tail -n 3 "$tmp/log" >&2
		rm -rf "$tmp"; exit 1
	fi
	rm -rf "$tmp"
done
