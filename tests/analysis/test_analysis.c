/* test-analysis-unit: the analysis engine on cases the generator (nwgen)
 * has no scenario for, each built segment by segment with tests/gen's
 * segbuild: rank sets and their "0-6,9" form (ranges, order, duplicates,
 * truncation that never cuts a number), verdict names and hints,
 * nw_analyze's errors, the wait-for graph (SCCs, reachability), a Split
 * that a rank never called (INIT_STALL blames it through the parent's
 * split count), ncclCommInitAll (one process, two ranks), processes with no
 * rank variable (ranks from the world comm), copies of one process (the
 * newest kept), a deadlock of collectives on two comms, a 1-1 mismatch, a
 * peer table that overflowed, the job filter, and GPU_FAULT's findings
 * (facts in decide, words from words/: two ranks failed the same way, an
 * async error alone, a summary wrapped by a legacy pass), and verdicts that
 * blame the same ranks once death took a whole process folded into one.
 * Prints "ok N - what" per check; exits 1 on the first failure. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../report/decide/decide.h"
#include "../../report/words/words.h"
#include "../gen/segbuild.h"

static int checks;

#define CHECK(cond, ...)                                                    \
	do {                                                                    \
		checks++;                                                           \
		if (!(cond)) {                                                      \
			printf("not ok %d - ", checks);                                 \
			printf(__VA_ARGS__);                                            \
			printf(" (%s:%d: %s)\n", __FILE__, __LINE__, #cond);            \
			exit(1);                                                        \
		}                                                                   \
		printf("ok %d - ", checks);                                         \
		printf(__VA_ARGS__);                                                \
		putchar('\n');                                                      \
	} while (0)

static const char *fmt(const struct nw_rankset *s, size_t len, size_t *need)
{
	static char buf[256];
	memset(buf, 'X', sizeof buf);
	*need = nw_rankset_format(s, buf, len);
	return buf;
}

static void test_rankset(void)
{
	struct nw_rankset s = { 0 };
	size_t need;
	CHECK(!strcmp(fmt(&s, 16, &need), "-") && need == 1, "empty set is \"-\"");
	int add[] = { 9, 0, 3, 1, 2, 5, 4, 6, 9, 0, 12, 11 };
	for (size_t i = 0; i < sizeof add / sizeof add[0]; i++)
		CHECK(nw_rankset_add(&s, add[i]) == 0, "add %d", add[i]);
	CHECK(s.n == 10, "duplicates are kept once (n=%u)", s.n);
	for (uint32_t i = 1; i < s.n; i++)
		CHECK(s.v[i - 1] < s.v[i], "sorted at %u", i);
	CHECK(nw_rankset_has(&s, 9) && !nw_rankset_has(&s, 7) && !nw_rankset_has(&s, 13), "membership");
	CHECK(!strcmp(fmt(&s, 64, &need), "0-6,9,11-12") && need == 11, "ranges: %s", fmt(&s, 64, &need));
	/* Truncated: whole items only, then "..."; the length it needed still. */
	const char *t = fmt(&s, 8, &need);
	CHECK(!strcmp(t, "0-6...") && need == 11, "truncated to 8 bytes: %s", t);
	t = fmt(&s, 11, &need);
	CHECK(!strcmp(t, "0-6,9...") && need == 11, "truncated to 11 bytes: %s", t);
	t = fmt(&s, 12, &need);
	CHECK(!strcmp(t, "0-6,9,11-12"), "exact fit in 12 bytes: %s", t);
	t = fmt(&s, 3, &need);
	CHECK(t[0] == '\0', "no room for \"...\": empty string");
	CHECK(nw_rankset_format(&s, NULL, 0) == 11, "length only with a NULL buffer");
	nw_rankset_free(&s);
	CHECK(s.n == 0 && s.v == NULL, "freed");

	/* Many ranks, backwards: still sorted, one range. */
	for (int r = 20000; r >= 0; r--)
		nw_rankset_add(&s, r);
	CHECK(s.n == 20001 && !strcmp(fmt(&s, 64, &need), "0-20000"), "20001 ranks added backwards");
	nw_rankset_free(&s);
}

static void test_names(void)
{
	CHECK(!strcmp(nw_verdict_name(NW_V_MISSING_RANK), "MISSING_RANK"), "verdict name");
	CHECK(!strcmp(nw_verdict_name(NW_V_GPU_FAULT), "GPU_FAULT"), "verdict name (last)");
	CHECK(!strcmp(nw_verdict_name(42), "UNKNOWN"), "unknown verdict kind");
	CHECK(strstr(nw_verdict_hint(NW_V_TRANSPORT_STALL), "NCCL_P2P_DISABLE=1") != NULL, "transport hint");
	CHECK(!strcmp(nw_verdict_hint(NW_V_MISSING_RANK), "the code path differs on those ranks"), "missing-rank hint");
	CHECK(!strcmp(nw_verdict_hint(NW_V_HEALTHY), ""), "no hint for HEALTHY");
	struct nw_analysis a = { 0 };
	CHECK(nw_analysis_worst(&a) == NW_V_HEALTHY, "worst of nothing is HEALTHY");
}

static void test_errors(void)
{
	struct nw_analysis a;
	struct nw_read_error err;
	const char *none[] = { "/nonexistent/ncclwatch-test" };
	CHECK(nw_analyze(none, 1, NULL, &a, &err) == -1 && err.code == NW_READ_ERR_IO &&
	      strstr(err.message, "/nonexistent/ncclwatch-test"), "a missing path: %s", err.message);
	CHECK(a.njobs == 0 && a.bad == NULL, "nothing left to free after a failure");

	char dir[] = "/tmp/nwtest-analysis.XXXXXX";
	CHECK(mkdtemp(dir) != NULL, "temp dir");
	char path[256];
	snprintf(path, sizeof path, "%s/bogus.seg", dir);
	FILE *f = fopen(path, "w");
	CHECK(f != NULL, "create %s", path);
	fputs("not a segment at all\n", f);
	fclose(f);
	const char *one[] = { dir };
	CHECK(nw_analyze(one, 1, NULL, &a, &err) == 0, "a directory with one bad file is read");
	CHECK(a.njobs == 0 && a.nbad == 1 && a.nread == 1 && strstr(a.bad[0].err.message, "bogus.seg"),
	      "the bad file is listed: %s", a.nbad ? a.bad[0].err.message : "-");
	nw_analysis_free(&a);
	CHECK(a.bad == NULL && a.nbad == 0, "freed");

	/* Two paths, one missing: the other still counts. */
	const char *two[] = { "/nonexistent/ncclwatch-test", dir };
	CHECK(nw_analyze(two, 2, NULL, &a, &err) == 0 && a.nbad == 2, "a missing path next to a readable one");
	nw_analysis_free(&a);
	unlink(path);
	rmdir(dir);

	snprintf(path, sizeof path, "%s", dir);
	CHECK(mkdtemp(strcpy(path, "/tmp/nwtest-analysis.XXXXXX")) != NULL, "empty dir");
	const char *empty[] = { path };
	CHECK(nw_analyze(empty, 1, NULL, &a, &err) == -1 && err.code == NW_READ_ERR_EMPTY, "an empty directory: %s",
	      err.message);
	rmdir(path);
}

/* ---- the wait-for graph ---- */

