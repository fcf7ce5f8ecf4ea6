/* symbols: the function an address of the target belongs to, from the ELF
 * symbol table (.symtab, else .dynsym) of the file mapped there, with
 * sizes: an address past the end of the nearest function below (a static
 * function of a library without .symtab, like Debian's libc) is unknown,
 * not that function. Files are read with their program headers mapping
 * file offsets to addresses; each file's functions are loaded once per
 * target (at its first address), sorted, and searched by bisection. */
#include "capture_int.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct func {
	uint64_t start, size;
	uint32_t name;              /* offset in the file's names */
};

struct elf_syms {
	char path[PATH_MAX];
	int loaded;
	struct func *f;
	uint32_t n;
	char *names;
	Elf64_Phdr *ph;             /* PT_LOAD headers */
	uint32_t nph;
};

struct mapping {
	uint64_t lo, hi, off;
	uint32_t file;              /* index into files */
};

struct nw_cap_syms {
	struct mapping *maps;
	uint32_t nmaps;
	struct elf_syms *files;
	uint32_t nfiles;
};

static int by_start(const void *a, const void *b)
{
	const struct func *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Load the functions of one ELF file (best effort: none on any problem). */
static void load_file(struct elf_syms *e)
{
	int fd = open(e->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	struct stat st;
	if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		close(fd);
		return;
	}
	size_t size = (size_t)st.st_size;
	const unsigned char *img = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (img == MAP_FAILED)
		return;
	const Elf64_Ehdr *eh = (const void *)img;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_phoff > size || (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > size - eh->e_phoff ||
	    eh->e_shoff > size || (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > size - eh->e_shoff)
		goto out;
	const Elf64_Phdr *ph = (const void *)(img + eh->e_phoff);
	e->ph = calloc(eh->e_phnum ? eh->e_phnum : 1, sizeof(*e->ph));
	for (int i = 0; e->ph && i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD)
			e->ph[e->nph++] = ph[i];
	const Elf64_Shdr *sh = (const void *)(img + eh->e_shoff);
	const Elf64_Shdr *tab = NULL;
	for (int want = SHT_SYMTAB; !tab && want; want = want == SHT_SYMTAB ? SHT_DYNSYM : 0)
		for (int i = 0; i < eh->e_shnum; i++)
			if (sh[i].sh_type == (uint32_t)want && sh[i].sh_entsize == sizeof(Elf64_Sym) &&
			    sh[i].sh_link < eh->e_shnum) {
				tab = &sh[i];
				break;
			}
	if (!tab || tab->sh_offset > size || tab->sh_size > size - tab->sh_offset)
		goto out;
	const Elf64_Shdr *strs = &sh[tab->sh_link];
	if (strs->sh_offset > size || strs->sh_size > size - strs->sh_offset || !strs->sh_size)
		goto out;
	const Elf64_Sym *sym = (const void *)(img + tab->sh_offset);
	size_t nsym = tab->sh_size / sizeof(Elf64_Sym);
	e->f = calloc(nsym ? nsym : 1, sizeof(*e->f));
	e->names = malloc(strs->sh_size + 1);
	if (!e->f || !e->names)
		goto out;
	memcpy(e->names, img + strs->sh_offset, strs->sh_size);
	e->names[strs->sh_size] = 0;
	for (size_t i = 0; i < nsym; i++) {
		int type = ELF64_ST_TYPE(sym[i].st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym[i].st_shndx == SHN_UNDEF ||
		    !sym[i].st_value || sym[i].st_name >= strs->sh_size)
			continue;
		e->f[e->n++] = (struct func){ sym[i].st_value, sym[i].st_size, sym[i].st_name };
	}
	qsort(e->f, e->n, sizeof(*e->f), by_start);
out:
	munmap((void *)img, size);
}

static void load_maps(struct nw_cap_target *t, struct nw_cap_syms *s)
{
	char path[64], line[PATH_MAX + 128];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)nw_cap_via(t));
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	uint32_t cap = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;
		char perms[8], file[PATH_MAX];
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095[^\n]", &lo, &hi, perms, &off, file) != 5 ||
		    !strchr(perms, 'x') || file[0] != '/')
			continue;
		uint32_t k = 0;
		while (k < s->nfiles && strcmp(s->files[k].path, file))
			k++;
		if (k == s->nfiles) {
			struct elf_syms *nf = realloc(s->files, (s->nfiles + 1) * sizeof(*nf));
			if (!nf)
				break;
			s->files = nf;
			memset(&nf[k], 0, sizeof(nf[k]));
			snprintf(nf[k].path, sizeof(nf[k].path), "%s", file);
			s->nfiles++;
		}
		if (s->nmaps == cap) {
			cap = cap ? cap * 2 : 64;
			struct mapping *nm = realloc(s->maps, cap * sizeof(*nm));
			if (!nm)
				break;
			s->maps = nm;
		}
		s->maps[s->nmaps++] = (struct mapping){ lo, hi, off, k };
	}
	fclose(f);
}

static struct nw_cap_syms *syms_of(struct nw_cap_target *t)
{
	if (!t->syms) {
		t->syms = calloc(1, sizeof(*t->syms));
		if (t->syms)
			load_maps(t, t->syms);
	}
	return t->syms;
}

void nw_cap_forget_maps(struct nw_cap_target *t)
{
	nw_cap_syms_free(t->syms);
	t->syms = NULL;
}

void nw_cap_syms_free(struct nw_cap_syms *s)
{
	if (!s)
		return;
	for (uint32_t k = 0; k < s->nfiles; k++) {
		free(s->files[k].f);
		free(s->files[k].names);
		free(s->files[k].ph);
	}
	free(s->files);
	free(s->maps);
	free(s);
}

int nw_cap_symbol(struct nw_cap_target *t, uint64_t addr, char *name, size_t len, uint64_t *offset)
{
	struct nw_cap_syms *s = syms_of(t);
	for (uint32_t i = 0; s && i < s->nmaps; i++) {
		const struct mapping *m = &s->maps[i];
		if (addr < m->lo || addr >= m->hi)
			continue;
		struct elf_syms *e = &s->files[m->file];
		if (!e->loaded) {
			e->loaded = 1;
			load_file(e);
		}
		uint64_t foff = addr - m->lo + m->off, vaddr = 0;
		int found = 0;
		for (uint32_t p = 0; p < e->nph && !found; p++)
			if (foff >= e->ph[p].p_offset && foff - e->ph[p].p_offset < e->ph[p].p_filesz) {
				vaddr = e->ph[p].p_vaddr + (foff - e->ph[p].p_offset);
				found = 1;
			}
		if (!found || !e->n)
			return 0;
		uint32_t lo = 0, hi = e->n;
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;
			if (e->f[mid].start <= vaddr)
				lo = mid + 1;
			else
				hi = mid;
		}
		/* Aliases share a start: of those that cover the address, the
		 * name with the fewest leading underscores (nanosleep, not
		 * __nanosleep). */
		const struct func *best = NULL;
		size_t best_us = SIZE_MAX;
		for (uint32_t k = lo; k-- > 0 && e->f[k].start == e->f[lo - 1].start;) {
			const struct func *fn = &e->f[k];
			const char *nm = e->names + fn->name;
			size_t us = strspn(nm, "_");
			if (vaddr - fn->start < fn->size && us < best_us) {
				best = fn;
				best_us = us;
			}
		}
		if (!best)
			return 0;
		snprintf(name, len, "%s", e->names + best->name);
		*offset = vaddr - best->start;
		return 1;
	}
	return 0;
}
