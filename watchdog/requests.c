/* requests: see requests.h. */
#include "requests.h"

#include "../interpose/log.h"
#include "../interpose/segment_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NW_REMOTE_CHECK_NS 1000000000ull

static struct nw_control *control;
static uint64_t served;                 /* last local request id seen */
static char shared_request[PATH_MAX];   /* <dump dir>/request, or "" */
static struct timespec shared_seen;     /* mtime of the last remote request seen */
static uint64_t shared_checked_ns;

static uint64_t realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int nw_requests_open(const char *jobdir, const char *shared_dir)
{
	char path[PATH_MAX];
	if (snprintf(path, sizeof(path), "%s/control", jobdir) >= (int)sizeof(path))
		return -1;
	int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		nw_log("cannot open %s: %s (peers' dump requests will not reach this process)", path, strerror(errno));
		return -1;
	}
	struct stat st;
	/* Processes of the job race to create it: growing to the size is idempotent. */
	if (fstat(fd, &st) != 0 || (!S_ISREG(st.st_mode))
	    || (st.st_size < NW_CONTROL_SIZE && ftruncate(fd, NW_CONTROL_SIZE) != 0)) {
		nw_log("cannot use %s as the control file", path);
		close(fd);
		return -1;
	}
	void *m = mmap(NULL, NW_CONTROL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		nw_log("cannot map %s: %s", path, strerror(errno));
		return -1;
	}
	control = m;
	memcpy(control->magic, NW_CONTROL_MAGIC, sizeof(control->magic));
	served = atomic_load(&control->request);   /* requests older than us are not ours to serve */
	if (shared_dir) {
		snprintf(shared_request, sizeof(shared_request), "%s/request", shared_dir);
		if (stat(shared_request, &st) == 0)
			shared_seen = st.st_mtim;
	}
	return 0;
}

void nw_requests_raise(void)
{
	const struct nw_seg_header *h = nw_seg.hdr;
	if (control) {
		control->pid = h->pid;
		control->rank = h->global_rank;
		control->realtime_ns = realtime_ns();
		snprintf(control->host, sizeof(control->host), "%s", h->host);
		served = atomic_fetch_add(&control->request, 1) + 1;
	}
	if (!shared_request[0])
		return;
	char tmp[PATH_MAX + 128];
	int n = snprintf(tmp, sizeof(tmp), "%s.%.64s.%lld.tmp", shared_request, h->host, (long long)h->pid);
	if (n < 0 || n >= (int)sizeof(tmp))
		return;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return;
	}
	fprintf(f, "%llu %s %lld %d\n", (unsigned long long)realtime_ns(), h->host, (long long)h->pid,
	        h->global_rank);
	int ok = fclose(f) == 0;
	struct stat st;
	if (ok && rename(tmp, shared_request) == 0 && stat(shared_request, &st) == 0)
		shared_seen = st.st_mtim;       /* our own request */
	else
		unlink(tmp);
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
			served = id;
			r->id = id;
			r->pid = control->pid;
			r->rank = control->rank;
			snprintf(r->host, sizeof(r->host), "%.63s", control->host);
			return 1;
		}
	}
	return remote_pending(now, r);
}

void nw_requests_reset(void)
{
	control = NULL;                        /* stays mapped: harmless */
	served = 0;
	shared_request[0] = 0;
	shared_checked_ns = 0;
}
