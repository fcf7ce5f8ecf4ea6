/* unwind: libunwind's remote interface over our accessors. Unwind tables
 * (.eh_frame_hdr, .eh_frame) are found by libunwind-ptrace's
 * _UPT_find_proc_info, which reads /proc/PID/maps and maps the ELF file;
 * the table search then reads target memory through our access_mem, which
 * is why that accessor cannot trust its `arg` (it gets libunwind-ptrace's
 * own) and takes the target from `cur` instead. Registers the source did
 * not give are refused (-UNW_EBADREG): libunwind then stops at the first
 * frame that needs one, rather than guessing. */
#include "capture_int.h"

#include <libunwind-ptrace.h>
#include <string.h>

static __thread struct nw_cap_target *cur;

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi, int need, void *arg)
{
	(void)arg;
	if (!cur->upt)
		return -UNW_ENOINFO;
	return _UPT_find_proc_info(as, ip, pi, need, cur->upt);
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
	(void)arg;
	_UPT_put_unwind_info(as, pi, cur->upt);
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *addr, void *arg)
{
	(void)as;
	(void)addr;
	(void)arg;
	return -UNW_ENOINFO;    /* no JIT-registered unwind info */
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write, void *arg)
{
	(void)as;
	(void)arg;
	if (write)
		return -UNW_EINVAL;  /* never write into the target */
	return nw_cap_mem_read(&cur->mem, addr, val, sizeof(*val)) == 0 ? 0 : -UNW_EINVAL;
}

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val, int write, void *arg)
{
	(void)as;
	(void)arg;
	if (write || reg < 0 || reg >= NW_CAP_NREGS || !(cur->regs.known & (1u << reg)))
		return -UNW_EBADREG;
	*val = cur->regs.r[reg];
	return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write, void *arg)
{
	(void)as;
	(void)reg;
	(void)val;
	(void)write;
	(void)arg;
	return -UNW_EBADREG;
}

static int resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
	(void)as;
	(void)c;
	(void)arg;
	return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len, unw_word_t *off,
                         void *arg)
{
	(void)arg;
	if (!cur->upt)
		return -UNW_ENOINFO;
	return _UPT_get_proc_name(as, addr, buf, len, off, cur->upt);
}

static unw_accessors_t accessors = {
	.find_proc_info = find_proc_info,
	.put_unwind_info = put_unwind_info,
	.get_dyn_info_list_addr = get_dyn_info_list_addr,
	.access_mem = access_mem,
	.access_reg = access_reg,
	.access_fpreg = access_fpreg,
	.resume = resume,
	.get_proc_name = get_proc_name,
};

int nw_cap_unwind_init(struct nw_cap_target *t)
{
	t->upt = _UPT_create(t->pid);
	if (!t->upt)
		return -1;
	t->as = unw_create_addr_space(&accessors, 0);
	if (!t->as) {
		_UPT_destroy(t->upt);
		t->upt = NULL;
		return -1;
	}
	/* Per target: one process's addresses mean nothing in another's. */
	unw_set_caching_policy(t->as, UNW_CACHE_GLOBAL);
	return 0;
}

void nw_cap_flush(struct nw_cap_target *t)
{
	unw_flush_cache(t->as, 0, 0);
	/* libunwind-ptrace keeps the last ELF image it mapped: start anew. */
	_UPT_destroy(t->upt);
	t->upt = _UPT_create(t->pid);
}

void nw_cap_unwind_free(struct nw_cap_target *t)
{
	if (t->as)
		unw_destroy_addr_space(t->as);
	if (t->upt)
		_UPT_destroy(t->upt);
	t->as = NULL;
	t->upt = NULL;
}

void nw_cap_unwind(struct nw_cap_target *t, struct nw_cap_stack *out)
{
	unw_cursor_t c;
	out->n = 0;
	cur = t;
	if (unw_init_remote(&c, t->as, t) < 0) {
		out->why = "unwinder could not start";
		cur = NULL;
		return;
	}
	for (;;) {
		unw_word_t ip;
		if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || ip == 0)
			break;
		if (out->n == NW_CAP_FRAMES) {
			out->flags |= NW_THR_TRUNCATED;
			break;
		}
		out->ip[out->n++] = (uint64_t)ip;
		if (unw_step(&c) <= 0)
			break;
	}
	cur = NULL;
}
