/* The segment reader: validation of a segment file against the format of
 * include/ncclwatch/segment.h and a pread-based snapshot of its tables, op
 * ring and stack area (see segment_reader.h and docs/FORMAT.md, "Reading a
 * live segment safely" and "The stack area"). */
#include "segment_reader.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

/* Records of a newer minor may grow; beyond this they are not believed. */
#define NW_MAX_RECORD_SIZE (64u * 1024u)

/* The reader's per-file cap: the most private memory one segment may
 * cost (tables, valid op records, stack area), checked before anything is
 * allocated. A full ring of 2^22 records and the largest tables fit. */
#define NW_READ_MAX_BYTES (1ull << 30)

/* A sparse (or compressed) file must hold at least 1/NW_READ_SPARSE_FACTOR
 * of what its header says was written, plus NW_READ_SPARSE_SLACK: a
 * header's claims cost no more than the data behind them. The factor
 * leaves room for a filesystem that compresses (st_blocks counts what is
 * stored); written records are never mostly zero. */
#define NW_READ_SPARSE_FACTOR 16u
#define NW_READ_SPARSE_SLACK (64ull << 10)

/* Bytes of the op ring read per pread (whole records, at least one). */
#define NW_RING_CHUNK_BYTES (1u << 20)

/* Bounds of the stack area's capacities (docs/FORMAT.md): far above what
 * the watchdog lays out, low enough that no size computed from them
 * overflows 64 bits. A larger value is a malformed area. */
#define NW_STACK_MAX_THREADS (1u << 16)
#define NW_STACK_MAX_FRAMES 1024u
#define NW_STACK_MAX_MODULES (1u << 16)
#define NW_STACK_MAX_IPSYMS (1u << 20)
#define NW_STACK_MAX_OPSTACK_DEPTH 64u
#define NW_STACK_MAX_EXT 4096u
#define NW_STACK_MAX_PYFRAMES (1u << 20)
#define NW_STACK_MAX_PYSITES (1u << 20)
#define NW_STACK_MAX_PYCALL_DEPTH 64u

/* Copies of a stack area whose seq is odd or moves before giving up
 * ("being written"), and the pause between them (none with
 * NW_READ_NO_WAIT). */
#define NW_STACK_ATTEMPTS 5
#define NW_STACK_RETRY_NS 1000000L

__attribute__((format(printf, 4, 5)))
static int fail(struct nw_read_error *err, int code, const char *path, const char *fmt, ...)
{
	if (!err)
		return code;
	err->code = code;
	int n = snprintf(err->message, sizeof err->message, "%s: ", path);
	if (n < 0 || (size_t)n >= sizeof err->message)
		n = 0;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->message + n, sizeof err->message - (size_t)n, fmt, ap);
	va_end(ap);
	/* One line, whatever the path holds. */
	for (char *c = err->message; *c; c++)
		if (*c == '\n' || *c == '\r')
			*c = '?';
	return code;
}

static int fail_errno(struct nw_read_error *err, const char *path, const char *what, int e)
{
	if (err)
		err->sys_errno = e;
	return fail(err, e == ENOMEM ? NW_READ_ERR_NOMEM : NW_READ_ERR_IO, path, "%s%s%s",
	            what, *what ? ": " : "", strerror(e));
}

/* Read exactly len bytes at off; a short read means the file shrank. */
static int read_at(int fd, void *buf, size_t len, uint64_t off, const char *path,
                   struct nw_read_error *err)
{
	size_t done = 0;
	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return fail_errno(err, path, "read", errno);
		}
		if (n == 0)
			return fail(err, NW_READ_ERR_FORMAT, path,
			            "truncated while reading (%zu of %zu bytes at offset %llu)",
			            done, len, (unsigned long long)off);
		done += (size_t)n;
	}
	return NW_READ_OK;
}

/* Read len bytes at off into buf, which is zero already (fresh anonymous
 * pages), copying only the parts the file has data for (SEEK_DATA/
 * SEEK_HOLE): a hole reads as zero anyway, and skipping it costs neither
 * time nor memory (pages never touched). Where the file system cannot tell, everything is read. */
static int read_present(int fd, void *buf, size_t len, uint64_t off, const char *path,
                        struct nw_read_error *err)
{
	const uint64_t end = off + len;
	uint64_t pos = off;
	while (pos < end) {
		off_t data = lseek(fd, (off_t)pos, SEEK_DATA);
		if (data < 0 && errno == ENXIO) {
			/* No data from pos on: a hole to the end, unless the file
			 * shrank under us. */
			struct stat sb;
			if (fstat(fd, &sb) == 0 && (uint64_t)sb.st_size < end)
				return fail(err, NW_READ_ERR_FORMAT, path,
				            "truncated while reading (the file has %llu bytes, %llu needed)",
				            (unsigned long long)sb.st_size, (unsigned long long)end);
			return NW_READ_OK;
		}
		if (data < 0)                  /* SEEK_DATA not supported here */
			return read_at(fd, (char *)buf + (pos - off), end - pos, pos, path, err);
		if ((uint64_t)data >= end)
			return NW_READ_OK;
		off_t hole = lseek(fd, data, SEEK_HOLE);
		uint64_t stop = hole < 0 || (uint64_t)hole > end ? end : (uint64_t)hole;
		if (stop <= (uint64_t)data)
			stop = end;
		int rc = read_at(fd, (char *)buf + ((uint64_t)data - off), stop - (uint64_t)data,
		                 (uint64_t)data, path, err);
		if (rc)
			return rc;
		pos = stop;
	}
	return NW_READ_OK;
}

static int terminated(const char *s, size_t len)
{
	return memchr(s, '\0', len) != NULL;
}

/* "NAME=value\0NAME=value\0\0": the list must end with an empty string
 * inside the field. */
static int env_terminated(const char *env, size_t len)
{
	size_t i = 0;
	while (i < len) {
		if (env[i] == '\0')
			return 1;
		const char *nul = memchr(env + i, '\0', len - i);
		if (!nul)
			return 0;
		i = (size_t)(nul - env) + 1;
	}
	return 0;
}

struct area {
	const char *name;
	uint64_t offset;
	uint64_t bytes;
};

/* An area lies inside [header_size, segment_size), aligned, without overflow. */
static int check_area(const struct area *a, uint64_t header_size, uint64_t segment_size,
                      const char *path, struct nw_read_error *err)
{
	if (a->offset % NW_SEG_ALIGN)
		return fail(err, NW_READ_ERR_FORMAT, path, "%s offset %llu is not %d-byte aligned",
		            a->name, (unsigned long long)a->offset, NW_SEG_ALIGN);
	if (a->offset < header_size)
		return fail(err, NW_READ_ERR_FORMAT, path, "%s offset %llu overlaps the header (%llu bytes)",
		            a->name, (unsigned long long)a->offset, (unsigned long long)header_size);
	if (a->offset > segment_size || a->bytes > segment_size - a->offset)
		return fail(err, NW_READ_ERR_FORMAT, path,
		            "%s (offset %llu, %llu bytes) ends beyond the segment (%llu bytes)",
		            a->name, (unsigned long long)a->offset, (unsigned long long)a->bytes,
		            (unsigned long long)segment_size);
	return NW_READ_OK;
}

static int check_record_size(const char *name, uint32_t size, uint32_t known, int newer_minor,
                             const char *path, struct nw_read_error *err)
{
	if (size == known)
		return NW_READ_OK;
	if (newer_minor && size > known && size <= NW_MAX_RECORD_SIZE && size % 8 == 0)
		return NW_READ_OK;
	return fail(err, NW_READ_ERR_FORMAT, path, "%s is %u bytes, expected %u", name, size, known);
}

/* The 1.x level of a file: its minor in major 1; from major 2 on, every
 * 1.x feature (4). */
static unsigned v1_level(const struct nw_seg_header *h)
{
	return h->version_major >= 2 ? 4 : h->version_minor;
}

/* A minor newer than this reader knows of the file's major (1.5+, 2.1+):
 * its larger records and header are read by the prefix we know. */
static int is_newer_minor(const struct nw_seg_header *h)
{
	return h->version_major == NW_SEG_VERSION_MAJOR ? h->version_minor > NW_SEG_VERSION_MINOR
	                                                : h->version_minor > NW_SEG_V1_MINOR;
}

/* Everything in the header that does not need the rest of the file. */
/* The header's and the file's sizes, and the record sizes. */
static int validate_sizes(const struct nw_seg_header *h, uint64_t file_size, int newer_minor, const char *path,
                          struct nw_read_error *err)
{
	int rc;
	if (h->header_size < sizeof *h || (!newer_minor && h->header_size != sizeof *h) ||
	    h->header_size % NW_SEG_ALIGN)
		return fail(err, NW_READ_ERR_FORMAT, path, "header_size is %u bytes, expected %zu",
		            h->header_size, sizeof *h);
	if (h->segment_size > file_size)
		return fail(err, NW_READ_ERR_FORMAT, path,
		            "truncated: the file has %llu bytes, its header says %llu",
		            (unsigned long long)file_size, (unsigned long long)h->segment_size);
	if (h->segment_size < h->header_size)
		return fail(err, NW_READ_ERR_FORMAT, path, "segment_size %llu is smaller than the header",
		            (unsigned long long)h->segment_size);
	if ((rc = check_record_size("comm_record_size", h->comm_record_size, sizeof(struct nw_seg_comm),
	                            newer_minor, path, err)) ||
	    (rc = check_record_size("peer_record_size", h->peer_record_size, sizeof(struct nw_seg_peer),
	                            newer_minor, path, err)) ||
	    (rc = check_record_size("op_record_size", h->op_record_size, sizeof(struct nw_seg_op),
	                            newer_minor, path, err)))
		return rc;
	return NW_READ_OK;
}

