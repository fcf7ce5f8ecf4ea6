/* ras_procs: the RAS adapter's own processes, for a report none of whose
 * ranks is a process read (`job ras FILE`, docs/ras.md "A report of its
 * own"): one process per rank of its world comm, answered or missing,
 * with what RAS knows of it as the model's ordinary facts: its identity
 * (host, pid, world rank and size), one comm table entry per comm of the
 * report it is a rank of, and its launch counts as positions
 * (NW_CAP_LAUNCH_ONLY). A rank of a smaller comm is the process of the
 * world comm with its pid (a process of several GPUs: its lowest world
 * rank). No stacks, no op numbers, no verdict: the rules judge them. */
#include "../sources.h"   /* first: it configures uthash */
#include "ras_procs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_pid(const void *a, const void *b)
{
	const struct nw_proc *x = *(struct nw_proc *const *)a, *y = *(struct nw_proc *const *)b;
	if (x->hdr.pid != y->hdr.pid)
		return x->hdr.pid < y->hdr.pid ? -1 : 1;
	return (x->rank > y->rank) - (x->rank < y->rank);
}

/* The process of a rank of a comm, by pid in bypid[0..n) (sorted by pid,
 * then rank: a process of several GPUs is its lowest world rank), NULL
 * when its pid is no world comm rank's. */
static struct nw_proc *proc_of_pid(struct nw_proc *const *bypid, size_t n, int pid)
{
	size_t k = nw_ras_first_pid(bypid, n, pid);
	return pid > 0 && k < n && bypid[k]->hdr.pid == pid ? bypid[k] : NULL;
}

struct nw_proc *nw_ras_proc_new(const struct nw_ras_input *in, const struct nw_ras_comm *w, const char *job,
                                int rank, int pid, const char *host)
{
	struct nw_proc *p = calloc(1, sizeof *p);
	if (!p || !(p->path = strdup(in->path))) {
		free(p);
		return NULL;
	}
	p->alive = -1;   /* RAS's answer says nothing of now (but gone: nw_ras_gone_fact) */
	p->rank = rank;
	p->hdr.pid = pid;
	p->hdr.global_rank = rank;
	p->hdr.world_size = w->size;
	/* RAS's own threshold: a process that does not answer within its
	 * collective leg timeout (5 s x NCCL_RAS_TIMEOUT_FACTOR) is unresponsive */
	p->hdr.timeout_ms = 5000;
	snprintf(p->hdr.host, sizeof p->hdr.host, "%s", host[0] ? host : "?");
	snprintf(p->hdr.job, sizeof p->hdr.job, "%s", job);
	p->caps = NW_CAP_LAUNCH_ONLY;
	p->source_note = NW_RAS_SOURCE_NOTE;
	p->view_of_process = 0;
	return p;
}

/* A new entry of p's comm table for comm c, as rank `rank` on device
 * `dev` sees it (the rest zero): *e; *e NULL when p has c already (a
 * process of several ranks in one comm: its first). 0, or -1 out of
 * memory. */
static int comm_entry(struct nw_proc *p, const struct nw_ras_comm *c, int rank, int dev, struct nw_seg_comm **e)
{
	*e = NULL;
	for (uint32_t s = 0; s < p->ncomms; s++)
		if (p->comms[s].comm_id == c->hash)
			return 0;
	struct nw_seg_comm *n = realloc(p->comms, (p->ncomms + 1) * sizeof *n);
	if (!n)
		return -1;
	p->comms = n;
	*e = &n[p->ncomms++];
	memset(*e, 0, sizeof **e);
	(*e)->comm_id = c->hash;
	(*e)->rank = rank;
	(*e)->nranks = c->size;
	(*e)->cuda_device = dev;
	return 0;
}

int nw_ras_comm_fact(struct nw_proc *p, const struct nw_ras_comm *c, const struct nw_ras_rank *rk)
{
	struct nw_seg_comm *e;
	int r = comm_entry(p, c, rk->rank, rk->cuda_dev, &e);
	if (r || !e)
		return r;
	e->origin = 0;   /* RAS does not say how it was made */
	/* still in init (ncclInProgress: past the rendezvous) or its init's
	 * error: verdicts_init.c */
	e->state = rk->init_state == 7 ? NW_COMM_INIT_ENTERED : rk->init_state ? NW_COMM_INIT_FAILED : NW_COMM_INIT_DONE;
	/* past its init, ending it: a minority that left early, verdicts_left.c */
	if (e->state == NW_COMM_INIT_DONE)
		e->state = rk->abort_flag ? NW_COMM_ABORTED : rk->finalize_called ? NW_COMM_FINALIZED
		           : rk->destroy_flag ? NW_COMM_DESTROYED : NW_COMM_INIT_DONE;
	e->init_result = rk->init_state == 7 ? 0 : rk->init_state;
	e->async_error = rk->async_error;   /* a fault: verdicts_fault.c */
	return 0;
}

int nw_ras_left_fact(struct nw_proc *p, const struct nw_ras_comm *c, const struct nw_ras_missing *m)
{
	if (m->unresponsive || m->dead)
		return 0;   /* gone, not left */
	struct nw_seg_comm *e;
	int r = comm_entry(p, c, m->rank, m->cuda_dev, &e);
	if (r || !e)
		return r;
	e->state = NW_COMM_DESTROYED;   /* RAS cannot tell destroyed from never created */
	return 0;
}

