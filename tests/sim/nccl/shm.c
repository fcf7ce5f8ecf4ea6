/* Shared memory of the simulated NCCL: one file per communicator under
 * NCCLSIM_DIR (named from the communicator's 64-bit key), and one global
 * doorbell futex every waiter sleeps on.
 *
 * Robustness against SIGKILL: files are created, joined, replaced and
 * removed under flock(NCCLSIM_DIR/lock), which the kernel drops when a
 * process dies; all other shared state is per-rank words written only by
 * their rank with atomics, and waiting is a futex wait on the doorbell, which
 * a dead process cannot leave in a bad state. So a killed rank only makes
 * the waits that need it never complete (like NCCL), nothing else.
 */
#include "sim_nccl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* ---- the doorbell ---- */
struct sim_bell { uint32_t word; uint32_t waiters; };
static struct sim_bell *bell;
static struct sim_bell bell_fallback; /* if the file cannot be made: this process only */
static pthread_once_t bell_once = PTHREAD_ONCE_INIT;

static int ensure_dir(void)
{
	sim_env_load();
	if (mkdir(sim_env.dir, 0700) && errno != EEXIST) return -1;
	return 0;
}

static void bell_open(void)
{
	char path[4200];
	bell = &bell_fallback;
	if (ensure_dir()) return;
	snprintf(path, sizeof path, "%s/bell", sim_env.dir);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) return;
	if (ftruncate(fd, 4096) == 0) {  /* growing only: a zero-filled page */
		void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p != MAP_FAILED) bell = p;
	}
	close(fd);
}

static struct sim_bell *the_bell(void)
{
	pthread_once(&bell_once, bell_open);
	return bell;
}

uint32_t sim_bell_read(void)
{
	struct sim_bell *b = the_bell();
	return __atomic_load_n(&b->word, __ATOMIC_SEQ_CST);
}

void sim_bell_ring(void)
{
	struct sim_bell *b = the_bell();
	__atomic_add_fetch(&b->word, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&b->waiters, __ATOMIC_SEQ_CST))
		syscall(SYS_futex, &b->word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

void sim_bell_wait(uint32_t seen, long ms)
{
	struct sim_bell *b = the_bell();
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	__atomic_add_fetch(&b->waiters, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&b->word, __ATOMIC_SEQ_CST) == seen)
		syscall(SYS_futex, &b->word, FUTEX_WAIT, seen, ms > 0 ? &ts : NULL, NULL, 0);
	__atomic_sub_fetch(&b->waiters, 1, __ATOMIC_SEQ_CST);
}

void sim_block_forever(void)
{
	static uint32_t never; /* nobody ever wakes this word */
	for (;;) syscall(SYS_futex, &never, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
}

/* ---- the directory lock ---- */
static int dir_lock(void)
{
	char path[4200];
	if (ensure_dir()) return -1;
	snprintf(path, sizeof path, "%s/lock", sim_env.dir);
	/* A fresh open file description per call, so threads exclude each other too. */
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) return -1;
	while (flock(fd, LOCK_EX) && errno == EINTR) {}
	return fd;
}
static void dir_unlock(int fd) { close(fd); }

/* ---- communicator files ---- */
/* Chunk slots of a pair's ring for a buffer of `buffsize` bytes. */
static int ring_slots(uint64_t buffsize)
{
	uint64_t n = (buffsize + SIM_P2P_SLOT - 1) / SIM_P2P_SLOT;
	return n ? (int)n : 1;
}

static size_t layout(int nranks, int ring, struct sim_shm_view *v, unsigned char *base)
{
	size_t off = (sizeof(struct sim_comm_shared) + 63) & ~(size_t)63;
	size_t rank_off = off;
	off += ((size_t)nranks * sizeof(struct sim_rank_shared) + 63) & ~(size_t)63;
	size_t p2p_off = off;
	off += ((size_t)nranks * nranks * sizeof(struct sim_p2p_shared) + 4095) & ~(size_t)4095;
	size_t coll_off = off;
	off += (size_t)nranks * SIM_COLL_SLOT;
	size_t p2ps_off = off;
	/* The rings are large (nranks^2 x NCCL_BUFFSIZE) but sparse: only the
	 * chunks pairs actually buffer take memory. */
	size_t stride = ((size_t)ring * SIM_P2P_SLOT + (size_t)ring * sizeof(uint32_t) + 4095) & ~(size_t)4095;
	off += (size_t)nranks * nranks * stride;
	if (v && base) {
		v->hdr = (struct sim_comm_shared *)base;
		v->rank = (struct sim_rank_shared *)(base + rank_off);
		v->p2p = (struct sim_p2p_shared *)(base + p2p_off);
		v->coll_slots = base + coll_off;
		v->p2p_slots = base + p2ps_off;
		v->p2p_stride = stride;
		v->p2p_ring = ring;
		v->size = off;
	}
	return off;
}

