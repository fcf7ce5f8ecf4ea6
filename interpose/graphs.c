/* graphs: see graphs.h. */
#include "graphs.h"

#include "cuda_driver.h"
#include "log.h"
#include "ring.h"
#include "evpool.h"
#include "test_hooks.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct nw_graph {
	CUgraph graph;               /* NULL: free entry */
	uint64_t capture_id;
	uint32_t nops;
	struct nw_graph_op ops[NW_GRAPH_OPS];
	struct nw_graph_opev *opev;  /* its ops' events (graphs.h), NULL none yet */
};

#define KEY_EMPTY ((uintptr_t)0)
#define KEY_DELETED ((uintptr_t)1)

/* Both tables, one allocation (graphs.h): made under the lock at the first
 * capture of an NCCL op into a graph, published zeroed with a release
 * store, never freed while the process records (the launch path reads it
 * without the lock). */
struct tables {
	struct nw_graph graphs[NW_GRAPHS_MAX];
	struct nw_graph_exec execs[NW_GRAPH_EXECS];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct tables *_Atomic tables;   /* NULL: no graph holding NCCL ops captured yet */
static uint32_t execs_used;      /* live entries (under lock) */
static int warned;               /* under lock */
static int graphs_lost;          /* under lock: a graph holding NCCL ops may be missing from the table */
static atomic_int sink_warned;
_Atomic int nw_graphs_seen;
int nw_graph_op_events;

void nw_graph_opev_unref(struct nw_graph_opev *s)
{
	if (!s || atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1)
		return;
	for (uint32_t i = 0; i < s->n; i++)
		if (s->ev[i])
			nw_track_give_back(s->ev[i]);
	free(s);
}

/* The graph entry lets go of its events (destroyed, or its handle reused). */
static void graph_drop_events_locked(struct nw_graph *e)
{
	nw_graph_opev_unref(e->opev);
	e->opev = NULL;
}

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
	struct tables *t = atomic_load_explicit(&tables, memory_order_acquire);
	uintptr_t key = (uintptr_t)exec;
	if (!t || key <= KEY_DELETED)
		return NULL;
	struct nw_graph_exec *execs = t->execs;
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
	struct tables *t = atomic_load_explicit(&tables, memory_order_relaxed);
	for (int i = 0; t && i < NW_GRAPHS_MAX; i++)
		if (t->graphs[i].graph == g)
			return &t->graphs[i];
	return NULL;
}

/* The tables, allocated at the first call (lock held): 0, or -1 if
 * memory ran out (tried again at the next capture). calloc, not an mmap
 * of our own as pystack's scratch tables: these hold pointers to heap
 * objects (the per-op event sets), which LeakSanitizer sees only through
 * heap or static memory, and the sanitizer builds check their bounds.
 * glibc serves 184 KB from a mapping of its own (above its default mmap
 * threshold), whose pages stay untouched until an entry is used. */
static int tables_locked(void)
{
	if (atomic_load_explicit(&tables, memory_order_relaxed))
		return 0;
	struct tables *t = NW_TEST_GRAPH_ALLOC_FAILS() ? NULL : calloc(1, sizeof *t);
	if (!t)
		return -1;
	atomic_store_explicit(&tables, t, memory_order_release);
	return 0;
}

uint32_t nw_graph_captured(uint64_t stream, uint64_t ticket1)
{
	uint32_t tied = 0;
	struct nw_seg_op *rec = nw_ring_find(ticket1);
	if (!rec)
		return 0;
	struct nw_graph_op op = {
		.comm_id = rec->comm_id, .seq = rec->seq, .count = rec->count, .comm_slot = rec->comm_slot,
		.comm_gen = rec->comm_gen, .rank = rec->rank, .nranks = rec->nranks, .kind = rec->kind,
		.datatype = rec->datatype,
	};
	/* The record is ours to read: this thread wrote it just now and only
	 * a whole lap of the ring could reuse it. Check anyway. */
	if (nw_ring_find(ticket1) != rec)
		return 0;
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
	if (tables_locked() != 0) {
		graphs_lost = 1;
		untracked("no memory for the tables of CUDA graphs holding NCCL ops");
		goto out;
	}
	struct nw_graph *e = graph_find_locked(g);
	if (e && e->capture_id != id) { /* a graph freed without our knowing, its handle reused */
		e->nops = 0;
		e->capture_id = id;
		graph_drop_events_locked(e);
	}
	if (!e && (e = graph_find_locked(NULL))) {
		e->graph = g;
		e->capture_id = id;
		e->nops = 0;
		e->opev = NULL;
	}
	if (!e) {
		graphs_lost = 1;
		untracked("more than " "256" " CUDA graphs hold NCCL ops at once");
		goto out;
	}
	if (e->nops < NW_GRAPH_OPS)
		e->ops[e->nops] = op;
	if (e->nops < UINT32_MAX - 1)
		tied = ++e->nops;
	atomic_store_explicit(&nw_graphs_seen, 1, memory_order_release);
out:
	pthread_mutex_unlock(&lock);
	return tied;
}

