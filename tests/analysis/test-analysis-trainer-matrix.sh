#!/bin/sh
# The faults test-analysis-trainer-faults.sh does not cover, on 8 ranks of
# the trainer under the preload (NCCLWATCH_TIMEOUT=2, NCCLWATCH_KEEP=1).
# For each: `ncclwatch diagnose` on the live job dir (exit 1), then again
# on the files left after the job's process group was SIGKILLed, and the
# watchdog's own verdict (its last one on stderr, and report.txt in the
# job dir) all give the same first verdict: kind, op, culprits, waiting.
# The jobs run at the same time (a hung job costs no CPU), each in its own
# job dir; all waits are bounded.
#
#   count     --fault count:rank=3:step=5 --count 32768: rank 3's
#             AllReduce #6 has half the count (64 KiB, one chunk of the
#             simulation, against two): rank 3 completes it (wrong result:
#             it exits with code 3), the others wait forever for the second
#             chunk. MISMATCH, culprit 3, waiting 0-2,4-7.
#   count-small  the same with --count 64: every rank needs one chunk, all
#             complete with wrong results and exit 3, nothing hangs. The
#             watchdog says nothing (no stall, no report.txt); the files
#             left still say MISMATCH, culprit 3, nobody waiting.
#   dtype     --fault dtype:rank=6:step=8 --count 32768: rank 6's
#             AllReduce #9 is float16 (half the bytes): as for count.
#             MISMATCH (datatype), culprit 6, waiting 0-5,7.
#   sleep     --fault sleep:rank=2:step=10:ms=600000: rank 2 sleeps (far
#             longer than this test) before AllReduce #11, the others wait
#             in it. MISSING_RANK, culprit 2, its evidence: idle, and its
#             main thread in nanosleep.
#   exit      --fault exit:rank=7:step=3: rank 7 leaves with exit code 0
#             before AllReduce #4. MISSING_RANK, culprit 7, its evidence
#             says it exited.
#   initstall NCCLSIM_FAULT=initstall:rank=4: rank 4 blocks inside
#             ncclCommInitRank before it joins the rendezvous, so nobody's
#             init of the world comm completes. Every rank ENTERED the init
#             (rank 4 too: the preload records the call before the
#             simulation blocks in it), so per DESIGN.md ("the ranks that
#             never entered, else the comm") INIT_STALL blames the comm:
#             culprits "-", waiting 0-7.
#   slow      NCCLSIM_FAULT=slow:rank=1:ms=600000: every op of rank 1
#             sleeps 10 min before it moves data. TRANSPORT_STALL on
#             AllReduce #1, culprits "-" (the comm), waiting 0-7, and not
#             STREAM_BLOCKED: the simulation sleeps inside the op's own
#             work item, after the op's start event was recorded on the
#             stream, so rank 1's AllReduce #1 is STARTED like everybody's.
#             DESIGN.md's signatures: STREAM_BLOCKED is "enqueued but not
#             started" (earlier work holds the stream), TRANSPORT_STALL is
#             "every rank of C started #n, none completed" -- exactly what
#             the records show (report/decide/verdicts_coll.c:
#             comm_frontier needs cnt[M_STARTED] == n; STREAM_BLOCKED
#             candidates are M_ENQUEUED only). A kernel that is slow on one
#             rank looks, from outside, like a stuck transfer: nothing
#             recorded names rank 1, so blaming a rank would be a guess.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/cli/cli-lib.sh"
need_engine
NCCLWATCH_TIMEOUT=2
export NCCLWATCH_TIMEOUT
. "$NW_ROOT/tests/watchdog/watchdog-lib.sh"
export NCCLWATCH_KEEP=1
MX_WAIT=40            # a final verdict comes within ~5 s; generous bound
COMM_CULPRIT='- (the communicator or its link, not a rank)'

# mx_start NAME FAULT ARGS...: the 8-rank trainer as job NAME (NCCLSIM_FAULT
# FAULT unless empty), output in $T/NAME.out; its pid in PID_NAME.
mx_start() {
	_n=$1 _f=$2; shift 2
	nw_spawn env LD_PRELOAD="$(nw_preload)" NCCLWATCH_JOB="$_n" ${_f:+"NCCLSIM_FAULT=$_f"} \
		"$NW_TRAINER" --nranks 8 "$@" > "$T/$_n.out" 2>&1
	eval "PID_$(echo "$_n" | tr - _)=\$NW_PID"
}
mx_pid() { eval "echo \$PID_$(echo "$1" | tr - _)"; }

