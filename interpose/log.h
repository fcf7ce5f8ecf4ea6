/* log: the library's only output, one "ncclwatch: ..." line on stderr.
 * Messages are rare (start failures, a missing real symbol, recording
 * stopped), so each call site says it at most once with NW_LOG_ONCE. */
#ifndef NCCLWATCH_INTERPOSE_LOG_H
#define NCCLWATCH_INTERPOSE_LOG_H

#include <stdatomic.h>

void nw_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define NW_LOG_ONCE(...) do { \
	static atomic_int nw_said_; \
	if (!atomic_exchange_explicit(&nw_said_, 1, memory_order_relaxed)) nw_log(__VA_ARGS__); \
} while (0)

#endif
