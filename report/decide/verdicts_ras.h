/* verdicts_ras: what is left of RAS's own verdicts on a report
 * (report/sources/ras/): the ranks whose process did not answer, equal
 * launch counts, a report without a comm, and a text report's errors,
 * init states and counts (a JSON report's counts that differ, errors,
 * init states and ranks that left are facts of its processes, judged by
 * the ordinary rules: verdicts_launch.c, verdicts_fault.c,
 * verdicts_init.c, verdicts_left.c). The rules and their limits are
 * in docs/ras.md and docs/diagnosis.md ("Verdicts from RAS counts").
 *
 * RAS counts launches, not completions, and no send/receive: what it
 * cannot see is said in the verdict, never guessed. */
#ifndef NCCLWATCH_REPORT_ANALYSIS_VERDICTS_RAS_H
#define NCCLWATCH_REPORT_ANALYSIS_VERDICTS_RAS_H

#include "decide.h"
#include "../sources/ras/ras_lineup.h"

/* Append to a->jobs one job named `name` whose verdicts come from the
 * report r alone: a report that lists no communicator (it names no
 * process; a report with one is processes of the adapter, ras_procs.c,
 * in nw_analyze). 0, or -1 out of memory. */
int nw_ras_add_job(struct nw_analysis *a, const struct nw_ras_report *r, const char *name);

/* The same verdicts into a fresh array (for callers that merge them
 * elsewhere, e.g. attach), each with `note` (a string that outlives the
 * analysis: what the source cannot tell, NULL none) as its last evidence
 * line, a SOURCE_NOTE fact: 0, or -1 out of memory. Free each verdict's
 * members and the array as analyze.c does (nw_ras_verdicts_free). */
int nw_ras_verdicts(const struct nw_ras_report *r, const char *note, struct nw_verdict **out, size_t *n,
                    int32_t *world_size);
void nw_ras_verdicts_free(struct nw_verdict *v, size_t n);

/* ras_merge.c: reports that join the snapshots (or segments) of the same
 * processes as ONE job (docs/ras.md, "One job, one verdict"). Fill in
 * m->in[] (path and r), hand the hook to nw_analyze
 * (nw_analysis_options.hook): its procs half is the adapter's lining up
 * (sources/ras/ras_lineup.c), its verdicts half folds each report's
 * verdicts into its job's. */
void nw_ras_hook(struct nw_ras_merge *m, struct nw_source_hook *h);

#endif
