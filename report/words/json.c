/* The analysis as one JSON document for tools (see render.h). The schema
 * is docs/json-schema.md (docs/diagnose.schema.json, JSON Schema 2020-12):
 *
 *   {"schema":"ncclwatch.diagnose","version":1,"worst":KIND,"files_read":N,
 *    "jobs":[{"name","process_count","world_size","missing_ranks","timeout_s","timeout_from","lost",
 *             "verdicts":[...],"env_diffs":[...],"stacks":[...],"processes":[...]}],
 *    "unreadable":[{"path","code","error"}]}
 *
 * Built as a jansson tree and dumped compact, on one line; jansson does
 * all the escaping. Rank sets are arrays of integers, sorted. Version rule:
 * fields may be added within version 1; removing or changing the type or
 * meaning of one bumps "version". */
#include "words.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "../names.h"
#include "json_util.h"

static json_t *rank_array(const struct nw_rankset *s, int *failed)
{
	json_t *arr = json_array();
	for (uint32_t i = 0; i < s->n; i++)
		nw_json_push(arr, nw_json_int(s->v[i]), failed);
	if (!arr)
		*failed = 1;
	return arr;
}

static json_t *str_array(char *const *v, size_t n, int *failed)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < n; i++)
		nw_json_push(arr, nw_json_str(v[i] ? v[i] : ""), failed);
	if (!arr)
		*failed = 1;
	return arr;
}

static json_t *hex16(uint64_t v)
{
	char buf[17];
	snprintf(buf, sizeof buf, "%016" PRIx64, v);
	return json_string(buf);
}

static json_t *verdict_json(const struct nw_verdict *v, int *failed)
{
	char kb[NW_NAME_BUF];
	json_t *o = json_object();
	nw_json_set(o, "kind", nw_json_str(nw_verdict_name(v->kind)), failed);
	nw_json_set(o, "comm", v->comm_id ? hex16(v->comm_id) : json_null(), failed);
	nw_json_set(o, "comm_nranks", v->comm_id && v->comm_nranks > 0 ? nw_json_int(v->comm_nranks) : json_null(),
	            failed);
	nw_json_set(o, "op", v->op_kind ? nw_json_str(nw_op_kind_name(v->op_kind, kb)) : json_null(), failed);
	nw_json_set(o, "seq", v->seq ? nw_json_int((int64_t)v->seq) : json_null(), failed);
	nw_json_set(o, "launches", v->launches ? nw_json_int((int64_t)v->launches) : json_null(), failed);
	if (v->replay)   /* a graph replay: op and seq name the graph's first captured op */
		nw_json_set(o, "replay", nw_json_int((int64_t)v->replay), failed);
	nw_json_set(o, "culprits", rank_array(&v->culprits, failed), failed);
	nw_json_set(o, "waiting", rank_array(&v->waiting, failed), failed);
	nw_json_set(o, "unknown", rank_array(&v->unknown, failed), failed);
	nw_json_set(o, "summary", nw_json_str(v->summary ? v->summary : ""), failed);
	nw_json_set(o, "evidence", str_array(v->evidence, v->nevidence, failed), failed);
	nw_json_set(o, "hint", v->hint && v->hint[0] ? nw_json_str(v->hint) : json_null(), failed);
	return o;
}

static json_t *env_diff_json(const struct nw_env_diff *d, int *failed)
{
	json_t *o = json_object(), *values = json_array();
	nw_json_set(o, "name", nw_json_str(d->name ? d->name : ""), failed);
	for (size_t i = 0; i < d->nvalues; i++) {
		const struct nw_env_value *val = &d->values[i];
		json_t *vo = json_object();
		nw_json_set(vo, "value", nw_json_str(val->value ? val->value : ""), failed);
		nw_json_set(vo, "ranks", rank_array(&val->ranks, failed), failed);
		nw_json_set(vo, "hosts", str_array(val->hosts, val->nhosts, failed), failed);
		nw_json_push(values, vo, failed);
	}
	nw_json_set(o, "values", values, failed);
	return o;
}

