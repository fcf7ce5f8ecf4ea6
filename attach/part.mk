# attach: `ncclwatch attach` (report/cli/cmd_attach.c): process discovery
# and /proc reading, py-spy, snapshot files. Linked into the CLI with the
# capture core, the stack area layout (interpose/stack_area.c) and the
# interposer's environment allowlist and job naming (shared, not copied).
#   proc.c      which processes; environ, ranks, job, maps, threads, modules
#   pyspy.c     Python stacks through `py-spy dump --json --nonblocking`
#   snapshot.c  capture every thread, lay out and write the snapshot file
ATTACH_SRCS := $(addprefix attach/,proc.c pyspy.c snapshot.c)
ATTACH_OBJS := $(ATTACH_SRCS:%.c=$(BUILD)/%.o)

# (CLI_EXTRA_OBJS/LIBS: recursive, the top Makefile's)
CLI_EXTRA_OBJS += $(ATTACH_OBJS) $(CAPTURE_OBJS) $(UNW_TABLE_LINKED_OBJ) $(BUILD)/interpose/stack_area.o \
	$(BUILD)/interpose/env_fingerprint.o $(BUILD)/interpose/job.o
CLI_EXTRA_LIBS += $(CAPTURE_LIBS)
