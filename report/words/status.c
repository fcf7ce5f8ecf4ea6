/* One line per rank (see render.h), for `ncclwatch status`: a process
 * that drives several ranks has a line for each, with the same pid.
 *
 *   # N jobs: L live, H hung, S stale[, I idle][, U unknown]
 *   # host pid rank comms last state age alive
 *   # job NAME: N processes[ (R ranks)], world size W, ranks missing: none[, hosts not heard from: H (ranks R)]; STATE (DETAILS)
 *   HOST PID RANK comms=N last=KIND#SEQ@COMM state=STATE age=S.Ss alive|dead|?
 *   # unreadable: PATH: PROBLEM
 *
 * Jobs come newest first; STATE is live, hung, stale, idle or unknown
 * (status_jobs.h), DETAILS how many ranks' processes are alive, dead, or
 * on other hosts and, for a hung job, the op that waited longest; for an
 * idle one, how long no process made an NCCL call.
 * Lines that are not about a process start with "#"; process lines have
 * exactly eight fields separated by one space, whatever the segment holds
 * (a host name's spaces, backslashes and control bytes print as \x20, \\
 * and \xNN: ../escape.h).
 * RANK is the global rank or "-". `last` is the newest op kept of the
 * process: KIND, then #SEQ if it has a sequence number, then @COMM (16 hex
 * digits) if it is about a communicator; "-" when none; `state` is that
 * op's state and `age` the time since it was enqueued, on the process's
 * clock (its "now": the reader's for a live process, else its last
 * heartbeat). alive: this host and running; dead; ? (another host). */
#include "words.h"
#include "status_jobs.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "../names.h"
#include "../escape.h"

/* s (at most max bytes, NUL-terminated within them or cut there) escaped
 * (../escape.h), spaces too if `word`; "-" if empty. */
static void put_clean(FILE *out, const char *s, size_t max, int word)
{
	size_t len = strnlen(s, max);
	if (!len)
		fputc('-', out);
	nw_put_escaped_n(out, s, len, word ? NW_ESC_SPACE : 0);
}

static void put_word(FILE *out, const char *s, size_t max)
{
	put_clean(out, s, max, 1);
}

static void put_proc(FILE *out, const struct nw_proc *p)
{
	char b1[NW_NAME_BUF], b2[NW_NAME_BUF];
	put_word(out, p->hdr.host, sizeof p->hdr.host);
	fprintf(out, " %" PRId64 " ", p->hdr.pid);
	if (p->rank >= 0)
		fprintf(out, "%" PRId32, p->rank);
	else
		fputc('-', out);
	fprintf(out, " comms=%" PRIu32, p->ncomms);
	if (!p->nops) {
		fputs(" last=- state=- age=-", out);
	} else {
		/* ops[] is oldest first by ticket; the newest enqueue wins. */
		const struct nw_seg_op *op = &p->ops[p->nops - 1];
		for (size_t i = 0; i < p->nops; i++)
			if (p->ops[i].enqueue_ns > op->enqueue_ns)
				op = &p->ops[i];
		fprintf(out, " last=%s", nw_op_kind_name(op->kind, b1));
		if (op->seq)
			fprintf(out, "#%" PRIu64, op->seq);
		if (op->kind == NW_OP_GRAPH_LAUNCH)   /* seq: the replay; root: its graph's first captured op */
		{
			fprintf(out, "(graph#%" PRId32 ":%s)", op->root, nw_op_kind_name((unsigned)op->redop, b1));
			unsigned at_state = 0;
			uint32_t at = nw_graph_replay_at(op, &at_state);
			if (at)   /* the op the replay stands in (per-op events) */
				fprintf(out, "(op %u of %" PRIu64 " %s)", at, op->count, nw_op_state_name(at_state, b2));
		}
		if (op->comm_id)
			fprintf(out, "@%016" PRIx64, op->comm_id);
		uint64_t age = p->now_ns > op->enqueue_ns ? p->now_ns - op->enqueue_ns : 0;
		fprintf(out, " state=%s age=%.1fs", nw_op_state_name(op->state, b2), (double)age / 1e9);
	}
	fprintf(out, " %s\n", p->alive > 0 ? "alive" : p->alive == 0 ? "dead" : "?");
}

