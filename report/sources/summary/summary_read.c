/* summary_read: one summary file -> processes of the model (summary.h).
 * Nothing in the file is trusted: the checksum and the sizes are checked
 * first, every count is bounded by the bytes left before anything is
 * allocated, every reference and slot index is checked against what it
 * names, and every text field ends with a NUL. */
#include "../sources.h"   /* first: uthash never exits */
#include "summary.h"
#include "summary_codec.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { T_PROC, T_HEADER, T_COMM, T_PEER, T_OP, T_THREAD, T_COUNT };

struct reader {
	struct nw_sum_in in;
	const char *name;
	uint32_t nstr, nlist;
	const uint8_t **sp;           /* [nstr + 1]: string i's bytes in the file */
	uint32_t *slen;
	char **str;                   /* [nstr + 1]: interned, NUL-terminated; [0] NULL */
	char ***list;                 /* [nlist + 1]: interned frame lists */
	uint32_t *llen;
	struct nw_sum_prev prev[T_COUNT];
	uint32_t nfields[T_COUNT];    /* each table's fields in the file */
	struct nw_read_error *err;
	int failed;
};

static int fail(struct reader *r, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct reader *r, int code, const char *fmt, ...)
{
	if (r->failed)
		return -1;
	r->failed = code;
	if (r->err) {
		char what[200];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(what, sizeof what, fmt, ap);
		va_end(ap);
		memset(r->err, 0, sizeof *r->err);
		r->err->code = code;
		snprintf(r->err->message, sizeof r->err->message, "%s: %s", r->name, what);
	}
	return -1;
}

/* String i (in range) of the table, NULL for none; an empty string reads as
 * none, as the writer writes it (only a frame's text keeps an empty one). */
static const char *str_or_none(const struct reader *r, uint64_t i)
{
	return r->slen[i] ? r->str[i] : NULL;
}

static int truncated(struct reader *r)
{
	return fail(r, NW_READ_ERR_FORMAT, "not a valid summary (it ends inside a record)");
}

/* A count of records of at least `min` bytes each that the rest can hold. */
static uint64_t get_count(struct reader *r, size_t min, const char *what)
{
	uint64_t n = nw_sum_get_uv(&r->in);
	if (r->in.bad) {
		truncated(r);
		return 0;
	}
	if (n > (r->in.len - r->in.at) / (min ? min : 1)) {
		fail(r, NW_READ_ERR_FORMAT, "not a valid summary (%llu %s, more than the file holds)",
		     (unsigned long long)n, what);
		return 0;
	}
	return n;
}

static int get_rec(struct reader *r, int t, const struct nw_sum_table *tab, void *rec)
{
	uint64_t *prev = r->prev[t].v;
	for (size_t k = 0; k < r->nfields[t]; k++) {
		uint64_t d = nw_sum_get_uv(&r->in);
		if (r->in.bad)
			return truncated(r);
		uint64_t v = prev[k] + (uint64_t)nw_sum_unzigzag(d);
		prev[k] = v;
		if (k >= tab->n)
			continue;                 /* a field of a newer minor */
		const struct nw_sum_field *f = &tab->f[k];
		if (f->type == NW_SUM_P || f->type == NW_SUM_E) {
			/* E: its bytes end with the last variable's NUL (the interned
			 * copy adds the second) */
			if (v > r->nstr || (v && f->type == NW_SUM_E && (!r->slen[v] || r->sp[v][r->slen[v] - 1])))
				return fail(r, NW_READ_ERR_FORMAT, "not a valid summary (a text field names string %llu "
				            "of %u, or not an environment)", (unsigned long long)v, r->nstr);
			const char *s = str_or_none(r, v);
			memcpy((uint8_t *)rec + f->off, &s, sizeof s);
			continue;
		}
		if (f->type != NW_SUM_S) {
			nw_sum_field_set(f, rec, v);
			continue;
		}
		uint8_t *p = (uint8_t *)rec + f->off;
		memset(p, 0, f->size);
		if (!v)
			continue;
		if (v > r->nstr || r->slen[v] > f->size)
			return fail(r, NW_READ_ERR_FORMAT, "not a valid summary (a text field names string %llu "
			            "of %u, or one too long)", (unsigned long long)v, r->nstr);
		memcpy(p, r->sp[v], r->slen[v]);
	}
	return 0;
}

/* Room for n records of `per` fields (a byte each at least) in the rest
 * of the file, then the array: 0, or -1 with the reader failed. */
