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

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LOST_LINES 8        /* evidence lines per verdict; then "and N more" */

/* "8 ops and 2 communicators" (what p could not record), "" if none. */
static void what_lost(struct nw_buf *b, uint64_t ops, uint64_t comms, int comms_full)
{
	if (ops)
		nw_buf_printf(b, "%" PRIu64 " op%s", ops, ops == 1 ? "" : "s");
	if (comms || comms_full) {
		nw_buf_puts(b, ops ? " and " : "");
		if (comms)
			nw_buf_printf(b, "%" PRIu64 " communicator%s", comms, comms == 1 ? "" : "s");
		else
			nw_buf_puts(b, "communicators");   /* a 1.x file does not count them */
	}
}

/* One evidence line per process that lost data, the last verdict lines. */
static void lost_evidence(struct nw_jctx *x, struct nw_vwork *w)
{
	const struct nw_job *job = x->job;
	uint32_t said = 0;
	char lb[128];
	for (size_t i = 0; i < job->nprocs && !x->oom; i++) {
		const struct nw_proc *p = job->procs[i];
		if (!nw_proc_lost(p) || p->view_of_process != 0)   /* once per process */
			continue;
		if (said++ == MAX_LOST_LINES) {
			nw_verdict_evidence(x, w, "and %" PRIu32 " more process%s lost data", job->lost.nprocs - MAX_LOST_LINES,
			                    job->lost.nprocs - MAX_LOST_LINES == 1 ? "" : "es");
			break;
		}
		const struct nw_proc_header *h = &p->hdr;
		int full = (h->flags & NW_SEG_F_COMMS_FULL) != 0;
		struct nw_buf *b = &w->ev;
		struct nw_rankset ranks = { 0 };
		for (size_t k = 0; k < job->nprocs && p->views_in_process > 1; k++) {
			const struct nw_proc *q = job->procs[k];
			if (nw_same_process(p, q) && q->rank >= 0 && !nw_rankset_has(&ranks, q->rank))
				nw_set_add(x, &ranks, q->rank);
		}
		if (ranks.n > 1) {   /* a process of several ranks: it lost data for all of them */
			nw_buf_printf(b, "pid %" PRId64 " on %s (ranks ", p->hdr.pid, p->hdr.host);
			nw_buf_rankset(b, &ranks);
			nw_buf_puts(b, ") lost data:");
		} else {
			nw_buf_printf(b, "%s lost data:", nw_proc_label(p, lb));
		}
		nw_rankset_free(&ranks);
		if (h->ops_dropped || h->comms_dropped || full) {
			nw_buf_puts(b, " ");
			what_lost(b, h->ops_dropped, h->comms_dropped, full);
			nw_buf_puts(b, " not recorded");
			if (full)
				nw_buf_printf(b, " (its %u comm slots all held live communicators: NCCLWATCH_COMMS=%u)",
				              h->comm_capacity, h->comm_capacity);
			nw_buf_puts(b, ";");
		}
		if (h->flags & NW_SEG_F_STOPPED)
			nw_buf_printf(b, " recording stopped: %s;", h->error[0] ? h->error : "(no reason given)");
		if (h->threads_dropped)
			nw_buf_printf(b, " %" PRIu32 " thread%s left out of its last stack capture (thread table full: "
			              "NCCLWATCH_STACK_THREADS);", h->threads_dropped, h->threads_dropped == 1 ? "" : "s");
		if (b->len && b->s[b->len - 1] == ';')
			b->s[--b->len] = '\0';
		nw_verdict_evidence_flush(x, w);
	}
}

/* What to change so that nothing is lost next time. */
static const char *lost_hint(struct nw_jctx *x)
{
	const struct nw_lost *l = &x->job->lost;
	struct nw_buf b = { 0 };
	if (l->comms_full)
		nw_buf_puts(&b, "raise NCCLWATCH_COMMS above the number of communicators alive at once");
	if (l->stopped)
		nw_buf_printf(&b, "%srecording stopped after an internal error (the process's 'ncclwatch:' line "
		              "says why)", b.len ? "; " : "");
	if (l->threads)
		nw_buf_printf(&b, "%sraise NCCLWATCH_STACK_THREADS above the number of threads", b.len ? "; " : "");
	if (!b.len && l->ops)
		nw_buf_puts(&b, "ops were lost to ring slots a newer op took: raise NCCLWATCH_RING");
	if (b.oom || !b.s) {
		nw_buf_free(&b);
		return "";
	}
	const char *s = nw_intern_str(x->in, b.s, b.len);
	nw_buf_free(&b);
	if (!s)
		x->oom = 1;
	return s ? s : "";
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
			/* Never HEALTHY over data it lost. */
			w->v.kind = NW_V_UNDECIDED;
			struct nw_buf b = { 0 };
			nw_buf_printf(&b, "nothing is wrong in what was recorded (%s), but ", w->v.summary ? w->v.summary : "");
			if (l->ops || l->comms || l->comms_full) {
				what_lost(&b, l->ops, l->comms, l->comms_full);
				nw_buf_puts(&b, " were not recorded");
				if (l->stopped)
					nw_buf_puts(&b, " and ");
			}
			if (l->stopped)
				nw_buf_printf(&b, "recording stopped on %" PRIu32 " process%s", l->stopped,
				              l->stopped == 1 ? "" : "es");
			nw_buf_puts(&b, ": what was not recorded cannot be judged");
			char *s = nw_buf_take(&b);
			if (!s) {
				x->oom = 1;
				return;
			}
			free(w->v.summary);
			w->v.summary = s;
			w->v.hint = lost_hint(x);
		}
		lost_evidence(x, w);
	}
}
