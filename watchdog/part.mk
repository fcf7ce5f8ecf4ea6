# watchdog: the thread that runs inside each process (started by the
# interposer), built into libncclwatch.so with the interposer's objects.
# Stacks need libunwind, loaded at run time (capture/unw_table.h); the
# verdict needs the report engine, loaded at run time (engine.c).
#   lifecycle.c   its steps at start, exit and fork (interpose/hooks.h)
#   progress.c    event queries -> op states and comm positions
#   stalls.c      watched records -> findings ("the picture")
#   requests.c    dump requests between the job's processes
#   dump.c        a consistent copy of the segment in the dump directory
#   watchdog.c    the thread and its poll loop
#   exit_wait.c   the exit path's bounded wait for the watchdog's locks
#   alone.c       is the watchdog the last thread left? (then it leaves)
#   verdict.c     the cross-rank verdict (report/{sources,model,decide}/), once per host
#   prom.c        NCCLWATCH_PROM_DIR: the node_exporter textfile (Prometheus)
#   engine.c      libncclwatch-engine.so, loaded for the verdict (report/engine/)
#   stacks.c      capture every thread's stack (signal handler + watchdog side)
#   modules.c     loaded objects (dl_iterate_phdr) for the module table
#   symbolize.c   address -> function name, string table
#   opstack.c     per-op call stacks on the hot path (NCCLWATCH_STACKS=1)
WATCHDOG_SRCS := $(addprefix watchdog/,lifecycle.c progress.c stalls.c requests.c dump.c watchdog.c exit_wait.c \
	alone.c verdict.c prom.c engine.c stacks.c modules.c symbolize.c opstack.c)
WATCHDOG_OBJS := $(WATCHDOG_SRCS:%.c=$(BUILD)/%.o)

$(WATCHDOG_OBJS): CFLAGS += $(LIB_CFLAGS)
