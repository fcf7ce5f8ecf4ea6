/* `ncclwatch ras [--addr H:P] [--json] [--save FILE]`: asks NCCL's RAS
 * endpoint of a running job (report/sources/ras/, docs/ras.md) for its status and
 * shows it as it is: per communicator, the ranks grouped by state and
 * launch counts, and the ranks that did not answer. No verdict here:
 * `ncclwatch diagnose FILE` reads what --save wrote. */
#include "commands.h"

#include <getopt.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include "../decide/decide.h"
#include "../escape.h"
#include "../sources/ras/ras_client.h"

static void ras_help(FILE *out)
{
	fprintf(out,
	        "usage: ncclwatch ras [--addr HOST:PORT | --pid PID...] [--json] [--save FILE]\n"
	        "                     [--timeout S] [--verbose] [--text] [--settle S]\n"
	        "       ncclwatch ras --monitor GROUPS [--addr HOST:PORT] [--json] [--timeout S]\n"
	        "\n"
	        "Asks the RAS endpoint every NCCL process (2.24+) runs for the state of its\n"
	        "whole job, also one started without ncclwatch: per communicator and rank the\n"
	        "collective launch counts (Broadcast, Reduce, AllGather, ReduceScatter,\n"
	        "AllReduce; launched, not completed; no send/receive), init state, async\n"
	        "errors, finalize/destroy/abort, and the ranks whose process did not answer\n"
	        "or is considered dead. The protocol is NCCL's (docs/ras.md): JSON from NCCL\n"
	        "2.28.7 on, text before.\n"
	        "\n"
	        "  -a, --addr H:P    where to ask (default $NCCL_RAS_ADDR, else localhost:28028,\n"
	        "                    NCCL's default; IPv6 as [addr]:port)\n"
	        "  -p, --pid PID     ask where process PID (repeatable: the processes of one job)\n"
	        "                    serves RAS: its NCCL_RAS_ADDR, else the default; none of them\n"
	        "                    with NCCL_RAS_ENABLE=1 (or unset): one line, exit 2\n"
	        "  -j, --json        print the report as received instead of the summary\n"
	        "  -s, --save FILE   also write the report as received to FILE (for\n"
	        "                    `ncclwatch diagnose FILE`, or a directory it reads)\n"
	        "  -t, --timeout S   give up after S seconds in all (default 20; NCCL itself\n"
	        "                    waits up to 10 s for unresponsive processes)\n"
	        "  -v, --verbose     VERBOSE STATUS (text format: every outlier rank)\n"
	        "      --text        ask for NCCL's text format even where JSON is offered\n"
	        "  -S, --settle S    ask twice, S seconds apart, and say whether the job moved\n"
	        "                    (\"progress: ...\" when launch counts grew: not hung; a\n"
	        "                    running job's ranks always differ a little); the second\n"
	        "                    report is the one shown and saved\n"
	        "  -m, --monitor G   NCCL 2.29.2+: print the events of groups G (lifecycle, trace,\n"
	        "                    all; comma-separated) as the server sends them, for --timeout\n"
	        "                    seconds (as JSON objects with --json); an older NCCL refuses\n"
	        "                    it: one line, exit 2; after 256 MiB of events it stops: one\n"
	        "                    line, exit 1\n"
	        "  -h, --help        this text\n"
	        "\n"
	        "Output: \"RAS at ADDR: NCCL V, N communicators, ...\", then per communicator\n"
	        "\"comm 0xHASH: size N, A answered, M missing\", its ranks grouped as\n"
	        "\"  ranks 0-3,5: STATE AllReduce 23\" and \"  missing rank 4: pid P on HOST:\n"
	        "unresponsive|dead|no longer a member\".\n"
	        "\n"
	        "Strings from the report (host names, versions) and the events of --monitor\n"
	        "print with control characters escaped (\\xNN; \\u00XX inside JSON).\n"
	        "\n"
	        "Exit status: 0 a report was read (--monitor: watched until --timeout or the\n"
	        "server closed); 1 --monitor stopped at its limit of 256 MiB of events (one\n"
	        "line on stderr); 2 nothing answers at the address, the peer does not speak\n"
	        "NCCL's RAS protocol, or a usage error (one line on stderr).\n");
}

static const char *rank_state(const struct nw_ras_rank *r)
{
	if (r->abort_flag) return "ABORT";
	if (r->finalize_called || r->destroy_flag) return "FINALIZE";
	if (r->init_state == 0) return "RUNNING";
	return r->init_state == 7 ? "INIT" : "INIT-ERROR";
}

