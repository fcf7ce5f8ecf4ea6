/* debugoff: the layout of CPython 3.13+ from the _Py_DebugOffsets table it
 * publishes at the start of _PyRuntime for debuggers (cookie "xdebugpy",
 * then the version, then offsets). */
#include "cpython.h"
#include "memread.h"

#include <stdio.h>
#include <string.h>

int nw_py_debug_offsets(void)
{
	char cookie[8];
	if (!nw_py.runtime || nw_mem_read(nw_py.runtime, cookie, sizeof cookie) != 0 ||
	    memcmp(cookie, "xdebugpy", 8) != 0) {
		snprintf(nw_py.note, sizeof nw_py.note,
		         "CPython %u.%u: no _Py_DebugOffsets at _PyRuntime: not supported",
		         nw_py.version >> 24, (nw_py.version >> 16) & 0xff);
		return -1;
	}
	snprintf(nw_py.note, sizeof nw_py.note,
	         "CPython %u.%u: _Py_DebugOffsets reader not built yet: no Python stacks",
	         nw_py.version >> 24, (nw_py.version >> 16) & 0xff);
	return -1;
}
