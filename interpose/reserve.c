/* reserve: see reserve.h. */
#include "reserve.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NW_RESERVE_CHUNK (256u << 10)   /* small enough to finish between two signals */
#define NW_RESERVE_EINTR_TRIES 1000

/* The glibc posix_fallocate is not used: where the filesystem has no
 * fallocate it writes a zero byte into every block that reads as zero,
 * racing with whoever else has the file open, and it gives up on EINTR. */
static int allocate(int fd, uint64_t size)
{
	for (uint64_t off = 0; off < size;) {
		uint64_t len = size - off < NW_RESERVE_CHUNK ? size - off : NW_RESERVE_CHUNK;
		int tries = 0;
		while (fallocate(fd, 0, (off_t)off, (off_t)len) != 0) {
			if (errno != EINTR)
				return errno;
			if (++tries == NW_RESERVE_EINTR_TRIES)
				return EINTR;
		}
		off += len;
	}
	return 0;
}

static int write_zeros(int fd, uint64_t size)
{
	static const char zeros[4096];
	for (uint64_t off = 0; off < size;) {
		size_t len = size - off < sizeof(zeros) ? (size_t)(size - off) : sizeof(zeros);
		ssize_t w = pwrite(fd, zeros, len, (off_t)off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return errno;
		if (w == 0)
			return EIO;
		off += (uint64_t)w;
	}
	/* A network filesystem reports a full disk when the data reaches it. */
	if (fdatasync(fd) != 0 && errno != EINVAL && errno != EROFS)
		return errno;
	return 0;
}

int nw_reserve(int fd, uint64_t size, int fresh)
{
	int err = allocate(fd, size);
	if (err != EOPNOTSUPP && err != ENOSYS)
		return err;
	if (fresh && (err = write_zeros(fd, size)) != 0)
		return err;
	/* Written whole (by us now, or by whoever created it): the blocks must
	 * be there. A filesystem that stores zeros as holes fails this. */
	struct stat st;
	if (fstat(fd, &st) != 0)
		return errno;
	if ((uint64_t)st.st_size < size || (uint64_t)st.st_blocks * 512 < (size & ~(uint64_t)4095))
		return EOPNOTSUPP;
	return 0;
}

int nw_open_unnamed(const char *dir, const char *what, char *tmp, size_t tmplen)
{
	tmp[0] = 0;
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
		return fd;
	/* No O_TMPFILE on this filesystem: a private temporary name. */
	if (snprintf(tmp, tmplen, "%s/.%s.%d.tmp", dir, what, (int)getpid()) >= (int)tmplen) {
		tmp[0] = 0;
		errno = ENAMETOOLONG;
		return -1;
	}
	unlink(tmp);
	fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		tmp[0] = 0;
	return fd;
}

int nw_publish(int fd, const char *tmp, const char *path)
{
	if (tmp[0])
		return link(tmp, path) == 0 ? 0 : errno;
	char proc[64];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	return linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0 ? 0 : errno;
}

void nw_unnamed_done(int fd, const char *tmp)
{
	if (fd >= 0)
		close(fd);
	if (tmp[0])
		unlink(tmp);
}
