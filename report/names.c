/* Names for segment enums, flags and NCCL's enums (see names.h). The tables
 * follow include/ncclwatch/segment.h and the real nccl.h. */
#include "names.h"

#include <stdio.h>
#include <string.h>
#include <nccl.h>
#include <ncclwatch/segment.h>

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const char *lookup(const char *const *table, size_t n, long value, const char *what,
                          char buf[NW_NAME_BUF])
{
	if (value >= 0 && (size_t)value < n && table[value])
		return table[value];
	snprintf(buf, NW_NAME_BUF, "%s#%ld", what, value);
	return buf;
}

const char *nw_op_kind_name(unsigned kind, char buf[NW_NAME_BUF])
{
	static const char *const names[] = {
		[NW_OP_NONE] = "None",
		[NW_OP_ALLREDUCE] = "AllReduce",
		[NW_OP_BROADCAST] = "Broadcast",
		[NW_OP_BCAST] = "Bcast",
		[NW_OP_REDUCE] = "Reduce",
		[NW_OP_ALLGATHER] = "AllGather",
		[NW_OP_REDUCESCATTER] = "ReduceScatter",
		[NW_OP_ALLTOALL] = "AlltoAll",
		[NW_OP_GATHER] = "Gather",
		[NW_OP_SCATTER] = "Scatter",
		[NW_OP_SEND] = "Send",
		[NW_OP_RECV] = "Recv",
		[NW_OP_GROUP_START] = "GroupStart",
		[NW_OP_GROUP_END] = "GroupEnd",
		[NW_OP_COMM_INIT] = "CommInit",
		[NW_OP_COMM_SPLIT] = "CommSplit",
		[NW_OP_COMM_SHRINK] = "CommShrink",
		[NW_OP_COMM_FINALIZE] = "CommFinalize",
		[NW_OP_COMM_DESTROY] = "CommDestroy",
		[NW_OP_COMM_ABORT] = "CommAbort",
		[NW_OP_COMM_REVOKE] = "CommRevoke",
		[NW_OP_ASYNC_ERROR] = "AsyncError",
		[NW_OP_GRAPH_LAUNCH] = "GraphLaunch",
	};
	return lookup(names, COUNT(names), (long)kind, "kind", buf);
}

const char *nw_op_state_name(unsigned state, char buf[NW_NAME_BUF])
{
	if (state == NW_ST_IN_OPEN_GROUP)   /* the reader's, never in a segment */
		return "IN_OPEN_GROUP";
	static const char *const names[] = {
		[NW_ST_ENQUEUED] = "ENQUEUED",
		[NW_ST_STARTED] = "STARTED",
		[NW_ST_COMPLETED] = "COMPLETED",
		[NW_ST_FAILED] = "FAILED",
		[NW_ST_CAPTURED] = "CAPTURED",
		[NW_ST_INIT_ENTERED] = "INIT_ENTERED",
		[NW_ST_INIT_DONE] = "INIT_DONE",
		[NW_ST_INIT_FAILED] = "INIT_FAILED",
		[NW_ST_UNTRACKED] = "UNTRACKED",
		[NW_ST_DISCARDED] = "DISCARDED",
	};
	return lookup(names, COUNT(names), (long)state, "state", buf);
}

const char *nw_comm_state_name(unsigned state, char buf[NW_NAME_BUF])
{
	static const char *const names[] = {
		[NW_COMM_FREE] = "FREE",
		[NW_COMM_INIT_ENTERED] = "INIT_ENTERED",
		[NW_COMM_INIT_DONE] = "INIT_DONE",
		[NW_COMM_INIT_FAILED] = "INIT_FAILED",
		[NW_COMM_INIT_ASYNC] = "INIT_ASYNC",
		[NW_COMM_FINALIZED] = "FINALIZED",
		[NW_COMM_DESTROYED] = "DESTROYED",
		[NW_COMM_ABORTED] = "ABORTED",
		[NW_COMM_REVOKED] = "REVOKED",
	};
	return lookup(names, COUNT(names), (long)state, "state", buf);
}