/* The tables' and the stack area's bounds. */
static int validate_capacities(const struct nw_seg_header *h, int snapshot, const char *path,
                               struct nw_read_error *err)
{
	if (h->comm_capacity > NW_SEG_MAX_COMMS)
		return fail(err, NW_READ_ERR_FORMAT, path, "comm_capacity %u is over the bound %u",
		            h->comm_capacity, NW_SEG_MAX_COMMS);
	if (h->peer_capacity > NW_SEG_MAX_PEERS)
		return fail(err, NW_READ_ERR_FORMAT, path, "peer_capacity %u is over the bound %u",
		            h->peer_capacity, NW_SEG_MAX_PEERS);
	if (h->ring_capacity > NW_SEG_MAX_RING)
		return fail(err, NW_READ_ERR_FORMAT, path, "ring_capacity %u is over the bound %u",
		            h->ring_capacity, NW_SEG_MAX_RING);
	/* 1.4: a snapshot (written by attach for a process without the
	 * preload) has no tables and no ring: every capacity is 0, and only
	 * a snapshot may have a ring of 0 records. */
	if (snapshot && (h->comm_capacity || h->peer_capacity || h->ring_capacity || h->ring_head))
		return fail(err, NW_READ_ERR_FORMAT, path,
		            "snapshot with comm_capacity %u, peer_capacity %u, ring_capacity %u, ring_head %llu "
		            "(a snapshot has no tables and no ring: all 0)", h->comm_capacity, h->peer_capacity,
		            h->ring_capacity, (unsigned long long)h->ring_head);
	if (!snapshot && (h->ring_capacity == 0 || (h->ring_capacity & (h->ring_capacity - 1))))
		return fail(err, NW_READ_ERR_FORMAT, path, "ring_capacity %u is not a power of two",
		            h->ring_capacity);
	if (h->stack_size > NW_SEG_MAX_STACK)
		return fail(err, NW_READ_ERR_FORMAT, path, "stack_size %llu is over the bound %llu",
		            (unsigned long long)h->stack_size, (unsigned long long)NW_SEG_MAX_STACK);
	if (h->stack_offset == 0 && h->stack_size != 0)
		return fail(err, NW_READ_ERR_FORMAT, path, "stack_size %llu without a stack area",
		            (unsigned long long)h->stack_size);
	return NW_READ_OK;
}

/* Each area inside the segment, past the header, and no two overlapping. */
static int validate_areas(const struct nw_seg_header *h, int snapshot, const char *path, struct nw_read_error *err)
{
	int rc;
	/* Capacities are bounded above, so these products cannot overflow. */
	struct area areas[4] = {
		{ "comm table", h->comm_offset, (uint64_t)h->comm_capacity * h->comm_record_size },
		{ "peer table", h->peer_offset, (uint64_t)h->peer_capacity * h->peer_record_size },
		{ "op ring", h->ring_offset, (uint64_t)h->ring_capacity * h->op_record_size },
		{ "stack area", h->stack_offset, h->stack_size },
	};
	size_t n_areas = h->stack_offset ? 4 : 3;
	for (size_t i = 0; i < n_areas; i++) {
		/* A snapshot's empty tables and ring may have offset 0. */
		if (snapshot && i < 3 && areas[i].offset == 0)
			continue;
		if ((rc = check_area(&areas[i], h->header_size, h->segment_size, path, err)))
			return rc;
	}
	for (size_t i = 0; i < n_areas; i++)
		for (size_t j = i + 1; j < n_areas; j++) {
			const struct area *a = &areas[i], *b = &areas[j];
			if (a->bytes && b->bytes && a->offset < b->offset + b->bytes &&
			    b->offset < a->offset + a->bytes)
				return fail(err, NW_READ_ERR_FORMAT, path, "%s overlaps %s", a->name, b->name);
		}
	return NW_READ_OK;
}

/* The tables' counts within their capacities, the text fields ended. */
static int validate_counts_strings(const struct nw_seg_header *h, const char *path, struct nw_read_error *err)
{
	uint32_t comm_count = h->comm_count, peer_count = h->peer_count;
	if (comm_count > h->comm_capacity)
		return fail(err, NW_READ_ERR_FORMAT, path, "comm_count %u is over comm_capacity %u",
		            comm_count, h->comm_capacity);
	if (peer_count > h->peer_capacity)
		return fail(err, NW_READ_ERR_FORMAT, path, "peer_count %u is over peer_capacity %u",
		            peer_count, h->peer_capacity);
	static const struct { const char *name; size_t offset, len; } strings[] = {
		{ "host", offsetof(struct nw_seg_header, host), NW_SEG_HOST_LEN },
		{ "job", offsetof(struct nw_seg_header, job), NW_SEG_JOB_LEN },
		{ "nccl_lib", offsetof(struct nw_seg_header, nccl_lib), NW_SEG_LIBPATH_LEN },
		{ "gpu_name", offsetof(struct nw_seg_header, gpu_name), NW_SEG_GPU_NAME_LEN },
		{ "error", offsetof(struct nw_seg_header, error), NW_SEG_ERROR_LEN },
	};
	for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++)
		if (!terminated((const char *)h + strings[i].offset, strings[i].len))
			return fail(err, NW_READ_ERR_FORMAT, path, "header field %s is not NUL-terminated",
			            strings[i].name);
	if (!env_terminated(h->env, sizeof h->env))
		return fail(err, NW_READ_ERR_FORMAT, path,
		            "header field env does not end with an empty string within its %d bytes",
		            NW_SEG_ENV_LEN);
	return NW_READ_OK;
}

static int validate_header(const struct nw_seg_header *h, uint64_t file_size, const char *path,
                           struct nw_read_error *err)
{
	const int snapshot = (h->flags & NW_SEG_F_SNAPSHOT) != 0;
	int rc;
	if ((rc = validate_sizes(h, file_size, is_newer_minor(h), path, err)) ||
	    (rc = validate_capacities(h, snapshot, path, err)) || (rc = validate_areas(h, snapshot, path, err)))
		return rc;
	return validate_counts_strings(h, path, err);
}

/* Magic, byte order and version: the checks that decide whether the rest
 * of the header can be interpreted at all. `have` bytes of h are valid. */
