#!/bin/sh
# The simulated libnccl.so.2 exports every function nccl.h declares, as a
# strong pnccl* and a weak nccl* symbol like the real library, and nothing
# else; the real library's other exports are exactly the device-side API
# that tests/sim/README.md lists as omitted. Soname libnccl.so.2.
. "$NW_ROOT/tests/lib.sh"
sim="$NW_SIM/libnccl.so.2"
real="$NW_REAL_NCCL/libnccl.so.2"
hdr="$CUDA_HOME/include/nccl.h"
[ -f "$sim" ] || fail "$sim missing"
readelf -d "$sim" | grep -q 'SONAME.*\[libnccl.so.2\]' || fail "soname is not libnccl.so.2"

grep -oE '^[a-zA-Z_ *]*[ *]nccl[A-Za-z]+\(' "$hdr" | grep -oE 'nccl[A-Za-z]+\(' | tr -d '(' | sort -u > "$T/declared"
[ "$(wc -l < "$T/declared")" -ge 40 ] || fail "could not read the declarations of $hdr"
nm -D --defined-only "$sim" | awk '$2 == "T" || $2 == "W" { print $2, $3 }' | sort > "$T/simsyms"
while read -r f; do
	grep -qx "W $f" "$T/simsyms" || fail "$f is not exported as a weak symbol"
	grep -qx "T p$f" "$T/simsyms" || fail "p$f is not exported as a strong symbol"
done < "$T/declared"
awk '{ sub(/^p/, "", $2); print $2 }' "$T/simsyms" | sort -u > "$T/exported"
extra=$(comm -23 "$T/exported" "$T/declared")
[ -z "$extra" ] || fail "exported but not in nccl.h: $extra"

if [ -f "$real" ]; then
	nm -D --defined-only "$real" | awk '$2 == "W" { print $3 }' | sort -u > "$T/real"
	missing=$(comm -23 "$T/real" "$T/exported" | tr '\n' ' ')
	assert_eq "$missing" "ncclDevCommCreate ncclDevCommDestroy ncclGinBarrierCreateRequirement ncclLLA2ACalcSlots ncclLLA2ACreateRequirement ncclLsaBarrierCreateRequirement ncclTeamLsa ncclTeamRail ncclTeamRankToLsa ncclTeamRankToWorld ncclTeamWorld " \
		"real exports the simulation omits (the documented device-side API)"
fi
echo "$(wc -l < "$T/declared") functions of nccl.h exported twice"
