/* segment_file: see segment_file.h. */
#include "segment_file.h"

#include "env_fingerprint.h"
#include "job.h"
#include "log.h"
#include "libc_dl.h"
#include "reserve.h"
#include "stack_area.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct nw_segment nw_seg;

static uint64_t align_up(uint64_t v)
{
	return (v + NW_SEG_ALIGN - 1) & ~(uint64_t)(NW_SEG_ALIGN - 1);
}

/* A CPython is linked into this process (its API is among the global
 * symbols, looked up through libc's dlsym, not our hook): the stack area
 * gets Python tables only then, so that other programs pay nothing for
 * them. */
static int py_linked(void)
{
	nw_libc_dl_init();
	return nw_libc_dlsym && nw_libc_dlsym(RTLD_DEFAULT, "Py_IsInitialized") != NULL;
}

/* NCCLWATCH_PY_FRAMES as parsed (0 = per-op call sites off). */
static uint32_t pycall_depth_config(void)
{
	const char *e = getenv("NCCLWATCH_PY_FRAMES");
	if (!e || !*e)
		return NW_PY_FRAMES_DEFAULT;
	char *end;
	unsigned long v = strtoul(e, &end, 10);
	if (*end || v > NW_PY_FRAMES_MAX) {
		NW_LOG_ONCE("NCCLWATCH_PY_FRAMES=%s is not a number in 0..%d; using %d", e, NW_PY_FRAMES_MAX,
		            NW_PY_FRAMES_DEFAULT);
		return NW_PY_FRAMES_DEFAULT;
	}
	return (uint32_t)v;
}

/* A size from the environment, clamped to [lo, hi]. */
static uint32_t env_size(const char *name, uint32_t dflt, uint32_t lo, uint32_t hi)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return dflt;
	char *end;
	unsigned long long n = strtoull(v, &end, 10);
	if (*end != 0) {
		nw_log("%s=%s is not a number; using %u", name, v, dflt);
		return dflt;
	}
	return n < lo ? lo : n > hi ? hi : (uint32_t)n;
}

static uint32_t round_pow2(uint32_t v)
{
	uint32_t p = 1;
	while (p < v)
		p <<= 1;
	return p;
}

/* mkdir `dir` (0700) if missing; it must then be a real directory we own
 * that nobody else can write: in a directory another user can write (or
 * created first in world-writable /dev/shm), they could plant or swap the
 * files our readers trust. */
int nw_ensure_private_dir(const char *dir)
{
	struct stat st;
	int rc;
	for (int tries = 0;; tries++) {
		if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
			nw_log("cannot create %s: %s", dir, strerror(errno));
			return -1;
		}
		/* Gone again: the last process of a job removes its directory. */
		if ((rc = lstat(dir, &st)) == 0 || errno != ENOENT || tries == 8)
			break;
	}
	if (rc != 0 || !S_ISDIR(st.st_mode)) {
		nw_log("%s is not a directory", dir);
		return -1;
	}
	if (st.st_uid != getuid()) {
		nw_log("%s belongs to uid %u, not to us", dir, (unsigned)st.st_uid);
		return -1;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		nw_log("%s is writable by %s (mode %03o): not recording there", dir,
		       (st.st_mode & S_IWOTH) ? "other users" : "its group", (unsigned)(st.st_mode & 0777));
		return -1;
	}
	return 0;
}

