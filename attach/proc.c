/* proc: see proc.h. Files are read whole with read(2); a process that
 * exits under us simply ends a list early. */
#include "proc.h"

#include "../interpose/env_fingerprint.h"
#include "../interpose/job.h"
#include "../watchdog/stacks.h"

#include <ctype.h>
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The whole file at path, NUL-terminated, malloc'd; NULL with errno. */
static char *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	size_t cap = 16384, n = 0;
	char *buf = malloc(cap);
	while (buf) {
		if (n + 1 >= cap) {
			char *nb = realloc(buf, cap *= 2);
			if (!nb) {
				free(buf);
				buf = NULL;
				errno = ENOMEM;
				break;
			}
			buf = nb;
		}
		ssize_t r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(buf);
			buf = NULL;
			errno = e;
			break;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	int e = errno;
	close(fd);
	errno = e;
	if (buf) {
		buf[n] = 0;
		if (len)
			*len = n;
	}
	return buf;
}

/* comm, ppid, start ticks from /proc/PID/stat: 0, or -1. */
static int read_stat(pid_t pid, char comm[16], pid_t *ppid, unsigned long long *start)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	char *s = slurp(path, NULL);
	if (!s)
		return -1;
	char *open_paren = strchr(s, '('), *close_paren = strrchr(s, ')');
	if (!open_paren || !close_paren || close_paren < open_paren) {
		free(s);
		return -1;
	}
	size_t n = (size_t)(close_paren - open_paren - 1);
	if (comm) {
		if (n > 15)
			n = 15;
		memcpy(comm, open_paren + 1, n);
		comm[n] = 0;
	}
	char *p = close_paren + 1;
	for (int field = 3; field <= 22 && *p; field++) {
		while (*p == ' ')
			p++;
		if (field == 4 && ppid)
			*ppid = (pid_t)strtol(p, NULL, 10);
		if (field == 22 && start)
			*start = strtoull(p, NULL, 10);
		while (*p && *p != ' ')
			p++;
	}
	free(s);
	return 0;
}

static uid_t read_uid(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	char *s = slurp(path, NULL);
	uid_t uid = (uid_t)-1;
	const char *u = s ? strstr(s, "\nUid:") : NULL;
	if (u)
		uid = (uid_t)strtoul(u + 5, NULL, 10);
	free(s);
	return uid;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

/* Interesting mappings: libnccl, libncclwatch, libpython. (The segment
 * shows under the name it was made with, before it was linked: see
 * preload_segment.) */
static void scan_maps(const char *maps, struct nw_attach_proc *p)
{
	for (const char *line = maps; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		const char *path = memchr(line, '/', len);
		if (path) {
			size_t plen = len - (size_t)(path - line);
			char buf[PATH_MAX];
			if (plen >= sizeof(buf))
				plen = sizeof(buf) - 1;
			memcpy(buf, path, plen);
			buf[plen] = 0;
			const char *b = base_name(buf);
			if (!strncmp(b, "libnccl.so", 10) && !p->nccl_lib[0] && plen < sizeof(p->nccl_lib))
				memcpy(p->nccl_lib, buf, plen + 1);
			else if (!strncmp(b, "libncclwatch.so", 15))
				p->preload = 1;
			else if (!strncmp(b, "libpython", 9) || !strncmp(b, "python", 6))
				p->python = 1;
		}
		line = nl ? nl + 1 : NULL;
	}
}

/* Where the preload put the process's segment: its NCCLWATCH_DIR (or the
 * default), its job, this host, its pid (interpose/segment_file.c). Set
 * only if that file is there. */
static void preload_segment(struct nw_attach_proc *p, const char *segdir)
{
	char host[NW_SEG_HOST_LEN], path[PATH_MAX];
	struct stat st;
	if (gethostname(host, sizeof(host) - 1) != 0)
		strcpy(host, "unknown");
	host[sizeof(host) - 1] = 0;
	nw_job_sanitize(host);
	if (snprintf(path, sizeof(path), "%s/%s/%s.%d.seg", segdir, p->job, host, (int)p->pid) < (int)sizeof(path) &&
	    stat(path, &st) == 0 && S_ISREG(st.st_mode))
		snprintf(p->segment, sizeof(p->segment), "%s", path);
}

/* The environment as NULL-terminated strings (pointers into `buf`). */
static char **split_environ(char *buf, size_t len)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		n += buf[i] == 0;
	char **v = calloc(n + 2, sizeof(*v));
	if (!v)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < len; i += strlen(buf + i) + 1)
		if (buf[i])
			v[k++] = buf + i;
	return v;
}

