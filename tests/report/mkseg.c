/* mkseg: test-only writer of segment files, valid or corrupted on purpose,
 * for the CLI tests and the fuzz corpus (contents: segwriter.h).
 *
 *   mkseg [options] OUT
 *     --comms N --comm-cap N      published comm slots / capacity (2 / 4)
 *     --peers N --peer-cap N      published peer slots / capacity (2 / 8)
 *     --ring N --records N        ring capacity (16) / tickets written (10)
 *     --stack N                   an opaque stack area of N zero bytes (0)
 *     --v11                       format 1.1 with its header fields filled
 *     --stacks                    --v11 and a stack area with a capture and
 *                                 per-op stacks (contents: segwriter.h)
 *     --no-opstacks               with --stacks: no per-op stacks
 *     --python                    --stacks in a 1.4 file with Python frames
 *                                 (thread 0) and per-op Python call sites
 *     --tear T                    ticket T's commit names no ticket of its slot
 *     --unpublish T               ticket T's commit is 0 (its writer died mid-write)
 *     --writing T                 ticket T's commit is its writing marker
 *                                 (NW_SEG_COMMIT_WRITING | T: being written)
 *     --held T                    ticket T's commit counts 2 updaters (1.3: updates
 *                                 in place at work, or their process was killed);
 *                                 makes the file 1.3 with the 1.1 fields filled
 *     --stopped MSG               flags STOPPED with error MSG
 *     --comm-name STR             the name of comm slot 0 (any bytes)
 *     --taint STR                 STR (any bytes) appended to the strings of
 *                                 segwriter.h's segw_spec.taint
 *     --newer-minor               one minor newer than this build (2.3), with a
 *                                 larger header and records, 1.1 fields filled
 *     --v2                        format 2.0 (comm slots may be reused; every 1.x
 *                                 feature), 1.1 fields filled; without it mkseg
 *                                 writes 1.x files
 *     --comm-writing S            (with --v2) comm slot S is being given to a new
 *                                 comm: its gen word is WRITING | 1
 *     --corrupt KIND              one defect, see the table below; the
 *                                 stack_area_* and random_stack_* ones
 *                                 imply --stacks
 *     --reserved-junk             0xa5 in the header's reserved tail, from the
 *                                 first 1.1 field on in a 1.0 file (a reader
 *                                 must read those fields as zero)
 *     --seed N                    for --corrupt random-*
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "segwriter.h"

struct defect {
	const char *name;
	void (*apply)(struct nw_seg_header *h, char *mem, uint64_t *len, unsigned seed);
};

#define DEFECT(n, body) \
	static void defect_##n(struct nw_seg_header *h, char *mem, uint64_t *len, unsigned seed) \
	{ (void)h; (void)mem; (void)len; (void)seed; body; }

DEFECT(empty, *len = 0)
DEFECT(short_magic, *len = 5)
DEFECT(short_header, *len = 100)
DEFECT(header_only, *len = sizeof *h)
DEFECT(truncated_ring, *len = h->segment_size - 64)
DEFECT(zero_magic, memset(h->magic, 0, sizeof h->magic))
DEFECT(magic, memcpy(h->magic, "NCCLWSEX", 8))
DEFECT(endian, h->endian = __builtin_bswap32(NW_SEG_ENDIAN))
DEFECT(endian_bad, h->endian = 0xdeadbeef)
DEFECT(major, h->version_major = NW_SEG_VERSION_MAJOR + 1)
DEFECT(major0, h->version_major = 0)
DEFECT(header_size, h->header_size = 4096)
DEFECT(header_size_big, h->header_size = 8192 + 64)
DEFECT(segment_size, h->segment_size += 4096)
DEFECT(comm_record_size, h->comm_record_size = 256)
DEFECT(peer_record_size, h->peer_record_size = 72)
DEFECT(op_record_size, h->op_record_size = 64)
DEFECT(comm_offset_misaligned, h->comm_offset += 8)
DEFECT(comm_offset_in_header, h->comm_offset = 64)
DEFECT(ring_offset_outside, h->ring_offset = h->segment_size + 64)
DEFECT(ring_offset_overflow, h->ring_offset = UINT64_MAX - 63)
DEFECT(overlap, h->peer_offset = h->comm_offset)
DEFECT(ring_not_pow2, h->ring_capacity = 12)
DEFECT(ring_zero, h->ring_capacity = 0)
DEFECT(ring_over_max, h->ring_capacity = NW_SEG_MAX_RING * 2)
DEFECT(comms_over_max, h->comm_capacity = NW_SEG_MAX_COMMS + 1)
DEFECT(peers_over_max, h->peer_capacity = NW_SEG_MAX_PEERS + 1)
DEFECT(stack_over_max, h->stack_offset = h->segment_size; h->stack_size = NW_SEG_MAX_STACK + 1)
DEFECT(stack_outside, h->stack_offset = h->segment_size; h->stack_size = 4096)
DEFECT(comm_count, h->comm_count = h->comm_capacity + 1)
DEFECT(peer_count, h->peer_count = h->peer_capacity + 1)
DEFECT(host_unterminated, memset(h->host, 'h', sizeof h->host))
DEFECT(job_unterminated, memset(h->job, 'j', sizeof h->job))
DEFECT(error_unterminated, memset(h->error, 'e', sizeof h->error))
DEFECT(env_unterminated, for (size_t i = 0; i + 4 <= sizeof h->env; i += 4) memcpy(h->env + i, "A=B", 4))
DEFECT(comm_name_unterminated,
       memset(((struct nw_seg_comm *)(mem + h->comm_offset))[1].name, 'n', NW_COMM_NAME_LEN))
/* The stack area (mkseg implies --stacks for these). Errors first, then
 * states that are not errors (seq odd, never captured, all zero). */
