/* `ncclwatch status --json`: the status as one JSON document, schema
 * docs/json-schema.md ("schema": "ncclwatch.status", "version": 1) and
 * docs/status.schema.json. The same jobs, order and states as the text
 * (status.c, status_jobs.h). */
#include "words.h"
#include "status_jobs.h"
#include "json_util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../names.h"

static json_t *seconds(double s)
{
	return json_real((double)(int64_t)(s * 1000.0 + 0.5) / 1000.0);   /* ms are enough */
}

/* An op: kind, seq (null without one), comm (null without one), state, age_s. */
static json_t *op_json(const struct nw_proc *p, const struct nw_seg_op *op, double age_s, int *failed)
{
	char b[NW_NAME_BUF], id[17];
	json_t *o = json_object();
	nw_json_set(o, "kind", nw_json_str(nw_op_kind_name(op->kind, b)), failed);
	nw_json_set(o, "seq", op->seq ? nw_json_int((int64_t)op->seq) : json_null(), failed);
	snprintf(id, sizeof id, "%016" PRIx64, op->comm_id);
	nw_json_set(o, "comm", op->comm_id ? json_string(id) : json_null(), failed);
	nw_json_set(o, "state", nw_json_str(nw_op_state_name(op->state, b)), failed);
	(void)p;
	nw_json_set(o, "age_s", seconds(age_s), failed);
	return o;
}

static json_t *rank_json(const struct nw_proc *p, int *failed)
{
	json_t *o = json_object();
	nw_json_set(o, "host", nw_json_str(p->hdr.host), failed);
	nw_json_set(o, "pid", nw_json_int(p->hdr.pid), failed);
	nw_json_set(o, "rank", p->rank >= 0 ? nw_json_int(p->rank) : json_null(), failed);
	nw_json_set(o, "alive", json_string(p->alive > 0 ? "alive" : p->alive == 0 ? "dead" : "unknown"), failed);
	nw_json_set(o, "comms", nw_json_int(p->ncomms), failed);
	nw_json_set(o, "path", nw_json_str(p->path), failed);
	if (p->nops) {
		/* the newest enqueue, as the text's `last` */
		const struct nw_seg_op *op = &p->ops[p->nops - 1];
		for (size_t i = 0; i < p->nops; i++)
			if (p->ops[i].enqueue_ns > op->enqueue_ns)
				op = &p->ops[i];
		double age = p->now_ns > op->enqueue_ns ? (double)(p->now_ns - op->enqueue_ns) / 1e9 : 0;
		nw_json_set(o, "last", op_json(p, op, age, failed), failed);
	} else {
		nw_json_set(o, "last", json_null(), failed);
	}
	double age;
	const struct nw_seg_op *pend = nw_status_oldest_pending(p, &age);
	nw_json_set(o, "oldest_pending", pend ? op_json(p, pend, age, failed) : json_null(), failed);
	return o;
}

static json_t *job_json(const struct nw_status_job *s, int *failed)
{
	const struct nw_job *job = s->job;
	json_t *o = json_object();
	nw_json_set(o, "name", nw_json_str(job->name ? job->name : ""), failed);
	nw_json_set(o, "state", json_string(nw_job_state_name(s->state)), failed);
	nw_json_set(o, "process_count", nw_json_int((int64_t)nw_job_process_count(job)), failed);
	nw_json_set(o, "rank_count", nw_json_int((int64_t)job->nprocs), failed);
	nw_json_set(o, "world_size", job->world_size >= 0 ? nw_json_int(job->world_size) : json_null(), failed);
	json_t *arr = json_array();
	for (uint32_t i = 0; i < job->missing.n; i++)
		nw_json_push(arr, nw_json_int(job->missing.v[i]), failed);
	nw_json_set(o, "missing_ranks", arr, failed);
	nw_json_set(o, "timeout_s", json_real(job->timeout_s), failed);
	nw_json_set(o, "alive", nw_json_int((int64_t)s->alive), failed);
	nw_json_set(o, "dead", nw_json_int((int64_t)s->dead), failed);
	nw_json_set(o, "remote", nw_json_int((int64_t)s->remote), failed);
	nw_json_set(o, "started_unix_s", s->newest_start_ns ? seconds((double)s->newest_start_ns / 1e9) : json_null(),
	            failed);
	if (s->state == NW_JOB_HUNG) {
		json_t *w = json_object();
		nw_json_set(w, "rank", s->stuck->rank >= 0 ? nw_json_int(s->stuck->rank) : json_null(), failed);
		nw_json_set(w, "pid", nw_json_int(s->stuck->hdr.pid), failed);
		nw_json_set(w, "op", op_json(s->stuck, s->stuck_op, s->stuck_age_s, failed), failed);
		nw_json_set(o, "longest_wait", w, failed);
	} else {
		nw_json_set(o, "longest_wait", json_null(), failed);
	}
	nw_json_set(o, "quiet_s", s->quiet_s >= 0 ? seconds(s->quiet_s) : json_null(), failed);
	arr = json_array();
	for (size_t i = 0; i < job->nprocs; i++)
		nw_json_push(arr, rank_json(job->procs[i], failed), failed);
	nw_json_set(o, "ranks", arr, failed);
	return o;
}

int nw_render_status_json(FILE *out, const struct nw_analysis *a)
{
	size_t counts[NW_JOB_STATES] = { 0 };
	struct nw_status_job *order = nw_status_jobs(a, counts);
	if (!order)
		return -1;
	int failed = 0;
	json_t *doc = json_object();
	nw_json_set(doc, "schema", json_string("ncclwatch.status"), &failed);
	nw_json_set(doc, "version", json_integer(1), &failed);
	json_t *sum = json_object();
	nw_json_set(sum, "jobs", nw_json_int((int64_t)a->njobs), &failed);
	for (int st = 0; st < NW_JOB_STATES; st++)
		nw_json_set(sum, nw_job_state_name((enum nw_job_state)st), nw_json_int((int64_t)counts[st]), &failed);
	nw_json_set(doc, "summary", sum, &failed);
	json_t *arr = json_array();
	for (size_t j = 0; j < a->njobs; j++)
		nw_json_push(arr, job_json(&order[j], &failed), &failed);
	nw_json_set(doc, "jobs", arr, &failed);
	free(order);
	arr = json_array();
	for (size_t i = 0; i < a->nbad; i++) {
		json_t *o = json_object();
		const struct nw_bad_file *b = &a->bad[i];
		const char *msg = b->err.message;
		size_t plen = b->path ? strlen(b->path) : 0;
		if (plen && strncmp(msg, b->path, plen) == 0 && msg[plen] == ':' && msg[plen + 1] == ' ')
			msg += plen + 2;
		nw_json_set(o, "path", nw_json_str(b->path ? b->path : ""), &failed);
		nw_json_set(o, "error", nw_json_str(msg), &failed);
		nw_json_push(arr, o, &failed);
	}
	nw_json_set(doc, "unreadable", arr, &failed);
	return nw_json_write_doc(doc, failed, out, 15);
}