# first_verdict TEXT: the first verdict of a text diagnosis (of its last
# "job" block) as "kind K", "op ...", "culprits ...", "waiting ...",
# "unknown ...", "verdicts N" lines ("-" for a set not printed).
first_verdict() {
	awk '
		/^job / { n = 0; k = op = cul = ""; wai = unk = "-"; inb = 0; next }
		/^[A-Z][A-Z_\/]+: / { n++; inb = (n == 1); if (inb) { k = $0; sub(/: .*/, "", k) }; next }
		/^[^ ]/ { inb = 0; next }
		inb && /^  op: /       { op = substr($0, 7) }
		inb && /^  culprits: / { cul = substr($0, 13) }
		inb && /^  waiting: /  { wai = substr($0, 12) }
		inb && /^  unknown: /  { unk = substr($0, 12) }
		END { printf "kind %s\nop %s\nculprits %s\nwaiting %s\nunknown %s\nverdicts %d\n", k, op, cul, wai, unk, n }
	' "$1"
}

# wd_text OUT REPORT: the watchdog's last verdict text on stderr (its lines
# without the prefix, without the stall and dump lines of other ranks that
# interleave) into REPORT.
wd_text() {
	sed -n 's/^ncclwatch: //p' "$1" | grep -Ev '^(stall: |stall cleared: |dump requested by )' |
		awk '/^job / { b = "" } { b = b $0 "\n" } END { printf "%s", b }' > "$2"
}

# check_first SRC TEXT KIND OP CULPRITS WAITING: TEXT's first verdict is the
# expected one, and the only one.
check_first() {
	first_verdict "$2" > "$2.first"
	_k=$(sed -n 's/^kind //p' "$2.first")
	_o=$(sed -n 's/^op //p' "$2.first")
	_c=$(sed -n 's/^culprits //p' "$2.first")
	_w=$(sed -n 's/^waiting //p' "$2.first")
	{ [ "$_k" = "$3" ] && echo "$_o" | grep -Eqx "$4 on comm [0-9a-f]{16} \(8 ranks\)" &&
	  [ "$_c" = "$5" ] && [ "$_w" = "$6" ] && grep -qx 'verdicts 1' "$2.first" &&
	  grep -qx 'unknown -' "$2.first"; } || {
		sed 's/^/    | /' "$2" | head -n 30 >&2
		sed 's/^/    got: /' "$2.first" >&2
		fail "$1: expected $3, op $4, culprits $5, waiting $6 (one verdict)"
	}
}

# wd_final NAME KIND WAITING: report.txt in the job dir has the expected
# kind and waiting set (the watchdog prints again while the set grows).
wd_final() {
	[ -f "$NCCLWATCH_DIR/$1/report.txt" ] || return 1
	first_verdict "$NCCLWATCH_DIR/$1/report.txt" > "$T/$1.poll"
	grep -qx "kind $2" "$T/$1.poll" && grep -qx "waiting $3" "$T/$1.poll"
}

# The cases: NAME HANGS KIND OP CULPRITS WAITING (ARGS below).
CASES="count dtype sleep exit initstall slow count-small"
set_case() {
	case $1 in
	count)       HANGS=1 KIND=MISMATCH     OP='AllReduce #6'  CUL=3 WAIT=0-2,4-7 ;;
	dtype)       HANGS=1 KIND=MISMATCH     OP='AllReduce #9'  CUL=6 WAIT=0-5,7 ;;
	sleep)       HANGS=1 KIND=MISSING_RANK OP='AllReduce #11' CUL=2 WAIT=0-1,3-7 ;;
	exit)        HANGS=1 KIND=MISSING_RANK OP='AllReduce #4'  CUL=7 WAIT=0-6 ;;
	initstall)   HANGS=1 KIND=INIT_STALL   OP='CommInit'      CUL=$COMM_CULPRIT WAIT=0-7 ;;
	slow)        HANGS=1 KIND=TRANSPORT_STALL OP='AllReduce #1' CUL=$COMM_CULPRIT WAIT=0-7 ;;
	count-small) HANGS=0 KIND=MISMATCH     OP='AllReduce #6'  CUL=3 WAIT=- ;;
	esac
}

