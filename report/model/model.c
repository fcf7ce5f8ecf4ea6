/* model: processes -> jobs -> communicator views.
 *
 * Jobs are named by header.job, sorted by name; a job's processes are
 * sorted by global rank (unknown last), then host, then pid. A
 * communicator view gathers, by comm id, the table slot of every process
 * that holds a rank of it, indexed by comm rank (a process may hold several
 * ranks of one comm: ncclCommInitAll); a process inside a Split or Shrink
 * whose rank is not known yet is `entering`, or the member of the one comm
 * rank the others' order leaves it. */
#include "model.h"

#include <stdlib.h>
#include <string.h>

/* Bounds on sizes taken from files: larger values are not believed. */
#define MAX_NRANKS (1 << 24)

struct jtmp {                        /* a job while processes are gathered */
	const char *name;                /* the header's job (in the first process) */
	struct nw_proc **procs;
	size_t n, cap;
	UT_hash_handle hh;
};

static int cmp_proc(const void *a, const void *b)
{
	const struct nw_proc *x = *(struct nw_proc *const *)a, *y = *(struct nw_proc *const *)b;
	/* Unknown ranks (-1) after the known ones. */
	uint32_t rx = (uint32_t)x->rank, ry = (uint32_t)y->rank;
	if (rx != ry)
		return rx < ry ? -1 : 1;
	int c = strcmp(x->hdr.host, y->hdr.host);
	if (c)
		return c;
	return x->hdr.pid < y->hdr.pid ? -1 : x->hdr.pid > y->hdr.pid;
}

static int cmp_job(const void *a, const void *b)
{
	return strcmp(((const struct nw_job *)a)->name, ((const struct nw_job *)b)->name);
}

static struct nw_comm_view *view_get(struct nw_job *job, const struct nw_seg_comm *c, int *oom)
{
	struct nw_comm_view *v;
	HASH_FIND(hh, job->comms, &c->comm_id, sizeof c->comm_id, v);
	if (v)
		return v;
	v = calloc(1, sizeof *v);
	if (!v) {
		*oom = 1;
		return NULL;
	}
	v->id = c->comm_id;
	v->parent_id = c->parent_id;
	v->origin = c->origin;
	v->nranks = -1;
	HASH_ADD(hh, job->comms, id, sizeof v->id, v);
	if (nw_hash_oom_taken()) {
		free(v);
		*oom = 1;
		return NULL;
	}
	return v;
}

static int view_add(struct nw_comm_view *v, struct nw_proc *p, const struct nw_seg_comm *c)
{
	if (!v->name[0] && c->name[0]) {
		memcpy(v->name, c->name, sizeof v->name);
		v->name[sizeof v->name - 1] = '\0';
	}
	if (c->rank < 0 || c->nranks <= 0 || c->nranks > MAX_NRANKS || c->rank >= c->nranks) {
		struct nw_member *e = realloc(v->entering, (v->nentering + 1) * sizeof *e);
		if (!e)
			return -1;
		v->entering = e;
		e[v->nentering++] = (struct nw_member){ .proc = p, .comm = c };
		return 0;
	}
	if (c->nranks > v->nranks) {
		/* The size every member records; a larger one (a malformed or
		 * foreign slot) grows the view rather than losing a member. */
		struct nw_member *m = realloc(v->members, (size_t)c->nranks * sizeof *m);
		if (!m)
			return -1;
		memset(m + (v->nranks > 0 ? v->nranks : 0), 0,
		       (size_t)(c->nranks - (v->nranks > 0 ? v->nranks : 0)) * sizeof *m);
		v->members = m;
		v->nranks = c->nranks;
	}
	struct nw_member *m = &v->members[c->rank];
	if (!m->proc) {
		m->proc = p;
		m->comm = c;
	}
	return 0;
}

/* A rank's place in the parent of a split or shrink: its rank in its one
 * live slot of the parent comm (of the same device where it holds
 * several); -1 when that cannot be told. */
