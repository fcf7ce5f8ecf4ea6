/* stacks_words: the words of verdicts_stacks.c's facts (facts.h's
 * NW_F_STK_*): the verdicts from stacks alone (attach's snapshots, no
 * segments) and what the snapshots of ranks without a segment add to a
 * verdict from segments. */
#include "words_int.h"

#include <inttypes.h>

#define STACK_FRAMES 8   /* a process's main thread, as nw_buf_frames says it */
#define WHERE_FRAMES 8   /* where a group of processes is */

/* "rank 3", "ranks 0-2 and 1 process without rank", "2 processes without rank". */
static void ranks_phrase(struct nw_buf *b, const struct nw_rankset *s, size_t without_rank)
{
	if (s->n) {
		nw_buf_puts(b, s->n == 1 ? "rank " : "ranks ");
		nw_buf_rankset(b, s);
		if (without_rank)
			nw_buf_printf(b, " and %zu process%s without rank", without_rank, without_rank == 1 ? "" : "es");
	} else {
		nw_buf_printf(b, "%zu process%s without rank", without_rank, without_rank == 1 ? "" : "es");
	}
}

static void set_phrase(struct nw_buf *b, const struct nw_fset *s)
{
	ranks_phrase(b, &s->ranks, s->others);
}

/* The main thread of p with its frames, or NULL. */
static const struct nw_thread_stack *framed_main(const struct nw_proc *p)
{
	const struct nw_thread_stack *t = nw_main_thread(p);
	return t && t->nframes ? t : NULL;
}

/* "ncclAllReduce" or the frame t waits in; NULL when it does not wait. */
static const char *waits_in(const struct nw_thread_stack *t)
{
	const char *e = NULL;
	if (nw_stack_waits(t, &e) == NW_FC_OTHER)
		return NULL;
	return e ? e : "?";
}

static void where_text(struct nw_buf *b, char **f, uint32_t n)
{
	for (uint32_t i = 0; i < n && i < WHERE_FRAMES; i++)
		nw_buf_printf(b, "%s%s", i ? " < " : "", f[i]);
	if (n > WHERE_FRAMES)
		nw_buf_puts(b, " < ...");
}

static const char *waits_word(uint64_t n)
{
	return n == 1 ? " waits" : " wait";
}

/* ---- summaries ---- */

void nw_say_STK_WHO(struct nw_buf *b, const struct nw_fact *f)
{
	const struct nw_fset *s = f->set;
	char lb[128];
	if (!s->ranks.n && s->others == 1 && s->other)
		nw_buf_puts(b, nw_proc_label(s->other, lb));
	else
		set_phrase(b, s);
}

void nw_say_STK_HOST_FN(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_printf(b, ": a CUDA host function has not returned (%s, on a thread of the CUDA driver): "
	              "the work queued behind it on its stream, NCCL ops too, cannot start",
	              nw_stack_host_fn(f->proc)->host_fn);
}

void nw_say_STK_ALSO_WAIT(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_puts(b, "; ");
	set_phrase(b, f->set);
	nw_buf_puts(b, waits_word(f->n));
	nw_buf_puts(b, " inside NCCL or on the GPU (from stacks)");
}

void nw_say_STK_GONE(struct nw_buf *b, const struct nw_fact *f)
{
	(void)f;
	nw_buf_puts(b, ": process gone");
}

void nw_say_STK_NONE_WAITS(struct nw_buf *b, const struct nw_fact *f)
{
	(void)f;
	nw_buf_puts(b, "; no other rank waits inside NCCL (from stacks)");
}

void nw_say_STK_IS_IN(struct nw_buf *b, const struct nw_fact *f)
{
	const struct nw_thread_stack *t0 = nw_main_thread(f->proc);
	uint32_t common = (uint32_t)f->n, shown = (uint32_t)f->seq;
	nw_buf_puts(b, f->set->ranks.n + f->set->others == 1 ? " is in " : " are in ");
	where_text(b, t0->frames + (t0->nframes - common), shown);
	if (shown < common && shown <= WHERE_FRAMES)
		nw_buf_puts(b, " < ...");
	nw_buf_puts(b, ", not inside NCCL, while ");
}

