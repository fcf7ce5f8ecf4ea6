/* Text rendering of a segment snapshot (see show_text.h). Every value is
 * printed from the private snapshot; strings are escaped so that one record
 * is always one line whatever bytes the file holds, and an empty string
 * prints as "-" so that every line has a value. Stack frames are resolved
 * only through the reader's bounded helpers (segment_reader.h). */
#include "show_text.h"

#include <inttypes.h>
#include <string.h>
#include <time.h>
#include "../escape.h"
#include "../names.h"

/* Untrusted strings (../escape.h): control bytes as \xNN, a backslash as \\. */
static void put_escaped(FILE *out, const char *s)
{
	nw_put_escaped(out, s, 0);
}

/* The same inside double quotes: a quote is escaped too. */
static void put_quoted(FILE *out, const char *s)
{
	fputc('"', out);
	nw_put_escaped(out, s, NW_ESC_QUOTE);
	fputc('"', out);
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

/* Who wrote the segment: its process, ranks, job and start. */
static void show_identity(FILE *out, const struct nw_segment *seg)
{
	const struct nw_seg_header *h = &seg->header;
	char buf[256];

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
	/* v1.2: the process's start in clock ticks since boot (0 in older files). */
	if (h->proc_start_ticks)
		snprintf(buf, sizeof buf, "%" PRIu64, h->proc_start_ticks);
	else
		snprintf(buf, sizeof buf, "-");
	put_field(out, "start_ticks", buf);
}

/* The process's state flags, NCCL, CUDA and GPU, its environment. */
static void show_runtime(FILE *out, const struct nw_seg_header *h)
{
	char buf[256], name[NW_NAME_BUF], flags[NW_FLAGS_BUF];

	put_field(out, "flags", nw_seg_flags_str(h->flags, flags));
	if (h->flags & NW_SEG_F_EXIT_STATUS) {
		snprintf(buf, sizeof buf, "%d", (int)h->exit_status);
		put_field(out, "exit_status", buf);
	}
	put_field(out, "nccl", nw_nccl_version_str(h->nccl_version, name));
	put_field(out, "nccl_lib", h->nccl_lib);
	put_field(out, "cuda_driver", nw_cuda_version_str(h->cuda_driver_version, name));
	put_field(out, "gpu", h->gpu_name);
	/* The reader checked that the list ends inside the field. */
	for (const char *e = h->env; *e; e += strlen(e) + 1)
		put_field(out, "env", e);
}

/* The watchdog's fields: its heartbeat, settings and counters. */
static void show_watchdog(FILE *out, const struct nw_seg_header *h)
{
	char buf[256], name[NW_NAME_BUF];

	put_field(out, "heartbeat", rel_time(h->heartbeat_ns, h->start_monotonic_ns, buf));
	/* v1.1, the watchdog's (zero in a 1.0 file or before it starts). */
	put_field(out, "tracking", nw_tracking_name(h->tracking, name));
	if (h->watchdog_tid)
		snprintf(buf, sizeof buf, "%u", h->watchdog_tid);
	else
		snprintf(buf, sizeof buf, "-");
	put_field(out, "watchdog_tid", buf);
	snprintf(buf, sizeof buf, "%u", h->poll_ms);
	put_field(out, "poll_ms", buf);
	snprintf(buf, sizeof buf, "%u", h->timeout_ms);
	put_field(out, "timeout_ms", buf);
	snprintf(buf, sizeof buf,
	         "events_created=%" PRIu64 " event_records=%" PRIu64 " ops_tracked=%" PRIu64
	         " findings=%" PRIu64 " dumps=%" PRIu64 " request_served=%" PRIu64,
	         (uint64_t)h->events_created, (uint64_t)h->event_records, (uint64_t)h->ops_tracked,
	         (uint64_t)h->findings, (uint64_t)h->dumps, (uint64_t)h->request_served);
	put_field(out, "counters", buf);
	put_field(out, "last_finding", rel_time(h->last_finding_ns, h->start_monotonic_ns, buf));
}

/* What the process could not record, whether it stopped, the size. */
static void show_losses(FILE *out, const struct nw_seg_header *h)
{
	char buf[256];

	snprintf(buf, sizeof buf, "%" PRIu64, (uint64_t)h->ops_dropped);
	put_field(out, "ops_dropped", buf);
	/* 2.0 (zero in an older file). */
	snprintf(buf, sizeof buf, "%" PRIu64, (uint64_t)h->comms_dropped);
	put_field(out, "comms_dropped", buf);
	snprintf(buf, sizeof buf, "%u", h->threads_dropped);
	put_field(out, "threads_dropped", buf);
	snprintf(buf, sizeof buf, "%" PRIu64, (uint64_t)h->comm_reuses);
	put_field(out, "comm_reuses", buf);
	/* 2.1 (zero in an older file). */
	snprintf(buf, sizeof buf, "%" PRIu64, (uint64_t)h->graph_launches);
	put_field(out, "graph_launches", buf);
	snprintf(buf, sizeof buf, "%" PRIu64, (uint64_t)h->graphs_untracked);
	put_field(out, "graphs_untracked", buf);
	if (h->flags & NW_SEG_F_STOPPED) {
		snprintf(buf, sizeof buf, "yes: %s", h->error[0] ? h->error : "(no reason given)");
		put_field(out, "stopped", buf);
	} else {
		put_field(out, "stopped", "no");
	}
	snprintf(buf, sizeof buf, "%" PRIu64 " bytes", h->segment_size);
	put_field(out, "size", buf);
}

static void show_header(FILE *out, const struct nw_segment *seg)
{
	show_identity(out, seg);
	show_runtime(out, &seg->header);
	show_watchdog(out, &seg->header);
	show_losses(out, &seg->header);
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
		        " async_error=%s parent=%016" PRIx64 " color=%d key=%d blocking=%u gen=%u bus_id=",
		        i, c->comm_id, nw_comm_origin_name(c->origin, origin), c->rank, c->nranks,
		        nw_comm_state_name(c->state, state), c->cuda_device,
		        nw_nccl_result_name(c->init_result, init_res), (uint64_t)c->coll_enqueued,
		        (uint64_t)c->coll_started, (uint64_t)c->coll_completed, (uint64_t)c->p2p_enqueued,
		        (uint64_t)c->p2p_completed, nw_nccl_result_name(c->async_error, async),
		        c->parent_id, c->split_color, c->split_key, c->blocking, (unsigned)c->gen);
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
		if (c && c->gen != p->comm_gen)
			snprintf(id, sizeof id, "-");   /* 2.0: its comm ended, another has the slot */
		else if (c)
			snprintf(id, sizeof id, "%016" PRIx64, c->comm_id);
		fprintf(out,
		        "  peer %u comm=%u id=%s peer=%d send_enqueued=%" PRIu64 " send_completed=%" PRIu64
		        " recv_enqueued=%" PRIu64 " recv_completed=%" PRIu64 "\n",
		        i, p->comm_slot, id, p->peer, (uint64_t)p->send_enqueued, (uint64_t)p->send_completed,
		        (uint64_t)p->recv_enqueued, (uint64_t)p->recv_completed);
	}
}

