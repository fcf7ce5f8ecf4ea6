/* verdict-kinds: the kinds' table (report/verdict_kinds.h) as the report
 * library compiled it, one kind a line in order of severity:
 * "SEVERITY<TAB>NAME<TAB>HINT". `make schema` writes the JSON schema's
 * enum from it; tests/report/test-report-kinds.sh compares the docs and
 * the CLI's help with it. */
#include <stdio.h>
#include "../../report/words/words.h"

int main(void)
{
	for (int k = 0; k < NW_VERDICT_NKINDS; k++)
		printf("%d\t%s\t%s\n", k, nw_verdict_name(k), nw_verdict_hint(k));
	return 0;
}
