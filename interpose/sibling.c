/* sibling: see sibling.h. Our directory is that of the object holding this
 * function: its path as loaded when absolute, else the loader's origin of
 * it (RTLD_DI_ORIGIN: made absolute when the object was loaded, so a
 * relative LD_PRELOAD still works after the program changed directory). */
#include "sibling.h"

#include "libc_dl.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

static int own_dir(char *dir, size_t len)
{
	Dl_info info;
	struct link_map *lm = NULL;
	if (!dladdr1((void *)&nw_dlopen_sibling, &info, (void **)&lm, RTLD_DL_LINKMAP))
		return -1;
	if (info.dli_fname && info.dli_fname[0] == '/') {
		const char *slash = strrchr(info.dli_fname, '/');
		size_t n = (size_t)(slash - info.dli_fname);
		if (n + 1 > len)
			return -1;
		memcpy(dir, info.dli_fname, n);
		dir[n] = 0;
		return 0;
	}
	char origin[PATH_MAX];
	origin[0] = 0;
	if (!lm || dlinfo(lm, RTLD_DI_ORIGIN, origin) != 0 || origin[0] != '/')
		return -1;
	return snprintf(dir, len, "%s", origin) < (int)len ? 0 : -1;
}

void *nw_dlopen_sibling(const char *file, char *why, size_t why_len)
{
	char dir[PATH_MAX], path[PATH_MAX + 64];
	if (own_dir(dir, sizeof(dir)) != 0) {
		snprintf(why, why_len, "the directory of libncclwatch.so is unknown, no %s", file);
		return NULL;
	}
	if (snprintf(path, sizeof(path), "%s/%s", dir, file) >= (int)sizeof(path)) {
		snprintf(why, why_len, "path too long: %s/%s", dir, file);
		return NULL;
	}
	void *h = nw_libc_dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		snprintf(why, why_len, "%s", e ? e : path);
	}
	return h;
}
