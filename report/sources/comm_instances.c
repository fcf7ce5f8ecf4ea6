/* comm_instances: the communicators a segment's ops and peer entries
 * belong to, one per comm instance. Since format 2.0 a comm slot whose
 * communicator ended is given to a new one (docs/FORMAT.md, "Comm slot
 * reuse"): the ring may still hold ops of the old comm, carrying the slot
 * and its old generation, and the peer table its positions. Each such
 * (slot, generation) becomes a comm of its own, rebuilt from its ops: id,
 * rank and size (every record carries them), how it ended (its life-cycle
 * records; a slot is only given away once its comm was destroyed, aborted
 * or failed to initialize), and its positions as far as the ring still
 * holds them. So the engine sees what it would have seen had the slot not
 * been reused, and never an old op on the slot's new comm.
 *
 * The comms come in creation order (the table's slots, the rebuilt ones
 * by their first record): the rules count a parent's splits in that
 * order. A file with no reuse (every 1.x file) keeps its table as is. */
#include "sources.h"

#include <stdlib.h>
#include <string.h>

struct ghost {
	uint64_t key;                  /* slot << 32 | generation */
	uint32_t index;                /* in the combined array */
	UT_hash_handle hh;
};

static uint64_t key_of(uint32_t slot, uint32_t gen)
{
	return (uint64_t)slot << 32 | gen;
}

static void max_into(NW_ATOMIC(uint64_t) *m, uint64_t v)
{
	if (v > *m)
		*m = v;
}

/* What one record tells of its (rebuilt) comm. */
static void learn(struct nw_seg_comm *c, const struct nw_seg_op *op, int first)
{
	if (first) {
		c->comm_id = op->comm_id;
		c->rank = op->rank;
		c->nranks = op->nranks;
		c->cuda_device = -1;
		c->blocking = !(op->flags & NW_OPF_NONBLOCKING);
		c->origin = NW_ORIGIN_INIT_RANK;        /* which init is not in the record */
		c->init_enter_ns = op->enqueue_ns;      /* its first record at least */
		c->state = NW_COMM_DESTROYED;           /* its slot was given away: it had ended */
	}
	if (op->rank >= 0 && c->rank < 0) {
		c->rank = op->rank;                     /* a Split's child learns it after creation */
		c->nranks = op->nranks;
	}
	uint32_t st = op->state;
	switch (op->kind) {
	case NW_OP_COMM_SPLIT:
	case NW_OP_COMM_SHRINK:
	case NW_OP_COMM_INIT:
		c->origin = op->kind == NW_OP_COMM_SPLIT ? NW_ORIGIN_SPLIT
		          : op->kind == NW_OP_COMM_SHRINK ? NW_ORIGIN_SHRINK : c->origin;
		c->init_enter_ns = op->enqueue_ns;
		c->init_done_ns = op->end_ns;
		c->init_result = op->result;
		if (st == NW_ST_INIT_FAILED)
			c->state = NW_COMM_INIT_FAILED;
		return;
	case NW_OP_COMM_DESTROY:
		c->state = NW_COMM_DESTROYED;
		c->end_ns = op->enqueue_ns;
		return;
	case NW_OP_COMM_ABORT:
		c->state = NW_COMM_ABORTED;
		c->end_ns = op->enqueue_ns;
		return;
	case NW_OP_ASYNC_ERROR:
		c->async_error = op->result;
		return;
	default:
		break;
	}
	if (NW_OP_IS_COLL(op->kind) && op->seq && st != NW_ST_DISCARDED) {
		max_into(&c->coll_enqueued, op->seq);
		max_into(&c->coll_enqueued_ns, op->enqueue_ns);
		if (st == NW_ST_STARTED || st == NW_ST_COMPLETED) {
			max_into(&c->coll_started, op->seq);
			max_into(&c->coll_started_ns, op->start_ns);
		}
		if (st == NW_ST_COMPLETED) {
			max_into(&c->coll_completed, op->seq);
			max_into(&c->coll_completed_ns, op->end_ns);
		}
	} else if (NW_OP_IS_P2P(op->kind) && st != NW_ST_DISCARDED) {
		c->p2p_enqueued++;                      /* those the ring still holds */
		max_into(&c->p2p_enqueued_ns, op->enqueue_ns);
		if (st == NW_ST_COMPLETED) {
			c->p2p_completed++;
			max_into(&c->p2p_completed_ns, op->end_ns);
		}
	}
}

