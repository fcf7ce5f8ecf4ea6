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
#   target.c   a process opened for capture; one thread: one look at its
#              syscall file, retries, figures
CAPTURE_SRCS := $(addprefix capture/,memory.c regs.c ptrace.c unwind.c symbols.c target.c watch.c)
CAPTURE_OBJS := $(CAPTURE_SRCS:%.c=$(BUILD)/%.o)

# Every libunwind call goes through one table (unw_table.h), filled one of
# two ways:
#   unw_table_dl.c      libncclwatch.so: dlopen(RTLD_LOCAL) at run time, so
#                       the preload links no libunwind and puts none of it
#                       (_Unwind_RaiseException...) in the global scope
#   unw_table_linked.c  the CLI and test programs: linked, $(CAPTURE_LIBS)
UNW_TABLE_DL_OBJ     := $(BUILD)/capture/unw_table_dl.o
UNW_TABLE_LINKED_OBJ := $(BUILD)/capture/unw_table_linked.o
CAPTURE_LIBS := -lunwind-ptrace -lunwind-generic -lunwind

$(CAPTURE_OBJS) $(UNW_TABLE_DL_OBJ) $(UNW_TABLE_LINKED_OBJ): CFLAGS += $(LIB_CFLAGS)

# libncclwatch-unwind.so: no code, only libunwind's three libraries as its
# dependencies, so one dlopen(RTLD_LOCAL) of it gives them one local scope
# (libunwind-ptrace.so.0 calls libunwind-<arch> without naming it as a
# dependency: alone, RTLD_LOCAL, it cannot be loaded). Installed next to
# libncclwatch.so, which finds it there.
UNWIND_SCOPE_LIB := $(BUILD)/lib/libncclwatch-unwind.so
$(BUILD)/capture/unwind_scope.o: CFLAGS += $(LIB_CFLAGS)

$(UNWIND_SCOPE_LIB): $(BUILD)/capture/unwind_scope.o
	@mkdir -p $(dir $@)
	$(CC) -shared -o $@ $< -Wl,-soname,libncclwatch-unwind.so -Wl,--no-undefined \
		$(LDFLAGS) -Wl,--no-as-needed $(CAPTURE_LIBS)

LIBS         += $(UNWIND_SCOPE_LIB)
INSTALL_LIBS += $(UNWIND_SCOPE_LIB)
