/* graphs: see graphs.h. */
#include "graphs.h"

#include "cuda_driver.h"
#include "log.h"
#include "ring.h"

#include <pthread.h>
#include <string.h>

struct nw_graph {
	CUgraph graph;               /* NULL: free entry */
	uint64_t capture_id;
	uint32_t nops;
	struct nw_graph_op ops[NW_GRAPH_OPS];
};

#define KEY_EMPTY ((uintptr_t)0)
#define KEY_DELETED ((uintptr_t)1)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct nw_graph graphs[NW_GRAPHS_MAX];
static struct nw_graph_exec execs[NW_GRAPH_EXECS];
static uint32_t execs_used;      /* live entries (under lock) */
static int warned;               /* under lock */
static int graphs_lost;          /* under lock: a graph holding NCCL ops may be missing from the table */
_Atomic int nw_graphs_seen;

static void untracked(const char *what)
{
	if (nw_seg.hdr)
		atomic_fetch_add_explicit(&nw_seg.hdr->graphs_untracked, 1, memory_order_relaxed);
	if (!warned) {
		warned = 1;
		nw_log("%s: launches of such graphs are not recorded", what);
	}
}

static uint32_t exec_hash(uintptr_t key)
{
	uint64_t h = (uint64_t)key * 0x9e3779b97f4a7c15ull;
	return (uint32_t)(h >> 40) & (NW_GRAPH_EXECS - 1);
}

struct nw_graph_exec *nw_graph_exec_find(CUgraphExec exec)
{
	uintptr_t key = (uintptr_t)exec;
	if (key <= KEY_DELETED)
		return NULL;
	uint32_t i = exec_hash(key);
	for (uint32_t n = 0; n < NW_GRAPH_EXECS; n++, i = (i + 1) & (NW_GRAPH_EXECS - 1)) {
		uintptr_t k = atomic_load_explicit(&execs[i].key, memory_order_acquire);
		if (k == key)
			return &execs[i];
		if (k == KEY_EMPTY)
			return NULL;
	}
	return NULL;
}

static struct nw_graph *graph_find_locked(CUgraph g)
{
	for (int i = 0; i < NW_GRAPHS_MAX; i++)
		if (graphs[i].graph == g)
			return &graphs[i];
	return NULL;
}

void nw_graph_captured(uint64_t stream, uint64_t ticket1)
{
	struct nw_seg_op *rec = nw_ring_find(ticket1);
	if (!rec)
		return;
	struct nw_graph_op op = {
		.comm_id = rec->comm_id, .seq = rec->seq, .count = rec->count, .comm_slot = rec->comm_slot,
		.comm_gen = rec->comm_gen, .rank = rec->rank, .nranks = rec->nranks, .kind = rec->kind,
		.datatype = rec->datatype,
	};
	/* The record is ours to read: this thread wrote it just now and only
	 * a whole lap of the ring could reuse it. Check anyway. */
	if (nw_ring_find(ticket1) != rec)
		return;
	CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
	cuuint64_t id = 0;
	CUgraph g = NULL;
	pthread_mutex_lock(&lock);
	if (!nw_cuda_capture_info) {
		graphs_lost = 1;
		untracked("the CUDA driver has no cuStreamGetCaptureInfo (_v2 or _v3): captured ops cannot be tied to their graph");
		goto out;
	}
	if (nw_cuda_capture_info((CUstream)(uintptr_t)stream, &status, &id, &g) != CUDA_SUCCESS ||
	    status != CU_STREAM_CAPTURE_STATUS_ACTIVE || !g)
		goto out;                   /* invalidated: the graph will never exist */
	struct nw_graph *e = graph_find_locked(g);
	if (e && e->capture_id != id) { /* a graph freed without our knowing, its handle reused */
		e->nops = 0;
		e->capture_id = id;
	}
	if (!e && (e = graph_find_locked(NULL))) {
		e->graph = g;
		e->capture_id = id;
		e->nops = 0;
	}
	if (!e) {
		graphs_lost = 1;
		untracked("more than " "256" " CUDA graphs hold NCCL ops at once");
		goto out;
	}
	if (e->nops < NW_GRAPH_OPS)
		e->ops[e->nops] = op;
	e->nops++;
	atomic_store_explicit(&nw_graphs_seen, 1, memory_order_release);
out:
	pthread_mutex_unlock(&lock);
}

/* The exec runs g's ops from its next launch on: replays count from 1
 * (after an update too: the replays of the new graph's ops). The launch
 * path reads the description without the lock; CUDA forbids using one
 * executable graph from two threads at once (its graph objects are not
 * thread-safe), so no launch of e runs meanwhile. */
