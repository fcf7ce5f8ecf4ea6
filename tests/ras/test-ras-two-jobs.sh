#!/bin/sh
# Two jobs on one host, started without the preload, whose NCCL's RAS listen
# on the same port (SO_REUSEPORT, as NCCL does: one port per host, any
# job's process may answer). Job A's rank 2 and job B's rank 1 skip step
# 3's all-reduce. Job A runs under a launcher that has libnccl mapped
# itself (a Python parent that loaded it, as torchrun's agent imports
# torch) and sets no rank. `ncclwatch attach --tree` over both gives one
# verdict per job with that job's own culprit; each job's RAS report
# holds only that job's processes (a report another job's RAS gave is
# discarded, and the output says so); the launchers are no jobs.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"
. "$NW_ROOT/tests/ras/ras-lib.sh"

# job A under a launcher that maps libnccl (the simulated one: LD_LIBRARY_PATH)
nw_spawn python3 -c 'import ctypes, subprocess, sys
ctypes.CDLL("libnccl.so.2")
sys.exit(subprocess.call(sys.argv[1:]))' "$NW_TRAINER" --nranks 4 --steps 10 --count 64 --bcast-every 0 --verbose \
	--fault skip:rank=2:step=3 > "$T/a.out" 2>&1
A_PID=$NW_PID
trainer_start "$T/b.out" --nranks 4 --steps 10 --count 64 --bcast-every 0 --verbose --fault skip:rank=1:step=3
B_PID=$TRAINER_PID
wait_for_ranks 120 "$T/a.out" ' step 2 done$' 0 1 2 3
wait_for_ranks 120 "$T/b.out" ' step 2 done$' 0 1 2 3
nw_until 60 ras_answers 4 || fail "RAS never listed 4 ranks"
grep -q libnccl "/proc/$A_PID/maps" || fail "the Python launcher has no libnccl mapped (the test's premise)"

mkdir -p "$T/shm"
NCCLWATCH_DIR="$T/shm" "$NW_CLI" attach --no-python --tree $$ > "$T/attach.out" 2>&1
rc=$?
cat "$T/attach.out"
assert_eq "$rc" 1 "attach's exit status (a verdict)"
assert_eq "$(grep -c '^job ' "$T/attach.out")" 2 "jobs (two trainers; launchers are no jobs)"
assert_no_grep '^HEALTHY' "$T/attach.out"
# one verdict per job, each naming its own culprit: the job's header line,
# then its verdicts until the next job
verdicts() {   # verdicts PID: the verdict lines of the job whose ranks are children of PID
	_dir=$(ls -d "$T"/shm/*/ | while read -r d; do
		for s in "$d"*.snap.seg; do
			p=$(basename "$s" | sed 's/^[^.]*\.\([0-9]*\)\..*/\1/')
			[ "$(ps -o ppid= -p "$p" 2>/dev/null | tr -d ' ')" = "$1" ] && { echo "$d"; break; }
		done
	done | head -n 1)
	[ -n "$_dir" ] || fail "no job directory holds the ranks of $1"
	echo "$_dir"
}
a_trainer=$(pgrep -P "$A_PID" | head -n 1)
a_dir=$(verdicts "$a_trainer")
b_dir=$(verdicts "$B_PID")
[ "$a_dir" != "$b_dir" ] || fail "both jobs in one directory: $a_dir"
for j in a b; do
	if [ $j = a ]; then dir=$a_dir; want=2; parent=$a_trainer; else dir=$b_dir; want=1; parent=$B_PID; fi
	"$NW_CLI" diagnose "$dir" > "$T/$j.diag" 2>&1
	note "job $j: $(grep '^[A-Z_]*: ' "$T/$j.diag" | head -n 1)"
	assert_grep "^  culprits: $want\$" "$T/$j.diag"
	assert_eq "$(grep -c '^job ' "$T/$j.diag")" 1 "job $j: jobs in its directory"
	# its RAS report is about its own processes only
	[ -s "$dir/ras.json" ] || fail "job $j: no RAS report of its own"
	pids=$(grep -o '"pid": [0-9]*' "$dir/ras.json" | awk '{ print $2 }' | sort -u)
	assert_eq "$(echo $pids | wc -w)" 4 "job $j: processes in its RAS report"
	for p in $pids; do
		[ "$(ps -o ppid= -p "$p" | tr -d ' ')" = "$parent" ] || fail "job $j's ras.json lists pid $p of another job"
	done
done

note "job B's report among job A's snapshots: not used, and said so"
mkdir -p "$T/mixed"
cp "$a_dir"/*.snap.seg "$T/mixed/"
cp "$b_dir/ras.json" "$T/mixed/ras.json"
"$NW_CLI" diagnose "$T/mixed" > "$T/mixed.diag" 2>&1
cat "$T/mixed.diag" | grep -v '^        #'
assert_eq "$(grep -c '^job ' "$T/mixed.diag")" 1 "jobs from A's snapshots and B's report"
# without a report of its own the trainer's ranks have no rank: the culprit
# is named by its pid, job A's rank 2 (from A's own report)
a_rank2=$(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
def walk(o):
    if isinstance(o, dict):
        if o.get("rank") == 2 and "pid" in o: print(o["pid"]); sys.exit(0)
        for v in o.values(): walk(v)
    elif isinstance(o, list):
        for v in o: walk(v)
walk(r)' "$a_dir/ras.json")
[ -n "$a_rank2" ] || fail "no rank 2 in job A's report"
assert_grep "^MISSING_RANK: pid $a_rank2 on [^ ]+ is in pause < idle_forever" "$T/mixed.diag"
assert_grep "NCCL RAS report $T/mixed/ras.json not used: none of its 4 ranks is a process of this job" "$T/mixed.diag"
assert_no_grep 'never launched' "$T/mixed.diag"
kill -KILL "-$A_PID" "-$B_PID" 2>/dev/null

note "ranks that forked helpers (a data loader's workers inherit libnccl and RANK) under a launcher"
nw_spawn python3 -c 'import ctypes, os, subprocess, sys, time
procs = []
for r in range(2):
    env = dict(os.environ, RANK=str(r), WORLD_SIZE="2", LOCAL_RANK=str(r))
    procs.append(subprocess.Popen([sys.executable, "-c", """
import ctypes, os, sys, time
ctypes.CDLL("libnccl.so.2")
if os.fork() == 0:
    time.sleep(600); os._exit(0)
print("rank", os.environ["RANK"], "pid", os.getpid(), flush=True)
time.sleep(600)
"""], env=env))
ctypes.CDLL("libnccl.so.2")
time.sleep(600)' > "$T/py.out" 2>&1
PY_PID=$NW_PID
nw_until 30 eval '[ "$(grep -c "^rank " "$T/py.out")" -eq 2 ]' || { cat "$T/py.out"; fail "the ranks did not start"; }
ranks=$(awk '/^rank / { print $4 }' "$T/py.out" | sort -n | tr '\n' ' ')
"$NW_CLI" attach --no-python --no-ras --no-verdict --tree $$ -o "$T/py" > "$T/py.attach" 2>&1
cat "$T/py.attach"
assert_grep "^attach: pid $PY_PID \(python3\): a launcher of ranks" "$T/py.attach"
got=$(ls "$T/py" | sed -n 's/^[^.]*\.\([0-9]*\)\.rank[01]\.snap\.seg$/\1/p' | sort -n | tr '\n' ' ')
assert_eq "$got" "$ranks" "the processes attach took as ranks (the ranks, not their forked helpers)"
kill -KILL "-$PY_PID" 2>/dev/null
