/* Communicator life cycle of the simulated NCCL: InitRank, InitRankConfig
 * (blocking = 0 finishes in the background), InitAll, InitRankScalable,
 * Split, Shrink, Finalize, Destroy, Abort, Revoke, and the queries
 * (GetAsyncError, Count, CuDevice, UserRank). Ranks meet in the shared file
 * of the communicator's key (shm.c); the key of a communicator made from ids
 * is FNV-1a-64 of the id bytes, printed with NCCLSIM_DEBUG=1.
 */
#include "sim_nccl.h"
#include "sim_group.h"
#include "../sim_stream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- objects and references ---- */
static ncclComm_t comm_new(int nranks, int rank, uint64_t key, int device, int blocking, const char *name)
{
	ncclComm_t c = calloc(1, sizeof *c);
	if (!c) return NULL;
	c->magic = SIM_COMM_MAGIC;
	c->nranks = nranks;
	c->rank = rank;
	c->key = key;
	snprintf(c->keyhex, sizeof c->keyhex, "%016llx", (unsigned long long)key);
	c->device = device;
	c->blocking = blocking;
	c->refs = 1;
	if (name) snprintf(c->name, sizeof c->name, "%s", name);
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
	return c;
}

static int comm_alloc_peers(ncclComm_t c)
{
	c->next_send = calloc(c->nranks, sizeof *c->next_send);
	c->next_recv = calloc(c->nranks, sizeof *c->next_recv);
	return c->next_send && c->next_recv;
}

int sim_comm_valid(ncclComm_t comm) { return comm && comm->magic == SIM_COMM_MAGIC; }

void sim_comm_ref(ncclComm_t comm) { __atomic_add_fetch(&comm->refs, 1, __ATOMIC_ACQ_REL); }

void sim_comm_unref(ncclComm_t comm)
{
	if (__atomic_sub_fetch(&comm->refs, 1, __ATOMIC_ACQ_REL)) return;
	if (comm->shm_joined) sim_shm_leave(comm->key, comm->rank, &comm->shm);
	comm->magic = 0;
	pthread_mutex_destroy(&comm->mu);
	pthread_cond_destroy(&comm->cv);
	free(comm->next_send);
	free(comm->next_recv);
	free(comm);
}

static int current_device(void)
{
	int d = simStreamDevice(NULL);
	return d < 0 ? 0 : d;  /* no current context: the runtime would use device 0 */
}

static int config_blocking(const ncclConfig_t *config, int dflt)
{
	if (!config || config->size < offsetof(ncclConfig_t, cgaClusterSize)) return dflt;
	return config->blocking == NCCL_CONFIG_UNDEF_INT ? dflt : config->blocking != 0;
}

static const char *config_name(const ncclConfig_t *config)
{
	if (!config || config->size < offsetof(ncclConfig_t, commName) + sizeof(const char *)) return NULL;
	return config->commName;
}

static ncclResult_t config_check(const ncclConfig_t *config)
{
	if (!config) return ncclSuccess;
	if (config->magic != 0xcafebeef || config->size < offsetof(ncclConfig_t, blocking) + sizeof(int))
		return sim_error(ncclInvalidArgument, "config not initialized with NCCL_CONFIG_INITIALIZER");
	return ncclSuccess;
}

