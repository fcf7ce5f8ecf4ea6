/* ras_client: a client of NCCL's RAS endpoint (the protocol of NCCL's
 * src/ras/client_support.cc, docs/ras.md), and the parsed form of its
 * report. Used by `ncclwatch ras`, by `diagnose` (a saved report) and by
 * `attach` (one query per job found).
 *
 * Untrusted input: every reply is bounded in time (one overall deadline)
 * and size, and a peer that does not speak the protocol is one message in
 * `err`, never a crash or a hang. */
#ifndef NCCLWATCH_REPORT_RAS_CLIENT_H
#define NCCLWATCH_REPORT_RAS_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define NW_RAS_DEFAULT_PORT 28028
#define NW_RAS_DEFAULT_ADDR "localhost:28028"
#define NW_RAS_NFUNCS 5                  /* NCCL_NUM_FUNCTIONS */
#define NW_RAS_DEFAULT_DEADLINE_S 20.0   /* NCCL's worst case is leg + extra timeout (10 s) */
#define NW_RAS_DEFAULT_MAX_BYTES (256u << 20)

/* NCCL's ncclFunc_t order: Broadcast, Reduce, AllGather, ReduceScatter, AllReduce. */
extern const char *const nw_ras_func_names[NW_RAS_NFUNCS];
/* The same kinds as ncclwatch's op kinds (NW_OP_BROADCAST, ...). */
extern const uint16_t nw_ras_func_ops[NW_RAS_NFUNCS];

struct nw_ras_rank {
	int rank;
	char host[64];
	int pid;
	int cuda_dev, nvml_dev;
	int init_state;          /* ncclResult_t: 0 done, 7 (ncclInProgress) still in init */
	int async_error;         /* ncclResult_t */
	int finalize_called, destroy_flag, abort_flag;
	uint64_t counts[NW_RAS_NFUNCS];  /* launches (not completions) per function */
	int counts_known;        /* 0: a text report did not list this rank's counts */
};

struct nw_ras_missing {
	int rank;
	char host[64];
	int pid;
	int cuda_dev, nvml_dev;
	int unresponsive;        /* its process did not answer RAS */
	int dead;                /* RAS declared its process dead */
};

struct nw_ras_comm {
	uint64_t hash;           /* NCCL's commHash */
	char secondary[48];      /* "0xHOSTHASH:0xPIDHASH" of its rank 0 */
	int size;                /* ranks in the communicator */
	size_t nranks;
	struct nw_ras_rank *ranks;        /* that answered, by rank */
	size_t nmissing;
	struct nw_ras_missing *missing;   /* that did not, by rank */
	/* text format only: "N ranks have launched up to operation V", the
	 * largest group of a kind whose counts differ (0 ranks: not given) */
	uint64_t text_majority[NW_RAS_NFUNCS];
	int text_majority_ranks[NW_RAS_NFUNCS];
};

struct nw_ras_report {
	char nccl_version[32];
	int cuda_runtime_version, cuda_driver_version;
	char timestamp[32];
	size_t ncomms;
	struct nw_ras_comm *comms;
	double collection_time_s;
	int timeouts;
	int from_text;           /* parsed from the text format (NCCL < 2.28.7): counts only for outliers */
	int dead_processes, missing_processes;  /* text format only: the DEAD / INCOMPLETE sections */
	char *raw;               /* the report as received (JSON or text), NUL-terminated */
	size_t raw_len;
	char addr[128];          /* where it came from (query) or the file name */
};

struct nw_ras_query_opts {
	const char *addr;        /* "host:port", "[v6]:port"; NULL: nw_ras_default_addr() */
	double deadline_s;       /* whole query; <= 0: NW_RAS_DEFAULT_DEADLINE_S */
	size_t max_bytes;        /* largest report accepted; 0: NW_RAS_DEFAULT_MAX_BYTES */
	int server_timeout_s;    /* sent as TIMEOUT; < 0: not sent (NCCL's 5 s) */
	int verbose;             /* VERBOSE STATUS */
	int force_text;          /* do not ask for JSON */
};

