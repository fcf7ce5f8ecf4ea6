#!/usr/bin/env python3
"""hint_flags.py CLI CMD OUTPUT...: every option a printed line of
`ncclwatch CMD` names (`--verbose shows all`, `see ncclwatch gc --help`)
is one the command it belongs to accepts: its `--help` lists it.

A flag belongs to the command named before it on its line (`ncclwatch X`),
else to CMD. Flags of other tools (after `py-spy`, `torchrun`, `mpirun`,
`srun` on the line) and flags inside single quotes (the user's own input
quoted back, "unknown option '--bogus'") are not ours. Prints each flag
checked; exits 1 naming each one a command does not accept."""
import re
import subprocess
import sys

cli, cmd, outputs = sys.argv[1], sys.argv[2], sys.argv[3:]
FOREIGN = re.compile(r"\b(py-spy|torchrun|mpirun|srun|pdsh)\b")
NAMED = re.compile(r"\bncclwatch ([a-z]+)\b")
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]*[a-z]")
helps = {}


def help_of(c):
    if c not in helps:
        args = [cli, "--help"] if c == "" else [cli, c, "--help"]
        r = subprocess.run(args, capture_output=True, text=True)
        helps[c] = r.stdout if r.returncode == 0 else None
    return helps[c]


def unquoted(line):
    """The line with '...' spans blanked (the user's input quoted back)."""
    return re.sub(r"'[^']*'", lambda m: " " * len(m.group(0)), line)


bad, checked = [], set()
for path in outputs:
    for line in open(path, errors="replace"):
        text = unquoted(line.rstrip("\n"))
        for m in FLAG.finditer(text):
            before = text[:m.start()]
            if FOREIGN.search(before):
                continue
            named = NAMED.findall(before)
            owner = named[-1] if named else cmd
            flag = m.group(0)
            if (owner, flag) in checked:
                continue
            checked.add((owner, flag))
            h = help_of(owner)
            ok = h is not None and re.search(r"(?<![\w-])" + re.escape(flag) + r"(?![\w-])", h)
            print(("ok   " if ok else "BAD  ") + "ncclwatch %s %s  (%s: %s)" % (owner, flag, path, line.strip()[:100]))
            if not ok:
                bad.append("ncclwatch %s does not accept %s, which its output names: %s" % (owner, flag, line.strip()))
for b in bad:
    print("FAIL: " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
