/* reserve: every page of a file the library maps is backed before anyone
 * touches it. A store through a MAP_SHARED mapping into a page the
 * filesystem cannot supply (a full /dev/shm, a quota) is a SIGBUS in the
 * application; a system call that fails is only an error we can report. */
#ifndef NCCLWATCH_INTERPOSE_RESERVE_H
#define NCCLWATCH_INTERPOSE_RESERVE_H

#include <stdint.h>

/* Back bytes [0, size) of `fd` (opened read-write) and make the file at
 * least `size` long. fallocate(2) in chunks, each retried on EINTR (a
 * signal makes tmpfs undo the whole call, so one large call may never get
 * through under a profiler's timer); where the filesystem has no
 * fallocate: `fresh` (a file nobody else has opened yet) is written with
 * zeros, else the file must already hold blocks for every byte. Never a
 * sparse file. 0, or an errno value (ENOSPC, EDQUOT, EINTR after too many
 * signals, ...): the caller must then not map the file. */
int nw_reserve(int fd, uint64_t size, int fresh);

#endif
