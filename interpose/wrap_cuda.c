/* wrap_cuda: the CUDA driver entry points of graphs, wrapped (graphs.h).
 *
 * Three ways a program reaches them, all caught:
 * - symbol interposition: a program or library linked to libcuda.so.1
 *   calls cuGraphLaunch and binds to ours (LD_PRELOAD comes first);
 * - cuGetProcAddress / cuGetProcAddress_v2 (how libcudart, hence PyTorch's
 *   cudaGraphLaunch, and XLA reach the driver): ours asks the real one and,
 *   for a name we wrap, returns our wrapper when the pointer it got is the
 *   very function one of our wrappers forwards to (same function, same
 *   ABI, whatever the version and flags asked); any other pointer, and
 *   every other name, passes through untouched;
 * - dlsym/dlvsym on a libcuda handle (dlsym_hook.c calls
 *   nw_cuda_dlsym_redirect), except from libcuda itself.
 * cuGraphUpload is not wrapped: it runs nothing, so it is no launch.
 * Each wrapper forwards to the real function of its exact name: the next
 * definition after this library (RTLD_NEXT), else the one in the loaded
 * libcuda.so.1, found at the first call. Nothing links libcuda.
 *
 * cuda.h maps several of these names to newer ABIs (cuGraphInstantiate to
 * cuGraphInstantiateWithFlags, cuGetProcAddress to _v2): the macros are
 * undone here so that each symbol gets the ABI of its exported name. */
#include "cuda_driver.h"
#include "graphs.h"
#include "libc_dl.h"
#include "log.h"
#include "record.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#undef cuGraphInstantiate
#undef cuGraphLaunch
#undef cuGraphInstantiateWithParams
#undef cuStreamEndCapture
#undef cuGetProcAddress
#undef cuGraphExecUpdate

typedef CUresult (*instantiate_v1_fn)(CUgraphExec *, CUgraph, CUgraphNode *, char *, size_t);
typedef CUresult (*instantiate_flags_fn)(CUgraphExec *, CUgraph, unsigned long long);
typedef CUresult (*instantiate_params_fn)(CUgraphExec *, CUgraph, CUDA_GRAPH_INSTANTIATE_PARAMS *);
typedef CUresult (*launch_fn)(CUgraphExec, CUstream);
typedef CUresult (*exec_destroy_fn)(CUgraphExec);
typedef CUresult (*graph_destroy_fn)(CUgraph);
typedef CUresult (*exec_update_v1_fn)(CUgraphExec, CUgraph, CUgraphNode *, CUgraphExecUpdateResult *);
typedef CUresult (*exec_update_v2_fn)(CUgraphExec, CUgraph, CUgraphExecUpdateResultInfo *);
typedef CUresult (*end_capture_fn)(CUstream, CUgraph *);
typedef CUresult (*getproc_v1_fn)(const char *, void **, int, cuuint64_t);
typedef CUresult (*getproc_v2_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

NW_EXPORT CUresult cuGraphInstantiate(CUgraphExec *e, CUgraph g, CUgraphNode *err, char *log, size_t n);
NW_EXPORT CUresult cuGraphInstantiate_v2(CUgraphExec *e, CUgraph g, CUgraphNode *err, char *log, size_t n);
NW_EXPORT CUresult cuGraphInstantiateWithParams(CUgraphExec *e, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p);
NW_EXPORT CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec *e, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p);
NW_EXPORT CUresult cuGraphLaunch(CUgraphExec e, CUstream s);
NW_EXPORT CUresult cuGraphLaunch_ptsz(CUgraphExec e, CUstream s);
NW_EXPORT CUresult cuStreamEndCapture(CUstream s, CUgraph *g);
NW_EXPORT CUresult cuStreamEndCapture_ptsz(CUstream s, CUgraph *g);
NW_EXPORT CUresult cuGetProcAddress(const char *sym, void **pfn, int ver, cuuint64_t flags);
NW_EXPORT CUresult cuGraphExecUpdate(CUgraphExec e, CUgraph g, CUgraphNode *err, CUgraphExecUpdateResult *res);

