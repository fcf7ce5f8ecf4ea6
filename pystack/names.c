/* names: see names.h. The line comes from the code object's location
 * table (CPython 3.11+: Objects/locations.md), decoded as PyCode_Addr2Line
 * does, from a private copy. */
#include "names.h"
#include "scratch.h"
#include "cpython.h"
#include "memread.h"

#include <stdio.h>
#include <string.h>

#define LINETABLE_MAX (64u << 10)

int nw_py_read_str(uint64_t obj, char *buf, size_t size)
{
	const struct nw_py_layout *L = &nw_py.L;
	buf[0] = 0;
	uint64_t len = nw_mem_u64(obj + L->str_length);
	uint32_t state;
	if (!obj || nw_mem_read(obj + L->str_state, &state, sizeof state) != 0)
		return -1;
	unsigned kind = (state >> 2) & 7, compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
	if (!compact || kind == 0 || kind == 3 || kind > 4 || len > (1u << 20))
		return -1;
	uint64_t data = obj + (ascii ? L->str_ascii_size : L->str_compact_size);
	size_t o = 0;
	unsigned char chunk[256];
	for (uint64_t i = 0; i < len && o + 1 < size;) {
		uint64_t take = len - i;
		if (take > sizeof chunk / kind)
			take = sizeof chunk / kind;
		if (nw_mem_read(data + i * kind, chunk, take * kind) != 0)
			return -1;
		for (uint64_t k = 0; k < take && o + 1 < size; k++) {
			uint32_t c = kind == 1 ? chunk[k] : kind == 2 ? (uint32_t)(chunk[2 * k] | chunk[2 * k + 1] << 8)
			           : (uint32_t)(chunk[4 * k] | chunk[4 * k + 1] << 8 | chunk[4 * k + 2] << 16 |
			                        (uint32_t)chunk[4 * k + 3] << 24);
			if (c >= 0x20 && c < 0x7f) {
				buf[o++] = (char)c;
			} else {
				char esc[12];
				int w = snprintf(esc, sizeof esc, c < 0x100 ? "\\x%02x" : "\\u%04x", c);
				if (o + (size_t)w + 1 > size)
					break;
				memcpy(buf + o, esc, (size_t)w);
				o += (size_t)w;
			}
		}
		i += take;
	}
	buf[o] = 0;
	return 0;
}

static uint32_t varint(const uint8_t *p, uint32_t n, uint32_t *i)
{
	uint32_t b = *i < n ? p[(*i)++] : 0, v = b & 63, shift = 0;
	while ((b & 64) && *i < n && shift < 28) {
		b = p[(*i)++];
		shift += 6;
		v |= (b & 63) << shift;
	}
	return v;
}

static int32_t svarint(const uint8_t *p, uint32_t n, uint32_t *i)
{
	uint32_t u = varint(p, n, i);
	return u & 1 ? -(int32_t)(u >> 1) : (int32_t)(u >> 1);
}

/* The line of code unit `unit` (0 = first instruction). */
static int32_t line_of(const uint8_t *t, uint32_t n, int32_t first_line, int64_t unit)
{
	int32_t line = first_line;
	int64_t addr = 0;
	uint32_t i = 0;
	if (unit < 0)
		return first_line;
	while (i < n) {
		uint8_t b = t[i++];
		if (!(b & 0x80))
			break;                   /* not an entry start: a malformed table */
		uint32_t code = (b >> 3) & 15, len = (b & 7) + 1;
		int32_t next = line;
		int has_line = 1;
		if (code == 15) {
			has_line = 0;
		} else if (code == 14) {
			next = line + svarint(t, n, &i);
			varint(t, n, &i);
			varint(t, n, &i);
			varint(t, n, &i);
		} else if (code == 13) {
			next = line + svarint(t, n, &i);
		} else if (code >= 10) {
			next = line + (int32_t)(code - 10);
			i += 2;
		} else {
			i += 1;
		}
		if (has_line)
			line = next;
		if (unit < addr + len)
			return has_line ? line : 0;
		addr += len;
	}
	return 0;
}

#define NAME_CACHE 1024               /* a power of two */

struct cached {
	uint64_t code, instr;
	uint32_t gen;
	int ok;
	struct nw_py_name name;
};

/* Mapped on first use (scratch.h); without it names are read uncached
 * and lines are the code object's first. */
static struct {
	struct cached cache[NAME_CACHE];
	uint8_t linetable[LINETABLE_MAX];
} *scratch;
static uint32_t cache_gen = 1;

void nw_py_names_begin(void)
{
	if (++cache_gen == 0)
		cache_gen = 1;
}

static int name_ref(uint64_t code, uint64_t instr, struct nw_py_name *out);

int nw_py_name_ref(uint64_t code, uint64_t instr, struct nw_py_name *out)
{
	if (!nw_py_scratch((void **)&scratch, sizeof *scratch, "the Python name cache"))
		return name_ref(code, instr, out);
	uint64_t h = (code * 0x9e3779b97f4a7c15ull) ^ (instr * 0xc2b2ae3d27d4eb4full);
	struct cached *c = &scratch->cache[(h >> 40) & (NAME_CACHE - 1)];
	if (c->gen == cache_gen && c->code == code && c->instr == instr) {
		*out = c->name;
		return c->ok;
	}
	int ok = name_ref(code, instr, out);
	c->gen = cache_gen;
	c->code = code;
	c->instr = instr;
	c->ok = ok;
	c->name = *out;
	return ok;
}

static int name_ref(uint64_t code, uint64_t instr, struct nw_py_name *out)
{
	const struct nw_py_layout *L = &nw_py.L;
	memset(out, 0, sizeof *out);
	if (!code || nw_py.state != NW_PYRT_READY || nw_mem_u64(code + L->ob_type) != nw_py.code_type)
		return -1;
	uint64_t file = nw_mem_u64(code + L->co_filename);
	/* co_name, as CPython's own tracebacks (and its dumper) print it. */
	uint64_t name = nw_mem_u64(code + L->co_name);
	if (nw_py_read_str(file, out->file, sizeof out->file) != 0 ||
	    nw_py_read_str(name, out->function, sizeof out->function) != 0)
		return -1;
	int32_t first = 0;
	nw_mem_read(code + L->co_firstlineno, &first, sizeof first);
	out->line = first;
	uint64_t table = nw_mem_u64(code + L->co_linetable);
	uint64_t size = table ? nw_mem_u64(table + L->bytes_size) : 0;
	if (instr && size && size <= LINETABLE_MAX && scratch) {
		uint8_t *buf = scratch->linetable;
		if (nw_mem_read(table + L->bytes_sval, buf, size) == 0) {
			int64_t unit = ((int64_t)instr - (int64_t)(code + L->co_code_adaptive)) / 2;
			int32_t line = line_of(buf, (uint32_t)size, first, unit);
			if (line > 0)
				out->line = line;
		}
	}
	return 0;
}
