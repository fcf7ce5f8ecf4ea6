"""sparse.py IN OUT [RING]: OUT is the segment IN whose header says its op
ring holds RING records (default 2^24, the format's bound), all of them
written (ring_head = RING), the stack area moved past the ring, and the
file made that long by a hole: a file of a few KB of data whose header
claims gigabytes (issue 16, finding 4). Offsets of include/ncclwatch/segment.h
(tests/unit/test_layout.c checks them)."""
import os
import struct
import sys

SEGMENT_SIZE, RING_OFFSET, RING_CAPACITY, OP_RECORD_SIZE = 24, 64, 72, 76
STACK_OFFSET, STACK_SIZE, RING_HEAD = 80, 88, 272

src, dst = sys.argv[1], sys.argv[2]
ring = int(sys.argv[3]) if len(sys.argv) > 3 else 1 << 24
data = bytearray(open(src, "rb").read())
ring_offset, = struct.unpack_from("<Q", data, RING_OFFSET)
stride, = struct.unpack_from("<I", data, OP_RECORD_SIZE)
stack_offset, stack_size = struct.unpack_from("<QQ", data, STACK_OFFSET)
end = (ring_offset + ring * stride + 63) // 64 * 64
if stack_offset:
    stack = bytes(data[stack_offset:stack_offset + stack_size])
    struct.pack_into("<Q", data, STACK_OFFSET, end)
    size = end + stack_size
else:
    stack, size = b"", end
struct.pack_into("<I", data, RING_CAPACITY, ring)
struct.pack_into("<Q", data, RING_HEAD, ring)
struct.pack_into("<Q", data, SEGMENT_SIZE, size)
with open(dst, "wb") as f:
    f.write(bytes(data[:min(len(data), stack_offset or len(data))]))
    if stack:
        f.seek(end)
        f.write(stack)
    f.truncate(size)
st = os.stat(dst)
print("%s: %d bytes, %d bytes of data, ring %d" % (dst, st.st_size, st.st_blocks * 512, ring))
