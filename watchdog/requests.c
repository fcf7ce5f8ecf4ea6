/* requests: see requests.h. */
#include "requests.h"

#include "../interpose/log.h"
#include "../interpose/reserve.h"
#include "../interpose/segment_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NW_REMOTE_CHECK_NS 1000000000ull

static struct nw_control *control;
static int control_fd = -1;             /* holds a shared lock on the control file */
static uint64_t served;                 /* last local request id seen */
static char shared_request[PATH_MAX];   /* <dump dir>/request, or "" */
static struct timespec shared_seen;     /* mtime of the last remote request seen */
static uint64_t shared_checked_ns;
static struct nw_request remote_wait;   /* a remote request read, not answered yet */
static int remote_waiting;

static uint64_t realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int pwrite_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	for (off_t off = 0; n;) {
		ssize_t w = pwrite(fd, p, n, off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? errno : EIO;
		p += w;
		off += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Give the file `fd` the name `path` (no replacing): 0, EEXIST or errno. */
/* A new control file, published whole: reserved and written while it has
 * no name (O_TMPFILE, else a private temporary name), then linked to
 * `path`, so that no process ever maps a control file with a page missing
 * and none is left half made by a process killed meanwhile. 0, EEXIST
 * (another process's came first: use that one), or an errno value. */
static int control_create(const char *jobdir, const char *path)
{
	static union {
		struct nw_control c;
		char bytes[NW_CONTROL_SIZE];
	} init;
	memcpy(init.c.magic, NW_CONTROL_MAGIC, sizeof(init.c.magic));
	char tmp[PATH_MAX];
	int fd = nw_open_unnamed(jobdir, "control", tmp, sizeof(tmp));
	if (fd < 0)
		return errno;
	int err = nw_reserve(fd, NW_CONTROL_SIZE, 1);
	if (!err)
		err = pwrite_all(fd, init.bytes, sizeof(init.bytes));
	if (!err)
		err = nw_publish(fd, tmp, path);
	nw_unnamed_done(fd, tmp);
	return err;
}

/* Open the job's control file, creating it if missing, and take a shared
 * lock on it: the fd, or -1 with errno. The job's last process removes the
 * file under an exclusive lock (nw_requests_leave); a file we got after it
 * was removed has no link left, and we start over. */
static int control_open(const char *jobdir, const char *path)
{
	for (int tries = 0; tries < 1000; tries++) {
		int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			if (errno != ENOENT)
				return -1;
			int err = control_create(jobdir, path);
			if (err && err != EEXIST) {
				errno = err;
				return -1;
			}
			continue;
		}
		if (flock(fd, LOCK_SH | LOCK_NB) != 0) {
			if (errno != EWOULDBLOCK && errno != EINTR)
				return fd;             /* no locks on this filesystem: nobody removes the file */
			close(fd);
			/* Being removed by the job's last process: a moment, then again. */
			struct timespec ms = { 0, 1000000 };
			nanosleep(&ms, NULL);
			continue;
		}
		struct stat st;
		if (fstat(fd, &st) == 0 && st.st_nlink == 0) {
			close(fd);
			continue;
		}
		return fd;
	}
	errno = EAGAIN;
	return -1;
}

int nw_requests_open(const char *jobdir, const char *shared_dir)
{
	char path[PATH_MAX];
	if (snprintf(path, sizeof(path), "%s/control", jobdir) >= (int)sizeof(path))
		return -1;
	const char *off = "dump requests of the job's other processes will not reach this process";
	int fd = control_open(jobdir, path);
	if (fd < 0) {
		nw_log("cannot open %s: %s; %s", path, strerror(errno), off);
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size != NW_CONTROL_SIZE) {
		nw_log("%s is not a control file (not a file of %d bytes); %s", path, NW_CONTROL_SIZE, off);
		close(fd);
		return -1;
	}
	/* Ours are born whole; one an older ncclwatch made was sparse. */
	int err = nw_reserve(fd, NW_CONTROL_SIZE, 0);
	if (err) {
		nw_log("cannot reserve %s (%d bytes): %s; %s", path, NW_CONTROL_SIZE, strerror(err), off);
		close(fd);
		return -1;
	}
	void *m = mmap(NULL, NW_CONTROL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		nw_log("cannot map %s: %s; %s", path, strerror(errno), off);
		close(fd);
		return -1;
	}
	if (memcmp(((struct nw_control *)m)->magic, NW_CONTROL_MAGIC, sizeof(NW_CONTROL_MAGIC)) != 0) {
		nw_log("%s is not a control file (bad magic); %s", path, off);
		munmap(m, NW_CONTROL_SIZE);
		close(fd);
		return -1;
	}
	control = m;
	control_fd = fd;                   /* the lock lives as long as the fd */
	served = atomic_load(&control->request);   /* requests older than us are not ours to serve */
	if (shared_dir) {
		snprintf(shared_request, sizeof(shared_request), "%s/request", shared_dir);
		if (stat(shared_request, &st) == 0)
			shared_seen = st.st_mtim;
	}
	return 0;
}

/* What a file of the job directory says of the job's end: 1 a segment
 * that left early, 2 a segment of a process that did not end well (killed,
 * crashed, an exit status not 0), 0 anything else (an ended one, a dump, a
 * report, the control file). */
static int seg_end(int dirfd, const char *name)
{
	size_t n = strlen(name);
	if (n < 5 || strcmp(name + n - 4, ".seg") != 0 || name[0] == '.')
		return 0;
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	struct nw_seg_header h;
	ssize_t got = pread(fd, &h, sizeof h, 0);
	close(fd);
	if (got != (ssize_t)sizeof h || memcmp(h.magic, NW_SEG_MAGIC, sizeof h.magic) != 0)
		return 0;
	uint32_t flags = h.flags;
	if (flags & NW_SEG_F_DUMP)
		return 0;
	if ((flags & (NW_SEG_F_EXITED | NW_SEG_F_LEFT_EARLY)) == (NW_SEG_F_EXITED | NW_SEG_F_LEFT_EARLY))
		return 1;
	if (!(flags & NW_SEG_F_EXITED) || ((flags & NW_SEG_F_EXIT_STATUS) && h.exit_status != 0))
		return 2;
	return 0;
}

/* The last one out: the segments that left early go, unless a process of
 * the job did not end well (then whoever left early may be why). */
static void remove_left_early(const char *jobdir)
{
	DIR *d = opendir(jobdir);
	if (!d)
		return;
	int bad_end = 0;
	struct dirent *e;
	while ((e = readdir(d)) && !bad_end)
		bad_end = seg_end(dirfd(d), e->d_name) == 2;
	if (!bad_end) {
		rewinddir(d);
		while ((e = readdir(d)))
			if (seg_end(dirfd(d), e->d_name) == 1)
				unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
}

void nw_requests_leave(const char *jobdir, int kept)
{
	char path[PATH_MAX];
	if (snprintf(path, sizeof(path), "%s/control", jobdir) >= (int)sizeof(path))
		return;
	int fd = control_fd;
	control_fd = -1;
	if (fd >= 0)
		flock(fd, LOCK_UN);
	else
		fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	/* Exclusive only when no other process holds it: we are the last. Two
	 * leaving at once: the one that tries second gets it. No control file
	 * at all: nobody can hold it either. */
	struct stat st, at;
	if (fd < 0 && errno == ENOENT) {
		remove_left_early(jobdir);
	} else if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0 && fstat(fd, &st) == 0 && st.st_nlink > 0
	    && lstat(path, &at) == 0 && at.st_dev == st.st_dev && at.st_ino == st.st_ino) {
		remove_left_early(jobdir);
		if (!kept)   /* a kept segment keeps the directory and its control file */
			unlink(path);
	}
	if (fd >= 0)
		close(fd);
	if (kept)
		return;
	/* Fails unless empty: another process's segment, a dump, a report
	 * keep it, and a process starting meanwhile makes it again. */
	rmdir(jobdir);
}

uint64_t nw_requests_raise(void)
{
	const struct nw_seg_header *h = nw_seg.hdr;
	uint64_t id = 0;
	if (control) {
		control->pid = h->pid;
		control->rank = h->global_rank;
		control->realtime_ns = realtime_ns();
		snprintf(control->host, sizeof(control->host), "%s", h->host);
		/* Requests raised before ours are answered by the dump we make now. */
		id = served = atomic_fetch_add(&control->request, 1) + 1;
	}
	remote_waiting = 0;
	if (!shared_request[0])
		return id;
	char tmp[PATH_MAX + 128];
	int n = snprintf(tmp, sizeof(tmp), "%s.%.64s.%lld.tmp", shared_request, h->host, (long long)h->pid);
	if (n < 0 || n >= (int)sizeof(tmp))
		return id;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return id;
	}
	fprintf(f, "%llu %s %lld %d\n", (unsigned long long)realtime_ns(), h->host, (long long)h->pid,
	        h->global_rank);
	int ok = fclose(f) == 0;
	struct stat st;
	if (ok && rename(tmp, shared_request) == 0 && stat(shared_request, &st) == 0)
		shared_seen = st.st_mtim;       /* our own request */
	else
		unlink(tmp);
	return id;
}