/* Op op1 - 1 of graph entry e records an event of its own (the lock is
 * held, the op's stream is capturing into e): 1 done, 0 it cannot. */
static int op_event_locked(struct nw_graph *e, uint32_t op1, CUstream s)
{
	uint32_t i = op1 - 1;
	if (!op1 || i >= NW_GRAPH_OP_EVENTS)
		return 0;                           /* past the bound: the sink */
	if (!e->opev && (e->opev = calloc(1, sizeof *e->opev)))
		atomic_store_explicit(&e->opev->refs, 1, memory_order_relaxed);   /* the graph's */
	if (!e->opev || e->opev->ev[i])
		return 0;
	struct nw_track *t = nw_track_external(s);
	if (!t)
		return 0;
	e->opev->ev[i] = t;
	if (e->opev->n <= i)
		e->opev->n = i + 1;
	return 1;
}

void nw_graph_op_issued(uint64_t stream, uint32_t op1)
{
	if (!nw_graph_op_events)
		return;
	CUstream s = (CUstream)(uintptr_t)stream;
	CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
	cuuint64_t id = 0;
	CUgraph g = NULL;
	if (nw_cuda_capture_info(s, &status, &id, &g) != CUDA_SUCCESS || status != CU_STREAM_CAPTURE_STATUS_ACTIVE ||
	    !g)
		return;                             /* invalidated: the graph will never exist */
	pthread_mutex_lock(&lock);
	struct nw_graph *e = op1 ? graph_find_locked(g) : NULL;
	int done = e && e->capture_id == id && op1 <= e->nops && op_event_locked(e, op1, s);
	pthread_mutex_unlock(&lock);
	/* Not followed, or no event of its own: the node all the same, so
	 * this graph has the topology of every other capture of its code. */
	if (!done && !nw_track_sink(s) && !atomic_exchange(&sink_warned, 1))
		nw_log("cannot add an event-record node after a captured NCCL op: cuGraphExecUpdate "
		       "between this graph and another capture of the same code may fail "
		       "(NCCLWATCH_GRAPH_OP_EVENTS=0 adds none)");
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
	if (g->opev)
		nw_graph_opev_ref(g->opev);   /* the exec's node records these events */
	nw_graph_opev_unref(atomic_exchange_explicit(&e->opev, g->opev, memory_order_acq_rel));
}

static void exec_insert_locked(uintptr_t key, const struct nw_graph *g)
{
	if (execs_used >= NW_GRAPH_EXECS / 4 * 3) {
		untracked("more than 768 executable CUDA graphs hold NCCL ops at once");
		/* Its nodes record g's events at every launch: they must never
		 * go back to the pool (another op would read this exec's
		 * records). A reference nobody drops. */
		if (g->opev)
			nw_graph_opev_ref(g->opev);
		return;
	}
	/* g is in the graph table: the tables exist */
	struct nw_graph_exec *execs = atomic_load_explicit(&tables, memory_order_relaxed)->execs;
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
	nw_graph_opev_unref(atomic_exchange_explicit(&e->opev, NULL, memory_order_acq_rel));
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
	if (g) {
		graph_drop_events_locked(g);
		memset(g, 0, sizeof *g);
	}
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
	 * fork); it starts with no tables, as a process that never captured.
	 * The parent's copy is left behind with the events it names, never
	 * written (no page of it copied), nothing freed in a fork handler. */
	pthread_mutex_init(&lock, NULL);
	atomic_store(&tables, NULL);
	execs_used = 0;
	warned = 0;
	atomic_store(&sink_warned, 0);
	graphs_lost = 0;
	nw_graph_op_events = 0;            /* decided again when the child starts */
	atomic_store(&nw_graphs_seen, 0);
}
