/* A process whose stream worker is blocked forever (a hung collective) can
 * still exit, promptly and with its own status: nothing in the simulated
 * driver joins or waits for its workers at exit. Each case runs in a child
 * process; the parent waits for it with a bound (a safety net so the test
 * ends, not a time measurement) and checks the exit status.
 *
 * Case 4: the driver tears itself down at exit like the real one, from an
 * exit handler cuInit registered: a handler registered after cuInit runs
 * first and still sees a completed event; one registered before cuInit
 * runs after the teardown and sees CUDA_ERROR_DEINITIALIZED (a handler
 * that sees otherwise changes the exit status). */
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static struct gate never = GATE_INIT; /* never opened */
static CUevent exit_ev;

static void registered_before_init(void)
{
	if (cuEventQuery(exit_ev) != CUDA_ERROR_DEINITIALIZED ||
	    cuInit(0) != CUDA_ERROR_DEINITIALIZED)
		_exit(10);
}

static void registered_after_init(void)
{
	if (cuEventQuery(exit_ev) != CUDA_SUCCESS)
		_exit(11);
}

static void *sync_forever(void *arg)
{
	CUcontext ctx = arg;
	cuCtxSetCurrent(ctx);
	cuStreamSynchronize(NULL);
	return NULL;
}

/* Sets up a blocked stream the way each case wants, then leaves. */
static void child(int which)
{
	if (which == 4)
		CHECK(atexit(registered_before_init) == 0);
	CUcontext ctx = setup_device(0);
	CUstream s;
	CUevent ev;
	OK(cuStreamCreate(&s, 0));
	OK(cuEventCreate(&ev, 0));
	switch (which) {
	case 0: /* blocked stream with work and an event behind; exit() */
		OK(simStreamEnqueue(s, gate_item, NULL, &never));
		OK(simStreamEnqueue(s, gate_item, NULL, &never));
		OK(cuEventRecord(ev, s));
		gate_wait_entered(&never, 1);
		exit(3);
	case 1: /* blocked default stream; return from main */
		OK(simStreamEnqueue(NULL, gate_item, NULL, &never));
		gate_wait_entered(&never, 1);
		return;
	case 2: { /* another thread asleep in cuStreamSynchronize */
		pthread_t t;
		OK(simStreamEnqueue(NULL, gate_item, NULL, &never));
		gate_wait_entered(&never, 1);
		CHECK(pthread_create(&t, NULL, sync_forever, ctx) == 0);
		exit(5);
	}
	case 3: /* the blocked stream was destroyed before exit */
		OK(simStreamEnqueue(s, gate_item, NULL, &never));
		OK(cuEventRecord(ev, s));
		OK(cuStreamDestroy(s));
		OK(cuEventDestroy(ev));
		gate_wait_entered(&never, 1);
		exit(6);
	case 4: /* a completed event, queried by exit handlers */
		exit_ev = ev;
		OK(cuEventRecord(ev, s));
		OK(cuStreamSynchronize(s));
		CHECK(atexit(registered_after_init) == 0);
		exit(7);
	}
}

static const int expected_status[] = { 3, 4, 5, 6, 7 };

int main(int argc, char **argv)
{
	if (argc > 1) {
		int which = atoi(argv[1]);
		child(which);
		return 4;
	}
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	for (int which = 0; which < 5; which++) {
		char arg[8];
		snprintf(arg, sizeof arg, "%d", which);
		pid_t pid = fork();
		CHECK(pid >= 0);
		if (pid == 0) {
			sigprocmask(SIG_UNBLOCK, &chld, NULL);
			execl("/proc/self/exe", "test-sim-cuda-exit", arg, (char *)NULL);
			_exit(127);
		}
		/* wait for SIGCHLD, at most 60 s in all */
		struct timespec bound = { 60, 0 };
		int status = 0;
		pid_t done = 0;
		while ((done = waitpid(pid, &status, WNOHANG)) == 0) {
			if (sigtimedwait(&chld, NULL, &bound) < 0 && errno == EAGAIN)
				break;
		}
		if (done != pid) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			fprintf(stderr, "case %d: the process did not exit (killed)\n", which);
			return 1;
		}
		if (!WIFEXITED(status) || WEXITSTATUS(status) != expected_status[which]) {
			fprintf(stderr, "case %d: status 0x%x, expected exit %d\n", which, status,
			        expected_status[which]);
			return 1;
		}
		printf("case %d: exited %d%s\n", which, expected_status[which],
		       which == 4 ? ", the driver torn down by its own exit handler" : " with a blocked stream worker");
	}
	printf("ok\n");
	return 0;
}
