/* stacks: capture every thread's stack into the segment's stack area.
 *
 * By default through the capture core (capture/capture.h), which changes
 * nothing a thread sees: a thread blocked in a call (a stuck thread almost
 * always is) is read from /proc/self/task/TID/syscall and process_vm_readv
 * without being signalled. A thread that shows "running" there is watched
 * by the core (it may be copying data inside a call: a signal would cut
 * the call short) and read once it blocks; only one the core finds running
 * user code alone gets the capture signal, alone, at that moment, and never
 * one that blocks it (SigBlk); one running inside the kernel is left
 * running without a stack, the dump's note says why (README, "Thread
 * stacks"). The watchdog's own stack is unwound locally.
 * NCCLWATCH_STACK_SIGNAL=1 brings back the old way, a signal to every
 * thread, with its effects (README).
 *
 * The signal path: the watchdog thread sends a thread a real-time signal with
 * rt_tgsigqueueinfo; the value it carries names a reply slot and the
 * capture's generation. The handler unwinds with libunwind into that slot
 * (raw addresses only) and marks it done; the watchdog polls, then names
 * the addresses and writes the area under its seqlock.
 *
 * Why each piece:
 * - unw_getcontext/unw_init_local/unw_step in the handler: documented
 *   signal-safe for local unwinding (the frames up to the kernel's
 *   sigreturn trampoline are the handler's and are dropped). unw_backtrace
 *   is not documented so in 1.6.2, and its first call on a thread runs
 *   pthread_once, pthread_setspecific and mmap. libunwind's one-time
 *   initialization takes a lock, so nw_stacks_setup runs it first,
 *   outside any handler.
 * - A reply slot moves ARMED -> WRITING -> DONE by compare-and-swap on one
 *   word that also holds the generation, so a reply that arrives after its
 *   capture gave up (ABANDONED) or after the slot was armed again for a
 *   later capture fails its swap and writes nothing.
 * - A thread that did not answer last time and still has our signal
 *   pending (signals blocked) is not sent another: the queue stays at one
 *   and the capture does not wait for it again.
 * - Reply tables are never freed: a late handler may still read one.
 * - libunwind through its table (capture/unw_table.h), loaded at the first
 *   NCCL call (nw_watchdog_start), before this thread exists: never from a
 *   handler, never in the steady state. Without it there are no native
 *   stacks (said once), Python stacks and recording go on. */
#include "stacks.h"
#include "alone.h"
#include "modules.h"
#include "../capture/capture.h"
#include "../capture/unw_table.h"
#include "symbolize.h"
#include "../pystack/pystack.h"
#include "../interpose/log.h"
#include "../interpose/thread.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define REPLY_SKIP_MAX 8           /* handler and trampoline frames before the interrupted one */
#define REPLY_FRAMES (NW_STACK_FRAMES + 1 + REPLY_SKIP_MAX)
#define REPLY_SPARE 16             /* slots beyond thread_capacity (some may be stuck WRITING) */
#define TOKEN_INDEX_BITS 20        /* si_value: generation << 20 | slot index */
#define WAIT_STEP_NS 1000000ull
#define WAIT_IDLE_NS 100000000ull  /* 100 ms without a reply: see wait_replies */
#define WAIT_TOTAL_NS 1000000000ull
#define NO_SLOT UINT32_MAX
#define SEEN_FILTER 1024           /* recently seen op-stack addresses, to skip repeats cheaply */

enum { PH_ARMED = 0, PH_WRITING = 1, PH_DONE = 2, PH_ABANDONED = 3 };
#define STATE(gen, ph) ((uint64_t)(gen) << 2 | (ph))

struct reply {
	_Atomic uint64_t state;    /* STATE(generation, phase) */
	uint32_t first;            /* ip[first] is the interrupted frame */
	uint32_t n;                /* ips written */
	uint32_t in_nccl;
	uint32_t pad;
	uint64_t ip[REPLY_FRAMES];
};

struct reply_table {
	struct reply_table *prev;  /* an outgrown table, kept reachable */
	uint32_t count;
	struct reply slot[];
};

struct cap_thread {
	uint32_t tid;
	uint32_t flags;            /* NW_THR_* */
	uint32_t slot;             /* reply slot, NO_SLOT if not signalled */
	int answered;
	int gone;                  /* exited before it could be signalled */
	int want_signal;           /* to be signalled (running, or the all-thread mode) */
	int core;                  /* captured by the core: st.core[i] */
};

static pthread_once_t setup_once = PTHREAD_ONCE_INIT;
static int setup_result = -1;
static int capture_sig;        /* 0: no signal (running threads then have no stack) */
static int signal_all;         /* NCCLWATCH_STACK_SIGNAL=1: the old all-thread signal */
static struct nw_cap_target *core;   /* our own process, for the capture core */
static int core_failed;        /* nw_cap_open failed: said once */
static struct reply_table *_Atomic replies;
static uint64_t capture_gen;
/* Replies that came too late for their capture (tests read it). */
_Atomic uint64_t nw_stacks_late_replies;

/* The capture's fixed-size buffers (69 KB, the module map nearly all of
 * it), allocated at the first capture, not carried in .bss by every
 * process that loads the preload (most never capture). Watchdog thread
 * only: the capture signal's handler writes into the reply table. */
