#!/bin/sh
# Part of `make bench` (tests/bench/run.sh): the scenario corpus of issue 11
# (tests/corpus/cases.txt) as a table per view (live, dead, watchdog; post
# for generated cases): how many cases give the right first verdict kind,
# the exact culprits, the exact waiting set, and how many blame a rank that
# only waits (in any verdict). Then:
#   false alarms: the healthy cases CORPUS_BENCH_HEALTHY_RUNS times (20):
#       views that raised anything, of all views run;
#   determinism: every case CORPUS_BENCH_REPEAT times in a row (5): cases
#       whose normalized verdicts (tests/corpus/judge.py sig: kinds, sets,
#       summaries, evidence without ages, ids and stacks) differ between
#       runs, per view; and the dead view diagnosed again with the files
#       given one by one in a shuffled order ("order": differs or not).
# CORPUS_BENCH_CASES="NAME..." limits it to those cases. Prints figures, never fails. CORPUS_BENCH_REPEAT=1 CORPUS_BENCH_HEALTHY_RUNS=1
# gives the table alone in about the time of one corpus run.
set -u
: "${NW_ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${NW_BUILD:=$NW_ROOT/build}"
export NW_ROOT NW_BUILD
: "${CORPUS_BENCH_REPEAT:=5}" "${CORPUS_BENCH_HEALTHY_RUNS:=20}"
printf '\n=== the scenario corpus (tests/corpus/cases.txt): verdicts per view ===\n'
if [ ! -x "$NW_BUILD/tests/corpus/scenario" ]; then
	echo "skipped: $NW_BUILD/tests/corpus/scenario is not built (make all)"
	exit 0
fi
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/corpus/corpus-lib.sh"
start=$(date +%s)
all=$(corpus_names)
healthy=$(corpus_names healthy)
if [ -n "${CORPUS_BENCH_CASES:-}" ]; then   # a subset, to try the bench itself
	all=$CORPUS_BENCH_CASES
	healthy=$(for n in $all; do echo "$healthy" | grep -x "$n"; done)
fi
echo "command: CORPUS_SHUFFLE=1 sh tests/corpus/run-corpus.sh (every case x $CORPUS_BENCH_REPEAT, healthy ones x $CORPUS_BENCH_HEALTHY_RUNS)"
run=1
while [ $run -le "$CORPUS_BENCH_HEALTHY_RUNS" ] || [ $run -le "$CORPUS_BENCH_REPEAT" ]; do
	if [ $run -le "$CORPUS_BENCH_REPEAT" ]; then names=$all; else names=$healthy; fi
	# shellcheck disable=SC2086
	CORPUS_SHUFFLE=1 CORPUS_KEEP="$T/keep/$run" corpus_run $names > "$T/lines.$run" 2>&1
	run=$((run + 1))
done
python3 - "$T" "$CORPUS_CASES" "$CORPUS_BENCH_REPEAT" "$CORPUS_BENCH_HEALTHY_RUNS" "$NW_ROOT/tests/corpus/judge.py" <<'PY'
import glob, os, re, subprocess, sys
tmp, cases_txt, repeat, hruns, judge = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
cases = {}
for line in open(cases_txt):
    if line.lstrip().startswith("#") or "|" not in line:
        continue
    f = [x.strip() for x in line.split("|")]
    if len(f) >= 10:
        cases[f[1]] = dict(cls=f[0], end=f[3], kind=f[4], cul=f[5], wai=f[6])
def parse(path):
    out = {}
    for line in open(path, errors="replace"):
        w = line.split()
        if len(w) >= 3 and w[1] in ("live", "dead", "watchdog", "post", "order"):
            out[(w[0], w[1])] = line.rstrip("\n")
    return out
runs = {}
for p in glob.glob(os.path.join(tmp, "lines.*")):
    runs[int(p.rsplit(".", 1)[1])] = parse(p)
first = runs.get(1, {})
def field(line, key):
    m = re.search(r"\b%s=(\S+)" % key, line)
    return m.group(1) if m else "?"
def want(line, key):
    m = re.search(r"\(want .*\b%s=(\S+?)[ )]" % key, line)
    return m.group(1) if m else "?"