const char *nw_comm_origin_name(unsigned origin, char buf[NW_NAME_BUF])
{
	static const char *const names[] = {
		[NW_ORIGIN_INIT_RANK] = "InitRank",
		[NW_ORIGIN_INIT_CONFIG] = "InitRankConfig",
		[NW_ORIGIN_INIT_SCALABLE] = "InitRankScalable",
		[NW_ORIGIN_INIT_ALL] = "InitAll",
		[NW_ORIGIN_SPLIT] = "Split",
		[NW_ORIGIN_SHRINK] = "Shrink",
	};
	return lookup(names, COUNT(names), (long)origin, "origin", buf);
}

const char *nw_tracking_name(unsigned tracking, char buf[NW_NAME_BUF])
{
	static const char *const names[] = {
		[NW_TRACK_NONE] = "none",
		[NW_TRACK_EVENTS] = "events",
		[NW_TRACK_NO_DRIVER] = "no-driver",
	};
	return lookup(names, COUNT(names), (long)tracking, "tracking", buf);
}

const char *nw_datatype_name(int datatype, char buf[NW_NAME_BUF])
{
	static const char *const names[] = {
		[ncclInt8] = "int8",
		[ncclUint8] = "uint8",
		[ncclInt32] = "int32",
		[ncclUint32] = "uint32",
		[ncclInt64] = "int64",
		[ncclUint64] = "uint64",
		[ncclFloat16] = "float16",
		[ncclFloat32] = "float32",
		[ncclFloat64] = "float64",
		[ncclBfloat16] = "bfloat16",
		[ncclFloat8e4m3] = "float8e4m3",
		[ncclFloat8e5m2] = "float8e5m2",
	};
	_Static_assert(COUNT(names) == ncclNumTypes, "a name for every ncclDataType_t");
	return lookup(names, COUNT(names), datatype, "dtype", buf);
}

const char *nw_redop_name(int redop, char buf[NW_NAME_BUF])
{
	static const char *const names[] = {
		[ncclSum] = "sum", [ncclProd] = "prod", [ncclMax] = "max", [ncclMin] = "min", [ncclAvg] = "avg",
	};
	_Static_assert(COUNT(names) == ncclNumOps, "a name for every built-in ncclRedOp_t");
	if (redop == -1)
		return "-";
	if (redop >= (int)ncclNumOps) {
		snprintf(buf, NW_NAME_BUF, "premulsum#%d", redop);
		return buf;
	}
	return lookup(names, COUNT(names), redop, "redop", buf);
}

const char *nw_nccl_result_name(int result, char buf[NW_NAME_BUF])
{
	static const char *const names[] = {
		[ncclSuccess] = "ncclSuccess",
		[ncclUnhandledCudaError] = "ncclUnhandledCudaError",
		[ncclSystemError] = "ncclSystemError",
		[ncclInternalError] = "ncclInternalError",
		[ncclInvalidArgument] = "ncclInvalidArgument",
		[ncclInvalidUsage] = "ncclInvalidUsage",
		[ncclRemoteError] = "ncclRemoteError",
		[ncclInProgress] = "ncclInProgress",
	};
	_Static_assert(COUNT(names) == ncclNumResults, "a name for every ncclResult_t");
	return lookup(names, COUNT(names), result, "result", buf);
}

const char *nw_nccl_result_string(int result)
{
	static const char *const strings[] = {
		[ncclSuccess] = "no error",
		[ncclUnhandledCudaError] = "unhandled cuda error",
		[ncclSystemError] = "unhandled system error",
		[ncclInternalError] = "internal error",
		[ncclInvalidArgument] = "invalid argument",
		[ncclInvalidUsage] = "invalid usage",
		[ncclRemoteError] = "remote process exited or there was a network error",
		[ncclInProgress] = "NCCL operation in progress",
	};
	_Static_assert(COUNT(strings) == ncclNumResults, "a string for every ncclResult_t");
	if (result >= 0 && (size_t)result < COUNT(strings))
		return strings[result];
	return "unknown result code";
}

struct flag_name {
	uint32_t bit;
	const char *name;
};

static const char *flags_sep(uint32_t flags, const struct flag_name *names, size_t n,
                             const char *sep, const char *none, char buf[NW_FLAGS_BUF])
{
	if (flags == 0)
		return none;
	size_t len = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++)
		if (flags & names[i].bit) {
			len += (size_t)snprintf(buf + len, NW_FLAGS_BUF - len, "%s%s", len ? sep : "", names[i].name);
			flags &= ~names[i].bit;
		}
	if (flags)
		snprintf(buf + len, NW_FLAGS_BUF - len, "%s0x%x", len ? sep : "", flags);
	return buf;
}