static const char *env_lookup(const char *name, void *ctx)
{
	size_t n = strlen(name);
	for (char **e = ctx; *e; e++)
		if (!strncmp(*e, name, n) && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

int nw_attach_proc_read(pid_t pid, struct nw_attach_proc *p)
{
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->global_rank = p->local_rank = p->world_size = -1;
	if (read_stat(pid, p->comm, &p->ppid, &p->start_ticks) != 0)
		return -1;
	p->uid = read_uid(pid);
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	size_t len = 0;
	char *env = slurp(path, &len);
	if (!env) {
		if (errno == ESRCH || errno == ENOENT)
			return -1;
		p->denied = 1;
		return 0;
	}
	/* A process with an empty environ file is readable (a kernel thread, or an exec in progress). */
	char **v = split_environ(env, len);
	char segdir[PATH_MAX] = "";
	if (v) {
		nw_env_fingerprint_of(v, p->env, sizeof(p->env));
		nw_job_ranks_env(env_lookup, v, &p->global_rank, &p->local_rank, &p->world_size);
		nw_job_id_env(env_lookup, v, p->ppid, p->job, sizeof(p->job));
		const char *d = env_lookup("NCCLWATCH_DIR", v);
		if (d && *d)
			snprintf(segdir, sizeof(segdir), "%s", d);
		else
			snprintf(segdir, sizeof(segdir), "/dev/shm/ncclwatch-%u", (unsigned)p->uid);
		free(v);
	}
	free(env);
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	char *maps = slurp(path, NULL);
	if (!maps) {
		if (errno == ESRCH || errno == ENOENT)
			return -1;
		p->denied = 1;
		return 0;
	}
	scan_maps(maps, p);
	free(maps);
	if (p->preload && segdir[0])
		preload_segment(p, segdir);
	return 0;
}

/* ---- which processes ---- */

struct pinfo {
	pid_t pid, ppid;
	int pick;
	int nccl;                     /* a libnccl mapped */
	int32_t rank;                 /* a launcher rank in its environment, -1 none */
};

static int is_pid(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

static int maps_has_nccl(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	char *maps = slurp(path, NULL);
	if (!maps)
		return 0;
	int found = strstr(maps, "/libnccl.so") != NULL;
	free(maps);
	return found;
}

static int is_descendant(const struct pinfo *all, size_t n, pid_t pid, pid_t root)
{
	for (int depth = 0; depth < 4096 && pid > 1; depth++) {
		pid_t parent = 0;
		for (size_t i = 0; i < n; i++)
			if (all[i].pid == pid) {
				parent = all[i].ppid;
				break;
			}
		if (parent == root)
			return 1;
		if (parent <= 1 || parent == pid)
			return 0;
		pid = parent;
	}
	return 0;
}

/* Which of the candidates are ranks. A candidate below another with the
 * same launcher rank is one process of a rank's chain: a wrapper (sh -c, a
 * launcher's helper: no libnccl) above its worker gives way to the worker;
 * a child that inherited libnccl and the rank (a data loader worker a rank
 * forked) gives way to the rank above it. A candidate without a rank
 * above other candidates is a launcher (torchrun's agent imports torch and
 * maps libnccl; our trainer's parent links it): never a rank, never a job. */
static void pick_ranks(struct pinfo *all, size_t n, size_t *nlaunchers)
{
	*nlaunchers = 0;
	for (size_t i = 0; i < n; i++) {
		if (!all[i].pick || all[i].rank < 0)
			continue;
		for (size_t j = 0; j < n; j++) {
			if (j == i || !all[j].pick || all[j].rank != all[i].rank ||
			    !is_descendant(all, n, all[j].pid, all[i].pid))
				continue;
			if (all[i].nccl && all[j].nccl)
				all[j].pick = 0;          /* the rank's forked helper */
			else if (!all[i].nccl)
				all[i].pick = 0;          /* the wrapper */
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (!all[i].pick || all[i].rank >= 0)
			continue;
		for (size_t j = 0; j < n; j++)
			if (j != i && all[j].pick && is_descendant(all, n, all[j].pid, all[i].pid)) {
				all[i].pick = -1;             /* a launcher */
				(*nlaunchers)++;
				break;
			}
	}
}

int nw_attach_find(uid_t uid, pid_t tree, pid_t **out, pid_t **launchers, int *nlaunchers)
{
	*out = NULL;
	*launchers = NULL;
	*nlaunchers = 0;
	DIR *d = opendir("/proc");
	if (!d)
		return -1;
	size_t cap = 256, n = 0;
	struct pinfo *all = malloc(cap * sizeof(*all));
	struct dirent *e;
	pid_t self = getpid();
	while (all && (e = readdir(d))) {
		if (!is_pid(e->d_name))
			continue;
		pid_t pid = (pid_t)strtol(e->d_name, NULL, 10);
		pid_t ppid = 0;
		if (pid == self || read_stat(pid, NULL, &ppid, NULL) != 0)
			continue;
		if (n == cap) {
			struct pinfo *na = realloc(all, (cap *= 2) * sizeof(*all));
			if (!na) {
				free(all);
				all = NULL;
				break;
			}
			all = na;
		}
		all[n++] = (struct pinfo){ pid, ppid, 0, 0, -1 };
	}
	closedir(d);
	if (!all) {
		errno = ENOMEM;
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		struct pinfo *p = &all[i];
		if (tree > 0 ? !is_descendant(all, n, p->pid, tree) : read_uid(p->pid) != uid || !maps_has_nccl(p->pid))
			continue;
		struct nw_attach_proc info;
		if (nw_attach_proc_read(p->pid, &info) != 0)
			continue;
		p->rank = info.global_rank;
		p->nccl = info.nccl_lib[0] != 0;
		p->pick = info.denied || p->nccl || p->rank >= 0;
	}
	size_t nl;
	pick_ranks(all, n, &nl);
	pid_t *pids = malloc((n ? n : 1) * sizeof(*pids));
	pid_t *lp = malloc((nl ? nl : 1) * sizeof(*lp));
	int k = 0, kl = 0;
	for (size_t i = 0; pids && lp && i < n; i++) {
		if (all[i].pick > 0)
			pids[k++] = all[i].pid;
		else if (all[i].pick < 0)
			lp[kl++] = all[i].pid;
	}
	free(all);
	if (!pids || !lp) {
		free(pids);
		free(lp);
		errno = ENOMEM;
		return -1;
	}
	*out = pids;
	*launchers = lp;
	*nlaunchers = kl;
	return k;
}

/* ---- threads and modules ---- */

uint32_t nw_attach_threads(pid_t pid, uint32_t *tids, uint32_t cap)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return 0;
	uint32_t n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!is_pid(e->d_name))
			continue;
		uint32_t tid = (uint32_t)strtoul(e->d_name, NULL, 10);
		if (n < cap)
			tids[n++] = tid;
		if (tid == (uint32_t)pid && n > 1) {    /* main thread first */
			tids[n - 1] = tids[0];
			tids[0] = tid;
		}
	}
	closedir(d);
	return n;
}

void nw_attach_thread_name(pid_t pid, uint32_t tid, char name[NW_STACK_NAME_LEN])
{
	char path[64];
	memset(name, 0, NW_STACK_NAME_LEN);
	snprintf(path, sizeof(path), "/proc/%d/task/%u/comm", (int)pid, tid);
	char *s = slurp(path, NULL);
	if (!s)
		return;
	size_t len = strcspn(s, "\n");
	if (len > NW_STACK_NAME_LEN - 1)
		len = NW_STACK_NAME_LEN - 1;
	memcpy(name, s, len);
	free(s);
}

/* A fixed-address executable (ET_EXEC) is loaded with bias 0. */
static int is_fixed_exec(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	Elf64_Ehdr eh;
	ssize_t n = read(fd, &eh, sizeof(eh));
	close(fd);
	return n == (ssize_t)sizeof(eh) && !memcmp(eh.e_ident, ELFMAG, SELFMAG) && eh.e_type == ET_EXEC;
}

uint32_t nw_attach_modules(pid_t pid, struct nw_seg_module *mods, uint32_t cap)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	char *maps = slurp(path, NULL);
	if (!maps)
		return 0;
	uint32_t n = 0;
	/* Mappings of one file are adjacent; a group counts if one is executable. */
	char cur[PATH_MAX] = "";
	uint64_t lo = 0, hi = 0, first_off = 0;
	int exec = 0;
	for (char *line = maps;; ) {
		char *nl = line ? strchr(line, '\n') : NULL;
		unsigned long long s = 0, e = 0, off = 0;
		char perms[8] = "", file[PATH_MAX] = "";
		int ok = line && *line &&
		         sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095[^\n]", &s, &e, perms, &off, file) >= 4;
		char *f = file;
		while (*f == ' ')
			f++;
		int same = ok && f[0] == '/' && !strcmp(f, cur);
		if (!same && cur[0]) {
			if (exec && n < cap) {
				struct nw_seg_module *m = &mods[n++];
				memset(m, 0, sizeof(*m));
				m->base = is_fixed_exec(cur) ? 0 : lo - first_off;
				m->size = hi - m->base;
				nw_stack_module_set_path(m, cur);
			}
			cur[0] = 0;
		}
		if (ok && f[0] == '/' && !strstr(f, " (deleted)")) {
			if (!same) {
				snprintf(cur, sizeof(cur), "%s", f);
				lo = s;
				first_off = off;
				exec = 0;
			}
			hi = e;
			exec |= strchr(perms, 'x') != NULL;
		}
		if (!line || !nl)
			break;
		line = nl + 1;
	}
	free(maps);
	return n;
}
