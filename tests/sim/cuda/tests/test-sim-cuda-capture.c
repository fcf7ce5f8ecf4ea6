/* Stream capture in the simulated CUDA driver: work queued on a captured
 * stream is not run: cuStreamEndCapture moves it into a graph, and it runs
 * only when the graph is instantiated and launched, in capture order on the
 * launch stream: once for plain items (a second launch is refused), again
 * at every launch for replayable ones and host functions; work of a graph
 * never launched is handed to drop() when the graph (or the executable
 * graph) is destroyed. cuStreamIsCapturing and simStreamCapturing report
 * the state; an event recorded during capture is left as it was;
 * synchronising a capturing stream is refused and invalidates the capture;
 * the NULL stream cannot be captured. cuLaunchHostFunc runs in stream
 * order and holds the stream until it returns. cuGraphExecUpdate gives an
 * executable graph the work of a graph of the same topology (as many nodes
 * of the same types) and fails otherwise, leaving it as it was;
 * cuGraphUpload runs nothing. */
#include "check.h"

static void CUDA_CB host_step(void *arg) { run_log_add(arg, 100); }
static void CUDA_CB host_step2(void *arg) { run_log_add(arg, 200); }

/* The same item for every run: its log entry is the proof it ran. */
static void *same_item(void *arg) { return arg; }