/* "; hung (6 alive, 2 dead; rank 3 pid 12 AllReduce#6 STARTED for 75.0s, timeout 60s)" */
static void put_job_state(FILE *out, const struct nw_status_job *s)
{
	char b1[NW_NAME_BUF], b2[NW_NAME_BUF];
	fprintf(out, "; %s (", nw_job_state_name(s->state));
	if (s->state == NW_JOB_STALE) {
		fputs("every process dead", out);
	} else {
		const char *sep = "";
		if (s->alive) {
			fprintf(out, "%zu alive", s->alive);
			sep = ", ";
		}
		if (s->dead) {
			fprintf(out, "%s%zu dead", sep, s->dead);
			sep = ", ";
		}
		if (s->remote)
			fprintf(out, "%s%zu on other hosts", sep, s->remote);
	}
	if (s->state == NW_JOB_HUNG) {
		const struct nw_seg_op *op = s->stuck_op;
		fputs("; ", out);
		if (s->stuck->rank >= 0)
			fprintf(out, "rank %" PRId32 " ", s->stuck->rank);
		fprintf(out, "pid %" PRId64 " %s", s->stuck->hdr.pid, nw_op_kind_name(op->kind, b1));
		if (op->seq)
			fprintf(out, "#%" PRIu64, op->seq);
		fprintf(out, " %s for %.1fs, timeout %gs", nw_op_state_name(op->state, b2), s->stuck_age_s,
		        s->job->timeout_s);
	} else if (s->state == NW_JOB_IDLE) {
		fprintf(out, "; nothing pending, no NCCL call or op end for %.1fs, timeout %gs", s->quiet_s,
		        s->job->timeout_s);
	}
	fputs(")", out);
}

int nw_render_status(FILE *out, const struct nw_analysis *a, unsigned flags)
{
	(void)flags;
	size_t counts[NW_JOB_STATES] = { 0 };
	struct nw_status_job *order = nw_status_jobs(a, counts);
	if (!order)
		return -1;
	fprintf(out, "# %zu job%s: %zu live, %zu hung, %zu stale", a->njobs, a->njobs == 1 ? "" : "s",
	        counts[NW_JOB_LIVE], counts[NW_JOB_HUNG], counts[NW_JOB_STALE]);
	if (counts[NW_JOB_IDLE])
		fprintf(out, ", %zu idle", counts[NW_JOB_IDLE]);
	if (counts[NW_JOB_UNKNOWN])
		fprintf(out, ", %zu unknown", counts[NW_JOB_UNKNOWN]);
	fputc('\n', out);
	fputs("# host pid rank comms last state age alive\n", out);
	for (size_t j = 0; j < a->njobs; j++) {
		const struct nw_job *job = order[j].job;
		fputs("# job ", out);
		put_word(out, job->name ? job->name : "", NW_SEG_JOB_LEN);
		size_t nproc = nw_job_process_count(job);
		fprintf(out, ": %zu process%s", nproc, nproc == 1 ? "" : "es");
		if (nproc != job->nprocs)
			fprintf(out, " (%zu ranks)", job->nprocs);
		fputs(", world size ", out);
		if (job->world_size >= 0)
			fprintf(out, "%" PRId32, job->world_size);
		else
			fputs("unknown", out);
		fputs(", ranks missing: ", out);
		if (job->missing.n) {
			char small[256];
			nw_rankset_format(&job->missing, small, sizeof small);
			fputs(small, out);
		} else {
			fputs("none", out);
		}
		if (job->hosts_unheard) {
			char small[256];
			nw_rankset_format(&job->unheard, small, sizeof small);
			fprintf(out, ", hosts not heard from: %" PRIu32 " (ranks %s)", job->hosts_unheard, small);
		}
		put_job_state(out, &order[j]);
		fputc('\n', out);
		for (size_t i = 0; i < job->nprocs; i++)
			put_proc(out, job->procs[i]);
	}
	free(order);
	for (size_t i = 0; i < a->nbad; i++) {
		fputs("# unreadable: ", out);
		put_clean(out, a->bad[i].err.message, sizeof a->bad[i].err.message, 0);
		fputc('\n', out);
	}
	if (fflush(out) != 0 || ferror(out)) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}
