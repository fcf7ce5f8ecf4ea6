#!/bin/sh
# ncclwatch show on a valid segment prints exactly what was written: every
# header field, each communicator and peer, and the records oldest first.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/report/report-lib.sh"

"$NW_MKSEG" --comms 2 --peers 2 --records 6 "$T/a.seg" || fail "mkseg"
show_ok "$T/out" "$T/a.seg"
o="$T/out"
assert_grep "^segment $T/a.seg\$" "$o"
assert_grep '^  format +1\.0$' "$o"
assert_grep '^  host +testhost$' "$o"
assert_grep '^  pid +4242$' "$o"
assert_grep '^  ppid +4200$' "$o"
assert_grep '^  uid +1000$' "$o"
assert_grep '^  rank +1$' "$o"
assert_grep '^  local_rank +1$' "$o"
assert_grep '^  world_size +4$' "$o"
assert_grep '^  job +job-7$' "$o"
assert_grep '^  start +2023-11-14T22:13:20\.123456789Z$' "$o"
assert_grep '^  start_ticks +-$' "$o"
assert_grep '^  flags +recording$' "$o"
assert_grep '^  nccl +2\.28\.9$' "$o"
assert_grep '^  nccl_lib +/opt/nccl/libnccl\.so\.2$' "$o"
assert_grep '^  cuda_driver +13\.0$' "$o"
assert_grep '^  gpu +Simulated GPU$' "$o"
assert_grep '^  env +NCCL_DEBUG=INFO$' "$o"
assert_grep '^  env +CUDA_VISIBLE_DEVICES=0,1$' "$o"
assert_eq "$(grep -c '^  env ' "$o")" 2 "env lines"
assert_grep '^  heartbeat +\+2\.000000$' "$o"
assert_grep '^  stopped +no$' "$o"
# A 1.0 file: the 1.1 fields read as zero, no stack area.
assert_grep '^  tracking +none$' "$o"
assert_grep '^  watchdog_tid +-$' "$o"
assert_grep '^  poll_ms +0$' "$o"
assert_grep '^  timeout_ms +0$' "$o"
assert_grep '^  counters +events_created=0 event_records=0 ops_tracked=0 findings=0 dumps=0 request_served=0$' "$o"
assert_grep '^  last_finding +-$' "$o"
assert_grep '^stacks none$' "$o"
assert_no_grep '^    at ' "$o"

assert_grep '^comms count=2 capacity=4$' "$o"
assert_grep '^  comm 0 id=abcdef0000000001 origin=InitRank rank=1/4 state=INIT_DONE device=0 init_result=ncclSuccess coll_enqueued=10 coll_started=9 coll_completed=8 p2p_enqueued=3 p2p_completed=2 async_error=ncclSuccess parent=0000000000000000 .* bus_id=0000:10:00\.0 name=comm0$' "$o"
assert_grep '^  comm 1 id=abcdef0000000002 origin=Split rank=1/4 state=INIT_DONE device=1 .*coll_enqueued=11 .*parent=abcdef0000000001 color=1 key=1 .*name=comm1$' "$o"
assert_grep '^peers count=2 capacity=8$' "$o"
assert_grep '^  peer 0 comm=0 id=abcdef0000000001 peer=2 send_enqueued=5 send_completed=4 recv_enqueued=3 recv_completed=2$' "$o"
assert_grep '^  peer 1 comm=1 id=abcdef0000000002 peer=3 send_enqueued=6 ' "$o"

assert_grep '^records shown=6 valid=6 torn=0 overwritten=0 unpublished=0 head=6 capacity=16$' "$o"
assert_grep '^  op 0 t=\+0\.001000 tid=5000 AllReduce comm=abcdef0000000001 rank=1/4 seq=1 count=1000 dtype=float32 redop=sum root=- group=0 depth=0 state=COMPLETED result=ncclSuccess cuda_error=0 flags=- started=\+0\.001100 ended=\+0\.001200 stream=0x1000 caller=0x400000$' "$o"
assert_grep '^  op 4 t=\+0\.005000 tid=5001 Send comm=abcdef0000000001 rank=1/4 seq=5 count=1004 dtype=float32 redop=- peer=1 ' "$o"
# Oldest first, every ticket once.
assert_eq "$(sed -n 's/^  op \([0-9]*\) .*/\1/p' "$o" | tr '\n' ' ')" "0 1 2 3 4 5 " "tickets in order"

# --records N: only the newest N.
show_ok "$T/out2" --records 2 "$T/a.seg"
assert_eq "$(sed -n 's/^  op \([0-9]*\) .*/\1/p' "$T/out2" | tr '\n' ' ')" "4 5 " "--records 2"
assert_grep '^records shown=2 valid=6 ' "$T/out2"
show_ok "$T/out3" --records 0 "$T/a.seg"
assert_no_grep '^  op ' "$T/out3"

# Recording stopped: the flag and the reason.
"$NW_MKSEG" --stopped "cannot grow the ring" "$T/stopped.seg" || fail "mkseg"
show_ok "$T/out4" "$T/stopped.seg"
assert_grep '^  flags +recording,stopped$' "$T/out4"
assert_grep '^  stopped +yes: cannot grow the ring$' "$T/out4"

