/* The analysis as a Chrome trace-event JSON file, loadable by Perfetto
 * (ui.perfetto.dev) and chrome://tracing (see render.h).
 *
 *   {"traceEvents":[EVENT,...],"displayTimeUnit":"ms","otherData":{...}}
 *
 * - One trace process per rank: "pid" = global rank + 1 (Perfetto treats
 *   pid 0 as the kernel's swapper), named "rank R (host:pid)", sorted by
 *   rank. Processes of unknown rank, and a second process of one rank,
 *   come after the known ranks; a second job's pids start after the
 *   first job's.
 * - One trace thread per communicator: "tid" = the communicator's index in
 *   the job (1-based, the same on every rank: largest communicators first,
 *   then by id), named "comm HEX (N ranks)". Slices on one thread must nest
 *   or be disjoint; ops enqueued before the previous one completed and seen
 *   complete at the same poll nest, but one that completed later than an
 *   op it overlaps would cross it: it goes to an extra lane of its
 *   communicator, tid = lane * 1000000 + index, named "... lane L".
 * - Every op kept in a segment is a complete event ("ph":"X") from its
 *   enqueue to its end (end_ns), or to the process's now_ns when it has not
 *   completed (ENQUEUED, STARTED, INIT_ENTERED); args.state says which.
 *   An op pending longer than the job's timeout gets an instant event
 *   "stall" ("ph":"i") where it crossed the timeout; a FAILED or
 *   INIT_FAILED op an instant "failed" at its end.
 *
 * Times: "ts" and "dur" are whole microseconds (so that Perfetto's
 * conversion to ns is exact and touching slices never cross). Each process
 * records CLOCK_MONOTONIC, which processes of one host share: ts counts
 * from the earliest time any process of the job on the same host recorded
 * (its segment's creation, or an op's enqueue). Monotonic clocks of
 * different hosts have unrelated origins, so times of ranks on different
 * hosts are NOT comparable: each host starts at 0.
 *
 * Events are written one by one (a job of 16k ranks holds millions of
 * ops), each built and escaped by jansson. */
#include "words.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "../names.h"
#include "json_util.h"

#define LANE_TID_STRIDE 1000000u
#define MAX_LANES 1000u           /* per communicator and process */

struct tcomm {
	uint64_t id;
	int32_t nranks;                /* -1 unknown */
	const char *name;              /* config.commName, NULL none */
	uint32_t tid;                  /* display index, 1-based */
};

struct tev {
	uint32_t tid;                  /* lane 0 tid of its communicator */
	uint32_t lane;
	uint64_t ts, end;              /* microseconds since the host's base */
	const struct nw_seg_op *op;
};

struct lane {                  /* the ends of the slices open on one lane: a stack */
	uint64_t *end;
	size_t n, cap;
};

struct writer {
	FILE *out;
	int first;                     /* no event written yet */
	int failed;                    /* out of memory or a write error */
};

static void emit(struct writer *w, json_t *ev)
{
	if (!ev) {
		w->failed = 1;
		return;
	}
	if (!w->failed) {
		if (!w->first && fputs(",\n", w->out) == EOF)
			w->failed = 1;
		else if (nw_json_dumpf(ev, w->out, JSON_COMPACT) != 0)
			w->failed = 1;
		w->first = 0;
	}
	json_decref(ev);
}

/* {"ph":"M","pid":P[,"tid":T],"name":WHAT,"args":{KEY:VALUE}} */
static void emit_meta(struct writer *w, int64_t pid, int64_t tid, const char *what, const char *key,
                      json_t *value)
{
	int failed = 0;
	json_t *ev = json_object(), *args = json_object();
	nw_json_set(ev, "ph", json_string("M"), &failed);
	nw_json_set(ev, "pid", nw_json_int(pid), &failed);
	if (tid >= 0)
		nw_json_set(ev, "tid", nw_json_int(tid), &failed);
	nw_json_set(ev, "name", json_string(what), &failed);
	nw_json_set(args, key, value, &failed);
	nw_json_set(ev, "args", args, &failed);
	if (failed) {
		json_decref(ev);
		ev = NULL;
	}
	emit(w, ev);
}

