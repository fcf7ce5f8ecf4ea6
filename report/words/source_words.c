/* source_words: what a source cannot tell (SOURCE_NOTE: a Flight
 * Recorder dump, a NCCL RAS report), in the source's own words, the last
 * evidence line of every verdict of its job (verdicts.c: source_notes;
 * verdicts_ras.c: a report of its own). */
#include "words_int.h"

void nw_say_SOURCE_NOTE(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_puts(b, f->name ? f->name : "");
}
