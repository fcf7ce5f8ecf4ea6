/* The name of a process's Prometheus file (README.md, "Prometheus"):
 * <dir>/ncclwatch_<host>_<pid>.prom, written through the temporary
 * .ncclwatch_<host>_<pid>.prom.tmp. The watchdog writes it
 * (watchdog/prom.c) and `ncclwatch gc --prom-dir` finds a gone process's
 * file by it (report/cli/cmd_gc.c), so both take the host part from here. */
#ifndef NCCLWATCH_PROM_FILE_H
#define NCCLWATCH_PROM_FILE_H

#include <stddef.h>

/* The host as it appears in the file name: letters, digits, '.' and '-'
 * as they are, anything else '_'; cut to fit `len` with its NUL. */
static inline void nw_prom_file_host(const char *host, char *out, size_t len)
{
	size_t i;
	for (i = 0; i + 1 < len && host[i]; i++) {
		char c = host[i];
		out[i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		         c == '.' || c == '-' ? c : '_';
	}
	out[i] = '\0';
}

#endif /* NCCLWATCH_PROM_FILE_H */
