"""mutate.py SEED OUTDIR BASE...: write into OUTDIR a directory of mutated
copies of the real segments BASE... (a job: some intact, most mutated),
for tests/soak/soak-mutate.sh. Deterministic for a SEED. Prints one line
per file, "FILE MUTATIONS", and a last line "mutations N".

Mutations (several per file): a header field of segment.h set to an
edge value (0, 1, -1, a power of two, the file's size, another field's
value), a random byte or bit anywhere, a record's commit word or a table
count, a truncation, a sparse extension (the header's segment_size grown
by a hole)."""
import os
import random
import struct
import sys

# (offset, struct format) of header fields (include/ncclwatch/segment.h;
# tests/unit/test_layout.c checks them).
FIELDS = [
    (8, "<I"), (12, "<H"), (14, "<H"), (16, "<I"), (20, "<I"), (24, "<Q"),
    (32, "<Q"), (40, "<I"), (44, "<I"), (48, "<Q"), (52, "<I"), (56, "<I"),
    (64, "<Q"), (72, "<I"), (76, "<I"), (80, "<Q"), (88, "<Q"),
    (96, "<q"), (104, "<q"), (112, "<Q"), (120, "<Q"), (128, "<i"), (132, "<i"),
    (136, "<i"), (140, "<I"), (272, "<Q"), (280, "<I"), (284, "<I"), (288, "<Q"),
    (296, "<Q"),
]
EDGES = [0, 1, 2, 3, 7, 8, 63, 64, 65, 127, 128, 4095, 4096, 8191, 8192, 8193,
         1 << 16, (1 << 16) + 1, 1 << 20, (1 << 20) + 1, 1 << 24, (1 << 24) + 1,
         1 << 31, (1 << 32) - 1, 1 << 32, (1 << 63) - 1, 1 << 63, (1 << 64) - 1]


def put(data, off, fmt, value):
    size = struct.calcsize(fmt)
    if off + size > len(data):
        return False
    bits = size * 8
    value &= (1 << bits) - 1
    if fmt[-1] in "iq" and value >= 1 << (bits - 1):
        value -= 1 << bits
    struct.pack_into(fmt, data, off, value)
    return True


def get(data, off, fmt):
    size = struct.calcsize(fmt)
    return struct.unpack_from(fmt, data, off)[0] if off + size <= len(data) else 0


def mutate(rng, data, length):
    """One mutation of bytearray data; returns (data, sparse_size, name)."""
    kind = rng.choice(["field", "field", "field", "byte", "bit", "commit", "table",
                       "truncate", "sparse", "copyfield"])
    if kind == "field":
        off, fmt = rng.choice(FIELDS)
        v = rng.choice(EDGES + [length, length - 1, length + 1, rng.getrandbits(64)])
        put(data, off, fmt, v + rng.choice([0, 0, -1, 1]))
        return data, None, "field@%d" % off
    if kind == "copyfield":
        (a, fa), (b, fb) = rng.choice(FIELDS), rng.choice(FIELDS)
        put(data, a, fa, get(data, b, fb))
        return data, None, "copy@%d<-%d" % (a, b)
    if kind in ("byte", "bit") and not data:
        return data, None, kind + "-empty"
    if kind == "byte":
        # Half of them in the header, where every byte means something.
        off = rng.randrange(min(len(data), 8192) if rng.random() < 0.5 else len(data))
        data[off] = rng.randrange(256)
        return data, None, "byte@%d" % off
    if kind == "bit":
        off = rng.randrange(len(data))
        data[off] ^= 1 << rng.randrange(8)
        return data, None, "bit@%d" % off
    if kind == "commit":
        ring_off, cap, stride = get(data, 64, "<Q"), get(data, 72, "<I"), get(data, 76, "<I")
        if cap and stride and ring_off < len(data):
            slot = rng.randrange(cap)
            off = ring_off + slot * stride
            head = get(data, 272, "<Q")
            put(data, off, "<Q", rng.choice([0, head, head + 1, head + cap, 1 << 63 | slot,
                                             rng.getrandbits(64)]))
            return data, None, "commit@%d" % slot
        return data, None, "commit-none"
    if kind == "table":
        off = rng.choice([280, 284])
        put(data, off, "<I", rng.choice([0, 1, get(data, off - 240 if off == 280 else 52, "<I"),
                                         get(data, 40, "<I") + 1, (1 << 32) - 1]))
        return data, None, "count@%d" % off
    if kind == "truncate":
        n = rng.choice([0, 1, 7, 8, 100, 8191, 8192, rng.randrange(len(data) + 1)])
        return data[:n], None, "truncate@%d" % n
    # sparse: the header says the segment is larger; the file grows by a hole.
    grow = rng.choice([1 << 20, 1 << 26, 1 << 30, 1 << 31])
    put(data, 24, "<Q", len(data) + grow)
    put(data, 72, "<I", rng.choice([1 << 20, 1 << 22, 1 << 24]))
    put(data, 272, "<Q", rng.choice([1 << 20, 1 << 24, 1 << 40]))
    return data, len(data) + grow, "sparse+%d" % grow


def main():
    seed, out, bases = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    rng = random.Random(seed)
    job = os.path.join(out, "job%d" % seed)
    os.makedirs(job, exist_ok=True)
    total = 0
    for i in range(rng.randint(3, 8)):
        base = rng.choice(bases)
        data = bytearray(open(base, "rb").read())
        length = len(data)
        names, sparse = [], None
        n = 0 if i == 0 else rng.choice([1, 1, 2, 3, 5])   # one intact file per job
        for _ in range(n):
            data, grown, name = mutate(rng, data, length)
            sparse = grown or sparse
            names.append(name)
        total += n
        path = os.path.join(job, "%s.m%d.seg" % (os.path.basename(base)[:-4], i))
        with open(path, "wb") as f:
            f.write(data)
            if sparse and sparse > len(data):
                f.truncate(sparse)
        print(path, ",".join(names) or "intact")
    print("mutations", total)


main()
