/* alone: see alone.h. */
#include "alone.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* State (field 3) and num_threads (field 20) of /proc/self/stat, which
 * describe the main thread and the whole process: 0, or -1. */
static int self_stat(char *state, long *threads)
{
	char buf[1024];
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	char *p = strrchr(buf, ')');       /* the command name may hold spaces */
	if (!p || p[1] != ' ')
		return -1;
	p += 2;
	*state = *p;
	for (int field = 3; field < 20; field++) {
		p = strchr(p, ' ');
		if (!p)
			return -1;
		p++;
	}
	*threads = strtol(p, NULL, 10);
	return 0;
}

int nw_alone(void)
{
	/* Most polls end here: more than two threads are alive (the
	 * kernel keeps the main thread listed, as a zombie, until the last
	 * one ends). */
	struct stat st;
	if (stat("/proc/self/task", &st) == 0 && st.st_nlink > 4)
		return 0;
	char state;
	long threads;
	if (self_stat(&state, &threads) != 0)
		return 0;
	/* Two threads: the main thread and us. Other threads of ours exist
	 * only inside the watchdog's poll (joined before it ends). */
	return threads == 2 && (state == 'Z' || state == 'X');
}

int nw_main_thread_ended(void)
{
	char state;
	long threads;
	return self_stat(&state, &threads) == 0 && (state == 'Z' || state == 'X');
}

void nw_alone_take_pending(void)
{
	sigset_t pending, all;
	if (sigpending(&pending) != 0)
		return;
	sigdelset(&pending, SIGKILL);
	sigdelset(&pending, SIGSTOP);
	if (sigisemptyset(&pending))
		return;
	/* Unblocked, they are delivered before the call returns. */
	pthread_sigmask(SIG_UNBLOCK, &pending, NULL);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, NULL);
}
