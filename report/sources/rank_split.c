/* rank_split: a process is a container of ranks, and the engine's unit is
 * the rank. A process that drives several ranks (JAX: one process per host
 * for all its GPUs; ncclCommInitAll; a thread per GPU) records the comms of
 * all of them in one segment. Such a process becomes one view per rank
 * before the model is built, so that every rule sees ranks:
 *
 *   - a rank drives one CUDA device: its comms are those of one device
 *     (a comm of unknown device, a rebuilt one of a reused slot, follows
 *     the comm of the same id or its parent, else the first rank);
 *   - its ops and peer positions are those of its comms (ops of no comm,
 *     the group calls, go to the ranks whose threads issued them);
 *   - its threads are those that issued its ops, and those that issued no
 *     op at all (the main thread waiting for the others, helpers);
 *   - its global rank is its rank in its largest communicator made by an
 *     init, and the job's size that comm's: the launcher's rank variable
 *     (RANK=process index under srun or mpirun) names the process, not
 *     the rank.
 *
 * Everything else (identity, liveness, clocks, counters) is the process's,
 * the same in each view.
 */
#include "sources.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GROUPS 64                  /* devices of one process */

/* The rank (0..ngroups-1) each comm of p belongs to; returns the count. */
static int group_comms(const struct nw_proc *p, int *group, int32_t *device_of)
{
	int ngroups = 0;
	for (uint32_t i = 0; i < p->ncomms; i++) {
		int32_t d = p->comms[i].cuda_device;
		group[i] = -1;
		if (d < 0)
			continue;
		int g = 0;
		while (g < ngroups && device_of[g] != d)
			g++;
		if (g == ngroups) {
			if (ngroups == MAX_GROUPS)
				return 1;  /* not a shape we know: leave the process whole */
			device_of[ngroups++] = d;
		}
		group[i] = g;
	}
	/* Unknown devices: a comm of the same id, else its parent's, else rank 0. */
	for (uint32_t i = 0; i < p->ncomms; i++) {
		if (group[i] >= 0)
			continue;
		const struct nw_seg_comm *c = &p->comms[i];
		for (uint32_t k = 0; k < p->ncomms && group[i] < 0; k++)
			if (group[k] >= 0 && p->comms[k].comm_id == c->comm_id)
				group[i] = group[k];
		for (uint32_t k = 0; k < p->ncomms && group[i] < 0; k++)
			if (group[k] >= 0 && c->parent_id && p->comms[k].comm_id == c->parent_id)
				group[i] = group[k];
		if (group[i] < 0)
			group[i] = 0;
	}
	return ngroups;
}

/* Is thread tid one of rank g's: it issued an op of g, or no op at all? */
static int keep_thread(const struct nw_proc *p, const int *op_group, int g, uint32_t tid)
{
	int issued_any = 0;
	for (size_t i = 0; i < p->nops; i++) {
		if (p->ops[i].tid != tid)
			continue;
		if (op_group[i] == g)
			return 1;
		issued_any = 1;
	}
	return !issued_any;
}

/* The view of p's rank g; NULL when out of memory. */
static struct nw_proc *rank_view(const struct nw_proc *p, const int *group, const int *op_group, int g)
{
	struct nw_proc *v = calloc(1, sizeof *v);
	uint32_t *remap = calloc(p->ncomms ? p->ncomms : 1, sizeof *remap);
	if (!v || !remap)
		goto oom;
	*v = *p;
	v->path = strdup(p->path);
	v->comms = calloc(p->ncomms ? p->ncomms : 1, sizeof *v->comms);
	v->peers = calloc(p->npeers ? p->npeers : 1, sizeof *v->peers);
	v->ops = calloc(p->nops ? p->nops : 1, sizeof *v->ops);
	v->threads = calloc(p->nthreads ? p->nthreads : 1, sizeof *v->threads);
	v->op_site = p->op_site ? calloc(p->nops ? p->nops : 1, sizeof *v->op_site) : NULL;
	if (!v->path || !v->comms || !v->peers || !v->ops || !v->threads || (p->op_site && !v->op_site))
		goto oom;
	v->ncomms = v->npeers = v->nthreads = 0;
	v->nops = 0;

