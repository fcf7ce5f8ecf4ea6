#!/bin/sh
# Findings, not words (docs/ARCHITECTURE.md, "Findings and words"): decide/
# leaves findings (decide/facts.h) and never formats text; every word lives
# in words/. For every file of decide/ (.c and .h): outside comments and
# #include lines, no string literal, and no call that formats (printf
# family, nw_buf_*, the old text-building helpers: nw_verdict_summary/
# evidence, grouped evidence, labels and names). One exception, by file
# and statement: analyze.c's one-line `snprintf(err->message, sizeof
# err->message, ...)`, nw_analyze's error line to its caller (sources'
# struct nw_read_error, "PATH: problem"), not a verdict's words. Also:
# every fact kind has its words function (say.c's table, checked by the
# unit test of the analysis), and no words header in decide/.
. "$NW_ROOT/tests/lib.sh"
cd "$NW_ROOT/report" || fail "no report/"
FORMATS='(^|[^A-Za-z0-9_])([a-z]*printf|puts|fputs|putc|strcat|strcpy|strncpy|nw_buf_[a-z_]+|nw_verdict_summary|nw_verdict_evidence|nw_verdict_evidence_flush|nw_eg_[a-z_]+|nw_describe_op|nw_where[a-z_]*|nw_age_fill|nw_fmt_[a-z_]+|nw_[a-z_]*_label|nw_[a-z_]*_name|nw_[a-z_]*_string|nw_rankset_format)[[:space:]]*\('
ERRLINE='^[[:space:]]*snprintf\(err->message, sizeof err->message, .*\);[[:space:]]*$'
bad=0
files=$(find decide -name '*.[ch]' | sort)
[ -n "$files" ] || fail "no files in decide/"
for f in $files; do
	# the code without comments (the compiler's own reading), #include lines dropped
	code=$(gcc -fpreprocessed -dD -E -P "$f" 2>/dev/null | grep -Ev '^[[:space:]]*#[[:space:]]*include')
	[ -n "$code" ] || { echo "$f: could not be read"; bad=1; continue; }
	[ "$f" != decide/analyze.c ] || code=$(printf '%s\n' "$code" | grep -Ev "$ERRLINE")
	lit=$(printf '%s\n' "$code" | grep -n '"')
	[ -z "$lit" ] || { printf '%s: words (a string literal) in decide/:\n%s\n' "$f" "$lit"; bad=1; }
	fmt=$(printf '%s\n' "$code" | grep -nE "$FORMATS")
	[ -z "$fmt" ] || { printf '%s: formatting in decide/:\n%s\n' "$f" "$fmt"; bad=1; }
	ev=$(printf '%s\n' "$code" | grep -nE -- '->ev\b|\.ev\b')
	[ -z "$ev" ] || { printf '%s: writes the scratch evidence line:\n%s\n' "$f" "$ev"; bad=1; }
	if grep -Eq '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*words/' "$f"; then
		echo "$f includes words/: decide must not call upward"
		bad=1
	fi
done
[ $bad = 0 ] || fail "decide/ writes words"
note "$(echo $files | wc -w) files of decide/, no words in them"
echo ok
