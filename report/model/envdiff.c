/* envdiff: what differs between the processes of a job: the NCCL version
 * and library, the CUDA driver, the GPU, and each allowlisted variable of
 * the environment fingerprint (header.env; unset = ""). A name with more
 * than one value gets an nw_env_diff, its values most common first, each
 * with its ranks and hosts. Variables that name the process itself (RANK,
 * LOCAL_RANK, ...) differ by design and are left out. */
#include "model.h"

#include <stdlib.h>
#include <string.h>

static const char *const per_process[] = {
	"RANK", "LOCAL_RANK", "SLURM_PROCID", "SLURM_LOCALID", "OMPI_COMM_WORLD_RANK",
	"OMPI_COMM_WORLD_LOCAL_RANK", "PMI_RANK", "PMIX_RANK", "GROUP_RANK", "ROLE_RANK", NULL,
};

/* The fixed names first, in this order; variables after, by name. */
static const char *const fixed[] = { "NCCL version", "NCCL library", "CUDA driver", "GPU", NULL };

struct hostent {
	const char *host;               /* in a process's header */
	UT_hash_handle hh;
};

struct val {
	char *value;
	size_t count;
	struct nw_rankset ranks;
	struct hostent *hosts;
	size_t nhosts;
	UT_hash_handle hh;
};

struct var {
	char *name;
	struct val *vals;
	uint8_t *has;                   /* [nprocs]: the process has it */
	size_t present;
	UT_hash_handle hh;
};

struct ctx {
	struct var *vars;
	size_t nprocs;
	int oom;
};

static struct val *val_get(struct ctx *c, struct var *v, const char *value, size_t len)
{
	struct val *e;
	HASH_FIND(hh, v->vals, value, len, e);
	if (e)
		return e;
	if (!(e = calloc(1, sizeof *e)) || !(e->value = strndup(value, len))) {
		free(e);
		c->oom = 1;
		return NULL;
	}
	HASH_ADD_KEYPTR(hh, v->vals, e->value, len, e);
	if (nw_hash_oom_taken()) {
		free(e->value);
		free(e);
		c->oom = 1;
		return NULL;
	}
	return e;
}

static void val_add(struct ctx *c, struct val *e, const struct nw_proc *p)
{
	e->count++;
	if (p->rank >= 0 && nw_rankset_add(&e->ranks, p->rank))
		c->oom = 1;
	struct hostent *h;
	HASH_FIND_STR(e->hosts, p->hdr.host, h);
	if (h)
		return;
	if (!(h = malloc(sizeof *h))) {
		c->oom = 1;
		return;
	}
	h->host = p->hdr.host;
	HASH_ADD_KEYPTR(hh, e->hosts, h->host, strlen(h->host), h);
	if (nw_hash_oom_taken()) {
		free(h);
		c->oom = 1;
		return;
	}
	e->nhosts++;
}

static void add(struct ctx *c, const struct nw_proc *p, const char *name, size_t nlen, const char *value,
                size_t vlen)
{
	struct var *v;
	HASH_FIND(hh, c->vars, name, nlen, v);
	if (!v) {
		if (!(v = calloc(1, sizeof *v)) || !(v->name = strndup(name, nlen)) ||
		    !(v->has = calloc(c->nprocs ? c->nprocs : 1, 1))) {
			if (v)
				free(v->name);
			free(v);
			c->oom = 1;
			return;
		}
				HASH_ADD_KEYPTR(hh, c->vars, v->name, nlen, v);
		if (nw_hash_oom_taken()) {
			free(v->has);
			free(v->name);
			free(v);
			c->oom = 1;
			return;
		}
	}
	if (v->has[p->job_index])
		return;   /* a variable listed twice: the first counts */
	v->has[p->job_index] = 1;
	v->present++;
	struct val *e = val_get(c, v, value, vlen);
	if (e)
		val_add(c, e, p);
}

static int excluded(const char *name, size_t len)
{
	for (const char *const *n = per_process; *n; n++)
		if (strlen(*n) == len && !strncmp(name, *n, len))
			return 1;
	return 0;
}

static int cmp_val(const void *a, const void *b)
{
	const struct nw_env_value *x = a, *y = b;
	size_t cx = x->ranks.n, cy = y->ranks.n;
	if (cx != cy)
		return cx > cy ? -1 : 1;
	return strcmp(x->value, y->value);
}

