/* dlsym_hook: our dlsym and dlvsym, for programs that load NCCL by hand.
 *
 * JAX/XLA (TSL's NCCL stub), PaddlePaddle and XGBoost dlopen libnccl.so.2
 * and call through dlsym(handle, "ncclAllReduce"): symbol interposition
 * never sees those calls. A lookup of a name we wrap, on a real handle,
 * whose result lies in a libnccl, returns our wrapper instead, and the
 * handle becomes the library our wrappers forward to. Every other lookup
 * passes through untouched. The CUDA driver's graph entry points and
 * cuGetProcAddress, looked up on a libcuda handle by anyone but libcuda
 * itself, get ours too (wrap_cuda.c).
 *
 * Why wrap dlsym rather than use LD_AUDIT (la_symbind64): an audit library
 * lives in its own link namespace, i.e. a second copy of libncclwatch with
 * its own state (segment, comm table, sequence counters), and it must be set
 * up by the launcher. A dlsym defined (unversioned) in the preloaded library
 * interposes both dlsym@GLIBC_2.34 and dlsym@GLIBC_2.2.5 references.
 *
 * glibc's dlsym finds "the object after the caller" for RTLD_NEXT (and the
 * caller's namespace for RTLD_DEFAULT) from its return address. So the
 * pass-through must be a tail jump that keeps the caller's return address:
 * on x86-64 the entry points are a few lines of assembly that ask
 * nw_dlsym_route() and then jump. The decision touches no libc function (a
 * sanitizer runtime calls dlsym before its interceptors work). */
#include "libc_dl.h"
#include "real_nccl.h"
#include "state.h"

/* wrap_cuda.c */
int nw_cuda_wrapped_index(const char *name);
void *nw_cuda_dlsym_redirect(const char *name, void *sym, const void *caller);

#include <dlfcn.h>
#include <stddef.h>

/* Our wrappers, by name. */
static const struct { const char *name; void *wrapper; } nw_wrapped[] = {
#define NW_WRAPPED_ENTRY(n) { "nccl" #n, (void *)nccl##n },
	NW_WRAPPED_FUNCTIONS(NW_WRAPPED_ENTRY)
};

__attribute__((optimize("no-tree-loop-distribute-patterns")))
NW_NO_SANITIZE static int wrapped_index(const char *name)
{
	if (!name || name[0] != 'n' || name[1] != 'c' || name[2] != 'c' || name[3] != 'l')
		return -1;
	for (size_t i = 0; i < sizeof(nw_wrapped) / sizeof(nw_wrapped[0]); i++) {
		const char *a = nw_wrapped[i].name + 4, *b = name + 4;
		while (*a && *a == *b) {
			a++;
			b++;
		}
		if (*a == *b)
			return (int)i;
	}
	return -1;
}

/* Nonzero: take the wrapped path (a real handle and a name we wrap, or
 * libc's dlsym could not be found). Zero: jump to libc with the caller's
 * return address intact. */
__attribute__((used)) NW_NO_SANITIZE int nw_dlsym_route(void *handle, const char *name)
{
	nw_libc_dl_init();
	if (!nw_libc_dlsym || !nw_libc_dlvsym)
		return 1;
	if (handle == RTLD_DEFAULT || handle == RTLD_NEXT)
		return 0;
	return wrapped_index(name) >= 0 || nw_cuda_wrapped_index(name) >= 0;
}

static int is_nccl_library(const char *path)
{
	const char *base = path;
	for (const char *p = path; *p; p++)
		if (*p == '/')
			base = p + 1;
	const char *hit = NULL;
	for (const char *p = base; *p && !hit; p++)
		if (p[0] == 'l' && p[1] == 'i' && p[2] == 'b' && p[3] == 'n' && p[4] == 'c'
		    && p[5] == 'c' && p[6] == 'l')
			hit = p;
	return hit && !(hit[7] == 'w' && hit[8] == 'a');   /* not libncclwatch */
}

