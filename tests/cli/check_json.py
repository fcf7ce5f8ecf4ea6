#!/usr/bin/env python3
"""Checks of ncclwatch's JSON outputs, for tests/cli/*.sh.

  check_json.py schema SCHEMA DOC   DOC validates against the JSON Schema
                                    (draft 2020-12); exit 77 if the module
                                    jsonschema is missing
  check_json.py trace TRACE [N]     TRACE is a Chrome trace Perfetto loads:
                                    every event has what its phase needs,
                                    slices on one thread nest or are disjoint;
                                    prints "processes=P slices=S stalls=I"
                                    and, with N, asserts one named process
                                    per rank 0..N-1 (pid = rank + 1)
"""
import json
import sys
from collections import defaultdict


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def check_schema(schema_path, doc_path):
    try:
        import jsonschema
    except ImportError:
        print("skipped: python module jsonschema is missing (Debian: python3-jsonschema)")
        sys.exit(77)
    with open(schema_path) as f:
        schema = json.load(f)
    with open(doc_path) as f:
        doc = json.load(f)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    if cls.__name__ != "Draft202012Validator":
        fail("jsonschema picked %s for the schema, not Draft202012Validator" % cls.__name__)
    errors = sorted(cls(schema).iter_errors(doc), key=lambda e: list(e.path))
    for e in errors[:10]:
        print("FAIL: %s: %s" % ("/".join(str(p) for p in e.path), e.message), file=sys.stderr)
    if errors:
        sys.exit(1)
    print("%s: valid (%s)" % (doc_path, cls.__name__))


def check_trace(path, nranks):
    with open(path) as f:
        doc = json.load(f)
    events = doc.get("traceEvents")
    if not isinstance(events, list):
        fail("no traceEvents array")
    names = {}
    slices = defaultdict(list)
    stalls = 0
    for e in events:
        ph = e.get("ph")
        if not isinstance(e.get("pid"), int):
            fail("event without an integer pid: %r" % e)
        if ph == "M":
            if e["name"] == "process_name":
                names[e["pid"]] = e["args"]["name"]
            continue
        for k in ("ts", "tid", "name"):
            if k not in e:
                fail("%s event without %s: %r" % (ph, k, e))
        if not isinstance(e["ts"], int) or e["ts"] < 0:
            fail("ts not a whole number of microseconds >= 0: %r" % e)
        if ph == "X":
            if not isinstance(e.get("dur"), int) or e["dur"] < 0:
                fail("X event without a dur >= 0: %r" % e)
            slices[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"], e["name"]))
        elif ph == "i":
            stalls += 1
        else:
            fail("unexpected phase %r" % ph)
    # Slices of one thread are a stack: nested or disjoint, never crossing.
    nslices = 0
    for track, ss in slices.items():
        nslices += len(ss)
        ss.sort(key=lambda s: (s[0], -s[1]))
        stack = []
        for s in ss:
            while stack and stack[-1][1] <= s[0]:
                stack.pop()
            if stack and s[1] > stack[-1][1]:
                fail("slices cross on pid %d tid %d: %r and %r" % (track[0], track[1], stack[-1], s))
            stack.append(s)
    if nranks is not None:
        want = set(range(1, nranks + 1))
        if set(names) != want:
            fail("processes %s, expected pids 1..%d" % (sorted(names), nranks))
        for pid, name in names.items():
            if not name.startswith("rank %d (" % (pid - 1)):
                fail("pid %d is named %r, not rank %d" % (pid, name, pid - 1))
    print("processes=%d slices=%d stalls=%d" % (len(names), nslices, stalls))


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "schema":
        check_schema(sys.argv[2], sys.argv[3])
    elif len(sys.argv) in (3, 4) and sys.argv[1] == "trace":
        check_trace(sys.argv[2], int(sys.argv[3]) if len(sys.argv) == 4 else None)
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