/* X(enum, exported name, base name cuGetProcAddress is asked for) */
#define NW_CUDA_WRAPPED(X) \
	X(INST_V1, cuGraphInstantiate, "cuGraphInstantiate") \
	X(INST_V2, cuGraphInstantiate_v2, "cuGraphInstantiate") \
	X(INST_FLAGS, cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags") \
	X(INST_PARAMS, cuGraphInstantiateWithParams, "cuGraphInstantiateWithParams") \
	X(INST_PARAMS_PTSZ, cuGraphInstantiateWithParams_ptsz, "cuGraphInstantiateWithParams") \
	X(LAUNCH, cuGraphLaunch, "cuGraphLaunch") \
	X(LAUNCH_PTSZ, cuGraphLaunch_ptsz, "cuGraphLaunch") \
	X(EXEC_DESTROY, cuGraphExecDestroy, "cuGraphExecDestroy") \
	X(DESTROY, cuGraphDestroy, "cuGraphDestroy") \
	X(EXEC_UPDATE, cuGraphExecUpdate, "cuGraphExecUpdate") \
	X(EXEC_UPDATE_V2, cuGraphExecUpdate_v2, "cuGraphExecUpdate") \
	X(END_CAPTURE, cuStreamEndCapture, "cuStreamEndCapture") \
	X(END_CAPTURE_PTSZ, cuStreamEndCapture_ptsz, "cuStreamEndCapture") \
	X(GETPROC_V1, cuGetProcAddress, "cuGetProcAddress") \
	X(GETPROC_V2, cuGetProcAddress_v2, "cuGetProcAddress")

enum {
#define NW_CW_ENUM(e, name, base) W_##e,
	NW_CUDA_WRAPPED(NW_CW_ENUM)
	W_COUNT
};

static const struct {
	const char *name, *base;
	void *wrapper;
} wrapped[W_COUNT] = {
#define NW_CW_ENTRY(e, name, base) [W_##e] = { #name, base, (void *)name },
	NW_CUDA_WRAPPED(NW_CW_ENTRY)
};

static _Atomic(void *) real[W_COUNT];

static int is_ours(void *p)
{
	for (int i = 0; i < W_COUNT; i++)
		if (wrapped[i].wrapper == p)
			return 1;
	return 0;
}

static int is_cuda_library(const char *path)
{
	const char *base = path;
	for (const char *p = path; *p; p++)
		if (*p == '/')
			base = p + 1;
	return !strncmp(base, "libcuda.so", 10);
}

static void *real_fn(int i)
{
	void *p = atomic_load_explicit(&real[i], memory_order_acquire);
	if (__builtin_expect(p != NULL, 1))
		return p;
	nw_libc_dl_init();
	if (nw_libc_dlsym) {
		p = nw_libc_dlsym(RTLD_NEXT, wrapped[i].name);
		if (!p || is_ours(p)) {
			const char *lib = getenv("NCCLWATCH_CUDA_LIB");
			void *h = dlopen(lib && *lib && strcmp(lib, "none") ? lib : "libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
			p = h ? nw_libc_dlsym(h, wrapped[i].name) : NULL;
		}
	}
	if (!p || is_ours(p)) {
		NW_LOG_ONCE("%s: no CUDA driver function of that name to forward to", wrapped[i].name);
		return NULL;
	}
	void *none = NULL;
	if (!atomic_compare_exchange_strong_explicit(&real[i], &none, p, memory_order_acq_rel, memory_order_acquire))
		p = none;
	return p;
}

/* ---- cuGraphLaunch ---- */

/* A launch failed: nothing was queued. */
static void launch_failed(uint64_t ticket1, CUresult r)
{
	struct nw_seg_op *op = nw_ring_hold(ticket1);
	if (!op)
		return;
	atomic_store_explicit(&op->cuda_error, (int32_t)r, memory_order_relaxed);
	atomic_store_explicit(&op->end_ns, nw_now_ns(), memory_order_relaxed);
	atomic_store_explicit(&op->state, NW_ST_FAILED, memory_order_release);
	nw_ring_release(op);
}

static CUresult launch(int which, CUgraphExec exec, CUstream s, uint64_t caller)
{
	launch_fn real_ = (launch_fn)real_fn(which);
	if (__builtin_expect(!real_, 0))
		return CUDA_ERROR_NOT_FOUND;
	struct nw_graph_exec *e = NULL;
	if (atomic_load_explicit(&nw_graphs_seen, memory_order_relaxed) && !nw_tls.inside)
		e = nw_graph_exec_find(exec);
	if (!e || !nw_recording())
		return real_(exec, s);
	uint32_t state = nw_op_initial_state;
	struct nw_track *t = nw_track_begin((uint64_t)(uintptr_t)s, &state);
	uint64_t replay = atomic_fetch_add_explicit(&e->replays, 1, memory_order_relaxed) + 1;
	uint64_t t1 = nw_record_graph_launch(e, (uint64_t)(uintptr_t)exec, replay, (uint64_t)(uintptr_t)s, caller,
	                                     state);
	if (t)
		nw_track_bind(t, t1, NULL, replay, NW_OP_GRAPH_LAUNCH, -1);   /* no comm: no position moves */
	if (!t1)
		t = NULL;
	/* its ops' events: the watchdog reads them while this launch is the
	 * newest one recording them (a reference keeps them meanwhile) */
	struct nw_graph_opev *ev = t ? atomic_load_explicit(&e->opev, memory_order_acquire) : NULL;
	if (ev)
		nw_graph_opev_ref(ev);
	nw_tls.inside = 1;
	CUresult r = real_(exec, s);
	nw_tls.inside = 0;
	if (ev && r == CUDA_SUCCESS) {
		t->opev = ev;
		atomic_store_explicit(&ev->latest, t1, memory_order_release);
	} else if (ev) {
		nw_graph_opev_unref(ev);
	}
	if (r != CUDA_SUCCESS)
		launch_failed(t1, r);
	if (t)
		nw_track_end(t, r == CUDA_SUCCESS ? ncclSuccess : ncclUnhandledCudaError, NULL);
	return r;
}

NW_EXPORT CUresult cuGraphLaunch(CUgraphExec e, CUstream s) { return launch(W_LAUNCH, e, s, NW_CALLER); }
NW_EXPORT CUresult cuGraphLaunch_ptsz(CUgraphExec e, CUstream s) { return launch(W_LAUNCH_PTSZ, e, s, NW_CALLER); }

/* ---- instantiate, destroy, end of capture ---- */

#define NW_REAL_CALL(which, type, ...) ({ \
	type real_ = (type)real_fn(which); \
	CUresult r_ = CUDA_ERROR_NOT_FOUND; \
	if (real_) { \
		int saved_ = nw_tls.inside; \
		nw_tls.inside = 1; \
		r_ = real_(__VA_ARGS__); \
		nw_tls.inside = saved_; \
	} \
	r_; })

