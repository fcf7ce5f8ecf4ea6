/* The analysis as text for people (see render.h). Per job: a header line,
 * every verdict (name and summary first, then its rank sets, evidence and
 * hint), the environment differences, the merged stacks; after the jobs,
 * the files that could not be read.
 *
 *   job NAME: N processes read[ (R ranks)], world size W, ranks missing: 6-7, timeout 60s[, data lost: ...]
 *   MISSING_RANK: SUMMARY
 *     op: AllReduce #23 on comm 4f2ac2b9efdeda6d (8 ranks)   (or "  comm: ...")
 *     culprits: 5
 *     waiting: 0-4,6-7
 *     unknown: 8-9
 *     evidence:
 *       LINE
 *     hint: HINT
 *   environment differences:
 *     NCCL_P2P_DISABLE:
 *       1  ranks 0-3 (hosts a,b)
 *       (unset)  ranks 4-7 (host c)
 *   stacks (first thread of each process, N groups):
 *     ranks 0-4,6-7 (7) thread "trainer":
 *       #0 FRAME                         innermost first
 *   unreadable: PATH: PROBLEM
 *   note: PATH: ... (input set aside, e.g. a Flight Recorder dump for a segment)
 *
 * Line formats are pinned by tests/cli/test_render.c: change them on
 * purpose. Every string from a segment is escaped (../escape.h: control bytes as \xNN)
 * so that one item is always one line and a file cannot send terminal
 * escapes. The watchdog prints this text too, each line prefixed. */
#include "words.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "../names.h"
#include "../escape.h"

#define MAX_EVIDENCE 5   /* per verdict, without NW_RENDER_VERBOSE */
#define MAX_STACKS 5     /* stack groups per job, without NW_RENDER_VERBOSE */
#define MAX_HOSTS 8      /* hosts per environment value, without NW_RENDER_VERBOSE */

#define RED "\033[1;31m"
#define GREEN "\033[1;32m"
#define BOLD "\033[1m"
#define RESET "\033[0m"

/* "0-6,9" (nw_rankset_format), "-" when empty. */
static void put_ranks(FILE *out, const struct nw_rankset *s)
{
	char small[128];
	size_t need = nw_rankset_format(s, small, sizeof small);
	if (need < sizeof small) {
		fputs(small, out);
		return;
	}
	char *big = malloc(need + 1);
	if (!big) {
		fputs(small, out);     /* truncated with "...": better than nothing */
		return;
	}
	nw_rankset_format(s, big, need + 1);
	fputs(big, out);
	free(big);
}

static void put_verdict_name(FILE *out, int kind, unsigned flags)
{
	const char *name = nw_verdict_name(kind);
	if (flags & NW_RENDER_COLOR)
		fprintf(out, "%s%s%s", kind == NW_V_HEALTHY ? GREEN : RED, name, RESET);
	else
		fputs(name, out);
}

/* ", data lost: 8 ops, 2 comms, 1 stack thread, recording stopped (rank 3, pid
 * 4242)": what the job's processes could not record, nothing if none. */
static void put_lost(FILE *out, const struct nw_lost *l)
{
	if (!l->nprocs)
		return;
	const char *sep = " ";
	fputs(", data lost:", out);
	if (l->ops) {
		fprintf(out, "%s%" PRIu64 " op%s", sep, l->ops, l->ops == 1 ? "" : "s");
		sep = ", ";
	}
	if (l->comms) {
		fprintf(out, "%s%" PRIu64 " comm%s", sep, l->comms, l->comms == 1 ? "" : "s");
		sep = ", ";
	} else if (l->comms_full) {
		fprintf(out, "%scomms", sep);
		sep = ", ";
	}
	if (l->threads) {
		fprintf(out, "%s%" PRIu64 " stack thread%s", sep, l->threads, l->threads == 1 ? "" : "s");
		sep = ", ";
	}
	if (l->stopped)
		fprintf(out, "%srecording stopped", sep);
	fputs(" (", out);
	if (l->ranks.n) {
		fputs(l->ranks.n == 1 ? "rank " : "ranks ", out);
		put_ranks(out, &l->ranks);
	}
	for (uint32_t i = 0; i < l->nunranked && i < NW_LOST_PIDS; i++)
		fprintf(out, "%spid %" PRId64, i || l->ranks.n ? ", " : "", l->unranked_pid[i]);
	if (l->nunranked > NW_LOST_PIDS)
		fprintf(out, " and %" PRIu32 " more", l->nunranked - NW_LOST_PIDS);
	fputc(')', out);
}

