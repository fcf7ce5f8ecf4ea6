/* frameclass: which frames of a stack mean "inside NCCL or waiting on the
 * GPU" (docs/diagnosis.md, "Verdicts from stacks alone", has the table).
 *
 * A frame is the engine's text of it (load.c): a native symbol as the
 * capture found it (dladdr: C++ names are mangled), "MODULE+0xOFF" when
 * only its module is known, or a Python frame "FUNCTION (FILE:LINE)". The
 * rules match the name whatever its source: a C++ scope is matched in its
 * plain and in its mangled form ("c10d::ProcessGroupNCCL::" is also
 * "4c10d16ProcessGroupNCCL" inside an "_Z" name), a Python function only
 * with the file it comes from (an all_reduce of torch.distributed, not any
 * all_reduce). */
#include "model.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

enum how {
	PREFIX,       /* the name starts with the pattern */
	SCOPE,        /* a C++ qualified prefix "a::b::" or name "a::b::f", plain or mangled */
	SUBSTR,       /* the name contains the pattern */
	PYTHON,       /* a Python frame: the function is the pattern, its file contains `file` */
};

struct rule {
	const char *pattern;
	uint8_t how;
	uint8_t cls;                    /* enum nw_frame_class */
	const char *file;               /* PYTHON only */
};

/* Keep in step with docs/diagnosis.md. */
static const struct rule rules[] = {
	/* NCCL itself: its API (and the preload's wrappers of it), its
	 * profiling names, a frame in libnccl with no symbol. */
	{ "nccl", PREFIX, NW_FC_NCCL, NULL },
	{ "pnccl", PREFIX, NW_FC_NCCL, NULL },
	{ "libnccl", PREFIX, NW_FC_NCCL, NULL },
	/* The host waiting for the GPU. */
	{ "cuStreamSynchronize", PREFIX, NW_FC_GPU, NULL },
	{ "cudaStreamSynchronize", PREFIX, NW_FC_GPU, NULL },
	{ "cuEventSynchronize", PREFIX, NW_FC_GPU, NULL },
	{ "cudaEventSynchronize", PREFIX, NW_FC_GPU, NULL },
	{ "cuCtxSynchronize", PREFIX, NW_FC_GPU, NULL },
	{ "cudaDeviceSynchronize", PREFIX, NW_FC_GPU, NULL },
	/* Frameworks waiting for their NCCL work. */
	{ "c10d::ProcessGroupNCCL::", SCOPE, NW_FC_FRAMEWORK, NULL },
	{ "BlockHostUntilReady", SUBSTR, NW_FC_FRAMEWORK, NULL },
	{ "all_reduce", PYTHON, NW_FC_FRAMEWORK, "torch/distributed/,distributed_c10d.py" },
	{ "all_gather", PYTHON, NW_FC_FRAMEWORK, "torch/distributed/,distributed_c10d.py" },
	{ "all_gather_into_tensor", PYTHON, NW_FC_FRAMEWORK, "torch/distributed/,distributed_c10d.py" },
	{ "all_gather_object", PYTHON, NW_FC_FRAMEWORK, "torch/distributed/,distributed_c10d.py" },
	{ "reduce_scatter", PYTHON, NW_FC_FRAMEWORK, "torch/distributed/,distributed_c10d.py" },
	{ "reduce_scatter_tensor", PYTHON, NW_FC_FRAMEWORK, "torch/distributed/,distributed_c10d.py" },
	{ "broadcast", PYTHON, NW_FC_FRAMEWORK, "torch/distributed/,distributed_c10d.py" },
	{ "broadcast_object_list", PYTHON, NW_FC_FRAMEWORK, "torch/distributed/,distributed_c10d.py" },
	{ "reduce", PYTHON, NW_FC_FRAMEWORK, "torch/distributed/,distributed_c10d.py" },
	{ "all_to_all", PYTHON, NW_FC_FRAMEWORK, "torch/distributed/,distributed_c10d.py" },
	{ "all_to_all_single", PYTHON, NW_FC_FRAMEWORK, "torch/distributed/,distributed_c10d.py" },
	{ "gather", PYTHON, NW_FC_FRAMEWORK, "torch/distributed/,distributed_c10d.py" },
	{ "scatter", PYTHON, NW_FC_FRAMEWORK, "torch/distributed/,distributed_c10d.py" },
	{ "send", PYTHON, NW_FC_FRAMEWORK, "torch/distributed/,distributed_c10d.py" },
	{ "recv", PYTHON, NW_FC_FRAMEWORK, "torch/distributed/,distributed_c10d.py" },
	{ "barrier", PYTHON, NW_FC_FRAMEWORK, "torch/distributed/,distributed_c10d.py" },
	{ "monitored_barrier", PYTHON, NW_FC_FRAMEWORK, "torch/distributed/,distributed_c10d.py" },
	{ "wait", PYTHON, NW_FC_FRAMEWORK, "torch/distributed/,distributed_c10d.py" },
	{ "synchronize", PYTHON, NW_FC_GPU, "torch/cuda/" },
	{ "block_until_ready", PYTHON, NW_FC_FRAMEWORK, "jax/,array.py,api.py" },
};