# The evidence each diagnosis (live and post mortem) must also show.
check_details() {
	_t=$2
	case $1 in
	count|count-small)
		[ "$1" = count ] && _n=32768 || _n=64
		assert_grep "^MISMATCH: rank 3 called AllReduce #6 on comm [0-9a-f]{16} \(8 ranks\) with count $((_n / 2)) where ranks 0-2,4-7 used count $_n" "$_t"
		assert_grep "^    rank 3: AllReduce count $((_n / 2)) float32 sum \(differs in count\), COMPLETED$" "$_t" ;;
	dtype)
		assert_grep '^MISMATCH: rank 6 called AllReduce #9 on comm [0-9a-f]{16} \(8 ranks\) with datatype float16 \(2 bytes\) where ranks 0-5,7 used float32 \(4 bytes\); they wait in it$' "$_t"
		assert_grep '^    ranks 0-5,7: AllReduce count 32768 float32 sum \(majority\), STARTED$' "$_t" ;;
	sleep)
		assert_grep '^MISSING_RANK: rank 2 never called AllReduce #11 on comm [0-9a-f]{16} \(8 ranks\); ranks 0-1,3-7 wait in it$' "$_t"
		assert_grep '^    rank 2: never called it \(coll_enqueued 10\); .*idle: no NCCL call for .*main thread: .*nanosleep' "$_t" ;;
	exit)
		assert_grep '^MISSING_RANK: rank 7 never called AllReduce #4 on comm [0-9a-f]{16} \(8 ranks\); ranks 0-6 wait in it$' "$_t"
		assert_grep '^    rank 7: never called it \(coll_enqueued 3\); .*; exited with status 0$' "$_t" ;;
	initstall)
		assert_grep '^INIT_STALL: ranks 0-7 are inside ncclCommInitRank of comm [0-9a-f]{16} \(8 ranks\) for .*; every rank entered it and none finished' "$_t" ;;
	slow)
		assert_grep '^TRANSPORT_STALL: every rank of comm [0-9a-f]{16} \(8 ranks\) started AllReduce #1 and none completed it in ' "$_t"
		assert_grep '^    ranks 0-7: STARTED for .*, not completed$' "$_t" ;;
	esac
}

t0=$(date +%s)
note "starting the jobs"
mx_start count       ''                          --steps 30 --count 32768 --bcast-every 0 --fault count:rank=3:step=5
mx_start dtype       ''                          --steps 30 --count 32768 --bcast-every 0 --fault dtype:rank=6:step=8
mx_start sleep       ''                          --steps 30 --count 64 --bcast-every 0 --fault sleep:rank=2:step=10:ms=600000
mx_start exit        ''                          --steps 30 --count 64 --bcast-every 0 --fault exit:rank=7:step=3
mx_start initstall   initstall:rank=4            --steps 30 --count 64 --bcast-every 0
mx_start slow        slow:rank=1:ms=600000       --steps 30 --count 64 --bcast-every 0
mx_start count-small ''                          --steps 30 --count 64 --bcast-every 0 --fault count:rank=3:step=5

note "count-small: the job ends by itself (exit 3: wrong results)"
nw_wait "$(mx_pid count-small)" $MX_WAIT
st=$?
[ $st = 3 ] || { cat "$T/count-small.out" >&2; fail "count-small: the job's status $st, expected 3"; }

note "waiting for the watchdogs' final verdicts"
for c in $CASES; do
	set_case $c
	[ $HANGS = 1 ] || continue
	nw_until $MX_WAIT wd_final $c $KIND $WAIT || {
		tail -n 40 "$T/$c.out" >&2
		fail "$c: the watchdog did not report $KIND with waiting $WAIT within $MX_WAIT s"
	}
	kill -0 "$(mx_pid $c)" 2>/dev/null || fail "$c: the job ended instead of hanging"
	# the sleeper's stack (its evidence) is in the dump a peer asks of it
	[ $c != sleep ] || wait_for_count $MX_WAIT 1 '^ncclwatch: dump requested by .*: rank=2 ' "$T/$c.out"
	note "$c: watchdog verdict after $(( $(date +%s) - t0 )) s"
done

