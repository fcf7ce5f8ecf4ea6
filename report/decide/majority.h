/* majority: the one rule "the strict majority is the program as written".
 *
 * Ranks (or processes) that disagree are grouped by what they did (the op
 * they issued at a position, the size they gave a comm, where they
 * stopped); votes[i] counts group i. The group with more votes than every
 * other group is the majority: it is the program as written, the others
 * deviate from it. A tie for the most votes is no majority: the rule does
 * not say who deviates, and each caller says what decides instead (the
 * comm's history, the processes that wait from outside, naming every tied
 * group), never a coin flip that may blame a rank that only waits. */
#ifndef NCCLWATCH_REPORT_ANALYSIS_MAJORITY_H
#define NCCLWATCH_REPORT_ANALYSIS_MAJORITY_H

#include <stdint.h>

#define NW_NO_MAJORITY (-1)

/* The strict majority of the n groups counted in votes[]: the index of the
 * one group with more votes than every other, or NW_NO_MAJORITY when two
 * or more groups share the most votes, or no group has a vote. */
int nw_majority(const uint32_t *votes, uint32_t n);

/* The first of the groups with the most votes (0 when n is 0), and in
 * *ntop how many groups share that count (1: it is the strict majority).
 * For a caller that describes one side even on a tie, with the tie told
 * apart. */
uint32_t nw_vote_top(const uint32_t *votes, uint32_t n, uint32_t *ntop);

#endif
