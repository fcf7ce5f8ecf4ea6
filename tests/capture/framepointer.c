/* capture-framepointer: a thread blocked in pause() under three functions
 * built with frame pointers (this file is compiled -O0
 * -fno-omit-frame-pointer), and the main thread blocked the same way under
 * a function called through the PLT of another object (write_ready is
 * libc's). A capture from /proc/PID/task/TID/syscall has only pc and sp:
 * the frames above fp_level3 are found only through its frame record. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

__attribute__((noinline)) void fp_level3(void)
{
	volatile char pad[64];   /* a frame of some size, as real code has */
	pad[0] = 1;
	(void)pad[0];
	for (;;)
		pause();
}

__attribute__((noinline)) void fp_level2(void)
{
	volatile char pad[128];
	pad[0] = 1;
	(void)pad[0];
	fp_level3();
}

__attribute__((noinline)) void fp_level1(void)
{
	fp_level2();
}

static void *thread_main(void *arg)
{
	(void)arg;
	fp_level1();
	return NULL;
}

int main(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, thread_main, NULL))
		return 1;
	printf("ready\n");
	fflush(stdout);
	fp_level1();
	return 0;
}