static json_t *stack_json(const struct nw_stack_group *g, int *failed)
{
	json_t *o = json_object();
	nw_json_set(o, "ranks", rank_array(&g->ranks, failed), failed);
	nw_json_set(o, "thread", nw_json_str(g->thread_name ? g->thread_name : ""), failed);
	nw_json_set(o, "frames", str_array(g->frames, g->nframes, failed), failed);
	nw_json_set(o, "python", json_boolean(g->python), failed);
	return o;
}

static json_t *proc_json(const struct nw_proc *p, int *failed)
{
	json_t *o = json_object();
	nw_json_set(o, "rank", p->rank >= 0 ? nw_json_int(p->rank) : json_null(), failed);
	nw_json_set(o, "host", nw_json_str(p->hdr.host), failed);
	nw_json_set(o, "pid", nw_json_int(p->hdr.pid), failed);
	nw_json_set(o, "path", nw_json_str(p->path ? p->path : ""), failed);
	nw_json_set(o, "alive", p->alive < 0 ? json_null() : json_boolean(p->alive), failed);
	nw_json_set(o, "dump", json_boolean(p->is_dump), failed);
	nw_json_set(o, "snapshot", json_boolean(p->snapshot), failed);
	nw_json_set(o, "stacks_from_attach", json_boolean(p->snapshot || p->attached), failed);
	json_t *sees = json_array();
	for (int b = 0; b < NW_CAP_COUNT && sees; b++)
		if (p->caps & (1u << b) && json_array_append_new(sees, nw_json_str(nw_cap_name(1u << b))))
			*failed = 1;
	nw_json_set(o, "sees", sees, failed);
	/* What it could not record (lost.c). */
	nw_json_set(o, "ops_dropped", nw_json_int((int64_t)p->hdr.ops_dropped), failed);
	nw_json_set(o, "comms_dropped", nw_json_int((int64_t)p->hdr.comms_dropped), failed);
	nw_json_set(o, "comm_table_full", json_boolean((p->hdr.flags & NW_SEG_F_COMMS_FULL) != 0), failed);
	nw_json_set(o, "threads_dropped", nw_json_int(p->hdr.threads_dropped), failed);
	nw_json_set(o, "recording_stopped",
	            p->hdr.flags & NW_SEG_F_STOPPED ? nw_json_str(p->hdr.error) : json_null(), failed);
	return o;
}

static json_t *lost_json(const struct nw_lost *l, int *failed)
{
	json_t *o = json_object(), *pids = json_array();
	nw_json_set(o, "ops", nw_json_int((int64_t)l->ops), failed);
	nw_json_set(o, "comms", nw_json_int((int64_t)l->comms), failed);
	nw_json_set(o, "comm_tables_full", nw_json_int(l->comms_full), failed);
	nw_json_set(o, "stack_threads", nw_json_int((int64_t)l->threads), failed);
	nw_json_set(o, "recording_stopped", nw_json_int(l->stopped), failed);
	nw_json_set(o, "process_count", nw_json_int(l->nprocs), failed);
	nw_json_set(o, "ranks", rank_array(&l->ranks, failed), failed);
	for (uint32_t i = 0; i < l->nunranked && i < NW_LOST_PIDS; i++)
		nw_json_push(pids, nw_json_int(l->unranked_pid[i]), failed);
	nw_json_set(o, "unranked_pids", pids, failed);
	return o;
}