static const char *flags_str(uint32_t flags, const struct flag_name *names, size_t n,
                             char buf[NW_FLAGS_BUF])
{
	return flags_sep(flags, names, n, ",", "-", buf);
}

const char *nw_seg_flags_str(uint32_t flags, char buf[NW_FLAGS_BUF])
{
	static const struct flag_name names[] = {
		{ NW_SEG_F_RECORDING, "recording" },   { NW_SEG_F_STOPPED, "stopped" },
		{ NW_SEG_F_EXITED, "exited" },         { NW_SEG_F_DUMP, "dump" },
		{ NW_SEG_F_STALL_SEEN, "stall_seen" }, { NW_SEG_F_PEERS_FULL, "peers_full" },
		{ NW_SEG_F_COMMS_FULL, "comms_full" }, { NW_SEG_F_EXIT_STATUS, "exit_status" },
		{ NW_SEG_F_SNAPSHOT, "snapshot" },     { NW_SEG_F_LEFT_EARLY, "left_early" },
		{ NW_SEG_F_EXIT_POLL_SKIPPED, "exit_poll_skipped" },
	};
	return flags_str(flags, names, COUNT(names), buf);
}

const char *nw_op_flags_str(uint32_t flags, char buf[NW_FLAGS_BUF])
{
	static const struct flag_name names[] = {
		{ NW_OPF_IN_GROUP, "group" },
		{ NW_OPF_INPLACE, "inplace" },
		{ NW_OPF_NONBLOCKING, "nonblocking" },
	};
	return flags_str(flags, names, COUNT(names), buf);
}

const char *nw_thread_flags_str(uint32_t flags, char buf[NW_FLAGS_BUF])
{
	static const struct flag_name names[] = {
		{ NW_THR_WATCHDOG, "watchdog" },
		{ NW_THR_NO_REPLY, "no-reply" },
		{ NW_THR_IN_NCCL, "in-nccl" },
		{ NW_THR_REGS_SYSCALL, "regs-syscall" },
		{ NW_THR_REGS_PTRACE, "regs-ptrace" },
		{ NW_THR_REGS_SIGNAL, "regs-signal" },
		{ NW_THR_TRUNCATED, "truncated" },
	};
	return flags_sep(flags, names, COUNT(names), " ", "", buf);
}

const char *nw_nccl_version_str(int32_t code, char buf[NW_NAME_BUF])
{
	if (code <= 0)
		return "unknown";
	if (code >= 10000) /* 2.9 and later: major*10000 + minor*100 + patch */
		snprintf(buf, NW_NAME_BUF, "%d.%d.%d", code / 10000, code % 10000 / 100, code % 100);
	else
		snprintf(buf, NW_NAME_BUF, "%d.%d.%d", code / 1000, code % 1000 / 100, code % 100);
	return buf;
}

const char *nw_cuda_version_str(int32_t code, char buf[NW_NAME_BUF])
{
	if (code <= 0)
		return "unknown";
	snprintf(buf, NW_NAME_BUF, "%d.%d", code / 1000, code % 1000 / 10);
	return buf;
}

uint32_t nw_graph_replay_at(const struct nw_seg_op *op, unsigned *state)
{
	if (op->kind != NW_OP_GRAPH_LAUNCH || !(op->flags & NW_OPF_GRAPH_OPS_KNOWN) ||
	    (op->state != NW_ST_STARTED && op->state != NW_ST_FAILED))
		return 0;
	uint32_t done = NW_OP_GRAPH_OPS_DONE(op->flags);
	if (done >= op->count)
		return 0;                   /* every op done: the launch's end is next */
	if (state)
		*state = op->state;
	return done + 1;
}

unsigned nw_graph_replay_op_state(const struct nw_seg_op *op, uint32_t i)
{
	if (op->state == NW_ST_COMPLETED || op->state == NW_ST_ENQUEUED)
		return op->state;
	unsigned st = 0;
	uint32_t at = nw_graph_replay_at(op, &st);
	if (!at)
		return 0;
	return i < at ? NW_ST_COMPLETED : i == at ? st : NW_ST_ENQUEUED;
}
