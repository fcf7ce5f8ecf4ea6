/* wrap_p2p: ncclSend and ncclRecv. Numbered per (comm, peer, direction):
 * send #k from A to B matches receive #k on B from A. */
#include "record_op.h"

NW_EXPORT ncclResult_t ncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype,
                                int peer, ncclComm_t comm, cudaStream_t stream)
{
	NW_OP_DESC(d, NW_OP_SEND, count, datatype, -1, peer, stream, 0);
	NW_WRAP_OP(Send, nw_op_p2p, &d, sendbuff, count, datatype, peer, comm, stream);
}

NW_EXPORT ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype,
                                int peer, ncclComm_t comm, cudaStream_t stream)
{
	NW_OP_DESC(d, NW_OP_RECV, count, datatype, -1, peer, stream, 0);
	NW_WRAP_OP(Recv, nw_op_p2p, &d, recvbuff, count, datatype, peer, comm, stream);
}