/* Bookkeeping only for the outermost call (the driver may call itself). */
static void instantiated(CUresult r, int outer, CUgraphExec *e, CUgraph g)
{
	if (r == CUDA_SUCCESS && outer && e && atomic_load_explicit(&nw_graphs_seen, memory_order_acquire))
		nw_graph_instantiated(*e, g);
}

NW_EXPORT CUresult cuGraphInstantiate(CUgraphExec *e, CUgraph g, CUgraphNode *err, char *log, size_t n)
{
	int outer = !nw_tls.inside;
	CUresult r = NW_REAL_CALL(W_INST_V1, instantiate_v1_fn, e, g, err, log, n);
	instantiated(r, outer, e, g);
	return r;
}

NW_EXPORT CUresult cuGraphInstantiate_v2(CUgraphExec *e, CUgraph g, CUgraphNode *err, char *log, size_t n)
{
	int outer = !nw_tls.inside;
	CUresult r = NW_REAL_CALL(W_INST_V2, instantiate_v1_fn, e, g, err, log, n);
	instantiated(r, outer, e, g);
	return r;
}

NW_EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *e, CUgraph g, unsigned long long flags)
{
	int outer = !nw_tls.inside;
	CUresult r = NW_REAL_CALL(W_INST_FLAGS, instantiate_flags_fn, e, g, flags);
	instantiated(r, outer, e, g);
	return r;
}

NW_EXPORT CUresult cuGraphInstantiateWithParams(CUgraphExec *e, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
	int outer = !nw_tls.inside;
	CUresult r = NW_REAL_CALL(W_INST_PARAMS, instantiate_params_fn, e, g, p);
	instantiated(r, outer, e, g);
	return r;
}

NW_EXPORT CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec *e, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
	int outer = !nw_tls.inside;
	CUresult r = NW_REAL_CALL(W_INST_PARAMS_PTSZ, instantiate_params_fn, e, g, p);
	instantiated(r, outer, e, g);
	return r;
}

NW_EXPORT CUresult cuGraphExecDestroy(CUgraphExec e)
{
	if (!nw_tls.inside)
		nw_graph_exec_forget(e);
	return NW_REAL_CALL(W_EXEC_DESTROY, exec_destroy_fn, e);
}

NW_EXPORT CUresult cuGraphDestroy(CUgraph g)
{
	if (!nw_tls.inside)
		nw_graph_forget(g);
	return NW_REAL_CALL(W_DESTROY, graph_destroy_fn, g);
}

/* A successful update: the exec runs the new graph's ops from now on. A
 * failed one left the exec as it was. */
static void updated(CUresult r, int outer, CUgraphExec e, CUgraph g)
{
	if (r == CUDA_SUCCESS && outer && atomic_load_explicit(&nw_graphs_seen, memory_order_acquire))
		nw_graph_exec_updated(e, g);
}

NW_EXPORT CUresult cuGraphExecUpdate(CUgraphExec e, CUgraph g, CUgraphNode *err, CUgraphExecUpdateResult *res)
{
	int outer = !nw_tls.inside;
	CUresult r = NW_REAL_CALL(W_EXEC_UPDATE, exec_update_v1_fn, e, g, err, res);
	updated(r, outer, e, g);
	return r;
}