struct capture_buffers {
	struct nw_module_map modules;
	struct reply self;         /* the watchdog's own stack */
	struct nw_cap_stack cs;    /* the core's answer for one thread */
};

/* Watchdog-private buffers, sized for the area they were last used with. */
static struct {
	uint32_t threads, frames, strtab_size, ipsyms;   /* what the buffers hold */
	struct cap_thread *thr;
	struct nw_seg_thread *seg_thr;
	struct nw_seg_frame *seg_frames;
	struct nw_seg_frame *seg_ipsyms;
	uint64_t *ips;             /* op-stack addresses being collected: 2 * ipsyms */
	uint32_t *unanswered;      /* tids that did not answer the last capture */
	uint32_t unanswered_count;
	struct nw_strtab strtab;
	struct capture_buffers *buf;   /* NULL until the first capture */
	int no_proc;               /* /proc/self/task could not be listed at the last capture */
	uint32_t left_out;         /* threads the last capture had no slot for */
	struct reply *core;        /* per thread slot: stacks the core captured */
	uint32_t *watch_idx;       /* threads the core watches: index in thr */
	uint32_t *watch_tid;
	struct nw_cap_stack *watch_stk;
	enum nw_cap_result *watch_rc;
	const char *note;          /* what this capture could not do, NULL none */
	char note_buf[160];
	uint32_t last_note;        /* the last capture's note, strtab offset */
} st;

/* ---- the handler side ---- */

/* The kernel's return path from a handler, the rt_sigreturn trampoline
 * (x86-64 Linux: mov $15,%rax; syscall), told by its code: libunwind
 * 1.6.2's unw_is_signal_frame is true on the frame reached through it,
 * newer versions' on the trampoline itself. Only the first
 * REPLY_SKIP_MAX frames are tested: 9 bytes past a return address are
 * still code. */
static int is_sigreturn(unw_word_t ip)
{
#if defined(__x86_64__)
	static const unsigned char code[9] = { 0x48, 0xc7, 0xc0, 0x0f, 0, 0, 0, 0x0f, 0x05 };
	const volatile unsigned char *p = (const volatile unsigned char *)ip;
	for (int i = 0; i < 9; i++)
		if (p[i] != code[i])
			return 0;
	return 1;
#else
	(void)ip;
	return 0;
#endif
}

/* Unwind the calling thread into r. From a signal handler, the frames up
 * to the signal trampoline are the handler's: r->first skips them. */
static __attribute__((noinline)) void unwind_into(struct reply *r, int from_signal)
{
	unw_context_t ctx;
	unw_cursor_t cur;
	uint32_t n = 0, first = from_signal ? NO_SLOT : 1;
	if (nw_unw.getcontext(&ctx) == 0 && nw_unw.init_local(&cur, &ctx) == 0) {
		for (;;) {
			unw_word_t ip;
			if (nw_unw.local_get_reg(&cur, UNW_REG_IP, &ip) < 0 || ip == 0)
				break;
			if (first == NO_SLOT && is_sigreturn(ip))
				first = n + 1;
			r->ip[n++] = (uint64_t)ip;
			/* No trampoline seen (a sanitizer may run handlers later,
			 * from its own frames): drop only our frame. */
			if (first == NO_SLOT && n > REPLY_SKIP_MAX)
				first = 1;
			uint32_t limit = first == NO_SLOT ? REPLY_FRAMES : first + NW_STACK_FRAMES + 1;
			if (limit > REPLY_FRAMES)
				limit = REPLY_FRAMES;
			if (n >= limit || nw_unw.local_step(&cur) <= 0)
				break;
		}
	}
	if (first == NO_SLOT)
		first = n ? 1 : 0;
	if (first > n)
		first = n;
	r->first = first;
	r->n = n;
}

static void on_capture_signal(int sig, siginfo_t *si, void *uc)
{
	int saved_errno = errno;
	(void)sig;
	(void)uc;
	struct reply_table *t = atomic_load_explicit(&replies, memory_order_acquire);
	if (t && si && si->si_code == SI_QUEUE && si->si_pid == getpid()) {
		uint64_t token = (uint64_t)(uintptr_t)si->si_value.sival_ptr;
		uint64_t index = token & ((1u << TOKEN_INDEX_BITS) - 1);
		uint64_t gen = token >> TOKEN_INDEX_BITS;
		uint64_t armed = STATE(gen, PH_ARMED);
		struct reply *r = index < t->count ? &t->slot[index] : NULL;
		if (r && atomic_compare_exchange_strong_explicit(&r->state, &armed, STATE(gen, PH_WRITING),
		                                                 memory_order_acquire, memory_order_relaxed)) {
			r->in_nccl = nw_tls.inside != 0;
			unwind_into(r, 1);
			atomic_store_explicit(&r->state, STATE(gen, PH_DONE), memory_order_release);
		} else {
			atomic_fetch_add_explicit(&nw_stacks_late_replies, 1, memory_order_relaxed);
		}
	}
	errno = saved_errno;
}

/* ---- setup ---- */

static int signal_is_free(int sig)
{
	struct sigaction old;
	if (sigaction(sig, NULL, &old) != 0)
		return 0;
	return !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL;
}