#define AREA ((struct nw_seg_stack_header *)(mem + h->stack_offset))
#define AREA_AT(type, field) ((type *)((char *)AREA + AREA->field))
DEFECT(stack_area_magic, AREA->magic = 0x12345678)
DEFECT(stack_area_zero_magic, AREA->magic = 0)
DEFECT(stack_area_too_small, h->stack_size = 64)
DEFECT(stack_area_offset, AREA->strtab_offset = h->stack_size)
DEFECT(stack_area_offset_overflow, AREA->frame_offset = UINT64_MAX - 63)
DEFECT(stack_area_misaligned, AREA->module_offset += 8)
DEFECT(stack_area_overlap, AREA->frame_offset = AREA->thread_offset)
DEFECT(stack_area_capacity, AREA->frame_capacity = 1u << 20)
DEFECT(stack_area_strtab_used, AREA->strtab_used = AREA->strtab_size + 1)
DEFECT(stack_area_thread_count, AREA->thread_count = AREA->thread_capacity + 1)
DEFECT(stack_area_module_count, AREA->module_count = AREA->module_capacity + 1)
DEFECT(stack_area_ipsym_count, AREA->ipsym_count = AREA->ipsym_capacity + 1)
DEFECT(stack_area_string_unterminated,
       AREA_AT(char, strtab_offset)[AREA->strtab_used - 1] = 'x')
DEFECT(stack_area_frames, AREA_AT(struct nw_seg_thread, thread_offset)[0].nframes = AREA->frame_capacity + 1)
DEFECT(stack_area_frame_symbol, AREA_AT(struct nw_seg_frame, frame_offset)[1].symbol = AREA->strtab_used + 5)
DEFECT(stack_area_frame_module, AREA_AT(struct nw_seg_frame, frame_offset)[1].module = AREA->module_count + 1)
DEFECT(stack_area_thread_name,
       memset(AREA_AT(struct nw_seg_thread, thread_offset)[2].name, 'n', NW_STACK_NAME_LEN))
DEFECT(stack_area_module_path,
       memset(AREA_AT(struct nw_seg_module, module_offset)[1].path, 'p', NW_STACK_MODULE_PATH_LEN))
DEFECT(stack_area_ipsym_unsorted, struct nw_seg_frame *y = AREA_AT(struct nw_seg_frame, ipsym_offset);
       struct nw_seg_frame tmp = y[0]; y[0] = y[1]; y[1] = tmp)
