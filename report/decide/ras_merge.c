/* ras_merge: a saved NCCL RAS report and the snapshots (or segments) of
 * the same processes made ONE job with one verdict set (docs/ras.md, "One
 * job, one verdict").
 *
 * Which processes: those whose file lies in the report's directory (the
 * job directory attach writes both into), lined up by host and pid. RAS
 * names a host by its bootstrap IP address, a snapshot by its host name:
 * a RAS host is the snapshots' host that holds the most of its pids (a
 * unique best), and then each rank is the process with its pid there.
 * A lined-up process without a rank of its own (a launcher that sets
 * none) takes its RAS world rank, and the job its world size, so that a
 * rank RAS names and a rank the stacks name are the same rank.
 *
 * One verdict set, per job the report joined:
 *   - segments in the job: their verdicts stay (the strongest source);
 *     each gets one line saying whether RAS agrees;
 *   - snapshots only, RAS names culprits (counts, gone processes, errors):
 *     RAS's verdicts are the job's, each culprit's stack from its snapshot
 *     ("where it is instead"), and the stacks' verdicts fold into them as
 *     one line each, "stacks agree: ..." or "stacks disagree: ...";
 *   - RAS names nobody (launch counts equal, no comm yet): the stacks'
 *     culprits stay, with what RAS saw ("launch counts equal"); when the
 *     stacks name nobody either (every rank inside NCCL), RAS's verdict
 *     (TRANSPORT_STALL "launch counts equal; RAS cannot see completion",
 *     or INIT_STALL) is the job's, the stacks' as its evidence. */
#include "decide.h"   /* first: it configures uthash */
#include "verdicts_ras.h"
#include "../names.h"

#include <ctype.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The world comm of a report: the largest (as nw_ras_verdicts takes it). */
static const struct nw_ras_comm *world_of(const struct nw_ras_report *r)
{
	const struct nw_ras_comm *w = NULL;
	for (size_t i = 0; i < r->ncomms; i++) {
		const struct nw_ras_comm *c = &r->comms[i];
		if (!w || c->size > w->size || (c->size == w->size && c->nranks > w->nranks) ||
		    (c->size == w->size && c->nranks == w->nranks && c->hash < w->hash))
			w = c;
	}
	return w;
}

static void dir_of(const char *path, char *out, size_t len)
{
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof tmp, "%s", path);
	char *s = strrchr(tmp, '/');
	if (s == tmp)
		s[1] = 0;
	else if (s)
		*s = 0;
	else
		snprintf(tmp, sizeof tmp, ".");
	if (!realpath(tmp, out))
		snprintf(out, len, "%s", tmp);
}

struct rent { int rank, pid; const char *host; };

static int add_rank(struct nw_ras_input *in, int ras_rank, int rank)
{
	if (in->nmap == in->capmap) {
		size_t cap = in->capmap ? 2 * in->capmap : 16;
		int (*m)[2] = realloc(in->map, cap * sizeof *m);
		if (!m)
			return -1;
		in->map = m;
		in->capmap = cap;
	}
	in->map[in->nmap][0] = ras_rank;
	in->map[in->nmap][1] = rank;
	in->nmap++;
	return 0;
}

static int cmp_proc_pid(const void *a, const void *b)
{
	const struct nw_proc *x = *(struct nw_proc *const *)a, *y = *(struct nw_proc *const *)b;
	return x->hdr.pid < y->hdr.pid ? -1 : x->hdr.pid > y->hdr.pid;
}

