# capture: the signal-free capture core (capture/capture.h), built into
# libncclwatch.so (the watchdog, its own process) and into the CLI
# (`ncclwatch attach`, other processes). libunwind's remote interface
# (libunwind-generic) and libunwind-ptrace's unwind-table lookup.
#   memory.c   process_vm_readv reader, stack copy, page cache
#   regs.c     pc and sp from /proc/PID/task/TID/syscall
#   ptrace.c   a running thread of another process, stopped for the copy
#   watch.c    threads that show "running": caught blocked, or told user code
#              from the kernel by their CPU times before anyone interrupts them
#   unwind.c   libunwind remote accessors
#   symbols.c  function names from the ELF symbol tables of mapped files
#   capture.c  one thread: one look at its syscall file, retries, figures
CAPTURE_SRCS := $(addprefix capture/,memory.c regs.c ptrace.c unwind.c symbols.c capture.c watch.c)
CAPTURE_OBJS := $(CAPTURE_SRCS:%.c=$(BUILD)/%.o)
CAPTURE_LIBS := -lunwind-ptrace -lunwind-generic -lunwind

$(CAPTURE_OBJS): CFLAGS += $(LIB_CFLAGS)