static int handler_is_ours(int sig)
{
	struct sigaction cur;
	return sigaction(sig, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
	       cur.sa_sigaction == on_capture_signal;
}

static int choose_signal(void)
{
	const char *env = getenv("NCCLWATCH_SIGNAL");
	if (env && *env) {
		char *end;
		long v = strtol(env, &end, 10);
		if (*end || v < SIGRTMIN || v > SIGRTMAX) {
			nw_log("NCCLWATCH_SIGNAL=%s is not a real-time signal number (%d..%d); thread stacks off",
			       env, SIGRTMIN, SIGRTMAX);
			return 0;
		}
		if (!signal_is_free((int)v)) {
			nw_log("NCCLWATCH_SIGNAL=%ld already has a handler; thread stacks off", v);
			return 0;
		}
		return (int)v;
	}
	/* From the top: applications that pick a fixed real-time signal
	 * mostly take the low ones (SIGRTMIN, SIGRTMIN+1, ...). */
	for (int sig = SIGRTMAX - 1; sig >= SIGRTMIN + 3; sig--)
		if (signal_is_free(sig))
			return sig;
	nw_log("no free real-time signal for thread stacks (SIGRTMIN+3..SIGRTMAX-1 all handled); thread stacks off");
	return 0;
}

static void setup(void)
{
	const char *all = getenv("NCCLWATCH_STACK_SIGNAL");
	signal_all = all && !strcmp(all, "1");
	if (!nw_unw_ok)
		return;                  /* not loaded (nw_watchdog_start), or said why */
	int sig = choose_signal();
	if (!sig)
		return;
	/* libunwind's one-time initialization takes a lock: never first in a handler. */
	struct reply warm_up;
	unwind_into(&warm_up, 0);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_capture_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL) != 0) {
		nw_log("cannot handle signal %d for thread stacks: %s; thread stacks off", sig, strerror(errno));
		return;
	}
	capture_sig = sig;
	setup_result = 0;
}

int nw_stacks_setup(void)
{
	pthread_once(&setup_once, setup);
	return setup_result;
}

/* ---- the watchdog side ---- */

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *grow(void *p, size_t n, size_t size)
{
	void *q = realloc(p, n * size);
	if (q)
		memset(q, 0, n * size);
	return q;
}

/* Size the private buffers for `area`. 0, or -1 if memory ran out. */
static int ensure_buffers(const struct nw_seg_stack_header *area)
{
	uint32_t threads = area->thread_capacity, frames = area->frame_capacity;
	uint32_t ipsyms = area->ipsym_capacity;
	struct reply_table *t = atomic_load_explicit(&replies, memory_order_relaxed);
	if (!t || t->count < threads + REPLY_SPARE) {
		uint32_t count = threads + REPLY_SPARE;
		if (count > (1u << TOKEN_INDEX_BITS))
			return -1;
		struct reply_table *nt = calloc(1, sizeof(*nt) + (size_t)count * sizeof(struct reply));
		if (!nt)
			return -1;
		nt->prev = t;
		nt->count = count;
		for (uint32_t i = 0; i < count; i++)
			atomic_init(&nt->slot[i].state, STATE(0, PH_ABANDONED));
		atomic_store_explicit(&replies, nt, memory_order_release);
	}
	if (threads != st.threads || frames != st.frames) {
		void *a = grow(st.thr, threads, sizeof(*st.thr));
		if (a) st.thr = a;
		void *b = grow(st.seg_thr, threads, sizeof(*st.seg_thr));
		if (b) st.seg_thr = b;
		void *c = grow(st.seg_frames, (size_t)threads * frames, sizeof(*st.seg_frames));
		if (c) st.seg_frames = c;
		void *d = grow(st.unanswered, threads, sizeof(*st.unanswered));
		if (d) st.unanswered = d;
		void *e = grow(st.core, threads, sizeof(*st.core));
		if (e) st.core = e;
		void *f = grow(st.watch_idx, threads, sizeof(*st.watch_idx));
		if (f) st.watch_idx = f;
		void *g = grow(st.watch_tid, threads, sizeof(*st.watch_tid));
		if (g) st.watch_tid = g;
		void *h = grow(st.watch_stk, threads, sizeof(*st.watch_stk));
		if (h) st.watch_stk = h;
		void *k = grow(st.watch_rc, threads, sizeof(*st.watch_rc));
		if (k) st.watch_rc = k;
		if (!a || !b || !c || !d || !e || !f || !g || !h || !k) {
			st.threads = st.frames = 0;
			return -1;
		}
		st.threads = threads;
		st.frames = frames;
		st.unanswered_count = 0;
	}
	if (area->strtab_size != st.strtab_size) {
		void *s = grow(st.strtab.buf, area->strtab_size, 1);
		if (!s) {
			st.strtab_size = 0;
			return -1;
		}
		st.strtab.buf = s;
		st.strtab.size = st.strtab_size = area->strtab_size;
	}
	if (ipsyms != st.ipsyms) {
		void *a = grow(st.seg_ipsyms, ipsyms, sizeof(*st.seg_ipsyms));
		if (a) st.seg_ipsyms = a;
		void *b = grow(st.ips, 2 * (size_t)ipsyms, sizeof(*st.ips));
		if (b) st.ips = b;
		if (!a || !b) {
			st.ipsyms = 0;
			return -1;
		}
		st.ipsyms = ipsyms;
	}
	return 0;
}

