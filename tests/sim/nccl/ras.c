/* The simulated NCCL's RAS endpoint, after NCCL 2.28.9's src/ras/
 * (ras.cc, client_support.cc, collectives.cc, ras_internal.h; see
 * docs/ras.md for the protocol and tests/sim/README.md for what is left out).
 *
 * Like NCCL: the first communicator init of a process starts a RAS thread
 * (unless NCCL_RAS_ENABLE is not 1) that listens on NCCL_RAS_ADDR
 * (default localhost:28028) with SO_REUSEADDR and SO_REUSEPORT, so every
 * process of the job binds the same address and whichever the kernel hands
 * a connection to answers for the whole job. A bind failure is silent (NCCL
 * logs it at INFO level only) and the process just does not answer.
 *
 * Where NCCL's RAS threads gather the data over their own network, the
 * simulation reads the job's shared files: every rank publishes in its
 * communicator's file what NCCL's RAS reads of its ncclComm (struct
 * sim_ras_rank: commHash, seqNumber[], initState, asyncResult, the
 * finalize/destroy/abort flags), and every RAS thread writes a heartbeat
 * into NCCLSIM_DIR/ras-peer-<pid> once per keep-alive interval. A peer
 * whose heartbeat is older than the collective leg timeout does not answer
 * (unresponsive); older than RAS_PEER_DEAD_TIMEOUT it is considered dead.
 * All timeouts are NCCL's, scaled by NCCL_RAS_TIMEOUT_FACTOR.
 */
#include "sim_nccl.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ras_internal.h */
#define RAS_CLIENT_PORT "28028"
#define RAS_CLIENT_PROTOCOL 2
#define RAS_LEG_TIMEOUT_SEC 5          /* RAS_COLLECTIVE_LEG_TIMEOUT_SEC */
#define RAS_KEEPALIVE_INTERVAL_SEC 1
#define RAS_PEER_DEAD_TIMEOUT_SEC 60
#define RAS_RECV_BUFFER 1024           /* struct rasClient recvBuffer */
#define RAS_PEER_MAGIC 0x72617370656572ull

/* ---- NCCL's getHash (src/include/bitops.h) ---- */
static void eat_hash(uint64_t acc[2], const void *bytes, size_t size)
{
	const char *ptr = bytes;
	acc[0] ^= size;
	while (size != 0) {
		acc[0] += acc[1];
		acc[1] ^= acc[0];
		acc[0] ^= acc[0] >> 31;
		acc[0] *= 0x9de62bbc8cef3ce3ull;
		acc[1] ^= acc[1] >> 32;
		acc[1] *= 0x485cd6311b599e79ull;
		size_t chunk = size < sizeof(uint64_t) ? size : sizeof(uint64_t);
		uint64_t x = 0;
		memcpy(&x, ptr, chunk);
		ptr += chunk;
		size -= chunk;
		acc[0] += x;
	}
}

static uint64_t digest_hash(const uint64_t acc[2])
{
	uint64_t h = acc[0];
	h ^= h >> 31;
	h *= 0xbac3bd562846de6bull;
	h += acc[1];
	h ^= h >> 32;
	h *= 0x995a187a14e7b445ull;
	return h;
}

uint64_t sim_ras_hash(const void *bytes, size_t len)
{
	uint64_t acc[2] = { 1, 1 };
	eat_hash(acc, bytes, len);
	return digest_hash(acc);
}

uint64_t sim_ras_child_hash(uint64_t parent, int split_count, int color)
{
	uint64_t acc[2] = { 1, 1 };  /* init.cc: eatHash(parent commHash), (splitCount), (color) */
	eat_hash(acc, &parent, sizeof parent);
	eat_hash(acc, &split_count, sizeof split_count);
	eat_hash(acc, &color, sizeof color);
	return digest_hash(acc);
}

/* ---- parameters ---- */
static long long factor = 1;        /* NCCL_RAS_TIMEOUT_FACTOR */
static long long dead_ms = -1;      /* NCCLSIM_RAS_DEAD_MS: test-only override of the dead timeout */

static long long env_ll(const char *name, long long dflt)
{
	const char *s = getenv(name);
	if (!s || !*s) return dflt;
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 0);
	return errno || *end ? dflt : v;  /* NCCL ignores an unparsable value */
}

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ---- what this process publishes ---- */
/* This rank's published RAS fields, once sim_ras_comm_join made them (the
 * flag orders the mapping before any other thread's use: a background
 * init may still be joining while the application aborts). */
static struct sim_ras_rank *mine(ncclComm_t c)
{
	return c && __atomic_load_n(&c->ras_ready, __ATOMIC_ACQUIRE) ? &c->shm.rank[c->rank].ras : NULL;
}

static pthread_once_t ras_once = PTHREAD_ONCE_INIT;
static void ras_start(void);

void sim_ras_comm_join(ncclComm_t c)
{
	if (!c || !c->shm_joined || !c->shm.rank) return;
	struct sim_ras_rank *r = &c->shm.rank[c->rank].ras;
	for (int f = 0; f < SIM_RAS_NFUNCS; f++) __atomic_store_n(&r->coll_counts[f], 0, __ATOMIC_RELAXED);
	__atomic_store_n(&r->async_error, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&r->finalize_called, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&r->destroy_flag, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&r->abort_flag, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&r->comm_hash, c->ras_hash, __ATOMIC_RELEASE);
	__atomic_store_n(&c->ras_ready, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&r->init_state, ncclInProgress, __ATOMIC_RELEASE);  /* init.cc sets it before bootstrap */
	pthread_once(&ras_once, ras_start);
}

