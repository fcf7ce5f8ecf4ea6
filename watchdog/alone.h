/* alone: the watchdog never keeps a process alive. glibc ends a process
 * when its last thread ends (main returning, or the last of the threads
 * left after main called pthread_exit); the watchdog is a thread too, so
 * once the application's threads have all ended it must leave as well,
 * and glibc then calls exit(0) on it (atexit handlers and our exit path
 * run: the segment goes or is kept as at any clean exit). */
#ifndef NCCLWATCH_WATCHDOG_ALONE_H
#define NCCLWATCH_WATCHDOG_ALONE_H

/* 1 when the calling thread (the watchdog, the only thread of ours at its
 * poll) is the last live thread of the process: /proc/self/task counts two
 * threads (one stat(2): the directory's link count is 2 + threads) and the
 * other is the main thread, a zombie since its pthread_exit. 0 otherwise,
 * and where /proc cannot tell (not mounted): then the watchdog stays. */
int nw_alone(void);

/* 1 when the main thread has exited (pthread_exit) while the process
 * goes on: it stays listed in /proc/self/task, a zombie without a stack. */
int nw_main_thread_ended(void);

/* Signals pending for the process that nobody could take (the watchdog
 * blocks all, the threads that did not are gone) take effect now, on the
 * calling thread, as on the last application thread: SIGTERM kills the
 * process; a handler of the application runs here. */
void nw_alone_take_pending(void);

#endif
