/* init_words: the words of verdicts_init.c's facts (facts.h's NW_F_INIT_*):
 * INIT_STALL, processes inside the creation of a communicator that the
 * ranks which never entered it (or failed it, or ended inside it) hold up. */
#include "words_int.h"

#include <inttypes.h>

static const char *create_call(uint32_t origin)
{
	switch (origin) {
	case NW_ORIGIN_INIT_CONFIG: return "ncclCommInitRankConfig";
	case NW_ORIGIN_INIT_SCALABLE: return "ncclCommInitRankScalable";
	case NW_ORIGIN_INIT_ALL: return "ncclCommInitAll";
	case NW_ORIGIN_SPLIT: return "ncclCommSplit";
	case NW_ORIGIN_SHRINK: return "ncclCommShrink";
	case 0: return "ncclCommInit* or ncclCommSplit";   /* a source that does not say (NCCL RAS) */
	default: return "ncclCommInitRank";
	}
}

static void ranks(struct nw_buf *b, const struct nw_rankset *r)
{
	nw_buf_puts(b, r->n == 1 ? "rank " : "ranks ");
	nw_buf_rankset(b, r);
}

static const char *label(const struct nw_comm_view *v, char *cb)
{
	return nw_comm_label(v->id, v->name, cb);
}

void nw_say_INIT_INSIDE(struct nw_buf *b, const struct nw_fact *f)
{
	char sb[NW_NAME_BUF];
	int aged = (int)((f->n >> 48) & 1);
	nw_buf_printf(b, "inside %s (%s%s)", create_call((uint32_t)f->n),
	              nw_comm_state_name((int)((f->n >> 32) & 0xffff), sb), aged ? " for " NW_AGE : "");
}

void nw_say_INIT_NEVER(struct nw_buf *b, const struct nw_fact *f)
{
	char sb[NW_NAME_BUF];
	if (f->n == 0)
		nw_buf_puts(b, "never entered it; ");
	else if (f->n == 1)
		nw_buf_puts(b, "never called it; ");
	else
		nw_buf_printf(b, "still inside it (%s); ", nw_comm_state_name((int)f->seq, sb));
}

void nw_say_INIT_CALLED(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_printf(b, "called %s with nranks %d; ", create_call(f->view->origin), (int)(int32_t)(uint32_t)f->n);
}

void nw_say_INIT_GONE(struct nw_buf *b, const struct nw_fact *f)
{
	char lb[128], rb[NW_NAME_BUF];
	nw_buf_printf(b, "%s: ", nw_proc_label(f->proc, lb));
	if (f->comm->state == NW_COMM_INIT_FAILED)
		nw_buf_printf(b, "its %s returned %s (%s); ", create_call(f->view->origin),
		              nw_nccl_result_name(f->comm->init_result, rb), nw_nccl_result_string(f->comm->init_result));
	else
		nw_buf_puts(b, "entered it and ended inside it; ");
}

void nw_say_INIT_LOST(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_puts(b, f->set->ranks.n == 1 ? "comm rank " : "comm ranks ");
	nw_buf_rankset(b, &f->set->ranks);
	nw_buf_puts(b, ": never entered (which processes they are is not known)");
}

void nw_say_INIT_LATE(struct nw_buf *b, const struct nw_fact *f)
{
	ranks(b, &f->set->ranks);
	nw_buf_printf(b, ": never called shrink #%" PRIu64 " of the parent (the excluded ranks must not: %d excluded)",
	              f->seq, (int)(int32_t)(uint32_t)f->n);
}

void nw_say_INIT_IN(struct nw_buf *b, const struct nw_fact *f)
{
	const struct nw_rankset *w = &f->set->ranks;
	char cb[128];
	uint32_t origin = f->op_kind;
	uint64_t id = f->view ? f->view->id : f->n;
	const char *name = f->view ? f->view->name : NULL;
	int32_t nranks = f->view ? f->view->nranks : -1;
	ranks(b, w);
	nw_buf_printf(b, " %s inside %s of ", w->n == 1 ? "is" : "are", create_call(origin));
	if (origin == NW_ORIGIN_SPLIT || origin == NW_ORIGIN_SHRINK)
		nw_buf_printf(b, "%s #%" PRIu64 " of ", origin == NW_ORIGIN_SHRINK ? "shrink" : "split", f->seq);
	nw_buf_puts(b, nw_comm_label(id, name, cb));
	if (nranks > 0)
		nw_buf_printf(b, " (%d ranks)", (int)nranks);
}