static json_t *job_json(const struct nw_job *job, int *failed)
{
	json_t *o = json_object();
	nw_json_set(o, "name", nw_json_str(job->name ? job->name : ""), failed);
	nw_json_set(o, "process_count", nw_json_int((int64_t)nw_job_process_count(job)), failed);
	nw_json_set(o, "world_size", job->world_size > 0 ? nw_json_int(job->world_size) : json_null(), failed);
	nw_json_set(o, "missing_ranks", rank_array(&job->missing, failed), failed);
	json_t *hosts = json_object();
	nw_json_set(hosts, "count", nw_json_int(job->hosts_unheard), failed);
	nw_json_set(hosts, "ranks_per_host", job->ranks_per_host > 0 ? nw_json_int(job->ranks_per_host) : json_null(),
	            failed);
	nw_json_set(hosts, "ranks", rank_array(&job->unheard, failed), failed);
	nw_json_set(o, "hosts_not_heard_from", hosts, failed);
	nw_json_set(o, "timeout_s", json_real(job->timeout_s), failed);
	nw_json_set(o, "timeout_from", nw_json_str(job->timeout_from == NW_TIMEOUT_NONE      ? "none"
	                                           : job->timeout_from == NW_TIMEOUT_DEFAULT ? "default"
	                                                                                     : "set"),
	            failed);
	nw_json_set(o, "lost", lost_json(&job->lost, failed), failed);

	json_t *arr = json_array();
	for (size_t i = 0; i < job->nverdicts; i++)
		nw_json_push(arr, verdict_json(&job->verdicts[i], failed), failed);
	nw_json_set(o, "verdicts", arr, failed);

	arr = json_array();
	for (size_t i = 0; i < job->ndiffs; i++)
		nw_json_push(arr, env_diff_json(&job->diffs[i], failed), failed);
	nw_json_set(o, "env_diffs", arr, failed);

	arr = json_array();
	for (size_t i = 0; i < job->nstacks; i++)
		nw_json_push(arr, stack_json(&job->stacks[i], failed), failed);
	nw_json_set(o, "stacks", arr, failed);

	arr = json_array();
	for (size_t i = 0; i < job->nprocs; i++)
		nw_json_push(arr, proc_json(job->procs[i], failed), failed);
	nw_json_set(o, "processes", arr, failed);
	return o;
}

static const char *read_code_name(int code)
{
	switch (code) {
	case NW_READ_ERR_IO: return "io";
	case NW_READ_ERR_FORMAT: return "format";
	case NW_READ_ERR_VERSION: return "version";
	case NW_READ_ERR_NOT_READY: return "not_ready";
	case NW_READ_ERR_NOMEM: return "nomem";
	case NW_READ_ERR_EMPTY: return "empty";
	default: return "other";
	}
}

static json_t *bad_json(const struct nw_bad_file *b, int *failed)
{
	json_t *o = json_object();
	const char *msg = b->err.message;
	size_t plen = b->path ? strlen(b->path) : 0;
	/* The message is "PATH: problem": keep the problem, the path has its field. */
	if (plen && strncmp(msg, b->path, plen) == 0 && msg[plen] == ':' && msg[plen + 1] == ' ')
		msg += plen + 2;
	nw_json_set(o, "path", nw_json_str(b->path ? b->path : ""), failed);
	nw_json_set(o, "code", json_string(read_code_name(b->err.code)), failed);
	nw_json_set(o, "error", nw_json_str(msg), failed);
	return o;
}

int nw_render_json(FILE *out, const struct nw_analysis *a)
{
	int failed = 0;
	int worst = NW_V_HEALTHY;
	for (size_t j = 0; j < a->njobs; j++)
		for (size_t i = 0; i < a->jobs[j].nverdicts; i++)
			if (a->jobs[j].verdicts[i].kind > worst)
				worst = a->jobs[j].verdicts[i].kind;

	json_t *doc = json_object();
	nw_json_set(doc, "schema", json_string("ncclwatch.diagnose"), &failed);
	nw_json_set(doc, "version", json_integer(1), &failed);
	nw_json_set(doc, "worst", nw_json_str(nw_verdict_name(worst)), &failed);
	nw_json_set(doc, "files_read", nw_json_int((int64_t)a->nread), &failed);
	json_t *arr = json_array();
	for (size_t j = 0; j < a->njobs; j++)
		nw_json_push(arr, job_json(&a->jobs[j], &failed), &failed);
	nw_json_set(doc, "jobs", arr, &failed);
	arr = json_array();
	for (size_t i = 0; i < a->nbad; i++)
		nw_json_push(arr, bad_json(&a->bad[i], &failed), &failed);
	nw_json_set(doc, "unreadable", arr, &failed);
	arr = json_array();
	for (size_t i = 0; i < a->nnotes; i++)
		nw_json_push(arr, nw_json_str(a->notes[i]), &failed);
	nw_json_set(doc, "notes", arr, &failed);

	return nw_json_write_doc(doc, failed, out, 9);
}
