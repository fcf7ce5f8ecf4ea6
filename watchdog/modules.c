/* modules: dl_iterate_phdr into the segment's module table. The main
 * program has no name there: its path comes from /proc/thread-self/exe
 * (/proc/self/exe is the main thread's: gone once it has exited). A path
 * longer than the field keeps its tail (the file name) after "...". */
#include "modules.h"

#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int add_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct nw_module_map *map = arg;
	(void)size;
	map->subs = info->dlpi_subs;
	if (map->count >= NW_STACK_MODULES)
		return 0;
	uint64_t lo = UINT64_MAX, end = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		if (ph->p_vaddr < lo)
			lo = ph->p_vaddr;
		if (ph->p_vaddr + ph->p_memsz > end)
			end = ph->p_vaddr + ph->p_memsz;
	}
	if (end == 0)
		return 0;
	uint32_t k = map->count++;
	struct nw_seg_module *m = &map->mod[k];
	memset(m, 0, sizeof(*m));
	m->base = info->dlpi_addr;
	m->size = end;
	map->lo[k] = info->dlpi_addr + lo;
	const char *name = info->dlpi_name;
	if (name && name[0])
		nw_stack_module_set_path(m, name);
	else if (k == 0) {
		/* The first object is the main program, which has no name here. */
		char exe[4096];
		ssize_t n = readlink("/proc/thread-self/exe", exe, sizeof(exe) - 1);
		if (n <= 0)                            /* a kernel before 3.17 */
			n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n > 0) {
			exe[n] = 0;
			nw_stack_module_set_path(m, exe);
		}
	}
	return 0;
}

static const struct nw_module_map *sort_map;

static int by_lo(const void *a, const void *b)
{
	uint64_t x = sort_map->lo[*(const uint32_t *)a], y = sort_map->lo[*(const uint32_t *)b];
	return x < y ? -1 : x > y;
}

int nw_modules_refresh(struct nw_module_map *map)
{
	uint64_t before = map->subs;
	map->count = 0;
	dl_iterate_phdr(add_module, map);
	for (uint32_t i = 0; i < map->count; i++)
		map->by_lo[i] = i;
	sort_map = map;
	qsort(map->by_lo, map->count, sizeof(map->by_lo[0]), by_lo);
	return map->subs != before;
}

uint32_t nw_modules_find(const struct nw_module_map *map, uint64_t ip)
{
	/* The last module starting at or below ip, if ip is inside it. */
	uint32_t lo = 0, hi = map->count;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (map->lo[map->by_lo[mid]] <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return 0;
	uint32_t k = map->by_lo[lo - 1];
	const struct nw_seg_module *m = &map->mod[k];
	return ip < m->base + m->size ? k + 1 : 0;
}
