/* test-cli-render: the renderers (report/words/) on an analysis filled by
 * hand, so that their output formats are pinned whatever the engine finds.
 *
 * The fixture: job "train-42", 8 processes on two hosts, rank 5 never
 * issued AllReduce #23 of the world comm (MISSING_RANK, ranks 0-4,6-7 wait),
 * a TRANSPORT_STALL about a comm with no rank to blame, and an IDLE verdict
 * with 7 evidence lines (5 shown); NCCL_P2P_DISABLE
 * differs (one value holds a control byte and a byte that is not UTF-8);
 * two stack groups; rank 0 enqueued AllReduce #22 before #21 completed (two
 * lanes in the trace); rank 3 made a group call (an op of no communicator).
 * Job "solo": one process, HEALTHY, seven stack groups (five shown). One
 * unreadable file.
 *
 *   test-cli-render                    checks text (exact), status (exact),
 *                                      JSON and trace (parsed back)
 *   test-cli-render --json|--trace|--text|--status FILE   writes that output
 *                                      (tests/cli/test-cli-schema.sh validates it)
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../../report/words/words.h"

#define WORLD_COMM 0x4f2ac2b9efdeda6dull
#define S 1000000000ull          /* ns per second */

static int failures;

#define CHECK(cond, ...)                                                                   \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);    \
			fprintf(stderr, __VA_ARGS__);                                      \
			fputc('\n', stderr);                                               \
			failures++;                                                        \
		}                                                                          \
	} while (0)

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);
	if (!p) {
		perror("calloc");
		exit(2);
	}
	return p;
}

static void ranks(struct nw_rankset *s, const char *list)   /* "0-4,6-7" */
{
	const char *p = list;
	while (*p) {
		char *end;
		long a = strtol(p, &end, 10), b = a;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		for (long r = a; r <= b; r++)
			nw_rankset_add(s, (int32_t)r);
		p = *end == ',' ? end + 1 : end;
	}
}

static char **strv(size_t n, const char *const *v)
{
	char **out = xcalloc(n, sizeof *out);
	for (size_t i = 0; i < n; i++)
		out[i] = strdup(v[i]);
	return out;
}

static struct nw_seg_op op(uint16_t kind, uint64_t seq, uint32_t state, uint64_t enq, uint64_t start,
                           uint64_t end, int32_t rank)
{
	struct nw_seg_op o;
	memset(&o, 0, sizeof o);
	o.comm_id = WORLD_COMM;
	o.seq = seq;
	o.count = 1024;
	o.kind = kind;
	o.datatype = 7; /* ncclFloat32 */
	o.redop = 0;
	o.root = -1;
	o.rank = rank;
	o.nranks = 8;
	o.tid = 4000 + (uint32_t)rank;
	o.enqueue_ns = enq;
	o.start_ns = start;
	o.end_ns = end;
	o.state = state;
	return o;
}

static struct nw_proc *make_proc(int32_t rank, const char *host, int64_t pid, uint64_t t0)
{
	struct nw_proc *p = xcalloc(1, sizeof *p);
	char path[128];
	snprintf(path, sizeof path, "/dev/shm/ncclwatch-0/train-42/%s.%" PRId64 ".seg", host, pid);
	p->path = strdup(path);
	p->alive = rank == 7 ? 0 : 1;
	p->rank = rank;
	p->hdr.pid = pid;
	p->hdr.global_rank = rank;
	p->hdr.world_size = 8;
	p->hdr.start_monotonic_ns = t0;
	snprintf(p->hdr.host, sizeof p->hdr.host, "%s", host);
	snprintf(p->hdr.job, sizeof p->hdr.job, "train-42");
	p->now_ns = t0 + 100 * S;
	p->ncomms = 1;
	p->comms = xcalloc(1, sizeof *p->comms);
	p->comms[0].comm_id = WORLD_COMM;
	p->comms[0].rank = rank;
	p->comms[0].nranks = 8;
	p->comms[0].state = NW_COMM_INIT_DONE;
	p->ops = xcalloc(6, sizeof *p->ops);
	p->ops[p->nops++] = op(NW_OP_COMM_INIT, 0, NW_ST_INIT_DONE, t0 + 1 * S, 0, t0 + 2 * S, rank);
	if (rank == 0) {
		/* #22 enqueued before #21 completed: overlapping slices, two lanes. */
		p->ops[p->nops++] = op(NW_OP_ALLREDUCE, 21, NW_ST_COMPLETED, t0 + 10 * S, t0 + 10 * S + 1000,
		                       t0 + 10 * S + 500000000, rank);
		p->ops[p->nops++] = op(NW_OP_ALLREDUCE, 22, NW_ST_COMPLETED, t0 + 10 * S + 200000000,
		                       t0 + 10 * S + 500000000, t0 + 11 * S, rank);
	} else {
		p->ops[p->nops++] = op(NW_OP_ALLREDUCE, 21, NW_ST_COMPLETED, t0 + 10 * S, t0 + 10 * S + 1000,
		                       t0 + 10 * S + 500000000, rank);
		p->ops[p->nops++] = op(NW_OP_ALLREDUCE, 22, NW_ST_COMPLETED, t0 + 10 * S + 600000000,
		                       t0 + 10 * S + 700000000, t0 + 11 * S, rank);
	}
	if (rank == 3) { /* a group call: an op about no communicator */
		p->ops[p->nops] = op(NW_OP_GROUP_END, 1, NW_ST_INIT_DONE, t0 + 3 * S, 0, t0 + 3 * S + 1000, rank);
		p->ops[p->nops++].comm_id = 0;
	}
	if (rank != 5)   /* rank 5 never calls #23 */
		p->ops[p->nops++] = op(NW_OP_ALLREDUCE, 23, NW_ST_STARTED, t0 + 25 * S, t0 + 25 * S + 1000, 0, rank);
	p->last_activity_ns = p->ops[p->nops - 1].enqueue_ns;
	return p;
}