static void exec_describe_locked(struct nw_graph_exec *e, const struct nw_graph *g)
{
	e->nops = g->nops;
	e->first = g->ops[0];
	atomic_store_explicit(&e->replays, 0, memory_order_relaxed);
}

static void exec_insert_locked(uintptr_t key, const struct nw_graph *g)
{
	if (execs_used >= NW_GRAPH_EXECS / 4 * 3) {
		untracked("more than 768 executable CUDA graphs hold NCCL ops at once");
		return;
	}
	uint32_t i = exec_hash(key);
	while (atomic_load_explicit(&execs[i].key, memory_order_relaxed) > KEY_DELETED)
		i = (i + 1) & (NW_GRAPH_EXECS - 1);
	struct nw_graph_exec *e = &execs[i];
	exec_describe_locked(e, g);
	atomic_store_explicit(&e->key, key, memory_order_release);
	execs_used++;
}

static void exec_remove_locked(struct nw_graph_exec *e)
{
	atomic_store_explicit(&e->key, KEY_DELETED, memory_order_release);
	execs_used--;
}

void nw_graph_instantiated(CUgraphExec exec, CUgraph graph)
{
	uintptr_t key = (uintptr_t)exec;
	if (key <= KEY_DELETED)
		return;
	pthread_mutex_lock(&lock);
	struct nw_graph *g = graph ? graph_find_locked(graph) : NULL;
	struct nw_graph_exec *e = nw_graph_exec_find(exec);
	if (g && g->nops && e)
		exec_describe_locked(e, g);   /* destroyed without our knowing, handle reused */
	else if (g && g->nops)
		exec_insert_locked(key, g);
	else if (e)
		exec_remove_locked(e);
	pthread_mutex_unlock(&lock);
}

void nw_graph_exec_updated(CUgraphExec exec, CUgraph graph)
{
	uintptr_t key = (uintptr_t)exec;
	if (key <= KEY_DELETED)
		return;
	pthread_mutex_lock(&lock);
	struct nw_graph *g = graph ? graph_find_locked(graph) : NULL;
	struct nw_graph_exec *e = nw_graph_exec_find(exec);
	if (g && g->nops && e) {
		exec_describe_locked(e, g);
	} else if (g && g->nops) {
		exec_insert_locked(key, g);
	} else {
		/* graph holds no NCCL op we know of: unless the table lost
		 * some, it holds none, and the exec's launches record nothing */
		if (e)
			exec_remove_locked(e);
		if (graphs_lost)
			untracked("an executable CUDA graph was updated from a graph ncclwatch did not follow");
	}
	pthread_mutex_unlock(&lock);
}

void nw_graph_exec_forget(CUgraphExec exec)
{
	if (!atomic_load_explicit(&nw_graphs_seen, memory_order_acquire))
		return;
	pthread_mutex_lock(&lock);
	struct nw_graph_exec *e = nw_graph_exec_find(exec);
	if (e)
		exec_remove_locked(e);
	pthread_mutex_unlock(&lock);
}

void nw_graph_forget(CUgraph graph)
{
	if (!graph || !atomic_load_explicit(&nw_graphs_seen, memory_order_acquire))
		return;
	pthread_mutex_lock(&lock);
	struct nw_graph *g = graph_find_locked(graph);
	if (g)
		memset(g, 0, sizeof *g);
	pthread_mutex_unlock(&lock);
}

CUgraph nw_graph_capturing(CUstream stream)
{
	if (!atomic_load_explicit(&nw_graphs_seen, memory_order_acquire) || !nw_cuda_capture_info)
		return NULL;
	CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
	cuuint64_t id = 0;
	CUgraph g = NULL;
	if (nw_cuda_capture_info(stream, &status, &id, &g) != CUDA_SUCCESS ||
	    status == CU_STREAM_CAPTURE_STATUS_NONE)
		return NULL;
	return g;
}

void nw_graph_reset_after_fork(void)
{
	/* The child has none of the parent's graphs (CUDA does not survive
	 * fork); it starts with empty tables. */
	pthread_mutex_init(&lock, NULL);
	memset(graphs, 0, sizeof graphs);
	for (int i = 0; i < NW_GRAPH_EXECS; i++)
		atomic_store(&execs[i].key, KEY_EMPTY);
	execs_used = 0;
	warned = 0;
	graphs_lost = 0;
	atomic_store(&nw_graphs_seen, 0);
}
