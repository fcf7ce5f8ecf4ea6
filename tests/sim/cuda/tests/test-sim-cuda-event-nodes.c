/* Event-record nodes in the simulated CUDA driver, as in CUDA:
 * cuEventRecordWithFlags(CU_EVENT_RECORD_EXTERNAL) during capture adds a
 * node that every launch of the graph replays, re-recording the event at
 * that point of the graph (in capture order), so cuEventQuery and
 * cuEventSynchronize see the newest launch; the external flag outside
 * capture is refused; a plain cuEventRecord during capture adds no node;
 * unknown flags are refused. */
#include "check.h"

static void *same_gate(void *arg) { return arg; }

int main(void)
{
	setup_device(0);
	CUstream s;
	CUevent before, after, plain;
	CUgraph graph = NULL;
	CUgraphExec exec = NULL;
	struct gate gate = GATE_INIT;
	OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	OK(cuEventCreate(&before, CU_EVENT_DISABLE_TIMING));
	OK(cuEventCreate(&after, CU_EVENT_DISABLE_TIMING));
	OK(cuEventCreate(&plain, CU_EVENT_DISABLE_TIMING));

	CHECK_CU(cuEventRecordWithFlags(before, s, CU_EVENT_RECORD_EXTERNAL), CUDA_ERROR_INVALID_VALUE);
	CHECK_CU(cuEventRecordWithFlags(before, s, 0x10), CUDA_ERROR_INVALID_VALUE);
	OK(cuEventRecordWithFlags(before, s, CU_EVENT_RECORD_DEFAULT));   /* a plain record */
	OK(cuStreamSynchronize(s));

	OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	OK(cuEventRecordWithFlags(before, s, CU_EVENT_RECORD_EXTERNAL));
	OK(simStreamEnqueueReplayable(s, gate_item, NULL, same_gate, &gate));
	OK(cuEventRecordWithFlags(after, s, CU_EVENT_RECORD_EXTERNAL));
	OK(cuEventRecord(plain, s));   /* no node */
	OK(cuStreamEndCapture(s, &graph));
	OK(cuEventQuery(before));      /* capture recorded nothing */
	OK(cuEventQuery(after));
	OK(cuGraphInstantiate(&exec, graph, 0));

	for (int launch = 1; launch <= 2; launch++) {
		OK(cuGraphLaunch(exec, s));
		gate_wait_entered(&gate, launch);
		OK(cuEventSynchronize(before));              /* the node before the gate ran */
		CHECK_CU(cuEventQuery(after), CUDA_ERROR_NOT_READY);   /* the one after waits */
		OK(cuEventQuery(plain));                     /* never recorded by the graph */
		gate_open(&gate);
		OK(cuEventSynchronize(after));
		OK(cuStreamSynchronize(s));
		pthread_mutex_lock(&gate.mutex);
		gate.open = 0;   /* the next launch waits again */
		pthread_mutex_unlock(&gate.mutex);
	}
	OK(cuGraphExecDestroy(exec));
	OK(cuGraphDestroy(graph));
	OK(cuEventDestroy(before));
	OK(cuEventDestroy(after));
	OK(cuEventDestroy(plain));
	OK(cuStreamDestroy(s));
	return 0;
}
