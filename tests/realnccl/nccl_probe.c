/* nccl-probe: the smallest NCCL program, linked against the soname
 * libnccl.so.2 only, so that LD_LIBRARY_PATH decides whether it talks to
 * the real NCCL or to the simulation. It prints, one fact per line:
 *
 *   version <ncclGetVersion>
 *   uniqueid <result code> <name>
 *   init <result code> <name>        ncclCommInitRank(nranks=1, rank=0)
 *   destroy <result code> <name>     only after a successful init
 *
 * and exits 0 once every call returned (whatever it returned): the test
 * compares the facts with what the real library does on this machine.
 */
#include <nccl.h>
#include <stdio.h>

static void print_result(const char *what, ncclResult_t res)
{
	printf("%s %d %s\n", what, (int)res, ncclGetErrorString(res));
	fflush(stdout);
}

int main(void)
{
	int version = 0;
	ncclResult_t res = ncclGetVersion(&version);
	if (res != ncclSuccess) {
		print_result("getversion", res);
		return 1;
	}
	printf("version %d\n", version);

	ncclUniqueId id;
	res = ncclGetUniqueId(&id);
	print_result("uniqueid", res);
	if (res != ncclSuccess)
		return 1;

	ncclComm_t comm = NULL;
	res = ncclCommInitRank(&comm, 1, id, 0);
	print_result("init", res);
	if (res == ncclSuccess)
		print_result("destroy", ncclCommDestroy(comm));
	return 0;
}
