#!/bin/sh
# Dump requests between hosts. Two ranks of one job started by hand as
# torchrun would (RANK, WORLD_SIZE, LOCAL_RANK, a shared --rendezvous
# directory, one NCCLWATCH_JOB), each with its own NCCLWATCH_DIR as on two
# hosts (two job directories: two control files that cannot see each
# other) and one shared NCCLWATCH_DUMP_DIR. --fault skip:rank=1:step=5:
# rank 1 idles, rank 0 hangs in all-reduce #6 and reports it, writing its
# dump and the request file into the shared directory; rank 1 sees the
# request there (checked about once a second) and writes its dump there
# too. Both dumps land in the shared directory, none in the job dirs.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/watchdog/watchdog-lib.sh"

shared="$T/dumps"
mkdir -p "$T/rendezvous"
for r in 0 1; do
	nw_spawn env LD_PRELOAD="$(nw_preload)" RANK=$r WORLD_SIZE=2 LOCAL_RANK=0 NCCLWATCH_JOB=xhost \
		NCCLWATCH_DIR="$T/host$r" NCCLWATCH_DUMP_DIR="$shared" \
		"$NW_TRAINER" --rendezvous "$T/rendezvous" --steps 10 --bcast-every 0 --fault skip:rank=1:step=5 \
		> "$T/rank$r.out" 2>&1
	eval "pid$r=\$NW_PID"
done

note "rank 0 reports all-reduce #6 STARTED; its dump goes to the shared directory"
wait_for_line $WD_WAIT 'ncclwatch: stall: ' "$T/rank0.out"
cat "$T/rank0.out"
assert_findings "$T/rank0.out" STARTED AllReduce 6 0
line=$(rank_stalls 0 "$T/rank0.out")
assert_eq "$(finding_value pid "$line")" "$pid0" "rank 0's pid"
dump0=$(dump_of "$line")
case "$dump0" in "$shared/"*".$pid0.rank0.dump.seg") ;; *) fail "rank 0's dump is not in $shared: $dump0" ;; esac
[ -f "$shared/request" ] || fail "no request file in $shared"
cat "$shared/request"
grep -Eq "^[0-9]+ [^ ]+ $pid0 0\$" "$shared/request" || fail "the request file does not name rank 0"

note "rank 1 (another 'host') serves it through the request file within a few seconds"
wait_for_line 10 "ncclwatch: dump requested by rank=0 pid=$pid0 host=[^ ]+: rank=1 pid=$pid1 wrote " "$T/rank1.out"
cat "$T/rank1.out"
assert_no_grep 'ncclwatch: stall' "$T/rank1.out"
served=$(grep 'ncclwatch: dump requested by ' "$T/rank1.out" | head -n 1)
dump1=$(dump_of "$served")
case "$dump1" in "$shared/"*".$pid1.rank1.dump.seg") ;; *) fail "rank 1's dump is not in $shared: $dump1" ;; esac
[ -f "$dump1" ] || fail "$dump1 does not exist"
show "$dump1" > "$T/dump1.show"
assert_grep '^  rank +1$' "$T/dump1.show"
assert_grep '^  op .* AllReduce .* seq=5 .* state=COMPLETED ' "$T/dump1.show"
main_stack "$T/dump1.show" "$pid1" > "$T/stack1"
assert_grep ' idle_forever[.a-z0-9]*\+0x' "$T/stack1"
note "the job directories hold the live segments and their control files only"
for r in 0 1; do
	assert_eq "$(find "$T/host$r" -name '*.dump.seg' | grep -c .)" 0 "dumps in host $r's job directory"
	[ -f "$T/host$r/xhost/control" ] || fail "no control file for host $r"
done
wd_check_outputs
