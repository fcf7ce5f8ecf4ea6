/* capture: one thread's native stack, taken without changing what the
 * thread sees. One core for the watchdog (its own process) and for
 * `ncclwatch attach` (other processes).
 *
 * A thread's registers come from where it is:
 * - blocked in a system call (or otherwise asleep in the kernel): pc and sp
 *   from /proc/PID/task/TID/syscall. Nothing is stopped or signalled. The
 *   stack is copied, then the file read again: only a thread still at the
 *   same pc and sp counts, else it is tried again (NW_CAP_TRIES). Other
 *   registers are unknown: a frame whose caller's frame is found through a
 *   frame pointer (rbp) that no inner frame saved ends the stack there.
 * - "running" in that file: on a CPU or waiting for one, in user code or
 *   inside the kernel, which the file does not tell apart. A thread copying
 *   data inside a pipe write, a send or a recv(MSG_WAITALL) is "running"
 *   between its waits, and interrupting it there makes its call return
 *   short. So such a thread is watched (nw_cap_watch, watch.c): its syscall
 *   file again every millisecond, its stack taken from a read that finds it
 *   blocked; it is interrupted only once its CPU times show it running
 *   user code (more than 20 ms of it, more than two thirds of what it ran),
 *   and one whose system time grows is left running without a stack
 *   (NW_CAP_KERNEL).
 * - running user code, in another process (allow_ptrace): PTRACE_SEIZE,
 *   PTRACE_INTERRUPT, PTRACE_GETREGS, the stack copied, PTRACE_DETACH. The
 *   thread is stopped only for the copy (stopped_ns says how long).
 * - running user code in our own process: NW_CAP_RUNNING; the caller
 *   (watchdog/stacks.c) sends that thread alone its capture signal, from
 *   nw_cap_watch's `take`, at the moment it is found running user code.
 * Memory is read with process_vm_readv (our own process too, through the
 * capturing thread's id: the main thread may have exited): a bad address
 * is an error, never a fault. The unwinder is libunwind's remote interface
 * (called through its table, unw_table.h) with our accessors; unwind
 * tables come from libunwind-ptrace's
 * _UPT_find_proc_info, which reads /proc/PID/maps and the ELF files (it
 * never calls ptrace).
 *
 * Not thread-safe: one capture at a time per process of ours (the
 * watchdog thread, or the CLI). */
#ifndef NCCLWATCH_CAPTURE_CAPTURE_H
#define NCCLWATCH_CAPTURE_CAPTURE_H

#include <stdint.h>
#include <sys/types.h>

#define NW_CAP_FRAMES 64              /* raw frames kept per thread */
#define NW_CAP_TRIES 3                /* reads of a thread that moved under the copy */
#define NW_CAP_WATCH_MS 2000          /* the longest a capture watches running threads
                                       * (only one starved of CPU time takes that long) */
#define NW_CAP_USER_MS 20             /* user time (with no system time to speak of)
                                       * before a running thread may be interrupted */

enum nw_cap_result {
	NW_CAP_OK = 0,        /* stack in out->ip[0..n) */
	NW_CAP_RUNNING,       /* nw_cap_thread: "running", to be watched; nw_cap_watch: running
	                       * user code, not stopped (no allow_ptrace: `take` was called) */
	NW_CAP_GONE,          /* the thread exited */
	NW_CAP_DENIED,        /* not permitted (another user, PR_SET_DUMPABLE 0, ptrace forbidden) */
	NW_CAP_FAILED,        /* anything else: out->why */
	NW_CAP_KERNEL,        /* nw_cap_watch: running, never blocked, not shown to run user
	                       * code alone: left running, no stack; out->why says which */
};

struct nw_cap_stack {
	uint32_t flags;       /* NW_THR_REGS_* (segment.h), NW_THR_TRUNCATED */
	uint32_t n;           /* frames; ip[0] is the pc, the others return addresses */
	uint64_t stopped_ns;  /* how long the thread was stopped (ptrace), 0 never */
	uint32_t restarted;   /* 1: a call the thread entered in the window was woken by the
	                       * interrupt with EINTR and was made to restart instead */
	const char *why;      /* static text: why there is no (or a short) stack */
	uint64_t ip[NW_CAP_FRAMES];
};

/* Figures of every capture made in this process (tests and benchmarks). */
struct nw_cap_stats {
	uint64_t threads;         /* nw_cap_thread calls */
	uint64_t by_syscall;      /* stacks from the syscall file */
	uint64_t by_ptrace;       /* stacks from a ptrace stop */
	uint64_t running;         /* NW_CAP_RUNNING answers of nw_cap_watch (user code, not stopped) */
	uint64_t moved;           /* syscall reads that did not match after the copy */
	uint64_t restarted;       /* EINTR turned into a restart (see restarted above) */
	uint64_t watched;         /* threads nw_cap_watch was given */
	uint64_t caught_blocked;  /* of those, stacks from the syscall file */
	uint64_t left_running;    /* NW_CAP_KERNEL answers */
	uint64_t in_call_at_stop; /* ptrace stops that found the thread in a system call after all */
	uint64_t watch_max_ns;    /* longest nw_cap_watch */
	uint64_t stopped_max_ns;  /* longest ptrace stop */
	uint64_t stopped_total_ns;
};
extern struct nw_cap_stats nw_cap_stats;

struct nw_cap_target;   /* one process being captured */

/* Open `pid` (our own pid is fine). NULL with errno on failure. */
struct nw_cap_target *nw_cap_open(pid_t pid);
void nw_cap_close(struct nw_cap_target *t);
/* The process it reads. */
pid_t nw_cap_pid(const struct nw_cap_target *t);
/* Forget cached unwind information (objects were unloaded). */
void nw_cap_flush(struct nw_cap_target *t);
/* A new capture of a long-lived target: its mappings are read again when
 * needed (objects may have been loaded since). */
void nw_cap_begin(struct nw_cap_target *t);

/* Capture thread `tid` of the target into out, if its syscall file shows it
 * blocked: NW_CAP_OK. NW_CAP_RUNNING: it shows "running"; give it to
 * nw_cap_watch. Never stops or signals it. */
enum nw_cap_result nw_cap_thread(struct nw_cap_target *t, uint32_t tid, struct nw_cap_stack *out);

/* Called by nw_cap_watch for thread i the moment it is found running user
 * code (and not stopped by ptrace): the caller may signal it now. */
typedef void nw_cap_take_fn(void *arg, uint32_t i);

/* Watch the n threads tid[i] that nw_cap_thread found running, all at once,
 * for at most NW_CAP_WATCH_MS; out[i] and rc[i] get each one's answer:
 * NW_CAP_OK (caught blocked, or stopped by ptrace: allow_ptrace, another
 * process), NW_CAP_RUNNING (running user code; take(arg, i) was called if
 * given), NW_CAP_KERNEL (left running: why), NW_CAP_GONE, NW_CAP_DENIED,
 * NW_CAP_FAILED. */
void nw_cap_watch(struct nw_cap_target *t, uint32_t n, const uint32_t *tid, struct nw_cap_stack *out,
                  enum nw_cap_result *rc, int allow_ptrace, nw_cap_take_fn *take, void *arg);

/* The name of the function holding `addr` (a return address minus 1, or a
 * pc) in the target, from the ELF symbol tables of the file mapped there:
 * 1 with name (NUL-terminated) and *offset = addr - start, else 0. */
int nw_cap_symbol(struct nw_cap_target *t, uint64_t addr, char *name, size_t len, uint64_t *offset);

#endif
