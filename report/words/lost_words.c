/* lost_words: the words of data lost (decide/lost.c finds it; facts.h's
 * NW_F_LOST*): one evidence line per process that lost data, "and N
 * more", the UNDECIDED summary around the HEALTHY one, the hint. */
#include "words_int.h"

#include <inttypes.h>

/* "8 ops and 2 communicators" (what was not recorded), "" if none. */
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

/* "rank 3 lost data: 8 ops not recorded; recording stopped: why"; a
 * process of several ranks is named by pid with its ranks. */
void nw_say_LOST_PROC(struct nw_buf *b, const struct nw_fact *f)
{
	const struct nw_job *job = f->job;
	const struct nw_proc *p = f->proc;
	const struct nw_proc_header *h = &p->hdr;
	int full = (h->flags & NW_SEG_F_COMMS_FULL) != 0;
	size_t start = b->len;
	char lb[128];
	struct nw_rankset ranks = { 0 };
	int oom = 0;
	for (size_t k = 0; k < job->nprocs && p->views_in_process > 1; k++) {
		const struct nw_proc *q = job->procs[k];
		if (nw_same_process(p, q) && q->rank >= 0 && !nw_rankset_has(&ranks, q->rank))
			oom |= nw_rankset_add(&ranks, q->rank) != 0;
	}
	if (oom)
		b->oom = 1;
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
	if (b->len > start && b->s && b->s[b->len - 1] == ';')
		b->s[--b->len] = '\0';
}

void nw_say_LOST_MORE(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_printf(b, "and %" PRIu64 " more process%s lost data", f->n, f->n == 1 ? "" : "es");
}

void nw_say_LOST_OPEN(struct nw_buf *b, const struct nw_fact *f)
{
	(void)f;
	nw_buf_puts(b, "nothing is wrong in what was recorded (");
}

void nw_say_LOST_CLOSE(struct nw_buf *b, const struct nw_fact *f)
{
	const struct nw_lost *l = &f->job->lost;
	nw_buf_puts(b, "), but ");
	if (l->ops || l->comms || l->comms_full) {
		what_lost(b, l->ops, l->comms, l->comms_full);
		nw_buf_puts(b, " were not recorded");
		if (l->stopped)
			nw_buf_puts(b, " and ");
	}
	if (l->stopped)
		nw_buf_printf(b, "recording stopped on %" PRIu32 " process%s", l->stopped, l->stopped == 1 ? "" : "es");
	nw_buf_puts(b, ": what was not recorded cannot be judged");
}

/* What to change so that nothing is lost next time. */
void nw_say_LOST_HINT(struct nw_buf *b, const struct nw_fact *f)
{
	const struct nw_lost *l = &f->job->lost;
	size_t start = b->len;
	if (l->comms_full)
		nw_buf_puts(b, "raise NCCLWATCH_COMMS above the number of communicators alive at once");
	if (l->stopped)
		nw_buf_printf(b, "%srecording stopped after an internal error (the process's 'ncclwatch:' line "
		              "says why)", b->len > start ? "; " : "");
	if (l->threads)
		nw_buf_printf(b, "%sraise NCCLWATCH_STACK_THREADS above the number of threads", b->len > start ? "; " : "");
	if (b->len == start && l->ops)
		nw_buf_puts(b, "ops were lost to ring slots a newer op took: raise NCCLWATCH_RING");
}
