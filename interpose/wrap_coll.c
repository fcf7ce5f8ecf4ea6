/* wrap_coll: the collectives. Each records one op numbered by the comm's
 * collective counter, then forwards its arguments untouched. */
#include "record_op.h"

NW_EXPORT ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
                                     ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                     cudaStream_t stream)
{
	NW_OP_DESC(d, NW_OP_ALLREDUCE, count, datatype, op, -1, stream, sendbuff == recvbuff);
	NW_WRAP_OP(AllReduce, nw_op_coll, &d, sendbuff, recvbuff, count, datatype, op, comm, stream);
}

NW_EXPORT ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count,
                                     ncclDataType_t datatype, int root, ncclComm_t comm,
                                     cudaStream_t stream)
{
	NW_OP_DESC(d, NW_OP_BROADCAST, count, datatype, -1, root, stream, sendbuff == recvbuff);
	NW_WRAP_OP(Broadcast, nw_op_coll, &d, sendbuff, recvbuff, count, datatype, root, comm, stream);
}

NW_EXPORT ncclResult_t ncclBcast(void *buff, size_t count, ncclDataType_t datatype, int root,
                                 ncclComm_t comm, cudaStream_t stream)
{
	NW_OP_DESC(d, NW_OP_BCAST, count, datatype, -1, root, stream, 1);
	NW_WRAP_OP(Bcast, nw_op_coll, &d, buff, count, datatype, root, comm, stream);
}

NW_EXPORT ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count,
                                  ncclDataType_t datatype, ncclRedOp_t op, int root,
                                  ncclComm_t comm, cudaStream_t stream)
{
	NW_OP_DESC(d, NW_OP_REDUCE, count, datatype, op, root, stream, sendbuff == recvbuff);
	NW_WRAP_OP(Reduce, nw_op_coll, &d, sendbuff, recvbuff, count, datatype, op, root, comm, stream);
}

NW_EXPORT ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
                                     ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream)
{
	NW_OP_DESC(d, NW_OP_ALLGATHER, sendcount, datatype, -1, -1, stream, sendbuff == recvbuff);
	NW_WRAP_OP(AllGather, nw_op_coll, &d, sendbuff, recvbuff, sendcount, datatype, comm, stream);
}

NW_EXPORT ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
                                         ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                         cudaStream_t stream)
{
	NW_OP_DESC(d, NW_OP_REDUCESCATTER, recvcount, datatype, op, -1, stream, sendbuff == recvbuff);
	NW_WRAP_OP(ReduceScatter, nw_op_coll, &d, sendbuff, recvbuff, recvcount, datatype, op, comm, stream);
}

NW_EXPORT ncclResult_t ncclAlltoAll(const void *sendbuff, void *recvbuff, size_t count,
                                    ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream)
{
	NW_OP_DESC(d, NW_OP_ALLTOALL, count, datatype, -1, -1, stream, sendbuff == recvbuff);
	NW_WRAP_OP(AlltoAll, nw_op_coll, &d, sendbuff, recvbuff, count, datatype, comm, stream);
}

NW_EXPORT ncclResult_t ncclGather(const void *sendbuff, void *recvbuff, size_t count,
                                  ncclDataType_t datatype, int root, ncclComm_t comm,
                                  cudaStream_t stream)
{
	NW_OP_DESC(d, NW_OP_GATHER, count, datatype, -1, root, stream, sendbuff == recvbuff);
	NW_WRAP_OP(Gather, nw_op_coll, &d, sendbuff, recvbuff, count, datatype, root, comm, stream);
}

NW_EXPORT ncclResult_t ncclScatter(const void *sendbuff, void *recvbuff, size_t count,
                                   ncclDataType_t datatype, int root, ncclComm_t comm,
                                   cudaStream_t stream)
{
	NW_OP_DESC(d, NW_OP_SCATTER, count, datatype, -1, root, stream, sendbuff == recvbuff);
	NW_WRAP_OP(Scatter, nw_op_coll, &d, sendbuff, recvbuff, count, datatype, root, comm, stream);
}
