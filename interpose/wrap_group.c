/* wrap_group: ncclGroupStart, ncclGroupEnd, ncclGroupSimulateEnd. */
#include "groups.h"
#include "record.h"

NW_EXPORT ncclResult_t ncclGroupStart(void)
{
	NW_WRAP_BEGIN(GroupStart);
	uint64_t t1 = nw_group_enter(NW_CALLER);
	ncclResult_t r = NW_GUARDED(real_());
	nw_group_entered(t1, r);
	return r;
}

NW_EXPORT ncclResult_t ncclGroupEnd(void)
{
	NW_WRAP_BEGIN(GroupEnd);
	uint64_t t1 = nw_group_leave(NW_CALLER, 0);
	ncclResult_t r = NW_GUARDED(real_());
	nw_group_left(t1, r, 0);
	return r;
}

/* Not a launch: the group's ops are discarded and their numbers given back. */
NW_EXPORT ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t *simInfo)
{
	NW_WRAP_BEGIN(GroupSimulateEnd, simInfo);
	uint64_t t1 = nw_group_leave(NW_CALLER, 1);
	ncclResult_t r = NW_GUARDED(real_(simInfo));
	nw_group_left(t1, r, 1);
	return r;
}
