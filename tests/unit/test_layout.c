/* test-unit-layout: the segment ABI, frozen. Asserts the offset and size of
 * every field of every struct of include/ncclwatch/segment.h, and the value
 * of every constant and enum a reader depends on, against literal numbers:
 * a change to the header that moves anything fails here, naming the field.
 *
 * A change that is meant (a new field taken from a reserved tail, with
 * NW_SEG_VERSION_MINOR bumped) updates this file in the same commit; see
 * docs/FORMAT.md, "Changing the format".
 *
 * struct nw_seg_op ended with explicit padding (pad0) to its 128 bytes
 * until 2.0 made it comm_gen.
 * Format 1.1 added the watchdog's header fields (from the reserved tail)
 * and the stack area's structs; 1.2 the header's proc_start_ticks (from
 * the reserved tail); 1.4 the stack area extension, its Python fields
 * (from its reserved tail), the Python frame and call-site structs and
 * the thread's py_* fields (from its reserved tail). 2.0 (comm slots
 * reused) the header's drop counters (from its reserved tail), the comm's
 * gen word (from its reserved tail), and comm_gen in the peer entry and
 * the op record (their pad0).
 */
#include <stdio.h>
#include <string.h>
#include <ncclwatch/segment.h>

static int failures;

static void check(const char *what, unsigned long long got, unsigned long long want)
{
	if (got != want) {
		fprintf(stderr, "layout: %s is %llu, expected %llu\n", what, got, want);
		failures++;
	}
}