void sim_ras_init_state(ncclComm_t c, ncclResult_t state)
{
	struct sim_ras_rank *r = mine(c);
	if (r) __atomic_store_n(&r->init_state, (int32_t)state, __ATOMIC_RELEASE);
}

void sim_ras_count_launch(ncclComm_t c, int kind)
{
	int f;
	switch (kind) {  /* NCCL's ncclFunc_t order */
	case OP_BROADCAST: f = 0; break;
	case OP_REDUCE: f = 1; break;
	case OP_ALLGATHER: f = 2; break;
	case OP_REDUCESCATTER: f = 3; break;
	case OP_ALLREDUCE: f = 4; break;
	default: return;  /* Send/Recv and the collectives NCCL runs as send/recv (AlltoAll, Gather, Scatter) */
	}
	struct sim_ras_rank *r = mine(c);
	if (r) __atomic_add_fetch(&r->coll_counts[f], 1, __ATOMIC_RELEASE);
}

void sim_ras_async_error(ncclComm_t c, ncclResult_t err)
{
	struct sim_ras_rank *r = mine(c);
	if (r) __atomic_store_n(&r->async_error, (int32_t)err, __ATOMIC_RELEASE);
}

void sim_ras_flag(ncclComm_t c, int finalize, int destroy, int abort)
{
	struct sim_ras_rank *r = mine(c);
	if (!r) return;
	if (finalize) __atomic_store_n(&r->finalize_called, 1, __ATOMIC_RELEASE);
	if (destroy) __atomic_store_n(&r->destroy_flag, 1, __ATOMIC_RELEASE);
	if (abort) __atomic_store_n(&r->abort_flag, 1, __ATOMIC_RELEASE);
}

/* ---- the heartbeat file of this process ---- */
struct sim_ras_peer_file {
	uint64_t magic;
	int32_t pid;
	int32_t pad;
	int64_t heartbeat_ns;   /* CLOCK_MONOTONIC */
};
static struct sim_ras_peer_file *peer_file;

static void peer_path(char *buf, size_t len, int pid)
{
	snprintf(buf, len, "%s/ras-peer-%d", sim_env.dir, pid);
}

/* Heartbeat files of processes long gone (earlier jobs in this
 * NCCLSIM_DIR) would pile up: a starting RAS thread removes those whose
 * process no longer exists. One of a crashed process of a job still
 * running goes too, and that process then counts as having RAS off: an
 * unresponsive peer either way. */
static void sweep_peer_files(void)
{
	DIR *d = opendir(sim_env.dir);
	struct dirent *e;
	char path[4400];
	while (d && (e = readdir(d))) {
		int pid;
		char tail;
		if (sscanf(e->d_name, "ras-peer-%d%c", &pid, &tail) != 1 || pid <= 0) continue;
		if (kill(pid, 0) == 0 || errno == EPERM) continue;
		snprintf(path, sizeof path, "%s/%s", sim_env.dir, e->d_name);
		unlink(path);
	}
	if (d) closedir(d);
}

static void heartbeat_open(void)
{
	char path[4200];
	sweep_peer_files();
	peer_path(path, sizeof path, (int)getpid());
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) return;
	if (ftruncate(fd, sizeof *peer_file) == 0) {
		void *p = mmap(NULL, sizeof *peer_file, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p != MAP_FAILED) peer_file = p;
	}
	close(fd);
	if (!peer_file) return;
	peer_file->pid = (int32_t)getpid();
	__atomic_store_n(&peer_file->heartbeat_ns, now_ns(), __ATOMIC_RELEASE);
	__atomic_store_n(&peer_file->magic, RAS_PEER_MAGIC, __ATOMIC_RELEASE);
}

static void heartbeat(void)
{
	if (peer_file) __atomic_store_n(&peer_file->heartbeat_ns, now_ns(), __ATOMIC_RELEASE);
}

/* ---- the job as the answering process sees it ---- */
struct peer {
	int pid;
	int responsive, dead, timed_out;
	uint64_t devs;
};
struct rrank {              /* a rank that answered */
	int rank, pid, dev;
	struct sim_ras_rank st;
};
struct mrank {              /* a rank that did not */
	int rank, pid, dev;
	int unresponsive, dead;
};
struct rcomm {
	uint64_t hash, host_hash, pid_hash;
	int size;
	int nr, nm;
	struct rrank *r;
	struct mrank *m;
	unsigned status, errors;   /* text format: rasACStatus / rasACError bitmasks */
	int nincomplete;
};
struct job {
	struct peer *peers;
	int npeers, cap;
	struct rcomm *comms;
	int ncomms;
	int timeouts;
	int missing, dead;   /* peers */
	int64_t start_ns;
};

static struct peer *peer_find(struct job *j, int pid)
{
	for (int i = 0; i < j->npeers; i++) if (j->peers[i].pid == pid) return &j->peers[i];
	return NULL;
}

static struct peer *peer_add(struct job *j, int pid)
{
	struct peer *p = peer_find(j, pid);
	if (p) return p;
	if (j->npeers == j->cap) {
		int cap = j->cap ? 2 * j->cap : 64;
		struct peer *n = realloc(j->peers, cap * sizeof *n);
		if (!n) return NULL;
		j->peers = n;
		j->cap = cap;
	}
	p = &j->peers[j->npeers++];
	memset(p, 0, sizeof *p);
	p->pid = pid;
	return p;
}

