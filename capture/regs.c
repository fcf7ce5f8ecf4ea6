/* regs: a blocked thread's pc and sp from /proc/PID/task/TID/syscall,
 * which the kernel fills from the thread's saved user registers only
 * while the thread is off the CPU (it never stops or wakes it):
 *   "NR ARG1 .. ARG6 SP PC"  blocked in system call NR
 *   "-1 SP PC"               blocked outside a system call (a page fault, a stop)
 *   "running"                on a CPU, or runnable */
#include "capture_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum nw_cap_sys nw_cap_syscall_regs(pid_t pid, uint32_t tid, struct nw_cap_regs *regs,
                                    char *line, size_t len)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task/%u/syscall", (int)pid, tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH ? NW_SYS_GONE
		       : errno == EACCES || errno == EPERM ? NW_SYS_DENIED : NW_SYS_ERROR;
	ssize_t n;
	do
		n = read(fd, line, len - 1);
	while (n < 0 && errno == EINTR);
	int err = errno;
	close(fd);
	if (n <= 0)
		return n == 0 || err == ESRCH ? NW_SYS_GONE
		       : err == EACCES || err == EPERM ? NW_SYS_DENIED : NW_SYS_ERROR;
	line[n] = 0;
	if (strncmp(line, "running", 7) == 0)
		return NW_SYS_RUNNING;
	/* The last two numbers are sp and pc, whatever comes before. */
	uint64_t v[9];
	int k = 0;
	char *p = line, *end;
	while (k < 9) {
		while (*p == ' ')
			p++;
		if (!*p || *p == '\n')
			break;
		long long sv = 0;
		uint64_t uv;
		if (k == 0) {
			sv = strtoll(p, &end, 10);
			uv = (uint64_t)sv;
		} else {
			uv = strtoull(p, &end, 16);
		}
		if (end == p)
			return NW_SYS_ERROR;
		v[k++] = uv;
		p = end;
	}
	if (k != 3 && k != 9)
		return NW_SYS_ERROR;
	memset(regs, 0, sizeof(*regs));
	regs->r[UNW_X86_64_RSP] = v[k - 2];
	regs->r[UNW_X86_64_RIP] = v[k - 1];
	regs->known = 1u << UNW_X86_64_RSP | 1u << UNW_X86_64_RIP;
	return regs->r[UNW_X86_64_RSP] && regs->r[UNW_X86_64_RIP] ? NW_SYS_BLOCKED : NW_SYS_ERROR;
}