/* The threads of this process, main thread first, at most `cap`. */
static uint32_t list_threads(uint32_t cap, uint32_t self)
{
	uint32_t pid = (uint32_t)getpid(), n = 1;
	int main_seen = 0;
	st.left_out = 0;
	DIR *d = opendir("/proc/self/task");
	st.no_proc = d == NULL;
	if (d) {
		struct dirent *e;
		while ((e = readdir(d))) {
			char *end;
			unsigned long tid = strtoul(e->d_name, &end, 10);
			if (*end || tid == 0)
				continue;
			if (tid == pid)
				main_seen = !nw_main_thread_ended();   /* a zombie has no stack */
			else if (n < cap)
				st.thr[n++].tid = (uint32_t)tid;
			else
				st.left_out++;      /* the thread table is full (NCCLWATCH_STACK_THREADS) */
		}
		closedir(d);
	}
	if (main_seen) {
		st.thr[0].tid = pid;
		return n;
	}
	/* No main thread listed (it exited, or no /proc): start at 1. */
	if (n == 1) {
		st.thr[0].tid = self;
		return 1;
	}
	memmove(&st.thr[0], &st.thr[1], (n - 1) * sizeof(st.thr[0]));
	return n - 1;
}

static void read_name(uint32_t tid, char name[NW_STACK_NAME_LEN])
{
	char path[64], buf[64];
	memset(name, 0, NW_STACK_NAME_LEN);
	snprintf(path, sizeof(path), "/proc/self/task/%u/comm", tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	size_t len = strcspn(buf, "\n");
	if (len > NW_STACK_NAME_LEN - 1)
		len = NW_STACK_NAME_LEN - 1;
	memcpy(name, buf, len);
}

/* The bit of our signal in the mask on line `key` ("\nSigPnd:",
 * "\nSigBlk:") of /proc/self/task/<tid>/status; -1 if it cannot be read
 * (the thread is gone). */
static int status_has_signal(uint32_t tid, const char *key)
{
	char path[64], buf[4096];
	snprintf(path, sizeof(path), "/proc/self/task/%u/status", tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	const char *p = strstr(buf, key);
	if (!p)
		return -1;
	unsigned long long mask = strtoull(p + strlen(key), NULL, 16);
	return (int)((mask >> (capture_sig - 1)) & 1);
}

/* Our signal is still queued for `tid` (sent by an earlier capture). */
static int still_pending(uint32_t tid)
{
	return status_has_signal(tid, "\nSigPnd:") == 1;
}

static int was_unanswered(uint32_t tid)
{
	for (uint32_t i = 0; i < st.unanswered_count; i++)
		if (st.unanswered[i] == tid)
			return 1;
	return 0;
}

static int send_signal(uint32_t tid, uint64_t token)
{
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	si.si_signo = capture_sig;
	si.si_code = SI_QUEUE;
	si.si_pid = getpid();
	si.si_uid = getuid();
	si.si_value.sival_ptr = (void *)(uintptr_t)token;
	return (int)syscall(SYS_rt_tgsigqueueinfo, getpid(), (pid_t)tid, capture_sig, &si);
}

/* Signal every listed thread but ourselves; returns how many were sent. */
/* Arm a reply slot for c and send it the signal: 1 if sent. `next` is the
 * first slot not yet used by this capture. */
static int signal_one(struct reply_table *t, struct cap_thread *c, uint64_t gen, uint32_t *next)
{
	if (was_unanswered(c->tid) && still_pending(c->tid)) {
		c->flags |= NW_THR_NO_REPLY;
		return 0;
	}
	/* A slot a late handler is still writing is skipped. */
	while (*next < t->count &&
	       (atomic_load_explicit(&t->slot[*next].state, memory_order_acquire) & 3) == PH_WRITING)
		(*next)++;
	if (*next >= t->count) {
		c->flags |= NW_THR_NO_REPLY;
		return 0;
	}
	struct reply *r = &t->slot[*next];
	r->n = r->first = r->in_nccl = 0;
	atomic_store_explicit(&r->state, STATE(gen, PH_ARMED), memory_order_release);
	if (send_signal(c->tid, gen << TOKEN_INDEX_BITS | *next) != 0) {
		atomic_store_explicit(&r->state, STATE(gen, PH_ABANDONED), memory_order_relaxed);
		if (errno == ESRCH)
			c->gone = 1;
		else
			c->flags |= NW_THR_NO_REPLY;
		return 0;
	}
	c->slot = (*next)++;
	return 1;
}

/* Signal every listed thread marked for it; returns how many were sent. */
static uint32_t signal_threads(struct reply_table *t, uint32_t n, uint32_t self, uint64_t gen)
{
	uint32_t sent = 0, next = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct cap_thread *c = &st.thr[i];
		c->slot = NO_SLOT;
		if (c->tid == self || !c->want_signal)
			continue;
		sent += (uint32_t)signal_one(t, c, gen, &next);
	}
	return sent;
}

/* Some thread that has not answered yet does not block our signal: it
 * will answer once it runs (on a loaded machine that can take a while). */
static int unanswered_can_reply(uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		const struct cap_thread *c = &st.thr[i];
		if (c->slot != NO_SLOT && !c->answered && status_has_signal(c->tid, "\nSigBlk:") == 0)
			return 1;
	}
	return 0;
}