static int cmp_tcomm_id(const void *a, const void *b)
{
	const struct tcomm *x = a, *y = b;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	/* Entries from the job's comm views (named, sized) first. */
	return (y->nranks > x->nranks) - (y->nranks < x->nranks);
}

static int cmp_tcomm_display(const void *a, const void *b)
{
	const struct tcomm *x = *(const struct tcomm *const *)a, *y = *(const struct tcomm *const *)b;
	if ((x->id == 0) != (y->id == 0))
		return x->id == 0 ? 1 : -1;    /* "no communicator" last */
	if (x->nranks != y->nranks)
		return x->nranks > y->nranks ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static size_t unique_u64(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_u64);
	size_t u = 0;
	for (size_t i = 0; i < n; i++)
		if (!u || v[u - 1] != v[i])
			v[u++] = v[i];
	return u;
}

/* Sort by id and keep one entry per id (the first: a named, sized one). */
static size_t unique_comms(struct tcomm *c, size_t k)
{
	qsort(c, k, sizeof *c, cmp_tcomm_id);
	size_t u = 0;
	for (size_t i = 0; i < k; i++) {
		if (u && c[u - 1].id == c[i].id) {
			if (!c[u - 1].name)
				c[u - 1].name = c[i].name;
			continue;
		}
		c[u++] = c[i];
	}
	return u;
}

static const struct tcomm *find_comm(const struct tcomm *c, size_t n, uint64_t id);

/* The job's communicators, sorted by id, each with its display tid: those
 * of the comm views and comm tables, and any other id an op names (a comm
 * whose slot was reused; 0 for group ops). */
static struct tcomm *job_comms(const struct nw_job *job, size_t *n)
{
	size_t cap = HASH_COUNT(job->comms);
	for (size_t i = 0; i < job->nprocs; i++)
		cap += job->procs[i]->ncomms;
	struct tcomm *c = calloc(cap ? cap : 1, sizeof *c);
	if (!c)
		return NULL;
	size_t k = 0;
	const struct nw_comm_view *v, *tmp;
	HASH_ITER(hh, job->comms, v, tmp) {
		c[k].id = v->id;
		c[k].nranks = v->nranks;
		c[k].name = v->name[0] ? v->name : NULL;
		k++;
	}
	for (size_t i = 0; i < job->nprocs; i++) {
		const struct nw_proc *p = job->procs[i];
		for (uint32_t j = 0; j < p->ncomms; j++)
			c[k++] = (struct tcomm){ p->comms[j].comm_id, p->comms[j].nranks,
			                         p->comms[j].name[0] ? p->comms[j].name : NULL, 0 };
	}
	size_t u = unique_comms(c, k);

	/* Ids only ops name: rare, collected apart. */
	uint64_t *extra = NULL;
	size_t nextra = 0, extra_cap = 0;
	for (size_t i = 0; i < job->nprocs; i++) {
		const struct nw_proc *p = job->procs[i];
		for (size_t j = 0; j < p->nops; j++) {
			uint64_t id = p->ops[j].comm_id;
			if (find_comm(c, u, id) || (nextra && extra[nextra - 1] == id))
				continue;
			if (nextra && nextra == extra_cap)
				nextra = unique_u64(extra, nextra);  /* grow only for new ids */
			if (nextra == extra_cap) {
				size_t ncap = extra_cap ? 2 * extra_cap : 16;
				uint64_t *ne = realloc(extra, ncap * sizeof *ne);
				if (!ne) {
					free(extra);
					free(c);
					return NULL;
				}
				extra = ne;
				extra_cap = ncap;
			}
			extra[nextra++] = id;
		}
	}
	if (nextra) {
		nextra = unique_u64(extra, nextra);
		struct tcomm *nc = realloc(c, (u + nextra) * sizeof *nc);
		if (!nc) {
			free(extra);
			free(c);
			return NULL;
		}
		c = nc;
		for (size_t i = 0; i < nextra; i++)
			c[u + i] = (struct tcomm){ extra[i], -1, NULL, 0 };
		u = unique_comms(c, u + nextra);
	}
	free(extra);