/* An exited process not yet reaped still has its pid: it answers nothing. */
static int zombie(int pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) return 1;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0) return 1;
	buf[n] = 0;
	const char *rp = strrchr(buf, ')');
	return !rp || rp[1] != ' ' || rp[2] == 'Z' || rp[2] == 'X';
}

/* Would this peer's RAS thread answer? From its heartbeat and whether it lives. */
static void peer_judge(struct peer *p, int64_t now)
{
	if (p->pid == (int)getpid()) { p->responsive = 1; return; }
	char path[4200];
	peer_path(path, sizeof path, p->pid);
	struct sim_ras_peer_file f;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), have = 0;
	if (fd >= 0) {
		have = pread(fd, &f, sizeof f, 0) == (ssize_t)sizeof f && f.magic == RAS_PEER_MAGIC && f.pid == p->pid;
		close(fd);
	}
	int alive = (kill(p->pid, 0) == 0 || errno == EPERM) && !zombie(p->pid);
	if (!have) { p->responsive = 0; return; }  /* RAS off in that process: it never answers */
	int64_t age = now - f.heartbeat_ns;
	int64_t leg = (int64_t)RAS_LEG_TIMEOUT_SEC * 1000000000LL * factor;
	int64_t dead = dead_ms >= 0 ? dead_ms * 1000000LL : (int64_t)RAS_PEER_DEAD_TIMEOUT_SEC * 1000000000LL * factor;
	p->responsive = alive && age < leg;
	if (!p->responsive) {
		p->dead = age >= dead;
		/* a live but silent process makes a leg of the collective time out;
		 * a dead one's connection is closed and simply skipped */
		p->timed_out = alive && !p->dead;
	}
}

static int cmp_rrank(const void *a, const void *b)
{
	const struct rrank *x = a, *y = b;
	return (x->rank > y->rank) - (x->rank < y->rank);
}
static int cmp_mrank(const void *a, const void *b)
{
	const struct mrank *x = a, *y = b;
	return (x->rank > y->rank) - (x->rank < y->rank);
}
static int cmp_comm(const void *a, const void *b)
{
	const struct rcomm *x = a, *y = b;
	if (x->hash != y->hash) return x->hash < y->hash ? -1 : 1;
	if (x->host_hash != y->host_hash) return x->host_hash < y->host_hash ? -1 : 1;
	return (x->pid_hash > y->pid_hash) - (x->pid_hash < y->pid_hash);
}

static uint64_t host_hash_base(void)
{
	char host[256] = "";
	gethostname(host, sizeof host - 1);
	return sim_ras_hash(host, strlen(host));
}

static void job_free(struct job *j)
{
	for (int i = 0; i < j->ncomms; i++) { free(j->comms[i].r); free(j->comms[i].m); }
	free(j->comms);
	free(j->peers);
}

