/* snapshot: see snapshot.h. The capture is the core's (capture/): threads
 * blocked in a call are read from /proc without being stopped; running
 * ones are watched, read once they block, stopped for the copy of their
 * stack once they are seen running user code alone, else left running
 * without a stack. Names come from the ELF symbol tables of the files the
 * process has mapped. */
#include "snapshot.h"

#include "pyspy.h"
#include "../capture/capture.h"
#include "../watchdog/stacks.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define HASH_NONFATAL_OOM 1
#include <uthash.h>

#define MAX_THREADS 4096

struct sym {
	UT_hash_handle hh;
	uint64_t addr;
	uint64_t start;
	uint32_t name;             /* string table offset, 0 none */
};

struct str {
	UT_hash_handle hh;
	uint32_t off;
	char s[];
};

struct builder {
	struct nw_cap_target *t;
	char *strtab;
	uint32_t strtab_size, strtab_used;
	struct str *strs;
	struct sym *syms;
	const struct nw_seg_module *mods;
	uint32_t nmods;
};

static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint32_t str_add(struct builder *b, const char *s)
{
	struct str *e;
	size_t len = strlen(s);
	HASH_FIND(hh, b->strs, s, len, e);
	if (e)
		return e->off;
	if (len + 1 > b->strtab_size - b->strtab_used)
		return 0;
	e = malloc(sizeof(*e) + len + 1);
	if (!e)
		return 0;
	memcpy(e->s, s, len + 1);
	e->off = b->strtab_used;
	memcpy(b->strtab + b->strtab_used, s, len + 1);
	b->strtab_used += (uint32_t)len + 1;
	HASH_ADD_KEYPTR(hh, b->strs, e->s, len, e);
	return e->off;
}

static uint32_t module_of(const struct builder *b, uint64_t ip)
{
	for (uint32_t i = 0; i < b->nmods; i++)
		if (ip >= b->mods[i].base && ip - b->mods[i].base < b->mods[i].size)
			return i + 1;
	return 0;
}

static void describe(struct builder *b, struct nw_seg_frame *f, uint64_t ip, uint64_t addr)
{
	memset(f, 0, sizeof(*f));
	f->ip = ip;
	f->module = module_of(b, addr);
	if (f->module)
		f->module_offset = ip - b->mods[f->module - 1].base;
	struct sym *s;
	HASH_FIND(hh, b->syms, &addr, sizeof(addr), s);
	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return;
		s->addr = addr;
		char name[512];
		uint64_t off;
		if (f->module && nw_cap_symbol(b->t, addr, name, sizeof(name), &off)) {
			s->start = addr - off;
			s->name = str_add(b, name);
		}
		HASH_ADD(hh, b->syms, addr, sizeof(s->addr), s);
	}
	if (s->name && s->start <= ip) {
		f->symbol = s->name;
		f->symbol_offset = ip - s->start;
	}
}

/* The frames of the interpreter (and what runs it) start at the first
 * native frame in the python executable or libpython: those below are C
 * functions Python called (time.sleep's clock_nanosleep, a ctypes call). */
static uint32_t native_under_python(const struct builder *b, const struct nw_seg_frame *f, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++) {
		if (!f[k].module)
			continue;
		const char *path = b->mods[f[k].module - 1].path, *base = strrchr(path, '/');
		base = base ? base + 1 : path;
		if (!strncmp(base, "python", 6) || !strncmp(base, "libpython", 9))
			return k;
	}
	return 0;
}

/* py-spy's threads into the Python frame table, tied to our thread slots
 * by tid (a slot of its own for one we did not list). Returns the slots
 * in use. */
