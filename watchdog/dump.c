/* dump: see dump.h. */
#include "dump.h"

#include "../interpose/log.h"
#include "../interpose/segment_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int pwrite_all(int fd, const char *p, size_t n, off_t off)
{
	while (n) {
		ssize_t w = pwrite(fd, p, n, off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		off += w;
		n -= (size_t)w;
	}
	return 0;
}

static int all_zero(const char *p, size_t n)
{
	return n == 0 || (p[0] == 0 && memcmp(p, p + 1, n - 1) == 0);
}

/* Pages of zeros become holes: most of a segment is unused capacity, and
 * a dump is only ever read with pread (a hole reads as zeros; nobody maps
 * it), so a hung rank's dump costs what it holds, not 1.2 MB of /dev/shm. */
static int write_sparse(int fd, const char *p, size_t n)
{
	const size_t page = 4096;
	for (size_t off = 0; off < n; off += page) {
		size_t len = n - off < page ? n - off : page;
		if (!all_zero(p + off, len) && pwrite_all(fd, p + off, len, (off_t)off) != 0)
			return -1;
	}
	return ftruncate(fd, (off_t)n);
}

int nw_dump_write(const char *dir, char *path, size_t path_len)
{
	const struct nw_seg_header *h = nw_seg.hdr;
	char rank[16] = "-";
	if (h->global_rank >= 0)
		snprintf(rank, sizeof(rank), "%d", h->global_rank);
	char host[NW_SEG_HOST_LEN];
	snprintf(host, sizeof(host), "%s", h->host);
	for (char *c = host; *c; c++)
		if (*c == '/')
			*c = '_';
	int n = snprintf(path, path_len, "%s/%s.%lld.rank%s.dump.seg", dir, host, (long long)h->pid, rank);
	char tmp[PATH_MAX + 16];
	int m = snprintf(tmp, sizeof(tmp), "%s/.%s.%lld.dump.tmp", dir, host, (long long)h->pid);
	if (n < 0 || (size_t)n >= path_len || m < 0 || (size_t)m >= sizeof(tmp)) {
		nw_log("dump path too long in %s", dir);
		return -1;
	}
	/* Copy first, write after: the file is as close to one moment as we can. */
	char *copy = malloc(nw_seg.size);
	if (!copy) {
		nw_log("no memory for a dump of %zu bytes", nw_seg.size);
		return -1;
	}
	memcpy(copy, nw_seg.base, nw_seg.size);
	struct nw_seg_header *ch = (struct nw_seg_header *)copy;
	atomic_fetch_or(&ch->flags, NW_SEG_F_DUMP);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	int err = fd < 0 ? errno : 0;
	if (!err && write_sparse(fd, copy, nw_seg.size) != 0)
		err = errno ? errno : EIO;
	if (fd >= 0 && close(fd) != 0 && !err)
		err = errno;
	free(copy);
	if (!err && rename(tmp, path) != 0)
		err = errno;
	if (err) {
		nw_log("cannot write dump %s: %s", path, strerror(err));
		unlink(tmp);
		return -1;
	}
	atomic_fetch_add(&nw_seg.hdr->dumps, 1);
	return 0;
}
