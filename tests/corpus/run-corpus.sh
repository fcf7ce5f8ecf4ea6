#!/bin/sh
# The scenario corpus in results mode, for whoever iterates on the engine:
#   sh tests/corpus/run-corpus.sh [CASE...]     (default: every case)
#   sh tests/corpus/run-corpus.sh --class CLASS...
# prints one line per case and view:
#   case view ok|FAIL kind=... culprits=... waiting=... unknown=... (want ...)
# and a last line "N ok, N FAIL". CORPUS_JOBS cases run at once (4);
# CORPUS_KEEP=DIR keeps each case's output and diagnoses in DIR/CASE/.
# Needs `make all`. Exit status 0 when every line is ok.
: "${NW_ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}"
export NW_ROOT
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/corpus/corpus-lib.sh"
if [ "${1:-}" = --class ]; then
	shift
	set -- $(corpus_names "$@")
elif [ $# -eq 0 ]; then
	set -- $(corpus_names)
fi
corpus_run "$@" > "$T/lines"
st=$?
cat "$T/lines"
echo "$(grep -c ' ok ' "$T/lines") ok, $(grep -c ' FAIL ' "$T/lines") FAIL"
exit $st
