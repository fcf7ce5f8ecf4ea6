/* words_int.h: inside words/, the words of each fact kind
 * (decide/facts.h): nw_say_KIND appends what the fact says to b. The
 * declarations and say.c's table come from facts.h's list of kinds, so a
 * kind without its words function does not link. */
#ifndef NCCLWATCH_REPORT_WORDS_INT_H
#define NCCLWATCH_REPORT_WORDS_INT_H

#include "words.h"

/* NW_AGE in a line's words stands for an age: the range of ages of the
 * set of the line's head ("1.9-2.0 s"), filled in when the line is said
 * (say.c). */
#define NW_AGE "\x01"

#define NW_SAY_DECL_(name) void nw_say_##name(struct nw_buf *b, const struct nw_fact *f);
NW_FACT_KINDS(NW_SAY_DECL_)
#undef NW_SAY_DECL_

/* where_words.c: "AllReduce #5 on comm X", "Send #3 to rank 6 (pid ...)
 * on comm X", "CommInit of comm X" (v: op's comm view, or NULL). */
void nw_say_op(struct nw_buf *b, const struct nw_seg_op *op, const struct nw_comm_view *v);

#endif
