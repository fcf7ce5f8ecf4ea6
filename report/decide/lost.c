/* lost: what the processes of a job could not record, and what that does
 * to the verdicts. A process drops ops when the comm of the op has no slot
 * (every comm slot held a live communicator: comms_dropped, COMMS_FULL),
 * when its recording stopped after an internal error (STOPPED), or when a
 * ring slot was taken by a newer op before it could be written; its stack
 * capture leaves threads out when its thread table is full
 * (threads_dropped). A verdict cannot speak for what was never recorded:
 * every verdict of such a job carries an evidence line per process that
 * lost data, the job's header says what was lost (renderers: job->lost),
 * and a job that would be HEALTHY over lost ops or communicators is
 * UNDECIDED instead: nothing is wrong in what was recorded, and what was
 * not cannot be judged. Threads left out of a capture only annotate: no
 * verdict of a process with a segment is judged from its stacks alone
 * (its op records are), and a snapshot's capture has a slot per thread. */
#include "decide.h"

#define MAX_LOST_LINES 8        /* evidence lines per verdict; then "and N more" */

/* One evidence line per process that lost data, the last verdict lines
 * (words/lost_words.c says them). */
static void lost_evidence(struct nw_jctx *x, struct nw_vwork *w)
{
	const struct nw_job *job = x->job;
	uint32_t said = 0;
	for (size_t i = 0; i < job->nprocs && !x->oom; i++) {
		const struct nw_proc *p = job->procs[i];
		if (!nw_proc_lost(p) || p->view_of_process != 0)   /* once per process */
			continue;
		if (said++ == MAX_LOST_LINES) {
			struct nw_fact f = { .kind = NW_F_LOST_MORE, .n = job->lost.nprocs - MAX_LOST_LINES };
			nw_verdict_evidence_fact(x, w, &f);
			break;
		}
		struct nw_fact f = { .kind = NW_F_LOST_PROC, .proc = p, .job = job };
		nw_verdict_evidence_fact(x, w, &f);
	}
}

void nw_rules_lost(struct nw_jctx *x)
{
	const struct nw_lost *l = &x->job->lost;
	if (!l->nprocs)
		return;
	/* Lost records are what HEALTHY would be judged from. */
	int healthy = l->ops || l->comms || l->comms_full || l->stopped;
	for (size_t i = 0; i < x->nvw; i++)
		if (!x->vw[i]->dropped && x->vw[i]->v.kind != NW_V_HEALTHY)
			healthy = 0;
	for (size_t i = 0; i < x->nvw && !x->oom; i++) {
		struct nw_vwork *w = x->vw[i];
		if (w->dropped)
			continue;
		if (healthy && w->v.kind == NW_V_HEALTHY) {
			/* Never HEALTHY over data it lost: the HEALTHY summary said
			 * inside what could not be judged. */
			w->v.kind = NW_V_UNDECIDED;
			struct nw_fact open = { .kind = NW_F_LOST_OPEN, .job = x->job };
			struct nw_fact close = { .kind = NW_F_LOST_CLOSE, .job = x->job };
			struct nw_fact hint = { .kind = NW_F_LOST_HINT, .job = x->job };
			nw_verdict_summary_wrap(x, w, &open, &close);
			nw_verdict_hint_fact(x, w, &hint);
		}
		lost_evidence(x, w);
	}
}
