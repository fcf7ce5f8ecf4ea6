/* ras_fold_words: the words of facts.h's NW_F_RAS_FOLD_*: a NCCL RAS
 * report folded into the job of the same processes (docs/ras.md, "One
 * job, one verdict"): whether RAS agrees with the segments' verdicts
 * (rootcause.c, nw_fold_launch_only), what the stacks say beside RAS's
 * and where a culprit is (verdicts_stacks.c, nw_rules_stacks_weigh), how
 * many of the report's ranks are the job's and another job's report
 * (ras_merge.c). */
#include "words_int.h"

#include <inttypes.h>

#define STACK_FRAMES 8   /* a culprit's main thread, as nw_buf_frames says it */

static const char *report_of(const struct nw_fact *f)
{
	return f->name ? f->name : "";
}

void nw_say_RAS_FOLD_SAYS(struct nw_buf *b, const struct nw_fact *f)
{
	static const char *const how[] = { "", " agrees", " says otherwise" };
	nw_buf_printf(b, "NCCL RAS (%s)%s: %s: ", report_of(f), how[f->seq < 3 ? f->seq : 0], nw_verdict_name((int)f->n));
}

void nw_say_RAS_FOLD_STACKS(struct nw_buf *b, const struct nw_fact *f)
{
	static const char *const how[] = { "stacks agree", "stacks cannot decide", "stacks disagree" };
	nw_buf_printf(b, "%s: %s: ", how[f->seq < 3 ? f->seq : 0], nw_verdict_name((int)f->n));
}

void nw_say_RAS_FOLD_STACK(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_printf(b, "rank %d (from stacks): ", (int)(int32_t)f->n);
	if (f->seq == 0) {
		nw_buf_puts(b, "no snapshot: attach found no such process (gone, or its host was not attached)");
		return;
	}
	if (f->seq == 1) {
		nw_buf_printf(b, "pid %lld has no stack", (long long)f->proc->hdr.pid);
		return;
	}
	const struct nw_thread_stack *t = nw_main_thread(f->proc);
	const char *e = NULL;
	if (f->proc->alive == 0)
		nw_buf_puts(b, "process gone; ");
	if (nw_stack_waits(t, &e) != NW_FC_OTHER)
		nw_buf_printf(b, "waits in %s: ", e ? e : "?");
	else
		nw_buf_puts(b, "where it is instead: ");
	nw_buf_frames(b, t, STACK_FRAMES);
}

void nw_say_RAS_FOLD_EQUAL(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_puts(b, f->n ? "; NCCL RAS lists no communicator (no init got past its rendezvous when it was asked)"
	                    : "; launch counts equal (NCCL RAS): the counts cannot tell who is behind, the stacks do");
}

void nw_say_RAS_FOLD_RANKS(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_printf(b, "NCCL RAS report %s: %" PRIu64 " of its ranks are processes of this job (same host and pid)%s",
	              report_of(f), f->n, f->seq ? "; the others have no snapshot or segment here" : "");
}

void nw_say_RAS_FOLD_NOCOMM(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_printf(b, "NCCL RAS report %s lists no communicator: it joins the one job of its directory", report_of(f));
}

void nw_say_RAS_FOLD_FOREIGN(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_printf(b, "NCCL RAS report %s not used: none of its %" PRIu64 " ranks is a process of this job (host and "
	              "pid): another job's RAS answered (every job on a host listens on one port)", report_of(f), f->n);
}
