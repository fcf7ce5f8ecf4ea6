/* proc: what `ncclwatch attach` learns about another process from /proc:
 * which processes to attach to, their environment (allowlisted only),
 * launcher ranks, job id, threads, and the files they have mapped (NCCL,
 * the ncclwatch preload and its segment, the module table of stacks). */
#ifndef NCCLWATCH_ATTACH_PROC_H
#define NCCLWATCH_ATTACH_PROC_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>
#include <ncclwatch/segment.h>

struct nw_attach_proc {
	pid_t pid;
	pid_t ppid;
	uid_t uid;
	char comm[16];
	unsigned long long start_ticks;
	int denied;                       /* /proc/PID/environ or maps not readable to us */
	int32_t global_rank, local_rank, world_size;
	char job[NW_SEG_JOB_LEN];
	char env[NW_SEG_ENV_LEN];         /* allowlisted variables (interpose/env_fingerprint.c) */
	char nccl_lib[NW_SEG_LIBPATH_LEN];  /* a libnccl mapped, "" none */
	int preload;                      /* libncclwatch.so is mapped */
	char segment[PATH_MAX];           /* its live segment, if mapped */
	int python;                       /* a libpython or a python executable is mapped */
};

/* Pids of this host's ranks into *out (malloc'd): every process of `uid`
 * with a libnccl mapped (tree = 0), or the descendants of `tree` that have
 * a libnccl mapped or a launcher rank in their environment; of a chain of
 * processes with one launcher rank only the rank itself (not the wrapper
 * above it, nor a helper it forked). A candidate without a rank whose
 * descendants are candidates is a launcher: into *launchers (malloc'd,
 * *nlaunchers of them), never a rank. Our own process never. Returns the
 * count, or -1 (errno). */
int nw_attach_find(uid_t uid, pid_t tree, pid_t **out, pid_t **launchers, int *nlaunchers);

/* Fill p for `pid`: 0; -1 if the process is gone (ESRCH); p->denied when
 * it exists but we may not read it. */
int nw_attach_proc_read(pid_t pid, struct nw_attach_proc *p);

/* The module table of `pid` from its /proc/PID/maps: every file with an
 * executable mapping; base is its load bias (0 for a fixed-address
 * executable). Returns the count (at most cap). */
uint32_t nw_attach_modules(pid_t pid, struct nw_seg_module *mods, uint32_t cap);

/* Threads of `pid`, main thread first, at most cap; the count. */
uint32_t nw_attach_threads(pid_t pid, uint32_t *tids, uint32_t cap);
void nw_attach_thread_name(pid_t pid, uint32_t tid, char name[NW_STACK_NAME_LEN]);

#endif
