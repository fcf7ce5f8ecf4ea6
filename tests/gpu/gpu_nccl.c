/* gpu-nccl: the C programs of the GPU check (tests/gpu/steps/), written
 * against cuda.h (driver API, never the runtime) and nccl.h only, linked
 * against the sonames: the same binary runs on a real GPU with the real
 * libnccl.so.2 and on the simulation (LD_LIBRARY_PATH picks).
 *
 *   gpu-nccl loop [--iters N] [--rounds R] [--pause-ms M] [--hold FILE]
 *                 [--count C] [--forever S]
 *       one rank: init, N out-of-place AllReduce in R timed rounds (the
 *       enqueue loop alone is timed; a sync and a pause of M ms, default
 *       250, more than the watchdog's poll, after each round), the result
 *       checked, finalize, destroy. Prints ns and, where the kernel gives
 *       hardware counters, user-space instructions per call (medians over
 *       the rounds). --hold FILE: after round 1, says so and waits until
 *       FILE exists (the caller reads the library's counters then). --forever S: rounds of 1000 until killed (the step
 *       that SIGKILLs it), giving up by itself after S seconds (exit 3).
 *   gpu-nccl blocked --nranks 2 [--dir DIR] [--spin auto|kernel|hostfn]
 *       [--release-timeout S]
 *       a few checked AllReduce, then rank 1 queues a spin that never ends
 *       on its stream (a PTX kernel on a real driver; a host function on
 *       the simulation, which cannot load modules) and an AllReduce behind
 *       it; the spin ends when DIR/release appears (flag in mapped host
 *       memory). Both ranks check the result and exit 0.
 *   gpu-nccl ptx
 *       prints the spin kernel's PTX as the blocked case loads it first
 *       (so that a machine with ptxas but no GPU can check it).
 *   gpu-nccl graph [--launches N] [--count C] [--via link|getproc|dlsym]
 *       one rank: one AllReduce outside the graph (a warm-up), then one
 *       captured into a CUDA graph (global capture mode, a non-default
 *       stream), instantiated, launched N times, synced, the result
 *       checked. --via: how the graph calls (end of capture, instantiate,
 *       launch, destroy) are bound: by the linker (default), through
 *       cuGetProcAddress as libcudart does, or dlsym on libcuda.so.1.
 *
 * Lines on stdout start with "gpu-nccl: " (one write each, so ranks'
 * lines never mix). Exit codes: examples/trainer.h's (0 ok, 1 setup, 2
 * usage, 3 wrong result or gave up, 4 NCCL error, 5 CUDA error); 6 the
 * driver cannot relaunch an executable graph (CUDA_ERROR_NOT_SUPPORTED,
 * as the simulation says), after one launch that was checked. */
#include "../../examples/trainer.h"

#include <cuda.h>
#include <nccl.h>
#include <dlfcn.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define EXIT_GRAPH_RELAUNCH 6

static int me = -1;     /* this process's rank, -1 before it has one */

/* ---- output and checks ---------------------------------------------------- */

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char buf[1024];
	int k = me >= 0 ? snprintf(buf, sizeof buf, "gpu-nccl: rank %d: ", me) : snprintf(buf, sizeof buf, "gpu-nccl: ");
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(buf + k, sizeof buf - (size_t)k - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		return;
	k += m;
	if (k > (int)sizeof buf - 2)
		k = (int)sizeof buf - 2;
	buf[k++] = '\n';
	if (write(STDOUT_FILENO, buf, (size_t)k) < 0) {
		/* nowhere to say it */
	}
}

static void cu_ok(CUresult r, const char *what)
{
	if (r == CUDA_SUCCESS)
		return;
	const char *name = NULL, *text = NULL;
	cuGetErrorName(r, &name);
	cuGetErrorString(r, &text);
	say("%s failed: %s (%d): %s", what, name ? name : "?", (int)r, text ? text : "?");
	exit(EXIT_CUDA_ERROR);
}

static void nccl_ok(ncclResult_t r, ncclComm_t comm, const char *what)
{
	if (r == ncclSuccess)
		return;
	const char *last = ncclGetLastError(comm);
	say("%s failed: %s%s%s", what, ncclGetErrorString(r), last && *last ? ": " : "", last ? last : "");
	exit(EXIT_NCCL_ERROR);
}

