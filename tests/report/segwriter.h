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
	uint16_t version_minor;       /* > NW_SEG_VERSION_MINOR: a "newer minor" file */
	uint32_t header_extra;        /* bytes added to the header (multiple of 64; newer minor) */
	uint32_t record_extra;        /* bytes added to every record (multiple of 8; newer minor) */
};

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
 * (commit 0, release fence, fields, commit t+1 release). mem is the
 * segment (a MAP_SHARED mapping for concurrent tests). */
void segw_publish_op(void *mem, uint64_t ticket);

/* The record of ticket t's slot. */
struct nw_seg_op *segw_op_slot(void *mem, uint64_t ticket);

#endif /* NCCLWATCH_TESTS_SEGWRITER_H */
