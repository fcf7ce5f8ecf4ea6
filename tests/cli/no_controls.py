#!/usr/bin/env python3
"""no_controls.py FILE...: exit 1 (naming the file, offset and bytes) if a
file holds a byte a terminal acts on: a C0 control other than the newline,
DEL, a C1 control (U+0080..U+009F), or a byte that is not part of valid
UTF-8 (a lone 0x9b is the 8-bit CSI). What `ncclwatch` prints must pass,
whatever the files it read held (tests/cli/test-cli-control-chars.sh)."""
import re
import sys

CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")
bad = 0
for path in sys.argv[1:]:
    data = open(path, "rb").read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        print("%s: offset %d: byte %s is not UTF-8, in %r" % (path, e.start, data[e.start:e.end].hex(),
                                                              data[max(0, e.start - 40):e.start + 20]))
        bad = 1
        continue
    m = CONTROL.search(text)
    if m:
        pos = len(text[:m.start()].encode("utf-8"))
        print("%s: offset %d: control character U+%04X in %r" % (path, pos, ord(m.group()),
                                                                 data[max(0, pos - 40):pos + 20]))
        bad = 1
sys.exit(bad)
