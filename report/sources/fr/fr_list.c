/* fr_list: what diagnose reads under a path (segments, per-host summaries
 * and Flight Recorder dumps side by side), and the pass after reading that settles FR dumps
 * against each other and against segments of the same job. */
#include "../sources.h"
#include "fr.h"
#include "../summary/summary.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Flight Recorder dumps: what is not a segment and sniffs as a dump. */
static int is_dump(const char *path, const char *name)
{
	size_t n = strlen(name);
	return !(n > 4 && !strcmp(name + n - 4, ".seg")) && !nw_summary_named(name) && nw_fr_sniff(path);
}

/* Per-host summaries (report/sources/summary/): by their name. */
static int is_summary(const char *path, const char *name)
{
	(void)path;
	return nw_summary_named(name);
}

static int cmp_path(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int nw_input_list(const char *path, struct nw_path_list *list, struct nw_read_error *err)
{
	size_t before = list->count;
	int rc = nw_segment_list(path, list, err);
	if (rc != NW_READ_OK && rc != NW_READ_ERR_EMPTY)
		return rc;
	struct stat sb;
	if (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode))
		return rc;
	size_t segs = list->count;
	char *dir = strdup(path);
	if (!dir)
		goto nomem;
	for (size_t n = strlen(dir); n > 1 && dir[n - 1] == '/'; n--)
		dir[n - 1] = '\0';
	int s = nw_path_scan(dir, 2, is_summary, list) || nw_path_scan(dir, 2, is_dump, list);
	free(dir);
	if (s)
		goto nomem;
	if (list->count == before) {
		/* The segment lister's message stands (err was set by it): a
		 * directory with neither is, first of all, one without segments. */
		return NW_READ_ERR_EMPTY;
	}
	qsort(list->paths + segs, list->count - segs, sizeof *list->paths, cmp_path);
	if (err)
		memset(err, 0, sizeof *err);
	return NW_READ_OK;
nomem:
	if (err) {
		memset(err, 0, sizeof *err);
		err->code = NW_READ_ERR_NOMEM;
		err->sys_errno = ENOMEM;
		snprintf(err->message, sizeof err->message, "%s: out of memory", path);
	}
	return NW_READ_ERR_NOMEM;
}

/* ---- after reading ---- */

struct seen {
	char *key;                         /* "<dump file name>" a segment's environment names */
	UT_hash_handle hh;
};

static const char *base(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

static const char *env_get(const struct nw_proc_header *h, const char *name)
{
	size_t nl = strlen(name);
	for (const char *e = h->env; e && *e;) {
		size_t l = strlen(e);
		if (l > nl && !strncmp(e, name, nl) && e[nl] == '=')
			return e + nl + 1;
		e += l + 1;
	}
	return NULL;
}

struct jnow {
	const char *job;
	uint64_t now;
	UT_hash_handle hh;
};

/* The dump files segments say their process writes: <prefix><rank>.
 * 0, -1 out of memory. */
static int dumps_named(struct nw_proc **procs, size_t nprocs, struct seen **set)
{
	static const char *vars[] = { "TORCH_FR_DUMP_TEMP_FILE", "TORCH_NCCL_DEBUG_INFO_TEMP_FILE" };
	for (size_t i = 0; i < nprocs; i++) {
		const struct nw_proc *p = procs[i];
		if (p->source_note || p->hdr.global_rank < 0)
			continue;
		for (size_t v = 0; v < 2; v++) {
			const char *val = env_get(&p->hdr, vars[v]);
			if (!val || !*val)
				continue;
			char *key;
			if (asprintf(&key, "%s%d", base(val), (int)p->hdr.global_rank) < 0)
				return -1;
			struct seen *s;
			HASH_FIND_STR(*set, key, s);
			if (s || !(s = calloc(1, sizeof *s))) {
				free(key);
				if (!s)
					return -1;
				continue;
			}
			s->key = key;
			HASH_ADD_KEYPTR(hh, *set, s->key, strlen(s->key), s);
			if (nw_hash_oom_taken())
				return -1;
		}
	}
	return 0;
}

/* One "now" per job of dumps: the newest time any of its ranks recorded
 * (the ranks' clocks are wall clocks). 0, -1 out of memory. */
static int dumps_now(struct nw_proc **procs, size_t nprocs)
{
	struct jnow *jobs = NULL, *j, *jt;
	int oom = 0;
	for (size_t i = 0; i < nprocs && !oom; i++) {
		struct nw_proc *p = procs[i];
		if (!p->source_note)
			continue;
		HASH_FIND_STR(jobs, p->hdr.job, j);
		if (!j) {
			if (!(j = calloc(1, sizeof *j))) {
				oom = 1;
				break;
			}
			j->job = p->hdr.job;
			HASH_ADD_KEYPTR(hh, jobs, j->job, strlen(j->job), j);
			if (nw_hash_oom_taken())
				oom = 1;
		}
		if (p->now_ns > j->now)
			j->now = p->now_ns;
	}
	for (size_t i = 0; i < nprocs && !oom; i++) {
		struct nw_proc *p = procs[i];
		if (!p->source_note)
			continue;
		HASH_FIND_STR(jobs, p->hdr.job, j);
		if (j)
			p->now_ns = j->now;
	}
	HASH_ITER(hh, jobs, j, jt) {
		HASH_DEL(jobs, j);
		free(j);
	}
	return oom ? -1 : 0;
}

int nw_fr_settle(struct nw_proc **procs, size_t *nprocs, char ***preferred, size_t *npreferred)
{
	struct seen *set = NULL, *s, *st;
	*preferred = NULL;
	*npreferred = 0;
	size_t nfr = 0;
	for (size_t i = 0; i < *nprocs; i++)
		nfr += procs[i]->source_note != NULL;
	if (!nfr)
		return 0;
	int oom = dumps_named(procs, *nprocs, &set);
	/* A dump a segment names: the segments win, its path goes to
	 * *preferred and its process is dropped. */
	size_t out = 0;
	for (size_t i = 0; i < *nprocs && !oom; i++) {
		struct nw_proc *p = procs[i];
		if (p->source_note && set) {
			HASH_FIND_STR(set, base(p->path), s);
			if (s) {
				char **pp = realloc(*preferred, (*npreferred + 1) * sizeof *pp);
				if (!pp) {
					oom = 1;
					break;
				}
				*preferred = pp;
				pp[(*npreferred)++] = p->path;
				p->path = NULL;
				nw_proc_free(p);
				continue;
			}
		}
		procs[out++] = p;
	}
	if (!oom)
		*nprocs = out;
	HASH_ITER(hh, set, s, st) {
		HASH_DEL(set, s);
		free(s->key);
		free(s);
	}
	return oom || dumps_now(procs, *nprocs) ? -1 : 0;
}
