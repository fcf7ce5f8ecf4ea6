/* See show_fr.h. */
#include "../decide/decide.h"
#include "show_fr.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "../escape.h"
#include "../sources/fr/fr.h"

int nw_show_fr(FILE *out, const char *path, struct nw_read_error *err)
{
	struct nw_intern in = { 0 };
	struct nw_proc *p = NULL;
	int rc = nw_fr_read(path, &in, NULL, NULL, &p, err);
	if (rc != NW_READ_OK) {
		nw_intern_free(&in);
		return rc;
	}
	char b[NW_NAME_BUF], b2[NW_NAME_BUF];
	/* Strings from the dump (and its file name) escaped: ../escape.h. */
	fputs("flight-recorder ", out);
	nw_put_escaped(out, path, 0);
	fprintf(out, "\n  rank %d\n  world_size %d\n  job ", (int)p->rank, (int)p->hdr.world_size);
	nw_put_escaped_n(out, p->hdr.job, strnlen(p->hdr.job, sizeof p->hdr.job), 0);
	fprintf(out, "\n  nccl %s\n", nw_nccl_version_str(p->hdr.nccl_version, b));
	fprintf(out, "  entries %" PRIu64 "\n  ", (uint64_t)p->hdr.ring_head);
	nw_put_escaped(out, p->source_note ? p->source_note : "", 0);
	fputc('\n', out);
	fprintf(out, "comms count=%u\n", p->ncomms);
	for (uint32_t i = 0; i < p->ncomms; i++) {
		const struct nw_seg_comm *c = &p->comms[i];
		fprintf(out, "  comm %u id=%016" PRIx64 " rank=%d/%d coll_enqueued=%" PRIu64 " coll_started=%" PRIu64
		        " coll_completed=%" PRIu64 " p2p_enqueued=%" PRIu64 " p2p_completed=%" PRIu64 " name=",
		        i, c->comm_id, (int)c->rank, (int)c->nranks, (uint64_t)c->coll_enqueued,
		        (uint64_t)c->coll_started, (uint64_t)c->coll_completed, (uint64_t)c->p2p_enqueued,
		        (uint64_t)c->p2p_completed);
		nw_put_escaped_n(out, c->name, strnlen(c->name, sizeof c->name), 0);
		fputc('\n', out);
	}
	fprintf(out, "peers count=%u\n", p->npeers);
	for (uint32_t i = 0; i < p->npeers; i++) {
		const struct nw_seg_peer *q = &p->peers[i];
		fprintf(out, "  peer %u comm=%u peer=%d send_enqueued=%" PRIu64 " send_completed=%" PRIu64
		        " recv_enqueued=%" PRIu64 " recv_completed=%" PRIu64 "\n", i, q->comm_slot, (int)q->peer,
		        (uint64_t)q->send_enqueued, (uint64_t)q->send_completed, (uint64_t)q->recv_enqueued,
		        (uint64_t)q->recv_completed);
	}
	/* The ops the engine keeps: every one not completed, the last few of each comm. */
	fprintf(out, "records shown=%zu (the engine's: pending ones and the last %d of each comm)\n", p->nops,
	        NW_ANALYSIS_RECENT);
	for (size_t i = 0; i < p->nops; i++) {
		const struct nw_seg_op *op = &p->ops[i];
		char db[NW_NAME_BUF];
		fprintf(out, "  op %zu created=%" PRIu64 " %s comm=%016" PRIx64 " rank=%d/%d seq=%" PRIu64
		        " count=%" PRIu64 " dtype=%s %s=%d state=%s", i, op->enqueue_ns, nw_op_kind_name(op->kind, b),
		        op->comm_id, (int)op->rank, (int)op->nranks, op->seq, op->count,
		        nw_datatype_name(op->datatype, db), NW_OP_IS_P2P(op->kind) ? "peer" : "root", (int)op->root,
		        nw_op_state_name(op->state, b2));
		if (p->op_site && p->op_site[i]) {
			fputs(" site=\"", out);
			nw_put_escaped(out, p->op_site[i], NW_ESC_QUOTE);
			fputc('"', out);
		}
		fputc('\n', out);
	}
	nw_proc_free(p);
	nw_intern_free(&in);
	return NW_READ_OK;
}
