/* watchdog: see watchdog.h. */
#include "watchdog.h"

#include "alone.h"
#include "../interpose/cuda_driver.h"
#include "../capture/unw_table.h"
#include "dump.h"
#include "exit_wait.h"
#include "progress.h"
#include "prom.h"
#include "requests.h"
#include "stacks.h"
#include "../pystack/pycall.h"
#include "stalls.h"
#include "../interpose/track.h"
#include "verdict.h"
#include "../interpose/log.h"
#include "../interpose/record.h"
#include "../interpose/ring.h"

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

struct config {
	uint32_t poll_ms;
	uint64_t timeout_ns;
	char dump_dir[PATH_MAX];
	int dump_dir_own;               /* NCCLWATCH_DUMP_DIR set: also for other hosts */
	int graph_op_events;            /* NCCLWATCH_GRAPH_OP_EVENTS: 0 off, else on (graphs.h) */
};

static struct config cfg;
/* Held by whoever advances the pairs: the watchdog's poll, or the exit
 * handlers' (which wait for it only so long: exit_wait.h). */
static pthread_mutex_t progress_lock = PTHREAD_MUTEX_INITIALIZER;
static int started;
static atomic_int leaving;              /* the exit handler runs: the thread stops */
static atomic_int exit_gave_up;         /* ... without waiting for the poll under way */
static atomic_int exit_skip_said;       /* the skipped exit poll: said once */
/* Requests of several stuck peers arrive together: a request raised
 * before our last dump began is answered by it; a later one gets a dump of
 * its own, no sooner than NW_DUMP_COALESCE_NS after the last (it waits,
 * pending, meanwhile: never taken without an answer). */
#define NW_DUMP_COALESCE_NS 1000000000ull
static uint64_t last_dump_ns;           /* CLOCK_MONOTONIC when the last dump began, 0 none */
static uint64_t last_dump_realtime_ns;  /* the same moment, CLOCK_REALTIME (requests carry it) */

static double env_number(const char *name, double dflt, double lo, double hi)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return dflt;
	char *end;
	double d = strtod(v, &end);
	if (*end || d != d) {
		nw_log("%s=%s is not a number; using %g", name, v, dflt);
		return dflt;
	}
	return d < lo ? lo : d > hi ? hi : d;
}

static void read_config(void)
{
	cfg.poll_ms = (uint32_t)env_number("NCCLWATCH_POLL_MS", 100, 1, 60000);
	cfg.timeout_ns = (uint64_t)(env_number("NCCLWATCH_TIMEOUT", 60, 0.1, 1e7) * 1e9);
	const char *d = getenv("NCCLWATCH_DUMP_DIR");
	cfg.dump_dir_own = d && *d;
	snprintf(cfg.dump_dir, sizeof(cfg.dump_dir), "%s", cfg.dump_dir_own ? d : nw_seg.jobdir);
	const char *g = getenv("NCCLWATCH_GRAPH_OP_EVENTS");
	cfg.graph_op_events = !g || strcmp(g, "0") != 0;
	if (g && *g && strcmp(g, "0") && strcmp(g, "1"))
		nw_log("NCCLWATCH_GRAPH_OP_EVENTS=%s is neither 0 nor 1; using 1", g);
}

static void sleep_ms(uint32_t ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0)
		;
}

static uint64_t realtime_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Capture the stacks and write a dump; the dump's path or "(no dump)". */
static void capture_and_dump(uint64_t request_id, char *path, size_t len)
{
	last_dump_ns = nw_now_ns();
	last_dump_realtime_ns = realtime_now_ns();
	if (nw_seg.stacks) {
		nw_stacks_capture(nw_seg.stacks, request_id);
		nw_seg.hdr->threads_dropped = nw_stacks_left_out();
	}
	if (nw_dump_write(cfg.dump_dir, path, len) != 0)
		snprintf(path, len, "(no dump)");
}

static void report(const struct nw_picture *p)
{
	struct nw_seg_header *h = nw_seg.hdr;
	char path[PATH_MAX];
	atomic_fetch_or(&h->flags, NW_SEG_F_STALL_SEEN);
	atomic_store(&h->last_finding_ns, nw_now_ns());
	uint64_t id = nw_requests_raise();
	capture_and_dump(0, path, sizeof(path));
	if (id)   /* our own request, and those raised before it: answered */
		atomic_store(&h->request_served, id);
	for (uint32_t i = 0; i < p->count; i++) {
		if (!p->f[i].new_)
			continue;
		char line[400];
		nw_finding_describe(&p->f[i], line, sizeof(line));
		nw_log("stall: %s; dump: %s", line, path);
		atomic_fetch_add(&h->findings, 1);
	}
}

static void serve(const struct nw_request *r)
{
	char path[PATH_MAX];
	capture_and_dump(r->id, path, sizeof(path));
	nw_requests_done(r);
	if (r->id)
		atomic_store(&nw_seg.hdr->request_served, r->id);
	nw_log("dump requested by rank=%d pid=%lld host=%s: rank=%d pid=%lld wrote %s",
	       r->rank, (long long)r->pid, r->host, nw_seg.hdr->global_rank, (long long)nw_seg.hdr->pid, path);
}

