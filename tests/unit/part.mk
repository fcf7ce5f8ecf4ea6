# tests/unit: unit tests that link a part's objects directly.
#   $(BUILD)/tests/test-unit-stacks   thread stack capture into a stack area
#     (links the stack objects by name: other watchdog objects need the
#     whole interposer)
STACKS_TEST_OBJS = $(BUILD)/tests/unit/test_stacks.o \
	$(addprefix $(BUILD)/watchdog/,stacks.o alone.o modules.o symbolize.o opstack.o) \
	$(BUILD)/interpose/stack_area.o $(BUILD)/interpose/hooks.o \
	$(PYSTACK_OBJS) \
	$(BUILD)/interpose/log.o $(BUILD)/interpose/libc_dl.o $(CAPTURE_OBJS) $(UNW_TABLE_LINKED_OBJ)
STACKS_TEST := $(BUILD)/tests/test-unit-stacks

$(STACKS_TEST): $$(STACKS_TEST_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(STACKS_TEST_OBJS) $(CAPTURE_LIBS) -ldl -pthread

TEST_BINS += $(STACKS_TEST)

#   $(BUILD)/tests/test-unit-ring-race   updates in place vs. slot reuse, with the
#     test build's delay hook (tests/interpose/part.mk): the ring's own code
#     from $(HOOKS_DIR), the segment writer and reader of tests/report/
RING_RACE_TEST := $(BUILD)/tests/test-unit-ring-race
RING_RACE_OBJS = $(BUILD)/tests/unit/test_ring_race.o $(BUILD)/tests/unit/ring_race_reader.o \
	$(HOOKS_DIR)/interpose/ring.o \
	$(HOOKS_DIR)/interpose/test_hooks.o $(SEGWRITER_OBJ)

$(BUILD)/tests/unit/test_ring_race.o: CPPFLAGS += -DNW_TEST_HOOKS

$(RING_RACE_TEST): $$(RING_RACE_OBJS) $$(REPORT_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(RING_RACE_OBJS) $(REPORT_LIB) -pthread

TEST_BINS += $(RING_RACE_TEST)
