/* prom: see prom.h. The text format is Prometheus' exposition format
 * 0.0.4: each family's samples together after its # HELP and # TYPE. */
#include "prom.h"

#include "stalls.h"
#include "verdict.h"
#include <ncclwatch/prom_file.h>
#include "../interpose/log.h"
#include "../interpose/ring.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NW_PROM_INTERVAL_NS 1000000000ull

static int dir_fd = -1;               /* NCCLWATCH_PROM_DIR, -1: off */
static char dir_name[256];            /* for messages */
static uint64_t timeout_ns;
static char name[128], tmp_name[160]; /* ours, made at the first write (our pid) */
static int written;                   /* name is ours on disk */
static uint64_t next_ns;
static uint32_t last_findings;
static char common[512];              /* job="..",host="..",pid="..",rank=".." */

/* The file is built here and written in pieces: one buffer, no malloc. */
static char buf[16384];
static size_t used;
static int out_fd = -1, out_err;

static void flush(void)
{
	size_t off = 0;
	while (off < used && !out_err) {
		ssize_t w = write(out_fd, buf + off, used - off);
		if (w > 0)
			off += (size_t)w;
		else if (w < 0 && errno == EINTR)
			continue;
		else
			out_err = w < 0 ? errno : EIO;
	}
	used = 0;
}

static void put(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void put(const char *fmt, ...)
{
	for (int tries = 0; tries < 2; tries++) {
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(buf + used, sizeof(buf) - used, fmt, ap);
		va_end(ap);
		if (n < 0)
			return;
		if ((size_t)n < sizeof(buf) - used) {
			used += (size_t)n;
			return;
		}
		flush();                    /* and again, into the empty buffer */
	}
}

/* A label value: backslash, double quote and newline escaped as the
 * format says; other control bytes and bytes >= 0x80 (which need not be
 * UTF-8 in a segment header) as '?', so the file always parses. */
static size_t label_value(char *dst, size_t cap, const char *s, size_t max)
{
	size_t o = 0;
	for (size_t i = 0; i < max && s[i] && o + 3 < cap; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '\\' || c == '"') {
			dst[o++] = '\\';
			dst[o++] = (char)c;
		} else if (c == '\n') {
			dst[o++] = '\\';
			dst[o++] = 'n';
		} else {
			dst[o++] = c < 0x20 || c >= 0x7f ? '?' : (char)c;
		}
	}
	dst[o] = 0;
	return o;
}

void nw_prom_setup(uint64_t timeout)
{
	const char *d = getenv("NCCLWATCH_PROM_DIR");
	timeout_ns = timeout;
	if (!d || !*d || dir_fd >= 0)
		return;
	snprintf(dir_name, sizeof(dir_name), "%s", d);
	if (mkdir(d, 0755) != 0 && errno != EEXIST) {
		nw_log("NCCLWATCH_PROM_DIR=%s: cannot make it: %s; no Prometheus file", d, strerror(errno));
		return;
	}
	int fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		nw_log("NCCLWATCH_PROM_DIR=%s: %s; no Prometheus file", d, strerror(errno));
		return;
	}
	dir_fd = fd;
}

static void make_names(void)
{
	const struct nw_seg_header *h = nw_seg.hdr;
	char host[NW_SEG_HOST_LEN];
	nw_prom_file_host(h->host, host, sizeof host);
	snprintf(name, sizeof(name), "ncclwatch_%s_%d.prom", host, (int)getpid());
	/* node_exporter reads only *.prom: the temporary name is never read. */
	snprintf(tmp_name, sizeof(tmp_name), ".%s.tmp", name);

	char job[3 * NW_SEG_JOB_LEN + 1], hostv[3 * NW_SEG_HOST_LEN + 1];
	label_value(job, sizeof(job), h->job, sizeof(h->job));
	label_value(hostv, sizeof(hostv), h->host, sizeof(h->host));
	snprintf(common, sizeof(common), "job=\"%s\",host=\"%s\",pid=\"%d\",rank=\"%d\"", job, hostv,
	         (int)getpid(), h->global_rank);
}

static void family(const char *metric, const char *type, const char *help)
{
	put("# HELP %s %s\n# TYPE %s %s\n", metric, help, metric, type);
}

/* A communicator is in the file while it lives: from its init to its
 * destroy or abort. */
static int comm_listed(const struct nw_seg_comm *c, uint32_t *gen)
{
	uint32_t g = atomic_load_explicit(&c->gen, memory_order_acquire);
	if (g & NW_COMM_GEN_WRITING)
		return 0;
	*gen = g & NW_COMM_GEN_MASK;
	uint32_t st = atomic_load_explicit(&c->state, memory_order_acquire);
	return st == NW_COMM_INIT_ENTERED || st == NW_COMM_INIT_DONE || st == NW_COMM_INIT_ASYNC ||
	       st == NW_COMM_FINALIZED;
}

static uint32_t comm_count(void)
{
	uint32_t n = atomic_load_explicit(&nw_seg.hdr->comm_count, memory_order_acquire);
	return n < nw_seg.comm_capacity ? n : nw_seg.comm_capacity;
}

static void comm_labels(const struct nw_seg_comm *c, char *out, size_t len)
{
	snprintf(out, len, "%s,comm=\"%016" PRIx64 "\",comm_rank=\"%d\",comm_size=\"%d\"", common, c->comm_id,
	         c->rank, c->nranks);
}