/* "SYMBOL+0xOFF", or "??" when the frame names no symbol. */
static void put_symbol(FILE *out, const struct nw_segment *seg, const struct nw_seg_frame *f)
{
	const char *sym = f ? nw_stack_string(seg, f->symbol) : NULL;
	if (!sym || !*sym) {
		fputs("??", out);
		return;
	}
	put_escaped(out, sym);
	fprintf(out, "+0x%" PRIx64, f->symbol_offset);
}

/* "BASENAME+0xOFF" of module index1 (its table index + 1), "??" if unknown. */
static void put_module(FILE *out, const struct nw_segment *seg, uint32_t index1, uint64_t offset)
{
	const struct nw_seg_module *m = nw_stack_module(seg, index1);
	if (!m) {
		fputs("??", out);
		return;
	}
	const char *slash = strrchr(m->path, '/');
	const char *base = slash ? slash + 1 : m->path;
	put_escaped(out, *base ? base : "??");
	fprintf(out, "+0x%" PRIx64, offset);
}

/* The op's recorded call stack, one "    at" line per return address:
 * the symbol from the ip-symbol table, the module by address range. */
static void show_opstack(FILE *out, const struct nw_segment *seg, uint64_t ticket)
{
	uint32_t depth;
	const uint64_t *ips = nw_opstack(seg, ticket, &depth);
	for (uint32_t k = 0; ips && k < depth; k++) {
		const struct nw_seg_frame *sym = nw_ipsym_lookup(seg, ips[k]);
		fprintf(out, "    at 0x%" PRIx64 " ", ips[k]);
		put_symbol(out, seg, sym);
		fputs(" (", out);
		uint32_t index1 = 0;
		const struct nw_seg_module *m = nw_stack_module_at(seg, ips[k], &index1);
		if (m)
			put_module(out, seg, index1, ips[k] - m->base);
		else /* no module's range holds it: what the watchdog found, if anything */
			put_module(out, seg, sym ? sym->module : 0, sym ? sym->module_offset : 0);
		fputs(")\n", out);
	}
}

