/* job: job id and launcher ranks (see job.h). */
#include "job.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void nw_job_sanitize(char *s)
{
	for (char *p = s; *p; p++) {
		char c = *p;
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
		      || c == '.' || c == '_' || c == '-'))
			*p = '_';
	}
	if (!s[0] || !strcmp(s, ".") || !strcmp(s, ".."))
		strcpy(s, "job");
}

/* The environment the job's facts come from: this process's (getenv),
 * or another's (`ncclwatch attach` reads /proc/PID/environ). */
struct env {
	nw_env_get_fn get;
	void *ctx;
};

static const char *env_nonempty(const struct env *e, const char *name)
{
	const char *v = e->get(name, e->ctx);
	return v && *v ? v : NULL;
}

static const char *own_env(const char *name, void *ctx)
{
	(void)ctx;
	return getenv(name);
}

/* Field 22 of /proc/<pid>/stat (see job.h). */
unsigned long long nw_process_start_ticks(pid_t pid)
{
	char path[64], buf[1024];
	if (pid > 0)
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/stat");
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')');       /* the command name may hold spaces */
	if (!p)
		return 0;
	unsigned long long start = 0;
	/* after ")": state(3) ppid(4) ... starttime(22) */
	p++;
	for (int field = 3; field <= 22 && *p; field++) {
		while (*p == ' ')
			p++;
		if (field == 22)
			start = strtoull(p, NULL, 10);
		while (*p && *p != ' ')
			p++;
	}
	return start;
}

/* torchrun's workers on more than one node (GROUP_WORLD_SIZE: the nodes). */
static int multi_node_torchrun(const struct env *e)
{
	const char *nodes = env_nonempty(e, "GROUP_WORLD_SIZE");
	return env_nonempty(e, "TORCHELASTIC_RUN_ID") && nodes && strcmp(nodes, "1") != 0 && env_nonempty(e, "MASTER_ADDR") && env_nonempty(e, "MASTER_PORT");
}

void nw_job_id(char *out, size_t size)
{
	nw_job_id_env(own_env, NULL, getppid(), out, size);
}

void nw_job_id_env(nw_env_get_fn get, void *ctx, pid_t ppid, char *out, size_t size)
{
	const struct env env = { get, ctx }, *e = &env;
	const char *v;
	if ((v = env_nonempty(e, "NCCLWATCH_JOB"))) {
		snprintf(out, size, "%s", v);
	} else if ((v = env_nonempty(e, "TORCHELASTIC_RUN_ID")) && strcmp(v, "none") != 0) {
		snprintf(out, size, "%s", v);
	} else if ((v = env_nonempty(e, "SLURM_JOB_ID"))) {
		const char *step = env_nonempty(e, "SLURM_STEP_ID");
		if (step)
			snprintf(out, size, "%s.%s", v, step);
		else
			snprintf(out, size, "%s", v);
	} else if (multi_node_torchrun(e)) {
		/* torchrun without --rdzv_id names every job "none". Across nodes
		 * only the store's address is shared, and it is unique among the
		 * jobs running at one time (one listening port). */
		snprintf(out, size, "torchrun-%s-%s", env_nonempty(e, "MASTER_ADDR"), env_nonempty(e, "MASTER_PORT"));
	} else if ((v = env_nonempty(e, "OMPI_MCA_orte_hnp_uri")) && strcspn(v, ".;") > 0) {
		snprintf(out, size, "%.*s", (int)strcspn(v, ".;"), v);
	} else if ((v = env_nonempty(e, "PMIX_NAMESPACE"))) {
		snprintf(out, size, "%s", v);
	} else {
		snprintf(out, size, "ppid-%d-%llu", (int)ppid, nw_process_start_ticks(ppid));
	}
	nw_job_sanitize(out);
}

static int32_t env_int(const struct env *e, const char *const *names)
{
	for (; *names; names++) {
		const char *v = env_nonempty(e, *names);
		if (!v)
			continue;
		char *end;
		long n = strtol(v, &end, 10);
		if (*end == 0 && n >= 0 && n <= INT32_MAX)
			return (int32_t)n;
	}
	return -1;
}

void nw_job_ranks(int32_t *global_rank, int32_t *local_rank, int32_t *world_size)
{
	nw_job_ranks_env(own_env, NULL, global_rank, local_rank, world_size);
}

void nw_job_ranks_env(nw_env_get_fn get, void *ctx, int32_t *global_rank, int32_t *local_rank,
                      int32_t *world_size)
{
	const struct env env = { get, ctx };
	static const char *const global[] = { "RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID", "PMI_RANK", NULL };
	static const char *const local[] = { "LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", NULL };
	static const char *const world[] = { "WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS", "PMI_SIZE", NULL };
	*global_rank = env_int(&env, global);
	*local_rank = env_int(&env, local);
	*world_size = env_int(&env, world);
}