static void print_counts(FILE *out, const struct nw_ras_rank *r)
{
	int any = 0;
	if (!r->counts_known) { fprintf(out, " (counts not in the text report)"); return; }
	for (int f = 0; f < NW_RAS_NFUNCS; f++)
		if (r->counts[f]) { fprintf(out, " %s launches=%llu", nw_ras_func_names[f], (unsigned long long)r->counts[f]); any = 1; }
	if (!any) fprintf(out, " no collective launched");
}

static int same_group(const struct nw_ras_rank *a, const struct nw_ras_rank *b)
{
	return !strcmp(rank_state(a), rank_state(b)) && a->async_error == b->async_error &&
	       a->counts_known == b->counts_known && !memcmp(a->counts, b->counts, sizeof a->counts);
}

/* Ranks ordered by what they show (state, error, counts), then by rank:
 * equal ranks end up next to each other in O(n log n). */
static int cmp_show(const void *x, const void *y)
{
	const struct nw_ras_rank *a = *(const struct nw_ras_rank *const *)x, *b = *(const struct nw_ras_rank *const *)y;
	int c = strcmp(rank_state(a), rank_state(b));
	if (c) return c;
	if (a->async_error != b->async_error) return a->async_error < b->async_error ? -1 : 1;
	if (a->counts_known != b->counts_known) return a->counts_known < b->counts_known ? -1 : 1;
	for (int f = 0; f < NW_RAS_NFUNCS; f++)
		if (a->counts[f] != b->counts[f]) return a->counts[f] < b->counts[f] ? 1 : -1;
	return (a->rank > b->rank) - (a->rank < b->rank);
}

struct group { int first; size_t from, to; };

static int cmp_group(const void *x, const void *y)
{
	const struct group *a = x, *b = y;
	return (a->first > b->first) - (a->first < b->first);
}

static void print_summary(FILE *out, const struct nw_ras_report *r)
{
	/* the address (or file name) and the report's strings escaped: ../escape.h */
	fputs("RAS at ", out);
	nw_put_escaped(out, r->addr, 0);
	fputs(": NCCL ", out);
	nw_put_escaped(out, r->nccl_version[0] ? r->nccl_version : "?", 0);
	fprintf(out, ", %zu communicator%s, collected in %.3f s, %d timeout%s%s\n", r->ncomms, r->ncomms == 1 ? "" : "s", r->collection_time_s,
	        r->timeouts, r->timeouts == 1 ? "" : "s", r->from_text ? " (text format: outliers only)" : "");
	if (r->from_text && (r->dead_processes || r->missing_processes))
		fprintf(out, "processes: %d considered dead, %d did not answer\n", r->dead_processes, r->missing_processes);
	for (size_t i = 0; i < r->ncomms; i++) {
		const struct nw_ras_comm *c = &r->comms[i];
		fprintf(out, "comm 0x%016llx: size %d, %zu answered, %zu missing\n", (unsigned long long)c->hash, c->size,
		        c->nranks, c->nmissing);
		const struct nw_ras_rank **by = malloc((c->nranks ? c->nranks : 1) * sizeof *by);
		struct group *g = malloc((c->nranks ? c->nranks : 1) * sizeof *g);
		if (!by || !g) { free(by); free(g); return; }
		for (size_t k = 0; k < c->nranks; k++) by[k] = &c->ranks[k];
		qsort(by, c->nranks, sizeof *by, cmp_show);
		size_t ng = 0;
		for (size_t k = 0; k < c->nranks; k++) {
			if (k && same_group(by[k - 1], by[k])) { g[ng - 1].to = k + 1; if (by[k]->rank < g[ng - 1].first) g[ng - 1].first = by[k]->rank; continue; }
			g[ng++] = (struct group){ by[k]->rank, k, k + 1 };
		}
		qsort(g, ng, sizeof *g, cmp_group);   /* groups in the order of their first rank */
		for (size_t k = 0; k < ng; k++) {
			struct nw_rankset set = { 0 };
			for (size_t m = g[k].from; m < g[k].to; m++) nw_rankset_add(&set, by[m]->rank);
			char buf[256];
			nw_rankset_format(&set, buf, sizeof buf);
			const struct nw_ras_rank *r0 = by[g[k].from];
			fprintf(out, "  rank%s %s: %s", set.n == 1 ? "" : "s", buf, rank_state(r0));
			if (r0->async_error && r0->async_error != 7) fprintf(out, " async error %d", r0->async_error);
			print_counts(out, r0);
			fputc('\n', out);
			nw_rankset_free(&set);
		}
		free(by);
		free(g);
		for (size_t m = 0; m < c->nmissing; m++) {
			const struct nw_ras_missing *x = &c->missing[m];
			fprintf(out, "  missing rank %d: pid %d on ", x->rank, x->pid);
			nw_put_escaped(out, x->host[0] ? x->host : "?", 0);
			fprintf(out, ": %s\n", x->dead ? "considered dead" : x->unresponsive ? "unresponsive"
			                                  : "no longer a member (destroyed or never joined)");
		}
	}
}

