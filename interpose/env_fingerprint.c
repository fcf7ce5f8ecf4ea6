/* env_fingerprint: see env_fingerprint.h. The allowlist: NCCL_*,
 * TORCH_NCCL_*, TORCH_FR_*, NCCLWATCH_*, and a fixed set of names about devices,
 * threads, ranks and the launcher. */
#include "env_fingerprint.h"

#include <string.h>

extern char **environ;

/* TORCH_FR_*: where a Flight Recorder dump of the same job goes (report/sources/fr/). */
static const char *const nw_env_prefixes[] = { "NCCL_", "TORCH_NCCL_", "TORCH_FR_", "NCCLWATCH_", NULL };
static const char *const nw_env_names[] = {
	"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_MAX_CONNECTIONS", "TORCH_DISTRIBUTED_DEBUG",
	"XLA_FLAGS", "JAX_PLATFORMS", "OMP_NUM_THREADS",
	"RANK", "LOCAL_RANK", "WORLD_SIZE", "SLURM_JOB_ID", "SLURM_PROCID",
	"OMPI_COMM_WORLD_RANK", "TORCHELASTIC_RUN_ID", "MASTER_ADDR", "MASTER_PORT", NULL
};

int nw_env_allowed(const char *name)
{
	size_t len = strcspn(name, "=");
	for (const char *const *p = nw_env_prefixes; *p; p++)
		if (len > strlen(*p) && !strncmp(name, *p, strlen(*p)))
			return 1;
	for (const char *const *n = nw_env_names; *n; n++)
		if (len == strlen(*n) && !strncmp(name, *n, len))
			return 1;
	return 0;
}

void nw_env_fingerprint(char *out, size_t size)
{
	nw_env_fingerprint_of(environ, out, size);
}

void nw_env_fingerprint_of(char *const *env, char *out, size_t size)
{
	size_t used = 0;
	memset(out, 0, size);
	if (size < 2 || !env)
		return;
	for (char *const *e = env; *e; e++) {
		if (!strchr(*e, '=') || !nw_env_allowed(*e))
			continue;
		size_t len = strlen(*e) + 1;
		if (used + len + 1 > size)     /* keep the final empty string */
			continue;
		memcpy(out + used, *e, len);
		used += len;
	}
}
