#!/bin/sh
# budget: 150
# Step 8a: real cross-rank hangs. A sample of the scenario corpus (tests/
# corpus/cases.txt), 2-4 ranks: a missing rank, a count mismatch, a send
# without its receive, an init with a wrong id, a death inside a
# collective, a stream blocked by a host function, two comms in another
# order on one stream. On a GPU every rank is a process on the real NCCL
# and driver, the ranks share the one GPU as separate "hosts" (each its own
# NCCL_HOSTID, sockets on the loopback); each case is judged in all three
# views (live, dead, watchdog) like the corpus. Without a GPU the same
# cases run on the simulation (the corpus' own tests do the rest).
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/gpu/gpu-lib.sh"
. "$NW_ROOT/tests/corpus/corpus-lib.sh"
: "${NW_GPU_CORPUS:=desync-sym mm-count ring-missing-recv-16m init-wrong-id die-inside hostfn-block order2}"
if gpu_real; then
	gpu_hosts_env
	export CORPUS_NCCL_DIR="$NW_GPU_NCCL_DIR"
fi
# real NCCL's init over sockets takes longer than the simulation's
# (4 at a time: 8 at once starved a watchdog on a 16-core GPU machine,
# whose NCCL proxy threads spin)
export CORPUS_TIMEOUT=4 CORPUS_KEEP="$NW_GPU_STEP_DIR/cases"
CORPUS_JOBS=4
export CORPUS_JOBS
# shellcheck disable=SC2086
corpus_run $NW_GPU_CORPUS > "$T/lines"
cat "$T/lines"
cp "$T/lines" "$NW_GPU_STEP_DIR/views.txt"
views=$(grep -c . "$T/lines")
ok=$(grep -c '^[^ ]* [a-z]* ok ' "$T/lines")
bad=$(grep ' FAIL ' "$T/lines" | cut -c1-200 | head -n 3 | tr '\n' ';')
where=$(gpu_real && echo "real NCCL $(basename "$(readlink -f "$NW_GPU_NCCL_DIR/libnccl.so.2")")" || echo simulation)
[ "$ok" -eq "$views" ] && [ "$views" -gt 0 ] || fail "$ok of $views views right on the $where: $bad"
result "$(echo $NW_GPU_CORPUS | wc -w) cases, $ok/$views views right on the $where"