static void test_graph(void)
{
	/* Processes 0..4; junction 5. 0 -> 1 -> 2 -> 0 (a cycle), 3 -> J -> 1,
	 * 4 -> 3 (WAIT: counts for who waits, not for cycles), 2 -> 4 WAIT. */
	struct nw_graph g = { .nprocs = 5, .nnodes = 5 };
	uint32_t j = nw_graph_junction(&g);
	CHECK(j == 5 && g.nnodes == 6, "a junction after the processes");
	nw_graph_edge(&g, 0, 1, NW_E_P2P, NULL, NULL, 0, 0);
	nw_graph_edge(&g, 1, 2, NW_E_COLL, NULL, NULL, 0, 0);
	nw_graph_edge(&g, 2, 0, NW_E_COLL, NULL, NULL, 0, 0);
	nw_graph_edge(&g, 3, j, NW_E_COLL, NULL, NULL, 0, 0);
	nw_graph_edge(&g, j, 1, NW_E_COLL, NULL, NULL, 0, 0);
	nw_graph_edge(&g, 4, 3, NW_E_WAIT, NULL, NULL, 0, 0);
	nw_graph_edge(&g, 2, 4, NW_E_WAIT, NULL, NULL, 0, 0);
	nw_graph_edge(&g, 4, 4, NW_E_COLL, NULL, NULL, 0, 0);   /* a self-loop is dropped */
	CHECK(g.nedges == 7, "edges (self-loop dropped): %zu", g.nedges);
	CHECK(nw_graph_freeze(&g) == 0, "freeze");
	CHECK(g.scc[0] == g.scc[1] && g.scc[1] == g.scc[2], "0, 1, 2 in one SCC");
	CHECK(g.scc[3] != g.scc[0] && g.scc[4] != g.scc[0] && g.scc[3] != g.scc[4],
	      "WAIT edges make no cycle: 3 and 4 alone");
	uint32_t out[6], seed = 1;
	CHECK(nw_graph_reaching(&g, &seed, 1, out) == 6, "everyone waits for 1 (junction included)");

	CHECK(nw_graph_waits(&g, 3) && nw_graph_waits(&g, 0) && !nw_graph_waits(&g, 4),
	      "3 waits (through the junction), 4 only WAITs");
	nw_graph_free(&g);

	/* A junction with no way out means nobody. */
	struct nw_graph h = { .nprocs = 2, .nnodes = 2 };
	uint32_t k = nw_graph_junction(&h);
	nw_graph_edge(&h, 0, k, NW_E_COLL, NULL, NULL, 0, 0);
	nw_graph_edge(&h, 1, 0, NW_E_COLL, NULL, NULL, 0, 0);
	CHECK(nw_graph_freeze(&h) == 0 && !nw_graph_waits(&h, 0) && nw_graph_waits(&h, 1),
	      "an edge to a dead-end junction is no wait");
	uint32_t hout[3];
	CHECK(nw_graph_reaching(&h, &seed, 0, hout) == 0, "no seed, nobody");
	seed = 0;
	CHECK(nw_graph_reaching(&h, &seed, 1, hout) == 2 && hout[0] == 0 && hout[1] == 1, "1 waits for 0");
	seed = k;
	CHECK(nw_graph_reaching(&h, &seed, 1, hout) == 3, "0 and 1 wait for the junction");
	nw_graph_free(&h);
}

/* ---- hand-built jobs ---- */

#define SEC 1000000000ull
#define BASE (1000 * SEC)

static char tmpdir[64];
static struct sb_layout layout;
static uint8_t *segbuf;

struct who {
	const char *host;
	int64_t pid;
	int32_t grank, world;
	const char *job;
};

static void seg_begin(struct sb_seg *s, const struct who *w)
{
	sb_begin(s, &layout, segbuf);
	struct nw_seg_header *h = s->h;
	h->pid = w->pid;
	h->ppid = 1;
	h->start_realtime_ns = 1767268800ull * SEC + (uint64_t)w->pid;
	h->start_monotonic_ns = BASE;
	h->global_rank = w->grank;
	h->local_rank = -1;
	h->world_size = w->world;
	h->uid = 1000;
	snprintf(h->host, sizeof h->host, "%s", w->host);
	snprintf(h->job, sizeof h->job, "%s", w->job ? w->job : "unit");
	h->nccl_version = 22809;
	h->cuda_driver_version = 13000;
	h->tracking = NW_TRACK_EVENTS;
	h->timeout_ms = 5000;
	h->poll_ms = 100;
	h->flags = NW_SEG_F_RECORDING;
	s->tid = (uint32_t)w->pid;
	s->stream = 0x1000 + (uint64_t)w->pid;
}

/* Heartbeat 40 s after BASE; written as DIR/<host>.<pid>[suffix].seg. */
static void seg_write(struct sb_seg *s, const char *suffix)
{
	s->h->heartbeat_ns = BASE + 40 * SEC;
	sb_finish(s);
	char path[256];
	snprintf(path, sizeof path, "%s/%s.%" PRId64 "%s.seg", tmpdir, s->h->host, s->h->pid, suffix ? suffix : "");
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0, "create %s", path);
	CHECK(write(fd, segbuf, layout.size) == (ssize_t)layout.size, "write %s", path);
	close(fd);
}

static void new_dir(const char *name)
{
	snprintf(tmpdir, sizeof tmpdir, "/tmp/nwtest-%s.XXXXXX", name);
	CHECK(mkdtemp(tmpdir) != NULL, "dir %s", tmpdir);
}

static void rm_dir(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	CHECK(system(cmd) == 0, "remove %s", tmpdir);
}

static uint32_t comm(struct sb_seg *s, uint64_t id, int32_t rank, int32_t nranks, uint32_t origin)
{
	struct sb_comm_spec c = {
		.id = id, .handle = 0x5000 + (uint64_t)rank, .rank = rank, .nranks = nranks, .device = 0,
		.origin = origin, .bus_id = "0000:18:00.0",
	};
	uint32_t slot = sb_comm_enter(s, &c, BASE + SEC / 5, 0x400000);
	sb_comm_done(s, slot, &c, BASE + 2 * SEC);
	return slot;
}

/* A collective: done (COMPLETED at t+0.1 s) or stuck (STARTED since t). */
static uint64_t coll(struct sb_seg *s, uint32_t slot, uint16_t kind, uint64_t count, int stuck, double t)
{
	uint64_t at = BASE + (uint64_t)(t * 1e9);
	struct sb_op op = {
		.kind = kind, .datatype = 7, .redop = kind == NW_OP_ALLREDUCE ? 0 : -1, .root = -1, .count = count,
		.caller = 0x401000, .state = stuck ? NW_ST_STARTED : NW_ST_COMPLETED, .enqueue_ns = at,
		.start_ns = at + 1000, .end_ns = stuck ? 0 : at + SEC / 10,
	};
	return sb_coll(s, slot, &op);
}

static struct nw_analysis analyze_dir(const char *job)
{
	struct nw_analysis a;
	struct nw_read_error err;
	struct nw_analysis_options opt = { .job = job };
	const char *paths[] = { tmpdir };
	CHECK(nw_analyze(paths, 1, &opt, &a, &err) == 0, "analyze %s: %s", tmpdir, err.message);
	CHECK(nw_words_say(&a) == 0, "the findings said");
	return a;
}

static const char *set_str(const struct nw_rankset *s)
{
	static char b[4][64];
	static int i;
	i = (i + 1) % 4;
	nw_rankset_format(s, b[i], sizeof b[i]);
	return b[i];
}

/* The verdict of `kind` on `comm_id`, or NULL. */
static const struct nw_verdict *find(const struct nw_job *job, int kind, uint64_t comm_id)
{
	for (size_t i = 0; i < job->nverdicts; i++)
		if (job->verdicts[i].kind == kind && job->verdicts[i].comm_id == comm_id)
			return &job->verdicts[i];
	return NULL;
}

