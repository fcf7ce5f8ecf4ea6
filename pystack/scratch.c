/* scratch: see scratch.h. */
#include "scratch.h"
#include "../interpose/log.h"

#include <stdlib.h>
#include <sys/mman.h>

/* The test build (-DNW_TEST_HOOKS) fails every mapping when
 * NCCLWATCH_TEST_SCRATCH_FAIL=1: the path a full address space takes. */
static int fail_for_test(void)
{
#ifdef NW_TEST_HOOKS
	const char *v = getenv("NCCLWATCH_TEST_SCRATCH_FAIL");
	return v && v[0] == '1';
#else
	return 0;
#endif
}

void *nw_py_scratch(void **slot, size_t size, const char *what)
{
	if (*slot)
		return *slot;
	void *p = fail_for_test() ? MAP_FAILED
	                          : mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		NW_LOG_ONCE("could not map %zu bytes for %s: captures go on without Python stacks", size, what);
		return NULL;
	}
	*slot = p;
	return p;
}
