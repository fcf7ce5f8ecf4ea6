/* libFuzzer target for the per-host summary reader (report/sources/summary/): any
 * bytes, read as a summary, must give either processes of the engine's
 * model whose indices all hold, or a one-line error; never a crash, a
 * leak or undefined behaviour. What it gives, written again and read
 * again, must write the same bytes (the codec loses nothing it keeps).
 * Built with clang by report/part.mk; run by
 * tests/summary/test-summary-fuzz.sh on a corpus of real summaries. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../../report/decide/decide.h"
#include "../../report/sources/summary/summary.h"
#include "../../report/sources/summary/summary_codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static volatile uint64_t sink_sum;

static void check(struct nw_proc *const *procs, size_t n)
{
	uint64_t sum = 0;
	for (size_t k = 0; k < n; k++) {
		const struct nw_proc *p = procs[k];
		for (size_t i = 0; i < p->nops; i++) {
			if (p->ops[i].comm_slot >= p->ncomms && p->ops[i].comm_slot != UINT32_MAX)
				abort();
			if (p->op_site && p->op_site[i])
				sum += strlen(p->op_site[i]);
		}
		for (uint32_t i = 0; i < p->npeers; i++)
			if (p->peers[i].comm_slot >= p->ncomms)
				abort();
		for (uint32_t i = 0; i < p->nthreads; i++) {
			const struct nw_thread_stack *t = &p->threads[i];
			for (uint32_t f = 0; f < t->nframes; f++)
				sum += strlen(t->frames[f]);
			if (t->npy > t->nframes || t->py_at > t->nframes || t->py_app > t->nframes)
				abort();
		}
		for (const char *e = p->hdr.env; e && *e; e += strlen(e) + 1)
			sum++;
		sum += strlen(p->path) + strlen(p->hdr.host) + strlen(p->hdr.job) +
		       (p->hdr.nccl_lib ? strlen(p->hdr.nccl_lib) : 0);
	}
	sink_sum += sum;
}

static int write_mem(struct nw_proc *const *procs, size_t n, char **buf, size_t *len)
{
	FILE *f = open_memstream(buf, len);
	if (!f)
		return -1;
	int rc = nw_summary_write(f, procs, n, 0);
	fclose(f);
	return rc;
}

static void free_all(struct nw_proc **procs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		nw_proc_free(procs[i]);
	free(procs);
}

static void one(const uint8_t *data, size_t size);

/* Before any input: a process whose stack holds an empty frame (a frame's
 * text is kept even when empty; every other empty text reads as none)
 * survives the round trip. The fuzzer found this one; its inputs come from
 * nwgen, whose segments differ per run, so it is checked here by name. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	static char f0[] = "main", f1[] = "";
	static char *frames[] = { f0, f1 };
	static struct nw_thread_stack t = { .tid = 7, .nframes = 2, .frames = frames };
	static char path[] = "empty-frame.seg";
	struct nw_proc p = { .path = path, .rank = 0, .nthreads = 1, .threads = &t, .hdr.world_size = 1 };
	struct nw_proc *procs[] = { &p };
	char *b = NULL;
	size_t l = 0;
	if (write_mem(procs, 1, &b, &l))
		abort();
	one((const uint8_t *)b, l);
	struct nw_intern in = { 0 };
	struct nw_proc **got = NULL;
	size_t n = 0;
	struct nw_read_error err;
	if (nw_summary_read_bytes((const uint8_t *)b, l, "init", &in, NULL, &got, &n, &err) != NW_READ_OK ||
	    n != 1 || got[0]->nthreads != 1 || got[0]->threads[0].nframes != 2 ||
	    strcmp(got[0]->threads[0].frames[1], ""))
		abort();
	free_all(got, n);
	nw_intern_free(&in);
	free(b);
	return 0;
}

/* The input as it is (the header's own checks), and again with its size
 * and checksum made to match, so that mutations reach the parser behind
 * the checksum. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	one(data, size);
	if (size >= NW_SUM_HEADER_SIZE && !memcmp(data, NW_SUM_MAGIC, 8)) {
		uint8_t *d = malloc(size);
		if (!d)
			return 0;
		memcpy(d, data, size);
		uint64_t len = size - NW_SUM_HEADER_SIZE, h = nw_sum_hash(d + NW_SUM_HEADER_SIZE, len);
		for (int i = 0; i < 8; i++) {
			d[16 + i] = (uint8_t)(len >> (8 * i));
			d[24 + i] = (uint8_t)(h >> (8 * i));
		}
		one(d, size);
		free(d);
	}
	return 0;
}

static void one(const uint8_t *data, size_t size)
{
	struct nw_intern in = { 0 };
	struct nw_proc **procs = NULL;
	size_t n = 0;
	struct nw_read_error err;
	int rc = nw_summary_read_bytes(data, size, "fuzz", &in, NULL, &procs, &n, &err);
	if (rc == NW_READ_OK) {
		check(procs, n);
		char *b1 = NULL, *b2 = NULL;
		size_t l1 = 0, l2 = 0;
		struct nw_proc **again = NULL;
		size_t n2 = 0;
		if (write_mem(procs, n, &b1, &l1) ||
		    nw_summary_read_bytes((const uint8_t *)b1, l1, "again", &in, NULL, &again, &n2, &err) != NW_READ_OK ||
		    n2 != n || write_mem(again, n2, &b2, &l2) || l1 != l2 || memcmp(b1, b2, l1))
			abort();                    /* what was read must survive a round trip */
		free(b1);
		free(b2);
		free_all(again, n2);
		free_all(procs, n);
	} else if (rc != NW_SUM_NOT_A_SUMMARY && (!err.message[0] || strchr(err.message, '\n'))) {
		abort();                        /* an error is one line that says what */
	}
	nw_intern_free(&in);
}