	struct tcomm **order = malloc((u ? u : 1) * sizeof *order);
	if (!order) {
		free(c);
		return NULL;
	}
	for (size_t i = 0; i < u; i++)
		order[i] = &c[i];
	qsort(order, u, sizeof *order, cmp_tcomm_display);
	for (size_t i = 0; i < u; i++)
		order[i]->tid = (uint32_t)i + 1;
	free(order);
	*n = u;
	return c;
}

static const struct tcomm *find_comm(const struct tcomm *c, size_t n, uint64_t id)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && c[lo].id == id ? &c[lo] : NULL;
}

static void emit_thread_name(struct writer *w, int64_t pid, const struct tcomm *c, uint32_t lane)
{
	char name[160];
	int len;
	if (!c->id)
		len = snprintf(name, sizeof name, "no communicator (groups)");
	else if (c->nranks > 0)
		len = snprintf(name, sizeof name, "comm %016" PRIx64 " (%" PRId32 " ranks)", c->id, c->nranks);
	else
		len = snprintf(name, sizeof name, "comm %016" PRIx64, c->id);
	if (c->name && len > 0 && (size_t)len < sizeof name)
		len += snprintf(name + len, sizeof name - (size_t)len, " %s", c->name);
	if (lane && len > 0 && (size_t)len < sizeof name)
		snprintf(name + len, sizeof name - (size_t)len, " lane %" PRIu32, lane);
	int64_t tid = (int64_t)lane * LANE_TID_STRIDE + c->tid;
	emit_meta(w, pid, tid, "thread_name", "name", nw_json_str(name));
	emit_meta(w, pid, tid, "thread_sort_index", "sort_index", nw_json_int((int64_t)c->tid * 64 + lane));
}

static int cmp_tev(const void *a, const void *b)
{
	const struct tev *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1;   /* the enclosing one first */
	return x->op < y->op ? -1 : x->op > y->op;
}

static int op_pending(unsigned state)
{
	return state == NW_ST_ENQUEUED || state == NW_ST_STARTED || state == NW_ST_INIT_ENTERED;
}

/* "AllReduce #21", "Send #3 to 2", "Recv #3 from 2", "CommInit",
 * "replay 7 of graph #5 (AllReduce)". */
static void op_title(const struct nw_seg_op *op, char *buf, size_t len)
{
	char kb[NW_NAME_BUF];
	const char *kind = nw_op_kind_name(op->kind, kb);
	if (op->kind == NW_OP_GRAPH_LAUNCH)   /* seq: the replay; root: the graph's first captured op */
		snprintf(buf, len, "replay %" PRIu64 " of graph #%" PRId32 " (%s)", op->seq, op->root,
		         nw_op_kind_name((unsigned)op->redop, kb));
	else if (op->kind == NW_OP_SEND)
		snprintf(buf, len, "%s #%" PRIu64 " to %" PRId32, kind, op->seq, op->root);
	else if (op->kind == NW_OP_RECV)
		snprintf(buf, len, "%s #%" PRIu64 " from %" PRId32, kind, op->seq, op->root);
	else if (op->seq)
		snprintf(buf, len, "%s #%" PRIu64, kind, op->seq);
	else
		snprintf(buf, len, "%s", kind);
}

static const char *op_category(unsigned kind)
{
	if (NW_OP_IS_COLL(kind))
		return "collective";
	if (NW_OP_IS_P2P(kind))
		return "p2p";
	if (kind == NW_OP_GROUP_START || kind == NW_OP_GROUP_END)
		return "group";
	if (kind == NW_OP_GRAPH_LAUNCH)
		return "graph";
	return "comm";
}

