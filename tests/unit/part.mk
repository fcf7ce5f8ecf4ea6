# tests/unit: unit tests that link a part's objects directly.
#   $(BUILD)/tests/test-unit-stacks   thread stack capture into a stack area
#     (links the stack objects by name: other watchdog objects need the
#     whole interposer)
STACKS_TEST_OBJS := $(BUILD)/tests/unit/test_stacks.o \
	$(addprefix $(BUILD)/watchdog/,stack_area.o stacks.o modules.o symbolize.o opstack.o) \
	$(BUILD)/interpose/log.o
STACKS_TEST := $(BUILD)/tests/test-unit-stacks

$(STACKS_TEST): $(STACKS_TEST_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(STACKS_TEST_OBJS) -lunwind -ldl -pthread

TEST_BINS += $(STACKS_TEST)
