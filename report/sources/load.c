/* load: the first half of nw_analyze. Lists the segment files the paths
 * name, reads each through the segment reader (a file that cannot be read
 * is recorded in a->bad and the others go on), keeps a compact summary of
 * each process (struct nw_proc: the header, comm and peer tables, the ops
 * the rules need, the symbolized thread stacks) and frees the snapshot at
 * once, so that memory stays small at 16,384 ranks. Copies of one process
 * (its live file and its dumps) are reduced to the newest.
 *
 * Files are read by up to 4 threads when there are many (the reading and
 * validating is most of the work at scale; options.max_threads limits it);
 * results are taken in list order, so the outcome does not depend on the
 * threads. The helper threads block every signal. */
#include "sources.h"
#include "fr/fr.h"
#include "summary/summary.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LOAD_THREADS_MAX 4
#define LOAD_THREADS_MIN_FILES 64

/* ---- is the process alive ---- */

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	if (clock_gettime(id, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * NW_NS + (uint64_t)ts.tv_nsec;
}

/* 1 alive, 0 dead, -1 unknown (another host): nw_segment_writer_state's
 * rule (a zombie or a reused pid is dead). A pid out of range is dead; a
 * process that exists but cannot be examined further is alive. */
static int proc_alive(const struct nw_seg_header *h, const char *path, const char *myhost)
{
	if (!myhost[0] || strcmp(h->host, myhost) != 0)
		return -1;
	if (h->pid <= 0 || h->pid > INT_MAX)
		return 0;
	return nw_segment_writer_state(h, path) == NW_WRITER_GONE ? 0 : 1;
}

/* ---- one process from one snapshot ---- */

static int cmp_peer(const void *a, const void *b)
{
	const struct nw_seg_peer *x = a, *y = b;
	if (x->comm_slot != y->comm_slot)
		return x->comm_slot < y->comm_slot ? -1 : 1;
	return x->peer < y->peer ? -1 : x->peer > y->peer;
}

static void max_into(uint64_t *m, uint64_t v)
{
	if (v > *m)
		*m = v;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* A Python file of the standard library or an installed package, not the
 * application's own code. */
static int py_library_file(const char *file)
{
	return strstr(file, "/lib/python") || strstr(file, "site-packages/") ||
	       strstr(file, "dist-packages/") || file[0] == '<';
}

/* "function (file.py:line)" of a Python frame, the file's base name. */
static void py_text(const struct nw_segment *seg, const struct nw_seg_pyframe *f, char *text, size_t size)
{
	const char *fn = nw_stack_string(seg, f->function), *file = nw_stack_string(seg, f->file);
	if (f->line > 0)
		snprintf(text, size, "%s (%s:%d)", fn && *fn ? fn : "??", file && *file ? base_name(file) : "??",
		         (int)f->line);
	else
		snprintf(text, size, "%s (%s)", fn && *fn ? fn : "??", file && *file ? base_name(file) : "??");
}

/* A native frame as the engine prints it: its symbol, MODULE+0xOFF, or ??. */
static void frame_text(const struct nw_segment *seg, const struct nw_seg_frame *f, char *text, size_t size)
{
	const char *sym = f->symbol ? nw_stack_string(seg, f->symbol) : NULL;
	const struct nw_seg_module *m = nw_stack_module(seg, f->module);
	if (sym && sym[0])
		snprintf(text, size, "%s", sym);
	else if (m)
		snprintf(text, size, "%s+0x%" PRIx64, m->path[0] ? base_name(m->path) : "<main>", f->module_offset);
	else
		snprintf(text, size, "??");
}

/* The libraries a host function's thread runs through that are not the
 * application: the C library and loader, the CUDA driver and runtime,
 * NCCL, the compiler's runtime, ours. */
static int system_module(const char *path)
{
	static const char *const sys[] = { "libc.so", "libc-", "libpthread", "ld-linux", "ld-", "libdl", "librt",
		                           "libm.so", "libgcc_s", "libstdc++", "libcuda.so", "libcudart",
		                           "libnccl", "libncclwatch", "[vdso]", "linux-vdso", NULL };
	const char *b = base_name(path);
	for (int i = 0; sys[i]; i++)
		if (!strncmp(b, sys[i], strlen(sys[i])))
			return 1;
	return 0;
}

/* Native frame index (innermost 0) of the application code a CUDA driver
 * frame further out called, i.e. a host function the driver runs on this
 * thread (on a real driver, its own worker thread: start_thread < libcuda
 * < the function); -1 none. The driver's frames must be outside (older
 * than) the application's: a main thread that waits in
 * cuStreamSynchronize has the application outside the driver. */
static int host_fn_frame(const struct nw_segment *seg, const struct nw_seg_frame *fr, uint32_t nf)
{
	int driver = -1;
	for (uint32_t k = nf; k-- > 0;) {
		const struct nw_seg_module *m = nw_stack_module(seg, fr[k].module);
		if (m && m->path[0] && !strncmp(base_name(m->path), "libcuda.so", 10)) {
			driver = (int)k;
			break;
		}
	}
	for (int k = 0; k < driver; k++) {
		const struct nw_seg_module *m = nw_stack_module(seg, fr[k].module);
		if (m && !system_module(m->path[0] ? m->path : "<main>"))
			return k;
	}
	return -1;
}

/* Thread stacks of a consistent capture, frames interned. */
/* Thread i's stack interned into ts: its Python frames, or (native) its
 * mixed stack, and the host function it runs (tmp, *tmpcap: scratch).
 * -1 out of memory. */
static int keep_frames(const struct nw_segment *seg, uint32_t i, const struct nw_seg_thread *t,
                       struct nw_thread_stack *ts, struct nw_intern *in, int native, char ***tmp, uint32_t *tmpcap)
{
	uint32_t nf = 0, npy = 0;
	const struct nw_seg_frame *fr = nw_stack_frames(seg, i, &nf);
	const struct nw_seg_pyframe *py = nw_stack_pyframes(seg, i, &npy);
	if (!(t->py_flags & NW_PYT_PYTHON))
		npy = 0;
	if ((!fr || !nf) && !npy)
		return 0;
	uint32_t above = npy && native ? t->py_native : 0, below = npy && !native ? 0 : nf - above;
	uint32_t total = above + npy + below;
	if (total > *tmpcap) {
		char **t2 = realloc(*tmp, total * sizeof **tmp);
		if (!t2)
			return -1;
		*tmp = t2;
		*tmpcap = total;
	}
	char **f = *tmp;
	ts->npy = npy;
	ts->py_at = ts->py_app = above;
	for (uint32_t k = 0; k < npy; k++) {
		char text[600];
		py_text(seg, &py[k], text, sizeof text);
		const char *file = nw_stack_string(seg, py[k].file);
		/* Library frames (threading.py's wait) above the application's are skipped. */
		if (ts->py_app == above + k && file && py_library_file(file) && k + 1 < npy)
			ts->py_app = above + k + 1;
		if (!(f[above + k] = nw_intern_str(in, text, strlen(text))))
			return -1;
	}
	for (uint32_t j = 0; j < above + below; j++) {
		uint32_t k = j, at = j < above ? j : j + npy; /* native frame k, its place */
		char text[NW_STACK_MODULE_PATH_LEN + 64];
		frame_text(seg, &fr[k], text, sizeof text);
		if (!(f[at] = nw_intern_str(in, text, strlen(text))))
			return -1;
	}
	int oom = 0;
	ts->frames = nw_intern_list(in, f, total, &oom);
	ts->nframes = oom ? 0 : total;
	int hf = fr && nf ? host_fn_frame(seg, fr, nf) : -1;
	if (hf >= 0 && !oom) {
		char text[NW_STACK_MODULE_PATH_LEN + 64];
		frame_text(seg, &fr[hf], text, sizeof text);
		if (!(ts->host_fn = nw_intern_str(in, text, strlen(text))))
			oom = 1;
	}
	return oom ? -1 : 0;
}

static int keep_threads(struct nw_proc *p, const struct nw_segment *seg, struct nw_intern *in, int native)
{
	if (seg->stack_state != NW_STACKS_CAPTURED || !seg->stack)
		return 0;
	uint32_t n = seg->stack->thread_count;
	if (!n)
		return 0;
	p->threads = calloc(n, sizeof *p->threads);
	if (!p->threads)
		return -1;
	p->stacks_ns = seg->stack->capture_ns;
	char **tmp = NULL;
	uint32_t tmpcap = 0;
	int oom = 0;
	for (uint32_t i = 0; i < n && !oom; i++) {
		const struct nw_seg_thread *t = nw_stack_thread(seg, i);
		if (!t)
			continue;
		struct nw_thread_stack *ts = &p->threads[p->nthreads++];
		ts->tid = t->tid;
		ts->flags = t->flags;
		memcpy(ts->name, t->name, sizeof ts->name);
		ts->name[sizeof ts->name - 1] = '\0';
		ts->py_flags = t->py_flags;
		const char *pyname = (t->py_flags & NW_PYT_PYTHON) && t->py_name ? nw_stack_string(seg, t->py_name) : NULL;
		if (pyname && pyname[0] && !(ts->py_name = nw_intern_str(in, pyname, strlen(pyname))))
			oom = 1;
		else if (keep_frames(seg, i, t, ts, in, native, &tmp, &tmpcap))
			oom = 1;
	}
	free(tmp);
	return oom ? -1 : 0;
}

static int cmp_u64p(const void *a, const void *b)
{
	return nw_cmp_u64(*(const uint64_t *)a, *(const uint64_t *)b);
}

static void lower_to(uint64_t *pos, uint64_t before)
{
	if (*pos >= before)
		*pos = before - 1;
}

/* The positions the comm and peer tables give count `op` as issued
 * (the preload counts at the call): an op held in an open group was not,
 * so they end before it, as the ops do. */
static void unissue(struct nw_proc *p, const struct nw_seg_op *op)
{
	if (op->comm_slot >= p->ncomms || !op->seq)
		return;
	struct nw_seg_comm *c = &p->comms[op->comm_slot];
	if (NW_OP_IS_COLL(op->kind)) {
		lower_to((uint64_t *)&c->coll_enqueued, op->seq);
		return;
	}
	if (!NW_OP_IS_P2P(op->kind))
		return;
	if (c->p2p_enqueued)
		c->p2p_enqueued--;
	for (uint32_t i = 0; i < p->npeers; i++) {
		struct nw_seg_peer *q = &p->peers[i];
		if (q->comm_slot == op->comm_slot && q->peer == op->root)
			lower_to((uint64_t *)(op->kind == NW_OP_SEND ? &q->send_enqueued : &q->recv_enqueued), op->seq);
	}
}

/* Ops of a group whose outermost end was never recorded become
 * NW_ST_IN_OPEN_GROUP. Group ids are process-wide and GROUP_END is
 * written when ncclGroupEnd is entered, after the group's ops: while an op
 * of the group is in the ring, so is its end, if there was one. Only an op
 * still ENQUEUED can be one (a launched op may have started). */
static int mark_open_groups(struct nw_proc *p, const struct nw_segment *seg)
{
	size_t nends = 0, nin = 0;
	for (size_t i = 0; i < p->nops; i++)
		nin += (p->ops[i].flags & NW_OPF_IN_GROUP) && p->ops[i].group_id && p->ops[i].state == NW_ST_ENQUEUED;
	if (!nin)
		return 0;
	uint64_t *ends = nw_group_ends(seg->ops, seg->op_count, &nends);
	if (!ends)
		return -1;
	for (size_t i = 0; i < p->nops; i++) {
		struct nw_seg_op *op = &p->ops[i];
		if ((op->flags & NW_OPF_IN_GROUP) && op->group_id && op->state == NW_ST_ENQUEUED &&
		    !bsearch(&op->group_id, ends, nends, sizeof *ends, cmp_u64p)) {
			op->state = NW_ST_IN_OPEN_GROUP;
			unissue(p, op);
		}
	}
	free(ends);
	return 0;
}

/* The ops the rules need, oldest first: every op not final, and the last
 * NW_ANALYSIS_RECENT of each comm (plus those of no comm); each op's
 * comm_slot is its comm's index in p->comms (ci). */
static int keep_ops(struct nw_proc *p, const struct nw_segment *seg, const struct nw_comm_instances *ci)
{
	size_t n = seg->op_count;
	if (!n)
		return 0;
	uint32_t buckets = ci->ncomms + 1;
	uint32_t *count = calloc(buckets, sizeof *count);
	uint8_t *keep = calloc(n, 1);
	if (!count || !keep) {
		free(count);
		free(keep);
		return -1;
	}
	size_t kept = 0;
	for (size_t i = n; i-- > 0;) {
		const struct nw_seg_op *op = &seg->ops[i];
		uint32_t b = ci->op_comm[i] < ci->ncomms ? ci->op_comm[i] : ci->ncomms;
		uint32_t st = op->state;
		int open = st == NW_ST_ENQUEUED || st == NW_ST_STARTED || st == NW_ST_FAILED ||
		           st == NW_ST_INIT_ENTERED;
		if (open || count[b] < NW_ANALYSIS_RECENT) {
			keep[i] = 1;
			count[b]++;
			kept++;
		}
	}
	p->ops = malloc(kept * sizeof *p->ops);
	if (p->ops) {
		for (size_t i = 0; i < n; i++)
			if (keep[i]) {
				p->ops[p->nops] = seg->ops[i];
				p->ops[p->nops++].comm_slot = ci->op_comm[i];
			}
	}
	free(count);
	free(keep);
	return p->ops ? 0 : -1;
}

/* 1.4: each kept op's Python call site, "file.py:line in function" (its
 * innermost frame), interned; none when no op has one. */
static int keep_sites(struct nw_proc *p, const struct nw_segment *seg, struct nw_intern *in)
{
	for (size_t i = 0; i < p->nops; i++) {
		uint32_t depth;
		const struct nw_seg_pycall *c = nw_pycall(seg, nw_op_ticket(&p->ops[i]), &depth);
		const struct nw_seg_pyframe *f = c ? nw_pysite_lookup(seg, c[0].code, c[0].instr) : NULL;
		const char *fn = f ? nw_stack_string(seg, f->function) : NULL;
		const char *file = f ? nw_stack_string(seg, f->file) : NULL;
		if (!fn || !*fn || !file || !*file)
			continue;
		if (!p->op_site && !(p->op_site = calloc(p->nops, sizeof *p->op_site)))
			return -1;
		char text[600];
		snprintf(text, sizeof text, "%s:%d in %s", base_name(file), (int)f->line, fn);
		if (!(p->op_site[i] = nw_intern_str(in, text, strlen(text))))
			return -1;
	}
	return 0;
}

/* What the model keeps of a segment's header (analysis.h); -1 out of memory. */
static int keep_header(struct nw_proc_header *h, const struct nw_seg_header *s, uint64_t ring_head,
                       struct nw_intern *in)
{
	h->version_major = s->version_major;
	h->version_minor = s->version_minor;
	h->flags = s->flags;
	h->pid = s->pid;
	h->ppid = s->ppid;
	h->start_realtime_ns = s->start_realtime_ns;
	h->start_monotonic_ns = s->start_monotonic_ns;
	h->global_rank = s->global_rank;
	h->local_rank = s->local_rank;
	h->world_size = s->world_size;
	h->uid = s->uid;
	memcpy(h->host, s->host, sizeof h->host);
	memcpy(h->job, s->job, sizeof h->job);
	h->ring_head = ring_head;
	h->comm_count = s->comm_count;
	h->peer_count = s->peer_count;
	h->comm_capacity = s->comm_capacity;
	h->heartbeat_ns = s->heartbeat_ns;
	h->ops_dropped = s->ops_dropped;
	h->nccl_version = s->nccl_version;
	h->cuda_driver_version = s->cuda_driver_version;
	memcpy(h->gpu_name, s->gpu_name, sizeof h->gpu_name);
	memcpy(h->error, s->error, sizeof h->error);
	h->tracking = s->tracking;
	h->watchdog_tid = s->watchdog_tid;
	h->poll_ms = s->poll_ms;
	h->timeout_ms = s->timeout_ms;
	h->events_created = s->events_created;
	h->event_records = s->event_records;
	h->ops_tracked = s->ops_tracked;
	h->findings = s->findings;
	h->dumps = s->dumps;
	h->request_served = s->request_served;
	h->last_finding_ns = s->last_finding_ns;
	h->proc_start_ticks = s->proc_start_ticks;
	h->exit_status = s->exit_status;
	h->threads_dropped = s->threads_dropped;
	h->comms_dropped = s->comms_dropped;
	h->comm_reuses = s->comm_reuses;
	h->graph_launches = s->graph_launches;
	h->graphs_untracked = s->graphs_untracked;
	/* The reader checked that both end within their fields. */
	size_t lib = strnlen(s->nccl_lib, sizeof s->nccl_lib), env = 0;
	while (env + 1 < sizeof s->env && s->env[env])
		env += strnlen(s->env + env, sizeof s->env - env) + 1;
	if (env > sizeof s->env)
		env = sizeof s->env;
	if (lib && !(h->nccl_lib = nw_intern_str(in, s->nccl_lib, lib)))
		return -1;
	/* with the last variable's NUL: the copy ends in two */
	if (env && !(h->env = nw_intern_str(in, s->env, env)))
		return -1;
	return 0;
}

static struct nw_proc *make_proc(const struct nw_segment *seg, struct nw_intern *in, const char *myhost,
                                 int native)
{
	struct nw_proc *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->path = strdup(seg->path);
	if (keep_header(&p->hdr, &seg->header, seg->ring.head, in)) {
		nw_proc_free(p);
		return NULL;
	}
	p->is_dump = (seg->header.flags & NW_SEG_F_DUMP) != 0;
	p->snapshot = (seg->header.flags & NW_SEG_F_SNAPSHOT) != 0;
	if (p->snapshot)
		p->is_dump = 1;                 /* nothing writes it after attach */
	p->caps = p->snapshot ? NW_CAPS_SNAPSHOT : NW_CAPS_SEGMENT;
	p->rank = seg->header.global_rank >= 0 ? seg->header.global_rank : -1;
	struct nw_comm_instances ci;
	if (nw_comm_instances(seg, &ci)) {
		nw_proc_free(p);
		return NULL;
	}
	p->ncomms = ci.ncomms;
	p->comms = ci.comms;
	p->npeers = ci.npeers;
	p->peers = ci.peers;
	ci.comms = NULL;
	ci.peers = NULL;
	int failed = !p->path || keep_ops(p, seg, &ci) || mark_open_groups(p, seg) ||
	             nw_unlaunched_graphs(p, seg, &ci) || nw_note_open_groups(p, seg->ops, seg->op_count);
	nw_comm_instances_free(&ci);
	if (failed || keep_threads(p, seg, in, native) || keep_sites(p, seg, in)) {
		nw_proc_free(p);
		return NULL;
	}
#ifdef NW_PYT_PYTHON
	/* What the verdict from stacks judges of a Python thread (waitframes.c). */
	if (nw_keep_wait_frames(p, seg, in)) {
		nw_proc_free(p);
		return NULL;
	}
#endif
	qsort(p->peers, p->npeers, sizeof *p->peers, cmp_peer);

	/* The last NCCL call: the newest record, or the comm table's times. */
	uint64_t last = seg->op_count ? seg->ops[seg->op_count - 1].enqueue_ns : 0;
	for (uint32_t i = 0; i < p->ncomms; i++) {
		const struct nw_seg_comm *c = &p->comms[i];
		max_into(&last, c->coll_enqueued_ns);
		max_into(&last, c->p2p_enqueued_ns);
		max_into(&last, c->init_enter_ns);
		max_into(&last, c->init_done_ns);
		max_into(&last, c->end_ns);
	}
	p->last_activity_ns = last;

	p->alive = proc_alive(&seg->header, p->path, myhost);
	if (p->alive == 1 && !p->is_dump) {
		p->now_ns = clock_ns(CLOCK_MONOTONIC);
	} else {
		/* The newest time the process wrote: its clock's "now" as far as we know. */
		uint64_t now = p->hdr.heartbeat_ns;
		max_into(&now, last);
		max_into(&now, p->hdr.last_finding_ns);
		max_into(&now, p->stacks_ns);
		for (size_t i = 0; i < p->nops; i++) {
			max_into(&now, p->ops[i].start_ns);
			max_into(&now, p->ops[i].end_ns);
		}
		for (uint32_t i = 0; i < p->ncomms; i++) {
			max_into(&now, p->comms[i].coll_started_ns);
			max_into(&now, p->comms[i].coll_completed_ns);
			max_into(&now, p->comms[i].p2p_completed_ns);
		}
		p->now_ns = now;
	}
	return p;
}

/* ---- reading many files ---- */

struct slot {                       /* one listed file */
	struct nw_proc *proc;           /* NULL: see err */
	struct nw_proc **more;          /* a summary's processes (report/sources/summary/), proc NULL */
	size_t nmore;
	struct nw_read_error err;
	int nomem;                      /* out of memory building the summary */
};

struct reader {
	char **paths;
	struct slot *slots;
	size_t n;
	size_t next;                    /* next file to take */
	pthread_mutex_t lock;           /* next, and the intern table */
	struct nw_intern *in;
	const char *myhost;
	struct nw_fr_cache *fr;         /* what Flight Recorder dumps share (report/sources/fr/) */
	int native;
};

/* Reading and validating (most of the work) run in parallel; the summary
 * is built under the lock because it interns into the shared table. */
static int seg_suffix(const char *p)
{
	size_t n = strlen(p);
	return n > 4 && !strcmp(p + n - 4, ".seg");
}

static void read_one(struct reader *r, size_t i)
{
	struct slot *s = &r->slots[i];
	struct nw_segment seg;
	/* Per-host summaries (report/sources/summary/) and Flight Recorder dumps
	 * (report/sources/fr/): any file not named *.seg whose first bytes say so;
	 * their loaders intern under the lock themselves. */
	if (!seg_suffix(r->paths[i])) {
		int rc = nw_summary_read(r->paths[i], r->in, &r->lock, &s->more, &s->nmore, &s->err);
		if (rc != NW_SUM_NOT_A_SUMMARY) {
			if (rc == NW_READ_ERR_NOMEM)
				s->nomem = 1;
			return;
		}
	}
	if (!seg_suffix(r->paths[i])) {
		int rc = nw_fr_read_if_dump(r->paths[i], r->in, &r->lock, r->fr, &s->proc, &s->err);
		if (rc != NW_FR_NOT_A_DUMP) {
			if (rc == NW_READ_ERR_NOMEM)
				s->nomem = 1;
			return;
		}
	}
	if (nw_segment_read(r->paths[i], 0, &seg, &s->err) != NW_READ_OK)
		return;
	pthread_mutex_lock(&r->lock);
	s->proc = make_proc(&seg, r->in, r->myhost, r->native);
	pthread_mutex_unlock(&r->lock);
	if (!s->proc)
		s->nomem = 1;
	nw_segment_free(&seg);
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	for (;;) {
		pthread_mutex_lock(&r->lock);
		size_t i = r->next;
		/* Batches of 16 keep the lock cold. */
		r->next = i + 16 < r->n ? i + 16 : r->n;
		pthread_mutex_unlock(&r->lock);
		if (i >= r->n)
			return NULL;
		size_t end = i + 16 < r->n ? i + 16 : r->n;
		for (; i < end; i++)
			read_one(r, i);
	}
}

static void read_all(struct reader *r, int max_threads)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int nthreads = r->n >= LOAD_THREADS_MIN_FILES && cpus > 1 ? (int)(cpus < LOAD_THREADS_MAX ? cpus
	                                                                          : LOAD_THREADS_MAX) : 1;
	if (max_threads > 0 && nthreads > max_threads)
		nthreads = max_threads;
	pthread_t tids[LOAD_THREADS_MAX];
	int started = 0;
	if (nthreads > 1) {
		/* Helper threads must not take the host process's signals (the
		 * engine also runs inside libncclwatch.so's watchdog). */
		sigset_t all, old;
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		for (int t = 1; t < nthreads; t++)
			if (pthread_create(&tids[started], NULL, reader_main, r) == 0)
				started++;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	reader_main(r);
	for (int t = 0; t < started; t++)
		pthread_join(tids[t], NULL);
}

/* ---- dedupe ---- */

struct dkey {
	char host[NW_SEG_HOST_LEN];
	int64_t pid;
	uint64_t start_realtime_ns;
	uint64_t snapshot;              /* a snapshot is paired with its segment later (snapshots.c) */
};

struct dent {
	struct dkey k;
	size_t at;                      /* index into the output */
	UT_hash_handle hh;
};

/* a is a better copy than b: more records, then a newer heartbeat, then the live file
 * (two snapshots of a process: the newer capture). */
static int better(const struct nw_proc *a, const struct nw_proc *b)
{
	if (a->snapshot && b->snapshot && a->stacks_ns != b->stacks_ns)
		return a->stacks_ns > b->stacks_ns;
	if (a->hdr.ring_head != b->hdr.ring_head)
		return a->hdr.ring_head > b->hdr.ring_head;
	if (a->hdr.heartbeat_ns != b->hdr.heartbeat_ns)
		return a->hdr.heartbeat_ns > b->hdr.heartbeat_ns;
	return !a->is_dump && b->is_dump;
}

struct dedupe {
	struct nw_load *out;
	struct dent *seen, *ents;
	size_t nents;
};

/* Keep p as the first copy of its process, or as the better one; the
 * other is freed. 0, or -1 out of memory (p is freed then too). */
static int keep_best(struct dedupe *dd, struct nw_proc *p)
{
	struct dent *d = &dd->ents[dd->nents++], *found;
	memset(&d->k, 0, sizeof d->k);
	memcpy(d->k.host, p->hdr.host, sizeof d->k.host);
	d->k.pid = p->hdr.pid;
	d->k.start_realtime_ns = p->hdr.start_realtime_ns;
	d->k.snapshot = (uint64_t)p->snapshot;
	/* attach writes when it took the snapshot there: two snapshots of
	 * one process share its start ticks instead. */
	if (p->snapshot && p->hdr.proc_start_ticks)
		d->k.start_realtime_ns = p->hdr.proc_start_ticks;
	HASH_FIND(hh, dd->seen, &d->k, sizeof d->k, found);
	if (found) {
		struct nw_proc **have = &dd->out->procs[found->at];
		if (better(p, *have)) {
			nw_proc_free(*have);
			*have = p;
		} else {
			nw_proc_free(p);
		}
		return 0;
	}
	d->at = dd->out->nprocs;
	HASH_ADD(hh, dd->seen, k, sizeof d->k, d);
	if (nw_hash_oom_taken()) {
		nw_proc_free(p);
		return -1;
	}
	dd->out->procs[dd->out->nprocs++] = p;
	return 0;
}

static int add_bad(struct nw_analysis *a, const char *path, const struct nw_read_error *e)
{
	struct nw_bad_file *b = realloc(a->bad, (a->nbad + 1) * sizeof *b);
	if (!b)
		return -1;
	a->bad = b;
	b[a->nbad].err = *e;
	if (!(b[a->nbad].path = strdup(path)))
		return -1;
	a->nbad++;
	return 0;
}

static int nomem(struct nw_read_error *err, const char *what)
{
	if (err) {
		memset(err, 0, sizeof *err);
		err->code = NW_READ_ERR_NOMEM;
		err->sys_errno = ENOMEM;
		snprintf(err->message, sizeof err->message, "%s: out of memory", what);
	}
	return -1;
}

/* The input paths expanded into the files to read (list); a path that
 * cannot be listed is a bad file. -1 (with *err) when nothing is left to
 * read or out of memory. */
static int list_inputs(const char *const *paths, size_t npaths, struct nw_analysis *a, struct nw_path_list *list,
                       struct nw_read_error *err)
{
	struct nw_read_error first = { 0 }, e;
	int have_first = 0;
	for (size_t i = 0; i < npaths; i++) {
		if (nw_input_list(paths[i], list, &e) == NW_READ_OK)
			continue;
		if (e.code == NW_READ_ERR_NOMEM) {
			nw_path_list_free(list);
			return nomem(err, paths[i]);
		}
		if (!have_first) {
			first = e;
			have_first = 1;
		}
		if (add_bad(a, paths[i], &e)) {
			nw_path_list_free(list);
			return nomem(err, paths[i]);
		}
	}
	if (list->count)
		return 0;
	nw_path_list_free(list);
	if (err) {
		if (have_first)
			*err = first;
		else {
			memset(err, 0, sizeof *err);
			err->code = NW_READ_ERR_EMPTY;
			snprintf(err->message, sizeof err->message, "no segment files given");
		}
	}
	return -1;
}

/* In list order: bad files, and the best copy of each process (into
 * out). Returns 1 on failure (out of memory). */
static int keep_processes(struct nw_analysis *a, struct reader *r, const struct nw_path_list *list,
                          struct nw_load *out)
{
	size_t nents = 0;
	for (size_t i = 0; i < list->count; i++)
		nents += r->slots[i].proc ? 1 : r->slots[i].nmore;
	struct dedupe dd = { .out = out, .ents = calloc(nents ? nents : 1, sizeof *dd.ents) };
	int failed = !dd.ents;
	if (!failed && nents > list->count) {
		struct nw_proc **more = realloc(out->procs, nents * sizeof *more);
		if (more)
			out->procs = more;
		else
			failed = 1;
	}
	for (size_t i = 0; i < list->count && !failed; i++) {
		struct slot *s = &r->slots[i];
		if (s->nomem) {
			failed = 1;
			break;
		}
		if (s->proc) {
			failed = keep_best(&dd, s->proc);
			s->proc = NULL;
			continue;
		}
		if (s->more) {
			for (size_t k = 0; k < s->nmore; k++) {
				if (!failed)
					failed = keep_best(&dd, s->more[k]);
				else
					nw_proc_free(s->more[k]);
			}
			free(s->more);
			s->more = NULL;
			continue;
		}
		if (s->err.code == NW_READ_ERR_NOMEM || add_bad(a, list->paths[i], &s->err))
			failed = 1;
	}
	struct dent *seen = dd.seen;
	HASH_CLEAR(hh, seen);
	free(dd.ents);
	return failed;
}

/* Flight Recorder dumps: one clock per job; those of a job that also left
 * segments give way to the segments (said in a->notes). Returns 1 on
 * failure. */
static int settle_fr(struct nw_analysis *a, struct nw_load *out)
{
	char **pref = NULL;
	size_t npref = 0;
	int failed = nw_fr_settle(out->procs, &out->nprocs, &pref, &npref) != 0;
	for (size_t i = 0; i < npref; i++) {
		if (!failed && nw_analysis_note(a, "%s: a Flight Recorder dump of a process whose segment "
		                                "was read too: the segment is used", pref[i]))
			failed = 1;
		free(pref[i]);
	}
	free(pref);
	return failed;
}

/* What the slots still hold (only after a failure), and the slots. */
static void free_slots(struct slot *slots, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		nw_proc_free(slots[i].proc);
		for (size_t k = 0; slots[i].more && k < slots[i].nmore; k++)
			nw_proc_free(slots[i].more[k]);
		free(slots[i].more);
	}
	free(slots);
}

int nw_load(const char *const *paths, size_t npaths, int max_threads, int split, struct nw_analysis *a,
            struct nw_load *out, struct nw_read_error *err)
{
	struct nw_path_list list = { 0 };
	memset(out, 0, sizeof *out);
	if (list_inputs(paths, npaths, a, &list, err))
		return -1;

	char host[NW_SEG_HOST_LEN + 1] = "";
	if (gethostname(host, sizeof host - 1) != 0)
		host[0] = '\0';
	host[sizeof host - 1] = '\0';

	struct reader r = {
		.paths = list.paths, .n = list.count, .in = a->intern, .myhost = host, .native = a->native,
	};
	r.slots = calloc(list.count, sizeof *r.slots);
	out->procs = calloc(list.count, sizeof *out->procs);
	if (!r.slots || !out->procs || pthread_mutex_init(&r.lock, NULL) != 0) {
		free(r.slots);
		free(out->procs);
		out->procs = NULL;
		nw_path_list_free(&list);
		return nomem(err, "reading segments");
	}
	r.fr = nw_fr_cache_new();        /* NULL: every dump parses its own rank lists */
	read_all(&r, max_threads);
	nw_fr_cache_free(r.fr);
	pthread_mutex_destroy(&r.lock);
	a->nread += list.count;

	int failed = keep_processes(a, &r, &list, out);
	if (!failed)
		failed = settle_fr(a, out);
	if (!failed && split && nw_split_ranks(&out->procs, &out->nprocs))
		failed = 1;
	free_slots(r.slots, list.count);
	nw_path_list_free(&list);
	if (failed) {
		for (size_t i = 0; i < out->nprocs; i++)
			nw_proc_free(out->procs[i]);
		free(out->procs);
		memset(out, 0, sizeof *out);
		return nomem(err, "reading segments");
	}
	return 0;
}