	const struct nw_seg_comm *world = NULL;
	for (uint32_t i = 0; i < p->ncomms; i++) {
		remap[i] = UINT32_MAX;
		if (group[i] != g)
			continue;
		remap[i] = v->ncomms;
		v->comms[v->ncomms++] = p->comms[i];
		const struct nw_seg_comm *c = &p->comms[i];
		int made_by_init = c->origin != NW_ORIGIN_SPLIT && c->origin != NW_ORIGIN_SHRINK;
		if (made_by_init && c->rank >= 0 && (!world || c->nranks > world->nranks))
			world = c;
	}
	for (size_t i = 0; i < p->nops; i++) {
		if (op_group[i] != g)
			continue;
		if (p->op_site)
			v->op_site[v->nops] = p->op_site[i];
		v->ops[v->nops] = p->ops[i];
		uint32_t s = p->ops[i].comm_slot;
		if (s < p->ncomms)
			v->ops[v->nops].comm_slot = remap[s];
		v->nops++;
	}
	for (uint32_t i = 0; i < p->npeers; i++) {
		uint32_t s = p->peers[i].comm_slot;
		if (s < p->ncomms && remap[s] != UINT32_MAX) {
			v->peers[v->npeers] = p->peers[i];
			v->peers[v->npeers++].comm_slot = remap[s];
		}
	}
	for (uint32_t i = 0; i < p->nthreads; i++)
		if (keep_thread(p, op_group, g, p->threads[i].tid))
			v->threads[v->nthreads++] = p->threads[i];
	v->rank = world ? world->rank : -1;
	v->hdr.global_rank = v->rank;
	v->hdr.world_size = world ? world->nranks : -1;
	free(remap);
	return v;
oom:
	free(remap);
	nw_proc_free(v);
	return NULL;
}

/* The rank of each op: its comm's; an op of no comm, that of the comms
 * its thread issued (the first such), else rank 0. */
static void group_ops(const struct nw_proc *p, const int *group, int *op_group)
{
	for (size_t i = 0; i < p->nops; i++) {
		uint32_t s = p->ops[i].comm_slot;
		op_group[i] = s < p->ncomms ? group[s] : -1;
	}
	for (size_t i = 0; i < p->nops; i++) {
		if (op_group[i] >= 0)
			continue;
		op_group[i] = 0;
		for (size_t k = 0; k < p->nops; k++)
			if (p->ops[k].tid == p->ops[i].tid && p->ops[k].comm_slot < p->ncomms) {
				op_group[i] = group[p->ops[k].comm_slot];
				break;
			}
	}
}

/* Replaces procs[at] by its rank views (appended at the end); 0, or -1
 * out of memory (procs unchanged). */
static int split_one(struct nw_proc ***procs, size_t *n, size_t at)
{
	struct nw_proc *p = (*procs)[at];
	int *group = calloc(p->ncomms ? p->ncomms : 1, sizeof *group);
	int32_t device_of[MAX_GROUPS];
	if (!group)
		return -1;
	int ngroups = group_comms(p, group, device_of);
	if (ngroups < 2) {
		free(group);
		return 0;
	}
	int *op_group = calloc(p->nops ? p->nops : 1, sizeof *op_group);
	struct nw_proc **grown = realloc(*procs, (*n + (size_t)ngroups) * sizeof *grown);
	if (grown)
		*procs = grown;
	if (!op_group || !grown) {
		free(op_group);
		free(group);
		return -1;
	}
	group_ops(p, group, op_group);
	struct nw_proc *views[MAX_GROUPS];
	for (int g = 0; g < ngroups; g++) {
		if ((views[g] = rank_view(p, group, op_group, g))) {
			views[g]->view_of_process = (uint32_t)g;
			views[g]->views_in_process = (uint32_t)ngroups;
		}
		else {
			while (g-- > 0)
				nw_proc_free(views[g]);
			free(op_group);
			free(group);
			return -1;
		}
	}
	free(op_group);
	free(group);
	grown[at] = views[0];
	for (int g = 1; g < ngroups; g++)
		grown[(*n)++] = views[g];
	nw_proc_free(p);
	return 0;
}

int nw_split_ranks(struct nw_proc ***procs, size_t *nprocs)
{
	size_t n = *nprocs;
	for (size_t i = 0; i < n; i++)
		if (split_one(procs, nprocs, i))
			return -1;
	return 0;
}