static json_t *op_args(const struct nw_proc *p, const struct nw_seg_op *op, int *failed)
{
	char b[NW_NAME_BUF];
	json_t *args = json_object();
	nw_json_set(args, "state", json_string(nw_op_state_name(op->state, b)), failed);
	if (op->comm_id) {
		char hex[17];
		snprintf(hex, sizeof hex, "%016" PRIx64, op->comm_id);
		nw_json_set(args, "comm", json_string(hex), failed);
		nw_json_set(args, "comm_rank", nw_json_int(op->rank), failed);
		nw_json_set(args, "comm_nranks", nw_json_int(op->nranks), failed);
	}
	if (op->kind == NW_OP_GRAPH_LAUNCH) {
		/* 2.2: the graph by its first captured op (the same on every rank) */
		char hex[19];
		nw_json_set(args, "replay", nw_json_int((int64_t)op->seq), failed);
		nw_json_set(args, "graph_first_op", json_string(nw_op_kind_name((unsigned)op->redop, b)), failed);
		nw_json_set(args, "graph_first_seq", nw_json_int(op->root), failed);
		nw_json_set(args, "graph_ops", nw_json_int((int64_t)op->count), failed);
		unsigned at_state = 0;
		uint32_t at = nw_graph_replay_at(op, &at_state);
		if (at) {   /* the op the replay stands in (per-op events) */
			nw_json_set(args, "replay_op", nw_json_int(at), failed);
			nw_json_set(args, "replay_op_state", json_string(nw_op_state_name(at_state, b)), failed);
		}
		snprintf(hex, sizeof hex, "0x%" PRIx64, op->group_id);
		nw_json_set(args, "exec", json_string(hex), failed);
	} else if (op->seq) {
		nw_json_set(args, "seq", nw_json_int((int64_t)op->seq), failed);
	}
	if (NW_OP_IS_COLL(op->kind) || NW_OP_IS_P2P(op->kind)) {
		nw_json_set(args, "count", nw_json_int((int64_t)op->count), failed);
		nw_json_set(args, "datatype", json_string(nw_datatype_name(op->datatype, b)), failed);
	}
	if (NW_OP_IS_COLL(op->kind) && op->redop >= 0)
		nw_json_set(args, "redop", nw_json_str(nw_redop_name(op->redop, b)), failed);
	if (op->root >= 0 && op->kind != NW_OP_GRAPH_LAUNCH)
		nw_json_set(args, NW_OP_IS_P2P(op->kind) ? "peer" : "root", nw_json_int(op->root), failed);
	if (op->result)
		nw_json_set(args, "result", json_string(nw_nccl_result_name(op->result, b)), failed);
	if (op->cuda_error)
		nw_json_set(args, "cuda_error", nw_json_int(op->cuda_error), failed);
	nw_json_set(args, "thread", nw_json_int(op->tid), failed);
	/* 1.4: where Python issued it ("train.py:77 in sync_gradients"). */
	if (p->op_site && op >= p->ops && op < p->ops + p->nops && p->op_site[op - p->ops])
		nw_json_set(args, "python", json_string(p->op_site[op - p->ops]), failed);
	if (op->start_ns && op->start_ns >= op->enqueue_ns)
		nw_json_set(args, "started_after_us", nw_json_int((int64_t)((op->start_ns - op->enqueue_ns) / 1000)),
		            failed);
	if (!op->end_ns && op_pending(op->state))
		nw_json_set(args, "until", json_string("now (not completed)"), failed);
	return args;
}

static void emit_op(struct writer *w, const struct nw_proc *p, int64_t pid, const struct tev *e)
{
	int failed = 0;
	char title[96];
	op_title(e->op, title, sizeof title);
	json_t *ev = json_object();
	nw_json_set(ev, "name", json_string(title), &failed);
	nw_json_set(ev, "cat", json_string(op_category(e->op->kind)), &failed);
	nw_json_set(ev, "ph", json_string("X"), &failed);
	nw_json_set(ev, "pid", nw_json_int(pid), &failed);
	nw_json_set(ev, "tid", nw_json_int((int64_t)e->lane * LANE_TID_STRIDE + e->tid), &failed);
	nw_json_set(ev, "ts", nw_json_int((int64_t)e->ts), &failed);
	nw_json_set(ev, "dur", nw_json_int((int64_t)(e->end - e->ts)), &failed);
	nw_json_set(ev, "args", op_args(p, e->op, &failed), &failed);
	if (failed) {
		json_decref(ev);
		ev = NULL;
	}
	emit(w, ev);
}