/* "FUNCTION (FILE:LINE)" of a Python frame; "??" for what is unknown. */
static void put_pyframe(FILE *out, const struct nw_segment *seg, const struct nw_seg_pyframe *f)
{
	const char *fn = f ? nw_stack_string(seg, f->function) : NULL;
	const char *file = f ? nw_stack_string(seg, f->file) : NULL;
	put_escaped(out, fn && *fn ? fn : "??");
	fputs(" (", out);
	put_escaped(out, file && *file ? file : "??");
	if (f && f->line > 0)
		fprintf(out, ":%d", f->line);
	fputc(')', out);
}

/* 1.4: the op's Python call site, one "    py" line per frame: named by
 * the site table of the last capture ("?? (??)" before one). */
static void show_pycall(FILE *out, const struct nw_segment *seg, uint64_t ticket)
{
	uint32_t depth;
	const struct nw_seg_pycall *c = nw_pycall(seg, ticket, &depth);
	for (uint32_t k = 0; c && k < depth; k++) {
		fputs("    py ", out);
		put_pyframe(out, seg, nw_pysite_lookup(seg, c[k].code, c[k].instr));
		fputc('\n', out);
	}
}

/* 2.1: a launch of an executable graph holding NCCL ops (segment.h). */
static void show_graph_launch(FILE *out, const struct nw_segment *seg, const struct nw_seg_op *op)
{
	const uint64_t t0 = seg->header.start_monotonic_ns;
	char first[NW_NAME_BUF], state[NW_NAME_BUF], t_enq[32], t_start[32], t_end[32];
	fprintf(out,
	        "  op %" PRIu64 " t=%s tid=%u GraphLaunch graph=#%d exec=0x%" PRIx64 " replay=%" PRIu64
	        " ops=%" PRIu64 " first=%s comm=%016" PRIx64 " rank=%d/%d state=%s cuda_error=%d"
	        " started=%s ended=%s stream=0x%" PRIx64 " caller=0x%" PRIx64 "\n",
	        nw_op_ticket(op), rel_time(op->enqueue_ns, t0, t_enq), op->tid, op->root, op->group_id, op->seq,
	        op->count, nw_op_kind_name((unsigned)op->redop, first), op->comm_id, op->rank, op->nranks,
	        nw_op_state_name(op->state, state), (int)op->cuda_error, rel_time(op->start_ns, t0, t_start),
	        rel_time(op->end_ns, t0, t_end), op->stream, op->caller);
	/* where the replay stands among its ops (the per-op events, as the
	 * watchdog last saw them) */
	unsigned at_state = 0;
	uint32_t at = nw_graph_replay_at(op, &at_state);
	if (!at)
		return;
	fprintf(out, "    replay %" PRIu64 " of graph #%d: op %u of %" PRIu64 " %s; ops:", op->seq, op->root, at,
	        op->count, nw_op_state_name(at_state, state));
	for (uint32_t i = 1; i <= op->count && i <= 64; i++)
		fprintf(out, " %u=%s", i, nw_op_state_name(nw_graph_replay_op_state(op, i), state));
	fputs(op->count > 64 ? " ...\n" : "\n", out);
}

static void show_op(FILE *out, const struct nw_segment *seg, const struct nw_seg_op *op)
{
	const uint64_t t0 = seg->header.start_monotonic_ns;
	if (op->kind == NW_OP_GRAPH_LAUNCH) {
		show_graph_launch(out, seg, op);
		return;
	}
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
	for (size_t i = first; i < seg->op_count; i++) {
		show_op(out, seg, &seg->ops[i]);
		if (!opt->no_stacks) {
			show_opstack(out, seg, nw_op_ticket(&seg->ops[i]));
			show_pycall(out, seg, nw_op_ticket(&seg->ops[i]));
		}
	}
}

static const char *stack_state_name(int state)
{
	switch (state) {
	case NW_STACKS_UNINITIALIZED: return "uninitialized";
	case NW_STACKS_NEVER: return "never";
	case NW_STACKS_CAPTURED: return "captured";
	case NW_STACKS_BEING_WRITTEN: return "being-written";
	default: return "none";
	}
}

