#!/bin/sh
# The README's "Reading a verdict" gallery is real output of today's tool:
# tests/docs/gallery.sh runs every case again (the example trainer on the
# simulation under libncclwatch.so, and nwgen for two kinds) and its
# output must equal the README's section once the values that vary from
# run to run are blanked (tests/docs/normalize.sh). Every verdict kind
# appears once. `make readme-verdicts` refreshes the section.
. "$NW_ROOT/tests/lib.sh"
nw_use_sim
[ -x "$NW_BUILD/tests/progs/nwgen" ] || fail "nwgen not built"
readme="$NW_ROOT/README.md"
sed -n '/^<!-- verdicts: begin/,/^<!-- verdicts: end/p' "$readme" | sed '1d;$d' > "$T/readme.md"
[ -s "$T/readme.md" ] || fail "no '<!-- verdicts: begin/end' section in README.md"
for kind in MISSING_RANK MISMATCH TRANSPORT_STALL P2P_UNMATCHED P2P_DEADLOCK INIT_STALL STREAM_BLOCKED GPU_FAULT IDLE HEALTHY; do
	assert_eq "$(grep -c "^### $kind" "$T/readme.md")" 1 "README gallery entries for $kind"
	assert_grep "^$kind: " "$T/readme.md"
done
TMPDIR=$T nw_bounded 200 sh "$NW_ROOT/tests/docs/gallery.sh" > "$T/now.md" 2> "$T/gallery.err"
st=$?
[ $st -eq 0 ] || { cat "$T/gallery.err" >&2; fail "gallery.sh exit status $st"; }
sh "$NW_ROOT/tests/docs/normalize.sh" "$T/readme.md" > "$T/readme.norm"
sh "$NW_ROOT/tests/docs/normalize.sh" "$T/now.md" > "$T/now.norm"
diff -u "$T/readme.norm" "$T/now.norm" || fail "README.md's verdict gallery is not what the tool prints now (make readme-verdicts)"
