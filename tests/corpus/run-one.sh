#!/bin/sh
# One case of the scenario corpus, in its own process, temp dir, job dir and
# simulation dir: corpus-lib.sh's corpus_run runs this through xargs and
# reads $CORPUS_OUT/NAME.res (one line per view).
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/corpus/corpus-lib.sh"
_t0=$(date +%s)
corpus_case "$1" > "$T/res" 2>&1
echo "$(( $(date +%s) - _t0 ))" > "$CORPUS_OUT/$1.secs"
mv "$T/res" "$CORPUS_OUT/$1.res"
