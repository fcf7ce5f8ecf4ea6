#!/usr/bin/env python3
"""records.py: the figures the GPU check's steps judge, from `ncclwatch
show` output (the segments of one run; dumps of the same process are
skipped, the live segment counts).

  records.py SHOW.txt

Prints NAME=VALUE lines (names [a-z0-9_], values without spaces), summed
over the segments that recorded ops:

  segments            segments read (dumps excluded)
  tracking            their tracking modes, "events" when all are
  events_created event_records ops_tracked      the counters
  valid torn overwritten unpublished            of the op ring
  coll_enqueued coll_started coll_completed     the comm lines
  n_KIND              records of KIND (AllReduce, CommInit, ...)
  n_KIND_STATE        records of KIND in STATE
  states_KIND         "STATE:N,STATE:N" of KIND
  timed_KIND          records of KIND with a start and an end time
  seq_first_KIND seq_last_KIND   the lowest and highest seq of KIND
                      (GraphLaunch: its replay number)
  seq_gaps_KIND       places where KIND's seq (one comm) does not go up
                      by one from a record to the next, in ring order
  exit_status         the last segment's, "-" if it has none
"""
import collections
import re
import sys


def main():
    if len(sys.argv) != 2:
        sys.stderr.write("usage: records.py SHOW.txt\n")
        return 2
    segs, cur = [], None
    for line in open(sys.argv[1], errors="replace"):
        line = line.rstrip("\n")
        if line.startswith("segment "):
            cur = {"path": line[8:], "header": {}, "ops": [], "comms": [], "records": {}}
            segs.append(cur)
            continue
        if cur is None:
            continue
        if line.startswith("  op "):
            cur["ops"].append({**dict(kv.split("=", 1) for kv in line.split() if "=" in kv), "kind": line.split()[4]})
        elif line.startswith("  comm "):
            cur["comms"].append(dict(kv.split("=", 1) for kv in line.split() if "=" in kv))
        elif line.startswith("records "):
            cur["records"] = dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
        elif re.match(r"^  [a-z_]+ ", line):
            key, _, value = line.strip().partition(" ")
            cur["header"].setdefault(key, value.strip())
    segs = [s for s in segs if not s["path"].endswith(".dump.seg")]
    out = collections.OrderedDict()
    out["segments"] = len(segs)
    modes = sorted({s["header"].get("tracking", "?") for s in segs})
    out["tracking"] = ",".join(modes) if modes else "-"
    sums = collections.Counter()
    kinds = collections.Counter()
    states = collections.defaultdict(collections.Counter)
    timed = collections.Counter()
    seqs = collections.defaultdict(list)
    gaps = collections.Counter()
    for s in segs:
        counters = dict(kv.split("=", 1) for kv in s["header"].get("counters", "").split() if "=" in kv)
        for k in ("events_created", "event_records", "ops_tracked"):
            sums[k] += int(counters.get(k, 0))
        for k in ("valid", "torn", "overwritten", "unpublished"):
            sums[k] += int(s["records"].get(k, 0))
        for c in s["comms"]:
            for k in ("coll_enqueued", "coll_started", "coll_completed"):
                sums[k] += int(c.get(k, 0))
        last = {}
        for op in s["ops"]:
            k = op["kind"]
            kinds[k] += 1
            states[k][op.get("state", "?")] += 1
            if op.get("started", "-") != "-" and op.get("ended", "-") != "-":
                timed[k] += 1
            seq = int(op.get("seq", op.get("replay", 0)))
            seqs[k].append(seq)
            key = (k, op.get("comm"))
            if key in last and seq != last[key] + 1:
                gaps[k] += 1
            last[key] = seq
    out.update(sums)
    for k in sorted(kinds):
        out["n_" + k] = kinds[k]
        for st in sorted(states[k]):
            out["n_%s_%s" % (k, st)] = states[k][st]
        out["states_" + k] = ",".join("%s:%d" % (st, n) for st, n in sorted(states[k].items()))
        out["timed_" + k] = timed[k]
        out["seq_first_" + k] = min(seqs[k])
        out["seq_last_" + k] = max(seqs[k])
        out["seq_gaps_" + k] = gaps[k]
    out["exit_status"] = segs[-1]["header"].get("exit_status", "-") if segs else "-"
    for k, v in out.items():
        print("%s=%s" % (k, v))
    return 0


if __name__ == "__main__":
    sys.exit(main())
