/* capture_int: what the capture core's files share (not for callers). */
#ifndef NCCLWATCH_CAPTURE_INT_H
#define NCCLWATCH_CAPTURE_INT_H

#include "capture.h"

#include <ncclwatch/segment.h>

#include <libunwind.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#define NW_CAP_STACK_COPY (256u << 10)   /* bytes of stack copied from sp up */
#define NW_CAP_PAGE 4096u
#define NW_CAP_CACHE_PAGES 64           /* other memory, read a page at a time */

/* Registers in libunwind's x86-64 numbering (UNW_X86_64_RAX .. RIP). */
#define NW_CAP_NREGS 17
struct nw_cap_regs {
	uint64_t r[NW_CAP_NREGS];
	uint32_t known;                     /* bit i: r[i] is known */
};

struct nw_cap_mem {
	pid_t pid;
	uint8_t *copy;                      /* the stack copy: [copy_base, copy_base + copy_len) */
	uint64_t copy_base;
	size_t copy_len;
	uint64_t page_addr[NW_CAP_CACHE_PAGES];
	uint8_t page_ok[NW_CAP_CACHE_PAGES]; /* 0 empty, 1 read, 2 unreadable */
	uint8_t (*page)[NW_CAP_PAGE];
};

struct nw_cap_syms;   /* symbols.c */
void nw_cap_syms_free(struct nw_cap_syms *s);
struct nw_cap_target;
/* Read /proc/PID/maps again at the next need. */
void nw_cap_forget_maps(struct nw_cap_target *t);

struct nw_cap_target {
	pid_t pid;
	int self;                           /* our own process */
	pid_t upt_pid;                      /* the id upt was made for (nw_cap_via) */
	struct nw_cap_syms *syms;           /* loaded at the first nw_cap_symbol */
	void *upt;                          /* libunwind-ptrace's per-process info */
	unw_addr_space_t as;
	struct nw_cap_mem mem;
	struct nw_cap_regs regs;            /* of the thread being unwound */
};

/* The id that /proc/ID/maps and process_vm_readv(ID) reach the target by:
 * its pid; for our own process the calling thread's id, since both answer
 * through the main thread only while it lives (after its pthread_exit
 * they give an empty map and ESRCH), and any thread's id names the
 * process. nw_cap_begin moves the memory reader and libunwind-ptrace's
 * info to the thread that captures. */
static inline pid_t nw_cap_via(const struct nw_cap_target *t)
{
	return t->self ? gettid() : t->pid;
}

/* memory.c */
int nw_cap_mem_init(struct nw_cap_mem *m, pid_t pid);
void nw_cap_mem_free(struct nw_cap_mem *m);
/* Forget cached pages and the stack copy (a new thread, a new moment). */
void nw_cap_mem_reset(struct nw_cap_mem *m);
/* Copy the stack from sp up (up to NW_CAP_STACK_COPY, less at the end of
 * the mapping): bytes copied, 0 if sp is unreadable. */
size_t nw_cap_mem_copy_stack(struct nw_cap_mem *m, uint64_t sp);
/* Read len bytes at addr: the stack copy, else the cache, else the
 * process. 0, or -1 if unreadable. */
int nw_cap_mem_read(struct nw_cap_mem *m, uint64_t addr, void *buf, size_t len);

/* regs.c: where registers come from. */
enum nw_cap_sys { NW_SYS_BLOCKED, NW_SYS_RUNNING, NW_SYS_GONE, NW_SYS_DENIED, NW_SYS_ERROR };
/* /proc/PID/task/TID/syscall: blocked (regs gets sp and pc; line the text
 * read, to compare later), running, gone, denied. */
enum nw_cap_sys nw_cap_syscall_regs(pid_t pid, uint32_t tid, struct nw_cap_regs *regs,
                                    char *line, size_t len);

/* unwind.c */
int nw_cap_unwind_init(struct nw_cap_target *t);
/* libunwind-ptrace's info made again for nw_cap_via(t): 0, or -1. */
int nw_cap_unwind_via(struct nw_cap_target *t);
void nw_cap_unwind_free(struct nw_cap_target *t);
/* Unwind from t->regs over t->mem into out->ip; sets out->n and TRUNCATED. */
void nw_cap_unwind(struct nw_cap_target *t, struct nw_cap_stack *out);

/* target.c: one look at the syscall file. Blocked: the stack copied and
 * the file read again; NW_CAP_OK if it still says the same (t->regs and
 * t->mem hold the copy, to be unwound before the next look), else
 * NW_CAP_RUNNING with *moved 1. NW_CAP_RUNNING with *moved 0: "running".
 * NW_CAP_GONE, NW_CAP_DENIED, NW_CAP_FAILED with out->why. */
enum nw_cap_result nw_cap_look(struct nw_cap_target *t, uint32_t tid, struct nw_cap_stack *out, int *moved);

/* ptrace.c: stop a running thread of another process briefly, take its
 * registers and copy its stack, let it go. */
enum nw_cap_result nw_cap_ptrace_regs(struct nw_cap_target *t, uint32_t tid, struct nw_cap_stack *out);

#endif
