/* The simulated NCCL's environment: NCCLSIM_NULL, NCCLSIM_DEBUG,
 * NCCLSIM_DIR, the NCCLSIM_FAULT list and the two NCCL variables that
 * decide whether a send goes eagerly (NCCL_BUFFSIZE, NCCL_PROTO), read
 * once; debug printing; the
 * "last error" message; the FNV-1a hash that names communicators.
 */
#include "sim_nccl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

struct sim_env sim_env;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

static void parse_fault(char *spec)
{
	struct sim_fault f = { .rank = -1 };
	char *save = NULL, *tok = strtok_r(spec, ":", &save);
	if (!tok) return;
	if (!strcmp(tok, "stall")) f.kind = FAULT_STALL;
	else if (!strcmp(tok, "gpufault")) f.kind = FAULT_GPUFAULT;
	else if (!strcmp(tok, "slow")) f.kind = FAULT_SLOW;
	else if (!strcmp(tok, "initstall")) f.kind = FAULT_INITSTALL;
	else { fprintf(stderr, "ncclsim: NCCLSIM_FAULT: unknown kind '%s' ignored\n", tok); return; }
	while ((tok = strtok_r(NULL, ":", &save))) {
		char *eq = strchr(tok, '=');
		if (!eq) { fprintf(stderr, "ncclsim: NCCLSIM_FAULT: '%s' is not key=value\n", tok); return; }
		*eq++ = 0;
		if (!strcmp(tok, "rank")) f.rank = atoi(eq);
		else if (!strcmp(tok, "seq")) f.seq = strtoull(eq, NULL, 10);
		else if (!strcmp(tok, "ms")) f.ms = atol(eq);
		else if (!strcmp(tok, "comm")) snprintf(f.comm_prefix, sizeof f.comm_prefix, "%s", eq);
		else { fprintf(stderr, "ncclsim: NCCLSIM_FAULT: unknown key '%s'\n", tok); return; }
	}
	if ((f.kind == FAULT_STALL || f.kind == FAULT_GPUFAULT) && f.seq == 0) {
		fprintf(stderr, "ncclsim: NCCLSIM_FAULT: %s needs seq=N (N >= 1); ignored\n", spec);
		return;
	}
	if (f.kind == FAULT_SLOW && f.ms <= 0) {
		fprintf(stderr, "ncclsim: NCCLSIM_FAULT: slow needs ms=M (M >= 1); ignored\n");
		return;
	}
	if (sim_env.nfaults < (int)(sizeof sim_env.faults / sizeof sim_env.faults[0]))
		sim_env.faults[sim_env.nfaults++] = f;
}

/* NCCL_PROTO: a list of protocols (LL, LL128, Simple, any case), or "^"
 * and the ones left out. Does it leave LL or LL128 on? On an H100 with
 * NCCL 2.28.9 a 4 KiB send with NCCL_PROTO=Simple did not complete
 * without its receive (one measurement), with the default protocols it
 * did. */
static int proto_allows_ll(const char *s)
{
	if (!s || !*s) return 1;
	int exclude = *s == '^';
	char copy[256], *save = NULL;
	snprintf(copy, sizeof copy, "%s", s + exclude);
	int ll = 0, ll128 = 0;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		while (*t == ' ') t++;
		if (!strcasecmp(t, "LL")) ll = 1;
		else if (!strcasecmp(t, "LL128")) ll128 = 1;
	}
	return exclude ? !(ll && ll128) : ll || ll128;
}

static void env_load_once(void)
{
	const char *s = getenv("NCCLSIM_NULL");
	sim_env.null_mode = s && *s && strcmp(s, "0");
	s = getenv("NCCLSIM_DEBUG");
	sim_env.debug = s && *s && strcmp(s, "0");
	s = getenv("NCCLSIM_DIR");
	if (s && *s) snprintf(sim_env.dir, sizeof sim_env.dir, "%s", s);
	else snprintf(sim_env.dir, sizeof sim_env.dir, "/dev/shm/ncclsim-%u", (unsigned)getuid());
	sim_env.buffsize = SIM_BUFFSIZE_DEFAULT;
	s = getenv("NCCL_BUFFSIZE");
	if (s && *s) {
		char *end;
		long long v = strtoll(s, &end, 0);
		if (*end == 0 && v > 0)
			sim_env.buffsize = (uint64_t)v > SIM_BUFFSIZE_MAX ? SIM_BUFFSIZE_MAX : (uint64_t)v;
	}
	sim_env.p2p_eager = proto_allows_ll(getenv("NCCL_PROTO"));
	s = getenv("NCCLSIM_FAULT");
	if (s && *s) {
		char *copy = strdup(s), *save = NULL;
		for (char *f = copy ? strtok_r(copy, ",", &save) : NULL; f; f = strtok_r(NULL, ",", &save))
			parse_fault(f);
		free(copy);
	}
}

/* Run before main so the hot null-mode check reads a plain global. */
__attribute__((constructor)) static void env_ctor(void) { sim_env_load(); }
void sim_env_load(void) { pthread_once(&env_once, env_load_once); }

const struct sim_fault *sim_fault_find(int kind, uint64_t key, int rank, uint64_t seq)
{
	char hex[17];
	snprintf(hex, sizeof hex, "%016llx", (unsigned long long)key);
	for (int i = 0; i < sim_env.nfaults; i++) {
		const struct sim_fault *f = &sim_env.faults[i];
		if ((int)f->kind != kind) continue;
		if (f->rank >= 0 && f->rank != rank) continue;
		if (f->seq && f->seq != seq) continue;
		if (f->comm_prefix[0] && strncasecmp(hex, f->comm_prefix, strlen(f->comm_prefix))) continue;
		return f;
	}
	return NULL;
}

void sim_debug(const char *fmt, ...)
{
	if (!sim_env.debug) return;
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	fprintf(stderr, "ncclsim[%d]: %s\n", (int)getpid(), buf);
}

static pthread_mutex_t last_error_mu = PTHREAD_MUTEX_INITIALIZER;
static char last_error[512];

ncclResult_t sim_error(ncclResult_t res, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&last_error_mu);
	memcpy(last_error, buf, sizeof buf);
	pthread_mutex_unlock(&last_error_mu);
	sim_debug("error %d: %s", (int)res, buf);
	return res;
}

const char *pncclGetLastError(ncclComm_t comm)
{
	(void)comm;
	static __thread char copy[512];
	pthread_mutex_lock(&last_error_mu);
	memcpy(copy, last_error, sizeof copy);
	pthread_mutex_unlock(&last_error_mu);
	return copy;
}
NCCLSIM_ALIAS(ncclGetLastError);

uint64_t sim_fnv1a(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < len; i++) { h ^= p[i]; h *= 0x100000001b3ull; }
	return h;
}
