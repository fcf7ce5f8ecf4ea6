/* Text rendering of a segment snapshot (see show_text.h). Every value is
 * printed from the private snapshot; strings are escaped so that one record
 * is always one line whatever bytes the file holds, and an empty string
 * prints as "-" so that every line has a value. */
#include "show_text.h"

#include <inttypes.h>
#include <string.h>
#include <time.h>
#include "../names.h"

/* A string with control bytes and backslashes escaped (\n, \xNN, \\). */
static void put_escaped(FILE *out, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '\\')
			fputs("\\\\", out);
		else if (c < 0x20 || c == 0x7f)
			fprintf(out, "\\x%02x", c);
		else
			fputc(c, out);
	}
}

static void put_field(FILE *out, const char *key, const char *value)
{
	fprintf(out, "  %-12s ", key);
	put_escaped(out, value[0] ? value : "-");
	fputc('\n', out);
}

/* Nanoseconds after the segment's start as "+S.UUUUUU"; "-" for 0 (never). */
static const char *rel_time(uint64_t ns, uint64_t start_ns, char buf[32])
{
	if (ns == 0)
		return "-";
	uint64_t d = ns >= start_ns ? ns - start_ns : start_ns - ns;
	snprintf(buf, 32, "%c%" PRIu64 ".%06" PRIu64, ns >= start_ns ? '+' : '-', d / 1000000000u,
	         d % 1000000000u / 1000u);
	return buf;
}

static const char *iso_time(uint64_t realtime_ns, char buf[48])
{
	time_t secs = (time_t)(realtime_ns / 1000000000u);
	struct tm tm;
	if (realtime_ns == 0 || !gmtime_r(&secs, &tm)) {
		snprintf(buf, 48, "unknown");
		return buf;
	}
	size_t n = strftime(buf, 48, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, 48 - n, ".%09" PRIu64 "Z", realtime_ns % 1000000000u);
	return buf;
}

static void show_header(FILE *out, const struct nw_segment *seg)
{
	const struct nw_seg_header *h = &seg->header;
	char buf[256], name[NW_NAME_BUF], flags[NW_FLAGS_BUF];

	fputs("segment ", out);
	put_escaped(out, seg->path);
	fputc('\n', out);
	snprintf(buf, sizeof buf, "%u.%u", h->version_major, h->version_minor);
	put_field(out, "format", buf);
	put_field(out, "host", h->host);
	snprintf(buf, sizeof buf, "%" PRId64, h->pid);
	put_field(out, "pid", buf);
	snprintf(buf, sizeof buf, "%" PRId64, h->ppid);
	put_field(out, "ppid", buf);
	snprintf(buf, sizeof buf, "%u", h->uid);
	put_field(out, "uid", buf);
	snprintf(buf, sizeof buf, "%d", h->global_rank);
	put_field(out, "rank", buf);
	snprintf(buf, sizeof buf, "%d", h->local_rank);
	put_field(out, "local_rank", buf);
	snprintf(buf, sizeof buf, "%d", h->world_size);
	put_field(out, "world_size", buf);
	put_field(out, "job", h->job);
	put_field(out, "start", iso_time(h->start_realtime_ns, buf));
	put_field(out, "flags", nw_seg_flags_str(h->flags, flags));
	put_field(out, "nccl", nw_nccl_version_str(h->nccl_version, name));
	put_field(out, "nccl_lib", h->nccl_lib);
	put_field(out, "cuda_driver", nw_cuda_version_str(h->cuda_driver_version, name));
	put_field(out, "gpu", h->gpu_name);
	/* The reader checked that the list ends inside the field. */
	for (const char *e = h->env; *e; e += strlen(e) + 1)
		put_field(out, "env", e);
	put_field(out, "heartbeat", rel_time(h->heartbeat_ns, h->start_monotonic_ns, buf));
	snprintf(buf, sizeof buf, "%" PRIu64, (uint64_t)h->ops_dropped);
	put_field(out, "ops_dropped", buf);
	if (h->flags & NW_SEG_F_STOPPED) {
		snprintf(buf, sizeof buf, "yes: %s", h->error[0] ? h->error : "(no reason given)");
		put_field(out, "stopped", buf);
	} else {
		put_field(out, "stopped", "no");
	}
	snprintf(buf, sizeof buf, "%" PRIu64 " bytes", h->segment_size);
	put_field(out, "size", buf);
}