/* ---- waiting for the rendezvous, background jobs ---- */
ncclResult_t sim_comm_wait_joined(ncclComm_t comm)
{
	for (;;) {
		uint32_t seen = sim_bell_read();
		if (__atomic_load_n(&comm->shm.hdr->joined_count, __ATOMIC_ACQUIRE) >= comm->nranks) break;
		if (__atomic_load_n(&comm->aborted, __ATOMIC_ACQUIRE))
			return sim_error(ncclRemoteError, "comm %s aborted during init", comm->keyhex);
		sim_bell_wait(seen, 0);
	}
	/* NCCL compares every rank's (host, bus id) once all are known and
	 * fails the init of a rank whose GPU another rank of the comm uses
	 * (init.cc: "Duplicate GPU detected"); the others go on without it.
	 * Here a process is a host's unit: two ranks of one process on one
	 * device. */
	for (int r = 0; r < comm->nranks; r++) {
		const struct sim_rank_shared *o = &comm->shm.rank[r];
		if (r != comm->rank && o->pid == (int32_t)getpid() && o->device == comm->device)
			return sim_error(ncclInvalidUsage, "Duplicate GPU detected : rank %d and rank %d both on CUDA device %d",
			                 comm->rank, r, comm->device);
	}
	sim_debug("comm %s rank %d/%d device %d%s%s ready", comm->keyhex, comm->rank, comm->nranks,
	          comm->device, comm->name[0] ? " name " : "", comm->name);
	sim_ras_init_state(comm, ncclSuccess);
	return ncclSuccess;
}

/* Rank `rank` joins the shared file, unless an injected initstall keeps it
 * from ever arriving. */
static ncclResult_t comm_join(ncclComm_t c)
{
	sim_debug("comm %s rank %d/%d device %d init", c->keyhex, c->rank, c->nranks, c->device);
	if (sim_fault_find(FAULT_INITSTALL, c->key, c->rank, 0)) {
		sim_debug("comm %s rank %d: injected initstall", c->keyhex, c->rank);
		sim_block_forever();
	}
	ncclResult_t r = sim_shm_join(c->key, c->nranks, c->rank, c->device, &c->shm);
	if (r == ncclSuccess) {
		c->shm_joined = 1;
		sim_ras_comm_join(c);
	}
	return r;
}

static ncclResult_t comm_join_and_wait(void *arg)
{
	ncclComm_t c = arg;
	ncclResult_t r = c->shm_joined ? ncclSuccess : comm_join(c);
	return r == ncclSuccess ? sim_comm_wait_joined(c) : r;
}

struct sim_job {
	ncclResult_t (*fn)(void *);
	void *arg;
	int ncomms;
	ncclComm_t comms[];
};

/* Named as NCCL names its own (group.cc): a stack of this thread is inside
 * NCCL, as it is with the real library. */
static void *ncclAsyncJobMain(void *p)
{
	struct sim_job *job = p;
	ncclResult_t r = job->fn(job->arg);
	for (int i = 0; i < job->ncomms; i++) {
		ncclComm_t c = job->comms[i];
		pthread_mutex_lock(&c->mu);
		c->bg_job = NULL;
		int expected = ncclInProgress;
		__atomic_compare_exchange_n(&c->async_error, &expected, (int)r, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
		sim_ras_async_error(c, (ncclResult_t)__atomic_load_n(&c->async_error, __ATOMIC_ACQUIRE));
		pthread_cond_broadcast(&c->cv);
		pthread_mutex_unlock(&c->mu);
		sim_comm_unref(c);
	}
	free(job);
	return NULL;
}

void sim_comm_wait_job(ncclComm_t comm)
{
	pthread_mutex_lock(&comm->mu);
	while (comm->bg_job) pthread_cond_wait(&comm->cv, &comm->mu);
	pthread_mutex_unlock(&comm->mu);
}

void sim_comm_start_job(ncclComm_t *comms, int ncomms, ncclResult_t (*fn)(void *), void *arg)
{
	struct sim_job *job = calloc(1, sizeof *job + ncomms * sizeof(ncclComm_t));
	if (!job) { fn(arg); return; }
	job->fn = fn;
	job->arg = arg;
	job->ncomms = ncomms;
	for (int i = 0; i < ncomms; i++) {
		ncclComm_t c = comms[i];
		job->comms[i] = c;
		sim_comm_ref(c);
		pthread_mutex_lock(&c->mu);
		c->bg_job = job;
		__atomic_store_n(&c->async_error, ncclInProgress, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&c->mu);
	}
	pthread_t t;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, ncclAsyncJobMain, job)) ncclAsyncJobMain(job);
	pthread_attr_destroy(&attr);
}

