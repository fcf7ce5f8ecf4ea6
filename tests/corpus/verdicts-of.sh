#!/bin/sh
# The verdicts an engine gives on frozen corpus inputs, for comparing two
# engines verdict for verdict (a refactor must change none):
#   CORPUS_KEEP=/tmp/frozen sh tests/corpus/run-corpus.sh     # once
#   sh tests/corpus/verdicts-of.sh build/bin/ncclwatch /tmp/frozen > before.txt
#   ... change the engine, make ...
#   sh tests/corpus/verdicts-of.sh build/bin/ncclwatch /tmp/frozen > after.txt
#   diff before.txt after.txt
# For each kept case (DIR/NAME/files/), `diagnose` in text and the JSON
# document without the fields that change between two readings of the
# same files (the reading's time, ages measured from now).
[ $# -eq 2 ] || { echo "usage: verdicts-of.sh CLI FROZEN_DIR" >&2; exit 2; }
cli=$1 dir=$2
for c in "$dir"/*/files; do
	[ -d "$c" ] || continue
	name=$(basename "$(dirname "$c")")
	echo "=== $name"
	"$cli" diagnose "$c" 2>&1 | sed -E 's/[0-9]+(\.[0-9]+)?s (ago|old)/Ns \2/g'
	echo "--- json"
	"$cli" diagnose --json "$c" 2>&1 | python3 -c '
import json, sys
t = sys.stdin.read()
try:
    d = json.loads(t)
except ValueError:
    print(t); sys.exit()
def strip(o):
    if isinstance(o, dict):
        return {k: strip(v) for k, v in o.items() if k not in ("generated_at", "now", "age_s", "age_ns")}
    if isinstance(o, list):
        return [strip(v) for v in o]
    return o
print(json.dumps(strip(d), indent=1, sort_keys=True))'
done
