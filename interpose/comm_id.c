/* comm_id: see comm_id.h. */
#include "comm_id.h"

#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

static uint64_t fnv1a_update(uint64_t h, const void *bytes, size_t len)
{
	const uint8_t *p = bytes;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static uint64_t splitmix_finish(uint64_t h)
{
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebull;
	h ^= h >> 31;
	return h ? h : 1;
}

#define NW_FNV_OFFSET 0xcbf29ce484222325ull

uint64_t nw_hash64(const void *bytes, size_t len)
{
	return splitmix_finish(fnv1a_update(NW_FNV_OFFSET, bytes, len));
}

uint64_t nw_comm_id_unique(const ncclUniqueId *id)
{
	return nw_hash64(id->internal, sizeof(id->internal));
}

uint64_t nw_comm_id_scalable(const ncclUniqueId *ids, int nid)
{
	uint64_t h = NW_FNV_OFFSET;
	for (int i = 0; i < nid; i++)
		h = fnv1a_update(h, ids[i].internal, sizeof(ids[i].internal));
	return splitmix_finish(h);
}

uint64_t nw_comm_id_split(uint64_t parent, uint64_t nth, int32_t color)
{
	uint64_t h = fnv1a_update(NW_FNV_OFFSET, "split", 5);
	h = fnv1a_update(h, &parent, sizeof(parent));
	h = fnv1a_update(h, &nth, sizeof(nth));
	h = fnv1a_update(h, &color, sizeof(color));
	return splitmix_finish(h);
}

uint64_t nw_comm_id_shrink(uint64_t parent, uint64_t nth, const int *excluded, int count)
{
	uint64_t h = fnv1a_update(NW_FNV_OFFSET, "shrink", 6);
	h = fnv1a_update(h, &parent, sizeof(parent));
	h = fnv1a_update(h, &nth, sizeof(nth));
	for (int i = 0; excluded && i < count; i++) {
		int32_t r = excluded[i];
		h = fnv1a_update(h, &r, sizeof(r));
	}
	return splitmix_finish(h);
}

uint64_t nw_comm_id_random(void)
{
	uint64_t v = 0;
	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t)sizeof(v)) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t mix[3] = { (uint64_t)ts.tv_nsec, (uint64_t)ts.tv_sec, (uint64_t)getpid() };
		return nw_hash64(mix, sizeof(mix));
	}
	return v ? v : 1;
}
