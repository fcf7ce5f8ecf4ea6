/* hooks: see hooks.h. The hot path's hooks live here, with interpose/;
 * the parts above set them. */
#include "hooks.h"

struct nw_op_hooks nw_op_hooks;
