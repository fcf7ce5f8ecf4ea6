/* rootcause_words: the words of rootcause.c's facts (facts.h's
 * NW_F_ROOT_*): why a rule's culprit is a root or was taken out (a
 * deviant of a cycle of waits, and by which tie-break), the verdicts the
 * pass makes itself for a cycle (STREAM_BLOCKED, MISSING_RANK, the
 * program as written deadlocking), a cycle nobody can decide, and the
 * consequence folded into its root. */
#include "words_int.h"

#include <inttypes.h>

/* The reason each tie-break gives (enum nw_tiebreak). */
static const char *const tiebreak_reason[NW_TB_N] = {
	[NW_TB_COUNTS] = "its send/receive counts with its peers do not add up (a skipped or extra post)",
	[NW_TB_NEVER_ISSUED] = "it never issued an op the others wait in; they only wait behind their own earlier "
	                       "ops for it",
	[NW_TB_SKIPPED] = "it skipped a collective that the ranks which reached its op issued before it (their "
	                  "order); the others only wait for it",
	[NW_TB_SKIPPED_SPLIT] = "it went on with the parent comm's collectives past a split of it that the ranks "
	                        "inside the split make at the same point of every step (their order); the others "
	                        "only wait for it",
	[NW_TB_MAJORITY] = "it is stuck in another op than the majority",
	[NW_TB_MISMATCH] = "its op differs from what the other ranks of its comm issued at the same position (a "
	                   "MISMATCH with a majority): the others only wait for it",
	[NW_TB_ORDER_KEPT] = "the cycle closes through stream order, and it issued the two comms' ops on its stream "
	                     "the other way round than its previous ones (the order it kept before); the others "
	                     "kept theirs and only wait for it",
};

void nw_say_ROOT_DEVIATES(struct nw_buf *b, const struct nw_fact *f)
{
	int one = f->set->ranks.n == 1;
	nw_buf_puts(b, one ? "rank " : "ranks ");
	nw_buf_rankset(b, &f->set->ranks);
	nw_buf_puts(b, one ? " deviates" : " deviate");
}

void nw_say_ROOT_IN_CYCLE(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_puts(b, " in a cycle of waits (ranks ");
	nw_buf_rankset(b, &f->set->ranks);
	nw_buf_puts(b, "): ");
	nw_buf_puts(b, f->n < NW_TB_N && tiebreak_reason[f->n] ? tiebreak_reason[f->n] : "");
}

void nw_say_ROOT_NOBODY(struct nw_buf *b, const struct nw_fact *f)
{
	(void)f;
	nw_buf_puts(b, ": the other ranks the rule named wait for others, it waits for nobody");
}

/* An op (view: its comm's) of a cycle's verdict, or `unknown` (NULL op). */
static void say_op_or(struct nw_buf *b, const struct nw_fact *f, const char *unknown)
{
	if (f->op)
		nw_say_op(b, f->op, f->view);
	else
		nw_buf_puts(b, unknown);
}

void nw_say_ROOT_STREAM(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_puts(b, " issued ");
	say_op_or(b, f, "?");
	nw_buf_puts(b, " before ");
}

void nw_say_ROOT_STREAM_END(struct nw_buf *b, const struct nw_fact *f)
{
	say_op_or(b, f, "?");
	nw_buf_puts(b, " on the same stream, the other ranks of the cycle the other way round: each waits behind the "
	               "other (stream order)");
}

void nw_say_ROOT_DIFFERS(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_puts(b, f->set->ranks.n == 1 ? " is in " : " are in ");
	say_op_or(b, f, "another op");
	nw_buf_puts(b, " while the others wait in ");
}

void nw_say_ROOT_DIFFERS_END(struct nw_buf *b, const struct nw_fact *f)
{
	say_op_or(b, f, "?");
	nw_buf_puts(b, f->set->ranks.n == 1 ? ": the code path differs on it" : ": the code path differs on them");
}

void nw_say_ROOT_STREAM_HINT(struct nw_buf *b, const struct nw_fact *f)
{
	(void)f;
	nw_buf_puts(b, "issue the collectives of communicators that share a stream in the same order on every rank "
	               "(or give each communicator its own stream)");
}

void nw_say_ROOT_BROKE(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_printf(b, "rank %" PRId32 " broke the order it kept on its stream: ", f->proc->rank);
	say_op_or(b, f, "?");
	nw_buf_puts(b, " before ");
}

void nw_say_ROOT_BROKE_THEN(struct nw_buf *b, const struct nw_fact *f)
{
	say_op_or(b, f, "?");
	nw_buf_puts(b, ", then ");
}

void nw_say_ROOT_BROKE_BEFORE(struct nw_buf *b, const struct nw_fact *f)
{
	say_op_or(b, f, "?");
	nw_buf_puts(b, " before ");
}

void nw_say_ROOT_BROKE_LAST(struct nw_buf *b, const struct nw_fact *f)
{
	say_op_or(b, f, "?");
}

void nw_say_ROOT_DEADLOCK(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_puts(b, "the program as written deadlocks: ranks ");
	nw_buf_rankset(b, &f->set->ranks);
	nw_buf_puts(b, " wait for each other in a cycle that closes through stream order (each waits in an op whose "
	               "peer's op is queued on the peer's stream behind another comm's op), and none of them issued "
	               "those comms in another order than before (no earlier step, or the same order): all are named");
}

void nw_say_ROOT_DEADLOCK_HINT(struct nw_buf *b, const struct nw_fact *f)
{
	(void)f;
	nw_buf_puts(b, "issue the collectives of communicators that share a stream in one global order of the "
	               "communicators on every rank (or give each communicator its own stream)");
}

void nw_say_ROOT_UNDECIDED(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_puts(b, "cannot decide: ranks ");
	nw_buf_rankset(b, &f->set->ranks);
	nw_buf_puts(b, " wait for each other in a cycle, and neither their send/receive counts, nor who never issued "
	               "what, nor a majority tells which of them deviated: all are named");
}

void nw_say_ROOT_UNDECIDED_PREFIX(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_puts(b, "cannot decide between ranks ");
	nw_buf_rankset(b, &f->set->ranks);
	nw_buf_puts(b, ", waiting for each other: ");
}

void nw_say_ROOT_CONSEQUENCE(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_printf(b, "consequence: %s: ", nw_verdict_name((enum nw_verdict_kind)f->n));
}
