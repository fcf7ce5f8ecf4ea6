#!/usr/bin/env python3
"""judge.py: one view of one corpus case against what cases.txt wants.

  judge.py json|text FILE KIND CULPRITS WAITING UNKNOWN
  judge.py attach FILE KIND CULPRITS WAITING UNKNOWN PIDRANKS
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


PIDNAMED = re.compile(r"^pids? ([0-9][0-9,]*) on ")


def attach_verdicts(path, pidranks):
    """The verdicts of a diagnosis of attach's files, a culprit named by its
    pid (a process with no rank known: "KIND: pid P on HOST is ...")
    turned into the ranks of its process by pidranks (lines "PID RANK...":
    a process of several ranks names them all)."""
    rank_of = {}
    if pidranks and os.path.exists(pidranks):
        with open(pidranks) as f:
            for line in f:
                p, *rs = line.split()
                rank_of[int(p)] = [int(r) for r in rs]
    with open(path) as f:
        doc = json.load(f)
    out = []
    for job in doc.get("jobs", []):
        for v in job.get("verdicts", []):
            if v["kind"] == "HEALTHY":
                continue
            culprits = list(v.get("culprits", []))
            m = PIDNAMED.match(v.get("summary") or "")
            if not culprits and m:
                culprits = [r for p in m.group(1).split(",") for r in rank_of.get(int(p), [-1])]
            out.append((v["kind"], culprits))
    return out


def harness_note(path):
    """The line corpus-lib.sh's _diagnose writes in place of the JSON when
    diagnose did not give one ("diagnose exited N: its stderr"), or None."""
    try:
        with open(path, errors="replace") as f:
            line = f.readline().strip()
    except OSError:
        return None
    return line if line.startswith("diagnose exited ") else None


def judge_attach(path, kind, cul, unk, pidranks):
    """attach's rubric (issue 21): exact (the first verdict names exactly
    the culprits; where there are none, it has the wanted kind, or it names
    exactly the ranks the preload could not know about: attach sees every
    process), undecided (it names nobody: UNDECIDED, or a kind about the
    communicator), partial (some culprits, nobody else), FAIL when any
    verdict blames a rank outside the culprits and unknown ranks, or a hung
    job gets no verdict."""
    want = "(want kind=%s culprits=%s unknown=%s)" % (kind, cul, unk)
    try:
        verdicts = attach_verdicts(path, pidranks) if os.path.getsize(path) else []
    except (OSError, ValueError, KeyError) as e:
        print("FAIL %s %s" % (harness_note(path) or "unreadable %s: %s" % (path, e), want))
        return 2
    allowed = set(ranks(cul)) | set(ranks(unk))
    blamed = set()
    for _, c in verdicts:
        blamed |= set(c) - allowed
    if not verdicts:
        k, c = "HEALTHY", []
    else:
        k, c = verdicts[0]
    got = "kind=%s culprits=%s" % (k, ranges([r for r in c if r >= 0]) + ("+unknown pid" if -1 in c else ""))
    if blamed:
        verdict = "FAIL blames=%s" % ranges([r for r in blamed if r >= 0] or [0]) if -1 not in blamed \
            else "FAIL blames an unknown pid"
    elif "IDLE" in kind.split(",") and (not verdicts or (k == "IDLE" and not c)):
        verdict = "ok exact"
    elif not verdicts:
        verdict = "FAIL no verdict"
    elif (set(c) == set(ranks(cul)) and c) or (not ranks(cul) and not c and k in kind.split(",")) \
            or (not ranks(cul) and c and set(c) == set(ranks(unk))):
        verdict = "ok exact"
    elif not c:
        verdict = "ok undecided"
    else:
        verdict = "ok partial"          # some of the culprits, nobody else
    print("%s %s %s" % (verdict, got, want))
    return 0


def main():
    if sys.argv[1] == "sig":
        signature(sys.argv[2])
        return 0
    if sys.argv[1] == "attach":
        return judge_attach(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[6], sys.argv[7] if len(sys.argv) > 7 else None)
    fmt, path, kind, cul, wai, unk = sys.argv[1:7]
    want = "(want kind=%s culprits=%s waiting=%s unknown=%s)" % (kind, cul, wai, unk)
    try:
        if not os.path.exists(path) or os.path.getsize(path) == 0:
            verdicts = []
        else:
            verdicts = from_json(path) if fmt == "json" else from_text(path)
    except (OSError, ValueError, KeyError) as e:
        print("FAIL %s %s" % (harness_note(path) or "unreadable %s: %s" % (path, e), want))
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
