/* left_words: the words of verdicts_left.c's facts (facts.h's
 * NW_F_LEFT*): a comm a minority of its ranks left early. */
#include "words_int.h"

#include <inttypes.h>

/* "rank 3 (pid 103 on host) aborted the comm" */
void nw_say_LEFT_RANK(struct nw_buf *b, const struct nw_fact *f)
{
	const struct nw_seg_comm *c = f->comm;
	const char *how = c->state == NW_COMM_ABORTED     ? "aborted the comm"
	                  : c->state == NW_COMM_FINALIZED ? "finalized the comm"
	                                                  : "destroyed the comm or no longer holds it";
	nw_buf_printf(b, "rank %d (pid %" PRId64 " on %s) %s", (int)c->rank, f->proc->hdr.pid, f->proc->hdr.host, how);
}

void nw_say_LEFT(struct nw_buf *b, const struct nw_fact *f)
{
	char set[256];
	nw_rankset_format(&f->set->ranks, set, sizeof set);
	nw_buf_printf(b, "rank%s %s left comm 0x%016" PRIx64 " early (finalized, destroyed or aborted it): %d of its "
	              "%d ranks still run it", f->set->ranks.n == 1 ? "" : "s", set, f->view->id, (int)f->n,
	              (int)f->view->nranks);
}