static void emit_instant(struct writer *w, int64_t pid, const struct tev *e, const char *name, uint64_t ts,
                         double age_s)
{
	int failed = 0;
	char title[96], b[NW_NAME_BUF];
	op_title(e->op, title, sizeof title);
	json_t *ev = json_object(), *args = json_object();
	nw_json_set(ev, "name", json_string(name), &failed);
	nw_json_set(ev, "cat", json_string("ncclwatch"), &failed);
	nw_json_set(ev, "ph", json_string("i"), &failed);
	nw_json_set(ev, "s", json_string("t"), &failed);
	nw_json_set(ev, "pid", nw_json_int(pid), &failed);
	nw_json_set(ev, "tid", nw_json_int((int64_t)e->lane * LANE_TID_STRIDE + e->tid), &failed);
	nw_json_set(ev, "ts", nw_json_int((int64_t)ts), &failed);
	nw_json_set(args, "op", json_string(title), &failed);
	nw_json_set(args, "state", json_string(nw_op_state_name(e->op->state, b)), &failed);
	if (age_s >= 0)
		nw_json_set(args, "age_s", json_real(age_s), &failed);
	nw_json_set(ev, "args", args, &failed);
	if (failed) {
		json_decref(ev);
		ev = NULL;
	}
	emit(w, ev);
}

/* The earliest time a process recorded (its clock), 0 none. */
static uint64_t proc_first_ns(const struct nw_proc *p)
{
	uint64_t t = p->hdr.start_monotonic_ns;
	for (size_t i = 0; i < p->nops; i++)
		if (p->ops[i].enqueue_ns && (!t || p->ops[i].enqueue_ns < t))
			t = p->ops[i].enqueue_ns;
	return t;
}

struct host_base {
	const char *host;
	size_t proc;
	uint64_t first;
};

static int cmp_host_base(const void *a, const void *b)
{
	const struct host_base *x = a, *y = b;
	int c = strncmp(x->host, y->host, NW_SEG_HOST_LEN);
	if (c)
		return c;
	return x->proc < y->proc ? -1 : x->proc > y->proc;
}

/* base[i]: the time origin of job->procs[i], the earliest time of its host. */
static uint64_t *host_bases(const struct nw_job *job)
{
	size_t n = job->nprocs;
	uint64_t *base = calloc(n ? n : 1, sizeof *base);
	struct host_base *hb = calloc(n ? n : 1, sizeof *hb);
	if (!base || !hb) {
		free(base);
		free(hb);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		hb[i] = (struct host_base){ job->procs[i]->hdr.host, i, proc_first_ns(job->procs[i]) };
	qsort(hb, n, sizeof *hb, cmp_host_base);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		uint64_t min = 0;
		for (; j < n && strncmp(hb[j].host, hb[i].host, NW_SEG_HOST_LEN) == 0; j++)
			if (hb[j].first && (!min || hb[j].first < min))
				min = hb[j].first;
		for (size_t k = i; k < j; k++)
			base[hb[k].proc] = min;
		i = j;
	}
	free(hb);
	return base;
}

static uint64_t us_since(uint64_t ns, uint64_t base)
{
	return ns > base ? (ns - base) / 1000 : 0;
}

/* A process's name and sort index, and its communicators' threads (even
 * those without an op kept). */
static void emit_proc_names(struct writer *w, const struct nw_job *job, const struct nw_proc *p, int64_t pid,
                            const struct tcomm *comms, size_t ncomms, int multi_job)
{
	char name[NW_SEG_HOST_LEN + NW_SEG_JOB_LEN + 96];
	char rank[16] = "?";
	if (p->rank >= 0)
		snprintf(rank, sizeof rank, "%" PRId32, p->rank);
	snprintf(name, sizeof name, "%s%s%srank %s (%.*s:%" PRId64 ")%s", multi_job ? "job " : "",
	         multi_job && job->name ? job->name : "", multi_job ? " " : "", rank, NW_SEG_HOST_LEN,
	         p->hdr.host, p->hdr.pid, p->is_dump ? " dump" : "");
	emit_meta(w, pid, -1, "process_name", "name", nw_json_str(name));
	emit_meta(w, pid, -1, "process_sort_index", "sort_index", nw_json_int(pid));
	for (uint32_t i = 0; i < p->ncomms; i++) {
		const struct tcomm *c = find_comm(comms, ncomms, p->comms[i].comm_id);
		if (c)
			emit_thread_name(w, pid, c, 0);
	}
}

/* p's ops as slices (a pending op ends at the process's now), sorted by
 * thread and start; *n of them. NULL out of memory. */
