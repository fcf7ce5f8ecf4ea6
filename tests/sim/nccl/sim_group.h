/* Group state of the simulated NCCL (ops.c): ncclGroupStart/End nest per
 * thread; inside a group, operations and communicator inits are collected
 * and launched (or waited for) at the outermost ncclGroupEnd.
 */
#ifndef NCCLSIM_SIM_GROUP_H
#define NCCLSIM_SIM_GROUP_H

#include "sim_nccl.h"

int sim_group_depth(void);
/* An init called inside a group: joined already, waited for at GroupEnd. */
void sim_group_add_init(ncclComm_t comm);
/* A split called inside a group: running in the background, waited for at
 * GroupEnd on `comm` (the child, or the parent when it gets none), as NCCL defers a grouped split (one
 * thread splitting the comms of several devices). */
void sim_group_add_job(ncclComm_t comm);
/* comm.c: wait for comm's background job; its result. */
ncclResult_t sim_comm_job_result(ncclComm_t comm);
/* comm.c: ncclSuccess if `comm` may take new operations, else the error. */
ncclResult_t sim_comm_check_usable(ncclComm_t comm);

#endif /* NCCLSIM_SIM_GROUP_H */
