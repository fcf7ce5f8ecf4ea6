/* watch: threads whose syscall file says "running". The kernel writes
 * that for every thread on a CPU or waiting for one (TASK_RUNNING), in
 * user code or inside the kernel alike: a thread copying 8 MiB into a pipe
 * whose reader is slow is "running" each time it is woken to copy the next
 * 64 KiB. Stopping it there (PTRACE_INTERRUPT) or signalling it makes the
 * call return what it copied so far: a short write, send or
 * recv(MSG_WAITALL). So none is interrupted at first sight. All of them
 * are watched together, a round every millisecond, until each is decided,
 * for at most NW_CAP_WATCH_MS:
 * - its syscall file again: a thread that waits between its copies is
 *   soon found blocked, and its stack is taken from there, as a blocked
 *   thread's is (nothing stopped or signalled);
 * - else its CPU times, utime and stime of /proc/PID/task/TID/stat, since
 *   the start: the only place the kernel says, without stopping it,
 *   whether a running thread runs user code. It charges each of its ticks
 *   to the mode it finds the thread in; /proc shows the sums in clock
 *   ticks (10 ms at USER_HZ 100). A thread whose system time went up by 2
 *   clock ticks is left running (NW_CAP_KERNEL: inside a call that never
 *   blocked, e.g. a long read of /dev/zero, which a pending interrupt cuts
 *   short too, or in and out of calls); one whose user time went up by
 *   more than NW_CAP_USER_MS (3 clock ticks) and its system time by none
 *   (or 6 and 1: interrupts the kernel handles on its CPU are charged to
 *   the thread running there), so more than two thirds of what it ran was
 *   user code, is interrupted at once (ptrace, or the caller's `take`);
 *   one that got too little CPU time to tell by the end (a starved thread,
 *   on a loaded machine or under a CPU quota) is left running.
 * The kernel only samples the mode at its ticks: a thread that spends a
 * sliver of its time in system calls can pass for one running user code
 * and be caught inside a call (README, "Thread stacks"). */
#include "capture_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define STEP_NS 1000000ull

static const char why_kernel[] = "running inside the kernel, never seen blocked: not interrupted";
static const char why_mixed[] =
	"running user code and system calls by turns, never seen blocked: not interrupted";
static const char why_unsure[] =
	"running, too little CPU time to tell user code from a system call: not interrupted";

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* utime and stime (clock ticks) from /proc/PID/task/TID/stat: 0, or -1
 * with errno. The name (field 2) may hold spaces and parentheses: the
 * fields are counted from the last ')'. */
static int cpu_times(pid_t pid, uint32_t tid, uint64_t *utime, uint64_t *stime)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/task/%u/stat", (int)pid, tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n;
	do
		n = read(fd, buf, sizeof(buf) - 1);
	while (n < 0 && errno == EINTR);
	int err = errno;
	close(fd);
	if (n <= 0) {
		errno = n == 0 ? ESRCH : err;
		return -1;
	}
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	unsigned long long u, s;
	/* state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime */
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &u, &s) != 2) {
		errno = EPROTO;
		return -1;
	}
	*utime = u;
	*stime = s;
	return 0;
}

struct watched {
	uint64_t utime0, stime0;   /* at the start */
	int watching;
};

/* Thread i is done: rc, and the figures. */
static void settle(enum nw_cap_result *rc, struct watched *w, uint32_t *left, enum nw_cap_result r)
{
	*rc = r;
	w->watching = 0;
	(*left)--;
	if (r == NW_CAP_KERNEL)
		nw_cap_stats.left_running++;
	else if (r == NW_CAP_RUNNING)
		nw_cap_stats.running++;
}

static enum nw_cap_result failed_stat(struct nw_cap_stack *out)
{
	if (errno == ENOENT || errno == ESRCH) {
		out->why = "thread exited";
		return NW_CAP_GONE;
	}
	out->why = errno == EACCES || errno == EPERM ? "not permitted to read /proc/PID/task/TID/stat"
	                                             : "cannot read /proc/PID/task/TID/stat";
	return errno == EACCES || errno == EPERM ? NW_CAP_DENIED : NW_CAP_FAILED;
}

/* One watch over n threads: what it looks at, and how far it got. */
struct watch {
	struct nw_cap_target *t;
	const uint32_t *tid;
	struct nw_cap_stack *out;
	enum nw_cap_result *rc;
	struct watched *w;
	uint32_t left;              /* threads still watched */
	uint64_t user_ticks;        /* user time that says "running user code" */
	int may_ptrace;
	nw_cap_take_fn *take;
	void *arg;
};

/* Each thread's CPU times at the start: watched from there, or settled
 * at once (no memory, its stat unreadable). */
