#!/bin/sh
# Three hosts x two ranks (tests/hosts/hosts-lib.sh: own /dev/shm, own
# hostname each), one training job across them (the trainer, ranks from
# RANK/WORLD_SIZE/LOCAL_RANK as torchrun gives them). Rank 3, on nodeB,
# skips the all-reduce of step 3; ranks 0-1 (nodeA), 2 (nodeB) and 4-5
# (nodeC) wait in it. Post-mortem: the job is SIGKILLed, each host's
# /dev/shm keeps its own ranks' files and nothing of the others'; one host
# alone cannot name the culprit; the files copied from each host into one
# directory give the exact verdict, with each rank's host; so do the files
# collect-pdsh.sh brings back.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/hosts/hosts-lib.sh"
nw_use_sim
hosts="nodeA nodeB nodeC"
hosts_up $hosts
# every process's default directory: /dev/shm of its host
unset NCCLWATCH_DIR
job="hosts-pm-$$"
export NCCLWATCH_JOB="$job" NCCLWATCH_TIMEOUT=2 NCCLWATCH_KEEP=1
jd=/dev/shm/ncclwatch-$(id -u)/$job
mkdir -p "$T/rdv"
r=0 pids=
for h in $hosts; do
	for l in 0 1; do
		LD_PRELOAD="$(nw_preload)" RANK=$r WORLD_SIZE=6 LOCAL_RANK=$l host_spawn "$h" \
			"$NW_TRAINER" --rendezvous "$T/rdv" --steps 10 --count 64 --bcast-every 0 --verbose \
			--fault skip:rank=3:step=3 > "$T/rank$r.out" 2>&1
		pids="$pids $NW_PID"
		r=$((r + 1))
	done
done
# The hang, and each host's watchdog verdict (report.txt: its dumps are in)
reported() { for h in $hosts; do host_run "$h" test -s "$jd/report.txt" || return 1; done; }
nw_until 90 reported || { tail -n 5 "$T"/rank*.out; fail "not every host's watchdog reported"; }
grep -q 'rank 3 step 3: fault skip' "$T/rank3.out" || fail "rank 3 did not take the fault"
for p in $pids; do kill -KILL "-$p" 2>/dev/null; done
for p in $pids; do nw_wait "$p" 10; done

note "each host keeps its own ranks' files, and only those"
for h in $hosts; do
	host_run "$h" ls "$jd" > "$T/ls.$h"
	assert_eq "$(grep -c '^[^.]*\.[0-9]*\.seg$' "$T/ls.$h")" 2 "segments on $h"
	! grep '^node' "$T/ls.$h" | grep -v "^$h\." || fail "files of other hosts in $h's /dev/shm"
	# the segment header's host field: what the preload saw on that host
	host_run "$h" "$NW_CLI" status "$jd" > "$T/status.$h"
	assert_eq "$(grep -c "^$h [0-9]* [0-5] " "$T/status.$h")" 2 "ranks of $h in its own status"
	! grep '^node' "$T/status.$h" | grep -v "^$h " || fail "ranks of other hosts in $h's status"
	# after the kill: this host's writers are dead
	assert_eq "$(grep -c ' dead$' "$T/status.$h")" 2 "dead ranks on $h"
done
[ ! -e "$jd" ] || fail "the job's files are in this machine's own /dev/shm too"

note "one host alone cannot name the culprit: its files miss the other ranks"
host_run nodeA "$NW_CLI" diagnose --json "$jd" > "$T/nodeA.json" 2> "$T/nodeA.err"
python3 "$NW_ROOT/tests/corpus/judge.py" json "$T/nodeA.json" MISSING_RANK - 0-1 2-5 > "$T/nodeA.judged"
cat "$T/nodeA.judged"
grep -q '^ok ' "$T/nodeA.judged" || fail "nodeA alone: not the partial verdict (no file from ranks 2-5)"

note "gathered from every host: the exact culprit"
mkdir -p "$T/gathered"
for h in $hosts; do
	host_run "$h" tar -C "$jd" -cf - . | tar -C "$T/gathered" -xf - || fail "copying $h's files"
done
"$NW_CLI" diagnose --json "$T/gathered" > "$T/all.json" 2> "$T/all.err"
python3 "$NW_ROOT/tests/corpus/judge.py" json "$T/all.json" MISSING_RANK 3 0-2,4-5 - > "$T/all.judged"
cat "$T/all.judged"
grep -q '^ok ' "$T/all.judged" || fail "gathered: not MISSING_RANK, culprit 3"
"$NW_CLI" diagnose "$T/gathered" > "$T/all.txt" 2>&1
cat "$T/all.txt"
assert_grep 'job [^ ]+: 6 processes read, world size 6, ranks missing: none' "$T/all.txt"
assert_grep '^MISSING_RANK: rank 3 never called AllReduce #4 ' "$T/all.txt"
# every rank with its host: the status of the gathered files, here (no
# host of the job: every writer '?') and on nodeB (its own ranks: dead)
"$NW_CLI" status "$T/gathered" > "$T/status.all"
"$NW_ROOT/tests/hosts/host-enter.sh" nodeB "$NW_CLI" status "$T/gathered" > "$T/status.all.nodeB"
r=0
for h in $hosts; do
	for l in 0 1; do
		assert_grep "^$h [0-9]+ $r .* \\?\$" "$T/status.all"
		if [ "$h" = nodeB ]; then w=dead; else w='\?'; fi
		assert_grep "^$h [0-9]+ $r .* $w\$" "$T/status.all.nodeB"
		r=$((r + 1))
	done
done
if command -v pdsh > /dev/null && pdsh -R exec -w x true > /dev/null 2>&1; then
	note "the same through examples/collect/collect-pdsh.sh, after the job died"
	NCCLWATCH="$NW_CLI" PDSH_OPTS="-R exec" COLLECT_VIA="sh $HOSTS_ENTER %h" \
		"$NW_ROOT/examples/collect/collect-pdsh.sh" --job "$job" nodeA,nodeB,nodeC "$T/collected" > "$T/collect.out" 2>&1
	grep '^collect: ' "$T/collect.out"
	assert_no_grep 'no files from|damaged|incomplete' "$T/collect.out"
	"$NW_CLI" diagnose --json "$T/collected" > "$T/collected.json" 2> /dev/null
	# the same verdicts (kind, op, culprits, waiting, unknown); a host's
	# summary also knows whether its processes still ran when it was
	# written, which copied segments read elsewhere cannot tell ('?'), so
	# the evidence may say "process gone" where the segments' cannot
	python3 "$NW_ROOT/tests/corpus/judge.py" sig "$T/all.json" | grep '^verdict ' > "$T/all.sig"
	python3 "$NW_ROOT/tests/corpus/judge.py" sig "$T/collected.json" | grep '^verdict ' > "$T/collected.sig"
	[ -s "$T/all.sig" ] || fail "no verdict from the gathered segments"
	cmp -s "$T/all.sig" "$T/collected.sig" || { diff "$T/all.sig" "$T/collected.sig"; fail "collect-pdsh.sh's files give another verdict"; }
fi
echo "ok: 3 hosts x 2 ranks, post-mortem"
