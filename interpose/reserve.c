/* reserve: see reserve.h. */
#include "reserve.h"

#include "job.h"

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

/* The path that names open file `fd` through /proc, if the kernel answers
 * for it now: 0, or -1. /proc/thread-self first: /proc/self/fd is the
 * main thread's, and it is gone once the main thread has exited while
 * others go on (pthread_exit in main, a Python fork child ending from a
 * thread). /proc/self/fd only where the kernel has no thread-self (< 3.17). */
static int fd_path(int fd, char *path, size_t len)
{
	static const char *const fmt[] = { "/proc/thread-self/fd/%d", "/proc/self/fd/%d" };
	char target[16];
	for (size_t i = 0; i < sizeof(fmt) / sizeof(fmt[0]); i++) {
		snprintf(path, len, fmt[i], fd);
		if (readlink(path, target, sizeof(target)) >= 0)
			return 0;
	}
	return -1;
}

int nw_open_unnamed(const char *dir, const char *what, char *tmp, size_t tmplen)
{
	tmp[0] = 0;
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0) {
		char path[64];
		if (fd_path(fd, path, sizeof(path)) == 0)
			return fd;
		close(fd);                 /* no /proc to link it by later: a temporary name */
	} else if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) {
		return -1;
	}
	/* No O_TMPFILE on this filesystem, or no /proc: a private temporary
	 * name, with the host (a directory shared by several hosts) and pid,
	 * created exclusively; a dead process's of that name is removed first. */
	char host[64];
	if (gethostname(host, sizeof(host) - 1) != 0)
		strcpy(host, "unknown");
	host[sizeof(host) - 1] = 0;
	nw_job_sanitize(host);
	if (snprintf(tmp, tmplen, "%s/.%s.%s.%d.tmp", dir, what, host, (int)getpid()) >= (int)tmplen) {
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
	if (fd_path(fd, proc, sizeof(proc)) != 0)
		return ENOENT;             /* /proc went away since nw_open_unnamed */
	return linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0 ? 0 : errno;
}

void nw_unnamed_done(int fd, const char *tmp)
{
	if (fd >= 0)
		close(fd);
	if (tmp[0])
		unlink(tmp);
}