DEFECT(stack_area_opstack_count, AREA->opstack_count = h->ring_capacity / 2)
DEFECT(stack_area_opstack_depth, AREA->opstack_depth = 65)
/* 1.4's Python tables (mkseg implies --python for stack_area_py_*). */
#define EXT ((struct nw_seg_stack_ext *)(AREA + 1))
#define THR0 (AREA_AT(struct nw_seg_thread, thread_offset)[0])
DEFECT(stack_area_py_count, EXT->pyframe_count = EXT->pyframe_capacity + 1)
DEFECT(stack_area_py_thread, THR0.py_count = 7)
DEFECT(stack_area_py_native, THR0.py_native = THR0.nframes + 1)
DEFECT(stack_area_py_string, ((struct nw_seg_pyframe *)((char *)AREA + EXT->pyframe_offset))[1].file =
                                 AREA->strtab_used + 3)
DEFECT(stack_area_py_site_unsorted, struct nw_seg_pyframe *y = (void *)((char *)AREA + EXT->pysite_offset);
       struct nw_seg_pyframe tmp = y[0]; y[0] = y[1]; y[1] = tmp)
DEFECT(stack_area_py_call_depth, EXT->pycall_depth = 65)
DEFECT(stack_area_py_call_count, EXT->pycall_count = h->ring_capacity / 2)
DEFECT(stack_area_py_overlap, EXT->pysite_offset = EXT->pyframe_offset)
DEFECT(stack_area_seq_odd, AREA->seq = 5)
DEFECT(stack_area_never, AREA->capture_ns = 0; AREA->captures = 0; AREA->request_id = 0)
DEFECT(stack_area_uninitialized, memset(AREA, 0, h->stack_size))
/* Random bytes in the stack area after its magic; a few random bytes
 * anywhere after its header (counts and layout then mostly hold, so the
 * checks of the contents are reached). */
DEFECT(random_stack_area, srand(seed);
       for (size_t i = 4; i < h->stack_size; i++) ((char *)AREA)[i] = (char)rand())
DEFECT(random_stack_bytes, srand(seed);
       for (int i = 0; i < 8; i++)
               ((char *)AREA)[sizeof *AREA + (size_t)rand() % (h->stack_size - sizeof *AREA)] = (char)rand())
#undef AREA_AT
#undef AREA

/* Random bytes after a valid magic, byte-order mark and version: the
 * checks past identification must hold whatever the rest says. */
DEFECT(random_header, srand(seed); for (size_t i = 16; i < sizeof *h; i++) mem[i] = (char)rand())
DEFECT(random_fields, srand(seed);
       for (size_t i = 16; i < offsetof(struct nw_seg_header, host); i++) mem[i] = (char)rand())

static const struct defect defects[] = {
#define D(n) { #n, defect_##n }
	D(empty), D(short_magic), D(short_header), D(header_only), D(truncated_ring), D(zero_magic),
	D(magic), D(endian), D(endian_bad), D(major), D(major0), D(header_size), D(header_size_big),
	D(segment_size), D(comm_record_size), D(peer_record_size), D(op_record_size),
	D(comm_offset_misaligned), D(comm_offset_in_header), D(ring_offset_outside),
	D(ring_offset_overflow), D(overlap), D(ring_not_pow2), D(ring_zero), D(ring_over_max),
	D(comms_over_max), D(peers_over_max), D(stack_over_max), D(stack_outside), D(comm_count),
	D(peer_count), D(host_unterminated), D(job_unterminated), D(error_unterminated),
	D(env_unterminated), D(comm_name_unterminated), D(random_header), D(random_fields),
	D(stack_area_magic), D(stack_area_zero_magic), D(stack_area_too_small), D(stack_area_offset),
	D(stack_area_offset_overflow), D(stack_area_misaligned), D(stack_area_overlap),
	D(stack_area_capacity), D(stack_area_strtab_used), D(stack_area_thread_count),
	D(stack_area_module_count), D(stack_area_ipsym_count), D(stack_area_string_unterminated),
	D(stack_area_frames), D(stack_area_frame_symbol), D(stack_area_frame_module),
	D(stack_area_thread_name), D(stack_area_module_path), D(stack_area_ipsym_unsorted),
	D(stack_area_opstack_count), D(stack_area_opstack_depth), D(stack_area_seq_odd),
	D(stack_area_never), D(stack_area_uninitialized), D(random_stack_area), D(random_stack_bytes),
	D(stack_area_py_count), D(stack_area_py_thread), D(stack_area_py_native), D(stack_area_py_string),
	D(stack_area_py_site_unsorted), D(stack_area_py_call_depth), D(stack_area_py_call_count),
	D(stack_area_py_overlap),
#undef D
};

