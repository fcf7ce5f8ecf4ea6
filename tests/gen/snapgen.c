/* snapgen: see snapgen.h. */
#include "snapgen.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROGRAM "/opt/job/bin/train"
#define LIBDIR "/usr/lib/x86_64-linux-gnu/"

static int parse_ranks(char *text, int32_t n, uint8_t *flags)
{
	char *save = NULL;
	for (char *tok = strtok_r(text, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *dash = strchr(tok, '-'), *end;
		long lo = strtol(tok, &end, 10), hi = lo;
		if (end == tok || (dash ? end != dash : *end))
			return -1;
		if (dash) {
			hi = strtol(dash + 1, &end, 10);
			if (end == dash + 1 || *end)
				return -1;
		}
		if (lo < 0 || hi < lo || hi >= n)
			return -1;
		for (long r = lo; r <= hi; r++)
			flags[r] = 1;
	}
	return 0;
}

int snap_spec_parse(const char *spec, int32_t nranks, struct snap_spec *s, char *err, size_t errlen)
{
	memset(s, 0, sizeof *s);
	s->nranks = nranks;
	if (!(s->text = strdup(spec))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	char *save = NULL;
	for (char *grp = strtok_r(s->text, ";", &save); grp; grp = strtok_r(NULL, ";", &save)) {
		if (s->ngroups == SNAP_MAX_GROUPS) {
			snprintf(err, errlen, "more than %d groups", SNAP_MAX_GROUPS);
			return -1;
		}
		struct snap_group *g = &s->g[s->ngroups++];
		char *eq = strchr(grp, '=');
		if (!eq) {
			snprintf(err, errlen, "'%s': no '=' (RANKS[/THREAD]=FRAME<FRAME...)", grp);
			return -1;
		}
		*eq = 0;
		char *slash = strchr(grp, '/');
		snprintf(g->thread, sizeof g->thread, "%s", slash ? slash + 1 : "train");
		if (slash)
			*slash = 0;
		if (strcmp(grp, "*") != 0) {
			if (!(g->ranks = calloc((size_t)nranks, 1))) {
				snprintf(err, errlen, "out of memory");
				return -1;
			}
			if (parse_ranks(grp, nranks, g->ranks)) {
				snprintf(err, errlen, "'%s': ranks R or R-R from 0 to %d, comma-separated", grp,
				         (int)nranks - 1);
				return -1;
			}
		}
		char *fsave = NULL;
		for (char *f = strtok_r(eq + 1, "<", &fsave); f; f = strtok_r(NULL, "<", &fsave)) {
			if (g->nframes == SNAP_MAX_FRAMES) {
				snprintf(err, errlen, "more than %d frames in a thread", SNAP_MAX_FRAMES);
				return -1;
			}
			char *at = strchr(f, '@');
			if (at)
				*at = 0;
			g->symbol[g->nframes] = *f ? f : NULL;
			g->module[g->nframes] = at && at[1] ? at + 1 : NULL;
			if (!g->symbol[g->nframes] && !g->module[g->nframes]) {
				snprintf(err, errlen, "an empty frame");
				return -1;
			}
			g->nframes++;
		}
		if (!g->nframes) {
			snprintf(err, errlen, "a thread with no frame");
			return -1;
		}
	}
	if (!s->ngroups) {
		snprintf(err, errlen, "no group");
		return -1;
	}
	return 0;
}

void snap_spec_free(struct snap_spec *s)
{
	for (size_t i = 0; i < s->ngroups; i++)
		free(s->g[i].ranks);
	free(s->text);
	memset(s, 0, sizeof *s);
}

/* Group i gives rank r a thread: it names r and no later group of the
 * same thread name does (the last one wins), or it is "*" and no group of
 * that thread name names r. */
static int gives(const struct snap_spec *s, size_t i, int32_t r)
{
	const struct snap_group *g = &s->g[i];
	if (g->ranks && !g->ranks[r])
		return 0;
	for (size_t k = g->ranks ? i + 1 : 0; k < s->ngroups; k++)
		if (s->g[k].ranks && s->g[k].ranks[r] && !strcmp(s->g[k].thread, g->thread))
			return 0;
	return 1;
}

int snap_spec_has(const struct snap_spec *s, int32_t r)
{
	for (size_t i = 0; i < s->ngroups; i++)
		if (gives(s, i, r))
			return 1;
	return 0;
}

#ifdef NW_PYT_PYTHON
#define SNAP_PYFRAMES 64
#endif

void snap_layout(struct sb_layout *l)
{
	sb_layout_init(l, 0, 0, 0, 1);
#ifdef NW_PYT_PYTHON
	/* A Python frame table after the strings. */
	l->pyframe_off = l->stack_size;
	l->pyframes = SNAP_PYFRAMES;
	l->stack_size += SNAP_PYFRAMES * sizeof(struct nw_seg_pyframe);
	l->size += SNAP_PYFRAMES * sizeof(struct nw_seg_pyframe);
#endif
}

/* A Python frame "FUNCTION (FILE:LINE)" or "FUNCTION (FILE)": the
 * function's length, the file's start and length, the line (0 none). */
static int python_frame(const char *f, size_t *fn, const char **file, size_t *fl, int *line)
{
	const char *open = strstr(f, " (");
	size_t n = strlen(f);
	if (!open || n < 4 || f[n - 1] != ')')
		return 0;
	*fn = (size_t)(open - f);
	*file = open + 2;
	*fl = (size_t)(f + n - 1 - *file);
	*line = 0;
	const char *colon = memrchr(*file, ':', *fl);
	if (colon && colon + 1 < f + n - 1 && strspn(colon + 1, "0123456789") == (size_t)(f + n - 1 - colon - 1)) {
		*line = atoi(colon + 1);
		*fl = (size_t)(colon - *file);
	}
	return *fn > 0;
}

/* A stable offset for a symbol in its module. */
static uint64_t offset_of(const char *sym, uint32_t k)
{
	uint64_t h = 1469598103934665603ull;
	for (const char *c = sym ? sym : ""; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ull;
	return 0x1000 + (sb_mix64(h + k) & 0xffff0);
}

void snap_build(struct sb_seg *seg, const struct sb_layout *l, uint8_t *buf, const struct snap_spec *s,
                int32_t r, const struct nw_seg_header *like, const char *job, uint64_t capture_ns,
                uint64_t app, uint64_t lib)
{
	sb_begin(seg, l, buf);
	struct nw_seg_header *h = seg->h;
	/* What attach reads from /proc/PID: identity and the environment. */
	h->pid = like->pid;
	h->ppid = like->ppid;
	h->start_realtime_ns = like->start_realtime_ns;
	h->start_monotonic_ns = like->start_monotonic_ns;
	h->proc_start_ticks = like->proc_start_ticks;
	h->global_rank = like->global_rank;
	h->local_rank = like->local_rank;
	h->world_size = like->world_size;
	h->uid = like->uid;
	memcpy(h->host, like->host, sizeof h->host);
	memcpy(h->env, like->env, sizeof h->env);
	snprintf(h->job, sizeof h->job, "%s", job);
	atomic_store_explicit(&h->flags, NW_SEG_F_SNAPSHOT | NW_SEG_F_DUMP, memory_order_relaxed);

	/* Modules: the program first, then each library named, in order. */
	struct sb_module mods[SB_STACK_MODULES];
	char paths[SB_STACK_MODULES][NW_STACK_MODULE_PATH_LEN];
	uint32_t nmods = 1;
	mods[0] = (struct sb_module){ app, 0x400000, PROGRAM };
	for (size_t i = 0; i < s->ngroups; i++) {
		if (!gives(s, i, r))
			continue;
		for (uint32_t k = 0; k < s->g[i].nframes; k++) {
			const char *m = s->g[i].module[k];
			uint32_t j;
			if (!m)
				continue;
			for (j = 1; j < nmods && strcmp(strrchr(paths[j], '/') + 1, m); j++)
				;
			if (j < nmods || nmods == SB_STACK_MODULES)
				continue;
			snprintf(paths[nmods], sizeof paths[nmods], LIBDIR "%s", m);
			mods[nmods] = (struct sb_module){ lib + (uint64_t)nmods * 0x1000000, 0x800000, paths[nmods] };
			nmods++;
		}
	}
	sb_stack_begin(seg, mods, nmods);
#ifdef NW_PYT_PYTHON
	struct nw_seg_stack_ext *ext = (struct nw_seg_stack_ext *)(void *)(seg->stk + 1);
	struct nw_seg_pyframe *pyf = (struct nw_seg_pyframe *)(void *)((char *)seg->stk + l->pyframe_off);
	ext->pyframe_offset = l->pyframe_off;
	ext->pyframe_capacity = l->pyframes;
	ext->pyframe_count = 0;
#endif
	uint32_t tid = (uint32_t)h->pid;
	for (size_t i = 0; i < s->ngroups; i++) {
		const struct snap_group *g = &s->g[i];
		if (!gives(s, i, r))
			continue;
		struct sb_frame f[SNAP_MAX_FRAMES];
		uint32_t nf = 0, npy = 0, py_native = 0;
		for (uint32_t k = 0; k < g->nframes; k++) {
			size_t fn, fl;
			const char *file;
			int line;
			if (g->symbol[k] && !g->module[k] && python_frame(g->symbol[k], &fn, &file, &fl, &line)) {
#ifdef NW_PYT_PYTHON
				/* A format with Python frames: in the thread's Python stack. */
				if (ext->pyframe_count + npy < l->pyframes) {
					char fun[256], fil[256];
					snprintf(fun, sizeof fun, "%.*s", (int)fn, g->symbol[k]);
					snprintf(fil, sizeof fil, "%.*s", (int)fl, file);
					struct nw_seg_pyframe *p = &pyf[ext->pyframe_count + npy];
					memset(p, 0, sizeof *p);
					p->code = 0x7f5000000000ull + offset_of(fun, 0);
					p->instr = p->code + 0x40;
					p->function = sb_stack_string(seg, fun);
					p->file = sb_stack_string(seg, fil);
					p->line = line;
					if (!npy)
						py_native = nf;
					npy++;
					continue;
				}
#endif
			}
			uint32_t mod = 1;
			for (uint32_t j = 1; g->module[k] && j < nmods; j++)
				if (!strcmp(strrchr(paths[j], '/') + 1, g->module[k]))
					mod = j + 1;
			f[nf++] = (struct sb_frame){ mod, g->symbol[k], offset_of(g->symbol[k], k), g->symbol[k] ? 0x24 : 0 };
		}
		/* Blocked in a system call: attach read its registers from /proc. */
		sb_stack_thread(seg, tid++, g->thread, NW_THR_REGS_SYSCALL, f, nf);
#ifdef NW_PYT_PYTHON
		if (npy) {
			struct nw_seg_thread *t = (struct nw_seg_thread *)(void *)((char *)seg->stk + seg->stk->thread_offset) +
			                          (seg->stk->thread_count - 1);
			t->py_first = ext->pyframe_count;
			t->py_count = npy;
			t->py_flags = NW_PYT_PYTHON | (t->tid == (uint32_t)h->pid ? NW_PYT_MAIN : 0);
			t->py_native = py_native;
			ext->pyframe_count += npy;
			ext->python_method = NW_PY_PY_SPY;
		}
#else
		(void)npy;
		(void)py_native;
#endif
	}
	sb_stack_end(seg, capture_ns, 0);
	sb_finish(seg);
}