static void make_job1(struct nw_job *job)
{
	job->name = strdup("train-42");
	job->nprocs = 8;
	job->procs = xcalloc(8, sizeof *job->procs);
	for (int r = 0; r < 8; r++)
		/* node-a's clock started 1000 s before node-b's: both start at 0 in the trace */
		job->procs[r] = make_proc(r, r < 4 ? "node-a" : "node-b", 1000 + r, r < 4 ? 5000 * S : 6000 * S);
	job->world_size = 8;
	job->timeout_s = 60;

	struct nw_comm_view *v = xcalloc(1, sizeof *v);
	v->id = WORLD_COMM;
	v->origin = NW_ORIGIN_INIT_RANK;
	v->nranks = 8;
	v->members = xcalloc(8, sizeof *v->members);
	for (int r = 0; r < 8; r++)
		v->members[r] = (struct nw_member){ job->procs[r], &job->procs[r]->comms[0] };
	HASH_ADD(hh, job->comms, id, sizeof v->id, v);

	job->nverdicts = 3;
	job->verdicts = xcalloc(3, sizeof *job->verdicts);
	struct nw_verdict *m = &job->verdicts[0];
	m->kind = NW_V_MISSING_RANK;
	m->comm_id = WORLD_COMM;
	m->comm_nranks = 8;
	m->op_kind = NW_OP_ALLREDUCE;
	m->seq = 23;
	ranks(&m->culprits, "5");
	ranks(&m->waiting, "0-4,6-7");
	m->summary = strdup("rank 5 never called AllReduce #23 on comm 4f2ac2b9efdeda6d (8 ranks); "
	                    "ranks 0-4,6-7 wait in it");
	static const char *const ev1[] = {
		"ranks 0-4,6-7: AllReduce #23 STARTED for 75.0s",
		"rank 5: last AllReduce #22 COMPLETED 89.0s ago, nothing pending",
	};
	m->nevidence = 2;
	m->evidence = strv(2, ev1);
	m->hint = nw_verdict_hint(NW_V_MISSING_RANK);

	struct nw_verdict *ts = &job->verdicts[1];   /* about a comm, not an op, no rank to blame */
	ts->kind = NW_V_TRANSPORT_STALL;
	ts->comm_id = 0x1122334455667788ull;
	ts->comm_nranks = 2;
	ranks(&ts->waiting, "0,4");
	ts->summary = strdup("both ranks of comm 1122334455667788 started #3, none completed");
	ts->hint = "try NCCL_P2P_DISABLE=1";

	struct nw_verdict *idle = &job->verdicts[2];
	idle->kind = NW_V_IDLE;
	ranks(&idle->culprits, "5");
	ranks(&idle->waiting, "0-4,6-7");
	ranks(&idle->unknown, "8-9");
	idle->summary = strdup("rank 5 has been idle for 89.0s while 7 ranks wait");
	static const char *const ev2[] = { "line 1", "line 2", "line 3", "line 4",
		                           "line 5", "line 6", "line 7\twith a tab" };
	idle->nevidence = 7;
	idle->evidence = strv(7, ev2);
	idle->hint = "compile / data loading / checkpoint";

	job->ndiffs = 1;
	job->diffs = xcalloc(1, sizeof *job->diffs);
	struct nw_env_diff *d = &job->diffs[0];
	d->name = strdup("NCCL_P2P_DISABLE");
	d->nvalues = 3;
	d->values = xcalloc(3, sizeof *d->values);
	d->values[0].value = strdup("1");
	ranks(&d->values[0].ranks, "0-3");
	static const char *const hosts_a[] = { "node-a" };
	d->values[0].hosts = strv(1, hosts_a);
	d->values[0].nhosts = 1;
	d->values[1].value = strdup("");
	ranks(&d->values[1].ranks, "4-6");
	static const char *const hosts_b[] = { "node-b" };
	d->values[1].hosts = strv(1, hosts_b);
	d->values[1].nhosts = 1;
	d->values[2].value = strdup("0\x1b[31m\xff\xc2\x9b\xc3\xa9");
	ranks(&d->values[2].ranks, "7");
	d->values[2].hosts = strv(1, hosts_b);
	d->values[2].nhosts = 1;

	job->nstacks = 2;
	job->stacks = xcalloc(2, sizeof *job->stacks);
	static const char *const f1[] = { "cuStreamSynchronize", "run_rank", "main", "__libc_start_main" };
	static const char *const f2[] = { "clock_nanosleep", "nanosleep", "idle_forever", "run_rank", "main" };
	ranks(&job->stacks[0].ranks, "0-4,6-7");
	job->stacks[0].thread_name = strdup("trainer");
	job->stacks[0].nframes = 4;
	job->stacks[0].frames = strv(4, f1);
	ranks(&job->stacks[1].ranks, "5");
	job->stacks[1].thread_name = strdup("trainer");
	job->stacks[1].nframes = 5;
	job->stacks[1].frames = strv(5, f2);
}