static void check_verdict(const struct nw_verdict *v, const char *what, const char *culprits, const char *waiting)
{
	CHECK(v != NULL, "%s: found", what);
	CHECK(!strcmp(set_str(&v->culprits), culprits), "%s: culprits %s (want %s)", what, set_str(&v->culprits),
	      culprits);
	CHECK(!strcmp(set_str(&v->waiting), waiting), "%s: waiting %s (want %s)", what, set_str(&v->waiting), waiting);
	CHECK(v->summary && v->summary[0], "%s: %s", what, v->summary ? v->summary : "(no summary)");
}

/* A Split that rank 2 never called: ranks 0, 1, 3 are inside it (their
 * rank in the child not known yet); rank 2 did not count it on the parent. */
static void test_split_stall(void)
{
	new_dir("split");
	const uint64_t world = 0x1111222233334444ull;
	for (int32_t r = 0; r < 4; r++) {
		struct sb_seg s;
		struct who w = { "nodeA", 100 + r, r, 4, NULL };
		seg_begin(&s, &w);
		uint32_t ws = comm(&s, world, r, 4, NW_ORIGIN_INIT_RANK);
		coll(&s, ws, NW_OP_ALLREDUCE, 10, 0, 2.5);
		if (r != 2) {
			s.comms[ws].splits = 1;
			struct sb_comm_spec c = {
				.id = sb_comm_id_split(world, 0, r / 2), .parent_id = world, .rank = -1, .nranks = -1,
				.device = 0, .origin = NW_ORIGIN_SPLIT, .color = r / 2, .key = r,
			};
			sb_comm_enter(&s, &c, BASE + 3 * SEC, 0x400000);
		}
		seg_write(&s, NULL);
	}
	struct nw_analysis a = analyze_dir(NULL);
	CHECK(a.njobs == 1 && a.jobs[0].nverdicts == 1, "one job, one verdict (%zu)", a.njobs ? a.jobs[0].nverdicts : 0);
	const struct nw_verdict *v = find(&a.jobs[0], NW_V_INIT_STALL, world);
	check_verdict(v, "split stall", "2", "0-1,3");
	CHECK(v->op_kind == NW_OP_COMM_SPLIT, "split stall: op CommSplit");
	struct nw_comm_view *cv;
	uint64_t child = sb_comm_id_split(world, 0, 0);
	HASH_FIND(hh, a.jobs[0].comms, &child, sizeof child, cv);
	CHECK(cv && cv->nranks == -1 && cv->nentering == 2, "the child of color 0: 2 processes entering, size unknown");
	nw_analysis_free(&a);
	rm_dir();
}

/* A Split that ranks 1-3 returned from (child ranks by key: key r is
 * child rank r), whose AllReduce #1 on the child waits; rank 0 is still
 * inside it, its child rank not recorded. The others' order leaves it one
 * place, child rank 0: a member inside its creation, not a rank with no
 * file. Ranks 4-5 split with keys 1 and 0 (ranks 6-7: 6 and 7) and are
 * both still inside: two places, their keys tell which is whose. */
static void test_split_entering(void)
{
	new_dir("entering");
	const uint64_t world = 0x5555666677778888ull;
	const uint64_t child = sb_comm_id_split(world, 0, 0), other = sb_comm_id_split(world, 0, 1);
	for (int32_t r = 0; r < 8; r++) {
		struct sb_seg s;
		struct who w = { "nodeA", 200 + r, r, 8, NULL };
		seg_begin(&s, &w);
		uint32_t ws = comm(&s, world, r, 8, NW_ORIGIN_INIT_RANK);
		coll(&s, ws, NW_OP_ALLREDUCE, 10, 0, 2.5);
		s.comms[ws].splits = 1;
		int in_other = r >= 4;
		struct sb_comm_spec c = {
			.id = in_other ? other : child, .parent_id = world, .rank = -1, .nranks = -1, .device = 0,
			.origin = NW_ORIGIN_SPLIT, .color = in_other, .key = r == 4 ? 1 : r == 5 ? 0 : r,
			.bus_id = "0000:18:00.0",
		};
		uint32_t cs = sb_comm_enter(&s, &c, BASE + 3 * SEC, 0x400000);
		if ((r >= 1 && r <= 3) || r >= 6) {
			c.rank = r >= 6 ? (r == 6 ? 2 : 3) : r;
			c.nranks = 4;
			c.handle = 0x6000 + (uint64_t)r;
			sb_comm_done(&s, cs, &c, BASE + 4 * SEC);
			coll(&s, cs, NW_OP_ALLREDUCE, 10, 1, 5);
		}
		seg_write(&s, NULL);
	}
	struct nw_analysis a = analyze_dir(NULL);
	CHECK(a.njobs == 1, "one job");
	struct nw_comm_view *cv, *ov;
	HASH_FIND(hh, a.jobs[0].comms, &child, sizeof child, cv);
	CHECK(cv && cv->nranks == 4 && cv->nentering == 0 && cv->members[0].proc && cv->members[0].proc->rank == 0,
	      "entering rank 0 holds child rank 0 (nentering %u)", cv ? cv->nentering : 0);
	HASH_FIND(hh, a.jobs[0].comms, &other, sizeof other, ov);
	CHECK(ov && ov->nranks == 4 && ov->nentering == 0 && ov->members[0].proc && ov->members[0].proc->rank == 5 &&
	      ov->members[1].proc && ov->members[1].proc->rank == 4, "keys 0 and 1: ranks 5 and 4 hold child ranks 0 and 1");
	for (size_t i = 0; i < a.jobs[0].nverdicts; i++)
		CHECK(a.jobs[0].verdicts[i].unknown.n == 0, "verdict %zu names no rank with no file (%s)", i,
		      set_str(&a.jobs[0].verdicts[i].unknown));
	nw_analysis_free(&a);
	rm_dir();
}

/* ncclCommInitAll: one process holds both ranks of a comm; it issued
 * AllReduce #1 on rank 0's comm only. */
static void test_initall(void)
{
	new_dir("initall");
	const uint64_t id = 0xabcdef0123456789ull;
	struct sb_seg s;
	struct who w = { "nodeA", 300, 0, 1, NULL };
	seg_begin(&s, &w);
	uint32_t s0 = comm(&s, id, 0, 2, NW_ORIGIN_INIT_ALL);
	comm(&s, id, 1, 2, NW_ORIGIN_INIT_ALL);
	coll(&s, s0, NW_OP_ALLREDUCE, 10, 1, 3);
	seg_write(&s, NULL);
	struct nw_analysis a = analyze_dir(NULL);
	struct nw_comm_view *cv;
	HASH_FIND(hh, a.jobs[0].comms, &id, sizeof id, cv);
	CHECK(cv && cv->nranks == 2 && cv->members[0].proc == cv->members[1].proc && cv->members[0].proc,
	      "one process holds both ranks");
	CHECK(cv->members[0].comm != cv->members[1].comm, "through two slots");
	check_verdict(find(&a.jobs[0], NW_V_MISSING_RANK, id), "InitAll", "0", "-");
	nw_analysis_free(&a);
	rm_dir();
}

/* No rank variable anywhere: ranks come from the world comm. Comm rank 2
 * (pid 502) never issued AllReduce #3. Pids run backwards so that sorting
 * by pid would not give the right order by chance. */
