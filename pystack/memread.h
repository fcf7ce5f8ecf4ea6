/* memread: reads of this process's own memory that cannot fault
 * (process_vm_readv on our own process, by the calling thread's id: an
 * unmapped address is an error, not a SIGSEGV), for the interpreter's structures that other threads change
 * or free under us. */
#ifndef NCCLWATCH_PYSTACK_MEMREAD_H
#define NCCLWATCH_PYSTACK_MEMREAD_H

#include <stddef.h>
#include <stdint.h>

/* 0 when all `n` bytes at `addr` were copied, else -1. */
int nw_mem_read(uint64_t addr, void *buf, size_t n);
/* One pointer-sized / 32-bit value; 0 on failure (0 is never valid here). */
uint64_t nw_mem_u64(uint64_t addr);
/* 1 if process_vm_readv works in this process (seccomp may forbid it). */
int nw_mem_usable(void);

#endif