static void make_job2(struct nw_job *job)
{
	job->name = strdup("solo");
	job->nprocs = 1;
	job->procs = xcalloc(1, sizeof *job->procs);
	struct nw_proc *p = xcalloc(1, sizeof *p);
	p->path = strdup("/tmp/solo/host-c.77.rank-.dump.seg");
	p->is_dump = 1;
	p->alive = -1;
	p->rank = -1;
	p->hdr.pid = 77;
	p->hdr.global_rank = -1;
	p->hdr.world_size = -1;
	snprintf(p->hdr.host, sizeof p->hdr.host, "host c");
	job->procs[0] = p;
	job->world_size = -1;
	job->timeout_s = 2.5;
	job->nverdicts = 1;
	job->verdicts = xcalloc(1, sizeof *job->verdicts);
	job->verdicts[0].kind = NW_V_HEALTHY;
	job->verdicts[0].summary = strdup("every rank completed every op it issued");
	job->verdicts[0].hint = "";
	job->nstacks = 7;
	job->stacks = xcalloc(7, sizeof *job->stacks);
	for (int i = 0; i < 7; i++) {
		char f[32];
		snprintf(f, sizeof f, "frame_%d", i);
		const char *fv[] = { f };
		nw_rankset_add(&job->stacks[i].ranks, 0);
		job->stacks[i].thread_name = strdup(i ? "worker" : "main");
		job->stacks[i].nframes = i == 6 ? 0 : 1;
		job->stacks[i].frames = strv(job->stacks[i].nframes, fv);
	}
}

static void make_analysis(struct nw_analysis *a)
{
	memset(a, 0, sizeof *a);
	a->njobs = 2;
	a->jobs = xcalloc(2, sizeof *a->jobs);
	make_job1(&a->jobs[0]);
	make_job2(&a->jobs[1]);
	a->nbad = 1;
	a->bad = xcalloc(1, sizeof *a->bad);
	a->bad[0].path = strdup("/dev/shm/ncclwatch-0/train-42/bad.seg");
	a->bad[0].err.code = NW_READ_ERR_FORMAT;
	snprintf(a->bad[0].err.message, sizeof a->bad[0].err.message,
	         "/dev/shm/ncclwatch-0/train-42/bad.seg: truncated: 100 bytes, a header needs 8192");
	a->nread = 10;
}

/* Frees what make_analysis allocated (the engine's nw_analysis_free is not
 * ours to call on a hand-made analysis). */