static void *run(void *arg)
{
	(void)arg;
	struct nw_seg_header *h = nw_seg.hdr;
	prctl(PR_SET_NAME, "ncclwatch", 0, 0, 0);
	h->watchdog_tid = (uint32_t)gettid();
	/* Our event queries must never invalidate a graph capture the
	 * application runs in global mode on another thread. */
	if (nw_tracking_on && nw_cu.cuThreadExchangeStreamCaptureMode) {
		CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
		nw_cu.cuThreadExchangeStreamCaptureMode(&mode);
	}
	nw_stacks_setup();
	int stalled = 0;
	for (;;) {
		sleep_ms(cfg.poll_ms);
		if (nw_alone()) {
			/* The application's threads have all ended: so do we, and
			 * glibc exits the process (our exit path runs then). A
			 * signal sent meanwhile, which only we could have taken, acts
			 * first. */
			nw_alone_take_pending();
			return NULL;
		}
		pthread_mutex_lock(&progress_lock);
		if (atomic_load(&leaving))
			break;
		uint64_t now = nw_now_ns();
		atomic_store_explicit(&h->heartbeat_ns, now, memory_order_relaxed);
		if (nw_tracking_on)
			nw_progress_poll(now, 0);
		if (atomic_load(&exit_gave_up))
			break;
		nw_stalls_scan();
		if (nw_pycall_base && nw_seg.stacks)
			nw_stacks_name_sites(nw_seg.stacks,
			                     atomic_load_explicit(&h->ring_head, memory_order_acquire));
		if (atomic_load(&exit_gave_up))
			break;
		struct nw_picture p;
		int reported = 0;
		if (nw_stalls_evaluate(now, cfg.timeout_ns, &p)) {
			if (p.count) {
				report(&p);
				reported = 1;
				stalled = 1;
				nw_verdict_tick(now, h->job, nw_seg.jobdir, cfg.dump_dir, (double)cfg.timeout_ns / 1e9, 1);
			} else if (stalled) {
				nw_log("stall cleared: rank=%d pid=%lld: the ops reported before have moved on",
				       h->global_rank, (long long)h->pid);
				stalled = 0;
			}
		}
		if (stalled && !reported)
			nw_verdict_tick(now, h->job, nw_seg.jobdir, cfg.dump_dir, (double)cfg.timeout_ns / 1e9, 0);
		if (atomic_load(&exit_gave_up))
			break;   /* it removed the Prometheus file */
		nw_prom_tick(now, p.count);
		struct nw_request req;
		if (!reported && nw_requests_pending(now, &req)) {
			if (last_dump_realtime_ns && req.realtime_ns && req.realtime_ns < last_dump_realtime_ns) {
				/* Raised before our last dump began: that dump answers it. */
				nw_requests_done(&req);
				if (req.id)
					atomic_store(&h->request_served, req.id);
			} else if (last_dump_ns == 0 || now - last_dump_ns >= NW_DUMP_COALESCE_NS) {
				serve(&req);
			}                   /* else: pending until the window is over */
		}
		pthread_mutex_unlock(&progress_lock);
	}
	/* The exit handler runs (`leaving`: it makes the last poll and may be
	 * removing the job directory, so no dump or report may land in it
	 * now), or it went on without the poll we were in (`exit_gave_up`:
	 * stuck in the driver, say): nothing more to write. */
	pthread_mutex_unlock(&progress_lock);
	return NULL;
}

