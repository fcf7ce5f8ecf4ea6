/* launch_words: the words of verdicts_launch.c's facts (facts.h's
 * NW_F_LAUNCH_*): collective positions that are launch counts (NCCL RAS),
 * ranks behind or ahead of the majority's count, or every count equal. */
#include "words_int.h"

#include <inttypes.h>

static const char *kind(const struct nw_fact *f, char *kb)
{
	return nw_op_kind_name(f->op_kind, kb);
}

void nw_say_LAUNCH_RANK(struct nw_buf *b, const struct nw_fact *f)
{
	char kb[NW_NAME_BUF];
	nw_buf_printf(b, "rank %d (pid %" PRId64 "): %s launched %" PRIu64 " times", (int)(int32_t)(uint32_t)f->seq,
	              f->proc->hdr.pid, kind(f, kb), f->n);
}

void nw_say_LAUNCH_RANK_AT(struct nw_buf *b, const struct nw_fact *f)
{
	char kb[NW_NAME_BUF];
	nw_buf_printf(b, "rank %d (pid %" PRId64 " on %s): %s launched %" PRIu64 " times",
	              (int)(int32_t)(uint32_t)f->seq, f->proc->hdr.pid, f->proc->hdr.host, kind(f, kb), f->n);
}

void nw_say_LAUNCH_UNDECIDED(struct nw_buf *b, const struct nw_fact *f)
{
	char kb[NW_NAME_BUF];
	nw_buf_printf(b, "ranks of comm 0x%016" PRIx64 " launched %s different numbers of times and no count is shared "
	              "by a strict majority: counts alone cannot say who deviates", f->n, kind(f, kb));
}

void nw_say_LAUNCH_HIDDEN(struct nw_buf *b, const struct nw_fact *f)
{
	char kb[NW_NAME_BUF];
	const char *entry = NULL;
	nw_launch_hidden_wait(f->proc, f->n, f->op_kind, f->seq, &entry);   /* where decide found it waits */
	nw_buf_printf(b, "rank %d launched fewer %s than the others but waits in %s (stacks), not in that collective's "
	              "call: NCCL RAS counts no send/receive and its snapshot records no op, so it may wait in a "
	              "send/receive a peer owes it: not blamed", (int)f->proc->rank, kind(f, kb),
	              entry ? entry : "NCCL or on the GPU");
}

void nw_say_LAUNCH_ALL_HIDDEN(struct nw_buf *b, const struct nw_fact *f)
{
	char set[256], kb[NW_NAME_BUF];
	const struct nw_rankset *hid = &f->set->ranks;
	nw_rankset_format(hid, set, sizeof set);
	const char *k = kind(f, kb);
	nw_buf_printf(b, "rank%s %s launched fewer %s than the others on comm 0x%016" PRIx64 " (RAS: %s launches=%" PRIu64
	              " on the others) but wait%s inside NCCL or on the GPU: NCCL RAS counts no send/receive, so %s may "
	              "wait in one a peer owes %s; counts alone cannot say who deviates",
	              hid->n == 1 ? "" : "s", set, k, f->n, k, f->seq, hid->n == 1 ? "s" : "", hid->n == 1 ? "it" : "they",
	              hid->n == 1 ? "it" : "them");
}

void nw_say_LAUNCH_HIDDEN_HINT(struct nw_buf *b, const struct nw_fact *f)
{
	(void)f;
	nw_buf_puts(b, "the send/receive partners of those ranks (stacks, or the preload: LD_PRELOAD records every send "
	            "and receive)");
}

void nw_say_LAUNCH_BEHIND(struct nw_buf *b, const struct nw_fact *f)
{
	char set[256], kb[NW_NAME_BUF];
	nw_rankset_format(&f->set->ranks, set, sizeof set);
	const char *k = kind(f, kb);
	nw_buf_printf(b, "rank%s %s never launched the %s the others launched last on comm 0x%016" PRIx64
	              " (RAS: %s launches=", f->set->ranks.n == 1 ? "" : "s", set, k, f->n, k);
}

