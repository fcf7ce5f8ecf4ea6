/* The segment reader: validation of a segment file against the format of
 * include/ncclwatch/segment.h and a pread-based snapshot of its tables and
 * op ring (see segment_reader.h and docs/FORMAT.md, "Reading safely"). */
#include "segment_reader.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Records of a newer minor may grow; beyond this they are not believed. */
#define NW_MAX_RECORD_SIZE (64u * 1024u)

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

/* Everything in the header that does not need the rest of the file. */
static int validate_header(const struct nw_seg_header *h, uint64_t file_size, const char *path,
                           struct nw_read_error *err)
{
	int newer_minor = h->version_minor > NW_SEG_VERSION_MINOR;
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

	if (h->comm_capacity > NW_SEG_MAX_COMMS)
		return fail(err, NW_READ_ERR_FORMAT, path, "comm_capacity %u is over the bound %u",
		            h->comm_capacity, NW_SEG_MAX_COMMS);
	if (h->peer_capacity > NW_SEG_MAX_PEERS)
		return fail(err, NW_READ_ERR_FORMAT, path, "peer_capacity %u is over the bound %u",
		            h->peer_capacity, NW_SEG_MAX_PEERS);
	if (h->ring_capacity > NW_SEG_MAX_RING)
		return fail(err, NW_READ_ERR_FORMAT, path, "ring_capacity %u is over the bound %u",
		            h->ring_capacity, NW_SEG_MAX_RING);
	if (h->ring_capacity == 0 || (h->ring_capacity & (h->ring_capacity - 1)))
		return fail(err, NW_READ_ERR_FORMAT, path, "ring_capacity %u is not a power of two",
		            h->ring_capacity);
	if (h->stack_size > NW_SEG_MAX_STACK)
		return fail(err, NW_READ_ERR_FORMAT, path, "stack_size %llu is over the bound %llu",
		            (unsigned long long)h->stack_size, (unsigned long long)NW_SEG_MAX_STACK);
	if (h->stack_offset == 0 && h->stack_size != 0)
		return fail(err, NW_READ_ERR_FORMAT, path, "stack_size %llu without a stack area",
		            (unsigned long long)h->stack_size);

	/* Capacities are bounded above, so these products cannot overflow. */
	struct area areas[4] = {
		{ "comm table", h->comm_offset, (uint64_t)h->comm_capacity * h->comm_record_size },
		{ "peer table", h->peer_offset, (uint64_t)h->peer_capacity * h->peer_record_size },
		{ "op ring", h->ring_offset, (uint64_t)h->ring_capacity * h->op_record_size },
		{ "stack area", h->stack_offset, h->stack_size },
	};
	size_t n_areas = h->stack_offset ? 4 : 3;
	for (size_t i = 0; i < n_areas; i++)
		if ((rc = check_area(&areas[i], h->header_size, h->segment_size, path, err)))
			return rc;
	for (size_t i = 0; i < n_areas; i++)
		for (size_t j = i + 1; j < n_areas; j++) {
			const struct area *a = &areas[i], *b = &areas[j];
			if (a->bytes && b->bytes && a->offset < b->offset + b->bytes &&
			    b->offset < a->offset + a->bytes)
				return fail(err, NW_READ_ERR_FORMAT, path, "%s overlaps %s", a->name, b->name);
		}

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
		            "format %u.%u is newer than this ncclwatch (reads %d.x)", h->version_major,
		            h->version_minor, NW_SEG_VERSION_MAJOR);
	if (h->version_major < NW_SEG_VERSION_MAJOR)
		return fail(err, NW_READ_ERR_VERSION, path, "format %u.%u is not supported (reads %d.x)",
		            h->version_major, h->version_minor, NW_SEG_VERSION_MAJOR);
	if (have < sizeof *h)
		return fail(err, NW_READ_ERR_FORMAT, path,
		            "truncated header (%zu bytes; a segment header is %zu bytes)", have, sizeof *h);
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

/* The op ring, by the publication protocol of segment.h: copy the slots of
 * the newest tickets, then read their commit words again; keep a record
 * only if both commit reads name the ticket expected for its slot. */
