/* capture-quiet: a program that sits in every blocking call that a stack
 * capture by signal used to disturb (issue 13), and says whether anything
 * noticed: a call returning early, an EINTR, a short transfer, a signal it
 * did not send itself, a crash.
 *
 * usage: capture-quiet STOPFILE [--nccl] [--no-small-stack] [--eight [--spin]] [--window] [--live]
 *   Starts one thread per call, prints "ready" once every thread is in its
 *   call (its /proc/self/task/TID/syscall no longer says "running"), then
 *   waits until STOPFILE exists (the test makes its captures meanwhile),
 *   ends every call by its own means (a write, a post, a message, a signal
 *   it sends itself to that thread), and prints one line per problem and
 *   "calls=N problems=N". Then its exec thread (every signal blocked since
 *   it started) runs execve of this program with --after-exec, which
 *   unblocks every signal: a signal left pending by a capture kills it
 *   there. "after-exec ok" is the last line when nothing did.
 *   --nccl: first make a 1-rank communicator (the preload's watchdog starts
 *   with the first NCCL call), for `ncclwatch dump`. --no-small-stack: no
 *   thread with 6 KB of stack left (the signal capture kills the process
 *   there; its test wants to see the other damage). --eight: the
 *   benchmark's process, 8 threads in timed calls (with --spin: 7 and the
 *   spinner), no exec at the end. --window: 8 threads that run user code
 *   (20 us) between short calls (epoll_wait and nanosleep of 2 ms): a
 *   capture often catches one running, and sometimes just as it enters
 *   its call (the window). --live: transfers with a live peer (issue 25):
 *   8 MiB pipe writes and unix socket sends, each drained by a peer that
 *   reads 64 KiB every millisecond, and 8 MiB recv(MSG_WAITALL) fed by a
 *   peer that sends 64 KiB every millisecond, each in a loop, so a capture
 *   finds these threads now blocked, now copying inside their call; a
 *   thread reading 64 MiB at a time from /dev/zero (inside the kernel,
 *   never blocked) and a spinner, both at nice 19 (and the process's
 *   autogroup too) and busy only in spells:
 *   while the file STOPFILE.busy exists (else each sleeps 2 ms at a time).
 *   The reader prints "live spell N started" before its first read of
 *   spell N and "live spell N ended" after its last, so a test makes its
 *   capture inside a spell and the two never take a core for longer (nor
 *   from anyone else: nice 19). Every transfer must return all it was asked
 *   for; the counts per kind and "short transfers: N" come at the end.
 *
 * Timed calls (nanosleep, clock_nanosleep, usleep, sleep, poll, select,
 * epoll_wait, sem_timedwait, recv with SO_RCVTIMEO) run in a loop of
 * 1-second calls until told to stop: each must return its timeout's
 * result no sooner than asked. Untimed ones (msgrcv, sigsuspend, an 8 MiB
 * pipe write, an 8 MiB recv(MSG_WAITALL), sigwaitinfo, a signalfd read)
 * are woken once at the end and must return exactly what was sent. One
 * thread does its poll loop with 6 KB of stack left (a signal handler
 * there would overflow it), one spins in user code. */
#include <cuda.h>
#include <nccl.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/msg.h>
#include <sys/select.h>
#include <sys/signalfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BIG (8u << 20)
#define TICK_MS 1000
#define SMALL_STACK (64u << 10)
#define HEADROOM 6144

static atomic_int done, in_call, problems, calls;
static const char *stopfile;
static int stop_pipe[2], pipe_big[2], sock_big[2], sock_timeo[2];
static sem_t sem;
static int msq;
static pthread_t th_suspend, th_waitinfo, th_signalfd, th_exec;
static atomic_int usr1_count, usr1_bad;
static char **self_argv;

