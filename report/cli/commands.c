/* The list of the CLI's commands (see commands.h). */
#include "commands.h"

#include <stddef.h>

const struct nw_command *const nw_commands[] = {
	&nw_cmd_show,
	NULL,
};
