/* fate_words: the words of rule_fate.c's facts (facts.h's NW_F_GONE*,
 * NW_F_HELD_*): ranks one process's death or exit takes together, ranks
 * one thread stopped inside a group holds together, and processes their
 * source (NCCL RAS) saw gone. */
#include "words_int.h"

#include <inttypes.h>

static int rank_of(const struct nw_fact *f)
{
	return (int)(int32_t)(uint32_t)f->n;
}

void nw_say_GONE_WITH(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_printf(b, "rank %d: gone with rank %d (the same process, pid %" PRId64 ")", (int)f->proc->rank,
	              rank_of(f), f->proc->hdr.pid);
}

void nw_say_HELD_WITH(struct nw_buf *b, const struct nw_fact *f)
{
	char ab[32];
	const struct nw_open_group *g = nw_open_group_of(f->proc);
	nw_buf_printf(b, "rank %d: held with rank %d by their one thread (tid %" PRIu32 "), inside a ncclGroupStart it "
	              "never ended for %s: NCCL launched nothing of the group, and the thread issues nothing more for "
	              "any of its ranks; ", (int)f->proc->rank, rank_of(f), g ? g->tid : 0, nw_fmt_age(f->seq, ab));
}

void nw_say_HELD_HINT(struct nw_buf *b, const struct nw_fact *f)
{
	(void)f;
	nw_buf_puts(b, "the thread that drives these ranks stopped between ncclGroupStart and ncclGroupEnd: its stack "
	            "shows where (a lock, a host wait)");
}

void nw_say_GONE_PROC(struct nw_buf *b, const struct nw_fact *f)
{
	const struct nw_proc *p = f->proc;
	nw_buf_printf(b, "rank %d of comm 0x%016" PRIx64 ": %s: pid %" PRId64 " on %s, %s", (int)f->comm->rank,
	              f->comm->comm_id, f->n ? "process gone or unreachable" : "process gone", p->hdr.pid, p->hdr.host,
	              p->gone_how);
}

static const char *them(uint32_t n)
{
	return n == 1 ? "it" : "them";
}

void nw_say_GONE(struct nw_buf *b, const struct nw_fact *f)
{
	char set[256];
	uint32_t n = f->set->ranks.n;
	nw_rankset_format(&f->set->ranks, set, sizeof set);
	nw_buf_printf(b, "rank%s %s: process gone or unreachable (RAS got no answer from %s); the others wait for %s",
	              n == 1 ? "" : "s", set, them(n), them(n));
}

void nw_say_GONE_AT(struct nw_buf *b, const struct nw_fact *f)
{
	char kb[NW_NAME_BUF];
	nw_buf_printf(b, "the %" PRIu64 " ranks that answered are at %s launches=%" PRIu64 " on comm 0x%016" PRIx64
	              " (the gone process's own counts are not known; RAS cannot see completion)", f->n,
	              nw_op_kind_name(f->op_kind, kb), f->seq, f->comm->comm_id);
}

void nw_say_GONE_HINT(struct nw_buf *b, const struct nw_fact *f)
{
	(void)f;
	nw_buf_puts(b, "the process died or stopped (OOM killer, a crash, a node down, SIGSTOP): its exit status, dmesg "
	            "and the launcher's log on that host");
}

void nw_say_GONE_STILL(struct nw_buf *b, const struct nw_fact *f)
{
	char set[256];
	uint32_t n = f->set->ranks.n;
	nw_rankset_format(&f->set->ranks, set, sizeof set);
	nw_buf_printf(b, "rank%s %s still run%s comm 0x%016" PRIx64 " while ", n == 1 ? "" : "s", set, n == 1 ? "s" : "",
	              f->comm->comm_id);
}

void nw_say_GONE_MOST(struct nw_buf *b, const struct nw_fact *f)
{
	char set[256];
	nw_rankset_format(&f->set->ranks, set, sizeof set);
	nw_buf_printf(b, "%" PRIu64 " of its %d ranks (%s) are gone: most of the job ended, so the code path most likely "
	              "differs on %s (an op the others never issued, a loop that ran longer), unless the gone ones died "
	              "(RAS cannot tell an exit from a death)", f->n, (int)f->comm->nranks, set,
	              them((uint32_t)f->seq));
}

void nw_say_GONE_MOST_HINT(struct nw_buf *b, const struct nw_fact *f)
{
	(void)f;
	nw_buf_puts(b, "the code path differs on those ranks; the gone processes' exit status in the launcher's log (0: "
	            "they ended as written)");
}
