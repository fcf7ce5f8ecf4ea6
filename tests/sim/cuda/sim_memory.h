/* Internal: the memory helpers memory.c shares with legacy.c (the 32-bit
 * pointer spellings of cuMemAlloc and friends). */
#ifndef NCCLSIM_CUDA_SIM_MEMORY_H
#define NCCLSIM_CUDA_SIM_MEMORY_H

#include <stddef.h>
#include <stdint.h>
#include <cuda.h>

CUresult sim_memory_context_check(void);
CUresult sim_memory_alloc(uintptr_t *out, size_t size, int below_4g);
CUresult sim_memory_free(uintptr_t addr);
CUresult sim_memory_copy(void *dst, const void *src, size_t n);
CUresult sim_memory_set(void *dst, unsigned char value, size_t n);
void sim_memory_reset_after_fork(void);

#endif /* NCCLSIM_CUDA_SIM_MEMORY_H */
