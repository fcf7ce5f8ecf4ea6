/* symbolize: dladdr first (the dynamic symbol table, in memory, no I/O);
 * if it knows no symbol there (static functions, hidden symbols), the ELF
 * symbol tables of the file through libunwind's local accessor
 * get_proc_name: the same lookup libunwind 1.7's unw_get_proc_name_by_ip
 * makes, which 1.6.2 lacks. That one reads /proc/self/maps and maps the
 * file, so every answer, found or not, is cached by address. Where neither
 * knows (static functions of a library without .symtab, like Debian's
 * libc), the frame keeps only its module and offset. File and line are not
 * looked up (no DWARF line tables). libunwind through its table
 * (capture/unw_table.h): without it, dladdr alone. libunwind's lookup reads
 * /proc/<getpid()>/maps, which is empty once the main thread has exited
 * (pthread_exit): then a second lookup given by the caller (the capture
 * core's ELF reader, capture/symbols.c, which reaches our process through
 * the calling thread) names the address. */
#include "symbolize.h"
#include "../capture/unw_table.h"

#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

/* uthash must never exit the process: on a failed allocation the entry is
 * simply not added. */
#define HASH_NONFATAL_OOM 1
#define uthash_nonfatal_oom(obj) (hash_oom = 1)
static int hash_oom;
#include <uthash.h>

#define CACHE_MAX (1u << 16)     /* addresses remembered before starting over */
#define NAME_MAX_LEN 512

struct nw_name {
	UT_hash_handle hh;
	uint32_t gen;                /* nw_strtab.gen of `off` */
	uint32_t off;
	char s[];
};

struct sym_entry {
	UT_hash_handle hh;
	uint64_t addr;
	uint64_t start;
	struct nw_name *name;        /* NULL: no symbol there */
};

static struct nw_name *names;
static struct sym_entry *cache;
static nw_symbol_fn second;
static void *second_ctx;

static void flush(void)
{
	struct sym_entry *e, *et;
	HASH_ITER(hh, cache, e, et) {
		HASH_DEL(cache, e);
		free(e);
	}
	struct nw_name *n, *nt;
	HASH_ITER(hh, names, n, nt) {
		HASH_DEL(names, n);
		free(n);
	}
}

void nw_symbolize_begin(int unloaded, nw_symbol_fn second_lookup, void *ctx)
{
	second = second_lookup;
	second_ctx = ctx;
	/* Between captures only, so no name handed out is freed mid-capture. */
	if (unloaded || HASH_COUNT(cache) >= CACHE_MAX)
		flush();
}

static struct nw_name *intern(const char *s)
{
	struct nw_name *n;
	size_t len = strlen(s);
	HASH_FIND(hh, names, s, len, n);
	if (n)
		return n;
	n = malloc(sizeof(*n) + len + 1);
	if (!n)
		return NULL;
	n->gen = 0;
	n->off = 0;
	memcpy(n->s, s, len + 1);
	hash_oom = 0;
	HASH_ADD_KEYPTR(hh, names, n->s, len, n);
	if (hash_oom) {
		free(n);
		return NULL;
	}
	return n;
}

static struct nw_name *lookup(uint64_t addr, uint64_t *start)
{
	Dl_info info;
	const ElfW(Sym) *sym = NULL;
	if (dladdr1((void *)(uintptr_t)addr, &info, (void **)&sym, RTLD_DL_SYMENT) &&
	    info.dli_sname && info.dli_saddr) {
		*start = (uint64_t)(uintptr_t)info.dli_saddr;
		return intern(info.dli_sname);
	}
	if (!nw_unw_ok || !nw_unw.local_get_accessors || !nw_unw.local_addr_space)
		return NULL;
	unw_addr_space_t local = *nw_unw.local_addr_space;
	unw_accessors_t *acc = nw_unw.local_get_accessors(local);
	if (!acc || !acc->get_proc_name)
		return NULL;
	char buf[NAME_MAX_LEN];
	unw_word_t off = 0;
	int r = acc->get_proc_name(local, (unw_word_t)addr, buf, sizeof(buf), &off, NULL);
	if (r != 0 && r != -UNW_ENOMEM && second) {
		/* No map of our process for libunwind (main has exited). The
		 * core's lookup knows symbol sizes: no check below needed. */
		uint64_t o;
		if (!second(second_ctx, addr, buf, sizeof(buf), &o) || o > addr)
			return NULL;
		*start = addr - o;
		return intern(buf);
	}
	/* -UNW_ENOMEM: the name did not fit; it is truncated but usable. */
	if ((r != 0 && r != -UNW_ENOMEM) || !buf[0] || off > addr)
		return NULL;
	buf[sizeof(buf) - 1] = 0;
	/* libunwind takes the nearest function symbol below, whatever its
	 * size: in a library without .symtab that is an exported function the
	 * address is past the end of (dladdr just said no symbol covers it). */
	uint64_t s = addr - off;
	if (dladdr1((void *)(uintptr_t)s, &info, (void **)&sym, RTLD_DL_SYMENT) && info.dli_sname &&
	    (uint64_t)(uintptr_t)info.dli_saddr == s && sym && sym->st_size && addr >= s + sym->st_size)
		return NULL;
	*start = s;
	return intern(buf);
}

int nw_symbolize(uint64_t addr, struct nw_name **name, uint64_t *start)
{
	struct sym_entry *e;
	HASH_FIND(hh, cache, &addr, sizeof(addr), e);
	if (e) {
		*name = e->name;
		*start = e->start;
		return e->name != NULL;
	}
	uint64_t s = 0;
	struct nw_name *n = lookup(addr, &s);
	e = malloc(sizeof(*e));
	if (e) {
		e->addr = addr;
		e->start = s;
		e->name = n;
		hash_oom = 0;
		HASH_ADD(hh, cache, addr, sizeof(e->addr), e);
		if (hash_oom)
			free(e);
	}
	*name = n;
	*start = s;
	return n != NULL;
}

void nw_strtab_reset(struct nw_strtab *t)
{
	t->gen++;
	if (t->gen == 0)       /* 0 marks a name never added */
		t->gen = 1;
	t->used = 1;
	if (t->size)
		t->buf[0] = 0;
}

uint32_t nw_strtab_add(struct nw_strtab *t, struct nw_name *n)
{
	if (n->gen == t->gen)
		return n->off;
	size_t len = strlen(n->s) + 1;
	if (len > t->size - t->used)
		return 0;
	memcpy(t->buf + t->used, n->s, len);
	n->gen = t->gen;
	n->off = t->used;
	t->used += (uint32_t)len;
	return n->off;
}

uint32_t nw_strtab_add_str(struct nw_strtab *t, const char *s)
{
	size_t len = strlen(s) + 1;
	if (len > t->size - t->used)
		return 0;
	memcpy(t->buf + t->used, s, len);
	uint32_t off = t->used;
	t->used += (uint32_t)len;
	return off;
}
