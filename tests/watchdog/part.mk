# tests/watchdog: programs the watchdog's tests (tests/watchdog/test-*.sh)
# run under LD_PRELOAD, built into $(BUILD)/tests/watchdog/, linked
# against the simulated NCCL's and CUDA driver's sonames only
# (LD_LIBRARY_PATH picks the libraries at run time).
#   nccl-capture   NCCL calls on a stream being captured into a CUDA graph
#   nccl-gpufault  a GPU fault on a 1-rank comm; lingers or exits after it
WATCHDOG_TEST_PROGS := $(addprefix $(BUILD)/tests/watchdog/,nccl-capture nccl-gpufault)
TEST_BINS += $(WATCHDOG_TEST_PROGS)

$(BUILD)/tests/watchdog/nccl-%: $(BUILD)/tests/watchdog/nccl_%.o | $(SIM_SONAMES)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(SIM_LINK)

# keep the objects (make would delete them as intermediates)
.SECONDARY: $(BUILD)/tests/watchdog/nccl_capture.o $(BUILD)/tests/watchdog/nccl_gpufault.o
