/* verdict_entry: libncclwatch-engine.so's entry point (engine.h), the
 * watchdog's cross-rank verdict: analysis, its signature, the text. */
#include "engine.h"

#include "../decide/decide.h"
#include "../words/words.h"

#include <stdio.h>
#include <stdlib.h>

/* What the verdict says, without what changes every second (ages): the
 * kinds, communicators, ops and rank sets of every job's verdicts, and
 * which ranks share which stack. */
static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h;
}

static uint64_t mix_set(uint64_t h, const struct nw_rankset *s)
{
	h = mix(h, s->n);
	for (uint32_t i = 0; i < s->n; i++)
		h = mix(h, (uint64_t)(uint32_t)s->v[i]);
	return h;
}

static uint64_t signature(const struct nw_analysis *a)
{
	uint64_t h = 1;
	for (size_t j = 0; j < a->njobs; j++) {
		const struct nw_job *job = &a->jobs[j];
		h = mix(h, job->nverdicts);
		for (size_t i = 0; i < job->nverdicts; i++) {
			const struct nw_verdict *v = &job->verdicts[i];
			h = mix(h, (uint64_t)v->kind);
			h = mix(h, v->comm_id);
			h = mix(h, v->op_kind);
			h = mix(h, v->seq);
			h = mix(h, v->launches);
			h = mix(h, v->replay);
			h = mix_set(h, &v->culprits);
			h = mix_set(h, &v->waiting);
			h = mix_set(h, &v->unknown);
		}
		/* Stacks arrive with the peers' dumps: a new group is news. */
		h = mix(h, job->nstacks);
		for (size_t i = 0; i < job->nstacks; i++)
			h = mix_set(h, &job->stacks[i].ranks);
	}
	return h ? h : 1;
}

/* Declared with engine.h's type, so the compiler checks the definition. */
__attribute__((visibility("default"))) nw_engine_verdict_fn nw_engine_verdict_v2;

int nw_engine_verdict_v2(const struct nw_engine_verdict_in *in, struct nw_engine_verdict_out *out)
{
	struct nw_analysis_options opt = { .timeout_s = in->timeout_s, .job = in->job,
	                                    .max_threads = 1 /* inside the application: no extra threads */ };
	struct nw_analysis a;
	struct nw_read_error err;
	out->text = NULL;
	out->len = 0;
	if (nw_analyze(in->paths, in->npaths, &opt, &a, &err) != 0)
		return -1;
	if (nw_words_say(&a) != 0) {
		nw_analysis_free(&a);
		return -1;
	}
	out->signature = signature(&a);
	out->worst_kind = nw_analysis_worst(&a);
	out->worst_name = nw_verdict_name(out->worst_kind);
	FILE *f = out->signature != in->last_signature ? open_memstream(&out->text, &out->len) : NULL;
	if (f) {
		nw_render_text(f, &a, 0);
		fclose(f);
	}
	nw_analysis_free(&a);
	return 0;
}
