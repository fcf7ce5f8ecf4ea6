/* load_fr: one Flight Recorder dump -> one process of the engine's model.
 * docs/flight-recorder.md says which field of which version goes where;
 * in short:
 *   pg_config {name: {name, desc, ranks}}  -> a comm per process group that
 *       holds this rank, id = hash(name, desc, ranks) (the same on every rank)
 *   entries[]  -> ops: profiling_name -> kind (and peer for send/recv),
 *       collective_seq_id -> the comm's collective seq, send/recv numbered
 *       per peer in the order kept, sizes/dtypes -> count/datatype, state
 *       scheduled/started/completed -> ENQUEUED/STARTED/COMPLETED, times,
 *       frames -> the op's call site
 *   comm_lib_version -> the NCCL version; version -> refused unless known.
 * The rank: from the entries when a send/recv names it ("nccl:send 3->4" is
 * sent by group rank 3), else from the file name's trailing number (torch
 * writes <prefix><rank>); a dump holds no other trace of it. */
#include "../sources.h"
#include "fr.h"
#include "pickle.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FR_MAX_FILE (1ull << 30)
#define FR_MAX_RANKS (1 << 24)
#define FR_MINOR_MAX 10          /* versions "2.0" .. "2.10" are known */

int nw_fr_json_parse(const uint8_t *d, size_t n, struct nw_pickle *out, char err[NW_PICKLE_ERR_LEN]);