void nw_say_STK_WHILE(struct nw_buf *b, const struct nw_fact *f)
{
	set_phrase(b, f->set);
	nw_buf_printf(b, " %s inside NCCL or on the GPU (from stacks): the code path differs on %s",
	              f->n == 1 ? "waits" : "wait", f->seq == 1 ? "it" : "them");
}

void nw_say_STK_ALL_WAIT(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_puts(b, f->n ? "every rank with a stack (" : "every rank (");
	if (f->set->ranks.n)
		nw_buf_rankset(b, &f->set->ranks);
	else
		nw_buf_printf(b, "%zu processes without rank", f->set->others);
	nw_buf_puts(b, ") waits inside NCCL or on the GPU (from stacks): stacks cannot tell which "
	            "collective each is in or who is behind: a rank that skipped a collective, mismatched "
	            "arguments and a stuck transfer all look like this");
}

void nw_say_STK_SOME_WAIT(struct nw_buf *b, const struct nw_fact *f)
{
	set_phrase(b, f->set);
	nw_buf_printf(b, " %s inside NCCL or on the GPU and %" PRIu64 " other%s %s elsewhere (from stacks): no "
	              "minority stands out: ranks that went past the others into one more collective look "
	              "like this, and so do ranks that are only slower to arrive", f->n == 1 ? "waits" : "wait",
	              f->seq, f->seq == 1 ? "" : "s", f->seq == 1 ? "is" : "are");
}

void nw_say_STK_QUIET(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_printf(b, "from stacks: no rank waits inside NCCL or on the GPU (%" PRIu64 " process%s, one "
	              "capture each): nothing in their stacks says the job is stuck in NCCL", f->n,
	              f->n == 1 ? "" : "es");
}

void nw_say_STK_NO_STACKS(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_printf(b, "no process has a stack (%" PRIu64 " snapshot%s): nothing to judge", f->n, f->n == 1 ? "" : "s");
}

void nw_say_STK_PROMOTED(struct nw_buf *b, const struct nw_fact *f)
{
	uint32_t n = f->set->ranks.n;
	nw_buf_puts(b, "; from stacks: ");
	ranks_phrase(b, &f->set->ranks, 0);
	nw_buf_puts(b, n == 1 ? " (no segment) is not inside NCCL" : " (no segment) are not inside NCCL");
	if (f->proc && n == 1) {
		nw_buf_puts(b, " (");
		nw_buf_frames(b, nw_main_thread(f->proc), WHERE_FRAMES);
		nw_buf_puts(b, ")");
	}
	nw_buf_puts(b, n == 1 ? ": the culprit" : ": the culprits");
}

/* ---- evidence ---- */

void nw_say_STK_MISSING(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_puts(b, f->set->ranks.n == 1 ? "rank " : "ranks ");
	nw_buf_rankset(b, &f->set->ranks);
	nw_buf_printf(b, ": no snapshot and no segment (world size %d): attach found no such process: "
	              "it is gone, or its host was not attached", (int)(int64_t)f->n);
}

void nw_say_STK_WAITS_IN(struct nw_buf *b, const struct nw_fact *f)
{
	const struct nw_thread_stack *t = nw_main_thread(f->proc);
	nw_buf_printf(b, "from stacks: waits in %s: ", waits_in(t));
	nw_buf_frames(b, t, STACK_FRAMES);
}

void nw_say_STK_GONE_PROC(struct nw_buf *b, const struct nw_fact *f)
{
	const struct nw_proc *p = f->proc;
	const struct nw_thread_stack *t = framed_main(p);
	nw_buf_printf(b, "process gone: pid %" PRId64 " on %s no longer runs", p->hdr.pid,
	              p->hdr.host[0] ? p->hdr.host : "?");
	if (t) {
		nw_buf_puts(b, "; its main thread when attach saw it: ");
		nw_buf_frames(b, t, STACK_FRAMES);
	}
}