/* One family of per-communicator counts: collectives and sends/receives. */
static void comm_counts(const char *metric, const char *help, int completed)
{
	family(metric, "counter", help);
	uint32_t n = comm_count();
	for (uint32_t i = 0; i < n; i++) {
		const struct nw_seg_comm *c = &nw_seg.comms[i];
		uint32_t gen;
		if (!comm_listed(c, &gen))
			continue;
		char l[768];
		comm_labels(c, l, sizeof(l));
		uint64_t coll = atomic_load_explicit(completed ? &c->coll_completed : &c->coll_enqueued,
		                                     memory_order_relaxed);
		uint64_t p2p = atomic_load_explicit(completed ? &c->p2p_completed : &c->p2p_enqueued,
		                                    memory_order_relaxed);
		put("%s{%s,kind=\"collective\"} %" PRIu64 "\n", metric, l, coll);
		put("%s{%s,kind=\"p2p\"} %" PRIu64 "\n", metric, l, p2p);
	}
}

static void oldest_pending(uint64_t now)
{
	family("ncclwatch_oldest_pending_seconds", "gauge",
	       "Age of the communicator's oldest op not completed (a collective, send, receive or graph "
	       "launch since it was enqueued, or its init since it was entered); 0 when none is pending.");
	uint32_t n = comm_count();
	for (uint32_t i = 0; i < n; i++) {
		const struct nw_seg_comm *c = &nw_seg.comms[i];
		uint32_t gen;
		if (!comm_listed(c, &gen))
			continue;
		uint64_t since = nw_stalls_oldest_pending_ns(i, gen);
		uint32_t st = atomic_load_explicit(&c->state, memory_order_relaxed);
		if ((st == NW_COMM_INIT_ENTERED || st == NW_COMM_INIT_ASYNC) && c->init_enter_ns &&
		    (!since || c->init_enter_ns < since))
			since = c->init_enter_ns;
		char l[768];
		comm_labels(c, l, sizeof(l));
		put("ncclwatch_oldest_pending_seconds{%s} %.3f\n", l,
		    since && now > since ? (double)(now - since) / 1e9 : 0.0);
	}
}

static void write_file(uint64_t now, uint32_t findings)
{
	if (!written)
		make_names();
	out_fd = openat(dir_fd, tmp_name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (out_fd < 0) {
		NW_LOG_ONCE("NCCLWATCH_PROM_DIR=%s: cannot write %s: %s (tried again each second)", dir_name,
		            tmp_name, strerror(errno));
		return;
	}
	fchmod(out_fd, 0644);         /* node_exporter runs as another user; whatever our umask */
	out_err = 0;
	used = 0;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);

	family("ncclwatch_last_update_timestamp_seconds", "gauge",
	       "When this process's ncclwatch watchdog last wrote this file (Unix time); it stops moving "
	       "when the process is gone without a clean exit.");
	put("ncclwatch_last_update_timestamp_seconds{%s} %lld.%03ld\n", common, (long long)ts.tv_sec,
	    ts.tv_nsec / 1000000);
	family("ncclwatch_timeout_seconds", "gauge",
	       "NCCLWATCH_TIMEOUT: how long an op may stay pending before it is a stall.");
	put("ncclwatch_timeout_seconds{%s} %.3f\n", common, (double)timeout_ns / 1e9);
	family("ncclwatch_stalled", "gauge",
	       "1 while the watchdog has a stall finding (an op pending longer than the timeout, a failed "
	       "op or an async error), else 0.");
	put("ncclwatch_stalled{%s} %d\n", common, findings > 0);
	family("ncclwatch_stall_findings", "gauge",
	       "The watchdog's stall findings now (at most one per communicator and class of op).");
	put("ncclwatch_stall_findings{%s} %" PRIu32 "\n", common, findings);
	const char *kind_name;
	int kind = nw_verdict_last_kind(&kind_name);
	if (kind >= 0) {
		char kv[128];
		label_value(kv, sizeof(kv), kind_name, 64);
		family("ncclwatch_last_verdict", "gauge",
		       "The worst kind of the last cross-rank verdict this process printed (only the process "
		       "that reports for its host), as a label; the value is the kind's precedence "
		       "(0 HEALTHY, higher is worse).");
		put("ncclwatch_last_verdict{%s,kind=\"%s\"} %d\n", common, kv, kind);
	}
	comm_counts("ncclwatch_ops_enqueued_total",
	            "Ops the application issued on the communicator (kind: collective, or p2p for sends "
	            "and receives).", 0);
	comm_counts("ncclwatch_ops_completed_total",
	            "Ops of the communicator that completed on the GPU (kind: collective, or p2p).", 1);
	oldest_pending(now);
	flush();
	int fd = out_fd;
	out_fd = -1;
	if (close(fd) != 0 && !out_err)
		out_err = errno;
	if (!out_err && renameat(dir_fd, tmp_name, dir_fd, name) == 0) {
		written = 1;
		return;
	}
	if (!out_err)
		out_err = errno;
	unlinkat(dir_fd, tmp_name, 0);
	NW_LOG_ONCE("NCCLWATCH_PROM_DIR=%s: cannot write %s: %s (tried again each second)", dir_name, name,
	            strerror(out_err));
}

void nw_prom_tick(uint64_t now, uint32_t findings)
{
	if (dir_fd < 0 || !nw_seg.hdr)
		return;
	if (now < next_ns && findings == last_findings)
		return;
	next_ns = now + NW_PROM_INTERVAL_NS;
	last_findings = findings;
	write_file(now, findings);
}

void nw_prom_exit(void)
{
	if (dir_fd >= 0 && written)
		unlinkat(dir_fd, name, 0);
	written = 0;
}

void nw_prom_reset_after_fork(void)
{
	written = 0;                  /* the parent's file is the parent's */
	next_ns = 0;
	last_findings = 0;
}