static int cmp_diff(const void *a, const void *b)
{
	const struct nw_env_diff *x = a, *y = b;
	int ox = 99, oy = 99;
	for (int i = 0; fixed[i]; i++) {
		if (!strcmp(x->name, fixed[i]))
			ox = i;
		if (!strcmp(y->name, fixed[i]))
			oy = i;
	}
	if (ox != oy)
		return ox < oy ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One nw_env_value from a collected value; 0 or -1. */
static int make_value(struct nw_env_value *out, struct val *e)
{
	memset(out, 0, sizeof *out);
	out->value = e->value;
	e->value = NULL;
	out->ranks = e->ranks;
	memset(&e->ranks, 0, sizeof e->ranks);
	out->hosts = calloc(e->nhosts ? e->nhosts : 1, sizeof *out->hosts);
	if (!out->hosts)
		return -1;
	struct hostent *h, *ht;
	HASH_ITER(hh, e->hosts, h, ht) {
		if (!(out->hosts[out->nhosts] = strdup(h->host)))
			return -1;
		out->nhosts++;
	}
	qsort(out->hosts, out->nhosts, sizeof *out->hosts, cmp_str);
	return 0;
}

static void val_free(struct val *e)
{
	struct hostent *h, *ht;
	HASH_ITER(hh, e->hosts, h, ht) {
		HASH_DEL(e->hosts, h);
		free(h);
	}
	nw_rankset_free(&e->ranks);
	free(e->value);
	free(e);
}

/* The fingerprint's own fields (NCCL version, ...): an attach snapshot
 * does not know them (they come from the preload), so it neither has nor
 * lacks them. */
static int is_fixed(const char *name)
{
	for (int i = 0; fixed[i]; i++)
		if (!strcmp(name, fixed[i]))
			return 1;
	return 0;
}

int nw_job_envdiff(struct nw_job *job)
{
	struct ctx c = { .nprocs = job->nprocs };
	size_t nsnap = 0, noenv = 0;   /* no fingerprint; no environment read (neither has nor lacks) */
	for (size_t i = 0; i < job->nprocs && !c.oom; i++) {
		const struct nw_proc *p = job->procs[i];
		char b[NW_NAME_BUF];
		int fp = (p->caps & NW_CAP_FINGERPRINT) != 0;
		nsnap += !fp;
		noenv += !p->hdr.env || !*p->hdr.env;
		if (fp) {
			const char *s = nw_nccl_version_str(p->hdr.nccl_version, b);
			add(&c, p, fixed[0], strlen(fixed[0]), s, strlen(s));
			const char *lib = p->hdr.nccl_lib ? p->hdr.nccl_lib : "";
			add(&c, p, fixed[1], strlen(fixed[1]), lib, strlen(lib));
			s = nw_cuda_version_str(p->hdr.cuda_driver_version, b);
			add(&c, p, fixed[2], strlen(fixed[2]), s, strlen(s));
			add(&c, p, fixed[3], strlen(fixed[3]), p->hdr.gpu_name, strnlen(p->hdr.gpu_name, sizeof p->hdr.gpu_name));
		}
		/* "NAME=value\0...\0\0" (interned with its two NULs: load.c). */
		for (const char *e = p->hdr.env; e && *e && !c.oom;) {
			size_t len = strlen(e);
			const char *eq = memchr(e, '=', len);
			if (eq && eq > e && !excluded(e, (size_t)(eq - e)))
				add(&c, p, e, (size_t)(eq - e), eq + 1, len - (size_t)(eq - e) - 1);
			e += len + 1;
		}
	}
	/* The differences. */
	struct var *v, *vt;
	size_t ndiff = 0;
	HASH_ITER(hh, c.vars, v, vt)
		ndiff += HASH_COUNT(v->vals) + (v->present < job->nprocs - (is_fixed(v->name) ? nsnap : noenv)) >= 2;
	if (!c.oom && ndiff && !(job->diffs = calloc(ndiff, sizeof *job->diffs)))
		c.oom = 1;
	HASH_ITER(hh, c.vars, v, vt) {
		const int fx = is_fixed(v->name);
		const size_t could = job->nprocs - (fx ? nsnap : noenv);
		size_t nvals = HASH_COUNT(v->vals) + (v->present < could);
		if (!c.oom && nvals >= 2 && job->diffs) {
			/* The processes without it have the value "" (merged with an
			 * empty value some process set). */
			if (v->present < could) {
				struct val *unset = val_get(&c, v, "", 0);
				for (size_t i = 0; i < job->nprocs && unset && !c.oom; i++)
					if (!v->has[i] && !(fx && !(job->procs[i]->caps & NW_CAP_FINGERPRINT)) &&
					    (fx || (job->procs[i]->hdr.env && *job->procs[i]->hdr.env)))
						val_add(&c, unset, job->procs[i]);
			}
			struct nw_env_diff *d = &job->diffs[job->ndiffs];
			size_t n = HASH_COUNT(v->vals);
			if (!c.oom && (d->values = calloc(n, sizeof *d->values)) && (d->name = strdup(v->name))) {
				job->ndiffs++;
				struct val *e, *et;
				HASH_ITER(hh, v->vals, e, et) {
					if (make_value(&d->values[d->nvalues++], e))
						c.oom = 1;
				}
				qsort(d->values, d->nvalues, sizeof *d->values, cmp_val);
			} else {
				free(d->values);
				d->values = NULL;
				c.oom = 1;
			}
		}
		struct val *e, *et;
		HASH_ITER(hh, v->vals, e, et) {
			HASH_DEL(v->vals, e);
			val_free(e);
		}
		HASH_DEL(c.vars, v);
		free(v->has);
		free(v->name);
		free(v);
	}
	if (job->ndiffs)
		qsort(job->diffs, job->ndiffs, sizeof *job->diffs, cmp_diff);
	return c.oom ? -1 : 0;
}
