#!/bin/sh
# The verdict kinds are one table, report/verdict_kinds.h: the library's
# names and severities (verdict-kinds prints them), `ncclwatch diagnose
# --help`, the JSON schema's enum (docs/diagnose.schema.json, written by
# `make schema`), docs/json-schema.md's list and docs/diagnosis.md's
# table and ranking must all say what its rows say, in its order.
. "$NW_ROOT/tests/lib.sh"
KINDS="$NW_BUILD/tests/progs/verdict-kinds"
[ -x "$KINDS" ] || fail "$KINDS not built"
[ -x "$NW_CLI" ] || fail "$NW_CLI not built"
table="$NW_ROOT/report/verdict_kinds.h"

# same FILE WHAT: FILE's names, one a line, are the table's, in order
same() {
	diff -u "$T/names" "$1" > "$T/diff" || { cat "$T/diff" >&2; fail "$2 differs from report/verdict_kinds.h"; }
	note "$2: the table's $(wc -l < "$T/names") kinds, in order"
}

note "the table's rows: severities 0, 1, 2... in row order; names unique"
sed -nE 's/^[[:space:]]*X\(([A-Z][A-Z0-9_]*), *([0-9]+),.*/\2 \1/p' "$table" > "$T/rows"
[ -s "$T/rows" ] || fail "no X(NAME, SEVERITY, HINT) rows in $table"
awk '$1 != NR - 1 { print "row " NR " (" $2 ") has severity " $1 ", not " NR - 1; bad = 1 } END { exit bad }' \
	"$T/rows" || fail "report/verdict_kinds.h: rows out of order or with gaps"
cut -d' ' -f2 "$T/rows" > "$T/names"
assert_eq "$(sort "$T/names" | uniq -d)" "" "names given twice"

note "the library compiled the same table (verdict-kinds)"
"$KINDS" > "$T/kinds" || fail "verdict-kinds exit status $?"
cut -f2 "$T/kinds" > "$T/lib-names"
same "$T/lib-names" "nw_verdict_name (0 to NW_VERDICT_NKINDS-1)"
cut -f1 "$T/kinds" | awk '$1 != NR - 1 { exit 1 }' || fail "verdict-kinds: severities not 0, 1, 2..."

"$NW_CLI" diagnose --help > "$T/help" || fail "diagnose --help exit status $?"
sed -n '/^KIND is one of/,/lowest precedence first/p' "$T/help" | sed 's/^KIND is one of//' |
	tr ' ,.' '\n\n\n' | grep -E '^[A-Z][A-Z0-9_]+$' > "$T/help-names"
same "$T/help-names" "ncclwatch diagnose --help"

schema="$NW_ROOT/docs/diagnose.schema.json"
python3 -c 'import json, sys; print("\n".join(json.load(open(sys.argv[1]))["$defs"]["verdict_kind"]["enum"]))' \
	"$schema" > "$T/schema-names" || fail "no \$defs.verdict_kind.enum in $schema"
same "$T/schema-names" "docs/diagnose.schema.json's enum"
sh "$NW_ROOT/tests/docs/schema-kinds.sh" "$schema" "$T/kinds" > "$T/schema" || fail "schema-kinds.sh failed"
diff -u "$schema" "$T/schema" || fail "docs/diagnose.schema.json is not what \`make schema\` writes"

grep -E '^\| `kind` \| string \| one of ' "$NW_ROOT/docs/json-schema.md" | sed 's/(.*//' |
	grep -oE '`[A-Z][A-Z0-9_]+`' | tr -d '`' > "$T/md-names"
same "$T/md-names" "docs/json-schema.md's kind list"

note "docs/diagnosis.md: a row per kind but HEALTHY, and the ranking names them all, highest first"
diag="$NW_ROOT/docs/diagnosis.md"
sed -n '/^## What each verdict kind means/,/^## /p' "$diag" | sed -nE 's/^\| `([A-Z][A-Z0-9_]+)` \|.*/\1/p' | sort > "$T/diag-rows"
grep -vx HEALTHY "$T/names" | sort > "$T/want-rows"
diff -u "$T/want-rows" "$T/diag-rows" || fail "docs/diagnosis.md's verdict table: not one row per kind (but HEALTHY)"
sed -n '/\*\*Ranking\*\*/,/then by the number/p' "$diag" | grep -oE '`[A-Z][A-Z0-9_]+`' | tr -d '`' > "$T/ranking"
grep -vx HEALTHY "$T/names" | tac > "$T/want-ranking"
diff -u "$T/want-ranking" "$T/ranking" || fail "docs/diagnosis.md's ranking is not the table's order, highest first"