static int identify(const struct nw_seg_header *h, size_t have, const char *path,
                    struct nw_read_error *err)
{
	static const char zero[8];
	if (have < sizeof h->magic)
		return fail(err, NW_READ_ERR_FORMAT, path,
		            "truncated header (%zu bytes; a segment header is %zu bytes)", have, sizeof *h);
	if (memcmp(h->magic, zero, sizeof zero) == 0 && have >= sizeof *h)
		return fail(err, NW_READ_ERR_NOT_READY, path,
		            "segment not initialized yet (magic is zero: being created or never written)");
	if (memcmp(h->magic, NW_SEG_MAGIC, sizeof h->magic) != 0)
		return fail(err, NW_READ_ERR_FORMAT, path, "not an ncclwatch segment (bad magic)");
	if (have < offsetof(struct nw_seg_header, header_size))
		return fail(err, NW_READ_ERR_FORMAT, path,
		            "truncated header (%zu bytes; a segment header is %zu bytes)", have, sizeof *h);
	if (h->endian != NW_SEG_ENDIAN) {
		if (h->endian == __builtin_bswap32(NW_SEG_ENDIAN))
			return fail(err, NW_READ_ERR_FORMAT, path,
			            "foreign byte order (written on a machine of the other endianness)");
		return fail(err, NW_READ_ERR_FORMAT, path, "bad byte-order mark 0x%08x", h->endian);
	}
	if (h->version_major > NW_SEG_VERSION_MAJOR)
		return fail(err, NW_READ_ERR_VERSION, path,
		            "format %u.%u is newer than this ncclwatch (reads 1.x and %d.x)", h->version_major,
		            h->version_minor, NW_SEG_VERSION_MAJOR);
	if (h->version_major < 1)
		return fail(err, NW_READ_ERR_VERSION, path, "format %u.%u is not supported (reads 1.x and %d.x)",
		            h->version_major, h->version_minor, NW_SEG_VERSION_MAJOR);
	if (have < sizeof *h)
		return fail(err, NW_READ_ERR_FORMAT, path,
		            "truncated header (%zu bytes; a segment header is %zu bytes)", have, sizeof *h);
	return NW_READ_OK;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* What reading costs, bounded before anything is allocated: by the file's
 * real data (st_blocks) and by the per-file cap. The header is valid
 * (validate_header), so every product below is bounded and cannot
 * overflow. */
static int check_cost(const struct nw_seg_header *h, const struct stat *sb, unsigned flags,
                      const char *path, struct nw_read_error *err)
{
	const uint64_t records = min_u64(h->ring_head, h->ring_capacity);
	const uint64_t tables = (uint64_t)h->comm_count * h->comm_record_size +
	                        (uint64_t)h->peer_count * h->peer_record_size;
	const uint64_t ring = (flags & NW_READ_SKIP_RING) ? 0 : records * h->op_record_size;
	const uint64_t stack = v1_level(h) ? h->stack_size : 0;
	const uint64_t memory = tables + ring + stack;
	if (memory > NW_READ_MAX_BYTES)
		return fail(err, NW_READ_ERR_FORMAT, path,
		            "reading it would take %llu MiB (%llu op records, %u comms, %u peers, "
		            "%llu bytes of stacks), over the reader's per-file cap of %llu MiB",
		            (unsigned long long)(memory >> 20), (unsigned long long)records, h->comm_count,
		            h->peer_count, (unsigned long long)stack,
		            (unsigned long long)(NW_READ_MAX_BYTES >> 20));
	/* What the header says was written: itself, the published table
	 * slots, the slots of the tickets reserved. A file whose data is far
	 * less (a sparse file made to look large) claims what it does not
	 * hold. (The stack area may be mostly unwritten in a real file: it is
	 * copied only where the file has data, read_present.) */
	const uint64_t stored = (uint64_t)sb->st_blocks * 512u;
	const uint64_t written = h->header_size + tables + records * h->op_record_size;
	if (stored < (uint64_t)sb->st_size &&
	    written > stored * NW_READ_SPARSE_FACTOR + NW_READ_SPARSE_SLACK)
		return fail(err, NW_READ_ERR_FORMAT, path,
		            "sparse file: its header says %llu bytes were written (%llu op records), "
		            "the file holds %llu bytes of data",
		            (unsigned long long)written, (unsigned long long)records,
		            (unsigned long long)stored);
	return NW_READ_OK;
}

/* Copy `count` records of `stride` bytes at `offset` into `out`, keeping the
 * first `known` bytes of each (the rest of a newer minor's record). */
static int read_table(int fd, uint64_t offset, uint32_t count, uint32_t stride, size_t known,
                      void *out, const char *path, struct nw_read_error *err)
{
	if (count == 0)
		return NW_READ_OK;
	if (stride == known)
		return read_at(fd, out, (size_t)count * stride, offset, path, err);
	char *raw = malloc((size_t)count * stride);
	if (!raw)
		return fail_errno(err, path, "", ENOMEM);
	int rc = read_at(fd, raw, (size_t)count * stride, offset, path, err);
	for (uint32_t i = 0; rc == NW_READ_OK && i < count; i++)
		memcpy((char *)out + i * known, raw + (size_t)i * stride, known);
	free(raw);
	return rc;
}

/* The comm table. 2.0: a slot is rewritten when a new comm takes it; its
 * copy is kept only when its gen word read before it and read after it
 * agree and neither says WRITING (docs/FORMAT.md, "Comm slot reuse"),
 * after a few tries a slot still being rewritten reads as FREE (comms
 * skip FREE slots). The kept gen is the generation alone. */
#define NW_COMM_TRIES 5
static uint32_t gen_word(const char *table, uint32_t i, uint32_t stride)
{
	uint32_t w;
	memcpy(&w, table + (size_t)i * stride + offsetof(struct nw_seg_comm, gen), sizeof w);
	return w & (NW_COMM_GEN_MASK | NW_COMM_GEN_WRITING);
}

static int read_comms(int fd, struct nw_segment *seg, struct nw_read_error *err)
{
	const struct nw_seg_header *h = &seg->header;
	const uint32_t n = seg->comm_count, stride = h->comm_record_size;
	int rc;
	if (h->version_major < 2) {
		if ((rc = read_table(fd, h->comm_offset, n, stride, sizeof *seg->comms, seg->comms, seg->path, err)))
			return rc;
		for (uint32_t i = 0; i < n; i++)
			atomic_store_explicit(&seg->comms[i].gen, 0, memory_order_relaxed);   /* 1.x: reserved */
		return NW_READ_OK;
	}
	if (n == 0)
		return NW_READ_OK;
	const int live = !(h->flags & NW_SEG_F_DUMP);   /* nothing rewrites a dump */
	char *before = live ? malloc((size_t)n * stride) : NULL, *after = live ? malloc((size_t)n * stride) : NULL;
	if (live && (!before || !after)) {
		rc = fail_errno(err, seg->path, "", ENOMEM);
		goto out;
	}
	uint8_t *unsure = calloc(n, 1);
	if (!unsure) {
		rc = fail_errno(err, seg->path, "", ENOMEM);
		goto out;
	}
	for (int tries = 0; tries < NW_COMM_TRIES; tries++) {
		if (live && (rc = read_at(fd, before, (size_t)n * stride, h->comm_offset, seg->path, err)))
			goto out_unsure;
		if ((rc = read_table(fd, h->comm_offset, n, stride, sizeof *seg->comms, seg->comms, seg->path, err)))
			goto out_unsure;
		atomic_thread_fence(memory_order_acquire);
		if (live && (rc = read_at(fd, after, (size_t)n * stride, h->comm_offset, seg->path, err)))
			goto out_unsure;
		int again = 0;
		for (uint32_t i = 0; i < n; i++) {
			uint32_t w = atomic_load_explicit(&seg->comms[i].gen, memory_order_relaxed);
			w &= NW_COMM_GEN_MASK | NW_COMM_GEN_WRITING;
			unsure[i] = (w & NW_COMM_GEN_WRITING) ||
			            (live && (gen_word(before, i, stride) != w || gen_word(after, i, stride) != w));
			again |= unsure[i] && live;
		}
		if (!again)
			break;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct nw_seg_comm *c = &seg->comms[i];
		uint32_t w = atomic_load_explicit(&c->gen, memory_order_relaxed);
		atomic_store_explicit(&c->gen, w & NW_COMM_GEN_MASK, memory_order_relaxed);
		if (unsure[i]) {               /* being given to a new comm: neither the old nor the new */
			memset(c, 0, sizeof *c);
			atomic_store_explicit(&c->gen, w & NW_COMM_GEN_MASK, memory_order_relaxed);
			atomic_store_explicit(&c->state, NW_COMM_FREE, memory_order_relaxed);
		}
	}
	rc = NW_READ_OK;
out_unsure:
	free(unsure);
out:
	free(before);
	free(after);
	return rc;
}

static int validate_comms(const struct nw_segment *seg, struct nw_read_error *err)
{
	for (uint32_t i = 0; i < seg->comm_count; i++) {
		const struct nw_seg_comm *c = &seg->comms[i];
		if (!terminated(c->name, sizeof c->name))
			return fail(err, NW_READ_ERR_FORMAT, seg->path, "comm slot %u: name is not NUL-terminated", i);
		if (!terminated(c->bus_id, sizeof c->bus_id))
			return fail(err, NW_READ_ERR_FORMAT, seg->path, "comm slot %u: bus_id is not NUL-terminated", i);
	}
	return NW_READ_OK;
}

/* ---- the stack area ---- */

struct sub_area {
	const char *name;
	uint64_t offset, bytes;
};

/* 1.4: the extension follows the area header; a newer minor may make it
 * longer (it is then still read as far as this reader knows it). Sets
 * *head to the bytes of header and extension, *py to its Python tables
 * (all zero before 1.4). */
static int read_stack_ext(const struct nw_seg_stack_header *a, uint64_t area_size, uint16_t minor,
                          const char *path, struct nw_read_error *err, uint64_t *head,
                          struct nw_seg_stack_ext *py)
{
	*head = sizeof *a;
	memset(py, 0, sizeof *py);
	if (minor < 4)
		return NW_READ_OK;
	const struct nw_seg_stack_ext *ext = (const void *)(a + 1);
	if (area_size < sizeof *a + sizeof *ext)
		return fail(err, NW_READ_ERR_FORMAT, path,
		            "stack area: %llu bytes, too small for the area header and its extension",
		            (unsigned long long)area_size);
	if (ext->ext_size < sizeof *ext || ext->ext_size % 8 || ext->ext_size > NW_STACK_MAX_EXT)
		return fail(err, NW_READ_ERR_FORMAT, path,
		            "stack area: ext_size %u is not a multiple of 8 in [%zu, %u]", ext->ext_size,
		            sizeof *ext, NW_STACK_MAX_EXT);
	*head += ext->ext_size;
	*py = *ext;
	return NW_READ_OK;
}

/* The Python tables' capacities are within their bounds; the call sites
 * are per op of the ring, or absent. */
static int check_python_capacities(const struct nw_seg_stack_ext *py, uint32_t ring_capacity,
                                   const char *path, struct nw_read_error *err)
{
	static const struct { const char *name; size_t offset; uint32_t max; } pycaps[] = {
		{ "pyframe_capacity", offsetof(struct nw_seg_stack_ext, pyframe_capacity), NW_STACK_MAX_PYFRAMES },
		{ "pysite_capacity", offsetof(struct nw_seg_stack_ext, pysite_capacity), NW_STACK_MAX_PYSITES },
		{ "pycall_depth", offsetof(struct nw_seg_stack_ext, pycall_depth), NW_STACK_MAX_PYCALL_DEPTH },
	};
	for (size_t i = 0; i < sizeof pycaps / sizeof pycaps[0]; i++) {
		uint32_t v;
		memcpy(&v, (const char *)py + pycaps[i].offset, sizeof v);
		if (v > pycaps[i].max)
			return fail(err, NW_READ_ERR_FORMAT, path, "stack area: %s %u is over the bound %u",
			            pycaps[i].name, v, pycaps[i].max);
	}
	if (py->pycall_count != 0 && py->pycall_count != ring_capacity)
		return fail(err, NW_READ_ERR_FORMAT, path,
		            "stack area: pycall_count %u is neither 0 nor ring_capacity %u", py->pycall_count,
		            ring_capacity);
	return NW_READ_OK;
}

/* The native tables' capacities are within their bounds, the string table
 * within the area; the op stacks are per op of the ring, or absent. */
static int check_native_capacities(const struct nw_seg_stack_header *a, uint64_t area_size,
                                   uint32_t ring_capacity, const char *path,
                                   struct nw_read_error *err)
{
	static const struct { const char *name; size_t offset; uint32_t max; } caps[] = {
		{ "thread_capacity", offsetof(struct nw_seg_stack_header, thread_capacity), NW_STACK_MAX_THREADS },
		{ "frame_capacity", offsetof(struct nw_seg_stack_header, frame_capacity), NW_STACK_MAX_FRAMES },
		{ "module_capacity", offsetof(struct nw_seg_stack_header, module_capacity), NW_STACK_MAX_MODULES },
		{ "ipsym_capacity", offsetof(struct nw_seg_stack_header, ipsym_capacity), NW_STACK_MAX_IPSYMS },
		{ "opstack_depth", offsetof(struct nw_seg_stack_header, opstack_depth), NW_STACK_MAX_OPSTACK_DEPTH },
	};
	for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
		uint32_t v;
		memcpy(&v, (const char *)a + caps[i].offset, sizeof v);
		if (v > caps[i].max)
			return fail(err, NW_READ_ERR_FORMAT, path, "stack area: %s %u is over the bound %u",
			            caps[i].name, v, caps[i].max);
	}
	if (a->strtab_size > area_size)
		return fail(err, NW_READ_ERR_FORMAT, path,
		            "stack area: strtab_size %u is larger than the area (%llu bytes)", a->strtab_size,
		            (unsigned long long)area_size);
	if (a->opstack_count != 0 && a->opstack_count != ring_capacity)
		return fail(err, NW_READ_ERR_FORMAT, path,
		            "stack area: opstack_count %u is neither 0 nor ring_capacity %u", a->opstack_count,
		            ring_capacity);
	return NW_READ_OK;
}

