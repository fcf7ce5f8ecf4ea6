#!/bin/sh
# examples/collect/collect-pdsh.sh on namespaced hosts (tests/hosts/
# hosts-lib.sh), live: a training job of two hosts x four ranks with a
# send/receive ring hangs because rank 5 (node2) sends to the wrong peer;
# while it hangs, Debian's pdsh (exec module, entering each host's
# namespaces) runs collect-host.sh on node1, node2 and node3 (a host of the
# list that has no files of the job), the files come back through pdsh's
# stdout into one directory here, and diagnose names rank 5. The '?' and
# alive marks of `status` on the gathered files: '?' for every host but
# the one it runs on.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/hosts/hosts-lib.sh"
command -v pdsh > /dev/null || skip "pdsh is not installed (make deps)"
pdsh -R exec -w x true > /dev/null 2>&1 || skip "pdsh has no exec module"
nw_use_sim
hosts_up node1 node2 node3
unset NCCLWATCH_DIR
job="hosts-pdsh-$$"
export NCCLWATCH_JOB="$job" NCCLWATCH_TIMEOUT=2 NCCLWATCH_KEEP=1
jd=/dev/shm/ncclwatch-$(id -u)/$job
mkdir -p "$T/rdv"
r=0 pids=
for h in node1 node2; do
	for l in 0 1 2 3; do
		LD_PRELOAD="$(nw_preload)" RANK=$r WORLD_SIZE=8 LOCAL_RANK=$l host_spawn "$h" \
			"$NW_TRAINER" --rendezvous "$T/rdv" --steps 10 --count 50 --bcast-every 0 --pipeline --verbose \
			--fault p2p:rank=5:step=3 > "$T/rank$r.out" 2>&1
		pids="$pids $NW_PID"
		r=$((r + 1))
	done
done
reported() { for h in node1 node2; do host_run "$h" test -s "$jd/report.txt" || return 1; done; }
nw_until 90 reported || { tail -n 5 "$T"/rank*.out; fail "not every host's watchdog reported"; }
grep -q 'fault p2p: sending to rank 7' "$T/rank5.out" || fail "rank 5 did not take the fault"

note "each host's own status: its four ranks, alive, under its own name"
for h in node1 node2; do
	host_run "$h" "$NW_CLI" status "$jd" > "$T/own.$h"
	assert_eq "$(grep -c "^$h [0-9]* [0-7] .* alive\$" "$T/own.$h")" 4 "live ranks in $h's own status"
	assert_eq "$(grep -c '^node' "$T/own.$h")" 4 "ranks in $h's own status"
done

note "collect-pdsh.sh while the job hangs"
export NCCLWATCH="$NW_CLI" PDSH_OPTS="-R exec" COLLECT_VIA="sh $HOSTS_ENTER %h"
out="$T/collected"
"$NW_ROOT/examples/collect/collect-pdsh.sh" --job "$job" 'node[1-3]' "$out" > "$T/collect.out" 2>&1
echo "collect-pdsh.sh exited $?"
cat "$T/collect.out"
for p in $pids; do kill -0 "$p" || fail "rank process $p ended during the collection"; done
assert_grep '^collect: node1: [0-9]+ files in ' "$T/collect.out"
assert_grep '^collect: node2: [0-9]+ files in ' "$T/collect.out"
# node3 has no such job: said, and the verdict is made from the others
assert_grep "node3: no job directory '$job' in /dev/shm/ncclwatch-" "$T/collect.out"
assert_grep '^collect: no files from: node3$' "$T/collect.out"
assert_grep '^P2P_UNMATCHED: ' "$T/collect.out"
# what each host sent: its own files, named after it
for h in node1 node2; do
	if "$NW_CLI" summary --help > /dev/null 2>&1; then
		[ -s "$out/$h/$job/$h.nwsum" ] || fail "no summary from $h"
	else
		assert_eq "$(ls "$out/$h/$job" | grep -c "^$h\.[0-9]*\.seg$")" 4 "segments from $h"
	fi
	! ls "$out/$h/$job" | grep -v "^$h\." || fail "$h sent files of another host"
done
[ ! -e "$out/node3" ] || fail "a directory for node3, which sent nothing"

"$NW_CLI" diagnose --json "$out" > "$T/all.json" 2> "$T/all.err"
python3 "$NW_ROOT/tests/corpus/judge.py" json "$T/all.json" P2P_UNMATCHED 5 0-4,6-7 - > "$T/all.judged"
cat "$T/all.judged"
grep -q '^ok ' "$T/all.judged" || fail "collected live: not P2P_UNMATCHED with culprit 5"

if "$NW_CLI" summary --help > /dev/null 2>&1; then
	note "status of the collected summaries: alive, as each host saw its processes when it wrote its summary"
	"$NW_CLI" status "$out" > "$T/status.here"
	cat "$T/status.here"
	for r in 0 1 2 3 4 5 6 7; do
		if [ $r -lt 4 ]; then h=node1; else h=node2; fi
		assert_grep "^$h [0-9]+ $r .* alive\$" "$T/status.here"
	done
else
	note "status of the collected files: alive on its own host, '?' elsewhere"
	"$NW_CLI" status "$out" > "$T/status.here"
	host_run node1 "$NW_CLI" status "$out" > "$T/status.node1"
	cat "$T/status.node1"
	for r in 0 1 2 3 4 5 6 7; do
		if [ $r -lt 4 ]; then h=node1; else h=node2; fi
		assert_grep "^$h [0-9]+ $r .* \\?\$" "$T/status.here"
		if [ $h = node1 ]; then w=alive; else w='\?'; fi
		assert_grep "^$h [0-9]+ $r .* $w\$" "$T/status.node1"
	done
fi
echo "ok: collected live from 2 of 3 hosts through pdsh"
