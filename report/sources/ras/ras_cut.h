/* ras_cut: NCCL's JSON report cut into pieces, so that jansson never
 * holds a whole report: a report's bytes are almost all rank objects
 * (communicators[i].ranks[k], .missing_ranks[k]), and jansson's tree of a
 * whole one takes about five times the text. The cutter finds those
 * objects by the structure of the text alone (strings, brackets, the keys
 * on the way to them) and hands each to a callback, which parses it with
 * jansson and keeps what it needs; the rest (the skeleton: the report with
 * those arrays emptied) is small and parsed whole. Every byte is still
 * read by jansson, which decides what is valid JSON; the cutter only
 * rejects what cannot be a report where it cuts (an item of those arrays
 * that is not an object, a missing or extra comma between items). */
#ifndef NCCLWATCH_REPORT_RAS_CUT_H
#define NCCLWATCH_REPORT_RAS_CUT_H

#include <stddef.h>

/* One item: the text of the object communicators[comm].ranks[index]
 * (missing 0) or .missing_ranks[index] (missing 1), which starts on line
 * `line` of the report. 0 to go on; anything else stops the cutting and
 * is returned. */
typedef int (*nw_ras_item_fn)(void *arg, size_t comm, int missing, size_t index, const char *text, size_t len,
                              size_t line);

/* Cuts text[0..len) (a JSON object): every object item of the "ranks" and
 * "missing_ranks" arrays of every element of the top-level
 * "communicators" array goes to item(), in order, and *skeleton gets a
 * NUL-terminated copy of the text without them (each array's items and
 * commas replaced by the newlines they held, so that jansson's line
 * numbers are the report's); free it. 0; item()'s value if it stopped;
 * or -1 with err ("NAME: not a RAS JSON report: WHY (line N)", or "out of
 * memory"). Keys are matched as written (a key spelled with escapes is
 * not cut: the skeleton keeps its array). */
int nw_ras_cut(const char *name, const char *text, size_t len, nw_ras_item_fn item, void *arg, char **skeleton,
               size_t *skeleton_len, char *err, size_t errlen);

#endif