static uint32_t add_python(struct builder *b, struct nw_seg_stack_header *area, struct nw_seg_stack_ext *ext,
                           uint64_t table, const struct nw_py_process *py, pid_t pid, uint32_t kept)
{
	struct nw_seg_thread *thr = (struct nw_seg_thread *)((char *)area + area->thread_offset);
	struct nw_seg_frame *frames = (struct nw_seg_frame *)((char *)area + area->frame_offset);
	struct nw_seg_pyframe *pf = (struct nw_seg_pyframe *)((char *)area + table);
	uint32_t used = 0, total = 0;
	for (uint32_t i = 0; i < py->nthreads; i++)
		total += py->threads[i].nframes;
	ext->pyframe_offset = table;
	ext->pyframe_capacity = total;
	ext->python_method = NW_PY_PY_SPY;
	for (uint32_t i = 0; i < py->nthreads; i++) {
		const struct nw_py_thread *pt = &py->threads[i];
		uint32_t k = 0;
		while (k < kept && thr[k].tid != pt->tid)
			k++;
		if (k == kept) {
			if (kept >= area->thread_capacity)
				continue;
			memset(&thr[kept], 0, sizeof(thr[kept]));
			thr[kept].tid = pt->tid;
			snprintf(thr[kept].name, sizeof(thr[kept].name), "%.15s", pt->name);
			kept++;
		}
		struct nw_seg_thread *th = &thr[k];
		th->py_first = used;
		th->py_count = pt->nframes;
		th->py_name = pt->name[0] ? str_add(b, pt->name) : 0;
		th->py_flags = NW_PYT_PYTHON | (pt->owns_gil ? NW_PYT_GIL : 0) |
		               (pt->tid == (uint32_t)pid ? NW_PYT_MAIN : 0);
		th->py_native = native_under_python(b, &frames[(size_t)k * area->frame_capacity], th->nframes);
		for (uint32_t f = 0; f < pt->nframes; f++) {
			struct nw_seg_pyframe *o = &pf[used++];
			memset(o, 0, sizeof(*o));
			o->file = str_add(b, pt->frames[f].file);
			o->function = str_add(b, pt->frames[f].name);
			o->line = (int32_t)pt->frames[f].line;
		}
	}
	ext->pyframe_count = used;
	return kept;
}

