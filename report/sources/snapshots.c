/* snapshots: attach's snapshots next to segments (between load and model).
 *
 * A process that ran with the preload and that `ncclwatch attach` also
 * captured has two files: its segment and a snapshot. They are one process
 * when host, pid and start ticks (header.proc_start_ticks, /proc/PID/stat's
 * field 22: a reused pid has other ticks) are equal; the start ticks must
 * be known on both sides (0 is not a match). The segment stays the
 * process's record; it takes the snapshot's stacks when they are newer
 * than its own capture (both are the host's CLOCK_MONOTONIC) or it had
 * none, and the snapshot goes.
 *
 * Jobs: attach names one job per launcher tree or directory, the preload
 * its own; a snapshot job that holds a process merged into a segment of job
 * J is job J (its other snapshots, processes without the preload, join J),
 * unless its merged processes name different jobs (then it stays apart). */
#include "sources.h"

#include <stdlib.h>
#include <string.h>

struct pkey {
	char host[NW_SEG_HOST_LEN];
	int64_t pid;
	uint64_t ticks;
};

struct pent {
	struct pkey k;
	struct nw_proc *p;              /* the segment's process */
	UT_hash_handle hh;
};

struct jmap {                       /* snapshot job -> segment job */
	char from[NW_SEG_JOB_LEN];
	char to[NW_SEG_JOB_LEN];
	int ambiguous;
	UT_hash_handle hh;
};

static void key_of(const struct nw_proc *p, struct pkey *k)
{
	memset(k, 0, sizeof *k);
	memcpy(k->host, p->hdr.host, sizeof k->host);
	k->pid = p->hdr.pid;
	k->ticks = p->hdr.proc_start_ticks;
}

/* The segment's process takes the snapshot's stacks if they are newer. */
static void take_stacks(struct nw_proc *seg, struct nw_proc *snap)
{
	if (!snap->nthreads || (seg->nthreads && seg->stacks_ns >= snap->stacks_ns))
		return;
	free(seg->threads);               /* frame lists are interned: the analysis owns them */
	seg->threads = snap->threads;
	seg->nthreads = snap->nthreads;
	seg->stacks_ns = snap->stacks_ns;
	seg->attached = 1;
	snap->threads = NULL;
	snap->nthreads = 0;
}

static int map_job(struct jmap **map, const char *from, const char *to)
{
	struct jmap *m;
	HASH_FIND_STR(*map, from, m);
	if (m) {
		m->ambiguous |= strcmp(m->to, to) != 0;
		return 0;
	}
	if (!(m = calloc(1, sizeof *m)))
		return -1;
	memcpy(m->from, from, sizeof m->from);
	memcpy(m->to, to, sizeof m->to);
	HASH_ADD_STR(*map, from, m);
	if (nw_hash_oom_taken()) {
		free(m);
		return -1;
	}
	return 0;
}

int nw_merge_snapshots(struct nw_load *ld)
{
	struct pent *segs = NULL, *e, *et;
	struct jmap *map = NULL, *m, *mt;
	int oom = 0, any = 0;
	for (size_t i = 0; i < ld->nprocs; i++)
		any |= ld->procs[i]->snapshot;
	if (!any)
		return 0;
	struct pent *ents = calloc(ld->nprocs, sizeof *ents);
	if (!ents)
		oom = 1;
	for (size_t i = 0; i < ld->nprocs && !oom; i++) {
		struct nw_proc *p = ld->procs[i];
		if (p->snapshot || !p->hdr.proc_start_ticks)
			continue;
		key_of(p, &ents[i].k);
		ents[i].p = p;
		HASH_FIND(hh, segs, &ents[i].k, sizeof ents[i].k, e);
		if (e)
			continue;               /* two segments of one process: the loader kept both copies */
		HASH_ADD(hh, segs, k, sizeof ents[i].k, &ents[i]);
		oom = nw_hash_oom_taken();
	}
	size_t out = 0;
	for (size_t i = 0; i < ld->nprocs; i++) {
		struct nw_proc *p = ld->procs[i];
		if (!oom && p->snapshot && p->hdr.proc_start_ticks) {
			struct pkey k;
			key_of(p, &k);
			HASH_FIND(hh, segs, &k, sizeof k, e);
			if (e) {
				take_stacks(e->p, p);
				e->p->caps |= p->caps;
				if (map_job(&map, p->hdr.job, e->p->hdr.job))
					oom = 1;
				nw_proc_free(p);
				continue;
			}
		}
		ld->procs[out++] = p;
	}
	ld->nprocs = out;
	for (size_t i = 0; i < ld->nprocs && !oom; i++) {
		struct nw_proc *p = ld->procs[i];
		if (!p->snapshot)
			continue;
		HASH_FIND_STR(map, p->hdr.job, m);
		if (m && !m->ambiguous)
			memcpy(p->hdr.job, m->to, sizeof p->hdr.job);
	}
	HASH_ITER(hh, segs, e, et)
		HASH_DEL(segs, e);
	free(ents);
	HASH_ITER(hh, map, m, mt) {
		HASH_DEL(map, m);
		free(m);
	}
	if (oom) {
		for (size_t i = 0; i < ld->nprocs; i++)
			nw_proc_free(ld->procs[i]);
		free(ld->procs);
		ld->procs = NULL;
		ld->nprocs = 0;
		return -1;
	}
	return 0;
}