int nw_watchdog_start(void)
{
	struct nw_seg_header *h = nw_seg.hdr;
	if (nw_cuda_load()) {
		nw_tracking_on = 1;
		h->tracking = NW_TRACK_EVENTS;
		h->cuda_driver_version = nw_cu.driver_version;
	} else {
		nw_op_initial_state = NW_ST_UNTRACKED;
		h->tracking = NW_TRACK_NO_DRIVER;
	}
	read_config();
	/* Decided once, before the first record: every capture of this
	 * process gets the nodes, or none does. */
	nw_graph_op_events = cfg.graph_op_events && nw_tracking_on && nw_cuda_capture_info &&
	                     nw_cu.cuEventRecordWithFlags;
	h->poll_ms = cfg.poll_ms;
	h->timeout_ms = (uint32_t)(cfg.timeout_ns / 1000000u);
	nw_prom_setup(cfg.timeout_ns);
	if (cfg.dump_dir_own && nw_ensure_dir_path(cfg.dump_dir) != 0)
		snprintf(cfg.dump_dir, sizeof(cfg.dump_dir), "%s", nw_seg.jobdir);
	/* libunwind (dlopen RTLD_LOCAL: capture/unw_table.h) here, at the first
	 * NCCL call, before the thread, its capture handler or the hot path
	 * can unwind: loading allocates, so never later in the steady state,
	 * and never in a signal handler. */
	if (nw_seg.stacks) {
		nw_unw_load();
		nw_opstack_enable(nw_seg.stacks, nw_seg.ring_mask + 1);
	}
	if (nw_seg.stacks)
		nw_pycall_enable(nw_seg.stacks, nw_seg.ring_mask + 1);
	/* Here, not in the thread: the file is in use from the first NCCL call
	 * on, so a process of the job exiting meanwhile sees us (requests.h). */
	nw_requests_open(nw_seg.jobdir, cfg.dump_dir_own && strcmp(cfg.dump_dir, nw_seg.jobdir) ? cfg.dump_dir : NULL);

	/* The thread starts with every signal blocked: application signals
	 * must never land on it. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_t tid;
	int err = pthread_create(&tid, &attr, run, NULL);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	started = !err;
	if (err) {
		nw_log("cannot start the watchdog thread: %s (recording goes on, stalls are not detected)",
		       strerror(err));
		return -1;
	}
	return 0;
}

/* A poll of the exit path did not run: the watchdog's poll held on past
 * the exit's wait (`watchdog_busy`), or a reap did: the record says so (op
 * states may be a poll old), and so does one line. */
static void exit_poll_skipped(int watchdog_busy)
{
	atomic_fetch_or(&nw_seg.hdr->flags, NW_SEG_F_EXIT_POLL_SKIPPED);
	if (atomic_exchange(&exit_skip_said, 1))
		return;
	char why[128];
	if (watchdog_busy)
		snprintf(why, sizeof(why), "the watchdog's poll did not end within %.0f s (stuck in a CUDA call?)",
		         (double)NW_EXIT_WAIT_NS / 1e9);
	else
		snprintf(why, sizeof(why), "a reap of the event pairs was under way (stuck in a CUDA call, or "
		         "interrupted by this exit)");
	nw_log("exiting: %s: the exit goes on without its last poll; op states may be a poll old (rank=%d pid=%lld)",
	       why, nw_seg.hdr->global_rank, (long long)nw_seg.hdr->pid);
}

void nw_watchdog_settle(void)
{
	if (!started)
		return;
	/* One poll: event queries never block; no stream is waited for. */
	nw_exit_begin();
	if (nw_exit_lock(&progress_lock) != 0) {
		exit_poll_skipped(1);
		return;
	}
	if (!atomic_load(&leaving) && nw_tracking_on && nw_progress_poll(nw_now_ns(), 1) != 0)
		exit_poll_skipped(0);
	pthread_mutex_unlock(&progress_lock);
}

void nw_watchdog_exit(void)
{
	if (!started)
		return;
	/* From here on the thread takes the lock only to stop: we wait for
	 * the poll under way at most, and only so long. */
	atomic_store(&leaving, 1);
	nw_exit_begin();
	if (nw_exit_lock(&progress_lock) != 0) {
		/* Its state is the watchdog's own while it polls: no finding and
		 * no stack capture now. The Prometheus file goes, as at any exit
		 * (the thread writes nothing more once its poll ends). */
		atomic_store(&exit_gave_up, 1);
		exit_poll_skipped(1);
		nw_prom_exit();
		return;
	}
	uint64_t now = nw_now_ns();
	if (nw_tracking_on && nw_progress_poll(now, 1) != 0)
		exit_poll_skipped(0);
	else   /* settle may have given up, and this poll made up for it */
		atomic_fetch_and(&nw_seg.hdr->flags, ~(uint32_t)NW_SEG_F_EXIT_POLL_SKIPPED);
	/* A process that exits right after a GPU fault (as programs do on an
	 * error) must still say so: failures need no timeout. */
	nw_stalls_scan();
	struct nw_picture p;
	if (nw_stalls_evaluate(now, UINT64_MAX, &p) && p.count) {
		struct nw_seg_header *h = nw_seg.hdr;
		atomic_fetch_or(&h->flags, NW_SEG_F_STALL_SEEN);   /* keep the segment: the record */
		atomic_store(&h->last_finding_ns, now);
		for (uint32_t i = 0; i < p.count; i++) {
			if (!p.f[i].new_)
				continue;
			char line[400];
			nw_finding_describe(&p.f[i], line, sizeof(line));
			nw_log("stall: %s; at exit, segment kept: %s", line, nw_seg.path);
			atomic_fetch_add(&h->findings, 1);
		}
	}
	/* Op stacks are raw addresses until a capture names them: name them
	 * now if the segment outlives us. */
	if (nw_segment_kept_why(&nw_seg) && nw_opstack_base && nw_seg.stacks) {
		nw_stacks_capture(nw_seg.stacks, 0);
		nw_seg.hdr->threads_dropped = nw_stacks_left_out();
	}
	nw_prom_exit();
	pthread_mutex_unlock(&progress_lock);
}

void nw_watchdog_reset_after_fork(void)
{
	progress_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	started = 0;
	atomic_store(&leaving, 0);
	atomic_store(&exit_gave_up, 0);
	atomic_store(&exit_skip_said, 0);
	nw_exit_wait_reset();
	last_dump_ns = last_dump_realtime_ns = 0;
	nw_track_reset_after_fork();
	nw_progress_reset();
	nw_stalls_reset();
	nw_requests_reset();
	nw_verdict_reset();
	nw_prom_reset_after_fork();
	nw_tracking_on = 0;
	nw_op_initial_state = NW_ST_ENQUEUED;
}