static struct tev *proc_events(const struct nw_proc *p, uint64_t base, const struct tcomm *comms, size_t ncomms,
                               size_t *n)
{
	struct tev *ev = calloc(p->nops ? p->nops : 1, sizeof *ev);
	*n = 0;
	if (!ev)
		return NULL;
	for (size_t i = 0; i < p->nops; i++) {
		const struct nw_seg_op *op = &p->ops[i];
		const struct tcomm *c = find_comm(comms, ncomms, op->comm_id);
		if (!c || !op->enqueue_ns)
			continue;
		uint64_t end_ns = op->end_ns;
		if (!end_ns && op_pending(op->state))
			end_ns = p->now_ns;
		if (end_ns < op->enqueue_ns)
			end_ns = op->enqueue_ns;
		ev[(*n)++] = (struct tev){ c->tid, 0, us_since(op->enqueue_ns, base), us_since(end_ns, base), op };
	}
	qsort(ev, *n, sizeof *ev, cmp_tev);
	return ev;
}

/* Room for one more slice end in lane ln; 0, -1 out of memory. */
static int lane_grow(struct lane *ln)
{
	if (ln->n < ln->cap)
		return 0;
	size_t cap = ln->cap ? 2 * ln->cap : 16;
	uint64_t *ne = realloc(ln->end, cap * sizeof *ne);
	if (!ne)
		return -1;
	ln->end = ne;
	ln->cap = cap;
	return 0;
}

/* Lanes: slices of one thread form a stack (nested or disjoint). An op
 * goes to the first lane of its communicator where, once the slices that
 * ended by its start are popped, it nests in the top one (or the stack
 * is empty). Ops sorted by start, longest first, keep every lane a
 * valid stack; ops observed complete at the same poll simply nest. A new
 * lane's thread is named (lane 0 too, if the comm table did not). */
static void assign_lanes(struct writer *w, const struct nw_proc *p, int64_t pid, const struct tcomm *comms,
                         size_t ncomms, struct tev *ev, size_t n)
{
	struct lane *lanes = NULL;
	size_t nlanes = 0, lanes_cap = 0;
	for (size_t i = 0; i < n && !w->failed; i++) {
		if (i == 0 || ev[i].tid != ev[i - 1].tid) {
			for (size_t l = 0; l < nlanes; l++)
				lanes[l].n = 0;
			nlanes = 0;
		}
		size_t l = 0;
		for (; l < nlanes; l++) {
			struct lane *ln = &lanes[l];
			while (ln->n && ln->end[ln->n - 1] <= ev[i].ts)
				ln->n--;
			if (!ln->n || ln->end[ln->n - 1] >= ev[i].end)
				break;
		}
		if (l == nlanes && nlanes == MAX_LANES)
			l = MAX_LANES - 1;   /* a pathological pile of crossing ops: keep tids small */
		if (l == nlanes) {
			if (nlanes == lanes_cap) {
				size_t cap = lanes_cap ? 2 * lanes_cap : 4;
				struct lane *nl = realloc(lanes, cap * sizeof *nl);
				if (!nl) {
					w->failed = 1;
					break;
				}
				memset(nl + lanes_cap, 0, (cap - lanes_cap) * sizeof *nl);
				lanes = nl;
				lanes_cap = cap;
			}
			lanes[nlanes++].n = 0;
			const struct tcomm *c = find_comm(comms, ncomms, ev[i].op->comm_id);
			int named = 0;
			for (uint32_t k = 0; l == 0 && k < p->ncomms; k++)
				named |= p->comms[k].comm_id == ev[i].op->comm_id;
			if (!named)
				emit_thread_name(w, pid, c, (uint32_t)l);
		}
		if (lane_grow(&lanes[l])) {
			w->failed = 1;
			break;
		}
		lanes[l].end[lanes[l].n++] = ev[i].end;
		ev[i].lane = (uint32_t)l;
	}
	for (size_t l = 0; l < lanes_cap; l++)
		free(lanes[l].end);
	free(lanes);
}

/* One process: its name, its communicators' threads, its ops (a stall
 * marked where an op passed the timeout, a failure where it failed). */