ncclResult_t sim_comm_job_result(ncclComm_t comm)
{
	sim_comm_wait_job(comm);
	return (ncclResult_t)__atomic_load_n(&comm->async_error, __ATOMIC_ACQUIRE);
}

/* The common end of every init: in a group, join now and wait at
 * ncclGroupEnd; non-blocking, finish in the background; else wait here. */
static ncclResult_t comm_finish_init(ncclComm_t *out, ncclComm_t c)
{
	if (!comm_alloc_peers(c)) { sim_comm_unref(c); return sim_error(ncclSystemError, "out of memory"); }
	*out = c;
	if (sim_group_depth() > 0) {
		ncclResult_t r = comm_join(c);
		if (r != ncclSuccess) { *out = NULL; sim_comm_unref(c); return r; }
		sim_group_add_init(c);
		return ncclSuccess;
	}
	if (!c->blocking) {
		sim_comm_start_job(&c, 1, comm_join_and_wait, c);
		return ncclInProgress;
	}
	ncclResult_t r = comm_join_and_wait(c);
	if (r != ncclSuccess) { *out = NULL; sim_comm_unref(c); }
	return r;
}

static uint64_t key_of_ids(const ncclUniqueId *ids, int n)
{
	uint64_t h = SIM_FNV_OFFSET;
	for (int i = 0; i < n; i++) h = sim_fnv1a(h, ids[i].internal, NCCL_UNIQUE_ID_BYTES);
	return h;
}

static ncclResult_t init_common(ncclComm_t *newcomm, int nranks, int rank, uint64_t key, ncclConfig_t *config,
                                 const ncclUniqueId *first_id)
{
	if (!newcomm) return sim_error(ncclInvalidArgument, "comm pointer is NULL");
	if (nranks < 1 || rank < 0 || rank >= nranks)
		return sim_error(ncclInvalidArgument, "invalid rank %d / nranks %d", rank, nranks);
	ncclResult_t r = config_check(config);
	if (r != ncclSuccess) return r;
	ncclComm_t c = comm_new(nranks, rank, key, SIM_NULL() ? 0 : current_device(),
	                        config_blocking(config, 1), config_name(config));
	if (!c) return sim_error(ncclSystemError, "out of memory");
	if (SIM_NULL()) { c->null_dummy = 1; *newcomm = c; return ncclSuccess; }
	/* NCCL: comm->commHash = getHash(first commId) (init.cc, ncclCommInitRankFunc) */
	c->ras_hash = sim_ras_hash(first_id->internal, NCCL_UNIQUE_ID_BYTES);
	return comm_finish_init(newcomm, c);
}

ncclResult_t pncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank, ncclConfig_t *config)
{
	return init_common(comm, nranks, rank, key_of_ids(&commId, 1), config, &commId);
}
NCCLSIM_ALIAS(ncclCommInitRankConfig);

ncclResult_t pncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank)
{
	return init_common(comm, nranks, rank, key_of_ids(&commId, 1), NULL, &commId);
}
NCCLSIM_ALIAS(ncclCommInitRank);

ncclResult_t pncclCommInitRankScalable(ncclComm_t *newcomm, int nranks, int myrank, int nId,
                                       ncclUniqueId *commIds, ncclConfig_t *config)
{
	if (nId < 1 || !commIds) return sim_error(ncclInvalidArgument, "nId %d / commIds %p", nId, (void *)commIds);
	return init_common(newcomm, nranks, myrank, key_of_ids(commIds, nId), config, &commIds[0]);
}
NCCLSIM_ALIAS(ncclCommInitRankScalable);

