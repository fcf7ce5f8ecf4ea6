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
 * end capture every thread's stack and write a dump (to a temporary name,
 * renamed once whole), or run the host's verdict. One second leaves those
 * room in the usual case and is all a stuck watchdog may cost an exit; a
 * poll slower still is left behind as a stuck one is. */
#define NW_EXIT_WAIT_NS 1000000000ull

/* Take `m` for the exit path: 0, or -1 when it stayed taken for what is
 * left of NW_EXIT_WAIT_NS (the waits of one exit share it: once it is
 * spent, one try and no wait). */
int nw_exit_lock(pthread_mutex_t *m);

/* Fork child: its own exit waits afresh. */
void nw_exit_wait_reset(void);

#endif
