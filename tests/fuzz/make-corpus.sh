#!/bin/sh
# Remakes the fuzz corpus kept in tests/fuzz/corpus/ with tests/report/mkseg
# (build it first: make build/tests/progs/mkseg). The files are committed;
# run this only when the format or mkseg changes, and commit what changed.
# Every file stays under the -max_len of test-report-fuzz.sh (16384 bytes).
#   sh tests/fuzz/make-corpus.sh [BUILD]
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
mkseg="$build/tests/progs/mkseg"
out="$root/tests/fuzz/corpus"
small="--comm-cap 2 --peer-cap 2 --ring 8"

# Format 1.0 (the reader must keep reading it).
"$mkseg" $small --records 5 "$out/small.seg"
"$mkseg" $small --records 8 --stack 128 "$out/with-stack.seg"         # 1.0: an opaque stack area
"$mkseg" $small --comms 1 --peers 1 --records 21 --tear 17 --unpublish 19 "$out/wrapped-torn.seg"
"$mkseg" --comms 0 --peers 0 --comm-cap 1 --peer-cap 0 --ring 1 --records 0 \
	--stopped "out of memory" "$out/empty-tables.seg"
"$mkseg" --corrupt short_header "$out/short-header.seg"
# One minor newer than this build (larger header and records).
"$mkseg" --newer-minor --comm-cap 2 --peer-cap 2 --ring 4 --records 3 "$out/newer-minor.seg"
# 1.3: records held by updaters (counted in commit), one being written.
"$mkseg" $small --comms 1 --peers 1 --records 21 --held 18 --held 15 --writing 20 "$out/wrapped-held.seg"
# Format 1.1: a stack area with a capture and per-op stacks (after a wrap),
# and one whose thread has more frames than its slot holds.
"$mkseg" $small --records 11 --stacks "$out/v11-stacks.seg"
"$mkseg" $small --records 3 --corrupt stack_area_frames "$out/v11-stack-bad-frames.seg"
# Format 1.4: Python frames of a thread and per-op Python call sites (after
# a wrap), and one whose thread claims more Python frames than the table.
"$mkseg" $small --records 11 --python "$out/v14-python.seg"
"$mkseg" $small --records 3 --corrupt stack_area_py_thread "$out/v14-python-bad-thread.seg"
# Sparse files (issue 16): the data of a small segment whose header says
# its ring holds 2^24 (over the reader's per-file cap) or 2^20 records, all
# written; the fuzz target makes the file as long as the header says, by a
# hole.
"$mkseg" $small --records 5 "$out/.dense.seg"
for ring in 16777216 1048576; do
	python3 "$root/tests/report/sparse.py" "$out/.dense.seg" "$out/.sparse.seg" $ring > /dev/null
	head -c "$(wc -c < "$out/.dense.seg")" "$out/.sparse.seg" > "$out/sparse-ring$ring.seg"
done
rm -f "$out/.dense.seg" "$out/.sparse.seg"
# A ring head at the top of 2^64 (a chunked ring reader once looped forever).
"$mkseg" $small --records 5 "$out/head-near-top.seg"
python3 -c 'import struct,sys; f=open(sys.argv[1],"r+b"); f.seek(272); f.write(struct.pack("<Q", 2**64-1))' \
	"$out/head-near-top.seg"

# 1.4: Python call site names written before any capture (stack area
# "never" with names, no threads or modules), and the same area still
# claiming a capture's threads, modules and count with capture_ns 0 (no
# writer's; CI's fuzz run found the reader returning those threads).
python3 - "$out/v14-python.seg" "$out/v14-names-never.seg" "$out/v14-never-threads.seg" <<'EOF'
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
a = d.find(struct.pack('<I', 0x4b54534e))           # NW_STACK_MAGIC
struct.pack_into('<Q', d, a + 88, 0)                 # capture_ns
open(sys.argv[3], 'wb').write(d)
struct.pack_into('<II', d, a + 24, 0, 0)             # thread_count, module_count
struct.pack_into('<QQ', d, a + 96, 0, 0)             # request_id, captures
struct.pack_into('<I', d, a + 124, 0)                # ipsym_count (symbols of a capture's modules)
struct.pack_into('<II', d, a + 128 + 4, 0, 0)        # ext: the capture's native and Python notes
struct.pack_into('<I', d, a + 128 + 28, 0)           # ext: pyframe_count
open(sys.argv[2], 'wb').write(d)
EOF

# 1.4: a snapshot (ncclwatch attach's file: no tables, no ring, a stack
# area), from nwgen (make build/tests/progs/nwgen).
rm -rf "$out/.snap"
"$build/tests/progs/nwgen" --ranks 1 --out "$out/.snap" \
	--snapshot '0=futex_wait@libc.so.6<ncclAllReduce@libnccl.so.2<train_step<main;0/pt_autograd=pthread_cond_wait@libc.so.6<autograd_loop' \
	> /dev/null
mv "$out/.snap/gen-snapshot/node0.10000.snapshot.seg" "$out/snapshot.seg"
rm -rf "$out/.snap"

for f in "$out"/*.seg; do
	[ "$(wc -c < "$f")" -le 16384 ] || { echo "$f: over 16384 bytes" >&2; exit 1; }
done
