/* status_jobs: see status_jobs.h. */
#include "status_jobs.h"

#include <errno.h>
#include <stdlib.h>

const char *nw_job_state_name(enum nw_job_state s)
{
	switch (s) {
	case NW_JOB_LIVE: return "live";
	case NW_JOB_HUNG: return "hung";
	case NW_JOB_STALE: return "stale";
	case NW_JOB_UNKNOWN: return "unknown";
	case NW_JOB_IDLE: return "idle";
	}
	return "unknown";
}

/* Not final: what the watchdog keeps watching (watchdog/stalls.c): a call
 * that returned an error launched nothing. */
static int pending(const struct nw_seg_op *op)
{
	switch (op->state) {
	case NW_ST_ENQUEUED:
	case NW_ST_STARTED:
		if (NW_OP_IS_COLL(op->kind) || NW_OP_IS_P2P(op->kind))
			return op->result == 0 || op->result == 7 /* ncclInProgress */;
		return 1;
	case NW_ST_INIT_ENTERED:
		return 1;
	default:
		return 0;
	}
}

/* Measured as the watchdog does: a started op since its start, any
 * other since it was enqueued (or the call entered). */
static uint64_t waiting_since(const struct nw_seg_op *op)
{
	return op->state == NW_ST_STARTED && op->start_ns ? op->start_ns : op->enqueue_ns;
}

const struct nw_seg_op *nw_status_oldest_pending(const struct nw_proc *p, double *age_s)
{
	const struct nw_seg_op *oldest = NULL;
	for (size_t i = 0; i < p->nops; i++)
		if (pending(&p->ops[i]) && (!oldest || waiting_since(&p->ops[i]) < waiting_since(oldest)))
			oldest = &p->ops[i];
	uint64_t since = oldest ? waiting_since(oldest) : 0;
	*age_s = oldest && p->now_ns > since ? (double)(p->now_ns - since) / 1e9 : 0;
	return oldest;
}

static uint64_t later(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* The last time p made an NCCL call or saw an op end, on its clock: its
 * kept ops and its comm table's times; its start when it has neither. */
static uint64_t last_nccl_ns(const struct nw_proc *p)
{
	uint64_t t = p->hdr.start_monotonic_ns;
	for (size_t i = 0; i < p->nops; i++)
		t = later(t, later(p->ops[i].enqueue_ns, p->ops[i].end_ns));
	for (uint32_t i = 0; i < p->ncomms; i++) {
		const struct nw_seg_comm *c = &p->comms[i];
		t = later(t, later(later(c->init_enter_ns, c->init_done_ns), c->end_ns));
		t = later(t, later(c->coll_enqueued_ns, c->coll_completed_ns));
		t = later(t, later(c->p2p_enqueued_ns, c->p2p_completed_ns));
	}
	return t;
}

static void classify(const struct nw_job *job, struct nw_status_job *s)
{
	*s = (struct nw_status_job){ .job = job, .quiet_s = -1 };
	for (size_t i = 0; i < job->nprocs; i++) {
		const struct nw_proc *p = job->procs[i];
		if (p->alive > 0)
			s->alive++;
		else if (p->alive == 0)
			s->dead++;
		else
			s->remote++;
		if (p->hdr.start_realtime_ns > s->newest_start_ns)
			s->newest_start_ns = p->hdr.start_realtime_ns;
		if (p->alive == 0)
			continue;                  /* a dead process waits for nothing now */
		double age;
		const struct nw_seg_op *op = nw_status_oldest_pending(p, &age);
		if (op && (!s->stuck_op || age > s->stuck_age_s)) {
			s->stuck = p;
			s->stuck_op = op;
			s->stuck_age_s = age;
		}
		uint64_t last = last_nccl_ns(p);
		double quiet = p->now_ns > last ? (double)(p->now_ns - last) / 1e9 : 0;
		if (s->quiet_s < 0 || quiet < s->quiet_s)
			s->quiet_s = quiet;
	}
	if (s->alive + s->remote == 0)
		s->state = NW_JOB_STALE;
	else if (s->stuck_op && s->stuck_age_s >= job->timeout_s)
		s->state = NW_JOB_HUNG;
	else if (s->alive == 0)
		s->state = NW_JOB_UNKNOWN;
	else if (!s->stuck_op && s->quiet_s >= job->timeout_s)
		s->state = NW_JOB_IDLE;
	else
		s->state = NW_JOB_LIVE;
}

static int newest_first(const void *x, const void *y)
{
	const struct nw_status_job *a = x, *b = y;
	if (a->newest_start_ns != b->newest_start_ns)
		return a->newest_start_ns > b->newest_start_ns ? -1 : 1;
	return a->job < b->job ? -1 : a->job > b->job;   /* jobs[] is by name */
}

struct nw_status_job *nw_status_jobs(const struct nw_analysis *a, size_t counts[NW_JOB_STATES])
{
	struct nw_status_job *s = calloc(a->njobs ? a->njobs : 1, sizeof *s);
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	for (size_t j = 0; j < a->njobs; j++) {
		classify(&a->jobs[j], &s[j]);
		counts[s[j].state]++;
	}
	qsort(s, a->njobs, sizeof *s, newest_first);
	return s;
}