/* mkdir -p for the base directory (NCCLWATCH_DIR may name a new path). */
int nw_ensure_dir_path(const char *dir)
{
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof(tmp), "%s", dir);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, 0700) != 0 && errno != EEXIST) {
			nw_log("cannot create %s: %s", tmp, strerror(errno));
			return -1;
		}
		*p = '/';
	}
	return nw_ensure_private_dir(tmp);
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void fill_header(struct nw_segment *s, const char *job, int32_t nccl_version,
                        const char *nccl_lib, uint32_t ring_cap, uint64_t stack_size,
                        uint32_t stack_threads, int opstacks)
{
	struct nw_seg_header *h = s->hdr;
	h->endian = NW_SEG_ENDIAN;
	h->version_major = NW_SEG_VERSION_MAJOR;
	h->version_minor = NW_SEG_VERSION_MINOR;
	h->header_size = sizeof(*h);
	h->segment_size = s->size;
	h->comm_offset = align_up(sizeof(*h));
	h->comm_capacity = s->comm_capacity;
	h->comm_record_size = sizeof(struct nw_seg_comm);
	h->peer_offset = align_up(h->comm_offset + (uint64_t)s->comm_capacity * sizeof(struct nw_seg_comm));
	h->peer_capacity = s->peer_capacity;
	h->peer_record_size = sizeof(struct nw_seg_peer);
	h->ring_offset = align_up(h->peer_offset + (uint64_t)s->peer_capacity * sizeof(struct nw_seg_peer));
	h->ring_capacity = ring_cap;
	h->op_record_size = sizeof(struct nw_seg_op);
	h->stack_offset = align_up(h->ring_offset + (uint64_t)ring_cap * sizeof(struct nw_seg_op));
	h->stack_size = stack_size;
	h->pid = getpid();
	h->ppid = getppid();
	h->start_realtime_ns = clock_ns(CLOCK_REALTIME);
	h->start_monotonic_ns = clock_ns(CLOCK_MONOTONIC);
	h->proc_start_ticks = nw_process_start_ticks(0);   /* readers tell a reused pid by it */
	nw_job_ranks(&h->global_rank, &h->local_rank, &h->world_size);
	h->uid = getuid();
	if (gethostname(h->host, sizeof(h->host) - 1) != 0)
		strcpy(h->host, "unknown");
	snprintf(h->job, sizeof(h->job), "%s", job);
	h->nccl_version = nccl_version;
	h->cuda_driver_version = 0;        /* the watchdog loads libcuda; we do not */
	snprintf(h->nccl_lib, sizeof(h->nccl_lib), "%s", nccl_lib ? nccl_lib : "");
	nw_env_fingerprint(h->env, sizeof(h->env));
	s->comms = (void *)((char *)s->base + h->comm_offset);
	s->peers = (void *)((char *)s->base + h->peer_offset);
	s->ring = (void *)((char *)s->base + h->ring_offset);
	s->ring_mask = ring_cap - 1;
	s->stacks = (void *)((char *)s->base + h->stack_offset);
	nw_stack_area_init(s->stacks, stack_threads, ring_cap, opstacks, s->python, s->pycall_depth);
	atomic_store_explicit(&h->flags, NW_SEG_F_RECORDING, memory_order_relaxed);
	/* The magic last, with release: a reader never takes a half-built
	 * header for a segment. */
	uint64_t magic;
	memcpy(&magic, NW_SEG_MAGIC, sizeof(magic));
	__atomic_store_n((uint64_t *)(void *)h->magic, magic, __ATOMIC_RELEASE);
}

/* Give the finished file (nw_open_unnamed) its name: <host>.<pid>.seg, or
 * <host>.<pid>.<n>.seg when a dead process's record of the same pid is
 * there (pid reuse: keep it). 0, or an errno value. */
static int publish_segment(struct nw_segment *s, int fd, const char *tmp, const char *jobdir, const char *host)
{
	for (int attempt = 0; attempt < 10; attempt++) {
		int n = attempt == 0
			? snprintf(s->path, sizeof(s->path), "%s/%s.%d.seg", jobdir, host, (int)getpid())
			: snprintf(s->path, sizeof(s->path), "%s/%s.%d.%d.seg", jobdir, host, (int)getpid(), attempt);
		if (n < 0 || n >= (int)sizeof(s->path))
			return ENAMETOOLONG;
		int err = nw_publish(fd, tmp, s->path);
		if (err != EEXIST)
			return err;
	}
	return EEXIST;
}

/* How a new segment is laid out: capacities from the environment. */
struct seg_layout {
	uint32_t ring_cap, stack_threads;
	int opstacks;
	uint64_t stack_size;
};

/* The capacities (NCCLWATCH_RING, _COMMS, _PEERS, _STACK_THREADS,
 * _STACKS, CPython linked) into s and *l, and s->size. */