static void *redirect(void *handle, const char *name, void *sym)
{
	if (!sym || nw_disabled())
		return sym;
	int i = wrapped_index(name);
	if (i < 0 || sym == nw_wrapped[i].wrapper)
		return sym;
	Dl_info info;
	if (!dladdr(sym, &info) || !info.dli_fname || !is_nccl_library(info.dli_fname))
		return sym;
	nw_real_adopt_handle(handle);
	return nw_wrapped[i].wrapper;
}

__attribute__((used)) void *nw_dlsym_wrapped(void *handle, const char *name, const void *caller)
{
	if (!nw_libc_dlsym)
		return NULL;
	void *sym = nw_libc_dlsym(handle, name);
	if (nw_cuda_wrapped_index(name) >= 0)
		return nw_cuda_dlsym_redirect(name, sym, caller);
	return redirect(handle, name, sym);
}

__attribute__((used)) void *nw_dlvsym_wrapped(void *handle, const char *name, const char *version,
                                               const void *caller)
{
	if (!nw_libc_dlvsym)
		return NULL;
	void *sym = nw_libc_dlvsym(handle, name, version);
	if (nw_cuda_wrapped_index(name) >= 0)
		return nw_cuda_dlsym_redirect(name, sym, caller);
	return redirect(handle, name, sym);
}

#if defined(__x86_64__)
#if defined(__CET__)
#define NW_ENDBR "	endbr64\n"
#else
#define NW_ENDBR ""
#endif
__asm__(
	"	.text\n"
	"	.globl dlsym\n"
	"	.type dlsym, @function\n"
	"dlsym:\n"
	NW_ENDBR
	"	movq (%rsp), %rdx\n"         /* the caller, for the wrapped path */
	"	pushq %rdi\n"
	"	pushq %rsi\n"
	"	pushq %rdx\n"                /* and a 16-byte aligned call */
	"	call nw_dlsym_route\n"
	"	popq %rdx\n"
	"	popq %rsi\n"
	"	popq %rdi\n"
	"	testl %eax, %eax\n"
	"	jnz nw_dlsym_wrapped\n"
	"	jmp *nw_libc_dlsym(%rip)\n"
	"	.size dlsym, .-dlsym\n"
	"	.globl dlvsym\n"
	"	.type dlvsym, @function\n"
	"dlvsym:\n"
	NW_ENDBR
	"	movq (%rsp), %rcx\n"         /* the caller, for the wrapped path */
	"	pushq %rdi\n"
	"	pushq %rsi\n"
	"	pushq %rdx\n"
	"	pushq %rcx\n"
	"	subq $8, %rsp\n"             /* 16-byte aligned call */
	"	call nw_dlsym_route\n"
	"	addq $8, %rsp\n"
	"	popq %rcx\n"
	"	popq %rdx\n"
	"	popq %rsi\n"
	"	popq %rdi\n"
	"	testl %eax, %eax\n"
	"	jnz nw_dlvsym_wrapped\n"
	"	jmp *nw_libc_dlvsym(%rip)\n"
	"	.size dlvsym, .-dlvsym\n");
#else
/* Elsewhere: plain C. RTLD_NEXT lookups then resolve relative to this
 * library rather than the caller (documented limitation). */
__attribute__((visibility("default"))) void *dlsym(void *handle, const char *name)
{
	if (!nw_dlsym_route(handle, name))
		return nw_libc_dlsym(handle, name);
	return nw_dlsym_wrapped(handle, name, __builtin_return_address(0));
}

__attribute__((visibility("default"))) void *dlvsym(void *handle, const char *name, const char *version)
{
	if (!nw_dlsym_route(handle, name))
		return nw_libc_dlvsym(handle, name, version);
	return nw_dlvsym_wrapped(handle, name, version, __builtin_return_address(0));
}
#endif
