/* order_words: the words of verdicts_order.c's facts (facts.h's
 * NW_F_ORDER_*): "rank 0 launched the graph holding AllReduce #1 on comm
 * X 3 times before its AllReduce #5, where the others launched it 4 times
 * (...); ranks 1-2 wait (2.0 s)" and its evidence lines. */
#include "words_int.h"

#include <inttypes.h>

static const char *s_of(uint64_t n)
{
	return n == 1 ? "" : "s";
}

void nw_say_ORDER_WHO(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_puts(b, f->set->ranks.n == 1 ? "rank " : "ranks ");
	nw_buf_rankset(b, &f->set->ranks);
	nw_buf_puts(b, f->n ? " never launched " : " launched ");
}

/* "the graph holding AllReduce #1 on comm X" */
void nw_say_ORDER_GRAPH(struct nw_buf *b, const struct nw_fact *f)
{
	char kb[NW_NAME_BUF], cb[128];
	nw_buf_printf(b, f->n ? "the graph holding %s #%" PRIu64 " on %s"
	              : "the graph holding %s #%" PRIu64 " (with ops on %s)", nw_op_kind_name(f->op_kind, kb),
	              f->seq, nw_comm_label(f->view->id, f->view->name, cb));
}

void nw_say_ORDER_TIMES(struct nw_buf *b, const struct nw_fact *f)
{
	if (f->n == NW_FACT_OTHER)
		nw_buf_puts(b, " another number of times");
	else if (f->n)
		nw_buf_printf(b, " %" PRId64 " time%s", (int64_t)f->n, s_of(f->n));
}

void nw_say_ORDER_BEFORE(struct nw_buf *b, const struct nw_fact *f)
{
	char kb[NW_NAME_BUF];
	const char *its = f->set->ranks.n == 1 ? "its" : "their";
	nw_buf_printf(b, " before %s %s #%" PRIu64 ", where the others launched it %" PRId64 " time%s (a "
	              "communicator's ops pair across ranks in the order they are issued, eager or replayed: from "
	              "there on %s ops paired with others than theirs)", its, nw_op_kind_name(f->op_kind, kb), f->seq,
	              (int64_t)f->n, s_of(f->n), its);
}

void nw_say_ORDER_WAIT(struct nw_buf *b, const struct nw_fact *f)
{
	char ab[32];
	nw_buf_puts(b, f->set->ranks.n == 1 ? "; rank " : "; ranks ");
	nw_buf_rankset(b, &f->set->ranks);
	nw_buf_printf(b, " wait%s (%s)", f->set->ranks.n == 1 ? "s" : "", nw_fmt_age(f->n, ab));
}

/* "launched it 3 times before AllReduce #5; " (then where it is) */
void nw_say_ORDER_COUNT(struct nw_buf *b, const struct nw_fact *f)
{
	char kb[NW_NAME_BUF];
	nw_buf_printf(b, "launched it %" PRId64 " time%s before %s #%" PRIu64 "; ", (int64_t)f->n, s_of(f->n),
	              nw_op_kind_name(f->op_kind, kb), f->seq);
}

/* "AllReduce #5 on comm X STARTED for 2.0 s" */
void nw_say_ORDER_IN(struct nw_buf *b, const struct nw_fact *f)
{
	char sb[NW_NAME_BUF];
	nw_say_op(b, f->op, f->view);
	nw_buf_printf(b, " %s for " NW_AGE, nw_op_state_name(f->op->state, sb));
}
