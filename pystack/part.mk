# pystack: Python stacks in our own process (issue 12), built into
# libncclwatch.so with the watchdog's objects.
#   cpython.c    which CPython runs here, its layout (3.11 and 3.12 tables, 3.13+ _Py_DebugOffsets)
#   memread.c    reads that cannot fault (process_vm_readv on our own pid)
#   names.c      code object + instruction -> file, function, line
#   pythreads.c  thread states -> tid, GIL holder, main thread
#   dump.c       CPython 3.11, 3.12 with NCCLWATCH_PY_METHOD=dump: _Py_DumpTracebackThreads into a memory file, parsed
#   walk.c       thread and frame states walked (the default)
#   read_threads.c  nw_py_threads: the method's read, again while ties are torn, then names
#   debugoff.c   _Py_DebugOffsets -> the layout
#   threadnames.c  threading.Thread names: sys.modules -> threading._active -> Thread._name
#                (threadnames.h: the object layouts it reads)
#   capture.c    the watchdog's capture: Python frames tied to native threads, site names
#   pycall.c     the hot path: per-op call sites (NCCLWATCH_PY_FRAMES)
#   scratch.c    the watchdog's large buffers, mapped on first use (not .bss)
PYSTACK_SRCS := $(addprefix pystack/,cpython.c memread.c names.c pythreads.c dump.c walk.c read_threads.c \
	debugoff.c threadnames.c capture.c pycall.c scratch.c)
PYSTACK_OBJS := $(PYSTACK_SRCS:%.c=$(BUILD)/%.o)

$(PYSTACK_OBJS): CFLAGS += $(LIB_CFLAGS)
