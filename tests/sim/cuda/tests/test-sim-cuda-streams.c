/* Streams and events of the simulated CUDA driver, with real threads:
 * in-order execution, an event recorded behind a blocked item stays
 * NOT_READY until the item is released, streams independent of each other,
 * the NULL stream, cuStreamWaitEvent, re-recording, synchronisation calls
 * that block until the work is done, and destroy with pending work. */
#include "check.h"

static void test_event_behind_blocked_item(void)
{
	struct gate gate = GATE_INIT;
	CUstream s;
	CUevent ev;
	OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	OK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
	OK(cuEventQuery(ev)); /* never recorded: complete, as in the driver */
	OK(simStreamEnqueue(s, gate_item, NULL, &gate));
	OK(cuEventRecord(ev, s));
	gate_wait_entered(&gate, 1);
	for (int i = 0; i < 3; i++) { /* it stays pending, however often asked */
		CHECK_CU(cuEventQuery(ev), CUDA_ERROR_NOT_READY);
		CHECK_CU(cuStreamQuery(s), CUDA_ERROR_NOT_READY);
	}
	gate_open(&gate);
	OK(cuEventSynchronize(ev));
	OK(cuEventQuery(ev));
	OK(cuStreamQuery(s));
	OK(cuEventDestroy(ev));
	OK(cuStreamDestroy(s));
}

static void test_in_order_and_independent(void)
{
	struct gate gate = GATE_INIT;
	struct run_log log = RUN_LOG_INIT;
	struct logged_item a[3] = { { &log, 1, 0 }, { &log, 2, 0 }, { &log, 3, 0 } };
	struct logged_item b = { &log, 10, 0 };
	CUstream sa, sb;
	CUevent ea, eb;
	OK(cuStreamCreate(&sa, 0));
	OK(cuStreamCreate(&sb, 0));
	OK(cuEventCreate(&ea, 0));
	OK(cuEventCreate(&eb, 0));

	OK(simStreamEnqueue(sa, gate_item, NULL, &gate));
	for (int i = 0; i < 3; i++)
		OK(simStreamEnqueue(sa, logged_run, logged_drop, &a[i]));
	OK(cuEventRecord(ea, sa));
	/* stream b is not held up by stream a's blocked item */
	OK(simStreamEnqueue(sb, logged_run, logged_drop, &b));
	OK(cuEventRecord(eb, sb));
	OK(cuStreamSynchronize(sb));
	OK(cuEventQuery(eb));
	CHECK(run_log_count(&log) == 1 && run_log_at(&log, 0) == 10);
	CHECK_CU(cuEventQuery(ea), CUDA_ERROR_NOT_READY);

	gate_open(&gate);
	OK(cuStreamSynchronize(sa));
	OK(cuEventQuery(ea));
	CHECK(run_log_count(&log) == 4);
	for (int i = 0; i < 3; i++)
		CHECK(run_log_at(&log, 1 + i) == i + 1); /* issue order */
	OK(cuEventDestroy(ea));
	OK(cuEventDestroy(eb));
	OK(cuStreamDestroy(sa));
	OK(cuStreamDestroy(sb));
}

static void test_null_stream(void)
{
	struct gate gate = GATE_INIT;
	CUevent ev;
	OK(cuEventCreate(&ev, 0));
	OK(simStreamEnqueue(NULL, gate_item, NULL, &gate));
	OK(cuEventRecord(ev, NULL));
	gate_wait_entered(&gate, 1);
	CHECK_CU(cuEventQuery(ev), CUDA_ERROR_NOT_READY);
	CHECK_CU(cuStreamQuery(NULL), CUDA_ERROR_NOT_READY);
	CHECK_CU(cuStreamQuery(CU_STREAM_LEGACY), CUDA_ERROR_NOT_READY); /* the same stream */
	CHECK(simStreamDevice(NULL) == 0);
	CHECK(simStreamCapturing(NULL) == 0);
	CUcontext current, of_stream;
	OK(cuCtxGetCurrent(&current));
	OK(cuStreamGetCtx(NULL, &of_stream));
	CHECK(current == of_stream);
	gate_open(&gate);
	OK(cuStreamSynchronize(NULL));
	OK(cuEventQuery(ev));
	OK(cuCtxSynchronize());
	CHECK_CU(cuStreamDestroy(NULL), CUDA_ERROR_INVALID_HANDLE);
	OK(cuEventDestroy(ev));
}