static void test_no_ranks(void)
{
	new_dir("noranks");
	const uint64_t world = 0x5555666677778888ull;
	for (int32_t r = 0; r < 4; r++) {
		struct sb_seg s;
		struct who w = { "nodeA", 600 - r * 2, -1, -1, NULL };
		seg_begin(&s, &w);
		uint32_t ws = comm(&s, world, r, 4, NW_ORIGIN_INIT_RANK);
		coll(&s, ws, NW_OP_ALLREDUCE, 10, 0, 3);
		coll(&s, ws, NW_OP_ALLREDUCE, 10, 0, 3.2);
		if (r != 2)
			coll(&s, ws, NW_OP_ALLREDUCE, 10, 1, 3.4);
		seg_write(&s, NULL);
	}
	struct nw_analysis a = analyze_dir(NULL);
	const struct nw_job *job = &a.jobs[0];
	CHECK(job->world_size == 4 && job->missing.n == 0, "world size from the world comm");
	for (size_t i = 0; i < job->nprocs; i++)
		CHECK(job->procs[i]->rank == (int32_t)i && job->procs[i]->hdr.pid == 600 - 2 * (int64_t)i,
		      "process %zu: rank %d from its comm rank", i, job->procs[i]->rank);
	check_verdict(find(job, NW_V_MISSING_RANK, world), "no rank variables", "2", "0-1,3");
	nw_analysis_free(&a);
	rm_dir();
}

/* Copies of one process: the one with more records wins, then the newer
 * heartbeat, then the live file over a dump. */
static void test_copies(void)
{
	new_dir("copies");
	const uint64_t world = 0x9999aaaabbbbccccull;
	for (int32_t r = 0; r < 2; r++) {
		for (int dump = 0; dump < 2; dump++) {
			struct sb_seg s;
			struct who w = { "nodeA", 700 + r, r, 2, NULL };
			seg_begin(&s, &w);
			uint32_t ws = comm(&s, world, r, 2, NW_ORIGIN_INIT_RANK);
			coll(&s, ws, NW_OP_ALLREDUCE, 10, 0, 3);
			if (r == 0 && dump)
				coll(&s, ws, NW_OP_ALLREDUCE, 10, 0, 3.1);   /* rank 0: the dump has one more */
			if (dump)
				s.h->flags |= NW_SEG_F_DUMP;
			seg_write(&s, dump ? ".rank0.dump" : NULL);
		}
	}
	struct nw_analysis a = analyze_dir(NULL);
	const struct nw_job *job = &a.jobs[0];
	CHECK(a.nread == 4 && job->nprocs == 2, "4 files, 2 processes (%zu)", job->nprocs);
	CHECK(job->procs[0]->is_dump && job->procs[0]->hdr.ring_head == job->procs[1]->hdr.ring_head + 1,
	      "rank 0: the dump, with more records");
	CHECK(!job->procs[1]->is_dump, "rank 1: the live file (same records, same heartbeat)");
	CHECK(job->nverdicts == 1 && job->verdicts[0].kind == NW_V_HEALTHY, "healthy");
	nw_analysis_free(&a);
	rm_dir();
}

/* Ranks 0 and 1 share comms X and Y; rank 0 waits in X #1, rank 1 in Y #1:
 * each waits in a collective the other never called. */
static void test_coll_deadlock(void)
{
	new_dir("colldl");
	const uint64_t cx = 0x0101010101010101ull, cy = 0x0202020202020202ull;
	for (int32_t r = 0; r < 2; r++) {
		struct sb_seg s;
		struct who w = { "nodeA", 800 + r, r, 2, NULL };
		seg_begin(&s, &w);
		uint32_t sx = comm(&s, cx, r, 2, NW_ORIGIN_INIT_RANK);
		uint32_t sy = comm(&s, cy, r, 2, NW_ORIGIN_INIT_RANK);
		coll(&s, r == 0 ? sx : sy, NW_OP_ALLREDUCE, 10, 1, 3);
		seg_write(&s, NULL);
	}
	struct nw_analysis a = analyze_dir(NULL);
	const struct nw_job *job = &a.jobs[0];
	/* One rank against one: nothing tells who deviated. One verdict (comm
	 * X's: made first, X was created first), naming both and saying so;
	 * comm Y's folded into it. The same whatever the comm ids. */
	CHECK(job->nverdicts == 1, "one verdict (%zu)", job->nverdicts);
	const struct nw_verdict *vx = find(job, NW_V_MISSING_RANK, cx);
	check_verdict(vx, "comm X", "0-1", "-");
	int said = 0, folded = 0;
	for (size_t k = 0; vx && k < vx->nevidence; k++) {
		said |= strstr(vx->evidence[k], "cannot decide: ranks 0-1 wait for each other in a cycle") != NULL;
		folded |= strstr(vx->evidence[k], "consequence: MISSING_RANK: rank 0 never called AllReduce #1 on comm "
		                                  "0202020202020202") != NULL;
	}
	CHECK(said, "the cycle is said in the evidence");
	CHECK(vx && vx->summary && !strncmp(vx->summary, "cannot decide between ranks 0-1, waiting for each other: ", 57),
	      "the summary says it cannot decide (%s)", vx && vx->summary ? vx->summary : "none");
	CHECK(folded, "comm Y's verdict is folded into it");
	CHECK(!find(job, NW_V_P2P_DEADLOCK, cx) && !find(job, NW_V_P2P_DEADLOCK, cy), "no P2P_DEADLOCK");
	nw_analysis_free(&a);
	rm_dir();
}

/* Two ranks disagree on the count of AllReduce #1: a tie with no earlier
 * op to tell which is the program as written, so both are named and the
 * summary says it cannot tell which (the rank outside comm rank 0's
 * group used to be blamed: a guess); and it is no
 * TRANSPORT_STALL. */
static void test_mismatch_tie(void)
{
	new_dir("tie");
	const uint64_t id = 0x0303030303030303ull;
	for (int32_t r = 0; r < 2; r++) {
		struct sb_seg s;
		struct who w = { "nodeA", 900 + r, r, 2, NULL };
		seg_begin(&s, &w);
		uint32_t sl = comm(&s, id, r, 2, NW_ORIGIN_INIT_RANK);
		coll(&s, sl, NW_OP_ALLREDUCE, r ? 20 : 10, 1, 3);
		seg_write(&s, NULL);
	}
	struct nw_analysis a = analyze_dir(NULL);
	const struct nw_job *job = &a.jobs[0];
	CHECK(job->nverdicts == 1, "one verdict (%zu)", job->nverdicts);
	const struct nw_verdict *v = find(job, NW_V_MISMATCH, id);
	check_verdict(v, "1-1 mismatch", "0-1", "-");
	CHECK(v && v->summary && strstr(v->summary, "cannot tell which"), "the summary says it cannot tell which (%s)",
	      v && v->summary ? v->summary : "none");
	nw_analysis_free(&a);
	rm_dir();
}

/* Ranks 2 and 3 of 4 enqueued AllReduce #2 and it never started, with no
 * earlier NCCL op pending on their streams (a kernel or a host function
 * holds them); ranks 0 and 1 are inside it. One STREAM_BLOCKED names both
 * (the summary says the set, the first one's stream as the example, who
 * waits), and its evidence groups them by what their streams show. */
