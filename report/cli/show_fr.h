/* show_fr: what `ncclwatch show` prints for a PyTorch Flight Recorder dump:
 * the process the engine builds from it (report/sources/fr/), in the shape of a
 * segment's block. */
#ifndef NCCLWATCH_REPORT_CLI_SHOW_FR_H
#define NCCLWATCH_REPORT_CLI_SHOW_FR_H

#include <stdio.h>
#include "../sources/segment_reader.h"

/* Read and print the dump at `path`; NW_READ_OK, or an error with err set. */
int nw_show_fr(FILE *out, const char *path, struct nw_read_error *err);

#endif
