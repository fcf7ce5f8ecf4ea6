/* symbolize: the function an address belongs to, and the string table the
 * names go into. Watchdog thread only: it may open files and allocate. */
#ifndef NCCLWATCH_WATCHDOG_SYMBOLIZE_H
#define NCCLWATCH_WATCHDOG_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

struct nw_name;   /* a symbol name, stored once however many addresses share it */

/* A second lookup (the capture core's, capture/capture.h nw_cap_symbol):
 * 1 with the name and *offset = addr - the symbol's start, else 0. */
typedef int (*nw_symbol_fn)(void *ctx, uint64_t addr, char *name, size_t len, uint64_t *offset);

/* Start a capture: forget every cached lookup if objects were unloaded
 * (`unloaded`) or the cache grew past its bound. `second(ctx, ...)` (or
 * NULL) names what libunwind cannot: its lookup reads /proc/<pid>/maps,
 * empty once the main thread has exited. */
void nw_symbolize_begin(int unloaded, nw_symbol_fn second, void *ctx);
/* Look up `addr` (a return address minus 1, or an interrupted pc). 1 with
 * the name and the symbol's start address, or 0 if unknown. Cached; names
 * stay valid until the next nw_symbolize_begin. */
int nw_symbolize(uint64_t addr, struct nw_name **name, uint64_t *start);

/* A string table being rebuilt: offset 0 is "", each name appears once. */
struct nw_strtab {
	char *buf;
	uint32_t size;
	uint32_t used;
	uint32_t gen;     /* which rebuild a name's cached offset belongs to */
};
void nw_strtab_reset(struct nw_strtab *t);
/* The name's offset in the table, or 0 if the table is full. */
uint32_t nw_strtab_add(struct nw_strtab *t, struct nw_name *name);
/* A string that is not a symbol (a note): its offset, or 0 if full. */
uint32_t nw_strtab_add_str(struct nw_strtab *t, const char *s);

#endif