static void test_stream_blocked_two(void)
{
	new_dir("sblock");
	const uint64_t id = 0x0505050505050505ull;
	for (int32_t r = 0; r < 4; r++) {
		struct sb_seg s;
		struct who w = { "nodeA", 1200 + r, r, 4, NULL };
		seg_begin(&s, &w);
		s.stream = 0x7000;
		uint32_t sl = comm(&s, id, r, 4, NW_ORIGIN_INIT_RANK);
		coll(&s, sl, NW_OP_ALLREDUCE, 10, 0, 3);
		if (r < 2) {
			coll(&s, sl, NW_OP_ALLREDUCE, 10, 1, 4);
		} else {
			struct sb_op op = {
				.kind = NW_OP_ALLREDUCE, .datatype = 7, .redop = 0, .root = -1, .count = 10, .caller = 0x401000,
				.state = NW_ST_ENQUEUED, .enqueue_ns = BASE + 4 * SEC,
			};
			sb_coll(&s, sl, &op);
		}
		seg_write(&s, NULL);
	}
	struct nw_analysis a = analyze_dir(NULL);
	const struct nw_job *job = &a.jobs[0];
	const struct nw_verdict *v = find(job, NW_V_STREAM_BLOCKED, id);
	check_verdict(v, "two blocked streams", "2-3", "0-1");
	const char *head = "ranks 2-3: AllReduce #2 on comm 0505050505050505 (4 ranks) never started (for ";
	const char *tail = " on rank 2; no earlier NCCL op is pending on its stream 0x7000: earlier work that is not "
	                   "NCCL (a long or hung kernel, a host callback)); ranks 0-1 wait in it";
	CHECK(v && v->summary && !strncmp(v->summary, head, strlen(head)) && strlen(v->summary) > strlen(tail) &&
	      !strcmp(v->summary + strlen(v->summary) - strlen(tail), tail),
	      "the summary names both, the first one's stream, who waits (%s)", v && v->summary ? v->summary : "none");
	const char *line = "ranks 2-3: stream 0x7000 has no earlier NCCL op pending; ";
	CHECK(v && v->nevidence >= 1 && !strncmp(v->evidence[0], line, strlen(line)),
	      "one evidence line for both (%s)", v && v->nevidence ? v->evidence[0] : "none");
	nw_analysis_free(&a);
	rm_dir();
}

/* Rank 1's peer table overflowed: whether it posted the receive rank 0's
 * send waits for is not known, so no rank is blamed for it; the stuck send
 * is still reported (the comm). Also: two jobs in one directory, and the
 * job filter. */
static void test_peers_full_and_jobs(void)
{
	new_dir("peers");
	const uint64_t id = 0x0404040404040404ull;
	for (int32_t r = 0; r < 2; r++) {
		struct sb_seg s;
		struct who w = { "nodeA", 1000 + r, r, 2, "a" };
		seg_begin(&s, &w);
		uint32_t sl = comm(&s, id, r, 2, NW_ORIGIN_INIT_RANK);
		if (r == 0) {
			struct sb_op op = {
				.kind = NW_OP_SEND, .datatype = 7, .redop = -1, .root = 1, .count = 10, .state = NW_ST_STARTED,
				.enqueue_ns = BASE + 3 * SEC, .start_ns = BASE + 3 * SEC + 1000,
			};
			sb_p2p(&s, sl, &op);
		} else {
			s.h->flags |= NW_SEG_F_PEERS_FULL;
		}
		seg_write(&s, NULL);
		struct who w2 = { "nodeB", 1100 + r, r, 2, "b" };
		seg_begin(&s, &w2);
		comm(&s, id + 1, r, 2, NW_ORIGIN_INIT_RANK);
		seg_write(&s, NULL);
	}
	struct nw_analysis a = analyze_dir(NULL);
	CHECK(a.njobs == 2 && !strcmp(a.jobs[0].name, "a") && !strcmp(a.jobs[1].name, "b"), "two jobs, by name");
	const struct nw_job *job = &a.jobs[0];
	CHECK(!find(job, NW_V_P2P_UNMATCHED, id), "no P2P_UNMATCHED without the peer's position");
	check_verdict(find(job, NW_V_TRANSPORT_STALL, id), "stuck send", "-", "0");
	/* Job b made its comm 38 s ago and never used it. */
	CHECK(a.jobs[1].nverdicts == 1 && a.jobs[1].verdicts[0].kind == NW_V_IDLE, "job b: IDLE");
	CHECK(!strcmp(set_str(&a.jobs[1].verdicts[0].culprits), "0-1"), "job b: ranks 0-1 idle");
	CHECK(nw_analysis_worst(&a) == NW_V_TRANSPORT_STALL, "worst of both");
	nw_analysis_free(&a);
	a = analyze_dir("b");
	CHECK(a.njobs == 1 && !strcmp(a.jobs[0].name, "b") && a.nread == 4, "--job b: only b (4 files read)");
	nw_analysis_free(&a);
	rm_dir();
}

/* Ranks 1 and 2 of 4 fail AllReduce #2 on the GPU (cuda_error 700, then
 * the comm's async error), ranks 0 and 3 wait in it: one GPU_FAULT, both
 * culprits. decide leaves facts (no words: the summary and evidence lines
 * are findings until nw_words_say); words/fault_words.c says them. */
static void test_fault_words(void)
{
	new_dir("fault");
	const uint64_t id = 0x0404040404040404ull;
	for (int32_t r = 0; r < 4; r++) {
		struct sb_seg s;
		struct who w = { "nodeA", 1000 + r, r, 4, NULL };
		seg_begin(&s, &w);
		uint32_t sl = comm(&s, id, r, 4, NW_ORIGIN_INIT_RANK);
		coll(&s, sl, NW_OP_ALLREDUCE, 10, 0, 3);
		if (r == 1 || r == 2) {
			struct sb_op op = { .kind = NW_OP_ALLREDUCE, .datatype = 7, .redop = 0, .root = -1, .count = 10,
			                    .caller = 0x401000, .state = NW_ST_FAILED, .enqueue_ns = BASE + 4 * SEC,
			                    .start_ns = BASE + 4 * SEC + 1000, .end_ns = BASE + 5 * SEC,
			                    .result = 1, .cuda_error = 700 };
			sb_coll(&s, sl, &op);
			sb_async_error(&s, sl, 1 /* ncclUnhandledCudaError */, BASE + 5 * SEC, 0x401000);
		} else {
			coll(&s, sl, NW_OP_ALLREDUCE, 10, 1, 4);
		}
		seg_write(&s, NULL);
	}
	struct nw_analysis a;
	struct nw_read_error err;
	const char *paths[] = { tmpdir };
	CHECK(nw_analyze(paths, 1, NULL, &a, &err) == 0, "analyze %s: %s", tmpdir, err.message);
	const struct nw_verdict *v = find(&a.jobs[0], NW_V_GPU_FAULT, id);
	CHECK(v && v->found && v->found->summary.n == 2 && v->found->summary.p[0].f.kind == NW_F_FAULT &&
	      v->found->summary.p[1].f.kind == NW_F_FAULT_MORE && v->found->summary.p[1].f.n == 1,
	      "GPU_FAULT's summary is facts: the fault, then 1 more rank");
	CHECK(v->nevidence == 2 && !v->evidence[0] && !v->evidence[1] && v->found->nev == 2 &&
	      v->found->evidence[1].p[0].f.kind == NW_F_FAULT_LINE, "its evidence is facts, no words yet");
	CHECK(!v->hint && v->found->hint.n == 1, "its hint is a fact");
	CHECK(nw_words_say(&a) == 0 && nw_words_say(&a) == 0, "said (twice: nothing changes)");
	check_verdict(v, "two faults", "1-2", "0,3");
	const char *want = "rank 1's AllReduce #2 on comm 0404040404040404 failed on the GPU (cuda_error 700 "
	                   "CUDA_ERROR_ILLEGAL_ADDRESS), then async error ncclUnhandledCudaError on device 0 "
	                   "(0000:18:00.0) of nodeA (and 1 more ranks the same way)";
	CHECK(!strcmp(v->summary, want), "summary: %s", v->summary);
	for (int k = 0; k < 2; k++) {
		char line[512];
		snprintf(line, sizeof line, "rank %d on nodeA: AllReduce #2 on comm 0404040404040404 FAILED, cuda_error 700 "
		         "CUDA_ERROR_ILLEGAL_ADDRESS, result ncclUnhandledCudaError; comm 0404040404040404 async error "
		         "ncclUnhandledCudaError (unhandled cuda error); device 0 (0000:18:00.0)", k + 1);
		CHECK(v->evidence[k] && !strncmp(v->evidence[k], line, strlen(line)), "evidence %d: %s", k,
		      v->evidence[k] ? v->evidence[k] : "(none)");
	}
	CHECK(v->hint && !strcmp(v->hint, "Xid / ECC (dmesg, nvidia-smi -q); the error: CUDA_ERROR_ILLEGAL_ADDRESS, "
	                         "unhandled cuda error"), "hint: %s", v->hint ? v->hint : "(none)");
	nw_analysis_free(&a);
	rm_dir();

	/* an async error alone (no failed op): the comm reports it */
	new_dir("async");
	for (int32_t r = 0; r < 2; r++) {
		struct sb_seg s;
		struct who w = { "nodeB", 1100 + r, r, 2, NULL };
		seg_begin(&s, &w);
		uint32_t sl = comm(&s, id, r, 2, NW_ORIGIN_INIT_RANK);
		coll(&s, sl, NW_OP_ALLREDUCE, 10, 1, 3);
		if (r == 1)
			sb_async_error(&s, sl, 1, BASE + 4 * SEC, 0x401000);
		seg_write(&s, NULL);
	}
	a = analyze_dir(NULL);
	v = find(&a.jobs[0], NW_V_GPU_FAULT, id);
	CHECK(v && v->culprits.n == 1 && v->culprits.v[0] == 1, "async error: GPU_FAULT, culprit 1");
	CHECK(!strcmp(v->summary, "rank 1: comm 0404040404040404 reports async error ncclUnhandledCudaError (unhandled "
	                          "cuda error) on device 0 (0000:18:00.0) of nodeB"), "summary: %s", v->summary);
	CHECK(!strcmp(v->hint, "Xid / ECC (dmesg, nvidia-smi -q); the error: unhandled cuda error"), "hint: %s", v->hint);
	nw_analysis_free(&a);
	rm_dir();
}

