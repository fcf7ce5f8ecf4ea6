/* stackmerge: each process's main thread (nw_main_thread: tid == pid,
 * else the first thread of its capture that is not the watchdog), grouped
 * by identical symbolized frame lists, STAT-style: one group per distinct
 * stack with the set of ranks that have it, largest group first. Frame
 * lists are interned (load.c), so identical stacks are one pointer.
 * 1.4: every other thread that runs Python (a data loader, a checkpoint
 * thread) is merged too, in groups of its own: its stack is its Python
 * frames, or its mixed stack (--native). */
#include "model.h"

#include <stdlib.h>
#include <string.h>

struct key {
	char **frames;
	uint32_t nframes;
	uint32_t main;                  /* main threads and others never share a group */
};

struct group {
	struct key k;
	size_t at;                      /* index in job->stacks */
	UT_hash_handle hh;
};

static int cmp_group(const void *a, const void *b)
{
	const struct nw_stack_group *x = a, *y = b;
	if (x->main != y->main)
		return x->main ? -1 : 1;
	if (x->ranks.n != y->ranks.n)
		return x->ranks.n > y->ranks.n ? -1 : 1;
	int32_t fx = x->ranks.n ? x->ranks.v[0] : INT32_MAX, fy = y->ranks.n ? y->ranks.v[0] : INT32_MAX;
	return fx < fy ? -1 : fx > fy;
}

int nw_job_stacks(struct nw_job *job)
{
	struct group *groups = NULL, *g, *gt;
	int oom = 0;
	size_t cap = 0;
	for (size_t i = 0; i < job->nprocs && !oom; i++) {
		const struct nw_proc *p = job->procs[i];
		const struct nw_thread_stack *main = nw_main_thread(p);
		for (uint32_t ti = 0; main && ti <= p->nthreads && !oom; ti++) {
		/* The main thread first, then the other Python threads. */
		const struct nw_thread_stack *t = ti == 0 ? main : &p->threads[ti - 1];
		if (ti > 0 && (t == main || !t->npy))
			continue;
		struct key k;
		memset(&k, 0, sizeof k);
		k.frames = t->frames;
		k.nframes = t->nframes;
		k.main = ti == 0;
		HASH_FIND(hh, groups, &k, sizeof k, g);
		if (!g) {
			if (job->nstacks == cap) {
				size_t nc = cap ? cap * 2 : 8;
				struct nw_stack_group *s = realloc(job->stacks, nc * sizeof *s);
				if (!s) {
					oom = 1;
					break;
				}
				job->stacks = s;
				cap = nc;
			}
			struct nw_stack_group *sg = &job->stacks[job->nstacks];
			memset(sg, 0, sizeof *sg);
			if (!(g = calloc(1, sizeof *g)) || !(sg->thread_name = strdup(t->py_name ? t->py_name : t->name))) {
				free(g);
				oom = 1;
				break;
			}
			sg->nframes = t->nframes;
			sg->frames = t->frames;   /* interned: owned by a->intern */
			sg->python = t->npy != 0;
			sg->main = ti == 0;
			job->python |= sg->python;
			g->k = k;
			g->at = job->nstacks++;
			HASH_ADD(hh, groups, k, sizeof g->k, g);
			if (nw_hash_oom_taken()) {
				free(g);
				oom = 1;
				break;
			}
		}
		if (p->rank >= 0 && !nw_rankset_has(&job->stacks[g->at].ranks, p->rank) &&
		    nw_rankset_add(&job->stacks[g->at].ranks, p->rank))
			oom = 1;
		}
	}
	HASH_ITER(hh, groups, g, gt) {
		HASH_DEL(groups, g);
		free(g);
	}
	if (job->nstacks)
		qsort(job->stacks, job->nstacks, sizeof *job->stacks, cmp_group);
	return oom ? -1 : 0;
}
