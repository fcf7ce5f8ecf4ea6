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
 * - running user code, in another process (allow_ptrace): PTRACE_SEIZE,
 *   PTRACE_INTERRUPT, PTRACE_GETREGS, the stack copied, PTRACE_DETACH. The
 *   thread is stopped only for the copy (stopped_ns says how long).
 * - running user code in our own process: NW_CAP_RUNNING; the caller
 *   (watchdog/stacks.c) sends that thread alone its capture signal.
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

enum nw_cap_result {
	NW_CAP_OK = 0,        /* stack in out->ip[0..n) */
	NW_CAP_RUNNING,       /* running user code, not stopped (no allow_ptrace) */
	NW_CAP_GONE,          /* the thread exited */
	NW_CAP_DENIED,        /* not permitted (another user, PR_SET_DUMPABLE 0, ptrace forbidden) */
	NW_CAP_FAILED,        /* anything else: out->why */
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
	uint64_t running;         /* NW_CAP_RUNNING answers */
	uint64_t moved;           /* syscall reads that did not match after the copy */
	uint64_t restarted;       /* EINTR turned into a restart (see restarted above) */
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

/* Capture thread `tid` of the target into out. allow_ptrace: a running
 * thread of another process may be stopped briefly. */
enum nw_cap_result nw_cap_thread(struct nw_cap_target *t, uint32_t tid, int allow_ptrace,
                                 struct nw_cap_stack *out);

/* The name of the function holding `addr` (a return address minus 1, or a
 * pc) in the target, from the ELF symbol tables of the file mapped there:
 * 1 with name (NUL-terminated) and *offset = addr - start, else 0. */
int nw_cap_symbol(struct nw_cap_target *t, uint64_t addr, char *name, size_t len, uint64_t *offset);

#endif