NW_EXPORT CUresult cuGraphExecUpdate_v2(CUgraphExec e, CUgraph g, CUgraphExecUpdateResultInfo *info)
{
	int outer = !nw_tls.inside;
	CUresult r = NW_REAL_CALL(W_EXEC_UPDATE_V2, exec_update_v2_fn, e, g, info);
	updated(r, outer, e, g);
	return r;
}

/* A capture that fails leaves no graph: its entry goes. */
static CUresult end_capture(int which, CUstream s, CUgraph *out)
{
	CUgraph building = nw_tls.inside ? NULL : nw_graph_capturing(s);
	CUresult r = NW_REAL_CALL(which, end_capture_fn, s, out);
	if (r != CUDA_SUCCESS && building)
		nw_graph_forget(building);
	return r;
}

NW_EXPORT CUresult cuStreamEndCapture(CUstream s, CUgraph *g) { return end_capture(W_END_CAPTURE, s, g); }
NW_EXPORT CUresult cuStreamEndCapture_ptsz(CUstream s, CUgraph *g) { return end_capture(W_END_CAPTURE_PTSZ, s, g); }

/* ---- cuGetProcAddress ---- */

/* Off unless NCCLWATCH_GRAPH_PROCADDR=1: on an H100 (driver 580.159.04,
 * 2026-11-26) a program that took its graph calls from cuGetProcAddress
 * under the preload died with SIGSEGV between the capture and the
 * instantiation, while the same calls bound by the linker were recorded
 * 100 times of 100; the cause is not known yet, and a job must never be
 * hurt to record it. Read once (cuGetProcAddress is not on a hot path). */
static int procaddr_on(void)
{
	static int on = -1;
	int v = __atomic_load_n(&on, __ATOMIC_RELAXED);
	if (v < 0) {
		const char *e = getenv("NCCLWATCH_GRAPH_PROCADDR");
		v = e && !strcmp(e, "1");
		__atomic_store_n(&on, v, __ATOMIC_RELAXED);
	}
	return v;
}

/* What to hand out for `symbol` found as p. */
static void *proc_redirect(const char *symbol, void *p)
{
	if (!p || !symbol || nw_disabled() || is_ours(p) || !procaddr_on())
		return p;
	int named = 0;
	for (int i = 0; i < W_COUNT; i++) {
		if (strcmp(symbol, wrapped[i].base) != 0 &&
		    !(i == W_INST_FLAGS && !strcmp(symbol, "cuGraphInstantiate")))
			continue;
		named = 1;
		if (real_fn(i) == p)
			return wrapped[i].wrapper;
	}
	if (named)
		NW_LOG_ONCE("cuGetProcAddress(%s) gave a function ncclwatch does not know: graph launches "
		            "made through it are not recorded", symbol);
	return p;
}

NW_EXPORT CUresult cuGetProcAddress(const char *sym, void **pfn, int ver, cuuint64_t flags)
{
	CUresult r = NW_REAL_CALL(W_GETPROC_V1, getproc_v1_fn, sym, pfn, ver, flags);
	if (r == CUDA_SUCCESS && pfn)
		*pfn = proc_redirect(sym, *pfn);
	return r;
}

NW_EXPORT CUresult cuGetProcAddress_v2(const char *sym, void **pfn, int ver, cuuint64_t flags,
                                       CUdriverProcAddressQueryResult *status)
{
	CUresult r = NW_REAL_CALL(W_GETPROC_V2, getproc_v2_fn, sym, pfn, ver, flags, status);
	if (r == CUDA_SUCCESS && pfn)
		*pfn = proc_redirect(sym, *pfn);
	return r;
}

/* ---- dlsym ---- */

__attribute__((optimize("no-tree-loop-distribute-patterns")))
NW_NO_SANITIZE int nw_cuda_wrapped_index(const char *name)
{
	if (!name || name[0] != 'c' || name[1] != 'u')
		return -1;
	for (int i = 0; i < W_COUNT; i++) {
		const char *a = wrapped[i].name + 2, *b = name + 2;
		while (*a && *a == *b) {
			a++;
			b++;
		}
		if (*a == *b)
			return i;
	}
	return -1;
}

void *nw_cuda_dlsym_redirect(const char *name, void *sym, const void *caller)
{
	int i = nw_cuda_wrapped_index(name);
	if (i < 0 || !sym || nw_disabled() || is_ours(sym))
		return sym;
	Dl_info info;
	if (caller && dladdr(caller, &info) && info.dli_fname && is_cuda_library(info.dli_fname))
		return sym;                      /* the driver looking itself up */
	if (!dladdr(sym, &info) || !info.dli_fname || !is_cuda_library(info.dli_fname))
		return sym;
	void *none = NULL;
	atomic_compare_exchange_strong_explicit(&real[i], &none, sym, memory_order_acq_rel, memory_order_acquire);
	return real_fn(i) == sym ? wrapped[i].wrapper : sym;
}