void nw_say_STK_NO_STACK(struct nw_buf *b, const struct nw_fact *f)
{
	char lb[128];
	nw_buf_printf(b, "no stack (%s): not judged", nw_proc_label(f->proc, lb));
}

void nw_say_STK_NOT_IN(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_puts(b, "from stacks: not inside NCCL: main thread: ");
	nw_buf_frames(b, nw_main_thread(f->proc), STACK_FRAMES);
}

void nw_say_STK_HOST_FN_AT(struct nw_buf *b, const struct nw_fact *f)
{
	const struct nw_thread_stack *t = nw_stack_host_fn(f->proc);
	nw_buf_printf(b, "from stacks: thread %u \"%s\" runs a host function: ", t->tid, t->name);
	nw_buf_frames(b, t, STACK_FRAMES);
}

void nw_say_STK_NO_OPS(struct nw_buf *b, const struct nw_fact *f)
{
	(void)f;
	nw_buf_puts(b, "from stacks: no op numbers (attach's snapshots hold no ring): which collective the waiting "
	            "ranks are in, and whether the others ever issued it, is not known");
}

void nw_say_STK_ONE_CAPTURE(struct nw_buf *b, const struct nw_fact *f)
{
	(void)f;
	nw_buf_puts(b, "from stacks: one capture per process; a job that is only slow can look the same: attach "
	            "again after a while, a rank that stays where it is is the one");
}

void nw_say_STK_CALLS_DIFFER(struct nw_buf *b, const struct nw_fact *f)
{
	(void)f;
	nw_buf_puts(b, "from stacks: the waiting ranks are not all in the same call (below): a desync or a "
	            "mismatch is likely; which ranks deviate, only op numbers tell");
}

void nw_say_STK_WOULD_DECIDE(struct nw_buf *b, const struct nw_fact *f)
{
	(void)f;
	nw_buf_puts(b, "what would decide: NCCL's RAS counts of each rank's collectives (ncclwatch ras), or op "
	            "numbers from the preload (ncclwatch run, LD_PRELOAD)");
}

void nw_say_STK_ENDED(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_printf(b, "from stacks: %" PRIu64 " process%s of this host no longer run%s, and none of the job does "
	              "(read after the job ended): judged as attach saw them", f->n, f->n == 1 ? "" : "es",
	              f->n == 1 ? "s" : "");
}

void nw_say_STK_ATTACHED(struct nw_buf *b, const struct nw_fact *f)
{
	const struct nw_proc *p = f->proc;
	const struct nw_thread_stack *t = framed_main(p);
	nw_buf_puts(b, "from stacks (attached, no preload): ");
	if (p->alive == 0)
		nw_buf_puts(b, "process gone; ");
	if (!t) {
		nw_buf_puts(b, "no stack");
		return;
	}
	const char *e = waits_in(t);
	if (e)
		nw_buf_printf(b, "waits in %s: ", e);
	else
		nw_buf_puts(b, "not inside NCCL: ");
	nw_buf_frames(b, t, STACK_FRAMES);
}

/* ---- hints ---- */

void nw_say_STK_HOST_FN_HINT(struct nw_buf *b, const struct nw_fact *f)
{
	(void)f;
	nw_buf_puts(b, "the host function (cuLaunchHostFunc, a stream callback): what it waits for (a lock, "
	            "another rank, I/O); a host function must not wait on the GPU or on other ranks");
}

void nw_say_STK_GONE_HINT(struct nw_buf *b, const struct nw_fact *f)
{
	(void)f;
	nw_buf_puts(b, "a process that died: its log and exit status, the kernel's log (OOM killer, GPU Xid "
	            "errors)");
}

void nw_say_STK_DIFFERS_HINT(struct nw_buf *b, const struct nw_fact *f)
{
	(void)f;
	nw_buf_puts(b, "the code path differs on those ranks (where they are: the stack); for op numbers, "
	            "run with the preload or ask NCCL RAS (ncclwatch ras)");
}