static void show_stacks(FILE *out, const struct nw_segment *seg, const struct nw_show_options *opt)
{
	const struct nw_seg_stack_header *a = seg->stack_copy;
	char t[32];
	if (seg->stack_state < NW_STACKS_NEVER || !a) {
		fprintf(out, "stacks %s\n", stack_state_name(seg->stack_state));
		return;
	}
	/* The counts of a capture that is not returned are not believed: "-". */
	const struct nw_seg_stack_header *c = seg->stack;
	char request[24] = "-", threads[16] = "-", captures[24] = "-", modules[16] = "-";
	if (c) {
		snprintf(request, sizeof request, "%" PRIu64, (uint64_t)c->request_id);
		snprintf(threads, sizeof threads, "%u", c->thread_count);
		snprintf(captures, sizeof captures, "%" PRIu64, (uint64_t)c->captures);
		snprintf(modules, sizeof modules, "%u", c->module_count);
	}
	fprintf(out,
	        "stacks %s t=%s request=%s threads=%s captures=%s seq=%u modules=%s"
	        " thread_capacity=%u frame_capacity=%u opstack_depth=%u\n",
	        stack_state_name(seg->stack_state),
	        c && c->capture_ns ? rel_time(c->capture_ns, seg->header.start_monotonic_ns, t) : "-", request, threads,
	        captures, seg->stack_seq, modules, a->thread_capacity, a->frame_capacity,
	        a->opstack_count && a->opstack_offset ? a->opstack_depth : 0);
	if (!c || opt->no_stacks)
		return;
	for (int python = 0; python <= 1; python++) {
		const char *note = nw_stack_note(seg, python);
		if (note) {
			fprintf(out, "  note %s ", python ? "python" : "native");
			put_escaped(out, note);
			fputc('\n', out);
		}
	}
	for (uint32_t i = 1; i <= c->module_count; i++) {
		const struct nw_seg_module *m = nw_stack_module(seg, i);
		if (!m)
			continue;
		fprintf(out, "  module %u 0x%" PRIx64 " ", i - 1, m->base);
		put_escaped(out, m->path[0] ? m->path : "-");
		fputc('\n', out);
	}
	char flags[NW_FLAGS_BUF];
	for (uint32_t i = 0; i < c->thread_count; i++) {
		const struct nw_seg_thread *th = nw_stack_thread(seg, i);
		uint32_t n;
		const struct nw_seg_frame *f = nw_stack_frames(seg, i, &n);
		const char *fl = nw_thread_flags_str(th->flags, flags);
		fprintf(out, "  thread %u ", th->tid);
		put_quoted(out, th->name);
		if (*fl)
			fprintf(out, " %s", fl);
		fputc('\n', out);
		for (uint32_t k = 0; k < n; k++) {
			fprintf(out, "    #%u 0x%" PRIx64 " ", k, f[k].ip);
			put_symbol(out, seg, &f[k]);
			fputs(" (", out);
			put_module(out, seg, f[k].module, f[k].module_offset);
			fputs(")\n", out);
		}
		uint32_t np;
		const struct nw_seg_pyframe *pf = nw_stack_pyframes(seg, i, &np);
		if (!(th->py_flags & NW_PYT_PYTHON))
			continue;
		fputs("    python ", out);
		const char *pyname = nw_stack_string(seg, th->py_name);
		put_quoted(out, pyname ? pyname : "");
		fprintf(out, " frames=%u native_above=%u%s%s%s\n", np, th->py_native,
		        th->py_flags & NW_PYT_MAIN ? " main" : "", th->py_flags & NW_PYT_GIL ? " gil" : "",
		        th->py_flags & NW_PYT_TRUNCATED ? " truncated" : "");
		for (uint32_t k = 0; k < np; k++) {
			fprintf(out, "    py#%u ", k);
			put_pyframe(out, seg, &pf[k]);
			fputc('\n', out);
		}
	}
}

void nw_show_segment(FILE *out, const struct nw_segment *seg, const struct nw_show_options *opt)
{
	show_header(out, seg);
	if (seg->header.flags & NW_SEG_F_SNAPSHOT) {
		/* 1.4: attach's file for a process without the preload: the reader
		 * checked that it has no tables and no ring; say so once. */
		fputs("snapshot no comm table, peer table or op ring (written by ncclwatch attach: no op numbers)\n",
		      out);
	} else {
		show_comms(out, seg);
		show_peers(out, seg);
		show_records(out, seg, opt);
	}
	show_stacks(out, seg, opt);
}