# Control bytes in strings are escaped: a comm is always one line.
"$NW_MKSEG" --comm-name "$(printf 'two\nlines\\')" "$T/esc.seg" || fail "mkseg"
show_ok "$T/out6" "$T/esc.seg"
assert_grep '^  comm 0 .* name=two\\x0alines\\\\$' "$T/out6"
assert_eq "$(grep -c '^  comm ' "$T/out6")" 2 "comm lines"

# A newer minor (larger header and records) is read through its known prefix.
"$NW_MKSEG" --newer-minor --records 6 "$T/minor.seg" || fail "mkseg"
show_ok "$T/out5" "$T/minor.seg"
seg_minor=$(sed -n 's/^#define NW_SEG_VERSION_MINOR \([0-9]*\).*/\1/p' "$NW_ROOT/include/ncclwatch/segment.h")
assert_grep "^  format +2\\.$((seg_minor + 1))\$" "$T/out5"
assert_grep '^  tracking +events$' "$T/out5"
assert_grep '^  comm 1 id=abcdef0000000002 origin=Split ' "$T/out5"
assert_grep '^  peer 1 comm=1 id=abcdef0000000002 peer=3 ' "$T/out5"
assert_grep '^  op 5 t=\+0\.006000 tid=5002 AllReduce comm=abcdef0000000002 rank=1/4 seq=6 count=1005 ' "$T/out5"

# A 1.0 file whose reserved tail is not zero: the 1.1 fields still read as
# zero (the bytes are not theirs); an opaque 1.0 stack area is not read.
"$NW_MKSEG" --reserved-junk --stack 4096 "$T/junk.seg" || fail "mkseg"
show_ok "$T/out7" "$T/junk.seg"
assert_grep '^  format +1\.0$' "$T/out7"
assert_grep '^  start_ticks +-$' "$T/out7"
assert_grep '^  tracking +none$' "$T/out7"
assert_grep '^  counters +events_created=0 event_records=0 ops_tracked=0 findings=0 dumps=0 request_served=0$' "$T/out7"
assert_grep '^stacks none$' "$T/out7"
assert_grep '^  comms_dropped +0$' "$T/out7"

# A 1.1 file whose reserved tail is not zero: the 2.0 fields read as zero,
# and its comms and ops have no generation.
"$NW_MKSEG" --v11 --reserved-junk "$T/junk11.seg" || fail "mkseg"
show_ok "$T/out7b" "$T/junk11.seg"
assert_grep '^  format +1\.1$' "$T/out7b"
assert_grep '^  comms_dropped +0$' "$T/out7b"
assert_grep '^  threads_dropped +0$' "$T/out7b"
assert_grep '^  comm_reuses +0$' "$T/out7b"
assert_eq "$(grep -c '^  comm [0-9] .* gen=0 ' "$T/out7b")" 2 "comms of generation 0"

# A 2.0 file.
"$NW_MKSEG" --v2 --records 4 "$T/v2.seg" || fail "mkseg"
show_ok "$T/out7c" "$T/v2.seg"
assert_grep '^  format +2\.0$' "$T/out7c"
assert_grep '^  peer 1 comm=1 id=abcdef0000000002 peer=3 ' "$T/out7c"
assert_grep '^  op 3 t=\+0\.004000 tid=5000 AllReduce comm=abcdef0000000002 rank=1/4 seq=4 count=1003 ' "$T/out7c"
# A slot being given to a new comm (gen WRITING) is neither comm: it reads
# FREE, all zero but its generation; its old comm's ops keep their comm id,
# and its peer entry names no comm.
"$NW_MKSEG" --v2 --records 4 --comm-writing 1 "$T/v2w.seg" || fail "mkseg"
show_ok "$T/out7d" "$T/v2w.seg"
assert_grep '^  comm 1 id=0000000000000000 origin=[^ ]+ rank=0/0 state=FREE .* gen=1 ' "$T/out7d"
assert_grep '^  comm 0 id=abcdef0000000001 .* state=INIT_DONE .* gen=0 ' "$T/out7d"
assert_grep '^  peer 1 comm=1 id=- peer=3 ' "$T/out7d"
assert_grep '^  op 3 t=\+0\.004000 tid=5000 AllReduce comm=abcdef0000000002 rank=1/4 seq=4 ' "$T/out7d"

# A 1.1 file: the watchdog's header fields.
"$NW_MKSEG" --v11 --records 2 "$T/v11.seg" || fail "mkseg"
show_ok "$T/out8" "$T/v11.seg"
assert_grep '^  format +1\.1$' "$T/out8"
assert_grep '^  tracking +events$' "$T/out8"
assert_grep '^  watchdog_tid +4243$' "$T/out8"
assert_grep '^  poll_ms +100$' "$T/out8"
assert_grep '^  timeout_ms +600000$' "$T/out8"
assert_grep '^  counters +events_created=64 event_records=20 ops_tracked=10 findings=1 dumps=1 request_served=7$' "$T/out8"
assert_grep '^  last_finding +\+3\.000000$' "$T/out8"
assert_grep '^stacks none$' "$T/out8"
echo "ok"