static void free_analysis(struct nw_analysis *a)
{
	for (size_t j = 0; j < a->njobs; j++) {
		struct nw_job *job = &a->jobs[j];
		for (size_t i = 0; i < job->nprocs; i++) {
			struct nw_proc *p = job->procs[i];
			free(p->path);
			free(p->comms);
			free(p->ops);
			free(p);
		}
		free(job->procs);
		struct nw_comm_view *v, *tmp;
		HASH_ITER(hh, job->comms, v, tmp) {
			HASH_DEL(job->comms, v);
			free(v->members);
			free(v);
		}
		for (size_t i = 0; i < job->nverdicts; i++) {
			struct nw_verdict *vd = &job->verdicts[i];
			nw_rankset_free(&vd->culprits);
			nw_rankset_free(&vd->waiting);
			nw_rankset_free(&vd->unknown);
			free(vd->summary);
			for (size_t k = 0; k < vd->nevidence; k++)
				free(vd->evidence[k]);
			free(vd->evidence);
		}
		free(job->verdicts);
		for (size_t i = 0; i < job->ndiffs; i++) {
			struct nw_env_diff *d = &job->diffs[i];
			for (size_t k = 0; k < d->nvalues; k++) {
				free(d->values[k].value);
				nw_rankset_free(&d->values[k].ranks);
				for (size_t h = 0; h < d->values[k].nhosts; h++)
					free(d->values[k].hosts[h]);
				free(d->values[k].hosts);
			}
			free(d->values);
			free(d->name);
		}
		free(job->diffs);
		for (size_t i = 0; i < job->nstacks; i++) {
			struct nw_stack_group *g = &job->stacks[i];
			nw_rankset_free(&g->ranks);
			free(g->thread_name);
			for (uint32_t k = 0; k < g->nframes; k++)
				free(g->frames[k]);
			free(g->frames);
		}
		free(job->stacks);
		nw_rankset_free(&job->missing);
		free(job->name);
	}
	free(a->jobs);
	for (size_t i = 0; i < a->nbad; i++)
		free(a->bad[i].path);
	free(a->bad);
}

typedef int (*render_fn)(FILE *out, const struct nw_analysis *a, unsigned flags);

static int json_adapter(FILE *out, const struct nw_analysis *a, unsigned flags)
{
	(void)flags;
	return nw_render_json(out, a);
}

static int trace_adapter(FILE *out, const struct nw_analysis *a, unsigned flags)
{
	(void)flags;
	return nw_render_trace(out, a);
}

static char *render(render_fn fn, const struct nw_analysis *a, unsigned flags)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f) {
		perror("open_memstream");
		exit(2);
	}
	CHECK(fn(f, a, flags) == 0, "renderer failed: %s", strerror(errno));
	fclose(f);
	return buf;
}

static void expect_text(const char *what, const char *got, const char *want)
{
	if (strcmp(got, want) == 0)
		return;
	size_t i = 0;
	while (got[i] && got[i] == want[i])
		i++;
	fprintf(stderr, "FAIL: %s differs at byte %zu\n--- expected:\n%s--- got:\n%s---\n", what, i, want, got);
	failures++;
}

