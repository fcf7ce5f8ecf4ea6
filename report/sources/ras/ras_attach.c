/* ras_attach: which RAS address answers for a set of processes found by
 * attach, and the query (see nw_ras_query_pids in ras_client.h). */
#include "ras_client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int nw_ras_query_pids(const pid_t *pids, size_t n, const struct nw_ras_query_opts *o, struct nw_ras_report *out,
                      char *note, size_t notelen)
{
	struct cand { char addr[128]; size_t votes; } *c = calloc(n ? n : 1, sizeof *c);
	size_t nc = 0, off = 0;
	memset(out, 0, sizeof *out);
	if (!c) {
		snprintf(note, notelen, "RAS: out of memory");
		return NW_RAS_ERROR;
	}
	for (size_t i = 0; i < n; i++) {
		char addr[128];
		int enabled = 1;
		nw_ras_addr_of_pid(pids[i], addr, sizeof addr, &enabled);   /* unreadable: the default address */
		if (!enabled) { off++; continue; }
		size_t k;
		for (k = 0; k < nc && strcmp(c[k].addr, addr); k++) {}
		if (k == nc) snprintf(c[nc++].addr, sizeof c[0].addr, "%s", addr);
		c[k].votes++;
	}
	if (nc == 0) {
		free(c);
		snprintf(note, notelen, "RAS off in every process (NCCL_RAS_ENABLE not 1): stacks alone");
		return NW_RAS_DISABLED;
	}
	size_t best = 0;
	for (size_t k = 1; k < nc; k++) if (c[k].votes > c[best].votes) best = k;
	struct nw_ras_query_opts q = o ? *o : (struct nw_ras_query_opts){ .server_timeout_s = -1 };
	q.addr = c[best].addr;
	char err[512];
	int rc = nw_ras_query(&q, out, err, sizeof err);
	if (rc == NW_RAS_OK)
		snprintf(note, notelen, "RAS at %s: NCCL %s, %zu communicator%s%s", q.addr, out->nccl_version, out->ncomms,
		         out->ncomms == 1 ? "" : "s", off ? " (some processes have RAS off)" : "");
	else
		snprintf(note, notelen, "%s: stacks alone", err);
	free(c);
	return rc;
}
