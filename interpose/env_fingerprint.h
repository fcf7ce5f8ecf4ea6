/* env_fingerprint: the allowlisted environment variables for the segment
 * header ("NAME=value\0...\0\0"). Never the whole environment: it holds
 * secrets. */
#ifndef NCCLWATCH_INTERPOSE_ENV_FINGERPRINT_H
#define NCCLWATCH_INTERPOSE_ENV_FINGERPRINT_H

#include <stddef.h>

/* Is `name` (up to '=' or NUL) on the allowlist? */
int nw_env_allowed(const char *name);

/* Fill out[size] with the allowlisted variables; a variable that does not
 * fit whole is left out. */
void nw_env_fingerprint(char *out, size_t size);
/* The same from another environment (NULL-terminated "NAME=value"
 * strings: `ncclwatch attach` reads them from /proc/PID/environ). */
void nw_env_fingerprint_of(char *const *env, char *out, size_t size);

#endif
