/* modules: the objects mapped into this process (dl_iterate_phdr), in the
 * form of the segment's module table, and which one holds an address.
 * Watchdog thread only. */
#ifndef NCCLWATCH_WATCHDOG_MODULES_H
#define NCCLWATCH_WATCHDOG_MODULES_H

#include <stdint.h>
#include "stacks.h"

struct nw_module_map {
	uint32_t count;
	uint64_t subs;                               /* objects unloaded so far (dlpi_subs) */
	struct nw_seg_module mod[NW_STACK_MODULES];  /* in dl_iterate_phdr order */
	uint64_t lo[NW_STACK_MODULES];               /* lowest address of its PT_LOAD segments */
	uint32_t by_lo[NW_STACK_MODULES];            /* indexes sorted by lo, for lookups */
};

/* Rebuild the map. Returns 1 if an object was unloaded since the last
 * refresh (addresses may have been reused), else 0. */
int nw_modules_refresh(struct nw_module_map *map);

/* The module holding `ip`: its index + 1, or 0 if none. */
uint32_t nw_modules_find(const struct nw_module_map *map, uint64_t ip);

#endif
