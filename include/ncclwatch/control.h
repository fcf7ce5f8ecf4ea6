/* The job's control file, <job dir>/control (docs/FORMAT.md, "The job's
 * control file"): 4 KiB, mapped by every watchdog of the job on a host.
 * Whoever wants every process's stacks (a watchdog that found a stall,
 * `ncclwatch dump`) fills in who it is and then increments `request`;
 * each watchdog compares `request` with the last one it served at every
 * poll and answers with a dump. */
#ifndef NCCLWATCH_CONTROL_H
#define NCCLWATCH_CONTROL_H

#include <stdint.h>

#define NW_CONTROL_MAGIC "NWCTRL1"
#define NW_CONTROL_SIZE 4096

struct nw_control {
	char magic[8];                /* "NWCTRL1\0" */
	_Atomic uint64_t request;     /* requests raised so far */
	int64_t pid;                  /* the last raiser */
	int32_t rank;                 /* its global rank, -1 if none (the CLI) */
	uint32_t pad;
	uint64_t realtime_ns;         /* when it asked */
	char host[64];                /* its host */
};

#endif /* NCCLWATCH_CONTROL_H */