/* Poll in 1 ms steps until every signalled thread answered, or 1 s in all.
 * After 100 ms without a new answer, stop early if every thread still
 * silent blocks the signal (it never answers); a starved thread that can
 * answer is waited for, within the 1 s. */
static void wait_replies(struct reply_table *t, uint32_t n, uint64_t gen, uint32_t pending)
{
	uint64_t start = now_ns(), last = start;
	while (pending) {
		for (uint32_t i = 0; i < n; i++) {
			struct cap_thread *c = &st.thr[i];
			if (c->slot == NO_SLOT || c->answered)
				continue;
			if (atomic_load_explicit(&t->slot[c->slot].state, memory_order_acquire) ==
			    STATE(gen, PH_DONE)) {
				c->answered = 1;
				pending--;
				last = now_ns();
			}
		}
		if (!pending)
			break;
		uint64_t now = now_ns();
		if (now - start >= WAIT_TOTAL_NS)
			break;
		if (now - last >= WAIT_IDLE_NS) {
			if (!unanswered_can_reply(n))
				break;
			last = now;
		}
		struct timespec step = { 0, (long)WAIT_STEP_NS };
		nanosleep(&step, NULL);
	}
	/* Close the slots of threads that did not answer; one that answers
	 * between the last poll and this swap still counts. */
	st.unanswered_count = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct cap_thread *c = &st.thr[i];
		if (c->slot != NO_SLOT && !c->answered) {
			uint64_t s = STATE(gen, PH_ARMED);
			if (!atomic_compare_exchange_strong_explicit(&t->slot[c->slot].state, &s,
			                                             STATE(gen, PH_ABANDONED),
			                                             memory_order_acquire, memory_order_acquire) &&
			    s == STATE(gen, PH_DONE))
				c->answered = 1;
			else
				c->flags |= NW_THR_NO_REPLY;
		}
		if ((c->flags & NW_THR_NO_REPLY) && st.unanswered_count < st.threads)
			st.unanswered[st.unanswered_count++] = c->tid;
	}
}

/* The capture core's symbol lookup, for nw_symbolize. */
static int core_symbol(void *ctx, uint64_t addr, char *name, size_t len, uint64_t *offset)
{
	return nw_cap_symbol(ctx, addr, name, len, offset);
}

/* Name `ip`, looking up `addr` (ip - 1 for a return address). */
static void describe(struct nw_seg_frame *f, uint64_t ip, uint64_t addr, uint32_t module_capacity)
{
	memset(f, 0, sizeof(*f));
	f->ip = ip;
	uint32_t m = nw_modules_find(&st.buf->modules, addr);
	if (m && m <= module_capacity) {
		f->module = m;
		f->module_offset = ip - st.buf->modules.mod[m - 1].base;
	}
	struct nw_name *name;
	uint64_t start;
	if (nw_symbolize(addr, &name, &start) && start <= ip) {
		f->symbol = nw_strtab_add(&st.strtab, name);
		if (f->symbol)
			f->symbol_offset = ip - start;
	}
}

static void describe_thread(uint32_t i, const struct reply *r, uint32_t fcap, uint32_t module_capacity)
{
	struct nw_seg_thread *t = &st.seg_thr[i];
	struct nw_seg_frame *f = &st.seg_frames[(size_t)i * st.frames];
	t->tid = st.thr[i].tid;
	t->flags = st.thr[i].flags;
	read_name(t->tid, t->name);
	if (!r)
		return;
	uint32_t n = r->n - r->first;
	if (n > fcap) {
		n = fcap;
		t->flags |= NW_THR_TRUNCATED;
	}
	if (r->in_nccl)
		t->flags |= NW_THR_IN_NCCL;
	for (uint32_t k = 0; k < n; k++) {
		uint64_t ip = r->ip[r->first + k];
		/* Above frame 0 the address is a return address: the call may
		 * be the last instruction of its function. */
		describe(&f[k], ip, k == 0 ? ip : ip - 1, module_capacity);
	}
	t->nframes = n;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static uint32_t sort_unique(uint64_t *v, uint32_t n)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u64);
	uint32_t m = 1;
	for (uint32_t i = 1; i < n; i++)
		if (v[i] != v[m - 1])
			v[m++] = v[i];
	return m;
}

/* The ip-symbol table: every distinct address of the op-stack array,
 * sorted (if there are more than fit, the lowest are kept). */
static uint32_t describe_opstacks(const struct nw_seg_stack_header *area, uint32_t module_capacity)
{
	if (!area->opstack_offset || !area->opstack_depth || !st.ipsyms)
		return 0;
	const uint64_t *ops = (const uint64_t *)((const char *)area + area->opstack_offset);
	uint64_t total = (uint64_t)area->opstack_count * area->opstack_depth;
	uint32_t cap = st.ipsyms, room = 2 * cap, n = 0;
	uint64_t seen[SEEN_FILTER];
	memset(seen, 0, sizeof(seen));
	for (uint64_t i = 0; i < total; i++) {
		uint64_t ip = __atomic_load_n(&ops[i], __ATOMIC_RELAXED);
		uint32_t h = (uint32_t)((ip * 0x9e3779b97f4a7c15ull) >> 54) & (SEEN_FILTER - 1);
		if (ip == 0 || seen[h] == ip)
			continue;
		seen[h] = ip;
		if (n == room) {
			n = sort_unique(st.ips, n);
			if (n > cap)
				n = cap;
		}
		st.ips[n++] = ip;
	}
	n = sort_unique(st.ips, n);
	if (n > cap)
		n = cap;
	for (uint32_t i = 0; i < n; i++)
		describe(&st.seg_ipsyms[i], st.ips[i], st.ips[i] - 1, module_capacity);
	return n;
}

