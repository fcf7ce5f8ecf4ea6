#!/usr/bin/env python3
"""Talk to a RAS endpoint with raw lines (the protocol tests).

ras_raw.py PORT lines:N DATA   send DATA (\\n escapes allowed), print the first N reply lines
ras_raw.py PORT close DATA     send DATA, print everything until the server closes
Exit 0; 3 when the server did not answer (or close) within 30 s; 4 when it
closed before N lines.
"""
import socket, sys, time

port, mode, data = int(sys.argv[1]), sys.argv[2], sys.argv[3].encode().decode('unicode_escape').encode('latin-1')
s = socket.create_connection(("127.0.0.1", port), timeout=30)
s.sendall(data)
buf = b""
deadline = time.time() + 30
want = int(mode.split(":")[1]) if mode.startswith("lines:") else None
while True:
    if want is not None and buf.count(b"\n") >= want:
        break
    s.settimeout(max(0.1, deadline - time.time()))
    try:
        d = s.recv(65536)
    except socket.timeout:
        sys.stdout.write(buf.decode("latin-1"))
        sys.exit(3)
    if not d:
        break
    buf += d
if want is not None:
    lines = buf.split(b"\n")
    sys.stdout.write("\n".join(l.decode("latin-1") for l in lines[:want]) + "\n")
    sys.exit(0 if len(lines) > want else 4)
sys.stdout.write(buf.decode("latin-1"))
