/* comm_id: the cross-rank identity of a communicator, computed by every
 * rank from what it already has, without talking (DESIGN.md "Data model").
 *
 * The hash: FNV-1a 64 over the bytes, then the splitmix64 finaliser (FNV
 * alone mixes the last bytes poorly; the finaliser spreads every input bit
 * over the whole word). A 0 result is mapped to 1: 0 means "no comm". */
#ifndef NCCLWATCH_INTERPOSE_COMM_ID_H
#define NCCLWATCH_INTERPOSE_COMM_ID_H

#include <stddef.h>
#include <stdint.h>
#include <nccl.h>

uint64_t nw_hash64(const void *bytes, size_t len);

/* InitRank / InitRankConfig: hash of the 128 id bytes. */
uint64_t nw_comm_id_unique(const ncclUniqueId *id);
/* InitRankScalable: hash of all nId ids, in order. */
uint64_t nw_comm_id_scalable(const ncclUniqueId *ids, int nid);
/* Split: hash("split", parent id, n-th split of the parent (0-based), color). */
uint64_t nw_comm_id_split(uint64_t parent, uint64_t nth, int32_t color);
/* Shrink: hash("shrink", parent id, n-th shrink, the excluded ranks as passed). */
uint64_t nw_comm_id_shrink(uint64_t parent, uint64_t nth, const int *excluded, int count);
/* InitAll: a fresh random id (getrandom), shared by the call's comms. */
uint64_t nw_comm_id_random(void);

#endif