static int room(struct reader *r, uint64_t n, size_t per, void **arr, size_t size)
{
	if (n > (r->in.len - r->in.at) / per)
		return fail(r, NW_READ_ERR_FORMAT, "not a valid summary (a count larger than the file holds)");
	if (!(*arr = calloc(n ? n : 1, size)))
		return fail(r, NW_READ_ERR_NOMEM, "out of memory");
	return 0;
}

static const char *str_at(struct reader *r, uint32_t i, int *bad)
{
	if (i > r->nstr) {
		*bad = 1;
		return NULL;
	}
	return str_or_none(r, i);
}

/* A text field of n bytes ends with a NUL (env with two). */
static void terminate(char *s, size_t n)
{
	s[n - 1] = '\0';
}

/* The process record's fields into p (its header read before). 0, -1 a
 * record out of range or out of memory (r says which). */
static int get_proc_fields(struct reader *r, const struct nw_sum_proc *sp, struct nw_proc *p)
{
	int bad = 0;
	const char *path = str_at(r, sp->path, &bad);
	p->source_note = str_at(r, sp->source_note, &bad);
	if (bad || !path || sp->alive < -1 || sp->alive > 1 || sp->ncomms > NW_SEG_MAX_COMMS ||
	    sp->npeers > NW_SEG_MAX_PEERS)
		return fail(r, NW_READ_ERR_FORMAT, "not a valid summary (a process record out of range)");
	terminate(p->hdr.host, sizeof p->hdr.host);
	terminate(p->hdr.job, sizeof p->hdr.job);
	terminate(p->hdr.gpu_name, sizeof p->hdr.gpu_name);
	terminate(p->hdr.error, sizeof p->hdr.error);
	p->is_dump = sp->is_dump != 0;
	p->snapshot = sp->snapshot != 0;
	p->attached = sp->attached != 0;
	/* a file written before capability bits: what its kind of source sees
	 * (a Flight Recorder dump's note is its only mark there) */
	p->caps = sp->caps ? sp->caps
	          : p->snapshot ? NW_CAPS_SNAPSHOT
	          : p->source_note ? NW_CAP_OPNUMS | NW_CAP_COMPLETION | NW_CAP_SENDRECV | NW_CAP_FINGERPRINT
	                           : NW_CAPS_SEGMENT;
	p->alive = sp->alive;
	p->now_ns = sp->now_ns;
	p->last_activity_ns = sp->last_activity_ns;
	p->stacks_ns = sp->stacks_ns;
	p->rank = p->hdr.global_rank >= 0 ? p->hdr.global_rank : -1;
	if (!(p->path = strdup(path)))
		return fail(r, NW_READ_ERR_NOMEM, "out of memory");
	return 0;
}

/* The comm and peer tables. 0, -1. */
static int get_comms_peers(struct reader *r, const struct nw_sum_proc *sp, struct nw_proc *p)
{
	uint64_t n = sp->ncomms;
	if (room(r, n, r->nfields[T_COMM], (void **)&p->comms, sizeof *p->comms))
		return -1;
	for (p->ncomms = 0; p->ncomms < n; p->ncomms++) {
		struct nw_seg_comm *c = &p->comms[p->ncomms];
		if (get_rec(r, T_COMM, &nw_sum_t_comm, c))
			return -1;
		terminate(c->name, sizeof c->name);
		terminate(c->bus_id, sizeof c->bus_id);
	}
	n = sp->npeers;
	if (room(r, n, r->nfields[T_PEER], (void **)&p->peers, sizeof *p->peers))
		return -1;
	for (p->npeers = 0; p->npeers < n; p->npeers++) {
		if (get_rec(r, T_PEER, &nw_sum_t_peer, &p->peers[p->npeers]))
			return -1;
		if (p->peers[p->npeers].comm_slot >= p->ncomms)
			return fail(r, NW_READ_ERR_FORMAT, "not a valid summary (a peer entry of comm %u of %u)",
			            p->peers[p->npeers].comm_slot, p->ncomms);
	}
	return 0;
}