static void builder_free(struct builder *b)
{
	struct str *e, *et;
	HASH_ITER(hh, b->strs, e, et) {
		HASH_DEL(b->strs, e);
		free(e);
	}
	struct sym *s, *st;
	HASH_ITER(hh, b->syms, s, st) {
		HASH_DEL(b->syms, s);
		free(s);
	}
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static void fill_header(struct nw_seg_header *h, const struct nw_attach_proc *p, uint64_t stack_size)
{
	uint64_t at = sizeof(*h);    /* 8192: 64-byte aligned */
	memcpy(h->magic, NW_SEG_MAGIC, 8);
	h->endian = NW_SEG_ENDIAN;
	h->version_major = NW_SEG_VERSION_MAJOR;
	h->version_minor = NW_SEG_VERSION_MINOR;
	h->header_size = sizeof(*h);
	atomic_store_explicit(&h->flags, NW_SEG_F_SNAPSHOT | NW_SEG_F_DUMP, memory_order_relaxed);
	h->segment_size = at + stack_size;
	/* No comm table, peer table or ring: empty areas at the header's end. */
	h->comm_offset = h->peer_offset = h->ring_offset = at;
	h->comm_record_size = sizeof(struct nw_seg_comm);
	h->peer_record_size = sizeof(struct nw_seg_peer);
	h->op_record_size = sizeof(struct nw_seg_op);
	h->stack_offset = at;
	h->stack_size = stack_size;
	h->pid = p->pid;
	h->ppid = p->ppid;
	h->start_realtime_ns = now_ns(CLOCK_REALTIME);   /* snapshots: when it was taken */
	h->start_monotonic_ns = now_ns(CLOCK_MONOTONIC);
	h->proc_start_ticks = p->start_ticks;
	h->global_rank = p->global_rank;
	h->local_rank = p->local_rank;
	h->world_size = p->world_size;
	h->uid = p->uid;
	if (gethostname(h->host, sizeof(h->host) - 1) != 0)
		strcpy(h->host, "unknown");
	snprintf(h->job, sizeof(h->job), "%s", p->job);
	snprintf(h->nccl_lib, sizeof(h->nccl_lib), "%s", p->nccl_lib);
	memcpy(h->env, p->env, sizeof(h->env));
}

/* Python threads py-spy found that are not among ours get a slot each:
 * how many, and (*py_frames) the Python frames of all. */
static uint32_t python_alone(const struct nw_py_process *py, const uint32_t *tids, uint32_t n,
                             uint32_t *py_frames)
{
	uint32_t py_alone = 0;
	*py_frames = 0;
	for (uint32_t i = 0; py && i < py->nthreads; i++) {
		*py_frames += py->threads[i].nframes;
		uint32_t k = 0;
		while (k < n && tids[k] != py->threads[i].tid)
			k++;
		py_alone += k == n;
	}
	return py_alone;
}

/* Every thread's stack: a blocked one read at once, the running ones all
 * at once afterwards, so the capture waits for them once. */
static void capture_threads(struct nw_cap_target *t, const uint32_t *tids, uint32_t n,
                            struct nw_cap_stack *stk, int *rc)
{
	uint32_t nrun = 0;
	uint32_t *run = calloc(n, sizeof(*run));     /* indexes of the threads found running */
	uint32_t *run_tid = calloc(n, sizeof(*run_tid));
	struct nw_cap_stack *run_stk = calloc(n, sizeof(*run_stk));
	enum nw_cap_result *run_rc = calloc(n, sizeof(*run_rc));
	for (uint32_t i = 0; i < n; i++) {
		rc[i] = nw_cap_thread(t, tids[i], &stk[i]);
		if (rc[i] == NW_CAP_RUNNING && run && run_tid) {
			run[nrun] = i;
			run_tid[nrun++] = tids[i];
		}
	}
	if (run_stk && run_rc) {
		nw_cap_watch(t, nrun, run_tid, run_stk, run_rc, 1, NULL, NULL);
		for (uint32_t k = 0; k < nrun; k++) {
			stk[run[k]] = run_stk[k];
			rc[run[k]] = run_rc[k];
		}
	}
	free(run);
	free(run_tid);
	free(run_stk);
	free(run_rc);
}

/* The threads without a stack, and the last reason given for one. */
struct missing {
	uint32_t running, failed;
	const char *why;
};

/* What came of each thread's capture, into res and *m. */
static void tally_captures(const struct nw_cap_stack *stk, const int *rc, uint32_t n,
                           struct nw_snapshot_result *res, struct missing *m)
{
	for (uint32_t i = 0; i < n; i++) {
		switch (rc[i]) {
		case NW_CAP_OK:
			res->stacks++;
			if (stk[i].flags & NW_THR_REGS_PTRACE)
				res->by_ptrace++;
			if (stk[i].stopped_ns > res->stopped_max_ns)
				res->stopped_max_ns = stk[i].stopped_ns;
			break;
		case NW_CAP_GONE:
			break;
		case NW_CAP_DENIED:
			res->denied++;
			m->why = stk[i].why;
			break;
		case NW_CAP_RUNNING:
		case NW_CAP_KERNEL:
			m->running++;
			res->left_running++;
			m->why = stk[i].why;
			break;
		default:
			m->failed++;
			m->why = stk[i].why;
			break;
		}
	}
}

/* The native threads into the area's thread and frame tables, the gone
 * ones left out: how many were kept. */
static uint32_t add_native(struct builder *b, struct nw_seg_stack_header *area, pid_t pid,
                           const uint32_t *tids, const struct nw_cap_stack *stk, const int *rc, uint32_t n)
{
	struct nw_seg_thread *thr = (struct nw_seg_thread *)((char *)area + area->thread_offset);
	struct nw_seg_frame *frames = (struct nw_seg_frame *)((char *)area + area->frame_offset);
	uint32_t kept = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (rc[i] == NW_CAP_GONE)
			continue;
		struct nw_seg_thread *th = &thr[kept];
		th->tid = tids[i];
		th->flags = stk[i].flags;
		nw_attach_thread_name(pid, tids[i], th->name);
		uint32_t nf = stk[i].n;
		if (nf > area->frame_capacity) {
			nf = area->frame_capacity;
			th->flags |= NW_THR_TRUNCATED;
		}
		if (rc[i] != NW_CAP_OK)
			th->flags |= NW_THR_NO_REPLY;
		struct nw_seg_frame *f = &frames[(size_t)kept * area->frame_capacity];
		for (uint32_t k = 0; k < nf; k++)
			describe(b, &f[k], stk[i].ip[k], k == 0 ? stk[i].ip[k] : stk[i].ip[k] - 1);
		th->nframes = nf;
		kept++;
	}
	return kept;
}

/* The notes of the capture: the threads without a stack, and why there
 * are no Python stacks. */
static void add_notes(struct builder *b, struct nw_seg_stack_ext *ext, const struct nw_snapshot_result *res,
                      const struct missing *m, uint32_t kept, const char *python_note)
{
	char note[256] = "";
	if (res->denied || m->failed || m->running)
		snprintf(note, sizeof(note), "%u of %u threads without a stack%s%s%s",
		         res->denied + m->failed + m->running, kept, m->why ? " (" : "", m->why ? m->why : "",
		         m->why ? ")" : "");
	if (note[0])
		ext->native_note = str_add(b, note);
	if (python_note && python_note[0])
		ext->python_note = str_add(b, python_note);
}

/* The file, written aside and renamed to <host>.<pid>.rank<R>.snap.seg
 * in dir (res->path). 0, or -1 with err. */
