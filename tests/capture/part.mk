# tests/capture: the capture core changes nothing a program sees.
#   capture-quiet  sits in every blocking call of issue 13's list and says
#                  whether any returned early, short, or saw a signal; with
#                  --live, transfers with a live peer (issue 25)
CAPTURE_QUIET := $(BUILD)/tests/capture/capture-quiet
TEST_BINS += $(CAPTURE_QUIET)

$(CAPTURE_QUIET): $(BUILD)/tests/capture/quiet.o | $(SIM_SONAMES)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(SIM_LINK)

#   capture-framepointer  threads blocked under functions built with frame
#                  pointers (compiled -O0 -fno-omit-frame-pointer on purpose)
CAPTURE_FP := $(BUILD)/tests/capture/capture-framepointer
TEST_BINS += $(CAPTURE_FP)

$(CAPTURE_FP): tests/capture/framepointer.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -Wall -Wextra -Werror -O0 -fno-omit-frame-pointer -g -pthread -o $@ $<
