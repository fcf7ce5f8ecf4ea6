/* A work item that fails faults its context, like an illegal address on a
 * GPU: from then on queries, synchronisation, event records, copies and
 * simStreamEnqueue in that context return the error, and work queued
 * behind the failing item is dropped (handed to drop, never run). Another
 * device's context is not affected. */
#include "check.h"

int main(void)
{
	CUcontext ctx1;
	CUdevice dev1;
	CUcontext ctx0 = setup_device(0);
	OK(cuDeviceGet(&dev1, 1));
	OK(cuDevicePrimaryCtxRetain(&ctx1, dev1));

	struct gate gate = GATE_INIT, gate2 = GATE_INIT;
	struct run_log log = RUN_LOG_INIT;
	struct logged_item ok1 = { &log, 1, CUDA_SUCCESS };
	struct logged_item bad = { &log, 2, CUDA_ERROR_ILLEGAL_ADDRESS };
	struct logged_item later[2] = { { &log, 3, CUDA_SUCCESS }, { &log, 4, CUDA_SUCCESS } };
	struct logged_item other = { &log, 5, CUDA_SUCCESS };

	CUstream s, s2;
	CUevent before, after;
	CUdeviceptr buf;
	char host[16] = "0123456789";
	OK(cuStreamCreate(&s, 0));
	OK(cuStreamCreate(&s2, 0));
	OK(cuEventCreate(&before, 0));
	OK(cuEventCreate(&after, 0));
	OK(cuMemAlloc(&buf, sizeof host));

	/* s2 holds an item of its own until after the fault */
	OK(simStreamEnqueue(s2, gate_item, NULL, &gate2));
	OK(simStreamEnqueue(s2, logged_run, logged_drop, &other));
	OK(simStreamEnqueue(s, logged_run, logged_drop, &ok1));
	OK(cuEventRecord(before, s));
	OK(simStreamEnqueue(s, gate_item, NULL, &gate));
	OK(simStreamEnqueue(s, logged_run, logged_drop, &bad));
	for (int i = 0; i < 2; i++)
		OK(simStreamEnqueue(s, logged_run, logged_drop, &later[i]));
	OK(cuEventRecord(after, s));
	OK(cuEventSynchronize(before));
	gate_wait_entered(&gate, 1);
	gate_wait_entered(&gate2, 1);
	OK(cuEventQuery(before)); /* no fault yet */
	gate_open(&gate);

	const CUresult fault = CUDA_ERROR_ILLEGAL_ADDRESS;
	CHECK_CU(cuStreamSynchronize(s), fault);
	CHECK_CU(cuStreamQuery(s), fault);
	CHECK_CU(cuStreamSynchronize(s2), fault); /* at once: faulted */
	gate_open(&gate2);
	CHECK_CU(cuStreamQuery(NULL), fault);
	CHECK_CU(cuEventQuery(after), fault);
	CHECK_CU(cuEventQuery(before), fault); /* sticky: even completed events */
	CHECK_CU(cuEventSynchronize(after), fault);
	CHECK_CU(cuEventRecord(before, s), fault);
	CHECK_CU(cuCtxSynchronize(), fault);
	CHECK_CU(cuMemcpyHtoD(buf, host, sizeof host), fault);
	CHECK_CU(cuMemcpyDtoH(host, buf, sizeof host), fault);
	CHECK_CU(simStreamEnqueue(s, logged_run, logged_drop, &ok1), fault);
	CHECK_CU(simStreamEnqueue(NULL, logged_run, logged_drop, &ok1), fault);

	/* what ran: 1 and 2 (the failing one); 3, 4 on s and 5 on s2 were
	 * queued behind the fault and dropped */
	run_log_wait_count(&log, 5);
	CHECK(run_log_count(&log) == 5);
	CHECK(run_log_at(&log, 0) == 1);
	int seen_bad = 0, dropped = 0;
	for (int i = 1; i < 5; i++) {
		int id = run_log_at(&log, i);
		if (id == 2)
			seen_bad++;
		else if (id == -3 || id == -4 || id == -5)
			dropped++;
	}
	CHECK(seen_bad == 1 && dropped == 3);

	/* the other device's context still works */
	OK(cuCtxPushCurrent(ctx1));
	CUstream t;
	CUevent e;
	struct logged_item fine = { &log, 9, CUDA_SUCCESS };
	OK(cuStreamCreate(&t, 0));
	OK(cuEventCreate(&e, 0));
	OK(simStreamEnqueue(t, logged_run, logged_drop, &fine));
	OK(cuEventRecord(e, t));
	OK(cuEventSynchronize(e));
	OK(cuStreamSynchronize(t));
	OK(cuCtxSynchronize());
	CHECK(run_log_at(&log, 5) == 9);
	CUcontext popped;
	OK(cuCtxPopCurrent(&popped));
	CHECK(popped == ctx1);
	CUcontext cur;
	OK(cuCtxGetCurrent(&cur));
	CHECK(cur == ctx0);
	printf("ok\n");
	return 0;
}