static int write_snapshot(const char *file, const struct nw_attach_proc *p, const char *dir,
                          struct nw_snapshot_result *res, char *err, size_t errlen)
{
	const struct nw_seg_header *h = (const struct nw_seg_header *)file;
	char host[NW_SEG_HOST_LEN], rank[16] = "-", tmp[PATH_MAX + 32];
	snprintf(host, sizeof(host), "%s", h->host);
	for (char *c = host; *c; c++)
		if (*c == '/')
			*c = '_';
	if (p->global_rank >= 0)
		snprintf(rank, sizeof(rank), "%d", p->global_rank);
	int len1 = snprintf(res->path, sizeof(res->path), "%s/%s.%d.rank%s.snap.seg", dir, host, (int)p->pid, rank);
	int len2 = snprintf(tmp, sizeof(tmp), "%s/.%s.%d.snap.tmp", dir, host, (int)p->pid);
	if (len1 < 0 || len1 >= (int)sizeof(res->path) || len2 < 0 || len2 >= (int)sizeof(tmp)) {
		snprintf(err, errlen, "%s: path too long", dir);
		return -1;
	}
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	int e = fd < 0 ? errno : 0;
	if (!e && write_all(fd, file, (size_t)h->segment_size) != 0)
		e = errno ? errno : EIO;
	if (fd >= 0 && close(fd) != 0 && !e)
		e = errno;
	if (!e && rename(tmp, res->path) != 0)
		e = errno;
	if (e) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(e));
		unlink(tmp);
		return -1;
	}
	return 0;
}

int nw_snapshot_take(const struct nw_attach_proc *p, const char *dir, const struct nw_py_process *py,
                     const char *python_note,
                     struct nw_snapshot_result *res, char *err, size_t errlen)
{
	memset(res, 0, sizeof(*res));
	uint64_t t0 = now_ns(CLOCK_MONOTONIC);
	static uint32_t tids[MAX_THREADS];
	uint32_t n = nw_attach_threads(p->pid, tids, MAX_THREADS);
	if (n == 0) {
		snprintf(err, errlen, "process gone");
		return -1;
	}
	struct nw_cap_target *t = nw_cap_open(p->pid);
	if (!t) {
		snprintf(err, errlen, "cannot start a capture: %s", strerror(errno));
		return -1;
	}
	struct nw_cap_stack *stk = calloc(n, sizeof(*stk));
	int *rc = calloc(n, sizeof(*rc));
	static struct nw_seg_module mods[NW_STACK_MODULES];
	uint32_t py_frames;
	uint32_t slots = n + python_alone(py, tids, n, &py_frames);
	uint64_t base_size = nw_stack_area_size(slots, 0, 0, 0, 0);
	uint64_t area_size = base_size + (((uint64_t)py_frames * sizeof(struct nw_seg_pyframe) + NW_SEG_ALIGN - 1) &
	                                  ~(uint64_t)(NW_SEG_ALIGN - 1));
	char *file = calloc(1, sizeof(struct nw_seg_header) + area_size);
	if (!stk || !rc || !file) {
		free(stk);
		free(rc);
		free(file);
		nw_cap_close(t);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	capture_threads(t, tids, n, stk, rc);
	struct missing m = { 0 };
	tally_captures(stk, rc, n, res, &m);
	uint32_t nmods = nw_attach_modules(p->pid, mods, NW_STACK_MODULES);
	res->capture_ns = now_ns(CLOCK_MONOTONIC) - t0;

	struct nw_seg_stack_header *area = (struct nw_seg_stack_header *)(file + sizeof(struct nw_seg_header));
	nw_stack_area_init(area, slots, 0, 0, 0, 0);
	struct builder b = { .t = t, .strtab = (char *)area + area->strtab_offset,
	                     .strtab_size = area->strtab_size, .strtab_used = 1, .mods = mods, .nmods = nmods };
	uint32_t kept = add_native(&b, area, p->pid, tids, stk, rc, n);
	struct nw_seg_stack_ext *ext = (struct nw_seg_stack_ext *)(area + 1);
	if (py)
		kept = add_python(&b, area, ext, base_size, py, p->pid, kept);
	res->threads = kept;
	area->thread_count = kept;
	area->module_count = nmods;
	memcpy((char *)area + area->module_offset, mods, (size_t)nmods * sizeof(mods[0]));
	add_notes(&b, ext, res, &m, kept, python_note);
	area->strtab_used = b.strtab_used;
	area->capture_ns = now_ns(CLOCK_MONOTONIC);
	area->captures = 1;
	atomic_store_explicit(&area->seq, 2, memory_order_relaxed);
	builder_free(&b);
	nw_cap_close(t);
	free(stk);
	free(rc);

	fill_header((struct nw_seg_header *)file, p, area_size);
	int rcw = write_snapshot(file, p, dir, res, err, errlen);
	free(file);
	return rcw;
}
