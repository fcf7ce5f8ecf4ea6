/* kind_words: a verdict kind's name and hint, from the kinds' table
 * (report/verdict_kinds.h): how the text, JSON and every reader spell a
 * kind, and DESIGN.md's hint, which nw_words_say gives a verdict whose
 * findings hold none. */
#include "words.h"

#define NW_VK_NAME_(name, severity, hint) [severity] = #name,
#define NW_VK_HINT_(name, severity, hint) [severity] = hint,
static const char *const kind_names[] = { NW_VERDICT_KINDS(NW_VK_NAME_) };
static const char *const kind_hints[] = { NW_VERDICT_KINDS(NW_VK_HINT_) };
/* Severities 0 to NW_VERDICT_NKINDS-1, each once: a gap leaves the array
 * longer than the table, a repeat is an error (-Woverride-init). */
_Static_assert(sizeof kind_names / sizeof kind_names[0] == NW_VERDICT_NKINDS,
               "report/verdict_kinds.h: severities must be 0 to the number of kinds - 1");

const char *nw_verdict_name(int kind)
{
	return kind >= 0 && kind < NW_VERDICT_NKINDS ? kind_names[kind] : "UNKNOWN";
}

/* DESIGN.md's hint column. */
const char *nw_verdict_hint(int kind)
{
	return kind >= 0 && kind < NW_VERDICT_NKINDS ? kind_hints[kind] : "";
}
