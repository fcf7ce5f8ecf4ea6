/* Names for the numbers a segment holds: op kinds, op states, comm states,
 * comm origins, the tracking mode, header, op and thread flags, and NCCL's
 * ncclDataType_t, ncclRedOp_t and ncclResult_t. Shared by every renderer so that the same value always
 * prints the same way.
 *
 * A value the name tables do not know is formatted into the caller's buffer
 * (e.g. "kind#99"), so every function is thread-safe and never fails.
 */
#ifndef NCCLWATCH_REPORT_NAMES_H
#define NCCLWATCH_REPORT_NAMES_H

#include <stddef.h>
#include <stdint.h>

#define NW_NAME_BUF 32   /* room for any "<thing>#<number>" */
#define NW_FLAGS_BUF 160 /* room for every flag name of any flag word */

const char *nw_op_kind_name(unsigned kind, char buf[NW_NAME_BUF]);       /* "AllReduce", "Send", "CommInit" */
/* A state the reader gives, never written in a segment (docs/FORMAT.md):
 * an op issued inside a group whose outermost ncclGroupEnd its thread
 * never called. NCCL launches a group's ops at its end, so such an op was
 * never handed to the GPU: the rank has not issued it in any sense a peer
 * can see (its thread is stuck before the end: a lock, a host wait), and
 * it is not pending. */
#define NW_ST_IN_OPEN_GROUP 64u
const char *nw_op_state_name(unsigned state, char buf[NW_NAME_BUF]);     /* "ENQUEUED", "COMPLETED" */

/* A GraphLaunch record: where its replay stands among its graph's ops
 * (capture order), as the watchdog last saw the per-op events: the op
 * (1-based) that is not done while every op before it is, and that op's
 * state (STARTED, or FAILED with the launch) in *state. 0 when the replay
 * has no such op (ENQUEUED or COMPLETED: every op shares the launch's
 * state) or nothing is known (no per-op events). */
struct nw_seg_op;
uint32_t nw_graph_replay_at(const struct nw_seg_op *launch, unsigned *state);
/* The state (NW_ST_*) of op i (1-based) of the launch's replay; 0 unknown. */
unsigned nw_graph_replay_op_state(const struct nw_seg_op *launch, uint32_t i);
const char *nw_comm_state_name(unsigned state, char buf[NW_NAME_BUF]);   /* "INIT_DONE", "DESTROYED" */
const char *nw_comm_origin_name(unsigned origin, char buf[NW_NAME_BUF]); /* "InitRank", "Split" */
const char *nw_tracking_name(unsigned tracking, char buf[NW_NAME_BUF]);  /* "none", "events", "no-driver" */
const char *nw_datatype_name(int datatype, char buf[NW_NAME_BUF]);       /* "float32", "bfloat16" */
/* "sum", "prod", "max", "min", "avg"; a dynamic op (>= ncclNumOps, made by
 * ncclRedOpCreatePreMulSum) is "premulsum#N" with N its value; -1 is "-". */
const char *nw_redop_name(int redop, char buf[NW_NAME_BUF]);
/* The enum name: "ncclSuccess", "ncclSystemError"; else "result#N". */
const char *nw_nccl_result_name(int result, char buf[NW_NAME_BUF]);
/* What the real ncclGetErrorString says, without its "(run with ...)" advice:
 * "no error", "unhandled system error", ...; else "unknown result code". */
const char *nw_nccl_result_string(int result);

/* Comma-separated flag names ("recording,exited"), unknown bits as hex
 * ("0x100"); "-" for no flag. */
const char *nw_seg_flags_str(uint32_t flags, char buf[NW_FLAGS_BUF]);
const char *nw_op_flags_str(uint32_t flags, char buf[NW_FLAGS_BUF]);
/* Thread flags (NW_THR_*) as words separated by spaces, the way a thread
 * line prints them: "watchdog no-reply in-nccl truncated", unknown bits as
 * hex; "" for no flag. */
const char *nw_thread_flags_str(uint32_t flags, char buf[NW_FLAGS_BUF]);

/* ncclGetVersion's code as "2.28.9" (codes before 2.9 are major*1000+minor*100+patch);
 * 0 is "unknown". */
const char *nw_nccl_version_str(int32_t code, char buf[NW_NAME_BUF]);
/* cuDriverGetVersion's code as "13.0"; 0 is "unknown". */
const char *nw_cuda_version_str(int32_t code, char buf[NW_NAME_BUF]);

#endif /* NCCLWATCH_REPORT_NAMES_H */
