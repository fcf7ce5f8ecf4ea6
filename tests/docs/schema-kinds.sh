#!/bin/sh
# schema-kinds.sh SCHEMA KINDS: SCHEMA (docs/diagnose.schema.json) with the
# enum of its "verdict_kind" written from KINDS (the output of
# $(BUILD)/tests/progs/verdict-kinds: the kinds' table,
# report/verdict_kinds.h), in order of severity, wrapped before 100
# columns. `make schema` puts it in docs/; tests/report/test-report-kinds.sh
# checks the file is what this prints.
set -eu
[ $# -eq 2 ] || { echo "usage: schema-kinds.sh SCHEMA KINDS" >&2; exit 2; }
grep -q '"verdict_kind": {' "$1" || { echo "schema-kinds.sh: no \"verdict_kind\" in $1" >&2; exit 2; }
awk -F'\t' -v kinds="$2" '
	function enum_lines(   line, n, name, pad) {
		pad = "      \"enum\": ["
		line = pad; n = 0
		while ((getline < kinds) > 0) {
			name = "\"" $2 "\""
			if (n && length(line) + length(name) + 2 >= 100) {
				print line ","
				line = sprintf("%" length(pad) "s", "") name
			} else
				line = line (n ? ", " : "") name
			n++
		}
		close(kinds)
		if (!n) { print "schema-kinds.sh: no kinds in " kinds > "/dev/stderr"; exit 2 }
		print line "]"
	}
	/"verdict_kind": \{/ { print; inkind = 1; next }
	inkind && /"enum": \[/ { enum_lines(); skip = !/\]/; inkind = 0; next }
	skip { if (/\]/) skip = 0; next }
	{ print }' "$1"