static int job_collect(struct job *j)
{
	memset(j, 0, sizeof *j);
	j->start_ns = now_ns();
	peer_add(j, (int)getpid());
	DIR *d = opendir(sim_env.dir);
	if (!d) return 0;
	struct sim_shm_view *views = NULL;
	int nviews = 0, vcap = 0;
	struct dirent *e;
	char path[4400];
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "comm-", 5) || strchr(e->d_name, '.')) continue;
		snprintf(path, sizeof path, "%s/%s", sim_env.dir, e->d_name);
		struct sim_shm_view v;
		if (sim_shm_map_ranks(path, &v)) continue;
		/* NCCL reports a comm only once its peer info was exchanged
		 * (peerInfoValid): after every rank joined the bootstrap. */
		if (__atomic_load_n(&v.hdr->joined_count, __ATOMIC_ACQUIRE) < v.hdr->nranks) { sim_shm_unmap_ranks(&v); continue; }
		if (nviews == vcap) {
			vcap = vcap ? 2 * vcap : 16;
			struct sim_shm_view *n = realloc(views, vcap * sizeof *n);
			if (!n) { sim_shm_unmap_ranks(&v); break; }
			views = n;
		}
		views[nviews++] = v;
	}
	closedir(d);
	/* The job: the processes connected to this one through communicators
	 * (NCCL's RAS network grows from each comm's peers), not every file a
	 * dead earlier job left in NCCLSIM_DIR. */
	char *in_job = calloc(nviews ? nviews : 1, 1);
	for (int changed = 1; in_job && changed;) {
		changed = 0;
		for (int i = 0; i < nviews; i++) {
			if (in_job[i]) continue;
			struct sim_shm_view *v = &views[i];
			int linked = 0;
			for (int r = 0; r < v->hdr->nranks && !linked; r++)
				linked = __atomic_load_n(&v->rank[r].joined, __ATOMIC_ACQUIRE) && peer_find(j, v->rank[r].pid);
			if (!linked) continue;
			in_job[i] = changed = 1;
			for (int r = 0; r < v->hdr->nranks; r++) {
				if (!__atomic_load_n(&v->rank[r].joined, __ATOMIC_ACQUIRE)) continue;
				struct peer *p = peer_add(j, v->rank[r].pid);
				if (p && v->rank[r].device >= 0 && v->rank[r].device < 64) p->devs |= 1ull << v->rank[r].device;
			}
		}
	}
	for (int i = 0; i < nviews; i++)
		if (!in_job || !in_job[i]) sim_shm_unmap_ranks(&views[i]);
	int kept = 0;
	for (int i = 0; i < nviews; i++)
		if (in_job && in_job[i]) views[kept++] = views[i];
	nviews = kept;
	free(in_job);
	int64_t now = now_ns();
	for (int i = 0; i < j->npeers; i++) {
		peer_judge(&j->peers[i], now);
		if (j->peers[i].dead) j->dead++;
		else if (!j->peers[i].responsive) j->missing++;
		if (j->peers[i].timed_out) j->timeouts++;
	}
	j->comms = calloc(nviews ? nviews : 1, sizeof *j->comms);
	uint64_t hbase = host_hash_base();
	for (int i = 0; j->comms && i < nviews; i++) {
		struct sim_shm_view *v = &views[i];
		int n = v->hdr->nranks;
		struct rcomm *c = &j->comms[j->ncomms];
		c->r = calloc(n, sizeof *c->r);
		c->m = calloc(n, sizeof *c->m);
		if (!c->r || !c->m) { free(c->r); free(c->m); continue; }
		c->size = n;
		for (int r = 0; r < n; r++) {
			struct sim_rank_shared *rs = &v->rank[r];
			struct peer *p = peer_find(j, rs->pid);
			int left = __atomic_load_n(&rs->left, __ATOMIC_ACQUIRE);
			if (p && p->responsive && !left) {
				struct rrank *rr = &c->r[c->nr++];
				rr->rank = r;
				rr->pid = rs->pid;
				rr->dev = rs->device;
				/* field by field with atomics: the owner writes them meanwhile */
				rr->st.comm_hash = __atomic_load_n(&rs->ras.comm_hash, __ATOMIC_ACQUIRE);
				for (int f = 0; f < SIM_RAS_NFUNCS; f++)
					rr->st.coll_counts[f] = __atomic_load_n(&rs->ras.coll_counts[f], __ATOMIC_ACQUIRE);
				rr->st.init_state = __atomic_load_n(&rs->ras.init_state, __ATOMIC_ACQUIRE);
				rr->st.async_error = __atomic_load_n(&rs->ras.async_error, __ATOMIC_ACQUIRE);
				rr->st.finalize_called = __atomic_load_n(&rs->ras.finalize_called, __ATOMIC_ACQUIRE);
				rr->st.destroy_flag = __atomic_load_n(&rs->ras.destroy_flag, __ATOMIC_ACQUIRE);
				rr->st.abort_flag = __atomic_load_n(&rs->ras.abort_flag, __ATOMIC_ACQUIRE);
				if (!c->hash) c->hash = rr->st.comm_hash;
			} else {
				struct mrank *m = &c->m[c->nm++];
				m->rank = r;
				m->pid = rs->pid;
				m->dev = rs->device;
				m->unresponsive = !p || !p->responsive;
				m->dead = p && p->dead;
			}
		}
		/* Only responding processes tell about a comm: none left, no comm. */
		if (c->nr == 0) { free(c->r); free(c->m); memset(c, 0, sizeof *c); continue; }
		c->host_hash = hbase + c->hash;           /* peerInfo[0].hostHash, of rank 0 */
		int32_t pid0 = v->rank[0].pid;
		c->pid_hash = sim_ras_hash(&pid0, sizeof pid0) + c->hash;
		qsort(c->r, c->nr, sizeof *c->r, cmp_rrank);
		qsort(c->m, c->nm, sizeof *c->m, cmp_mrank);
		j->ncomms++;
	}
	for (int i = 0; i < nviews; i++) sim_shm_unmap_ranks(&views[i]);
	free(views);
	qsort(j->comms, j->ncomms, sizeof *j->comms, cmp_comm);
	return 0;
}

/* ---- output buffer ---- */
struct out { char *buf; size_t len, cap; };