ncclResult_t pncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist)
{
	if (!comms || ndev < 1) return sim_error(ncclInvalidArgument, "comms %p / ndev %d", (void *)comms, ndev);
	ncclUniqueId id;
	ncclResult_t r = pncclGetUniqueId(&id);
	if (r != ncclSuccess) return r;
	uint64_t key = key_of_ids(&id, 1);
	for (int i = 0; i < ndev; i++) comms[i] = NULL;
	for (int i = 0; i < ndev; i++) {
		ncclComm_t c = comm_new(ndev, i, key, devlist ? devlist[i] : i, 1, NULL);
		if (!c || !comm_alloc_peers(c)) { r = sim_error(ncclSystemError, "out of memory"); if (c) sim_comm_unref(c); break; }
		comms[i] = c;
		if (SIM_NULL()) { c->null_dummy = 1; continue; }
		c->ras_hash = sim_ras_hash(id.internal, NCCL_UNIQUE_ID_BYTES);
		if ((r = comm_join(c)) != ncclSuccess) break;
	}
	for (int i = 0; i < ndev && r == ncclSuccess && !SIM_NULL(); i++) r = sim_comm_wait_joined(comms[i]);
	if (r != ncclSuccess)
		for (int i = 0; i < ndev; i++) if (comms[i]) { sim_comm_unref(comms[i]); comms[i] = NULL; }
	return r;
}
NCCLSIM_ALIAS(ncclCommInitAll);

/* ---- Split: an exchange of (color, key) over the parent ---- */
struct split_job {
	ncclComm_t parent, child;  /* child NULL for NCCL_SPLIT_NOCOLOR */
	int color, key;
	uint64_t split_no;
	int ras_split_count;
};

static int all_ranks_reached(ncclComm_t c, size_t field_off, uint64_t value)
{
	for (int r = 0; r < c->nranks; r++) {
		uint64_t *f = (uint64_t *)((char *)&c->shm.rank[r] + field_off);
		if (__atomic_load_n(f, __ATOMIC_ACQUIRE) < value) return 0;
	}
	return 1;
}

static ncclResult_t wait_all(ncclComm_t c, size_t field_off, uint64_t value)
{
	for (;;) {
		uint32_t seen = sim_bell_read();
		if (all_ranks_reached(c, field_off, value)) return ncclSuccess;
		if (__atomic_load_n(&c->aborted, __ATOMIC_ACQUIRE))
			return sim_error(ncclRemoteError, "comm %s aborted during split", c->keyhex);
		sim_bell_wait(seen, 0);
	}
}

static ncclResult_t split_run(void *arg)
{
	struct split_job *j = arg;
	ncclComm_t p = j->parent;
	struct sim_rank_shared *me = &p->shm.rank[p->rank];
	ncclResult_t r;
	me->split_color = j->color;
	me->split_key = j->key;
	__atomic_store_n(&me->split_no, j->split_no, __ATOMIC_RELEASE);
	sim_bell_ring();
	if ((r = wait_all(p, offsetof(struct sim_rank_shared, split_no), j->split_no)) != ncclSuccess) goto out;
	int n = 0, myidx = 0;
	for (int q = 0; q < p->nranks; q++) {
		struct sim_rank_shared *o = &p->shm.rank[q];
		if (o->split_color != j->color || j->color == NCCL_SPLIT_NOCOLOR) continue;
		/* ranks ordered by key, then by parent rank */
		if (q != p->rank && (o->split_key < j->key || (o->split_key == j->key && q < p->rank))) myidx++;
		n++;
	}
	__atomic_store_n(&me->split_done, j->split_no, __ATOMIC_RELEASE);
	sim_bell_ring();
	if ((r = wait_all(p, offsetof(struct sim_rank_shared, split_done), j->split_no)) != ncclSuccess) goto out;
	if (j->child) {
		ncclComm_t c = j->child;
		uint64_t h = sim_fnv1a(SIM_FNV_OFFSET, &p->key, sizeof p->key);
		h = sim_fnv1a(h, "split", 5);
		h = sim_fnv1a(h, &j->split_no, sizeof j->split_no);
		h = sim_fnv1a(h, &j->color, sizeof j->color);
		c->key = h;
		snprintf(c->keyhex, sizeof c->keyhex, "%016llx", (unsigned long long)h);
		c->ras_hash = sim_ras_child_hash(p->ras_hash, j->ras_split_count, j->color);
		c->nranks = n;
		c->rank = myidx;
		if (!comm_alloc_peers(c)) { r = sim_error(ncclSystemError, "out of memory"); goto out; }
		r = comm_join_and_wait(c);
	}
out:
	free(j);
	return r;
}