static int32_t parent_rank(const struct nw_proc *p, const struct nw_seg_comm *c)
{
	int32_t only = -1, same_device = -1;
	int n = 0, nsame = 0;
	for (uint32_t s = 0; s < p->ncomms; s++) {
		const struct nw_seg_comm *q = &p->comms[s];
		if (q->comm_id != c->parent_id || q->state == NW_COMM_FREE || q->rank < 0)
			continue;
		n++;
		only = q->rank;
		if (c->cuda_device >= 0 && q->cuda_device == c->cuda_device) {
			nsame++;
			same_device = q->rank;
		}
	}
	return n == 1 ? only : nsame == 1 ? same_device : -1;
}

/* Whether member a comes before entering e in their child's ranks: NCCL
 * orders a split's ranks by key, then by parent rank (a shrink's keys are
 * all 0: parent rank order). 1 before, 0 after, -1 cannot be told. */
static int ranks_before(const struct nw_member *a, const struct nw_member *e)
{
	if (a->comm->split_key != e->comm->split_key)
		return a->comm->split_key < e->comm->split_key;
	int32_t pa = parent_rank(a->proc, a->comm), pe = parent_rank(e->proc, e->comm);
	if (pa < 0 || pe < 0 || pa == pe)
		return -1;
	return pa < pe;
}

/* The only comm rank without a member that e can hold: the members whose
 * rank is known before it lie below it, those after it above; as many
 * ranks as are before it (known or entering) lie below it, as many as are
 * after it above. -1 when none or several can. */
static int32_t entering_place(const struct nw_comm_view *v, const struct nw_member *e)
{
	int32_t lo = 0, hi = v->nranks - 1;
	for (int32_t r = 0; r < v->nranks; r++) {
		int before = v->members[r].proc ? ranks_before(&v->members[r], e) : -1;
		lo += before == 1;
		hi -= before == 0;
	}
	for (uint32_t i = 0; i < v->nentering; i++) {
		int before = &v->entering[i] == e ? -1 : ranks_before(&v->entering[i], e);
		lo += before == 1;
		hi -= before == 0;
	}
	int32_t place = -1;
	for (int32_t h = lo; h <= hi; h++) {
		if (v->members[h].proc)
			continue;
		int fits = 1;
		for (int32_t r = 0; r < v->nranks && fits; r++) {
			int before = v->members[r].proc ? ranks_before(&v->members[r], e) : -1;
			if (before >= 0)
				fits = before == (r < h);
		}
		if (fits && place >= 0)
			return -1;
		if (fits)
			place = h;
	}
	return place;
}

/* A process inside a split or shrink has no rank of the child yet, but
 * its place is fixed: the child's ranks follow (key, parent rank). Once
 * the members whose rank is known leave it only one comm rank, it holds
 * that rank (it is in the comm, inside its creation; the rank is not a
 * rank with no file). */
static void place_entering(struct nw_comm_view *v)
{
	if (v->origin != NW_ORIGIN_SPLIT && v->origin != NW_ORIGIN_SHRINK)
		return;
	for (int moved = 1; moved && v->nranks > 0;) {
		moved = 0;
		for (uint32_t i = 0; i < v->nentering;) {
			int32_t h = entering_place(v, &v->entering[i]);
			if (h < 0) {
				i++;
				continue;
			}
			v->members[h] = v->entering[i];
			v->entering[i] = v->entering[--v->nentering];
			moved = 1;
		}
	}
}

/* Processes launched without a rank variable (RANK, OMPI_COMM_WORLD_RANK,
 * ...): when none of the job has one, their rank in the job's largest
 * communicator made by an init (not a split) stands for it, provided it
 * holds at most one rank of it. */
