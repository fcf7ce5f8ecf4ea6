/* ptrace: a thread of another process that runs user code has no system
 * call to read its registers from: PTRACE_SEIZE (stops nothing),
 * PTRACE_INTERRUPT, wait for the stop, PTRACE_GETREGS, copy the stack,
 * PTRACE_DETACH. The unwinding happens after the thread runs again, from
 * the copy. Only threads nw_cap_watch found running user code alone, for
 * more than NW_CAP_USER_MS of CPU time, come here, right after its last
 * look at them.
 *
 * The window: a thread that enters a blocking call between that look and
 * the interrupt is woken by it. Calls the kernel restarts by itself
 * (restart codes) do not notice. A call that would return EINTR (epoll_wait,
 * recv with a timeout, ...) is seen at the stop, on its way out, as
 * orig_rax >= 0 with rax = -EINTR: rax becomes -ERESTARTNOINTR, so the
 * kernel restarts it as if nothing happened (its timeout starts again);
 * not when a real signal is pending for it, which would have interrupted
 * it anyway. A transfer already partly done (a pipe write) returns short:
 * that cannot be undone. Every stop that finds the thread in a system call
 * after all is counted (nw_cap_stats.in_call_at_stop). */
#include "capture_int.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ERESTARTNOINTR 513          /* kernel-internal, include/linux/errno.h */
#define STOP_WAIT_NS 5000000000ull  /* a thread that does not stop within 5 s is left */

struct nw_cap_stats nw_cap_stats;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A signal is pending for the thread or its process and not blocked. */
static int signal_pending(pid_t pid, uint32_t tid)
{
	char path[64], buf[4096];
	snprintf(path, sizeof(path), "/proc/%d/task/%u/status", (int)pid, tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 1;
	buf[n] = 0;
	const char *p = strstr(buf, "\nSigPnd:"), *s = strstr(buf, "\nShdPnd:"), *b = strstr(buf, "\nSigBlk:");
	if (!p || !s || !b)
		return 1;
	unsigned long long pend = strtoull(p + 8, NULL, 16) | strtoull(s + 8, NULL, 16);
	unsigned long long blk = strtoull(b + 8, NULL, 16);
	return (pend & ~blk) != 0;
}

static void set_regs(struct nw_cap_regs *r, const struct user_regs_struct *u)
{
	r->r[UNW_X86_64_RAX] = u->rax;
	r->r[UNW_X86_64_RDX] = u->rdx;
	r->r[UNW_X86_64_RCX] = u->rcx;
	r->r[UNW_X86_64_RBX] = u->rbx;
	r->r[UNW_X86_64_RSI] = u->rsi;
	r->r[UNW_X86_64_RDI] = u->rdi;
	r->r[UNW_X86_64_RBP] = u->rbp;
	r->r[UNW_X86_64_RSP] = u->rsp;
	r->r[UNW_X86_64_R8] = u->r8;
	r->r[UNW_X86_64_R9] = u->r9;
	r->r[UNW_X86_64_R10] = u->r10;
	r->r[UNW_X86_64_R11] = u->r11;
	r->r[UNW_X86_64_R12] = u->r12;
	r->r[UNW_X86_64_R13] = u->r13;
	r->r[UNW_X86_64_R14] = u->r14;
	r->r[UNW_X86_64_R15] = u->r15;
	r->r[UNW_X86_64_RIP] = u->rip;
	r->known = (1u << NW_CAP_NREGS) - 1;
}

/* Wait for the stop after PTRACE_INTERRUPT: 1 stopped (*status), 0 the
 * thread is gone, -1 it did not stop in time. */
static int wait_stop(uint32_t tid, int *status)
{
	uint64_t deadline = now_ns() + STOP_WAIT_NS;
	for (;;) {
		pid_t w = waitpid((pid_t)tid, status, __WALL | WNOHANG);
		if (w == (pid_t)tid)
			return WIFSTOPPED(*status) ? 1 : 0;
		if (w < 0 && errno != EINTR)
			return 0;
		uint64_t now = now_ns();
		if (now >= deadline)
			return -1;
		/* The stop comes within microseconds unless we are descheduled:
		 * yield first, sleep only after 2 ms. */
		if (now + STOP_WAIT_NS - deadline < 2000000ull) {
			sched_yield();
		} else {
			struct timespec ts = { 0, 20000 };
			nanosleep(&ts, NULL);
		}
	}
}

enum nw_cap_result nw_cap_ptrace_regs(struct nw_cap_target *t, uint32_t tid, struct nw_cap_stack *out)
{
	if (ptrace(PTRACE_SEIZE, (pid_t)tid, NULL, NULL) != 0) {
		if (errno == ESRCH) {
			out->why = "thread exited";
			return NW_CAP_GONE;
		}
		out->why = errno == EPERM ? "ptrace not permitted" : "ptrace failed";
		return errno == EPERM ? NW_CAP_DENIED : NW_CAP_FAILED;
	}
	/* No last look at its syscall file here: a seized thread that is not
	 * stopped cannot be detached (PTRACE_DETACH needs a ptrace-stop), so
	 * one found blocked now would stay ours until we exit, and could not
	 * be seized again. nw_cap_watch looked just before. */
	uint64_t t0 = now_ns();
	if (ptrace(PTRACE_INTERRUPT, (pid_t)tid, NULL, NULL) != 0) {
		int gone = errno == ESRCH;
		ptrace(PTRACE_DETACH, (pid_t)tid, NULL, NULL);
		out->why = gone ? "thread exited" : "ptrace interrupt failed";
		return gone ? NW_CAP_GONE : NW_CAP_FAILED;
	}
	int status = 0;
	int w = wait_stop(tid, &status);
	if (w == 0) {
		out->why = "thread exited";
		return NW_CAP_GONE;
	}
	if (w < 0) {
		/* Still seized: our exit detaches it (and clears the interrupt). */
		out->why = "thread did not stop within 5 s";
		return NW_CAP_FAILED;
	}
	int event = status >> 16, sig = WSTOPSIG(status);
	/* A signal-delivery stop: the signal goes on with the detach. A
	 * group-stop (SIGSTOP...) is left as it is (detach with 0 resumes the
	 * thread only if it was our stop). */
	long pass = event == 0 ? sig : 0;
	struct user_regs_struct u;
	enum nw_cap_result res = NW_CAP_OK;
	if (ptrace(PTRACE_GETREGS, (pid_t)tid, NULL, &u) != 0) {
		res = NW_CAP_FAILED;
		out->why = "ptrace getregs failed";
	} else {
		if (event == PTRACE_EVENT_STOP && sig == SIGTRAP && (long long)u.orig_rax >= 0 &&
		    (long long)u.rax == -EINTR && !signal_pending(t->pid, tid)) {
			struct user_regs_struct v = u;
			v.rax = (unsigned long long)-ERESTARTNOINTR;
			if (ptrace(PTRACE_SETREGS, (pid_t)tid, NULL, &v) == 0) {
				out->restarted = 1;
				nw_cap_stats.restarted++;
			}
		}
		if ((long long)u.orig_rax >= 0 && !out->restarted)
			nw_cap_stats.in_call_at_stop++;
		set_regs(&t->regs, &u);
		nw_cap_mem_copy_stack(&t->mem, u.rsp);
	}
	ptrace(PTRACE_DETACH, (pid_t)tid, NULL, (void *)pass);
	uint64_t stopped = now_ns() - t0;
	out->stopped_ns = stopped;
	nw_cap_stats.stopped_total_ns += stopped;
	if (stopped > nw_cap_stats.stopped_max_ns)
		nw_cap_stats.stopped_max_ns = stopped;
	return res;
}