int nw_ras_gone_fact(struct nw_proc *p, const struct nw_ras_comm *c, const struct nw_ras_missing *m)
{
	if (!m->unresponsive && !m->dead)
		return 0;
	/* dead says more than unresponsive: the process of several comms keeps it */
	if (m->dead || !p->gone_how)
		p->gone_how = m->dead ? NW_RAS_GONE_DEAD : NW_RAS_GONE_UNRESPONSIVE;
	if (p->caps & NW_CAP_OPNUMS)
		return 0;   /* a segment: its own liveness and comm table (its ids) */
	p->alive = 0;
	struct nw_seg_comm *e;
	int r = comm_entry(p, c, m->rank, m->cuda_dev, &e);
	if (r || !e)
		return r;
	e->state = NW_COMM_INIT_DONE;   /* a member; how far it got RAS does not know */
	return 0;
}

/* The kinds comm c's ranks launched at all (a bit per RAS function): the
 * positions kept; a kind nobody launched says nothing. */
static unsigned used_kinds(const struct nw_ras_comm *c)
{
	unsigned used = 0;
	for (size_t i = 0; i < c->nranks; i++)
		for (int f = 0; f < NW_RAS_NFUNCS; f++)
			used |= (c->ranks[i].counts_known && c->ranks[i].counts[f]) ? 1u << f : 0;
	return used;
}

static int add_position(struct nw_proc *p, const struct nw_ras_comm *c, const struct nw_ras_rank *rk, unsigned used)
{
	if (!rk->counts_known || !used)
		return 0;
	for (uint32_t i = 0; i < p->nlaunch; i++)
		if (p->launch[i].comm_id == c->hash)
			return 0;   /* a process of several ranks in one comm: its first */
	struct nw_launch_pos *n = realloc(p->launch, (p->nlaunch + NW_RAS_NFUNCS) * sizeof *n);
	if (!n)
		return -1;
	p->launch = n;
	for (int f = 0; f < NW_RAS_NFUNCS; f++)
		if (used & 1u << f)
			n[p->nlaunch++] = (struct nw_launch_pos){ .comm_id = c->hash, .comm_rank = rk->rank,
			                                          .comm_size = c->size, .kind = nw_ras_func_ops[f],
			                                          .launches = rk->counts[f] };
	return 0;
}

/* Every comm's ranks as facts of the world comm's processes procs[0..n)
 * (the world comm's answered ranks first, in its order). */
static int add_facts(const struct nw_ras_report *r, const struct nw_ras_comm *w, struct nw_proc **procs, size_t n)
{
	struct nw_proc **bypid = malloc((n ? n : 1) * sizeof *bypid);
	if (!bypid)
		return -1;
	memcpy(bypid, procs, n * sizeof *bypid);
	qsort(bypid, n, sizeof *bypid, cmp_pid);
	int oom = 0;
	for (size_t k = 0; k < r->ncomms && !oom; k++) {
		const struct nw_ras_comm *c = &r->comms[k];
		unsigned used = used_kinds(c);
		for (size_t i = 0; i < c->nranks && !oom; i++) {
			struct nw_proc *p = c == w ? procs[i] : proc_of_pid(bypid, n, c->ranks[i].pid);
			if (p)
				oom = nw_ras_comm_fact(p, c, &c->ranks[i]) || add_position(p, c, &c->ranks[i], used);
		}
		for (size_t i = 0; i < c->nmissing && !oom; i++) {
			struct nw_proc *p = c == w ? procs[c->nranks + i] : proc_of_pid(bypid, n, c->missing[i].pid);
			if (p)
				oom = nw_ras_left_fact(p, c, &c->missing[i]) || nw_ras_gone_fact(p, c, &c->missing[i]);
		}
	}
	free(bypid);
	return oom ? -1 : 0;
}

int nw_ras_own_procs(const struct nw_ras_input *in, const char *job, struct nw_proc ***procs, size_t *nprocs)
{
	const struct nw_ras_comm *w = nw_ras_world(&in->r);
	if (!w)
		return 0;
	size_t ne = w->nranks + w->nmissing;
	struct nw_proc **all = realloc(*procs, (*nprocs + ne + 1) * sizeof *all);
	if (!all)
		return -1;
	*procs = all;
	struct nw_proc **mine = all + *nprocs;
	size_t n = 0;
	for (size_t i = 0; i < w->nranks; i++, n++)
		if (!(mine[n] = nw_ras_proc_new(in, w, job, w->ranks[i].rank, w->ranks[i].pid, w->ranks[i].host)))
			goto fail;
	for (size_t i = 0; i < w->nmissing; i++, n++)
		if (!(mine[n] = nw_ras_proc_new(in, w, job, w->missing[i].rank, w->missing[i].pid, w->missing[i].host)))
			goto fail;
	if (add_facts(&in->r, w, mine, n))
		goto fail;
	*nprocs += n;
	return 0;
fail:
	for (size_t i = 0; i < n; i++)
		nw_proc_free(mine[i]);
	return -1;
}
