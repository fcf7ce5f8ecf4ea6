/* rankset: sorted sets of ranks and their STAT-style "0-6,9" form.
 *
 * Ranks are mostly added in increasing order (processes are sorted by
 * rank), so adding appends in O(1); an out-of-order rank is inserted after
 * a binary search. */
#include "sources.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The position of the first element >= rank. */
static uint32_t lower_bound(const struct nw_rankset *s, int32_t rank)
{
	uint32_t lo = 0, hi = s->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (s->v[mid] < rank)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int nw_rankset_add(struct nw_rankset *s, int32_t rank)
{
	uint32_t at = s->n;
	if (s->n && s->v[s->n - 1] >= rank) {
		at = lower_bound(s, rank);
		if (at < s->n && s->v[at] == rank)
			return 0;
	}
	if (s->n == s->cap) {
		uint32_t cap = s->cap ? s->cap * 2 : 8;
		int32_t *v = realloc(s->v, (size_t)cap * sizeof *v);
		if (!v)
			return -1;
		s->v = v;
		s->cap = cap;
	}
	memmove(s->v + at + 1, s->v + at, (size_t)(s->n - at) * sizeof *s->v);
	s->v[at] = rank;
	s->n++;
	return 0;
}

int nw_rankset_has(const struct nw_rankset *s, int32_t rank)
{
	uint32_t at = lower_bound(s, rank);
	return at < s->n && s->v[at] == rank;
}

void nw_rankset_free(struct nw_rankset *s)
{
	free(s->v);
	memset(s, 0, sizeof *s);
}

void nw_rankset_clear(struct nw_rankset *s)
{
	s->n = 0;
}

/* Items are "A" or "A-B", comma-separated. When the whole text does not fit
 * in len bytes, as many whole items as fit are kept, followed by "..."
 * (a cut number would name ranks that are not in the set). */
size_t nw_rankset_format(const struct nw_rankset *s, char *buf, size_t len)
{
	size_t need = 0, kept = 0;   /* kept: bytes of whole items that fit with "..." after them */
	int cut = 0;
	char item[32];
	if (s->n == 0) {
		if (len >= 2)
			memcpy(buf, "-", 2);
		else if (len)
			buf[0] = '\0';
		return 1;
	}
	for (uint32_t i = 0; i < s->n;) {
		uint32_t j = i;
		while (j + 1 < s->n && s->v[j + 1] == s->v[j] + 1)
			j++;
		int n = j > i ? snprintf(item, sizeof item, "%s%d-%d", i ? "," : "", s->v[i], s->v[j])
		              : snprintf(item, sizeof item, "%s%d", i ? "," : "", s->v[i]);
		if (!cut) {
			/* Room for this item, then either nothing (the last) or "...". */
			if (need + (size_t)n + 1 <= len) {
				memcpy(buf + need, item, (size_t)n);
				if (need + (size_t)n + 4 <= len)
					kept = need + (size_t)n;
			} else {
				cut = 1;
			}
		}
		need += (size_t)n;
		i = j + 1;
	}
	if (len) {
		if (!cut) {
			buf[need] = '\0';
		} else if (len >= 4) {
			memcpy(buf + kept, "...", 4);
		} else {
			buf[0] = '\0';
		}
	}
	return need;
}
