/* target: a process opened for capture, and one thread's look (see
 * capture.h). */
#include "capture_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct nw_cap_target *nw_cap_open(pid_t pid)
{
	struct nw_cap_target *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->pid = pid;
	t->self = pid == getpid();
	if (nw_cap_mem_init(&t->mem, nw_cap_via(t)) != 0 || nw_cap_unwind_init(t) != 0) {
		int e = errno ? errno : ENOMEM;
		nw_cap_close(t);
		errno = e;
		return NULL;
	}
	return t;
}

void nw_cap_close(struct nw_cap_target *t)
{
	if (!t)
		return;
	nw_cap_unwind_free(t);
	nw_cap_syms_free(t->syms);
	nw_cap_mem_free(&t->mem);
	free(t);
}

pid_t nw_cap_pid(const struct nw_cap_target *t)
{
	return t->pid;
}

void nw_cap_begin(struct nw_cap_target *t)
{
	nw_cap_forget_maps(t);
	/* Our own process, reached through the thread that captures now (the
	 * one that opened it may have exited since). */
	if (t->self && t->upt_pid != nw_cap_via(t)) {
		t->mem.pid = nw_cap_via(t);
		nw_cap_unwind_via(t);
	}
}

enum nw_cap_result nw_cap_look(struct nw_cap_target *t, uint32_t tid, struct nw_cap_stack *out, int *moved)
{
	char a[256], b[256];
	struct nw_cap_regs again;
	*moved = 0;
	nw_cap_mem_reset(&t->mem);
	switch (nw_cap_syscall_regs(t->pid, tid, &t->regs, a, sizeof(a))) {
	case NW_SYS_BLOCKED:
		break;
	case NW_SYS_RUNNING:
		return NW_CAP_RUNNING;
	case NW_SYS_GONE:
		out->why = "thread exited";
		return NW_CAP_GONE;
	case NW_SYS_DENIED:
		out->why = "not permitted to read /proc/PID/task/TID/syscall";
		return NW_CAP_DENIED;
	default:
		out->why = "cannot read /proc/PID/task/TID/syscall";
		return NW_CAP_FAILED;
	}
	nw_cap_mem_copy_stack(&t->mem, t->regs.r[UNW_X86_64_RSP]);
	/* Still there after the copy: the copy is of that moment. */
	if (nw_cap_syscall_regs(t->pid, tid, &again, b, sizeof(b)) == NW_SYS_BLOCKED && !strcmp(a, b)) {
		out->flags |= NW_THR_REGS_SYSCALL;
		nw_cap_stats.by_syscall++;
		return NW_CAP_OK;
	}
	nw_cap_stats.moved++;
	*moved = 1;
	return NW_CAP_RUNNING;
}

enum nw_cap_result nw_cap_thread(struct nw_cap_target *t, uint32_t tid, struct nw_cap_stack *out)
{
	out->flags = 0;
	out->n = 0;
	out->stopped_ns = 0;
	out->restarted = 0;
	out->why = NULL;
	nw_cap_stats.threads++;
	enum nw_cap_result r = NW_CAP_RUNNING;
	int moved = 1;
	/* A thread that sleeps and wakes all the time moves under the copy:
	 * a few tries, then it is watched like a running one. */
	for (int i = 0; i < NW_CAP_TRIES && r == NW_CAP_RUNNING && moved; i++)
		r = nw_cap_look(t, tid, out, &moved);
	if (r == NW_CAP_RUNNING)
		out->why = "running";
	else if (r == NW_CAP_OK)
		nw_cap_unwind(t, out);
	return r;
}