static double now_s(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void nap_ms(long ms)
{
	struct timespec t = { ms / 1000, ms % 1000 * 1000000L };
	while (nanosleep(&t, &t) < 0 && errno == EINTR)
		;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- driver entry points the simulation does not have ----------------------
 * Looked up at run time in the libcuda.so.1 already loaded, so that the
 * program links against the simulation too; NULL there. */

static struct {
	__typeof__(cuModuleLoadDataEx) *module_load_data_ex;
	__typeof__(cuModuleGetFunction) *module_get_function;
	__typeof__(cuLaunchKernel) *launch_kernel;
	__typeof__(cuMemHostAlloc) *mem_host_alloc;
	__typeof__(cuMemHostGetDevicePointer) *mem_host_get_device_pointer; /* the _v2 ABI */
	__typeof__(cuMemFreeHost) *mem_free_host;
	__typeof__(cuDeviceGetAttribute) *device_get_attribute;
} drv;

static void find_driver_extras(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!h)
		return;
	drv.module_load_data_ex = (__typeof__(drv.module_load_data_ex))dlsym(h, "cuModuleLoadDataEx");
	drv.module_get_function = (__typeof__(drv.module_get_function))dlsym(h, "cuModuleGetFunction");
	drv.launch_kernel = (__typeof__(drv.launch_kernel))dlsym(h, "cuLaunchKernel");
	drv.mem_host_alloc = (__typeof__(drv.mem_host_alloc))dlsym(h, "cuMemHostAlloc");
	drv.mem_host_get_device_pointer =
		(__typeof__(drv.mem_host_get_device_pointer))dlsym(h, "cuMemHostGetDevicePointer_v2");
	drv.mem_free_host = (__typeof__(drv.mem_free_host))dlsym(h, "cuMemFreeHost");
	drv.device_get_attribute = (__typeof__(drv.device_get_attribute))dlsym(h, "cuDeviceGetAttribute");
	/* the handle stays open: the library is loaded for the whole run anyway */
}

static int have_kernels(void)
{
	return drv.module_load_data_ex && drv.module_get_function && drv.launch_kernel && drv.mem_host_alloc &&
	       drv.mem_host_get_device_pointer && drv.mem_free_host;
}

/* ---- device, buffers ---------------------------------------------------------- */

struct gpu {
	CUdevice dev;
	CUcontext ctx;
	CUstream s, s2;
	CUdeviceptr send, recv;
	long count;
	float *host;            /* count floats: what send holds */
};

/* Device 0 for every rank: on a real machine the ranks of one job share
 * the one GPU as separate NCCL "hosts" (NCCL_HOSTID, set by the caller). */
static void setup_gpu(struct gpu *g, long count, float value)
{
	int devices = 0;
	cu_ok(cuInit(0), "cuInit");
	cu_ok(cuDeviceGetCount(&devices), "cuDeviceGetCount");
	if (devices < 1) {
		say("no CUDA device");
		exit(EXIT_CUDA_ERROR);
	}
	cu_ok(cuDeviceGet(&g->dev, 0), "cuDeviceGet");
	cu_ok(cuDevicePrimaryCtxRetain(&g->ctx, g->dev), "cuDevicePrimaryCtxRetain");
	cu_ok(cuCtxSetCurrent(g->ctx), "cuCtxSetCurrent");
	cu_ok(cuStreamCreate(&g->s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
	cu_ok(cuStreamCreate(&g->s2, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
	g->count = count;
	size_t bytes = (size_t)count * sizeof(float);
	g->host = malloc(bytes);
	if (!g->host) {
		say("out of memory");
		exit(EXIT_SETUP);
	}
	for (long i = 0; i < count; i++)
		g->host[i] = value * (float)(1 + i % 7);
	cu_ok(cuMemAlloc(&g->send, bytes), "cuMemAlloc");
	cu_ok(cuMemAlloc(&g->recv, bytes), "cuMemAlloc");
	cu_ok(cuMemcpyHtoD(g->send, g->host, bytes), "cuMemcpyHtoD");
	cu_ok(cuMemsetD8(g->recv, 0, bytes), "cuMemsetD8");
	/* Both go on the legacy stream, which the non-blocking streams do not
	 * wait for, and neither need be done when it returns (a pageable
	 * copy returns once staged, a memset of device memory at once). */
	cu_ok(cuCtxSynchronize(), "cuCtxSynchronize");
}

/* recv := 0, done before anything else runs on the non-blocking streams */
static void clear_recv(struct gpu *g)
{
	cu_ok(cuMemsetD8(g->recv, 0, (size_t)g->count * sizeof(float)), "cuMemsetD8");
	cu_ok(cuCtxSynchronize(), "cuCtxSynchronize");
}

/* send holds value * (1 + i % 7) (value: the rank + 1, or 1); after a sum
 * recv must hold scale * (1 + i % 7), scale the sum of the ranks' values.
 * Returns 0 or the count of wrong elements (and says the first). */
static long check_recv(struct gpu *g, float scale)
{
	size_t bytes = (size_t)g->count * sizeof(float);
	float *out = malloc(bytes);
	if (!out) {
		say("out of memory");
		exit(EXIT_SETUP);
	}
	cu_ok(cuMemcpyDtoH(out, g->recv, bytes), "cuMemcpyDtoH");
	long wrong = 0;
	for (long i = 0; i < g->count; i++) {
		float want = scale * (float)(1 + i % 7);
		if (out[i] != want && wrong++ == 0)
			say("wrong result: element %ld is %g, not %g", i, (double)out[i], (double)want);
	}
	free(out);
	return wrong;
}

static void allreduce(struct gpu *g, ncclComm_t comm, CUstream s)
{
	nccl_ok(ncclAllReduce((const void *)g->send, (void *)g->recv, (size_t)g->count, ncclFloat, ncclSum, comm,
	                      (cudaStream_t)s),
	        comm, "ncclAllReduce");
}

static void destroy(ncclComm_t comm)
{
	ncclResult_t r = ncclCommFinalize(comm);
	while (r == ncclInProgress) { /* a blocking comm never says so; kept for safety */
		nap_ms(1);
		nccl_ok(ncclCommGetAsyncError(comm, &r), comm, "ncclCommGetAsyncError");
	}
	nccl_ok(r, comm, "ncclCommFinalize");
	nccl_ok(ncclCommDestroy(comm), NULL, "ncclCommDestroy");
}

static ncclComm_t init_alone(void)
{
	ncclUniqueId id;
	ncclComm_t comm = NULL;
	nccl_ok(ncclGetUniqueId(&id), NULL, "ncclGetUniqueId");
	nccl_ok(ncclCommInitRank(&comm, 1, id, 0), NULL, "ncclCommInitRank");
	return comm;
}

/* ---- instructions: perf_event_open, user space, this thread ---------------- */

static int perf_fd = -1;
static char perf_why[128];

static void perf_open(void)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_INSTRUCTIONS;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	perf_fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (perf_fd < 0)
		snprintf(perf_why, sizeof perf_why, "perf_event_open: %s", strerror(errno));
}

static void perf_start(void)
{
	if (perf_fd >= 0 && (ioctl(perf_fd, PERF_EVENT_IOC_RESET, 0) < 0 || ioctl(perf_fd, PERF_EVENT_IOC_ENABLE, 0) < 0)) {
		snprintf(perf_why, sizeof perf_why, "PERF_EVENT_IOC_ENABLE: %s", strerror(errno));
		close(perf_fd);
		perf_fd = -1;
	}
}

/* instructions since perf_start, or -1 */
static double perf_stop(void)
{
	if (perf_fd < 0)
		return -1;
	uint64_t n = 0;
	if (ioctl(perf_fd, PERF_EVENT_IOC_DISABLE, 0) < 0 || read(perf_fd, &n, sizeof n) != (ssize_t)sizeof n) {
		snprintf(perf_why, sizeof perf_why, "reading the counter: %s", strerror(errno));
		close(perf_fd);
		perf_fd = -1;
		return -1;
	}
	if (n == 0) { /* a virtual machine may accept the event and count nothing */
		snprintf(perf_why, sizeof perf_why, "the counter counted 0 instructions");
		close(perf_fd);
		perf_fd = -1;
		return -1;
	}
	return (double)n;
}

/* ---- loop ------------------------------------------------------------------------ */

struct loop_args {
	long iters, count;
	int rounds;
	long forever_s;
	long pause_ms;
	const char *hold;       /* after round 1: wait until this file exists */
};

static int run_loop(const struct loop_args *a)
{
	struct gpu g;
	me = 0;
	setup_gpu(&g, a->count, 1.0f);
	ncclComm_t comm = init_alone();
	say("communicator ready (1 rank)");

	if (a->forever_s > 0) {
		double until = now_s(CLOCK_MONOTONIC) + (double)a->forever_s;
		long issued = 0;
		while (now_s(CLOCK_MONOTONIC) < until) {
			for (int i = 0; i < 1000; i++)
				allreduce(&g, comm, g.s);
			issued += 1000;
			cu_ok(cuStreamSynchronize(g.s), "cuStreamSynchronize");
			if (issued % 100000 == 0)
				say("loop: %ld AllReduce issued", issued);
		}
		say("loop: never killed in %ld s (%ld AllReduce issued): giving up", a->forever_s, issued);
		return EXIT_WRONG_RESULT;
	}

	double ns[64], ins[64];
	int have_ins = 1;
	long done = 0;
	perf_open();
	for (int r = 0; r < a->rounds; r++) {
		long n = a->iters / a->rounds + (r < a->iters % a->rounds);
		perf_start();
		uint64_t t0 = now_ns();
		for (long i = 0; i < n; i++)
			allreduce(&g, comm, g.s);
		uint64_t t1 = now_ns();
		double count = perf_stop();
		cu_ok(cuStreamSynchronize(g.s), "cuStreamSynchronize");
		done += n;
		/* the watchdog polls the round's events back into its pool: the
		 * next rounds reuse them (steady state) */
		if (r + 1 < a->rounds)
			nap_ms(a->pause_ms);
		if (r == 0 && a->hold) {
			/* the caller reads the segment's counters now (events
			 * created by round 1), then lets the other rounds run */
			say("loop: round 1 done, waiting for %s", a->hold);
			double until = now_s(CLOCK_MONOTONIC) + 60;
			while (access(a->hold, F_OK) != 0) {
				if (now_s(CLOCK_MONOTONIC) > until) {
					say("loop: %s did not appear within 60 s", a->hold);
					return EXIT_SETUP;
				}
				nap_ms(10);
			}
		}
		ns[r] = (double)(t1 - t0) / (double)n;
		if (count < 0)
			have_ins = 0;
		else
			ins[r] = count / (double)n;
	}
	char rounds[512];
	int k = 0;
	for (int r = 0; r < a->rounds && k < (int)sizeof rounds - 16; r++)
		k += snprintf(rounds + k, sizeof rounds - (size_t)k, "%s%.0f", r ? "," : "", ns[r]);
	long wrong = check_recv(&g, 1.0f);
	say("loop: %ld AllReduce of %ld floats in %d rounds; ns_per_call median %.0f (rounds %s)", done, a->count,
	    a->rounds, median(ns, a->rounds), rounds);
	if (have_ins)
		say("loop: instructions_per_call median %.0f (user space, this thread)", median(ins, a->rounds));
	else
		say("loop: instructions: no hardware counters here (%s)", perf_why);
	destroy(comm);
	if (wrong) {
		say("loop: wrong result in %ld of %ld elements", wrong, a->count);
		return EXIT_WRONG_RESULT;
	}
	say("loop: result ok, communicator destroyed");
	return EXIT_OK;
}

/* ---- blocked: a spin that never ends, queued before an AllReduce ------------------ */

/* Spins until the word at flag is not 0: a volatile load each time
 * (mapped host memory, never cached), a short sleep between. Written for
 * sm_70 (nanosleep needs it); the driver JIT-compiles it for the GPU. */
static const char spin_ptx_fmt[] =
	".version %s\n"
	".target %s\n"
	".address_size 64\n"
	"\n"
	".visible .entry nw_spin(.param .u64 flag)\n"
	"{\n"
	"\t.reg .pred p;\n"
	"\t.reg .b32 v;\n"
	"\t.reg .b64 a;\n"
	"\tld.param.u64 a, [flag];\n"
	"\tcvta.to.global.u64 a, a;\n"
	"WAIT:\n"
	"\tld.volatile.global.u32 v, [a];\n"
	"\tsetp.ne.u32 p, v, 0;\n"
	"\t@p bra DONE;\n"
	"\tnanosleep.u32 1000;\n"
	"\tbra WAIT;\n"
	"DONE:\n"
	"\tret;\n"
	"}\n";

struct spin {
	int kernel;                     /* 1 PTX kernel, 0 host function */
	volatile uint32_t *flag;        /* host view */
	CUdeviceptr flag_dev;           /* kernel: the device's view */
	CUmodule module;
	CUfunction fn;
	const char *release_file;
	long release_timeout_s;
};

/* Loads the spin kernel: first as written (sm_70, PTX 7.0); if this
 * driver's JIT refuses that, for the device's own architecture. The JIT's
 * log is printed on failure. */
static void load_spin_kernel(struct gpu *g, struct spin *sp)
{
	char target[32] = "sm_70";
	const char *versions[] = { "7.0", "8.0", "8.8" };
	int major = 0, minor = 0;
	if (drv.device_get_attribute &&
	    drv.device_get_attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, g->dev) == CUDA_SUCCESS &&
	    drv.device_get_attribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, g->dev) == CUDA_SUCCESS)
		say("device compute capability %d.%d", major, minor);
	CUresult r = CUDA_ERROR_UNKNOWN;
	for (int attempt = 0; attempt < 3; attempt++) {
		if (attempt > 0) {
			if (major <= 0)
				break;
			snprintf(target, sizeof target, "sm_%d%d", major, minor);
		}
		char ptx[sizeof spin_ptx_fmt + 64];
		snprintf(ptx, sizeof ptx, spin_ptx_fmt, versions[attempt], target);
		char log[4096] = "";
		CUjit_option opts[] = { CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
		void *vals[] = { log, (void *)(uintptr_t)sizeof log };
		r = drv.module_load_data_ex(&sp->module, ptx, 2, opts, vals);
		if (r == CUDA_SUCCESS) {
			say("spin kernel: PTX %s for %s loaded with cuModuleLoadDataEx (JIT)", versions[attempt], target);
			break;
		}
		const char *name = NULL;
		cuGetErrorName(r, &name);
		say("cuModuleLoadDataEx (PTX %s, %s) failed: %s (%d); JIT log: %s", versions[attempt], target,
		    name ? name : "?", (int)r, *log ? log : "(empty)");
	}
	cu_ok(r, "cuModuleLoadDataEx");
	cu_ok(drv.module_get_function(&sp->fn, sp->module, "nw_spin"), "cuModuleGetFunction");
	void *p = NULL;
	cu_ok(drv.mem_host_alloc(&p, 64, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE), "cuMemHostAlloc");
	sp->flag = p;
	*sp->flag = 0;
	CUresult r2 = drv.mem_host_get_device_pointer(&sp->flag_dev, p, 0);
	if (r2 != CUDA_SUCCESS) {
		/* With unified addressing (every 64-bit Linux GPU) a pinned host
		 * allocation has the same address on the device. */
		const char *name = NULL;
		cuGetErrorName(r2, &name);
		say("cuMemHostGetDevicePointer failed: %s (%d); using the host address (unified addressing)",
		    name ? name : "?", (int)r2);
		sp->flag_dev = (CUdeviceptr)(uintptr_t)p;
	}
	say("spin flag: mapped host memory at %p, device address 0x%llx", p, (unsigned long long)sp->flag_dev);
}

static void CUDA_CB spin_host_function(void *arg)
{
	volatile uint32_t *flag = arg;
	while (!*flag)
		nap_ms(1);
}

static void spin_queue(struct gpu *g, struct spin *sp)
{
	if (sp->kernel) {
		void *params[] = { &sp->flag_dev };
		cu_ok(drv.launch_kernel(sp->fn, 1, 1, 1, 1, 1, 1, 0, g->s, params, NULL), "cuLaunchKernel");
	} else {
		cu_ok(cuLaunchHostFunc(g->s, spin_host_function, (void *)sp->flag), "cuLaunchHostFunc");
	}
}

/* Sets the flag when the release file appears; gives up (exit 3, which
 * ends the spin with the process) after release_timeout_s. */
static void *release_watcher(void *arg)
{
	struct spin *sp = arg;
	double until = now_s(CLOCK_MONOTONIC) + (double)sp->release_timeout_s;
	while (access(sp->release_file, F_OK) != 0) {
		if (now_s(CLOCK_MONOTONIC) > until) {
			say("blocked: %s did not appear within %ld s: giving up", sp->release_file, sp->release_timeout_s);
			_exit(EXIT_WRONG_RESULT);
		}
		nap_ms(10);
	}
	__atomic_store_n(sp->flag, 1, __ATOMIC_SEQ_CST);
	say("blocked: released (flag set) at %.6f", now_s(CLOCK_REALTIME));
	return NULL;
}

struct blocked_args {
	const char *dir;
	const char *spin;       /* auto, kernel, hostfn */
	long release_timeout_s;
	int good;
	long count;
};

static int run_blocked_rank(const struct rank_info *who, void *arg)
{
	const struct blocked_args *a = arg;
	me = who->rank;
	int n = who->world_size;
	const char *per_rank = getenv("SCENARIO_HOSTID_PER_RANK");
	if (per_rank && !strcmp(per_rank, "1")) {
		/* its own NCCL "host": two ranks may share the one GPU */
		char host[64];
		snprintf(host, sizeof host, "ncclwatch-gpu-check-rank%d", me);
		setenv("NCCL_HOSTID", host, 1);
	}
	struct gpu g;
	setup_gpu(&g, a->count, (float)(me + 1));
	float sum = (float)(n * (n + 1) / 2);

	static uint32_t plain_flag;
	struct spin sp = { 0 };
	if (me == 1) {
		find_driver_extras();
		if (!strcmp(a->spin, "kernel") || (!strcmp(a->spin, "auto") && have_kernels())) {
			if (!have_kernels()) {
				say("--spin kernel: this libcuda.so.1 lacks cuModuleLoadDataEx, cuLaunchKernel or cuMemHostAlloc");
				return EXIT_CUDA_ERROR;
			}
			sp.kernel = 1;
			load_spin_kernel(&g, &sp);
		} else {
			sp.flag = &plain_flag;
		}
	}

	char path[4096];
	ncclUniqueId id;
	if (me == 0) {
		nccl_ok(ncclGetUniqueId(&id), NULL, "ncclGetUniqueId");
		if (rendezvous_publish(a->dir, &id) < 0)
			return EXIT_SETUP;
	} else if (rendezvous_fetch(a->dir, &id) < 0) {
		return EXIT_SETUP;
	}
	ncclComm_t comm = NULL;
	nccl_ok(ncclCommInitRank(&comm, n, id, me), NULL, "ncclCommInitRank");
	say("communicator ready (%d ranks)", n);

	for (int i = 0; i < a->good; i++) {
		allreduce(&g, comm, g.s);
		cu_ok(cuStreamSynchronize(g.s), "cuStreamSynchronize");
		if (check_recv(&g, sum))
			return EXIT_WRONG_RESULT;
	}
	clear_recv(&g);
	say("%d AllReduce ok", a->good);

	if (me == 1) {
		snprintf(path, sizeof path, "%s/release", a->dir);
		sp.release_file = path;
		sp.release_timeout_s = a->release_timeout_s;
		pthread_t t;
		if (pthread_create(&t, NULL, release_watcher, &sp) != 0) {
			say("pthread_create failed");
			return EXIT_SETUP;
		}
		pthread_detach(t);
		spin_queue(&g, &sp);
		say("spin queued on the stream: %s", sp.kernel ? "PTX kernel (cuLaunchKernel)" : "host function (cuLaunchHostFunc)");
	}
	allreduce(&g, comm, g.s);
	say("AllReduce #%d enqueued at %.6f%s", a->good + 1, now_s(CLOCK_REALTIME), me == 1 ? " behind the spin" : "");
	cu_ok(cuStreamSynchronize(g.s), "cuStreamSynchronize");
	long wrong = check_recv(&g, sum);
	say("AllReduce #%d completed at %.6f", a->good + 1, now_s(CLOCK_REALTIME));
	destroy(comm);
	if (sp.kernel) {
		cu_ok(drv.mem_free_host((void *)sp.flag), "cuMemFreeHost");
	}
	if (wrong)
		return EXIT_WRONG_RESULT;
	say("result ok, communicator destroyed");
	return EXIT_OK;
}

/* ---- graph: an AllReduce captured, the graph launched N times ----------------------- */

struct graph_calls {
	__typeof__(cuStreamEndCapture) *end_capture;
	__typeof__(cuGraphInstantiateWithFlags) *instantiate;
	__typeof__(cuGraphLaunch) *launch;
	__typeof__(cuGraphExecDestroy) *exec_destroy;
	__typeof__(cuGraphDestroy) *destroy;
};

static void graph_calls(const char *via, struct graph_calls *gc)
{
	*gc = (struct graph_calls){ cuStreamEndCapture, cuGraphInstantiateWithFlags, cuGraphLaunch, cuGraphExecDestroy,
	                            cuGraphDestroy };
	if (!strcmp(via, "link"))
		return;
	void **slot[] = { (void **)&gc->end_capture, (void **)&gc->instantiate, (void **)&gc->launch,
	                  (void **)&gc->exec_destroy, (void **)&gc->destroy };
	/* cuGetProcAddress hands out cuGraphInstantiateWithFlags for
	 * "cuGraphInstantiate" from CUDA 12 on, as cuda.h maps it */
	const char *ask[] = { "cuStreamEndCapture", "cuGraphInstantiate", "cuGraphLaunch", "cuGraphExecDestroy",
	                      "cuGraphDestroy" };
	const char *sym[] = { "cuStreamEndCapture", "cuGraphInstantiateWithFlags", "cuGraphLaunch", "cuGraphExecDestroy",
	                      "cuGraphDestroy" };
	void *lib = !strcmp(via, "dlsym") ? dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL) : NULL;
	for (int i = 0; i < 5; i++) {
		CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
		if (lib)
			*slot[i] = dlsym(lib, sym[i]);
		else
			cu_ok(cuGetProcAddress(ask[i], slot[i], CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &st),
			      "cuGetProcAddress");
		if (!*slot[i]) {
			say("graph: %s found no %s", via, ask[i]);
			exit(EXIT_CUDA_ERROR);
		}
	}
	say("graph: the graph calls bound through %s", lib ? "dlsym" : "cuGetProcAddress");
}

static int run_graph(long launches, long count, const char *via)
{
	struct graph_calls gc;
	struct gpu g;
	me = 0;
	setup_gpu(&g, count, 1.0f);
	graph_calls(via, &gc);
	ncclComm_t comm = init_alone();
	say("communicator ready (1 rank)");
	/* a warm-up outside the graph, as programs do before they capture;
	 * then recv is cleared so that only the graph can fill it */
	allreduce(&g, comm, g.s);
	cu_ok(cuStreamSynchronize(g.s), "cuStreamSynchronize");
	if (check_recv(&g, 1.0f))
		return EXIT_WRONG_RESULT;
	clear_recv(&g);
	say("graph: 1 warm-up AllReduce ok");
	CUgraph graph = NULL;
	CUgraphExec exec = NULL;
	cu_ok(cuStreamBeginCapture(g.s2, CU_STREAM_CAPTURE_MODE_GLOBAL), "cuStreamBeginCapture");
	allreduce(&g, comm, g.s2);
	cu_ok(gc.end_capture(g.s2, &graph), "cuStreamEndCapture");
	cu_ok(gc.instantiate(&exec, graph, 0), "cuGraphInstantiateWithFlags");
	say("graph: AllReduce captured, graph instantiated");
	long launched = 0;
	int status = EXIT_OK;
	for (long i = 0; i < launches; i++) {
		CUresult r = gc.launch(exec, g.s);
		if (r == CUDA_ERROR_NOT_SUPPORTED && i == 1) {
			say("graph: the driver cannot launch the graph again (CUDA_ERROR_NOT_SUPPORTED) after 1 launch");
			status = EXIT_GRAPH_RELAUNCH;
			break;
		}
		cu_ok(r, "cuGraphLaunch");
		launched++;
	}
	cu_ok(cuStreamSynchronize(g.s), "cuStreamSynchronize");
	long wrong = check_recv(&g, 1.0f);
	say("graph: %ld of %ld launches done and synced", launched, launches);
	cu_ok(gc.exec_destroy(exec), "cuGraphExecDestroy");
	cu_ok(gc.destroy(graph), "cuGraphDestroy");
	destroy(comm);
	if (wrong)
		return EXIT_WRONG_RESULT;
	say("graph: result ok, communicator destroyed");
	return status;
}

/* ---- main --------------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f, "usage: gpu-nccl loop [--iters N] [--rounds R] [--pause-ms M] [--hold FILE] [--count C] [--forever S]\n"
	           "       gpu-nccl blocked [--nranks N] [--dir DIR] [--spin auto|kernel|hostfn] [--release-timeout S]\n"
	           "       gpu-nccl graph [--launches N] [--count C] [--via link|getproc|dlsym]\n"
	           "       gpu-nccl ptx\n"
	           "The GPU check's programs (tests/gpu/gpu_nccl.c says what each does).\n");
}

static long num(const char *v, long lo, long hi, const char *what)
{
	char *end;
	long x = v ? strtol(v, &end, 10) : 0;
	if (!v || *end || x < lo || x > hi) {
		fprintf(stderr, "gpu-nccl: %s wants a number from %ld to %ld\n", what, lo, hi);
		exit(EXIT_USAGE);
	}
	return x;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *cmd = argv[1];
	struct loop_args la = { .iters = 1000, .rounds = 5, .count = 1024, .forever_s = 0, .pause_ms = 250, .hold = NULL };
	struct blocked_args ba = { .dir = NULL, .spin = "auto", .release_timeout_s = 60, .good = 3, .count = 1024 };
	long launches = 100, nranks = 2;
	const char *via = "link";
	for (int i = 2; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(o, "--iters"))
			la.iters = num(v, 1, 100000000, o);
		else if (!strcmp(o, "--rounds"))
			la.rounds = (int)num(v, 1, 64, o);
		else if (!strcmp(o, "--count"))
			la.count = ba.count = num(v, 1, 1 << 24, o);
		else if (!strcmp(o, "--hold") && v)
			la.hold = v;
		else if (!strcmp(o, "--pause-ms"))
			la.pause_ms = num(v, 0, 10000, o);
		else if (!strcmp(o, "--forever"))
			la.forever_s = num(v, 1, 3600, o);
		else if (!strcmp(o, "--nranks"))
			nranks = num(v, 2, 8, o);
		else if (!strcmp(o, "--dir") && v)
			ba.dir = v;
		else if (!strcmp(o, "--spin") && v && (!strcmp(v, "auto") || !strcmp(v, "kernel") || !strcmp(v, "hostfn")))
			ba.spin = v;
		else if (!strcmp(o, "--release-timeout"))
			ba.release_timeout_s = num(v, 1, 3600, o);
		else if (!strcmp(o, "--launches"))
			launches = num(v, 1, 1000000, o);
		else if (!strcmp(o, "--via") && v && (!strcmp(v, "link") || !strcmp(v, "getproc") || !strcmp(v, "dlsym")))
			via = v;
		else {
			fprintf(stderr, "gpu-nccl: unknown or incomplete argument '%s'\n", o);
			usage(stderr);
			return EXIT_USAGE;
		}
		i++;
	}
	if (!strcmp(cmd, "loop")) {
		if (la.iters < la.rounds)
			la.rounds = (int)la.iters;
		return run_loop(&la);
	}
	if (!strcmp(cmd, "graph"))
		return run_graph(launches, la.count, via);
	if (!strcmp(cmd, "ptx")) { /* the spin kernel's text as first loaded, for ptxas */
		printf(spin_ptx_fmt, "7.0", "sm_70");
		return EXIT_OK;
	}
	if (!strcmp(cmd, "blocked")) {
		char *own = NULL;
		if (!ba.dir) {
			char key[48];
			snprintf(key, sizeof key, "gpu-nccl-%d", (int)getpid());
			ba.dir = own = default_rendezvous_dir(key);
			if (!own)
				return EXIT_SETUP;
		}
		if (mkdir(ba.dir, 0700) < 0 && errno != EEXIST) {
			fprintf(stderr, "gpu-nccl: cannot create %s: %s\n", ba.dir, strerror(errno));
			return EXIT_SETUP;
		}
		int status = launch_local_ranks((int)nranks, run_blocked_rank, &ba);
		rendezvous_remove(ba.dir);
		free(own);
		return status;
	}
	usage(stderr);
	return EXIT_USAGE;
}