/* Ranks (comm hash, rank) whose launch counts grew from a to b. */
static size_t grown(const struct nw_ras_report *a, const struct nw_ras_report *b)
{
	size_t n = 0;
	for (size_t i = 0; i < b->ncomms; i++) {
		const struct nw_ras_comm *cb = &b->comms[i], *ca = NULL;
		for (size_t k = 0; k < a->ncomms && !ca; k++) if (a->comms[k].hash == cb->hash) ca = &a->comms[k];
		if (!ca) continue;
		/* NCCL lists ranks by rank: a binary search (a list out of order is not compared) */
		int sorted = 1;
		for (size_t s = 1; s < ca->nranks; s++) sorted &= ca->ranks[s - 1].rank < ca->ranks[s].rank;
		if (!sorted) continue;
		for (size_t r = 0; r < cb->nranks; r++) {
			size_t lo = 0, hi = ca->nranks;
			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;
				if (ca->ranks[mid].rank < cb->ranks[r].rank) lo = mid + 1;
				else hi = mid;
			}
			if (lo == ca->nranks || ca->ranks[lo].rank != cb->ranks[r].rank) continue;
			int up = 0;
			for (int f = 0; f < NW_RAS_NFUNCS; f++) up |= cb->ranks[r].counts[f] > ca->ranks[lo].counts[f];
			n += up;
		}
	}
	return n;
}

/* What the command line asks of ras. */
struct ras_opts {
	struct nw_ras_query_opts q;
	const char *save, *monitor;
	double settle;
	pid_t pids[256];
	size_t npids;
	int json;
};

/* The options; -1 to go on, else the exit status. */
static int parse_ras_options(int argc, char **argv, struct ras_opts *o)
{
	static const struct option options[] = {
		{ "addr", required_argument, NULL, 'a' },
		{ "json", no_argument, NULL, 'j' },
		{ "pid", required_argument, NULL, 'p' },
		{ "monitor", required_argument, NULL, 'm' },
		{ "settle", required_argument, NULL, 'S' },
		{ "save", required_argument, NULL, 's' },
		{ "timeout", required_argument, NULL, 't' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "text", no_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:a:jp:m:S:s:t:vTh", options, NULL)) != -1) {
		switch (c) {
		case 'a':
			if (!*optarg) return nw_usage_error("ras", "--addr wants HOST:PORT");
			o->q.addr = optarg;
			break;
		case 'j': o->json = 1; break;
		case 'S':
			if (nw_cli_seconds(optarg, &o->settle)) return nw_usage_error("ras", "--settle '%s': not a number of seconds > 0", optarg);
			break;
		case 'm':
			if (!*optarg) return nw_usage_error("ras", "--monitor wants event groups (lifecycle, trace, all)");
			o->monitor = optarg;
			break;
		case 'p': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || v <= 0 || o->npids == sizeof o->pids / sizeof o->pids[0])
				return nw_usage_error("ras", "--pid '%s': not a process id (at most 256)", optarg);
			o->pids[o->npids++] = (pid_t)v;
			break;
		}
		case 's':
			if (!*optarg) return nw_usage_error("ras", "--save wants a file name");
			o->save = optarg;
			break;
		case 't':
			if (nw_cli_seconds(optarg, &o->q.deadline_s)) return nw_usage_error("ras", "--timeout '%s': not a number of seconds > 0", optarg);
			break;
		case 'v': o->q.verbose = 1; break;
		case 'T': o->q.force_text = 1; break;
		case 'h': ras_help(stdout); return NW_EXIT_OK;
		case ':': return nw_usage_error("ras", "%s wants a value", argv[optind - 1]);
		default: return nw_usage_error("ras", "unknown option '%s' (see ncclwatch ras --help)", argv[optind - 1]);
		}
	}
	return -1;
}