static int fail(struct nw_read_error *err, int code, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(struct nw_read_error *err, int code, const char *name, const char *fmt, ...)
{
	if (!err)
		return code;
	memset(err, 0, sizeof *err);
	err->code = code;
	int n = snprintf(err->message, sizeof err->message, "%s: ", name);
	va_list ap;
	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof err->message)
		vsnprintf(err->message + n, sizeof err->message - (size_t)n, fmt, ap);
	va_end(ap);
	/* One line whatever the dump holds: its strings (a version, a key) may
	 * carry control characters. */
	for (char *c = err->message; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	return code;
}

/* ---- sniffing ---- */

int nw_fr_sniff_bytes(const uint8_t *d, size_t n)
{
	if (n >= 2 && d[0] == 0x80 && d[1] >= 2 && d[1] <= 5) {
		/* torch's pickler and Python's both put the dict's first keys early;
		 * a dump's first key is "version" (pickle) or "entries" ... */
		static const char *keys[] = { "version", "entries", "pg_config", "comm_lib_version" };
		for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
			if (memmem(d, n < 256 ? n : 256, keys[k], strlen(keys[k])))
				return NW_FR_PICKLE;
		return NW_FR_NOT;
	}
	size_t i = 0;
	while (i < n && (d[i] == ' ' || d[i] == '\n' || d[i] == '\t' || d[i] == '\r'))
		i++;
	if (i >= n || d[i] != '{')
		return NW_FR_NOT;
	i++;
	while (i < n && (d[i] == ' ' || d[i] == '\n' || d[i] == '\t' || d[i] == '\r'))
		i++;
	static const char *jkeys[] = { "\"comm_lib_version\"", "\"entries\"", "\"nccl_comm_state\"",
	                               "\"pg_config\"", "\"pg_status\"", "\"version\"" };
	for (size_t k = 0; k < sizeof jkeys / sizeof *jkeys; k++) {
		size_t l = strlen(jkeys[k]);
		if (n - i >= l && !memcmp(d + i, jkeys[k], l))
			return NW_FR_JSON;
	}
	return NW_FR_NOT;
}

int nw_fr_sniff(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return NW_FR_NOT;
	uint8_t b[256];
	ssize_t n = pread(fd, b, sizeof b, 0);
	close(fd);
	return n > 0 ? nw_fr_sniff_bytes(b, (size_t)n) : NW_FR_NOT;
}

/* ---- small helpers ---- */

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *s = p;
	for (size_t i = 0; i < n; i++) {
		h ^= s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* A str value (or ""), its length in *len. */
static const char *sv(const struct nw_pv *v, size_t *len)
{
	if (v && v->type == NW_PV_STR) {
		*len = v->u.str.len;
		return v->u.str.s;
	}
	*len = 0;
	return "";
}

/* nw_pv_int, with its common case (an int) inlined: a dump has a dozen
 * ints per entry. */
static inline int64_t pv_int(const struct nw_pv *v, int64_t dflt)
{
	return v && v->type == NW_PV_INT ? v->u.i : nw_pv_int(v, dflt);
}

/* nw_pv_is_str with the length known. */
#define PV_IS(v, lit) ((v) && (v)->type == NW_PV_STR && (v)->u.str.len == sizeof lit - 1 && \
                       !memcmp((v)->u.str.s, lit, sizeof lit - 1))

static void copy_str(char *dst, size_t cap, const struct nw_pv *v)
{
	nw_pv_cstr(v, dst, cap);
}

/* "[0, 1, 2]" (ranks_str) or a list of ints -> ranks[]. -1 malformed. */
static int parse_ranks(const struct nw_pv *v, int32_t **out, uint32_t *n)
{
	*out = NULL;
	*n = 0;
	if (!v)
		return 0;
	size_t cap = 0;
	if (v->type == NW_PV_LIST || v->type == NW_PV_TUPLE) {
		if (v->n > FR_MAX_RANKS)
			return -1;
		*out = malloc((v->n ? v->n : 1) * sizeof **out);
		if (!*out)
			return -1;
		for (uint32_t i = 0; i < v->n; i++) {
			int64_t r = pv_int(v->u.items[i], -1);
			if (r < 0 || r >= FR_MAX_RANKS)
				return -1;
			(*out)[(*n)++] = (int32_t)r;
		}
		return 0;
	}
	size_t len;
	const char *s = sv(v, &len), *end = s + len;
	while (s < end) {
		if (*s >= '0' && *s <= '9') {
			int64_t r = 0;
			while (s < end && *s >= '0' && *s <= '9' && r < FR_MAX_RANKS)
				r = r * 10 + (*s++ - '0');
			if (r >= FR_MAX_RANKS)
				return -1;
			if (*n == cap) {
				cap = cap ? cap * 2 : 16;
				int32_t *t = realloc(*out, cap * sizeof *t);
				if (!t)
					return -1;
				*out = t;
			}
			(*out)[(*n)++] = (int32_t)r;
		} else if (*s == '[' || *s == ']' || *s == ',' || *s == ' ') {
			s++;
		} else {
			return -1;
		}
	}
	return 0;
}

/* ---- rank lists shared by every dump of a job ----
 *
 * Every rank's dump holds the same pg_config, and the default group's
 * ranks string names every rank: parsing and hashing it again per file
 * would make reading N dumps cost N^2. The cache keeps each distinct
 * string once (compared byte for byte), parsed, with its hash. */

#define FR_CACHE_MAX 65536           /* distinct strings kept, at most */
#define FR_CACHE_BUCKETS 4096

struct fr_rl {
	struct fr_rl *next;                /* of its bucket; never changed once added */
	uint64_t key;                      /* rl_key of the string */
	char *bytes;
	size_t len;
	int32_t *ranks;
	uint32_t nranks;
	int identity;                      /* ranks[i] == i */
	uint64_t hash;
};

struct fr_ws;

struct nw_fr_cache {
	pthread_mutex_t lock;
	struct fr_rl *bucket[FR_CACHE_BUCKETS];
	size_t n;
	struct fr_ws *ws;                  /* readers' memory, pooled (below) */
};

static void ws_free(struct fr_ws *w);
static struct fr_ws *ws_next(struct fr_ws *w);

struct nw_fr_cache *nw_fr_cache_new(void)
{
	struct nw_fr_cache *c = calloc(1, sizeof *c);
	if (c && pthread_mutex_init(&c->lock, NULL) != 0) {
		free(c);
		return NULL;
	}
	return c;
}

void nw_fr_cache_free(struct nw_fr_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < FR_CACHE_BUCKETS; i++)
		for (struct fr_rl *e = c->bucket[i], *n; e; e = n) {
			n = e->next;
			free(e->bytes);
			free(e->ranks);
			free(e);
		}
	for (struct fr_ws *w = c->ws, *n; w; w = n) {
		n = ws_next(w);
		ws_free(w);
	}
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* ---- what one dump holds ---- */

struct fpg {                          /* a process group of pg_config */
	const struct nw_pv *name, *desc;
	const struct nw_pv *rv;           /* its ranks, as written */
	int32_t *ranks;
	uint32_t nranks;
	int shared;                       /* ranks belong to the cache */
	int identity;                     /* ranks[i] == i */
	uint64_t rhash;                   /* hash of the ranks as written */
	uint64_t id;
	int32_t me;                       /* my group rank, -1 not a member */
	int32_t slot;                     /* comm slot, -1 none */
	uint64_t last_coll;               /* last collective seq made an op */
	size_t last_op;                   /* its index in the ops being built */
};

struct fent {                         /* one entry, parsed */
	int32_t pg;                       /* index into pgs, -1 unknown */
	uint16_t kind;                    /* NW_OP_*, 0 skipped, UINT16_MAX the coalesced marker */
	int32_t src, dst;                 /* send/recv: group ranks as the name says */
	int is_p2p;
	uint64_t coll_seq, p2p_seq;
	uint32_t state;
	uint64_t created, started, completed;
	uint64_t count;
	uint8_t dtype;
	const struct nw_pv *frames;
	uint8_t in_group;
	uint8_t closer;                   /* ends a coalesced group: "coalesced", "ALLGATHER_coalesced", ... */
	uint64_t timeout_ms;
};

struct peerpos {
	uint64_t key;                     /* slot << 32 | peer */
	uint64_t sends, recvs, sends_done, recvs_done, last_ns;
	UT_hash_handle hh;
};

static int32_t find_pg(struct fpg *pgs, uint32_t n, const struct nw_pv *name)
{
	size_t len;
	const char *s = sv(name, &len);
	for (uint32_t i = 0; i < n; i++) {
		size_t l2;
		const char *t = sv(pgs[i].name, &l2);
		if (l2 == len && !memcmp(s, t, len))
			return (int32_t)i;
	}
	return -1;
}

static uint16_t kind_of(const char *t, size_t n, int *p2p)
{
#define KN(s, k) { s, sizeof s - 1, k }
	static const struct { const char *name; size_t len; uint16_t kind; } k[] = {
		KN("all_reduce", NW_OP_ALLREDUCE), KN("allreduce_coalesced", NW_OP_ALLREDUCE),
		KN("all_reduce_barrier", NW_OP_ALLREDUCE), KN("barrier", NW_OP_ALLREDUCE),
		KN("broadcast", NW_OP_BROADCAST), KN("_broadcast_oop", NW_OP_BROADCAST),
		KN("reduce", NW_OP_REDUCE), KN("_reduce_oop", NW_OP_REDUCE),
		KN("all_gather", NW_OP_ALLGATHER), KN("all_gather_single", NW_OP_ALLGATHER),
		KN("all_gather_v", NW_OP_ALLGATHER), KN("_all_gather_base", NW_OP_ALLGATHER),
		KN("all_gather_into_tensor_coalesced", NW_OP_ALLGATHER), KN("ALLGATHER_coalesced", NW_OP_ALLGATHER),
		KN("reduce_scatter", NW_OP_REDUCESCATTER), KN("reduce_scatter_single", NW_OP_REDUCESCATTER),
		KN("reduce_scatter_v", NW_OP_REDUCESCATTER), KN("_reduce_scatter_base", NW_OP_REDUCESCATTER),
		KN("reduce_scatter_tensor_coalesced", NW_OP_REDUCESCATTER),
		KN("REDUCE_SCATTER_coalesced", NW_OP_REDUCESCATTER),
		KN("all_to_all", NW_OP_ALLTOALL), KN("all_to_all_single", NW_OP_ALLTOALL),
		KN("all_to_all_v_single", NW_OP_ALLTOALL), KN("alltoall_base", NW_OP_ALLTOALL),
		KN("gather", NW_OP_GATHER), KN("scatter", NW_OP_SCATTER),
		KN("send", NW_OP_SEND), KN("recv", NW_OP_RECV),
		KN("coalesced", UINT16_MAX),
	};
#undef KN
	*p2p = 0;
	for (size_t i = 0; i < sizeof k / sizeof *k; i++)
		if (k[i].len == n && !memcmp(k[i].name, t, n)) {
			*p2p = k[i].kind == NW_OP_SEND || k[i].kind == NW_OP_RECV;
			return k[i].kind;
		}
	return 0;
}

struct dt_last {                      /* dtype_of's last answer */
	const char *s;
	size_t n;
	uint8_t t;
};

/* c10::toString(ScalarType) -> ncclDataType_t (0xff: none NCCL has). */
static uint8_t dtype_of(const struct nw_pv *v, struct dt_last *last)
{
#define DN(s, t) { s, sizeof s - 1, t }
	static const struct { const char *name; size_t len; uint8_t t; } d[] = {
		DN("Char", 0), DN("Byte", 1), DN("Bool", 1), DN("Int", 2), DN("Long", 4), DN("Half", 6),
		DN("Float", 7), DN("Double", 8), DN("BFloat16", 9), DN("Float8_e4m3fn", 10),
		DN("Float8_e5m2", 11),
		/* torch's own names ("float32"), as its analyzer's tests write them */
		DN("int8", 0), DN("uint8", 1), DN("bool", 1), DN("int32", 2), DN("int64", 4), DN("float16", 6),
		DN("float32", 7), DN("float64", 8), DN("bfloat16", 9),
	};
#undef DN
	if (v && (v->type == NW_PV_LIST || v->type == NW_PV_TUPLE))
		v = v->n ? v->u.items[0] : NULL;
	size_t n;
	const char *s = sv(v, &n);
	/* A pickler writes each dtype string once and refers to it after:
	 * the last one looked up (by address, in this dump) is most often
	 * the next. */
	if (last && s == last->s && n == last->n && n)
		return last->t;
	uint8_t t = 0xff;
	for (size_t i = 0; i < sizeof d / sizeof *d; i++)
		if (d[i].len == n && !memcmp(d[i].name, s, n)) {
			t = d[i].t;
			break;
		}
	if (last)
		*last = (struct dt_last){ s, n, t };
	return t;
}

/* The element count of the first tensor of a sizes list ([[4, 8]] -> 32). */
static uint64_t numel(const struct nw_pv *sizes)
{
	if (!sizes || (sizes->type != NW_PV_LIST && sizes->type != NW_PV_TUPLE) || !sizes->n)
		return 0;
	const struct nw_pv *t = sizes->u.items[0];
	if (!t || (t->type != NW_PV_LIST && t->type != NW_PV_TUPLE))
		return 0;
	uint64_t c = 1;
	for (uint32_t i = 0; i < t->n; i++) {
		int64_t d = pv_int(t->u.items[i], -1);
		if (d < 0)
			return 0;
		if (d && c > UINT64_MAX / (uint64_t)d)
			return UINT64_MAX;
		c *= (uint64_t)d;
	}
	return c;
}

static uint64_t time_of(const struct nw_pv *v)
{
	int64_t t = pv_int(v, 0);
	return t > 0 ? (uint64_t)t : 0;
}

/* "file.py:12 in fn" (the file's base name, as for a segment's call sites): the first frame outside torch's own distributed and
 * module code (the caller's line), else the innermost. */
static int site_of(const struct nw_pv *frames, char *buf, size_t len)
{
	if (!frames || (frames->type != NW_PV_LIST && frames->type != NW_PV_TUPLE) || !frames->n)
		return 0;
	const struct nw_pv *pick = NULL;
	for (uint32_t i = 0; i < frames->n && !pick; i++) {
		char fn[512];
		nw_pv_cstr(nw_pv_get(frames->u.items[i], "filename"), fn, sizeof fn);
		if (!strstr(fn, "torch/distributed/") && !strstr(fn, "torch/nn/") && !strstr(fn, "torch/utils/") &&
		    !strstr(fn, "torch/_") && fn[0])
			pick = frames->u.items[i];
	}
	if (!pick)
		pick = frames->u.items[0];
	char name[128], file[512];
	nw_pv_cstr(nw_pv_get(pick, "name"), name, sizeof name);
	nw_pv_cstr(nw_pv_get(pick, "filename"), file, sizeof file);
	if (!name[0] && !file[0])
		return 0;
	const char *slash = strrchr(file, '/');
	snprintf(buf, len, "%s:%" PRId64 " in %s", slash ? slash + 1 : file, nw_pv_int(nw_pv_get(pick, "line"), 0),
	         name[0] ? name : "?");
	return 1;
}

/* ncclGetVersion's code of "2.21.5" (major*10000+minor*100+patch from 2.9). */
static int32_t nccl_code(const struct nw_pv *v)
{
	char b[32];
	nw_pv_cstr(v, b, sizeof b);
	unsigned x = 0, y = 0, z = 0;
	if (sscanf(b, "%u.%u.%u", &x, &y, &z) < 2 || x > 99 || y > 99 || z > 99)
		return 0;
	return (int32_t)(x > 2 || (x == 2 && y >= 9) ? x * 10000 + y * 100 + z : x * 1000 + y * 100 + z);
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* The trailing number of the file name (torch writes <prefix><rank>), -1 none. */
static int32_t rank_from_name(const char *path)
{
	const char *b = base_name(path), *e = b + strlen(b), *s = e;
	while (s > b && s[-1] >= '0' && s[-1] <= '9')
		s--;
	if (s == e || e - s > 8)
		return -1;
	return (int32_t)strtol(s, NULL, 10);
}

/* The job: the directory the dumps are in ("fr:<dir>"): torch names none. */
static void job_of(const char *path, char *job, size_t len)
{
	const char *b = base_name(path);
	if (b == path) {
		snprintf(job, len, "fr:.");
		return;
	}
	const char *e = b - 1, *s = e;
	while (s > path && s[-1] != '/')
		s--;
	if (s == e)
		snprintf(job, len, "fr:/");
	else
		snprintf(job, len, "fr:%.*s", (int)(e - s), s);
}

static void max_into(uint64_t *m, uint64_t v)
{
	if (v > *m)
		*m = v;
}

/* ---- the loader ---- */

struct build {
	struct nw_fr_cache *cache;
	const char *name;
	struct nw_read_error *err;
	struct fpg *pgs;
	uint32_t npgs;
	struct fent *e;
	uint32_t ne;
	int32_t rank;
	int timing;
	int wrapped;
	char version[16];
};

static void build_free(struct build *b)
{
	for (uint32_t i = 0; i < b->npgs; i++)
		if (!b->pgs[i].shared)
			free(b->pgs[i].ranks);
	free(b->pgs);
	free(b->e);
}

/* A fast hash of a long string (8 bytes a step): the ranks of the
 * default group run to hundreds of KB per dump at scale. */
static uint64_t hash_bytes(const void *p, size_t n)
{
	const uint8_t *s = p;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, s + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	for (; i < n; i++)
		h = (h ^ s[i]) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

static void ranks_facts(struct fpg *g)
{
	g->identity = 1;
	for (uint32_t i = 0; i < g->nranks && g->identity; i++)
		g->identity = g->ranks[i] == (int32_t)i;
}

/* The cache's key of a string: all of a short one, three samples of a
 * long one (its length, start, middle and end): equal keys are compared
 * byte for byte anyway, and a 460 KB list is not hashed again per dump. */
static uint64_t rl_key(const char *s, size_t n)
{
	if (n <= 768)
		return hash_bytes(s, n);
	uint64_t h = hash_bytes(s, 256);
	h = h * 0x100000001b3ull + hash_bytes(s + n / 2 - 128, 256);
	h = h * 0x100000001b3ull + hash_bytes(s + n - 256, 256);
	return h ^ n;
}

/* The entry of this string, or NULL. The byte compare runs outside the
 * lock (entries never change once added), so readers do not queue on it. */
static struct fr_rl *rl_find(struct nw_fr_cache *c, uint64_t key, const char *s, size_t n)
{
	struct fr_rl *e;
	pthread_mutex_lock(&c->lock);
	for (e = c->bucket[key % FR_CACHE_BUCKETS]; e && (e->key != key || e->len != n); e = e->next)
		;
	pthread_mutex_unlock(&c->lock);
	/* Older entries follow e in its bucket and never change. */
	for (; e; e = e->next)
		if (e->key == key && e->len == n && !memcmp(e->bytes, s, n))
			return e;
	return NULL;
}

static void rl_use(struct fpg *g, const struct fr_rl *e)
{
	g->ranks = e->ranks;
	g->nranks = e->nranks;
	g->identity = e->identity;
	g->rhash = e->hash;
	g->shared = 1;
}

static int group_ranks(struct build *b, const struct nw_pv *v, struct fpg *g)
{
	struct nw_fr_cache *c = b->cache;
	int cached = c && v && v->type == NW_PV_STR && v->u.str.len >= 64;
	uint64_t key = cached ? rl_key(v->u.str.s, v->u.str.len) : 0;
	struct fr_rl *e = cached ? rl_find(c, key, v->u.str.s, v->u.str.len) : NULL;
	if (e) {
		rl_use(g, e);
		return 0;
	}
	if (parse_ranks(v, &g->ranks, &g->nranks))
		return fail(b->err, NW_READ_ERR_FORMAT, b->name, "pg_config: the ranks of a process group "
		            "are not a list of ranks");
	ranks_facts(g);
	g->rhash = hash_bytes(g->ranks, g->nranks * sizeof *g->ranks);
	if (!cached)
		return 0;
	/* Keep it for the other dumps; another thread may have added it since. */
	pthread_mutex_lock(&c->lock);
	struct fr_rl **head = &c->bucket[key % FR_CACHE_BUCKETS];
	for (e = *head; e; e = e->next)
		if (e->key == key && e->len == v->u.str.len && !memcmp(e->bytes, v->u.str.s, e->len))
			break;
	if (e) {
		free(g->ranks);
		rl_use(g, e);
	} else if (c->n < FR_CACHE_MAX && (e = calloc(1, sizeof *e))) {
		if ((e->bytes = malloc(v->u.str.len))) {
			memcpy(e->bytes, v->u.str.s, v->u.str.len);
			*e = (struct fr_rl){ *head, key, e->bytes, v->u.str.len, g->ranks, g->nranks, g->identity,
			                     g->rhash };
			*head = e;
			c->n++;
			g->shared = 1;
		} else {
			free(e);
		}
	}
	pthread_mutex_unlock(&c->lock);
	return 0;
}

static int read_pgs(struct build *b, const struct nw_pv *cfg)
{
	if (!cfg)
		return 0;
	if (cfg->type != NW_PV_DICT)
		return fail(b->err, NW_READ_ERR_FORMAT, b->name, "pg_config is not a dict");
	b->pgs = calloc(cfg->n / 2 + 1, sizeof *b->pgs);
	if (!b->pgs)
		return fail(b->err, NW_READ_ERR_NOMEM, b->name, "out of memory");
	for (uint32_t k = 0; k + 1 < cfg->n; k += 2) {
		const struct nw_pv *key = cfg->u.items[k], *val = cfg->u.items[k + 1];
		struct fpg *g = &b->pgs[b->npgs++];
		g->me = g->slot = -1;
		g->rv = val;
		g->name = key;
		if (val && val->type == NW_PV_DICT) {
			if (nw_pv_get(val, "name"))
				g->name = nw_pv_get(val, "name");
			g->desc = nw_pv_get(val, "desc");
			g->rv = nw_pv_get(val, "ranks");
		}
	}
	return 0;
}

/* The groups' ranks and ids. After the entries: comparing a long ranks
 * string with the cache's streams it through the CPU's cache, and the
 * entries' values, just built, are better read before. */
static int read_pg_ranks(struct build *b)
{
	for (uint32_t k = 0; k < b->npgs; k++) {
		struct fpg *g = &b->pgs[k];
		int rc = group_ranks(b, g->rv, g);
		if (rc)
			return rc;
		size_t l;
		const char *s = sv(g->name, &l);
		uint64_t h = fnv(0xcbf29ce484222325ull, "fr-pg", 5);
		h = fnv(h, s, l + 0);
		h = fnv(h, "\0", 1);
		s = sv(g->desc, &l);
		h = fnv(h, s, l);
		h = fnv(h, "\0", 1);
		h = fnv(h, &g->rhash, sizeof g->rhash);
		g->id = h ? h : 1;
	}
	return 0;
}

/* The keys of an entry the loader uses, found in one pass over its dict
 * (a dump has thousands of entries of ~20 keys each). */
enum ekey {
	K_PG, K_PNAME, K_ISP2P, K_CSEQ, K_PSEQ, K_STATE, K_CREATED, K_STARTED, K_COMPLETED, K_DURATION,
	K_INSIZES, K_OUTSIZES, K_INDT, K_OUTDT, K_FRAMES, K_TIMEOUT, K_RECORD, K_N
};
#define EK(s) { s, sizeof s - 1 }
static const struct { const char *s; size_t len; } ekey_name[K_N] = {
	EK("process_group"), EK("profiling_name"), EK("is_p2p"), EK("collective_seq_id"), EK("p2p_seq_id"),
	EK("state"), EK("time_created_ns"), EK("time_discovered_started_ns"),
	EK("time_discovered_completed_ns"), EK("duration_ms"), EK("input_sizes"), EK("output_sizes"),
	EK("input_dtypes"), EK("output_dtypes"), EK("frames"), EK("timeout_ms"), EK("record_id"),
};
#undef EK

/* Entries of one dump list their keys in the same order, and a pickler
 * memoizes the key strings: the key at position j is most likely the very
 * value found there in the previous entry (checked first, by address). */
#define EK_HINTS 32
struct ekey_hint {
	const struct nw_pv *key[EK_HINTS];
	int8_t idx[EK_HINTS];
};

static void entry_keys(const struct nw_pv *d, const struct nw_pv *k[K_N], struct ekey_hint *h)
{
	uint32_t have = 0;                /* k[i] is set: the first of a key counts */
	for (uint32_t j = 0; j + 1 < d->n; j += 2) {
		const struct nw_pv *key = d->u.items[j];
		uint32_t pos = j / 2;
		int found = -1;
		if (key && pos < EK_HINTS && h->key[pos] == key) {
			found = h->idx[pos];
		} else {
			if (!key || key->type != NW_PV_STR || !key->u.str.len)
				continue;
			for (int i = 0; i < K_N; i++)
				if (key->u.str.len == ekey_name[i].len && key->u.str.s[0] == ekey_name[i].s[0] &&
				    !memcmp(key->u.str.s, ekey_name[i].s, ekey_name[i].len)) {
					found = i;
					break;
				}
			if (pos < EK_HINTS) {
				h->key[pos] = key;
				h->idx[pos] = (int8_t)found;
			}
		}
		if (found >= 0 && !(have & 1u << found)) {
			k[found] = d->u.items[j + 1];
			have |= 1u << found;
		}
	}
	for (uint32_t missing = ~have & ((1u << K_N) - 1); missing; missing &= missing - 1)
		k[__builtin_ctz(missing)] = NULL;
}

/* The kind of entry f from its profiling name ("nccl:all_reduce",
 * "nccl:send 0->1"): a group's end, and for a send/receive who sends to
 * whom (0: one whose name does not say it, not matchable). */
static void entry_kind(struct fent *f, const struct nw_pv *pname)
{
	size_t n;
	const char *pn = sv(pname, &n), *colon = memchr(pn, ':', n);
	const char *t = colon ? colon + 1 : pn, *end = pn + n;
	const char *sp = memchr(t, ' ', (size_t)(end - t));
	size_t tl = (size_t)((sp ? sp : end) - t);
	f->kind = kind_of(t, tl, &f->is_p2p);
	/* Group ends: "coalesced", and from 2.7 the slow path's
	 * "ALLGATHER_coalesced" / "REDUCE_SCATTER_coalesced" (after its
	 * broadcasts / reduces); "allreduce_coalesced" and the
	 * "*_tensor_coalesced" ops are collectives of their own. */
	f->closer = f->kind == UINT16_MAX || (tl == 19 && !memcmp(t, "ALLGATHER_coalesced", 19)) ||
	            (tl == 24 && !memcmp(t, "REDUCE_SCATTER_coalesced", 24));
	f->src = f->dst = -1;
	if (f->kind != NW_OP_SEND && f->kind != NW_OP_RECV)
		return;
	char meta[64];
	size_t ml = sp ? (size_t)(end - sp - 1) : 0;
	if (ml >= sizeof meta)
		ml = sizeof meta - 1;
	memcpy(meta, sp ? sp + 1 : "", ml);
	meta[ml] = '\0';
	int a, c;
	if (f->kind == NW_OP_SEND && sscanf(meta, "%d->%d", &a, &c) == 2) {
		f->src = a;
		f->dst = c;
	} else if (f->kind == NW_OP_RECV && sscanf(meta, "%d<-%d", &a, &c) == 2) {
		f->dst = a;
		f->src = c;
	} else {
		f->kind = 0;
	}
}

/* Entry f's element count and type, from its input or output sizes and
 * types as its kind reads them. */
static void entry_size(struct fent *f, const struct nw_pv **k, struct dt_last *dtl)
{
	const struct nw_pv *in = k[K_INSIZES], *out = k[K_OUTSIZES];
	switch (f->kind) {
	case NW_OP_REDUCESCATTER:
	case NW_OP_SCATTER:
		f->count = numel(out);
		f->dtype = dtype_of(k[K_OUTDT], dtl);
		break;
	case NW_OP_RECV:
		f->count = numel(out) ? numel(out) : numel(in);
		f->dtype = dtype_of(k[K_OUTDT] ? k[K_OUTDT] : k[K_INDT], dtl);
		break;
	case NW_OP_ALLTOALL:
		/* Per-peer splits may differ by design (all_to_all_v): the
		 * count is not compared. */
		f->count = 0;
		f->dtype = dtype_of(k[K_INDT], dtl);
		break;
	default:
		f->count = numel(in);
		f->dtype = dtype_of(k[K_INDT], dtl);
		if (f->kind == NW_OP_ALLREDUCE || f->kind == NW_OP_BROADCAST) {
			/* In place by definition: an output of another size or type
			 * than the input is this rank's own error; the larger count,
			 * or the output's type, makes it differ from the others. */
			uint64_t o = numel(out);
			if (o > f->count)
				f->count = o;
			uint8_t od = dtype_of(k[K_OUTDT], dtl);
			if (k[K_OUTDT] && od != f->dtype)
				f->dtype = od;
		}
	}
}

static int read_entries(struct build *b, const struct nw_pv *ents)
{
	if (!ents)
		return 0;
	if (ents->type != NW_PV_LIST && ents->type != NW_PV_TUPLE)
		return fail(b->err, NW_READ_ERR_FORMAT, b->name, "entries is not a list");
	b->e = calloc(ents->n + 1, sizeof *b->e);
	if (!b->e)
		return fail(b->err, NW_READ_ERR_NOMEM, b->name, "out of memory");
	struct ekey_hint hint = { { NULL }, { 0 } };
	struct dt_last dtl = { NULL, 0, 0 };
	for (uint32_t i = 0; i < ents->n; i++) {
		const struct nw_pv *d = ents->u.items[i];
		if (!d || d->type != NW_PV_DICT)
			return fail(b->err, NW_READ_ERR_FORMAT, b->name, "entry %u is not a dict", i);
		struct fent *f = &b->e[b->ne++];
		const struct nw_pv *k[K_N];
		entry_keys(d, k, &hint);
		const struct nw_pv *pgt = k[K_PG];
		f->pg = pgt && (pgt->type == NW_PV_TUPLE || pgt->type == NW_PV_LIST) && pgt->n >= 1
		            ? find_pg(b->pgs, b->npgs, pgt->u.items[0]) : -1;
		entry_kind(f, k[K_PNAME]);
		const struct nw_pv *ip = k[K_ISP2P];
		if (ip && ip->type == NW_PV_BOOL)
			f->is_p2p = ip->u.i != 0;
		f->coll_seq = (uint64_t)pv_int(k[K_CSEQ], 0);
		f->p2p_seq = (uint64_t)pv_int(k[K_PSEQ], 0);
		const struct nw_pv *st = k[K_STATE];
		f->state = PV_IS(st, "completed") ? NW_ST_COMPLETED : PV_IS(st, "started") ? NW_ST_STARTED
		                                                                          : NW_ST_ENQUEUED;
		f->created = time_of(k[K_CREATED]);
		f->started = time_of(k[K_STARTED]);
		f->completed = time_of(k[K_COMPLETED]);
		if (f->started || f->state == NW_ST_STARTED || k[K_DURATION])
			b->timing = 1;
		entry_size(f, k, &dtl);
		f->frames = k[K_FRAMES];
		int64_t to = pv_int(k[K_TIMEOUT], 0);
		f->timeout_ms = to > 0 && to < (int64_t)1 << 40 ? (uint64_t)to : 0;
		if (i == 0 && pv_int(k[K_RECORD], 0) > 0)
			b->wrapped = 1;
	}
	return 0;
}

/* The rank, from send/recv names where they say it, else the file name. */
static int find_rank(struct build *b, const char *path)
{
	int32_t r = -1;
	for (uint32_t i = 0; i < b->ne; i++) {
		const struct fent *f = &b->e[i];
		if ((f->kind != NW_OP_SEND && f->kind != NW_OP_RECV) || f->pg < 0)
			continue;
		const struct fpg *g = &b->pgs[f->pg];
		int32_t me = f->kind == NW_OP_SEND ? f->src : f->dst;
		if (me < 0 || (uint32_t)me >= g->nranks)
			continue;
		int32_t gr = g->ranks[me];
		if (r >= 0 && gr != r)
			return fail(b->err, NW_READ_ERR_FORMAT, b->name, "its send/receive entries name two "
			            "different ranks as this one (%d and %d)", (int)r, (int)gr);
		r = gr;
	}
	if (r < 0)
		r = rank_from_name(path);
	if (r < 0)
		return fail(b->err, NW_READ_ERR_FORMAT, b->name, "which rank wrote this Flight Recorder dump is "
		            "not known: no send/receive entry names it, and the file name does not end "
		            "in the rank (torch writes <prefix><rank>)");
	b->rank = r;
	return 0;
}

static int intern_site(struct nw_intern *in, pthread_mutex_t *lock, const char *s, const char **out)
{
	if (lock)
		pthread_mutex_lock(lock);
	*out = nw_intern_str(in, s, strlen(s));
	if (lock)
		pthread_mutex_unlock(lock);
	return *out ? 0 : -1;
}

/* make_proc's work in progress: the ops built from the entries (opent:
 * the entry of each), the per-peer positions, the newest time seen and
 * when the oldest pending op reached its timeout. */
struct mk {
	struct build *b;
	struct nw_proc *p;
	struct nw_seg_op *ops;
	uint32_t *opent;
	size_t nops;
	struct peerpos *peers;
	int32_t world;
	uint64_t newest, oldest_due;
};

/* Comms: the groups this rank is in. 0, -1 out of memory. */
static int mk_comms(struct mk *m)
{
	struct build *b = m->b;
	struct nw_proc *p = m->p;
	if (!(p->comms = calloc(b->npgs + 1, sizeof *p->comms)))
		return -1;
	for (uint32_t i = 0; i < b->npgs; i++) {
		struct fpg *g = &b->pgs[i];
		if (nw_pv_is_str(g->name, "0"))
			m->world = (int32_t)g->nranks;
		if (g->identity)
			g->me = b->rank < (int32_t)g->nranks ? b->rank : -1;
		else
			for (uint32_t k = 0; k < g->nranks; k++)
				if (g->ranks[k] == b->rank) {
					g->me = (int32_t)k;
					break;
				}
		if (g->me < 0)
			continue;
		g->slot = (int32_t)p->ncomms;
		struct nw_seg_comm *c = &p->comms[p->ncomms++];
		c->comm_id = g->id;
		c->rank = g->me;
		c->nranks = (int32_t)g->nranks;
		c->cuda_device = -1;
		c->origin = NW_ORIGIN_INIT_RANK;
		c->state = NW_COMM_INIT_DONE;
		char desc[NW_COMM_NAME_LEN], name[NW_COMM_NAME_LEN];
		copy_str(desc, sizeof desc, g->desc);
		copy_str(name, sizeof name, g->name);
		snprintf(c->name, sizeof c->name, "%s", desc[0] && strcmp(desc, "undefined") ? desc : name);
	}
	return 0;
}

/* A coalesced group's members take the state of its closing entry
 * ("nccl:coalesced"): only that one carries the group's events. */
static void mk_coalesced(struct build *b)
{
	for (uint32_t i = b->ne; i-- > 0;) {
		struct fent *f = &b->e[i];
		if (!f->closer)
			continue;
		/* Bounded: entries of other groups in between are skipped,
		 * at most 1024 of them. */
		for (uint32_t j = i, other = 0; j-- > 0 && other < 1024;) {
			struct fent *m = &b->e[j];
			if (m->pg != f->pg) {
				other++;
				continue;
			}
			int same = f->is_p2p ? m->is_p2p && m->p2p_seq == f->p2p_seq
			                     : !m->is_p2p && m->coll_seq == f->coll_seq;
			if (!same || m->closer)
				break;
			m->state = f->state;
			m->started = f->started;
			m->completed = f->completed;
			m->in_group = 1;
		}
	}
}

/* Send/receive entry f as op: its number among the rank's posts to that
 * peer. 1 kept, 0 left out, -1 out of memory. */
static int mk_p2p(struct mk *m, const struct fent *f, const struct fpg *g, struct nw_seg_comm *c, struct nw_seg_op *op)
{
	if (m->b->wrapped)
		return 0;            /* per-peer numbers cannot be known (docs/flight-recorder.md) */
	int32_t peer = f->kind == NW_OP_SEND ? f->dst : f->src;
	if (peer < 0 || (uint32_t)peer >= g->nranks)
		return 0;
	uint64_t key = (uint64_t)g->slot << 32 | (uint32_t)peer;
	struct peerpos *pp;
	HASH_FIND(hh, m->peers, &key, sizeof key, pp);
	if (!pp) {
		if (!(pp = calloc(1, sizeof *pp)))
			return -1;
		pp->key = key;
		HASH_ADD(hh, m->peers, key, sizeof pp->key, pp);
		if (nw_hash_oom_taken()) {
			free(pp);
			return -1;
		}
	}
	op->root = peer;
	if (f->kind == NW_OP_SEND) {
		op->seq = ++pp->sends;
		if (f->state == NW_ST_COMPLETED)
			pp->sends_done = op->seq;
	} else {
		op->seq = ++pp->recvs;
		if (f->state == NW_ST_COMPLETED)
			pp->recvs_done = op->seq;
	}
	max_into(&pp->last_ns, f->completed ? f->completed : f->created);
	c->p2p_enqueued++;
	if (f->created > c->p2p_enqueued_ns)
		c->p2p_enqueued_ns = f->created;
	if (f->state == NW_ST_COMPLETED) {
		c->p2p_completed++;
		if (f->completed > c->p2p_completed_ns)
			c->p2p_completed_ns = f->completed;
	}
	return 1;
}

/* Collective entry f as op: one per collective number. 1 kept, 0 not
 * (a member of a coalesced collective adds its count to the first's). */
static int mk_coll(struct mk *m, const struct fent *f, struct fpg *g, struct nw_seg_comm *c, struct nw_seg_op *op)
{
	if (f->coll_seq == 0)
		return 0;
	if (f->coll_seq == g->last_coll) {
		/* Members of one coalesced collective are one op: their
		 * counts add up (so a member of another size shows). */
		if (!f->closer && f->kind != UINT16_MAX)
			m->ops[g->last_op].count += f->count;
		return 0;
	}
	if (f->kind == UINT16_MAX)
		return 0;            /* a "coalesced" end with no member kept */
	g->last_coll = f->coll_seq;
	g->last_op = m->nops;
	op->seq = f->coll_seq;
	if (op->seq > c->coll_enqueued) {
		c->coll_enqueued = op->seq;
		c->coll_enqueued_ns = f->created;
	}
	if (f->state != NW_ST_ENQUEUED && op->seq > c->coll_started) {
		c->coll_started = op->seq;
		c->coll_started_ns = f->started;
	}
	if (f->state == NW_ST_COMPLETED && op->seq > c->coll_completed) {
		c->coll_completed = op->seq;
		c->coll_completed_ns = f->completed;
	}
	return 1;
}

/* The entries as ops, in order. 0, -1 out of memory. */
static int mk_ops(struct mk *m)
{
	struct build *b = m->b;
	for (uint32_t i = 0; i < b->ne; i++) {
		struct fent *f = &b->e[i];
		max_into(&m->newest, f->created);
		max_into(&m->newest, f->started);
		max_into(&m->newest, f->completed);
		if (!f->kind || f->pg < 0 || b->pgs[f->pg].slot < 0 || (f->kind == UINT16_MAX && f->is_p2p))
			continue;
		struct fpg *g = &b->pgs[f->pg];
		struct nw_seg_comm *c = &m->p->comms[g->slot];
		struct nw_seg_op *op = &m->ops[m->nops];
		op->kind = f->kind;
		op->comm_id = g->id;
		op->comm_slot = (uint32_t)g->slot;
		op->rank = g->me;
		op->nranks = (int32_t)g->nranks;
		op->count = f->count;
		op->datatype = f->dtype;
		op->redop = -1;
		op->root = -1;
		op->stream = g->id;                  /* torch: one NCCL stream per process group */
		op->enqueue_ns = f->created;
		op->start_ns = f->started;
		op->end_ns = f->completed;
		/* Without start events (TORCH_NCCL_ENABLE_TIMING unset) "scheduled"
		 * only says "not completed": the kernel was launched when the op was
		 * enqueued, so it is taken as started (the source note says so). */
		op->state = f->state == NW_ST_ENQUEUED && !b->timing ? NW_ST_STARTED : f->state;
		if (nw_op_pending(op->state) && f->timeout_ms &&
		    (!m->oldest_due || f->created + f->timeout_ms * 1000000ull < m->oldest_due))
			m->oldest_due = f->created + f->timeout_ms * 1000000ull;
		op->commit = m->nops + 1;
		if (f->in_group) {
			op->flags |= NW_OPF_IN_GROUP;
			op->group_id = g->id ^ (f->is_p2p ? f->p2p_seq << 1 : f->coll_seq << 1 | 1);
		}
		int kept = NW_OP_IS_P2P(f->kind) ? mk_p2p(m, f, g, c, op) : mk_coll(m, f, g, c, op);
		if (kept < 0)
			return -1;
		if (kept)
			m->opent[m->nops++] = i;
	}
	return 0;
}

/* Peers, sorted by (slot, peer) as load.c keeps them; the hash emptied.
 * 0, -1 out of memory. */
static int mk_peers(struct mk *m)
{
	struct nw_proc *p = m->p;
	struct peerpos *pp, *tmp;
	uint32_t np = HASH_COUNT(m->peers);
	p->peers = calloc(np + 1, sizeof *p->peers);
	HASH_ITER(hh, m->peers, pp, tmp) {
		if (p->peers) {
			struct nw_seg_peer *q = &p->peers[p->npeers++];
			q->comm_slot = (uint32_t)(pp->key >> 32);
			q->peer = (int32_t)(uint32_t)pp->key;
			q->send_enqueued = pp->sends;
			q->send_completed = pp->sends_done;
			q->recv_enqueued = pp->recvs;
			q->recv_completed = pp->recvs_done;
			q->last_ns = pp->last_ns;
			q->used = 1;
		}
		HASH_DEL(m->peers, pp);
		free(pp);
	}
	if (!p->peers)
		return -1;
	/* insertion sort is enough: a rank has few peers, but be safe */
	for (uint32_t i = 1; i < p->npeers; i++) {
		struct nw_seg_peer x = p->peers[i];
		uint32_t j = i;
		while (j > 0 && (p->peers[j - 1].comm_slot > x.comm_slot ||
		                 (p->peers[j - 1].comm_slot == x.comm_slot && p->peers[j - 1].peer > x.peer))) {
			p->peers[j] = p->peers[j - 1];
			j--;
		}
		p->peers[j] = x;
	}
	return 0;
}

/* Keep what load.c keeps: every op not final, the last few of each comm,
 * with their call sites. 0, -1 out of memory. */
static int mk_keep(struct mk *m, struct nw_intern *in, pthread_mutex_t *lock)
{
	struct nw_proc *p = m->p;
	size_t nops = m->nops;
	if (!nops)
		return 0;
	uint32_t *cnt = calloc(p->ncomms + 1, sizeof *cnt);
	uint8_t *keep = calloc(nops, 1);
	size_t kept = 0;
	int oom = !cnt || !keep;
	for (size_t i = nops; i-- > 0 && !oom;) {
		uint32_t s = m->ops[i].comm_slot;
		if (nw_op_pending(m->ops[i].state) || cnt[s] < NW_ANALYSIS_RECENT) {
			keep[i] = 1;
			cnt[s]++;
			kept++;
		}
	}
	if (!oom) {
		p->ops = malloc(kept * sizeof *p->ops);
		p->op_site = calloc(kept, sizeof *p->op_site);
		oom = !p->ops || !p->op_site;
	}
	for (size_t i = 0; i < nops && !oom; i++) {
		if (!keep[i])
			continue;
		p->ops[p->nops] = m->ops[i];
		char site[700];
		if (site_of(m->b->e[m->opent[i]].frames, site, sizeof site) &&
		    intern_site(in, lock, site, &p->op_site[p->nops]))
			oom = 1;
		p->nops++;
	}
	free(cnt);
	free(keep);
	return oom ? -1 : 0;
}

/* The process's header, times and source note. 0, -1 out of memory. */
static int mk_header(struct mk *m, const struct nw_pv *root, const char *path, struct nw_intern *in,
                     pthread_mutex_t *lock)
{
	struct build *b = m->b;
	struct nw_proc *p = m->p;
	struct nw_proc_header *h = &p->hdr;
	h->flags = NW_SEG_F_DUMP;
	h->pid = 0;
	h->ppid = 0;
	snprintf(h->host, sizeof h->host, "?");       /* a dump names no host */
	h->start_realtime_ns = (uint64_t)b->rank + 1;   /* one process per rank (load.c's dedupe) */
	h->global_rank = b->rank;
	h->local_rank = -1;
	h->world_size = m->world;
	h->ring_head = b->ne;
	h->heartbeat_ns = m->newest;
	h->nccl_version = nccl_code(nw_pv_get(root, "comm_lib_version"));
	/* The dump holds no timeout of ours: every op pending in it counts
	 * as stuck (the dump is written when one timed out; model.c: 1 ms,
	 * and no timeout in the header); --timeout overrides it. */
	h->timeout_ms = 0;
	p->caps = NW_CAP_OPNUMS | NW_CAP_COMPLETION | NW_CAP_FINGERPRINT | (b->wrapped ? 0 : NW_CAP_SENDRECV);
	job_of(path, h->job, sizeof h->job);
	p->rank = b->rank;
	p->alive = -1;
	p->is_dump = 1;
	/* The dump's moment, at the earliest: the newest time it recorded, and
	 * when its oldest pending op reached its timeout (the watchdog dumps then). */
	p->now_ns = m->newest > m->oldest_due ? m->newest : m->oldest_due;
	p->last_activity_ns = 0;
	for (size_t i = 0; i < p->nops; i++)
		max_into(&p->last_activity_ns, p->ops[i].enqueue_ns);
	for (uint32_t i = 0; i < b->ne; i++)
		max_into(&p->last_activity_ns, b->e[i].created);
	char note[1024];
	snprintf(note, sizeof note,
	         "source: PyTorch Flight Recorder dumps (version %s): states are what torch's watchdog "
	         "last saw (its time_discovered_* are late by design); %s; no thread stacks and no "
	         "communicator creation records; the dump holds no time of its own, so an op still "
	         "pending in it counts as stuck%s",
	         b->version,
	         b->timing ? "GPU start events were recorded (TORCH_NCCL_ENABLE_TIMING=1)"
	                   : "no GPU start events (the job did not set TORCH_NCCL_ENABLE_TIMING=1): "
	                     "scheduled means not completed, started or not",
	         b->wrapped ? "; its first entries are gone (the ring wrapped, or only active "
	                      "entries were dumped), so sends/receives are left out (their per-peer "
	                      "numbers are not known)" : "");
	if (intern_site(in, lock, note, &p->source_note))
		return -1;
	p->path = strdup(path);
	return p->path ? 0 : -1;
}

static int make_proc(struct build *b, const struct nw_pv *root, const char *path, struct nw_intern *in,
                     pthread_mutex_t *lock, struct nw_proc **out)
{
	struct mk m = { .b = b, .world = -1 };
	m.p = calloc(1, sizeof *m.p);
	m.ops = calloc(b->ne + 1, sizeof *m.ops);
	m.opent = calloc(b->ne + 1, sizeof *m.opent);
	int oom = !m.p || !m.ops || !m.opent || mk_comms(&m);
	if (!oom) {
		mk_coalesced(b);
		oom = mk_ops(&m);
	}
	/* (the peers' hash is emptied either way) */
	oom = (m.p && mk_peers(&m)) || oom;
	oom = oom || mk_keep(&m, in, lock) || mk_header(&m, root, path, in, lock);
	free(m.ops);
	free(m.opent);
	if (oom) {
		nw_proc_free(m.p);
		return fail(b->err, NW_READ_ERR_NOMEM, b->name, "out of memory");
	}
	*out = m.p;
	return NW_READ_OK;
}

/* One reader's memory, reused file after file: the file's bytes and the
 * pickle's arena, stack and memo (allocating them per file was a third of
 * the time: fresh pages for every dump). The cache pools them. */
#define FR_WS_KEEP (16u << 20)         /* a larger read buffer is not kept */

struct fr_ws {
	struct fr_ws *next;
	pthread_t owner;                   /* the thread that used it last */
	uint8_t *buf;
	size_t cap;
	struct nw_pickle pk;
};

static void ws_free(struct fr_ws *w)
{
	if (!w)
		return;
	free(w->buf);
	nw_pickle_free(&w->pk);
	free(w);
}

static struct fr_ws *ws_next(struct fr_ws *w)
{
	return w->next;
}

/* The one this thread used last, if free: its memory is in this core's
 * cache (another thread's last one is in the other core's). */
static struct fr_ws *ws_take(struct nw_fr_cache *c)
{
	struct fr_ws *w = NULL, **at = NULL;
	pthread_t self = pthread_self();
	if (c) {
		pthread_mutex_lock(&c->lock);
		for (struct fr_ws **p = &c->ws; *p; p = &(*p)->next)
			if (!at || pthread_equal((*p)->owner, self)) {
				at = p;
				if (pthread_equal((*p)->owner, self))
					break;
			}
		if (at) {
			w = *at;
			*at = w->next;
		}
		pthread_mutex_unlock(&c->lock);
	}
	if (!w)
		w = calloc(1, sizeof *w);
	if (w)
		w->owner = self;
	return w;
}

static void ws_give(struct nw_fr_cache *c, struct fr_ws *w)
{
	if (!w)
		return;
	if (w->cap > FR_WS_KEEP) {
		free(w->buf);
		w->buf = NULL;
		w->cap = 0;
	}
	if (!c) {
		ws_free(w);
		return;
	}
	pthread_mutex_lock(&c->lock);
	w->next = c->ws;
	c->ws = w;
	pthread_mutex_unlock(&c->lock);
}

static int read_bytes(struct fr_ws *w, const uint8_t *d, size_t n, const char *name, struct nw_intern *in,
                      pthread_mutex_t *lock, struct nw_fr_cache *cache, struct nw_proc **out,
                      struct nw_read_error *err)
{
	*out = NULL;
	int form = nw_fr_sniff_bytes(d, n);
	if (!form)
		return fail(err, NW_READ_ERR_FORMAT, name, "not a Flight Recorder dump (neither a pickle "
		            "nor a JSON object of a dump's keys)");
	/* A pickle goes into the reused one; JSON (rare) into its own. */
	struct nw_pickle json = { 0 }, *pk = form == NW_FR_PICKLE ? &w->pk : &json;
	char perr[NW_PICKLE_ERR_LEN];
	int rc = form == NW_FR_PICKLE ? nw_pickle_reparse(d, n, pk, perr) : nw_fr_json_parse(d, n, pk, perr);
	if (rc) {
		nw_pickle_free(&json);
		return fail(err, NW_READ_ERR_FORMAT, name, "not readable as a Flight Recorder dump: %s", perr);
	}
	struct build b = { .cache = cache, .name = name, .err = err, .rank = -1 };
	const struct nw_pv *root = pk->root;
	if (!root || root->type != NW_PV_DICT) {
		nw_pickle_free(&json);
		return fail(err, NW_READ_ERR_FORMAT, name, "a pickle, but not of a dict: not a Flight Recorder dump");
	}
	const struct nw_pv *ver = nw_pv_get(root, "version");
	nw_pv_cstr(ver, b.version, sizeof b.version);
	unsigned major = 0, minor = 0;
	char extra;
	if (!ver || sscanf(b.version, "%u.%u%c", &major, &minor, &extra) != 2 || major != 2 ||
	    minor > FR_MINOR_MAX) {
		nw_pickle_free(&json);
		if (!ver)
			return fail(err, NW_READ_ERR_FORMAT, name, "a dict without \"version\": not a Flight "
			            "Recorder dump");
		return fail(err, NW_READ_ERR_VERSION, name, "Flight Recorder dump version \"%s\" is not one "
		            "this reader knows (2.0 to 2.%d)", b.version, FR_MINOR_MAX);
	}
	rc = read_pgs(&b, nw_pv_get(root, "pg_config"));
	if (!rc) {
		/* A bad ranks list is said first, as a bad entry would be after it. */
		rc = read_entries(&b, nw_pv_get(root, "entries"));
		int rr = read_pg_ranks(&b);
		rc = rr ? rr : rc;
	}
	if (!rc)
		rc = find_rank(&b, name);
	if (!rc)
		rc = make_proc(&b, root, name, in, lock, out);
	build_free(&b);
	nw_pickle_free(&json);
	return rc;
}

int nw_fr_read_bytes(const uint8_t *d, size_t n, const char *name, struct nw_intern *in,
                     pthread_mutex_t *lock, struct nw_fr_cache *cache, struct nw_proc **out,
                     struct nw_read_error *err)
{
	*out = NULL;
	struct fr_ws *w = ws_take(cache);
	if (!w)
		return fail(err, NW_READ_ERR_NOMEM, name, "out of memory");
	int rc = read_bytes(w, d, n, name, in, lock, cache, out, err);
	ws_give(cache, w);
	return rc;
}

static int read_file(const char *path, int sniff_first, struct nw_intern *in, pthread_mutex_t *lock,
                     struct nw_fr_cache *cache, struct nw_proc **out, struct nw_read_error *err)
{
	*out = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		int e = errno;
		int rc = fail(err, NW_READ_ERR_IO, path, "%s", strerror(e));
		if (err)
			err->sys_errno = e;
		return rc;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return fail(err, NW_READ_ERR_IO, path, "not a regular file");
	}
	if ((uint64_t)st.st_size > FR_MAX_FILE) {
		close(fd);
		return fail(err, NW_READ_ERR_FORMAT, path, "%lld bytes: larger than a Flight Recorder dump "
		            "can be (1 GiB); not read", (long long)st.st_size);
	}
	size_t n = (size_t)st.st_size;
	if (sniff_first) {
		uint8_t head[256];
		ssize_t h = pread(fd, head, sizeof head, 0);
		if (h <= 0 || !nw_fr_sniff_bytes(head, (size_t)h)) {
			close(fd);
			return NW_FR_NOT_A_DUMP;
		}
	}
	struct fr_ws *w = ws_take(cache);
	if (w && w->cap < (n ? n : 1)) {
		/* Page-aligned: the kernel copies into a destination aligned to
		 * a cache line 3-4x faster than into malloc's 16-byte one. */
		free(w->buf);
		w->cap = ((n ? n : 1) + 4095) & ~(size_t)4095;
		if (!(w->buf = aligned_alloc(4096, w->cap)))
			w->cap = 0;
	}
	if (!w || !w->buf) {
		close(fd);
		ws_give(cache, w);
		return fail(err, NW_READ_ERR_NOMEM, path, "out of memory");
	}
	size_t got = 0;
	while (got < n) {
		ssize_t r = pread(fd, w->buf + got, n - got, (off_t)got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	int rc = read_bytes(w, w->buf, got, path, in, lock, cache, out, err);
	ws_give(cache, w);
	return rc;
}

int nw_fr_read(const char *path, struct nw_intern *in, pthread_mutex_t *lock, struct nw_fr_cache *cache,
               struct nw_proc **out, struct nw_read_error *err)
{
	return read_file(path, 0, in, lock, cache, out, err);
}

int nw_fr_read_if_dump(const char *path, struct nw_intern *in, pthread_mutex_t *lock,
                       struct nw_fr_cache *cache, struct nw_proc **out, struct nw_read_error *err)
{
	return read_file(path, 1, in, lock, cache, out, err);
}