static void ranks_from_world(struct nw_job *job)
{
	for (size_t i = 0; i < job->nprocs; i++)
		if (job->procs[i]->rank >= 0)
			return;
	struct nw_comm_view *world = NULL, *v, *vt;
	HASH_ITER(hh, job->comms, v, vt) {
		if (v->origin == NW_ORIGIN_SPLIT || v->origin == NW_ORIGIN_SHRINK || v->nranks <= 0)
			continue;
		if (!world || v->nranks > world->nranks || (v->nranks == world->nranks && v->id < world->id))
			world = v;
	}
	if (!world)
		return;
	for (int32_t r = 0; r < world->nranks; r++) {
		struct nw_proc *p = world->members[r].proc;
		if (!p)
			continue;
		if (p->rank >= 0) {   /* a second rank of one process (InitAll): give up */
			for (size_t i = 0; i < job->nprocs; i++)
				job->procs[i]->rank = -1;
			return;
		}
		p->rank = r;
	}
	if (job->world_size < world->nranks)
		job->world_size = world->nranks;
}

struct hostblk {
	const char *host;
	int32_t first;                   /* its lowest rank */
	uint32_t n;                      /* its ranks */
	UT_hash_handle hh;
};

/* job->hosts_unheard and job->unheard (analysis.h): a launcher places
 * ranks in blocks of consecutive ranks per host; when every host heard
 * from holds exactly one whole aligned block of the same size, each
 * block whose ranks are all missing is a host nobody heard from. -1 out
 * of memory. */
/* The hosts of the job's processes, each with its lowest rank and its
 * number of ranks (pool: their storage). Returns 1, 0 when a process has
 * no rank (nobody can place it), -1 out of memory. */
static int host_blocks(const struct nw_job *job, struct hostblk *pool, struct hostblk **hosts)
{
	size_t npool = 0;
	for (size_t i = 0; i < job->nprocs; i++) {
		const struct nw_proc *p = job->procs[i];
		struct hostblk *h;
		if (p->rank < 0)
			return 0;                /* a rank nobody can place */
		HASH_FIND_STR(*hosts, p->hdr.host, h);
		int oom = 0;
		if (!h) {
			h = &pool[npool++];
			h->host = p->hdr.host;
			h->first = p->rank;
			HASH_ADD_KEYPTR(hh, *hosts, h->host, strlen(h->host), h);
			oom = nw_hash_oom_taken();
		}
		if (p->rank < h->first)
			h->first = p->rank;
		h->n++;
		if (oom)
			return -1;
	}
	return 1;
}

/* Whether every host holds the same number of ranks (*per), starting at a
 * multiple of it, and every rank lies within its host's block. */
static int uniform_blocks(const struct nw_job *job, struct hostblk *hosts, uint32_t *per)
{
	struct hostblk *h, *ht;
	int ok = 1;
	HASH_ITER(hh, hosts, h, ht) {
		if (!*per)
			*per = h->n;
		if (h->n != *per || h->first % (int32_t)*per)
			ok = 0;
	}
	for (size_t i = 0; i < job->nprocs && ok; i++) {
		const struct nw_proc *p = job->procs[i];
		HASH_FIND_STR(hosts, p->hdr.host, h);
		if (!h || p->rank / (int32_t)*per != h->first / (int32_t)*per)
			ok = 0;
	}
	return ok;
}

/* Whether the hosts' blocks are distinct blocks of the world (seen[b]:
 * block b is a host's). */
static int distinct_blocks(struct hostblk *hosts, uint32_t per, uint8_t *seen, uint32_t nblocks)
{
	struct hostblk *h, *ht;
	HASH_ITER(hh, hosts, h, ht) {
		uint32_t b = (uint32_t)h->first / per;
		if (b >= nblocks || seen[b])
			return 0;
		seen[b] = 1;
	}
	return 1;
}

/* The blocks nobody holds whose ranks are all missing: hosts unheard. -1
 * out of memory. */
static int mark_unheard(struct nw_job *job, const uint8_t *seen, uint32_t nblocks, uint32_t per)
{
	for (uint32_t b = 0; b < nblocks; b++) {
		if (seen[b])
			continue;
		int32_t lo = (int32_t)(b * per), hi = lo + (int32_t)per;
		if (hi > job->world_size)
			hi = job->world_size;
		int all = 1;
		for (int32_t r = lo; r < hi && all; r++)
			all = nw_rankset_has(&job->missing, r);
		if (!all)
			continue;
		job->hosts_unheard++;
		for (int32_t r = lo; r < hi; r++)
			if (nw_rankset_add(&job->unheard, r))
				return -1;
	}
	return 0;
}

