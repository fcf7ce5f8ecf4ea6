/* analyze: the analysis engine's test driver. Runs nw_analyze on the
 * paths given and prints what it found in a plain, grep-stable form, one
 * record per line:
 *
 *   job NAME procs=N world=W missing=SET timeout=SECS
 *   verdict KIND comm=HEX|- op=KIND|- seq=N culprits=SET waiting=SET unknown=SET
 *   summary TEXT                  (of the verdict above)
 *   hint TEXT                     (of the verdict above, if any)
 *   evidence TEXT                 (of the verdict above, one per line)
 *   envdiff "NAME" "VALUE"=SET "VALUE"=SET ...   (values most common first)
 *   stack SET THREAD FRAME FRAME ...             (largest group first)
 *   bad PATH: MESSAGE
 *   worst KIND
 *
 * SET is a rank set ("0-4,6-7", "-" when empty). Exit status: 0 when every
 * job is HEALTHY, 1 when a problem was found, 2 when nothing could be read.
 *
 *   analyze [--timeout SECS] [--job NAME] [--threads N] [--quiet] PATH...
 *     --threads N  options.max_threads (1: read on the calling thread only)
 *     --quiet      only the job and verdict lines and "worst" (for scale runs) */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../report/decide/decide.h"
#include "../../report/names.h"
#include "../../report/words/words.h"

static void put_set(const struct nw_rankset *s)
{
	size_t need = nw_rankset_format(s, NULL, 0);
	char *b = malloc(need + 1);
	if (!b)
		exit(2);
	nw_rankset_format(s, b, need + 1);
	fputs(b, stdout);
	free(b);
}

/* Strings on one line: control characters and quotes as \xNN. */
static void put_text(const char *s, int quote)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20 || c == 0x7f || (quote && c == '"'))
			printf("\\x%02x", c);
		else
			putchar(c);
	}
}

int main(int argc, char **argv)
{
	struct nw_analysis_options opt = { 0 };
	int quiet = 0;
	static const struct option longopts[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ "job", required_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "threads", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	while ((c = getopt_long(argc, argv, "t:j:qn:", longopts, NULL)) != -1) {
		switch (c) {
		case 't': opt.timeout_s = atof(optarg); break;
		case 'j': opt.job = optarg; break;
		case 'q': quiet = 1; break;
		case 'n': opt.max_threads = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: analyze [--timeout SECS] [--job NAME] [--threads N] [--quiet] PATH...\n");
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "usage: analyze [--timeout SECS] [--job NAME] [--threads N] [--quiet] PATH...\n");
		return 2;
	}
	struct nw_analysis a;
	struct nw_read_error err;
	if (nw_analyze((const char *const *)argv + optind, (size_t)(argc - optind), &opt, &a, &err) != 0) {
		fprintf(stderr, "analyze: %s\n", err.message);
		return 2;
	}
	if (nw_words_say(&a) != 0) {
		fprintf(stderr, "analyze: out of memory\n");
		return 2;
	}
	for (size_t j = 0; j < a.njobs; j++) {
		const struct nw_job *job = &a.jobs[j];
		printf("job %s procs=%zu world=%d missing=", job->name, job->nprocs, (int)job->world_size);
		put_set(&job->missing);
		printf(" timeout=%g\n", job->timeout_s);
		for (size_t i = 0; i < job->nverdicts; i++) {
			const struct nw_verdict *v = &job->verdicts[i];
			char kb[NW_NAME_BUF];
			printf("verdict %s comm=", nw_verdict_name(v->kind));
			if (v->comm_id)
				printf("%016" PRIx64, v->comm_id);
			else
				putchar('-');
			printf(" op=%s seq=%" PRIu64 " culprits=", v->op_kind ? nw_op_kind_name(v->op_kind, kb) : "-", v->seq);
			put_set(&v->culprits);
			fputs(" waiting=", stdout);
			put_set(&v->waiting);
			fputs(" unknown=", stdout);
			put_set(&v->unknown);
			putchar('\n');
			if (quiet)
				continue;
			fputs("summary ", stdout);
			put_text(v->summary ? v->summary : "", 0);
			putchar('\n');
			if (v->hint && v->hint[0]) {
				fputs("hint ", stdout);
				put_text(v->hint, 0);
				putchar('\n');
			}
			for (size_t k = 0; k < v->nevidence; k++) {
				fputs("evidence ", stdout);
				put_text(v->evidence[k], 0);
				putchar('\n');
			}
		}
		if (quiet)
			continue;
		for (size_t i = 0; i < job->ndiffs; i++) {
			const struct nw_env_diff *d = &job->diffs[i];
			fputs("envdiff \"", stdout);
			put_text(d->name, 1);
			putchar('"');
			for (size_t k = 0; k < d->nvalues; k++) {
				fputs(" \"", stdout);
				put_text(d->values[k].value, 1);
				fputs("\"=", stdout);
				put_set(&d->values[k].ranks);
			}
			putchar('\n');
		}
		for (size_t i = 0; i < job->nstacks; i++) {
			const struct nw_stack_group *g = &job->stacks[i];
			fputs("stack ", stdout);
			put_set(&g->ranks);
			putchar(' ');
			put_text(g->thread_name && g->thread_name[0] ? g->thread_name : "-", 0);
			for (uint32_t k = 0; k < g->nframes; k++) {
				putchar(' ');
				put_text(g->frames[k], 0);
			}
			putchar('\n');
		}
	}
	for (size_t i = 0; i < a.nbad; i++) {
		fputs("bad ", stdout);
		put_text(a.bad[i].err.message, 0);
		putchar('\n');
	}
	int worst = nw_analysis_worst(&a);
	printf("worst %s\n", nw_verdict_name(worst));
	int njobs = (int)a.njobs;
	nw_analysis_free(&a);
	if (!njobs)
		return 2;
	return worst == NW_V_HEALTHY ? 0 : 1;
}