static void size_segment(struct nw_segment *s, struct seg_layout *l)
{
	l->ring_cap = round_pow2(env_size("NCCLWATCH_RING", 4096, 16, NW_SEG_MAX_RING));
	s->comm_capacity = env_size("NCCLWATCH_COMMS", 64, 1, NW_SEG_MAX_COMMS);
	s->peer_capacity = env_size("NCCLWATCH_PEERS", 1024, 1, NW_SEG_MAX_PEERS);
	uint64_t size = align_up(sizeof(struct nw_seg_header));
	size = align_up(size + (uint64_t)s->comm_capacity * sizeof(struct nw_seg_comm));
	size = align_up(size + (uint64_t)s->peer_capacity * sizeof(struct nw_seg_peer));
	size = align_up(size + (uint64_t)l->ring_cap * sizeof(struct nw_seg_op));
	l->stack_threads = env_size("NCCLWATCH_STACK_THREADS", NW_STACK_THREADS_DEFAULT, 1, 4096);
	const char *opstacks_env = getenv("NCCLWATCH_STACKS");
	l->opstacks = opstacks_env && !strcmp(opstacks_env, "1");
	/* 1.4: Python tables only in a process running CPython. */
	s->python = py_linked();
	s->pycall_depth = s->python ? pycall_depth_config() : 0;
	l->stack_size = nw_stack_area_size(l->stack_threads, l->ring_cap, l->opstacks, s->python, s->pycall_depth);
	size += l->stack_size;
	s->size = size;
}

/* The job's directory under NCCLWATCH_DIR (else /dev/shm/ncclwatch-UID,
 * made if missing), and this host's name as file names carry it. 0, or
 * -1 (said). */
static int job_dir(const char *job, char jobdir[PATH_MAX], char host[NW_SEG_HOST_LEN])
{
	char base[PATH_MAX];
	const char *dir = getenv("NCCLWATCH_DIR");
	if (dir && *dir)
		snprintf(base, sizeof(base), "%s", dir);
	else
		snprintf(base, sizeof(base), "/dev/shm/ncclwatch-%u", (unsigned)getuid());
	if (nw_ensure_dir_path(base) != 0)
		return -1;
	int n = snprintf(jobdir, PATH_MAX, "%s/%s", base, job);
	if (n < 0 || n >= PATH_MAX) {
		nw_log("segment directory name too long: %s", base);
		return -1;
	}
	if (gethostname(host, NW_SEG_HOST_LEN - 1) != 0)
		strcpy(host, "unknown");
	host[NW_SEG_HOST_LEN - 1] = 0;
	nw_job_sanitize(host);
	return 0;
}

/* Made without a name and named once its header is complete: a reader
 * listing the directory never meets a segment being created. The file
 * (its temporary name in tmp), or -1 (said). */
static int open_unnamed_segment(const char *jobdir, char tmp[PATH_MAX])
{
	int fd = -1;
	for (int tries = 0; fd < 0 && tries < 8; tries++) {
		if (nw_ensure_private_dir(jobdir) != 0)
			return -1;
		fd = nw_open_unnamed(jobdir, "segment", tmp, PATH_MAX);
		if (fd < 0 && errno != ENOENT)
			break;                     /* ENOENT: the job's last process just removed the directory */
	}
	if (fd < 0) {
		nw_log("cannot create a segment in %s: %s", jobdir, strerror(errno));
		return -1;
	}
	return fd;
}