static ncclResult_t comm_usable(ncclComm_t comm)
{
	if (!sim_comm_valid(comm)) return sim_error(ncclInvalidArgument, "invalid communicator %p", (void *)comm);
	if (comm->null_dummy) return ncclSuccess;
	int e = __atomic_load_n(&comm->async_error, __ATOMIC_ACQUIRE);
	if (e == ncclInProgress) return sim_error(ncclInvalidUsage, "comm %s is still initializing", comm->keyhex);
	if (e != ncclSuccess) return (ncclResult_t)e;
	if (__atomic_load_n(&comm->revoked, __ATOMIC_ACQUIRE) || __atomic_load_n(&comm->aborted, __ATOMIC_ACQUIRE))
		return sim_error(ncclInvalidUsage, "comm %s was revoked or aborted", comm->keyhex);
	return ncclSuccess;
}

ncclResult_t pncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm, ncclConfig_t *config)
{
	ncclResult_t r;
	if (!newcomm) return sim_error(ncclInvalidArgument, "newcomm is NULL");
	if (color < 0 && color != NCCL_SPLIT_NOCOLOR) return sim_error(ncclInvalidArgument, "color %d", color);
	if ((r = comm_usable(comm)) != ncclSuccess) return r;
	if ((r = config_check(config)) != ncclSuccess) return r;
	int blocking = config_blocking(config, comm->blocking);
	if (comm->null_dummy) {
		*newcomm = NULL;
		if (color == NCCL_SPLIT_NOCOLOR) return ncclSuccess;
		ncclComm_t c = comm_new(comm->nranks, comm->rank, comm->key + 1, comm->device, blocking, NULL);
		if (!c) return ncclSystemError;
		c->null_dummy = 1;
		*newcomm = c;
		return ncclSuccess;
	}
	struct split_job *j = calloc(1, sizeof *j);
	if (!j) return sim_error(ncclSystemError, "out of memory");
	j->parent = comm;
	j->color = color;
	j->key = key;
	pthread_mutex_lock(&comm->mu);
	j->split_no = ++comm->split_count;
	j->ras_split_count = ++comm->ras_split_count;
	pthread_mutex_unlock(&comm->mu);
	if (color != NCCL_SPLIT_NOCOLOR) {
		j->child = comm_new(0, 0, 0, comm->device, blocking, config_name(config));
		if (!j->child) { free(j); return sim_error(ncclSystemError, "out of memory"); }
	}
	ncclComm_t child = j->child;
	*newcomm = child;
	if (!blocking || sim_group_depth() > 0) {
		ncclComm_t cs[2] = { comm, child };
		sim_comm_start_job(cs, child ? 2 : 1, split_run, j);
		if (!blocking)
			return ncclInProgress;
		/* NCCL defers a split inside a group to ncclGroupEnd; the job
		 * finishes its parent first, then the child: wait for the last */
		sim_group_add_job(child ? child : comm);
		return ncclSuccess;
	}
	r = split_run(j);
	if (r != ncclSuccess && child) { sim_comm_unref(child); *newcomm = NULL; }
	return r;
}
NCCLSIM_ALIAS(ncclCommSplit);

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

