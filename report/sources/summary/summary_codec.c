/* summary_codec: see summary_codec.h. */
#include "summary_codec.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define U(st, f) { offsetof(struct st, f), sizeof(((struct st *)0)->f), NW_SUM_U }
#define I(st, f) { offsetof(struct st, f), sizeof(((struct st *)0)->f), NW_SUM_I }
#define S(st, f) { offsetof(struct st, f), sizeof(((struct st *)0)->f), NW_SUM_S }
#define TABLE(name, arr) const struct nw_sum_table name = { arr, sizeof arr / sizeof arr[0] }

static const struct nw_sum_field f_proc[] = {
	U(nw_sum_proc, path), U(nw_sum_proc, source_note), U(nw_sum_proc, is_dump),
	U(nw_sum_proc, snapshot), U(nw_sum_proc, attached), I(nw_sum_proc, alive),
	U(nw_sum_proc, now_ns), U(nw_sum_proc, last_activity_ns), U(nw_sum_proc, stacks_ns),
	U(nw_sum_proc, ncomms), U(nw_sum_proc, npeers), U(nw_sum_proc, nthreads),
	U(nw_sum_proc, nops), U(nw_sum_proc, sites), U(nw_sum_proc, caps),
};
TABLE(nw_sum_t_proc, f_proc);

/* The header's fields a reader of the model uses (identity, job, the
 * environment fingerprint, what was lost, the watchdog's settings and
 * counters); the layout fields of a segment mean nothing here. */
#define P(st, f) { offsetof(struct st, f), sizeof(((struct st *)0)->f), NW_SUM_P }
#define E(st, f) { offsetof(struct st, f), sizeof(((struct st *)0)->f), NW_SUM_E }
static const struct nw_sum_field f_header[] = {
	U(nw_proc_header, version_major), U(nw_proc_header, version_minor), U(nw_proc_header, flags),
	I(nw_proc_header, pid), I(nw_proc_header, ppid), U(nw_proc_header, start_realtime_ns),
	U(nw_proc_header, start_monotonic_ns), I(nw_proc_header, global_rank), I(nw_proc_header, local_rank),
	I(nw_proc_header, world_size), U(nw_proc_header, uid), S(nw_proc_header, host), S(nw_proc_header, job),
	U(nw_proc_header, ring_head), U(nw_proc_header, comm_count), U(nw_proc_header, peer_count),
	U(nw_proc_header, heartbeat_ns), U(nw_proc_header, ops_dropped), I(nw_proc_header, nccl_version),
	I(nw_proc_header, cuda_driver_version), P(nw_proc_header, nccl_lib), S(nw_proc_header, gpu_name),
	E(nw_proc_header, env), S(nw_proc_header, error), U(nw_proc_header, tracking),
	U(nw_proc_header, watchdog_tid), U(nw_proc_header, poll_ms), U(nw_proc_header, timeout_ms),
	U(nw_proc_header, events_created), U(nw_proc_header, event_records), U(nw_proc_header, ops_tracked),
	U(nw_proc_header, findings), U(nw_proc_header, dumps), U(nw_proc_header, request_served),
	U(nw_proc_header, last_finding_ns), U(nw_proc_header, proc_start_ticks), I(nw_proc_header, exit_status),
	U(nw_proc_header, threads_dropped), U(nw_proc_header, comms_dropped), U(nw_proc_header, comm_reuses),
	U(nw_proc_header, graph_launches), U(nw_proc_header, graphs_untracked), U(nw_proc_header, comm_capacity),
};
TABLE(nw_sum_t_header, f_header);

static const struct nw_sum_field f_comm[] = {
	U(nw_seg_comm, comm_id), U(nw_seg_comm, parent_id), U(nw_seg_comm, handle), I(nw_seg_comm, rank),
	I(nw_seg_comm, nranks), I(nw_seg_comm, cuda_device), U(nw_seg_comm, origin), U(nw_seg_comm, state),
	I(nw_seg_comm, init_result), I(nw_seg_comm, split_color), I(nw_seg_comm, split_key),
	U(nw_seg_comm, blocking), U(nw_seg_comm, init_enter_ns), U(nw_seg_comm, init_done_ns),
	U(nw_seg_comm, end_ns), S(nw_seg_comm, name), S(nw_seg_comm, bus_id), S(nw_seg_comm, uuid),
	U(nw_seg_comm, coll_enqueued), U(nw_seg_comm, coll_started), U(nw_seg_comm, coll_completed),
	U(nw_seg_comm, coll_enqueued_ns), U(nw_seg_comm, coll_started_ns), U(nw_seg_comm, coll_completed_ns),
	U(nw_seg_comm, p2p_enqueued), U(nw_seg_comm, p2p_completed), U(nw_seg_comm, p2p_enqueued_ns),
	U(nw_seg_comm, p2p_completed_ns), I(nw_seg_comm, async_error), U(nw_seg_comm, splits),
	U(nw_seg_comm, shrinks), U(nw_seg_comm, gen),
};
TABLE(nw_sum_t_comm, f_comm);