static const char *const want_text =
	"job train-42: 8 processes read, world size 8, ranks missing: none, timeout 60s\n"
	"MISSING_RANK: rank 5 never called AllReduce #23 on comm 4f2ac2b9efdeda6d (8 ranks); ranks 0-4,6-7 wait in it\n"
	"  op: AllReduce #23 on comm 4f2ac2b9efdeda6d (8 ranks)\n"
	"  culprits: 5\n"
	"  waiting: 0-4,6-7\n"
	"  evidence:\n"
	"    ranks 0-4,6-7: AllReduce #23 STARTED for 75.0s\n"
	"    rank 5: last AllReduce #22 COMPLETED 89.0s ago, nothing pending\n"
	"  hint: the code path differs on those ranks\n"
	"TRANSPORT_STALL: both ranks of comm 1122334455667788 started #3, none completed\n"
	"  comm: 1122334455667788 (2 ranks)\n"
	"  culprits: - (the communicator or its link, not a rank)\n"
	"  waiting: 0,4\n"
	"  hint: try NCCL_P2P_DISABLE=1\n"
	"IDLE: rank 5 has been idle for 89.0s while 7 ranks wait\n"
	"  culprits: 5\n"
	"  waiting: 0-4,6-7\n"
	"  unknown: 8-9 (no file)\n"
	"  evidence:\n"
	"    line 1\n"
	"    line 2\n"
	"    line 3\n"
	"    line 4\n"
	"    line 5\n"
	"    ... 2 more evidence lines (--verbose shows all)\n"
	"  hint: compile / data loading / checkpoint\n"
	"environment differences:\n"
	"  NCCL_P2P_DISABLE:\n"
	"    1  ranks 0-3 (host node-a)\n"
	"    (unset)  ranks 4-6 (host node-b)\n"
	"    0\\x1b[31m\\xff\\xc2\\x9b\xc3\xa9  rank 7 (host node-b)\n"
	"stacks (first thread of each process, 2 groups):\n"
	"  ranks 0-4,6-7 (7) thread \"trainer\":\n"
	"    #0 cuStreamSynchronize\n"
	"    #1 run_rank\n"
	"    #2 main\n"
	"    #3 __libc_start_main\n"
	"  rank 5 (1) thread \"trainer\":\n"
	"    #0 clock_nanosleep\n"
	"    #1 nanosleep\n"
	"    #2 idle_forever\n"
	"    #3 run_rank\n"
	"    #4 main\n"
	"\n"
	"job solo: 1 process read, world size unknown, ranks missing: none, timeout 2.5s\n"
	"HEALTHY: every rank completed every op it issued\n"
	"environment differences: none\n"
	"stacks (first thread of each process, 7 groups):\n"
	"  rank 0 (1) thread \"main\":\n"
	"    #0 frame_0\n"
	"  rank 0 (1) thread \"worker\":\n"
	"    #0 frame_1\n"
	"  rank 0 (1) thread \"worker\":\n"
	"    #0 frame_2\n"
	"  rank 0 (1) thread \"worker\":\n"
	"    #0 frame_3\n"
	"  rank 0 (1) thread \"worker\":\n"
	"    #0 frame_4\n"
	"  ... 2 more stack groups (--verbose shows all)\n"
	"\n"
	"unreadable: /dev/shm/ncclwatch-0/train-42/bad.seg: truncated: 100 bytes, a header needs 8192\n";

static const char *const want_status =
	"# 2 jobs: 0 live, 1 hung, 0 stale, 1 unknown\n"
	"# host pid rank comms last state age alive\n"
	"# job train-42: 8 processes, world size 8, ranks missing: none; hung (7 alive, 1 dead; rank 0 pid 1000 "
	"AllReduce#23 STARTED for 75.0s, timeout 60s)\n"
	"node-a 1000 0 comms=1 last=AllReduce#23@4f2ac2b9efdeda6d state=STARTED age=75.0s alive\n"
	"node-a 1001 1 comms=1 last=AllReduce#23@4f2ac2b9efdeda6d state=STARTED age=75.0s alive\n"
	"node-a 1002 2 comms=1 last=AllReduce#23@4f2ac2b9efdeda6d state=STARTED age=75.0s alive\n"
	"node-a 1003 3 comms=1 last=AllReduce#23@4f2ac2b9efdeda6d state=STARTED age=75.0s alive\n"
	"node-b 1004 4 comms=1 last=AllReduce#23@4f2ac2b9efdeda6d state=STARTED age=75.0s alive\n"
	"node-b 1005 5 comms=1 last=AllReduce#22@4f2ac2b9efdeda6d state=COMPLETED age=89.4s alive\n"
	"node-b 1006 6 comms=1 last=AllReduce#23@4f2ac2b9efdeda6d state=STARTED age=75.0s alive\n"
	"node-b 1007 7 comms=1 last=AllReduce#23@4f2ac2b9efdeda6d state=STARTED age=75.0s dead\n"
	"# job solo: 1 process, world size unknown, ranks missing: none; unknown (1 on other hosts)\n"
	"host\\x20c 77 - comms=0 last=- state=- age=- ?\n"
	"# unreadable: /dev/shm/ncclwatch-0/train-42/bad.seg: truncated: 100 bytes, a header needs 8192\n";

static void check_text(const struct nw_analysis *a)
{
	char *t = render(nw_render_text, a, 0);
	expect_text("text", t, want_text);
	free(t);

	/* Verbose: every evidence line and stack group. */
	t = render(nw_render_text, a, NW_RENDER_VERBOSE);
	CHECK(strstr(t, "    line 7\\x09with a tab\n") != NULL, "verbose text lacks evidence line 7");
	CHECK(strstr(t, "    #0 frame_5\n") != NULL, "verbose text lacks stack group 6");
	CHECK(strstr(t, "  rank 0 (1) thread \"worker\":\n    (no frames)\n") != NULL, "no '(no frames)'");
	CHECK(strstr(t, "more") == NULL, "verbose text leaves something out");
	free(t);

	/* Colour: the verdict names only, red for problems, green for HEALTHY. */
	t = render(nw_render_text, a, NW_RENDER_COLOR);
	CHECK(strstr(t, "\033[1;31mMISSING_RANK\033[0m: rank 5") != NULL, "MISSING_RANK not red");
	CHECK(strstr(t, "\033[1;32mHEALTHY\033[0m: every") != NULL, "HEALTHY not green");
	CHECK(strstr(t, "\\x1b[31m") != NULL, "an escape from a segment reached the terminal");
	free(t);
}