static void comm_path(char *buf, size_t len, uint64_t key)
{
	snprintf(buf, len, "%s/comm-%016llx", sim_env.dir, (unsigned long long)key);
}

static int pid_alive(int32_t pid) { return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM); }

/* Map an existing file; NULL if it is not a usable communicator file. */
static unsigned char *map_existing(const char *path, size_t *size)
{
	int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) return NULL;
	struct stat st;
	unsigned char *p = NULL;
	if (fstat(fd, &st) == 0 && (size_t)st.st_size >= sizeof(struct sim_comm_shared)) {
		p = mmap(NULL, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED) p = NULL;
		else *size = st.st_size;
	}
	close(fd);
	return p;
}

/* A file left by an earlier job (every rank that joined it is dead, or it
 * is malformed) must not break this one: it is replaced. */
static int is_stale(unsigned char *p, size_t size, uint64_t key, int nranks, int rank, int *conflict)
{
	struct sim_comm_shared *h = (struct sim_comm_shared *)p;
	struct sim_shm_view v;
	*conflict = 0;
	if (h->magic != SIM_SHM_MAGIC || h->key != key || h->nranks <= 0 || h->nranks > SIM_MAX_RANKS ||
	    h->p2p_buffsize > SIM_BUFFSIZE_MAX || h->p2p_ring != ring_slots(h->p2p_buffsize) || layout(h->nranks, h->p2p_ring, NULL, NULL) != size ||
	    h->total_size != size)
		return 1;
	layout(h->nranks, h->p2p_ring, &v, p);
	int alive = 0;
	for (int r = 0; r < h->nranks; r++)
		if (__atomic_load_n(&v.rank[r].joined, __ATOMIC_ACQUIRE) &&
		    !__atomic_load_n(&v.rank[r].left, __ATOMIC_ACQUIRE) && pid_alive(v.rank[r].pid))
			alive = 1;
	if (!alive) return 1;
	if (h->nranks != nranks) { *conflict = 2; return 0; }
	if (v.rank[rank].joined) {
		/* Our slot is taken by a live process: a duplicate rank, or an
		 * earlier job that reused this id is still running. */
		*conflict = 1;
	}
	return 0;
}

static unsigned char *create_file(const char *path, uint64_t key, int nranks, uint64_t buffsize, size_t size)
{
	char tmp[4300];
	snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
	int fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) return NULL;
	unsigned char *p = NULL;
	if (ftruncate(fd, size) == 0) {
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED) p = NULL;
	}
	close(fd);
	if (!p) { unlink(tmp); return NULL; }
	struct sim_comm_shared *h = (struct sim_comm_shared *)p;
	h->key = key;
	h->nranks = nranks;
	h->p2p_buffsize = buffsize;
	h->p2p_ring = ring_slots(buffsize);
	h->total_size = size;
	__atomic_store_n(&h->magic, SIM_SHM_MAGIC, __ATOMIC_RELEASE);
	if (rename(tmp, path)) { munmap(p, size); unlink(tmp); return NULL; }
	return p;
}

/* Remove the files of communicators whose ranks are all dead or gone (a
 * killed job's leftovers), so they do not pile up. Under the dir lock. */
static void sweep_stale(uint64_t except)
{
	char path[4400], keep[64];
	snprintf(keep, sizeof keep, "comm-%016llx", (unsigned long long)except);
	DIR *d = opendir(sim_env.dir);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (strncmp(e->d_name, "comm-", 5) || strchr(e->d_name, '.') || !strcmp(e->d_name, keep)) continue;
		snprintf(path, sizeof path, "%s/%s", sim_env.dir, e->d_name);
		size_t size = 0;
		unsigned char *p = map_existing(path, &size);
		if (!p) continue;
		struct sim_comm_shared *h = (struct sim_comm_shared *)p;
		int conflict;
		if (is_stale(p, size, h->key, h->nranks, 0, &conflict)) {
			sim_debug("removing stale file %s", path);
			unlink(path);
		}
		munmap(p, size);
	}
	if (d) closedir(d);
}

