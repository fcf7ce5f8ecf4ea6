/* unwind: libunwind's remote interface over our accessors (every call
 * through the table of unw_table.h). Unwind tables
 * (.eh_frame_hdr, .eh_frame) are found by libunwind-ptrace's
 * _UPT_find_proc_info, which reads /proc/PID/maps and maps the ELF file;
 * the table search then reads target memory through our access_mem, which
 * is why that accessor cannot trust its `arg` (it gets libunwind-ptrace's
 * own) and takes the target from `cur` instead. Registers the source did
 * not give are refused (-UNW_EBADREG): libunwind then stops at the first
 * frame that needs one, rather than guessing.
 *
 * One register is then recovered, not guessed: a thread read from
 * /proc/PID/task/TID/syscall has only pc and sp, and a function built
 * with frame pointers (-fno-omit-frame-pointer, -O0, sanitizer builds,
 * distributions that keep them) finds its frame through rbp. Its frame
 * record [rbp] = caller's rbp, [rbp + 8] = return address is on the
 * stack above the sp it was stopped at; it is taken only if the
 * instruction before that return address is a call whose target is the
 * function being unwound (directly, or through a PLT stub that jumps to
 * it), so a stale record of another call is not mistaken for it. */
#include "capture_int.h"

#include "unw_table.h"

#include <errno.h>
#include <string.h>

static __thread struct nw_cap_target *cur;

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi, int need, void *arg)
{
	(void)arg;
	if (!cur->upt)
		return -UNW_ENOINFO;
	return nw_unw.upt_find_proc_info(as, ip, pi, need, cur->upt);
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
	(void)arg;
	nw_unw.upt_put_unwind_info(as, pi, cur->upt);
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
	return nw_unw.upt_get_proc_name(as, addr, buf, len, off, cur->upt);
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
	if (!nw_unw_load()) {
		errno = ENOSYS;          /* no libunwind (the preload said why) */
		return -1;
	}
	t->upt_pid = nw_cap_via(t);
	t->upt = nw_unw.upt_create(t->upt_pid);
	if (!t->upt)
		return -1;
	t->as = nw_unw.create_addr_space(&accessors, 0);
	if (!t->as) {
		nw_unw.upt_destroy(t->upt);
		t->upt = NULL;
		return -1;
	}
	/* Per target: one process's addresses mean nothing in another's. */
	nw_unw.set_caching_policy(t->as, UNW_CACHE_GLOBAL);
	return 0;
}

void nw_cap_flush(struct nw_cap_target *t)
{
	nw_unw.flush_cache(t->as, 0, 0);
	/* libunwind-ptrace keeps the last ELF image it mapped: start anew. */
	nw_cap_unwind_via(t);
}

int nw_cap_unwind_via(struct nw_cap_target *t)
{
	/* Its find_proc_info reads /proc/<the id it was made for>/maps. */
	void *upt = nw_unw.upt_create(nw_cap_via(t));
	if (!upt)
		return -1;
	if (t->upt)
		nw_unw.upt_destroy(t->upt);
	t->upt = upt;
	t->upt_pid = nw_cap_via(t);
	return 0;
}

void nw_cap_unwind_free(struct nw_cap_target *t)
{
	if (t->as)
		nw_unw.destroy_addr_space(t->as);
	if (t->upt)
		nw_unw.upt_destroy(t->upt);
	t->as = NULL;
	t->upt = NULL;
}

#define NW_CAP_FP_SCAN (64u << 10)   /* bytes above a frame's sp searched for its frame record */

static int read_u64(uint64_t addr, uint64_t *v)
{
	return nw_cap_mem_read(&cur->mem, addr, v, sizeof *v);
}

/* Is the code just before return address `ret` a call of `fn`? A direct
 * `call rel32` to fn, or to a PLT stub ([endbr64] [bnd] jmp *GOT(%rip))
 * whose GOT slot holds fn. */
static int calls(uint64_t ret, uint64_t fn)
{
	uint8_t insn[5];
	if (ret < 5 || nw_cap_mem_read(&cur->mem, ret - 5, insn, sizeof insn) || insn[0] != 0xe8)
		return 0;
	int32_t rel;
	memcpy(&rel, insn + 1, sizeof rel);
	uint64_t target = ret + (uint64_t)(int64_t)rel;
	if (target == fn)
		return 1;
	uint8_t stub[11];
	if (nw_cap_mem_read(&cur->mem, target, stub, sizeof stub))
		return 0;
	size_t at = 0;
	if (stub[0] == 0xf3 && stub[1] == 0x0f && stub[2] == 0x1e && stub[3] == 0xfa)
		at = 4;                     /* endbr64 */
	if (stub[at] == 0xf2)
		at++;                       /* bnd */
	if (stub[at] != 0xff || stub[at + 1] != 0x25)
		return 0;
	int32_t disp;
	memcpy(&disp, stub + at + 2, sizeof disp);
	uint64_t got = target + at + 6 + (uint64_t)(int64_t)disp, slot;
	return read_u64(got, &slot) == 0 && slot == fn;
}

/* The frame record of the function the cursor stopped in (see the top):
 * its address, or 0. */
static uint64_t find_frame_record(unw_cursor_t *c)
{
	unw_word_t sp;
	unw_proc_info_t pi;
	if (nw_unw.get_reg(c, UNW_REG_SP, &sp) < 0 || nw_unw.get_proc_info(c, &pi) < 0 || !pi.start_ip)
		return 0;
	for (uint64_t a = (sp + 7) & ~7ull; a < sp + NW_CAP_FP_SCAN; a += 8) {
		uint64_t saved, ret;
		if (read_u64(a, &saved) || read_u64(a + 8, &ret))
			break;
		if ((saved == 0 || saved > a) && calls(ret, pi.start_ip))
			return a;
	}
	return 0;
}

static void unwind_once(struct nw_cap_target *t, struct nw_cap_stack *out, unw_cursor_t *c)
{
	out->n = 0;
	if (nw_unw.init_remote(c, t->as, t) < 0) {
		out->why = "unwinder could not start";
		return;
	}
	for (;;) {
		unw_word_t ip;
		if (nw_unw.get_reg(c, UNW_REG_IP, &ip) < 0 || ip == 0)
			break;
		if (out->n == NW_CAP_FRAMES) {
			out->flags |= NW_THR_TRUNCATED;
			break;
		}
		out->ip[out->n++] = (uint64_t)ip;
		if (nw_unw.step(c) <= 0)
			break;
	}
}

void nw_cap_unwind(struct nw_cap_target *t, struct nw_cap_stack *out)
{
	unw_cursor_t c;
	cur = t;
	unwind_once(t, out, &c);
	/* Stopped short for want of rbp: recover it from the frame record of
	 * the function it stopped in and unwind again (the frames below did
	 * not change rbp, or libunwind would have restored it). */
	const uint32_t rbp = 1u << UNW_X86_64_RBP;
	if (out->n && !(out->flags & NW_THR_TRUNCATED) && !(t->regs.known & rbp)) {
		uint64_t record = find_frame_record(&c);
		if (record) {
			struct nw_cap_stack first = *out;
			t->regs.r[UNW_X86_64_RBP] = record;
			t->regs.known |= rbp;
			unwind_once(t, out, &c);
			if (out->n <= first.n)
				*out = first;           /* no better: keep what was certain */
			t->regs.known &= ~rbp;
		}
	}
	cur = NULL;
}
