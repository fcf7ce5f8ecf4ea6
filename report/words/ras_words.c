/* ras_words: the words of verdicts_ras.c's facts (facts.h's NW_F_RAS_*):
 * what is left of RAS's own verdicts on a report: a text report's errors,
 * ranks inside an init and launch counts by rank, its equal counts, a
 * report without a communicator, and nothing wrong. (A text report's
 * summaries of counts that differ are verdicts_launch.c's words,
 * LAUNCH_BEHIND and LAUNCH_AHEAD, launch_words.c.) */
#include "words_int.h"

#include <inttypes.h>

static const char *err_name(int e)
{
	switch (e) {
	case 1: return "ncclUnhandledCudaError";
	case 2: return "ncclSystemError";
	case 3: return "ncclInternalError";
	case 4: return "ncclInvalidArgument";
	case 5: return "ncclInvalidUsage";
	case 6: return "ncclRemoteError";
	case 7: return "ncclInProgress";
	default: return "an unknown ncclResult_t";
	}
}

void nw_say_RAS_ERROR(struct nw_buf *b, const struct nw_fact *f)
{
	char set[256];
	nw_rankset_format(&f->set->ranks, set, sizeof set);
	nw_buf_printf(b, "rank%s %s of comm 0x%016" PRIx64 " reported %s %s", f->set->ranks.n == 1 ? "" : "s", set, f->n,
	              NW_RAS_ERR_INIT(f->seq) ? "the init error" : "the async error",
	              err_name(NW_RAS_ERR_RESULT(f->seq)));
}

void nw_say_RAS_ERROR_AT(struct nw_buf *b, const struct nw_fact *f)
{
	int e = NW_RAS_ERR_RESULT(f->n);
	nw_buf_printf(b, "rank %d (pid %d on %s): %s %d (%s)", NW_RAS_RANK(f->seq), NW_RAS_PID(f->seq), f->set->host,
	              NW_RAS_ERR_INIT(f->n) ? "init error" : "async error", e, err_name(e));
}

void nw_say_RAS_ERROR_HINT(struct nw_buf *b, const struct nw_fact *f)
{
	(void)f;
	nw_buf_puts(b, "the error string: NCCL_DEBUG=WARN on that rank says where it came from");
}

void nw_say_RAS_IN_INIT(struct nw_buf *b, const struct nw_fact *f)
{
	uint64_t in_init = f->seq & 0xffffffffu, nranks = f->seq >> 32;
	nw_buf_printf(b, "%" PRIu64 " of %" PRIu64 " ranks of comm 0x%016" PRIx64 " are still inside its init (%s)", in_init,
	              nranks, f->n,
	              in_init * 2 < nranks ? "a minority: they are named" : "no minority to blame: the comm itself");
}

void nw_say_RAS_IN_INIT_WHY(struct nw_buf *b, const struct nw_fact *f)
{
	(void)f;
	nw_buf_puts(b, "RAS lists a comm once its ranks exchanged their peer info: these ranks are past the rendezvous, "
	            "in the connection setup");
}

void nw_say_RAS_LAUNCH_AT(struct nw_buf *b, const struct nw_fact *f)
{
	char kb[NW_NAME_BUF];
	const char *host = f->set->host;
	nw_buf_printf(b, "rank %d (pid %d on %s): %s launched %" PRIu64 " times", NW_RAS_RANK(f->seq), NW_RAS_PID(f->seq),
	              host[0] ? host : "?", nw_op_kind_name(f->op_kind, kb), f->n);
}

void nw_say_RAS_OUTLIERS(struct nw_buf *b, const struct nw_fact *f)
{
	(void)f;
	nw_buf_puts(b, " (text report: only the outliers are listed by rank)");
}

void nw_say_RAS_EQUAL(struct nw_buf *b, const struct nw_fact *f)
{
	(void)f;
	nw_buf_puts(b, "launch counts equal; RAS cannot see completion: the text report shows no mismatch, error or "
	            "missing process");
}

void nw_say_RAS_NO_COMM(struct nw_buf *b, const struct nw_fact *f)
{
	(void)f;
	nw_buf_puts(b, "RAS reports no communicator: no init of this job got past its rendezvous (or no NCCL "
	            "communicator exists)");
}

void nw_say_RAS_NO_COMM_WHY(struct nw_buf *b, const struct nw_fact *f)
{
	(void)f;
	nw_buf_puts(b, "RAS lists a comm only once every rank exchanged its peer info: a rank that never arrived cannot "
	            "be named from RAS; thread stacks can");
}

void nw_say_RAS_HEALTHY(struct nw_buf *b, const struct nw_fact *f)
{
	(void)f;
	nw_buf_puts(b, "nothing RAS can see is wrong: every rank answered, no error, no launch count differs (RAS "
	            "cannot see completion, nor send/receive)");
}