/* cuStreamWaitEvent: stream b waits for the record of an event on a. */
static void test_stream_wait_event(void)
{
	struct gate gate = GATE_INIT;
	struct run_log log = RUN_LOG_INIT;
	struct logged_item after = { &log, 7, 0 };
	CUstream sa, sb;
	CUevent ev, eb;
	OK(cuStreamCreate(&sa, 0));
	OK(cuStreamCreate(&sb, 0));
	OK(cuEventCreate(&ev, 0));
	OK(cuEventCreate(&eb, 0));
	OK(cuStreamWaitEvent(sb, ev, 0)); /* never recorded: no wait */
	OK(simStreamEnqueue(sa, gate_item, NULL, &gate));
	OK(cuEventRecord(ev, sa));
	OK(cuStreamWaitEvent(sb, ev, 0));
	OK(simStreamEnqueue(sb, logged_run, NULL, &after));
	OK(cuEventRecord(eb, sb));
	/* re-recording ev on an idle stream does not release b's wait, which is
	 * for the record it saw */
	CUstream sc;
	OK(cuStreamCreate(&sc, 0));
	OK(cuEventRecord(ev, sc));
	OK(cuEventSynchronize(ev)); /* the new record is reached at once */
	OK(cuEventQuery(ev));
	gate_wait_entered(&gate, 1);
	CHECK_CU(cuEventQuery(eb), CUDA_ERROR_NOT_READY);
	CHECK_CU(cuStreamQuery(sb), CUDA_ERROR_NOT_READY);
	CHECK(run_log_count(&log) == 0);
	gate_open(&gate);
	OK(cuEventSynchronize(eb));
	CHECK(run_log_count(&log) == 1);
	OK(cuStreamDestroy(sc));
	OK(cuStreamDestroy(sa));
	OK(cuStreamDestroy(sb));
	OK(cuEventDestroy(ev));
	OK(cuEventDestroy(eb));
}

/* Re-recording moves the event to the new point: a record behind a blocked
 * item after a completed one makes the event NOT_READY again. */
static void test_rerecord(void)
{
	struct gate gate = GATE_INIT;
	CUstream s;
	CUevent ev;
	OK(cuStreamCreate(&s, 0));
	OK(cuEventCreate(&ev, 0));
	OK(cuEventRecord(ev, s));
	OK(cuEventSynchronize(ev));
	OK(simStreamEnqueue(s, gate_item, NULL, &gate));
	OK(cuEventRecord(ev, s));
	gate_wait_entered(&gate, 1);
	CHECK_CU(cuEventQuery(ev), CUDA_ERROR_NOT_READY);
	gate_open(&gate);
	OK(cuEventSynchronize(ev));
	OK(cuEventDestroy(ev));
	OK(cuStreamDestroy(s));
}

/* A thread sleeping in cuEventSynchronize / cuStreamSynchronize returns
 * only after the blocked item was released. */
struct sync_args {
	CUcontext ctx;
	CUevent ev;
	CUstream s;
	struct gate *gate;
	CUresult event_result, stream_result;
	int released_before_return;
};

static void *sync_thread(void *p)
{
	struct sync_args *a = p;
	cuCtxSetCurrent(a->ctx);
	a->event_result = cuEventSynchronize(a->ev);
	a->stream_result = cuStreamSynchronize(a->s);
	pthread_mutex_lock(&a->gate->mutex);
	a->released_before_return = a->gate->open;
	pthread_mutex_unlock(&a->gate->mutex);
	return NULL;
}

static void test_synchronize_blocks(CUcontext ctx)
{
	struct gate gate = GATE_INIT;
	CUstream s;
	CUevent ev;
	OK(cuStreamCreate(&s, 0));
	OK(cuEventCreate(&ev, CU_EVENT_BLOCKING_SYNC));
	OK(simStreamEnqueue(s, gate_item, NULL, &gate));
	OK(cuEventRecord(ev, s));
	struct sync_args a = { ctx, ev, s, &gate, CUDA_ERROR_UNKNOWN, CUDA_ERROR_UNKNOWN, 0 };
	pthread_t t;
	CHECK(pthread_create(&t, NULL, sync_thread, &a) == 0);
	gate_wait_entered(&gate, 1);
	gate_open(&gate);
	pthread_join(t, NULL);
	OK(a.event_result);
	OK(a.stream_result);
	CHECK(a.released_before_return);
	OK(cuEventDestroy(ev));
	OK(cuStreamDestroy(s));
}

/* cuStreamDestroy returns at once; queued work still runs, and events
 * recorded behind it still complete. Later use of the handle is refused. */