static void put_job_header(FILE *out, const struct nw_job *job, unsigned flags)
{
	if (flags & NW_RENDER_COLOR)
		fputs(BOLD, out);
	fputs("job ", out);
	nw_put_escaped(out, job->name ? job->name : "", 0);
	size_t nproc = nw_job_process_count(job);
	fprintf(out, ": %zu process%s read", nproc, nproc == 1 ? "" : "es");
	if (nproc != job->nprocs)
		fprintf(out, " (%zu ranks)", job->nprocs);
	fputs(", world size ", out);
	if (job->world_size >= 0)
		fprintf(out, "%" PRId32, job->world_size);
	else
		fputs("unknown", out);
	fputs(", ranks missing: ", out);
	if (job->missing.n)
		put_ranks(out, &job->missing);
	else
		fputs("none", out);
	if (job->timeout_from == NW_TIMEOUT_NONE)
		fputs(", no timeout (Flight Recorder dumps: a pending op counts as stuck)", out);
	else if (job->timeout_from == NW_TIMEOUT_DEFAULT)
		fprintf(out, ", timeout %gs (ncclwatch's default: no file sets one)", job->timeout_s);
	else
		fprintf(out, ", timeout %gs", job->timeout_s);
	put_lost(out, &job->lost);
	if (flags & NW_RENDER_COLOR)
		fputs(RESET, out);
	fputc('\n', out);
	if (job->hosts_unheard) {
		fprintf(out, "  hosts not heard from: %" PRIu32 " (ranks ", job->hosts_unheard);
		put_ranks(out, &job->unheard);
		fprintf(out, ": no segment, dump or summary of theirs was read; %" PRId32 " ranks per host, as on "
		        "every host heard from)\n", job->ranks_per_host);
	}
}

static void put_verdict(FILE *out, const struct nw_verdict *v, unsigned flags)
{
	char kb[NW_NAME_BUF];
	put_verdict_name(out, v->kind, flags);
	if (v->summary && v->summary[0]) {
		fputs(": ", out);
		nw_put_escaped(out, v->summary, 0);
	}
	fputc('\n', out);
	if (v->op_kind) {
		if (v->replay)   /* a graph replay: op and seq name the graph's first captured op */
			fprintf(out, "  op: replay %" PRIu64 " of the graph holding", v->replay);
		fprintf(out, v->replay ? " %s" : "  op: %s", nw_op_kind_name(v->op_kind, kb));
		if (v->seq)
			fprintf(out, " #%" PRIu64, v->seq);
		else if (v->launches)
			fprintf(out, " launches=%" PRIu64, v->launches);   /* RAS: no op number */
		if (v->comm_id)
			fputs(" on", out);
	} else if (v->comm_id) {
		fputs("  comm:", out);
	}
	if (v->comm_id) {
		fprintf(out, v->op_kind ? " comm %016" PRIx64 : " %016" PRIx64, v->comm_id);
		if (v->comm_nranks > 0)
			fprintf(out, " (%" PRId32 " ranks)", v->comm_nranks);
	}
	if (v->op_kind || v->comm_id)
		fputc('\n', out);
	/* A problem always names its culprits: "-" is the comm or link itself. */
	if (v->kind != NW_V_HEALTHY || v->culprits.n) {
		fputs("  culprits: ", out);
		put_ranks(out, &v->culprits);
		/* With ranks that left no file, those are who the verdict cannot
		 * judge (listed as unknown), not the link: saying "the link" sent
		 * people to the network when a rank had exited cleanly. */
		if (!v->culprits.n && v->unknown.n)
			fputs(" (the ranks that may hold it up left no file: see unknown)", out);
		else if (!v->culprits.n && v->comm_id)
			fputs(" (the communicator or its link, not a rank)", out);
		else if (!v->culprits.n && v->kind == NW_V_UNDECIDED)
			fputs(" (cannot decide: see the evidence)", out);
		fputc('\n', out);
	}
	if (v->waiting.n) {
		fputs("  waiting: ", out);
		put_ranks(out, &v->waiting);
		fputc('\n', out);
	}
	if (v->unknown.n) {
		fputs("  unknown: ", out);
		put_ranks(out, &v->unknown);
		fputs(" (no file)\n", out);
	}
	if (v->nevidence) {
		size_t shown = v->nevidence;
		if (!(flags & NW_RENDER_VERBOSE) && shown > MAX_EVIDENCE)
			shown = MAX_EVIDENCE;
		fputs("  evidence:\n", out);
		for (size_t i = 0; i < shown; i++) {
			fputs("    ", out);
			nw_put_escaped(out, v->evidence[i] ? v->evidence[i] : "", 0);
			fputc('\n', out);
		}
		if (shown < v->nevidence)
			fprintf(out, "    ... %zu more evidence line%s (--verbose shows all)\n", v->nevidence - shown,
			        v->nevidence - shown == 1 ? "" : "s");
	}
	if (v->hint && v->hint[0]) {
		fputs("  hint: ", out);
		nw_put_escaped(out, v->hint, 0);
		fputc('\n', out);
	}
}