/* The first of cand[0..nc) (sorted by pid) with this pid, or nc. */
static size_t first_pid(struct nw_proc *const *cand, size_t nc, int64_t pid)
{
	size_t lo = 0, hi = nc;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cand[mid]->hdr.pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* A host name -> a small index (hosts of either side). */
struct hidx {
	const char *name;
	uint32_t i;
	UT_hash_handle hh;
};

static int host_index(struct hidx **h, struct hidx *pool, uint32_t *n, const char *name, uint32_t *out)
{
	struct hidx *e;
	HASH_FIND_STR(*h, name, e);
	if (!e) {
		e = &pool[*n];
		e->name = name;
		e->i = (*n)++;
		HASH_ADD_KEYPTR(hh, *h, e->name, strlen(e->name), e);
		if (nw_hash_oom_taken())
			return -1;
	}
	*out = e->i;
	return 0;
}

struct tally {                  /* (RAS host, snapshots' host) -> pids in both */
	uint64_t key;
	size_t n;
	UT_hash_handle hh;
};

static int cmp_map(const void *a, const void *b)
{
	const int *x = a, *y = b;
	return (x[0] > y[0]) - (x[0] < y[0]);
}

/* Line the report's world comm w up with the processes cand[0..nc) (host
 * and pid): each lined-up process takes its rank, world size and job from
 * it (in->map, in->nmatched, in->job). 0, or -1 out of memory. */
static int line_up(struct nw_ras_input *in, const struct nw_ras_comm *w, struct nw_proc **cand, size_t nc)
{
	qsort(cand, nc, sizeof *cand, cmp_proc_pid);
	size_t ne = w->nranks + w->nmissing;
	struct rent *e = calloc(ne + 1, sizeof *e);
	uint32_t *rh = calloc(ne + 1, sizeof *rh);           /* each entry's RAS host index */
	uint32_t *sh = calloc(nc + 1, sizeof *sh);           /* each candidate's host index */
	struct hidx *rpool = calloc(ne + 1, sizeof *rpool), *spool = calloc(nc + 1, sizeof *spool);
	struct hidx *rhosts = NULL, *shosts = NULL, *he, *ht;
	struct tally *tal = NULL, *t, *tt;
	uint32_t nrh = 0, nsh = 0;
	int oom = !e || !rh || !sh || !rpool || !spool;
	size_t *bestn = NULL;
	uint32_t *best = NULL;
	uint8_t *tie = NULL;
	for (size_t i = 0; i < w->nranks && !oom; i++)
		e[i] = (struct rent){ w->ranks[i].rank, w->ranks[i].pid, w->ranks[i].host };
	for (size_t i = 0; i < w->nmissing && !oom; i++)
		e[w->nranks + i] = (struct rent){ w->missing[i].rank, w->missing[i].pid, w->missing[i].host };
	for (size_t i = 0; i < ne && !oom; i++)
		oom = host_index(&rhosts, rpool, &nrh, e[i].host, &rh[i]);
	for (size_t k = 0; k < nc && !oom; k++)
		oom = host_index(&shosts, spool, &nsh, cand[k]->hdr.host, &sh[k]);
	/* per RAS host, how many of its pids each snapshots' host holds */
	for (size_t i = 0; i < ne && !oom; i++) {
		for (size_t k = first_pid(cand, nc, e[i].pid); k < nc && cand[k]->hdr.pid == e[i].pid && !oom; k++) {
			uint64_t key = (uint64_t)rh[i] << 32 | sh[k];
			HASH_FIND(hh, tal, &key, sizeof key, t);
			if (!t) {
				if (!(t = calloc(1, sizeof *t))) {
					oom = 1;
					break;
				}
				t->key = key;
				HASH_ADD(hh, tal, key, sizeof t->key, t);
				if ((oom = nw_hash_oom_taken())) {
					free(t);
					break;
				}
			}
			t->n++;
		}
	}
	if (!oom) {
		bestn = calloc(nrh + 1, sizeof *bestn);
		best = calloc(nrh + 1, sizeof *best);
		tie = calloc(nrh + 1, 1);
		oom = !bestn || !best || !tie;
	}
	HASH_ITER(hh, tal, t, tt) {
		if (!oom) {
			uint32_t r = (uint32_t)(t->key >> 32), s2 = (uint32_t)t->key;
			if (t->n > bestn[r]) {
				bestn[r] = t->n;
				best[r] = s2;
				tie[r] = 0;
			} else if (t->n == bestn[r]) {
				tie[r] = 1;
			}
		}
		HASH_DEL(tal, t);
		free(t);
	}
	char job[NW_SEG_JOB_LEN] = "";
	for (size_t i = 0; i < ne && !oom; i++) {
		uint32_t r = rh[i];
		if (e[i].pid <= 0 || !bestn[r] || tie[r])
			continue;
		for (size_t k = first_pid(cand, nc, e[i].pid); k < nc && cand[k]->hdr.pid == e[i].pid; k++) {
			struct nw_proc *p = cand[k];
			if (sh[k] != best[r])
				continue;
			if (!job[0])
				memcpy(job, p->hdr.job, sizeof job);
			else
				memcpy(p->hdr.job, job, sizeof p->hdr.job);
			if (p->rank < 0) {
				p->rank = e[i].rank;
				p->hdr.global_rank = e[i].rank;
			}
			if (p->hdr.world_size <= 0)
				p->hdr.world_size = w->size;
			if (add_rank(in, e[i].rank, p->rank))
				oom = 1;
			p->caps |= NW_CAP_LAUNCH_ONLY;   /* its positions, as RAS sees them: launches */
			if (!(p->caps & NW_CAP_OPNUMS) && !p->source_note)
				p->source_note = NW_RAS_SOURCE_NOTE;   /* what RAS cannot tell, in words */
			in->nmatched++;
			break;
		}
	}
	if (in->nmap)
		qsort(in->map, in->nmap, sizeof *in->map, cmp_map);
	memcpy(in->job, job, sizeof in->job);
	HASH_ITER(hh, rhosts, he, ht)
		HASH_DEL(rhosts, he);
	HASH_ITER(hh, shosts, he, ht)
		HASH_DEL(shosts, he);
	free(bestn);
	free(best);
	free(tie);
	free(rpool);
	free(spool);
	free(rh);
	free(sh);
	free(e);
	return oom ? -1 : 0;
}

static int claim(struct nw_ras_input *in, struct nw_proc **procs, size_t nprocs)
{
	const struct nw_ras_comm *w = world_of(&in->r);
	char rdir[PATH_MAX], pdir[PATH_MAX];
	dir_of(in->path, rdir, sizeof rdir);
	/* the processes of the report's directory, by pid */
	struct nw_proc **cand = calloc(nprocs + 1, sizeof *cand);
	if (!cand)
		return -1;
	size_t nc = 0;
	for (size_t i = 0; i < nprocs; i++) {
		if (!procs[i] || !procs[i]->path)
			continue;
		dir_of(procs[i]->path, pdir, sizeof pdir);
		if (!strcmp(pdir, rdir))
			cand[nc++] = procs[i];
	}
	if (!w) {
		/* no comm (no init past its rendezvous): no rank to line up; the
		 * report joins the one job its directory holds */
		for (size_t k = 0; k < nc; k++) {
			if (k && strcmp(cand[k]->hdr.job, cand[0]->hdr.job)) {
				in->job[0] = 0;
				break;
			}
			memcpy(in->job, cand[k]->hdr.job, sizeof in->job);
		}
		free(cand);
		return 0;
	}
	int oom = line_up(in, w, cand, nc) != 0;
	size_t known = 0;                  /* candidates with a pid (a Flight Recorder dump has none) */
	for (size_t k = 0; k < nc; k++)
		known += cand[k]->hdr.pid > 0;
	if (!oom && known && !in->nmatched) {
		/* processes lie here, none of them a rank of the report: another
		 * job's RAS answered on the host's shared port. It is no job of
		 * its own (its culprit would be printed beside this job's), and
		 * this job's verdict says it was discarded. */
		in->foreign = 1;
		memcpy(in->job, cand[nc - 1]->hdr.job, sizeof in->job);
	} else if (!oom && !known) {
		/* no process of its own directory (a report saved elsewhere, or
		 * next to Flight Recorder dumps, which hold no pid): the processes
		 * read from anywhere, lined up the same way (host and pid); one
		 * that is a rank of it makes the report join that job */
		nc = 0;
		for (size_t i = 0; i < nprocs; i++)
			if (procs[i] && procs[i]->hdr.pid > 0)
				cand[nc++] = procs[i];
		oom = line_up(in, w, cand, nc) != 0;
	}
	free(cand);
	return oom ? -1 : 0;
}

static int hook_procs(void *arg, struct nw_proc **procs, size_t nprocs)
{
	struct nw_ras_merge *m = arg;
	for (size_t i = 0; i < m->n; i++)
		if (claim(&m->in[i], procs, nprocs))
			return -1;
	return 0;
}

/* ---- one verdict set ---- */

/* in->map is sorted by RAS rank (claim) */
static int32_t our_rank(const struct nw_ras_input *in, int32_t ras_rank)
{
	size_t lo = 0, hi = in->nmap;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (in->map[mid][0] < ras_rank)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < in->nmap && in->map[lo][0] == ras_rank ? in->map[lo][1] : ras_rank;
}

static void copy_set(struct nw_jctx *x, const struct nw_ras_input *in, struct nw_rankset *to,
                     const struct nw_rankset *from)
{
	for (uint32_t k = 0; k < from->n; k++)
		nw_set_add(x, to, our_rank(in, from->v[k]));
}

/* A RAS verdict as one of the job's. */
static struct nw_vwork *adopt(struct nw_jctx *x, const struct nw_ras_input *in, const struct nw_verdict *rv)
{
	struct nw_vwork *w = nw_verdict_new(x, rv->kind, NULL, rv->op_kind, rv->seq);
	if (!w)
		return NULL;
	w->v.comm_id = rv->comm_id;
	w->v.comm_nranks = rv->comm_nranks;
	w->v.launches = rv->launches;
	w->v.hint = rv->hint;
	nw_verdict_summary(x, w, "%s", rv->summary ? rv->summary : "");
	copy_set(x, in, &w->v.culprits, &rv->culprits);
	copy_set(x, in, &w->v.waiting, &rv->waiting);
	/* what RAS saw (what it cannot see is its processes' source note,
	 * said last by the engine) */
	for (size_t i = 0; i < rv->nevidence; i++)
		nw_verdict_evidence(x, w, "%s", rv->evidence[i]);
	return w;
}

/* "rank R (from stacks): where it is instead: frames" for each culprit. */
static void culprit_stacks(struct nw_jctx *x, struct nw_vwork *w)
{
	for (uint32_t k = 0; k < w->v.culprits.n && k < 16 && !x->oom; k++) {
		int32_t r = w->v.culprits.v[k];
		size_t at = nw_proc_by_rank(x->job, r);
		if (at >= x->job->nprocs) {
			nw_verdict_evidence(x, w, "rank %d (from stacks): no snapshot: attach found no such process (gone, "
			                    "or its host was not attached)", (int)r);
			continue;
		}
		const struct nw_proc *p = x->job->procs[at];
		const struct nw_thread_stack *t = nw_main_thread(p);
		if (!t || !t->nframes) {
			nw_verdict_evidence(x, w, "rank %d (from stacks): pid %lld has no stack", (int)r, (long long)p->hdr.pid);
			continue;
		}
		const char *e = NULL;
		int waits = nw_stack_waits(t, &e) != NW_FC_OTHER;
		struct nw_buf b = { 0 };
		nw_buf_printf(&b, "rank %d (from stacks): %s", (int)r, p->alive == 0 ? "process gone; " : "");
		if (waits)
			nw_buf_printf(&b, "waits in %s: ", e ? e : "?");
		else
			nw_buf_puts(&b, "where it is instead: ");
		nw_buf_frames(&b, t, 8);
		if (b.oom || !b.s)
			x->oom = 1;
		else
			nw_verdict_evidence(x, w, "%s", b.s);
		nw_buf_free(&b);
	}
}

static int same_set(const struct nw_rankset *a, const struct nw_rankset *b)
{
	if (a->n != b->n)
		return 0;
	for (uint32_t i = 0; i < a->n; i++)
		if (a->v[i] != b->v[i])
			return 0;
	return 1;
}

/* The process of the job that RAS world rank `ras_rank` is (host and pid
 * lined up by claim), or NULL. */
static const struct nw_proc *proc_of_ras_rank(const struct nw_jctx *x, const struct nw_ras_input *in, int32_t ras_rank)
{
	int32_t r = our_rank(in, ras_rank);
	size_t at = nw_proc_by_rank(x->job, r);
	return at < x->job->nprocs ? x->job->procs[at] : NULL;
}

/* Its launch count of collective kind `op` on RAS comm `hash`, -1 unknown. */
static int64_t launches_of(const struct nw_ras_report *r, uint64_t hash, int64_t pid, uint16_t op)
{
	static const uint16_t ops[NW_RAS_NFUNCS] = { NW_OP_BROADCAST, NW_OP_REDUCE, NW_OP_ALLGATHER, NW_OP_REDUCESCATTER,
		NW_OP_ALLREDUCE };
	int f = -1;
	for (int k = 0; k < NW_RAS_NFUNCS; k++)
		if (ops[k] == op)
			f = k;
	for (size_t i = 0; i < r->ncomms && f >= 0; i++) {
		if (r->comms[i].hash != hash)
			continue;
		for (size_t k = 0; k < r->comms[i].nranks; k++)
			if (r->comms[i].ranks[k].pid == pid && r->comms[i].ranks[k].counts_known)
				return (int64_t)r->comms[i].ranks[k].counts[f];
	}
	return -1;
}

/* Its main thread is inside the NCCL call of collective kind `op` (the
 * entry its stack waits in, "ncclAllReduce"): calling the op it has not
 * launched yet. */
static int in_call_of(const char *entry, uint16_t op)
{
	char kb[NW_NAME_BUF];
	const char *k = nw_op_kind_name(op, kb);
	size_t n = strlen(k);
	if (!entry || strncmp(entry, "nccl", 4))
		return 0;
	if (op == NW_OP_BROADCAST && !strncmp(entry + 4, "Bcast", 5) && !isalnum((unsigned char)entry[9]))
		return 1;
	return !strncmp(entry + 4, k, n) && !isalnum((unsigned char)entry[4 + n]);
}

/* A rank behind the others' launch count is the culprit only if its
 * process could not be waiting in an op the count does not show: when
 * what is known of it cannot see sends/receives (no NW_CAP_SENDRECV:
 * RAS counts none, a snapshot records no ops) and its main thread waits
 * on the GPU or inside another NCCL call than the collective it is
 * behind in, it may be inside a send/receive that a peer owes it (a
 * point-to-point hang holds every rank's next collective back): not
 * blamed, said so. A behind rank elsewhere (outside NCCL, gone) or inside
 * the call of that collective (not launched yet) stays blamed. Works on
 * RAS's own ranks (before copy_set). */
static void unblame_hidden_waits(struct nw_jctx *x, struct nw_ras_input *in, struct nw_verdict *rv, size_t nr)
{
	for (size_t i = 0; i < nr && !x->oom; i++) {
		struct nw_verdict *v = &rv[i];
		if (!v->launches || !v->op_kind || !v->culprits.n)
			continue;
		struct nw_rankset keep = { 0 }, hid = { 0 };
		for (uint32_t k = 0; k < v->culprits.n; k++) {
			int32_t rr = v->culprits.v[k];
			const struct nw_proc *p = proc_of_ras_rank(x, in, rr);
			const struct nw_thread_stack *t = p ? nw_main_thread(p) : NULL;
			int64_t n = p ? launches_of(&in->r, v->comm_id, p->hdr.pid, v->op_kind) : -1;
			const char *entry = NULL;
			int hidden = p && !(p->caps & NW_CAP_SENDRECV) && n >= 0 && (uint64_t)n < v->launches && t &&
			             t->nframes && nw_stack_waits(t, &entry) != NW_FC_OTHER && !in_call_of(entry, v->op_kind);
			if (!hidden) {
				if (nw_rankset_add(&keep, rr))
					x->oom = 1;
				continue;
			}
			if (nw_rankset_add(&v->waiting, rr) || nw_rankset_add(&hid, rr))
				x->oom = 1;
			char **e = realloc(v->evidence, (v->nevidence + 1) * sizeof *e);
			if (!e) {
				x->oom = 1;
				continue;
			}
			v->evidence = e;
			char kb[NW_NAME_BUF];
			if (asprintf(&e[v->nevidence], "rank %d launched fewer %s than the others but waits in %s (stacks), not in "
			             "that collective's call: NCCL RAS counts no send/receive and its snapshot records no op, "
			             "so it may wait in a send/receive a peer owes it: not blamed", (int)rr,
			             nw_op_kind_name(v->op_kind, kb), entry ? entry : "NCCL or on the GPU") < 0)
				x->oom = 1;
			else
				v->nevidence++;
		}
		if (keep.n != v->culprits.n) {
			nw_rankset_free(&v->culprits);
			v->culprits = keep;
			if (!v->culprits.n) {
				char set[256], kb[NW_NAME_BUF], *s = NULL;
				nw_rankset_format(&hid, set, sizeof set);
				const char *k = nw_op_kind_name(v->op_kind, kb);
				if (asprintf(&s, "rank%s %s launched fewer %s than the others on comm 0x%016" PRIx64 " (RAS: %s "
				             "launches=%" PRIu64 " on the others) but wait%s inside NCCL or on the GPU: NCCL RAS "
				             "counts no send/receive, so %s may wait in one a peer owes %s; counts alone cannot say "
				             "who deviates", hid.n == 1 ? "" : "s", set, k, v->comm_id, k, v->launches,
				             hid.n == 1 ? "s" : "", hid.n == 1 ? "it" : "they", hid.n == 1 ? "it" : "them") < 0)
					x->oom = 1;
				else {
					free(v->summary);
					v->summary = s;
				}
				v->hint = "the send/receive partners of those ranks (stacks, or the preload: LD_PRELOAD records "
				          "every send and receive)";
			}
		} else {
			nw_rankset_free(&keep);
		}
		nw_rankset_free(&hid);
	}
}

static void fold(struct nw_jctx *x, struct nw_ras_input *in)
{
	struct nw_verdict *rv;
	size_t nr;
	int32_t ws;
	if (nw_ras_verdicts(&in->r, &rv, &nr, &ws)) {
		x->oom = 1;
		return;
	}
	in->folded = 1;
	unblame_hidden_waits(x, in, rv, nr);
	struct nw_job *job = x->job;
	size_t snaps = 0;
	for (size_t i = 0; i < job->nprocs; i++)
		snaps += !(job->procs[i]->caps & NW_CAP_OPNUMS);
	const size_t nstack = x->nvw;
	struct nw_rankset ras_c = { 0 }, stack_c = { 0 };
	int ras_decided = 0, ras_equal = 0, ras_nocomm = 0, ras_healthy = 0;
	for (size_t i = 0; i < nr; i++) {
		if (rv[i].culprits.n && rv[i].kind != NW_V_HEALTHY) {
			ras_decided = 1;
			copy_set(x, in, &ras_c, &rv[i].culprits);
		}
		ras_equal |= rv[i].kind == NW_V_TRANSPORT_STALL;
		ras_nocomm |= rv[i].kind == NW_V_INIT_STALL && !rv[i].comm_id;
		ras_healthy |= rv[i].kind == NW_V_HEALTHY;
	}
	/* the stacks name a culprit (a process without a rank is named by its
	 * pid: its verdict has no culprit rank, but it names one) */
	int stack_named = 0;
	for (size_t i = 0; i < nstack; i++) {
		const struct nw_verdict *v = &x->vw[i]->v;
		if (x->vw[i]->dropped)
			continue;
		for (uint32_t k = 0; k < v->culprits.n; k++)
			nw_set_add(x, &stack_c, v->culprits.v[k]);
		stack_named |= v->kind != NW_V_UNDECIDED && v->kind != NW_V_HEALTHY && v->kind != NW_V_IDLE;
	}
	const char *src = in->path;

	if (snaps < job->nprocs) {
		/* segments decide; RAS says whether it agrees */
		for (size_t i = 0; i < nstack && !x->oom; i++) {
			struct nw_vwork *w = x->vw[i];
			if (w->dropped)
				continue;
			const struct nw_verdict *best = NULL;
			for (size_t k = 0; k < nr && !best; k++)
				if (rv[k].culprits.n)
					best = &rv[k];
			if (!best && nr)
				best = &rv[0];
			if (!best)
				continue;
			struct nw_rankset c = { 0 };
			copy_set(x, in, &c, &best->culprits);
			int agree = best->kind == w->v.kind && same_set(&c, &w->v.culprits) &&
			            (!best->seq || !w->v.seq || best->seq == w->v.seq);
			nw_verdict_evidence(x, w, "NCCL RAS (%s) %s: %s: %s", src, agree ? "agrees" : "says otherwise",
			                    nw_verdict_name(best->kind), best->summary ? best->summary : "");
			nw_rankset_free(&c);
		}
	} else if (ras_decided || (!stack_named && !ras_healthy)) {
		/* RAS's verdicts are the job's; the stacks' fold into them */
		for (size_t i = 0; i < nr && !x->oom; i++) {
			if (rv[i].kind == NW_V_HEALTHY)
				continue;
			struct nw_vwork *w = adopt(x, in, &rv[i]);
			if (!w)
				break;
			culprit_stacks(x, w);
			for (size_t k = 0; k < nstack; k++) {
				const struct nw_vwork *s = x->vw[k];
				if (s->dropped)
					continue;
				const char *how = !s->v.culprits.n && s->v.kind == NW_V_UNDECIDED && !w->v.culprits.n
				                      ? "stacks agree"
				                  : !s->v.culprits.n && s->v.kind == NW_V_UNDECIDED ? "stacks cannot decide"
				                  : same_set(&stack_c, &ras_c) ? "stacks agree"
				                                               : "stacks disagree";
				nw_verdict_evidence(x, w, "%s: %s: %s", how, nw_verdict_name(s->v.kind),
				                    s->v.summary ? s->v.summary : "");
			}
		}
		for (size_t k = 0; k < nstack; k++)
			x->vw[k]->dropped = 1;
	} else {
		/* RAS names nobody; the stacks' verdicts stay, with what RAS saw */
		for (size_t i = 0; i < nstack && !x->oom; i++) {
			struct nw_vwork *w = x->vw[i];
			if (w->dropped)
				continue;
			int named = w->v.kind != NW_V_UNDECIDED && w->v.kind != NW_V_HEALTHY && w->v.kind != NW_V_IDLE;
			if (named && (ras_equal || ras_nocomm)) {
				struct nw_buf b = { 0 };
				nw_buf_puts(&b, w->v.summary ? w->v.summary : "");
				nw_buf_puts(&b, ras_equal ? "; launch counts equal (NCCL RAS): the counts cannot tell who is behind, "
				                            "the stacks do"
				                          : "; NCCL RAS lists no communicator (no init got past its rendezvous "
				                            "when it was asked)");
				char *s = nw_buf_take(&b);
				if (s) {
					free(w->v.summary);
					w->v.summary = s;
				} else {
					x->oom = 1;
				}
			}
			for (size_t k = 0; k < nr; k++)
				nw_verdict_evidence(x, w, "NCCL RAS (%s): %s: %s", src, nw_verdict_name(rv[k].kind),
				                    rv[k].summary ? rv[k].summary : "");
		}
	}
	/* RAS ranks that no process of the job is */
	const struct nw_ras_comm *wc = world_of(&in->r);
	size_t n_other = wc ? wc->nranks + wc->nmissing - in->nmatched : 0;
	for (size_t i = 0; i < x->nvw && !x->oom && !wc; i++)
		if (!x->vw[i]->dropped) {
			nw_verdict_evidence(x, x->vw[i], "NCCL RAS report %s lists no communicator: it joins the one job of its "
			                    "directory", src);
			break;
		}
	for (size_t i = 0; i < x->nvw && !x->oom && wc; i++)
		if (!x->vw[i]->dropped) {
			nw_verdict_evidence(x, x->vw[i], "NCCL RAS report %s: %zu of its ranks are processes of this job (same "
			                    "host and pid)%s", src, in->nmatched,
			                    n_other ? "; the others have no snapshot or segment here" : "");
			break;
		}
	nw_rankset_free(&ras_c);
	nw_rankset_free(&stack_c);
	nw_ras_verdicts_free(rv, nr);
}

/* A foreign report: one evidence line on each of the job's verdicts. */
static void discarded(struct nw_jctx *x, struct nw_ras_input *in)
{
	const struct nw_ras_comm *wc = world_of(&in->r);
	in->folded = 1;
	for (size_t i = 0; i < x->nvw && !x->oom; i++)
		if (!x->vw[i]->dropped)
			nw_verdict_evidence(x, x->vw[i], "NCCL RAS report %s not used: none of its %zu ranks is a process of "
			                    "this job (host and pid): another job's RAS answered (every job on a host listens "
			                    "on one port)", in->path, wc ? wc->nranks + wc->nmissing : 0);
}

static void hook_verdicts(void *arg, struct nw_jctx *x)
{
	struct nw_ras_merge *m = arg;
	for (size_t i = 0; i < m->n; i++) {
		struct nw_ras_input *in = &m->in[i];
		if (in->foreign && !in->folded && !strcmp(in->job, x->job->name))
			discarded(x, in);
	}
	for (size_t i = 0; i < m->n; i++) {
		struct nw_ras_input *in = &m->in[i];
		if (in->job[0] && !in->foreign && !in->folded && !strcmp(in->job, x->job->name)) {
			fold(x, in);
			return;
		}
	}
}

void nw_ras_hook(struct nw_ras_merge *m, struct nw_source_hook *h)
{
	h->procs = hook_procs;
	h->verdicts = hook_verdicts;
	h->arg = m;
}
