/* `ncclwatch show [--records N] [--no-stacks] FILE|DIR...`: the raw contents
 * of segments (header, communicators, peers, op records, thread stacks),
 * one block per segment. */
#include "commands.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "show_text.h"
#include "show_fr.h"
#include "../sources/fr/fr.h"
#include "../escape.h"

static void show_help(FILE *out)
{
	fprintf(out,
	        "usage: ncclwatch show [--records N] [--no-stacks] FILE|DIR...\n"
	        "\n"
	        "Prints what each segment holds: a live segment or a dump, or every *.seg\n"
	        "file under DIR and its subdirectories two levels down (DIR/<job>/<host>.<pid>.seg).\n"
	        "A PyTorch Flight Recorder dump (pickle or JSON) is shown as the process the\n"
	        "engine makes of it: \"flight-recorder PATH\", rank, comms, peers and the ops kept\n"
	        "(docs/flight-recorder.md).\n"
	        "\n"
	        "  -n, --records N   show only the newest N op records (default: all valid ones)\n"
	        "  -S, --no-stacks   only the one-line stack summary: no module, thread, frame\n"
	        "                    or op-stack ('at') lines\n"
	        "  -h, --help        this text\n"
	        "\n"
	        "Output, per segment (blocks separated by an empty line):\n"
	        "  segment PATH\n"
	        "    KEY VALUE        header fields: format host pid ppid uid rank local_rank\n"
	        "                     world_size job start (ISO 8601, UTC) start_ticks (clock\n"
	        "                     ticks since boot, - unknown) flags nccl nccl_lib\n"
	        "                     cuda_driver gpu env (one line per variable) heartbeat\n"
	        "                     tracking (none | events | no-driver) watchdog_tid poll_ms\n"
	        "                     timeout_ms counters (events_created= event_records=\n"
	        "                     ops_tracked= findings= dumps= request_served=)\n"
	        "                     last_finding ops_dropped comms_dropped threads_dropped\n"
	        "                     comm_reuses (2.0) graph_launches graphs_untracked (2.1)\n"
	        "                     stopped (no | yes: ERROR) size\n"
	        "  comms count=N capacity=N\n"
	        "    comm SLOT id=HEX16 origin= rank=R/N state= device= init_result= coll_enqueued=\n"
	        "         coll_started= coll_completed= p2p_enqueued= p2p_completed= async_error=\n"
	        "         parent=HEX16 color= key= blocking= gen= bus_id= name=  (one line;\n"
	        "                     gen: comms the slot held before this one, 2.0)\n"
	        "  peers count=N capacity=N\n"
	        "    peer SLOT comm=SLOT id=HEX16 peer=R send_enqueued= send_completed=\n"
	        "         recv_enqueued= recv_completed=     (one line; id - : its comm\n"
	        "                     ended and the slot holds another, 2.0)\n"
	        "  records shown=N valid=N torn=N overwritten=N unpublished=N head=N capacity=N\n"
	        "    op TICKET t=+S.US tid= KIND comm=HEX16 rank=R/N seq= count= dtype= redop=\n"
	        "         root=|peer= group= depth= state= result= cuda_error= flags= started=\n"
	        "         ended= stream= caller=                                  (one line)\n"
	        "    op TICKET t=+S.US tid= GraphLaunch graph=#FIRST_SEQ exec=0xEXEC replay=N\n"
	        "         ops=N first=KIND comm=HEX16 rank=R/N state= cuda_error= started=\n"
	        "         ended= stream= caller=   (2.1: a launch of a CUDA graph holding\n"
	        "                     NCCL ops; ops: NCCL ops captured into it, first: the\n"
	        "                     kind of the first, comm and rank: its communicator's,\n"
	        "                     graph: the first's seq there, 2.2; 2.1: capture id)\n"
	        "  snapshot no comm table, peer table or op ring (...)   instead of the comms,\n"
	        "                     peers and records lines in a snapshot (1.4: flag\n"
	        "                     snapshot, written by ncclwatch attach)\n"
	        "      at 0xIP SYMBOL+0xOFF (MODULE+0xOFF)   the op's call stack, innermost\n"
	        "                     first, if recorded (NCCLWATCH_STACKS=1); ?? = unknown\n"
	        "      py FUNCTION (FILE:LINE)   1.4: the op's Python call site, innermost\n"
	        "                     first (NCCLWATCH_PY_FRAMES), named at the last capture\n"
	        "  stacks STATE t=+S request=N threads=N captures=N seq=N modules=N\n"
	        "         thread_capacity=N frame_capacity=N opstack_depth=N      (one line)\n"
	        "                     STATE: captured | never | being-written (a capture in\n"
	        "                     progress or interrupted: not shown) | uninitialized |\n"
	        "                     none (no stack area: only this word)\n"
	        "    note native|python TEXT            (1.4: what the capture could not do)\n"
	        "    module IDX 0xBASE PATH                  every module of the capture\n"
	        "    thread TID \"NAME\" [watchdog] [no-reply] [in-nccl] [truncated]\n"
	        "                      [regs-syscall|regs-ptrace|regs-signal]   (1.4)\n"
	        "      #N 0xIP SYMBOL+0xOFF (MODULE+0xOFF)   its frames, innermost first\n"
	        "      python \"NAME\" frames=N native_above=N [main] [gil] [truncated]\n"
	        "                     1.4: a Python thread runs on it (NAME: its Python name,\n"
	        "                     \"\" unknown); native_above: native frames #0.. that\n"
	        "                     run under its innermost Python frame\n"
	        "      py#N FUNCTION (FILE:LINE)          its Python frames, innermost first\n"
	        "Records come oldest first; times are seconds after the segment's start; '-'\n"
	        "means none; MODULE is the module's file name (its path is on its module\n"
	        "line). docs/FORMAT.md describes every field.\n"
	        "\n"
	        "show prints every file it is given, whoever owns it (its uid is shown).\n"
	        "\n"
	        "Exit status: 0 every file shown; 1 some file could not be read or listed\n"
	        "(one line on stderr each; the others are still shown); 2 usage error or\n"
	        "nothing readable.\n");
}

