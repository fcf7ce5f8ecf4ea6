#!/bin/sh
# Findings, not words (docs/ARCHITECTURE.md, "Findings and words"): a rule
# family converted to findings (decide/facts.h) has no English and no
# formatting left in decide/; its words live in words/. For each
# converted file (the list below grows one family at a time, never
# shrinks): outside comments and #include lines, no string literal, and
# no call that formats (printf family, nw_buf_*, the text-building helpers
# of decide.h: nw_verdict_summary/evidence, the grouped evidence, labels
# and names). Also: every fact kind has its words function (say.c's table,
# checked by the unit test of the analysis), and no words header in decide/.
. "$NW_ROOT/tests/lib.sh"
cd "$NW_ROOT/report" || fail "no report/"
CONVERTED="decide/verdicts_fault.c decide/lost.c decide/verdicts_order.c decide/verdicts_graph.c decide/verdicts_left.c decide/verdicts_init.c decide/verdicts_launch.c decide/verdicts_p2p.c decide/rule_fate.c decide/verdicts_stacks.c decide/verdicts_coll.c decide/rootcause.c decide/process_view.c decide/ras_merge.c decide/verdicts_ras.c"
FORMATS='(^|[^A-Za-z0-9_])([a-z]*printf|puts|fputs|putc|strcat|strcpy|strncpy|nw_buf_[a-z_]+|nw_verdict_summary|nw_verdict_evidence|nw_verdict_evidence_flush|nw_eg_[a-z_]+|nw_describe_op|nw_where[a-z_]*|nw_age_fill|nw_fmt_[a-z_]+|nw_[a-z_]*_label|nw_[a-z_]*_name|nw_[a-z_]*_string|nw_rankset_format)[[:space:]]*\('
bad=0
for f in $CONVERTED; do
	[ -f "$f" ] || { echo "$f: listed as converted but missing"; bad=1; continue; }
	# the code without comments (the compiler's own reading), #include lines dropped
	code=$(gcc -fpreprocessed -dD -E -P "$f" 2>/dev/null | grep -Ev '^[[:space:]]*#[[:space:]]*include')
	[ -n "$code" ] || { echo "$f: could not be read"; bad=1; continue; }
	lit=$(printf '%s\n' "$code" | grep -n '"')
	[ -z "$lit" ] || { printf '%s: words (a string literal) in a converted family:\n%s\n' "$f" "$lit"; bad=1; }
	fmt=$(printf '%s\n' "$code" | grep -nE "$FORMATS")
	[ -z "$fmt" ] || { printf '%s: formatting in a converted family:\n%s\n' "$f" "$fmt"; bad=1; }
	ev=$(printf '%s\n' "$code" | grep -nE -- '->ev\b|\.ev\b')
	[ -z "$ev" ] || { printf '%s: writes the scratch evidence line:\n%s\n' "$f" "$ev"; bad=1; }
done
for f in $(find decide -name '*.[ch]'); do
	if grep -Eq '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*words/' "$f"; then
		echo "$f includes words/: decide must not call upward"
		bad=1
	fi
done
[ $bad = 0 ] || fail "a converted family writes words in decide/"
note "$(echo $CONVERTED | wc -w) converted files, no words in them"
echo ok
