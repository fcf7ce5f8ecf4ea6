#!/bin/sh
# The collection scripts carry every byte: on three namespaced hosts
# (tests/hosts/hosts-lib.sh), files of random bytes (incompressible: many
# lines, many of Open MPI's output chunks, hosts interleaved) sit where
# segments do; examples/collect/collect-pdsh.sh and collect-mpirun.sh bring
# them back, and each copy must have its original's checksum. Then a
# damaged stream (a line lost, a line changed, a host cut off) is refused
# for that host, never unpacked.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/hosts/hosts-lib.sh"
hosts="node1 node2 node3"
hosts_up $hosts
job=tjob
unset NCCLWATCH_DIR  # each host's own /dev/shm/ncclwatch-$UID
for h in $hosts; do
	host_run "$h" sh -c "mkdir -p /dev/shm/ncclwatch-0/$job && head -c 400000 /dev/urandom > /dev/shm/ncclwatch-0/$job/$h.100.seg &&
		head -c 5000 /dev/urandom > /dev/shm/ncclwatch-0/$job/$h.101.rank1.dump.seg && echo not-a-seg > /dev/shm/ncclwatch-0/$job/report.txt"
	host_run "$h" sh -c "cd /dev/shm/ncclwatch-0/$job && sha256sum *.seg" > "$T/sums.$h"
done
export NCCLWATCH="$NW_CLI"
check() {  # check OUT: every host's files came back, byte for byte, and nothing else
	for h in $hosts; do
		(cd "$1/$h/$job" && sha256sum *.seg) > "$T/got.$h" || fail "$1: nothing from $h"
		cmp -s "$T/sums.$h" "$T/got.$h" || { diff "$T/sums.$h" "$T/got.$h"; fail "$1: $h's files differ from the originals"; }
	done
}
if command -v pdsh > /dev/null && pdsh -R exec -w x true > /dev/null 2>&1; then
	note "pdsh"
	PDSH_OPTS="-R exec" COLLECT_VIA="sh $HOSTS_ENTER %h" \
		"$NW_ROOT/examples/collect/collect-pdsh.sh" --segments --job "$job" 'node[1-3]' "$T/pdsh" > "$T/pdsh.out" 2>&1
	grep '^collect: ' "$T/pdsh.out"
	check "$T/pdsh"
	assert_no_grep 'no files from|damaged|incomplete' "$T/pdsh.out"
else
	echo "pdsh (exec module) not installed: its part not run"
fi
if command -v mpirun > /dev/null; then
	note "mpirun"
	MPIRUN_OPTS="--mca plm_rsh_agent $NW_ROOT/tests/hosts/host-rsh.sh -x NCCLWATCH -x NW_TEST_ID" \
		"$NW_ROOT/examples/collect/collect-mpirun.sh" --segments --job "$job" node1,node2,node3 "$T/mpirun" > "$T/mpirun.out" 2>&1
	grep '^collect: ' "$T/mpirun.out"
	check "$T/mpirun"
	assert_no_grep 'no files from|damaged|incomplete' "$T/mpirun.out"
else
	echo "mpirun not installed: its part not run"
fi

note "damaged streams are refused"
. "$NW_ROOT/examples/collect/collect-lib.sh"
host_run node1 sh "$NW_ROOT/examples/collect/collect-host.sh" --segments --job "$job" > "$T/node1.lines"
host_run node2 sh "$NW_ROOT/examples/collect/collect-host.sh" --segments --job "$job" > "$T/node2.lines"
host_run node3 sh "$NW_ROOT/examples/collect/collect-host.sh" --segments --job "$job" > "$T/node3.lines"
assert_eq "$(grep -c '^NWCOLLECT node1 [0-9]* ' "$T/node1.lines")" "$(awk '$3 == "END" { print $4 }' "$T/node1.lines")" "node1's line count"
# node1: its 3rd line lost; node2: one character changed; node3: no end
{ sed 3d "$T/node1.lines"; sed '5s/\(NWCOLLECT node2 5 .\)./\1!/' "$T/node2.lines"; grep -v ' END ' "$T/node3.lines"; } |
	collect_gather "$T/damaged" node1 node2 node3 > "$T/damaged.out"
echo "collect_gather exited $?"
cat "$T/damaged.out"
assert_grep '^collect: node1: damaged' "$T/damaged.out"
assert_grep '^collect: node2: damaged' "$T/damaged.out"
assert_grep '^collect: node3: incomplete' "$T/damaged.out"
assert_grep '^collect: no files from: node1 node2 node3$' "$T/damaged.out"
[ -z "$(find "$T/damaged" -type f)" ] || fail "files unpacked from a damaged stream"
echo "ok: every byte through pdsh and mpirun; damaged streams refused"
