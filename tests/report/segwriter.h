/* Test-only segment writer: lays out a valid segment of the format of
 * include/ncclwatch/segment.h in memory, with deterministic contents that
 * tests can predict, and writes op records by the publication protocol.
 * Used by mkseg (files for the CLI tests and the fuzz corpus) and by the
 * concurrent reader test.
 *
 * Contents (all tests rely on these; change them together):
 *   header: host "testhost", pid 4242, ppid 4200, uid 1000, rank 1, local
 *     rank 1, world size 4, job "job-7", start realtime 1700000000123456789
 *     (2023-11-14T22:13:20.123456789Z), start monotonic 5 s, NCCL 22809,
 *     driver 13000, nccl_lib "/opt/nccl/libnccl.so.2", gpu "Simulated GPU",
 *     env NCCL_DEBUG=INFO and CUDA_VISIBLE_DEVICES=0,1, flags RECORDING,
 *     heartbeat 2 s after the start.
 *   comm slot i: id 0xabcdef0000000001 + i, rank 1 of 4, device i, state
 *     INIT_DONE, origin InitRank (slot 0) or Split of slot 0 (color i, key 1),
 *     name "comm<i>", bus id "0000:1<i>:00.0", coll 10+i/9+i/8+i
 *     (enqueued/started/completed), p2p 3/2.
 *   peer slot j: comm slot j % comms, peer j+2, send 5+j/4+j, recv 3+j/2+j.
 *   op ticket t: see segw_fill_op.
 *   v1.1 header fields (spec.v11): tracking events, watchdog tid 4243, poll
 *     100 ms, timeout 600000 ms, events created 64, event records 20, ops
 *     tracked 10, findings 1, dumps 1, request served 7, last finding 3 s
 *     after the start.
 *   stack area (spec.stacks; layout: segw_stack_layout): seq 4, captured 3 s
 *     after the start for request 7, 2 captures; 4 thread slots of 8 frames,
 *     4 module slots, 8 ip-symbol slots, 256 bytes of strings;
 *     modules 0 /usr/bin/python3.11 at 0x400000 (size 0x10000),
 *             1 /usr/lib/x86_64-linux-gnu/libnccl.so.2 at 0x7f0000000000 (0x200000),
 *             2 /opt/ncclwatch/lib/libncclwatch.so at 0x7f1000000000 (0x100000);
 *     thread 0 tid 4242 "python3" in-nccl:
 *       #0 0x7f0000012345 ncclAllReduce+0x45 (libnccl.so.2+0x12345)
 *       #1 0x400123 train_step+0x23 (python3.11+0x123)
 *       #2 0x400456 main+0x56 (python3.11+0x456)
 *     thread 1 tid 4243 "ncclwatch-wd" watchdog:
 *       #0 0x7f1000001010 nw_watchdog_main+0x10 (libncclwatch.so+0x1010)
 *       #1 0x7ffff7a00000 ?? (??)                   (no symbol, no module)
 *     thread 2 tid 4250 "pt_data_worker" no-reply: no frames
 *     thread 3 tid 4251 "recurse" truncated: 8 frames 0x400800 recurse+0x10 (python3.11+0x800)
 *   per-op stacks (spec.opstacks, depth 4): see segw_opstack_of. The
 *     ip-symbol table holds 0x400123, 0x400456 and 0x7f0000012345.
 */
#ifndef NCCLWATCH_TESTS_SEGWRITER_H
#define NCCLWATCH_TESTS_SEGWRITER_H

#include <stddef.h>
#include <stdint.h>
#include <ncclwatch/segment.h>

#define SEGW_START_MONO_NS 5000000000ull
#define SEGW_COMM_ID(i) (0xabcdef0000000001ull + (uint64_t)(i))

