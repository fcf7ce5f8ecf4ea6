/* libFuzzer target for the Flight Recorder reader (report/sources/fr/): any bytes,
 * read as a dump (a pickle, or JSON), must give either a process of the
 * engine's model or a one-line error, never a crash, a leak, undefined
 * behaviour or a call into Python. Built with clang by report/part.mk;
 * corpus in tests/fuzz/corpus-fr/ (small dumps from tests/gen/frgen.py and
 * a few hostile pickles, made by tests/fuzz/make-corpus-fr.sh); run by
 * tests/fr/test-fr-fuzz.sh for a bounded number of runs. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "../../report/decide/decide.h"
#include "../../report/sources/fr/fr.h"
#include "../../report/sources/fr/pickle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink_sum;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The pickle reader alone: every opcode sequence. */
	struct nw_pickle pk;
	char perr[NW_PICKLE_ERR_LEN];
	if (nw_pickle_parse(data, size, &pk, perr) != 0 && !perr[0])
		abort();                        /* an error must say what */
	nw_pickle_free(&pk);

	/* The whole loader, behind the sniffer (as diagnose reads a file). */
	struct nw_intern in = { 0 };
	struct nw_fr_cache *cache = nw_fr_cache_new();
	struct nw_proc *p = NULL;
	struct nw_read_error err;
	int rc = nw_fr_read_bytes(data, size, "fuzz", &in, NULL, cache, &p, &err);
	if (rc == NW_READ_OK) {
		if (!p)
			abort();
		uint64_t sum = 0;
		for (size_t i = 0; i < p->nops; i++) {
			sum += p->ops[i].seq + p->ops[i].count + p->ops[i].comm_slot;
			if (p->ops[i].comm_slot >= p->ncomms)
				abort();                /* every op names a comm of its process */
			if (p->op_site && p->op_site[i])
				sum += strlen(p->op_site[i]);
		}
		for (uint32_t i = 0; i < p->npeers; i++)
			if (p->peers[i].comm_slot >= p->ncomms)
				abort();
		sink_sum += sum;
		nw_proc_free(p);
	} else if (p || !err.message[0] || strchr(err.message, '\n')) {
		abort();                        /* an error is one line, and nothing is returned */
	}
	nw_fr_cache_free(cache);
	nw_intern_free(&in);
	return 0;
}
