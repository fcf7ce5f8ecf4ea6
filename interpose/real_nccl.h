/* real_nccl: the table of the real NCCL entry points we forward to.
 *
 * Each entry is found once, in this order: pncclX in the global scope
 * (NCCL's own profiling aliases, which no interposer defines), ncclX after
 * us (RTLD_NEXT), then a library already loaded by name (NCCLWATCH_NCCL_LIB
 * or libnccl.so.2, RTLD_NOLOAD). A library handed to us by the dlsym hook
 * (a program that dlopen'ed NCCL itself) is searched first. A function the
 * library lacks (an older NCCL) stays NULL: its wrapper says so once and
 * returns ncclSystemError. */
#ifndef NCCLWATCH_INTERPOSE_REAL_NCCL_H
#define NCCLWATCH_INTERPOSE_REAL_NCCL_H

#include "visibility.h"
#include <stdatomic.h>
#include <nccl.h>

/* Every function we define (and export): the X-macro drives the real
 * table, the dlsym hook's name list and the version script's contents. */
#define NW_WRAPPED_FUNCTIONS(X) \
	X(AllReduce) X(Broadcast) X(Bcast) X(Reduce) X(AllGather) \
	X(ReduceScatter) X(AlltoAll) X(Gather) X(Scatter) \
	X(Send) X(Recv) \
	X(GroupStart) X(GroupEnd) X(GroupSimulateEnd) \
	X(CommInitRank) X(CommInitRankConfig) X(CommInitAll) X(CommInitRankScalable) \
	X(CommSplit) X(CommShrink) \
	X(CommFinalize) X(CommDestroy) X(CommAbort) X(CommRevoke) \
	X(CommGetAsyncError)

/* Real functions we call ourselves, outside the hot path: GetVersion at
 * start, CuDevice/Count/UserRank once when a communicator is created. */
#define NW_HELPER_FUNCTIONS(X) \
	X(GetVersion) X(CommCuDevice) X(CommCount) X(CommUserRank)

enum nw_real_index {
#define NW_REAL_ENUM(n) NW_REAL_##n,
	NW_WRAPPED_FUNCTIONS(NW_REAL_ENUM)
	NW_HELPER_FUNCTIONS(NW_REAL_ENUM)
	NW_REAL_COUNT
};

struct nw_real_table {
#define NW_REAL_MEMBER(n) __typeof__(nccl##n) *n;
	NW_WRAPPED_FUNCTIONS(NW_REAL_MEMBER)
	NW_HELPER_FUNCTIONS(NW_REAL_MEMBER)
};

extern NW_HIDDEN struct nw_real_table nw_real;
extern NW_HIDDEN atomic_int nw_real_ready;

/* Resolve the table (once, pthread_once). */
void nw_real_resolve(void);

/* The dlsym hook saw `handle` (a libnccl) hand out a wrapped function:
 * search it first, and fill whatever is still missing from it. */
void nw_real_adopt_handle(void *handle);

/* The wrapper of a function the real library lacks: one message, then
 * ncclSystemError. */
ncclResult_t nw_real_missing(enum nw_real_index which, const char *name);

/* Path of the library the table came from ("" if unknown). */
const char *nw_real_library_path(void);

/* The real function `n` (nccl##n), resolving the table on first use. An
 * entry is set once (fill_missing) and never changes: a set one is used at
 * once, with no test of nw_real_ready; a NULL one resolves, then reads again. */
#define NW_REAL_FN(n) ({ \
	__typeof__(nw_real.n) nw_fn_ = __atomic_load_n(&nw_real.n, __ATOMIC_ACQUIRE); \
	if (__builtin_expect(nw_fn_ == NULL, 0)) { \
		nw_real_resolve(); \
		nw_fn_ = __atomic_load_n(&nw_real.n, __ATOMIC_ACQUIRE); \
	} \
	nw_fn_; })

#endif
