/* capture: nw_pystack_capture and nw_pystack_write (pystack.h).
 *
 * Thread stacks: the thread and frame states walked with fault-proof reads
 * (walk.c); on 3.11 and 3.12 with NCCLWATCH_PY_METHOD=dump, the interpreter's own
 * dumper (dump.c). Either way each Python thread is tied to its
 * native thread through its thread state's native_thread_id, read with
 * fault-proof reads and kept only when /proc/self/task lists it. */
#include "pystack.h"
#include "cpython.h"
#include "memread.h"
#include "names.h"
#include "pythreads.h"
#include "scratch.h"
#include "../watchdog/symbolize.h"
#include "../interpose/log.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define STR_HASH 8192

/* The staged capture's tables: mapped on first use (scratch.h). */
struct tables {
	struct nw_seg_pyframe frames[NW_PYFRAME_CAPACITY];
	struct nw_seg_pyframe sites[NW_PYSITE_CAPACITY];
	struct nw_seg_pycall refs[2 * NW_PYSITE_CAPACITY];
	/* strings of this capture: hash -> strtab offset */
	uint32_t str_off[STR_HASH];
	uint32_t str_gen[STR_HASH];
	struct nw_py_thread pyt[NW_PY_THREADS_MAX];
};

static struct {
	struct tables *tab;       /* NULL until mapped */
	uint32_t nframes;
	uint32_t nsites;
	uint32_t note;            /* strtab offset */
	uint32_t version, method;
	uint32_t gen;
	struct nw_strtab *strtab;
} cs;

static int have_tables(void)
{
	return nw_py_scratch((void **)&cs.tab, sizeof *cs.tab, "the Python frame tables") != NULL;
}

