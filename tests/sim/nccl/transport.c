/* Transport selection of the simulated NCCL: a model of a reported field
 * failure, ranks of one communicator that run with different NCCL_P2P_*
 * settings and so select different transports to each other.
 *
 * NCCL picks, for each pair of ranks, the first transport both can use
 * (P2P through NVLink or PCI, else SHM through host memory, else NET), from
 * the topology and from each process's own environment: NCCL_P2P_DISABLE=1
 * turns P2P off, NCCL_P2P_LEVEL bounds the GPU-to-GPU path P2P may take
 * (LOC: never), NCCL_SHM_DISABLE=1 turns SHM off. Each rank reads its
 * variables once, at its first communicator init, and publishes its choice
 * with its other data in the communicator's shared file. Connections are
 * set up lazily, at the first collective (the ring's neighbours) or the
 * first send/receive with a peer: when the two ends of a connection chose
 * different transports, each waits for a handshake the other never sends,
 * so the op is started on every rank concerned and never completes. No
 * error anywhere; only ncclCommAbort ends it, as with NCCLSIM_FAULT=stall.
 *
 * The simulated machine: every pair of its GPUs is connected by NVLink
 * (path NVL), so P2P is chosen unless NCCL_P2P_DISABLE=1 or
 * NCCL_P2P_LEVEL=LOC (or legacy 0).
 */
#include "sim_nccl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Path types, shortest first (NCCL's order). */
enum { PATH_LOC, PATH_NVL, PATH_NVB, PATH_PIX, PATH_PXB, PATH_PHB, PATH_SYS };
#define SIM_GPU_PATH PATH_NVL  /* between any two GPUs of the simulated machine */

static struct sim_transport_env local_env;
static pthread_once_t local_once = PTHREAD_ONCE_INIT;

static int flag(const char *name)
{
	const char *s = getenv(name);
	return s && *s && atoi(s) != 0;
}

static int level(const char *s)
{
	static const struct { const char *name; int path; } names[] = {
		{ "LOC", PATH_LOC }, { "NVL", PATH_NVL }, { "NVB", PATH_NVB }, { "PIX", PATH_PIX },
		{ "PXB", PATH_PXB }, { "PHB", PATH_PHB }, { "SYS", PATH_SYS },
	};
	if (!s || !*s)
		return -1;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcasecmp(s, names[i].name))
			return names[i].path;
	char *end;
	long v = strtol(s, &end, 10);
	if (!*end && v >= 0)  /* legacy integers: 0 is LOC, any other allows at least PIX */
		return v == 0 ? PATH_LOC : PATH_PIX + (int)(v > 3 ? 3 : v - 1);
	sim_debug("NCCL_P2P_LEVEL=%s not understood; ignored", s);
	return -1;
}

static void local_load(void)
{
	local_env.p2p_disable = flag("NCCL_P2P_DISABLE");
	local_env.p2p_level = level(getenv("NCCL_P2P_LEVEL"));
	local_env.shm_disable = flag("NCCL_SHM_DISABLE");
	int p2p = !local_env.p2p_disable && (local_env.p2p_level < 0 || local_env.p2p_level >= SIM_GPU_PATH);
	local_env.transport = p2p ? SIM_TR_P2P : !local_env.shm_disable ? SIM_TR_SHM : SIM_TR_NET;
}

void sim_transport_publish(struct sim_transport_env *out)
{
	pthread_once(&local_once, local_load);
	*out = local_env;
}

const char *sim_transport_name(int transport)
{
	switch (transport) {
	case SIM_TR_P2P: return "P2P";
	case SIM_TR_SHM: return "SHM";
	case SIM_TR_NET: return "NET";
	default: return "none";
	}
}

static int transport_of(const struct sim_shm_view *v, int rank)
{
	return __atomic_load_n(&v->rank[rank].transport.transport, __ATOMIC_ACQUIRE);
}

int sim_transport_connects(ncclComm_t c, int peer)
{
	const struct sim_shm_view *v = &c->shm;
	int n = c->nranks;
	if (peer >= 0)
		return transport_of(v, c->rank) == transport_of(v, peer);
	/* A collective: the ring through all ranks in rank order. */
	for (int r = 0; r < n; r++)
		if (transport_of(v, r) != transport_of(v, (r + 1) % n)) {
			sim_debug("comm %s rank %d: ring connection %d -> %d never completes: %s there, %s here",
			          c->keyhex, c->rank, r, (r + 1) % n, sim_transport_name(transport_of(v, r)),
			          sim_transport_name(transport_of(v, (r + 1) % n)));
			return 0;
		}
	return 1;
}
