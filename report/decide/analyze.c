/* analyze: nw_analyze (load, then model and rules per job) and
 * nw_analysis_free. */
#include "decide.h"


#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void job_free(struct nw_job *job)
{
	free(job->name);
	for (size_t i = 0; i < job->nprocs; i++)
		nw_proc_free(job->procs[i]);
	free(job->procs);
	nw_rankset_free(&job->missing);
	nw_rankset_free(&job->unheard);
	nw_rankset_free(&job->lost.ranks);
	struct nw_comm_view *v, *vt;
	HASH_ITER(hh, job->comms, v, vt) {
		HASH_DEL(job->comms, v);
		free(v->members);
		free(v->entering);
		free(v);
	}
	for (size_t i = 0; i < job->nverdicts; i++) {
		struct nw_verdict *vd = &job->verdicts[i];
		nw_rankset_free(&vd->culprits);
		nw_rankset_free(&vd->waiting);
		nw_rankset_free(&vd->unknown);
		free(vd->summary);
		for (size_t k = 0; k < vd->nevidence; k++)
			free(vd->evidence[k]);
		free(vd->evidence);
		nw_findings_free(vd->found);
	}
	free(job->verdicts);
	for (size_t i = 0; i < job->ndiffs; i++) {
		struct nw_env_diff *d = &job->diffs[i];
		for (size_t k = 0; k < d->nvalues; k++) {
			struct nw_env_value *e = &d->values[k];
			free(e->value);
			nw_rankset_free(&e->ranks);
			for (size_t h = 0; h < e->nhosts; h++)
				free(e->hosts[h]);
			free(e->hosts);
		}
		free(d->values);
		free(d->name);
	}
	free(job->diffs);
	for (size_t i = 0; i < job->nstacks; i++) {
		nw_rankset_free(&job->stacks[i].ranks);
		free(job->stacks[i].thread_name);   /* frames are interned */
	}
	free(job->stacks);
	memset(job, 0, sizeof *job);
}

void nw_analysis_free(struct nw_analysis *a)
{
	for (size_t j = 0; j < a->njobs; j++)
		job_free(&a->jobs[j]);
	free(a->jobs);
	for (size_t i = 0; i < a->nbad; i++)
		free(a->bad[i].path);
	free(a->bad);
	for (size_t i = 0; i < a->nnotes; i++)
		free(a->notes[i]);
	free(a->notes);
	if (a->intern) {
		nw_intern_free(a->intern);
		free(a->intern);
	}
	memset(a, 0, sizeof *a);
}

int nw_analyze(const char *const *paths, size_t npaths, const struct nw_analysis_options *opt,
               struct nw_analysis *a, struct nw_read_error *err)
{
	struct nw_read_error local;
	if (!err)
		err = &local;
	memset(a, 0, sizeof *a);
	memset(err, 0, sizeof *err);
	(void)nw_hash_oom_taken();
	struct nw_load ld = { 0 };
	if (!(a->intern = calloc(1, sizeof *a->intern)))
		goto nomem;
	a->native = opt ? opt->native : 0;
	a->hook = opt ? opt->hook : NULL;
	/* no path: the hook's processes alone (a RAS report of its own) */
	if ((npaths || !(a->hook && a->hook->procs)) && nw_load(paths, npaths, opt ? opt->max_threads : 0, 1, a, &ld, err)) {
		nw_analysis_free(a);
		return -1;
	}
	/* --job keeps the processes read of that job; those a hook adds are a
	 * job of their own (a RAS report of its own), kept as before */
	size_t nread = 0;
	struct nw_analysis_options mopt = opt ? *opt : (struct nw_analysis_options){ 0 };
	if (nw_merge_snapshots(&ld))
		goto nomem;
	nread = ld.nprocs;
	if (a->hook && a->hook->procs && a->hook->procs(a->hook->arg, &ld.procs, &ld.nprocs))
		goto nomem;
	if (mopt.job) {
		size_t kept = 0;
		for (size_t i = 0; i < ld.nprocs; i++) {
			if (i < nread && strcmp(mopt.job, ld.procs[i]->hdr.job) != 0)
				nw_proc_free(ld.procs[i]);
			else
				ld.procs[kept++] = ld.procs[i];
		}
		ld.nprocs = kept;
		mopt.job = NULL;
	}
	if (nw_model(a, &ld, &mopt))
		goto nomem;
	for (size_t i = 0; i < a->njobs; i++)
		if (nw_job_verdicts(a, &a->jobs[i], a->intern))
			goto nomem;
	a->hook = NULL;
	return 0;
nomem:
	nw_analysis_free(a);
	err->code = NW_READ_ERR_NOMEM;
	err->sys_errno = ENOMEM;
	snprintf(err->message, sizeof err->message, "%s: out of memory while analyzing", npaths ? paths[0] : "analysis");
	return -1;
}

int nw_load_processes(const char *const *paths, size_t npaths, const struct nw_analysis_options *opt,
                      struct nw_analysis *a, struct nw_proc ***procs, size_t *nprocs,
                      struct nw_read_error *err)
{
	struct nw_read_error local;
	if (!err)
		err = &local;
	memset(a, 0, sizeof *a);
	memset(err, 0, sizeof *err);
	*procs = NULL;
	*nprocs = 0;
	(void)nw_hash_oom_taken();
	struct nw_load ld = { 0 };
	if (!(a->intern = calloc(1, sizeof *a->intern))) {
		err->code = NW_READ_ERR_NOMEM;
		err->sys_errno = ENOMEM;
		snprintf(err->message, sizeof err->message, "out of memory");
		return -1;
	}
	a->native = opt ? opt->native : 0;
	if (nw_load(paths, npaths, opt ? opt->max_threads : 0, 0, a, &ld, err)) {
		nw_analysis_free(a);
		return -1;
	}
	/* Only the job asked for. */
	size_t kept = 0;
	for (size_t i = 0; i < ld.nprocs; i++) {
		if (opt && opt->job && strncmp(ld.procs[i]->hdr.job, opt->job, sizeof ld.procs[i]->hdr.job) != 0)
			nw_proc_free(ld.procs[i]);
		else
			ld.procs[kept++] = ld.procs[i];
	}
	*procs = ld.procs;
	*nprocs = kept;
	return 0;
}