/* Words a verdict already has (decide writes none: a verdict that came
 * with them), for the findings that join them. */
static void words_summary(struct nw_vwork *w, const char *s)
{
	free(w->v.summary);
	w->v.summary = strdup(s);
	CHECK(w->v.summary != NULL, "a summary of words");
}

static void words_evidence(struct nw_vwork *w, const char *s)
{
	char **e = realloc(w->v.evidence, (w->v.nevidence + 1) * sizeof *e);
	CHECK(e && (e[w->v.nevidence] = strdup(s)) != NULL, "a line of words");
	w->v.evidence = e;
	w->v.nevidence++;
}

/* decide builds a verdict without words: no summary, no hint; words
 * gives a summary that says nothing "" and a verdict without a hint fact
 * its kind's hint (words/kind_words.c). */
static void test_words_defaults(void)
{
	struct nw_job job = { 0 };
	struct nw_jctx x = { .job = &job };
	struct nw_vwork *w = nw_verdict_new(&x, NW_V_TRANSPORT_STALL, NULL, 0, 0);
	CHECK(w && !w->v.summary && !w->v.hint && !w->v.nevidence, "a verdict of no words");
	struct nw_verdict v = w->v;
	job.verdicts = &v;
	job.nverdicts = 1;
	struct nw_analysis a = { .jobs = &job, .njobs = 1 };
	CHECK(nw_words_say(&a) == 0 && v.summary && !strcmp(v.summary, ""), "an empty summary");
	CHECK(v.hint == nw_verdict_hint(NW_V_TRANSPORT_STALL) && strstr(v.hint, "NCCL_P2P_DISABLE=1"), "the kind's hint");
	w->v = v;
	nw_vwork_free(w);
	free(x.vw);
}

/* A pass wraps another verdict's summary (rootcause.c: a consequence
 * folded into its root; a cycle that cannot decide): the facts are
 * wrapped, and said in place; words a verdict had stay where they were. */
static void test_findings_wrap(void)
{
	struct nw_job job = { 0 };
	struct nw_jctx x = { .job = &job };
	struct nw_vwork *root = nw_verdict_new(&x, NW_V_MISSING_RANK, NULL, 0, 0);
	struct nw_vwork *w = nw_verdict_new(&x, NW_V_GPU_FAULT, NULL, 0, 0);
	CHECK(root && w, "two verdicts");
	words_summary(root, "root");
	words_evidence(root, "a line of words");
	struct nw_fact more = { .kind = NW_F_FAULT_MORE, .n = 3 };
	nw_verdict_summary_fact(&x, w, &more);
	struct nw_fact conseq = { .kind = NW_F_ROOT_CONSEQUENCE, .n = NW_V_GPU_FAULT };
	nw_verdict_evidence_wrap_fact(&x, root, &conseq, w);
	words_evidence(root, "words after");
	struct nw_fact note = { .kind = NW_F_SOURCE_NOTE, .name = "what the source cannot tell" };
	nw_verdict_evidence_fact(&x, root, &note);
	conseq.n = NW_V_MISSING_RANK;   /* a summary of words, wrapped by a fact */
	nw_verdict_evidence_wrap_fact(&x, root, &conseq, root);
	struct nw_rankset two = { 0 };
	nw_set_add(&x, &two, 0);
	nw_set_add(&x, &two, 1);
	struct nw_fact undecided = { .kind = NW_F_ROOT_UNDECIDED_PREFIX, .set = nw_findings_set(&x, w, &two) };
	nw_rankset_free(&two);
	nw_verdict_summary_prefix_fact(&x, w, &undecided);
	CHECK(!x.oom && root->v.nevidence == 5 && root->v.evidence[0] && !root->v.evidence[1] && root->v.evidence[2],
	      "a wrapped line waits for its words between two lines of words");
	struct nw_verdict vs[2] = { root->v, w->v };
	job.verdicts = vs;
	job.nverdicts = 2;
	struct nw_analysis a = { .jobs = &job, .njobs = 1 };
	CHECK(nw_words_say(&a) == 0, "said");
	CHECK(!strcmp(vs[0].evidence[1], "consequence: GPU_FAULT:  (and 3 more ranks the same way)"), "wrapped: %s",
	      vs[0].evidence[1]);
	CHECK(!strcmp(vs[0].evidence[0], "a line of words") && !strcmp(vs[0].evidence[2], "words after") &&
	      !strcmp(vs[0].summary, "root"), "the words around it stay");
	CHECK(!strcmp(vs[0].evidence[3], "what the source cannot tell"), "a source's note: %s", vs[0].evidence[3]);
	CHECK(!strcmp(vs[0].evidence[4], "consequence: MISSING_RANK: root"), "words wrapped: %s", vs[0].evidence[4]);
	CHECK(!strcmp(vs[1].summary, "cannot decide between ranks 0-1, waiting for each other:  (and 3 more ranks the "
	                             "same way)"),
	      "prefixed: %s", vs[1].summary);
	CHECK(!strcmp(vs[1].hint, nw_verdict_hint(NW_V_GPU_FAULT)), "no hint fact: the kind's");
	root->v = vs[0];
	w->v = vs[1];
	nw_vwork_free(root);
	nw_vwork_free(w);
	free(x.vw);
	for (int k = NW_F_NONE + 1; k < NW_F_NKINDS; k++)
		CHECK(nw_words_fact_known(k), "fact kind %d has its words", k);
}