/* The ops, with their call sites when the file has them. 0, -1. */
static int get_ops(struct reader *r, const struct nw_sum_proc *sp, struct nw_proc *p)
{
	uint64_t n = sp->nops;
	if (room(r, n, r->nfields[T_OP], (void **)&p->ops, sizeof *p->ops) ||
	    (sp->sites && room(r, n, r->nfields[T_OP], (void **)&p->op_site, sizeof *p->op_site)))
		return -1;
	for (p->nops = 0; p->nops < n; p->nops++) {
		struct nw_seg_op *op = &p->ops[p->nops];
		if (get_rec(r, T_OP, &nw_sum_t_op, op))
			return -1;
		if (op->comm_slot >= p->ncomms && op->comm_slot != UINT32_MAX)
			return fail(r, NW_READ_ERR_FORMAT, "not a valid summary (an op of comm %u of %u)", op->comm_slot,
			            p->ncomms);
		if (sp->sites) {
			uint64_t s = nw_sum_get_uv(&r->in);
			if (r->in.bad || s > r->nstr)
				return fail(r, NW_READ_ERR_FORMAT, "not a valid summary (an op's call site)");
			p->op_site[p->nops] = str_or_none(r, s);
		}
	}
	if (nw_note_open_groups(p, p->ops, p->nops))   /* the reader's, not in the file */
		return fail(r, NW_READ_ERR_NOMEM, "out of memory");
	return 0;
}

/* The threads, their frames from the shared lists. 0, -1. */
static int get_threads(struct reader *r, const struct nw_sum_proc *sp, struct nw_proc *p)
{
	uint64_t n = sp->nthreads;
	if (room(r, n, r->nfields[T_THREAD], (void **)&p->threads, sizeof *p->threads))
		return -1;
	for (p->nthreads = 0; p->nthreads < n; p->nthreads++) {
		struct nw_sum_thread st;
		struct nw_thread_stack *t = &p->threads[p->nthreads];
		if (get_rec(r, T_THREAD, &nw_sum_t_thread, &st))
			return -1;
		if (st.frames > r->nlist || st.wait_frames > r->nlist || st.py_name > r->nstr ||
		    st.npy > r->llen[st.frames] || st.py_at > r->llen[st.frames] || st.py_app > r->llen[st.frames])
			return fail(r, NW_READ_ERR_FORMAT, "not a valid summary (a thread's frames out of range)");
		t->tid = st.tid;
		t->flags = st.flags;
		memcpy(t->name, st.name, sizeof t->name);
		terminate(t->name, sizeof t->name);
		t->py_name = str_or_none(r, st.py_name);
		t->frames = r->list[st.frames];
		t->nframes = r->llen[st.frames];
		t->wait_frames = r->list[st.wait_frames];
		t->nwait_frames = r->llen[st.wait_frames];
		t->py_flags = st.py_flags;
		t->npy = st.npy;
		t->py_at = st.py_at;
		t->py_app = st.py_app;
	}
	return 0;
}

static struct nw_proc *get_proc(struct reader *r)
{
	struct nw_sum_proc sp = { 0 };
	struct nw_proc *p = calloc(1, sizeof *p);
	if (!p) {
		fail(r, NW_READ_ERR_NOMEM, "out of memory");
		return NULL;
	}
	if (get_rec(r, T_PROC, &nw_sum_t_proc, &sp) || get_rec(r, T_HEADER, &nw_sum_t_header, &p->hdr) ||
	    get_proc_fields(r, &sp, p) || get_comms_peers(r, &sp, p) || get_ops(r, &sp, p) ||
	    get_threads(r, &sp, p)) {
		nw_proc_free(p);
		return NULL;
	}
	return p;
}

/* The strings' places in the file (r->sp, r->slen). 0, -1. */
static int get_strings(struct reader *r)
{
	r->nstr = (uint32_t)get_count(r, 1, "strings");
	if (r->failed)
		return -1;
	r->sp = calloc(r->nstr + 1, sizeof *r->sp);
	r->slen = calloc(r->nstr + 1, sizeof *r->slen);
	r->str = calloc(r->nstr + 1, sizeof *r->str);
	if (!r->sp || !r->slen || !r->str)
		return fail(r, NW_READ_ERR_NOMEM, "out of memory");
	for (uint32_t i = 1; i <= r->nstr; i++) {
		uint64_t len = nw_sum_get_uv(&r->in);
		if (r->in.bad || len > r->in.len - r->in.at || len > UINT32_MAX)
			return truncated(r);
		r->sp[i] = r->in.d + r->in.at;
		r->slen[i] = (uint32_t)len;
		r->in.at += len;
	}
	return 0;
}

