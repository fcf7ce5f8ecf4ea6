/* libc_dl: libc's own dlsym and dlvsym, found without calling either.
 *
 * We define dlsym and dlvsym ourselves (dlsym_hook.c), so any call to them
 * from our code would come back to us; and dlvsym(RTLD_NEXT, ...) would
 * need the real dlvsym first. Instead the link map (_r_debug) is walked to
 * libc (or libdl on glibc < 2.34) and the default version of each symbol is
 * read from its GNU hash table. This calls no libc function at all, so it is
 * safe in the earliest moments of a process, when a sanitizer runtime calls
 * dlsym before malloc or its own interceptors work. */
#ifndef NCCLWATCH_INTERPOSE_LIBC_DL_H
#define NCCLWATCH_INTERPOSE_LIBC_DL_H

typedef void *(*nw_dlsym_fn)(void *, const char *);
typedef void *(*nw_dlvsym_fn)(void *, const char *, const char *);
typedef void *(*nw_dlopen_fn)(const char *, int);

/* Set once by nw_libc_dl_init; NULL if not found. */
extern nw_dlsym_fn nw_libc_dlsym;
extern nw_dlvsym_fn nw_libc_dlvsym;
extern nw_dlopen_fn nw_libc_dlopen_fn;

/* libc's own dlopen (another preload may define one), or the plain symbol
 * where libc's was not found. For our own libraries (libunwind, the
 * report engine): always with RTLD_LOCAL. */
void *nw_libc_dlopen(const char *file, int mode);

/* Idempotent and cheap once done; allocates nothing, takes no lock. */
void nw_libc_dl_init(void);

/* Attribute for code that may run during a sanitizer runtime's own start. */
#define NW_NO_SANITIZE __attribute__((no_sanitize("address", "thread", "undefined")))

#endif
