/* fallocate_shim: preloaded before libncclwatch.so by the full-tmpfs test
 * to play a filesystem without fallocate (NWTEST_FALLOCATE=eopnotsupp) or
 * a profiler's timer interrupting it (NWTEST_FALLOCATE=eintr:N: the first
 * N calls fail with EINTR). Built by the test with cc -shared. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

static int failing(void)
{
	static int eintr_left = -1;
	const char *v = getenv("NWTEST_FALLOCATE");
	if (!v)
		return 0;
	if (!strcmp(v, "eopnotsupp")) {
		errno = EOPNOTSUPP;
		return 1;
	}
	if (!strncmp(v, "eintr:", 6)) {
		if (eintr_left < 0)
			eintr_left = atoi(v + 6);
		if (eintr_left > 0) {
			eintr_left--;
			errno = EINTR;
			return 1;
		}
	}
	return 0;
}

int fallocate(int fd, int mode, off_t off, off_t len)
{
	if (failing())
		return -1;
	int (*real)(int, int, off_t, off_t) = (int (*)(int, int, off_t, off_t))dlsym(RTLD_NEXT, "fallocate");
	return real(fd, mode, off, len);
}

int fallocate64(int fd, int mode, off_t off, off_t len)
{
	return fallocate(fd, mode, off, len);
}