enum nw_ras_status {
	NW_RAS_OK = 0,
	NW_RAS_NO_ANSWER = 1,    /* nobody listens there, or nobody answered in time */
	NW_RAS_BAD_PEER = 2,     /* it answered, but not NCCL's RAS protocol, or a report we cannot read */
	NW_RAS_ERROR = 3,        /* bad address, out of memory */
};

/* $NCCL_RAS_ADDR if set, else "localhost:28028" (NCCL reads no other variable). */
const char *nw_ras_default_addr(void);

/* The address the process `pid` serves RAS on, from its environment
 * (/proc/PID/environ): NCCL_RAS_ADDR, else the default; *enabled is 0 when
 * it has NCCL_RAS_ENABLE set to anything but 1. 0, or -1 if its
 * environment cannot be read (buf then holds the default). */
int nw_ras_addr_of_pid(pid_t pid, char *buf, size_t len, int *enabled);

/* For attach: the RAS report of the job whose processes are `pids` (all
 * on this host). The address is the one most of them serve on (their
 * NCCL_RAS_ADDR, else the default); processes with NCCL_RAS_ENABLE other
 * than 1 are not counted. NW_RAS_DISABLED when every process has RAS off
 * (nothing queried); else as nw_ras_query. `note` gets one line for the
 * user either way ("RAS off in every process (NCCL_RAS_ENABLE=0): stacks
 * alone", "RAS at ADDR: ...", or the query's error). */
#define NW_RAS_DISABLED 4
int nw_ras_query_pids(const pid_t *pids, size_t n, const struct nw_ras_query_opts *o, struct nw_ras_report *out,
                      char *note, size_t notelen);

/* Connect, CLIENT PROTOCOL 2, TIMEOUT, SET FORMAT json (text when the
 * server refuses it), STATUS, read until the server closes, parse.
 * NW_RAS_OK with *out filled (free with nw_ras_report_free), else the
 * status with one line in err. */
int nw_ras_query(const struct nw_ras_query_opts *o, struct nw_ras_report *out, char *err, size_t errlen);

/* MONITOR (NCCL 2.29.2+): after the handshake (and SET FORMAT json when
 * `json`), subscribe to `groups` ("lifecycle", "trace", "all", comma-
 * separated; NULL: the server's default, lifecycle) and copy every event
 * the server sends to `out` (escaped: ../escape.h, NW_ESC_JSON or
 * NW_ESC_LINES) until it closes or o->deadline_s passes (the watch ends
 * normally: NW_RAS_OK), or until o->max_bytes were copied: NW_RAS_LIMIT
 * with err saying so. A server that refuses MONITOR (before 2.29.2:
 * "ERROR: Unknown command") is NW_RAS_BAD_PEER with err saying so. */
#define NW_RAS_LIMIT 5
int nw_ras_monitor(const struct nw_ras_query_opts *o, const char *groups, int json, FILE *out, char *err, size_t errlen);

/* Parse a report (JSON or NCCL's text format): 0, or -1 with err. Takes
 * a copy of text as out->raw. `name` names the source in messages. A JSON
 * report is read a rank at a time (ras_cut.h): reading takes about the
 * text's size again, not jansson's tree of it (five times). */
int nw_ras_parse(const char *name, const char *text, size_t len, struct nw_ras_report *out, char *err, size_t errlen);
int nw_ras_parse_json(const char *name, const char *text, size_t len, struct nw_ras_report *out, char *err, size_t errlen);
int nw_ras_parse_text(const char *name, const char *text, size_t len, struct nw_ras_report *out, char *err, size_t errlen);

/* The same for a malloc'd buf (NUL at buf[len]) that becomes out->raw
 * (no copy; freed on an error). json: 1 JSON, 0 text, -1 as it looks. */
int nw_ras_parse_owned(const char *name, char *buf, size_t len, int json, struct nw_ras_report *out, char *err,
                       size_t errlen);

/* Read a saved report (`ncclwatch ras --save`): 0, or -1 with err naming the file. */
int nw_ras_load_file(const char *path, struct nw_ras_report *out, char *err, size_t errlen);
/* Does the file look like a saved RAS report (a JSON object with
 * "nccl_version" and "communicators_count" in its first 512 bytes, or the
 * text format's "NCCL version" line)? Reads its first bytes only. */
int nw_ras_is_report_file(const char *path);

void nw_ras_report_free(struct nw_ras_report *r);

#endif
