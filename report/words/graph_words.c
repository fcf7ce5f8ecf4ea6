/* graph_words: the words of verdicts_graph.c's facts (facts.h's
 * NW_F_GRAPH_NAME, NW_F_REPLAY_*): stuck replays of CUDA graphs, "rank 1
 * launched the graph holding AllReduce #5 on comm X 9 times; rank 0 waits
 * in replay 10 (4.5 s)", their evidence lines, the TRANSPORT_STALL of a
 * replay. */
#include "words_int.h"

#include <inttypes.h>

static const char *s_of(uint64_t n)
{
	return n == 1 ? "" : "s";
}

/* "; ranks 0-2 wait" / "rank 3 waits" after lead */
static void ranks_wait(struct nw_buf *b, const char *lead, const struct nw_fset *s)
{
	nw_buf_puts(b, lead);
	nw_buf_puts(b, s->ranks.n == 1 ? "rank " : "ranks ");
	nw_buf_rankset(b, &s->ranks);
	nw_buf_puts(b, s->ranks.n == 1 ? " waits" : " wait");
}

/* "the graph holding AllReduce #5 on comm X" */
void nw_say_GRAPH_NAME(struct nw_buf *b, const struct nw_fact *f)
{
	char kb[NW_NAME_BUF], cb[128];
	const struct nw_comm_view *v = f->view;
	const char *k = nw_op_kind_name(f->op_kind, kb), *c = nw_comm_label(v->id, v->name, cb);
	if (f->n) /* ident is a seq on its first op's comm, not on v */
		nw_buf_printf(b, "the graph holding %s #%" PRIu64 " (with ops on %s)", k, f->seq, c);
	else if (f->seq)
		nw_buf_printf(b, "the graph holding %s #%" PRIu64 " on %s", k, f->seq, c);
	else
		nw_buf_printf(b, "the graph whose first op is a %s on %s", k, c);
}

/* "in replay 10 of it (op 3 of 5 STARTED for 2.0 s)": with the per-op
 * events, the op of the replay the launch stands in, else its state. */
void nw_say_REPLAY_IN(struct nw_buf *b, const struct nw_fact *f)
{
	static const char *const of[3] = { "", " of it", " of its graph" };
	char sb[NW_NAME_BUF];
	unsigned st = 0;
	uint32_t k = nw_graph_replay_at(f->op, &st);
	nw_buf_printf(b, "in replay %" PRIu64 "%s (", f->seq, of[f->n < 3 ? f->n : 0]);
	if (k)
		nw_buf_printf(b, "op %u of %" PRIu64 " %s", k, f->op->count, nw_op_state_name(st, sb));
	else
		nw_buf_puts(b, nw_op_state_name(f->op->state, sb));
	nw_buf_puts(b, " for " NW_AGE ")");
}

void nw_say_REPLAY_SHORT(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_printf(b, "launched it %" PRIu64 " time%s, never replay %" PRIu64 "; ", f->n, s_of(f->n), f->seq);
}

void nw_say_REPLAY_ENDED(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_printf(b, "ended inside replay %" PRIu64 " of it; ", f->seq);
}

void nw_say_REPLAY_MM_WAIT(struct nw_buf *b, const struct nw_fact *f)
{
	char ab[32];
	ranks_wait(b, "; ", f->set);
	nw_buf_printf(b, " in replay %" PRIu64 " of the graph holding it (%s)", f->seq, nw_fmt_age(f->n, ab));
}

/* Where a MISMATCH of verdicts_lineup.c runs (NCCL pairs a comm's ops in
 * the order they run, a replay's captured ops at each launch): ", in the
 * place of their replay 5 of " (GRAPH_NAME follows), or ", in the place
 * of their AllReduce #5" */
void nw_say_REPLAY_MM_AT(struct nw_buf *b, const struct nw_fact *f)
{
	char kb[NW_NAME_BUF];
	if (f->seq)
		nw_buf_printf(b, ", in the place of their replay %" PRIu64 " of ", f->seq);
	else
		nw_buf_printf(b, ", in the place of their %s #%" PRIu64, nw_op_kind_name(f->op_kind, kb), f->n);
}

void nw_say_REPLAY_LAUNCHED(struct nw_buf *b, const struct nw_fact *f)
{
	(void)f;
	nw_buf_puts(b, " launched ");
}

/* " 9 times" when the short ranks agree, else " fewer than 10 times" */
void nw_say_REPLAY_TIMES(struct nw_buf *b, const struct nw_fact *f)
{
	if (f->n == NW_FACT_OTHER)
		nw_buf_printf(b, " fewer than %" PRIu64 " times", f->seq);
	else
		nw_buf_printf(b, " %d time%s", (int)f->n, s_of(f->n));
}

void nw_say_REPLAY_ENDED_BEFORE(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_printf(b, " ended before replay %" PRIu64 " of ", f->seq);
}

void nw_say_REPLAY_COMPLETED(struct nw_buf *b, const struct nw_fact *f)
{
	(void)f;
	nw_buf_puts(b, " completed");
}

void nw_say_REPLAY_WAIT(struct nw_buf *b, const struct nw_fact *f)
{
	char ab[32];
	ranks_wait(b, "; ", f->set);
	nw_buf_printf(b, " in replay %" PRIu64 " (%s)", f->seq, nw_fmt_age(f->n, ab));
}

void nw_say_REPLAY_NOFILE_WAIT(struct nw_buf *b, const struct nw_fact *f)
{
	ranks_wait(b, "", f->set);
	nw_buf_printf(b, " in replay %" PRIu64 " of ", f->seq);
}

void nw_say_REPLAY_NOFILE(struct nw_buf *b, const struct nw_fact *f)
{
	char ab[32];
	nw_buf_printf(b, " for %s; %d of its ranks have no file (they may never have launched it)",
	              nw_fmt_age(f->n, ab), (int)f->seq);
}

void nw_say_REPLAY_STALL(struct nw_buf *b, const struct nw_fact *f)
{
	char cb[128];
	nw_buf_printf(b, "every rank of %s (%d ranks) launched replay %" PRIu64 " of its graph",
	              nw_comm_label(f->view->id, f->view->name, cb), (int)f->n, f->seq);
}

void nw_say_REPLAY_STALL_WHAT(struct nw_buf *b, const struct nw_fact *f)
{
	char kb[NW_NAME_BUF];
	if (f->seq)
		nw_buf_printf(b, " holding %s #%" PRIu64, nw_op_kind_name(f->op_kind, kb), f->seq);
	else
		nw_buf_printf(b, " whose first op is a %s", nw_op_kind_name(f->op_kind, kb));
}

void nw_say_REPLAY_STALL_END(struct nw_buf *b, const struct nw_fact *f)
{
	char ab[32];
	nw_buf_printf(b, " and none completed it in %s: the transfer itself is stuck (communicator or link, not a rank)",
	              nw_fmt_age(f->n, ab));
}