int nw_segment_create(struct nw_segment *s, const char *job, int32_t nccl_version,
                      const char *nccl_lib)
{
	memset(s, 0, sizeof(*s));
	struct seg_layout l;
	size_segment(s, &l);
	uint64_t size = s->size;

	char jobdir[PATH_MAX], host[NW_SEG_HOST_LEN], tmp[PATH_MAX];
	if (job_dir(job, jobdir, host) != 0)
		return -1;
	int fd = open_unnamed_segment(jobdir, tmp);
	if (fd < 0)
		return -1;
	if (snprintf(s->path, sizeof(s->path), "%s/%s.%d.seg", jobdir, host, (int)getpid()) >= (int)sizeof(s->path))
		s->path[0] = 0;   /* for messages until it is named; publish_segment says if it is too long */
	/* Every page backed before the first store: on a full /dev/shm a store
	 * into a page it cannot supply is a SIGBUS in the application. */
	int err = nw_reserve(fd, size, 1);
	void *base_addr = MAP_FAILED;
	if (!err) {
		base_addr = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (base_addr == MAP_FAILED)
			err = errno;
	}
	if (err) {
		nw_log("cannot reserve or map %s (%zu bytes): %s; not recording", s->path, (size_t)size,
		       strerror(err));
		nw_unnamed_done(fd, tmp);
		return -1;
	}
	s->base = base_addr;
	s->hdr = base_addr;
	s->owner = getpid();
	fill_header(s, job, nccl_version, nccl_lib, l.ring_cap, l.stack_size, l.stack_threads, l.opstacks);
	/* The job's last process may have removed the directory meanwhile:
	 * make it again and link there. */
	for (int tries = 0; tries < 8; tries++) {
		err = publish_segment(s, fd, tmp, jobdir, host);
		if (err != ENOENT || nw_ensure_private_dir(jobdir) != 0)
			break;
	}
	nw_unnamed_done(fd, tmp);
	if (err) {
		nw_log("cannot create %s: %s; not recording", s->path, strerror(err));
		munmap(base_addr, size);
		memset(s, 0, sizeof(*s));
		return -1;
	}
	snprintf(s->jobdir, sizeof(s->jobdir), "%s", jobdir);
	return 0;
}

void nw_segment_forget(struct nw_segment *s)
{
	if (s->base)
		munmap(s->base, s->size);
	memset(s, 0, sizeof(*s));
}

void nw_segment_note_exit_status(struct nw_segment *s, int status)
{
	if (!s->hdr || s->owner != getpid())
		return;
	s->hdr->exit_status = status;
	atomic_fetch_or(&s->hdr->flags, NW_SEG_F_EXIT_STATUS);
}

/* A communicator this process made and never destroyed, finalized or
 * aborted (a failed init made none; a revoked one still needs destroying). */
static int comm_alive(uint32_t state)
{
	switch (state) {
	case NW_COMM_INIT_ENTERED:
	case NW_COMM_INIT_DONE:
	case NW_COMM_INIT_ASYNC:
	case NW_COMM_REVOKED:
		return 1;
	default:
		return 0;
	}
}

const char *nw_segment_kept_why(const struct nw_segment *s)
{
	if (!s->hdr)
		return NULL;
	const char *keep = getenv("NCCLWATCH_KEEP");
	if (keep && !strcmp(keep, "1"))
		return "NCCLWATCH_KEEP=1";
	uint32_t flags = atomic_load(&s->hdr->flags);
	if (flags & NW_SEG_F_STALL_SEEN)
		return "a stall was seen";
	/* A process that failed may be why its peers hang. */
	if ((flags & NW_SEG_F_EXIT_STATUS) && s->hdr->exit_status != 0)
		return "exit status not 0";
	/* One that left early with its communicators alive is why they wait
	 * for it: the comm table says where it stopped. */
	uint32_t n = atomic_load(&s->hdr->comm_count);
	for (uint32_t i = 0; i < n && i < s->comm_capacity; i++)
		if (comm_alive(atomic_load(&s->comms[i].state)))
			return "communicators not destroyed";
	return NULL;
}

int nw_segment_exit(struct nw_segment *s)
{
	if (!s->hdr || s->owner != getpid())
		return 0;
	atomic_fetch_or(&s->hdr->flags, NW_SEG_F_EXITED);
	if (nw_segment_kept_why(s))
		return 0;
	/* Nothing wrong here; whether others of the job still run (they may
	 * wait for us) the control file's lock tells: nw_requests_leave
	 * removes the file, with every other one that left early, when we are
	 * the last. Flagged before, so that a process leaving at the same
	 * moment and found last removes ours too. The file stays mapped:
	 * threads that outlive the exit handlers may record. */
	atomic_fetch_or(&s->hdr->flags, NW_SEG_F_LEFT_EARLY);
	return 1;
}