/* --monitor: the events of the groups asked for, as the server sends them. */
static int run_monitor(struct ras_opts *o)
{
	char err0[512];
	if (o->npids || o->save || o->q.verbose || o->q.force_text)
		return nw_usage_error("ras", "--monitor goes with --addr, --json and --timeout only");
	int st = nw_ras_monitor(&o->q, o->monitor, o->json, stdout, err0, sizeof err0);
	if (st != NW_RAS_OK)
		nw_print_line(stderr, "ncclwatch ras: %s", err0);
	/* cut short by its byte limit: the events shown are not all */
	return st == NW_RAS_OK ? NW_EXIT_OK : st == NW_RAS_LIMIT ? NW_EXIT_PROBLEM : NW_EXIT_USAGE;
}

/* One report, from where the processes given serve RAS, else --addr's. */
static int query(struct ras_opts *o, struct nw_ras_report *r, char *err, size_t len)
{
	return o->npids ? nw_ras_query_pids(o->pids, o->npids, &o->q, r, err, len)
	                : nw_ras_query(&o->q, r, err, len);
}

/* --settle S: ask again after S seconds; *r becomes the second report,
 * progress says whether any launch count grew. -1 to go on, else the exit
 * status (*r freed). */
static int settle_and_ask_again(struct ras_opts *o, struct nw_ras_report *r, char *progress, size_t len)
{
	char err[512];
	double settle = o->settle;
	struct timespec ts = { (time_t)settle, (long)((settle - (double)(time_t)settle) * 1e9) };
	while (nanosleep(&ts, &ts)) {}
	struct nw_ras_report r2;
	int st = query(o, &r2, err, sizeof err);
	if (st != NW_RAS_OK) {
		nw_ras_report_free(r);
		nw_print_line(stderr, "ncclwatch ras: second query: %s", err);
		return NW_EXIT_USAGE;
	}
	size_t moved = grown(r, &r2);
	if (moved)
		snprintf(progress, len, "progress: %zu rank%s launched more collectives in %g s: the job moves, "
		         "count differences are in-flight ops", moved, moved == 1 ? "" : "s", settle);
	else
		snprintf(progress, len, "no progress in %g s: no launch count grew", settle);
	nw_ras_report_free(r);
	*r = r2;
	return -1;
}

/* --save FILE: the report as received. -1 to go on, else the exit status
 * (r freed). */
static int save_report(const char *save, struct nw_ras_report *r)
{
	FILE *f = fopen(save, "we");
	int bad = !f;
	if (f) {
		bad = fwrite(r->raw, 1, r->raw_len, f) != r->raw_len;
		bad |= fclose(f) != 0;   /* closed once, whatever it returns */
	}
	if (bad) {
		nw_ras_report_free(r);
		return nw_usage_error("ras", "cannot write %s", save);
	}
	return -1;
}

static int ras_run(int argc, char **argv)
{
	struct ras_opts o = { .q = { .server_timeout_s = -1 } };
	int rc = parse_ras_options(argc, argv, &o);
	if (rc >= 0)
		return rc;
	if (optind < argc) return nw_usage_error("ras", "unexpected argument '%s'", argv[optind]);
	if (o.npids && o.q.addr) return nw_usage_error("ras", "--addr and --pid exclude each other");
	if (o.monitor)
		return run_monitor(&o);
	struct nw_ras_report r;
	char err[512];
	int st = query(&o, &r, err, sizeof err);
	if (st != NW_RAS_OK) {
		nw_print_line(stderr, "ncclwatch ras: %s", err);
		return NW_EXIT_USAGE;
	}
	char progress[256] = "";
	if (o.settle > 0 && (rc = settle_and_ask_again(&o, &r, progress, sizeof progress)) >= 0)
		return rc;
	if (o.save && (rc = save_report(o.save, &r)) >= 0)
		return rc;
	/* as received, but nothing a terminal acts on (../escape.h) */
	if (o.json) nw_put_escaped_n(stdout, r.raw, r.raw_len, r.from_text ? NW_ESC_LINES : NW_ESC_JSON);
	else print_summary(stdout, &r);
	if (progress[0]) fprintf(o.json ? stderr : stdout, "%s\n", progress);
	nw_ras_report_free(&r);
	return NW_EXIT_OK;
}

const struct nw_command nw_cmd_ras = {
	.name = "ras",
	.summary = "ask NCCL's RAS endpoint of a running job for its launch counts and dead ranks",
	.help = ras_help,
	.run = ras_run,
};