static void problem(const char *what, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(const char *what, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	printf("problem: %s: %s\n", what, buf);
	atomic_fetch_add(&problems, 1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A timed call of `ms` that started at t0 returned: not before its time. */
static void check_time(const char *what, uint64_t t0, int ms)
{
	uint64_t took = now_ns() - t0;
	if (took + 1000000ull < (uint64_t)ms * 1000000ull)
		problem(what, "returned after %.1f ms of %d", took / 1e6, ms);
}

static atomic_uint tids[32];
static atomic_uint spin_tid;

static void entered(void)
{
	int i = atomic_fetch_add(&in_call, 1);
	if (i < 32)
		tids[i] = (unsigned)gettid();
}

static void *t_nanosleep(void *a)
{
	(void)a;
	entered();
	while (!done) {
		struct timespec ts = { TICK_MS / 1000, 0 }, rem = { 0, 0 };
		uint64_t t0 = now_ns();
		int r = nanosleep(&ts, &rem);
		calls++;
		if (r != 0)
			problem("nanosleep", "returned %d errno %s", r, strerror(errno));
		check_time("nanosleep", t0, TICK_MS);
	}
	return NULL;
}

static void *t_clock_nanosleep(void *a)
{
	(void)a;
	entered();
	while (!done) {
		struct timespec ts = { TICK_MS / 1000, 0 };
		uint64_t t0 = now_ns();
		int r = clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
		calls++;
		if (r != 0)
			problem("clock_nanosleep", "returned %s", strerror(r));
		check_time("clock_nanosleep", t0, TICK_MS);
	}
	return NULL;
}

static void *t_usleep(void *a)
{
	(void)a;
	entered();
	while (!done) {
		uint64_t t0 = now_ns();
		int r = usleep(TICK_MS * 1000);
		calls++;
		if (r != 0)
			problem("usleep", "returned %d errno %s", r, strerror(errno));
		check_time("usleep", t0, TICK_MS);
	}
	return NULL;
}

static void *t_sleep(void *a)
{
	(void)a;
	entered();
	while (!done) {
		uint64_t t0 = now_ns();
		unsigned left = sleep(1);
		calls++;
		if (left != 0)
			problem("sleep", "returned %u", left);
		check_time("sleep", t0, 1000);
	}
	return NULL;
}

static void *t_poll(void *a)
{
	(void)a;
	entered();
	for (;;) {
		struct pollfd p = { stop_pipe[0], POLLIN, 0 };
		uint64_t t0 = now_ns();
		int r = poll(&p, 1, TICK_MS);
		calls++;
		if (r < 0)
			problem("poll", "errno %s", strerror(errno));
		else if (r == 0)
			check_time("poll", t0, TICK_MS);
		else
			break;
	}
	return NULL;
}

/* poll's loop again, with HEADROOM bytes of stack left below this frame. */
static __attribute__((noinline)) void small_stack_loop(void)
{
	for (;;) {
		struct pollfd p = { stop_pipe[0], POLLIN, 0 };
		uint64_t t0 = now_ns();
		int r = poll(&p, 1, TICK_MS);
		calls++;
		if (r < 0)
			problem("small-stack poll", "errno %s", strerror(errno));
		else if (r == 0)
			check_time("small-stack poll", t0, TICK_MS);
		else
			break;
	}
}

static void *t_small_stack(void *a)
{
	(void)a;
	pthread_attr_t attr;
	void *lo;
	size_t size;
	pthread_getattr_np(pthread_self(), &attr);
	pthread_attr_getstack(&attr, &lo, &size);
	pthread_attr_destroy(&attr);
	char here;
	size_t left = (size_t)(&here - (char *)lo);
	/* Use all but HEADROOM bytes (alloca'd, touched so it is real). */
	size_t use = left > HEADROOM + 512 ? left - HEADROOM - 512 : 0;
	volatile char *eat = __builtin_alloca(use);
	if (use)
		eat[0] = eat[use - 1] = 1;
	entered();
	small_stack_loop();
	return NULL;
}

static void *t_select(void *a)
{
	(void)a;
	entered();
	for (;;) {
		fd_set rd;
		FD_ZERO(&rd);
		FD_SET(stop_pipe[0], &rd);
		struct timeval tv = { TICK_MS / 1000, 0 };
		uint64_t t0 = now_ns();
		int r = select(stop_pipe[0] + 1, &rd, NULL, NULL, &tv);
		calls++;
		if (r < 0)
			problem("select", "errno %s", strerror(errno));
		else if (r == 0)
			check_time("select", t0, TICK_MS);
		else
			break;
	}
	return NULL;
}

static void *t_epoll(void *a)
{
	(void)a;
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = stop_pipe[0] };
	epoll_ctl(ep, EPOLL_CTL_ADD, stop_pipe[0], &ev);
	entered();
	for (;;) {
		struct epoll_event out;
		uint64_t t0 = now_ns();
		int r = epoll_wait(ep, &out, 1, TICK_MS);
		calls++;
		if (r < 0)
			problem("epoll_wait", "errno %s", strerror(errno));
		else if (r == 0)
			check_time("epoll_wait", t0, TICK_MS);
		else
			break;
	}
	close(ep);
	return NULL;
}

static void *t_sem(void *a)
{
	(void)a;
	entered();
	for (;;) {
		struct timespec dl;
		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_sec += TICK_MS / 1000;
		uint64_t t0 = now_ns();
		int r = sem_timedwait(&sem, &dl);
		calls++;
		if (r == 0)
			break;
		if (errno != ETIMEDOUT)
			problem("sem_timedwait", "errno %s", strerror(errno));
		else
			check_time("sem_timedwait", t0, TICK_MS - 20);  /* realtime vs monotonic */
	}
	return NULL;
}

static void *t_recv_timeo(void *a)
{
	(void)a;
	struct timeval tv = { TICK_MS / 1000, 0 };
	setsockopt(sock_timeo[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	entered();
	for (;;) {
		char c;
		uint64_t t0 = now_ns();
		ssize_t r = recv(sock_timeo[0], &c, 1, 0);
		calls++;
		if (r == 1)
			break;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			check_time("recv SO_RCVTIMEO", t0, TICK_MS);
		else
			problem("recv SO_RCVTIMEO", "returned %zd errno %s", r, strerror(errno));
	}
	return NULL;
}

struct msg {
	long type;
	char text[64];
};

static void *t_msgrcv(void *a)
{
	(void)a;
	struct msg m;
	entered();
	ssize_t r = msgrcv(msq, &m, sizeof(m.text), 0, 0);
	calls++;
	if (r != 5 || !done)
		problem("msgrcv", "returned %zd errno %s before the end", r, strerror(errno));
	return NULL;
}

static void on_usr1(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	usr1_count++;
	if (si->si_code != SI_TKILL || si->si_pid != getpid())
		usr1_bad++;
}

static void *t_sigsuspend(void *a)
{
	(void)a;
	sigset_t none;
	sigemptyset(&none);
	entered();
	int r = sigsuspend(&none);
	calls++;
	if (r != -1 || errno != EINTR || !done || usr1_count != 1 || usr1_bad)
		problem("sigsuspend", "woken early or by another signal (done=%d usr1=%d bad=%d)", done,
		        (int)usr1_count, (int)usr1_bad);
	return NULL;
}

static void *t_pipe_write(void *a)
{
	(void)a;
	char *buf = calloc(1, BIG);
	entered();
	ssize_t r = write(pipe_big[1], buf, BIG);
	calls++;
	if (r != (ssize_t)BIG)
		problem("8 MiB pipe write", "returned %zd errno %s", r, strerror(errno));
	free(buf);
	return NULL;
}

static void *t_pipe_reader(void *a)
{
	(void)a;
	char *buf = malloc(1 << 16);
	size_t got = 0;
	while (got < BIG) {
		ssize_t r = read(pipe_big[0], buf, 1 << 16);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	free(buf);
	return NULL;
}

/* The other end of the 8 MiB recv; stops when the receiver is gone. */
static void *t_sock_sender(void *a)
{
	(void)a;
	char *buf = calloc(1, BIG);
	size_t sent = 0;
	while (buf && sent < BIG) {
		ssize_t r = send(sock_big[1], buf + sent, BIG - sent, MSG_NOSIGNAL);
		if (r <= 0)
			break;
		sent += (size_t)r;
	}
	free(buf);
	return NULL;
}

static void *t_recv_waitall(void *a)
{
	(void)a;
	char *buf = malloc(BIG);
	entered();
	ssize_t r = recv(sock_big[0], buf, BIG, MSG_WAITALL);
	calls++;
	if (r != (ssize_t)BIG)
		problem("8 MiB recv(MSG_WAITALL)", "returned %zd errno %s", r, strerror(errno));
	free(buf);
	return NULL;
}

static void block_all(void)
{
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
}

static void *t_sigwaitinfo(void *a)
{
	(void)a;
	block_all();
	sigset_t all;
	sigfillset(&all);
	siginfo_t si;
	entered();
	int r = sigwaitinfo(&all, &si);
	calls++;
	/* glibc's sigwaitinfo shows SI_TKILL as SI_USER */
	if (r != SIGUSR2 || (si.si_code != SI_TKILL && si.si_code != SI_USER) || si.si_pid != getpid() || !done)
		problem("sigwaitinfo", "received signal %d code %d from pid %d", r, si.si_code, (int)si.si_pid);
	return NULL;
}

static void *t_signalfd(void *a)
{
	(void)a;
	block_all();
	sigset_t all;
	sigfillset(&all);
	int fd = signalfd(-1, &all, SFD_CLOEXEC);
	struct signalfd_siginfo si;
	entered();
	ssize_t r = read(fd, &si, sizeof(si));
	calls++;
	if (r != (ssize_t)sizeof(si) || si.ssi_signo != SIGUSR2 || si.ssi_code != SI_TKILL ||
	    si.ssi_pid != (uint32_t)getpid() || !done)
		problem("signalfd", "read %zd: signal %u code %d from pid %u", r, si.ssi_signo, si.ssi_code,
		        si.ssi_pid);
	close(fd);
	return NULL;
}

static volatile unsigned long spins;

static void *t_spin(void *a)
{
	(void)a;
	spin_tid = (unsigned)gettid();
	entered();
	while (!done)
		spins++;
	return NULL;
}

/* Every signal blocked from its start; execs this program at the end. */
static int exec_pipe[2];
static void *t_exec(void *a)
{
	(void)a;
	block_all();
	char c;
	entered();
	ssize_t r = read(exec_pipe[0], &c, 1);
	if (r != 1)
		problem("exec thread read", "returned %zd errno %s", r, strerror(errno));
	fflush(stdout);
	char *argv[] = { self_argv[0], "--after-exec", NULL };
	execv("/proc/self/exe", argv);
	printf("problem: execv: %s\n", strerror(errno));
	_exit(1);
}

static int after_exec(void)
{
	sigset_t pending, none;
	sigpending(&pending);
	int n = 0;
	for (int s = 1; s < NSIG; s++)
		if (sigismember(&pending, s) == 1)
			n++;
	sigemptyset(&none);
	/* A signal left pending with its default action ends us here. */
	sigprocmask(SIG_SETMASK, &none, NULL);
	printf("after-exec ok pending=%d\n", n);
	return n ? 1 : 0;
}

/* Every thread that entered, but the spinner, is inside its call: its
 * syscall file no longer says "running". */
static int all_in_calls(void)
{
	int n = in_call;
	for (int i = 0; i < n && i < 32; i++) {
		unsigned tid = tids[i];
		if (!tid || tid == spin_tid)
			continue;
		char path[64], buf[32] = "";
		snprintf(path, sizeof(path), "/proc/self/task/%u/syscall", tid);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return 0;
		ssize_t r = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (r <= 0 || !strncmp(buf, "running", 7))
			return 0;
	}
	return 1;
}

static void make_comm(void)
{
	CUdevice dev;
	CUcontext ctx;
	ncclUniqueId id;
	ncclComm_t c = NULL;
	if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
	    cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS || cuCtxSetCurrent(ctx) != CUDA_SUCCESS ||
	    ncclGetUniqueId(&id) != ncclSuccess || ncclCommInitRank(&c, 1, id, 0) != ncclSuccess)
		problem("nccl", "cannot make a 1-rank communicator");
}

/* Until STOPFILE exists, or the test that started us is gone (killed at
 * its time limit: then nobody would ever make the file, and the busy
 * threads of --live and the spinner must not outlive it). */
static pid_t parent;
static void wait_stopfile(void)
{
	struct stat st;
	while (stat(stopfile, &st) != 0 && getppid() == parent) {
		struct timespec ts = { 0, 20000000 };
		nanosleep(&ts, NULL);
	}
}

static void spin_us(int us)
{
	uint64_t end = now_ns() + (uint64_t)us * 1000;
	while (now_ns() < end)
		spins++;
}

static void *t_window_epoll(void *a)
{
	(void)a;
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = stop_pipe[0] };
	epoll_ctl(ep, EPOLL_CTL_ADD, stop_pipe[0], &ev);
	entered();
	while (!done) {
		spin_us(20);
		struct epoll_event out;
		uint64_t t0 = now_ns();
		int r = epoll_wait(ep, &out, 1, 2);
		calls++;
		if (r < 0)
			problem("epoll_wait", "errno %s", strerror(errno));
		else if (r == 0)
			check_time("epoll_wait", t0, 2);
	}
	close(ep);
	return NULL;
}

static void *t_window_sleep(void *a)
{
	(void)a;
	entered();
	while (!done) {
		spin_us(20);
		struct timespec ts = { 0, 2000000 };
		uint64_t t0 = now_ns();
		int r = nanosleep(&ts, NULL);
		calls++;
		if (r != 0)
			problem("nanosleep", "returned %d errno %s", r, strerror(errno));
		check_time("nanosleep", t0, 2);
	}
	return NULL;
}

/* --window: see the usage. */
static int run_window(void)
{
	pthread_t th[8];
	for (int i = 0; i < 8; i++)
		pthread_create(&th[i], NULL, i < 4 ? t_window_epoll : t_window_sleep, NULL);
	while (in_call < 8)
		usleep(1000);
	printf("ready pid=%d threads=9\n", (int)getpid());
	fflush(stdout);
	wait_stopfile();
	done = 1;
	if (write(stop_pipe[1], "x", 1) != 1)
		problem("wake", "stop pipe");
	for (int i = 0; i < 8; i++)
		pthread_join(th[i], NULL);
	msgctl(msq, IPC_RMID, NULL);
	printf("calls=%d problems=%d\n", (int)calls, (int)problems);
	return problems ? 1 : 0;
}

/* ---- --live: transfers with a live peer (see the usage) ---- */

#define PIECE (64u << 10)        /* the feeder's sends */
#define DRAIN (64u << 10)        /* the drainers' reads */
#define PEER_PAUSE_NS 1000000    /* between two of a peer's pieces: paced, the
                                    transfers block in their call, burn no core */
#define ZERO_READ (64u << 20)
#define IDLE_NS 2000000          /* the busy threads' sleep between spells */

static int live_pipe[2], live_send[2], live_waitall[2];

struct live_count {
	const char *what;
	atomic_int calls, shorts, eintr;
};
static struct live_count lc_pipe = { .what = "8 MiB pipe write" }, lc_send = { .what = "8 MiB send" },
                         lc_waitall = { .what = "8 MiB recv(MSG_WAITALL)" },
                         lc_piece = { .what = "64 KiB send (feeder)" },
                         lc_drain = { .what = "64 KiB read/recv (drainers)" },
                         lc_zero = { .what = "64 MiB read of /dev/zero" },
                         lc_pause = { .what = "1 ms nanosleep (peers)" };

/* One call of `want` bytes returned r: count it, a problem unless whole. */
static void live_check(struct live_count *c, ssize_t r, size_t want)
{
	int e = errno;
	c->calls++;
	calls++;
	if (r == (ssize_t)want)
		return;
	if (r < 0 && e == EINTR)
		c->eintr++;
	else
		c->shorts++;
	if (c->shorts + c->eintr <= 5)
		problem(c->what, "returned %zd of %zu, errno %s", r, want, r < 0 ? strerror(e) : "-");
	else
		atomic_fetch_add(&problems, 1);
}

static void peer_pause(void)
{
	struct timespec ts = { 0, PEER_PAUSE_NS };
	uint64_t t0 = now_ns();
	int r = nanosleep(&ts, NULL);
	lc_pause.calls++;
	if (r != 0 || now_ns() - t0 + 1000 < PEER_PAUSE_NS) {
		lc_pause.eintr++;
		problem(lc_pause.what, "returned %d errno %s", r, strerror(errno));
	}
}

static void name_self(const char *name)
{
	pthread_setname_np(pthread_self(), name);
}

static void *t_live_pipe_write(void *a)
{
	(void)a;
	name_self("q-pipe-write");
	char *buf = calloc(1, BIG);
	entered();
	while (buf && !done)
		live_check(&lc_pipe, write(live_pipe[1], buf, BIG), BIG);
	close(live_pipe[1]);
	free(buf);
	return NULL;
}

static void *t_live_send(void *a)
{
	(void)a;
	name_self("q-send");
	char *buf = calloc(1, BIG);
	entered();
	while (buf && !done)
		live_check(&lc_send, send(live_send[0], buf, BIG, MSG_NOSIGNAL), BIG);
	shutdown(live_send[0], SHUT_WR);
	free(buf);
	return NULL;
}

/* Reads 64 KiB every millisecond from fd until its end; a short read is normal
 * here, an error is not. */
static void drain(int fd, int sock)
{
	char *buf = malloc(DRAIN);
	for (;;) {
		ssize_t r = sock ? recv(fd, buf, DRAIN, 0) : read(fd, buf, DRAIN);
		int e = errno;
		lc_drain.calls++;
		if (r == 0)
			break;
		if (r < 0) {
			if (e == EINTR)
				lc_drain.eintr++;
			problem(lc_drain.what, "returned %zd errno %s", r, strerror(e));
			if (e != EINTR)
				break;
		}
		peer_pause();
	}
	free(buf);
}

static void *t_live_pipe_drain(void *a)
{
	(void)a;
	name_self("q-pipe-drain");
	entered();
	drain(live_pipe[0], 0);
	return NULL;
}

static void *t_live_send_drain(void *a)
{
	(void)a;
	name_self("q-send-drain");
	entered();
	drain(live_send[1], 1);
	return NULL;
}

static void *t_live_waitall(void *a)
{
	(void)a;
	name_self("q-waitall");
	char *buf = malloc(BIG);
	entered();
	for (;;) {
		ssize_t r = recv(live_waitall[0], buf, BIG, MSG_WAITALL);
		int e = errno;
		if (r == 0 && done)
			break;
		live_check(&lc_waitall, r, BIG);
		if (r <= 0 && e != EINTR)
			break;
	}
	free(buf);
	return NULL;
}

/* Feeds the MSG_WAITALL receiver whole 8 MiB blocks, 64 KiB at a time. */
static void *t_live_feed(void *a)
{
	(void)a;
	name_self("q-feed");
	char *buf = calloc(1, PIECE);
	entered();
	while (buf && !done)
		for (size_t sent = 0; sent < BIG; sent += PIECE) {
			live_check(&lc_piece, send(live_waitall[1], buf, PIECE, MSG_NOSIGNAL), PIECE);
			peer_pause();
		}
	shutdown(live_waitall[1], SHUT_WR);
	free(buf);
	return NULL;
}

/* Spells: set by the main thread while STOPFILE.busy exists. */
static atomic_int spell;
static char busyfile[4096];

/* Our scheduling group at nice 19 too: started in a session of its own
 * (setsid), we are an autogroup of our own (sched_autogroup), which the
 * scheduler weighs as one against every other group whatever our threads'
 * nice values: without this they only rank our threads among themselves.
 * A write within 100 ms of another process's may say EAGAIN. */
static void nice_group(void)
{
	for (int i = 0; i < 50; i++) {
		int fd = open("/proc/self/autogroup", O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			return;    /* no autogroups: the threads' nice values are enough */
		ssize_t r = write(fd, "19", 2);
		int e = errno;
		close(fd);
		if (r == 2)
			return;
		if (e != EAGAIN) {
			printf("live: cannot set our autogroup's nice value: %s\n", strerror(e));
			return;
		}
		usleep(20000);
	}
}

/* A busy thread: nice 19 in our group at nice 19, so that it takes no CPU
 * time from anyone else. */
static void busy_thread(const char *name)
{
	name_self(name);
	if (setpriority(PRIO_PROCESS, (id_t)gettid(), 19) != 0)
		problem(name, "setpriority: %s", strerror(errno));
}

static void idle_pause(void)
{
	struct timespec ts = { 0, IDLE_NS };
	nanosleep(&ts, NULL);
}

/* Within a spell, inside the kernel all the time (a /dev/zero read never
 * blocks), and such a read stops early when a signal or a ptrace
 * interrupt is pending. */
static void *t_live_zero(void *a)
{
	(void)a;
	busy_thread("q-zero-read");
	int fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	char *buf = malloc(ZERO_READ);
	int n = 0;
	entered();
	while (fd >= 0 && buf && !done) {
		if (!spell) {
			idle_pause();
			continue;
		}
		printf("live spell %d started\n", ++n);
		while (spell && !done)
			live_check(&lc_zero, read(fd, buf, ZERO_READ), ZERO_READ);
		printf("live spell %d ended\n", n);
	}
	if (fd >= 0)
		close(fd);
	free(buf);
	return NULL;
}

/* Within a spell, user code all the time. */
static void *t_live_spin(void *a)
{
	(void)a;
	busy_thread("q-spin");
	entered();
	while (!done) {
		if (!spell)
			idle_pause();
		while (spell && !done)
			spins++;
	}
	return NULL;
}

/* wait_stopfile, and a spell while STOPFILE.busy exists. */
static void live_wait(void)
{
	struct stat st;
	while (stat(stopfile, &st) != 0 && getppid() == parent) {
		spell = stat(busyfile, &st) == 0;
		struct timespec ts = { 0, 5000000 };
		nanosleep(&ts, NULL);
	}
	spell = 0;
}

static int run_live(void)
{
	if (pipe2(live_pipe, O_CLOEXEC) || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, live_send) ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, live_waitall)) {
		perror("setup");
		return 2;
	}
	snprintf(busyfile, sizeof(busyfile), "%s.busy", stopfile);
	nice_group();
	void *(*fn[])(void *) = { t_live_pipe_write, t_live_pipe_drain, t_live_send, t_live_send_drain,
	                          t_live_waitall, t_live_feed, t_live_zero, t_live_spin };
	enum { NL = sizeof(fn) / sizeof(fn[0]) };
	pthread_t th[NL];
	for (int i = 0; i < NL; i++)
		pthread_create(&th[i], NULL, fn[i], NULL);
	while (in_call < NL)
		usleep(1000);
	printf("ready pid=%d threads=%d\n", (int)getpid(), NL + 1);
	fflush(stdout);
	live_wait();
	done = 1;
	for (int i = 0; i < NL; i++)
		pthread_join(th[i], NULL);
	struct live_count *all[] = { &lc_pipe, &lc_send, &lc_waitall, &lc_piece, &lc_drain, &lc_zero, &lc_pause };
	int shorts = 0;
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		printf("live: %s: calls=%d short=%d eintr=%d\n", all[i]->what, (int)all[i]->calls,
		       (int)all[i]->shorts, (int)all[i]->eintr);
		if (all[i] != &lc_drain && all[i] != &lc_pause)
			shorts += all[i]->shorts + all[i]->eintr;
	}
	printf("short transfers: %d\n", shorts);
	msgctl(msq, IPC_RMID, NULL);
	printf("calls=%d problems=%d\n", (int)calls, (int)problems);
	return problems ? 1 : 0;
}

/* --eight: 8 timed calls in their loops (--spin: 7 and the spinner); no exec. */
static int eight_spin;
static int run_eight(void)
{
	void *(*fn[])(void *) = { t_nanosleep, t_clock_nanosleep, t_poll, t_select, t_epoll, t_sem,
	                          t_recv_timeo, eight_spin ? t_spin : t_usleep };
	enum { N8 = sizeof(fn) / sizeof(fn[0]) };
	pthread_t th[N8];
	for (int i = 0; i < N8; i++)
		pthread_create(&th[i], NULL, fn[i], NULL);
	while (in_call < N8 || !all_in_calls())
		usleep(1000);
	printf("ready pid=%d threads=%d\n", (int)getpid(), N8 + 1);
	fflush(stdout);
	wait_stopfile();
	done = 1;
	sem_post(&sem);
	if (write(stop_pipe[1], "x", 1) != 1 || send(sock_timeo[1], "x", 1, 0) != 1)
		problem("wake", "stop pipe");
	for (int i = 0; i < N8; i++)
		pthread_join(th[i], NULL);
	msgctl(msq, IPC_RMID, NULL);
	printf("calls=%d problems=%d\n", (int)calls, (int)problems);
	return problems ? 1 : 0;
}

int main(int argc, char **argv)
{
	self_argv = argv;
	if (argc > 1 && !strcmp(argv[1], "--after-exec"))
		return after_exec();
	if (argc < 2) {
		fprintf(stderr, "usage: capture-quiet STOPFILE [--nccl]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	stopfile = argv[1];
	parent = getppid();
	int small_stack = 1, eight = 0, window = 0, live = 0;
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--eight"))
			eight = 1;
		else if (!strcmp(argv[i], "--spin"))
			eight_spin = 1;
		else if (!strcmp(argv[i], "--window"))
			window = 1;
		else if (!strcmp(argv[i], "--live"))
			live = 1;
		if (!strcmp(argv[i], "--nccl"))
			make_comm();
		else if (!strcmp(argv[i], "--no-small-stack"))
			small_stack = 0;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_usr1;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGUSR1, &sa, NULL);
	/* SIGUSR1 only for sigsuspend's thread: every other thread blocks it. */
	sigset_t usr1;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigaddset(&usr1, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	if (pipe2(stop_pipe, O_CLOEXEC) || pipe2(pipe_big, O_CLOEXEC) || pipe2(exec_pipe, O_CLOEXEC) ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sock_big) ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sock_timeo) || sem_init(&sem, 0, 0) ||
	    (msq = msgget(IPC_PRIVATE, IPC_CREAT | 0600)) < 0) {
		perror("setup");
		return 2;
	}
	void *(*fn[])(void *) = { t_nanosleep, t_clock_nanosleep, t_usleep, t_sleep, t_poll, t_select,
	                          t_epoll, t_sem, t_recv_timeo, t_msgrcv, t_pipe_write, t_recv_waitall,
	                          t_spin };
	enum { NFN = sizeof(fn) / sizeof(fn[0]) };
	pthread_t th[NFN + 1], small;
	if (eight)
		return run_eight();
	if (window)
		return run_window();
	if (live)
		return run_live();
	for (int i = 0; i < NFN; i++)
		pthread_create(&th[i], NULL, fn[i], NULL);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, SMALL_STACK);
	if (small_stack)
		pthread_create(&small, &attr, t_small_stack, NULL);
	pthread_attr_destroy(&attr);
	/* sigsuspend's thread takes SIGUSR1: created with it unblocked. */
	sigset_t only2;
	sigemptyset(&only2);
	sigaddset(&only2, SIGUSR2);
	pthread_sigmask(SIG_SETMASK, &only2, NULL);
	pthread_create(&th_suspend, NULL, t_sigsuspend, NULL);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	pthread_create(&th_waitinfo, NULL, t_sigwaitinfo, NULL);
	pthread_create(&th_signalfd, NULL, t_signalfd, NULL);
	pthread_create(&th_exec, NULL, t_exec, NULL);
	int expect = NFN + 4 + small_stack;
	while (in_call < expect || !all_in_calls())
		usleep(1000);
	printf("ready pid=%d threads=%d\n", (int)getpid(), expect + 1);
	fflush(stdout);

	wait_stopfile();

	/* End every call by its own means. */
	done = 1;
	sem_post(&sem);
	if (write(stop_pipe[1], "x", 1) != 1 || send(sock_timeo[1], "x", 1, 0) != 1)
		problem("wake", "stop pipe");
	struct msg m = { 1, "hello" };
	msgsnd(msq, &m, 5, 0);
	pthread_kill(th_suspend, SIGUSR1);
	pthread_kill(th_waitinfo, SIGUSR2);
	pthread_kill(th_signalfd, SIGUSR2);
	pthread_t reader, sender;
	pthread_create(&reader, NULL, t_pipe_reader, NULL);
	pthread_create(&sender, NULL, t_sock_sender, NULL);
	for (int i = 0; i < NFN; i++)
		pthread_join(th[i], NULL);
	/* A transfer that came back short leaves its other end waiting. */
	close(pipe_big[1]);
	shutdown(sock_big[0], SHUT_RDWR);
	pthread_join(sender, NULL);
	if (small_stack)
		pthread_join(small, NULL);
	pthread_join(th_suspend, NULL);
	pthread_join(th_waitinfo, NULL);
	pthread_join(th_signalfd, NULL);
	pthread_join(reader, NULL);
	msgctl(msq, IPC_RMID, NULL);
	printf("calls=%d problems=%d\n", (int)calls, (int)problems);
	fflush(stdout);
	if (write(exec_pipe[1], "x", 1) != 1)
		return 1;
	pthread_join(th_exec, NULL);    /* never returns: the exec replaces us */
	return 1;
}
