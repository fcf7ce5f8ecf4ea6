/* verdict_kinds.h: the verdict kinds, one row each. The only list of them:
 * the enum (report/decide/decide.h), nw_verdict_name and
 * nw_verdict_hint (report/words/kind_words.c), the KIND line of
 * `ncclwatch diagnose --help` (report/cli/cmd_diagnose.c) and the JSON
 * schema's enum (docs/diagnose.schema.json, rewritten by `make schema`)
 * come from it. tests/report/test-report-kinds.sh checks that the schema,
 * the help, docs/json-schema.md and docs/diagnosis.md say what it says.
 * A new kind: a row here, the rule that finds it (report/{sources,model,decide}/), and
 * its words (the facts of its summary and evidence, said in report/words/).
 *
 * X(NAME, SEVERITY, HINT)
 *   NAME      as printed ("MISSING_RANK: ...") and in JSON ("kind")
 *   SEVERITY  the enum's value, its precedence: a job's verdicts are sorted
 *             by it, highest first, and `worst` is the highest. Rows are in
 *             this order, from 0, without gaps (checked at compile time
 *             and by the test)
 *   HINT      DESIGN.md's hint column: what to try; "" none */
#ifndef NCCLWATCH_VERDICT_KINDS_H
#define NCCLWATCH_VERDICT_KINDS_H

#define NW_VERDICT_KINDS(X) \
	X(HEALTHY, 0, "") \
	X(IDLE, 1, "compile / data loading / checkpoint") \
	/* stuck (ranks wait inside NCCL), and the data (stacks alone) cannot \
	 * tell who is behind: says what would; or nothing wrong in what was \
	 * recorded, but data was lost (lost.c) */ \
	X(UNDECIDED, 2, "ncclwatch ras (NCCL's own counts), or run the job with the preload " \
	                "(ncclwatch run, LD_PRELOAD=libncclwatch.so) for op numbers") \
	X(TRANSPORT_STALL, 3, "P2P or NVLink trouble: try NCCL_P2P_DISABLE=1 to confirm, NCCL_P2P_LEVEL=NVL, " \
	                      "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,P2P,NET; compare driver versions " \
	                      "across ranks") \
	X(STREAM_BLOCKED, 4, "") \
	/* below the p2p verdicts: a pipeline rank stuck in a send/recv also \
	 * misses the next collective */ \
	X(MISSING_RANK, 5, "the code path differs on those ranks") \
	X(P2P_UNMATCHED, 6, "pipeline schedule mismatch") \
	X(P2P_DEADLOCK, 7, "pipeline schedule mismatch") \
	X(MISMATCH, 8, "") \
	X(INIT_STALL, 9, "launch, rendezvous address, network interface") \
	X(GPU_FAULT, 10, "Xid / ECC; the error string")

/* The number of kinds (rows). */
#define NW_VK_ONE_(name, severity, hint) +1
enum { NW_VERDICT_NKINDS = 0 NW_VERDICT_KINDS(NW_VK_ONE_) };

#endif