static void show_comms(FILE *out, const struct nw_segment *seg)
{
	char origin[NW_NAME_BUF], state[NW_NAME_BUF], init_res[NW_NAME_BUF], async[NW_NAME_BUF];
	fprintf(out, "comms count=%u capacity=%u\n", seg->comm_count, seg->header.comm_capacity);
	for (uint32_t i = 0; i < seg->comm_count; i++) {
		const struct nw_seg_comm *c = &seg->comms[i];
		fprintf(out,
		        "  comm %u id=%016" PRIx64 " origin=%s rank=%d/%d state=%s device=%d"
		        " init_result=%s coll_enqueued=%" PRIu64 " coll_started=%" PRIu64
		        " coll_completed=%" PRIu64 " p2p_enqueued=%" PRIu64 " p2p_completed=%" PRIu64
		        " async_error=%s parent=%016" PRIx64 " color=%d key=%d blocking=%u bus_id=",
		        i, c->comm_id, nw_comm_origin_name(c->origin, origin), c->rank, c->nranks,
		        nw_comm_state_name(c->state, state), c->cuda_device,
		        nw_nccl_result_name(c->init_result, init_res), (uint64_t)c->coll_enqueued,
		        (uint64_t)c->coll_started, (uint64_t)c->coll_completed, (uint64_t)c->p2p_enqueued,
		        (uint64_t)c->p2p_completed, nw_nccl_result_name(c->async_error, async),
		        c->parent_id, c->split_color, c->split_key, c->blocking);
		put_escaped(out, c->bus_id[0] ? c->bus_id : "-");
		fputs(" name=", out);
		put_escaped(out, c->name[0] ? c->name : "-");
		fputc('\n', out);
	}
}

static void show_peers(FILE *out, const struct nw_segment *seg)
{
	fprintf(out, "peers count=%u capacity=%u\n", seg->peer_count, seg->header.peer_capacity);
	for (uint32_t i = 0; i < seg->peer_count; i++) {
		const struct nw_seg_peer *p = &seg->peers[i];
		const struct nw_seg_comm *c = nw_segment_comm_at(seg, p->comm_slot);
		char id[24] = "?";
		if (c)
			snprintf(id, sizeof id, "%016" PRIx64, c->comm_id);
		fprintf(out,
		        "  peer %u comm=%u id=%s peer=%d send_enqueued=%" PRIu64 " send_completed=%" PRIu64
		        " recv_enqueued=%" PRIu64 " recv_completed=%" PRIu64 "\n",
		        i, p->comm_slot, id, p->peer, (uint64_t)p->send_enqueued, (uint64_t)p->send_completed,
		        (uint64_t)p->recv_enqueued, (uint64_t)p->recv_completed);
	}
}

static void show_op(FILE *out, const struct nw_segment *seg, const struct nw_seg_op *op)
{
	const uint64_t t0 = seg->header.start_monotonic_ns;
	char kind[NW_NAME_BUF], dtype[NW_NAME_BUF], redop[NW_NAME_BUF], state[NW_NAME_BUF],
	     result[NW_NAME_BUF], flags[NW_FLAGS_BUF], t_enq[32], t_start[32], t_end[32], root[16];
	if (op->root < 0)
		snprintf(root, sizeof root, "-");
	else
		snprintf(root, sizeof root, "%d", op->root);
	fprintf(out,
	        "  op %" PRIu64 " t=%s tid=%u %s comm=%016" PRIx64 " rank=%d/%d seq=%" PRIu64
	        " count=%" PRIu64 " dtype=%s redop=%s %s=%s group=%" PRIu64 " depth=%u state=%s"
	        " result=%s cuda_error=%d flags=%s started=%s ended=%s stream=0x%" PRIx64
	        " caller=0x%" PRIx64 "\n",
	        nw_op_ticket(op), rel_time(op->enqueue_ns, t0, t_enq), op->tid,
	        nw_op_kind_name(op->kind, kind), op->comm_id, op->rank, op->nranks, op->seq, op->count,
	        NW_OP_IS_COLL(op->kind) || NW_OP_IS_P2P(op->kind) ? nw_datatype_name(op->datatype, dtype) : "-",
	        nw_redop_name(op->redop, redop),
	        NW_OP_IS_P2P(op->kind) ? "peer" : "root", root, op->group_id, op->group_depth,
	        nw_op_state_name(op->state, state), nw_nccl_result_name(op->result, result),
	        (int)op->cuda_error, nw_op_flags_str(op->flags, flags), rel_time(op->start_ns, t0, t_start),
	        rel_time(op->end_ns, t0, t_end), op->stream, op->caller);
}

static void show_records(FILE *out, const struct nw_segment *seg, const struct nw_show_options *opt)
{
	const struct nw_ring_stats *r = &seg->ring;
	size_t first = 0;
	if (!opt->all_records && seg->op_count > opt->max_records)
		first = seg->op_count - (size_t)opt->max_records;
	fprintf(out,
	        "records shown=%zu valid=%" PRIu64 " torn=%" PRIu64 " overwritten=%" PRIu64
	        " unpublished=%" PRIu64 " head=%" PRIu64 " capacity=%u\n",
	        seg->op_count - first, r->valid, r->torn, r->overwritten, r->unpublished, r->head,
	        seg->header.ring_capacity);
	for (size_t i = first; i < seg->op_count; i++)
		show_op(out, seg, &seg->ops[i]);
}

void nw_show_segment(FILE *out, const struct nw_segment *seg, const struct nw_show_options *opt)
{
	show_header(out, seg);
	show_comms(out, seg);
	show_peers(out, seg);
	show_records(out, seg, opt);
}
