#!/bin/sh
# Remakes the Flight Recorder fuzz corpus kept in tests/fuzz/corpus-fr/
# (committed; run only when tests/gen/frgen.py changes). Every file stays
# under the -max_len of tests/fr/test-fr-fuzz.sh (16384 bytes).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out="$root/tests/fuzz/corpus-fr"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
for s in missing-rank size-mismatch p2p-unmatched multi-pg coalesced-ok; do
	/usr/bin/python3 "$root/tests/gen/frgen.py" "$s" "$tmp/$s" --ranks 2 --entries 2 --no-frames > /dev/null
	cp "$tmp/$s/comm_lib_trace_rank_0" "$out/$s.pkl"
done
/usr/bin/python3 "$root/tests/gen/frgen.py" missing-rank "$tmp/f" --ranks 2 --entries 1 > /dev/null
cp "$tmp/f/comm_lib_trace_rank_0" "$out/frames.pkl"
/usr/bin/python3 "$root/tests/gen/frgen.py" missing-rank "$tmp/j" --ranks 2 --entries 2 --json > /dev/null
cp "$tmp/j/comm_lib_trace_rank_0" "$out/missing-rank.json"
/usr/bin/python3 - "$out" <<'PY'
import os, pickle, sys
out = sys.argv[1]
class Evil:
    def __reduce__(self):
        return (os.system, ("true",))
for proto in (0, 2, 4, 5):
    d = {"version": "2.10", "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1]"}},
         "entries": [{"profiling_name": "nccl:all_reduce", "state": "scheduled"}], "x": Evil()}
    open(os.path.join(out, "evil-p%d.pkl" % proto), "wb").write(pickle.dumps(d, protocol=proto))
    d.pop("x")
    open(os.path.join(out, "tiny-p%d.pkl" % proto), "wb").write(pickle.dumps(d, protocol=proto))
PY
ls -l "$out"
