/* libc_dl: see libc_dl.h. A by-hand ELF symbol lookup in the objects the
 * dynamic loader has already mapped. */
#include "libc_dl.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>

nw_dlsym_fn nw_libc_dlsym;
nw_dlvsym_fn nw_libc_dlvsym;
nw_dlopen_fn nw_libc_dlopen_fn;

/* Plain loops on purpose: no call to (possibly intercepted) str* functions. */
__attribute__((optimize("no-tree-loop-distribute-patterns")))
NW_NO_SANITIZE static int same_string(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

__attribute__((optimize("no-tree-loop-distribute-patterns")))
NW_NO_SANITIZE static int basename_starts_with(const char *path, const char *prefix)
{
	const char *base = path;
	for (const char *p = path; *p; p++)
		if (*p == '/')
			base = p + 1;
	while (*prefix && *prefix == *base) {
		prefix++;
		base++;
	}
	return *prefix == 0;
}

NW_NO_SANITIZE static uint32_t gnu_hash(const char *s)
{
	uint32_t h = 5381;
	for (; *s; s++)
		h = h * 33 + (uint8_t)*s;
	return h;
}

/* Dynamic entries are relocated in place by glibc on most targets; where
 * they are not, they are still relative to the load address. */
NW_NO_SANITIZE static uintptr_t dyn_ptr(const struct link_map *l, uintptr_t p)
{
	return p < (uintptr_t)l->l_addr ? p + (uintptr_t)l->l_addr : p;
}

/* The default-version definition of `name` in object `l`, or NULL. */
NW_NO_SANITIZE static void *lookup_default(const struct link_map *l, const char *name)
{
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	const uint32_t *gnu = NULL;
	const ElfW(Half) *versym = NULL;
	for (const ElfW(Dyn) *d = l->l_ld; d && d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_SYMTAB: symtab = (const void *)dyn_ptr(l, d->d_un.d_ptr); break;
		case DT_STRTAB: strtab = (const void *)dyn_ptr(l, d->d_un.d_ptr); break;
		case DT_GNU_HASH: gnu = (const void *)dyn_ptr(l, d->d_un.d_ptr); break;
		case DT_VERSYM: versym = (const void *)dyn_ptr(l, d->d_un.d_ptr); break;
		}
	}
	if (!symtab || !strtab || !gnu)
		return NULL;
	uint32_t nbuckets = gnu[0], symoffset = gnu[1], bloom_words = gnu[2];
	if (nbuckets == 0)
		return NULL;
	const ElfW(Addr) *bloom = (const void *)&gnu[4];
	const uint32_t *buckets = (const void *)&bloom[bloom_words];
	const uint32_t *chain = &buckets[nbuckets];
	uint32_t h = gnu_hash(name);
	uint32_t i = buckets[h % nbuckets];
	if (i < symoffset)
		return NULL;
	for (;; i++) {
		uint32_t ch = chain[i - symoffset];
		if ((ch | 1) == (h | 1)) {
			const ElfW(Sym) *s = &symtab[i];
			if (s->st_shndx != SHN_UNDEF && ELF64_ST_TYPE(s->st_info) == STT_FUNC
			    && (!versym || !(versym[i] & 0x8000))
			    && same_string(strtab + s->st_name, name))
				return (void *)(l->l_addr + s->st_value);
		}
		if (ch & 1)
			return NULL;
	}
}

NW_NO_SANITIZE void nw_libc_dl_init(void)
{
	if (__atomic_load_n(&nw_libc_dlsym, __ATOMIC_ACQUIRE) && nw_libc_dlvsym)
		return;
	void *found_dlsym = NULL, *found_dlvsym = NULL, *found_dlopen = NULL;
	for (const struct link_map *l = _r_debug.r_map; l; l = l->l_next) {
		if (!l->l_name || !(basename_starts_with(l->l_name, "libc.so")
		                    || basename_starts_with(l->l_name, "libdl.so")))
			continue;
		if (!found_dlsym)
			found_dlsym = lookup_default(l, "dlsym");
		if (!found_dlvsym)
			found_dlvsym = lookup_default(l, "dlvsym");
		if (!found_dlopen)
			found_dlopen = lookup_default(l, "dlopen");
	}
	/* Racing threads find the same values; stores are idempotent. */
	__atomic_store_n((void **)&nw_libc_dlopen_fn, found_dlopen, __ATOMIC_RELEASE);
	__atomic_store_n((void **)&nw_libc_dlvsym, found_dlvsym, __ATOMIC_RELEASE);
	__atomic_store_n((void **)&nw_libc_dlsym, found_dlsym, __ATOMIC_RELEASE);
}

void *nw_libc_dlopen(const char *file, int mode)
{
	nw_libc_dl_init();
	nw_dlopen_fn f = __atomic_load_n(&nw_libc_dlopen_fn, __ATOMIC_ACQUIRE);
	return f ? f(file, mode) : dlopen(file, mode);
}
