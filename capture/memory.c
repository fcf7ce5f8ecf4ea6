/* memory: the target's memory through process_vm_readv, which returns an
 * error for an address that is not mapped instead of faulting (in our own
 * process too). The unwinder reads 8 bytes at a time, mostly unwind tables
 * in the text: a small direct-mapped page cache, forgotten at every thread. */
#include "capture_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

int nw_cap_mem_init(struct nw_cap_mem *m, pid_t pid)
{
	memset(m, 0, sizeof(*m));
	m->pid = pid;
	m->copy = malloc(NW_CAP_STACK_COPY);
	m->page = malloc((size_t)NW_CAP_CACHE_PAGES * NW_CAP_PAGE);
	if (!m->copy || !m->page) {
		nw_cap_mem_free(m);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

void nw_cap_mem_free(struct nw_cap_mem *m)
{
	free(m->copy);
	free(m->page);
	m->copy = NULL;
	m->page = NULL;
}

void nw_cap_mem_reset(struct nw_cap_mem *m)
{
	memset(m->page_ok, 0, sizeof(m->page_ok));
	m->copy_len = 0;
	m->copy_base = 0;
}

size_t nw_cap_mem_copy_stack(struct nw_cap_mem *m, uint64_t sp)
{
	/* One remote iovec per page: a partial read stops at the first
	 * unmapped page (the top of the stack mapping). */
	enum { NPAGES = NW_CAP_STACK_COPY / NW_CAP_PAGE + 1 };
	struct iovec local, remote[NPAGES];
	uint64_t at = sp;
	size_t total = 0;
	int n = 0;
	while (total < NW_CAP_STACK_COPY && n < NPAGES) {
		uint64_t end = (at | (NW_CAP_PAGE - 1)) + 1;
		size_t len = end - at;
		if (len > NW_CAP_STACK_COPY - total)
			len = NW_CAP_STACK_COPY - total;
		remote[n].iov_base = (void *)(uintptr_t)at;
		remote[n].iov_len = len;
		n++;
		total += len;
		at += len;
	}
	local.iov_base = m->copy;
	local.iov_len = total;
	ssize_t got = process_vm_readv(m->pid, &local, 1, remote, (unsigned long)n, 0);
	m->copy_base = sp;
	m->copy_len = got > 0 ? (size_t)got : 0;
	return m->copy_len;
}

static int read_page(struct nw_cap_mem *m, uint64_t page, const uint8_t **out)
{
	uint32_t slot = (uint32_t)((page / NW_CAP_PAGE) % NW_CAP_CACHE_PAGES);
	if (m->page_ok[slot] && m->page_addr[slot] == page) {
		*out = m->page[slot];
		return m->page_ok[slot] == 1 ? 0 : -1;
	}
	struct iovec local = { m->page[slot], NW_CAP_PAGE };
	struct iovec remote = { (void *)(uintptr_t)page, NW_CAP_PAGE };
	ssize_t got = process_vm_readv(m->pid, &local, 1, &remote, 1, 0);
	m->page_addr[slot] = page;
	m->page_ok[slot] = got == (ssize_t)NW_CAP_PAGE ? 1 : 2;
	*out = m->page[slot];
	return m->page_ok[slot] == 1 ? 0 : -1;
}

int nw_cap_mem_read(struct nw_cap_mem *m, uint64_t addr, void *buf, size_t len)
{
	if (addr >= m->copy_base && addr - m->copy_base <= m->copy_len &&
	    len <= m->copy_len - (addr - m->copy_base)) {
		memcpy(buf, m->copy + (addr - m->copy_base), len);
		return 0;
	}
	uint8_t *out = buf;
	while (len) {
		uint64_t page = addr & ~(uint64_t)(NW_CAP_PAGE - 1);
		const uint8_t *p;
		if (read_page(m, page, &p) != 0)
			return -1;
		size_t off = (size_t)(addr - page), n = NW_CAP_PAGE - off;
		if (n > len)
			n = len;
		memcpy(out, p + off, n);
		out += n;
		addr += n;
		len -= n;
	}
	return 0;
}