static void check_status(const struct nw_analysis *a)
{
	char *t = render(nw_render_status, a, 0);
	expect_text("status", t, want_status);
	free(t);
}

static json_t *parse(const char *what, const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);
	CHECK(j != NULL, "%s is not JSON: line %d: %s", what, e.line, e.text);
	return j;
}

static int rank_list_is(json_t *arr, const char *want)   /* "5" or "0,1,2" */
{
	char buf[256] = "";
	size_t i;
	json_t *v;
	json_array_foreach(arr, i, v) {
		size_t l = strlen(buf);
		snprintf(buf + l, sizeof buf - l, "%s%" JSON_INTEGER_FORMAT, i ? "," : "", json_integer_value(v));
	}
	return strcmp(buf, want) == 0;
}

static void check_json(const struct nw_analysis *a)
{
	char *t = render(json_adapter, a, 0);
	CHECK(strchr(t, '\n') == t + strlen(t) - 1, "the JSON document is not one line");
	/* jansson writes DEL and C1 as they are; nw_json_dumpf escapes them */
	CHECK(strstr(t, "\\u001B[31m\xef\xbf\xbd\\u009b\xc3\xa9") != NULL, "ESC, CSI (C1) not escaped in the JSON text");
	CHECK(!strstr(t, "\xc2\x9b"), "a raw C1 control in the JSON text");
	json_t *doc = parse("json", t);
	free(t);
	if (!doc)
		return;
	CHECK(!strcmp(json_string_value(json_object_get(doc, "schema")), "ncclwatch.diagnose"), "schema");
	CHECK(json_integer_value(json_object_get(doc, "version")) == 1, "version");
	CHECK(!strcmp(json_string_value(json_object_get(doc, "worst")), "MISSING_RANK"), "worst");
	CHECK(json_integer_value(json_object_get(doc, "files_read")) == 10, "files_read");
	json_t *jobs = json_object_get(doc, "jobs");
	CHECK(json_array_size(jobs) == 2, "2 jobs");
	json_t *job = json_array_get(jobs, 0);
	CHECK(!strcmp(json_string_value(json_object_get(job, "name")), "train-42"), "job name");
	CHECK(json_integer_value(json_object_get(job, "process_count")) == 8, "process_count");
	CHECK(json_integer_value(json_object_get(job, "world_size")) == 8, "world_size");
	CHECK(json_real_value(json_object_get(job, "timeout_s")) == 60.0, "timeout_s");
	json_t *v = json_array_get(json_object_get(job, "verdicts"), 0);
	CHECK(!strcmp(json_string_value(json_object_get(v, "kind")), "MISSING_RANK"), "kind");
	CHECK(!strcmp(json_string_value(json_object_get(v, "comm")), "4f2ac2b9efdeda6d"), "comm");
	CHECK(json_integer_value(json_object_get(v, "comm_nranks")) == 8, "comm_nranks");
	CHECK(!strcmp(json_string_value(json_object_get(v, "op")), "AllReduce"), "op");
	CHECK(json_integer_value(json_object_get(v, "seq")) == 23, "seq");
	CHECK(rank_list_is(json_object_get(v, "culprits"), "5"), "culprits");
	CHECK(rank_list_is(json_object_get(v, "waiting"), "0,1,2,3,4,6,7"), "waiting");
	CHECK(rank_list_is(json_object_get(v, "unknown"), ""), "unknown");
	CHECK(json_array_size(json_object_get(v, "evidence")) == 2, "evidence");
	CHECK(!strcmp(json_string_value(json_object_get(v, "hint")), "the code path differs on those ranks"), "hint");
	v = json_array_get(json_object_get(job, "verdicts"), 1);
	CHECK(!strcmp(json_string_value(json_object_get(v, "comm")), "1122334455667788"), "comm only");
	CHECK(json_is_null(json_object_get(v, "op")) && json_is_null(json_object_get(v, "seq")), "no op: null");
	CHECK(rank_list_is(json_object_get(v, "culprits"), ""), "no culprit: []");
	v = json_array_get(json_object_get(job, "verdicts"), 2);
	CHECK(json_array_size(json_object_get(v, "evidence")) == 7, "all evidence lines in JSON");
	CHECK(json_is_null(json_object_get(v, "comm")) && json_is_null(json_object_get(v, "op"))
	          && json_is_null(json_object_get(v, "seq")),
	      "no comm/op/seq: null");
	json_t *d = json_array_get(json_object_get(job, "env_diffs"), 0);
	CHECK(!strcmp(json_string_value(json_object_get(d, "name")), "NCCL_P2P_DISABLE"), "env name");
	json_t *vals = json_object_get(d, "values");
	CHECK(json_array_size(vals) == 3, "3 values");
	CHECK(!strcmp(json_string_value(json_object_get(json_array_get(vals, 1), "value")), ""), "unset is \"\"");
	CHECK(!strcmp(json_string_value(json_object_get(json_array_get(vals, 2), "value")), "0\x1b[31m\xef\xbf\xbd\xc2\x9b\xc3\xa9"),
	      "invalid UTF-8 replaced by U+FFFD, control byte kept (escaped by jansson)");
	CHECK(rank_list_is(json_object_get(json_array_get(vals, 0), "ranks"), "0,1,2,3"), "value ranks");
	json_t *st = json_array_get(json_object_get(job, "stacks"), 1);
	CHECK(!strcmp(json_string_value(json_object_get(st, "thread")), "trainer"), "stack thread");
	CHECK(json_array_size(json_object_get(st, "frames")) == 5, "stack frames");
	CHECK(!strcmp(json_string_value(json_array_get(json_object_get(st, "frames"), 2)), "idle_forever"), "frame 2");
	json_t *procs = json_object_get(job, "processes");
	CHECK(json_array_size(procs) == 8, "8 processes");
	json_t *p7 = json_array_get(procs, 7);
	CHECK(json_integer_value(json_object_get(p7, "rank")) == 7, "rank");
	CHECK(!strcmp(json_string_value(json_object_get(p7, "host")), "node-b"), "host");
	CHECK(json_integer_value(json_object_get(p7, "pid")) == 1007, "pid");
	CHECK(json_is_false(json_object_get(p7, "alive")), "alive false");
	CHECK(json_is_false(json_object_get(p7, "dump")), "dump false");
	json_t *solo = json_array_get(jobs, 1);
	json_t *sp = json_array_get(json_object_get(solo, "processes"), 0);
	CHECK(json_is_null(json_object_get(sp, "rank")) && json_is_null(json_object_get(sp, "alive"))
	          && json_is_true(json_object_get(sp, "dump")),
	      "unknown rank/alive: null; dump true");
	CHECK(json_is_null(json_object_get(solo, "world_size")), "unknown world size: null");
	CHECK(json_is_null(json_object_get(json_array_get(json_object_get(solo, "verdicts"), 0), "hint")),
	      "no hint: null");
	CHECK(json_array_size(json_object_get(solo, "stacks")) == 7, "every stack group in JSON");
	json_t *bad = json_array_get(json_object_get(doc, "unreadable"), 0);
	CHECK(!strcmp(json_string_value(json_object_get(bad, "path")), "/dev/shm/ncclwatch-0/train-42/bad.seg"), "path");
	CHECK(!strcmp(json_string_value(json_object_get(bad, "code")), "format"), "code");
	CHECK(!strcmp(json_string_value(json_object_get(bad, "error")), "truncated: 100 bytes, a header needs 8192"),
	      "error without the path");
	json_decref(doc);
}

