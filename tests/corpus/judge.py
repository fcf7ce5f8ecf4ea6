#!/usr/bin/env python3
"""judge.py: one view of one corpus case against what cases.txt wants.

  judge.py json|text FILE KIND CULPRITS WAITING UNKNOWN
  judge.py sig FILE


FILE is `ncclwatch diagnose --json` output (json) or a verdict text the
watchdog printed (text: report.txt); a missing or empty FILE means nothing
was raised. KIND is the expected first verdict kind (HEALTHY: none at all;
"A,B": either, where the construction allows both, as the hang generator's
cases say), the sets are global ranks in "0-2,5" form, "-" for none (for
CULPRITS: the communicator or its link, not a rank); WAITING and UNKNOWN
may be "*": not judged (the generator's oracle knows the culprits). Prints one line:

  ok|FAIL kind=K culprits=C waiting=W unknown=U [verdicts=N] [blames=R] (want ...)

FAIL when the first verdict's kind or any of its three sets differ, or when
any verdict (first or later) blames a rank outside the expected culprits.
Exit status 0 either way (2: unreadable FILE, printed as FAIL too).

sig prints what must not change between two runs of a case, or between
two diagnoses of the same files: every verdict of a JSON diagnosis (kind,
op, sets, summary, evidence, hint, in order) with what does vary blanked
(communicator ids, addresses, ages and durations, pids), as tests/docs/
normalize.sh does for the gallery.
"""
import json
import os
import re
import sys


def ranks(text):
    """ "0-2,5" -> [0, 1, 2, 5]; "-" or "" -> []. """
    out = []
    text = text.strip()
    if not text or text.startswith("-"):
        return out
    for part in text.split(","):
        a, _, b = part.partition("-")
        out += range(int(a), int(b or a) + 1)
    return sorted(set(out))


def ranges(rs):
    rs = sorted(set(rs))
    if not rs:
        return "-"
    parts, start, prev = [], rs[0], rs[0]
    for r in rs[1:] + [None]:
        if r is not None and r == prev + 1:
            prev = r
            continue
        parts.append(str(start) if start == prev else "%d-%d" % (start, prev))
        if r is not None:
            start = prev = r
    return ",".join(parts)


def from_json(path):
    with open(path) as f:
        doc = json.load(f)
    out = []
    for job in doc.get("jobs", []):
        for v in job.get("verdicts", []):
            if v["kind"] == "HEALTHY":
                continue
            out.append((v["kind"], v.get("culprits", []), v.get("waiting", []), v.get("unknown", [])))
    return out


HEAD = re.compile(r"^([A-Z][A-Z0-9_/]+): ")


def from_text(path):
    """Verdict blocks of the last "job" block: "KIND: summary" then
    indented "  culprits: ...", "  waiting: ...", "  unknown: ..." lines."""
    out, cur = [], None
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("job "):
                out, cur = [], None
                continue
            m = HEAD.match(line)
            if m and not line.startswith(" "):
                if m.group(1) in ("HEALTHY",):
                    cur = None
                    continue
                cur = [m.group(1), [], [], []]
                out.append(cur)
                continue
            if not line.startswith(" "):
                cur = None
                continue
            if cur is None:
                continue
            for i, key in ((1, "culprits"), (2, "waiting"), (3, "unknown")):
                if line.startswith("  %s: " % key):
                    cur[i] = ranks(line.split(": ", 1)[1].split(" ")[0])
    return [tuple(v) for v in out]


def normalized(text):
    text = re.sub(r"[0-9a-f]{16}", "<id>", text)
    text = re.sub(r"0x[0-9a-f]+", "<addr>", text)
    text = re.sub(r"[0-9]+(\.[0-9]+)?(-[0-9]+(\.[0-9]+)?)? (s|ms|min)\b", "<t>", text)
    text = re.sub(r"pid[ =][0-9]+", "pid <pid>", text)
    text = re.sub(r"[0-9]+ earlier ops? marked", "<n> earlier ops marked", text)
    return text


def signature(path):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print("unreadable: %s" % e)
        return
    for job in doc.get("jobs", []):
        for v in job.get("verdicts", []):
            print("verdict %s %s #%s culprits=%s waiting=%s unknown=%s" % (
                v["kind"], v.get("op"), v.get("seq"), ranges(v.get("culprits", [])),
                ranges(v.get("waiting", [])), ranges(v.get("unknown", []))))
            print("  " + normalized(v.get("summary") or ""))
            for e in v.get("evidence", []):
                # where a waiting thread was caught varies: stacks are cut
                print("    " + normalized(e.split("; main thread: ")[0]))
            print("  hint " + normalized(v.get("hint") or ""))


def main():
    if sys.argv[1] == "sig":
        signature(sys.argv[2])
        return 0
    fmt, path, kind, cul, wai, unk = sys.argv[1:7]
    want = "(want kind=%s culprits=%s waiting=%s unknown=%s)" % (kind, cul, wai, unk)
    try:
        if not os.path.exists(path) or os.path.getsize(path) == 0:
            verdicts = []
        else:
            verdicts = from_json(path) if fmt == "json" else from_text(path)
    except (OSError, ValueError, KeyError) as e:
        print("FAIL unreadable %s: %s %s" % (path, e, want))
        return 2
    if verdicts:
        k, c, w, u = verdicts[0]
        got = (k, ranges(c), ranges(w), ranges(u))
    else:
        got = ("HEALTHY", "-", "-", "-")
    ok = (got[0] in kind.split(",") and got[1] == ranges(ranks(cul))
          and (wai == "*" or got[2] == ranges(ranks(wai)))
          and (unk == "*" or got[3] == ranges(ranks(unk))))
    allowed = set(ranks(cul))
    blamed = set()
    for v in verdicts:
        blamed |= set(v[1]) - allowed
    extra = ""
    if len(verdicts) > 1:
        extra += " verdicts=%d" % len(verdicts)
    if blamed:
        ok = False
        extra += " blames=%s" % ranges(blamed)
    print("%s kind=%s culprits=%s waiting=%s unknown=%s%s %s" % ((("ok" if ok else "FAIL"),) + got + (extra, want)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