static void emit_proc(struct writer *w, const struct nw_job *job, const struct nw_proc *p, int64_t pid,
                      uint64_t base, const struct tcomm *comms, size_t ncomms, int multi_job)
{
	emit_proc_names(w, job, p, pid, comms, ncomms, multi_job);
	size_t n;
	struct tev *ev = proc_events(p, base, comms, ncomms, &n);
	if (!ev) {
		w->failed = 1;
		return;
	}
	assign_lanes(w, p, pid, comms, ncomms, ev, n);
	uint64_t timeout_ns = job->timeout_s > 0 ? (uint64_t)(job->timeout_s * 1e9) : 0;
	for (size_t i = 0; i < n && !w->failed; i++) {
		const struct nw_seg_op *op = ev[i].op;
		emit_op(w, p, pid, &ev[i]);
		if (op_pending(op->state) && !op->end_ns && p->now_ns > op->enqueue_ns
		    && p->now_ns - op->enqueue_ns > timeout_ns) {
			uint64_t at = us_since(op->enqueue_ns + timeout_ns, base);
			emit_instant(w, pid, &ev[i], "stall", at < ev[i].end ? at : ev[i].end,
			             (double)(p->now_ns - op->enqueue_ns) / 1e9);
		} else if (op->state == NW_ST_FAILED || op->state == NW_ST_INIT_FAILED) {
			emit_instant(w, pid, &ev[i], "failed", ev[i].end, -1);
		}
	}
	free(ev);
}

static int emit_job(struct writer *w, const struct nw_job *job, int64_t *pid_base, int multi_job)
{
	size_t ncomms = 0;
	struct tcomm *comms = job_comms(job, &ncomms);
	uint64_t *base = host_bases(job);
	if (!comms || !base) {
		free(comms);
		free(base);
		return -1;
	}
	int64_t span = job->world_size > 0 ? job->world_size : 0;
	for (size_t i = 0; i < job->nprocs; i++)
		if (job->procs[i]->rank >= span)
			span = (int64_t)job->procs[i]->rank + 1;
	int64_t unknown = span;
	for (size_t i = 0; i < job->nprocs && !w->failed; i++) {
		const struct nw_proc *p = job->procs[i];
		/* procs[] is sorted by rank: a second process of the same rank (a
		 * restarted worker) gets its own trace process, after the ranks. */
		int dup = i > 0 && p->rank >= 0 && job->procs[i - 1]->rank == p->rank;
		int64_t pid = *pid_base + 1 + (p->rank >= 0 && !dup ? p->rank : unknown++);
		emit_proc(w, job, p, pid, base[i], comms, ncomms, multi_job);
	}
	*pid_base += unknown;
	free(comms);
	free(base);
	return 0;
}

int nw_render_trace(FILE *out, const struct nw_analysis *a)
{
	struct writer w = { out, 1, 0 };
	if (fputs("{\"traceEvents\":[\n", out) == EOF)
		w.failed = 1;
	int64_t pid_base = 0;
	for (size_t j = 0; j < a->njobs && !w.failed; j++)
		if (emit_job(&w, &a->jobs[j], &pid_base, a->njobs > 1) != 0)
			w.failed = 1;

	int failed = 0;
	json_t *other = json_object(), *jobs = json_array();
	nw_json_set(other, "schema", json_string("ncclwatch.trace"), &failed);
	nw_json_set(other, "version", json_integer(1), &failed);
	nw_json_set(other, "clock",
	            json_string("ts/dur: microseconds of CLOCK_MONOTONIC since the earliest time recorded on the "
	                        "same host; different hosts are not comparable"),
	            &failed);
	for (size_t j = 0; j < a->njobs; j++)
		nw_json_push(jobs, nw_json_str(a->jobs[j].name ? a->jobs[j].name : ""), &failed);
	nw_json_set(other, "jobs", jobs, &failed);
	if (failed)
		w.failed = 1;
	if (!w.failed && (fputs("\n],\"displayTimeUnit\":\"ms\",\"otherData\":", out) == EOF
	                  || nw_json_dumpf(other, out, JSON_COMPACT) != 0 || fputs("}\n", out) == EOF))
		w.failed = 1;
	json_decref(other);
	if (w.failed || fflush(out) != 0 || ferror(out)) {
		if (!errno)
			errno = ENOMEM;
		return -1;
	}
	return 0;
}