ncclResult_t pncclCommShrink(ncclComm_t comm, int *excludeRanksList, int excludeRanksCount, ncclComm_t *newcomm,
                             ncclConfig_t *config, int shrinkFlags)
{
	ncclResult_t r;
	if (!sim_comm_valid(comm)) return sim_error(ncclInvalidArgument, "invalid communicator %p", (void *)comm);
	if (!newcomm || excludeRanksCount < 0 || (excludeRanksCount > 0 && !excludeRanksList))
		return sim_error(ncclInvalidArgument, "invalid shrink arguments");
	if (shrinkFlags & ~(NCCL_SHRINK_DEFAULT | NCCL_SHRINK_ABORT))
		return sim_error(ncclInvalidArgument, "shrinkFlags %#x", shrinkFlags);
	if ((r = config_check(config)) != ncclSuccess) return r;
	int n = excludeRanksCount;
	int *ex = malloc((n ? n : 1) * sizeof *ex);
	if (!ex) return sim_error(ncclSystemError, "out of memory");
	memcpy(ex, excludeRanksList, n * sizeof *ex);
	qsort(ex, n, sizeof *ex, cmp_int);
	int below = 0, uniq = 0;
	for (int i = 0; i < n; i++) {
		if (ex[i] < 0 || ex[i] >= comm->nranks) {
			int bad = ex[i];
			free(ex);
			return sim_error(ncclInvalidArgument, "excluded rank %d out of range", bad);
		}
		if (i && ex[i] == ex[i - 1]) continue;
		ex[uniq++] = ex[i];
		if (ex[i] == comm->rank) { free(ex); return sim_error(ncclInvalidArgument, "rank %d excludes itself", comm->rank); }
		if (ex[i] < comm->rank) below++;
	}
	if (uniq >= comm->nranks) { free(ex); return sim_error(ncclInvalidArgument, "no rank left"); }
	if (shrinkFlags & NCCL_SHRINK_ABORT) {  /* stop the parent's pending work first */
		__atomic_store_n(&comm->aborted, 1, __ATOMIC_RELEASE);
		sim_bell_ring();
	}
	pthread_mutex_lock(&comm->mu);
	uint64_t shrink_no = ++comm->shrink_count;
	int ras_split_count = ++comm->ras_split_count;
	pthread_mutex_unlock(&comm->mu);
	uint64_t h = sim_fnv1a(SIM_FNV_OFFSET, &comm->key, sizeof comm->key);
	h = sim_fnv1a(h, "shrink", 6);
	h = sim_fnv1a(h, &shrink_no, sizeof shrink_no);
	h = sim_fnv1a(h, ex, uniq * sizeof *ex);
	free(ex);
	ncclComm_t c = comm_new(comm->nranks - uniq, comm->rank - below, h, comm->device,
	                        config_blocking(config, comm->blocking), config_name(config));
	if (!c) return sim_error(ncclSystemError, "out of memory");
	if (comm->null_dummy) { c->null_dummy = 1; *newcomm = c; return ncclSuccess; }
	c->ras_hash = sim_ras_child_hash(comm->ras_hash, ras_split_count, 0); /* NCCL: shrink is a child with color 0 */
	return comm_finish_init(newcomm, c);
}
NCCLSIM_ALIAS(ncclCommShrink);

/* ---- end of life ---- */
static ncclResult_t finalize_run(void *arg)
{
	ncclComm_t c = arg;
	pthread_mutex_lock(&c->mu);
	while (c->inflight > 0 && !__atomic_load_n(&c->aborted, __ATOMIC_ACQUIRE)) pthread_cond_wait(&c->cv, &c->mu);
	pthread_mutex_unlock(&c->mu);
	return ncclSuccess;
}

ncclResult_t pncclCommFinalize(ncclComm_t comm)
{
	if (!sim_comm_valid(comm)) return sim_error(ncclInvalidArgument, "invalid communicator %p", (void *)comm);
	if (comm->null_dummy) return ncclSuccess;
	sim_ras_flag(comm, 1, 0, 0);
	if (!comm->blocking) {
		sim_comm_wait_job(comm);
		sim_comm_start_job(&comm, 1, finalize_run, comm);
		return ncclInProgress;
	}
	return finalize_run(comm);
}
NCCLSIM_ALIAS(ncclCommFinalize);

