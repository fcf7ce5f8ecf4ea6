/* ras_input: see ras_input.h. */
#include "ras_input.h"

const struct nw_ras_comm *nw_ras_world(const struct nw_ras_report *r)
{
	const struct nw_ras_comm *w = NULL;
	for (size_t i = 0; i < r->ncomms; i++) {
		const struct nw_ras_comm *c = &r->comms[i];
		if (!w || c->size > w->size || (c->size == w->size && c->nranks > w->nranks) ||
		    (c->size == w->size && c->nranks == w->nranks && c->hash < w->hash))
			w = c;
	}
	return w;
}

size_t nw_ras_first_pid(struct nw_proc *const *cand, size_t nc, int64_t pid)
{
	size_t lo = 0, hi = nc;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cand[mid]->hdr.pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
