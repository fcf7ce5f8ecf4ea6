# interpose: the LD_PRELOAD library $(BUILD)/lib/libncclwatch.so. It links
# neither libnccl nor libcuda: the real NCCL is found at run time
# (real_nccl.c), so the same library works on any NCCL and on the simulation.
INTERPOSE_SRCS := $(addprefix interpose/,log.c thread.c libc_dl.c sibling.c real_nccl.c dlsym_hook.c \
	job.c env_fingerprint.c stack_area.c segment_file.c reserve.c run_state.c state.c ring.c comm_id.c comms.c \
	groups.c hooks.c cuda_driver.c evpool.c track.c graphs.c record.c wrap_coll.c wrap_cuda.c wrap_p2p.c wrap_group.c \
	wrap_comm.c)
INTERPOSE_OBJS := $(INTERPOSE_SRCS:%.c=$(BUILD)/%.o)
INTERPOSE_LIB  := $(BUILD)/lib/libncclwatch.so

$(INTERPOSE_OBJS): CFLAGS += $(LIB_CFLAGS)

# The watchdog thread lives in the same library (watchdog/part.mk), with
# the names of ops and results (report/names.c) for its stall lines. It
# links nothing but libc: libunwind is loaded at run time with RTLD_LOCAL
# (capture/unw_table_dl.c, through libncclwatch-unwind.so), and the report
# engine that prints the cross-rank verdict is libncclwatch-engine.so
# (report/part.mk), loaded the same way by a watchdog that must print one.
# tests/interpose/test-interpose-exports.sh checks both ends: exports and
# dependencies.
LIBNCCLWATCH_OBJS = $(INTERPOSE_OBJS) $(WATCHDOG_OBJS) $(CAPTURE_OBJS) $(UNW_TABLE_DL_OBJ) \
	$(PYSTACK_OBJS) $(BUILD)/report/names.o

$(INTERPOSE_LIB): $$(LIBNCCLWATCH_OBJS) interpose/libncclwatch.map
	@mkdir -p $(dir $@)
	$(CC) -shared -o $@ $(LIBNCCLWATCH_OBJS) -Wl,-soname,libncclwatch.so \
		-Wl,--version-script=interpose/libncclwatch.map -Wl,--no-undefined -Wl,-z,now \
		$(LDFLAGS) -ldl

LIBS         += $(INTERPOSE_LIB)
INSTALL_LIBS += $(INTERPOSE_LIB)