/* Publish the staged capture. `capture` 0: the same capture again with
 * new Python call site names (nw_stacks_name_sites), not counted as one. */
static void write_area(struct nw_seg_stack_header *area, uint32_t n, uint32_t ipsyms,
                       uint32_t modules, uint64_t request_id, uint32_t note, int capture)
{
	char *base = (char *)area;
	uint32_t s = atomic_load_explicit(&area->seq, memory_order_relaxed);
	s += s & 1;      /* an earlier writer stopped half way: keep odd = being written */
	/* Odd before any field: a release fence after the store (readers copy,
	 * then check seq). ThreadSanitizer does not model fences: there a
	 * sequentially consistent store stands in, as in interpose/ring.h. */
#if defined(__SANITIZE_THREAD__)
	atomic_store_explicit(&area->seq, s + 1, memory_order_seq_cst);
#else
	atomic_store_explicit(&area->seq, s + 1, memory_order_release);
	atomic_thread_fence(memory_order_release);
#endif

	area->thread_count = n;
	memcpy(base + area->thread_offset, st.seg_thr, (size_t)st.threads * sizeof(*st.seg_thr));
	memcpy(base + area->frame_offset, st.seg_frames,
	       (size_t)st.threads * st.frames * sizeof(*st.seg_frames));
	area->module_count = modules;
	struct nw_seg_module *m = (struct nw_seg_module *)(base + area->module_offset);
	if (modules)                 /* a capture wrote them: st.buf is there */
		memcpy(m, st.buf->modules.mod, modules * sizeof(*m));
	memset(m + modules, 0, (size_t)(area->module_capacity - modules) * sizeof(*m));
	memcpy(base + area->strtab_offset, st.strtab.buf, area->strtab_size);
	area->strtab_used = st.strtab.used;
	area->ipsym_count = ipsyms;
	memcpy(base + area->ipsym_offset, st.seg_ipsyms, (size_t)st.ipsyms * sizeof(*st.seg_ipsyms));
	struct nw_seg_stack_ext *ext = (struct nw_seg_stack_ext *)(area + 1);
	if (area->thread_offset >= sizeof(*area) + sizeof(*ext) && ext->ext_size >= sizeof(*ext))
		ext->native_note = note;
	nw_pystack_write(area);
	if (capture) {
		area->capture_ns = now_ns();
		area->request_id = request_id;
		area->captures++;
	}

	atomic_store_explicit(&area->seq, s + 2, memory_order_release);
}

/* The thread's own block of signals has ours (1), not (0), unknown (-1). */
static int blocks_signal(uint32_t tid)
{
	return capture_sig ? status_has_signal(tid, "\nSigBlk:") : 1;
}

/* One thread's answer from the capture core, into st.thr[i] / st.core[i];
 * counts what could not be done. */
struct core_tally {
	uint32_t denied, failed, left_running, running_blocked, sent, next;
	const char *why;            /* of a thread without a stack */
	struct reply_table *t;
	uint64_t gen;
};

static void core_answer(struct core_tally *y, uint32_t i, enum nw_cap_result rc,
                        const struct nw_cap_stack *cs)
{
	struct cap_thread *c = &st.thr[i];
	switch (rc) {
	case NW_CAP_OK: {
		struct reply *r = &st.core[i];
		uint32_t k = cs->n < REPLY_FRAMES ? cs->n : REPLY_FRAMES;
		memcpy(r->ip, cs->ip, k * sizeof(r->ip[0]));
		r->n = k;
		r->first = 0;
		r->in_nccl = 0;
		c->flags |= cs->flags;
		c->core = 1;
		break;
	}
	case NW_CAP_GONE:
		c->gone = 1;
		break;
	case NW_CAP_RUNNING:
		break;              /* watched: signalled by take_running, or not */
	case NW_CAP_KERNEL:
		c->flags |= NW_THR_NO_REPLY;
		y->left_running++;
		y->why = cs->why;
		break;
	case NW_CAP_DENIED:
		c->flags |= NW_THR_NO_REPLY;
		y->denied++;
		y->why = cs->why;
		break;
	default:
		c->flags |= NW_THR_NO_REPLY;
		y->failed++;
		y->why = cs->why;
		break;
	}
}

/* nw_cap_watch found watched thread k running user code: signal it now,
 * unless it blocks our signal (its SigBlk, read just before: the window
 * in which it could enter a blocking call). */
static void take_running(void *arg, uint32_t k)
{
	struct core_tally *y = arg;
	struct cap_thread *c = &st.thr[st.watch_idx[k]];
	if (blocks_signal(c->tid) == 0) {
		c->want_signal = 1;
		y->sent += (uint32_t)signal_one(y->t, c, y->gen, &y->next);
	} else {
		c->flags |= NW_THR_NO_REPLY;
		y->running_blocked++;
	}
}