/* Every table but the first (the area header, at 0) is aligned and inside
 * the area, and no two tables overlap. */
static int check_sub_areas(const struct sub_area *subs, size_t n, uint64_t area_size,
                           const char *path, struct nw_read_error *err)
{
	for (size_t i = 1; i < n; i++) {
		const struct sub_area *s = &subs[i];
		/* An empty table needs no alignment and may share its offset. */
		if (s->bytes && s->offset % NW_SEG_ALIGN)
			return fail(err, NW_READ_ERR_FORMAT, path,
			            "stack area: %s offset %llu is not %d-byte aligned", s->name,
			            (unsigned long long)s->offset, NW_SEG_ALIGN);
		if (s->offset > area_size || s->bytes > area_size - s->offset)
			return fail(err, NW_READ_ERR_FORMAT, path,
			            "stack area: %s (offset %llu, %llu bytes) ends beyond the area (%llu bytes)",
			            s->name, (unsigned long long)s->offset, (unsigned long long)s->bytes,
			            (unsigned long long)area_size);
	}
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++) {
			const struct sub_area *x = &subs[i], *y = &subs[j];
			if (x->bytes && y->bytes && x->offset < y->offset + y->bytes &&
			    y->offset < x->offset + x->bytes)
				return fail(err, NW_READ_ERR_FORMAT, path, "stack area: %s overlaps %s", x->name,
				            y->name);
		}
	return NW_READ_OK;
}

/* The layout of a stack area: what never changes after the watchdog laid it
 * out (magic, capacities, offsets), checked in every state. */
static int validate_stack_layout(const struct nw_seg_stack_header *a, uint64_t area_size,
                                 uint32_t ring_capacity, uint16_t minor, const char *path,
                                 struct nw_read_error *err)
{
	if (a->magic != NW_STACK_MAGIC)
		return fail(err, NW_READ_ERR_FORMAT, path, "stack area: bad magic 0x%08x (expected 0x%08x)",
		            a->magic, NW_STACK_MAGIC);
	uint64_t head;
	struct nw_seg_stack_ext py;
	int rc;
	if ((rc = read_stack_ext(a, area_size, minor, path, err, &head, &py)) ||
	    (rc = check_python_capacities(&py, ring_capacity, path, err)) ||
	    (rc = check_native_capacities(a, area_size, ring_capacity, path, err)))
		return rc;
	/* Per-op stacks (Python call sites) are there when depth, count and
	 * offset are all nonzero. */
	int opstacks = a->opstack_depth && a->opstack_count && a->opstack_offset;
	int pycalls = py.pycall_depth && py.pycall_count && py.pycall_offset;

	/* Bounded capacities: none of these products overflows. */
	const struct sub_area subs[] = {
		{ "area header", 0, head },
		{ "thread table", a->thread_offset, (uint64_t)a->thread_capacity * sizeof(struct nw_seg_thread) },
		{ "frame table", a->frame_offset,
		  (uint64_t)a->thread_capacity * a->frame_capacity * sizeof(struct nw_seg_frame) },
		{ "module table", a->module_offset, (uint64_t)a->module_capacity * sizeof(struct nw_seg_module) },
		{ "string table", a->strtab_offset, a->strtab_size },
		{ "ip-symbol table", a->ipsym_offset, (uint64_t)a->ipsym_capacity * sizeof(struct nw_seg_frame) },
		{ "op stacks", opstacks ? a->opstack_offset : 0,
		  opstacks ? (uint64_t)a->opstack_count * a->opstack_depth * sizeof(uint64_t) : 0 },
		{ "Python frame table", py.pyframe_offset,
		  (uint64_t)py.pyframe_capacity * sizeof(struct nw_seg_pyframe) },
		{ "Python site table", py.pysite_offset,
		  (uint64_t)py.pysite_capacity * sizeof(struct nw_seg_pyframe) },
		{ "Python call sites", pycalls ? py.pycall_offset : 0,
		  pycalls ? (uint64_t)py.pycall_count * py.pycall_depth * sizeof(struct nw_seg_pycall) : 0 },
	};
	return check_sub_areas(subs, sizeof subs / sizeof subs[0], area_size, path, err);
}

static const char *stack_base(const struct nw_segment *seg)
{
	return (const char *)seg->stack_copy;
}

/* A frame's references: its symbol inside the used string table, its
 * module inside the module table. `where` names the frame ("thread 3 (tid
 * 77) frame 2"), formatted only for the message. */
__attribute__((format(printf, 5, 6)))
static int check_frame(const struct nw_seg_stack_header *a, const struct nw_seg_frame *f,
                       const char *path, struct nw_read_error *err, const char *where, ...)
{
	int bad_symbol = f->symbol != 0 && f->symbol >= a->strtab_used;
	if (!bad_symbol && f->module <= a->module_count)
		return NW_READ_OK;
	char what[64];
	va_list ap;
	va_start(ap, where);
	vsnprintf(what, sizeof what, where, ap);
	va_end(ap);
	if (bad_symbol)
		return fail(err, NW_READ_ERR_FORMAT, path,
		            "stack area: %s: symbol offset %u is beyond strtab_used %u", what, f->symbol,
		            a->strtab_used);
	return fail(err, NW_READ_ERR_FORMAT, path, "stack area: %s: module %u is beyond module_count %u",
	            what, f->module, a->module_count);
}

/* A Python frame's strings are inside the used string table. */
__attribute__((format(printf, 5, 6)))
static int check_pyframe(const struct nw_seg_stack_header *a, const struct nw_seg_pyframe *f,
                         const char *path, struct nw_read_error *err, const char *where, ...)
{
	uint32_t used = a->strtab_used ? a->strtab_used : 1; /* offset 0 is "" even in an empty table */
	if (f->file < used && f->function < used)
		return NW_READ_OK;
	char what[64];
	va_list ap;
	va_start(ap, where);
	vsnprintf(what, sizeof what, where, ap);
	va_end(ap);
	return fail(err, NW_READ_ERR_FORMAT, path,
	            "stack area: %s: file %u or function %u is beyond strtab_used %u", what, f->file,
	            f->function, a->strtab_used);
}

/* The site table's order: by code, then instr. */
static int pysite_cmp(uint64_t code, uint64_t instr, const struct nw_seg_pyframe *e)
{
	if (code != e->code)
		return code < e->code ? -1 : 1;
	if (instr != e->instr)
		return instr < e->instr ? -1 : 1;
	return 0;
}

/* The counts are within their capacities; the used string table starts
 * with "" and ends with a NUL. */
static int check_stack_counts(const struct nw_seg_stack_header *a, const char *base,
                              const char *path, struct nw_read_error *err)
{
	if (a->thread_count > a->thread_capacity)
		return fail(err, NW_READ_ERR_FORMAT, path, "stack area: thread_count %u is over thread_capacity %u",
		            a->thread_count, a->thread_capacity);
	if (a->module_count > a->module_capacity)
		return fail(err, NW_READ_ERR_FORMAT, path, "stack area: module_count %u is over module_capacity %u",
		            a->module_count, a->module_capacity);
	if (a->ipsym_count > a->ipsym_capacity)
		return fail(err, NW_READ_ERR_FORMAT, path, "stack area: ipsym_count %u is over ipsym_capacity %u",
		            a->ipsym_count, a->ipsym_capacity);
	if (a->strtab_used > a->strtab_size)
		return fail(err, NW_READ_ERR_FORMAT, path, "stack area: strtab_used %u is over strtab_size %u",
		            a->strtab_used, a->strtab_size);
	const char *strtab = base + a->strtab_offset;
	if (a->strtab_used && strtab[0] != '\0')
		return fail(err, NW_READ_ERR_FORMAT, path,
		            "stack area: the string table does not start with \"\" (offset 0)");
	if (a->strtab_used && strtab[a->strtab_used - 1] != '\0')
		return fail(err, NW_READ_ERR_FORMAT, path,
		            "stack area: the string table's last string is not NUL-terminated within strtab_used %u",
		            a->strtab_used);
	return NW_READ_OK;
}