/* rootcause.c's sentences that no kept case says (a cycle's MISSING_RANK
 * whose ops are not known; a culprit kept because the others wait): said
 * from their facts as the pass wrote them in words before. */
static void test_rootcause_words(void)
{
	struct nw_job job = { 0 };
	struct nw_jctx x = { .job = &job };
	struct nw_vwork *w = nw_verdict_new(&x, NW_V_MISSING_RANK, NULL, 0, 0);
	CHECK(w, "a verdict");
	struct nw_rankset one = { 0 }, two = { 0 };
	nw_set_add(&x, &one, 3);
	nw_set_add(&x, &two, 1);
	nw_set_add(&x, &two, 2);
	const struct nw_fset *s1 = nw_findings_set(&x, w, &one), *s2 = nw_findings_set(&x, w, &two);
	struct nw_fact sum[3] = { { .kind = NW_F_RANKS, .set = s2 }, { .kind = NW_F_ROOT_DIFFERS, .set = s2 },
	                          { .kind = NW_F_ROOT_DIFFERS_END, .set = s2 } };
	for (int k = 0; k < 3; k++)
		nw_verdict_summary_fact(&x, w, &sum[k]);
	struct nw_fact ev[2] = { { .kind = NW_F_ROOT_DEVIATES, .set = s1 }, { .kind = NW_F_ROOT_NOBODY } };
	nw_verdict_evidence_facts(&x, w, ev, 2);
	ev[0].kind = NW_F_ROOT_DIFFERS;   /* one rank: "is", "it" */
	ev[0].set = s1;
	ev[1] = (struct nw_fact){ .kind = NW_F_ROOT_DIFFERS_END, .set = s1 };
	nw_verdict_evidence_facts(&x, w, ev, 2);
	ev[0] = (struct nw_fact){ .kind = NW_F_ROOT_IN_CYCLE, .set = s2, .n = NW_TB_SKIPPED_SPLIT };
	nw_verdict_evidence_facts(&x, w, ev, 1);
	nw_rankset_free(&one);
	nw_rankset_free(&two);
	CHECK(!x.oom && w->v.nevidence == 3, "three lines");
	struct nw_verdict v = w->v;
	job.verdicts = &v;
	job.nverdicts = 1;
	struct nw_analysis a = { .jobs = &job, .njobs = 1 };
	CHECK(nw_words_say(&a) == 0, "said");
	CHECK(!strcmp(v.summary, "ranks 1-2 are in another op while the others wait in ?: the code path differs on them"),
	      "summary: %s", v.summary);
	CHECK(!strcmp(v.evidence[0], "rank 3 deviates: the other ranks the rule named wait for others, it waits for "
	                             "nobody"),
	      "kept: %s", v.evidence[0]);
	CHECK(!strcmp(v.evidence[1], " is in another op while the others wait in ?: the code path differs on it"),
	      "one: %s", v.evidence[1]);
	CHECK(!strcmp(v.evidence[2], " in a cycle of waits (ranks 1-2): it went on with the parent comm's collectives "
	                             "past a split of it that the ranks inside the split make at the same point of every "
	                             "step (their order); the others only wait for it"),
	      "reason: %s", v.evidence[2]);
	w->v = v;
	nw_vwork_free(w);
	free(x.vw);
}

/* Death took a whole process after the root-cause pass (rank_split's
 * nw_rules_process_fate): a P2P_UNMATCHED that blamed rank 3 (it never
 * posted its send) and a MISSING_RANK that blamed ranks 2-3 (never called
 * the AllReduce) now both blame 2-3, the same death (seed 202203, 2
 * processes of 2 ranks, a thread each). nw_fold_same_culprits keeps the
 * higher kind, the other folds into it as a consequence with its waiting
 * ranks; a verdict that blames other ranks stays. */
static void test_fold_same_culprits(void)
{
	struct nw_job job = { 0 };
	struct nw_jctx x = { .job = &job };
	struct nw_vwork *mr = nw_verdict_new(&x, NW_V_MISSING_RANK, NULL, 0, 0);
	struct nw_vwork *p2p = nw_verdict_new(&x, NW_V_P2P_UNMATCHED, NULL, 0, 0);
	struct nw_vwork *other = nw_verdict_new(&x, NW_V_MISSING_RANK, NULL, 0, 0);
	CHECK(mr && p2p && other, "three verdicts");
	words_summary(mr, "ranks 2-3 never called AllReduce #4");
	words_summary(p2p, "rank 0's Recv #4 from rank 3 is pending");
	words_summary(other, "rank 5 never called AllGather #2");
	const int32_t c[] = { 2, 3 };
	for (int k = 0; k < 2; k++) {
		nw_set_add(&x, &mr->v.culprits, c[k]);
		nw_set_add(&x, &p2p->v.culprits, c[k]);
	}
	nw_set_add(&x, &mr->v.waiting, 0);
	nw_set_add(&x, &mr->v.waiting, 1);
	nw_set_add(&x, &p2p->v.waiting, 0);
	nw_set_add(&x, &other->v.culprits, 5);
	nw_set_add(&x, &other->v.waiting, 4);
	nw_fold_same_culprits(&x);
	CHECK(!x.oom && mr->dropped && !p2p->dropped && !other->dropped,
	      "the MISSING_RANK folds into the P2P_UNMATCHED of the same culprits; rank 5's stays");
	CHECK(!strcmp(set_str(&p2p->v.waiting), "0-1") && !strcmp(set_str(&p2p->v.culprits), "2-3"),
	      "the kept verdict waits with both's ranks (%s)", set_str(&p2p->v.waiting));
	struct nw_verdict v = p2p->v;
	job.verdicts = &v;
	job.nverdicts = 1;
	struct nw_analysis a = { .jobs = &job, .njobs = 1 };
	CHECK(nw_words_say(&a) == 0 && v.nevidence == 1, "said");
	CHECK(!strcmp(v.evidence[0], "consequence: MISSING_RANK: ranks 2-3 never called AllReduce #4"), "folded: %s",
	      v.evidence[0]);
	p2p->v = v;
	nw_vwork_free(mr);
	nw_vwork_free(p2p);
	nw_vwork_free(other);
	free(x.vw);
}

/* Evidence grouped across ranks by fact (findings.c's nw_fg_*, WHERE)
 * groups exactly what grouping by text (nw_eg_*, nw_where) groups: 12
 * processes, ranks and processes without rank, stuck in one op or
 * another, idle, gone, exited with a status, alike stacks and not; more
 * groups than shown ("... N more groups"). Each line said the same. */
