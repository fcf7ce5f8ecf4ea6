/* unw_table_linked: see unw_table.h. The filler of programs that link
 * libunwind (-lunwind-ptrace -lunwind-generic -lunwind): the CLI and the
 * test programs, which no one preloads. The local entry points are
 * declared here by their real names with the generic prototypes they
 * share (this file cannot include libunwind.h both ways). */
#include "unw_table.h"

/* _ULx86_64_init_local from init_local, as libunwind.h's UNW_OBJ does. */
#define LOCAL(fn) UNW_PASTE(UNW_PASTE(_UL, UNW_TARGET), UNW_PASTE(_, fn))

extern __typeof__(unw_init_local) LOCAL(init_local);
extern __typeof__(unw_step) LOCAL(step);
extern __typeof__(unw_get_reg) LOCAL(get_reg);
extern __typeof__(unw_local_addr_space) LOCAL(local_addr_space);

struct nw_unw nw_unw = {
	.getcontext = unw_tdep_getcontext,
	.init_local = LOCAL(init_local),
	.local_step = LOCAL(step),
	.local_get_reg = LOCAL(get_reg),
	.backtrace = unw_backtrace,
	.local_addr_space = &LOCAL(local_addr_space),
	.local_get_accessors = unw_get_accessors,
	.create_addr_space = unw_create_addr_space,
	.destroy_addr_space = unw_destroy_addr_space,
	.set_caching_policy = unw_set_caching_policy,
	.flush_cache = unw_flush_cache,
	.init_remote = unw_init_remote,
	.step = unw_step,
	.get_reg = unw_get_reg,
	.get_proc_info = unw_get_proc_info,
	.upt_create = _UPT_create,
	.upt_destroy = _UPT_destroy,
	.upt_find_proc_info = _UPT_find_proc_info,
	.upt_put_unwind_info = _UPT_put_unwind_info,
	.upt_get_proc_name = _UPT_get_proc_name,
};
int nw_unw_ok = 1;

int nw_unw_load(void)
{
	return 1;
}