/* The frame lists as string numbers, idx[1..nlist]. 0, -1. */
static int get_lists(struct reader *r, uint32_t **idx)
{
	for (uint32_t i = 1; i <= r->nlist; i++) {
		uint64_t n = get_count(r, 1, "frames");
		if (r->failed || !n || !(idx[i] = malloc(n * sizeof **idx)))
			return r->failed ? -1 : n ? fail(r, NW_READ_ERR_NOMEM, "out of memory")
			                          : fail(r, NW_READ_ERR_FORMAT, "not a valid summary (an empty frame list)");
		r->llen[i] = (uint32_t)n;
		for (uint64_t k = 0; k < n; k++) {
			uint64_t s = nw_sum_get_uv(&r->in);
			if (r->in.bad || !s || s > r->nstr)
				return fail(r, NW_READ_ERR_FORMAT, "not a valid summary (a frame names string %llu of %u)",
				            (unsigned long long)s, r->nstr);
			idx[i][k] = (uint32_t)s;
		}
	}
	return 0;
}

/* The strings and frame lists interned, under the lock (the table is
 * shared). 0, -1 out of memory. */
static int intern_tables(struct reader *r, uint32_t **idx, struct nw_intern *in, pthread_mutex_t *lock)
{
	if (lock)
		pthread_mutex_lock(lock);
	int oom = 0;
	for (uint32_t i = 1; i <= r->nstr && !oom; i++)
		if (!(r->str[i] = nw_intern_str(in, (const char *)r->sp[i], r->slen[i])))
			oom = 1;
	char **tmp = NULL;
	uint32_t cap = 0;
	for (uint32_t i = 1; i <= r->nlist && !oom; i++) {
		if (r->llen[i] > cap) {
			char **t2 = realloc(tmp, r->llen[i] * sizeof *tmp);
			if (!t2) {
				oom = 1;
				break;
			}
			tmp = t2;
			cap = r->llen[i];
		}
		for (uint32_t k = 0; k < r->llen[i]; k++)
			tmp[k] = r->str[idx[i][k]];
		r->list[i] = nw_intern_list(in, tmp, r->llen[i], &oom);
	}
	if (lock)
		pthread_mutex_unlock(lock);
	free(tmp);
	return oom ? fail(r, NW_READ_ERR_NOMEM, "out of memory") : 0;
}

/* Strings and lists, interned under the lock (the table is shared). */
static int get_tables(struct reader *r, struct nw_intern *in, pthread_mutex_t *lock)
{
	uint64_t ntab = nw_sum_get_uv(&r->in);
	if (r->in.bad)
		return truncated(r);
	if (ntab != NW_SUM_TABLES)
		return fail(r, NW_READ_ERR_FORMAT, "not a valid summary (%llu record tables, not %d)",
		            (unsigned long long)ntab, NW_SUM_TABLES);
	for (int t = 0; t < NW_SUM_TABLES; t++) {
		uint64_t n = nw_sum_get_uv(&r->in);
		if (r->in.bad)
			return truncated(r);
		if (!n || n > NW_SUM_MAX_FIELDS)
			return fail(r, NW_READ_ERR_FORMAT, "not a valid summary (a table of %llu fields)",
			            (unsigned long long)n);
		r->nfields[t] = (uint32_t)n;
	}
	if (get_strings(r))
		return -1;
	r->nlist = (uint32_t)get_count(r, 1, "frame lists");
	if (r->failed)
		return -1;
	r->list = calloc(r->nlist + 1, sizeof *r->list);
	r->llen = calloc(r->nlist + 1, sizeof *r->llen);
	uint32_t **idx = calloc(r->nlist + 1, sizeof *idx);
	if (!r->list || !r->llen || !idx) {
		free(idx);
		return fail(r, NW_READ_ERR_NOMEM, "out of memory");
	}
	int rc = get_lists(r, idx);
	if (!rc)
		rc = intern_tables(r, idx, in, lock);
	for (uint32_t i = 0; i <= r->nlist; i++)
		free(idx[i]);
	free(idx);
	return rc;
}

static uint64_t get_le(const uint8_t *d, int n)
{
	uint64_t v = 0;
	for (int i = n; i-- > 0;)
		v = v << 8 | d[i];
	return v;
}

