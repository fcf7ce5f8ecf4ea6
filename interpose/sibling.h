/* sibling: load one of ncclwatch's own shared objects from the directory
 * libncclwatch.so was loaded from (libncclwatch-unwind.so,
 * libncclwatch-engine.so), with RTLD_NOW | RTLD_LOCAL: nothing of it or
 * of its dependencies enters the process's global symbol scope. */
#ifndef NCCLWATCH_INTERPOSE_SIBLING_H
#define NCCLWATCH_INTERPOSE_SIBLING_H

#include <stddef.h>

/* The handle, or NULL with the reason in why (the path and dlerror()). */
void *nw_dlopen_sibling(const char *file, char *why, size_t why_len);

#endif