int main(void)
{
	setup_device(0);
	struct run_log log = RUN_LOG_INIT;
	struct logged_item items[3] = { { &log, 1, 0 }, { &log, 2, 0 }, { &log, 3, 0 } };
	struct logged_item real = { &log, 4, 0 };
	CUstream s;
	CUevent ev;
	CUgraph graph = NULL;
	CUgraphExec exec2 = NULL;
	CUstreamCaptureStatus status;
	OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	OK(cuEventCreate(&ev, 0));

	OK(cuStreamIsCapturing(s, &status));
	CHECK(status == CU_STREAM_CAPTURE_STATUS_NONE);
	CHECK(simStreamCapturing(s) == 0);
	CHECK_CU(cuStreamEndCapture(s, &graph), CUDA_ERROR_ILLEGAL_STATE);

	OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	OK(cuStreamIsCapturing(s, &status));
	CHECK(status == CU_STREAM_CAPTURE_STATUS_ACTIVE);
	CHECK(simStreamCapturing(s) == 1);
	CHECK_CU(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_ERROR_ILLEGAL_STATE);
	for (int i = 0; i < 3; i++)
		OK(simStreamEnqueue(s, logged_run, logged_drop, &items[i]));
	OK(cuEventRecord(ev, s));      /* succeeds, records nothing */
	OK(cuEventQuery(ev));          /* still "never recorded" */
	OK(simStreamEnqueue(NULL, logged_run, logged_drop, &real)); /* other streams run */
	OK(cuStreamSynchronize(NULL));
	CHECK(run_log_count(&log) == 1 && run_log_at(&log, 0) == 4);

	OK(cuStreamEndCapture(s, &graph));
	CHECK(graph != NULL);
	CHECK(simStreamCapturing(s) == 0);
	OK(cuStreamIsCapturing(s, &status));
	CHECK(status == CU_STREAM_CAPTURE_STATUS_NONE);
	/* captured items are the graph's now: neither run nor dropped */
	CHECK(run_log_count(&log) == 1);
	CUgraphExec exec = NULL;
	OK(cuGraphInstantiate(&exec, graph, 0));
	CHECK(exec != NULL);
	CHECK_CU(cuGraphInstantiate(&exec2, graph, 0), CUDA_ERROR_NOT_SUPPORTED); /* its work is exec's */
	CHECK(run_log_count(&log) == 1);
	OK(cuGraphLaunch(exec, s));
	OK(cuStreamSynchronize(s));
	/* launched: run once, in issue order */
	CHECK(run_log_count(&log) == 4);
	for (int i = 0; i < 3; i++)
		CHECK(run_log_at(&log, 1 + i) == i + 1);
	CHECK_CU(cuGraphLaunch(exec, s), CUDA_ERROR_NOT_SUPPORTED);
	OK(cuGraphExecDestroy(exec));
	CHECK_CU(cuGraphExecDestroy(exec), CUDA_ERROR_INVALID_VALUE);
	OK(cuGraphDestroy(graph));
	CHECK_CU(cuGraphDestroy(graph), CUDA_ERROR_INVALID_VALUE);
	CHECK_CU(cuGraphLaunch(exec, s), CUDA_ERROR_INVALID_VALUE);

	/* after capture the stream runs work again */
	OK(simStreamEnqueue(s, logged_run, logged_drop, &items[0]));
	OK(cuStreamSynchronize(s));
	CHECK(run_log_at(&log, 4) == 1);

	/* a graph destroyed without a launch drops its work; so does an
	 * executable graph destroyed without one */
	OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	OK(simStreamEnqueue(s, logged_run, logged_drop, &items[1]));
	OK(cuStreamEndCapture(s, &graph));
	OK(cuGraphDestroy(graph));
	CHECK(run_log_count(&log) == 6 && run_log_at(&log, 5) == -2);
	OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	OK(simStreamEnqueue(s, logged_run, logged_drop, &items[2]));
	OK(cuStreamEndCapture(s, &graph));
	OK(cuGraphInstantiate(&exec, graph, 0));
	OK(cuGraphDestroy(graph));      /* the work is exec's: nothing dropped */
	CHECK(run_log_count(&log) == 7 - 1);
	OK(cuGraphExecDestroy(exec));
	CHECK(run_log_count(&log) == 7 && run_log_at(&log, 6) == -3);

	/* a host function runs in stream order and holds the stream */
	OK(cuLaunchHostFunc(s, host_step, &log));
	OK(simStreamEnqueue(s, logged_run, logged_drop, &items[0]));
	OK(cuStreamSynchronize(s));
	CHECK(run_log_count(&log) == 9 && run_log_at(&log, 7) == 100 && run_log_at(&log, 8) == 1);
	CHECK_CU(cuLaunchHostFunc(s, NULL, NULL), CUDA_ERROR_INVALID_VALUE);

	/* a graph of replayable work and a host function runs again at every
	 * launch; cuStreamGetCaptureInfo names the graph while it is built */
	{
		struct run_log rlog = RUN_LOG_INIT;
		struct logged_item ritem = { &rlog, 7, 0 };
		CUgraph g = NULL, building = NULL;
		CUgraphExec e = NULL;
		cuuint64_t id = 0;
		const CUgraphNode *deps = NULL;
		const CUgraphEdgeData *edges = NULL;
		size_t ndeps = 1;
		OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
		OK(cuStreamGetCaptureInfo(s, &status, &id, &building, &deps, &edges, &ndeps));
		CHECK(status == CU_STREAM_CAPTURE_STATUS_ACTIVE && id != 0 && building != NULL && ndeps == 0);
		OK(simStreamEnqueueReplayable(s, logged_run, logged_drop, same_item, &ritem));
		OK(cuLaunchHostFunc(s, host_step, &rlog));
		OK(cuStreamEndCapture(s, &g));
		CHECK(g == building);
		OK(cuStreamGetCaptureInfo(s, &status, &id, NULL, NULL, NULL, NULL));
		CHECK(status == CU_STREAM_CAPTURE_STATUS_NONE);
		OK(cuGraphInstantiate(&e, g, 0));
		for (int i = 0; i < 3; i++)
			OK(cuGraphLaunch(e, s));
		OK(cuStreamSynchronize(s));
		CHECK(run_log_count(&rlog) == 6);
		for (int i = 0; i < 3; i++)
			CHECK(run_log_at(&rlog, 2 * i) == 7 && run_log_at(&rlog, 2 * i + 1) == 100);
		OK(cuGraphExecDestroy(e));      /* the templates go: the item is dropped once */
		CHECK(run_log_count(&rlog) == 7 && run_log_at(&rlog, 6) == -7);
		CHECK_CU(cuGraphLaunch(e, s), CUDA_ERROR_INVALID_VALUE);
		OK(cuGraphDestroy(g));
		CHECK_CU(simStreamEnqueueReplayable(s, logged_run, logged_drop, NULL, &ritem), CUDA_ERROR_INVALID_VALUE);
	}

	/* cuGraphExecUpdate: the executable graph of (replayable item 7, host
	 * function) takes the work of a graph of the same shape (item 8,
	 * another host function); other shapes are refused and change nothing */
	{
		struct run_log ulog = RUN_LOG_INIT;
		struct logged_item i7 = { &ulog, 7, 0 }, i8 = { &ulog, 8, 0 }, i9 = { &ulog, 9, 0 };
		CUgraph ga = NULL, gb = NULL, gc = NULL, gd = NULL;
		CUgraphExec e = NULL;
		CUgraphExecUpdateResultInfo info;
		OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
		OK(simStreamEnqueueReplayable(s, logged_run, logged_drop, same_item, &i7));
		OK(cuLaunchHostFunc(s, host_step, &ulog));
		OK(cuStreamEndCapture(s, &ga));
		OK(cuGraphInstantiate(&e, ga, 0));
		OK(cuGraphUpload(e, s));        /* runs nothing */
		OK(cuStreamSynchronize(s));
		CHECK(run_log_count(&ulog) == 0);
		OK(cuGraphLaunch(e, s));
		OK(cuStreamSynchronize(s));
		CHECK(run_log_count(&ulog) == 2 && run_log_at(&ulog, 0) == 7 && run_log_at(&ulog, 1) == 100);

		/* three nodes: the topology changed */
		OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
		for (int i = 0; i < 3; i++)
			OK(cuLaunchHostFunc(s, host_step2, &ulog));
		OK(cuStreamEndCapture(s, &gb));
		memset(&info, 0xff, sizeof info);
		CHECK_CU(cuGraphExecUpdate(e, gb, &info), CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
		CHECK(info.result == CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED && info.errorFromNode == NULL);
		/* two nodes in the other order: a node's type changed */
		OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
		OK(cuLaunchHostFunc(s, host_step2, &ulog));
		OK(simStreamEnqueueReplayable(s, logged_run, logged_drop, same_item, &i9));
		OK(cuStreamEndCapture(s, &gc));
		CHECK_CU(cuGraphExecUpdate(e, gc, &info), CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
		CHECK(info.result == CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED);
		CHECK_CU(cuGraphExecUpdate(e, (CUgraph)&ulog, &info), CUDA_ERROR_INVALID_VALUE);
		CHECK(info.result == CU_GRAPH_EXEC_UPDATE_ERROR);
		CHECK_CU(cuGraphExecUpdate((CUgraphExec)&ulog, gc, &info), CUDA_ERROR_INVALID_VALUE);
		CHECK(run_log_count(&ulog) == 2); /* nothing ran, nothing was dropped */
		OK(cuGraphLaunch(e, s));          /* the exec as it was */
		OK(cuStreamSynchronize(s));
		CHECK(run_log_count(&ulog) == 4 && run_log_at(&ulog, 2) == 7 && run_log_at(&ulog, 3) == 100);

		/* the same shape: updated (through the 10.2 ABI, as cuGetProcAddress
		 * hands it to a program built for CUDA 11) */
		CUresult (*update_v1)(CUgraphExec, CUgraph, CUgraphNode *, CUgraphExecUpdateResult *) = NULL;
		CUdriverProcAddressQueryResult found;
		OK(cuGetProcAddress("cuGraphExecUpdate", (void **)&update_v1, 11080, CU_GET_PROC_ADDRESS_DEFAULT, &found));
		CHECK(update_v1 != NULL && found == CU_GET_PROC_ADDRESS_SUCCESS);
		OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
		OK(simStreamEnqueueReplayable(s, logged_run, logged_drop, same_item, &i8));
		OK(cuLaunchHostFunc(s, host_step2, &ulog));
		OK(cuStreamEndCapture(s, &gd));
		CUgraphNode node = (CUgraphNode)&ulog;
		CUgraphExecUpdateResult result = CU_GRAPH_EXEC_UPDATE_ERROR;
		OK(update_v1(e, gd, &node, &result));
		CHECK(result == CU_GRAPH_EXEC_UPDATE_SUCCESS && node == NULL);
		CHECK(run_log_count(&ulog) == 5 && run_log_at(&ulog, 4) == -7); /* the old template goes */
		OK(cuGraphDestroy(gd));           /* the work is the exec's */
		for (int i = 0; i < 2; i++)
			OK(cuGraphLaunch(e, s));
		OK(cuStreamSynchronize(s));
		CHECK(run_log_count(&ulog) == 9);
		for (int i = 0; i < 2; i++)
			CHECK(run_log_at(&ulog, 5 + 2 * i) == 8 && run_log_at(&ulog, 6 + 2 * i) == 200);
		/* the simulation uses a graph's work once: refused, not a silent no-op */
		CHECK_CU(cuGraphExecUpdate(e, ga, &info), CUDA_ERROR_NOT_SUPPORTED);
		OK(cuGraphExecDestroy(e));
		CHECK(run_log_count(&ulog) == 10 && run_log_at(&ulog, 9) == -8);
		CHECK_CU(cuGraphUpload(e, s), CUDA_ERROR_INVALID_VALUE);
		OK(cuGraphDestroy(ga));
		OK(cuGraphDestroy(gb));
		OK(cuGraphDestroy(gc));           /* never used: drops its item */
		CHECK(run_log_count(&ulog) == 11 && run_log_at(&ulog, 10) == -9);
	}

	/* synchronising during capture is refused and invalidates it */
	OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
	OK(simStreamEnqueue(s, logged_run, logged_drop, &items[1]));
	CHECK_CU(cuStreamSynchronize(s), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	OK(cuStreamIsCapturing(s, &status));
	CHECK(status == CU_STREAM_CAPTURE_STATUS_INVALIDATED);
	graph = (CUgraph)&log;
	CHECK_CU(cuStreamEndCapture(s, &graph), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	CHECK(graph == NULL);
	CHECK(run_log_at(&log, 9) == -2);

	/* the NULL (legacy) stream cannot be captured */
	CHECK_CU(cuStreamBeginCapture(NULL, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	CHECK_CU(cuStreamBeginCapture(s, (CUstreamCaptureMode)7), CUDA_ERROR_INVALID_VALUE);

	/* destroying a capturing stream drops what it captured */
	OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
	OK(simStreamEnqueue(s, logged_run, logged_drop, &items[2]));
	OK(cuStreamDestroy(s));
	CHECK(run_log_count(&log) == 11 && run_log_at(&log, 10) == -3);
	OK(cuEventDestroy(ev));
	printf("ok\n");
	return 0;
}