int nw_same_process(const struct nw_proc *a, const struct nw_proc *b)
{
	return a->hdr.pid == b->hdr.pid && a->hdr.start_realtime_ns == b->hdr.start_realtime_ns &&
	       !strcmp(a->hdr.host, b->hdr.host);
}

/* ---- a snapshot of several ranks ----
 *
 * A snapshot holds no comm table: which ranks a process drives comes from
 * a source that names ranks by pid (NCCL RAS: k ranks with its pid), and
 * which thread drives which rank from the threads themselves:
 *
 *   - the threads a program starts carry its name (the main thread's) until
 *     it renames them, a library's helpers their own ("NCCL RAS"): exactly
 *     k such threads besides the main thread are a thread per rank;
 *   - none besides the main thread: it drives every rank (one thread, the
 *     ranks' calls grouped): each view has all the threads, though a CUDA
 *     host function one of them runs is no view's (whose stream it blocks
 *     is not known);
 *   - a thread per rank, all with one stack: which is which does not
 *     matter, view i takes the i-th; stacks that differ, or another count
 *     of threads: which rank a stack is cannot be told, and a view with no
 *     stack says so (no rule reads a rank where it is not known to be). */

static int same_frames(const struct nw_thread_stack *a, const struct nw_thread_stack *b)
{
	if (a->nframes != b->nframes)
		return 0;
	for (uint32_t i = 0; i < a->nframes; i++)
		if (a->frames[i] != b->frames[i] && strcmp(a->frames[i], b->frames[i]))
			return 0;
	return 1;
}

/* The threads of p that carry the main thread's name, main excluded, into
 * idx[]; their count (at most max + 1). */
static uint32_t program_threads(const struct nw_proc *p, uint32_t *idx, uint32_t max)
{
	const struct nw_thread_stack *m = NULL;
	for (uint32_t i = 0; i < p->nthreads && !m; i++)
		if ((int64_t)p->threads[i].tid == p->hdr.pid)
			m = &p->threads[i];
	if (!m)
		return max + 1;   /* no main thread: the layout is not known */
	uint32_t n = 0;
	for (uint32_t i = 0; i < p->nthreads; i++) {
		const struct nw_thread_stack *t = &p->threads[i];
		if (t == m || (t->flags & NW_THR_WATCHDOG) || strncmp(t->name, m->name, sizeof t->name))
			continue;
		if (n == max)
			return max + 1;
		idx[n++] = i;
	}
	return n;
}

int nw_split_snapshot(struct nw_proc *p, uint32_t k, struct nw_proc **views)
{
	uint32_t idx[MAX_GROUPS];
	if (k < 2 || k > MAX_GROUPS)
		return -1;
	uint32_t n = program_threads(p, idx, k);
	int per_rank = n == k, interchangeable = per_rank;
	for (uint32_t i = 1; i < n && per_rank; i++)
		interchangeable &= same_frames(&p->threads[idx[0]], &p->threads[idx[i]]);
	views[0] = p;
	for (uint32_t g = 1; g < k; g++) {
		struct nw_proc *v = calloc(1, sizeof *v);
		if (!v || !(*v = *p, v->path = strdup(p->path)) ||
		    !(v->threads = calloc(p->nthreads ? p->nthreads : 1, sizeof *v->threads))) {
			if (v)
				free(v->path);
			free(v);
			while (--g > 0)
				nw_proc_free(views[g]);
			return -1;
		}
		v->comms = NULL, v->peers = NULL, v->ops = NULL, v->op_site = NULL, v->launch = NULL;
		v->ncomms = v->npeers = v->nlaunch = 0;
		v->nops = 0;
		memcpy(v->threads, p->threads, p->nthreads * sizeof *v->threads);
		views[g] = v;
	}
	for (uint32_t g = k; g-- > 0;) {   /* views[0] (p itself) last: the others copy its threads */
		struct nw_proc *v = views[g];
		v->view_of_process = g;
		v->views_in_process = k;
		if (n == 0) {                 /* the main thread drives every rank */
			/* a CUDA host function blocks one device's stream, and a
			 * thread that runs it does not say whose: no rank's fact */
			for (uint32_t i = 0; i < v->nthreads; i++)
				v->threads[i].host_fn = NULL;
			continue;
		}
		if (interchangeable)
			v->threads[0] = p->threads[idx[g]];
		v->nthreads = interchangeable ? 1 : 0;
	}
	return 0;
}