static void test_fact_groups(void)
{
	static char m0[] = "main", m1[] = "train", m2[] = "step", m3[] = "eval";
	static char *fa[] = { m0, m1, m2 }, *fb[] = { m0, m1, m3 };
	struct nw_thread_stack ta = { .tid = 100, .nframes = 3, .frames = fa }, tb = ta;
	tb.frames = fb;
	enum { NP = 12 };
	static struct nw_proc ps[NP];
	static struct nw_seg_op ops[NP][2];
	struct nw_job job = { 0 };
	struct nw_jctx x = { .job = &job, .timeout_ns = 1000000000ull };
	const uint64_t s = 1000000000ull;
	for (int i = 0; i < NP; i++) {
		struct nw_proc *p = &ps[i];
		memset(p, 0, sizeof *p);
		p->rank = i == 5 || i == 9 ? -1 : i;
		p->hdr.pid = 100 + i;
		snprintf(p->hdr.host, sizeof p->hdr.host, "h");
		p->alive = i == 7 ? 0 : 1;
		p->now_ns = 100 * s;
		p->ops = ops[i];
		p->nops = 2;
		p->threads = i == 3 || i == 5 ? &tb : &ta;   /* 1 and 3: alike but the stack */
		p->nthreads = 1;
		ta.tid = tb.tid = 100;   /* not the pid: the first thread is the main one */
		memset(ops[i], 0, sizeof ops[i]);
		ops[i][0] = (struct nw_seg_op){ .kind = NW_OP_ALLREDUCE, .seq = 4, .comm_id = 7, .state = NW_ST_COMPLETED,
			                        .enqueue_ns = 90 * s };
		/* ops 0-3: stuck in #5 for 2-5 s; 4-6 #6; 8: idle; 10-11: a new comm each */
		int stuck = i < 7;
		ops[i][1] = (struct nw_seg_op){ .kind = NW_OP_ALLREDUCE, .seq = i < 4 ? 5 : 6,
			                        .comm_id = i >= 10 ? (uint64_t)(20 + i) : 7,
			                        .state = stuck ? NW_ST_STARTED : NW_ST_COMPLETED,
			                        .enqueue_ns = (stuck ? 95 - i % 4 : 98) * s };
		p->last_activity_ns = i == 8 ? 90 * s : 99 * s;
		if (i == 11) {
			p->hdr.flags |= NW_SEG_F_EXITED | NW_SEG_F_EXIT_STATUS;
			p->hdr.exit_status = 3;
		}
	}
	/* Where each process is, grouped by fact: the sentences nw_where said
	 * as text before every family moved to facts. */
	static const char *where[] = {
		"ranks 0,2: in AllReduce #5 on comm 0000000000000007 (STARTED for 5.0-7.0 s)",
		"rank 1: in AllReduce #5 on comm 0000000000000007 (STARTED for 6.0 s); main thread: main < train < step",
		"rank 3: in AllReduce #5 on comm 0000000000000007 (STARTED for 8.0 s); main thread: main < train < eval",
		"ranks 4,6: in AllReduce #6 on comm 0000000000000007 (STARTED for 5.0-7.0 s)",
		"pid 105 on h: in AllReduce #6 on comm 0000000000000007 (STARTED for 6.0 s); main thread: main < train < "
		"eval",
		"rank 7: last NCCL call AllReduce #6 on comm 0000000000000007 (COMPLETED); process gone; main thread: main < "
		"train < step",
		"rank 8: last NCCL call AllReduce #6 on comm 0000000000000007 (COMPLETED); idle: no NCCL call for 10 s",
		"pid 109 on h: last NCCL call AllReduce #6 on comm 0000000000000007 (COMPLETED); main thread: main < train < "
		"step",
		"... 2 more groups",
	};
	struct nw_vwork *wf = nw_verdict_new(&x, NW_V_MISSING_RANK, NULL, 0, 0);
	CHECK(wf, "a verdict");
	struct nw_fgroups fg = { 0 };
	for (int i = 0; i < NP; i++) {
		struct nw_fact f;
		uint64_t age = nw_fact_where(&x, &ps[i], i % 2, &f);
		nw_fg_add(&x, &fg, &ps[i], &f, 1, age);
	}
	nw_fg_flush(&x, wf, &fg, 8);
	CHECK(!x.oom && wf->v.nevidence == 9, "8 groups and a line for the rest: %zu", wf->v.nevidence);
	struct nw_verdict vs[1] = { wf->v };
	job.verdicts = vs;
	job.nverdicts = 1;
	struct nw_analysis a = { .jobs = &job, .njobs = 1 };
	CHECK(nw_words_say(&a) == 0, "said");
	for (size_t i = 0; i < vs[0].nevidence && i < sizeof where / sizeof *where; i++)
		CHECK(vs[0].evidence[i] && !strcmp(vs[0].evidence[i], where[i]), "line %zu: '%s', want '%s'", i,
		      vs[0].evidence[i] ? vs[0].evidence[i] : "(none)", where[i]);
	wf->v = vs[0];
	/* A component of the graph (verdicts_p2p.c's deadlock), then a
	 * culprit's line: its label, where it is (PROC_AT). */
	static const char *component[] = {
		"rank 1: in AllReduce #5 on comm 0000000000000007 (STARTED for 6.0 s); main thread: main < train < step",
		"rank 4: in AllReduce #6 on comm 0000000000000007 (STARTED for 5.0 s); main thread: main < train < step",
		"rank 7: last NCCL call AllReduce #6 on comm 0000000000000007 (COMPLETED); process gone; main thread: main < "
		"train < step",
		"rank 10: last NCCL call AllReduce #6 on comm 000000000000001e (COMPLETED); main thread: main < train < step",
		"rank 4: in AllReduce #6 on comm 0000000000000007 (STARTED for 5.0 s); main thread: main < train < step",
	};
	struct nw_proc *pp[NP];
	uint32_t scc[NP];
	for (int i = 0; i < NP; i++) {
		pp[i] = &ps[i];
		scc[i] = i % 3 == 1;
	}
	job.procs = pp;
	job.nprocs = NP;
	x.g.nprocs = NP;
	x.g.scc = scc;
	struct nw_vwork *cf = nw_verdict_new(&x, NW_V_P2P_DEADLOCK, NULL, 0, 0);
	CHECK(cf, "one more verdict");
	nw_fact_where_component(&x, cf, 1);
	struct nw_fact at[2] = { { .kind = NW_F_PROC_AT, .proc = &ps[4] } };
	uint64_t age = nw_fact_where(&x, &ps[4], 1, &at[1]);
	at[0].set = nw_findings_aged(&x, cf, age, age);
	nw_verdict_evidence_facts(&x, cf, at, 2);
	CHECK(!x.oom && cf->v.nevidence == sizeof component / sizeof *component, "component: %zu lines",
	      cf->v.nevidence);
	struct nw_verdict vc[1] = { cf->v };
	job.verdicts = vc;
	CHECK(nw_words_say(&a) == 0, "said");
	for (size_t i = 0; i < vc[0].nevidence && i < sizeof component / sizeof *component; i++)
		CHECK(vc[0].evidence[i] && !strcmp(vc[0].evidence[i], component[i]), "component line %zu: '%s', want '%s'",
		      i, vc[0].evidence[i] ? vc[0].evidence[i] : "(none)", component[i]);
	cf->v = vc[0];
	nw_vwork_free(cf);
	nw_vwork_free(wf);
	free(x.vw);
}

int main(void)
{
	test_rankset();
	test_names();
	test_errors();
	test_graph();
	sb_layout_init(&layout, 4, 8, 64, 0);
	segbuf = malloc(layout.size);
	CHECK(segbuf != NULL, "segment buffer");
	test_split_stall();
	test_split_entering();
	test_initall();
	test_no_ranks();
	test_copies();
	test_coll_deadlock();
	test_mismatch_tie();
	test_peers_full_and_jobs();
	test_stream_blocked_two();
	test_fault_words();
	test_words_defaults();
	test_findings_wrap();
	test_rootcause_words();
	test_fold_same_culprits();
	test_fact_groups();
	free(segbuf);
	printf("%d checks passed\n", checks);
	return 0;
}