static void check_trace(const struct nw_analysis *a)
{
	char *t = render(trace_adapter, a, 0);
	json_t *doc = parse("trace", t);
	free(t);
	if (!doc)
		return;
	json_t *evs = json_object_get(doc, "traceEvents");
	CHECK(json_is_array(evs), "traceEvents");
	int names = 0, lane1 = 0, stalls = 0, ops = 0, groups = 0;
	size_t i;
	json_t *e;
	json_array_foreach(evs, i, e) {
		const char *ph = json_string_value(json_object_get(e, "ph"));
		const char *name = json_string_value(json_object_get(e, "name"));
		json_int_t pid = json_integer_value(json_object_get(e, "pid"));
		json_int_t tid = json_integer_value(json_object_get(e, "tid"));
		json_t *args = json_object_get(e, "args");
		if (!strcmp(ph, "M") && !strcmp(name, "process_name")) {
			names++;
			if (pid == 1)
				CHECK(!strcmp(json_string_value(json_object_get(args, "name")), "job train-42 rank 0 (node-a:1000)"),
				      "process name of rank 0: %s", json_string_value(json_object_get(args, "name")));
			if (pid == 9)
				CHECK(!strcmp(json_string_value(json_object_get(args, "name")), "job solo rank ? (host c:77) dump"),
				      "process name of the solo process: %s", json_string_value(json_object_get(args, "name")));
		}
		if (!strcmp(ph, "M") && !strcmp(name, "thread_name") && pid == 1 && tid == 1)
			CHECK(!strcmp(json_string_value(json_object_get(args, "name")), "comm 4f2ac2b9efdeda6d (8 ranks)"),
			      "thread name: %s", json_string_value(json_object_get(args, "name")));
		if (!strcmp(ph, "M") && !strcmp(name, "thread_name") && tid == 2) {
			groups++;
			CHECK(pid == 4 && !strcmp(json_string_value(json_object_get(args, "name")), "no communicator (groups)"),
			      "group ops of rank 3 on their own thread, after the comms: pid %lld", (long long)pid);
		}
		if (!strcmp(ph, "M") && !strcmp(name, "thread_name") && tid == 1000001) {
			lane1++;
			CHECK(pid == 1, "only rank 0 has a second lane");
		}
		if (!strcmp(ph, "X")) {
			ops++;
			json_int_t ts = json_integer_value(json_object_get(e, "ts"));
			json_int_t dur = json_integer_value(json_object_get(e, "dur"));
			if (pid == 1 && !strcmp(name, "AllReduce #22"))
				CHECK(tid == 1000001 && ts == 10200000 && dur == 800000, "rank 0's #22: lane 1, 10.2 s, 0.8 s");
			if (pid == 6 && !strcmp(name, "AllReduce #23"))   /* rank 5 on node-b: base is node-b's */
				CHECK(0, "rank 5 has no #23");
			if (pid == 5 && !strcmp(name, "AllReduce #23"))   /* rank 4: node-b, ts from node-b's origin */
				CHECK(ts == 25000000 && dur == 75000000, "rank 4's pending #23: ts %lld dur %lld",
				      (long long)ts, (long long)dur);
			if (!strcmp(name, "CommInit"))
				CHECK(ts == 1000000 && dur == 1000000, "CommInit at 1 s for 1 s on every host");
		}
		if (!strcmp(ph, "i")) {
			stalls++;
			CHECK(!strcmp(name, "stall"), "instant %s", name);
			CHECK(json_integer_value(json_object_get(e, "ts")) == 85000000, "stall at enqueue + 60 s");
			CHECK(!strcmp(json_string_value(json_object_get(args, "state")), "STARTED"), "stall state");
		}
	}
	CHECK(names == 9, "one process per rank (8) and the solo process: %d", names);
	CHECK(lane1 == 1, "one second lane: %d", lane1);
	CHECK(stalls == 7, "7 stalls: %d", stalls);
	CHECK(ops == 8 * 3 + 7 + 1, "ops: %d", ops);
	CHECK(groups == 1, "one thread for group calls: %d", groups);
	json_decref(doc);
}

