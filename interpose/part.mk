# interpose: the LD_PRELOAD library $(BUILD)/lib/libncclwatch.so. It links
# neither libnccl nor libcuda: the real NCCL is found at run time
# (real_nccl.c), so the same library works on any NCCL and on the simulation.
INTERPOSE_SRCS := $(addprefix interpose/,log.c thread.c libc_dl.c real_nccl.c dlsym_hook.c \
	job.c env_fingerprint.c segment_file.c reserve.c state.c ring.c comm_id.c comms.c groups.c \
	record.c wrap_coll.c wrap_p2p.c wrap_group.c wrap_comm.c)
INTERPOSE_OBJS := $(INTERPOSE_SRCS:%.c=$(BUILD)/%.o)
INTERPOSE_LIB  := $(BUILD)/lib/libncclwatch.so

$(INTERPOSE_OBJS): CFLAGS += $(LIB_CFLAGS)

# The watchdog thread lives in the same library (watchdog/part.mk); it
# names its findings and prints the cross-rank verdict with the report
# library (reader, analysis engine, text renderer: only the members it uses
# are linked; jansson only if a JSON renderer were pulled in).
LIBNCCLWATCH_OBJS := $(INTERPOSE_OBJS) $(WATCHDOG_OBJS) $(CAPTURE_OBJS)

$(INTERPOSE_LIB): $(LIBNCCLWATCH_OBJS) $(REPORT_LIB) interpose/libncclwatch.map
	@mkdir -p $(dir $@)
	$(CC) -shared -o $@ $(LIBNCCLWATCH_OBJS) $(REPORT_LIB) -Wl,-soname,libncclwatch.so \
		-Wl,--version-script=interpose/libncclwatch.map -Wl,--no-undefined -Wl,-z,now \
		$(LDFLAGS) $(CAPTURE_LIBS) -Wl,--as-needed $(JSON_LIBS) -Wl,--no-as-needed -ldl

LIBS         += $(INTERPOSE_LIB)
INSTALL_LIBS += $(INTERPOSE_LIB)

include tests/interpose/part.mk
include tests/bench/part.mk