static void put_env_diffs(FILE *out, const struct nw_job *job, unsigned flags)
{
	if (!job->ndiffs) {
		fputs("environment differences: none\n", out);
		return;
	}
	fputs("environment differences:\n", out);
	for (size_t i = 0; i < job->ndiffs; i++) {
		const struct nw_env_diff *d = &job->diffs[i];
		fputs("  ", out);
		nw_put_escaped(out, d->name ? d->name : "", 0);
		fputs(":\n", out);
		for (size_t j = 0; j < d->nvalues; j++) {
			const struct nw_env_value *val = &d->values[j];
			fputs("    ", out);
			if (val->value && val->value[0])
				nw_put_escaped(out, val->value, 0);
			else
				fputs("(unset)", out);
			fprintf(out, "  rank%s ", val->ranks.n == 1 ? "" : "s");
			put_ranks(out, &val->ranks);
			if (val->nhosts) {
				size_t shown = val->nhosts;
				if (!(flags & NW_RENDER_VERBOSE) && shown > MAX_HOSTS)
					shown = MAX_HOSTS;
				fprintf(out, " (host%s ", val->nhosts == 1 ? "" : "s");
				for (size_t k = 0; k < shown; k++) {
					if (k)
						fputc(',', out);
					nw_put_escaped(out, val->hosts[k] ? val->hosts[k] : "", 0);
				}
				if (shown < val->nhosts)
					fprintf(out, " and %zu more", val->nhosts - shown);
				fputc(')', out);
			}
			fputc('\n', out);
		}
	}
}

static void put_stacks(FILE *out, const struct nw_job *job, unsigned flags)
{
	if (!job->nstacks) {
		fputs("stacks: none captured\n", out);
		return;
	}
	size_t shown = job->nstacks;
	if (!(flags & NW_RENDER_VERBOSE) && shown > MAX_STACKS)
		shown = MAX_STACKS;
	fprintf(out, "stacks (first thread of each process%s, %zu group%s):\n",
	        job->python ? " and its other Python threads" : "", job->nstacks, job->nstacks == 1 ? "" : "s");
	for (size_t i = 0; i < shown; i++) {
		const struct nw_stack_group *g = &job->stacks[i];
		fprintf(out, "  rank%s ", g->ranks.n == 1 ? "" : "s");
		put_ranks(out, &g->ranks);
		fprintf(out, " (%" PRIu32 ") thread \"", g->ranks.n);
		nw_put_escaped(out, g->thread_name ? g->thread_name : "", NW_ESC_QUOTE);
		fputs("\":\n", out);
		if (!g->nframes)
			fputs("    (no frames)\n", out);
		for (uint32_t k = 0; k < g->nframes; k++) {
			fprintf(out, "    #%" PRIu32 " ", k);
			nw_put_escaped(out, g->frames[k] && g->frames[k][0] ? g->frames[k] : "??", 0);
			fputc('\n', out);
		}
	}
	if (shown < job->nstacks)
		fprintf(out, "  ... %zu more stack group%s (--verbose shows all)\n", job->nstacks - shown,
		        job->nstacks - shown == 1 ? "" : "s");
}

int nw_render_text(FILE *out, const struct nw_analysis *a, unsigned flags)
{
	for (size_t j = 0; j < a->njobs; j++) {
		const struct nw_job *job = &a->jobs[j];
		if (j)
			fputc('\n', out);
		put_job_header(out, job, flags);
		for (size_t i = 0; i < job->nverdicts; i++)
			put_verdict(out, &job->verdicts[i], flags);
		put_env_diffs(out, job, flags);
		put_stacks(out, job, flags);
	}
	if (a->nbad && a->njobs)
		fputc('\n', out);
	for (size_t i = 0; i < a->nbad; i++) {
		/* The reader's message already names the file: "PATH: problem". */
		fputs("unreadable: ", out);
		nw_put_escaped(out, a->bad[i].err.message[0] ? a->bad[i].err.message : a->bad[i].path, 0);
		fputc('\n', out);
	}
	for (size_t i = 0; i < a->nnotes; i++) {
		fputs("note: ", out);
		nw_put_escaped(out, a->notes[i], 0);
		fputc('\n', out);
	}
	if (fflush(out) != 0 || ferror(out)) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}