static uint32_t put_str(const char *s)
{
	struct nw_strtab *t = cs.strtab;
	if (!s || !*s)
		return 0;
	uint32_t h = 2166136261u;
	for (const char *p = s; *p; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	for (uint32_t k = 0; cs.tab && k < 16; k++) {
		uint32_t i = (h + k) & (STR_HASH - 1);
		if (cs.tab->str_gen[i] != cs.gen) {
			size_t len = strlen(s) + 1;
			if (len > t->size - t->used)
				return 0;
			memcpy(t->buf + t->used, s, len);
			cs.tab->str_gen[i] = cs.gen;
			cs.tab->str_off[i] = t->used;
			t->used += (uint32_t)len;
			return cs.tab->str_off[i];
		}
		if (!strcmp(t->buf + cs.tab->str_off[i], s))
			return cs.tab->str_off[i];
	}
	/* A crowded bucket (or no tables: a note only): store it again
	 * rather than lose it. */
	size_t len = strlen(s) + 1;
	if (len > t->size - t->used)
		return 0;
	memcpy(t->buf + t->used, s, len);
	t->used += (uint32_t)len;
	return t->used - (uint32_t)len;
}

static void name_into(struct nw_seg_pyframe *f, const struct nw_py_name *nm)
{
	f->file = put_str(nm->file);
	f->function = put_str(nm->function);
	f->line = nm->line;
}

static void read_comm(uint32_t tid, char name[NW_STACK_NAME_LEN])
{
	char path[64], buf[64];
	memset(name, 0, NW_STACK_NAME_LEN);
	snprintf(path, sizeof path, "/proc/self/task/%u/comm", tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	size_t len = strcspn(buf, "\n");
	if (len > NW_STACK_NAME_LEN - 1)
		len = NW_STACK_NAME_LEN - 1;
	memcpy(name, buf, len);
}

/* Where a thread's native stack turns into the interpreter: the first
 * frame of the eval loop (what runs under its innermost Python frame is
 * above it). 0 when there is none. */
static uint32_t native_above_eval(const struct nw_seg_frame *f, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++) {
		if (!f[k].symbol || f[k].symbol >= cs.strtab->used)
			continue;
		const char *s = cs.strtab->buf + f[k].symbol;
		if (!strncmp(s, "_PyEval_EvalFrame", 17) || !strcmp(s, "PyEval_EvalCode") ||
		    !strncmp(s, "_PyEval_Vector", 14))
			return k;
	}
	return 0;
}

static int cmp_ref(const void *a, const void *b)
{
	const struct nw_seg_pycall *x = a, *y = b;
	if (x->code != y->code)
		return x->code < y->code ? -1 : 1;
	return x->instr < y->instr ? -1 : x->instr > y->instr;
}

static uint32_t unique_refs(uint32_t n)
{
	if (!n)
		return 0;
	qsort(cs.tab->refs, n, sizeof cs.tab->refs[0], cmp_ref);
	uint32_t m = 1;
	for (uint32_t i = 1; i < n; i++)
		if (cmp_ref(&cs.tab->refs[i], &cs.tab->refs[m - 1]))
			cs.tab->refs[m++] = cs.tab->refs[i];
	return m;
}

/* The site table: every distinct reference in the per-op call sites. */
static void name_sites(const struct nw_seg_stack_header *area)
{
	const struct nw_seg_stack_ext *ext = (const void *)(area + 1);
	cs.nsites = 0;
	if (!ext->pycall_offset || !ext->pycall_depth || !ext->pycall_count)
		return;
	const struct nw_seg_pycall *c = (const void *)((const char *)area + ext->pycall_offset);
	uint64_t total = (uint64_t)ext->pycall_count * ext->pycall_depth;
	uint32_t room = 2 * NW_PYSITE_CAPACITY, n = 0;
	for (uint64_t i = 0; i < total; i++) {
		uint64_t code = __atomic_load_n(&c[i].code, __ATOMIC_RELAXED);
		uint64_t instr = __atomic_load_n(&c[i].instr, __ATOMIC_RELAXED);
		if (!code)
			continue;
		if (n == room) {
			n = unique_refs(n);
			if (n > NW_PYSITE_CAPACITY)
				n = NW_PYSITE_CAPACITY;
		}
		cs.tab->refs[n].code = code;
		cs.tab->refs[n].instr = instr;
		n++;
	}
	n = unique_refs(n);
	if (n > NW_PYSITE_CAPACITY)
		n = NW_PYSITE_CAPACITY;
	for (uint32_t i = 0; i < n; i++) {
		struct nw_seg_pyframe *s = &cs.tab->sites[i];
		struct nw_py_name nm;
		memset(s, 0, sizeof *s);
		s->code = cs.tab->refs[i].code;
		s->instr = cs.tab->refs[i].instr;
		if (nw_py_name_ref(s->code, s->instr, &nm) == 0)
			name_into(s, &nm);
		else
			s->flags = NW_PYF_UNREAD;
	}
	cs.nsites = n;
}

/* Is (code, instr) in the site table (sorted, as unique_refs leaves it)? */
static int site_named(uint64_t code, uint64_t instr)
{
	uint32_t lo = 0, hi = cs.nsites;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const struct nw_seg_pyframe *x = &cs.tab->sites[mid];
		if (x->code == code && x->instr == instr)
			return 1;
		if (x->code < code || (x->code == code && x->instr < instr))
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

int nw_pystack_name_new_sites(const struct nw_seg_stack_header *area, uint64_t ring_head,
                              struct nw_strtab *strtab)
{
	static uint64_t seen;
	const struct nw_seg_stack_ext *ext = (const void *)(area + 1);
	if (ring_head < seen) {
		/* A fork child's own ring starts again: its area has none of the
		 * names the parent's table holds. */
		seen = 0;
		cs.nsites = 0;
	}
	if (!nw_pycall_base || ring_head == seen || !ext->pycall_offset || !ext->pycall_depth ||
	    !ext->pycall_count || cs.nsites >= NW_PYSITE_CAPACITY || !have_tables())
		return 0;
	uint64_t from = seen, cap = ext->pycall_count;
	if (ring_head - from > cap)
		from = ring_head - cap;
	seen = ring_head;
	const struct nw_seg_pycall *c = (const void *)((const char *)area + ext->pycall_offset);
	uint64_t last_code = 0, last_instr = 0;
	int fresh = 0;
	for (uint64_t t = from; t < ring_head && !fresh; t++) {
		const struct nw_seg_pycall *slot = c + (t % cap) * ext->pycall_depth;
		for (uint32_t k = 0; k < ext->pycall_depth; k++) {
			uint64_t code = __atomic_load_n(&slot[k].code, __ATOMIC_RELAXED);
			uint64_t instr = __atomic_load_n(&slot[k].instr, __ATOMIC_RELAXED);
			if (!code || (code == last_code && instr == last_instr))
				continue;
			last_code = code;
			last_instr = instr;
			if (!site_named(code, instr)) {
				fresh = 1;
				break;
			}
		}
	}
	if (!fresh)
		return 0;
	/* The strings of the last capture stay where they are (same
	 * generation, same table): only new names are appended. */
	cs.strtab = strtab;
	if (!cs.gen)
		cs.gen = 1;      /* no capture yet: a generation of its own */
	name_sites(area);
	return 1;
}

/* CPython is there and its thread states can be read into tables of
 * ours; 0 when not, with the note saying why. */
static int python_ready(const struct nw_seg_stack_header *area)
{
	int state = nw_py_probe();
	if (state == NW_PYRT_READY && !nw_py.layout_checked && !nw_py_check_layout()) {
		char note[2 * NW_PY_NOTE_LEN];
		snprintf(note, sizeof note, "%s%s", nw_py.note,
		         nw_py.state == NW_PYRT_READY ? ": its thread states read inconsistent; tried again next time" : "");
		cs.note = put_str(note);
		return 0;
	}
	state = nw_py.state;
	cs.note = put_str(nw_py.note);
	if (state != NW_PYRT_READY)
		return 0;
	cs.version = nw_py.version;
	const struct nw_seg_stack_ext *ext = (const void *)(area + 1);
	if (!ext->pyframe_capacity || !ext->pyframe_offset) {
		/* The segment was made before CPython was loaded (an embedding
		 * program): its area has no room for Python frames. */
		char note[2 * NW_PY_NOTE_LEN];
		snprintf(note, sizeof note, "%s: the stack area has no Python tables (CPython was loaded after "
		         "the first NCCL call)", nw_py.note);
		cs.note = put_str(note);
		return 0;
	}
	if (!have_tables()) {
		char note[2 * NW_PY_NOTE_LEN];
		snprintf(note, sizeof note, "%s: no memory for the Python frame tables", nw_py.note);
		cs.note = put_str(note);
		return 0;
	}
	return 1;
}

/* The Python threads into cs.tab->pyt: how many, or -1 with the note
 * saying why none. */
static int list_python_threads(void)
{
	char err[NW_PY_NOTE_LEN] = "";
	/* Thread states are being freed while the interpreter shuts down. */
	int count = nw_py.is_finalizing && nw_py.is_finalizing() ? -1 : 0;
	if (count < 0)
		snprintf(err, sizeof err, "the interpreter is shutting down");
	else
		count = nw_py_threads(cs.tab->pyt, NW_PY_THREADS_MAX, err, sizeof err);
	if (count < 0) {
		char note[2 * NW_PY_NOTE_LEN];
		snprintf(note, sizeof note, "%s: %s", nw_py.note, err);
		cs.note = put_str(note);
	}
	return count;
}

/* Python thread p's frames into the frame table (as many as it still
 * holds), thread t pointing at them. */
static void add_python_frames(struct nw_seg_thread *t, const struct nw_py_thread *p)
{
	uint32_t keep = p->nframes;
	if (keep > NW_PYFRAME_CAPACITY - cs.nframes)
		keep = NW_PYFRAME_CAPACITY - cs.nframes;
	t->py_first = cs.nframes;
	t->py_count = keep;
	t->py_flags = NW_PYT_PYTHON | p->flags | (keep < p->nframes ? NW_PYT_TRUNCATED : 0);
	t->py_name = put_str(p->name);
	for (uint32_t k = 0; k < keep; k++) {
		struct nw_seg_pyframe *f = &cs.tab->frames[cs.nframes++];
		memset(f, 0, sizeof *f);
		f->code = p->frames[k].code;
		f->instr = p->frames[k].instr;
		f->line = p->frames[k].line;
		f->flags = p->frames[k].flags;
		f->file = put_str(p->frames[k].file);
		f->function = put_str(p->frames[k].function);
	}
}

/* Each Python thread tied to its native thread by tid (a thread of its
 * own where the native table lacks it and has room): the threads now in
 * the table; *untied: the Python threads with no tid. */
static uint32_t tie_python_threads(int count, struct nw_seg_thread *threads, uint32_t n, uint32_t cap,
                                   const struct nw_seg_frame *frames, uint32_t frame_capacity,
                                   uint32_t *untied)
{
	for (int i = 0; i < count; i++) {
		struct nw_py_thread *p = &cs.tab->pyt[i];
		if (!p->tid) {
			(*untied)++;
			continue;
		}
		uint32_t slot = 0;
		while (slot < n && threads[slot].tid != p->tid)
			slot++;
		if (slot == n) {
			if (n == cap)
				continue;
			memset(&threads[n], 0, sizeof threads[n]);
			threads[n].tid = p->tid;
			read_comm(p->tid, threads[n].name);
			n++;
		}
		struct nw_seg_thread *t = &threads[slot];
		add_python_frames(t, p);
		t->py_native = native_above_eval(frames + (size_t)slot * frame_capacity,
		                                 slot < cap ? t->nframes : 0);
	}
	return n;
}

uint32_t nw_pystack_capture(const struct nw_seg_stack_header *area, struct nw_seg_thread *threads,
                            uint32_t n, uint32_t cap, const struct nw_seg_frame *frames,
                            uint32_t frame_capacity, struct nw_strtab *strtab)
{
	cs.strtab = strtab;
	if (++cs.gen == 0)
		cs.gen = 1;
	cs.nframes = cs.nsites = 0;
	nw_py_names_begin();
	cs.version = cs.method = 0;
	if (!python_ready(area))
		return n;
	int count = list_python_threads();
	if (count < 0) {
		name_sites(area);
		return n;
	}
	cs.method = nw_py.method;
	uint32_t untied = 0;
	n = tie_python_threads(count, threads, n, cap, frames, frame_capacity, &untied);
	if (untied || nw_py_threads_cut) {
		char note[2 * NW_PY_NOTE_LEN], tied[64] = "";
		if (untied)
			snprintf(tied, sizeof tied, "; %u Python thread%s not tied to a native thread", untied,
			         untied == 1 ? "" : "s");
		snprintf(note, sizeof note, "%s%s%s", nw_py.note, tied,
		         nw_py_threads_cut ? "; more Python threads than were listed" : "");
		cs.note = put_str(note);
	}
	name_sites(area);
	return n;
}

void nw_pystack_write(struct nw_seg_stack_header *area)
{
	struct nw_seg_stack_ext *ext = (struct nw_seg_stack_ext *)(area + 1);
	char *base = (char *)area;
	if (ext->ext_size < sizeof *ext)
		return;
	ext->python_note = cs.note;
	ext->python_version = cs.version;
	ext->python_method = cs.method;
	if (!cs.tab)
		return;           /* never mapped: nothing staged beyond the note */
	if (ext->pyframe_offset && ext->pyframe_capacity) {
		uint32_t n = cs.nframes < ext->pyframe_capacity ? cs.nframes : ext->pyframe_capacity;
		memcpy(base + ext->pyframe_offset, cs.tab->frames, (size_t)n * sizeof cs.tab->frames[0]);
		ext->pyframe_count = n;
	}
	if (ext->pysite_offset && ext->pysite_capacity) {
		uint32_t n = cs.nsites < ext->pysite_capacity ? cs.nsites : ext->pysite_capacity;
		memcpy(base + ext->pysite_offset, cs.tab->sites, (size_t)n * sizeof cs.tab->sites[0]);
		ext->pysite_count = n;
	}
}