static int read_ring(int fd, struct nw_segment *seg, struct nw_read_error *err)
{
	const struct nw_seg_header *h = &seg->header;
	const uint64_t cap = h->ring_capacity, stride = h->op_record_size;
	const uint64_t head = h->ring_head;
	const uint64_t oldest = head > cap ? head - cap : 0;
	const uint64_t slots = head - oldest;   /* <= cap; slot of ticket t is t % cap */
	struct nw_ring_stats *st = &seg->ring;
	int rc;

	st->head = head;
	st->overwritten = oldest;
	if (slots == 0)
		return NW_READ_OK;
	/* Tickets oldest..head-1 occupy all slots once wrapped, else slots 0..head-1. */
	const uint64_t span = slots == cap ? cap : head;
	char *first = malloc(span * stride);
	char *again = malloc(span * stride);
	seg->ops = malloc(slots * sizeof *seg->ops);
	if (!first || !again || !seg->ops) {
		rc = fail_errno(err, seg->path, "", ENOMEM);
		goto out;
	}
	if ((rc = read_at(fd, first, span * stride, h->ring_offset, seg->path, err)) ||
	    (rc = read_at(fd, again, span * stride, h->ring_offset, seg->path, err)))
		goto out;

	for (uint64_t t = oldest; t < head; t++) {
		const uint64_t slot = t % cap;
		const char *rec = first + slot * stride;
		uint64_t c1, c2;
		memcpy(&c1, rec, sizeof c1);
		memcpy(&c2, again + slot * stride, sizeof c2);
		if (c1 == t + 1 && c2 == t + 1) {
			memcpy(&seg->ops[seg->op_count++], rec, sizeof *seg->ops);
			st->valid++;
		} else if (c1 == t + 1) {
			st->torn++;            /* rewritten while we copied it */
		} else if (c1 == 0 || ((c1 - 1) < t && (c1 - 1) % cap == slot)) {
			st->unpublished++;     /* being written, or its writer died: an older or no commit */
		} else if ((c1 - 1) > t && (c1 - 1) % cap == slot) {
			st->overwritten++;     /* a newer ticket took the slot after we read the head */
		} else {
			st->torn++;            /* names no ticket of this slot */
		}
	}
	rc = NW_READ_OK;
out:
	free(first);
	free(again);
	return rc;
}

int nw_segment_read_fd(int fd, const char *name, unsigned flags, struct nw_segment *seg,
                       struct nw_read_error *err)
{
	int rc;
	memset(seg, 0, sizeof *seg);
	if (err)
		memset(err, 0, sizeof *err);

	struct stat sb;
	if (fstat(fd, &sb) != 0)
		return fail_errno(err, name, "stat", errno);
	if (S_ISDIR(sb.st_mode))
		return fail(err, NW_READ_ERR_IO, name, "is a directory with no segment given");
	if (!S_ISREG(sb.st_mode))
		return fail(err, NW_READ_ERR_IO, name, "not a regular file");
	if (sb.st_size == 0)
		return fail(err, NW_READ_ERR_FORMAT, name, "empty file (not a segment)");

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
	    (rc = validate_header(h, (uint64_t)sb.st_size, name, err)))
		goto fail;

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
	if ((rc = read_table(fd, h->comm_offset, seg->comm_count, h->comm_record_size,
	                     sizeof *seg->comms, seg->comms, name, err)) ||
	    (rc = validate_comms(seg, err)) ||
	    (rc = read_table(fd, h->peer_offset, seg->peer_count, h->peer_record_size,
	                     sizeof *seg->peers, seg->peers, name, err)))
		goto fail;
	if (!(flags & NW_READ_SKIP_RING) && (rc = read_ring(fd, seg, err)))
		goto fail;
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
	memset(seg, 0, sizeof *seg);
}

const struct nw_seg_comm *nw_segment_comm_at(const struct nw_segment *seg, uint32_t slot)
{
	return slot < seg->comm_count ? &seg->comms[slot] : NULL;
}

/* ---- listing segment files ---- */

static int list_add(struct nw_path_list *list, const char *path)
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

/* Regular *.seg files in dir, then its subdirectories while depth > 0.
 * Unreadable subdirectories are skipped: they may belong to someone else. */
static int scan_dir(const char *dir, int depth, struct nw_path_list *list)
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
		struct stat sb;
		if (lstat(child, &sb) == 0) {
			if (S_ISREG(sb.st_mode) && has_seg_suffix(e->d_name))
				rc = list_add(list, child);
			else if (S_ISDIR(sb.st_mode) && depth > 0)
				rc = scan_dir(child, depth - 1, list);
		}
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
		return list_add(list, path) ? fail_errno(err, path, "", ENOMEM) : NW_READ_OK;

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
	int rc = scan_dir(dir, 2, list);
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