void nw_say_LAUNCH_AHEAD(struct nw_buf *b, const struct nw_fact *f)
{
	char set[256], kb[NW_NAME_BUF];
	nw_rankset_format(&f->set->ranks, set, sizeof set);
	const char *k = kind(f, kb);
	nw_buf_printf(b, "rank%s %s launched the %s the other %" PRIu64 " rank%s never launched on comm 0x%016" PRIx64
	              " (RAS: %s launches=", f->set->ranks.n == 1 ? "" : "s", set, k, f->seq, f->seq == 1 ? "" : "s",
	              f->n, k);
}

void nw_say_LAUNCH_THEIRS(struct nw_buf *b, const struct nw_fact *f)
{
	if (f->n == f->seq)
		nw_buf_printf(b, "%" PRIu64, f->n);
	else
		nw_buf_printf(b, "%" PRIu64 "-%" PRIu64, f->n, f->seq);
}

void nw_say_LAUNCH_BEHIND_END(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_printf(b, " there, launches=%" PRIu64 " on %" PRIu64 " peer%s); the others wait in it", f->n, f->seq,
	              f->seq == 1 ? "" : "s");
}

void nw_say_LAUNCH_AHEAD_END(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_printf(b, " there, launches=%" PRIu64 " on the others): %s went past where the others are", f->n,
	              f->set->ranks.n == 1 ? "it" : "they");
}

void nw_say_LAUNCH_MAJORITY(struct nw_buf *b, const struct nw_fact *f)
{
	char kb[NW_NAME_BUF];
	nw_buf_printf(b, "%" PRIu64 " rank%s launched %s %" PRIu64 " times", f->n, f->n == 1 ? "" : "s", kind(f, kb),
	              f->seq);
}

void nw_say_LAUNCH_WAITED(struct nw_buf *b, const struct nw_fact *f)
{
	char set[256], kb[NW_NAME_BUF];
	nw_rankset_format(&f->set->ranks, set, sizeof set);
	int one = f->set->ranks.n == 1;
	nw_buf_printf(b, "the %s count%s of rank%s %s cast%s no vote on comm 0x%016" PRIx64 ": a strict majority of "
	              "another of %s comms launched past %s, so %s waited for there, not stopped where the program "
	              "ends", kind(f, kb), one ? "" : "s", one ? "" : "s", set, one ? "s" : "", f->n, one ? "its" : "their",
	              one ? "it" : "them", one ? "it is" : "they are");
}

/* The counts of comm f->n that f->proc lists, in the source's order of
 * kinds: "AllReduce launches=6, Broadcast launches=2", or "none". */
static void counts(struct nw_buf *b, const struct nw_fact *f)
{
	char kb[NW_NAME_BUF];
	int any = 0;
	for (uint32_t k = 0; k < f->proc->nlaunch; k++) {
		const struct nw_launch_pos *lp = &f->proc->launch[k];
		if (lp->comm_id != f->n || !lp->launches)
			continue;
		nw_buf_printf(b, "%s%s launches=%" PRIu64, any ? ", " : "", nw_op_kind_name(lp->kind, kb), lp->launches);
		any = 1;
	}
	if (!any)
		nw_buf_puts(b, "none");
}

void nw_say_LAUNCH_EQUAL(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_printf(b, "launch counts equal; RAS cannot see completion: every rank of comm 0x%016" PRIx64
	              " (%d) launched the same collectives (", f->n, (int)(int32_t)(uint32_t)f->seq);
	counts(b, f);
	nw_buf_puts(b, "); if the job is hung, the transfer itself does not complete, unless ranks launched them in "
	            "another order");
}

void nw_say_LAUNCH_EQUAL_SAME(struct nw_buf *b, const struct nw_fact *f)
{
	(void)f;
	nw_buf_puts(b, "launch counts equal; RAS cannot see completion: a rank inside a collective and a rank past it "
	            "look the same; thread stacks (ncclwatch attach) or the preload tell them apart");
}

void nw_say_LAUNCH_EQUAL_ORDER(struct nw_buf *b, const struct nw_fact *f)
{
	(void)f;
	nw_buf_puts(b, "equal counts also hide a different launch order of the same ops (one rank launching a "
	            "Broadcast before an AllReduce, the others after it): counts are per kind, not a sequence");
}