/* Every thread but ourselves through the capture core: the blocked ones
 * read from /proc at once, the running ones watched together
 * (nw_cap_watch) until each blocks (read), shows itself running user code
 * alone (sent the signal that moment) or is left running. Sets st.note
 * when something could not be done. Returns the signals sent. */
static uint32_t core_threads(struct reply_table *t, uint32_t n, uint32_t self, uint64_t gen)
{
	struct core_tally y = { .t = t, .gen = gen };
	uint32_t nrun = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct cap_thread *c = &st.thr[i];
		c->want_signal = 0;
		if (c->tid == self)
			continue;
		enum nw_cap_result rc = nw_cap_thread(core, c->tid, &st.buf->cs);
		if (rc == NW_CAP_RUNNING) {
			st.watch_idx[nrun] = i;
			st.watch_tid[nrun++] = c->tid;
		}
		core_answer(&y, i, rc, &st.buf->cs);
	}
	nw_cap_watch(core, nrun, st.watch_tid, st.watch_stk, st.watch_rc, 0, take_running, &y);
	for (uint32_t k = 0; k < nrun; k++)
		core_answer(&y, st.watch_idx[k], st.watch_rc[k], &st.watch_stk[k]);
	uint32_t bad = y.denied + y.failed, without = bad + y.left_running + y.running_blocked;
	if (bad && bad + 1 >= n) {
		NW_LOG_ONCE("thread stacks: %s (is /proc hidden?); no stacks", y.why ? y.why : "capture failed");
		snprintf(st.note_buf, sizeof(st.note_buf), "no stacks: %s", y.why ? y.why : "capture failed");
		st.note = st.note_buf;
	} else if (without) {
		snprintf(st.note_buf, sizeof(st.note_buf), "%u thread%s without a stack (%s)", without,
		         without == 1 ? "" : "s",
		         y.why ? y.why : "running user code with the capture signal blocked");
		st.note = st.note_buf;
	}
	return y.sent;
}

/* The range of this library (or program), where the NCCL wrappers are: a
 * thread the core captured is inside NCCL if one of its frames is there. */
static void own_range(uint64_t *lo, uint64_t *hi)
{
	Dl_info info;
	*lo = *hi = 0;
	if (!dladdr((void *)&nw_stacks_capture, &info))
		return;
	for (uint32_t i = 0; i < st.buf->modules.count; i++)
		if (st.buf->modules.mod[i].base == (uint64_t)(uintptr_t)info.dli_fbase) {
			*lo = st.buf->modules.lo[i];
			*hi = st.buf->modules.mod[i].base + st.buf->modules.mod[i].size;
		}
}

/* Ready to capture: libunwind loaded (its result returned), the capture
 * signal still ours, the capture core open for this process (a fork
 * child captures itself, not the process it was forked from). */
static int prepare_capture(void)
{
	/* Loaded at the first NCCL call (nw_watchdog_start): a no-op here. */
	int unw = nw_unw_load();
	if (capture_sig && !handler_is_ours(capture_sig)) {
		nw_log("signal %d was given another handler by the application; thread stacks off",
		       capture_sig);
		capture_sig = 0;
	}
	if (core && nw_cap_pid(core) != getpid()) {
		nw_cap_close(core);
		core = NULL;
	}
	if (!signal_all && !core && !core_failed && unw) {
		core = nw_cap_open(getpid());
		if (!core) {
			core_failed = 1;
			nw_log("thread stacks: cannot start the capture core: %s; %s", strerror(errno),
			       capture_sig ? "using the capture signal for every thread" : "no stacks");
		}
	}
	return unw;
}

/* Every other thread's stack, by the capture core or the capture signal,
 * or none (the note says why): how many signals were sent. */
static uint32_t ask_threads(struct reply_table *t, uint32_t n, uint32_t self, uint64_t gen, int unw)
{
	uint32_t sent = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct cap_thread *c = &st.thr[i];
		c->flags = c->tid == self ? NW_THR_WATCHDOG : 0;
		c->slot = NO_SLOT;
		c->answered = c->gone = c->core = 0;
		c->want_signal = c->tid != self && capture_sig && !core;
	}
	if (!unw) {
		for (uint32_t i = 0; i < n; i++)
			if (st.thr[i].tid != self)
				st.thr[i].flags |= NW_THR_NO_REPLY;
		st.note = "no native stacks: libunwind could not be loaded";
	} else if (st.no_proc) {
		NW_LOG_ONCE("thread stacks: /proc/self/task cannot be read (is /proc hidden?); no stacks");
		st.note = "no stacks: /proc/self/task cannot be read";
	} else if (core) {
		nw_cap_begin(core);
		sent = core_threads(t, n, self, gen);
	} else if (capture_sig) {
		sent = signal_threads(t, n, self, gen);
	} else {
		for (uint32_t i = 0; i < n; i++)
			if (st.thr[i].tid != self)
				st.thr[i].flags |= NW_THR_NO_REPLY;
	}
	return sent;
}

