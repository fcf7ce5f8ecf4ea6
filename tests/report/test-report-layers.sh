#!/bin/sh
# The engine's four layers (docs/ARCHITECTURE.md, "The engine's four
# layers"): a file of a layer includes only headers of its own layer or of
# the layers below it (sources < model < decide < words), and the shared
# vocabulary beside them (report/names.h, verdict_kinds.h, escape.h). C
# calls nothing it has not declared (-Werror), so the includes are the
# dependencies. Also: each layer has its one header, and every .c of
# report/ sits in a layer, cli/ or engine/ (no file outside the house).
. "$NW_ROOT/tests/lib.sh"
cd "$NW_ROOT/report" || fail "no report/"
rank() {
	case $1 in
	sources/*) echo 1 ;; model/*) echo 2 ;; decide/*) echo 3 ;; words/*) echo 4 ;;
	names.h|verdict_kinds.h|escape.h|names.c|escape.c) echo 0 ;;
	*) echo 9 ;;
	esac
}
bad=0
for l in sources model decide words; do
	[ -f "$l/$l.h" ] || { echo "no $l/$l.h"; bad=1; }
done
for f in $(find sources model decide words -name '*.[ch]' | sort); do
	mine=$(rank "$f")
	for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
		target=$(realpath -m --relative-to=. "$(dirname "$f")/$inc")
		theirs=$(rank "$target")
		if [ "$theirs" -gt "$mine" ]; then
			echo "$f includes $inc ($target): a layer above it"
			bad=1
		fi
	done
done
for f in $(find . -name '*.c' | sed 's|^\./||' | sort); do
	case $f in sources/*|model/*|decide/*|words/*|cli/*|engine/*|names.c|escape.c) ;;
	*) echo "$f: in no layer"; bad=1 ;;
	esac
done
[ $bad = 0 ] || fail "the layers are not kept"
note "$(find sources model decide words -name '*.[ch]' | wc -l) files in four layers, no include upward"
echo ok