static void out_append(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out_append(struct out *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int need = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (need < 0) return;
	if (o->len + need + 1 > o->cap) {
		size_t cap = (o->len + need + 1 + 4095) & ~(size_t)4095;
		char *n = realloc(o->buf, cap);
		if (!n) return;
		o->buf = n;
		o->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
	va_end(ap);
	o->len += need;
}

static const char *const func_name[SIM_RAS_NFUNCS] = { "Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce" };
#define HOST "127.0.0.1"   /* the simulation's one host, as NCCL prints a peer's bootstrap address */

static int driver_version(void)
{
	int v = -1;
	cuDriverGetVersion(&v);
	return v;
}

/* client_support.cc, rasDumpCommsToJSON and the json* helpers, verbatim formats */
static void report_json(struct out *o, struct job *j)
{
	char tbuf[64];
	time_t t = time(NULL);
	struct tm tmb;
	strftime(tbuf, sizeof tbuf, "%F %T", localtime_r(&t, &tmb));
	out_append(o, "{\n");
	out_append(o, "  \"nccl_version\": \"%d.%d.%d%s\",\n", NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH, NCCL_SUFFIX);
	out_append(o, "  \"cuda_runtime_version\": %d,\n", CUDA_VERSION);
	out_append(o, "  \"cuda_driver_version\": %d,\n", driver_version());
	out_append(o, "  \"timestamp\": \"%s\",\n", tbuf);
	out_append(o, "  \"communicators_count\": %d,\n", j->ncomms);
	out_append(o, "  \"communicators\": [\n");
	for (int ci = 0; ci < j->ncomms; ci++) {
		struct rcomm *c = &j->comms[ci];
		if (ci) out_append(o, ",\n");
		out_append(o, "    {\n");
		out_append(o, "      \"hash\": \"0x%lx\",\n", (unsigned long)c->hash);
		out_append(o, "      \"secondary_hash\": \"0x%lx:0x%lx\",\n", (unsigned long)c->host_hash, (unsigned long)c->pid_hash);
		out_append(o, "      \"size\": %d,\n", c->size);
		out_append(o, "      \"ranks_count\": %d,\n", c->nr);
		out_append(o, "      \"missing_ranks_count\": %d,\n", c->nm);
		out_append(o, "      \"ranks\": [\n");
		for (int i = 0; i < c->nr; i++) {
			struct rrank *r = &c->r[i];
			if (i) out_append(o, ",\n");
			out_append(o, "        {\n");
			out_append(o, "          \"rank\": %d,\n", r->rank);
			out_append(o, "          \"host\": \"%s\",\n", HOST);
			out_append(o, "          \"pid\": %d,\n", r->pid);
			out_append(o, "          \"cuda_dev\": %d,\n", r->dev);
			out_append(o, "          \"nvml_dev\": %d,\n", r->dev);
			out_append(o, "          \"status\": {\n");
			out_append(o, "            \"init_state\": %d,\n", r->st.init_state);
			out_append(o, "            \"async_error\": %d,\n", r->st.async_error);
			out_append(o, "            \"finalize_called\": %s,\n", r->st.finalize_called ? "true" : "false");
			out_append(o, "            \"destroy_flag\": %s,\n", r->st.destroy_flag ? "true" : "false");
			out_append(o, "            \"abort_flag\": %s\n", r->st.abort_flag ? "true" : "false");
			out_append(o, "          },\n");
			out_append(o, "          \"collective_counts\": {\n");
			for (int f = 0; f < SIM_RAS_NFUNCS; f++) {
				out_append(o, "            \"%s\": %lu", func_name[f], (unsigned long)r->st.coll_counts[f]);
				if (f < SIM_RAS_NFUNCS - 1) out_append(o, ",");
				out_append(o, "\n");
			}
			out_append(o, "          }\n");
			out_append(o, "        }");
		}
		out_append(o, "\n      ],\n");
		out_append(o, "      \"missing_ranks\": [\n");
		for (int i = 0; i < c->nm; i++) {
			struct mrank *m = &c->m[i];
			if (i) out_append(o, ",\n");
			out_append(o, "        {\n");
			out_append(o, "          \"rank\": %d,\n", m->rank);
			out_append(o, "          \"host\": \"%s\",\n", HOST);
			out_append(o, "          \"pid\": %d,\n", m->pid);
			out_append(o, "          \"cuda_dev\": %d,\n", m->dev);
			out_append(o, "          \"nvml_dev\": %d\n", m->dev);
			out_append(o, "          \"status\": {\n");
			out_append(o, "            \"unresponsive\": %s,\n", m->unresponsive ? "true" : "false");
			out_append(o, "            \"considered_dead\": %s\n", m->dead ? "true" : "false");
			out_append(o, "          }\n");
			out_append(o, "        }");
		}
		out_append(o, "\n      ]\n");
		out_append(o, "    }");
	}
	out_append(o, "\n  ],\n");
	out_append(o, "  \"ras\": {\n");
	out_append(o, "    \"collection_time_sec\": %.3f,\n", (now_ns() - j->start_ns) / 1e9);
	out_append(o, "    \"timeouts_count\": %d\n", j->timeouts);
	out_append(o, "  }\n");
	out_append(o, "}\n");
}

/* ---- the text format: client_support.cc's keywords and line formats ---- */
enum { ACS_NOCOMM = 1, ACS_INIT = 2, ACS_RUNNING = 4, ACS_FINALIZE = 8, ACS_ABORT = 16 };
enum { ACE_MISMATCH = 1, ACE_ERROR = 2, ACE_INCOMPLETE = 4 };
static const char *const status_str[] = { "NOCOMM", "INIT", "RUNNING", "FINALIZE", "ABORT" };
static const char *const error_str[] = { "OK", "MISMATCH", "ERROR", "ERROR,MISMATCH", "INCOMPLETE",
	"INCOMPLETE,MISMATCH", "INCOMPLETE,ERROR", "INCOMPLETE,ERROR,MISMATCH" };

static int top_bit(unsigned v) { return 31 - __builtin_clz(v); }

static unsigned rank_status(const struct sim_ras_rank *s)
{
	if (s->abort_flag) return ACS_ABORT;
	if (s->finalize_called || s->destroy_flag) return ACS_FINALIZE;
	if (s->init_state == ncclSuccess) return ACS_RUNNING;
	return ACS_INIT;
}

static const char *error_string(int e)
{
	switch (e) {
	case ncclUnhandledCudaError: return "Unhandled CUDA error";
	case ncclSystemError: return "System error";
	case ncclInternalError: return "Internal error";
	case ncclInvalidArgument: return "Invalid argument";
	case ncclInvalidUsage: return "Invalid usage";
	case ncclRemoteError: return "Remote process error";
	case ncclInProgress: return "NCCL operation in progress";
	default: return "Unexpected error";
	}
}

/* rasCountIsOutlier */
static int outlier(int count, int verbose, int total)
{
	if (count == 1) return 1;
	if (verbose) return total != -1 ? count < total * 0.5 : 1;
	return count <= 10 && (total == -1 || count <= total * 0.25);
}

static void comm_classify(struct job *j, struct rcomm *c)
{
	for (int i = 0; i < c->nm; i++) {
		if (j->missing == 0 && j->dead == 0) { c->errors |= ACE_MISMATCH; c->status |= ACS_NOCOMM; }
		else if (!c->m[i].unresponsive) { c->errors |= ACE_MISMATCH; c->status |= ACS_NOCOMM; }
		else { c->errors |= ACE_INCOMPLETE; c->nincomplete++; }
	}
	for (int i = 0; i < c->nr; i++) {
		const struct sim_ras_rank *s = &c->r[i].st;
		c->status |= rank_status(s);
		for (int f = 0; f < SIM_RAS_NFUNCS; f++)
			if (s->coll_counts[f] != c->r[0].st.coll_counts[f]) c->errors |= ACE_MISMATCH;
		if (s->init_state != ncclSuccess && s->init_state != ncclInProgress) c->errors |= ACE_ERROR;
		if (s->async_error != ncclSuccess && s->async_error != ncclInProgress) c->errors |= ACE_ERROR;
	}
	if (__builtin_popcount(c->status) > 1) c->errors |= ACE_MISMATCH;
}

/* "  Process P on node H managing GPU(s) a,b" (rasGpuDevsToString) */
static void peer_line(struct out *o, const struct peer *p)
{
	char devs[256] = "";
	size_t n = 0;
	for (int d = 0; d < 64; d++)
		if (p->devs & (1ull << d)) n += (size_t)snprintf(devs + n, sizeof devs - n, "%s%d", n ? "," : "", d);
	out_append(o, "  Process %d on node %s managing GPU%s %s\n", p->pid, HOST, __builtin_popcountll(p->devs) > 1 ? "s" : "", devs);
}

static void rank_line(struct out *o, const char *prefix, int rank, const char *what, int dev, int pid)
{
	if (what) out_append(o, "%sRank %d %s -- GPU %d managed by process %d on node %s\n", prefix, rank, what, dev, pid, HOST);
	else out_append(o, "%sRank %d -- GPU %d managed by process %d on node %s\n", prefix, rank, dev, pid, HOST);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static void report_text_comms(struct out *o, struct job *j, int verbose)
{
	out_append(o, " (%.3fs)\n=============\n\n", (now_ns() - j->start_ns) / 1e9);
	for (int i = 0; i < j->ncomms; i++) comm_classify(j, &j->comms[i]);
	if (j->ncomms > 0)
		out_append(o, "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors\n"
		              "    #  in group  per comm  per node  per comm  in group\n");
	else
		out_append(o, "No communicator data collected!\n");
	/* one group per communicator (the simulation has one node; NCCL groups
	 * comms of equal size, node count, status and errors) */
	for (int i = 0; i < j->ncomms; i++) {
		struct rcomm *c = &j->comms[i];
		char rpn[32];
		snprintf(rpn, sizeof rpn, "%d", c->nr);
		out_append(o, "%5d  %8d  %8d  %8s  %8d  %8d  %8s  %6s\n", i, 1, 1, rpn, c->size, c->nr,
		           status_str[top_bit(c->status)], error_str[c->errors & 7]);
	}
	out_append(o, "\nErrors\n======\n\n");
	if (j->missing > 0) {
		out_append(o, "INCOMPLETE\n  Missing communicator data from %d job process%s\n", j->missing, j->missing > 1 ? "es" : "");
		if (outlier(j->missing, verbose, -1))
			for (int i = 0; i < j->npeers; i++)
				if (!j->peers[i].responsive && !j->peers[i].dead)
					peer_line(o, &j->peers[i]);
		out_append(o, "\n");
	}
	if (j->dead > 0) {
		out_append(o, "DEAD\n  %d job process%s considered dead (unreachable via the RAS network)\n", j->dead,
		           j->dead > 1 ? "es are" : " is");
		if (outlier(j->dead, verbose, -1))
			for (int i = 0; i < j->npeers; i++)
				if (j->peers[i].dead) peer_line(o, &j->peers[i]);
		out_append(o, "\n");
	}
	for (int i = 0; i < j->ncomms; i++) {
		struct rcomm *c = &j->comms[i];
		if (c->errors & ACE_INCOMPLETE) {
			out_append(o, "#%d-%d (%016lx) INCOMPLETE\n  Missing communicator data from %d rank%s\n", i, 0,
			           (unsigned long)c->hash, c->nincomplete, c->nincomplete > 1 ? "s" : "");
			if (outlier(c->nincomplete, verbose, -1))
				for (int k = 0; k < c->nm; k++)
					if (c->m[k].unresponsive) rank_line(o, "  ", c->m[k].rank, NULL, c->m[k].dev, c->m[k].pid);
			out_append(o, "\n");
		}
		if (c->errors & ACE_ERROR) {
			out_append(o, "#%d-%d (%016lx) ERROR\n", i, 0, (unsigned long)c->hash);
			for (int async = 0; async < 2; async++) {
				int n = 0, counts[ncclNumResults + 1] = { 0 };
				for (int k = 0; k < c->nr; k++) {
					int e = async ? c->r[k].st.async_error : c->r[k].st.init_state;
					if (e != ncclSuccess && e != ncclInProgress && e > 0 && e < ncclNumResults) { n++; counts[e]++; }
				}
				if (!n) continue;
				out_append(o, "  %s error%s on %d rank%s\n", async ? "Asynchronous" : "Initialization",
				           n > 1 ? "s" : "", n, n > 1 ? "s" : "");
				for (;;) {
					int best = 0;
					for (int e = ncclUnhandledCudaError; e < ncclInProgress; e++) if (counts[e] > counts[best]) best = e;
					if (!best || !counts[best]) break;
					if (counts[best] > 1) out_append(o, "  %d ranks reported %s\n", counts[best], error_string(best));
					if (outlier(counts[best], verbose, -1))
						for (int k = 0; k < c->nr; k++) {
							int e = async ? c->r[k].st.async_error : c->r[k].st.init_state;
							if (e != best) continue;
							char what[128];
							snprintf(what, sizeof what, "reported %s", error_string(best));
							rank_line(o, "  ", c->r[k].rank, counts[best] > 1 ? NULL : what, c->r[k].dev, c->r[k].pid);
						}
					counts[best] = 0;
				}
			}
			out_append(o, "\n");
		}
	}
	out_append(o, "Warnings\n========\n\n");
	if (j->timeouts > 0)
		out_append(o, "TIMEOUT\n  Encountered %d communication timeout%s while gathering communicator data\n\n",
		           j->timeouts, j->timeouts > 1 ? "s" : "");
	for (int i = 0; i < j->ncomms; i++) {
		struct rcomm *c = &j->comms[i];
		if (!(c->errors & ACE_MISMATCH)) continue;
		out_append(o, "#%d-%d (%016lx) MISMATCH\n", i, 0, (unsigned long)c->hash);
		if (__builtin_popcount(c->status) > 1) {
			out_append(o, "  Communicator ranks have different status\n");
			unsigned seen = 0;
			for (int k = 0; k < c->nr; k++) seen |= rank_status(&c->r[k].st);
			for (int b = 4; b >= 1; b--) {
				if (!(seen & (1u << b))) continue;
				int n = 0;
				for (int k = 0; k < c->nr; k++) n += rank_status(&c->r[k].st) == (1u << b);
				if (n > 1) out_append(o, "  %d ranks have status %s\n", n, status_str[b]);
				if (outlier(n, verbose, c->size))
					for (int k = 0; k < c->nr; k++) {
						if (rank_status(&c->r[k].st) != (1u << b)) continue;
						char what[64];
						snprintf(what, sizeof what, "has status %s", status_str[b]);
						rank_line(o, "  ", c->r[k].rank, n > 1 ? NULL : what, c->r[k].dev, c->r[k].pid);
					}
			}
			int nocomm = 0;
			for (int k = 0; k < c->nm; k++) nocomm += !c->m[k].unresponsive;
			if (nocomm > 1) out_append(o, "  %d ranks have status %s\n", nocomm, status_str[0]);
			if (nocomm && outlier(nocomm, verbose, c->size))
				for (int k = 0; k < c->nm; k++)
					if (!c->m[k].unresponsive)
						rank_line(o, "  ", c->m[k].rank, nocomm > 1 ? NULL : "has status NOCOMM", c->m[k].dev, c->m[k].pid);
		}
		for (int f = 0; f < SIM_RAS_NFUNCS; f++) {
			int inconsistent = 0;
			for (int k = 0; k < c->nr; k++) inconsistent |= c->r[k].st.coll_counts[f] != c->r[0].st.coll_counts[f];
			if (!inconsistent) continue;
			out_append(o, "  Communicator ranks have different %s operation counts\n", func_name[f]);
			uint64_t *vals = malloc(c->nr * sizeof *vals);
			if (!vals) continue;
			for (int k = 0; k < c->nr; k++) vals[k] = c->r[k].st.coll_counts[f];
			qsort(vals, c->nr, sizeof *vals, cmp_u64);
			/* distinct values, most frequent first (ties: larger value first) */
			int done = 0;
			while (done < c->nr) {
				uint64_t bestv = 0;
				int bestn = 0;
				for (int k = 0; k < c->nr;) {
					int n = 1;
					while (k + n < c->nr && vals[k + n] == vals[k]) n++;
					if (vals[k] != UINT64_MAX && (n > bestn || (n == bestn && vals[k] > bestv))) { bestn = n; bestv = vals[k]; }
					k += n;
				}
				if (!bestn) break;
				if (bestn > 1) {
					if (bestv > 0) out_append(o, "  %d ranks have launched up to operation %lu\n", bestn, (unsigned long)bestv);
					else out_append(o, "  %d ranks have not launched any operations\n", bestn);
				}
				if (outlier(bestn, verbose, c->size))
					for (int k = 0; k < c->nr; k++) {
						if (c->r[k].st.coll_counts[f] != bestv) continue;
						char what[96];
						if (bestv > 0) snprintf(what, sizeof what, "has launched up to operation %lu", (unsigned long)bestv);
						else snprintf(what, sizeof what, "has not launched any operations");
						rank_line(o, "  ", c->r[k].rank, bestn > 1 ? NULL : what, c->r[k].dev, c->r[k].pid);
					}
				for (int k = 0; k < c->nr; k++) if (vals[k] == bestv) vals[k] = UINT64_MAX;
				done += bestn;
			}
			free(vals);
			out_append(o, "\n");
		}
	}
}

static void report_text_head(struct out *o, struct job *j)
{
	int gpus = 0;
	for (int i = 0; i < j->npeers; i++) gpus += __builtin_popcountll(j->peers[i].devs);
	out_append(o, "NCCL version %d.%d.%d%s compiled with CUDA %d.%d\n", NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH, NCCL_SUFFIX,
	           CUDA_VERSION / 1000, (CUDA_VERSION % 1000) / 10);
	out_append(o, "CUDA runtime version %d, driver version %d\n\n", CUDA_VERSION, driver_version());
	out_append(o, "Job summary\n===========\n\n");
	out_append(o, "  Nodes  Processes         GPUs  Processes     GPUs\n"
	              "(total)   per node  per process    (total)  (total)\n"
	              "%7d  %9d  %11d  %9d  %7d\n", 1, j->npeers, j->npeers ? __builtin_popcountll(j->peers[0].devs) : 0,
	              j->npeers, gpus);
	out_append(o, "\nCommunicators...");
}

/* ---- the client connection ---- */
struct client { int fd; };

static int send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0) { if (errno == EINTR) continue; return -1; }
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static void reply(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reply(int fd, const char *fmt, ...)
{
	char line[1100];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof line - 1) n = sizeof line - 1;
	if (n > 0) send_all(fd, line, n);
}

static void run_status(int fd, int json, int verbose)
{
	struct job j;
	struct out o = { 0 };
	if (!json) {
		/* the head goes out before the data is gathered, as in NCCL */
		job_collect(&j);
		report_text_head(&o, &j);
		send_all(fd, o.buf, o.len);
		o.len = 0;
		report_text_comms(&o, &j, verbose);
	} else {
		job_collect(&j);
		report_json(&o, &j);
	}
	if (o.buf) send_all(fd, o.buf, o.len);
	free(o.buf);
	job_free(&j);
}

static void *client_main(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char buf[RAS_RECV_BUFFER];
	size_t off = 0;
	int json = 0;
	for (;;) {
		ssize_t n = recv(fd, buf + off, sizeof buf - off, 0);
		if (n < 0 && errno == EINTR) continue;
		if (n <= 0) break;
		off += (size_t)n;
		char *cmd = buf, *end;
		while ((end = memchr(cmd, '\n', off - (size_t)(cmd - buf)))) {
			*end = 0;
			if (end > cmd && end[-1] == '\r') end[-1] = 0;
			if (!strncasecmp(cmd, "client protocol ", 16)) {
				reply(fd, "SERVER PROTOCOL %d\n", RAS_CLIENT_PROTOCOL);  /* the client's version is ignored */
			} else if (!strncasecmp(cmd, "timeout ", 8)) {
				char *e = NULL;
				long t = strtol(cmd + 8, &e, 10);
				if (t < 0 || !e || *e) reply(fd, "ERROR: Invalid timeout value %s\n", cmd + 8);
				else reply(fd, "OK\n");  /* nothing here waits on the network */
			} else if (!strncasecmp(cmd, "set format ", 11)) {
				const char *f = cmd + 11;
				if (!strcasecmp(f, "text")) { json = 0; reply(fd, "OK\n"); }
				else if (!strcasecmp(f, "json")) { json = 1; reply(fd, "OK\n"); }
				else reply(fd, "ERROR: Invalid format %s\n", f);
			} else if (!strcasecmp(cmd, "status") || !strcasecmp(cmd, "verbose status")) {
				/* the report is streamed, then the server closes */
				run_status(fd, json, !strcasecmp(cmd, "verbose status"));
				goto done;
			} else {
				reply(fd, "ERROR: Unknown command %s\n", cmd);
			}
			cmd = end + 1;
		}
		if (cmd == buf) {
			if (off == sizeof buf) break;  /* no newline in 1024 bytes: NCCL terminates the client */
		} else {
			memmove(buf, cmd, off - (size_t)(cmd - buf));
			off -= (size_t)(cmd - buf);
		}
	}
done:
	close(fd);
	return NULL;
}

/* ---- the RAS thread ---- */
static int listen_fd = -1;

static int open_listener(void)
{
	const char *addr = getenv("NCCL_RAS_ADDR");
	char host[1024], port[64];
	if (!addr || !*addr) addr = "localhost:" RAS_CLIENT_PORT;
	const char *colon;
	if (addr[0] == '[') {  /* [v6addr]:port */
		const char *rb = strchr(addr, ']');
		if (!rb || rb[1] != ':') return -1;
		snprintf(host, sizeof host, "%.*s", (int)(rb - addr - 1), addr + 1);
		colon = rb + 1;
	} else {
		colon = strrchr(addr, ':');
		if (!colon) return -1;
		snprintf(host, sizeof host, "%.*s", (int)(colon - addr), addr);
	}
	snprintf(port, sizeof port, "%s", colon + 1);
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai = NULL;
	if (getaddrinfo(host, port, &hints, &ai) || !ai) return -1;
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 16384)) {
		sim_debug("RAS failed to establish a client listening socket at %s", addr);
		if (fd >= 0) close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	return fd;
}

static void *ras_main(void *arg)
{
	(void)arg;
	int interval_ms = (int)(RAS_KEEPALIVE_INTERVAL_SEC * 1000 * (factor > 0 ? factor : 1));
	for (;;) {
		heartbeat();
		struct pollfd p = { .fd = listen_fd, .events = POLLIN };
		int n = poll(&p, listen_fd >= 0 ? 1 : 0, interval_ms);
		if (n <= 0 || !(p.revents & POLLIN)) continue;
		int c = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0) continue;
		pthread_t t;
		pthread_attr_t attr;
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &attr, client_main, (void *)(intptr_t)c)) close(c);
		pthread_attr_destroy(&attr);
	}
	return NULL;
}

static void ras_start(void)
{
	/* bootstrap.cc: RAS only if ncclParamRasEnable() == 1 */
	if (env_ll("NCCL_RAS_ENABLE", 1) != 1) return;
	factor = env_ll("NCCL_RAS_TIMEOUT_FACTOR", 1);
	dead_ms = env_ll("NCCLSIM_RAS_DEAD_MS", -1);
	heartbeat_open();
	listen_fd = open_listener();
	/* The RAS thread must not take signals meant for the application. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_t t;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, ras_main, NULL) == 0) pthread_setname_np(t, "NCCL RAS");
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}
