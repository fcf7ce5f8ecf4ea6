/* test-unit-stacks: thread stack capture (watchdog/stacks.c) into a stack
 * area, read back only through the area's own offsets, as a reader in
 * another process would.
 *
 * Threads park in distinctly named functions (nanosleep, a condvar, a busy
 * loop), one blocks every signal, one pretends to be inside NCCL; a
 * "watchdog" thread captures. Checked: every thread of /proc/self/task is
 * there, main first; each parked thread's frames name its function, with
 * the right offset; module table and module offsets; flags (watchdog, no
 * reply, in NCCL); names; the seqlock and capture count; the string table
 * rebuilt, never duplicated; a late reply rejected by its generation; a
 * small thread table; per-op stacks resolved through the ip-symbol table;
 * the signal choice and NCCLWATCH_SIGNAL. All with NCCLWATCH_STACK_SIGNAL=1
 * (the signal to every thread); the default path is tests/capture/'s. */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

#include "../../watchdog/stacks.h"
#include "../../interpose/hooks.h"
#include "../../interpose/thread.h"

/* The interposer defines it; this test links without it. */
__thread struct nw_thread nw_tls __attribute__((tls_model("initial-exec")));
/* stacks.c: replies that came after their capture gave up. */
extern _Atomic uint64_t nw_stacks_late_replies;

#define THREADS 64                  /* thread capacity of the test areas */
#define RING 64

static int failures;

#define CHECK(cond, ...) do { \
	if (cond) { printf("ok   "); } else { printf("FAIL "); failures++; } \
	printf(__VA_ARGS__); printf("\n"); fflush(stdout); \
} while (0)

static atomic_int stop, ready, release_blocker, blocker_unblocked;
static pthread_mutex_t park_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t park_cv = PTHREAD_COND_INITIALIZER;
static volatile unsigned long spins;

enum { T_SLEEP, T_FUTEX, T_SPIN, T_BLOCKER, T_NCCL, T_WATCHDOG, T_COUNT };
static const char *thread_name[T_COUNT] = { "nanosleeper", "futexer", "spinner", "blocker",
                                            "ncclcaller", "watchdog" };
static _Atomic uint32_t tids[T_COUNT];

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void started(int which)
{
	pthread_setname_np(pthread_self(), thread_name[which]);
	atomic_store(&tids[which], (uint32_t)gettid());
	atomic_fetch_add(&ready, 1);
}