static void test_destroy_with_pending_work(void)
{
	struct gate gate = GATE_INIT;
	struct run_log log = RUN_LOG_INIT;
	struct logged_item after = { &log, 5, 0 };
	CUstream s;
	CUevent ev;
	OK(cuStreamCreate(&s, 0));
	OK(cuEventCreate(&ev, 0));
	OK(simStreamEnqueue(s, gate_item, NULL, &gate));
	OK(simStreamEnqueue(s, logged_run, logged_drop, &after));
	OK(cuEventRecord(ev, s));
	OK(cuStreamDestroy(s));
	CHECK_CU(simStreamEnqueue(s, logged_run, NULL, &after), CUDA_ERROR_INVALID_HANDLE);
	CHECK_CU(cuStreamQuery(s), CUDA_ERROR_INVALID_HANDLE);
	CHECK_CU(cuStreamDestroy(s), CUDA_ERROR_INVALID_HANDLE);
	CHECK(simStreamDevice(s) == -1);
	gate_wait_entered(&gate, 1);
	CHECK_CU(cuEventQuery(ev), CUDA_ERROR_NOT_READY);
	gate_open(&gate);
	OK(cuEventSynchronize(ev));
	CHECK(run_log_count(&log) == 1 && run_log_at(&log, 0) == 5);
	OK(cuEventDestroy(ev));
	CHECK_CU(cuEventQuery(ev), CUDA_ERROR_INVALID_HANDLE);
	CHECK_CU(cuEventDestroy(ev), CUDA_ERROR_INVALID_HANDLE);
}

/* Destroying an event whose record is still pending is fine too. */
static void test_destroy_event_pending(void)
{
	struct gate gate = GATE_INIT;
	CUstream s;
	CUevent ev;
	OK(cuStreamCreate(&s, 0));
	OK(cuEventCreate(&ev, 0));
	OK(simStreamEnqueue(s, gate_item, NULL, &gate));
	OK(cuEventRecord(ev, s));
	OK(cuEventDestroy(ev));
	gate_open(&gate);
	OK(cuStreamSynchronize(s));
	OK(cuStreamDestroy(s));
}

/* Many threads on many streams at once (for the thread sanitizer). */
struct storm_args {
	CUcontext ctx;
	int id;
};

static CUresult count_item(void *arg)
{
	atomic_int *n = arg;
	atomic_fetch_add(n, 1);
	return CUDA_SUCCESS;
}

static atomic_int storm_count;

static void *storm_thread(void *p)
{
	struct storm_args *a = p;
	cuCtxSetCurrent(a->ctx);
	CUstream s;
	CUevent ev;
	if (cuStreamCreate(&s, 0) != CUDA_SUCCESS || cuEventCreate(&ev, 0) != CUDA_SUCCESS)
		return (void *)1;
	for (int i = 0; i < 200; i++) {
		if (simStreamEnqueue(i % 3 ? s : NULL, count_item, NULL, &storm_count) != CUDA_SUCCESS ||
		    cuEventRecord(ev, s) != CUDA_SUCCESS)
			return (void *)1;
		CUresult q = cuEventQuery(ev);
		if (q != CUDA_SUCCESS && q != CUDA_ERROR_NOT_READY)
			return (void *)1;
	}
	if (cuEventSynchronize(ev) != CUDA_SUCCESS || cuStreamSynchronize(s) != CUDA_SUCCESS ||
	    cuEventDestroy(ev) != CUDA_SUCCESS || cuStreamDestroy(s) != CUDA_SUCCESS)
		return (void *)1;
	return NULL;
}

static void test_threads(CUcontext ctx)
{
	enum { N = 6 };
	pthread_t t[N];
	struct storm_args a[N];
	for (int i = 0; i < N; i++) {
		a[i] = (struct storm_args){ ctx, i };
		CHECK(pthread_create(&t[i], NULL, storm_thread, &a[i]) == 0);
	}
	for (int i = 0; i < N; i++) {
		void *ret;
		pthread_join(t[i], &ret);
		CHECK(ret == NULL);
	}
	OK(cuCtxSynchronize());
	CHECK(atomic_load(&storm_count) == N * 200);
}

int main(void)
{
	CUcontext ctx = setup_device(0);
	test_event_behind_blocked_item();
	test_in_order_and_independent();
	test_null_stream();
	test_stream_wait_event();
	test_rerecord();
	test_synchronize_blocks(ctx);
	test_destroy_with_pending_work();
	test_destroy_event_pending();
	test_threads(ctx);
	printf("ok\n");
	return 0;
}