static const struct nw_sum_field f_peer[] = {
	U(nw_seg_peer, comm_slot), I(nw_seg_peer, peer), U(nw_seg_peer, send_enqueued),
	U(nw_seg_peer, send_completed), U(nw_seg_peer, recv_enqueued), U(nw_seg_peer, recv_completed),
	U(nw_seg_peer, last_ns), U(nw_seg_peer, used), U(nw_seg_peer, comm_gen),
};
TABLE(nw_sum_t_peer, f_peer);

static const struct nw_sum_field f_op[] = {
	U(nw_seg_op, commit), U(nw_seg_op, comm_id), U(nw_seg_op, seq), U(nw_seg_op, count),
	U(nw_seg_op, stream), U(nw_seg_op, group_id), U(nw_seg_op, caller), U(nw_seg_op, enqueue_ns),
	U(nw_seg_op, start_ns), U(nw_seg_op, end_ns), I(nw_seg_op, comm_slot), U(nw_seg_op, kind),
	U(nw_seg_op, datatype), U(nw_seg_op, group_depth), I(nw_seg_op, redop), I(nw_seg_op, root),
	I(nw_seg_op, rank), I(nw_seg_op, nranks), U(nw_seg_op, tid), U(nw_seg_op, flags),
	U(nw_seg_op, state), I(nw_seg_op, result), I(nw_seg_op, cuda_error), U(nw_seg_op, comm_gen),
};
TABLE(nw_sum_t_op, f_op);

static const struct nw_sum_field f_thread[] = {
	U(nw_sum_thread, tid), U(nw_sum_thread, flags), S(nw_sum_thread, name), U(nw_sum_thread, py_name),
	U(nw_sum_thread, frames), U(nw_sum_thread, wait_frames), U(nw_sum_thread, py_flags),
	U(nw_sum_thread, npy), U(nw_sum_thread, py_at), U(nw_sum_thread, py_app),
};
TABLE(nw_sum_t_thread, f_thread);

_Static_assert(sizeof f_header / sizeof f_header[0] <= NW_SUM_MAX_FIELDS, "struct nw_sum_prev holds every field");

const struct nw_sum_table *const nw_sum_tables[NW_SUM_TABLES] = {
	&nw_sum_t_proc, &nw_sum_t_header, &nw_sum_t_comm, &nw_sum_t_peer, &nw_sum_t_op, &nw_sum_t_thread,
};

/* ---- buffers and varints ---- */

static int grow(struct nw_sum_buf *b, size_t more)
{
	if (b->oom)
		return -1;
	if (b->len + more <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap < b->len + more)
		cap *= 2;
	uint8_t *d = realloc(b->d, cap);
	if (!d) {
		b->oom = 1;
		return -1;
	}
	b->d = d;
	b->cap = cap;
	return 0;
}

void nw_sum_put_uv(struct nw_sum_buf *b, uint64_t v)
{
	if (grow(b, 10))
		return;
	do {
		uint8_t c = v & 0x7f;
		v >>= 7;
		b->d[b->len++] = c | (v ? 0x80 : 0);
	} while (v);
}

void nw_sum_put_bytes(struct nw_sum_buf *b, const void *p, size_t n)
{
	if (!n || grow(b, n))
		return;
	memcpy(b->d + b->len, p, n);
	b->len += n;
}

uint64_t nw_sum_get_uv(struct nw_sum_in *in)
{
	uint64_t v = 0;
	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (in->at >= in->len) {
			in->bad = 1;
			return 0;
		}
		uint8_t c = in->d[in->at++];
		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return v;
	}
	in->bad = 1;
	return 0;
}

uint64_t nw_sum_field_get(const struct nw_sum_field *f, const void *rec)
{
	const uint8_t *p = (const uint8_t *)rec + f->off;
	switch (f->size) {
	case 1: { uint8_t v; memcpy(&v, p, 1); return f->type == NW_SUM_I ? (uint64_t)(int64_t)(int8_t)v : v; }
	case 2: { uint16_t v; memcpy(&v, p, 2); return f->type == NW_SUM_I ? (uint64_t)(int64_t)(int16_t)v : v; }
	case 4: { uint32_t v; memcpy(&v, p, 4); return f->type == NW_SUM_I ? (uint64_t)(int64_t)(int32_t)v : v; }
	default: { uint64_t v; memcpy(&v, p, 8); return v; }
	}
}

void nw_sum_field_set(const struct nw_sum_field *f, void *rec, uint64_t v)
{
	uint8_t *p = (uint8_t *)rec + f->off;
	switch (f->size) {
	case 1: { uint8_t x = (uint8_t)v; memcpy(p, &x, 1); break; }
	case 2: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); break; }
	case 4: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); break; }
	default: memcpy(p, &v, 8); break;
	}
}

size_t nw_sum_trimmed(const uint8_t *p, size_t n)
{
	while (n && !p[n - 1])
		n--;
	return n;
}

uint64_t nw_sum_hash(const uint8_t *d, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++) {
		h ^= d[i];
		h *= 0x100000001b3ull;
	}
	return h;
}
