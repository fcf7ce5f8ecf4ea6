# The graph steps' shared part (steps/03-graph-replay*.sh): gpu-nccl graph
# run under the preload, its records read with `ncclwatch show`.
#   replays VIA [ENV...]   gpu-nccl graph --launches $want --via VIA (link:
#                          the graph calls bound by the linker; getproc:
#                          through cuGetProcAddress; dlsym), ENV words set
#                          for it; sets `figures`, fails the step when a
#                          launch or a replay record is missing
want=100

# replays VIA: run gpu-nccl graph --via VIA in a job dir of its own; sets
# `figures` and fails the step when a replay is missing.
replays() {
	_via=$1; _o="$T/$_via"
	shift
	mkdir -p "$_o"
	nw_bounded 120 env "$@" NCCLWATCH_DIR="$_o/shm" NCCLWATCH_KEEP=1 LD_PRELOAD="$(nw_preload)" \
		"$prog" graph --launches $want --via "$_via" > "$_o/graph.out" 2>&1
	_rc=$?
	cat "$_o/graph.out"
	"$NW_CLI" show "$_o/shm" > "$_o/show.txt" 2> "$_o/show.err" ||
		{ cat "$_o/show.err"; fail "$_via: ncclwatch show failed (program exit $_rc)"; }
	python3 "$NW_ROOT/tests/gpu/records.py" "$_o/show.txt" > "$_o/records.txt" || fail "$_via: cannot read ncclwatch show's output"
	cat "$_o/records.txt"
	for _f in graph.out show.txt records.txt; do cp "$_o/$_f" "$T/$_via-$_f"; keep "$T/$_via-$_f"; done
	launched=$(sed -n 's/.*graph: \([0-9]*\) of [0-9]* launches done.*/\1/p' "$_o/graph.out")
	captured=$(val n_AllReduce_CAPTURED "$_o/records.txt")
	n=$(val n_GraphLaunch "$_o/records.txt")
	done_=$(val n_GraphLaunch_COMPLETED "$_o/records.txt")
	first=$(val seq_first_GraphLaunch "$_o/records.txt")
	last=$(val seq_last_GraphLaunch "$_o/records.txt")
	gaps=$(val seq_gaps_GraphLaunch "$_o/records.txt")
	states=$(val states_GraphLaunch "$_o/records.txt")
	: "${captured:=0}" "${n:=0}" "${done_:=0}"
	figures="$_via: captured ops recorded: $captured (CAPTURED); replays recorded: $n of ${launched:-0} launches (GraphLaunch records: ${states:-none}, replay numbers ${first:--}..${last:--}, ${gaps:--} gaps)"
	[ $_rc = 0 ] || fail "gpu-nccl graph --via $_via: exit $_rc: $(tail -n 1 "$_o/graph.out"); $figures"
	grep -q 'graph: result ok' "$_o/graph.out" || fail "no result check; $figures"
	[ "$launched" = $want ] || fail "$launched of $want launches; $figures"
	[ "$captured" = 1 ] || fail "the captured AllReduce is not recorded once, CAPTURED; $figures"
	[ "$n" = $want ] || fail "$figures — not every replay is recorded"
	[ "$done_" = $want ] || fail "$figures — not every replay COMPLETED"
	[ "$first" = 1 ] && [ "$last" = $want ] && [ "$gaps" = 0 ] || fail "$figures — replay numbers are not 1..$want"
}

