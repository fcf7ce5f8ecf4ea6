/* graph: the wait-for graph of a job (analysis_int.h): edges, their
 * compressed forward and reverse adjacency, strongly connected components
 * (Tarjan's algorithm without recursion: a chain of waits may be as long
 * as the job is large) and reverse reachability. All linear in nodes +
 * edges. */
#include "model.h"

#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

uint32_t nw_graph_junction(struct nw_graph *g)
{
	return g->nnodes++;
}

void nw_graph_edge(struct nw_graph *g, uint32_t src, uint32_t dst, int kind, const struct nw_seg_op *op,
                   const struct nw_comm_view *view, uint64_t seq, uint64_t peer_pos)
{
	if (g->oom || src == dst || (g->sink && src < g->nprocs && g->sink[src]))
		return;
	if (g->nedges == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 256;
		struct nw_edge *e = realloc(g->edges, cap * sizeof *e);
		if (!e) {
			g->oom = 1;
			return;
		}
		g->edges = e;
		g->cap = cap;
	}
	g->edges[g->nedges++] = (struct nw_edge){
		.src = src, .dst = dst, .kind = (uint8_t)kind, .op = op, .view = view, .seq = seq,
		.peer_pos = peer_pos,
	};
}

static int csr(const struct nw_graph *g, int reverse, uint32_t **off_out, uint32_t **adj_out)
{
	uint32_t *off = calloc((size_t)g->nnodes + 1, sizeof *off);
	uint32_t *adj = malloc((g->nedges ? g->nedges : 1) * sizeof *adj);
	if (!off || !adj) {
		free(off);
		free(adj);
		return -1;
	}
	for (size_t i = 0; i < g->nedges; i++)
		off[(reverse ? g->edges[i].dst : g->edges[i].src) + 1]++;
	for (uint32_t n = 0; n < g->nnodes; n++)
		off[n + 1] += off[n];
	uint32_t *fill = malloc(((size_t)g->nnodes + 1) * sizeof *fill);
	if (!fill) {
		free(off);
		free(adj);
		return -1;
	}
	memcpy(fill, off, ((size_t)g->nnodes + 1) * sizeof *fill);
	for (size_t i = 0; i < g->nedges; i++)
		adj[fill[reverse ? g->edges[i].dst : g->edges[i].src]++] = (uint32_t)i;
	free(fill);
	*off_out = off;
	*adj_out = adj;
	return 0;
}

struct frame {
	uint32_t node, pos;
};

static int tarjan(struct nw_graph *g)
{
	uint32_t n = g->nnodes;
	uint32_t *index = malloc(((size_t)n + 1) * sizeof *index);
	uint32_t *low = malloc(((size_t)n + 1) * sizeof *low);
	uint32_t *stack = malloc(((size_t)n + 1) * sizeof *stack);
	uint8_t *on = calloc((size_t)n + 1, 1);
	struct frame *calls = malloc(((size_t)n + 1) * sizeof *calls);
	g->scc = malloc(((size_t)n + 1) * sizeof *g->scc);
	if (!index || !low || !stack || !on || !calls || !g->scc) {
		free(index);
		free(low);
		free(stack);
		free(on);
		free(calls);
		return -1;
	}
	for (uint32_t v = 0; v < n; v++)
		index[v] = NONE;
	uint32_t next = 0, sp = 0, cp = 0;
	g->nscc = 0;
	for (uint32_t root = 0; root < n; root++) {
		if (index[root] != NONE)
			continue;
		calls[cp++] = (struct frame){ root, g->fwd_off[root] };
		index[root] = low[root] = next++;
		stack[sp++] = root;
		on[root] = 1;
		while (cp) {
			struct frame *f = &calls[cp - 1];
			uint32_t v = f->node;
			if (f->pos < g->fwd_off[v + 1]) {
				const struct nw_edge *e = &g->edges[g->fwd[f->pos++]];
				if (e->kind == NW_E_WAIT)
					continue;
				uint32_t w = e->dst;
				if (index[w] == NONE) {
					index[w] = low[w] = next++;
					stack[sp++] = w;
					on[w] = 1;
					calls[cp++] = (struct frame){ w, g->fwd_off[w] };
				} else if (on[w] && index[w] < low[v]) {
					low[v] = index[w];
				}
				continue;
			}
			if (low[v] == index[v]) {
				uint32_t w;
				do {
					w = stack[--sp];
					on[w] = 0;
					g->scc[w] = g->nscc;
				} while (w != v);
				g->nscc++;
			}
			cp--;
			if (cp) {
				uint32_t u = calls[cp - 1].node;
				if (low[v] < low[u])
					low[u] = low[v];
			}
		}
	}
	free(index);
	free(low);
	free(stack);
	free(on);
	free(calls);
	return 0;
}