note "(a) live diagnoses"
for c in $CASES; do
	set_case $c
	cli_ok 1 "$T/$c.live" diagnose "$NCCLWATCH_DIR/$c"
	check_first "$c live" "$T/$c.live" "$KIND" "$OP" "$CUL" "$WAIT"
	check_details $c "$T/$c.live"
	sed -n '2,/^environment/p' "$T/$c.live" | sed '$d' | sed "s/^/    $c live: /"
done

# The files left carry each process's last heartbeat (up to a poll old).
sleep 1
note "(b) after SIGKILL of each job's process group"
ranks=
for c in $CASES; do
	TRAINER_PID=$(mx_pid $c)
	ranks="$ranks $(rank_pids)"
	trainer_kill
done
for r in $ranks; do
	nw_until 20 sh -c "! kill -0 $r" || fail "rank pid $r still exists (a zombie?)"
done
for c in $CASES; do
	set_case $c
	cli_ok 1 "$T/$c.dead" diagnose "$NCCLWATCH_DIR/$c"
	check_first "$c post mortem" "$T/$c.dead" "$KIND" "$OP" "$CUL" "$WAIT"
	check_details $c "$T/$c.dead"
	cmp -s "$T/$c.live.first" "$T/$c.dead.first" || {
		diff "$T/$c.live.first" "$T/$c.dead.first" >&2
		fail "$c: the first verdict changed after the kill"
	}
	cli_ok 1 "$T/$c.json" diagnose --json "$NCCLWATCH_DIR/$c"
	python3 - "$T/$c.json" "$KIND" "$OP" "$CUL" "$WAIT" <<'PY' || fail "$c: JSON verdict"
import json, sys
doc, kind, op, cul, wai = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
op, _, seq = op.partition(" #")
def ranks(s):
    out = []
    if s.startswith("-"):
        return out
    for part in s.split(","):
        a, _, b = part.partition("-")
        out += range(int(a), int(b or a) + 1)
    return out
assert doc["worst"] == kind, doc["worst"]
[job] = doc["jobs"]
[v] = job["verdicts"]
assert (v["kind"], v["op"], v["seq"], v["comm_nranks"]) == (kind, op, int(seq) if seq else None, 8), v
assert v["culprits"] == ranks(cul), (v["culprits"], cul)
assert v["waiting"] == ranks(wai), (v["waiting"], wai)
assert v["unknown"] == [], v["unknown"]
assert sorted(p["rank"] for p in job["processes"]) == list(range(8)), job["processes"]
assert not any(p["alive"] for p in job["processes"]), "a process still alive"
PY
	note "$c post mortem: $(sed -n 2p "$T/$c.dead" | cut -c1-100)..."
done

note "(c) the watchdog's own verdict: stderr and report.txt"
for c in $CASES; do
	set_case $c
	if [ $HANGS = 0 ]; then
		assert_no_grep 'ncclwatch:' "$T/$c.out"
		[ ! -e "$NCCLWATCH_DIR/$c/report.txt" ] || fail "$c: report.txt of a job that did not hang"
		continue
	fi
	cp "$NCCLWATCH_DIR/$c/report.txt" "$T/$c.report"
	check_first "$c report.txt" "$T/$c.report" "$KIND" "$OP" "$CUL" "$WAIT"
	wd_text "$T/$c.out" "$T/$c.stderr"
	check_first "$c stderr" "$T/$c.stderr" "$KIND" "$OP" "$CUL" "$WAIT"
	for f in report stderr; do
		cmp -s "$T/$c.live.first" "$T/$c.$f.first" || {
			diff "$T/$c.live.first" "$T/$c.$f.first" >&2
			fail "$c: the watchdog's verdict ($f) is not diagnose's"
		}
	done
	# one verdict text: stderr's last block is report.txt, line for line
	cmp -s "$T/$c.report" "$T/$c.stderr" || {
		diff "$T/$c.report" "$T/$c.stderr" >&2
		fail "$c: the watchdog's last verdict on stderr differs from report.txt"
	}
	note "$c watchdog: $(grep -c 'ncclwatch: [A-Z][A-Z_]*: ' "$T/$c.out") verdict headline(s) printed, last: $(sed -n 's/^kind //p' "$T/$c.stderr.first")"
done
note "done in $(( $(date +%s) - t0 )) s"
wd_check_outputs
