/* dump: a copy of this process's segment (records, tables, the stack area
 * as last captured) written into the dump directory under a temporary
 * name and renamed, so a reader never sees half a dump:
 * <dir>/<host>.<pid>.rank<R>.dump.seg (rank "-" unknown). The copy carries
 * NW_SEG_F_DUMP. Watchdog thread only. */
#ifndef NCCLWATCH_WATCHDOG_DUMP_H
#define NCCLWATCH_WATCHDOG_DUMP_H

#include <stddef.h>

/* 0 and the path in `path`, or -1 after one "ncclwatch:" line. */
int nw_dump_write(const char *dir, char *path, size_t path_len);

#endif
