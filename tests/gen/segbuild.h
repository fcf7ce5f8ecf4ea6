/* segbuild: lays out one segment of include/ncclwatch/segment.h in a
 * private buffer, the way libncclwatch.so and its watchdog fill theirs, so
 * that nwgen can write it to a file with one pwrite. Only what a real
 * producer would write is written: areas at the offsets the interposer
 * computes (interpose/segment_file.c), op records published by the commit
 * protocol (commit = ticket + 1, ring slot = ticket % capacity, older
 * tickets overwritten by newer ones as in the live ring), comm positions
 * and per-peer positions moved as the interposer and the watchdog move
 * them, and an optional stack area laid out like watchdog/stack_area.c's
 * (small capacities) holding one consistent capture.
 *
 * Test-only code (tests/gen/); nothing here is shared with the library. */
#ifndef NCCLWATCH_TESTS_GEN_SEGBUILD_H
#define NCCLWATCH_TESTS_GEN_SEGBUILD_H

#include <stddef.h>
#include <stdint.h>
#include <ncclwatch/segment.h>

/* Stack area capacities of a generated segment (the real watchdog's are
 * 256 threads of 32 frames, 256 modules, 4096 ip symbols, 128 KiB of
 * strings: a generated one is small so that 16,384 ranks stay small). */
#define SB_STACK_THREADS 4
#define SB_STACK_FRAMES 16
#define SB_STACK_MODULES 8
#define SB_STACK_IPSYMS 8
#define SB_STACK_STRTAB 1024

struct sb_layout {
	uint32_t comm_capacity, peer_capacity, ring_capacity;
	int stacks;
	uint64_t comm_offset, peer_offset, ring_offset, stack_offset, stack_size, size;
	/* Offsets inside the stack area. */
	uint64_t thread_off, frame_off, module_off, ipsym_off, strtab_off;
	uint64_t pyframe_off;          /* a Python frame table (snapgen, a format with Python frames) */
	uint32_t pyframes;             /* its slots, 0 none */
};

/* Offsets and sizes for the given capacities (ring: a power of two). */
void sb_layout_init(struct sb_layout *l, uint32_t comms, uint32_t peers, uint32_t ring, int stacks);

struct sb_seg {
	const struct sb_layout *l;
	uint8_t *buf;                  /* l->size bytes */
	struct nw_seg_header *h;
	struct nw_seg_comm *comms;
	struct nw_seg_peer *peers;
	struct nw_seg_op *ring;
	struct nw_seg_stack_header *stk;   /* NULL without a stack area */
	uint64_t head;                 /* tickets written */
	uint64_t group_counter;        /* the process's group ids (interpose/groups.c) */
	uint64_t launches;             /* ops or group launches given events (header.ops_tracked) */
	uint64_t newest_ns;            /* the newest time recorded */
	/* Copied into every op record. */
	uint32_t tid;
	uint64_t stream;
	/* Group being recorded (sb_group_start .. sb_group_end). */
	uint64_t cur_group;
};

/* Zero the buffer and write the header's layout fields and the stack area's
 * layout (not the magic: sb_finish). */
void sb_begin(struct sb_seg *s, const struct sb_layout *l, uint8_t *buf);
/* Publish: the magic, written last as the producer does. */
void sb_finish(struct sb_seg *s);

/* ---- communicators ---- */

struct sb_comm_spec {
	uint64_t id, parent_id, handle;
	int32_t rank, nranks, device;
	uint32_t origin;               /* enum nw_comm_origin */
	int32_t color, key;
	const char *name;              /* NULL: none */
	const char *bus_id;
	const uint8_t *uuid;           /* 16 bytes or NULL */
};

/* A new comm slot in state INIT_ENTERED (entered at `enter_ns`) with its
 * life-cycle record (CommInit or CommSplit, INIT_ENTERED); returns the slot.
 * For a split the record's rank and nranks are -1, as the interposer
 * writes them before the split returns. */
uint32_t sb_comm_enter(struct sb_seg *s, const struct sb_comm_spec *spec, uint64_t enter_ns,
                       uint64_t caller);
/* The creating call returned ncclSuccess at `done_ns`: INIT_DONE (rank,
 * nranks and handle from `spec`), its record INIT_DONE with result 0. */
void sb_comm_done(struct sb_seg *s, uint32_t slot, const struct sb_comm_spec *spec, uint64_t done_ns);

/* ---- ops ---- */

struct sb_op {
	uint16_t kind;
	uint8_t datatype;
	int32_t redop, root;           /* -1 n/a */
	uint64_t count;
	uint32_t flags;                /* NW_OPF_* besides IN_GROUP (added inside a group) */
	uint64_t caller;
	/* Outcome as the watchdog left it. */
	uint32_t state;                /* ENQUEUED, STARTED, COMPLETED, FAILED */
	uint64_t enqueue_ns, start_ns, end_ns;   /* 0: not reached */
	int32_t result, cuda_error;
};

/* A collective on `slot`: the next sequence number of the comm; comm
 * positions moved as the interposer (enqueued) and the watchdog
 * (started, completed) move them. Returns the sequence number. */
uint64_t sb_coll(struct sb_seg *s, uint32_t slot, const struct sb_op *op);
/* A Send (op->kind NW_OP_SEND) or Recv to/from op->root on `slot`: per
 * (comm, peer, direction) numbering, the peer slot made on first use.
 * Returns the sequence number. */
uint64_t sb_p2p(struct sb_seg *s, uint32_t slot, const struct sb_op *op);
/* An AsyncError record on `slot` (FAILED, result = the error) and the
 * comm's async_error. */
void sb_async_error(struct sb_seg *s, uint32_t slot, int32_t error, uint64_t at_ns, uint64_t caller);

/* The outermost ncclGroupStart (record INIT_DONE) .. ncclGroupEnd (record
 * INIT_DONE, returned at end_ns). Ops recorded in between carry the group
 * id, depth 1 and IN_GROUP; the group counts as one tracked launch. */
void sb_group_start(struct sb_seg *s, uint64_t at_ns, uint64_t caller);
void sb_group_end(struct sb_seg *s, uint64_t at_ns, uint64_t end_ns, uint64_t caller);

/* ---- the stack area: one consistent capture ---- */

struct sb_frame {
	uint32_t module;               /* module table index + 1, 0 unknown */
	const char *symbol;            /* NULL: unknown */
	uint64_t module_offset;        /* ip - base of the module (the ip if module is 0) */
	uint64_t symbol_offset;
};

struct sb_module {
	uint64_t base, size;
	const char *path;
};

/* Begin a capture (at most SB_STACK_MODULES modules). */
void sb_stack_begin(struct sb_seg *s, const struct sb_module *mods, uint32_t nmods);
/* One thread (at most SB_STACK_THREADS), frames innermost first. */
void sb_stack_thread(struct sb_seg *s, uint32_t tid, const char *name, uint32_t flags,
                     const struct sb_frame *frames, uint32_t nframes);
/* The string table offset of `str` (added if new; 0 for NULL, "" or a full
 * table). */
uint32_t sb_stack_string(struct sb_seg *s, const char *str);
/* Close the capture: seq even (2), capture_ns, request_id, captures 1. */
void sb_stack_end(struct sb_seg *s, uint64_t capture_ns, uint64_t request_id);

/* ---- small utilities ---- */

uint64_t sb_mix64(uint64_t x);                 /* splitmix64 finalizer */
/* The interposer's comm ids (interpose/comm_id.c, same functions). */
uint64_t sb_hash64(const void *bytes, size_t len);
uint64_t sb_comm_id_split(uint64_t parent, uint64_t nth, int32_t color);

#endif