/* "4c10d16ProcessGroupNCCL" for "c10d::ProcessGroupNCCL::" (the
 * Itanium ABI's length-prefixed names); 0 if it does not fit. */
static int mangled(const char *scope, char *out, size_t len)
{
	size_t at = 0;
	const char *p = scope;
	while (*p) {
		const char *end = strstr(p, "::");
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n) {
			int w = snprintf(out + at, len - at, "%zu%.*s", n, (int)n, p);
			if (w < 0 || (size_t)w >= len - at)
				return 0;
			at += (size_t)w;
		}
		p += n + (end ? 2 : 0);
	}
	return at > 0;
}

/* A Python frame "FUNCTION (FILE:LINE)": the function's length and the
 * file's start and length; 0 if the text is not one. */
static int python_frame(const char *f, size_t *fn, const char **file, size_t *fl)
{
	size_t n = strlen(f);
	const char *open = strstr(f, " (");
	if (!open || n < 4 || f[n - 1] != ')')
		return 0;
	for (const char *o = open; (o = strstr(o + 1, " (")) != NULL;)
		open = o;                       /* the last " (" */
	*fn = (size_t)(open - f);
	*file = open + 2;
	*fl = (size_t)(f + n - 1 - *file);
	return *fn > 0;
}

/* The frame's file (FILE:LINE, or a base name only, as stacks print them)
 * is one of `files`: "dir/,name.py,..." (a directory part, or the base
 * name of one of the modules). */
static int in_file(const char *file, size_t fl, const char *files)
{
	const char *colon = memrchr(file, ':', fl);
	size_t plen = colon ? (size_t)(colon - file) : fl;         /* without ":LINE" */
	const char *slash = memrchr(file, '/', plen);
	const char *base = slash ? slash + 1 : file;
	size_t blen = plen - (size_t)(base - file);
	for (const char *p = files; *p;) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		if (n && p[n - 1] == '/' ? memmem(file, plen, p, n) != NULL
		                         : n == blen && !memcmp(base, p, n))
			return 1;
		p += n + (comma ? 1 : 0);
	}
	return 0;
}

int nw_frame_class(const char *f)
{
	size_t fn = 0, fl = 0;
	const char *file = NULL;
	int py = python_frame(f, &fn, &file, &fl);
	for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
		const struct rule *r = &rules[i];
		switch (r->how) {
		case PREFIX:
			if (!py && !strncmp(f, r->pattern, strlen(r->pattern)))
				return r->cls;
			break;
		case SUBSTR:
			if (!py && strstr(f, r->pattern))
				return r->cls;
			break;
		case SCOPE: {
			char m[160];
			if (!py && (!strncmp(f, r->pattern, strlen(r->pattern)) ||
			            (!strncmp(f, "_Z", 2) && mangled(r->pattern, m, sizeof m) && strstr(f, m))))
				return r->cls;
			break;
		}
		case PYTHON:
			if (py && fn == strlen(r->pattern) && !strncmp(f, r->pattern, fn) && in_file(file, fl, r->file))
				return r->cls;
			break;
		}
	}
	return NW_FC_OTHER;
}

int nw_stack_waits(const struct nw_thread_stack *t, const char **entry)
{
	char **f = t->wait_frames ? t->wait_frames : t->frames;
	uint32_t n = t->wait_frames ? t->nwait_frames : t->nframes;
	/* The outermost frame that matches: the call the program made
	 * (all_reduce, WorkNCCL::wait, ncclAllReduce), not NCCL's insides. */
	for (uint32_t i = n; i-- > 0;) {
		int c = nw_frame_class(f[i]);
		if (c != NW_FC_OTHER) {
			if (entry)
				*entry = f[i];
			return c;
		}
	}
	if (t->flags & NW_THR_IN_NCCL) {      /* the preload said so, whatever the names */
		if (entry)
			*entry = n ? f[0] : "?";
		return NW_FC_NCCL;
	}
	return NW_FC_OTHER;
}

int nw_entry_calls(const char *entry, uint16_t op)
{
	char kb[NW_NAME_BUF];
	const char *k = nw_op_kind_name(op, kb);
	size_t n = strlen(k);
	if (!entry || strncmp(entry, "nccl", 4))
		return 0;
	if (op == NW_OP_BROADCAST && !strncmp(entry + 4, "Bcast", 5) && !isalnum((unsigned char)entry[9]))
		return 1;
	return !strncmp(entry + 4, k, n) && !isalnum((unsigned char)entry[4 + n]);
}
