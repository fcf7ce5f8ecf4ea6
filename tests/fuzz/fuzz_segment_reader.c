/* libFuzzer (and AFL++ -fsanitize=fuzzer compatible) target for the segment
 * reader: any bytes, read as a segment file, must give either a snapshot
 * that renders without fault (with and without its stacks) and whose stack
 * helpers stay inside the snapshot whatever they are asked, or a one-line
 * error, never a crash, a leak or undefined behaviour. Built with clang by
 * report/part.mk; corpus in tests/fuzz/corpus/ (small segments from
 * tests/report/mkseg, made by tests/fuzz/make-corpus.sh); run by
 * tests/fuzz/test-report-fuzz.sh for a bounded number of runs. An input
 * whose header claims a larger segment than it is becomes a sparse file
 * of that size (the corpus's sparse-*.seg). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "../../report/sources/segment_reader.h"
#include "../../report/cli/show_text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Touch every byte a helper hands out, so that ASan sees any read beyond
 * the snapshot; the sum goes nowhere. */
static volatile uint64_t sink_sum;

static void touch(const void *p, size_t n)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += ((const unsigned char *)p)[i];
	sink_sum += sum;
}

static void touch_string(const char *s)
{
	if (s)
		touch(s, strlen(s) + 1);
}

static void resolve(const struct nw_segment *seg, const struct nw_seg_frame *f)
{
	touch(f, sizeof *f);
	touch_string(nw_stack_string(seg, f->symbol));
	const struct nw_seg_module *m = nw_stack_module(seg, f->module);
	if (m)
		touch_string(m->path);
	uint32_t index1;
	if ((m = nw_stack_module_at(seg, f->ip, &index1)) && nw_stack_module(seg, index1) != m)
		abort();
	const struct nw_seg_frame *sym = nw_ipsym_lookup(seg, f->ip);
	if (sym && sym->ip != f->ip)
		abort();
}

static void exercise_stacks(const struct nw_segment *seg)
{
	const struct nw_seg_stack_header *a = seg->stack;
	/* `stack` is a capture, or (1.4) the Python call site names the
	 * watchdog wrote before any capture, with no threads or modules. */
	if (a && seg->stack_state != NW_STACKS_CAPTURED &&
	    !(seg->stack_state == NW_STACKS_NEVER && !a->thread_count && !a->module_count))
		abort();
	uint32_t threads = a ? a->thread_count : 0;
	/* Indexes in range and beyond it. */
	for (uint32_t i = 0; i < threads + 2; i++) {
		const struct nw_seg_thread *t = nw_stack_thread(seg, i);
		if (!t != (i >= threads))
			abort();
		uint32_t n;
		const struct nw_seg_frame *f = nw_stack_frames(seg, i, &n);
		if (t) {
			touch(t, sizeof *t);
			touch_string(t->name);
		}
		for (uint32_t k = 0; f && k < n; k++)
			resolve(seg, &f[k]);
	}
	/* Strings and modules at every offset around the used part. */
	uint32_t used = a ? a->strtab_used : 0;
	for (uint32_t off = 0; off < used + 4 && off < 4096; off++)
		touch_string(nw_stack_string(seg, off));
	touch_string(nw_stack_string(seg, UINT32_MAX));
	uint32_t modules = a ? a->module_count : 0;
	for (uint32_t i = 0; i < modules + 2; i++) {
		const struct nw_seg_module *m = nw_stack_module(seg, i);
		if (m)
			touch_string(m->path);
	}
	if (nw_stack_module(seg, UINT32_MAX))
		abort();
	nw_ipsym_lookup(seg, 0);
	nw_ipsym_lookup(seg, UINT64_MAX);
	/* Per-op stacks of every valid record and of tickets that are not. */
	for (size_t i = 0; i < seg->op_count; i++) {
		uint64_t ticket = nw_op_ticket(&seg->ops[i]);
		uint32_t depth;
		const uint64_t *ips = nw_opstack(seg, ticket, &depth);
		if (!ips != !depth)
			abort();
		for (uint32_t k = 0; ips && k < depth; k++) {
			struct nw_seg_frame f = { .ip = ips[k] };
			resolve(seg, &f);
		}
	}
	uint32_t depth;
	if (nw_opstack(seg, seg->ring.head, &depth) || depth)
		abort();
	nw_opstack(seg, UINT64_MAX, &depth);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static FILE *sink;
	if (fd < 0) {
		fd = memfd_create("fuzz-segment", MFD_CLOEXEC);
		sink = fopen("/dev/null", "w");
		if (fd < 0 || !sink)
			abort();
	}
	if (ftruncate(fd, 0) != 0 || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		abort();
	/* A header whose segment_size is past the input's end: the file is
	 * made that long by a hole (up to 4 GiB), as an attacker's sparse
	 * file would be. The reader must pay for the data, not the claim. */
	uint64_t claimed;
	if (size >= offsetof(struct nw_seg_header, segment_size) + sizeof claimed) {
		memcpy(&claimed, data + offsetof(struct nw_seg_header, segment_size), sizeof claimed);
		if (claimed > size && claimed <= (4ull << 30) && ftruncate(fd, (off_t)claimed) != 0)
			abort();
	}

	struct nw_segment seg;
	struct nw_read_error err;
	/* No pause at a stack area "being written": nothing writes this one. */
	int rc = nw_segment_read_fd(fd, "fuzz.seg", NW_READ_NO_WAIT, &seg, &err);
	if (rc == NW_READ_OK) {
		struct nw_show_options all = { .all_records = 1 };
		nw_show_segment(sink, &seg, &all);
		struct nw_show_options brief = { .all_records = 0, .max_records = 2, .no_stacks = 1 };
		nw_show_segment(sink, &seg, &brief);
		exercise_stacks(&seg);
		nw_segment_free(&seg);
	} else {
		/* The contract: one line that names the file. */
		if (strncmp(err.message, "fuzz.seg: ", 10) != 0 || strchr(err.message, '\n'))
			abort();
	}
	return 0;
}
