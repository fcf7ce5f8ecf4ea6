/* trust: what the CLI believes about directories and files it did not
 * name itself. /dev/shm is world-writable: another local user can create
 * /dev/shm/ncclwatch-<uid> first, or put segments that look like ours
 * where we read. So the default directory must be ours and writable by
 * nobody else, and the commands that judge jobs (diagnose, status) read
 * only the files of the caller unless told otherwise (--any-owner). */
#ifndef NCCLWATCH_REPORT_CLI_TRUST_H
#define NCCLWATCH_REPORT_CLI_TRUST_H

#include <stddef.h>
#include <sys/types.h>

/* The default directory (nw_default_dir) into *dir, checked: a real
 * directory (not a symbolic link), owned by the caller, not writable by
 * group or others. Returns NW_EXIT_OK, or NW_EXIT_USAGE after one line on
 * stderr ("ncclwatch CMD: DIR: problem"). A missing directory is that too,
 * with `missing_hint` appended when not NULL. */
int nw_cli_default_dir(const char *cmd, char *buf, size_t len, const char *missing_hint,
                       const char **dir);

/* Is the file open on `fd` someone else's? 1 when its owner (fstat) or,
 * for a file that starts like a segment, the uid in its header is not
 * `me`, with *who set to that uid; 0 otherwise (a file that is not a
 * segment is left for the reader to judge). */
int nw_cli_foreign_fd(int fd, uid_t me, uid_t *who);

/* Expand `paths` (files or directories, as nw_segment_list) into the
 * paths to read, without the files of other users (one line on stderr
 * each: "ncclwatch CMD: skipped PATH: ..."), unless any_owner. A path that
 * cannot be listed is passed on as it is (the reader reports it). The
 * result is malloc'd (*out, *nout; free with nw_cli_paths_free); *skipped
 * counts the files left out. Returns 0, or -1 out of memory. */
int nw_cli_mine(const char *cmd, const char *const *paths, size_t npaths, int any_owner,
                char ***out, size_t *nout, size_t *skipped);
void nw_cli_paths_free(char **paths, size_t n);

#endif
