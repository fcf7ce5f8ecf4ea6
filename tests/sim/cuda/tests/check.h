/* Helpers for the simulated CUDA driver's C tests: CHECK macros that name
 * the failing line and exit 1, a gate (a work item that blocks its stream
 * until the test opens it), and a log of the order work items ran in. */
#ifndef NCCLSIM_CUDA_TESTS_CHECK_H
#define NCCLSIM_CUDA_TESTS_CHECK_H

#include <cuda.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../sim_stream.h"

static inline const char *check_error_name(CUresult r)
{
	const char *name = NULL;
	cuGetErrorName(r, &name);
	return name ? name : "(unknown CUresult)";
}

#define CHECK(cond) \
	do { if (!(cond)) { \
		fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
		exit(1); } } while (0)

#define CHECK_CU(call, want) \
	do { CUresult got_ = (call), want_ = (want); if (got_ != want_) { \
		fprintf(stderr, "%s:%d: %s returned %s (%d), expected %s (%d)\n", __FILE__, __LINE__, \
		        #call, check_error_name(got_), (int)got_, check_error_name(want_), (int)want_); \
		exit(1); } } while (0)

#define OK(call) CHECK_CU(call, CUDA_SUCCESS)

/* A work item that blocks until gate_open(); counts how many entered. */
struct gate {
	pthread_mutex_t mutex;
	pthread_cond_t cond;
	int open;
	int entered;
};
#define GATE_INIT { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0 }

static inline CUresult gate_item(void *arg)
{
	struct gate *g = arg;
	pthread_mutex_lock(&g->mutex);
	g->entered++;
	pthread_cond_broadcast(&g->cond);
	while (!g->open)
		pthread_cond_wait(&g->cond, &g->mutex);
	pthread_mutex_unlock(&g->mutex);
	return CUDA_SUCCESS;
}

static inline void gate_wait_entered(struct gate *g, int n)
{
	pthread_mutex_lock(&g->mutex);
	while (g->entered < n)
		pthread_cond_wait(&g->cond, &g->mutex);
	pthread_mutex_unlock(&g->mutex);
}

static inline void gate_open(struct gate *g)
{
	pthread_mutex_lock(&g->mutex);
	g->open = 1;
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->mutex);
}

/* Work items that append their id to a shared log, and drop callbacks that
 * append -id, so a test sees what ran, what was dropped and in what order. */
struct run_log {
	pthread_mutex_t mutex;
	pthread_cond_t grew;
	int ids[256];
	int n;
};
#define RUN_LOG_INIT { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, {0}, 0 }

struct logged_item {
	struct run_log *log;
	int id;
	CUresult result;
};

static inline void run_log_add(struct run_log *log, int id)
{
	pthread_mutex_lock(&log->mutex);
	if (log->n < 256)
		log->ids[log->n++] = id;
	pthread_cond_broadcast(&log->grew);
	pthread_mutex_unlock(&log->mutex);
}

/* Blocks until the log holds at least n entries. */
static inline void run_log_wait_count(struct run_log *log, int n)
{
	pthread_mutex_lock(&log->mutex);
	while (log->n < n)
		pthread_cond_wait(&log->grew, &log->mutex);
	pthread_mutex_unlock(&log->mutex);
}

static inline int run_log_count(struct run_log *log)
{
	pthread_mutex_lock(&log->mutex);
	int n = log->n;
	pthread_mutex_unlock(&log->mutex);
	return n;
}

static inline int run_log_at(struct run_log *log, int i)
{
	pthread_mutex_lock(&log->mutex);
	int id = i < log->n ? log->ids[i] : 0;
	pthread_mutex_unlock(&log->mutex);
	return id;
}

static inline CUresult logged_run(void *arg)
{
	struct logged_item *it = arg;
	run_log_add(it->log, it->id);
	return it->result;
}

static inline void logged_drop(void *arg)
{
	struct logged_item *it = arg;
	run_log_add(it->log, -it->id);
}

/* cuInit, then retain device `dev`'s primary context and make it current. */
static inline CUcontext setup_device(int dev)
{
	CUdevice d;
	CUcontext ctx;
	OK(cuInit(0));
	OK(cuDeviceGet(&d, dev));
	OK(cuDevicePrimaryCtxRetain(&ctx, d));
	OK(cuCtxSetCurrent(ctx));
	return ctx;
}

#endif /* NCCLSIM_CUDA_TESTS_CHECK_H */