print("%-9s %6s %10s %15s %14s %14s %9s" % ("view", "cases", "kind ok", "culprits exact", "waiting exact", "blames waiter", "all ok"))
for view in ("live", "dead", "watchdog", "post"):
    rows = [(n, l) for (n, v), l in first.items() if v == view and n in cases and cases[n]["kind"] != "HEALTHY"]
    if view == "watchdog":   # the watchdog speaks only where something is pending
        rows = [(n, l) for n, l in rows if cases[n]["end"] == "hang"]
    if not rows:
        continue
    k = sum(field(l, "kind") == want(l, "kind") for _, l in rows)
    c = sum(field(l, "kind") == want(l, "kind") and field(l, "culprits") == want(l, "culprits") for _, l in rows)
    w = sum(field(l, "waiting") == want(l, "waiting") for _, l in rows)
    b = sum(" blames=" in l for _, l in rows)
    ok = sum(" ok " in l for _, l in rows)
    print("%-9s %6d %10s %15s %14s %14d %9s" % (view, len(rows), "%d/%d" % (k, len(rows)), "%d/%d" % (c, len(rows)),
                                                 "%d/%d" % (w, len(rows)), b, "%d/%d" % (ok, len(rows))))
print("(fault cases only; 'culprits exact' counts a right kind with the exact culprit set)")
alarms = total = 0
for r, lines in runs.items():
    for (n, v), l in lines.items():
        if n in cases and cases[n]["kind"] == "HEALTHY" and v in ("live", "dead", "watchdog"):
            total += 1
            alarms += " FAIL " in l
print("false alarms: %d of %d views of %d healthy cases x %d runs" %
      (alarms, total, len({n for lines in runs.values() for (n, v) in lines if n in cases and cases[n]["kind"] == "HEALTHY"}), hruns))
def sig(path):
    if not os.path.exists(path):
        return None
    if path.endswith(".json"):
        return subprocess.run([sys.executable, judge, "sig", path], capture_output=True, text=True).stdout
    return open(path, errors="replace").read()
unstable = {}
for n in cases:
    for view, fname in (("live", "live.json"), ("dead", "dead.json"), ("post", "post.json")):
        sigs = set()
        for r in range(1, repeat + 1):
            s = sig(os.path.join(tmp, "keep", str(r), n, fname))
            if s is not None:
                sigs.add(s)
        if len(sigs) > 1:
            unstable.setdefault(view, []).append(n)
    # the watchdog's report: its verdict lines (kind and sets) only
    lines = set()
    for r in range(1, repeat + 1):
        l = runs.get(r, {}).get((n, "watchdog"))
        if l:
            lines.add(" ".join(l.split()[2:7]))
    if len(lines) > 1:
        unstable.setdefault("watchdog", []).append(n)
for view in ("live", "dead", "watchdog", "post"):
    bad = unstable.get(view, [])
    print("determinism %-8s: %d cases differ across %d runs%s" % (view, len(bad), repeat, (": " + " ".join(sorted(bad))) if bad else ""))
order_bad = sorted({n for lines in runs.values() for (n, v), l in lines.items() if v == "order" and " FAIL " in l})
print("determinism order   : %d cases whose verdicts change with the order of the files given%s" %
      (len(order_bad), (": " + " ".join(order_bad)) if order_bad else ""))
PY
echo "goal: every view right on every case, 0 false alarms, 0 differences"

# The attach view (issue 21): every case that hangs, started without the
# preload (RAS on), read by `ncclwatch attach --tree` (CORPUS_BENCH_ATTACH=0
# leaves it out).
if [ "${CORPUS_BENCH_ATTACH:-1}" != 0 ]; then
	echo
	echo "command: CORPUS_VIEW=attach sh tests/corpus/run-corpus.sh (the cases that hang; no preload, RAS on)"
	# shellcheck disable=SC2086
	CORPUS_VIEW=attach corpus_run $all > "$T/attach.lines" 2>&1
	grep ' attach ' "$T/attach.lines" | awk '
		$3 == "skip" { skip++; next }
		{ n++; if ($3 == "ok") v[$4]++; else { fail++; bad = bad " " $1 } }
		$3 == "ok" && $4 != "exact" { other = other " " $1 "(" $4 ")" }
		END { printf "attach: %d cases that hang: %d exact, %d partial, %d undecided, %d blame a rank outside the culprits%s (%d cases end by themselves: not judged)\n",
		      n, v["exact"], v["partial"], v["undecided"], fail, bad != "" ? ":" bad : "", skip
		      if (other != "") printf "attach, not exact:%s\n", other }'
	echo "goal: a verdict for every case, never a waiting rank blamed; as many exact as stacks and RAS can tell"
fi
echo "corpus bench: $(( $(date +%s) - start )) s"