static int unheard_hosts(struct nw_job *job)
{
	job->ranks_per_host = -1;
	if (!job->missing.n || job->world_size <= 0)
		return 0;
	struct hostblk *hosts = NULL;
	struct hostblk *pool = calloc(job->nprocs ? job->nprocs : 1, sizeof *pool);
	uint8_t *seen = NULL;
	int oom = !pool, ok = 1;
	if (pool) {
		int placed = host_blocks(job, pool, &hosts);
		ok = placed != 0;
		oom = placed < 0;
	}
	uint32_t per = 0;
	if (!oom && ok && HASH_COUNT(hosts) >= 2) {
		ok = uniform_blocks(job, hosts, &per);
		uint32_t nblocks = ((uint32_t)job->world_size + per - 1) / per;
		if (ok && !(seen = calloc(nblocks, 1)))
			oom = 1;
		if (ok && !oom)
			ok = distinct_blocks(hosts, per, seen, nblocks);
		if (ok && !oom && mark_unheard(job, seen, nblocks, per))
			oom = 1;
		if (ok && job->hosts_unheard)
			job->ranks_per_host = (int32_t)per;
	}
	HASH_CLEAR(hh, hosts);
	free(pool);
	free(seen);
	if (!ok || oom) {
		job->hosts_unheard = 0;
		job->ranks_per_host = -1;
		nw_rankset_free(&job->unheard);
	}
	return oom ? -1 : 0;
}

static int build_job(struct nw_job *job, const struct nw_analysis_options *opt)
{
	int oom = 0;
	for (size_t i = 0; i < job->nprocs && !oom; i++) {
		struct nw_proc *p = job->procs[i];
		for (uint32_t s = 0; s < p->ncomms && !oom; s++) {
			const struct nw_seg_comm *c = &p->comms[s];
			if (c->state == NW_COMM_FREE)
				continue;
			struct nw_comm_view *v = view_get(job, c, &oom);
			if (v && view_add(v, p, c))
				oom = 1;
		}
	}
	if (oom)
		return -1;
	struct nw_comm_view *v, *vt;
	HASH_ITER(hh, job->comms, v, vt)
		place_entering(v);

	job->world_size = -1;
	double timeout_ms = 0;
	int no_timeout = 0;
	for (size_t i = 0; i < job->nprocs; i++) {
		struct nw_proc *p = job->procs[i];
		no_timeout |= (p->caps & NW_CAP_OPNUMS) && !(p->caps & NW_CAP_WAIT_TIME);
		if (p->hdr.world_size > job->world_size && p->hdr.world_size <= MAX_NRANKS)
			job->world_size = p->hdr.world_size;
		if (p->hdr.timeout_ms > timeout_ms)
			timeout_ms = p->hdr.timeout_ms;
	}
	if (job->world_size <= 0)
		job->world_size = -1;
	ranks_from_world(job);
	if (nw_job_lost(job))
		return -1;
	qsort(job->procs, job->nprocs, sizeof *job->procs, cmp_proc);
	for (size_t i = 0; i < job->nprocs; i++)
		job->procs[i]->job_index = (uint32_t)i;
	job->timeout_from = NW_TIMEOUT_SET;
	if (opt && opt->timeout_s > 0) {
		job->timeout_s = opt->timeout_s;
	} else if (timeout_ms > 0) {
		job->timeout_s = timeout_ms / 1000;
	} else if (no_timeout) {
		job->timeout_s = 0.001;            /* a dump is written when an op timed out */
		job->timeout_from = NW_TIMEOUT_NONE;
	} else {
		job->timeout_s = 60;
		job->timeout_from = NW_TIMEOUT_DEFAULT;
	}

	/* Ranks below the world size with no file (procs are sorted by rank). */
	if (job->world_size > 0) {
		size_t i = 0;
		for (int32_t r = 0; r < job->world_size; r++) {
			while (i < job->nprocs && (uint32_t)job->procs[i]->rank < (uint32_t)r)
				i++;
			if (i < job->nprocs && job->procs[i]->rank == r)
				continue;
			if (nw_rankset_add(&job->missing, r))
				return -1;
		}
	}
	return unheard_hosts(job);
}

