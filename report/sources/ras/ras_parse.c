/* ras_parse: NCCL's RAS report, JSON (2.28.7+) or text, into struct
 * nw_ras_report; saved reports (`ncclwatch ras --save`). The report is
 * untrusted: every field is checked for its type and range, and anything
 * else is one message naming the source and the place. */
#include "ras_client.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "ras_cut.h"

#define MAX_ITEMS (1u << 22)   /* comms x ranks in one report: far beyond any job */

static void set_err(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

void nw_ras_report_free(struct nw_ras_report *r)
{
	for (size_t i = 0; i < r->ncomms; i++) {
		free(r->comms[i].ranks);
		free(r->comms[i].missing);
	}
	free(r->comms);
	free(r->raw);
	memset(r, 0, sizeof *r);
}

static int keep_raw(struct nw_ras_report *r, const char *text, size_t len)
{
	r->raw = malloc(len + 1);
	if (!r->raw) return -1;
	memcpy(r->raw, text, len);
	r->raw[len] = 0;
	r->raw_len = len;
	return 0;
}

/* NCCL 2.28.7 and 2.28.9 write a missing rank's "nvml_dev" without the comma
 * before its "status" (jsonWriteMissingRank; fixed in 2.29.2): put it back,
 * and nothing else, so that a strict parser reads the report. */
static char *repair_json(const char *text, size_t len, size_t *outlen)
{
	static const char key[] = "\"nvml_dev\":";
	size_t extra = 0;
	for (const char *p = text; (p = memmem(p, len - (size_t)(p - text), key, sizeof key - 1)); p++) extra++;
	char *out = malloc(len + extra + 1);
	if (!out) return NULL;
	size_t o = 0, i = 0;
	while (i < len) {
		if (len - i >= sizeof key - 1 && !memcmp(text + i, key, sizeof key - 1)) {
			memcpy(out + o, key, sizeof key - 1);
			o += sizeof key - 1;
			i += sizeof key - 1;
			while (i < len && (text[i] == ' ' || text[i] == '-' || (text[i] >= '0' && text[i] <= '9'))) out[o++] = text[i++];
			size_t j = i;
			while (j < len && (text[j] == ' ' || text[j] == '\n' || text[j] == '\r' || text[j] == '\t')) j++;
			if (j < len && text[j] == '"') out[o++] = ',';
			continue;
		}
		out[o++] = text[i++];
	}
	out[o] = 0;
	*outlen = o;
	return out;
}

/* ---- typed field access with messages ---- */
struct ctx { const char *name; char *err; size_t errlen; char where[160]; };

static int get_int(struct ctx *c, json_t *obj, const char *key, int required, long long lo, long long hi, long long *v)
{
	json_t *x = json_object_get(obj, key);
	if (!x) {
		if (!required) return 0;
		set_err(c->err, c->errlen, "%s: %s: no \"%s\"", c->name, c->where, key);
		return -1;
	}
	if (!json_is_integer(x) || json_integer_value(x) < lo || json_integer_value(x) > hi) {
		set_err(c->err, c->errlen, "%s: %s: \"%s\" is not an integer in [%lld, %lld]", c->name, c->where, key, lo, hi);
		return -1;
	}
	*v = json_integer_value(x);
	return 0;
}

static int get_bool(struct ctx *c, json_t *obj, const char *key, int *v)
{
	json_t *x = json_object_get(obj, key);
	if (!x) return 0;
	if (!json_is_boolean(x)) {
		set_err(c->err, c->errlen, "%s: %s: \"%s\" is not true or false", c->name, c->where, key);
		return -1;
	}
	*v = json_is_true(x);
	return 0;
}

static int get_str(struct ctx *c, json_t *obj, const char *key, char *buf, size_t len)
{
	json_t *x = json_object_get(obj, key);
	if (!x) return 0;
	if (!json_is_string(x)) {
		set_err(c->err, c->errlen, "%s: %s: \"%s\" is not a string", c->name, c->where, key);
		return -1;
	}
	snprintf(buf, len, "%s", json_string_value(x));
	return 0;
}

static int rank_of(struct ctx *c, json_t *e, int *rank, char *host, size_t hlen, int *pid, int *cdev, int *ndev)
{
	long long v;
	if (!json_is_object(e)) { set_err(c->err, c->errlen, "%s: %s: not an object", c->name, c->where); return -1; }
	if (get_int(c, e, "rank", 1, 0, 1 << 30, &v)) return -1;
	*rank = (int)v;
	if (get_str(c, e, "host", host, hlen)) return -1;
	v = -1;
	if (get_int(c, e, "pid", 0, -1, 1 << 30, &v)) return -1;
	*pid = (int)v;
	v = -1;
	if (get_int(c, e, "cuda_dev", 0, -1, 1 << 16, &v)) return -1;
	*cdev = (int)v;
	v = -1;
	if (get_int(c, e, "nvml_dev", 0, -1, 1 << 16, &v)) return -1;
	*ndev = (int)v;
	return 0;
}

/* One item of a communicator's "ranks" (c->where names it). */
static int parse_rank(struct ctx *c, json_t *e, struct nw_ras_rank *r)
{
	long long v;
	memset(r, 0, sizeof *r);
	if (rank_of(c, e, &r->rank, r->host, sizeof r->host, &r->pid, &r->cuda_dev, &r->nvml_dev)) return -1;
	json_t *st = json_object_get(e, "status"), *cc = json_object_get(e, "collective_counts");
	if ((st && !json_is_object(st)) || (cc && !json_is_object(cc))) {
		set_err(c->err, c->errlen, "%s: %s: \"status\" or \"collective_counts\" is not an object", c->name, c->where);
		return -1;
	}
	if (st) {
		if (get_int(c, st, "init_state", 0, 0, 255, &v)) return -1;
		else if (json_object_get(st, "init_state")) r->init_state = (int)v;
		if (get_int(c, st, "async_error", 0, 0, 255, &v)) return -1;
		else if (json_object_get(st, "async_error")) r->async_error = (int)v;
		if (get_bool(c, st, "finalize_called", &r->finalize_called) || get_bool(c, st, "destroy_flag", &r->destroy_flag) ||
		    get_bool(c, st, "abort_flag", &r->abort_flag))
			return -1;
	}
	if (cc) {
		for (int f = 0; f < NW_RAS_NFUNCS; f++) {
			json_t *x = json_object_get(cc, nw_ras_func_names[f]);
			if (!x) continue;
			if (!json_is_integer(x) || json_integer_value(x) < 0) {
				set_err(c->err, c->errlen, "%s: %s: count \"%s\" is not a number >= 0", c->name, c->where, nw_ras_func_names[f]);
				return -1;
			}
			r->counts[f] = (uint64_t)json_integer_value(x);
		}
		r->counts_known = 1;
	}
	return 0;
}

/* One item of a communicator's "missing_ranks". */
static int parse_missing(struct ctx *c, json_t *e, struct nw_ras_missing *m)
{
	memset(m, 0, sizeof *m);
	if (rank_of(c, e, &m->rank, m->host, sizeof m->host, &m->pid, &m->cuda_dev, &m->nvml_dev)) return -1;
	json_t *st = json_object_get(e, "status");
	if (st && !json_is_object(st)) { set_err(c->err, c->errlen, "%s: %s: \"status\" is not an object", c->name, c->where); return -1; }
	if (st && (get_bool(c, st, "unresponsive", &m->unresponsive) || get_bool(c, st, "considered_dead", &m->dead))) return -1;
	return 0;
}

/* Room for item n of an array of n items (size bytes each): it doubles
 * when n is a power of two (so its capacity needs no field). */
static void *grow(void **arr, size_t n, size_t size)
{
	if (n && (n & (n - 1)))
		return (char *)*arr + n * size;
	void *a = realloc(*arr, (n ? 2 * n : 1) * size);
	if (!a) return NULL;
	*arr = a;
	return (char *)a + n * size;
}

/* The report being read, and what is left of MAX_ITEMS. */
struct json_read {
	struct ctx *c;
	struct nw_ras_report *out;
	size_t budget;
};

/* communicators[i] exists (zeroed) in out->comms. */
static int comm_slot(struct json_read *jr, size_t i)
{
	struct nw_ras_report *out = jr->out;
	if (i < out->ncomms) return 0;
	if (i >= MAX_ITEMS) { set_err(jr->c->err, jr->c->errlen, "%s: too many communicators", jr->c->name); return -1; }
	struct nw_ras_comm *n = realloc(out->comms, (i + 1) * sizeof *n);
	if (!n) { set_err(jr->c->err, jr->c->errlen, "%s: out of memory", jr->c->name); return -1; }
	memset(n + out->ncomms, 0, (i + 1 - out->ncomms) * sizeof *n);
	out->comms = n;
	out->ncomms = i + 1;
	return 0;
}

/* Item `index` of communicators[comm].ranks or .missing_ranks (a parsed
 * piece, or an item of the skeleton's tree) appended to out. */
static int add_item(struct json_read *jr, size_t comm, int missing, size_t index, json_t *e)
{
	struct ctx *c = jr->c;
	if (!jr->budget) { set_err(c->err, c->errlen, "%s: too many ranks", c->name); return -1; }
	jr->budget--;
	if (comm_slot(jr, comm)) return -1;
	struct nw_ras_comm *rc = &jr->out->comms[comm];
	snprintf(c->where, sizeof c->where, "communicators[%zu], %s[%zu]", comm, missing ? "missing_ranks" : "ranks", index);
	void *slot = missing ? grow((void **)&rc->missing, rc->nmissing, sizeof *rc->missing)
	                     : grow((void **)&rc->ranks, rc->nranks, sizeof *rc->ranks);
	if (!slot) { set_err(c->err, c->errlen, "%s: out of memory", c->name); return -1; }
	if (missing ? parse_missing(c, e, slot) : parse_rank(c, e, slot)) return -1;
	if (missing) rc->nmissing++;
	else rc->nranks++;
	return 0;
}

/* nw_ras_cut's item(): the piece parsed on its own. */
static int cut_item(void *arg, size_t comm, int missing, size_t index, const char *text, size_t len, size_t line)
{
	struct json_read *jr = arg;
	size_t flen = 0;
	char *fixed = repair_json(text, len, &flen);
	if (!fixed) { set_err(jr->c->err, jr->c->errlen, "%s: out of memory", jr->c->name); return -1; }
	json_error_t je;
	json_t *e = json_loadb(fixed, flen, JSON_REJECT_DUPLICATES, &je);
	free(fixed);
	if (!e) {
		set_err(jr->c->err, jr->c->errlen, "%s: not a RAS JSON report: %s (line %zu)", jr->c->name, je.text,
		        line + (size_t)(je.line > 0 ? je.line - 1 : 0));
		return -1;
	}
	int rc = add_item(jr, comm, missing, index, e);
	json_decref(e);
	return rc;
}

static int parse_comm(struct json_read *jr, size_t i, json_t *jc)
{
	struct ctx *c = jr->c;
	struct nw_ras_comm *out = &jr->out->comms[i];
	long long v;
	snprintf(c->where, sizeof c->where, "communicators[%zu]", i);
	if (!json_is_object(jc)) { set_err(c->err, c->errlen, "%s: %s: not an object", c->name, c->where); return -1; }
	char hash[40] = "";
	if (get_str(c, jc, "hash", hash, sizeof hash)) return -1;
	char *end = NULL;
	errno = 0;
	out->hash = strtoull(hash, &end, 16);
	if (!hash[0] || errno || *end) {
		set_err(c->err, c->errlen, "%s: %s: \"hash\" is not a hexadecimal number", c->name, c->where);
		return -1;
	}
	if (get_str(c, jc, "secondary_hash", out->secondary, sizeof out->secondary)) return -1;
	if (get_int(c, jc, "size", 1, 1, 1 << 30, &v)) return -1;
	out->size = (int)v;
	json_t *ranks = json_object_get(jc, "ranks"), *missing = json_object_get(jc, "missing_ranks");
	if (!json_is_array(ranks) || (missing && !json_is_array(missing))) {
		set_err(c->err, c->errlen, "%s: %s: \"ranks\" or \"missing_ranks\" is not a list", c->name, c->where);
		return -1;
	}
	/* items the cutter left in the tree (a key written with escapes):
	 * after those it cut, of which there are then none */
	size_t i0 = out->nranks, m0 = out->nmissing;
	for (size_t k = 0; k < json_array_size(ranks); k++)
		if (add_item(jr, i, 0, i0 + k, json_array_get(ranks, k))) return -1;
	for (size_t k = 0; missing && k < json_array_size(missing); k++)
		if (add_item(jr, i, 1, m0 + k, json_array_get(missing, k))) return -1;
	return 0;
}

/* The report at text (its items cut out and read one at a time: ras_cut.h),
 * into out; out->raw is left to the caller. */
static int parse_json(const char *name, const char *text, size_t len, struct nw_ras_report *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	struct ctx c = { .name = name, .err = err, .errlen = errlen };
	struct json_read jr = { .c = &c, .out = out, .budget = MAX_ITEMS };
	char *skel = NULL;
	size_t slen = 0;
	if (nw_ras_cut(name, text, len, cut_item, &jr, &skel, &slen, err, errlen)) {
		nw_ras_report_free(out);
		return -1;
	}
	size_t flen = 0;
	char *fixed = repair_json(skel, slen, &flen);
	free(skel);
	if (!fixed) { set_err(err, errlen, "%s: out of memory", name); nw_ras_report_free(out); return -1; }
	json_error_t je;
	json_t *root = json_loadb(fixed, flen, JSON_REJECT_DUPLICATES, &je);
	free(fixed);
	if (!root) {
		set_err(err, errlen, "%s: not a RAS JSON report: %s (line %d)", name, je.text, je.line);
		nw_ras_report_free(out);
		return -1;
	}
	snprintf(c.where, sizeof c.where, "the report");
	long long v;
	json_t *comms = json_object_get(root, "communicators");
	if (!json_is_object(root) || !json_is_array(comms) || !json_object_get(root, "nccl_version")) {
		set_err(err, errlen, "%s: not a RAS JSON report: no \"nccl_version\" and \"communicators\"", name);
		goto fail;
	}
	if (get_str(&c, root, "nccl_version", out->nccl_version, sizeof out->nccl_version) ||
	    get_str(&c, root, "timestamp", out->timestamp, sizeof out->timestamp))
		goto fail;
	if (get_int(&c, root, "cuda_runtime_version", 0, -1, 1 << 30, &v)) goto fail;
	out->cuda_runtime_version = json_object_get(root, "cuda_runtime_version") ? (int)v : -1;
	if (get_int(&c, root, "cuda_driver_version", 0, -1, 1 << 30, &v)) goto fail;
	out->cuda_driver_version = json_object_get(root, "cuda_driver_version") ? (int)v : -1;
	json_t *ras = json_object_get(root, "ras");
	if (json_is_object(ras)) {
		json_t *t = json_object_get(ras, "collection_time_sec");
		if (json_is_number(t)) out->collection_time_s = json_number_value(t);
		if (get_int(&c, ras, "timeouts_count", 0, 0, 1 << 30, &v)) goto fail;
		if (json_object_get(ras, "timeouts_count")) out->timeouts = (int)v;
	}
	size_t n = json_array_size(comms);
	if (n && comm_slot(&jr, n - 1)) goto fail;
	for (size_t i = 0; i < n; i++)
		if (parse_comm(&jr, i, json_array_get(comms, i))) goto fail;
	json_decref(root);
	return 0;
fail:
	json_decref(root);
	nw_ras_report_free(out);
	return -1;
}

int nw_ras_parse_json(const char *name, const char *text, size_t len, struct nw_ras_report *out, char *err, size_t errlen)
{
	if (parse_json(name, text, len, out, err, errlen)) return -1;
	if (keep_raw(out, text, len)) { set_err(err, errlen, "%s: out of memory", name); nw_ras_report_free(out); return -1; }
	return 0;
}

/* ---- the text format (NCCL before 2.28.7, or a server refusing JSON) ---- */
#define MAX_TEXT_RANKS 65536  /* communicators, or ranks of one, listed by name: NCCL lists outliers only
                               * (at most 10; verbose: under half the ranks) */
static struct nw_ras_comm *text_comm(struct nw_ras_report *r, uint64_t hash)
{
	for (size_t i = 0; i < r->ncomms; i++) if (r->comms[i].hash == hash) return &r->comms[i];
	if (r->ncomms >= MAX_TEXT_RANKS) return NULL;
	struct nw_ras_comm *n = realloc(r->comms, (r->ncomms + 1) * sizeof *n);
	if (!n) return NULL;
	r->comms = n;
	struct nw_ras_comm *c = &r->comms[r->ncomms++];
	memset(c, 0, sizeof *c);
	c->hash = hash;
	return c;
}

static struct nw_ras_rank *text_rank(struct nw_ras_comm *c, int rank)
{
	for (size_t i = 0; i < c->nranks; i++) if (c->ranks[i].rank == rank) return &c->ranks[i];
	if (c->nranks >= MAX_TEXT_RANKS) return NULL;
	struct nw_ras_rank *n = realloc(c->ranks, (c->nranks + 1) * sizeof *n);
	if (!n) return NULL;
	c->ranks = n;
	struct nw_ras_rank *r = &c->ranks[c->nranks++];
	memset(r, 0, sizeof *r);
	r->rank = rank;
	r->pid = -1;
	return r;
}

static int text_error_code(const char *s)
{
	static const char *const names[] = { "", "Unhandled CUDA error", "System error", "Internal error",
		"Invalid argument", "Invalid usage", "Remote process error", "NCCL operation in progress" };
	for (int i = 1; i < 8; i++) if (!strncmp(s, names[i], strlen(names[i]))) return i;
	return 8;
}

/* "... -- GPU g managed by process P on node H" */
static void text_where(const char *line, int *pid, char *host, size_t hlen)
{
	const char *p = strstr(line, " managed by process ");
	if (p && sscanf(p, " managed by process %d", pid) == 1) {
		const char *h = strstr(p, " on node ");
		if (h) snprintf(host, hlen, "%s", h + 9);
	}
}

/* The text report's reading so far: the section and communicator a line
 * belongs to, and what the lines before it said. */
struct tread {
	struct nw_ras_report *out;
	struct nw_ras_comm *cur;
	int section;                  /* 1 Errors, 2 Warnings */
	int what;                     /* of cur: 1 INCOMPLETE, 2 ERROR, 3 MISMATCH */
	int func, async, err_code, have_val, saw_version;
	uint64_t val;
	int group_size[64];           /* the summary table: "Ranks per comm" of each group */
};

enum { T_OK = 0, T_NOMEM = -1, T_TOO_MANY = -2 };

/* A line outside a communicator's list: versions, section heads, the
 * summary table, a communicator's head, process counts. 1 when it was
 * one of those, 0 not, T_TOO_MANY. */
static int text_frame_line(struct tread *t, const char *line)
{
	struct nw_ras_report *out = t->out;
	unsigned long long h;
	int g, k, n, cnt, nodes, per_comm, in_group;
	char rpn[32], st[32], er[64], kind[32];
	if (sscanf(line, "NCCL version %31s", out->nccl_version) == 1) { t->saw_version = 1; return 1; }
	if (sscanf(line, "CUDA runtime version %d, driver version %d", &out->cuda_runtime_version, &out->cuda_driver_version) == 2)
		return 1;
	if (!strcmp(line, "Errors")) { t->section = 1; t->cur = NULL; return 1; }
	if (!strcmp(line, "Warnings")) { t->section = 2; t->cur = NULL; return 1; }
	if (!t->section && sscanf(line, "%d %d %d %31s %d %d %31s %63s", &g, &cnt, &nodes, rpn, &per_comm, &in_group, st, er) == 8) {
		if (g >= 0 && g < 64) t->group_size[g] = per_comm;
		return 1;
	}
	if (t->section && sscanf(line, "#%d-%d (%llx) %31s", &g, &k, &h, kind) == 4) {
		if (!(t->cur = text_comm(out, h))) return T_TOO_MANY;
		if (g >= 0 && g < 64 && !t->cur->size) t->cur->size = t->group_size[g];
		t->what = !strcmp(kind, "INCOMPLETE") ? 1 : !strcmp(kind, "ERROR") ? 2 : 3;
		t->func = -1;
		t->have_val = 0;
		return 1;
	}
	if (t->section == 1 && sscanf(line, "  %d job process", &n) == 1 && strstr(line, "considered dead")) { out->dead_processes = n; return 1; }
	if (t->section == 1 && !t->cur && sscanf(line, "  Missing communicator data from %d job process", &n) == 1) { out->missing_processes = n; return 1; }
	return 0;
}

/* ERROR: "Initialization|Asynchronous error(s) on N ranks", "N ranks
 * reported E", rank lines. */
static int text_error_line(struct tread *t, const char *line)
{
	int n, rank;
	if (strstr(line, "Asynchronous error")) { t->async = 1; t->err_code = 0; return T_OK; }
	if (strstr(line, "Initialization error")) { t->async = 0; t->err_code = 0; return T_OK; }
	const char *rep = strstr(line, " reported ");
	if (sscanf(line, "  %d ranks reported", &n) == 1 && rep) { t->err_code = text_error_code(rep + 10); return T_OK; }
	if (sscanf(line, "  Rank %d", &rank) != 1) return T_OK;
	int e = rep ? text_error_code(rep + 10) : t->err_code;
	if (!e) return T_OK;
	struct nw_ras_rank *r = text_rank(t->cur, rank);
	if (!r) return T_TOO_MANY;
	if (t->async) r->async_error = e;
	else r->init_state = e;
	text_where(line, &r->pid, r->host, sizeof r->host);
	return T_OK;
}

/* INCOMPLETE: the ranks whose process did not answer. */
static int text_incomplete_line(struct tread *t, const char *line)
{
	struct nw_ras_comm *cur = t->cur;
	int rank;
	if (sscanf(line, "  Rank %d", &rank) != 1) return T_OK;
	if (cur->nmissing >= MAX_TEXT_RANKS) return T_TOO_MANY;
	struct nw_ras_missing *m = realloc(cur->missing, (cur->nmissing + 1) * sizeof *m);
	if (!m) return T_NOMEM;
	cur->missing = m;
	m = &cur->missing[cur->nmissing++];
	memset(m, 0, sizeof *m);
	m->rank = rank;
	m->pid = -1;
	m->unresponsive = 1;
	text_where(line, &m->pid, m->host, sizeof m->host);
	return T_OK;
}

/* MISMATCH: which function's counts differ, the groups of ranks at one
 * count (largest first: the first is the majority), each rank's count. */
static int text_mismatch_line(struct tread *t, const char *line)
{
	struct nw_ras_comm *cur = t->cur;
	unsigned long long count;
	int n, rank;
	char fname[32];
	if (sscanf(line, "  Communicator ranks have different %31s operation counts", fname) == 1) {
		t->func = -1;
		t->have_val = 0;
		for (int f = 0; f < NW_RAS_NFUNCS; f++) if (!strcmp(fname, nw_ras_func_names[f])) t->func = f;
		return T_OK;
	}
	if (strstr(line, "Communicator ranks have different status")) { t->func = -1; return T_OK; }
	if (t->func < 0) return T_OK;
	int group = 0;
	if (sscanf(line, "  %d ranks have launched up to operation %llu", &n, &count) == 2) group = 1;
	else if (sscanf(line, "  %d ranks have not launched any operations", &n) == 1) { count = 0; group = 1; }
	if (group) {
		if (!cur->text_majority_ranks[t->func]) {
			cur->text_majority_ranks[t->func] = n;
			cur->text_majority[t->func] = count;
		}
		t->val = count;
		t->have_val = 1;
		return T_OK;
	}
	if (sscanf(line, "  Rank %d", &rank) != 1) return T_OK;
	const char *p = strstr(line, "has launched up to operation ");
	uint64_t v;
	if (p) v = strtoull(p + 29, NULL, 10);
	else if (strstr(line, "has not launched any operations")) v = 0;
	else if (t->have_val && strstr(line, " -- ")) v = t->val;   /* "Rank R -- GPU ..." under a group line */
	else return T_OK;
	struct nw_ras_rank *r = text_rank(cur, rank);
	if (!r) return T_TOO_MANY;
	r->counts[t->func] = v;
	r->counts_known = 1;
	text_where(line, &r->pid, r->host, sizeof r->host);
	return T_OK;
}

/* One non-empty line of the text report. */
static int text_line(struct tread *t, const char *line)
{
	int rc = text_frame_line(t, line);
	if (rc)
		return rc < 0 ? rc : T_OK;
	if (!t->cur)
		return T_OK;
	return t->what == 2 ? text_error_line(t, line) : t->what == 1 ? text_incomplete_line(t, line)
	                                                              : text_mismatch_line(t, line);
}

/* The text report into out, line by line (each copied alone: the text is
 * read in place); out->raw is left to the caller. */
static int parse_text(const char *name, const char *text, size_t len, struct nw_ras_report *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	out->from_text = 1;
	out->cuda_runtime_version = out->cuda_driver_version = -1;
	struct tread t = { .out = out, .func = -1 };
	char *line = NULL;
	size_t lcap = 0, tlen = strnlen(text, len);   /* up to a NUL, as C strings go */
	int rc = T_OK;
	for (size_t pos = 0; pos < tlen && rc == T_OK;) {
		const char *nl = memchr(text + pos, '\n', tlen - pos);
		size_t ll = nl ? (size_t)(nl - (text + pos)) : tlen - pos;
		if (ll + 1 > lcap) {
			char *b = realloc(line, ll + 1 > 256 ? ll + 1 : 256);
			if (!b) { rc = T_NOMEM; break; }
			line = b;
			lcap = ll + 1 > 256 ? ll + 1 : 256;
		}
		memcpy(line, text + pos, ll);
		line[ll] = 0;
		pos += ll + (nl != NULL);
		if (ll)   /* empty lines say nothing */
			rc = text_line(&t, line);
	}
	free(line);
	if (rc == T_NOMEM)
		set_err(err, errlen, "%s: out of memory", name);
	else if (rc == T_TOO_MANY)
		set_err(err, errlen, "%s: more than %d communicators or ranks of one listed: not NCCL's text report", name, MAX_TEXT_RANKS);
	else if (!t.saw_version)
		set_err(err, errlen, "%s: not a RAS report: no \"NCCL version\" line", name);
	if (rc != T_OK || !t.saw_version) {
		nw_ras_report_free(out);
		return -1;
	}
	return 0;
}

int nw_ras_parse_text(const char *name, const char *text, size_t len, struct nw_ras_report *out, char *err, size_t errlen)
{
	if (parse_text(name, text, len, out, err, errlen)) return -1;
	if (keep_raw(out, text, len)) { set_err(err, errlen, "%s: out of memory", name); nw_ras_report_free(out); return -1; }
	return 0;
}

static int is_json(const char *text, size_t len)
{
	size_t i = 0;
	while (i < len && (text[i] == ' ' || text[i] == '\n' || text[i] == '\r' || text[i] == '\t')) i++;
	return i < len && text[i] == '{';
}

int nw_ras_parse(const char *name, const char *text, size_t len, struct nw_ras_report *out, char *err, size_t errlen)
{
	return (is_json(text, len) ? nw_ras_parse_json : nw_ras_parse_text)(name, text, len, out, err, errlen);
}

int nw_ras_parse_owned(const char *name, char *buf, size_t len, int json, struct nw_ras_report *out, char *err,
                       size_t errlen)
{
	if (json < 0) json = is_json(buf, len);
	if ((json ? parse_json : parse_text)(name, buf, len, out, err, errlen)) {
		free(buf);
		return -1;
	}
	out->raw = buf;   /* read in place: it is the report as received */
	out->raw_len = len;
	return 0;
}

int nw_ras_load_file(const char *path, struct nw_ras_report *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	FILE *f = fopen(path, "re");
	if (!f) { set_err(err, errlen, "%s: %s", path, strerror(errno)); return -1; }
	struct stat st;
	if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode) || st.st_size > (off_t)NW_RAS_DEFAULT_MAX_BYTES) {
		set_err(err, errlen, "%s: not a regular file of at most %u bytes", path, NW_RAS_DEFAULT_MAX_BYTES);
		fclose(f);
		return -1;
	}
	size_t len = (size_t)st.st_size;
	char *buf = malloc(len + 1);
	if (!buf) { fclose(f); set_err(err, errlen, "%s: out of memory", path); return -1; }
	size_t n = fread(buf, 1, len, f);
	fclose(f);
	buf[n] = 0;
	int rc = nw_ras_parse_owned(path, buf, n, -1, out, err, errlen);
	if (!rc) snprintf(out->addr, sizeof out->addr, "%s", path);
	return rc;
}

int nw_ras_is_report_file(const char *path)
{
	char buf[512];
	FILE *f = fopen(path, "re");
	if (!f) return 0;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	size_t i = 0;
	while (i < n && (buf[i] == ' ' || buf[i] == '\n' || buf[i] == '\r' || buf[i] == '\t')) i++;
	/* NCCL writes "nccl_version" ... "communicators_count" first (a Flight
	 * Recorder dump has "comm_lib_version" and no communicators_count) */
	if (i < n && buf[i] == '{') return strstr(buf, "\"nccl_version\"") && strstr(buf, "\"communicators_count\"");
	return !strncmp(buf + i, "NCCL version ", 13);   /* the text format */
}
