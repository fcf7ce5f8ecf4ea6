/* nccl_main_exit: the main thread ends with pthread_exit while other
 * threads go on (run with NCCLSIM_NULL=1: the simulation starts no thread
 * of its own, so only the program's threads and ncclwatch's are there).
 * glibc ends the process when its last thread ends; the watchdog must not
 * keep it alive, and what the threads record after main has gone must be
 * kept.
 *
 *   early    main starts 2 workers and exits before any NCCL call; once
 *            main is gone (joined) worker 0 makes 2 comms (ncclCommInitAll:
 *            the process's first NCCL call) and each worker t issues CALLS
 *            all-reduces as rank t, count 100 + i; the comms are left
 *            alive (the segment is then kept as evidence). Prints
 *            "workers done calls=N failures=F".
 *   late     main makes 1 comm, issues CALLS all-reduces (count i), starts
 *            a worker and exits; the worker, once main is gone, issues
 *            CALLS more (count 1000 + i) and destroys the comm (a clean
 *            exit: the segment goes). Prints "worker done ...".
 *   sigterm  as late, but the worker blocks SIGTERM, prints "main gone"
 *            and returns only once a SIGTERM is pending (sent by the test):
 *            the signal is then pending with only ncclwatch's thread left.
 *   initstall  (the full simulation, not null) main exits at once; the
 *            worker, once main is gone, prints "main gone" and enters
 *            ncclCommInitRank as rank 0 of 2, which never completes (no
 *            rank 1): the watchdog reports it and captures the stacks of a
 *            process without its main thread. CALLS is not used.
 * The exit status is glibc's: 0 (or death by the signal).
 *
 * usage: nccl-main-exit early|late|sigterm|initstall CALLS */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <nccl.h>

static pthread_t main_thread;
static int calls, failures;
static ncclComm_t comm[2];
static pthread_barrier_t barrier;

static void all_reduces(ncclComm_t c, size_t base)
{
	float buf[1];
	for (int i = 0; i < calls; i++)
		if (ncclAllReduce(buf, buf, base + (size_t)i, ncclFloat, ncclSum, c, NULL) != ncclSuccess)
			__atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
}

static void *early_worker(void *arg)
{
	int t = (int)(intptr_t)arg;
	if (t == 0) {
		pthread_join(main_thread, NULL);   /* main has exited */
		if (ncclCommInitAll(comm, 2, NULL) != ncclSuccess) {
			fprintf(stderr, "ncclCommInitAll failed\n");
			__atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
		}
	}
	pthread_barrier_wait(&barrier);
	all_reduces(comm[t], 100);
	if (pthread_barrier_wait(&barrier) == PTHREAD_BARRIER_SERIAL_THREAD) {
		printf("workers done calls=%d failures=%d\n", 2 * calls, failures);
		fflush(stdout);
	}
	return NULL;
}

/* Named in the stacks the test reads. */
__attribute__((noinline)) static void *init_worker(void *arg)
{
	(void)arg;
	pthread_join(main_thread, NULL);
	printf("main gone\n");
	fflush(stdout);
	ncclUniqueId id;
	if (ncclGetUniqueId(&id) != ncclSuccess || ncclCommInitRank(&comm[0], 2, id, 0) != ncclSuccess)
		printf("ncclCommInitRank failed\n");
	return NULL;
}

static void *late_worker(void *arg)
{
	int sigterm = arg != NULL;
	sigset_t term;
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	if (sigterm)
		pthread_sigmask(SIG_BLOCK, &term, NULL);
	pthread_join(main_thread, NULL);
	all_reduces(comm[0], 1000);
	if (ncclCommDestroy(comm[0]) != ncclSuccess)
		__atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
	printf("worker done calls=%d failures=%d\n", calls, failures);
	if (sigterm) {
		printf("main gone\n");
		fflush(stdout);
		/* At most 10 minutes: the test sends SIGTERM at once. */
		for (int i = 0; i < 600000; i++) {
			sigset_t pending;
			sigpending(&pending);
			if (sigismember(&pending, SIGTERM))
				break;
			nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
		}
	}
	fflush(stdout);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	calls = atoi(argv[2]);
	main_thread = pthread_self();
	pthread_t t;
	if (!strcmp(argv[1], "early")) {
		pthread_barrier_init(&barrier, NULL, 2);
		for (int i = 0; i < 2; i++)
			pthread_create(&t, NULL, early_worker, (void *)(intptr_t)i);
	} else if (!strcmp(argv[1], "late") || !strcmp(argv[1], "sigterm")) {
		if (ncclCommInitAll(comm, 1, NULL) != ncclSuccess) {
			fprintf(stderr, "ncclCommInitAll failed\n");
			return 1;
		}
		all_reduces(comm[0], 0);
		pthread_create(&t, NULL, late_worker, strcmp(argv[1], "sigterm") ? NULL : argv[1]);
	} else if (!strcmp(argv[1], "initstall")) {
		pthread_create(&t, NULL, init_worker, NULL);
	} else {
		return 2;
	}
	pthread_exit(NULL);
}