ncclResult_t sim_shm_join(uint64_t key, int nranks, int rank, int device, struct sim_shm_view *view)
{
	char path[4200];
	if (nranks > SIM_MAX_RANKS)
		return sim_error(ncclInvalidArgument, "nranks %d exceeds the simulation's limit %d", nranks, SIM_MAX_RANKS);
	int lk = dir_lock();
	if (lk < 0) return sim_error(ncclSystemError, "cannot use NCCLSIM_DIR %s: %s", sim_env.dir, strerror(errno));
	sweep_stale(key);
	comm_path(path, sizeof path, key);
	size_t want = layout(nranks, ring_slots(sim_env.buffsize), NULL, NULL), size = 0;
	unsigned char *p = map_existing(path, &size);
	if (p) {
		int conflict;
		if (is_stale(p, size, key, nranks, rank, &conflict)) {
			sim_debug("replacing stale file %s", path);
			munmap(p, size);
			unlink(path);
			p = NULL;
		} else if (conflict == 2) {
			/* Another nranks than the ranks already there: NCCL's bootstrap
			 * root drops the rendezvous ("mismatch in rank count") and
			 * every rank waits inside its init forever; no error comes back. */
			int theirs = ((struct sim_comm_shared *)p)->nranks;
			munmap(p, size);
			dir_unlock(lk);
			sim_debug("comm %016llx: rank %d joins with nranks %d, the others with %d: init never completes",
			          (unsigned long long)key, rank, nranks, theirs);
			sim_block_forever();
		} else if (conflict) {
			munmap(p, size);
			dir_unlock(lk);
			return sim_error(ncclInvalidUsage, "comm %016llx: rank %d of %d already joined by a live process (or nranks differs)",
			                 (unsigned long long)key, rank, nranks);
		}
	}
	if (!p) {
		p = create_file(path, key, nranks, sim_env.buffsize, want);
		size = want;
		if (!p) {
			dir_unlock(lk);
			return sim_error(ncclSystemError, "cannot create %s: %s", path, strerror(errno));
		}
	}
	/* the file's buffer, whoever made it (the first rank to init) */
	layout(nranks, ((struct sim_comm_shared *)p)->p2p_ring, view, p);
	struct sim_rank_shared *me = &view->rank[rank];
	me->pid = getpid();
	me->device = device;
	sim_transport_publish(&me->transport);
	__atomic_store_n(&me->left, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&me->joined, 1, __ATOMIC_RELEASE);
	__atomic_add_fetch(&view->hdr->joined_count, 1, __ATOMIC_SEQ_CST);
	dir_unlock(lk);
	sim_bell_ring();
	return ncclSuccess;
}

void sim_shm_leave(uint64_t key, int rank, struct sim_shm_view *view)
{
	char path[4200];
	if (!view->hdr) return;
	int lk = dir_lock();
	__atomic_store_n(&view->rank[rank].left, 1, __ATOMIC_RELEASE);
	int left = __atomic_add_fetch(&view->hdr->left_count, 1, __ATOMIC_SEQ_CST);
	if (left == view->hdr->nranks) {
		comm_path(path, sizeof path, key);
		/* Only if the file there is still ours (not a newer job's). */
		size_t size = 0;
		unsigned char *p = map_existing(path, &size);
		if (p) {
			struct sim_comm_shared *h = (struct sim_comm_shared *)p;
			if (h->left_count == h->nranks && h->key == key) unlink(path);
			munmap(p, size);
		}
	}
	if (lk >= 0) dir_unlock(lk);
	munmap(view->hdr, view->size);
	memset(view, 0, sizeof *view);
	sim_bell_ring();
}

/* ---- read-only views for the RAS endpoint (ras.c) ---- */
int sim_shm_map_ranks(const char *path, struct sim_shm_view *v)
{
	memset(v, 0, sizeof *v);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) return -1;
	struct stat st;
	struct sim_comm_shared h;
	int ok = fstat(fd, &st) == 0 && (size_t)st.st_size >= sizeof h && pread(fd, &h, sizeof h, 0) == (ssize_t)sizeof h &&
	         h.magic == SIM_SHM_MAGIC && h.nranks > 0 && h.nranks <= SIM_MAX_RANKS &&
	         h.p2p_buffsize <= SIM_BUFFSIZE_MAX && h.p2p_ring == ring_slots(h.p2p_buffsize) && layout(h.nranks, h.p2p_ring, NULL, NULL) == (size_t)st.st_size &&
	         h.total_size == (uint64_t)st.st_size;
	if (!ok) { close(fd); return -1; }
	/* Only the header and the rank array: the staging slots are large. */
	size_t want = ((sizeof(struct sim_comm_shared) + 63) & ~(size_t)63) + (size_t)h.nranks * sizeof(struct sim_rank_shared);
	unsigned char *p = mmap(NULL, want, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) return -1;
	layout(h.nranks, h.p2p_ring, v, p);
	v->p2p = NULL;
	v->coll_slots = v->p2p_slots = NULL;
	v->size = want;
	return 0;
}

void sim_shm_unmap_ranks(struct sim_shm_view *v)
{
	if (v->hdr) munmap(v->hdr, v->size);
	memset(v, 0, sizeof *v);
}
