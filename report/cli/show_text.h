/* The text rendering of one segment snapshot for `ncclwatch show`: the
 * header, the comm table, the peer table, the op records (with their call
 * stacks, if recorded) and the thread stacks of the last capture. The line
 * formats are documented in `ncclwatch show --help` and docs/FORMAT.md;
 * tests grep them, so change them only on purpose.
 */
#ifndef NCCLWATCH_REPORT_CLI_SHOW_TEXT_H
#define NCCLWATCH_REPORT_CLI_SHOW_TEXT_H

#include <stdint.h>
#include <stdio.h>
#include "../sources/segment_reader.h"

struct nw_show_options {
	int all_records;        /* 1: every valid record; 0: only the newest max_records */
	uint64_t max_records;
	int no_stacks;          /* 1: only the one-line stack summary, no thread, module or op-stack lines */
};

void nw_show_segment(FILE *out, const struct nw_segment *seg, const struct nw_show_options *opt);

#endif /* NCCLWATCH_REPORT_CLI_SHOW_TEXT_H */
