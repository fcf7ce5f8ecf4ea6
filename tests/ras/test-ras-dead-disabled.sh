#!/bin/sh
# A crashed rank is "considered dead" once RAS's peer-dead timeout passed
# (60 s x NCCL_RAS_TIMEOUT_FACTOR in NCCL; NCCLSIM_RAS_DEAD_MS=0 shortens it
# for this test only): the JSON says considered_dead, the text format's DEAD
# section lists it, diagnose names it. Then with NCCL_RAS_ENABLE=0 nothing
# listens: `ncclwatch ras` says so in one line and exits 2.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"
. "$NW_ROOT/tests/ras/ras-lib.sh"

NCCLSIM_RAS_DEAD_MS=0 trainer_start "$T/out" --nranks 4 --steps 24 --count 64 --bcast-every 0 --verbose --fault crash:rank=3:step=4
wait_for_ranks 120 "$T/out" ' step 3 done$' 0 1 2
dead() { "$NW_CLI" ras --json | grep -q '"considered_dead": true'; }
nw_until 60 dead || fail "the crashed rank never showed as dead"
"$NW_CLI" ras --save "$T/saved.json" > "$T/ras.out" || fail "ncclwatch ras failed"
cat "$T/ras.out"
assert_grep '^  missing rank 3: pid [0-9]+ on 127\.0\.0\.1: considered dead$' "$T/ras.out"
assert_grep '^  ranks 0-2: RUNNING AllReduce launches=5$' "$T/ras.out"
raw close 'STATUS\n' > "$T/text.out"
assert_grep '^DEAD$' "$T/text.out"
assert_grep '^  1 job process is considered dead \(unreachable via the RAS network\)$' "$T/text.out"
assert_grep '^#0-0 \([0-9a-f]{16}\) INCOMPLETE$' "$T/text.out"
assert_grep '^  Missing communicator data from 1 rank$' "$T/text.out"
assert_grep '^    0         1         1         3         4         3   RUNNING  INCOMPLETE$' "$T/text.out"
"$NW_CLI" diagnose "$T/saved.json" > "$T/diag.out"
cat "$T/diag.out"
assert_grep '^MISSING_RANK: rank 3: process gone or unreachable' "$T/diag.out"
assert_grep 'considered dead by RAS' "$T/diag.out"
assert_grep '^  culprits: 3$' "$T/diag.out"
assert_grep '^  waiting: 0-2$' "$T/diag.out"
trainer_kill

note "NCCL_RAS_ENABLE=0"
NCCL_RAS_ENABLE=0 trainer_start "$T/out2" --nranks 2 --steps 1000000 --count 64 --bcast-every 0 --verbose
wait_for_ranks 120 "$T/out2" ' step 3 done$' 0 1
assert_eq "$(listeners)" 0 "listeners with NCCL_RAS_ENABLE=0"
"$NW_CLI" ras > "$T/off.out" 2> "$T/off.err"; rc=$?
cat "$T/off.err"
assert_eq "$rc" 2 "exit status when no RAS answers"
assert_eq "$(wc -l < "$T/off.err")" 1 "lines on stderr"
assert_grep "^ncclwatch ras: no RAS answers at 127\.0\.0\.1:$RAS_PORT: connection refused" "$T/off.err"
assert_eq "$(wc -c < "$T/off.out")" 0 "stdout"
"$NW_CLI" ras --pid "$(rank_pids | head -n 1)" > "$T/off2.out" 2> "$T/off2.err"; rc=$?
cat "$T/off2.err"
assert_eq "$rc:$(wc -l < "$T/off2.err")" "2:1" "--pid of a process with RAS off: exit status and lines"
assert_grep '^ncclwatch ras: RAS off in every process \(NCCL_RAS_ENABLE not 1\): stacks alone$' "$T/off2.err"
trainer_kill