static unsigned long long number(const char *opt, const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 0);
	if (end == s || *end) {
		fprintf(stderr, "mkseg: %s wants a number, not '%s'\n", opt, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "comms", required_argument, NULL, 'c' },   { "comm-cap", required_argument, NULL, 'C' },
		{ "peers", required_argument, NULL, 'p' },   { "peer-cap", required_argument, NULL, 'P' },
		{ "ring", required_argument, NULL, 'r' },    { "records", required_argument, NULL, 'n' },
		{ "stack", required_argument, NULL, 's' },   { "tear", required_argument, NULL, 't' },
		{ "unpublish", required_argument, NULL, 'u' }, { "stopped", required_argument, NULL, 'S' },
		{ "newer-minor", no_argument, NULL, 'm' },   { "corrupt", required_argument, NULL, 'x' },
		{ "seed", required_argument, NULL, 'z' },    { "comm-name", required_argument, NULL, 'N' },
		{ "taint", required_argument, NULL, 'T' },
		{ "list-defects", no_argument, NULL, 'l' },  { "v11", no_argument, NULL, 'v' },
		{ "stacks", no_argument, NULL, 'k' },        { "no-opstacks", no_argument, NULL, 'K' },
		{ "reserved-junk", no_argument, NULL, 'J' }, { "writing", required_argument, NULL, 'w' },
		{ "held", required_argument, NULL, 'H' },   { "python", no_argument, NULL, 'y' },
		{ "v2", no_argument, NULL, '2' },            { "comm-writing", required_argument, NULL, 'W' },
		{ NULL, 0, NULL, 0 },
	};
	struct segw_spec spec = { .comm_capacity = 4, .comms = 2, .peer_capacity = 8, .peers = 2,
	                          .ring_capacity = 16, .records = 10 };
	uint64_t tear[64], unpub[64], writing[64], held[64];
	size_t n_tear = 0, n_unpub = 0, n_writing = 0, n_held = 0;
	const char *stopped = NULL, *corrupt = NULL, *comm_name = NULL;
	unsigned seed = 1;
	int c, no_opstacks = 0, reserved_junk = 0;
	long long comm_writing = -1;
	while ((c = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (c) {
		case 'c': spec.comms = (uint32_t)number("--comms", optarg); break;
		case 'C': spec.comm_capacity = (uint32_t)number("--comm-cap", optarg); break;
		case 'p': spec.peers = (uint32_t)number("--peers", optarg); break;
		case 'P': spec.peer_capacity = (uint32_t)number("--peer-cap", optarg); break;
		case 'r': spec.ring_capacity = (uint32_t)number("--ring", optarg); break;
		case 'n': spec.records = number("--records", optarg); break;
		case 's': spec.stack_size = number("--stack", optarg); break;
		case 't': if (n_tear < 64) tear[n_tear++] = number("--tear", optarg); break;
		case 'u': if (n_unpub < 64) unpub[n_unpub++] = number("--unpublish", optarg); break;
		case 'w': if (n_writing < 64) writing[n_writing++] = number("--writing", optarg); break;
		case 'H': if (n_held < 64) held[n_held++] = number("--held", optarg); break;
		case 'S': stopped = optarg; break;
		case 'N': comm_name = optarg; break;
		case 'T': spec.taint = optarg; break;
		case 'm': spec.version_major = NW_SEG_VERSION_MAJOR; spec.version_minor = NW_SEG_VERSION_MINOR + 1;
		          spec.header_extra = 128; spec.record_extra = 64; spec.v11 = 1; break;
		case '2': spec.version_major = 2; spec.version_minor = 0; spec.v11 = 1; break;
		case 'W': comm_writing = (long long)number("--comm-writing", optarg); break;
		case 'v': spec.v11 = 1; break;
		case 'k': spec.stacks = 1; break;
		case 'y': spec.stacks = spec.python = 1; break;
		case 'K': no_opstacks = 1; break;
		case 'J': reserved_junk = 1; break;
		case 'x': corrupt = optarg; break;
		case 'z': seed = (unsigned)number("--seed", optarg); break;
		case 'l':
			for (size_t i = 0; i < sizeof defects / sizeof defects[0]; i++)
				puts(defects[i].name);
			return 0;
		default: return 2;
		}
	}
	if (corrupt && (strncmp(corrupt, "stack_area_", 11) == 0 || strncmp(corrupt, "random_stack_", 13) == 0))
		spec.stacks = 1;
	if (spec.stacks) {
		spec.v11 = 1;
		spec.opstacks = !no_opstacks;
	}
	if (corrupt && strncmp(corrupt, "stack_area_py_", 14) == 0)
		spec.python = 1;
	/* A 1.x file is of the minor its features need (2.x has them all). */
	if (spec.v11 && spec.version_major < 2 && spec.version_minor < 1)
		spec.version_minor = 1;
	if (spec.python && spec.version_major < 2 && spec.version_minor < 4)   /* the Python tables: 1.4 */
		spec.version_minor = 4;
	if (n_held && spec.version_major < 2 && spec.version_minor < 3) {   /* updaters in commit: 1.3 */
		spec.v11 = 1;
		spec.version_minor = 3;
	}
	if (optind != argc - 1 || spec.comms > spec.comm_capacity || spec.peers > spec.peer_capacity ||
	    spec.ring_capacity == 0 || (spec.ring_capacity & (spec.ring_capacity - 1))) {
		fprintf(stderr, "usage: mkseg [options] OUT (see the comment in tests/report/mkseg.c)\n");
		return 2;
	}

	uint64_t len = segw_size(&spec);
	char *mem = calloc(1, len);
	if (!mem)
		return 1;
	struct nw_seg_header *h = (struct nw_seg_header *)mem;
	segw_build(mem, &spec);
	for (size_t i = 0; i < n_tear; i++) {
		struct nw_seg_op *op = segw_op_slot(mem, tear[i]);
		op->commit = tear[i] + 2;
		op->count = 0xbadbad;
	}
	for (size_t i = 0; i < n_unpub; i++) {
		struct nw_seg_op *op = segw_op_slot(mem, unpub[i]);
		op->commit = 0;
		op->count = 0xbadbad;
	}
	for (size_t i = 0; i < n_writing; i++) {
		struct nw_seg_op *op = segw_op_slot(mem, writing[i]);
		op->commit = NW_SEG_COMMIT_WRITING | writing[i];
		op->count = 0xbadbad;
	}
	for (size_t i = 0; i < n_held; i++)
		segw_op_slot(mem, held[i])->commit = (held[i] + 1) | 2 * NW_SEG_COMMIT_UPDATER;
	if (stopped) {
		h->flags |= NW_SEG_F_STOPPED;
		snprintf(h->error, sizeof h->error, "%s", stopped);
	}
	if (comm_writing >= 0 && (uint64_t)comm_writing < spec.comms) {
		struct nw_seg_comm *cw = (struct nw_seg_comm *)(mem + h->comm_offset + comm_writing * h->comm_record_size);
		cw->gen = NW_COMM_GEN_WRITING | 1;
	}
	if (comm_name && spec.comms) {
		struct nw_seg_comm *c0 = (struct nw_seg_comm *)(mem + h->comm_offset);
		snprintf(c0->name, sizeof c0->name, "%s", comm_name);
	}
	if (reserved_junk) {
		size_t from = h->version_major < 2 && h->version_minor == 0 ? offsetof(struct nw_seg_header, tracking)
		            : h->version_major < 2 ? offsetof(struct nw_seg_header, threads_dropped)
		                               : offsetof(struct nw_seg_header, reserved);
		memset(mem + from, 0xa5, sizeof *h - from);
	}
	if (corrupt) {
		size_t i = 0;
		for (; i < sizeof defects / sizeof defects[0]; i++)
			if (strcmp(defects[i].name, corrupt) == 0)
				break;
		if (i == sizeof defects / sizeof defects[0]) {
			fprintf(stderr, "mkseg: unknown defect '%s' (--list-defects)\n", corrupt);
			return 2;
		}
		defects[i].apply(h, mem, &len, seed);
	}

	FILE *f = fopen(argv[optind], "wb");
	if (!f || fwrite(mem, 1, len, f) != len || fclose(f) != 0) {
		perror(argv[optind]);
		return 1;
	}
	free(mem);
	return 0;
}