/* 1.4: the Python frame and site tables: counts, strings, the sites'
 * order. */
static int check_python_tables(const struct nw_seg_stack_header *a, const struct nw_seg_stack_ext *py,
                               const char *base, const char *path, struct nw_read_error *err)
{
	int rc;
	if (py->pyframe_count > py->pyframe_capacity)
		return fail(err, NW_READ_ERR_FORMAT, path, "stack area: pyframe_count %u is over pyframe_capacity %u",
		            py->pyframe_count, py->pyframe_capacity);
	if (py->pysite_count > py->pysite_capacity)
		return fail(err, NW_READ_ERR_FORMAT, path, "stack area: pysite_count %u is over pysite_capacity %u",
		            py->pysite_count, py->pysite_capacity);
	const struct nw_seg_pyframe *pyframes = (const void *)(base + py->pyframe_offset);
	for (uint32_t i = 0; i < py->pyframe_count; i++)
		if ((rc = check_pyframe(a, &pyframes[i], path, err, "Python frame %u", i)))
			return rc;
	const struct nw_seg_pyframe *pysites = (const void *)(base + py->pysite_offset);
	for (uint32_t i = 0; i < py->pysite_count; i++) {
		if ((rc = check_pyframe(a, &pysites[i], path, err, "Python site %u", i)))
			return rc;
		if (i && pysite_cmp(pysites[i - 1].code, pysites[i - 1].instr, &pysites[i]) >= 0)
			return fail(err, NW_READ_ERR_FORMAT, path,
			            "stack area: Python site table is not sorted by (code, instr) (entry %u)", i);
	}
	return NW_READ_OK;
}

/* Each thread: its name, its Python frames and name, its native frames. */
static int check_threads(const struct nw_seg_stack_header *a, const struct nw_seg_stack_ext *py,
                         const char *base, const char *path, struct nw_read_error *err)
{
	int rc;
	const struct nw_seg_thread *threads = (const void *)(base + a->thread_offset);
	const struct nw_seg_frame *frames = (const void *)(base + a->frame_offset);
	for (uint32_t i = 0; i < a->thread_count; i++) {
		const struct nw_seg_thread *t = &threads[i];
		if (!terminated(t->name, sizeof t->name))
			return fail(err, NW_READ_ERR_FORMAT, path, "stack area: thread %u (tid %u): name is not NUL-terminated",
			            i, t->tid);
		if (t->py_first > py->pyframe_count || t->py_count > py->pyframe_count - t->py_first)
			return fail(err, NW_READ_ERR_FORMAT, path,
			            "stack area: thread %u (tid %u): Python frames %u..%u+%u are beyond pyframe_count %u",
			            i, t->tid, t->py_first, t->py_first, t->py_count, py->pyframe_count);
		if (t->py_name >= (a->strtab_used ? a->strtab_used : 1))
			return fail(err, NW_READ_ERR_FORMAT, path,
			            "stack area: thread %u (tid %u): Python name offset %u is beyond strtab_used %u",
			            i, t->tid, t->py_name, a->strtab_used);
		if (t->py_native > t->nframes)
			return fail(err, NW_READ_ERR_FORMAT, path,
			            "stack area: thread %u (tid %u): py_native %u is over its %u frames", i, t->tid,
			            t->py_native, t->nframes);
		if (t->nframes > a->frame_capacity)
			return fail(err, NW_READ_ERR_FORMAT, path,
			            "stack area: thread %u (tid %u) has %u frames, over frame_capacity %u", i, t->tid,
			            t->nframes, a->frame_capacity);
		for (uint32_t k = 0; k < t->nframes; k++)
			if ((rc = check_frame(a, &frames[(size_t)i * a->frame_capacity + k], path, err,
			                      "thread %u (tid %u) frame %u", i, t->tid, k)))
				return rc;
	}
	return NW_READ_OK;
}

/* The module paths are terminated; the ip-symbol table is sorted by ip and
 * its entries' references are inside their tables. */
static int check_modules_and_ipsyms(const struct nw_seg_stack_header *a, const char *base,
                                    const char *path, struct nw_read_error *err)
{
	int rc;
	const struct nw_seg_module *modules = (const void *)(base + a->module_offset);
	for (uint32_t i = 0; i < a->module_count; i++)
		if (!terminated(modules[i].path, sizeof modules[i].path))
			return fail(err, NW_READ_ERR_FORMAT, path, "stack area: module %u: path is not NUL-terminated", i);
	const struct nw_seg_frame *ipsyms = (const void *)(base + a->ipsym_offset);
	for (uint32_t i = 0; i < a->ipsym_count; i++) {
		if ((rc = check_frame(a, &ipsyms[i], path, err, "ip-symbol entry %u", i)))
			return rc;
		if (i && ipsyms[i].ip <= ipsyms[i - 1].ip)
			return fail(err, NW_READ_ERR_FORMAT, path,
			            "stack area: ip-symbol table is not sorted by ip (entry %u)", i);
	}
	return NW_READ_OK;
}

/* The contents of a consistent capture: counts, strings, references. */
static int validate_stack_contents(const struct nw_segment *seg, struct nw_read_error *err)
{
	const struct nw_seg_stack_header *a = seg->stack_copy;
	const char *base = stack_base(seg), *path = seg->path;
	int rc;

	if ((rc = check_stack_counts(a, base, path, err)))
		return rc;
	/* The state is not CAPTURED yet: the extension by the version alone. */
	const struct nw_seg_stack_ext *ext =
		v1_level(&seg->header) >= 4 ? (const struct nw_seg_stack_ext *)(a + 1) : NULL;
	if (ext && (ext->native_note >= a->strtab_used || ext->python_note >= a->strtab_used))
		return fail(err, NW_READ_ERR_FORMAT, path,
		            "stack area: a note's string offset (%u, %u) is beyond strtab_used %u",
		            ext->native_note, ext->python_note, a->strtab_used);

	/* 1.4: the Python tables (all zero before). */
	static const struct nw_seg_stack_ext none;
	const struct nw_seg_stack_ext *py = ext ? ext : &none;
	if ((rc = check_python_tables(a, py, base, path, err)) ||
	    (rc = check_threads(a, py, base, path, err)))
		return rc;
	return check_modules_and_ipsyms(a, base, path, err);
}

static int read_u32_at(int fd, uint64_t off, uint32_t *v, const char *path, struct nw_read_error *err)
{
	return read_at(fd, v, sizeof *v, off, path, err);
}

/* Copy the stack area under its seqlock: seq, the area, seq again; a copy
 * is consistent when both reads are equal and even. A few attempts, then
 * the last copy is kept as "being written". */
static int read_stacks(int fd, struct nw_segment *seg, unsigned flags, struct nw_read_error *err)
{
	const struct nw_seg_header *h = &seg->header;
	const uint64_t size = h->stack_size;
	const uint64_t seq_at = h->stack_offset + offsetof(struct nw_seg_stack_header, seq);
	int rc;

	seg->stack_state = NW_STACKS_NONE;
	/* 1.0: the stack area had no defined format; nothing to interpret. */
	if (h->stack_offset == 0 || size == 0 || v1_level(h) == 0)
		return NW_READ_OK;
	if (size < sizeof(struct nw_seg_stack_header))
		return fail(err, NW_READ_ERR_FORMAT, seg->path,
		            "stack area: %llu bytes, smaller than its %zu-byte header",
		            (unsigned long long)size, sizeof(struct nw_seg_stack_header));
	/* Fresh anonymous pages: zero, and costing nothing until read_present
	 * writes them (a calloc may clear them, or a sanitizer poison them). */
	void *copy = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
	                  -1, 0);
	if (copy == MAP_FAILED)
		return fail_errno(err, seg->path, "", ENOMEM);
	seg->stack_copy = copy;
	seg->stack_bytes = size;
	struct nw_seg_stack_header *a = seg->stack_copy;

	uint32_t seq1 = 1, seq2 = 0;
	for (int attempt = 0; attempt < NW_STACK_ATTEMPTS; attempt++) {
		if (attempt && !(flags & NW_READ_NO_WAIT) && !(h->flags & NW_SEG_F_DUMP)) {
			struct timespec pause = { 0, NW_STACK_RETRY_NS };
			nanosleep(&pause, NULL);
		}
		if ((rc = read_u32_at(fd, seq_at, &seq1, seg->path, err)) ||
		    (rc = read_present(fd, a, size, h->stack_offset, seg->path, err)) ||
		    (rc = read_u32_at(fd, seq_at, &seq2, seg->path, err)))
			return rc;
		if (seq1 == seq2 && seq1 % 2 == 0)
			break;
	}
	seg->stack_seq = seq2;

	static const struct nw_seg_stack_header zero;
	if (memcmp(a, &zero, sizeof zero) == 0) {
		seg->stack_state = NW_STACKS_UNINITIALIZED;
		return NW_READ_OK;
	}
	if ((rc = validate_stack_layout(a, size, h->ring_capacity, (uint16_t)v1_level(h), seg->path, err)))
		return rc;
	if (seq1 != seq2 || seq1 % 2) {
		seg->stack_state = NW_STACKS_BEING_WRITTEN;
		return NW_READ_OK;
	}
	if (a->capture_ns == 0) {
		/* 1.4: Python call sites named between captures (the watchdog's
		 * poll) before any capture: the area holds those names only. */
		const struct nw_seg_stack_ext *ext = (const void *)(a + 1);
		seg->stack_state = NW_STACKS_NEVER;
		if (v1_level(h) < 4 || ext->ext_size < sizeof *ext || !ext->pysite_count)
			return NW_READ_OK;
		/* The watchdog writes threads, modules and the capture count only
		 * with capture_ns, under one seq. An area with them and no
		 * capture_ns is no writer's: its names are not believed (its
		 * threads would read as a capture that never was); the ring and
		 * tables are read as usual. */
		if (a->thread_count || a->module_count || a->captures)
			return NW_READ_OK;
		if ((rc = validate_stack_contents(seg, err)))
			return rc;
		seg->stack = a;
		return NW_READ_OK;
	}
	if ((rc = validate_stack_contents(seg, err)))
		return rc;
	seg->stack_state = NW_STACKS_CAPTURED;
	seg->stack = a;
	return NW_READ_OK;
}