void nw_say_INIT_FOR(struct nw_buf *b, const struct nw_fact *f)
{
	char ab[32];
	if (f->n)
		nw_buf_printf(b, " for %s", nw_fmt_age(f->n, ab));
	nw_buf_puts(b, "; ");
}

static const char *never(const struct nw_fact *f)
{
	return f->n ? "called" : "entered";
}

void nw_say_INIT_NEVER_DID(struct nw_buf *b, const struct nw_fact *f)
{
	ranks(b, &f->set->ranks);
	nw_buf_printf(b, " never %s it", never(f));
}

void nw_say_INIT_NOFILE(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_puts(b, "; ");
	ranks(b, &f->set->ranks);
	nw_buf_printf(b, " ha%s no file", f->set->ranks.n == 1 ? "s" : "ve");
}

void nw_say_INIT_NOFILE_Q(struct nw_buf *b, const struct nw_fact *f)
{
	ranks(b, &f->set->ranks);
	nw_buf_printf(b, " ha%s no file (never %s it?)", f->set->ranks.n == 1 ? "s" : "ve", never(f));
}

void nw_say_INIT_TAIL(struct nw_buf *b, const struct nw_fact *f)
{
	static const char *const tail[] = {
		"some comm ranks never entered it (processes not known)",
		"every rank entered it, and no strict majority finished it: the comm itself (connection setup, network)",
		"every rank entered it and none finished (rendezvous, network)",
		"the ranks that never called it may be the excluded ones",
		"every rank of the parent entered it and none finished",
	};
	nw_buf_puts(b, f->n < sizeof tail / sizeof tail[0] ? tail[f->n] : "");
}

void nw_say_INIT_TIE(struct nw_buf *b, const struct nw_fact *f)
{
	char cb[128], ab[32];
	nw_buf_puts(b, "cannot decide between ranks ");
	nw_buf_rankset(b, &f->set->ranks);
	nw_buf_printf(b, ": they called %s of %s with the same unique id and different nranks, as many ranks for "
	              "each size, none of which counts the ranks that entered; they wait inside it for %s",
	              create_call(f->view->origin), label(f->view, cb), nw_fmt_age(f->n, ab));
}

void nw_say_INIT_NSIZE(struct nw_buf *b, const struct nw_fact *f)
{
	char cb[128];
	ranks(b, &f->set->ranks);
	nw_buf_printf(b, " called %s of %s with another nranks than ranks ", create_call(f->view->origin),
	              label(f->view, cb));
}

void nw_say_INIT_NSIZE_WAIT(struct nw_buf *b, const struct nw_fact *f)
{
	char ab[32];
	nw_buf_rankset(b, &f->set->ranks);
	nw_buf_printf(b, " (%d): the same unique id, another size; they wait inside it for %s",
	              (int)(int32_t)(uint32_t)f->n, nw_fmt_age(f->seq, ab));
}

void nw_say_INIT_MINORITY(struct nw_buf *b, const struct nw_fact *f)
{
	char cb[128];
	ranks(b, &f->set->ranks);
	nw_buf_printf(b, " %s still inside %s of %s (%d ranks), ", f->set->ranks.n == 1 ? "is" : "are",
	              create_call(f->view->origin), label(f->view, cb), (int)f->view->nranks);
}

void nw_say_INIT_MINORITY_DONE(struct nw_buf *b, const struct nw_fact *f)
{
	int one = f->n == 1;
	nw_buf_printf(b, "which rank%s ", f->set->ranks.n == 1 ? "" : "s");
	nw_buf_rankset(b, &f->set->ranks);
	nw_buf_printf(b, " finished: every rank entered it, so the deviation is %s (%s connection setup, a device or "
	              "the network on %s side)", one ? "its" : "theirs", one ? "its" : "their", one ? "its" : "their");
}

void nw_say_INIT_FAILED(struct nw_buf *b, const struct nw_fact *f)
{
	char cb[128], rb[NW_NAME_BUF];
	ranks(b, &f->set->ranks);
	nw_buf_printf(b, ": %s of %s failed (%s): %s will never join it", create_call(f->view->origin),
	              label(f->view, cb), nw_nccl_result_name((int32_t)(uint32_t)f->n, rb),
	              f->set->ranks.n == 1 ? "it" : "they");
	if (f->seq)
		nw_buf_printf(b, "; %" PRIu64 " of its %d ranks created it", f->seq, (int)f->view->nranks);
}
