/* ras_lineup: see ras_lineup.h. Which processes: those whose file lies
 * in the report's directory (the job directory attach writes both into),
 * lined up by host and pid. RAS names a host by its bootstrap IP address,
 * a snapshot by its host name: a RAS host is the snapshots' host that
 * holds the most of its pids (a unique best), and then each rank is the
 * process with its pid there. A lined-up process without a rank of its
 * own (a launcher that sets none) takes its RAS world rank, and the job
 * its world size, so that a rank RAS names and a rank the stacks name are
 * the same rank. */
#include "../sources.h"   /* first: it configures uthash */
#include "ras_lineup.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The lining up of one world comm: its entries (rank, pid, host), the
 * candidates (sorted by pid), each side's host indices, and per RAS host
 * the candidates' host that holds the most of its pids (tie: none). */
struct lineup {
	const struct nw_ras_comm *w;
	struct rent *e;
	size_t ne;
	struct nw_proc **cand;
	size_t nc;
	uint32_t *rh, *sh;           /* each entry's RAS host index, each candidate's */
	uint32_t nrh;
	size_t *bestn;
	uint32_t *best;
	uint8_t *tie;
	struct nw_proc **matched;    /* [ne]: the process each entry is, NULL none */
	struct nw_proc **added;      /* the views lineup_split made, for the caller's procs */
	size_t nadded;
};

static void lineup_free(struct lineup *l)
{
	free(l->e);
	free(l->rh);
	free(l->sh);
	free(l->bestn);
	free(l->best);
	free(l->tie);
	free(l->matched);
}

/* Entries and host indices; 0, or -1 out of memory. */
static int lineup_hosts(struct lineup *l)
{
	const struct nw_ras_comm *w = l->w;
	l->ne = w->nranks + w->nmissing;
	l->e = calloc(l->ne + 1, sizeof *l->e);
	l->rh = calloc(l->ne + 1, sizeof *l->rh);
	l->sh = calloc(l->nc + 1, sizeof *l->sh);
	l->matched = calloc(l->ne + 1, sizeof *l->matched);
	struct hidx *rpool = calloc(l->ne + 1, sizeof *rpool), *spool = calloc(l->nc + 1, sizeof *spool);
	struct hidx *rhosts = NULL, *shosts = NULL, *he, *ht;
	uint32_t nsh = 0;
	int oom = !l->e || !l->rh || !l->sh || !l->matched || !rpool || !spool;
	for (size_t i = 0; i < w->nranks && !oom; i++)
		l->e[i] = (struct rent){ w->ranks[i].rank, w->ranks[i].pid, w->ranks[i].host };
	for (size_t i = 0; i < w->nmissing && !oom; i++)
		l->e[w->nranks + i] = (struct rent){ w->missing[i].rank, w->missing[i].pid, w->missing[i].host };
	for (size_t i = 0; i < l->ne && !oom; i++)
		oom = host_index(&rhosts, rpool, &l->nrh, l->e[i].host, &l->rh[i]);
	for (size_t k = 0; k < l->nc && !oom; k++)
		oom = host_index(&shosts, spool, &nsh, l->cand[k]->hdr.host, &l->sh[k]);
	HASH_ITER(hh, rhosts, he, ht)
		HASH_DEL(rhosts, he);
	HASH_ITER(hh, shosts, he, ht)
		HASH_DEL(shosts, he);
	free(rpool);
	free(spool);
	return oom ? -1 : 0;
}

/* Per RAS host, how many of its pids each candidates' host holds, and the
 * best of them; 0, or -1 out of memory. */
