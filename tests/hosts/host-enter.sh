#!/bin/sh
# host-enter.sh NAME CMD...: runs CMD on the namespaced host NAME that
# tests/hosts/hosts-lib.sh's hosts_up made (its mount and UTS namespaces:
# that host's /dev/shm and hostname), in the current directory, with the
# current environment. HOSTS_DIR (exported by the test, else $T/hosts of
# the caller) holds NAME.pid. Used as the "remote shell" of pdsh's exec
# module and of mpirun's rsh agent in tests/hosts/.
set -eu
[ $# -ge 2 ] || { echo "usage: $0 NAME CMD..." >&2; exit 2; }
name=$1; shift
dir=${HOSTS_DIR:-${T:?}/hosts}
pid=$(cat "$dir/$name.pid" 2>/dev/null) || { echo "host-enter: no host $name (no $dir/$name.pid)" >&2; exit 255; }
exec nsenter --target "$pid" --mount --uts --wd="$PWD" -- "$@"