/* The tables rebuilt from empty, the module list refreshed first. */
static void clear_tables(void)
{
	int unloaded = nw_modules_refresh(&st.buf->modules);
	if (unloaded && core)
		nw_cap_flush(core);
	nw_symbolize_begin(unloaded, core ? core_symbol : NULL, core);
	nw_strtab_reset(&st.strtab);
	memset(st.strtab.buf, 0, st.strtab.size);
	memset(st.seg_thr, 0, (size_t)st.threads * sizeof(*st.seg_thr));
	memset(st.seg_frames, 0, (size_t)st.threads * st.frames * sizeof(*st.seg_frames));
	memset(st.seg_ipsyms, 0, (size_t)st.ipsyms * sizeof(*st.seg_ipsyms));
}

/* Each thread still there with the stack it gave (its reply, the core's
 * copy, the watchdog's own), moved down over the gone ones: how many. */
static uint32_t describe_threads(const struct reply_table *t, uint32_t n, uint32_t self, uint32_t fcap,
                                 uint32_t module_capacity)
{
	uint64_t lo, hi;
	own_range(&lo, &hi);
	uint32_t kept = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (st.thr[i].gone)
			continue;
		const struct reply *r = NULL;
		if (st.thr[i].tid == self) {
			r = &st.buf->self;
		} else if (st.thr[i].core) {
			struct reply *cr = &st.core[i];
			/* Frame 0 is where it blocks (libc); a wrapper of ours above it. */
			for (uint32_t k = 1; k < cr->n && !cr->in_nccl; k++)
				cr->in_nccl = cr->ip[k] > lo && cr->ip[k] <= hi;
			r = cr;
		} else if (st.thr[i].answered) {
			r = &t->slot[st.thr[i].slot];
			st.thr[i].flags |= NW_THR_REGS_SIGNAL;
		}
		st.thr[kept] = st.thr[i];
		if (st.thr[i].core)
			st.core[kept] = st.core[i];
		if (r == &st.core[i])
			r = &st.core[kept];
		describe_thread(kept, r, fcap, module_capacity);
		kept++;
	}
	return kept;
}

int nw_stacks_capture(struct nw_seg_stack_header *area, uint64_t request_id)
{
	if (!area || area->magic != NW_STACK_MAGIC || !area->thread_capacity || !area->frame_capacity ||
	    !area->strtab_size) {
		NW_LOG_ONCE("stack capture: the stack area is not initialized; no stacks");
		return 0;
	}
	if (!st.buf)
		st.buf = calloc(1, sizeof(*st.buf));
	if (!st.buf || ensure_buffers(area) != 0) {
		NW_LOG_ONCE("stack capture: out of memory; no stacks");
		return 0;
	}
	int unw = prepare_capture();
	uint32_t self = (uint32_t)gettid();
	struct reply_table *t = atomic_load_explicit(&replies, memory_order_relaxed);
	uint64_t gen = ++capture_gen;
	uint32_t n = list_threads(area->thread_capacity, self);
	st.note = NULL;
	uint32_t sent = ask_threads(t, n, self, gen, unw);
	if (unw)
		unwind_into(&st.buf->self, 0);
	else
		st.buf->self.n = st.buf->self.first = 0;
	wait_replies(t, n, gen, sent);
	if (st.left_out && !st.note) {
		snprintf(st.note_buf, sizeof(st.note_buf), "%u thread%s left out: the thread table holds %u "
		         "(NCCLWATCH_STACK_THREADS)", st.left_out, st.left_out == 1 ? "" : "s", area->thread_capacity);
		st.note = st.note_buf;
	}

	clear_tables();
	uint32_t module_capacity = area->module_capacity < NW_STACK_MODULES ? area->module_capacity
	                                                                     : NW_STACK_MODULES;
	uint32_t modules = st.buf->modules.count < module_capacity ? st.buf->modules.count : module_capacity;
	uint32_t fcap = area->frame_capacity < NW_STACK_FRAMES ? area->frame_capacity : NW_STACK_FRAMES;
	uint32_t kept = describe_threads(t, n, self, fcap, module_capacity);
	uint32_t note = st.note ? nw_strtab_add_str(&st.strtab, st.note) : 0;
	uint32_t ipsyms = describe_opstacks(area, module_capacity);
	/* Python stacks next to the native ones (pystack/), tied by tid. */
	kept = nw_pystack_capture(area, st.seg_thr, kept, st.threads, st.seg_frames, st.frames, &st.strtab);
	write_area(area, kept, ipsyms, modules, request_id, note, 1);
	st.last_note = note;
	return (int)kept;
}

uint32_t nw_stacks_left_out(void)
{
	return st.left_out;
}

void nw_stacks_name_sites(struct nw_seg_stack_header *area, uint64_t ring_head)
{
	if (!area || area->magic != NW_STACK_MAGIC || !area->thread_capacity || !area->frame_capacity ||
	    !area->strtab_size || ensure_buffers(area) != 0)
		return;
	if (!st.strtab.used)
		nw_strtab_reset(&st.strtab);    /* no capture yet: offset 0 stays "none" */
	if (!nw_pystack_name_new_sites(area, ring_head, &st.strtab))
		return;
	/* The staged buffers still hold the last capture (or nothing): the
	 * same threads, symbols and modules again, with the new names. */
	write_area(area, area->thread_count, area->ipsym_count, area->module_count, area->request_id,
	           st.last_note, 0);
}