static int show_run(int argc, char **argv)
{
	static const struct option options[] = {
		{ "records", required_argument, NULL, 'n' },
		{ "no-stacks", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct nw_show_options opt = { .all_records = 1 };
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:n:Sh", options, NULL)) != -1) {
		switch (c) {
		case 'n': {
			char *end;
			errno = 0;
			unsigned long long n = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-')
				return nw_usage_error("show", "--records wants a number, not '%s'", optarg);
			opt.all_records = 0;
			opt.max_records = n;
			break;
		}
		case 'S':
			opt.no_stacks = 1;
			break;
		case 'h':
			show_help(stdout);
			return NW_EXIT_OK;
		case ':':
			return nw_usage_error("show", "option '%s' needs a value", argv[optind - 1]);
		default:
			return nw_usage_error("show", "unknown option '%s' (see ncclwatch show --help)",
			                      argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return nw_usage_error("show", "no FILE or DIR given (see ncclwatch show --help)");

	int bad = 0, shown = 0;
	for (int i = optind; i < argc; i++) {
		struct nw_path_list list = { 0 };
		struct nw_read_error err;
		if (nw_input_list(argv[i], &list, &err) != NW_READ_OK) {
			nw_print_line(stderr, "ncclwatch: %s", err.message);
			bad++;
		}
		for (size_t j = 0; j < list.count; j++) {
			struct nw_segment seg;
			size_t pl = strlen(list.paths[j]);
			if ((pl < 4 || strcmp(list.paths[j] + pl - 4, ".seg")) && nw_fr_sniff(list.paths[j])) {
				/* A PyTorch Flight Recorder dump: what the engine makes of it. */
				if (shown)
					fputc('\n', stdout);
				if (nw_show_fr(stdout, list.paths[j], &err) != NW_READ_OK) {
					nw_print_line(stderr, "ncclwatch: %s", err.message);
					bad++;
				} else {
					shown++;
				}
				continue;
			}
			if (nw_segment_read(list.paths[j], 0, &seg, &err) != NW_READ_OK) {
				nw_print_line(stderr, "ncclwatch: %s", err.message);
				bad++;
				continue;
			}
			if (shown++)
				fputc('\n', stdout);
			nw_show_segment(stdout, &seg, &opt);
			nw_segment_free(&seg);
		}
		nw_path_list_free(&list);
	}
	if (fflush(stdout) != 0)
		return nw_usage_error("show", "writing the output: %s", strerror(errno));
	/* The exit-status rule (commands.h). */
	return !bad ? NW_EXIT_OK : shown ? NW_EXIT_PROBLEM : NW_EXIT_USAGE;
}

const struct nw_command nw_cmd_show = {
	.name = "show",
	.summary = "print the header, communicators, peers, op records and stacks of segments",
	.help = show_help,
	.run = show_run,
};
