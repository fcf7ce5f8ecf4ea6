/* watchdog: one thread per process, started with recording (the first
 * wrapped NCCL call), all signals blocked, that never calls NCCL. Every
 * NCCLWATCH_POLL_MS it advances the event pairs (progress.h), follows new
 * records and looks for stalls (stalls.h); on a new picture it captures
 * every thread's stack, writes a dump, asks the job's other processes for
 * theirs (requests.h) and prints one "ncclwatch:" line per finding; it
 * answers the other processes' requests with a dump of its own. It never
 * kills or aborts anything. */
#ifndef NCCLWATCH_WATCHDOG_WATCHDOG_H
#define NCCLWATCH_WATCHDOG_WATCHDOG_H

/* Load the CUDA driver and decide how ops are tracked (before the first
 * record), then start the thread. 0, or -1 (recording goes on without it). */
int nw_watchdog_start(void);

/* Early exit handler (interpose/state.c registers it once the CUDA driver
 * is initialised, so it runs before the driver's own teardown): one poll
 * of the pending event pairs, so ops that completed since the last poll
 * are not left ENQUEUED or STARTED in the post-mortem record. Never
 * blocks on the GPU, and waits for a poll under way only so long
 * (exit_wait.h: 1 s for the whole exit); past that it skips its poll and
 * flags the segment (NW_SEG_F_EXIT_POLL_SKIPPED). */
void nw_watchdog_settle(void);

/* Exit handler (the library's destructor, after every exit handler): one
 * last look at the pending events (a real driver has torn itself down by
 * then: its errors are ignored), the findings at exit, op stacks named.
 * The thread stops at its next poll. When the watchdog's poll under way
 * outlasts the exit's wait (stuck in a driver call), all this is skipped
 * (flagged, said once): the process exits with its own status, and what
 * was recorded stays in the segment. */
void nw_watchdog_exit(void);

/* Fork child: there is no watchdog thread in it; the next start makes one. */
void nw_watchdog_reset_after_fork(void);

#endif
