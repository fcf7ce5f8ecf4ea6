/* reserve: every page of a file the library maps is backed before anyone
 * touches it. A store through a MAP_SHARED mapping into a page the
 * filesystem cannot supply (a full /dev/shm, a quota) is a SIGBUS in the
 * application; a system call that fails is only an error we can report. */
#ifndef NCCLWATCH_INTERPOSE_RESERVE_H
#define NCCLWATCH_INTERPOSE_RESERVE_H

#include <stddef.h>
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

/* Files published whole: made without a name, then linked to their name
 * once complete, so that no reader ever sees one half made and none is
 * left half made by a process killed meanwhile.
 *
 * nw_open_unnamed: a new file in `dir` that has no name (O_TMPFILE),
 * where the kernel can name it through /proc from any thread
 * (/proc/thread-self/fd: the main thread may have exited); where the
 * filesystem has no O_TMPFILE or /proc cannot name it (not mounted),
 * `dir/.<what>.<host>.<pid>.tmp` (a dead process's of that name removed
 * first, then created with O_EXCL), its path in tmp[] (else tmp[0] = 0).
 * The fd, or -1 with errno.
 * nw_publish: link it as `path`: 0, or an errno value (EEXIST: the name is
 * taken; ENOENT: `dir` is gone).
 * nw_unnamed_done: close it, and remove the temporary name if any. */
int nw_open_unnamed(const char *dir, const char *what, char *tmp, size_t tmplen);
int nw_publish(int fd, const char *tmp, const char *path);
void nw_unnamed_done(int fd, const char *tmp);

#endif