int nw_graph_freeze(struct nw_graph *g)
{
	if (g->oom)
		return -1;
	if (csr(g, 0, &g->fwd_off, &g->fwd) || csr(g, 1, &g->rev_off, &g->rev) || tarjan(g))
		return -1;
	g->stamp = calloc((size_t)g->nnodes + 1, sizeof *g->stamp);
	g->stack = malloc(((size_t)g->nnodes + 1) * sizeof *g->stack);
	return g->stamp && g->stack ? 0 : -1;
}

size_t nw_graph_reaching(struct nw_graph *g, const uint32_t *seeds, size_t nseeds, uint32_t *out)
{
	/* Breadth first on the reverse edges; out[] is the queue. */
	uint32_t gen = ++g->gen;
	size_t head = 0, tail = 0;
	for (size_t i = 0; i < nseeds; i++)
		if (seeds[i] < g->nnodes && g->stamp[seeds[i]] != gen) {
			g->stamp[seeds[i]] = gen;
			out[tail++] = seeds[i];
		}
	while (head < tail) {
		uint32_t v = out[head++];
		for (uint32_t k = g->rev_off[v]; k < g->rev_off[v + 1]; k++) {
			uint32_t u = g->edges[g->rev[k]].src;
			if (g->stamp[u] != gen) {
				g->stamp[u] = gen;
				out[tail++] = u;
			}
		}
	}
	return tail;
}

int nw_graph_waits(struct nw_graph *g, uint32_t n)
{
	if (!g->fwd_off || !g->stamp || n >= g->nnodes)
		return 0;
	/* Depth first through junctions (each visited once per call: the
	 * stamps of this call's generation) to a process. */
	uint32_t gen = ++g->gen, sp = 0;
	int found = 0;
	g->stack[sp++] = n;
	g->stamp[n] = gen;
	while (sp && !found) {
		uint32_t v = g->stack[--sp];
		for (uint32_t k = g->fwd_off[v]; k < g->fwd_off[v + 1] && !found; k++) {
			const struct nw_edge *e = &g->edges[g->fwd[k]];
			if (e->kind == NW_E_WAIT || g->stamp[e->dst] == gen)
				continue;
			if (e->dst < g->nprocs) {
				found = 1;
				continue;
			}
			g->stamp[e->dst] = gen;
			g->stack[sp++] = e->dst;
		}
	}
	return found;
}

size_t nw_graph_never_issued(const struct nw_graph *g, uint32_t s, uint8_t *mark)
{
	size_t n = 0;
	for (size_t i = 0; i < g->nedges; i++) {
		const struct nw_edge *e = &g->edges[i];
		int never = e->kind == NW_E_COLL || e->kind == NW_E_INIT ||
		            (e->kind == NW_E_P2P && (!e->op || e->peer_pos < e->op->seq));
		if (!never || e->dst >= g->nprocs || g->scc[e->src] != s || g->scc[e->dst] != s || mark[e->dst])
			continue;
		mark[e->dst] = 1;
		n++;
	}
	return n;
}

void nw_graph_free(struct nw_graph *g)
{
	free(g->edges);
	free(g->fwd_off);
	free(g->fwd);
	free(g->rev_off);
	free(g->rev);
	free(g->scc);
	free(g->stamp);
	free(g->stack);
	memset(g, 0, sizeof *g);
}
