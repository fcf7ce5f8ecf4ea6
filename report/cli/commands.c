/* The list of the CLI's commands (see commands.h). */
#include "commands.h"

#include <stddef.h>

const struct nw_command *const nw_commands[] = {
	&nw_cmd_diagnose,
	&nw_cmd_status,
	&nw_cmd_summary,
	&nw_cmd_dump,
	&nw_cmd_show,
	&nw_cmd_gc,
	&nw_cmd_run,
	&nw_cmd_attach,
	&nw_cmd_ras,
	NULL,
};
