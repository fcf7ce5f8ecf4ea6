/* exit_wait: how long a process's exit waits for ncclwatch. The exit
 * handlers (nw_watchdog_settle, nw_watchdog_exit) take locks the watchdog
 * holds for a whole poll, and a thread whose event pool ran dry for a
 * reap; either may be stuck in a driver call that never returns. An exit
 * never waits for them for more than NW_EXIT_WAIT_NS in all: past it the
 * exit goes on without its last look, and the process ends with its own
 * status. (Waiting time, not time since the first wait: exit handlers of
 * the application that run long between ours take nothing from it.) */
#ifndef NCCLWATCH_WATCHDOG_EXIT_WAIT_H
#define NCCLWATCH_WATCHDOG_EXIT_WAIT_H

#include <pthread.h>

/* The lock is free while the watchdog sleeps between polls (the poll
 * interval does not count), and once the destructor is under way the
 * watchdog takes it only to stop: an exit waits for the poll under way
 * at most. A poll's event queries take microseconds; the long polls that
 * end capture every thread's stack (up to 1 s for replies and 2 s for a
 * thread starved of CPU time, capture/capture.h), write a dump (to a
 * temporary name, renamed once whole) or run the host's verdict. Ten
 * seconds leave those room on a loaded host, so an ordinary exit keeps its
 * last poll and its answer to a dump request, and are all a watchdog stuck
 * in a driver call may cost an exit. */
#define NW_EXIT_WAIT_NS 10000000000ull

/* Take `m` for the exit path: 0, or -1 when it stayed taken for what is
 * left of NW_EXIT_WAIT_NS (the waits of one exit share it: once it is
 * spent, one try and no wait). */
int nw_exit_lock(pthread_mutex_t *m);

/* The exit handlers have begun (nw_exit_begin, before they wait): a poll
 * that comes back from the driver now reads its teardown errors as saying
 * nothing about the op, as the exit's own poll does. */
void nw_exit_begin(void);
int nw_exit_begun(void);

/* Fork child: its own exit waits afresh. */
void nw_exit_wait_reset(void);

#endif
