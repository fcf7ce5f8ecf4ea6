/* ring_race: what test_ring_race.c asks of ring_race_reader.c. */
#ifndef NCCLWATCH_TESTS_RING_RACE_H
#define NCCLWATCH_TESTS_RING_RACE_H

#include <stdint.h>
#include <ncclwatch/segment.h>

/* One snapshot of the segment file at `path` by the CLI's reader: check()
 * on every valid record; the number of them, or -1 (said on stderr). */
long ring_race_snapshot(const char *path, void (*check)(const struct nw_seg_op *op, uint64_t ticket));

#endif
