/* prom: the process's NCCL progress as a Prometheus text file for
 * node_exporter's textfile collector. With NCCLWATCH_PROM_DIR set, the
 * watchdog writes, at most once a second (and at once when its stall
 * findings change), <dir>/ncclwatch_<host>_<pid>.prom: a temporary file
 * in the same directory, renamed over the old one, so a scrape never
 * reads half a file. Gauges and counters per process and per live
 * communicator (README.md, "Prometheus"); the last verdict's kind only
 * as the number and name the report engine handed back (verdict.h):
 * nothing of the report code is here. A clean exit removes the file; a
 * process killed leaves it, and its update time stops moving (the
 * NcclwatchRankDead rule of examples/prometheus/). Watchdog thread only,
 * with the progress lock held; one static buffer, no allocation. */
#ifndef NCCLWATCH_WATCHDOG_PROM_H
#define NCCLWATCH_WATCHDOG_PROM_H

#include <stdint.h>

/* Read NCCLWATCH_PROM_DIR (at the watchdog's start): open the directory
 * (made if missing), or say once why there is no file and stay off. */
void nw_prom_setup(uint64_t timeout_ns);

/* After a poll's stall evaluation: `findings` is the picture's count.
 * Writes the file when due. */
void nw_prom_tick(uint64_t now, uint32_t findings);

/* Clean exit: remove the file this process wrote. */
void nw_prom_exit(void);

/* Fork child: its own file (its pid), never the parent's. */
void nw_prom_reset_after_fork(void);

#endif
