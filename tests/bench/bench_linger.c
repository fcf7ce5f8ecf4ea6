/* bench_linger: an LD_PRELOAD shim for the gpufault row of the
 * detection-latency benchmark (tests/bench/watchdog.sh).
 *
 * The example trainer leaves as soon as a CUDA call reports the injected
 * GPU fault (about 1 ms after it happened), long before the watchdog's next
 * poll, so the faulty rank's own FAILED finding is never printed. Like a
 * framework process that catches the error and lingers, this shim makes a
 * failing exit(STATUS != 0) wait until it is killed, so the watchdog thread
 * of the faulty rank gets to poll and report. exit(0) is untouched.
 * Loaded after libncclwatch.so: LD_PRELOAD="libncclwatch.so:libbench-linger.so". */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

__attribute__((visibility("default"), noreturn)) void exit(int status)
{
	if (status != 0) {
		char line[96];
		int n = snprintf(line, sizeof(line), "bench-linger: pid %d exit(%d) held until killed\n",
		                 (int)getpid(), status);
		if (n > 0 && write(STDERR_FILENO, line, (size_t)n) < 0) {
			/* nowhere to say it */
		}
		for (;;)
			pause();
	}
	void (*real_exit)(int) = (void (*)(int))dlsym(RTLD_NEXT, "exit");
	if (real_exit)
		real_exit(status);
	_exit(status);
}
