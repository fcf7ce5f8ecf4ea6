#!/bin/sh
# Installs the Debian packages named on the command line when any is missing.
# As root: apt-get update + install. Otherwise: print the exact line, fail.
missing=""
for p in "$@"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
line="apt-get update && apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" != 0 ]; then
	echo "make deps: missing Debian packages; run as root: $line" >&2
	exit 1
fi
echo "make deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends $missing >/dev/null || {
	echo "make deps: failed: $line" >&2
	exit 1
}