static void start_watching(struct watch *x, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		nw_cap_stats.watched++;
		x->out[i].why = NULL;
		x->rc[i] = NW_CAP_RUNNING;
		if (!x->w) {
			x->out[i].why = "out of memory";
			x->rc[i] = NW_CAP_FAILED;
		} else if (cpu_times(x->t->pid, x->tid[i], &x->w[i].utime0, &x->w[i].stime0) != 0) {
			x->rc[i] = failed_stat(&x->out[i]);
		} else {
			x->w[i].watching = 1;
			x->left++;
		}
	}
}

/* A thread found running user code: its registers by ptrace where
 * allowed, else left running (the caller may take it: take). */
static void interrupt_thread(struct watch *x, uint32_t i)
{
	struct nw_cap_target *t = x->t;
	if (!x->may_ptrace) {
		x->out[i].why = "running user code";
		settle(&x->rc[i], &x->w[i], &x->left, NW_CAP_RUNNING);
		if (x->take)
			x->take(x->arg, i);
		return;
	}
	nw_cap_mem_reset(&t->mem);
	enum nw_cap_result r = nw_cap_ptrace_regs(t, x->tid[i], &x->out[i]);
	if (r == NW_CAP_OK) {
		x->out[i].flags |= NW_THR_REGS_PTRACE;
		nw_cap_stats.by_ptrace++;
		nw_cap_unwind(t, &x->out[i]);
	}
	settle(&x->rc[i], &x->w[i], &x->left, r);
}

/* One look at thread i: blocked (its stack read), gone, in the kernel,
 * running user code (interrupted), or not yet known (looked at again). */
static void look_at(struct watch *x, uint32_t i)
{
	struct nw_cap_target *t = x->t;
	struct nw_cap_stack *out = &x->out[i];
	int moved;
	out->why = NULL;
	enum nw_cap_result r = nw_cap_look(t, x->tid[i], out, &moved);
	if (r == NW_CAP_OK) {
		nw_cap_stats.caught_blocked++;
		nw_cap_unwind(t, out);
		settle(&x->rc[i], &x->w[i], &x->left, r);
		return;
	}
	if (r != NW_CAP_RUNNING) {
		settle(&x->rc[i], &x->w[i], &x->left, r);
		return;
	}
	if (moved)
		return;    /* it was blocked a moment ago: look again next round */
	uint64_t u, s;
	if (cpu_times(t->pid, x->tid[i], &u, &s) != 0) {
		settle(&x->rc[i], &x->w[i], &x->left, failed_stat(out));
		return;
	}
	uint64_t du = u - x->w[i].utime0, ds = s - x->w[i].stime0;
	if (ds >= 2) {
		out->why = du >= 2 ? why_mixed : why_kernel;
		settle(&x->rc[i], &x->w[i], &x->left, NW_CAP_KERNEL);
		return;
	}
	/* One tick of system time is let go with twice the user time:
	 * interrupts and softirqs the kernel handles while a thread
	 * runs user code are charged to it as system time. */
	if (du < (ds ? 2 * x->user_ticks : x->user_ticks))
		return;
	/* Running user code: interrupt it now. */
	interrupt_thread(x, i);
}

void nw_cap_watch(struct nw_cap_target *t, uint32_t n, const uint32_t *tid, struct nw_cap_stack *out,
                  enum nw_cap_result *rc, int allow_ptrace, nw_cap_take_fn *take, void *arg)
{
	if (!n)
		return;
	uint64_t start = now_ns(), deadline = start + NW_CAP_WATCH_MS * 1000000ull;
	long hz = sysconf(_SC_CLK_TCK);
	if (hz <= 0)
		hz = 100;
	struct watch x = {
		.t = t, .tid = tid, .out = out, .rc = rc, .w = calloc(n, sizeof(struct watched)),
		/* More than NW_CAP_USER_MS: 3 clock ticks of 10 ms. */
		.user_ticks = (uint64_t)NW_CAP_USER_MS * (uint64_t)hz / 1000 + 1,
		.may_ptrace = allow_ptrace && !t->self, .take = take, .arg = arg,
	};
	start_watching(&x, n);
	while (x.left) {
		struct timespec step = { 0, (long)STEP_NS };
		nanosleep(&step, NULL);
		for (uint32_t i = 0; i < n; i++)
			if (x.w[i].watching)
				look_at(&x, i);
		if (x.left && now_ns() >= deadline)
			for (uint32_t i = 0; i < n; i++)
				if (x.w[i].watching) {
					out[i].why = why_unsure;
					settle(&rc[i], &x.w[i], &x.left, NW_CAP_KERNEL);
				}
	}
	free(x.w);
	uint64_t took = now_ns() - start;
	if (took > nw_cap_stats.watch_max_ns)
		nw_cap_stats.watch_max_ns = took;
}
