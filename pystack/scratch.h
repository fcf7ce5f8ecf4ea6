/* scratch: the watchdog's large pystack buffers (thread tables, frame and
 * site tables, the name cache, the dumper's text), mapped on the first
 * capture that needs them instead of sitting in .bss: every process that
 * loads the preload would carry ~19 MB of them, most never capture.
 *
 * Watchdog thread only, never from a signal handler (mmap itself is
 * async-signal-safe, but nothing here needs to run in one). A mapping that
 * fails is said once ("ncclwatch: ..."), the caller goes on without it
 * (the capture keeps its native stacks and says why Python's are missing)
 * and the next capture tries again. */
#ifndef NCCLWATCH_PYSTACK_SCRATCH_H
#define NCCLWATCH_PYSTACK_SCRATCH_H

#include <stddef.h>

/* *slot, mapped (zeroed, `size` bytes) when still NULL; NULL if that
 * failed. `what` names the buffer in the one message. */
void *nw_py_scratch(void **slot, size_t size, const char *what);

#endif