/* Hands process p to its job's list in *jobs. -1 out of memory. */
static int add_to_job(struct jtmp **jobs, struct nw_proc *p)
{
	struct jtmp *j;
	const char *name = p->hdr.job;
	HASH_FIND_STR(*jobs, name, j);
	if (!j) {
		if (!(j = calloc(1, sizeof *j)))
			return -1;
		j->name = name;
		HASH_ADD_KEYPTR(hh, *jobs, j->name, strlen(j->name), j);
		if (nw_hash_oom_taken()) {
			free(j);
			return -1;
		}
	}
	if (j->n == j->cap) {
		size_t cap = j->cap ? j->cap * 2 : 8;
		struct nw_proc **pp = realloc(j->procs, cap * sizeof *pp);
		if (!pp)
			return -1;
		j->procs = pp;
		j->cap = cap;
	}
	j->procs[j->n++] = p;
	return 0;
}

/* The loaded processes grouped by job (those of other jobs than opt's
 * freed); ld gives them all away. -1 out of memory. */
static int group_jobs(struct nw_load *ld, const struct nw_analysis_options *opt, struct jtmp **jobs)
{
	int oom = 0;
	for (size_t i = 0; i < ld->nprocs && !oom; i++) {
		struct nw_proc *p = ld->procs[i];
		if (opt && opt->job && strcmp(opt->job, p->hdr.job) != 0) {
			nw_proc_free(p);
			ld->procs[i] = NULL;
			continue;
		}
		if (add_to_job(jobs, p))
			oom = 1;
		else
			ld->procs[i] = NULL;   /* the job owns it now */
	}
	/* Whatever was not handed to a job (after a failure) is freed here. */
	for (size_t i = 0; i < ld->nprocs; i++)
		nw_proc_free(ld->procs[i]);
	free(ld->procs);
	ld->procs = NULL;
	ld->nprocs = 0;
	return oom ? -1 : 0;
}

/* The jobs into a->jobs (freed instead after a failure, oom set). -1 out
 * of memory. */
static int make_jobs(struct nw_analysis *a, struct jtmp *jobs, int oom)
{
	struct jtmp *j, *jt;
	size_t njobs = HASH_COUNT(jobs);
	if (!oom && njobs) {
		a->jobs = calloc(njobs, sizeof *a->jobs);
		if (!a->jobs)
			oom = 1;
	}
	HASH_ITER(hh, jobs, j, jt) {
		HASH_DEL(jobs, j);
		if (a->jobs && !oom) {
			struct nw_job *job = &a->jobs[a->njobs];
			job->name = strdup(j->name);
			job->procs = j->procs;
			job->nprocs = j->n;
			a->njobs++;
			if (!job->name)
				oom = 1;
		} else {
			for (size_t k = 0; k < j->n; k++)
				nw_proc_free(j->procs[k]);
			free(j->procs);
		}
		free(j);
	}
	return oom ? -1 : 0;
}

int nw_model(struct nw_analysis *a, struct nw_load *ld, const struct nw_analysis_options *opt)
{
	struct jtmp *jobs = NULL;
	int oom = group_jobs(ld, opt, &jobs) != 0;
	if (make_jobs(a, jobs, oom))
		return -1;
	if (a->njobs)
		qsort(a->jobs, a->njobs, sizeof *a->jobs, cmp_job);
	for (size_t i = 0; i < a->njobs; i++) {
		struct nw_job *job = &a->jobs[i];
		job->native = a->native;
		if (build_job(job, opt) || nw_job_envdiff(job) || nw_job_stacks(job))
			return -1;
	}
	return 0;
}
