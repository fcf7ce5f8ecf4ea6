/* thread: defines the per-thread state block (see thread.h). */
#include "thread.h"

#include <string.h>

__thread struct nw_thread nw_tls __attribute__((tls_model("initial-exec")));

void nw_thread_reset(void)
{
	int inside = nw_tls.inside;
	memset(&nw_tls, 0, sizeof(nw_tls));
	nw_tls.inside = inside;
}