static int remote_pending(uint64_t now, struct nw_request *r)
{
	if (!shared_request[0] || now - shared_checked_ns < NW_REMOTE_CHECK_NS)
		return 0;
	shared_checked_ns = now;
	struct stat st;
	if (stat(shared_request, &st) != 0)
		return 0;
	if (st.st_mtim.tv_sec == shared_seen.tv_sec && st.st_mtim.tv_nsec == shared_seen.tv_nsec)
		return 0;
	shared_seen = st.st_mtim;
	FILE *f = fopen(shared_request, "re");
	if (!f)
		return 0;
	unsigned long long when = 0;
	long long pid = 0;
	int rank = -1;
	char host[64] = "";
	int n = fscanf(f, "%llu %63s %lld %d", &when, host, &pid, &rank);
	fclose(f);
	if (n != 4 || when < nw_seg.hdr->start_realtime_ns)
		return 0;                        /* malformed, or from before we started */
	if (pid == nw_seg.hdr->pid && !strcmp(host, nw_seg.hdr->host))
		return 0;
	r->id = 0;
	r->realtime_ns = when;
	r->pid = pid;
	r->rank = rank;
	snprintf(r->host, sizeof(r->host), "%s", host);
	return 1;
}

int nw_requests_pending(uint64_t now, struct nw_request *r)
{
	if (control) {
		uint64_t id = atomic_load_explicit(&control->request, memory_order_acquire);
		if (id != served) {
			/* Read after the counter: the time of this raise or a later one. */
			r->id = id;
			r->realtime_ns = control->realtime_ns;
			r->pid = control->pid;
			r->rank = control->rank;
			snprintf(r->host, sizeof(r->host), "%.63s", control->host);
			return 1;
		}
	}
	if (!remote_waiting)
		remote_waiting = remote_pending(now, &remote_wait);
	if (remote_waiting)
		*r = remote_wait;
	return remote_waiting;
}

void nw_requests_done(const struct nw_request *r)
{
	if (r->id)
		served = r->id;               /* a newer one raised meanwhile stays pending */
	else
		remote_waiting = 0;
}

void nw_requests_reset(void)
{
	control = NULL;                        /* stays mapped: harmless */
	if (control_fd >= 0)
		close(control_fd);             /* the parent's lock stays the parent's */
	control_fd = -1;
	served = 0;
	remote_waiting = 0;
	shared_request[0] = 0;
	shared_checked_ns = 0;
}
