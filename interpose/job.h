/* job: who this process is in its job, from what the launcher left in the
 * environment: the job id (names the segment's directory) and the launcher
 * ranks. Read once, when recording starts. */
#ifndef NCCLWATCH_INTERPOSE_JOB_H
#define NCCLWATCH_INTERPOSE_JOB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The job id, sanitized to [A-Za-z0-9._-], never empty. In order:
 * NCCLWATCH_JOB; TORCHELASTIC_RUN_ID (unless "none"); SLURM_JOB_ID with
 * ".SLURM_STEP_ID"; "torchrun-<MASTER_ADDR>-<MASTER_PORT>" for torchrun's
 * run id "none" on more than one node (GROUP_WORLD_SIZE > 1); the job id of OMPI_MCA_orte_hnp_uri ("<jobid>.<vpid>;
 * tcp://..."); PMIX_NAMESPACE; else "ppid-<parent pid>-<parent start time
 * in clock ticks from /proc/<ppid>/stat>", which every process forked by
 * the same launcher shares. */
void nw_job_id(char *out, size_t size);

/* The same from another environment: get(name, ctx) is a variable's value
 * or NULL, ppid the process's parent (`ncclwatch attach` reads both from
 * /proc/PID). */
typedef const char *(*nw_env_get_fn)(const char *name, void *ctx);
void nw_job_id_env(nw_env_get_fn get, void *ctx, pid_t ppid, char *out, size_t size);

/* RANK / LOCAL_RANK / WORLD_SIZE and the Open MPI, Slurm and PMI
 * equivalents; -1 where the launcher says nothing. */
void nw_job_ranks(int32_t *global_rank, int32_t *local_rank, int32_t *world_size);
void nw_job_ranks_env(nw_env_get_fn get, void *ctx, int32_t *global_rank, int32_t *local_rank,
                      int32_t *world_size);

/* Field 22 of /proc/<pid>/stat (/proc/self/stat for pid <= 0): when the
 * process started, in clock ticks since boot; 0 if it cannot be read. With
 * the pid, it names one process of this host for as long as the host runs
 * (a reused pid has another start time). */
unsigned long long nw_process_start_ticks(pid_t pid);

/* Keep only [A-Za-z0-9._-] (others become '_'); never "", "." or "..". */
void nw_job_sanitize(char *s);

#endif
