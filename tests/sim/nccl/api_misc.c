/* The simulated NCCL's small calls: version, error strings, unique ids,
 * memory and buffer/window registration (trivial: device memory is host
 * memory), PreMulSum reduction operators, ncclResetDebugInit.
 */
#include "sim_nccl.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

ncclResult_t pncclGetVersion(int *version)
{
	if (!version) return sim_error(ncclInvalidArgument, "version is NULL");
	*version = NCCL_VERSION_CODE;
	return ncclSuccess;
}
NCCLSIM_ALIAS(ncclGetVersion);

/* The same strings as the real library (checked against libnccl 2.28.9). */
const char *pncclGetErrorString(ncclResult_t code)
{
	switch (code) {
	case ncclSuccess: return "no error";
	case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
	case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
	case ncclInternalError: return "internal error - please report this issue to the NCCL developers";
	case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
	case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
	case ncclRemoteError: return "remote process exited or there was a network error";
	case ncclInProgress: return "NCCL operation in progress";
	default: return "unknown result code";
	}
}
NCCLSIM_ALIAS(ncclGetErrorString);

ncclResult_t pncclGetUniqueId(ncclUniqueId *uniqueId)
{
	if (!uniqueId) return sim_error(ncclInvalidArgument, "uniqueId is NULL");
	if (SIM_NULL()) { memset(uniqueId, 0x5a, sizeof *uniqueId); return ncclSuccess; }
	size_t got = 0;
	while (got < sizeof uniqueId->internal) {
		ssize_t n = getrandom(uniqueId->internal + got, sizeof uniqueId->internal - got, 0);
		if (n <= 0) break;
		got += n;
	}
	if (got < sizeof uniqueId->internal) {  /* no getrandom: mix pid and time */
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t h = sim_fnv1a(SIM_FNV_OFFSET, &ts, sizeof ts);
		pid_t pid = getpid();
		h = sim_fnv1a(h, &pid, sizeof pid);
		for (size_t i = 0; i < sizeof uniqueId->internal; i++) {
			h = sim_fnv1a(h, &i, sizeof i);
			uniqueId->internal[i] = (char)h;
		}
	}
	return ncclSuccess;
}
NCCLSIM_ALIAS(ncclGetUniqueId);

/* Deprecated in nccl.h, still exported by the real library. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
void pncclResetDebugInit(void) {}
NCCLSIM_ALIAS(ncclResetDebugInit);
#pragma GCC diagnostic pop

ncclResult_t pncclMemAlloc(void **ptr, size_t size)
{
	if (!ptr) return sim_error(ncclInvalidArgument, "ptr is NULL");
	if (size == 0) { *ptr = NULL; return ncclSuccess; }
	void *p = NULL;
	if (posix_memalign(&p, 4096, size)) return sim_error(ncclSystemError, "cannot allocate %zu bytes", size);
	memset(p, 0, size);
	*ptr = p;
	return ncclSuccess;
}
NCCLSIM_ALIAS(ncclMemAlloc);

ncclResult_t pncclMemFree(void *ptr)
{
	free(ptr);
	return ncclSuccess;
}
NCCLSIM_ALIAS(ncclMemFree);

ncclResult_t pncclCommRegister(const ncclComm_t comm, void *buff, size_t size, void **handle)
{
	if (!sim_comm_valid(comm) || !handle) return sim_error(ncclInvalidArgument, "invalid comm or handle pointer");
	(void)size;
	*handle = buff ? buff : (void *)comm;  /* any non-NULL token */
	return ncclSuccess;
}
NCCLSIM_ALIAS(ncclCommRegister);

ncclResult_t pncclCommDeregister(const ncclComm_t comm, void *handle)
{
	if (!sim_comm_valid(comm) || !handle) return sim_error(ncclInvalidArgument, "invalid comm or handle");
	return ncclSuccess;
}
NCCLSIM_ALIAS(ncclCommDeregister);

struct ncclWindow_vidmem { void *buff; size_t size; int flags; };

ncclResult_t pncclCommWindowRegister(ncclComm_t comm, void *buff, size_t size, ncclWindow_t *win, int winFlags)
{
	if (!sim_comm_valid(comm) || !win) return sim_error(ncclInvalidArgument, "invalid comm or win pointer");
	struct ncclWindow_vidmem *w = calloc(1, sizeof *w);
	if (!w) return sim_error(ncclSystemError, "out of memory");
	w->buff = buff;
	w->size = size;
	w->flags = winFlags;
	*win = w;
	return ncclSuccess;
}
NCCLSIM_ALIAS(ncclCommWindowRegister);

ncclResult_t pncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win)
{
	if (!sim_comm_valid(comm)) return sim_error(ncclInvalidArgument, "invalid comm");
	free(win);
	return ncclSuccess;
}
NCCLSIM_ALIAS(ncclCommWindowDeregister);

ncclResult_t pncclRedOpCreatePreMulSum(ncclRedOp_t *op, void *scalar, ncclDataType_t datatype,
                                       ncclScalarResidence_t residence, ncclComm_t comm)
{
	if (!op || !scalar || !sim_comm_valid(comm)) return sim_error(ncclInvalidArgument, "invalid op, scalar or comm");
	if ((int)datatype < 0 || datatype >= ncclNumTypes) return sim_error(ncclInvalidArgument, "invalid datatype %d", (int)datatype);
	if (residence != ncclScalarDevice && residence != ncclScalarHostImmediate)
		return sim_error(ncclInvalidArgument, "invalid residence %d", (int)residence);
	int n = sizeof comm->premul / sizeof comm->premul[0];
	pthread_mutex_lock(&comm->mu);
	int i;
	for (i = 0; i < n && comm->premul[i].used; i++) {}
	if (i < n) {
		struct sim_premul *p = &comm->premul[i];
		memset(p, 0, sizeof *p);
		p->used = 1;
		p->dtype = datatype;
		p->residence = residence;
		if (residence == ncclScalarHostImmediate) memcpy(p->value, scalar, sim_dtype_size(datatype));
		else p->devptr = scalar;
	}
	pthread_mutex_unlock(&comm->mu);
	if (i == n) return sim_error(ncclInvalidUsage, "too many reduction operators on this comm");
	*op = (ncclRedOp_t)(ncclNumOps + i);
	return ncclSuccess;
}
NCCLSIM_ALIAS(ncclRedOpCreatePreMulSum);

ncclResult_t pncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm)
{
	if (!sim_comm_valid(comm)) return sim_error(ncclInvalidArgument, "invalid comm");
	int i = (int)op - ncclNumOps, n = sizeof comm->premul / sizeof comm->premul[0];
	if ((int)op < ncclNumOps || i >= n) return sim_error(ncclInvalidArgument, "reduction operation %d is not a user one", (int)op);
	pthread_mutex_lock(&comm->mu);
	int used = comm->premul[i].used;
	comm->premul[i].used = 0;
	pthread_mutex_unlock(&comm->mu);
	return used ? ncclSuccess : sim_error(ncclInvalidArgument, "reduction operation %d was not created", (int)op);
}
NCCLSIM_ALIAS(ncclRedOpDestroy);
