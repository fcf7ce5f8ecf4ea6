/* nccl_fork: NCCL calls before and after fork() (NCCLSIM_NULL=1). The
 * parent issues 3 all-reduces, forks; the child makes its own comm and
 * issues 2, then exits; the parent issues 1 more. Prints both pids.
 *
 * usage: nccl-fork */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nccl.h>

int main(void)
{
	ncclComm_t comm, child_comm;
	float buf[4];
	if (ncclCommInitAll(&comm, 1, NULL) != ncclSuccess)
		return 1;
	for (int i = 0; i < 3; i++)
		ncclAllReduce(buf, buf, 3, ncclFloat, ncclSum, comm, NULL);
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		if (ncclCommInitAll(&child_comm, 1, NULL) != ncclSuccess)
			_exit(1);
		for (int i = 0; i < 2; i++)
			ncclAllReduce(buf, buf, 2, ncclFloat, ncclSum, child_comm, NULL);
		ncclCommDestroy(child_comm);
		return 0;                      /* exit(): the child's exit handler runs */
	}
	int status;
	waitpid(pid, &status, 0);
	ncclAllReduce(buf, buf, 1, ncclFloat, ncclSum, comm, NULL);
	ncclCommDestroy(comm);
	printf("parent %d child %d status %d\n", (int)getpid(), (int)pid, status);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