int nw_summary_read_bytes(const uint8_t *d, size_t n, const char *name, struct nw_intern *in,
                          pthread_mutex_t *lock, struct nw_proc ***procs, size_t *nprocs,
                          struct nw_read_error *err)
{
	struct reader r = { .name = name, .err = err };
	*procs = NULL;
	*nprocs = 0;
	if (n < 8 || memcmp(d, NW_SUM_MAGIC, 8) != 0)
		return NW_SUM_NOT_A_SUMMARY;
	if (n < NW_SUM_HEADER_SIZE)
		return fail(&r, NW_READ_ERR_FORMAT, "a summary cut short (%zu bytes, its header alone is %d)", n,
		            NW_SUM_HEADER_SIZE), r.failed;
	unsigned major = (unsigned)get_le(d + 8, 2), minor = (unsigned)get_le(d + 10, 2);
	if (major != NW_SUM_VERSION_MAJOR)
		return fail(&r, NW_READ_ERR_VERSION, "summary format %u.%u, this reader knows %d.x", major, minor,
		            NW_SUM_VERSION_MAJOR), r.failed;
	uint64_t payload = get_le(d + 16, 8);
	if (payload != n - NW_SUM_HEADER_SIZE)
		return fail(&r, NW_READ_ERR_FORMAT, "a summary cut short or with bytes after its end (%zu bytes, "
		            "its header says %llu)", n, (unsigned long long)payload + NW_SUM_HEADER_SIZE), r.failed;
	if (get_le(d + 24, 8) != nw_sum_hash(d + NW_SUM_HEADER_SIZE, payload))
		return fail(&r, NW_READ_ERR_FORMAT, "a corrupt summary (its checksum does not match)"), r.failed;
	r.in = (struct nw_sum_in){ .d = d, .len = n, .at = NW_SUM_HEADER_SIZE };

	struct nw_proc **out = NULL;
	size_t count = 0;
	if (get_tables(&r, in, lock) == 0) {
		uint64_t np = get_count(&r, r.nfields[T_PROC] + r.nfields[T_HEADER], "processes");
		if (!r.failed && !(out = calloc(np ? np : 1, sizeof *out)))
			fail(&r, NW_READ_ERR_NOMEM, "out of memory");
		for (; !r.failed && count < np; count++)
			if (!(out[count] = get_proc(&r)))
				break;
		if (!r.failed && r.in.at != r.in.len)
			fail(&r, NW_READ_ERR_FORMAT, "not a valid summary (%zu bytes after its last record)",
			     r.in.len - r.in.at);
	}
	free(r.sp);
	free(r.slen);
	free(r.str);
	free(r.list);
	free(r.llen);
	if (r.failed) {
		for (size_t i = 0; i < count; i++)
			nw_proc_free(out[i]);
		free(out);
		return r.failed;
	}
	*procs = out;
	*nprocs = count;
	return NW_READ_OK;
}

int nw_summary_named(const char *path)
{
	size_t n = strlen(path), s = strlen(NW_SUM_SUFFIX);
	return n > s && !strcmp(path + n - s, NW_SUM_SUFFIX);
}

int nw_summary_read(const char *path, struct nw_intern *in, pthread_mutex_t *lock,
                    struct nw_proc ***procs, size_t *nprocs, struct nw_read_error *err)
{
	struct reader r = { .name = path, .err = err };
	*procs = NULL;
	*nprocs = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		int e = fd < 0 ? errno : EINVAL;
		if (fd >= 0)
			close(fd);
		if (err) {
			memset(err, 0, sizeof *err);
			err->code = NW_READ_ERR_IO;
			err->sys_errno = e;
			snprintf(err->message, sizeof err->message, "%s: %s", path,
			         e == EINVAL ? "not a regular file" : strerror(e));
		}
		return NW_READ_ERR_IO;
	}
	uint8_t magic[8];
	ssize_t got = pread(fd, magic, sizeof magic, 0);
	if (got != (ssize_t)sizeof magic || memcmp(magic, NW_SUM_MAGIC, 8) != 0) {
		close(fd);
		return NW_SUM_NOT_A_SUMMARY;
	}
	if ((uint64_t)sb.st_size > NW_SUM_MAX_BYTES) {
		close(fd);
		return fail(&r, NW_READ_ERR_FORMAT, "a summary of %lld bytes, more than the %u MiB allowed",
		            (long long)sb.st_size, NW_SUM_MAX_BYTES >> 20), r.failed;
	}
	size_t n = (size_t)sb.st_size;
	uint8_t *d = malloc(n ? n : 1);
	if (!d) {
		close(fd);
		return fail(&r, NW_READ_ERR_NOMEM, "out of memory"), r.failed;
	}
	size_t have = 0;
	while (have < n) {
		ssize_t k = pread(fd, d + have, n - have, (off_t)have);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		have += (size_t)k;
	}
	close(fd);
	int rc = nw_summary_read_bytes(d, have, path, in, lock, procs, nprocs, err);
	free(d);
	return rc;
}
