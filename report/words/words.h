/* words.h: the engine's output layer, the analysis (../decide/decide.h)
 * for people and tools, and the only place that formats: decide/ leaves
 * findings (facts, decide/facts.h), never words; nw_words_say says them,
 * and these files lay them out.
 *
 *   say.c    nw_words_say: every verdict's findings into its summary,
 *            evidence and hint; one function per fact kind (words_int.h),
 *            a family's in one file: fault_words.c (GPU_FAULT),
 *            lost_words.c (data lost), order_words.c and graph_words.c
 *            (replays of CUDA graphs), left_words.c (a comm left
 *            early), init_words.c (INIT_STALL), launch_words.c
 *            (launch counts, NCCL RAS), ras_fold_words.c (a NCCL RAS
            report folded into the job of its processes: whether RAS
            agrees, the stacks beside it), p2p_words.c (P2P_UNMATCHED,
 *            P2P_DEADLOCK), coll_words.c (MISMATCH, MISSING_RANK,
 *            TRANSPORT_STALL, STREAM_BLOCKED, IDLE, HEALTHY: verdicts_coll.c),
 *            ras_words.c (RAS's own: a text report's errors, ranks in
 *            init and counts by rank, a report without a comm),
 *            where_words.c (shared: grouped evidence,
 *            where a process is, an op), source_words.c (what a
 *            source cannot tell, every verdict's last line);
 *            kind_words.c: a verdict kind's name and hint
 *   text.c   the verdict first, then the evidence, the environment
 *            differences and the merged stacks; rank sets as "0-6,9";
 *            colour only when asked (the CLI asks on a terminal)
 *   json.c   the same as one JSON document, schema docs/json-schema.md
 *            ("schema": "ncclwatch.diagnose", "version": 1)
 *   trace.c  a Chrome/Perfetto trace: one track per rank and communicator,
 *            ops as slices from enqueue to completion, stalls marked
 *   status.c one line per process: host, pid, rank, communicators, last
 *            op, state, age; jobs newest first with their state
 *            (status_jobs.h: live, hung, stale); status_json.c the same
 *            as JSON ("schema": "ncclwatch.status", "version": 1)
 *
 * Renderers only read the analysis; they return 0, or -1 if writing
 * failed (errno set). */
#ifndef NCCLWATCH_REPORT_WORDS_H
#define NCCLWATCH_REPORT_WORDS_H

#include <stdio.h>

#include "../decide/decide.h"

#define NW_RENDER_COLOR   0x1u   /* ANSI colours (the CLI sets it when stdout is a terminal) */
#define NW_RENDER_VERBOSE 0x2u   /* every evidence line and every stack group, not the first few */

/* A verdict kind's name ("MISSING_RANK"; "UNKNOWN" out of range) and
 * DESIGN.md's hint ("" none), kind_words.c. */
const char *nw_verdict_name(int kind);
const char *nw_verdict_hint(int kind);

/* Says the findings of every verdict of a (decide/facts.h) in words: call
 * it once after nw_analyze, before anything reads a verdict's summary,
 * evidence or hint (again: nothing changes). 0, or -1 out of memory (the
 * lines it could not say stay empty). */
int nw_words_say(struct nw_analysis *a);
/* Whether fact kind `kind` has its words (a test checks every kind). */
int nw_words_fact_known(int kind);

int nw_render_text(FILE *out, const struct nw_analysis *a, unsigned flags);
int nw_render_json(FILE *out, const struct nw_analysis *a);
int nw_render_trace(FILE *out, const struct nw_analysis *a);
int nw_render_status(FILE *out, const struct nw_analysis *a, unsigned flags);
int nw_render_status_json(FILE *out, const struct nw_analysis *a);

#endif