/* The table slot an op or peer entry of (slot, gen) belongs to: slot when
 * the table's comm there has that generation, else UINT32_MAX. */
static uint32_t table_of(const struct nw_segment *seg, uint32_t slot, uint32_t gen)
{
	return slot < seg->comm_count && seg->comms[slot].gen == gen ? slot : UINT32_MAX;
}

struct order {
	uint64_t created;
	uint32_t index;
};

static int cmp_order(const void *a, const void *b)
{
	const struct order *x = a, *y = b;
	if (x->created != y->created)
		return x->created < y->created ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* The comms whose slot was given away, rebuilt from their ops. */
struct ghosts {
	struct ghost *map;               /* (slot, gen) -> index past the table */
	struct nw_seg_comm *comms;       /* [n] */
	uint32_t n, cap;
};

/* The ghost comm of an op whose comm left the table (a new one on its
 * first op). NULL out of memory. */
static struct ghost *ghost_of(struct ghosts *gs, uint32_t ntable, const struct nw_seg_op *op, int *first)
{
	struct ghost *g;
	uint64_t key = key_of(op->comm_slot, op->comm_gen);
	HASH_FIND(hh, gs->map, &key, sizeof key, g);
	*first = !g;
	if (g)
		return g;
	if (gs->n == gs->cap) {
		uint32_t c2 = gs->cap ? 2 * gs->cap : 8;
		struct nw_seg_comm *m = realloc(gs->comms, c2 * sizeof *m);
		if (!m)
			return NULL;
		gs->comms = m;
		gs->cap = c2;
	}
	if (!(g = calloc(1, sizeof *g)))
		return NULL;
	g->key = key;
	g->index = ntable + gs->n;
	memset(&gs->comms[gs->n], 0, sizeof *gs->comms);
	atomic_store_explicit(&gs->comms[gs->n].gen, op->comm_gen, memory_order_relaxed);
	gs->n++;
	HASH_ADD(hh, gs->map, key, sizeof g->key, g);
	if (nw_hash_oom_taken()) {
		free(g);
		return NULL;
	}
	return g;
}

/* Each op's comm (op_comm[i], UINT32_MAX none); the comms whose slot was
 * given away, rebuilt into gs. -1 out of memory. */
static int op_comms(const struct nw_segment *seg, uint32_t *op_comm, struct ghosts *gs)
{
	const uint32_t ntable = seg->comm_count;
	for (size_t i = 0; i < seg->op_count; i++) {
		const struct nw_seg_op *op = &seg->ops[i];
		op_comm[i] = UINT32_MAX;
		if (op->comm_slot >= ntable)
			continue;                               /* no comm, or one never published */
		if ((op_comm[i] = table_of(seg, op->comm_slot, op->comm_gen)) != UINT32_MAX)
			continue;
		int first;
		struct ghost *g = ghost_of(gs, ntable, op, &first);
		if (!g)
			return -1;
		learn(&gs->comms[g->index - ntable], op, first);
		op_comm[i] = g->index;
	}
	return 0;
}

/* The peer entries of known comms (table or ghost), their comm_slot the
 * comm's index; returns how many. */
static uint32_t known_peers(const struct nw_segment *seg, const struct ghosts *gs, struct nw_seg_peer *peers)
{
	uint32_t npeers = 0;
	for (uint32_t i = 0; i < seg->peer_count; i++) {
		const struct nw_seg_peer *pe = &seg->peers[i];
		uint32_t at = table_of(seg, pe->comm_slot, pe->comm_gen);
		if (at == UINT32_MAX && pe->comm_slot < seg->comm_count) {
			struct ghost *g;
			uint64_t key = key_of(pe->comm_slot, pe->comm_gen);
			HASH_FIND(hh, gs->map, &key, sizeof key, g);
			at = g ? g->index : UINT32_MAX;
		}
		if (at == UINT32_MAX)
			continue;                           /* its comm is gone from the ring too */
		peers[npeers] = *pe;
		peers[npeers++].comm_slot = at;
	}
	return npeers;
}

/* The n comms of *all sorted by creation, the ops' and peers' indexes
 * renumbered (ord, perm: scratch of n). -1 out of memory. */
static int creation_order(struct nw_seg_comm **all, uint32_t n, struct order *ord, uint32_t *perm,
                          uint32_t *op_comm, size_t nops, struct nw_seg_peer *peers, uint32_t npeers)
{
	for (uint32_t i = 0; i < n; i++)
		ord[i] = (struct order){ (*all)[i].init_enter_ns, i };
	qsort(ord, n, sizeof *ord, cmp_order);
	struct nw_seg_comm *sorted = malloc((n ? n : 1) * sizeof *sorted);
	if (!sorted)
		return -1;
	for (uint32_t k = 0; k < n; k++) {
		sorted[k] = (*all)[ord[k].index];
		perm[ord[k].index] = k;
	}
	free(*all);
	*all = sorted;
	for (size_t i = 0; i < nops; i++)
		if (op_comm[i] != UINT32_MAX)
			op_comm[i] = perm[op_comm[i]];
	for (uint32_t i = 0; i < npeers; i++)
		peers[i].comm_slot = perm[peers[i].comm_slot];
	return 0;
}

int nw_comm_instances(const struct nw_segment *seg, struct nw_comm_instances *out)
{
	memset(out, 0, sizeof *out);
	const uint32_t ntable = seg->comm_count;
	struct ghosts gs = { 0 };
	struct ghost *g, *gt;
	int oom = 0, reused = 0;
	uint32_t *op_comm = malloc((seg->op_count ? seg->op_count : 1) * sizeof *op_comm);
	if (!op_comm)
		return -1;
	for (uint32_t i = 0; i < ntable; i++)
		reused |= seg->comms[i].gen != 0;
	oom = op_comms(seg, op_comm, &gs) != 0;

	/* The combined array, and the peer entries of known comms. */
	const uint32_t n = ntable + gs.n;
	struct nw_seg_comm *all = oom ? NULL : malloc((n ? n : 1) * sizeof *all);
	struct nw_seg_peer *peers = oom ? NULL : malloc((seg->peer_count ? seg->peer_count : 1) * sizeof *peers);
	uint32_t *perm = oom ? NULL : malloc((n ? n : 1) * sizeof *perm);
	struct order *ord = oom ? NULL : malloc((n ? n : 1) * sizeof *ord);
	if (!all || !peers || !perm || !ord) {
		oom = 1;
		goto out;
	}
	memcpy(all, seg->comms, ntable * sizeof *all);
	if (gs.n)
		memcpy(all + ntable, gs.comms, gs.n * sizeof *all);
	uint32_t npeers = known_peers(seg, &gs, peers);

	/* Creation order, when slots were reused (else the table's is it). */
	for (uint32_t i = 0; i < n; i++)
		perm[i] = i;
	if ((reused || gs.n) && creation_order(&all, n, ord, perm, op_comm, seg->op_count, peers, npeers)) {
		oom = 1;
		goto out;
	}
	out->ncomms = n;
	out->comms = all;
	out->npeers = npeers;
	out->peers = peers;
	out->op_comm = op_comm;
	all = NULL;
	peers = NULL;
	op_comm = NULL;
out:
	HASH_ITER(hh, gs.map, g, gt) {
		HASH_DEL(gs.map, g);
		free(g);
	}
	free(gs.comms);
	free(all);
	free(peers);
	free(perm);
	free(ord);
	free(op_comm);
	return oom ? -1 : 0;
}

void nw_comm_instances_free(struct nw_comm_instances *ci)
{
	free(ci->comms);
	free(ci->peers);
	free(ci->op_comm);
	memset(ci, 0, sizeof *ci);
}