const struct nw_seg_stack_ext *nw_stack_ext(const struct nw_segment *seg)
{
	if (!seg->stack_copy || seg->stack_state < NW_STACKS_NEVER || v1_level(&seg->header) < 4)
		return NULL;
	return (const struct nw_seg_stack_ext *)((const struct nw_seg_stack_header *)seg->stack_copy + 1);
}

const char *nw_stack_note(const struct nw_segment *seg, int python)
{
	const struct nw_seg_stack_ext *ext = seg->stack ? nw_stack_ext(seg) : NULL;
	if (!ext)
		return NULL;
	const char *s = nw_stack_string(seg, python ? ext->python_note : ext->native_note);
	return s && *s ? s : NULL;
}

const struct nw_seg_thread *nw_stack_thread(const struct nw_segment *seg, uint32_t i)
{
	const struct nw_seg_stack_header *a = seg->stack;
	if (!a || i >= a->thread_count)
		return NULL;
	return (const struct nw_seg_thread *)(stack_base(seg) + a->thread_offset) + i;
}

const struct nw_seg_frame *nw_stack_frames(const struct nw_segment *seg, uint32_t i, uint32_t *n)
{
	const struct nw_seg_thread *t = nw_stack_thread(seg, i);
	*n = 0;
	if (!t || t->nframes == 0)
		return NULL;
	const struct nw_seg_stack_header *a = seg->stack;
	*n = t->nframes; /* <= frame_capacity: checked when read */
	return (const struct nw_seg_frame *)(stack_base(seg) + a->frame_offset) +
	       (size_t)i * a->frame_capacity;
}

const char *nw_stack_string(const struct nw_segment *seg, uint32_t offset)
{
	const struct nw_seg_stack_header *a = seg->stack;
	if (offset == 0)
		return "";
	if (!a || offset >= a->strtab_used)
		return NULL;
	const char *s = stack_base(seg) + a->strtab_offset + offset;
	return memchr(s, '\0', a->strtab_used - offset) ? s : NULL;
}

const struct nw_seg_module *nw_stack_module(const struct nw_segment *seg, uint32_t index1)
{
	const struct nw_seg_stack_header *a = seg->stack;
	if (!a || index1 == 0 || index1 > a->module_count)
		return NULL;
	const struct nw_seg_module *m = (const struct nw_seg_module *)(stack_base(seg) + a->module_offset) +
	                                (index1 - 1);
	return terminated(m->path, sizeof m->path) ? m : NULL;
}

const struct nw_seg_module *nw_stack_module_at(const struct nw_segment *seg, uint64_t ip,
                                               uint32_t *index1)
{
	const struct nw_seg_stack_header *a = seg->stack;
	if (index1)
		*index1 = 0;
	if (!a)
		return NULL;
	for (uint32_t i = 1; i <= a->module_count; i++) {
		const struct nw_seg_module *m = nw_stack_module(seg, i);
		if (m && ip >= m->base && ip - m->base < m->size) {
			if (index1)
				*index1 = i;
			return m;
		}
	}
	return NULL;
}