#define SIZE(s, n) check("sizeof(struct " #s ")", sizeof(struct s), n)
#define FIELD(s, f, off, sz)                                                     \
	do {                                                                     \
		check("offsetof(struct " #s ", " #f ")", offsetof(struct s, f), off); \
		check("sizeof(struct " #s "." #f ")", sizeof(((struct s *)0)->f), sz); \
	} while (0)
#define VALUE(c, v) check(#c, (unsigned long long)(c), v)

static void fields(void)
{
	SIZE(nw_seg_header, 8192);
	FIELD(nw_seg_header, magic, 0, 8);
	FIELD(nw_seg_header, endian, 8, 4);
	FIELD(nw_seg_header, version_major, 12, 2);
	FIELD(nw_seg_header, version_minor, 14, 2);
	FIELD(nw_seg_header, header_size, 16, 4);
	FIELD(nw_seg_header, flags, 20, 4);
	FIELD(nw_seg_header, segment_size, 24, 8);
	FIELD(nw_seg_header, comm_offset, 32, 8);
	FIELD(nw_seg_header, comm_capacity, 40, 4);
	FIELD(nw_seg_header, comm_record_size, 44, 4);
	FIELD(nw_seg_header, peer_offset, 48, 8);
	FIELD(nw_seg_header, peer_capacity, 56, 4);
	FIELD(nw_seg_header, peer_record_size, 60, 4);
	FIELD(nw_seg_header, ring_offset, 64, 8);
	FIELD(nw_seg_header, ring_capacity, 72, 4);
	FIELD(nw_seg_header, op_record_size, 76, 4);
	FIELD(nw_seg_header, stack_offset, 80, 8);
	FIELD(nw_seg_header, stack_size, 88, 8);
	FIELD(nw_seg_header, pid, 96, 8);
	FIELD(nw_seg_header, ppid, 104, 8);
	FIELD(nw_seg_header, start_realtime_ns, 112, 8);
	FIELD(nw_seg_header, start_monotonic_ns, 120, 8);
	FIELD(nw_seg_header, global_rank, 128, 4);
	FIELD(nw_seg_header, local_rank, 132, 4);
	FIELD(nw_seg_header, world_size, 136, 4);
	FIELD(nw_seg_header, uid, 140, 4);
	FIELD(nw_seg_header, host, 144, 64);
	FIELD(nw_seg_header, job, 208, 64);
	FIELD(nw_seg_header, ring_head, 272, 8);
	FIELD(nw_seg_header, comm_count, 280, 4);
	FIELD(nw_seg_header, peer_count, 284, 4);
	FIELD(nw_seg_header, heartbeat_ns, 288, 8);
	FIELD(nw_seg_header, ops_dropped, 296, 8);
	FIELD(nw_seg_header, nccl_version, 304, 4);
	FIELD(nw_seg_header, cuda_driver_version, 308, 4);
	FIELD(nw_seg_header, nccl_lib, 312, 256);
	FIELD(nw_seg_header, gpu_name, 568, 64);
	FIELD(nw_seg_header, env, 632, 3072);
	FIELD(nw_seg_header, error, 3704, 128);
	/* v1.1 */
	FIELD(nw_seg_header, tracking, 3832, 4);
	FIELD(nw_seg_header, watchdog_tid, 3836, 4);
	FIELD(nw_seg_header, poll_ms, 3840, 4);
	FIELD(nw_seg_header, timeout_ms, 3844, 4);
	FIELD(nw_seg_header, events_created, 3848, 8);
	FIELD(nw_seg_header, event_records, 3856, 8);
	FIELD(nw_seg_header, ops_tracked, 3864, 8);
	FIELD(nw_seg_header, findings, 3872, 8);
	FIELD(nw_seg_header, dumps, 3880, 8);
	FIELD(nw_seg_header, request_served, 3888, 8);
	FIELD(nw_seg_header, last_finding_ns, 3896, 8);
	/* 1.2 */
	FIELD(nw_seg_header, proc_start_ticks, 3904, 8);
	FIELD(nw_seg_header, exit_status, 3912, 4);
	FIELD(nw_seg_header, threads_dropped, 3916, 4);
	FIELD(nw_seg_header, comms_dropped, 3920, 8);
	FIELD(nw_seg_header, comm_reuses, 3928, 8);
	FIELD(nw_seg_header, graph_launches, 3936, 8);
	FIELD(nw_seg_header, graphs_untracked, 3944, 8);
	FIELD(nw_seg_header, reserved, 3952, 4240);
	SIZE(nw_seg_comm, 512);
	FIELD(nw_seg_comm, comm_id, 0, 8);
	FIELD(nw_seg_comm, parent_id, 8, 8);
	FIELD(nw_seg_comm, handle, 16, 8);
	FIELD(nw_seg_comm, rank, 24, 4);
	FIELD(nw_seg_comm, nranks, 28, 4);
	FIELD(nw_seg_comm, cuda_device, 32, 4);
	FIELD(nw_seg_comm, origin, 36, 4);
	FIELD(nw_seg_comm, state, 40, 4);
	FIELD(nw_seg_comm, init_result, 44, 4);
	FIELD(nw_seg_comm, split_color, 48, 4);
	FIELD(nw_seg_comm, split_key, 52, 4);
	FIELD(nw_seg_comm, blocking, 56, 4);
	FIELD(nw_seg_comm, pad0, 60, 4);
	FIELD(nw_seg_comm, init_enter_ns, 64, 8);
	FIELD(nw_seg_comm, init_done_ns, 72, 8);
	FIELD(nw_seg_comm, end_ns, 80, 8);
	FIELD(nw_seg_comm, name, 88, 64);
	FIELD(nw_seg_comm, bus_id, 152, 16);
	FIELD(nw_seg_comm, uuid, 168, 16);
	FIELD(nw_seg_comm, coll_enqueued, 184, 8);
	FIELD(nw_seg_comm, coll_started, 192, 8);
	FIELD(nw_seg_comm, coll_completed, 200, 8);
	FIELD(nw_seg_comm, coll_enqueued_ns, 208, 8);
	FIELD(nw_seg_comm, coll_started_ns, 216, 8);
	FIELD(nw_seg_comm, coll_completed_ns, 224, 8);
	FIELD(nw_seg_comm, p2p_enqueued, 232, 8);
	FIELD(nw_seg_comm, p2p_completed, 240, 8);
	FIELD(nw_seg_comm, p2p_enqueued_ns, 248, 8);
	FIELD(nw_seg_comm, p2p_completed_ns, 256, 8);
	FIELD(nw_seg_comm, async_error, 264, 4);
	FIELD(nw_seg_comm, pad1, 268, 4);
	FIELD(nw_seg_comm, splits, 272, 8);
	FIELD(nw_seg_comm, shrinks, 280, 8);
	FIELD(nw_seg_comm, gen, 288, 4);
	FIELD(nw_seg_comm, pad2, 292, 4);
	FIELD(nw_seg_comm, reserved, 296, 216);
	SIZE(nw_seg_peer, 64);
	FIELD(nw_seg_peer, comm_slot, 0, 4);
	FIELD(nw_seg_peer, peer, 4, 4);
	FIELD(nw_seg_peer, send_enqueued, 8, 8);
	FIELD(nw_seg_peer, send_completed, 16, 8);
	FIELD(nw_seg_peer, recv_enqueued, 24, 8);
	FIELD(nw_seg_peer, recv_completed, 32, 8);
	FIELD(nw_seg_peer, last_ns, 40, 8);
	FIELD(nw_seg_peer, used, 48, 4);
	FIELD(nw_seg_peer, comm_gen, 52, 4);
	FIELD(nw_seg_peer, reserved, 56, 8);
	SIZE(nw_seg_op, 128);
	FIELD(nw_seg_op, commit, 0, 8);
	FIELD(nw_seg_op, comm_id, 8, 8);
	FIELD(nw_seg_op, seq, 16, 8);
	FIELD(nw_seg_op, count, 24, 8);
	FIELD(nw_seg_op, stream, 32, 8);
	FIELD(nw_seg_op, group_id, 40, 8);
	FIELD(nw_seg_op, caller, 48, 8);
	FIELD(nw_seg_op, enqueue_ns, 56, 8);
	FIELD(nw_seg_op, start_ns, 64, 8);
	FIELD(nw_seg_op, end_ns, 72, 8);
	FIELD(nw_seg_op, comm_slot, 80, 4);
	FIELD(nw_seg_op, kind, 84, 2);
	FIELD(nw_seg_op, datatype, 86, 1);
	FIELD(nw_seg_op, group_depth, 87, 1);
	FIELD(nw_seg_op, redop, 88, 4);
	FIELD(nw_seg_op, root, 92, 4);
	FIELD(nw_seg_op, rank, 96, 4);
	FIELD(nw_seg_op, nranks, 100, 4);
	FIELD(nw_seg_op, tid, 104, 4);
	FIELD(nw_seg_op, flags, 108, 4);
	FIELD(nw_seg_op, state, 112, 4);
	FIELD(nw_seg_op, result, 116, 4);
	FIELD(nw_seg_op, cuda_error, 120, 4);
	FIELD(nw_seg_op, comm_gen, 124, 4);

	/* The stack area (v1.1). */
	SIZE(nw_seg_stack_header, 128);
	FIELD(nw_seg_stack_header, magic, 0, 4);
	FIELD(nw_seg_stack_header, seq, 4, 4);
	FIELD(nw_seg_stack_header, thread_capacity, 8, 4);
	FIELD(nw_seg_stack_header, frame_capacity, 12, 4);
	FIELD(nw_seg_stack_header, module_capacity, 16, 4);
	FIELD(nw_seg_stack_header, strtab_size, 20, 4);
	FIELD(nw_seg_stack_header, thread_count, 24, 4);
	FIELD(nw_seg_stack_header, module_count, 28, 4);
	FIELD(nw_seg_stack_header, strtab_used, 32, 4);
	FIELD(nw_seg_stack_header, opstack_depth, 36, 4);
	FIELD(nw_seg_stack_header, opstack_count, 40, 4);
	FIELD(nw_seg_stack_header, pad0, 44, 4);
	FIELD(nw_seg_stack_header, thread_offset, 48, 8);
	FIELD(nw_seg_stack_header, frame_offset, 56, 8);
	FIELD(nw_seg_stack_header, module_offset, 64, 8);
	FIELD(nw_seg_stack_header, strtab_offset, 72, 8);
	FIELD(nw_seg_stack_header, opstack_offset, 80, 8);
	FIELD(nw_seg_stack_header, capture_ns, 88, 8);
	FIELD(nw_seg_stack_header, request_id, 96, 8);
	FIELD(nw_seg_stack_header, captures, 104, 8);
	FIELD(nw_seg_stack_header, ipsym_offset, 112, 8);
	FIELD(nw_seg_stack_header, ipsym_capacity, 120, 4);
	FIELD(nw_seg_stack_header, ipsym_count, 124, 4);
	SIZE(nw_seg_stack_ext, 128);
	FIELD(nw_seg_stack_ext, ext_size, 0, 4);
	FIELD(nw_seg_stack_ext, native_note, 4, 4);
	FIELD(nw_seg_stack_ext, python_note, 8, 4);
	FIELD(nw_seg_stack_ext, pad0, 12, 4);
	FIELD(nw_seg_stack_ext, pyframe_offset, 16, 8);
	FIELD(nw_seg_stack_ext, pyframe_capacity, 24, 4);
	FIELD(nw_seg_stack_ext, pyframe_count, 28, 4);
	FIELD(nw_seg_stack_ext, pycall_offset, 32, 8);
	FIELD(nw_seg_stack_ext, pycall_depth, 40, 4);
	FIELD(nw_seg_stack_ext, pycall_count, 44, 4);
	FIELD(nw_seg_stack_ext, pysite_offset, 48, 8);
	FIELD(nw_seg_stack_ext, pysite_capacity, 56, 4);
	FIELD(nw_seg_stack_ext, pysite_count, 60, 4);
	FIELD(nw_seg_stack_ext, python_version, 64, 4);
	FIELD(nw_seg_stack_ext, python_method, 68, 4);
	FIELD(nw_seg_stack_ext, reserved, 72, 56);
	SIZE(nw_seg_pyframe, 32);
	FIELD(nw_seg_pyframe, code, 0, 8);
	FIELD(nw_seg_pyframe, instr, 8, 8);
	FIELD(nw_seg_pyframe, file, 16, 4);
	FIELD(nw_seg_pyframe, function, 20, 4);
	FIELD(nw_seg_pyframe, line, 24, 4);
	FIELD(nw_seg_pyframe, flags, 28, 4);
	SIZE(nw_seg_pycall, 16);
	FIELD(nw_seg_pycall, code, 0, 8);
	FIELD(nw_seg_pycall, instr, 8, 8);
	SIZE(nw_seg_thread, 64);
	FIELD(nw_seg_thread, tid, 0, 4);
	FIELD(nw_seg_thread, nframes, 4, 4);
	FIELD(nw_seg_thread, flags, 8, 4);
	FIELD(nw_seg_thread, pad0, 12, 4);
	FIELD(nw_seg_thread, name, 16, 16);
	FIELD(nw_seg_thread, py_first, 32, 4);
	FIELD(nw_seg_thread, py_count, 36, 4);
	FIELD(nw_seg_thread, py_name, 40, 4);
	FIELD(nw_seg_thread, py_flags, 44, 4);
	FIELD(nw_seg_thread, py_native, 48, 4);
	FIELD(nw_seg_thread, reserved, 52, 12);
	SIZE(nw_seg_frame, 32);
	FIELD(nw_seg_frame, ip, 0, 8);
	FIELD(nw_seg_frame, module_offset, 8, 8);
	FIELD(nw_seg_frame, symbol_offset, 16, 8);
	FIELD(nw_seg_frame, module, 24, 4);
	FIELD(nw_seg_frame, symbol, 28, 4);
	SIZE(nw_seg_module, 256);
	FIELD(nw_seg_module, base, 0, 8);
	FIELD(nw_seg_module, size, 8, 8);
	FIELD(nw_seg_module, path, 16, 240);
}

static void constants(void)
{
	check("NW_SEG_MAGIC", memcmp(NW_SEG_MAGIC, "NCCLWSEG", 8) == 0 && sizeof NW_SEG_MAGIC == 9, 1);
	VALUE(NW_SEG_ENDIAN, 0x01020304u);
	VALUE(NW_SEG_VERSION_MAJOR, 2);
	VALUE(NW_SEG_VERSION_MINOR, 2);
	VALUE(NW_SEG_V1_MINOR, 4);
	VALUE(NW_COMM_GEN_MASK, 0x00ffffff);
	VALUE(NW_COMM_GEN_HOLDER, 0x01000000);
	VALUE(NW_COMM_GEN_HOLDERS, 0x7f000000);
	VALUE(NW_COMM_GEN_WRITING, 0x80000000);
	VALUE(NW_SEG_ALIGN, 64);
	VALUE(NW_SEG_HOST_LEN, 64);
	VALUE(NW_SEG_JOB_LEN, 64);
	VALUE(NW_SEG_ENV_LEN, 3072);
	VALUE(NW_SEG_ERROR_LEN, 128);
	VALUE(NW_SEG_LIBPATH_LEN, 256);
	VALUE(NW_SEG_GPU_NAME_LEN, 64);
	VALUE(NW_COMM_NAME_LEN, 64);
	VALUE(NW_BUSID_LEN, 16);
	VALUE(NW_SEG_MAX_COMMS, 65536);
	VALUE(NW_SEG_MAX_PEERS, 1048576);
	VALUE(NW_SEG_MAX_RING, 16777216);
	VALUE(NW_SEG_MAX_STACK, 67108864);
	VALUE(NW_SEG_COMMIT_WRITING, 0x8000000000000000ull);
	VALUE(NW_SEG_COMMIT_UPDATER, 0x0100000000000000ull);
	VALUE(NW_SEG_COMMIT_UPDATERS, 0x7f00000000000000ull);
	VALUE(NW_SEG_COMMIT_TICKET, 0x00ffffffffffffffull);

	VALUE(NW_SEG_F_RECORDING, 0x1);
	VALUE(NW_SEG_F_STOPPED, 0x2);
	VALUE(NW_SEG_F_EXITED, 0x4);
	VALUE(NW_SEG_F_DUMP, 0x8);
	VALUE(NW_SEG_F_STALL_SEEN, 0x10);
	VALUE(NW_SEG_F_PEERS_FULL, 0x20);
	VALUE(NW_SEG_F_COMMS_FULL, 0x40);
	VALUE(NW_SEG_F_EXIT_STATUS, 0x80);
	VALUE(NW_SEG_F_SNAPSHOT, 0x100);
	VALUE(NW_SEG_F_EXIT_POLL_SKIPPED, 0x400);

	VALUE(NW_COMM_FREE, 0);
	VALUE(NW_COMM_INIT_ENTERED, 1);
	VALUE(NW_COMM_INIT_DONE, 2);
	VALUE(NW_COMM_INIT_FAILED, 3);
	VALUE(NW_COMM_INIT_ASYNC, 4);
	VALUE(NW_COMM_FINALIZED, 5);
	VALUE(NW_COMM_DESTROYED, 6);
	VALUE(NW_COMM_ABORTED, 7);
	VALUE(NW_COMM_REVOKED, 8);

	VALUE(NW_ORIGIN_INIT_RANK, 1);
	VALUE(NW_ORIGIN_INIT_CONFIG, 2);
	VALUE(NW_ORIGIN_INIT_SCALABLE, 3);
	VALUE(NW_ORIGIN_INIT_ALL, 4);
	VALUE(NW_ORIGIN_SPLIT, 5);
	VALUE(NW_ORIGIN_SHRINK, 6);

	VALUE(NW_OP_NONE, 0);
	VALUE(NW_OP_ALLREDUCE, 1);
	VALUE(NW_OP_BROADCAST, 2);
	VALUE(NW_OP_BCAST, 3);
	VALUE(NW_OP_REDUCE, 4);
	VALUE(NW_OP_ALLGATHER, 5);
	VALUE(NW_OP_REDUCESCATTER, 6);
	VALUE(NW_OP_ALLTOALL, 7);
	VALUE(NW_OP_GATHER, 8);
	VALUE(NW_OP_SCATTER, 9);
	VALUE(NW_OP_SEND, 16);
	VALUE(NW_OP_RECV, 17);
	VALUE(NW_OP_GROUP_START, 24);
	VALUE(NW_OP_GROUP_END, 25);
	VALUE(NW_OP_COMM_INIT, 32);
	VALUE(NW_OP_COMM_SPLIT, 33);
	VALUE(NW_OP_COMM_SHRINK, 34);
	VALUE(NW_OP_COMM_FINALIZE, 35);
	VALUE(NW_OP_COMM_DESTROY, 36);
	VALUE(NW_OP_COMM_ABORT, 37);
	VALUE(NW_OP_COMM_REVOKE, 38);
	VALUE(NW_OP_ASYNC_ERROR, 39);
	VALUE(NW_OP_GRAPH_LAUNCH, 40);

	VALUE(NW_ST_ENQUEUED, 1);
	VALUE(NW_ST_STARTED, 2);
	VALUE(NW_ST_COMPLETED, 3);
	VALUE(NW_ST_FAILED, 4);
	VALUE(NW_ST_CAPTURED, 5);
	VALUE(NW_ST_INIT_ENTERED, 6);
	VALUE(NW_ST_INIT_DONE, 7);
	VALUE(NW_ST_INIT_FAILED, 8);
	VALUE(NW_ST_UNTRACKED, 9);
	VALUE(NW_ST_DISCARDED, 10);

	VALUE(NW_OPF_IN_GROUP, 0x1);
	VALUE(NW_OPF_INPLACE, 0x2);
	VALUE(NW_OPF_NONBLOCKING, 0x4);

	VALUE(NW_TRACK_NONE, 0);
	VALUE(NW_TRACK_EVENTS, 1);
	VALUE(NW_TRACK_NO_DRIVER, 2);

	VALUE(NW_STACK_MAGIC, 0x4b54534eu);
	check("NW_STACK_MAGIC bytes", memcmp(&(uint32_t){ NW_STACK_MAGIC }, "NSTK", 4) == 0, 1);
	VALUE(NW_STACK_NAME_LEN, 16);
	VALUE(NW_STACK_MODULE_PATH_LEN, 240);
	VALUE(NW_THR_WATCHDOG, 0x1);
	VALUE(NW_THR_NO_REPLY, 0x2);
	VALUE(NW_THR_TRUNCATED, 0x4);
	VALUE(NW_THR_IN_NCCL, 0x8);
	VALUE(NW_THR_REGS_SYSCALL, 0x10);
	VALUE(NW_THR_REGS_PTRACE, 0x20);
	VALUE(NW_THR_REGS_SIGNAL, 0x40);
	VALUE(NW_PYT_PYTHON, 0x1);
	VALUE(NW_PYT_TRUNCATED, 0x2);
	VALUE(NW_PYT_GIL, 0x4);
	VALUE(NW_PYT_MAIN, 0x8);
	VALUE(NW_PYF_UNREAD, 0x1);
	VALUE(NW_PYF_NATIVE, 0x2);
	VALUE(NW_PY_NONE, 0);
	VALUE(NW_PY_DUMP_TRACEBACK, 1);
	VALUE(NW_PY_DEBUG_OFFSETS, 2);
	VALUE(NW_PY_PY_SPY, 3);
	VALUE(NW_PY_WALK_TABLE, 4);

	/* Atomics in a shared file must be lock-free, and plain-sized. */
	check("atomic uint64 lock-free", ATOMIC_LLONG_LOCK_FREE, 2);
	check("atomic uint32 lock-free", ATOMIC_INT_LOCK_FREE, 2);
}

int main(void)
{
	fields();
	constants();
	if (failures) {
		fprintf(stderr, "layout: %d mismatches: the segment ABI changed (see docs/FORMAT.md)\n", failures);
		return 1;
	}
	printf("layout: every field, size and constant as expected\n");
	return 0;
}
