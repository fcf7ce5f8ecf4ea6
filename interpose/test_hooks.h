/* test_hooks: a delay that widens the race window of every ring update
 * after its lookup (nw_ring_hold), so a test can prove that a slot reused
 * meanwhile never receives the old op's update. Compiled only with
 * -DNW_TEST_HOOKS, into the test build of the library
 * ($(BUILD)/tests/hooks/libncclwatch.so, tests/interpose/part.mk); in the
 * shipped library the hook is nothing at all.
 *
 * NCCLWATCH_TEST_RING_DELAY_US=W[,A] (test build only): sleep W
 * microseconds in the watchdog thread, A (default 0) in any other thread,
 * after each successful lookup.
 *
 * NCCLWATCH_TEST_GRAPH_ALLOC_FAIL=1 (test build only): the allocation of
 * the CUDA graph tables fails (graphs.c), the path a full address space
 * takes. */
#ifndef NCCLWATCH_INTERPOSE_TEST_HOOKS_H
#define NCCLWATCH_INTERPOSE_TEST_HOOKS_H

#ifdef NW_TEST_HOOKS
#include <stdint.h>

void nw_test_ring_delay(void);
/* Set the delays (ns) instead of the variable (unit tests): -1 keeps one. */
void nw_test_ring_delay_set(int64_t watchdog_ns, int64_t other_ns);
#define NW_TEST_RING_DELAY() nw_test_ring_delay()
int nw_test_graph_alloc_fails(void);
#define NW_TEST_GRAPH_ALLOC_FAILS() nw_test_graph_alloc_fails()
#else
#define NW_TEST_RING_DELAY() ((void)0)
#define NW_TEST_GRAPH_ALLOC_FAILS() 0
#endif

#endif
