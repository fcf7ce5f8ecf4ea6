/* log: writes one "ncclwatch: <message>" line to stderr with a single
 * write(2), so lines of concurrent processes do not interleave. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

void nw_log(const char *fmt, ...)
{
	char line[512];
	int n = snprintf(line, sizeof(line) - 1, "ncclwatch: ");
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(line + n, sizeof(line) - 1 - (size_t)n, fmt, ap);
	va_end(ap);
	if (m < 0)
		m = 0;
	n += m;
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	ssize_t w = write(STDERR_FILENO, line, (size_t)n);
	(void)w;
}