static int lineup_best_hosts(struct lineup *l)
{
	struct tally *tal = NULL, *t, *tt;
	int oom = 0;
	for (size_t i = 0; i < l->ne && !oom; i++) {
		for (size_t k = nw_ras_first_pid(l->cand, l->nc, l->e[i].pid); k < l->nc && l->cand[k]->hdr.pid == l->e[i].pid && !oom;
		     k++) {
			uint64_t key = (uint64_t)l->rh[i] << 32 | l->sh[k];
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
		l->bestn = calloc(l->nrh + 1, sizeof *l->bestn);
		l->best = calloc(l->nrh + 1, sizeof *l->best);
		l->tie = calloc(l->nrh + 1, 1);
		oom = !l->bestn || !l->best || !l->tie;
	}
	HASH_ITER(hh, tal, t, tt) {
		if (!oom) {
			uint32_t r = (uint32_t)(t->key >> 32), s2 = (uint32_t)t->key;
			if (t->n > l->bestn[r]) {
				l->bestn[r] = t->n;
				l->best[r] = s2;
				l->tie[r] = 0;
			} else if (t->n == l->bestn[r]) {
				l->tie[r] = 1;
			}
		}
		HASH_DEL(tal, t);
		free(t);
	}
	return oom ? -1 : 0;
}

/* The candidates' range [*lo, return) with entry i's pid, and whether
 * one lies on the best candidates' host of the entry's RAS host. */
static size_t pid_range(const struct lineup *l, size_t i, size_t *lo)
{
	size_t k = *lo = nw_ras_first_pid(l->cand, l->nc, l->e[i].pid);
	while (k < l->nc && l->cand[k]->hdr.pid == l->e[i].pid)
		k++;
	return k;
}

static int on_best(const struct lineup *l, size_t i, size_t k)
{
	uint32_t r = l->rh[i];
	return l->e[i].pid > 0 && l->bestn[r] && !l->tie[r] && l->sh[k] == l->best[r];
}

/* A snapshot with no rank of its own yet: a process RAS may split. */
static int splittable(const struct nw_proc *p)
{
	return p->snapshot && !p->ncomms && p->views_in_process < 2 && !(p->caps & NW_CAP_OPNUMS);
}

/* Snapshots that k > 1 entries name (k ranks with its pid, its host): one
 * view per rank (nw_split_snapshot), views[k] of candidate k in view[k]
 * (NULL: not split), the new views appended to l->added. 0, or -1 out of
 * memory. */
static int lineup_split(struct lineup *l, struct nw_proc ****view)
{
	size_t *cnt = calloc(l->nc + 1, sizeof *cnt);
	*view = calloc(l->nc + 1, sizeof **view);
	if (!cnt || !*view) {
		free(cnt);
		return -1;
	}
	for (size_t i = 0; i < l->ne; i++) {
		size_t lo, hi = pid_range(l, i, &lo);
		for (size_t k = lo; k < hi; k++)
			if (on_best(l, i, k)) {
				cnt[k]++;
				break;
			}
	}
	int oom = 0;
	for (size_t k = 0; k < l->nc && !oom; k++) {
		if (cnt[k] < 2 || cnt[k] > 64 || !splittable(l->cand[k]))
			continue;
		struct nw_proc **v = calloc(cnt[k], sizeof *v);
		struct nw_proc **grown = realloc(l->added, (l->nadded + cnt[k]) * sizeof *grown);
		if (grown)
			l->added = grown;
		if (!v || !grown || nw_split_snapshot(l->cand[k], (uint32_t)cnt[k], v)) {
			free(v);
			oom = 1;
			break;
		}
		(*view)[k] = v;
		for (size_t g = 1; g < cnt[k]; g++)
			l->added[l->nadded++] = v[g];
	}
	free(cnt);
	return oom ? -1 : 0;
}

/* Each entry whose pid lies on its host's best candidates' host: that
 * process takes its rank, world size and job. Several entries of one pid
 * (a process of several ranks): each its own view, the one of its rank
 * (rank_split.c's views of a segment) or the next one not taken (a
 * snapshot's, lineup_split). 0, or -1 out of memory. */
static int lineup_assign(struct nw_ras_input *in, struct lineup *l)
{
	char job[NW_SEG_JOB_LEN] = "";
	struct nw_proc ***view = NULL;
	size_t *used = calloc(l->nc + 1, sizeof *used);
	uint8_t *taken = calloc(l->nc + 1, 1);
	int oom = !used || !taken || lineup_split(l, &view);
	for (size_t i = 0; i < l->ne && !oom; i++) {
		size_t lo, hi = pid_range(l, i, &lo), pick = SIZE_MAX;
		for (size_t k = lo; k < hi; k++) {
			if (!on_best(l, i, k))
				continue;
			if (view[k]) {
				pick = k;
				break;
			}
			if (l->cand[k]->rank == l->e[i].rank || (pick == SIZE_MAX && !taken[k]))
				pick = k;
			if (l->cand[k]->rank == l->e[i].rank)
				break;
		}
		for (size_t k = lo; k < hi && pick == SIZE_MAX; k++)
			if (on_best(l, i, k))
				pick = k;
		if (pick == SIZE_MAX)
			continue;
		struct nw_proc *p = view[pick] ? view[pick][used[pick]++] : l->cand[pick];
		taken[pick] = 1;
		if (!job[0])
			memcpy(job, p->hdr.job, sizeof job);
		else
			memcpy(p->hdr.job, job, sizeof p->hdr.job);
		if (p->rank < 0) {
			p->rank = l->e[i].rank;
			p->hdr.global_rank = l->e[i].rank;
		}
		if (p->hdr.world_size <= 0)
			p->hdr.world_size = l->w->size;
		if (add_rank(in, l->e[i].rank, p->rank)) {
			oom = 1;
			break;
		}
		p->caps |= NW_CAP_LAUNCH_ONLY;   /* its positions, as RAS sees them: launches */
		if (!(p->caps & NW_CAP_OPNUMS) && !p->source_note)
			p->source_note = NW_RAS_SOURCE_NOTE;   /* what RAS cannot tell, in words */
		l->matched[i] = p;
		in->nmatched++;
	}
	for (size_t k = 0; view && k < l->nc; k++)
		free(view[k]);
	free(view);
	free(used);
	free(taken);
	if (oom)
		return -1;
	if (in->nmap)
		qsort(in->map, in->nmap, sizeof *in->map, cmp_map);
	memcpy(in->job, job, sizeof in->job);
	return 0;
}

static int add_position(struct nw_proc *p, const struct nw_ras_comm *c, const struct nw_ras_rank *rk, int f)
{
	struct nw_launch_pos *n = realloc(p->launch, (p->nlaunch + 1) * sizeof *n);
	if (!n)
		return -1;
	p->launch = n;
	n[p->nlaunch++] = (struct nw_launch_pos){ .comm_id = c->hash, .comm_rank = rk->rank, .comm_size = c->size,
	                                          .kind = nw_ras_func_ops[f], .launches = rk->counts[f] };
	return 0;
}

/* The process of rank rk of comm cm among the matched m[0..nm) (sorted by
 * pid): the one with its pid; of several views of one process, the one
 * that is that rank (the world comm: its rank; another comm: a comm
 * entry of that rank, else the view on rk's CUDA device); NULL none,
 * or not known which (no fact rather than another rank's). */
static struct nw_proc *view_of(struct nw_proc **m, size_t nm, const struct nw_ras_comm *cm, const struct nw_ras_comm *w,
                               const struct nw_ras_rank *rk)
{
	size_t lo = nw_ras_first_pid(m, nm, rk->pid), hi = lo;
	while (hi < nm && m[hi]->hdr.pid == rk->pid)
		hi++;
	if (rk->pid <= 0 || lo == hi)
		return NULL;
	size_t same = lo + 1;
	while (same < hi && m[same] == m[lo])
		same++;
	if (same == hi)
		return m[lo];   /* one process (not split) for its every rank: its first */
	for (size_t k = lo; k < hi; k++) {
		if (cm == w && m[k]->rank == rk->rank)
			return m[k];
		for (uint32_t s = 0; cm != w && s < m[k]->ncomms; s++)
			if (m[k]->comms[s].comm_id == cm->hash && m[k]->comms[s].rank == rk->rank)
				return m[k];
	}
	for (size_t k = lo; k < hi && cm != w && rk->cuda_dev >= 0; k++)
		for (uint32_t s = 0; s < m[k]->ncomms; s++)
			if (m[k]->comms[s].comm_id == w->hash && m[k]->comms[s].cuda_device == rk->cuda_dev)
				return m[k];
	return NULL;
}

/* The launch counts of every comm of the report as positions of the
 * processes lined up (each rank's its own view's: view_of), and for one
 * without a comm table of its own (a snapshot) the comm as a fact
 * (nw_ras_comm_fact): one per collective kind; the world comm first (its
 * facts say which view is on which device). 0, or -1 out of memory. */
static int lineup_positions(const struct nw_ras_report *r, struct lineup *l)
{
	size_t nm = 0;
	for (size_t i = 0; i < l->ne; i++)
		if (l->matched[i])
			l->matched[nm++] = l->matched[i];
	qsort(l->matched, nm, sizeof *l->matched, cmp_proc_pid);
	for (size_t c = 0; c <= r->ncomms; c++) {
		const struct nw_ras_comm *cm = c ? &r->comms[c - 1] : l->w;
		if (c && cm == l->w)
			continue;
		for (size_t i = 0; i < cm->nranks; i++) {
			const struct nw_ras_rank *rk = &cm->ranks[i];
			struct nw_proc *p = view_of(l->matched, nm, cm, l->w, rk);
			if (!p)
				continue;
			/* a text report's ranks are its outliers only: no comm facts
			 * (its errors stay RAS's verdicts, verdicts_ras.c) */
			if (!(p->caps & NW_CAP_OPNUMS) && !r->from_text && nw_ras_comm_fact(p, cm, rk))
				return -1;
			if (!rk->counts_known || nw_proc_launches(p, cm->hash, NW_OP_ALLREDUCE) >= 0)
				continue;   /* its first rank of this comm has it */
			for (int f = 0; f < NW_RAS_NFUNCS; f++)
				if (add_position(p, cm, rk, f))
					return -1;
		}
		for (size_t i = 0; i < cm->nmissing && !r->from_text; i++) {   /* left it, or gone */
			size_t k = nw_ras_first_pid(l->matched, nm, cm->missing[i].pid);
			struct nw_proc *p = cm->missing[i].pid > 0 && k < nm ? l->matched[k] : NULL;
			if (p && p->hdr.pid == cm->missing[i].pid &&
			    ((!(p->caps & NW_CAP_OPNUMS) && nw_ras_left_fact(p, cm, &cm->missing[i])) ||
			     nw_ras_gone_fact(p, cm, &cm->missing[i])))
				return -1;
		}
	}
	return 0;
}

/* Each rank of the world comm RAS saw gone (missing, unresponsive or
 * considered dead) that no process read is: a process of the adapter
 * (nw_ras_proc_new), of the job, on the host its RAS host lines up with
 * (so a stack reader sees the others of its host run), able to show a
 * stack when the job's processes are (attach looked for it and found
 * none), its gone fact added with the others' (lineup_positions).
 * Appended to l->added. 0, or -1 out of memory. */
static int lineup_gone(const struct nw_ras_input *in, struct lineup *l)
{
	const struct nw_ras_comm *w = l->w;
	size_t first = l->nadded;
	uint32_t stacks = 0;
	for (size_t i = 0; i < l->ne; i++)
		if (l->matched[i] && (l->matched[i]->caps & (NW_CAP_OPNUMS | NW_CAP_STACKS)) == NW_CAP_STACKS)
			stacks = NW_CAP_STACKS;
	for (size_t i = 0; i < w->nmissing; i++) {
		const struct nw_ras_missing *m = &w->missing[i];
		size_t e = w->nranks + i;
		if ((!m->unresponsive && !m->dead) || l->matched[e])
			continue;
		const char *host = m->host;
		uint32_t r = l->rh[e];
		for (size_t k = 0; k < l->nc && l->bestn[r] && !l->tie[r]; k++)
			if (l->sh[k] == l->best[r]) {
				host = l->cand[k]->hdr.host;
				break;
			}
		struct nw_proc **grown = realloc(l->added, (l->nadded + 1) * sizeof *grown);
		if (!grown)
			return -1;
		l->added = grown;
		struct nw_proc *p = nw_ras_proc_new(in, w, in->job, m->rank, m->pid, host);
		if (!p)
			return -1;
		p->caps |= stacks;
		p->hdr.timeout_ms = 0;   /* the job's processes read say what it is */
		l->added[l->nadded++] = p;
		l->matched[e] = p;   /* its facts with the others' (not counted in nmatched) */
		if (nw_ras_gone_fact(p, w, m))
			return -1;
	}
	/* the ranks of one gone process: views of it (they share its fate) */
	for (size_t i = first; i < l->nadded; i++) {
		uint32_t n = 0, at = 0;
		for (size_t k = first; k < l->nadded; k++)
			if (l->added[k]->hdr.pid == l->added[i]->hdr.pid) {
				at = k < i ? at + 1 : at;
				n++;
			}
		l->added[i]->views_in_process = n > 1 ? n : 0;
		l->added[i]->view_of_process = at;
	}
	return 0;
}

/* Line the report's world comm w up with the processes cand[0..nc) (host
 * and pid): each lined-up process takes its rank, world size and job from
 * it (in->map, in->nmatched, in->job) and its launch counts as positions;
 * a snapshot of several ranks becomes their views, appended to *procs.
 * 0, or -1 out of memory. */
static int line_up(struct nw_ras_input *in, const struct nw_ras_comm *w, struct nw_proc **cand, size_t nc,
                   struct nw_proc ***procs, size_t *nprocs)
{
	qsort(cand, nc, sizeof *cand, cmp_proc_pid);
	struct lineup l = { .w = w, .cand = cand, .nc = nc };
	int rc = lineup_hosts(&l) || lineup_best_hosts(&l) || lineup_assign(in, &l) ||
	         (in->nmatched && lineup_gone(in, &l));
	if (l.nadded) {
		struct nw_proc **all = realloc(*procs, (*nprocs + l.nadded) * sizeof *all);
		if (all) {
			*procs = all;
			memcpy(all + *nprocs, l.added, l.nadded * sizeof *all);
			*nprocs += l.nadded;
		} else {
			for (size_t i = 0; i < l.nadded; i++)
				nw_proc_free(l.added[i]);   /* the analysis fails: out of memory */
			rc = 1;
		}
	}
	rc = rc || lineup_positions(&in->r, &l);
	free(l.added);
	lineup_free(&l);
	return rc ? -1 : 0;
}

static int claim(struct nw_ras_input *in, struct nw_proc ***procsp, size_t *nprocsp)
{
	struct nw_proc **procs = *procsp;
	size_t nprocs = *nprocsp;
	const struct nw_ras_comm *w = nw_ras_world(&in->r);
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
	int oom = line_up(in, w, cand, nc, procsp, nprocsp) != 0;
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
		procs = *procsp;
		for (size_t i = 0; i < nprocs; i++)
			if (procs[i] && procs[i]->hdr.pid > 0)
				cand[nc++] = procs[i];
		oom = line_up(in, w, cand, nc, procsp, nprocsp) != 0;
	}
	free(cand);
	return oom ? -1 : 0;
}

int nw_ras_lineup(void *arg, struct nw_proc ***procs, size_t *nprocs)
{
	struct nw_ras_merge *m = arg;
	for (size_t i = 0; i < m->n; i++)
		if (claim(&m->in[i], procs, nprocs))
			return -1;
	/* the others: a job of their own, of the adapter's processes (after
	 * every claim: no report lines up with another's processes) */
	for (size_t i = 0; i < m->n; i++) {
		struct nw_ras_input *in = &m->in[i];
		/* a text report (NCCL < 2.28.7) lists only the outliers by rank:
		 * too few processes for a job of them; it stays RAS's alone */
		if (in->job[0] || !nw_ras_world(&in->r) || in->r.from_text)
			continue;
		char job[NW_SEG_JOB_LEN];
		snprintf(job, sizeof job, "\001ras %zu", i);   /* the caller names it "ras PATH" */
		if (nw_ras_own_procs(in, job, procs, nprocs))
			return -1;
		memcpy(in->job, job, sizeof in->job);
		in->own = 1;
	}
	return 0;
}

/* in->map is sorted by RAS rank (nw_ras_lineup sorts it) */
int32_t nw_ras_our_rank(const struct nw_ras_input *in, int32_t ras_rank)
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
