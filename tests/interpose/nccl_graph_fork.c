/* nccl_graph_fork: CUDA graph launches before and after fork()
 * (NCCLSIM_NULL=1). The parent captures 1 AllReduce into a graph,
 * instantiates it and launches it 3 times, then forks; the child (a fresh
 * simulated driver) launches the parent's executable graph once (the
 * driver refuses it: it is not the child's), captures 2 AllReduces into a
 * graph of its own and launches it 2 times, then exits; the parent
 * launches its graph once more. Prints both pids and the child's result
 * for the parent's graph. With "alone": the parent's 3 launches only, and
 * exit with the graph alive (not destroyed: many programs end so).
 *
 * usage: nccl-graph-fork [alone] */
#include <cuda.h>
#include <nccl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct gpu {
	CUstream run, cap;
	CUdeviceptr buf;
	ncclComm_t comm;
};

static int gpu_open(struct gpu *g)
{
	CUdevice dev;
	CUcontext ctx;
	return cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
	       cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS || cuCtxSetCurrent(ctx) != CUDA_SUCCESS ||
	       cuStreamCreate(&g->run, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS ||
	       cuStreamCreate(&g->cap, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS ||
	       cuMemAlloc(&g->buf, 64) != CUDA_SUCCESS || ncclCommInitAll(&g->comm, 1, NULL) != ncclSuccess;
}

/* nops AllReduces captured into a graph, instantiated into *exec. */
static int capture(struct gpu *g, int nops, CUgraphExec *exec)
{
	CUgraph graph;
	if (cuStreamBeginCapture(g->cap, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) != CUDA_SUCCESS)
		return 1;
	for (int i = 0; i < nops; i++)
		if (ncclAllReduce((void *)g->buf, (void *)g->buf, 4, ncclFloat, ncclSum, g->comm, g->cap) != ncclSuccess)
			return 1;
	return cuStreamEndCapture(g->cap, &graph) != CUDA_SUCCESS ||
	       cuGraphInstantiateWithFlags(exec, graph, 0) != CUDA_SUCCESS;
}

static int launch(struct gpu *g, CUgraphExec exec, int times)
{
	for (int i = 0; i < times; i++)
		if (cuGraphLaunch(exec, g->run) != CUDA_SUCCESS)
			return 1;
	return cuStreamSynchronize(g->run) != CUDA_SUCCESS;
}

int main(int argc, char **argv)
{
	struct gpu g;
	CUgraphExec exec, child_exec;
	if (gpu_open(&g) || capture(&g, 1, &exec) || launch(&g, exec, 3)) {
		fprintf(stderr, "nccl-graph-fork: the parent's graph failed\n");
		return 1;
	}
	if (argc > 1 && !strcmp(argv[1], "alone"))
		return 0;
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		struct gpu c;
		if (gpu_open(&c)) {
			fprintf(stderr, "nccl-graph-fork: no CUDA in the child\n");
			_exit(1);
		}
		CUresult stale = cuGraphLaunch(exec, c.run);
		printf("child: the parent's graph: %s\n", stale == CUDA_SUCCESS ? "launched" : "refused");
		if (capture(&c, 2, &child_exec) || launch(&c, child_exec, 2)) {
			fprintf(stderr, "nccl-graph-fork: the child's graph failed\n");
			_exit(1);
		}
		return 0;                      /* exit(): the child's exit handler runs */
	}
	int status;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return 1;
	if (launch(&g, exec, 1))
		return 1;
	printf("parent %d child %d\n", (int)getpid(), (int)pid);
	return 0;
}