const struct nw_seg_frame *nw_ipsym_lookup(const struct nw_segment *seg, uint64_t ip)
{
	const struct nw_seg_stack_header *a = seg->stack;
	if (!a)
		return NULL;
	const struct nw_seg_frame *t = (const struct nw_seg_frame *)(stack_base(seg) + a->ipsym_offset);
	size_t lo = 0, hi = a->ipsym_count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t[mid].ip == ip)
			return &t[mid];
		if (t[mid].ip < ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct nw_seg_pyframe *nw_stack_pyframes(const struct nw_segment *seg, uint32_t i, uint32_t *n)
{
	const struct nw_seg_thread *t = nw_stack_thread(seg, i);
	const struct nw_seg_stack_ext *ext = seg->stack ? nw_stack_ext(seg) : NULL;
	*n = 0;
	if (!t || !ext || t->py_count == 0)
		return NULL;
	*n = t->py_count; /* within pyframe_count: checked when read */
	return (const struct nw_seg_pyframe *)(stack_base(seg) + ext->pyframe_offset) + t->py_first;
}

const struct nw_seg_pyframe *nw_pysite_lookup(const struct nw_segment *seg, uint64_t code,
                                              uint64_t instr)
{
	const struct nw_seg_stack_ext *ext = seg->stack ? nw_stack_ext(seg) : NULL;
	if (!ext)
		return NULL;
	const struct nw_seg_pyframe *t = (const void *)(stack_base(seg) + ext->pysite_offset);
	size_t lo = 0, hi = ext->pysite_count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = pysite_cmp(code, instr, &t[mid]);
		if (c == 0)
			return &t[mid];
		if (c > 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* ops[] is sorted by ticket. */
static int has_ticket(const struct nw_segment *seg, uint64_t ticket)
{
	size_t lo = 0, hi = seg->op_count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t t = nw_op_ticket(&seg->ops[mid]);
		if (t == ticket)
			return 1;
		if (t < ticket)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

const uint64_t *nw_opstack(const struct nw_segment *seg, uint64_t ticket, uint32_t *depth)
{
	*depth = 0;
	if (seg->stack_state < NW_STACKS_NEVER || !seg->stack_copy)
		return NULL;
	const struct nw_seg_stack_header *a = seg->stack_copy;
	if (!a->opstack_depth || !a->opstack_count || !a->opstack_offset || !has_ticket(seg, ticket))
		return NULL;
	const uint64_t *ips = (const uint64_t *)(stack_base(seg) + a->opstack_offset) +
	                      (size_t)(ticket % a->opstack_count) * a->opstack_depth;
	uint32_t n = 0;
	while (n < a->opstack_depth && ips[n])
		n++;
	*depth = n;
	return n ? ips : NULL;
}

const struct nw_seg_pycall *nw_pycall(const struct nw_segment *seg, uint64_t ticket, uint32_t *depth)
{
	*depth = 0;
	const struct nw_seg_stack_ext *ext = nw_stack_ext(seg);
	if (!ext || !ext->pycall_depth || !ext->pycall_count || !ext->pycall_offset ||
	    !has_ticket(seg, ticket))
		return NULL;
	const struct nw_seg_pycall *c = (const struct nw_seg_pycall *)(stack_base(seg) + ext->pycall_offset) +
	                                (size_t)(ticket % ext->pycall_count) * ext->pycall_depth;
	uint32_t n = 0;
	while (n < ext->pycall_depth && c[n].code)
		n++;
	*depth = n;
	return n ? c : NULL;
}

/* Tickets [t, end) whose slots follow each other in the file and fit in
 * one chunk: up to the chunk's size, the ring's wrap, or `end`. */
static uint64_t chunk_end(uint64_t t, uint64_t end, uint64_t cap, uint64_t per_chunk)
{
	/* Steps, not positions: t + cap may pass 2^64 (a head near the top). */
	return t + min_u64(end - t, min_u64(per_chunk, cap - t % cap));
}

/* Which class a first commit read `c1` puts ticket t in, when it is not t+1. */
static void classify(struct nw_ring_stats *st, uint64_t c1, uint64_t t, uint64_t cap)
{
	const uint64_t slot = t % cap;
	if (c1 & NW_SEG_COMMIT_WRITING) {
		/* A writer at work: its own ticket's or an older one's (ours is
		 * then a gap or comes later): unpublished; a newer one's: ours is
		 * gone. */
		const uint64_t w = c1 & ~NW_SEG_COMMIT_WRITING;
		if (w % cap != slot)
			st->torn++;
		else if (w <= t)
			st->unpublished++;
		else
			st->overwritten++;
		return;
	}
	/* 1.3: the updater count above the ticket does not name a ticket. */
	const uint64_t k1 = nw_seg_commit_ticket1(c1);
	if (k1 == 0 || ((k1 - 1) < t && (k1 - 1) % cap == slot)) {
		st->unpublished++;     /* being written, or its writer died: an older or no commit */
	} else if ((k1 - 1) > t && (k1 - 1) % cap == slot) {
		st->overwritten++;     /* a newer ticket took the slot after we read the head */
	} else {
		st->torn++;            /* names no ticket of this slot */
	}
}

/* The op ring, by the publication protocol of segment.h: copy the slots of
 * the newest tickets, then read their commit words again; keep a record
 * only if both commit reads name the ticket expected for its slot. The
 * updater count of a 1.3 commit (an update in place at work, or a process
 * killed inside one) does not matter: the kept copy's commit is ticket + 1.
 * Read a chunk at a time: memory is the records kept (bounded by
 * check_cost) and one chunk, never a copy of the whole ring. */
static int read_ring(int fd, struct nw_segment *seg, unsigned flags, struct nw_read_error *err)
{
	const struct nw_seg_header *h = &seg->header;
	const uint64_t cap = h->ring_capacity, stride = h->op_record_size;
	const uint64_t head = h->ring_head;
	const uint64_t oldest = head > cap ? head - cap : 0;
	const uint64_t slots = head - oldest;   /* <= cap; slot of ticket t is t % cap */
	const uint64_t per_chunk = stride >= NW_RING_CHUNK_BYTES ? 1 : NW_RING_CHUNK_BYTES / stride;
	struct nw_ring_stats *st = &seg->ring;
	int rc;

	st->head = head;
	st->overwritten = oldest;
	if (slots == 0)
		return read_stacks(fd, seg, flags, err);
	char *chunk = malloc(min_u64(slots, per_chunk) * stride);
	seg->ops = malloc(slots * sizeof *seg->ops);
	if (!chunk || !seg->ops) {
		rc = fail_errno(err, seg->path, "", ENOMEM);
		goto out;
	}
	/* First copy: keep the records whose commit names their ticket. */
	size_t kept = 0;
	for (uint64_t t = oldest; t < head;) {
		const uint64_t first = t, end = chunk_end(t, head, cap, per_chunk);
		if ((rc = read_at(fd, chunk, (end - first) * stride,
		                  h->ring_offset + (first % cap) * stride, seg->path, err)))
			goto out;
		for (; t < end; t++) {
			const char *rec = chunk + (t - first) * stride;
			uint64_t c1;
			memcpy(&c1, rec, sizeof c1);
			if (nw_seg_commit_ticket1(c1) == t + 1) {
				memcpy(&seg->ops[kept], rec, sizeof *seg->ops);
				seg->ops[kept++].commit = t + 1;   /* without a 1.3 updater count */
			} else {
				classify(st, c1, t, cap);
			}
		}
	}
	/* The stack area between the two copies: a record kept below had its
	 * slot unchanged from before to after, so the per-op stack read with
	 * it is that ticket's (the producer writes it while the slot is
	 * claimed, see docs/FORMAT.md). */
	if ((rc = read_stacks(fd, seg, flags, err)))
		goto out;
	/* Second read of the commit words, of the chunks that hold a kept
	 * record: a record rewritten meanwhile is torn. ops[] is in ticket
	 * order, so one pass over it follows the chunks. */
	size_t i = 0, valid = 0;
	while (i < kept) {
		const uint64_t first = nw_op_ticket(&seg->ops[i]);
		const uint64_t end = chunk_end(first, head, cap, per_chunk);
		if ((rc = read_at(fd, chunk, (end - first) * stride,
		                  h->ring_offset + (first % cap) * stride, seg->path, err)))
			goto out;
		for (; i < kept && nw_op_ticket(&seg->ops[i]) < end; i++) {
			const uint64_t t = nw_op_ticket(&seg->ops[i]);
			uint64_t c2;
			memcpy(&c2, chunk + (t - first) * stride, sizeof c2);
			if (nw_seg_commit_ticket1(c2) == t + 1) {
				if (valid != i)
					seg->ops[valid] = seg->ops[i];
				valid++;
			} else {
				st->torn++;    /* rewritten while we copied it */
			}
		}
	}
	seg->op_count = valid;
	st->valid = valid;
	rc = NW_READ_OK;
out:
	free(chunk);
	return rc;
}

/* The file is a regular file with something in it. */
static int stat_segment_file(int fd, const char *name, struct stat *sb, struct nw_read_error *err)
{
	if (fstat(fd, sb) != 0)
		return fail_errno(err, name, "stat", errno);
	if (S_ISDIR(sb->st_mode))
		return fail(err, NW_READ_ERR_IO, name, "is a directory with no segment given");
	if (!S_ISREG(sb->st_mode))
		return fail(err, NW_READ_ERR_IO, name, "not a regular file");
	if (sb->st_size == 0)
		return fail(err, NW_READ_ERR_FORMAT, name, "empty file (not a segment)");
	return NW_READ_OK;
}

/* The header fields an older version of the format does not have read as
 * zero, whatever its reserved bytes hold. */
static void clear_header_fields_of_later_versions(struct nw_seg_header *h)
{
	/* A 1.0 file has no 1.1 fields: what its reserved tail holds is not
	 * theirs, so they read as zero (the area starts at `tracking`). */
	if (v1_level(h) == 0)
		memset((char *)h + offsetof(struct nw_seg_header, tracking), 0,
		       sizeof *h - offsetof(struct nw_seg_header, tracking));
	/* Nor has a 1.1 file the 1.2 fields: the writer's start unknown, no
	 * exit status. */
	if (v1_level(h) < 2) {
		h->proc_start_ticks = 0;
		h->exit_status = 0;
		h->flags &= ~NW_SEG_F_EXIT_STATUS;
	}
	/* Nor has a 1.x file the 2.0 fields (its comm slots are never reused). */
	if (h->version_major < 2)
		memset((char *)h + offsetof(struct nw_seg_header, threads_dropped), 0,
		       sizeof *h - offsetof(struct nw_seg_header, threads_dropped));
}

/* A 1.x file's ops and peers have no generation: what their padding
 * holds is not one (its slots were never reused). */
static void clear_generations_of_v1(struct nw_segment *seg)
{
	if (seg->header.version_major >= 2)
		return;
	for (size_t i = 0; i < seg->op_count; i++)
		seg->ops[i].comm_gen = 0;
	for (uint32_t i = 0; i < seg->peer_count; i++)
		seg->peers[i].comm_gen = 0;
}

int nw_segment_read_fd(int fd, const char *name, unsigned flags, struct nw_segment *seg,
                       struct nw_read_error *err)
{
	int rc;
	memset(seg, 0, sizeof *seg);
	if (err)
		memset(err, 0, sizeof *err);

	struct stat sb;
	if ((rc = stat_segment_file(fd, name, &sb, err)))
		return rc;

	/* The known prefix of the header; a shorter file is judged on what it has. */
	struct nw_seg_header *h = &seg->header;
	size_t have = (uint64_t)sb.st_size < sizeof *h ? (size_t)sb.st_size : sizeof *h;
	ssize_t got;
	do
		got = pread(fd, h, have, 0);
	while (got < 0 && errno == EINTR);
	if (got < 0)
		return fail_errno(err, name, "read", errno);
	if ((rc = identify(h, (size_t)got, name, err)) ||
	    (rc = validate_header(h, (uint64_t)sb.st_size, name, err)) ||
	    (rc = check_cost(h, &sb, flags, name, err)))
		goto fail;
	clear_header_fields_of_later_versions(h);

	seg->file_size = (uint64_t)sb.st_size;
	seg->path = strdup(name);
	seg->comm_count = h->comm_count;
	seg->peer_count = h->peer_count;
	seg->comms = calloc(seg->comm_count ? seg->comm_count : 1, sizeof *seg->comms);
	seg->peers = calloc(seg->peer_count ? seg->peer_count : 1, sizeof *seg->peers);
	if (!seg->path || !seg->comms || !seg->peers) {
		rc = fail_errno(err, name, "", ENOMEM);
		goto fail;
	}
	if ((rc = read_comms(fd, seg, err)) ||
	    (rc = validate_comms(seg, err)) ||
	    (rc = read_table(fd, h->peer_offset, seg->peer_count, h->peer_record_size,
	                     sizeof *seg->peers, seg->peers, name, err)))
		goto fail;
	if (flags & NW_READ_SKIP_RING)
		rc = read_stacks(fd, seg, flags, err);
	else
		rc = read_ring(fd, seg, flags, err); /* reads the stack area between its two copies */
	if (rc)
		goto fail;
	clear_generations_of_v1(seg);
	return NW_READ_OK;
fail:
	nw_segment_free(seg);
	return rc;
}

int nw_segment_read(const char *path, unsigned flags, struct nw_segment *seg,
                    struct nw_read_error *err)
{
	memset(seg, 0, sizeof *seg);
	if (err)
		memset(err, 0, sizeof *err);
	/* O_NONBLOCK: a FIFO named like a segment must not hang the reader. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return fail_errno(err, path, "", errno);
	int rc = nw_segment_read_fd(fd, path, flags, seg, err);
	close(fd);
	return rc;
}

void nw_segment_free(struct nw_segment *seg)
{
	free(seg->path);
	free(seg->comms);
	free(seg->peers);
	free(seg->ops);
	if (seg->stack_copy)
		munmap(seg->stack_copy, seg->stack_bytes);
	memset(seg, 0, sizeof *seg);
}

const struct nw_seg_comm *nw_segment_comm_at(const struct nw_segment *seg, uint32_t slot)
{
	return slot < seg->comm_count ? &seg->comms[slot] : NULL;
}

/* ---- listing segment files ---- */

int nw_path_list_add(struct nw_path_list *list, const char *path)
{
	if (list->count == list->capacity) {
		size_t cap = list->capacity ? list->capacity * 2 : 16;
		char **p = realloc(list->paths, cap * sizeof *p);
		if (!p)
			return -1;
		list->paths = p;
		list->capacity = cap;
	}
	if (!(list->paths[list->count] = strdup(path)))
		return -1;
	list->count++;
	return 0;
}

static int has_seg_suffix(const char *name)
{
	size_t n = strlen(name);
	return n > 4 && strcmp(name + n - 4, ".seg") == 0;
}

static int compare_paths(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int is_segment_file(const char *path, const char *name)
{
	(void)path;
	return has_seg_suffix(name);
}

/* Regular files of dir that `keep` accepts, then its subdirectories while
 * depth > 0; no symbolic links, no dot files. Unreadable subdirectories
 * are skipped: they may belong to someone else. */
int nw_path_scan(const char *dir, int depth, int (*keep)(const char *path, const char *name),
                 struct nw_path_list *list)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int rc = 0;
	struct dirent *e;
	while (rc == 0 && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		char *child;
		if (asprintf(&child, "%s/%s", dir, e->d_name) < 0) {
			rc = -1;
			break;
		}
		/* The entry's type when the file system says it (no lstat per
		 * file: a directory of Flight Recorder dumps holds one per rank). */
		struct stat sb;
		mode_t type = e->d_type == DT_REG ? S_IFREG : e->d_type == DT_DIR ? S_IFDIR : 0;
		if (e->d_type == DT_UNKNOWN && lstat(child, &sb) == 0)
			type = sb.st_mode & S_IFMT;
		if (S_ISREG(type) && keep(child, e->d_name))
			rc = nw_path_list_add(list, child);
		else if (S_ISDIR(type) && depth > 0)
			rc = nw_path_scan(child, depth - 1, keep, list);
		free(child);
	}
	closedir(d);
	return rc;
}

int nw_segment_list(const char *path, struct nw_path_list *list, struct nw_read_error *err)
{
	if (err)
		memset(err, 0, sizeof *err);
	struct stat sb;
	if (stat(path, &sb) != 0)
		return fail_errno(err, path, "", errno);
	if (!S_ISDIR(sb.st_mode))
		return nw_path_list_add(list, path) ? fail_errno(err, path, "", ENOMEM) : NW_READ_OK;

	size_t before = list->count;
	/* Strip trailing slashes so paths print as DIR/job/file.seg. */
	char *dir = strdup(path);
	if (!dir)
		return fail_errno(err, path, "", ENOMEM);
	for (size_t n = strlen(dir); n > 1 && dir[n - 1] == '/'; n--)
		dir[n - 1] = '\0';
	DIR *probe = opendir(dir);
	if (!probe) {
		int e = errno;
		free(dir);
		return fail_errno(err, path, "", e);
	}
	closedir(probe);
	int rc = nw_path_scan(dir, 2, is_segment_file, list);
	free(dir);
	if (rc != 0)
		return fail_errno(err, path, "", ENOMEM);
	if (list->count == before)
		return fail(err, NW_READ_ERR_EMPTY, path, "no segment files (*.seg) in this directory");
	qsort(list->paths + before, list->count - before, sizeof *list->paths, compare_paths);
	return NW_READ_OK;
}

void nw_path_list_free(struct nw_path_list *list)
{
	for (size_t i = 0; i < list->count; i++)
		free(list->paths[i]);
	free(list->paths);
	memset(list, 0, sizeof *list);
}

/* ---- Is the writer of a segment still running? ---- */

/* Fields 3 (state) and 22 (starttime, clock ticks since boot) of a
 * /proc/PID/stat or /proc/PID/task/TID/stat file; 0, or -1 if it cannot
 * be read. */
static int proc_stat_file(const char *path, char *state, unsigned long long *ticks)
{
	char buf[1024];
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* The command name may hold spaces and parentheses: fields count from
	 * the last ')'. */
	char *p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2])
		return -1;
	p += 2;                            /* field 3 */
	*state = *p;
	for (int field = 3; field < 22; field++) {
		p = strchr(p, ' ');
		if (!p)
			return -1;
		p++;
	}
	char *end;
	errno = 0;
	unsigned long long v = strtoull(p, &end, 10);
	if (errno || end == p || (*end != ' ' && *end != '\n' && *end != '\0'))
		return -1;
	*ticks = v;
	return 0;
}

int nw_proc_stat(int64_t pid, char *state, unsigned long long *ticks)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%" PRId64 "/stat", pid);
	return proc_stat_file(path, state, ticks);
}

/* A thread of PID that has not exited, other than its main thread: a
 * process whose main thread called pthread_exit shows that thread's state
 * (Z) in /proc/PID/stat, and an empty /proc/PID/maps, while its other
 * threads go on. Its id (whose /proc/TID/maps is the process's), or 0. */
static int64_t live_thread(int64_t pid)
{
	char path[96];
	snprintf(path, sizeof path, "/proc/%" PRId64 "/task", pid);
	DIR *d = opendir(path);
	if (!d)
		return 0;
	int64_t found = 0;
	struct dirent *e;
	while (!found && (e = readdir(d))) {
		char *end;
		long long tid = strtoll(e->d_name, &end, 10);
		if (*end || tid <= 0 || tid == pid)
			continue;
		char state = 0;
		unsigned long long ticks;
		snprintf(path, sizeof path, "/proc/%" PRId64 "/task/%lld/stat", pid, tid);
		if (proc_stat_file(path, &state, &ticks) == 0 && state != 'Z' && state != 'X')
			found = tid;
	}
	closedir(d);
	return found;
}

/* 1 if /proc/PID/maps maps the file with this device and inode, 0 if not,
 * -1 if it cannot be read. */
static int maps_file(int64_t pid, const struct stat *st)
{
	char path[64], line[4096];
	snprintf(path, sizeof path, "/proc/%" PRId64 "/maps", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	int found = 0;
	while (!found && fgets(line, sizeof line, f)) {
		unsigned maj, min;
		unsigned long long ino;
		if (sscanf(line, "%*s %*s %*s %x:%x %llu", &maj, &min, &ino) == 3)
			found = ino == (unsigned long long)st->st_ino && maj == major(st->st_dev)
			        && min == minor(st->st_dev);
		/* a line longer than the buffer: skip its rest */
		while (!strchr(line, '\n') && fgets(line, sizeof line, f))
			;
	}
	fclose(f);
	return found;
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	if (clock_gettime(id, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The process that has the pid maps `path`: it is the writer of its live
 * segment, whatever else says. */
static int maps_path(int64_t pid, const char *path)
{
	struct stat st;
	return path && stat(path, &st) == 0 && maps_file(pid, &st) == 1;
}

int nw_segment_writer_state(const struct nw_seg_header *h, const char *path)
{
	int64_t pid = h->pid;
	if (pid <= 0 || pid > INT_MAX)
		return NW_WRITER_UNKNOWN;
	if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
		return NW_WRITER_GONE;
	/* The pid exists (EPERM: another user's): the writer, or a later
	 * process that got its pid? */
	char state = 0;
	unsigned long long ticks = 0;
	if (nw_proc_stat(pid, &state, &ticks) != 0) {
		if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
			return NW_WRITER_GONE;   /* it exited meanwhile */
		return NW_WRITER_UNKNOWN;    /* /proc hides it (hidepid) or is not mounted */
	}
	int64_t via = pid;               /* whose /proc/ID/maps is the process's */
	if ((state == 'Z' || state == 'X') && !(via = live_thread(pid)))
		return NW_WRITER_GONE;       /* exited: it writes nothing more */

	/* 1.2: the writer's own start time, exact. Another one: the pid was
	 * reused (unless that process maps the file: then its /proc and the
	 * writer's disagree, e.g. another time namespace; keep it). */
	if (h->proc_start_ticks) {
		if (ticks == h->proc_start_ticks)
			return NW_WRITER_LIVE;
		return maps_path(via, path) ? NW_WRITER_LIVE : NW_WRITER_GONE;
	}

	/* 1.0 and 1.1 files (or a writer that could not read its start time):
	 * the writer maps its live segment; else compare clocks. */
	if (maps_path(via, path))
		return NW_WRITER_LIVE;
	long hz = sysconf(_SC_CLK_TCK);
	if (hz <= 0 || !h->start_monotonic_ns)
		return NW_WRITER_UNKNOWN;
	uint64_t tick_ns = 1000000000u / (uint64_t)hz;
	uint64_t started = (uint64_t)(ticks / (unsigned long long)hz) * 1000000000u
	                   + (uint64_t)(ticks % (unsigned long long)hz) * tick_ns;
	/* The segment's creation time is CLOCK_MONOTONIC, a process's start
	 * CLOCK_BOOTTIME, which also counts time suspended. Subtracting all the
	 * time suspended so far gives the earliest monotonic time the process
	 * can have started at: later than the segment's creation (and two ticks
	 * of rounding) means another process. Not exact: a pause of the machine
	 * that moves BOOTTIME against MONOTONIC after the process started makes
	 * it look earlier (judged live: the safe side). */
	uint64_t mono = clock_ns(CLOCK_MONOTONIC), boot = clock_ns(CLOCK_BOOTTIME);
	uint64_t suspended = boot > mono ? boot - mono : 0;
	uint64_t earliest = started > suspended ? started - suspended : 0;
	return earliest > h->start_monotonic_ns + 2 * tick_ns ? NW_WRITER_GONE : NW_WRITER_LIVE;
}
