/* visibility: NW_HIDDEN on the declarations of the data the hot path reads.
 * The library is built with -fvisibility=hidden, but that says nothing to
 * the compiler about an extern declaration: without the attribute each
 * access to such data from another file goes through the GOT (an address
 * load, then the load itself). Nothing outside the library can refer to
 * them anyway. */
#ifndef NCCLWATCH_INTERPOSE_VISIBILITY_H
#define NCCLWATCH_INTERPOSE_VISIBILITY_H

#define NW_HIDDEN __attribute__((visibility("hidden")))

#endif