static ncclResult_t release_user(ncclComm_t comm, int abort)
{
	if (!sim_comm_valid(comm)) return sim_error(ncclInvalidArgument, "invalid communicator %p", (void *)comm);
	if (__atomic_exchange_n(&comm->user_released, 1, __ATOMIC_ACQ_REL))
		return sim_error(ncclInvalidUsage, "comm %s destroyed twice", comm->keyhex);
	sim_ras_flag(comm, 0, 1, abort);  /* NCCL sets destroyFlag for both */
	if (abort) {
		/* Pending work of this comm wakes up and finishes as failed. */
		__atomic_store_n(&comm->aborted, 1, __ATOMIC_RELEASE);
		sim_bell_ring();
		pthread_mutex_lock(&comm->mu);
		pthread_cond_broadcast(&comm->cv);
		pthread_mutex_unlock(&comm->mu);
	}
	sim_debug("comm %s rank %d %s", comm->keyhex, comm->rank, abort ? "abort" : "destroy");
	sim_comm_unref(comm);
	return ncclSuccess;
}

ncclResult_t pncclCommDestroy(ncclComm_t comm)
{
	if (comm == NULL) return ncclSuccess;
	return release_user(comm, 0);
}
NCCLSIM_ALIAS(ncclCommDestroy);

ncclResult_t pncclCommAbort(ncclComm_t comm)
{
	if (comm == NULL) return ncclSuccess;
	return release_user(comm, 1);
}
NCCLSIM_ALIAS(ncclCommAbort);

ncclResult_t pncclCommRevoke(ncclComm_t comm, int revokeFlags)
{
	if (!sim_comm_valid(comm)) return sim_error(ncclInvalidArgument, "invalid communicator %p", (void *)comm);
	if (revokeFlags != NCCL_REVOKE_DEFAULT) return sim_error(ncclInvalidArgument, "revokeFlags %#x", revokeFlags);
	if (comm->null_dummy) return ncclSuccess;
	__atomic_store_n(&comm->revoked, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&comm->aborted, 1, __ATOMIC_RELEASE);
	sim_bell_ring();
	pthread_mutex_lock(&comm->mu);
	pthread_cond_broadcast(&comm->cv);
	pthread_mutex_unlock(&comm->mu);
	return ncclSuccess;
}
NCCLSIM_ALIAS(ncclCommRevoke);

/* ---- queries ---- */
ncclResult_t pncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError)
{
	if (!sim_comm_valid(comm) || !asyncError) return sim_error(ncclInvalidArgument, "invalid comm or asyncError pointer");
	*asyncError = (ncclResult_t)__atomic_load_n(&comm->async_error, __ATOMIC_ACQUIRE);
	return ncclSuccess;
}
NCCLSIM_ALIAS(ncclCommGetAsyncError);

ncclResult_t pncclCommCount(const ncclComm_t comm, int *count)
{
	if (!sim_comm_valid(comm) || !count) return sim_error(ncclInvalidArgument, "invalid comm or count pointer");
	*count = comm->nranks;
	return ncclSuccess;
}
NCCLSIM_ALIAS(ncclCommCount);

ncclResult_t pncclCommCuDevice(const ncclComm_t comm, int *device)
{
	if (!sim_comm_valid(comm) || !device) return sim_error(ncclInvalidArgument, "invalid comm or device pointer");
	*device = comm->device;
	return ncclSuccess;
}
NCCLSIM_ALIAS(ncclCommCuDevice);

ncclResult_t pncclCommUserRank(const ncclComm_t comm, int *rank)
{
	if (!sim_comm_valid(comm) || !rank) return sim_error(ncclInvalidArgument, "invalid comm or rank pointer");
	*rank = comm->rank;
	return ncclSuccess;
}
NCCLSIM_ALIAS(ncclCommUserRank);

ncclResult_t sim_comm_check_usable(ncclComm_t comm) { return comm_usable(comm); }