static int write_one(const char *what, const char *path, const struct nw_analysis *a)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		return 2;
	}
	int rc = !strcmp(what, "--json")    ? nw_render_json(f, a)
	         : !strcmp(what, "--trace") ? nw_render_trace(f, a)
	         : !strcmp(what, "--status") ? nw_render_status(f, a, 0)
	                                    : nw_render_text(f, a, 0);
	if (fclose(f) != 0 || rc != 0) {
		perror(path);
		return 2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct nw_analysis a;
	make_analysis(&a);
	if (argc == 3) {
		int rc = write_one(argv[1], argv[2], &a);
		free_analysis(&a);
		return rc;
	}
	check_text(&a);
	check_status(&a);
	check_json(&a);
	check_trace(&a);

	/* A write error is reported. */
	FILE *full = fopen("/dev/full", "w");
	if (full) {
		setvbuf(full, NULL, _IONBF, 0);
		CHECK(nw_render_text(full, &a, 0) == -1, "text to /dev/full");
		clearerr(full);
		CHECK(nw_render_json(full, &a) == -1, "json to /dev/full");
		clearerr(full);
		CHECK(nw_render_trace(full, &a) == -1, "trace to /dev/full");
		clearerr(full);
		CHECK(nw_render_status(full, &a, 0) == -1, "status to /dev/full");
		fclose(full);
	}
	free_analysis(&a);
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	printf("renderers: text, status, json, trace as pinned\n");
	return 0;
}
