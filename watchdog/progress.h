/* progress: the watchdog's view of the event pairs handed over by the hot
 * path. Each poll queries the pending pairs in the order they were
 * recorded; a completed start event moves the pair's ops to STARTED, a
 * completed end event to COMPLETED, an event error (a GPU fault: the CUDA
 * error is kept) to FAILED. The comm table's started/completed positions
 * and the peer table's completed positions follow. Finished pairs go back
 * to their pool. nw_progress_poll: under the watchdog's progress lock only
 * (its thread, or the exit handlers); nw_progress_reap: any thread. Both
 * take the progress module's own lock (pairs_lock) inside: one of them
 * owns a pair at a time. */
#ifndef NCCLWATCH_WATCHDOG_PROGRESS_H
#define NCCLWATCH_WATCHDOG_PROGRESS_H

#include <stdint.h>

/* Take what the hot path handed over and advance every pending pair.
 * `at_exit`: the driver may be shutting down; errors that only say so are
 * ignored; and the lock is waited for only until the exit's deadline
 * (exit_wait.h). 0, or -1: skipped (the lock stayed taken, or this thread
 * is inside a reap that a signal handler interrupted to exit). */
int nw_progress_poll(uint64_t now, int at_exit);

/* A thread's event pool ran dry (evpool.c, through nw_lifecycle.reap):
 * take what the hot path handed over and give back the oldest pending
 * pairs that finished, their ops' records brought up to date first, as a
 * poll would; past a stream's first pair still running it skips that
 * stream, and it stops after a few streams still running. Never waits for
 * a poll under way (its lock taken: nothing done, the poll gives back). */
void nw_progress_reap(void);

/* Pairs still pending (for tests and the bench). */
uint64_t nw_progress_pending(void);

/* Fork child: forget the parent's state. */
void nw_progress_reset(void);

#endif