struct segw_spec {
	uint32_t comm_capacity, comms;
	uint32_t peer_capacity, peers;
	uint32_t ring_capacity;       /* a power of two */
	uint64_t records;             /* tickets 0..records-1 are written; the ring keeps the newest */
	uint64_t stack_size;          /* 0: no stack area */
	uint16_t version_major;       /* 0: 1 (a 1.x file: comm slots never reused); 2: a 2.x file */
	uint16_t version_minor;       /* of that major; beyond its last: a "newer minor" file */
	uint32_t header_extra;        /* bytes added to the header (multiple of 64; newer minor) */
	uint32_t record_extra;        /* bytes added to every record (multiple of 8; newer minor) */
	int v11;                      /* fill the v1.1 header fields (version_minor is set apart) */
	int stacks;                   /* a v1.1 stack area with the contents above (stack_size is
	                               * then computed, not taken from the spec) */
	int opstacks;                 /* with stacks: per-op stacks, one slot per ring slot */
	int python;                   /* with stacks (1.4): Python frames of thread 0 and a
	                               * Python call site for every even ticket (segw_pycall_of) */
	const char *taint;            /* NULL, or bytes appended to the host, job, GPU name,
	                               * NCCL_DEBUG's value (the only variable then), comm
	                               * names, module 0's path, thread 0's name (then "py"),
	                               * train_step, /work/train.py and MainThread */
};

/* Where the stack area's parts lie (offsets from the area's start). */
struct segw_stack_layout {
	uint64_t thread_off, frame_off, module_off, strtab_off, ipsym_off, opstack_off, size;
	uint64_t pyframe_off, pysite_off, pycall_off;   /* spec.python */
};
#define SEGW_PYFRAMES 8
#define SEGW_PYSITES 4
#define SEGW_PYCALL_DEPTH 2
struct segw_stack_layout segw_stack_plan(const struct segw_spec *spec);

#define SEGW_STACK_THREADS 4
#define SEGW_STACK_FRAMES 8
#define SEGW_STACK_MODULES 4
#define SEGW_STACK_IPSYMS 8
#define SEGW_STACK_STRTAB 256
#define SEGW_OPSTACK_DEPTH 4

/* Bytes the segment needs. */
uint64_t segw_size(const struct segw_spec *spec);

/* Fill mem (segw_size bytes, zeroed by the caller) with a valid segment
 * holding spec->records records. */
void segw_build(void *mem, const struct segw_spec *spec);

/* The deterministic contents of ticket t (commit left 0):
 *   kind Send (peer 1) when t % 5 == 4, else AllReduce (redop sum, root -1);
 *   comm slot t % comms, comm id, rank 1 of 4; seq t+1; count 1000+t;
 *   dtype float32; tid 5000 + t % 3; enqueue 1 ms * (t+1) after the start,
 *   started +100 us, ended +200 us; state COMPLETED; result ncclSuccess;
 *   stream 0x1000 + slot; caller 0x400000 + t. */
void segw_fill_op(struct nw_seg_op *op, uint64_t ticket, uint32_t comms);

/* Write ticket t into its slot by the publication protocol of segment.h
 * (claim: CAS of commit from 0 or an older published ticket to
 * NW_SEG_COMMIT_WRITING | t, release fence, fields, the per-op stack if the
 * segment has per-op stacks, commit t+1 release). mem is the segment (a
 * MAP_SHARED mapping for concurrent tests). 0, or -1 when the slot is held
 * by another writer or a newer ticket: then t stays a gap. */
int segw_publish_op(void *mem, uint64_t ticket);

/* The per-op stack of ticket t: for an even t 0x7f0000012345 (ncclAllReduce
 * +0x45), 0x400123 (train_step+0x23), 0x400456 (main+0x56), 0x401000 + t
 * (no symbol: ?? in python3.11 while t < 0xf000); for an odd t all zero
 * (no stack). */
void segw_opstack_of(uint64_t ticket, uint64_t ips[SEGW_OPSTACK_DEPTH]);

/* The record of ticket t's slot. */
struct nw_seg_op *segw_op_slot(void *mem, uint64_t ticket);

/* The Python call site of ticket t (spec.python): for an even t
 * sync_gradients < train_step, for an odd one none. */
void segw_pycall_of(uint64_t ticket, struct nw_seg_pycall c[SEGW_PYCALL_DEPTH]);

/* The stack area of a segment built with spec.stacks, or NULL. */
struct nw_seg_stack_header *segw_stack_area(void *mem);

#endif /* NCCLWATCH_TESTS_SEGWRITER_H */
