/* majority: the strict majority of counted groups (majority.h). */
#include "majority.h"

uint32_t nw_vote_top(const uint32_t *votes, uint32_t n, uint32_t *ntop)
{
	uint32_t top = 0, tied = 0;
	for (uint32_t i = 1; i < n; i++)
		if (votes[i] > votes[top])
			top = i;
	for (uint32_t i = 0; i < n; i++)
		tied += votes[i] == votes[top];
	*ntop = tied;
	return top;
}

int nw_majority(const uint32_t *votes, uint32_t n)
{
	uint32_t ntop;
	uint32_t top = nw_vote_top(votes, n, &ntop);
	if (!n || !votes[top] || ntop != 1)
		return NW_NO_MAJORITY;
	return (int)top;
}