static __attribute__((noinline, noclone)) void *parked_in_nanosleep(void *arg)
{
	(void)arg;
	started(T_SLEEP);
	while (!atomic_load(&stop)) {
		struct timespec ts = { 0, 20 * 1000000L };
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static __attribute__((noinline, noclone)) void *parked_in_futex(void *arg)
{
	(void)arg;
	started(T_FUTEX);
	pthread_mutex_lock(&park_mu);
	while (!atomic_load(&stop))
		pthread_cond_wait(&park_cv, &park_mu);
	pthread_mutex_unlock(&park_mu);
	return NULL;
}

static __attribute__((noinline, noclone)) void *busy_spinner(void *arg)
{
	(void)arg;
	started(T_SPIN);
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		spins++;
	return NULL;
}

static __attribute__((noinline, noclone)) void *blocks_signals(void *arg)
{
	(void)arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	started(T_BLOCKER);
	while (!atomic_load(&release_blocker))
		sleep_ms(2);
	/* Our capture signal, still queued, is delivered here: too late. */
	pthread_sigmask(SIG_UNBLOCK, &all, NULL);
	atomic_store(&blocker_unblocked, 1);
	while (!atomic_load(&stop))
		sleep_ms(20);
	return NULL;
}

static __attribute__((noinline, noclone)) void *inside_fake_nccl(void *arg)
{
	(void)arg;
	nw_tls.inside = 1;
	started(T_NCCL);
	while (!atomic_load(&stop))
		sleep_ms(20);
	nw_tls.inside = 0;
	return NULL;
}

/* ---- the watchdog thread: runs captures on request ---- */

static pthread_mutex_t wd_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wd_cv = PTHREAD_COND_INITIALIZER;
static struct nw_seg_stack_header *wd_area;
static uint64_t wd_request;
static int wd_pending, wd_result, wd_quit;
static double wd_elapsed;

static __attribute__((noinline, noclone)) void *watchdog_main(void *arg)
{
	(void)arg;
	started(T_WATCHDOG);
	pthread_mutex_lock(&wd_mu);
	for (;;) {
		while (!wd_pending && !wd_quit)
			pthread_cond_wait(&wd_cv, &wd_mu);
		if (wd_quit)
			break;
		pthread_mutex_unlock(&wd_mu);
		double t0 = now_s();
		int r = nw_stacks_capture(wd_area, wd_request);
		double t1 = now_s();
		pthread_mutex_lock(&wd_mu);
		wd_result = r;
		wd_elapsed = t1 - t0;
		wd_pending = 0;
		pthread_cond_broadcast(&wd_cv);
	}
	pthread_mutex_unlock(&wd_mu);
	return NULL;
}

static __attribute__((noinline, noclone)) int run_capture(struct nw_seg_stack_header *area,
                                                         uint64_t request, double *elapsed)
{
	pthread_mutex_lock(&wd_mu);
	wd_area = area;
	wd_request = request;
	wd_pending = 1;
	pthread_cond_broadcast(&wd_cv);
	while (wd_pending)
		pthread_cond_wait(&wd_cv, &wd_mu);
	int r = wd_result;
	*elapsed = wd_elapsed;
	pthread_mutex_unlock(&wd_mu);
	return r;
}

/* ---- reading the area through its offsets ---- */

static const struct nw_seg_thread *area_thread(const struct nw_seg_stack_header *a, uint32_t i)
{
	return (const struct nw_seg_thread *)((const char *)a + a->thread_offset) + i;
}

static const struct nw_seg_frame *area_frames(const struct nw_seg_stack_header *a, uint32_t i)
{
	return (const struct nw_seg_frame *)((const char *)a + a->frame_offset) +
	       (size_t)i * a->frame_capacity;
}

static const struct nw_seg_module *area_module(const struct nw_seg_stack_header *a, uint32_t i)
{
	return (const struct nw_seg_module *)((const char *)a + a->module_offset) + i;
}

static const char *area_str(const struct nw_seg_stack_header *a, uint32_t off)
{
	return (const char *)a + a->strtab_offset + off;
}

/* `sym` is `name`, or a compiler clone of it (name.constprop.0). */
static int is_function(const char *sym, const char *name)
{
	size_t n = strlen(name);
	return strncmp(sym, name, n) == 0 && (sym[n] == 0 || sym[n] == '.');
}

static int find_thread(const struct nw_seg_stack_header *a, uint32_t tid)
{
	for (uint32_t i = 0; i < a->thread_count; i++)
		if (area_thread(a, i)->tid == tid)
			return (int)i;
	return -1;
}

/* The frame of thread i in function `name`, or NULL. */
static const struct nw_seg_frame *frame_in(const struct nw_seg_stack_header *a, uint32_t i,
                                           const char *name)
{
	const struct nw_seg_thread *t = area_thread(a, i);
	const struct nw_seg_frame *f = area_frames(a, i);
	for (uint32_t k = 0; k < t->nframes && k < a->frame_capacity; k++)
		if (f[k].symbol && f[k].symbol < a->strtab_used && is_function(area_str(a, f[k].symbol), name))
			return &f[k];
	return NULL;
}

static void print_thread(const struct nw_seg_stack_header *a, uint32_t i)
{
	const struct nw_seg_thread *t = area_thread(a, i);
	printf("     thread %u \"%s\" flags 0x%x, %u frames:", t->tid, t->name, t->flags, t->nframes);
	const struct nw_seg_frame *f = area_frames(a, i);
	for (uint32_t k = 0; k < t->nframes && k < 8; k++)
		printf(" %s+%#llx", f[k].symbol ? area_str(a, f[k].symbol) : "?",
		       (unsigned long long)f[k].symbol_offset);
	printf("%s\n", t->nframes > 8 ? " ..." : "");
}

static uint32_t count_tasks(void)
{
	uint32_t n = 0;
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	if (d)
		closedir(d);
	return n;
}

/* Checks every capture must pass, whatever the threads do. */
static void check_consistent(const struct nw_seg_stack_header *a, const char *what)
{
	uint32_t seq = atomic_load(&a->seq);
	CHECK(seq % 2 == 0 && seq == 2 * a->captures, "%s: seq %u even, = 2 x captures (%llu)", what, seq,
	      (unsigned long long)a->captures);
	CHECK(a->thread_count > 0 && a->thread_count <= a->thread_capacity, "%s: %u threads within capacity %u",
	      what, a->thread_count, a->thread_capacity);
	CHECK(area_thread(a, 0)->tid == (uint32_t)getpid(), "%s: main thread first", what);

	/* Module offsets and symbol references. */
	int bad_module = 0, bad_symbol = 0, frames = 0, named = 0;
	for (uint32_t i = 0; i < a->thread_count; i++) {
		const struct nw_seg_frame *f = area_frames(a, i);
		for (uint32_t k = 0; k < area_thread(a, i)->nframes; k++, frames++) {
			if (f[k].module) {
				if (f[k].module > a->module_count) {
					bad_module++;
					continue;
				}
				const struct nw_seg_module *m = area_module(a, f[k].module - 1);
				if (f[k].module_offset != f[k].ip - m->base || f[k].ip < m->base ||
				    f[k].ip > m->base + m->size)
					bad_module++;
			}
			if (f[k].symbol) {
				named++;
				if (f[k].symbol >= a->strtab_used)
					bad_symbol++;
			}
		}
	}
	CHECK(bad_module == 0, "%s: every frame's module_offset = ip - module base, ip inside the module (%d frames)",
	      what, frames);
	CHECK(bad_symbol == 0 && named > 0, "%s: %d named frames, every symbol inside the string table", what, named);

	/* String table: "" at 0, terminated, every string once. */
	const char *s = area_str(a, 0);
	int dup = 0, strings = 0;
	CHECK(a->strtab_used >= 1 && a->strtab_used <= a->strtab_size && s[0] == 0 && s[a->strtab_used - 1] == 0,
	      "%s: string table used %u of %u, starts with \"\", ends with a NUL", what, a->strtab_used, a->strtab_size);
	for (uint32_t i = 1; i < a->strtab_used; i += (uint32_t)strlen(s + i) + 1) {
		strings++;
		for (uint32_t j = i + (uint32_t)strlen(s + i) + 1; j < a->strtab_used; j += (uint32_t)strlen(s + j) + 1)
			if (strcmp(s + i, s + j) == 0)
				dup++;
	}
	CHECK(dup == 0, "%s: %d strings, none twice", what, strings);
}

/* ---- signal choice (each case in a child, before the parent's setup) ---- */

static void app_handler(int sig)
{
	(void)sig;
}

static int child_setup(const char *env, int handled)
{
	pid_t pid = fork();
	if (pid == 0) {
		if (handled)
			signal(handled, app_handler);
		setenv("NCCLWATCH_SIGNAL", env, 1);
		int r = nw_stacks_setup();
		struct sigaction cur;
		int sig = atoi(env);
		int ours = sig > 0 && sigaction(sig, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO);
		_exit(r == 0 ? (ours ? 10 : 11) : (handled && !ours ? 20 : 21));
	}
	int status = 0;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void check_signal_choice(void)
{
	char buf[16];
	snprintf(buf, sizeof(buf), "%d", SIGRTMIN + 5);
	CHECK(child_setup(buf, SIGRTMIN + 5) == 20, "NCCLWATCH_SIGNAL=%s with an application handler: refused, handler kept", buf);
	snprintf(buf, sizeof(buf), "%d", SIGRTMIN + 6);
	CHECK(child_setup(buf, 0) == 10, "NCCLWATCH_SIGNAL=%s (free): used", buf);
	CHECK(child_setup("10", 0) == 21, "NCCLWATCH_SIGNAL=10 (SIGUSR1, not real-time): refused");

	/* The process's own setup: an "application" already handles SIGRTMAX-1. */
	signal(SIGRTMAX - 1, app_handler);
	struct sigaction before[_NSIG];
	int valid[_NSIG];
	for (int s = 1; s < _NSIG; s++)
		valid[s] = sigaction(s, NULL, &before[s]) == 0;   /* glibc's own two fail */
	CHECK(nw_stacks_setup() == 0, "nw_stacks_setup() = 0");
	CHECK(nw_stacks_setup() == 0, "nw_stacks_setup() again = 0 (once per process)");
	int changed = 0, chosen = 0, outside = 0;
	for (int s = 1; s < _NSIG; s++) {
		struct sigaction now;
		if (!valid[s] || sigaction(s, NULL, &now) != 0)
			continue;
		if (now.sa_handler == before[s].sa_handler && now.sa_flags == before[s].sa_flags)
			continue;
		changed++;
		chosen = s;
		if (s < SIGRTMIN + 3 || s > SIGRTMAX - 1 || !(now.sa_flags & SA_SIGINFO) ||
		    !(now.sa_flags & SA_RESTART) || before[s].sa_handler != SIG_DFL)
			outside++;
	}
	struct sigaction app;
	sigaction(SIGRTMAX - 1, NULL, &app);
	CHECK(changed == 1 && outside == 0, "one signal taken: %d (SIGRTMIN+%d), was SIG_DFL, SA_SIGINFO|SA_RESTART",
	      chosen, chosen - SIGRTMIN);
	CHECK(app.sa_handler == app_handler, "the application's handler on SIGRTMAX-1 is untouched");
}

/* ---- per-op stacks ---- */

static __attribute__((noinline, noclone)) void op_caller(uint64_t ticket)
{
	nw_op_hooks_run(ticket);             /* as the hot path calls it (interpose/hooks.h) */
	__asm__ volatile("" ::: "memory");   /* not a tail call */
}

static int pycalls;
static uint64_t pycall_ticket;
static void count_pycall(uint64_t ticket)
{
	pycalls++;
	pycall_ticket = ticket;
}

static int cmp_ipsym(const void *key, const void *elem)
{
	uint64_t ip = *(const uint64_t *)key, e = ((const struct nw_seg_frame *)elem)->ip;
	return ip < e ? -1 : ip > e;
}

static void check_opstacks(void)
{
	uint64_t size0 = nw_stack_area_size(THREADS, RING, 0, 0, 0), size = nw_stack_area_size(THREADS, RING, 1, 0, 0);
	struct nw_seg_stack_header *a = aligned_alloc(64, size);
	memset(a, 0, size);
	nw_stack_area_init(a, THREADS, RING, 1, 0, 0);
	CHECK(size % 64 == 0 && size >= size0 + (uint64_t)RING * NW_OPSTACK_DEPTH * 8,
	      "op-stack area: %llu bytes (%llu without op stacks)", (unsigned long long)size, (unsigned long long)size0);
	CHECK(a->opstack_offset % 64 == 0 && a->opstack_offset >= a->strtab_offset + a->strtab_size &&
	      a->opstack_offset + (uint64_t)RING * NW_OPSTACK_DEPTH * 8 <= size &&
	      a->opstack_depth == NW_OPSTACK_DEPTH && a->opstack_count == RING,
	      "op-stack array at %llu: %u x %u after the string table", (unsigned long long)a->opstack_offset,
	      a->opstack_count, a->opstack_depth);

	nw_opstack_enable(a, RING);
	uint64_t *ops = (uint64_t *)((char *)a + a->opstack_offset);
	CHECK(nw_opstack_base == ops && nw_opstack_mask == RING - 1, "nw_opstack_enable: base = the area's array, mask %u",
	      nw_opstack_mask);
	op_caller(RING + 5);             /* slot 5 */
	const uint64_t *slot = ops + 5 * NW_OPSTACK_DEPTH;
	int nonzero = 0, zero_tail = 1, others_zero = 1;
	for (int k = 0; k < NW_OPSTACK_DEPTH; k++) {
		if (slot[k])
			nonzero++;
		else
			for (int j = k; j < NW_OPSTACK_DEPTH; j++)
				zero_tail &= slot[j] == 0;
	}
	for (int s = 0; s < RING; s++)
		for (int k = 0; s != 5 && k < NW_OPSTACK_DEPTH; k++)
			others_zero &= ops[s * NW_OPSTACK_DEPTH + k] == 0;
	CHECK(nonzero >= 2 && zero_tail && others_zero, "ticket %d stored %d addresses in slot 5, zero-filled, no other slot touched",
	      RING + 5, nonzero);

	double el;
	run_capture(a, 0, &el);
	check_consistent(a, "op-stack capture");
	const struct nw_seg_frame *sy = (const struct nw_seg_frame *)((char *)a + a->ipsym_offset);
	int sorted = 1;
	for (uint32_t i = 1; i < a->ipsym_count; i++)
		sorted &= sy[i - 1].ip < sy[i].ip;
	CHECK(a->ipsym_count == (uint32_t)nonzero && sorted, "ip-symbol table: %u entries (one per address), sorted",
	      a->ipsym_count);
	int resolved = 0, at_op_caller = 0;
	for (int k = 0; k < nonzero; k++) {
		const struct nw_seg_frame *e = bsearch(&slot[k], sy, a->ipsym_count, sizeof(*sy), cmp_ipsym);
		if (!e || !e->symbol)
			continue;
		resolved++;
		const char *name = area_str(a, e->symbol);
		printf("     op frame %d: %#llx %s+%#llx\n", k, (unsigned long long)slot[k], name,
		       (unsigned long long)e->symbol_offset);
		if (is_function(name, "op_caller") && e->symbol_offset == slot[k] - (uint64_t)(uintptr_t)&op_caller)
			at_op_caller++;
	}
	CHECK(at_op_caller == 1 && resolved >= 2,
	      "op stack resolves by binary search: %d of %d named, the first in op_caller at the right offset",
	      resolved, nonzero);
	int with_module = 0;
	for (uint32_t i = 0; i < a->ipsym_count; i++)
		with_module += sy[i].module != 0 && sy[i].module <= a->module_count &&
		               sy[i].module_offset == sy[i].ip - area_module(a, sy[i].module - 1)->base;
	CHECK(with_module == (int)a->ipsym_count, "ip-symbol entries carry their module and module offset");

	/* Both per-op hooks on (NCCLWATCH_STACKS=1 in a Python program): the
	 * hot path's one hook runs the native stack's, then the call site's;
	 * the call site's off again, the native stack's alone. */
	NW_OP_HOOK_SET(pycall, count_pycall);
	op_caller(RING + 6);
	CHECK(pycalls == 1 && pycall_ticket == RING + 6 && ops[6 * NW_OPSTACK_DEPTH] != 0,
	      "both hooks: the call site's ran once with the ticket (%d), the native stack's stored slot 6", pycalls);
	NW_OP_HOOK_SET(pycall, NULL);
	op_caller(RING + 7);
	CHECK(pycalls == 1 && ops[7 * NW_OPSTACK_DEPTH] != 0, "call site's hook off: the native stack's alone ran");
	__atomic_store_n(&nw_opstack_base, NULL, __ATOMIC_RELEASE);
	free(a);
}

/* ---- the main checks ---- */

static void check_parked(const struct nw_seg_stack_header *a, int which, const char *fn, void *fn_addr)
{
	int i = find_thread(a, tids[which]);
	if (i < 0) {
		CHECK(0, "thread \"%s\" (%u) is in the capture", thread_name[which], tids[which]);
		return;
	}
	const struct nw_seg_thread *t = area_thread(a, (uint32_t)i);
	const struct nw_seg_frame *f = frame_in(a, (uint32_t)i, fn);
	if (!f)
		print_thread(a, (uint32_t)i);
	CHECK(f != NULL && strcmp(t->name, thread_name[which]) == 0 && !(t->flags & NW_THR_NO_REPLY),
	      "thread \"%s\" answered, %u frames, one in %s", t->name, t->nframes, fn);
	if (f && fn_addr)
		CHECK(f->symbol_offset == f->ip - (uint64_t)(uintptr_t)fn_addr,
		      "  its %s frame: symbol_offset %#llx = ip - &%s", fn, (unsigned long long)f->symbol_offset, fn);
}

static void check_modules(const struct nw_seg_stack_header *a)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	int have_exe = 0, have_libc = 0;
	uint64_t fn = (uint64_t)(uintptr_t)&parked_in_nanosleep;
	for (uint32_t i = 0; i < a->module_count; i++) {
		const struct nw_seg_module *m = area_module(a, i);
		const char *base = strrchr(m->path, '/');
		base = base ? base + 1 : m->path;
		if (strcmp(m->path, exe) == 0 && fn >= m->base && fn < m->base + m->size)
			have_exe = 1;
		if (strncmp(base, "libc.so", 7) == 0)
			have_libc = 1;
	}
	CHECK(have_exe, "module table has the test executable (%s) around its code", exe);
	CHECK(have_libc, "module table has libc (%u modules)", a->module_count);
}

int main(void)
{
	/* This test is about the signal path (a signal to every thread, the
	 * opt-in fallback); the default capture core is tests/capture/'s. */
	setenv("NCCLWATCH_STACK_SIGNAL", "1", 1);
	setvbuf(stdout, NULL, _IOLBF, 0);
	check_signal_choice();

	pthread_t th[T_COUNT];
	void *(*fn[T_COUNT])(void *) = { parked_in_nanosleep, parked_in_futex, busy_spinner, blocks_signals,
	                                 inside_fake_nccl, watchdog_main };
	for (int i = 0; i < T_COUNT; i++)
		pthread_create(&th[i], NULL, fn[i], NULL);
	while (atomic_load(&ready) < T_COUNT)
		sleep_ms(1);
	sleep_ms(50);   /* let them reach their parking places */

	/* Layout. */
	uint64_t size = nw_stack_area_size(THREADS, RING, 0, 0, 0);
	struct nw_seg_stack_header *a = aligned_alloc(64, size);
	memset(a, 0, size);
	nw_stack_area_init(a, THREADS, RING, 0, 0, 0);
	CHECK(size % 64 == 0 && a->magic == NW_STACK_MAGIC && a->thread_offset % 64 == 0 &&
	      a->frame_offset % 64 == 0 && a->module_offset % 64 == 0 && a->ipsym_offset % 64 == 0 &&
	      a->strtab_offset % 64 == 0 && a->opstack_offset == 0 && a->opstack_depth == 0 &&
	      a->thread_offset >= 128 && a->frame_offset >= a->thread_offset + THREADS * 64 &&
	      a->module_offset >= a->frame_offset + THREADS * NW_STACK_FRAMES * 32 &&
	      a->ipsym_offset >= a->module_offset + NW_STACK_MODULES * 256 &&
	      a->strtab_offset >= a->ipsym_offset + NW_STACK_IPSYMS * 32 &&
	      a->strtab_offset + a->strtab_size <= size && a->strtab_used == 1 && atomic_load(&a->seq) == 0,
	      "area layout: %llu bytes, sub-areas aligned and in order, no op stacks", (unsigned long long)size);

	/* Capture 1: the blocker cannot answer. */
	uint32_t tasks = count_tasks();
	double el1, el2, el3, el4;
	int n = run_capture(a, 7, &el1);
	printf("     capture 1: %d threads in %.3f s\n", n, el1);
	for (uint32_t i = 0; i < a->thread_count; i++)
		print_thread(a, i);
	CHECK(n == (int)tasks && a->thread_count == tasks, "capture 1: %d threads = %u in /proc/self/task", n, tasks);
	CHECK(a->captures == 1 && a->request_id == 7 && a->capture_ns != 0, "capture 1: captures 1, request_id 7, capture_ns set");
	check_consistent(a, "capture 1");
	check_modules(a);
	check_parked(a, T_SLEEP, "parked_in_nanosleep", (void *)&parked_in_nanosleep);
	check_parked(a, T_FUTEX, "parked_in_futex", (void *)&parked_in_futex);
	check_parked(a, T_SPIN, "busy_spinner", (void *)&busy_spinner);
	check_parked(a, T_NCCL, "inside_fake_nccl", (void *)&inside_fake_nccl);
	check_parked(a, T_WATCHDOG, "watchdog_main", (void *)&watchdog_main);
	CHECK(frame_in(a, 0, "run_capture") && frame_in(a, 0, "main"), "main thread: frames in run_capture and main");
	int b = find_thread(a, tids[T_BLOCKER]);
	CHECK(b >= 0 && (area_thread(a, (uint32_t)b)->flags & NW_THR_NO_REPLY) && area_thread(a, (uint32_t)b)->nframes == 0,
	      "blocker: NW_THR_NO_REPLY, no frames");
	CHECK(el1 < 1.5, "capture 1 waited %.3f s for it (bound: 100 ms without a reply, 1 s in all)", el1);
	int wd = 0, wd_ok = 0, in_nccl = 0, in_nccl_ok = 0;
	for (uint32_t i = 0; i < a->thread_count; i++) {
		const struct nw_seg_thread *t = area_thread(a, i);
		if (t->flags & NW_THR_WATCHDOG) {
			wd++;
			wd_ok = t->tid == tids[T_WATCHDOG];
		}
		if (t->flags & NW_THR_IN_NCCL) {
			in_nccl++;
			in_nccl_ok = t->tid == tids[T_NCCL];
		}
	}
	CHECK(wd == 1 && wd_ok, "exactly one thread flagged NW_THR_WATCHDOG: the watchdog");
	CHECK(in_nccl == 1 && in_nccl_ok, "exactly one thread flagged NW_THR_IN_NCCL: the one with nw_tls.inside = 1");
	uint32_t used1 = a->strtab_used;

	/* Capture 2: the blocker still blocks and its signal is still queued:
	 * not sent another one, not waited for. */
	n = run_capture(a, 0, &el2);
	printf("     capture 2: %d threads in %.3f s\n", n, el2);
	b = find_thread(a, tids[T_BLOCKER]);
	CHECK(a->captures == 2 && a->request_id == 0 && b >= 0 && (area_thread(a, (uint32_t)b)->flags & NW_THR_NO_REPLY),
	      "capture 2: captures 2, blocker NW_THR_NO_REPLY again");
	CHECK(atomic_load(&nw_stacks_late_replies) == 0, "no late reply yet");
	check_consistent(a, "capture 2");

	/* The blocker unblocks: its one queued signal arrives for capture 1
	 * and must be refused. */
	atomic_store(&release_blocker, 1);
	while (!atomic_load(&blocker_unblocked))
		sleep_ms(1);
	sleep_ms(20);
	CHECK(atomic_load(&nw_stacks_late_replies) == 1, "blocker unblocked: its one late reply refused (late replies: %llu)",
	      (unsigned long long)atomic_load(&nw_stacks_late_replies));

	/* Capture 3: everyone answers, including the blocker. */
	n = run_capture(a, 0, &el3);
	printf("     capture 3: %d threads in %.3f s\n", n, el3);
	for (uint32_t i = 0; i < a->thread_count; i++)
		print_thread(a, i);
	CHECK(a->captures == 3 && n == (int)count_tasks(), "capture 3: captures 3, %d threads", n);
	check_consistent(a, "capture 3");
	check_parked(a, T_BLOCKER, "blocks_signals", (void *)&blocks_signals);
	check_parked(a, T_SLEEP, "parked_in_nanosleep", NULL);
	check_parked(a, T_FUTEX, "parked_in_futex", NULL);
	check_parked(a, T_SPIN, "busy_spinner", NULL);
	CHECK(atomic_load(&nw_stacks_late_replies) == 1, "no further late reply");
	uint32_t used3 = a->strtab_used;
	CHECK(used3 < used1 + used1 / 2, "string table rebuilt, not appended: %u bytes after capture 1, %u after capture 3",
	      used1, used3);

	/* Capture 4: same threads, same stacks: same strings. */
	n = run_capture(a, 0, &el4);
	CHECK(a->captures == 4 && a->strtab_used < used3 + used3 / 4, "capture 4: string table %u bytes", a->strtab_used);
	free(a);

	/* A thread table smaller than the process: main thread first. */
	size = nw_stack_area_size(3, 0, 0, 0, 0);
	a = aligned_alloc(64, size);
	memset(a, 0, size);
	nw_stack_area_init(a, 3, 0, 0, 0, 0);
	n = run_capture(a, 0, &el4);
	CHECK(n == 3 && a->thread_count == 3 && area_thread(a, 0)->tid == (uint32_t)getpid(),
	      "thread capacity 3: 3 threads captured, main first");
	free(a);

	check_opstacks();

	atomic_store(&stop, 1);
	pthread_mutex_lock(&park_mu);
	pthread_cond_broadcast(&park_cv);
	pthread_mutex_unlock(&park_mu);
	pthread_mutex_lock(&wd_mu);
	wd_quit = 1;
	pthread_cond_broadcast(&wd_cv);
	pthread_mutex_unlock(&wd_mu);
	for (int i = 0; i < T_COUNT; i++)
		pthread_join(th[i], NULL);

	printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
